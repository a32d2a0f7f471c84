"""The option catalogue of ``twistd nodeapi``: every option's name, default,
value parser and help (:data:`SINGLE`, :data:`FLAGS`, :data:`MULTI`), the
bitshares-core names an INI file may use for them (:data:`ALIASES`) and the
bitshares-core options this node reads and ignores (:data:`REFERENCE_ONLY`).
:class:`nodeapi.config.Options` builds its parser and its checks from these
tables; the value parsers are in :mod:`nodeapi.config_parse`.  Sources: the
options of docs/searchdb-plugin.rst, wire-contract section 6, bitshares
witness_node and application options, the reference plugins' option names.
"""

import attr

from nodeapi.config_parse import (
    parse_account_ids, parse_basic_auth, parse_bool, parse_bucket_sizes,
    parse_endpoint, parse_index_prefix, parse_int, parse_op_count, parse_optional_endpoint,
    parse_plugins, parse_private_key, parse_searchdb_mode, parse_seconds, parse_seed_node,
    parse_statistics_type, parse_text, parse_tracked_groups, parse_url, parse_witness_ids,
    parse_optional_url, parse_upstream, parse_chain_id)
from nodeapi.chain.genesis import DEFAULT_GENESIS, DEFAULT_STATISTICS_TYPE
from nodeapi.node import ApiLimits

#: The published development key of the bundled genesis (bitshares' "nathan").
DEV_WIF = "5KQwrPbwdL6PhXujxW37FSSQZ1JiwsST4cqQzDeyXtP79zkvFD3"
INIT_WITNESSES = tuple(f"1.6.{i}" for i in range(1, 12))
BLOCK_LOG_NAME = "blocks.log"

