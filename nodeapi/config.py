"""Options of ``twistd nodeapi``: bitshares-style names, an INI file
(``--config``, else ``<data-dir>/config.ini`` as bitshares-core's
witness_node reads it), validation before the reactor runs, typed helpers.

Sources: bitshares witness_node and application options
(libraries/app/application.cpp ``set_program_options``), the options of
docs/searchdb-plugin.rst, wire-contract section 6.  How an operator gives
them (command line and INI file, which wins, the first start's file, the
errors): docs/operators.rst and README "Options"; the development witness
defaults: README and :mod:`nodeapi.plugins.witness.plugin`.  The option
catalogue is :mod:`nodeapi.config_options`, the value parsers are in
:mod:`nodeapi.plugins.values` and :mod:`nodeapi.config_parse`; each
plugin's ``check`` completes its own
(:data:`nodeapi.plugins.registry.PLUGINS`).
"""

import os

import attr
from twisted.python import usage

from nodeapi.chain.genesis import DEFAULT_GENESIS, load_genesis
from nodeapi.config_options import (
    ALIASES, BLOCK_LOG_NAME, FLAGS, MULTI, REFERENCE_ONLY, SINGLE)
from nodeapi.plugins.registry import NOT_PROVIDED, PLUGINS
from nodeapi.config_logging import LoggingConfig, is_logging_section, logging_config
from nodeapi.errors import ConfigError
from nodeapi.files import CONFIG_LIMIT, FileRefused, read_bounded
from nodeapi.node import ApiLimits
from nodeapi.plugins.values import parse_bool
from nodeapi.rpc.access import ApiAccess

_COERCE = {name: coerce for name, _d, coerce, _h in SINGLE}
_COERCE.update({name: coerce for name, coerce, _h in MULTI})
_COERCE.update({name: parse_bool for name, _h in FLAGS})
_REPEATABLE = {name for name, _c, _h in MULTI}
_DEFAULT_DATA_DIR = next(default for name, default, _c, _h in SINGLE if name == "data-dir")
#: the INI file of a data dir (bitshares-core: ``<data-dir>/config.ini``)
CONFIG_NAME = "config.ini"


def read_ini(path: str, warnings: list | None = None, logging: dict | None = None) -> dict:
    """``path``'s lines -> ``{key: [(value, "FILE line N", name as written)]}``;
    ValueError naming file and line (unknown or repeated key, no ``=``),
    OSError.  ``elasticsearch-*`` keys are read as their ``searchdb-*``
    names; a bitshares-core option of :data:`REFERENCE_ONLY` appends one
    line to ``warnings`` and is skipped.  The keys of bitshares' logging
    sections (``[log.*]``, ``[logger.*]``, :mod:`nodeapi.config_logging`) go to
    ``logging`` as ``{section: {key: (value, where)}}``, the section's own
    line under key ``""``."""
    try:
        lines = read_bounded(path, CONFIG_LIMIT).decode("utf-8").splitlines()
    except FileRefused as exc:
        raise ValueError(f"{path}: {exc}") from None
    found: dict = {}
    section = ""
    logging = {} if logging is None else logging
    for number, line in enumerate(lines, 1):
        where = f"{path} line {number}"
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            if is_logging_section(section):
                logging.setdefault(section, {"": ("", where)})
            continue
        key, eq, value = line.partition("=")
        key = key.strip()
        if not eq or not key:
            # the line itself is not quoted: it may hold a password
            raise ValueError(f"{where}: expected 'key = value' (line not shown)")
        if is_logging_section(section):
            logging[section][key] = (value.strip(), where)
            continue
        if section:
            key = f"{section}.{key}"
        written, key = key, ALIASES.get(key, key)
        if key in REFERENCE_ONLY:
            if warnings is not None:
                warnings.append(f"{where}: bitshares option {key!r} is not implemented by "
                                "nodeapi; ignored")
            continue
        if key not in _COERCE:
            raise ValueError(f"{where}: unknown option {key!r}")
        if key in found and key not in _REPEATABLE:
            raise ValueError(f"{where}: option {written!r} given more than once")
        found.setdefault(key, []).append((value.strip(), where, written))
    return found


