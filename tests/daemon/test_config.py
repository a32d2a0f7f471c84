"""Options of twistd nodeapi: whole parsed dicts, INI + command line
precedence, typed helpers, and every error message."""

import json
import os
import re

import attr
import pytest
from twisted.python import usage

from nodeapi.chain.genesis import DEFAULT_GENESIS
from nodeapi.config import Options
from nodeapi.plugins.account_history.plugin import history_limits
from nodeapi.plugins.account_history.retention import HistoryLimits
from nodeapi.protocol.node_address import NodeAddress
from nodeapi.plugins.market_history.history import MarketHistoryOptions
from nodeapi.plugins.market_history.plugin import market_history_options
from nodeapi.plugins.searchdb.plugin import searchdb_service
from nodeapi.node import ApiLimits
from nodeapi.protocol.node_address import parse_node_address
from nodeapi.plugins.witness.plugin import INIT_WITNESSES, witness_keys
from nodeapi.rpc.guard import RpcLimits

from kit.daemon import ACCESS, ROOT
from kit.keys import DEV_WIF, OTHER_WIF


DEV_PUB_BTS = "BTS6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5GDW5CV"
LIMITS = {f"api-limit-{f.name.replace('_', '-')}": f.default
          for f in attr.fields(ApiLimits)}
MARKET = {"bucket-size": (60, 300, 900, 3600, 14400, 86400, 604800),
          "history-per-size": 1500, "max-order-his-records-per-market": 1000,
          "max-order-his-seconds-per-market": 259200}


@pytest.fixture(autouse=True)
def cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def parse(*args):
    options = Options()
    options.parseOptions(list(args))
    return options


def defaults(cwd):
    return dict({
        "config": None, "data-dir": str(cwd / "nodeapi_data"), "genesis-json": DEFAULT_GENESIS,
        "account-statistics-type": 7,
        "rpc-endpoint": "tcp:8090:interface=127.0.0.1",
        "plugins": ["account_history", "market_history", "grouped_orders",
                    "custom_operations", "witness"],
        "tracked-groups": [10, 100], "custom-operations-start-block": 45000000,
        "template-start-block": 0,
        "api-access": None, "api-node-info": "", "max-message-size": 4194304,
        "rpc-allowed-hosts": [], "rpc-allowed-origins": [], "trusted-proxies": [], "upstream-routes": "", "api-output-dir": None,
        "max-calls-in-flight": 100, "ws-auto-ping-interval": 30.0, "metrics-endpoint": None,
        "health-max-head-age": 30.0, "health-max-searchdb-lag": 20,
        "max-connections": 4000, "max-connections-per-ip": 200, "handshake-timeout": 10.0,
        "max-unsent-bytes": 67108864,
        "max-calls-per-second-per-ip": 0.0, "max-call-burst-per-ip": 0,
        "max-subscriptions-per-ip": 20000,
        "searchdb-node-url": "http://localhost:9200/", "searchdb-bulk-replay": 10000,
        "searchdb-bulk-sync": 100, "searchdb-visitor": False, "searchdb-basic-auth": "",
        "searchdb-index-prefix": "chain-", "enable-stale-production": True,
        "enable-subscribe-to-all": False, "witness-id": list(INIT_WITNESSES),
        "checkpoint-interval": 1000, "replay-blockchain": False, "force-validate": False, "upstream": [],
        "upstream-irreversible-only": True, "upstream-cache-size": 64,
        "upstream-max-head-age": 60, "upstream-chain-id": "", "upstream-share-seconds": 1.0,
        "upstream-timeout": 5.0, "upstream-max-lag-blocks": 3,
        "upstream-subscription-connections": 32, "upstream-accounts-per-connection": 100,
        "private-key": [DEV_WIF], "seed-node": [], "seed-nodes": [],
        "p2p-endpoint": "", "p2p-max-connections": 200, "p2p-connect-to-new-peers": True,
        "max-ops-per-account": 2 ** 64 - 1, "extended-max-ops-per-account": 2 ** 64 - 1,
        "min-blocks-to-keep": 30000, "max-ops-per-acc-by-min-blocks": 1000,
        "partial-operations": False, "track-account": [], "extended-history-by-account": [],
        "extended-history-by-registrar": [],
    }, **LIMITS, **MARKET, **SEARCHDB_SWITCHES, **OBJECTS, **DEVNET)


#: The devnet options (nodeapi.devnet), defaults.
DEVNET = {"devnet": False, "devnet-accounts": 10, "devnet-balance": 1_000_000,
          "devnet-seed": "nodeapi-devnet",
          "block-interval": 0, "load-state": "", "devnet-max-snapshots": 1000,
          "fork-url": None, "fork-block": 0, "fork-timeout": 30}


#: The searchdb-objects options (the reference es_objects plugin's), defaults.
OBJECTS = dict({
    "searchdb-objects-url": "", "searchdb-objects-basic-auth": "",
    "searchdb-objects-bulk-replay": 10000, "searchdb-objects-bulk-sync": 100,
    "searchdb-objects-index-prefix": "objects-", "searchdb-objects-max-mapping-depth": 10,
    "searchdb-objects-start-after-block": 0, "searchdb-objects-sync-db-on-startup": False,
    "searchdb-objects-proposals-no-delete": True,
    "searchdb-objects-limit-orders-no-delete": False,
    "searchdb-objects-budget-records": True}, **{
    f"searchdb-objects-{kind}{suffix}": not suffix
    for kind in ("proposals", "accounts", "assets", "balances", "limit-orders", "asset-bitasset")
    for suffix in ("", "-store-updates")})


#: The reference elasticsearch plugin's switches, defaults.
SEARCHDB_SWITCHES = {
    "searchdb-mode": "all", "searchdb-start-after-block": 0,
    "searchdb-operation-object": True, "searchdb-operation-string": True,
    "searchdb-max-mapping-depth": 20}