#: Single-valued options: (name, default as text, coercer, help).
SINGLE = [
    ("data-dir", "nodeapi_data", parse_text,
     "Directory of the block log and node state (default: nodeapi_data in the "
     "current directory)."),
    ("genesis-json", DEFAULT_GENESIS, parse_text,
     "Genesis file (default: the bundled development genesis)."),
    ("account-statistics-type", str(DEFAULT_STATISTICS_TYPE), parse_statistics_type,
     "Type of account statistics object ids: 7 numbers them 2.7.N (the specification), "
     "6 numbers them 2.6.N as graphene does, which python-bitshares Notify and "
     "bitsharesjs ChainStore need to see account updates (default 7)."),
    ("rpc-endpoint", "127.0.0.1:8090", parse_endpoint,
     "host:port or Twisted endpoint string of the RPC server (default 127.0.0.1:8090)."),
    ("plugins", "witness account_history market_history grouped_orders custom_operations",
     parse_plugins,
     "Plugins to enable, space separated: witness, account_history, market_history, "
     "searchdb (alias elasticsearch), searchdb-objects (alias es_objects), grouped_orders, "
     "custom_operations (default: witness "
     "account_history market_history grouped_orders custom_operations)."),
    ("max-ops-per-account", "", parse_op_count,
     "account_history: operations kept per account, 0 = no account history (default: "
     "unlimited; min-blocks-to-keep may keep more)."),
    ("extended-max-ops-per-account", "", parse_op_count,
     "account_history: operations kept per extended-history account (default: unlimited; "
     "never less than max-ops-per-account)."),
    ("min-blocks-to-keep", "30000", parse_int(0, 2 ** 32 - 1),
     "account_history: operations of the latest N blocks are kept up to "
     "max-ops-per-acc-by-min-blocks per account (default 30000)."),
    ("max-ops-per-acc-by-min-blocks", "1000", parse_op_count,
     "account_history: most operations per account min-blocks-to-keep keeps (default 1000; "
     "never less than max-ops-per-account)."),
    ("partial-operations", "false", parse_bool,
     "account_history: true = keep only operations some kept account history refers to "
     "(default false: keep every operation)."),
    ("upstream-irreversible-only", "true", parse_bool,
     "Gateway: the searchdb plugin follows the upstream's last irreversible block (true) "
     "or its head (false; documents of blocks that a fork undoes would stay) "
     "(default true)."),
    ("upstream-cache-size", "64", parse_int(0),
     "Gateway: MiB of upstream answers that cannot change (chain id, config, irreversible "
     "blocks and transactions) kept in memory (default 64; 0 = none)."),
    ("upstream-chain-id", "", parse_chain_id,
     "Gateway: the chain id every upstream must serve (default: the first upstream's to "
     "answer); an upstream of another chain is never used."),
    ("upstream-max-head-age", "60", parse_int(1),
     "Gateway: seconds; an upstream whose head block is older is used only when no "
     "fresher one is connected (default 60)."),
    ("checkpoint-interval", "1000", parse_int(0),
     "Blocks between checkpoints of the node state, written in the background and at a "
     "clean stop so a start replays only the blocks after the newest; 0 = only at a "
     "clean stop (default 1000)."),
    ("api-access", "", parse_text,
     "JSON file of api-access permissions (default: none, anonymous default access)."),
    ("api-node-info", "", parse_text, "Free text returned by login_api get_info."),
    ("max-message-size", "4194304", parse_int(1024),
     "Largest RPC request or WebSocket message in bytes, also from followed nodes "
     "(default 4194304)."),
    ("max-calls-in-flight", "100", parse_int(1),
     "RPC calls a connection may have unanswered (default 100)."),
    ("ws-auto-ping-interval", "30", parse_seconds,
     "Seconds between WebSocket pings to idle clients, 0 = off (default 30)."),
    # RPC limits against hostile clients (nodeapi.rpc.guard.RpcLimits)
    ("max-connections", "4000", parse_int(0),
     "Open RPC connections in total, 0 = no limit (default 4000, lowered to fit the "
     "open-files limit)."),
    ("max-connections-per-ip", "200", parse_int(0),
     "Open RPC connections from one source address, 0 = no limit (default 200)."),
    ("handshake-timeout", "10", parse_seconds,
     "Seconds for an HTTP request head or WebSocket handshake to arrive, 0 = off "
     "(default 10)."),
    ("max-unsent-bytes", "67108864", parse_int(0),
     "Unsent RPC reply bytes held for clients that do not read, over all connections; "
     "past it the largest holder is disconnected, 0 = no limit (default 67108864)."),
    ("metrics-endpoint", "", parse_optional_endpoint,
     "host:port or endpoint string for Prometheus metrics (/metrics), the status page "
     "(/status) and the health check (/healthz) (default: off)."),
    ("health-max-head-age", "30", parse_seconds,
     "/healthz: largest age in seconds of the head block (indexer: of the last block "
     "indexed) for the node to count as in sync (default 30)."),
    ("health-max-searchdb-lag", "20", parse_int(0),
     "/healthz: largest search database lag in blocks for the node to count as in sync "
     "(default 20)."),
    ("searchdb-node-url", "http://localhost:9200/", parse_url,
     "Search database URL (default http://localhost:9200/)."),
    ("searchdb-bulk-replay", "10000", parse_int(2),
     "Lines per bulk request during replay (default 10000)."),
    ("searchdb-bulk-sync", "100", parse_int(2),
     "Lines per bulk request when synchronized (default 100)."),
    ("searchdb-visitor", "false", parse_bool,
     "true: index fee and transfer values too (default false)."),
    ("searchdb-basic-auth", "", parse_basic_auth,
     "<username>:<password> for the search database (default: none)."),
    ("searchdb-index-prefix", "chain-", parse_index_prefix,
     "Prefix of the monthly index names (default chain-)."),
] + [
    # -- searchdb: the reference elasticsearch plugin's switches (docs/searchdb-plugin.rst;
    #    INI aliases in SEARCHDB_REFERENCE_NAMES) --------------------------------------
    ("searchdb-mode", "all", parse_searchdb_mode,
     "only_save (0): write, the history API does not read the database; only_query (1): "
     "never write, the history API reads the database; all (2): both (default all)."),
    ("searchdb-start-after-block", "0", parse_int(0, 2 ** 32 - 1),
     "Write documents of the blocks after this number only (default 0)."),
    ("searchdb-operation-object", "true", parse_bool,
     "true: store op_object and operation_result_object (default true)."),
    ("searchdb-operation-string", "true", parse_bool,
     "true: store op as JSON text, needed by the history API (default true)."),
    ("searchdb-max-mapping-depth", "20", parse_int(2, 65535),
     "Largest field depth of a document, index.mapping.depth.limit (default 20)."),
] + [
    # -- searchdb-objects: the reference es_objects plugin's options (INI aliases
    #    es-objects-* in OBJECTS_REFERENCE_NAMES; docs/searchdb-plugin.rst "Objects") -------
    ("searchdb-objects-url", "", parse_optional_url,
     "searchdb-objects: search database URL (default: searchdb-node-url)."),
    ("searchdb-objects-basic-auth", "", parse_basic_auth,
     "searchdb-objects: <username>:<password> (default: searchdb-basic-auth)."),
    ("searchdb-objects-bulk-replay", "10000", parse_int(1),
     "searchdb-objects: documents per bulk while loading all objects (default 10000)."),
    ("searchdb-objects-bulk-sync", "100", parse_int(1),
     "searchdb-objects: documents per bulk for a live block (default 100)."),
    ("searchdb-objects-index-prefix", "objects-", parse_index_prefix,
     "searchdb-objects: prefix of the index names (default objects-)."),
    ("searchdb-objects-max-mapping-depth", "10", parse_int(2, 65535),
     "searchdb-objects: largest field depth of a document (default 10)."),
    ("searchdb-objects-start-after-block", "0", parse_int(0, 2 ** 32 - 1),
     "searchdb-objects: write objects changed by the blocks after this number only "
     "(default 0)."),
    ("searchdb-objects-sync-db-on-startup", "false", parse_bool,
     "searchdb-objects: load every object at each start (default false: only when the "
     "database is behind the chain)."),
] + [
    (f"searchdb-objects-{kind}{suffix}", default, parse_bool,
     f"searchdb-objects: {what} (default {default}).")
    for kind, suffix, default, what in (
        ("proposals", "", "true", "store proposal objects"),
        ("proposals", "-store-updates", "false", "store every update of proposals"),
        ("proposals", "-no-delete", "true", "keep removed proposals"),
        ("accounts", "", "true", "store account objects"),
        ("accounts", "-store-updates", "false", "store every update of accounts"),
        ("assets", "", "true", "store asset objects"),
        ("assets", "-store-updates", "false", "store every update of assets"),
        ("balances", "", "true", "store account balance objects"),
        ("balances", "-store-updates", "false", "store every update of balances"),
        ("limit-orders", "", "true", "store limit order objects"),
        ("limit-orders", "-store-updates", "false", "store every update of limit orders"),
        ("limit-orders", "-no-delete", "false", "keep removed limit orders"),
        ("asset-bitasset", "", "true", "store bitasset data objects"),
        ("asset-bitasset", "-store-updates", "false", "store every update of bitasset data"),
        ("budget-records", "", "true", "store budget records"))
] + [
    ("bucket-size", "[60,300,900,3600,14400,86400,604800]", parse_bucket_sizes,
     "market_history: bucket sizes in seconds, a JSON array "
     "(default [60,300,900,3600,14400,86400,604800])."),
    ("history-per-size", "1500", parse_int(0, 2 ** 32 - 1),
     "market_history: buckets kept per market and size (default 1500)."),
    ("max-order-his-records-per-market", "1000", parse_int(0, 2 ** 32 - 1),
     "market_history: fills always kept per market (default 1000)."),
    ("max-order-his-seconds-per-market", "259200", parse_int(0, 2 ** 32 - 1),
     "market_history: fills younger than this many seconds are kept too (default 259200)."),
    ("tracked-groups", "[10,100]", parse_tracked_groups,
     "grouped_orders: JSON array of group widths in 1/10000 (default [10,100]: 0.1% and 1%)."),
    ("custom-operations-start-block", "45000000", parse_int(0, 2 ** 32 - 1),
     "custom_operations: first block whose custom operations are read (default 45000000)."),
] + [
    # -- devnet (nodeapi.devnet; --devnet is a flag) ------------------------------------
    ("devnet-accounts", "10", parse_int(0, 1000),
     "devnet: ready accounts dev0..devN-1, funded at start (default 10)."),
    ("devnet-seed", "nodeapi-devnet", parse_text,
     "devnet: seed of the ready accounts' keys, sha256(\"<seed> devK\") (default "
     "nodeapi-devnet)."),
    ("block-interval", "0", parse_int(0, 86400),
     "devnet: seconds between blocks produced on a timer, 0 = only on demand and for each "
     "transaction (default 0)."),
    ("load-state", "", parse_text,
     "devnet: a file of the devnet API's dump_state to start from (default: none)."),
] + [
    (f"api-limit-{field.name.replace('_', '-')}", str(field.default), parse_int(1),
     f"Largest result of {field.name} (default {field.default}).")
    for field in attr.fields(ApiLimits)
]
#: Flags: (name, help); in the INI file they take true/false.
FLAGS = [
    ("enable-stale-production",
     "Produce blocks even if the chain head is far behind the clock (default: on "
     "only with the development witness defaults)."),
    ("enable-subscribe-to-all", "Allow set_subscribe_callback(..., true) (notify all objects)."),
    ("devnet",
     "Run a local development chain: blocks on demand, every API set open, ready "
     "accounts, the devnet API set; the state lives in a temporary directory."),
    ("replay-blockchain",
     "Rebuild the state from the whole block log, ignoring the checkpoints (bitshares-core's "
     "option)."),
]
#: Repeatable options: (name, coercer returning a list, help).
MULTI = [
    ("witness-id", parse_witness_ids,
     'Witness id to produce for, e.g. 1.6.1 or "1.6.1" (repeatable; default: the 11 init '
     "witnesses, a development default)."),
    ("private-key", parse_private_key,
     'WIF key or ["PUBLIC_KEY","WIF"] pair (repeatable; default: the development key).'),
    ("track-account", parse_account_ids,
     'account_history: account id, e.g. "1.2.17", whose history is kept (repeatable; '
     "default: every account)."),
    ("extended-history-by-account", parse_account_ids,
     "account_history: account id that gets extended-max-ops-per-account (repeatable)."),
    ("extended-history-by-registrar", parse_account_ids,
     "account_history: accounts registered by this account id get "
     "extended-max-ops-per-account (repeatable)."),
    ("upstream", parse_upstream,
     "Gateway: ws://[user:password@]host:port of a bitshares-core-compatible node "
     "(repeatable): every API set but login (and history with the searchdb plugin, which "
     "follows one healthy upstream) is forwarded to them; no chain of this node's own "
     "(default: off)."),
    ("seed-node", parse_seed_node,
     "[user:password@]host:port, [IPv6]:port or ws://[user:password@]host:port/path of a "
     "node to follow (repeatable)."),
]
#: bitshares-core names of searchdb options (elasticsearch_plugin.cpp) read
#: from an INI file as the searchdb name.
SEARCHDB_REFERENCE_NAMES = {
    "elasticsearch-mode": "searchdb-mode",
    "elasticsearch-start-es-after-block": "searchdb-start-after-block",
    "elasticsearch-operation-object": "searchdb-operation-object",
    "elasticsearch-operation-string": "searchdb-operation-string",
    "elasticsearch-max-mapping-depth": "searchdb-max-mapping-depth",
}
#: bitshares-core options (libraries/app/application.cpp, the plugins,
#: programs/witness_node) this node does not implement: an INI file may hold
#: them (a bitshares config.ini loads); each gives one warning and is ignored.
REFERENCE_ONLY = frozenset("""
    checkpoint dbg-init-key debug-private-key enable-p2p-network enable-standby-votes-tracking
    force-validate genesis-timestamp io-threads ignore-api-helper-indexes-warning
    p2p-accept-incoming-connections p2p-advertise-peer-algorithm p2p-advertise-peer-endpoint
    p2p-connect-to-new-peers p2p-endpoint p2p-exclude-peer-endpoint p2p-inbound-endpoint
    proxy-forwarded-for-header required-participation resync-blockchain
    revalidate-blockchain rpc-tls-endpoint seed-nodes server-pem server-pem-password
    private-key-file trusted-node
    es-objects-keep-only-current
    snapshot-at-block snapshot-at-time snapshot-to
""".split())
#: bitshares-core es_objects plugin names (es_objects.cpp) of the
#: searchdb-objects options, read from an INI file as the searchdb-objects name.
OBJECTS_REFERENCE_NAMES = dict({
    "es-objects-elasticsearch-url": "searchdb-objects-url",
    "es-objects-auth": "searchdb-objects-basic-auth",
    "es-objects-start-es-after-block": "searchdb-objects-start-after-block"}, **{
    f"es-objects-{name[17:]}": name for name, *_rest in SINGLE
    if name.startswith("searchdb-objects-") and name[17:] not in (
        "url", "basic-auth", "start-after-block")})
#: bitshares-core elasticsearch plugin names of the searchdb options.
ALIASES = dict({f"elasticsearch-{name}": f"searchdb-{name}" for name in (
    "node-url", "bulk-replay", "bulk-sync", "visitor", "basic-auth", "index-prefix")},
    **SEARCHDB_REFERENCE_NAMES, **OBJECTS_REFERENCE_NAMES)