def _appender(name: str, doc: str):
    """An ``opt_*`` method collecting a repeatable option's values."""
    def opt(self, value):
        self[name].append(value)
    opt.__doc__ = doc
    return opt


#: ``--name value`` of every repeatable option appends: a base class of
#: :class:`Options` holding one ``opt_*`` method per row of ``MULTI``
#: (usage.Options finds them on the class and its bases)
RepeatableOptions = type("RepeatableOptions", (), {
    "opt_" + name.replace("-", "_"): _appender(name, doc) for name, _coerce, doc in MULTI})


class Options(RepeatableOptions, usage.Options):
    """``twistd nodeapi`` options.  After
    ``parseOptions`` the dict holds typed values: ints, floats, bools, lists
    (``plugins``, ``witness-id``, ``private-key`` as WIFs, ``seed-node``),
    absolute paths (``config``, ``data-dir``, ``genesis-json``,
    ``api-access``, ``api-output-dir``; None when unset), endpoint strings
    (``rpc-endpoint``, ``metrics-endpoint`` or None).

    :ivar genesis: the loaded :class:`~nodeapi.chain.genesis.Genesis`.
    :ivar development_defaults: True when the development witness defaults
        are in use (log a warning at startup).
    :ivar warnings: lines to log at startup: bitshares options of the INI
        file this node does not implement, plugins it has no plugin of.
    :ivar new_config: without ``--config`` and with no ``config.ini`` in
        the data dir yet, that file's absolute path (:func:`nodeapi.tap.makeService`
        writes it, :mod:`nodeapi.config_file`), else None.
    :ivar sources: where each single-valued option's value came from:
        ``--name`` (command line or default) or ``name (FILE line N)``.
    :ivar logging: the INI file's logging sections as a
        :class:`~nodeapi.config_logging.LoggingConfig` (its warnings are in
        ``warnings`` too).
    """

    synopsis = "[options]"
    longdesc = ("Run a graphene (BitShares-protocol) API node. Options may also be "
                "given in an INI file (--config, else <data-dir>/config.ini, key = value); "
                "the command line wins.")
    optParameters = [["config", "c", None, "INI file with options (key = value; default: "
                      "<data-dir>/config.ini, written at the first start)."]] + [
        [name, None, None, doc] for name, _default, _coerce, doc in SINGLE]
    optFlags = [[name, None, doc] for name, doc in FLAGS]

    def __init__(self) -> None:
        super().__init__()
        for name, _coerce, _doc in MULTI:
            self[name] = []
        self.genesis = None
        self.new_config = None
        self.sources: dict = {}
        self.development_defaults = False
        self.warnings: list = []
        self.logging = LoggingConfig()

    def opt_help(self) -> None:
        """Display the main options, grouped by purpose, and exit
        (--help-all: every option)."""
        from nodeapi.config_help import short_usage

        parent = getattr(self, "parent", None)
        command = f"{getattr(parent, 'subCommand', None) and 'twistd [options] '}nodeapi" \
            if parent is not None else "nodeapi"
        print(short_usage(f"Usage: {command} [options]"))
        raise SystemExit(0)

    opt_h = opt_help

    def opt_help_all(self) -> None:
        """Display every option with its whole help and exit."""
        print(usage.Options.__str__(self))
        raise SystemExit(0)

    def _read_config(self) -> dict:
        """The INI file's options (:func:`read_ini`): ``--config``, else
        ``<data-dir>/config.ini`` when it exists, as bitshares-core's
        witness_node reads its data dir's file (not with ``--devnet``, whose
        data dir is a fresh temporary one); without either, remember that
        path in :attr:`new_config`.  Its logging sections go to
        :attr:`logging`."""
        if self["config"] is not None:
            label = "--config"
            self["config"] = os.path.abspath(self["config"])
        elif self["devnet"]:
            return {}
        else:
            label = "--data-dir"
            data_dir = self["data-dir"] if self["data-dir"] is not None else _DEFAULT_DATA_DIR
            path = os.path.join(os.path.abspath(data_dir), CONFIG_NAME) if data_dir else ""
            if not path or not os.path.lexists(path):
                self.new_config = path or None
                return {}
            self["config"] = path
        sections: dict = {}
        try:
            ini = read_ini(self["config"], self.warnings, sections)
            self.logging = logging_config(sections, self["config"])
        except OSError as exc:
            raise usage.UsageError(f"{label}: cannot read {self['config']}: "
                                   f"{exc.strerror}") from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise usage.UsageError(f"{label}: {exc}") from None
        if label == "--data-dir" and "data-dir" in ini:
            value, where, written = ini["data-dir"][0]
            if os.path.abspath(value) != os.path.dirname(self["config"]):
                raise usage.UsageError(
                    f"{written} ({where}): the data dir's own config.ini cannot move the "
                    f"data dir to {value!r}; give --data-dir on the command line")
        return ini

    @staticmethod
    def _coerce(name: str, raw: str, where: str):
        try:
            return _COERCE[name](raw)
        except ValueError as exc:
            raise usage.UsageError(f"{where}: {exc}") from None

    def postOptions(self) -> None:
        """Merge INI and command line, coerce and validate everything; raises
        ``usage.UsageError`` naming the option (and INI file and line) and
        the problem.  The INI file follows boost program_options' rules
        (``#`` starts a comment anywhere; ``[log.*]``/``[logger.*]``
        sections are bitshares' logging configuration,
        :mod:`nodeapi.config_logging`; a repeatable option on several
        lines); the command line wins, a repeatable option given there
        replacing all of its file lines.  Flags can only be switched on on
        the command line; in the file they take ``true``/``false``, and a
        flag or repeatable option written with an empty value (``name =``)
        is not set.  Relative paths are relative to the current directory
        and are stored absolute."""
        ini = self._read_config()

        def pick(name):
            if name in ini:
                value, where, written = ini[name][0]
                return value, f"{written} ({where})"
            return None, f"--{name}"

        for name, default, _coerce, _doc in SINGLE:
            raw, where = (self[name], f"--{name}") if self[name] is not None else pick(name)
            self.sources[name] = where
            self[name] = self._coerce(name, default if raw is None else raw, where)
        for name, _doc in FLAGS:
            raw, where = pick(name)
            self[name] = True if self[name] else (  # an empty value: not set
                None if raw is None or not raw.strip() else self._coerce(name, raw, where))
        for name, _coerce, _doc in MULTI:
            given = [(v, f"--{name}") for v in self[name]] or [
                (v, f"{written} ({where})") for v, where, written in ini.get(name, [])]
            self[name] = [x for raw, where in given if raw.strip()
                          for x in self._coerce(name, raw, where)]
        self.warnings.extend(self.logging.warnings)
        dropped = [p for p in self["plugins"] if p in NOT_PROVIDED]
        self["plugins"] = [p for p in self["plugins"] if p not in NOT_PROVIDED]
        self.warnings.extend(
            "plugins: bitshares plugin 'api_helper_indexes' is not needed: its lookups are "
            "always on in nodeapi; ignored" if p == "api_helper_indexes" else
            f"plugins: bitshares plugin {p!r} is not provided by nodeapi; ignored"
            for p in dropped)
        self.development_defaults = not self["witness-id"] and not self["private-key"]
        for plugin in PLUGINS:  # each completes and checks its own values
            try:
                plugin.check(self, self.warnings)
            except ValueError as exc:
                raise usage.UsageError(str(exc)) from None
        if self["upstream-routes"] and not self["upstream"]:
            raise usage.UsageError("upstream-routes: routes are a gateway's (--upstream)")
        self.upstream_routes()
        if self["max-call-burst-per-ip"] and not self["max-calls-per-second-per-ip"]:
            raise usage.UsageError("max-call-burst-per-ip needs max-calls-per-second-per-ip "
                                   "(the burst is the size of that rate's bucket)")
        self["enable-subscribe-to-all"] = bool(self["enable-subscribe-to-all"])
        self["replay-blockchain"] = bool(self["replay-blockchain"])
        self["force-validate"] = bool(self["force-validate"])
        self["devnet"] = bool(self["devnet"])
        self._check_files()

    def _check_files(self) -> None:
        if not self["data-dir"]:
            raise usage.UsageError("--data-dir: must not be empty")
        self["genesis-json"] = self["genesis-json"] or DEFAULT_GENESIS
        for name in ("data-dir", "genesis-json", "api-access", "api-output-dir"):
            self[name] = os.path.abspath(self[name]) if self[name] else None
        if self["api-output-dir"] and not os.path.isdir(self["api-output-dir"]):
            raise usage.UsageError(f"--api-output-dir: {self['api-output-dir']} is not a "
                                   f"directory")
        path = self["genesis-json"]
        where = self.sources.get("genesis-json", "--genesis-json")
        try:
            self.genesis = load_genesis(path)
            self.genesis.initial_timestamp, self.genesis.block_interval  # noqa: B018
            if not self.genesis.data["initial_witness_candidates"]:
                raise ValueError("no initial_witness_candidates")
        except OSError as exc:
            raise usage.UsageError(f"{where}: cannot read {path}: {exc.strerror}") from None
        except FileRefused as exc:
            raise usage.UsageError(f"{where}: cannot read {path}: {exc}") from None
        except KeyError as exc:
            raise usage.UsageError(f"{where}: {path} is not a genesis file: missing "
                                   f"{exc}") from None
        except Exception as exc:
            raise usage.UsageError(f"{where}: {path} is not a genesis file: "
                                   f"{exc}") from None
        if self["api-access"]:
            self._check_api_access(self["api-access"],
                                   self.sources.get("api-access", "--api-access"))
        data_dir = probe = self["data-dir"]
        while not os.path.exists(probe):
            probe = os.path.dirname(probe)
        if not os.path.isdir(probe):
            raise usage.UsageError(f"--data-dir: {probe} is not a directory")
        if not os.access(probe, os.W_OK | os.X_OK):
            verb = "write to" if probe == data_dir else f"create {data_dir} in"
            raise usage.UsageError(f"--data-dir: cannot {verb} {probe}: permission denied")

    @staticmethod
    def _check_api_access(path: str, where: str) -> None:
        try:
            ApiAccess.load(path)
        except ConfigError as exc:
            raise usage.UsageError(f"{where}: {exc}") from None

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
                         max_unsent_bytes=self["max-unsent-bytes"],
                         max_calls_per_second_per_ip=self["max-calls-per-second-per-ip"],
                         max_call_burst_per_ip=self["max-call-burst-per-ip"],
                         max_subscriptions_per_ip=self["max-subscriptions-per-ip"])

    def browser_guard(self):
        """The :class:`nodeapi.rpc.browser_guard.BrowserGuard` of
        ``rpc-allowed-hosts``, ``rpc-allowed-origins`` and ``rpc-endpoint``."""
        from nodeapi.rpc.browser_guard import BrowserGuard

        return BrowserGuard.from_options(self["rpc-allowed-hosts"], self["rpc-allowed-origins"],
                                         self["rpc-endpoint"])

    def upstream_routes(self):
        """The gateway's :class:`nodeapi.gateway.routes.UpstreamRoutes`
        (read from ``upstream-routes`` once, checked against ``upstream``;
        none without the option).

        :raises usage.UsageError: the file cannot be read or used."""
        from nodeapi.gateway.routes import RoutesError, UpstreamRoutes

        if getattr(self, "_routes", None) is None:
            path = self["upstream-routes"]
            try:
                self._routes = (UpstreamRoutes.load(path, self["upstream"] or ())
                                if path else UpstreamRoutes())
            except RoutesError as exc:
                raise usage.UsageError(f"upstream-routes: {exc}") from None
        return self._routes

    def trusted_proxies(self):
        """The :class:`nodeapi.rpc.proxies.TrustedProxies` of
        ``trusted-proxies``."""
        from nodeapi.rpc.proxies import TrustedProxies

        return TrustedProxies.from_entries(self["trusted-proxies"])

    def health_limits(self):
        """The ``health-*`` values as
        :class:`~nodeapi.metrics_health.HealthLimits`."""
        from nodeapi.metrics_health import HealthLimits

        return HealthLimits(max_head_age=self["health-max-head-age"],
                            max_searchdb_lag=self["health-max-searchdb-lag"])

    def block_log_path(self) -> str:
        """Absolute path of the block log: ``<data-dir>/blocks.log``."""
        return os.path.join(self["data-dir"], BLOCK_LOG_NAME)