def test_development_defaults(cwd):
    options = parse()
    assert dict(options) == defaults(cwd)
    assert options.development_defaults is True
    assert witness_keys(options, options.genesis) == {
        f"1.6.{i}": DEV_WIF for i in range(1, 12)}
    assert options.api_limits() == ApiLimits()
    assert market_history_options(options) == MarketHistoryOptions()
    assert options.rpc_limits() == RpcLimits(max_subscriptions_per_ip=20000)
    assert history_limits(options) == HistoryLimits()
    assert options.block_log_path() == str(cwd / "nodeapi_data" / "blocks.log")
    assert options.genesis.chain_id.startswith("569cba9a")
    from twisted.internet.testing import MemoryReactorClock

    svc = searchdb_service(options, None, str(cwd), MemoryReactorClock())
    docs = svc.documents
    assert (svc.client.safe_url, svc.client.has_auth, svc.index_prefix) == (
        "http://localhost:9200/", False, "chain-")
    assert (svc.pace.bulk_replay, svc.pace.bulk_sync, docs.visitor) == (10000, 100, False)
    assert svc.writes and svc.history is not None  # mode all
    assert (docs.start_after_block, docs.operation_object, docs.operation_string,
            docs.object_depth) == (0, True, True, 20 - 2)


def everything(cwd):
    """Every option with a non-default value: (argv, expected dict)."""
    (cwd / "dd").mkdir()
    argv = [
        "--data-dir", "dd", "--genesis-json", DEFAULT_GENESIS, "--rpc-endpoint", "0.0.0.0:9000",
        "--account-statistics-type", "6",
        "--plugins", "witness,searchdb", "--api-access", ACCESS, "--api-node-info", "hello",
        "--max-message-size", "2048", "--max-calls-in-flight", "7",
        "--ws-auto-ping-interval", "2.5", "--metrics-endpoint", "127.0.0.1:9100",
        "--health-max-head-age", "12.5", "--health-max-searchdb-lag", "7",
        "--max-connections", "50", "--max-connections-per-ip", "0", "--handshake-timeout", "2.5",
        "--max-unsent-bytes", "1048576", "--max-calls-per-second-per-ip", "2.5",
        "--max-call-burst-per-ip", "6", "--max-subscriptions-per-ip", "150",
        "--searchdb-node-url", "https://db.example:9201", "--searchdb-bulk-replay", "500",
        "--searchdb-bulk-sync", "10", "--searchdb-visitor", "yes",
        "--searchdb-basic-auth", "u:p", "--searchdb-index-prefix", "bts-",
        "--searchdb-mode", "0", "--searchdb-start-after-block", "4000000000",
        "--searchdb-operation-object", "false", "--searchdb-operation-string", "false",
        "--searchdb-max-mapping-depth", "30",
        "--searchdb-objects-url", "http://objects.example:9200",
        "--searchdb-objects-limit-orders-no-delete", "yes",
        "--tracked-groups", "[100, 0, 10, 100]", "--custom-operations-start-block", "1",
        "--template-start-block", "12",
        "--enable-stale-production", "--enable-subscribe-to-all",
        "--checkpoint-interval", "7", "--replay-blockchain", "--force-validate",
        "--upstream", "ws://bob:pw@node.example:443", "--upstream-irreversible-only", "false",
        "--upstream-subscription-connections", "4", "--upstream-accounts-per-connection", "50",
        "--witness-id", '"1.6.2"', "--witness-id", "1.6.5",
        "--private-key", f'["{DEV_PUB_BTS}", "{DEV_WIF}"]', "--private-key", OTHER_WIF,
        "--seed-node", "10.0.0.1:8090", "--seed-node", "bob:pw@node.example:443",
        "--seed-nodes", '["10.0.0.2:1776", "ws://10.0.0.3:8090"]',
        "--p2p-endpoint", "127.0.0.1:1776", "--p2p-max-connections", "9",
        "--p2p-connect-to-new-peers", "false",
        "--bucket-size", '[3600, "60", 0, 60]', "--history-per-size", "0",
        "--max-order-his-records-per-market", "5", "--max-order-his-seconds-per-market", "7",
        "--max-ops-per-account", "100", "--extended-max-ops-per-account", "5000",
        "--min-blocks-to-keep", "0", "--max-ops-per-acc-by-min-blocks", "",
        "--partial-operations", "on", "--track-account", '"1.2.17"',
        "--track-account", '["1.2.18", "1.2.0"]', "--extended-history-by-account", "1.2.9",
        "--extended-history-by-registrar", '"1.2.6"',
        "--devnet", "--devnet-accounts", "3", "--devnet-balance", "250",
        "--devnet-seed", "s", "--block-interval", "2",
        "--load-state", "state.ckpt", "--devnet-max-snapshots", "5",
        "--fork-url", "ws://127.0.0.1:8090", "--fork-block", "12", "--fork-timeout", "5",
        "--rpc-allowed-hosts", "node.example, [::1]",
        "--rpc-allowed-origins", "localhost,https://wallet.example:8443,null",
        "--trusted-proxies", "10.0.0.5, 192.168.0.0/16,::1",
        "--api-output-dir", "out",
    ]
    (cwd / "out").mkdir(exist_ok=True)
    limits = {}
    for i, name in enumerate(LIMITS, 1):
        argv += [f"--{name}", str(i * 3)]
        limits[name] = i * 3
    expected = dict({
        "config": None, "data-dir": str(cwd / "dd"), "genesis-json": DEFAULT_GENESIS,
        "account-statistics-type": 6,
        "rpc-endpoint": "tcp:9000:interface=0.0.0.0", "plugins": ["witness", "searchdb"],
        "api-access": ACCESS, "api-node-info": "hello", "max-message-size": 2048,
        "max-calls-in-flight": 7, "ws-auto-ping-interval": 2.5,
        "metrics-endpoint": "tcp:9100:interface=127.0.0.1",
        "health-max-head-age": 12.5, "health-max-searchdb-lag": 7,
        "max-connections": 50, "max-connections-per-ip": 0, "handshake-timeout": 2.5,
        "max-unsent-bytes": 1048576, "max-calls-per-second-per-ip": 2.5,
        "max-call-burst-per-ip": 6, "max-subscriptions-per-ip": 150,
        "searchdb-node-url": "https://db.example:9201/", "searchdb-bulk-replay": 500,
        "searchdb-bulk-sync": 10, "searchdb-visitor": True, "searchdb-basic-auth": "u:p",
        "searchdb-index-prefix": "bts-", "enable-stale-production": True,
        "searchdb-mode": "only_save", "searchdb-start-after-block": 4000000000,
        "searchdb-operation-object": False, "searchdb-operation-string": False,
        "searchdb-max-mapping-depth": 30,
        "searchdb-index-prefix": "bts-", "tracked-groups": [10, 100],
        "custom-operations-start-block": 1, "template-start-block": 12,
        "enable-stale-production": True,
        "enable-subscribe-to-all": True, "witness-id": ["1.6.2", "1.6.5"],
        "checkpoint-interval": 7, "replay-blockchain": True, "force-validate": True,
        "upstream": [parse_node_address("ws://bob:pw@node.example:443")],
        "upstream-irreversible-only": False, "upstream-subscription-connections": 4,
        "upstream-accounts-per-connection": 50,
        "upstream-cache-size": 64, "upstream-max-head-age": 60, "upstream-chain-id": "",
        "upstream-share-seconds": 1.0, "upstream-timeout": 5.0, "upstream-max-lag-blocks": 3,
        "upstream-routes": "",
        "private-key": [DEV_WIF, OTHER_WIF],
        "seed-node": [parse_node_address("10.0.0.1:8090"),
                      parse_node_address("bob:pw@node.example:443")],
        "seed-nodes": [parse_node_address("10.0.0.2:1776"),
                       parse_node_address("ws://10.0.0.3:8090")],
        "p2p-endpoint": "127.0.0.1:1776", "p2p-max-connections": 9,
        "p2p-connect-to-new-peers": False,
        "bucket-size": (60, 3600), "history-per-size": 0,
        "max-order-his-records-per-market": 5, "max-order-his-seconds-per-market": 7,
        "max-ops-per-account": 100, "extended-max-ops-per-account": 5000,
        "min-blocks-to-keep": 0, "max-ops-per-acc-by-min-blocks": 2 ** 64 - 1,
        "partial-operations": True, "track-account": ["1.2.17", "1.2.18", "1.2.0"],
        "extended-history-by-account": ["1.2.9"], "extended-history-by-registrar": ["1.2.6"],
        "devnet": True, "devnet-accounts": 3, "devnet-balance": 250, "devnet-seed": "s",
        "block-interval": 2,
        "load-state": "state.ckpt", "devnet-max-snapshots": 5,
        "fork-url": NodeAddress("127.0.0.1", 8090, "/"), "fork-block": 12, "fork-timeout": 5,
        "rpc-allowed-hosts": ["node.example", "[::1]"],
        "rpc-allowed-origins": ["localhost", "https://wallet.example:8443", "null"],
        "trusted-proxies": ["10.0.0.5", "192.168.0.0/16", "::1"],
        "api-output-dir": str(cwd / "out"),
    }, **limits, **dict(OBJECTS, **{
        "searchdb-objects-url": "http://objects.example:9200/",
        "searchdb-objects-limit-orders-no-delete": True}))
    return argv, expected


