"""The option catalogue of ``twistd nodeapi``: every option's name, default,
value parser and help (:data:`SINGLE`, :data:`FLAGS`, :data:`MULTI`), the
bitshares-core names an INI file may use for them (:data:`ALIASES`) and the
bitshares-core options this node reads and ignores (:data:`REFERENCE_ONLY`).
The node's own options are written here; each plugin's come from its
declaration (:data:`nodeapi.plugins.registry.PLUGINS`, bitshares-core's
``plugin_set_program_options``).  :class:`nodeapi.config.Options` builds
its parser and its checks from these tables; the value parsers are in
:mod:`nodeapi.plugins.values` and :mod:`nodeapi.config_parse`.  Sources: the
options of docs/searchdb-plugin.rst, wire-contract section 6, bitshares
witness_node and application options, the reference plugins' option names.
"""

import attr

from nodeapi.chain.genesis import DEFAULT_GENESIS, DEFAULT_STATISTICS_TYPE
from nodeapi.config_parse import (
    parse_allowed_hosts, parse_allowed_origins, parse_endpoint, parse_optional_endpoint,
    parse_fork_url, parse_p2p_endpoint, parse_seed_node, parse_seed_nodes,
    parse_statistics_type, parse_trusted_proxies, parse_upstream, parse_chain_id)
