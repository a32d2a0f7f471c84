"""Options of ``twistd nodeapi``: bitshares-style names, an INI file
(``--config``), validation before the reactor runs, typed helpers.

Any option goes on the command line (``--name value``) or in the INI file as
``name = value`` (bitshares ``config.ini``, boost program_options rules:
``#`` starts a comment anywhere, ``[log.*]`` sections are ignored, repeatable
options take several lines).  The command line wins; a repeatable option
given there replaces all of its file lines.  Flags can only be switched on
on the command line; in the file they take ``true``/``false``.  Relative
paths are relative to the current directory and are stored absolute.

Development defaults: with neither ``witness-id`` nor ``private-key``, the
node produces for the 11 init witnesses 1.6.1..1.6.11 of the bundled genesis
with the published key :data:`DEV_WIF`, and ``enable-stale-production`` is
on, so ``twistd -n nodeapi`` alone runs a chain whose head tracks the wall
clock.  As in bitshares, ``witness-id`` without ``private-key`` uses that key.
Never use these defaults on a public chain.

``postOptions`` leaves typed, normalized values (:data:`SINGLE`,
:data:`FLAGS`, :data:`MULTI`; the value parsers are in
:mod:`nodeapi.config_parse`) or raises ``usage.UsageError`` naming the
option (and INI file and line) and the problem.  Sources: the options of
docs/searchdb-plugin.rst, wire-contract section 6, bitshares witness_node
and application options.
"""

import os

import attr
from twisted.python import usage

from nodeapi.protocol.ids import instance_number
from nodeapi.chain import authority as auth
from nodeapi.chain.genesis import DEFAULT_GENESIS, DEFAULT_STATISTICS_TYPE, load_genesis
from nodeapi.config_parse import (
    REFERENCE_PLUGINS, parse_account_ids, parse_basic_auth, parse_bool, parse_bucket_sizes,
    parse_endpoint, parse_index_prefix, parse_int, parse_op_count, parse_optional_endpoint,
    parse_plugins, parse_private_key, parse_searchdb_mode, parse_seconds, parse_seed_node,
    parse_statistics_type, parse_text, parse_tracked_groups, parse_url, parse_witness_ids,
    parse_optional_url, parse_upstream)
from nodeapi.errors import ConfigError
from nodeapi.history.market_history import MarketHistoryOptions
from nodeapi.history.retention import HistoryLimits
from nodeapi.node import ApiLimits
from nodeapi.protocol.keys import public_key_bytes
from nodeapi.rpc.access import ApiAccess

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
    ("upstream", "", parse_upstream,
     "Indexer mode: ws://[user:password@]host:port of a bitshares-core-compatible node "
     "to follow (its irreversible blocks) for the searchdb plugin, keeping no chain of "
     "this node's own (default: off)."),
    ("upstream-irreversible-only", "true", parse_bool,
     "Indexer mode: follow the upstream's last irreversible block (true) or its head "
     "(false; documents of blocks that a fork undoes would stay) (default true)."),
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
     "host:port or endpoint string for Prometheus metrics (default: off)."),
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
_COERCE = {name: coerce for name, _d, coerce, _h in SINGLE}
_COERCE.update({name: coerce for name, coerce, _h in MULTI})
_COERCE.update({name: parse_bool for name, _h in FLAGS})
_REPEATABLE = {name for name, _c, _h in MULTI}


def read_ini(path: str, warnings: list | None = None) -> dict:
    """``path``'s lines -> ``{key: [(value, "FILE line N")]}``; ValueError
    naming file and line (unknown or repeated key, no ``=``), OSError.
    ``elasticsearch-*`` keys are read as their ``searchdb-*`` names; a
    bitshares-core option of :data:`REFERENCE_ONLY` appends one line to
    ``warnings`` and is skipped."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    found: dict = {}
    section = ""
    for number, line in enumerate(lines, 1):
        where = f"{path} line {number}"
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            continue
        if section.startswith("log.") or section == "log":
            continue
        key, eq, value = line.partition("=")
        key = key.strip()
        if not eq or not key:
            # the line itself is not quoted: it may hold a password
            raise ValueError(f"{where}: expected 'key = value' (line not shown)")
        if section:
            key = f"{section}.{key}"
        key = ALIASES.get(key, key)
        if key in REFERENCE_ONLY:
            if warnings is not None:
                warnings.append(f"{where}: bitshares option {key!r} is not implemented by "
                                "nodeapi; ignored")
            continue
        if key not in _COERCE:
            raise ValueError(f"{where}: unknown option {key!r}")
        if key in found and key not in _REPEATABLE:
            raise ValueError(f"{where}: option {key!r} given more than once")
        found.setdefault(key, []).append((value.strip(), where))
    return found


def _appender(name: str, doc: str):
    """An ``opt_*`` method collecting a repeatable option's values."""
    def opt(self, value):
        self[name].append(value)
    opt.__doc__ = doc
    return opt