def test_every_option_on_the_command_line(cwd):
    argv, expected = everything(cwd)
    options = parse(*argv)
    assert dict(options) == expected
    assert options.development_defaults is False
    assert options.api_limits() == ApiLimits(*range(3, 3 * len(LIMITS) + 1, 3))
    assert witness_keys(options, options.genesis) == {"1.6.2": DEV_WIF, "1.6.5": DEV_WIF}
    assert market_history_options(options) == MarketHistoryOptions(
        bucket_sizes=(60, 3600), history_per_size=0, max_order_his_records_per_market=5,
        max_order_his_seconds_per_market=7)
    assert options.rpc_limits() == RpcLimits(max_connections=50, max_connections_per_ip=0,
                                             handshake_timeout=2.5, max_unsent_bytes=1048576,
                                             max_calls_per_second_per_ip=2.5,
                                             max_call_burst_per_ip=6,
                                             max_subscriptions_per_ip=150)
    assert history_limits(options) == HistoryLimits(
        100, 5000, 0, 2 ** 64 - 1, True, {"1.2.17", "1.2.18", "1.2.0"}, {"1.2.9"}, {"1.2.6"})


def test_every_option_in_an_ini_file(cwd):
    argv, expected = everything(cwd)
    lines = ["# nodeapi config", ""]
    i = 0
    while i < len(argv):
        name = argv[i][2:]
        if name.startswith("enable-") or name in ("replay-blockchain", "force-validate", "devnet"):
            lines.append(f"{name} = true")
            i += 1
        else:
            lines.append(f"{name} = {argv[i + 1]}   # trailing comment")
            i += 2
    lines += ["[log.console_appender.stderr]", "stream = std_error"]
    (cwd / "config.ini").write_text("\n".join(lines).replace("# trailing comment", "#x")
                                    .replace('"1.6.2"   #x', '"1.6.2"'))
    options = parse("--config", "config.ini")
    assert dict(options) == dict(expected, config=str(cwd / "config.ini"))


def test_command_line_wins_over_the_file(cwd):
    (cwd / "c.ini").write_text(
        'rpc-endpoint = 127.0.0.1:1\nmax-calls-in-flight = 5\nwitness-id = "1.6.1"\n'
        'witness-id = "1.6.2"\nseed-node = a.example:1\nenable-stale-production = false\n'
        'api-node-info = "quoted # not kept"\n')
    options = parse("--config", "c.ini", "--rpc-endpoint", "tcp:2", "--witness-id", "1.6.9")
    assert options["rpc-endpoint"] == "tcp:2"
    assert options["max-calls-in-flight"] == 5
    assert options["witness-id"] == ["1.6.9"]
    assert options["seed-node"] == [parse_node_address("a.example:1")]
    assert not options["seed-node"][0].url_given
    assert options["enable-stale-production"] is False
    assert options["api-node-info"] == '"quoted'  # boost: '#' starts a comment anywhere
    options = parse("--config", "c.ini", "--enable-stale-production")
    assert options["witness-id"] == ["1.6.1", "1.6.2"]
    assert options["enable-stale-production"] is True