from nodeapi.plugins.registry import DEFAULT, PLUGINS, parse_plugins, plugins_help
from nodeapi.node import ApiLimits
from nodeapi.plugins import interface
from nodeapi.plugins.values import (
    parse_bool, parse_int, parse_rate, parse_seconds, parse_text, parse_timeout)

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
    ("rpc-allowed-hosts", "", parse_allowed_hosts,
     "Host names (comma separated) the RPC port answers requests for, as in their Host "
     "header; * = any (a public node reached by its name lists it, or gives *). Refuses "
     "pages using a rebound DNS name (default: localhost, 127.0.0.1, ::1 and the address "
     "of rpc-endpoint)."),
    ("rpc-allowed-origins", "", parse_allowed_origins,
     "Web page origins (comma separated: a host name for any scheme and port, "
     "scheme://host[:port], null, or *) whose browsers may open a WebSocket or POST to the "
     "RPC port; requests without an Origin header (non-browser clients) always may "
     "(default: localhost, 127.0.0.1, ::1 and the address of rpc-endpoint)."),
    ("trusted-proxies", "", parse_trusted_proxies,
     "Addresses or networks (comma separated, CIDR: 10.0.0.5, 10.0.0.0/8, ::1) of reverse "
     "proxies (HAProxy) whose PROXY protocol header (send-proxy-v2) or X-Forwarded-For "
     "header gives the client's address for the limits per address and the failed-login "
     "log; from any other peer both are ignored (default: none)."),
    ("api-output-dir", "", parse_text,
     "Directory in which RPC calls that write a file (the devnet's dump_state(name), "
     "debug_stream_json_objects(filename)) create it, named by a plain file name; "
     "default: none, such calls are refused."),
    ("plugins", " ".join(DEFAULT), parse_plugins, plugins_help()),
    ("upstream-irreversible-only", "true", parse_bool,
     "Gateway: the searchdb plugin follows the upstream's last irreversible block (true) "
     "or its head (false; documents of blocks that a fork undoes would stay) "
     "(default true)."),
    ("upstream-cache-size", "64", parse_int(0),
     "Gateway: MiB of upstream answers that cannot change (chain id, config, irreversible "
     "blocks and transactions) kept in memory (default 64; 0 = none)."),
    ("upstream-share-seconds", "1", parse_seconds,
     "Gateway: seconds an upstream answer of a head-dependent read (getters of the "
     "database, history, orders, asset and block sets) is shared with identical calls of "
     "the same head block at most (default 1; 0 = no per-block sharing)."),
    ("upstream-routes", "", parse_text,
     "Gateway: JSON file of routes after jussi's upstreams: per API set or set.function, "
     "the upstreams (urls, among --upstream) that answer it and how long its answers are "
     "kept (ttl: seconds, 0 = never, -1 = for good, -2 = once final); README, the gateway's "
     "routes (default: every upstream, answers kept once final)."),
    ("upstream-chain-id", "", parse_chain_id,
     "Gateway: the chain id every upstream must serve (default: the first upstream's to "
     "answer); an upstream of another chain is never used."),
    ("upstream-subscription-connections", "32", parse_int(1, 1000),
     "Gateway: upstream connections the merged subscriptions may use, each carrying "
     "upstream-accounts-per-connection accounts; past them a subscribing "
     "get_full_accounts is refused (default 32)."),
    ("upstream-accounts-per-connection", "100", parse_int(1),
     "Gateway: accounts an upstream subscribes per connection through get_full_accounts "
     "(its api-limit-get-full-accounts-subscribe; bitshares-core's default 100)."),
    ("upstream-max-head-age", "60", parse_int(1),
     "Gateway: seconds; an upstream whose head block is older is used only when no "
     "fresher one is connected (default 60)."),
    ("upstream-timeout", "5", parse_timeout,
     "Gateway: seconds an upstream call waits for its answer (0.1 to 3600); a read not "
     "answered in time goes to another upstream, and the silent one leaves the rotation "
     "until it answers a check (default 5)."),
    ("upstream-max-lag-blocks", "3", parse_int(0),
     "Gateway: blocks an upstream's head may lag the best upstream's and still serve "
     "reads (default 3)."),
    ("checkpoint-interval", "1000", parse_int(0),
     "Blocks between checkpoints of the node state while in sync, written in the "
     "background and at a clean stop so a start replays only the blocks after the "
     "newest; while catching up (blocks over a minute old) one per minute of work "
     "instead; 0 = only at a clean stop (default 1000)."),
    ("api-access", "", parse_text,
     "JSON file of api-access permissions (default: none, anonymous default access)."),
    ("api-node-info", "", parse_text, "Free text returned by login_api get_info."),
    ("max-message-size", "4194304", parse_int(1024),
     "Largest RPC request or WebSocket message in bytes, also from followed nodes "
     "(default 4194304)."),
    ("p2p-endpoint", "", parse_p2p_endpoint,
     "host:port (IPv4) or [v6]:port where graphene's peer protocol listens, so "
     "bitshares-core nodes (and nodeapi nodes) sync from this node over P2P (default: "
     "none)."),
    ("p2p-connect-to-new-peers", "true", parse_bool,
     "Dial the P2P peers heard of from other peers (kept in <data-dir>/p2p/peers.json) "
     "while fewer than 20 are connected, as bitshares-core does (default true)."),
    ("p2p-max-connections", "200", parse_int(1),
     "Peers of graphene's peer protocol at once; more are rejected (default 200)."),
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
    # limits per source address (nodeapi.rpc.limits; per user: the api-access file)
    ("max-calls-per-second-per-ip", "0", parse_rate,
     "RPC calls per second from one source address (a token bucket), over it a call is "
     "answered with an error, 0 = no limit (default 0)."),
    ("max-call-burst-per-ip", "0", parse_int(0),
     "Calls one source address may make at once before max-calls-per-second-per-ip "
     "applies (the bucket size), 0 = two seconds' worth (default 0)."),
    ("max-subscriptions-per-ip", "20000", parse_int(0),
     "Subscribed items (objects, markets, callbacks) held by the connections of one source "
     "address together, 0 = no limit (default 20000)."),
    ("metrics-endpoint", "", parse_optional_endpoint,
     "host:port or endpoint string for Prometheus metrics (/metrics), the status page "
     "(/status) and the health check (/healthz) (default: off)."),
    ("health-max-head-age", "30", parse_seconds,
     "/healthz: largest age in seconds of the head block (indexer: of the last block "
     "indexed) for the node to count as in sync (default 30)."),
    ("health-max-searchdb-lag", "20", parse_int(0),
     "/healthz: largest search database lag in blocks for the node to count as in sync "
     "(default 20)."),
] + [
    # -- devnet (nodeapi.devnet; --devnet is a flag) ------------------------------------
    ("devnet-accounts", "10", parse_int(0, 1000),
     "devnet: ready accounts dev0..devN-1, funded at start (default 10)."),
    ("devnet-balance", "1000000", parse_int(0, 9_000_000),
     "devnet: whole TEST each ready account holds at start (anvil --balance; default "
     "1000000; the faucet init0 pays them: accounts x balance must fit its ~9.99e9 TEST)."),
    ("devnet-seed", "nodeapi-devnet", parse_text,
     "devnet: seed of the ready accounts' keys, sha256(\"<seed> devK\") (default "
     "nodeapi-devnet)."),
    ("block-interval", "0", parse_int(0, 86400),
     "devnet: seconds between blocks produced on a timer, 0 = only on demand and for each "
     "transaction (default 0)."),
    ("load-state", "", parse_text,
     "devnet: a file of the devnet API's dump_state to start from (default: none)."),
    ("fork-url", "", parse_fork_url,
     "devnet: ws://[user:password@]host:port of a node of the same genesis: the devnet "
     "starts from its chain's head, its state fetched lazily as it is touched, local blocks "
     "on top (default: none)."),
    ("fork-block", "0", parse_int(0),
     "devnet: with --fork-url, the block to fork at; 0 or the node's head = lazily at the "
     "head, an earlier block = synced block by block up to it (default 0)."),
    ("fork-timeout", "30", parse_int(1, 3600),
     "devnet: seconds the --fork-url node has to answer each call of the fork "
     "(default 30)."),
    ("devnet-max-snapshots", "1000", parse_int(1, 1_000_000),
     "devnet: snapshots held at once; past it snapshot() is refused until a revert drops "
     "some (default 1000)."),
] + [
    (f"api-limit-{field.name.replace('_', '-')}", str(field.default), parse_int(1),
     f"Largest result of {field.name} (default {field.default}).")
    for field in attr.fields(ApiLimits)
] + [
    # -- the plugins' options (nodeapi.plugins.registry) ------------------------------------
    (option.name, option.default, option.parse, option.help)
    for plugin in PLUGINS for option in plugin.options if option.kind == interface.SINGLE
]
#: Flags: (name, help); in the INI file they take true/false.
FLAGS = [
    ("enable-subscribe-to-all", "Allow set_subscribe_callback(..., true) (notify all objects)."),
    ("devnet",
     "Run a local development chain: blocks on demand, every API set but debug open "
     "(debug only when api-access grants it), ready accounts, the devnet API set; the "
     "state lives in a temporary directory."),
    ("replay-blockchain",
     "Rebuild the state from the whole block log, ignoring the checkpoints (bitshares-core's "
     "option)."),
    ("force-validate",
     "Verify the transactions' signatures in blocks from followed nodes too (by default "
     "they are skipped, as on a bitshares-core node that does not produce: the witness "
     "signature and the chain's rules are always checked)."),
] + [(option.name, option.help)
     for plugin in PLUGINS for option in plugin.options if option.kind == interface.FLAG]