class Options(usage.Options):
    """``twistd nodeapi`` options (module docstring).  After
    ``parseOptions`` the dict holds typed values: ints, floats, bools, lists
    (``plugins``, ``witness-id``, ``private-key`` as WIFs, ``seed-node``),
    absolute paths (``config``, ``data-dir``, ``genesis-json``,
    ``api-access``; None when unset), endpoint strings (``rpc-endpoint``,
    ``metrics-endpoint`` or None).

    :ivar genesis: the loaded :class:`~nodeapi.chain.genesis.Genesis`.
    :ivar development_defaults: True when the development witness defaults
        are in use (log a warning at startup).
    :ivar warnings: lines to log at startup: bitshares options of the INI
        file this node does not implement, plugins it has no plugin of.
    """

    synopsis = "[options]"
    longdesc = ("Run a graphene (BitShares-protocol) API node. Options may also be "
                "given in an INI file (--config, key = value); the command line wins.")
    optParameters = [["config", "c", None, "INI file with options (key = value)."]] + [
        [name, None, None, doc] for name, _default, _coerce, doc in SINGLE]
    optFlags = [[name, None, doc] for name, doc in FLAGS]

    def __init__(self) -> None:
        super().__init__()
        for name, _coerce, _doc in MULTI:
            self[name] = []
        self.genesis = None
        self.development_defaults = False
        self.warnings: list = []

    @staticmethod
    def _coerce(name: str, raw: str, where: str):
        try:
            return _COERCE[name](raw)
        except ValueError as exc:
            raise usage.UsageError(f"{where}: {exc}") from None

    def postOptions(self) -> None:
        """Merge INI and command line, coerce and validate everything; raises
        ``usage.UsageError`` naming the option and the problem."""
        ini = {}
        if self["config"] is not None:
            self["config"] = os.path.abspath(self["config"])
            try:
                ini = read_ini(self["config"], self.warnings)
            except OSError as exc:
                raise usage.UsageError(f"--config: cannot read {self['config']}: "
                                       f"{exc.strerror}") from None
            except (ValueError, UnicodeDecodeError) as exc:
                raise usage.UsageError(f"--config: {exc}") from None

        def pick(name):
            if name in ini:
                value, where = ini[name][0]
                return value, f"{name} ({where})"
            return None, f"--{name}"

        for name, default, _coerce, _doc in SINGLE:
            raw, where = (self[name], f"--{name}") if self[name] is not None else pick(name)
            self[name] = self._coerce(name, default if raw is None else raw, where)
        for name, _doc in FLAGS:
            raw, where = pick(name)
            self[name] = True if self[name] else (
                None if raw is None else self._coerce(name, raw, where))
        for name, _coerce, _doc in MULTI:
            given = [(v, f"--{name}") for v in self[name]] or [
                (v, f"{name} ({where})") for v, where in ini.get(name, [])]
            self[name] = [x for raw, where in given if raw.strip()
                          for x in self._coerce(name, raw, where)]
        if self["searchdb-mode"] == "all" and not self["searchdb-operation-string"]:
            raise usage.UsageError("searchdb-mode all needs searchdb-operation-string true "
                                   "(the history API reads op)")
        dropped = [p for p in self["plugins"] if p in REFERENCE_PLUGINS]
        self["plugins"] = [p for p in self["plugins"] if p not in REFERENCE_PLUGINS]
        self.warnings.extend(f"plugins: bitshares plugin {p!r} is not provided by nodeapi; "
                             "ignored" for p in dropped if p != "api_helper_indexes")
        self.development_defaults = not self["witness-id"] and not self["private-key"]
        if self.development_defaults:
            self["witness-id"] = list(INIT_WITNESSES)
        if not self["private-key"]:
            self["private-key"] = [DEV_WIF]
        if self["enable-stale-production"] is None:
            self["enable-stale-production"] = self.development_defaults
        self["enable-subscribe-to-all"] = bool(self["enable-subscribe-to-all"])
        self["replay-blockchain"] = bool(self["replay-blockchain"])
        self._check_files()

    def _check_files(self) -> None:
        if not self["data-dir"]:
            raise usage.UsageError("--data-dir: must not be empty")
        self["genesis-json"] = self["genesis-json"] or DEFAULT_GENESIS
        for name in ("data-dir", "genesis-json", "api-access"):
            self[name] = os.path.abspath(self[name]) if self[name] else None
        path = self["genesis-json"]
        try:
            self.genesis = load_genesis(path)
            self.genesis.initial_timestamp, self.genesis.block_interval  # noqa: B018
            if not self.genesis.data["initial_witness_candidates"]:
                raise ValueError("no initial_witness_candidates")
        except OSError as exc:
            raise usage.UsageError(f"--genesis-json: cannot read {path}: {exc.strerror}") from None
        except KeyError as exc:
            raise usage.UsageError(f"--genesis-json: {path} is not a genesis file: missing "
                                   f"{exc}") from None
        except Exception as exc:
            raise usage.UsageError(f"--genesis-json: {path} is not a genesis file: "
                                   f"{exc}") from None
        if self["api-access"]:
            self._check_api_access(self["api-access"])
        data_dir = probe = self["data-dir"]
        while not os.path.exists(probe):
            probe = os.path.dirname(probe)
        if not os.path.isdir(probe):
            raise usage.UsageError(f"--data-dir: {probe} is not a directory")
        if not os.access(probe, os.W_OK | os.X_OK):
            verb = "write to" if probe == data_dir else f"create {data_dir} in"
            raise usage.UsageError(f"--data-dir: cannot {verb} {probe}: permission denied")

    @staticmethod
    def _check_api_access(path: str) -> None:
        try:
            ApiAccess.load(path)
        except ConfigError as exc:
            raise usage.UsageError(f"--api-access: {exc}") from None

    # -- typed helpers --------------------------------------------------------------

    def api_limits(self) -> ApiLimits:
        """The ``api-limit-*`` values as :class:`~nodeapi.node.ApiLimits`."""
        return ApiLimits(**{f.name: self[f"api-limit-{f.name.replace('_', '-')}"]
                            for f in attr.fields(ApiLimits)})

    def rpc_limits(self):
        """The :class:`nodeapi.rpc.guard.RpcLimits` of these options."""
        from nodeapi.rpc.guard import RpcLimits

        return RpcLimits(max_connections=self["max-connections"],
                         max_connections_per_ip=self["max-connections-per-ip"],
                         handshake_timeout=self["handshake-timeout"],
                         max_unsent_bytes=self["max-unsent-bytes"])

    def history_limits(self) -> HistoryLimits:
        """The ``account_history`` options as
        :class:`~nodeapi.history.retention.HistoryLimits`."""
        return HistoryLimits(
            max_ops_per_account=self["max-ops-per-account"],
            extended_max_ops_per_account=self["extended-max-ops-per-account"],
            min_blocks_to_keep=self["min-blocks-to-keep"],
            max_ops_per_acc_by_min_blocks=self["max-ops-per-acc-by-min-blocks"],
            partial_operations=self["partial-operations"],
            track_accounts=self["track-account"],
            extended_history_accounts=self["extended-history-by-account"],
            extended_history_registrars=self["extended-history-by-registrar"])

    def block_log_path(self) -> str:
        """Absolute path of the block log: ``<data-dir>/blocks.log``."""
        return os.path.join(self["data-dir"], BLOCK_LOG_NAME)

    def witnesses(self, chain=None) -> dict:
        """``{witness_id: WIF}`` for :class:`nodeapi.witness.WitnessService`
        ({} without the witness plugin).  Each id gets the configured key
        whose public key is its signing key - in ``chain.state`` when given,
        else in the genesis' ``initial_witness_candidates`` (1.6.N is
        candidate N-1) - or the first configured key when none matches (the
        service then reports ``no_private_key`` at its slots)."""
        if "witness" not in self["plugins"]:
            return {}
        by_public = {}
        for wif in self["private-key"]:
            by_public.setdefault(public_key_bytes(auth.public_key_of(wif, "TEST")), wif)
        candidates = self.genesis.data.get("initial_witness_candidates", [])
        out = {}
        for wid in self["witness-id"]:
            signing, instance = None, instance_number(wid)
            if chain is not None and wid in chain.state.objects:
                signing = chain.state.objects[wid]["signing_key"]
            elif chain is None and 1 <= instance <= len(candidates):
                signing = candidates[instance - 1]["block_signing_key"]
            key = by_public.get(public_key_bytes(signing)) if signing else None
            out[wid] = key or self["private-key"][0]
        return out

    def market_history(self):
        """The market_history options as
        :class:`~nodeapi.history.market_history.MarketHistoryOptions`."""
        return MarketHistoryOptions(
            bucket_sizes=self["bucket-size"], history_per_size=self["history-per-size"],
            max_order_his_records_per_market=self["max-order-his-records-per-market"],
            max_order_his_seconds_per_market=self["max-order-his-seconds-per-market"])

    def searchdb(self) -> dict:
        """The ``searchdb-*`` options with snake_case keys (node_url,
        bulk_replay, bulk_sync, visitor, basic_auth, index_prefix)."""
        return {name[9:].replace("-", "_"): self[name]
                for name, *_rest in SINGLE
                if name.startswith("searchdb-") and not name.startswith("searchdb-objects-")}

    def searchdb_objects(self) -> dict:
        """The searchdb-objects plugin's settings: ``url`` and ``basic_auth``
        (those of searchdb when not given) and ``options``, an
        :class:`~nodeapi.history.searchdb.objects.ObjectsOptions`."""
        from nodeapi.history.searchdb.objects import ObjectsOptions

        return {"url": self["searchdb-objects-url"] or self["searchdb-node-url"],
                "basic_auth": self["searchdb-objects-basic-auth"] or self["searchdb-basic-auth"],
                "options": ObjectsOptions.from_options(
                    lambda name: self[f"searchdb-objects-{name}"])}


# ``--name value`` of every repeatable option appends (usage.Options finds
# the ``opt_*`` methods on the class).
for _name, _coerce, _doc in MULTI:
    setattr(Options, "opt_" + _name.replace("-", "_"), _appender(_name, _doc))
del _name, _coerce, _doc