def test_ini_flag_false_beats_the_development_default(cwd):
    (cwd / "c.ini").write_text("enable-stale-production = off\n")
    options = parse("--config", "c.ini")
    assert options.development_defaults and options["enable-stale-production"] is False


@pytest.mark.parametrize("args,ids,keys,stale", [
    (["--witness-id", "1.6.3"], ["1.6.3"], [DEV_WIF], False),
    (["--witness-id", '["1.6.3", "1.6.4"]'], ["1.6.3", "1.6.4"], [DEV_WIF], False),
    (["--private-key", f'"{OTHER_WIF}"'], [], [OTHER_WIF], False),
    (["--witness-id", "1.6.0", "--enable-stale-production"], ["1.6.0"], [DEV_WIF], True),
])
def test_witness_options(args, ids, keys, stale):
    options = parse(*args)
    assert (options["witness-id"], options["private-key"]) == (ids, keys)
    assert options["enable-stale-production"] is stale
    assert options.development_defaults is False


def test_witnesses_match_keys_to_signing_keys(chain):
    options = parse("--witness-id", "1.6.1", "--witness-id", "1.6.99",
                    "--private-key", OTHER_WIF, "--private-key", DEV_WIF)
    assert witness_keys(options, options.genesis) == {"1.6.1": DEV_WIF, "1.6.99": OTHER_WIF}
    assert witness_keys(options, options.genesis, chain) == {
        "1.6.1": DEV_WIF, "1.6.99": OTHER_WIF}
    bare = parse("--plugins", "account_history")
    assert witness_keys(bare, bare.genesis) == {}


@pytest.mark.parametrize("text,endpoint", [
    ("127.0.0.1:8090", "tcp:8090:interface=127.0.0.1"),
    ("localhost:80", "tcp:80:interface=localhost"),
    (":8090", "tcp:8090"),
    ("[::1]:8090", "tcp6:8090:interface=\\:\\:1"),
    ("127.0.0.1:0", "tcp:0:interface=127.0.0.1"),
    ("tcp:8090:interface=127.0.0.1", "tcp:8090:interface=127.0.0.1"),
    ("unix:/run/nodeapi.sock", "unix:/run/nodeapi.sock"),
])
def test_rpc_endpoint_forms(text, endpoint):
    assert parse("--rpc-endpoint", text)["rpc-endpoint"] == endpoint


@pytest.mark.parametrize("text,plugins", [
    ("", []), ("witness", ["witness"]), ("searchdb  witness searchdb", ["searchdb", "witness"]),
])
def test_plugins(text, plugins):
    assert parse("--plugins", text)["plugins"] == plugins