#: Repeatable options: (name, coercer returning a list, help).
MULTI = [
    ("upstream", parse_upstream,
     "Gateway: ws://[user:password@]host:port of a bitshares-core-compatible node "
     "(repeatable): every API set but login (and history with the searchdb plugin, which "
     "follows one healthy upstream) is forwarded to them; no chain of this node's own "
     "(default: off)."),
    ("seed-node", parse_seed_node,
     "host:port of a node to sync from over graphene's peer protocol (P2P, as bitshares-core "
     "means it), or ws://[user:password@]host:port/path (or user:password@host:port) of a "
     "node to follow over its RPC WebSocket (repeatable)."),
    ("seed-nodes", parse_seed_nodes,
     "JSON list of seed nodes in bitshares-core's form, '[\"host:port\", ...]' (same "
     "meaning as seed-node for each)."),
] + [(option.name, option.parse, option.help)
     for plugin in PLUGINS for option in plugin.options if option.kind == interface.MULTI]
#: bitshares-core options (libraries/app/application.cpp, the plugins,
#: programs/witness_node) this node does not implement: an INI file may hold
#: them (a bitshares config.ini loads); each gives one warning and is ignored.
REFERENCE_ONLY = frozenset("""
    checkpoint dbg-init-key debug-private-key enable-p2p-network enable-standby-votes-tracking
    genesis-timestamp io-threads ignore-api-helper-indexes-warning
    p2p-accept-incoming-connections p2p-advertise-peer-algorithm p2p-advertise-peer-endpoint
    p2p-exclude-peer-endpoint p2p-inbound-endpoint
    proxy-forwarded-for-header required-participation resync-blockchain
    revalidate-blockchain rpc-tls-endpoint server-pem server-pem-password
    private-key-file trusted-node
    es-objects-keep-only-current
    snapshot-at-block snapshot-at-time snapshot-to
""".split())
#: bitshares-core names of plugin options (the reference plugins'), read
#: from an INI file as the plugin's own name (``elasticsearch-node-url`` is
#: ``searchdb-node-url``).
ALIASES = {alias: name for plugin in PLUGINS for alias, name in plugin.aliases.items()}
