"""``twistd nodeapi --help`` on one screen: the node's main options grouped
by purpose, one line each (name, a few words, the default),
and a pointer to ``--help-all`` (twistd's full usage text: every option
with its whole help, the 48 ``api-limit-*`` options and the plugins'
options).  The rows come from the option catalogue
(:mod:`nodeapi.config_options`) give the defaults; :data:`GROUPS` orders
the node's own options with a few words each, and every one of them is in
exactly one group (the tests check).
"""

import textwrap

from nodeapi.config_options import FLAGS, MULTI, SINGLE
from nodeapi.plugins.registry import PLUGINS

#: (title, ((option name, a few words), ...)) in the order shown; a tuple
#: of names shares one line (options that go together)
GROUPS = (
    ("Chain and data", (
        ("data-dir", "block log, checkpoints, config.ini"),
        ("genesis-json", "genesis file (default: bundled testnet)"),
        ("plugins", "space separated plugin names"),
        ("account-statistics-type", "6 numbers them 2.6.N as graphene"),
        ("checkpoint-interval", "blocks between state checkpoints"),
        ("replay-blockchain", "replay the whole block log"))),
    ("Peers (graphene P2P, or following over RPC)", (
        (("seed-node", "seed-nodes"), "host:port P2P, ws://host:port RPC"),
        ("p2p-endpoint", "host:port or [v6]:port P2P listens on"),
        (("p2p-max-connections", "p2p-connect-to-new-peers"), "peers; dial those heard of"),
        ("force-validate", "check followed blocks' signatures"))),
    ("Witness", (
        (("witness-id", "private-key"), "1.6.N to produce for, its WIF key"),
        ("enable-stale-production", "produce when the head is old"))),
    ("RPC", (
        ("rpc-endpoint", "host:port of WebSocket and HTTP RPC"),
        ("api-access", "JSON file of users and their API sets"),
        ("api-node-info", "text of login_api get_info"),
        ("max-message-size", "largest request or message, bytes"),
        ("max-calls-in-flight", "unanswered calls per connection"),
        ("ws-auto-ping-interval", "seconds between pings, 0 = off"),
        ("enable-subscribe-to-all", "allow subscribing to every object"),
        (("rpc-allowed-hosts", "rpc-allowed-origins"), "names served (loopback)"),
        ("api-output-dir", "where debug/devnet dumps may write"))),
    ("Limits against hostile clients (0 = none)", (
        ("max-connections", "RPC connections in total"),
        ("max-connections-per-ip", "RPC connections per address"),
        ("handshake-timeout", "seconds for a request head"),
        ("max-unsent-bytes", "reply bytes clients leave unread"),
        (("max-calls-per-second-per-ip", "max-call-burst-per-ip"), "rate, burst per ip"),
        ("max-subscriptions-per-ip", "subscribed items per address"),
        ("trusted-proxies", "proxies telling client addresses"))),
    ("Monitoring", (
        ("metrics-endpoint", "host:port of /metrics /status /healthz"),
        (("health-max-head-age", "health-max-searchdb-lag"), "/healthz limits"))),
    ("Gateway (forwards to other nodes, no chain of its own)", (
        ("upstream", "ws://host:port of a node (repeatable)"),
        ("upstream-chain-id", "the chain id upstreams must serve"),
        ("upstream-max-head-age", "seconds before an upstream is stale"),
        (("upstream-timeout", "upstream-max-lag-blocks"), "timeout s; lag blocks"),
        ("upstream-subscription-connections", "connections for subscriptions"),
        ("upstream-accounts-per-connection", "accounts subscribed per connection"),
        (("upstream-cache-size", "upstream-share-seconds"), "answers cached MiB, shared s"),
        ("upstream-routes", "JSON file: upstreams, ttl per method"),
        ("upstream-irreversible-only", "index irreversible blocks only"))),
    ("Devnet (a throw-away local chain)", (
        ("devnet", "run one (every API set but debug open)"),
        (("devnet-accounts", "devnet-balance"), "ready accounts, TEST each"),
        ("devnet-seed", "seed of their keys"),
        ("block-interval", "seconds between blocks, 0 = on demand"),
        (("load-state", "fork-url", "fork-block"), "start: a dump_state file, or a fork"),
        (("fork-timeout", "devnet-max-snapshots"), "s per fork call; snapshots kept"))),
)
#: columns of a line
WIDTH = 79


def _rows() -> dict:
    """``{name: (default text, help)}`` of every option."""
    rows = {name: (default, doc) for name, default, _c, doc in SINGLE}
    rows.update({name: ("", doc) for name, doc in FLAGS})
    rows.update({name: ("", doc) for name, _c, doc in MULTI})
    return rows


def short_usage(synopsis: str) -> str:
    """The ``--help`` text (module doc); ``synopsis`` is its first line."""
    rows = _rows()
    lines = [synopsis, ""]
    for title, entries in GROUPS:
        lines.append(f"{title}:")
        for names, words in entries:
            names = (names,) if isinstance(names, str) else names
            left = ", ".join(f"--{name}={rows[name][0]}"
                             if rows[name][0] and len(rows[name][0]) <= 16 else f"--{name}"
                             for name in names)
            if len(left) + len(words) > WIDTH - 3:  # shared lines drop their defaults
                left = ", ".join(f"--{name}" for name in names)
            if len(left) + len(words) > WIDTH - 3:  # then the words go below
                lines.append(f"  {left}")
                left = ""
            lines.append(f"  {left:<33} {words}")
    lines.append("")
    limits = sum(1 for name in rows if name.startswith("api-limit-"))
    plugins = [p.name for p in PLUGINS if p.name != "witness" and p.options]
    lines += textwrap.wrap(
        "Options also go as name = value in <data-dir>/config.ini or --config FILE. "
        f"--help-all: every option with its whole help, the {limits} --api-limit-* "
        f"and the plugins' ({', '.join(plugins)}).", WIDTH)
    return "\n".join(lines)