BAD_KEY = DEV_WIF[:-1] + "4"
ERRORS = [
    (["--max-calls-in-flight", "abc"], "--max-calls-in-flight: 'abc' is not an integer"),
    (["--max-calls-in-flight", "0"], "--max-calls-in-flight: 0 is not between 1 and 2147483647"),
    (["--max-message-size", "100"], "--max-message-size: 100 is not between 1024 and 2147483647"),
    (["--ws-auto-ping-interval", "soon"],
     "--ws-auto-ping-interval: 'soon' is not a number of seconds"),
    (["--ws-auto-ping-interval", "-1"], "--ws-auto-ping-interval: -1.0 is not between 0 and "
                                        "31536000"),
    (["--api-limit-get-account-history", "-5"],
     "--api-limit-get-account-history: -5 is not between 1 and 2147483647"),
    (["--rpc-endpoint", "nonsense"], "--rpc-endpoint: 'nonsense' is neither host:port nor an "
                                     "endpoint string (Unknown endpoint type: 'nonsense')"),
    (["--rpc-endpoint", "localhost:70000"], "--rpc-endpoint: 70000 is not between 0 and 65535"),
    (["--rpc-endpoint", "ssl:443:privateKey=/nonexistent.pem"],
     "--rpc-endpoint: bad endpoint 'ssl:443:privateKey=/nonexistent.pem': [Errno 2] No such "
     "file or directory: '/nonexistent.pem'"),
    (["--metrics-endpoint", "9100"], "--metrics-endpoint: '9100' is neither host:port nor an "
                                     "endpoint string (Unknown endpoint type: '9100')"),
    (["--plugins", "witness foo"],
     "--plugins: unknown plugin 'foo' (known: account_history, searchdb, searchdb-objects, "
     "market_history, grouped_orders, custom_operations, witness, template)"),
    (["--bucket-size", "60"], "--bucket-size: '60' is not a JSON array of seconds, e.g. "
                              "[60,300,3600]"),
    (["--bucket-size", "[60, -1]"], "--bucket-size: -1 is not between 0 and 4294967295"),
    (["--bucket-size", "[1.5]"], "--bucket-size: 1.5 is not a number of seconds"),
    (["--account-statistics-type", "5"],
     "--account-statistics-type: account statistics type 5 is not one of 7, 6"),
    (["--account-statistics-type", "2.6"], "--account-statistics-type: '2.6' is not an integer"),
    (["--history-per-size", "x"], "--history-per-size: 'x' is not an integer"),
    (["--plugins", "account_history searchdb"],
     "--plugins: account_history and searchdb cannot run together"),
    (["--witness-id", "1.2.3"], "--witness-id: '1.2.3' is not a witness id 1.6.N"),
    (["--witness-id", '"1.6.1'], "--witness-id: '\"1.6.1' is not valid JSON"),
    (["--witness-id", "[1]"], "--witness-id: 1 is not a witness id 1.6.N"),
    (["--private-key", BAD_KEY],
     "--private-key: malformed WIF private key (bad encoding or checksum)"),
    (["--private-key", f'["{DEV_PUB_BTS}", "{OTHER_WIF}"]'],
     f"--private-key: public key {DEV_PUB_BTS} does not belong to the WIF key"),
    (["--private-key", f'["BTS1234", "{DEV_WIF}"]'], "--private-key: malformed public key "
                                                    "'BTS1234'"),
    (["--private-key", "[1, 2]"], '--private-key: expected a WIF or ["PUBLIC_KEY", "WIF"]'),
    (["--private-key", "[5K"], "--private-key: [5K... is not valid JSON"),
    (["--seed-node", "nohost"], "--seed-node: Peer address 'nohost' is not host:port"),
    (["--seed-nodes", "127.0.0.1:1776"],
     "--seed-nodes: expected a JSON list of \"host:port\" strings, got '127.0.0.1:1776'"),
    (["--p2p-endpoint", "node.example:1776"],
     "--p2p-endpoint: the P2P endpoint's host must be an IPv4 address or an IPv6 address "
     "in brackets, got 'node.example'"),
    (["--p2p-endpoint", "[::g]:1776"], "--p2p-endpoint: not an IPv6 address: '[::g]'"),
    (["--p2p-endpoint", "1776"], "--p2p-endpoint: expected host:port, got '1776'"),
    (["--searchdb-node-url", "ftp://x/"],
     "--searchdb-node-url: 'ftp://x/' is not an http:// or https:// URL with a host"),
    (["--searchdb-node-url", "http://h:99999/"],
     "--searchdb-node-url: 'http://h:99999/' is not an http:// or https:// URL with a host"),
    (["--searchdb-bulk-sync", "1"], "--searchdb-bulk-sync: 1 is not between 2 and 2147483647"),
    (["--searchdb-visitor", "maybe"], "--searchdb-visitor: 'maybe' is not true or false"),
    (["--searchdb-basic-auth", "nocolon"],
     "--searchdb-basic-auth: expected <username>:<password>"),
    (["--searchdb-mode", "3"],
     "--searchdb-mode: '3' is not a searchdb mode: only_save (0), only_query (1) or all (2)"),
    (["--searchdb-max-mapping-depth", "1"],
     "--searchdb-max-mapping-depth: 1 is not between 2 and 65535"),
    (["--searchdb-operation-string", "false"],
     "searchdb-mode all needs searchdb-operation-string true (the history API reads op)"),
    (["--searchdb-index-prefix", "Chain-"],
     "--searchdb-index-prefix: 'Chain-' is not a valid index prefix (lowercase, not starting "
     "with - _ +, none of \\ / * ? \" < > | , # : or space)"),
    (["--max-ops-per-account", "-1"],
     "--max-ops-per-account: -1 is not between 0 and 18446744073709551615"),
    (["--max-ops-per-account", "lots"], "--max-ops-per-account: 'lots' is not an integer"),
    (["--extended-max-ops-per-account", str(2 ** 64)],
     "--extended-max-ops-per-account: 18446744073709551616 is not between 0 and "
     "18446744073709551615"),
    (["--min-blocks-to-keep", str(2 ** 32)],
     "--min-blocks-to-keep: 4294967296 is not between 0 and 4294967295"),
    (["--partial-operations", "maybe"], "--partial-operations: 'maybe' is not true or false"),
    (["--track-account", "1.6.1"], "--track-account: '1.6.1' is not an account id 1.2.N"),
    (["--extended-history-by-account", "[17]"],
     "--extended-history-by-account: 17 is not an account id 1.2.N"),
    (["--extended-history-by-registrar", '"init0"'],
     "--extended-history-by-registrar: 'init0' is not an account id 1.2.N"),
    (["--rpc-allowed-hosts", "evil.example:80"],
     "--rpc-allowed-hosts: 'evil.example:80' is not a host name"),
    (["--rpc-allowed-hosts", "http://x"], "--rpc-allowed-hosts: 'http://x' is not a host name"),
    (["--rpc-allowed-origins", "ftp://x"], "--rpc-allowed-origins: 'ftp://x' is not an origin"),
    (["--trusted-proxies", "10.0.0.1,proxy.example"],
     "--trusted-proxies: 'proxy.example' is not an IP address or network"),
    (["--rpc-allowed-origins", "http://x/path"],
     "--rpc-allowed-origins: 'http://x/path' is not an origin"),
    (["--api-output-dir", "no-such-dir"], "--api-output-dir: "),
    (["--devnet-max-snapshots", "0"], "--devnet-max-snapshots: 0 is not between 1"),
    (["--devnet-balance", "9000001"], "--devnet-balance: 9000001 is not between 0"),
    (["--fork-url", "ws://"], "--fork-url"),
]


@pytest.mark.parametrize("args,message", ERRORS, ids=[" ".join(a)[:40] for a, _ in ERRORS])
def test_error_messages(args, message):
    with pytest.raises(usage.UsageError) as info:
        parse(*args)
    assert str(info.value).startswith(message)


def _message(*args):
    with pytest.raises(usage.UsageError) as info:
        parse(*args)
    return str(info.value)


def test_file_errors(cwd):
    missing = str(cwd / "missing.json")
    assert _message("--genesis-json", "missing.json") == (
        f"--genesis-json: cannot read {missing}: No such file or directory")
    (cwd / "g.json").write_text("{not json")
    assert _message("--genesis-json", "g.json").startswith(
        f"--genesis-json: {cwd / 'g.json'} is not a genesis file: Expecting property name")
    (cwd / "g.json").write_text("{}")
    assert _message("--genesis-json", "g.json") == (
        f"--genesis-json: {cwd / 'g.json'} is not a genesis file: genesis: no initial account "
        "or witness candidate to take the key prefix from")
    key = "TEST" + "1" * 50
    (cwd / "g.json").write_text(json.dumps({"initial_accounts": [{"owner_key": key}]}))
    assert _message("--genesis-json", "g.json") == (
        f"--genesis-json: {cwd / 'g.json'} is not a genesis file: missing 'initial_timestamp'")
    assert missing in _message("--api-access", "missing.json")
    assert _message("--api-access", "missing.json").startswith("--api-access: ")
    (cwd / "a.json").write_text("[]")
    assert _message("--api-access", "a.json").startswith("--api-access: ")
    assert "permission_map" in _message("--api-access", "a.json")
    (cwd / "file").write_text("")
    assert _message("--data-dir", "file") == f"--data-dir: {cwd / 'file'} is not a directory"
    assert _message("--data-dir", "file/sub") == f"--data-dir: {cwd / 'file'} is not a directory"
    assert _message("--config", "nope.ini") == (
        f"--config: cannot read {cwd / 'nope.ini'}: No such file or directory")


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_unwritable_data_dir(cwd):
    (cwd / "ro").mkdir(mode=0o500)
    assert _message("--data-dir", "ro") == f"--data-dir: cannot write to {cwd / 'ro'}: " \
                                           "permission denied"
    assert _message("--data-dir", "ro/x") == (
        f"--data-dir: cannot create {cwd / 'ro' / 'x'} in {cwd / 'ro'}: permission denied")


@pytest.mark.parametrize("text,line,message", [
    ("bogus = 1\n", 1, "unknown option 'bogus'"),
    ("config = other.ini\n", 1, "unknown option 'config'"),
    ("[p2p]\nendpoint = 1\n", 2, "unknown option 'p2p.endpoint'"),
    ("\n\njust words\n", 3, "expected 'key = value' (line not shown)"),
    ("searchdb-node-url http://bob:pw@h/\n", 1, "expected 'key = value' (line not shown)"),
    ("plugins = witness\nplugins = searchdb\n", 2, "option 'plugins' given more than once"),
])
def test_ini_structure_errors(cwd, text, line, message):
    (cwd / "c.ini").write_text(text)
    assert _message("--config", "c.ini") == f"--config: {cwd / 'c.ini'} line {line}: {message}"


def test_ini_value_errors_name_file_and_line(cwd):
    (cwd / "c.ini").write_text("# x\nmax-calls-in-flight = lots\n")
    assert _message("--config", "c.ini") == (
        f"max-calls-in-flight ({cwd / 'c.ini'} line 2): 'lots' is not an integer")
    (cwd / "c.ini").write_text("witness-id = 1.6.1\nwitness-id = 2.6.1\n")
    assert _message("--config", "c.ini") == (
        f"witness-id ({cwd / 'c.ini'} line 2): '2.6.1' is not a witness id 1.6.N")
    (cwd / "c.ini").write_text("enable-subscribe-to-all = perhaps\n")
    assert _message("--config", "c.ini") == (
        f"enable-subscribe-to-all ({cwd / 'c.ini'} line 1): 'perhaps' is not true or false")


def test_sample_files_parse(cwd):
    """etc/config.ini is every option commented out with its real default;
    uncommenting all of it gives the defaults back."""
    text = open(os.path.join(ROOT, "etc", "config.ini")).read()
    assert parse("--config", os.path.join(ROOT, "etc", "config.ini")).development_defaults
    active = "\n".join(line[2:] if re.match(r"# [a-z0-9-]+ =( |$)", line) else ""
                       for line in text.splitlines())
    (cwd / "all.ini").write_text(active)
    options = parse("--config", "all.ini")
    assert dict(options) == dict(defaults(cwd), config=str(cwd / "all.ini"))
    with open(ACCESS) as f:
        access = json.load(f)
    assert [pair[0] for pair in access["permission_map"]] == ["bytemaster", "user2", "*"]


SECRET = "s3cret"


@pytest.mark.parametrize("url", [
    f"http://bob:{SECRET}@host:99999/",
    f"https://bob:{SECRET}@host:0/",
    f"ftp://bob:{SECRET}@host/",
    f"bob:{SECRET}@host:9200",
    f"http://bob:{SECRET}@/",
    f"http://bob:{SECRET}@[::1/",
    f"http://bob:{SECRET}@ho st:9200/",
    f"http://bob:{SECRET}@host:port/",
    f"http://bob:p@{SECRET}@host:99999/",
    f"http://bob:{SECRET[:3]}/{SECRET[3:]}@host/",
    f"http://bob:{SECRET}@host@:9200/",
])
def test_url_errors_never_show_credentials(url, cwd):
    """A malformed --searchdb-node-url stops startup with a message that
    shows the URL without its user:password part (command line and INI)."""
    message = _message("--searchdb-node-url", url)
    assert message.startswith("--searchdb-node-url: '")
    assert "is not an http:// or https:// URL with a host" in message
    for piece in (SECRET, SECRET[:3], SECRET[3:], "bob"):
        assert piece not in message
    assert "***@" in message
    with open("bad.ini", "w") as f:
        f.write(f"searchdb-node-url = {url}\n")
    message = _message("--config", "bad.ini")
    assert "bad.ini line 1" in message and SECRET not in message and "bob" not in message


def test_url_with_credentials_accepted_and_redacted():
    from nodeapi.plugins.values import parse_url, redact_url

    assert parse_url(f"http://bob:{SECRET}@db:9200") == f"http://bob:{SECRET}@db:9200/"
    assert redact_url(f"https://bob:{SECRET}@db:9200/x") == "https://***@db:9200/x"
    assert redact_url("http://db:9200/") == "http://db:9200/"


@pytest.mark.parametrize("url,auth", [
    (f"http://bob:{SECRET}@db:9200", f"bob:{SECRET}"),
    (f"http://bob:p@{SECRET}@db:9200/", f"bob:p@{SECRET}"),
    (f"http://bob:p%40{SECRET}@db:9200/", f"bob:p@{SECRET}"),
])
def test_accepted_url_gives_a_client_without_credentials(url, auth):
    """Every URL the option accepts builds the searchdb client; its
    safe_url (the only form logged) has no credentials, which go to the
    Basic header (percent-encoding undone)."""
    import base64

    from nodeapi.plugins.values import parse_url
    from nodeapi.plugins.searchdb.client import SearchDBClient

    client = SearchDBClient(parse_url(url), "", reactor=object(), http_client=object())
    assert client.safe_url == "http://db:9200/" and client.base == "http://db:9200"
    header = client._headers[b"Authorization"][0].decode()
    assert base64.b64decode(header.split()[1]).decode() == auth


def test_reference_elasticsearch_names_in_ini(cwd):
    """bitshares-core's elasticsearch plugin names of the searchdb switches
    (elasticsearch_plugin.cpp) load from a config.ini as the searchdb ones."""
    (cwd / "es.ini").write_text(
        "elasticsearch-mode = 1\nelasticsearch-start-es-after-block = 12\n"
        "elasticsearch-operation-object = false\nelasticsearch-operation-string = false\n"
        "elasticsearch-max-mapping-depth = 5\n")
    options = parse("--config", "es.ini")
    assert {k: options[k] for k in SEARCHDB_SWITCHES} == {
        "searchdb-mode": "only_query", "searchdb-start-after-block": 12,
        "searchdb-operation-object": False, "searchdb-operation-string": False,
        "searchdb-max-mapping-depth": 5}


def _not_dev(warnings):
    """The warnings but the development key's."""
    return [w for w in warnings if "development key" not in w]


def test_a_bitshares_config_ini_loads_with_one_warning_per_unimplemented_option(cwd):
    """bitshares options nodeapi does not implement are one warning line
    each, elasticsearch-* options are the searchdb-* ones, bitshares plugin
    names without a nodeapi plugin are dropped with a warning."""
    (cwd / "config.ini").write_text(
        "p2p-endpoint = 0.0.0.0:1776\n"
        "seed-nodes = []\n"
        "p2p-inbound-endpoint = 0.0.0.0:1776\n"
        "checkpoint = [1, \"0000\"]\n"
        "plugins = witness elasticsearch market_history api_helper_indexes delayed_node "
        "grouped_orders\n"
        "elasticsearch-node-url = http://db.example:9200/\n"
        "elasticsearch-index-prefix = bts-\n"
        "tracked-groups = [10, 0, 50]\n")
    options = parse("--config", "config.ini")
    assert options["plugins"] == ["witness", "searchdb", "market_history", "grouped_orders"]
    assert options["searchdb-node-url"] == "http://db.example:9200/"
    assert options["searchdb-index-prefix"] == "bts-"
    assert options["tracked-groups"] == [10, 50]
    where = str(cwd / "config.ini")
    assert _not_dev(options.warnings) == [
        f"{where} line 3: bitshares option 'p2p-inbound-endpoint' is not implemented by "
        "nodeapi; ignored",
        f"{where} line 4: bitshares option 'checkpoint' is not implemented by nodeapi; ignored",
        "plugins: bitshares plugin 'api_helper_indexes' is not needed: its lookups are always "
        "on in nodeapi; ignored",
        "plugins: bitshares plugin 'delayed_node' is not provided by nodeapi; ignored"]
    # still an error: names that are no option of bitshares or nodeapi
    (cwd / "bad.ini").write_text("p2p-endpoitn = 1\n")
    with pytest.raises(usage.UsageError, match="unknown option 'p2p-endpoitn'"):
        parse("--config", "bad.ini")
    with pytest.raises(usage.UsageError, match="tracked-groups"):
        parse("--tracked-groups", "[70000]")


WITNESS_NODE_INI = os.path.join(ROOT, "tests", "fixtures", "bitshares-core_witness_node_config.ini")


def test_bitshares_core_default_config_ini_loads_with_warnings(cwd):
    """bitshares-core's own config.ini (every option witness_node writes,
    libraries/app/config_util.cpp create_new_config_file, with the logging
    sections of write_default_logging_config_to_stream) loads: the options
    nodeapi does not implement, the api_helper_indexes plugin and each
    logging section nodeapi cannot honour are one warning each; the default
    logger's file appender becomes a log file beside the INI file."""
    import shutil

    from twisted.logger import LogLevel

    from nodeapi.config_logging import LogFile

    shutil.copy(WITNESS_NODE_INI, cwd / "config.ini")
    options = parse("--config", "config.ini")
    assert options["plugins"] == ["witness", "account_history", "market_history",
                                  "grouped_orders", "custom_operations"]
    assert options["max-ops-per-account"] == 100 and options["partial-operations"] is True
    assert options["enable-stale-production"] is False
    assert options.logging.files == (LogFile(str(cwd / "logs/default/default.log"),
                                             LogLevel.info),)
    where = str(cwd / "config.ini")
    text = (cwd / "config.ini").read_text().splitlines()

    def line(pattern):
        return next(n for n, t in enumerate(text, 1) if t.startswith(pattern))
    logging = [w for w in options.warnings if "[log" in w]
    assert logging == [
        f"{where} line {line('[log.console_appender.stderr]')}: [log.console_appender.stderr]: "
        "the console is twistd's log (stdout or --logfile, every level); ignored",
        f"{where} line {line('[log.file_appender.default]')}: [log.file_appender.default]: "
        "rotation_interval, rotation_limit not applied (nodeapi appends to the file; "
        "rotate it with logrotate)",
        f"{where} line {line('[log.file_appender.p2p]')}: [log.file_appender.p2p]: no "
        "'default' logger writes to it; ignored",
        f"{where} line {line('[log.file_appender.rpc]')}: [log.file_appender.rpc]: no "
        "'default' logger writes to it; ignored",
        f"{where} line {line('[logger.p2p]')}: [logger.p2p]: nodeapi logs through one "
        "logger, 'default'; this section is ignored",
        f"{where} line {line('[logger.rpc]')}: [logger.rpc]: nodeapi logs through one "
        "logger, 'default'; this section is ignored"]
    others = [w for w in options.warnings if "[log" not in w]
    assert others == [
        f"{where} line {line('required-participation =')}: bitshares option "
        "'required-participation' is not implemented by nodeapi; ignored",
        f"{where} line {line('debug-private-key =')}: bitshares option 'debug-private-key' "
        "is not implemented by nodeapi; ignored",
        "plugins: bitshares plugin 'api_helper_indexes' is not needed: its lookups are always "
        "on in nodeapi; ignored"]


@pytest.mark.parametrize("text,line,message", [
    ("[logger.default]\nlevel = loud\nappenders = f\n", 2,
     "[logger.default] level 'loud' is not one of all, debug, info, warn, error, off"),
    ("[log.file_appender.f]\nrotation_limit = 7\n", 1, "[log.file_appender.f] has no filename"),
])
def test_logging_section_errors_name_file_and_line(cwd, text, line, message):
    (cwd / "c.ini").write_text(text)
    assert _message("--config", "c.ini") == f"--config: {cwd / 'c.ini'} line {line}: {message}"


def test_logging_levels_and_appenders(cwd):
    """Each fc level name maps to the lowest Twisted level kept; a
    filename is relative to the INI file's directory; 'off' writes no file;
    an undeclared appender is a warning."""
    from twisted.logger import LogLevel

    from nodeapi.config_logging import LogFile

    (cwd / "etc").mkdir()
    for level, expected in (("all", LogLevel.debug), ("debug", LogLevel.debug),
                            ("info", LogLevel.info), ("warn", LogLevel.warn),
                            ("error", LogLevel.error)):
        (cwd / "etc" / "c.ini").write_text(
            "[log.file_appender.f]\nfilename = node.log\n"
            f"[logger.default]\nlevel = {level}\nappenders = f, nowhere\n")
        options = parse("--config", "etc/c.ini")
        assert options.logging.files == (LogFile(str(cwd / "etc" / "node.log"), expected),)
        assert _not_dev(options.warnings) == [f"{cwd / 'etc' / 'c.ini'} line 3: [logger.default]: "
                                    "appender 'nowhere' is not declared; ignored"]
    (cwd / "etc" / "c.ini").write_text(
        "[log.file_appender.f]\nfilename = node.log\n[logger.default]\nlevel = off\n"
        "appenders = f\n")
    assert parse("--config", "etc/c.ini").logging.files == ()


def test_logging_file_appender_receives_the_level_and_above(cwd):
    """The observer of a file appender writes events of its level and
    above, one line each."""
    from twisted.logger import Logger, LogPublisher

    (cwd / "c.ini").write_text("[log.file_appender.f]\nfilename = logs/n.log\n"
                               "[logger.default]\nlevel = warn\nappenders = f\n")
    publisher = LogPublisher()
    for observer in parse("--config", "c.ini").logging.observers():
        publisher.addObserver(observer)
    log = Logger(namespace="t", observer=publisher)
    log.info("quiet {n}", n=1)
    log.warn("loud {n}", n=2)
    log.error("louder {n}", n=3)
    written = (cwd / "logs" / "n.log").read_text()
    assert "loud 2" in written and "louder 3" in written and "quiet" not in written


def test_reference_option_errors_name_the_option_as_written(cwd):
    """An elasticsearch-* or es-objects-* value error names the option the
    operator wrote, with file and line."""
    (cwd / "c.ini").write_text("# es\nelasticsearch-bulk-replay = many\n"
                               "es-objects-bulk-sync = 0\n")
    assert _message("--config", "c.ini") == (
        f"elasticsearch-bulk-replay ({cwd / 'c.ini'} line 2): 'many' is not an integer")
    (cwd / "c.ini").write_text("es-objects-bulk-sync = 0\n")
    assert _message("--config", "c.ini").startswith(
        f"es-objects-bulk-sync ({cwd / 'c.ini'} line 1): 0 is not between")


def test_the_published_development_key_is_one_warning(cwd):
    """The witness plugin signing with the development key (the defaults,
    or the key given explicitly) is one warning; another key is none."""
    dev = [w for w in parse().warnings if "development key" in w]
    assert dev == ["witness: signing with the published development key (nathan, "
                   "5KQwrPbw...): anyone can sign blocks with it; never use it on a public chain"]
    assert [w for w in parse("--witness-id", "1.6.1", "--private-key", DEV_WIF).warnings
            if "development key" in w] == dev
    assert not [w for w in parse("--witness-id", "1.6.1", "--private-key", OTHER_WIF).warnings
                if "development key" in w]
    assert not [w for w in parse("--plugins", "account_history").warnings
                if "development key" in w]
    # a gateway and a devnet run no witness plugin: nothing signs with it
    assert not [w for w in parse("--upstream", "ws://127.0.0.1:9").warnings
                if "development key" in w]
    assert not [w for w in parse("--devnet").warnings if "development key" in w]


def test_an_indexer_in_only_query_mode_is_refused(cwd):
    """An indexer only writes; only_query never writes: it would index
    nothing and say nothing."""
    assert _message("--upstream", "ws://127.0.0.1:8090", "--plugins", "searchdb",
                    "--searchdb-mode", "only_query").startswith(
        "searchdb-mode only_query: an indexer (--upstream) only writes")
    assert parse("--upstream", "ws://127.0.0.1:8090", "--plugins", "searchdb",
                 "--searchdb-mode", "only_save")["searchdb-mode"] == "only_save"


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_an_unwritable_log_file_is_a_problem_line_not_a_failure(cwd):
    """Relative file names follow the INI file; under systemd that is a
    read-only credentials directory: the file is left out with one line."""
    (cwd / "ro").mkdir()
    (cwd / "ro" / "c.ini").write_text("[log.file_appender.f]\nfilename = logs/n.log\n"
                                      "[logger.default]\nlevel = info\nappenders = f\n")
    (cwd / "ro").chmod(0o500)
    problems = []
    try:
        assert parse("--config", "ro/c.ini").logging.observers(problems) == []
    finally:
        (cwd / "ro").chmod(0o700)
    assert problems == [f"log file {cwd / 'ro' / 'logs' / 'n.log'}: Permission denied; not "
                        "written (give an absolute, writable filename)"]


def test_a_log_file_in_a_missing_place_is_a_problem_line(cwd):
    (cwd / "file").write_text("")
    (cwd / "c.ini").write_text("[log.file_appender.f]\nfilename = file/n.log\n"
                               "[logger.default]\nlevel = info\nappenders = f\n")
    problems = []
    assert parse("--config", "c.ini").logging.observers(problems) == []
    assert problems == [f"log file {cwd / 'file' / 'n.log'}: File exists; not written "
                        "(give an absolute, writable filename)"]
