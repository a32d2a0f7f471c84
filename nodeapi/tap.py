"""``twistd nodeapi``: parse the options, pick the mode, return its root
service.

The plugin file (``twisted/plugins/nodeapi_plugin.py``) only names this
module; :class:`Options` comes from :mod:`nodeapi.config` and
:func:`makeService` resolves the reactor once, checks what every mode
shares (the data dir, a first ``config.ini``, the devnet's options) and
hands both to the mode's maker (:mod:`nodeapi.modes`): with
``--upstream`` :func:`nodeapi.modes.gateway.make_gateway`, else
:func:`nodeapi.modes.node.make_node`.  Each returns the root service of
exactly what its mode runs (DESIGN.rst "Service trees").

A bad option or file is reported as one line ``nodeapi: <message>`` on
stderr and exit status 78 (:data:`EX_CONFIG`, ``SystemExit``), never a
traceback nor the usage text (:class:`Options`): the shipped systemd unit
does not restart a node whose configuration is wrong
(``RestartPreventExitStatus=78``).  Without ``--config`` the data dir's
``config.ini`` is read, and written with every option commented out when
missing (:mod:`nodeapi.config_file`).  Under systemd the node tells the
service manager when it is ready and when it stops (``NOTIFY_SOCKET``)
and logs without twistd's timestamp when its standard output is the
journal (``JOURNAL_STREAM``; :mod:`nodeapi.service_systemd`).
The file appenders of a bitshares ``[logger.default]`` section
(:mod:`nodeapi.config_logging`) are added to the global log publisher.
"""

import difflib
import os
import re
import sys

from twisted.logger import Logger

from twisted.python import usage

from nodeapi import config
from nodeapi.errors import ConfigError, StorageError

log = Logger()


#: exit status of a configuration error (sysexits.h ``EX_CONFIG``)
EX_CONFIG = 78


def config_exit(message: str) -> SystemExit:
    """Print ``nodeapi: <message>`` to stderr; the ``SystemExit`` with
    status :data:`EX_CONFIG` to raise."""
    print(f"nodeapi: {message}", file=sys.stderr, flush=True)
    return SystemExit(EX_CONFIG)


class Options(config.Options):
    """The options twistd reads (:class:`nodeapi.config.Options`): a bad
    value or file is one line ``nodeapi: <option> (FILE line N): <problem>``
    on stderr and exit status :data:`EX_CONFIG` (``SystemExit``); an
    unknown command-line option is one line naming the nearest option.
    The usage text is printed only for ``--help``.  A unit with
    ``Restart=on-failure`` and ``RestartPreventExitStatus=78`` then stops
    with that line instead of repeating it.

    Under twistd (:attr:`parent` is twistd's ``ServerOptions``) logging to
    a standard output that is the journal, the log lines leave out
    twistd's timestamp (:func:`nodeapi.service_systemd.use_journal_format`).
    """

    def parseOptions(self, options=None) -> None:
        """``usage.Options.parseOptions``, then the journal's log format when
        twistd logs to the journal (class docstring).

        :raises SystemExit: a usage error, printed as one line, status
            :data:`EX_CONFIG`."""
        try:
            super().parseOptions(options)
        except usage.UsageError as exc:
            raise config_exit(self._usage_problem(str(exc))) from None
        from nodeapi.service_systemd import use_journal_format

        use_journal_format(getattr(self, "parent", None), os.environ)

    def postOptions(self) -> None:
        """``usage.Options.postOptions``: the checks of
        :class:`nodeapi.config.Options`.

        :raises SystemExit: a check failed, printed as one line, status
            :data:`EX_CONFIG`."""
        try:
            super().postOptions()
        except usage.UsageError as exc:
            raise config_exit(str(exc)) from None

    def _usage_problem(self, problem: str) -> str:
        """getopt's ``option --x not recognized`` as ``--x: unknown option;
        did you mean --y?`` (the nearest long option); other problems as
        they are."""
        unknown = re.fullmatch(r"option (-{1,2})([^ ]+) not recognized", problem)
        if unknown is None:
            return f"{problem} (twistd nodeapi --help lists the options)"
        dashes, name = unknown.groups()
        names = [o[0] for o in self.optParameters] + [o[0] for o in self.optFlags] + [
            n[4:].replace("_", "-") for n in dir(self) if n.startswith("opt_")]
        near = difflib.get_close_matches(name.replace("_", "-"), names, n=1, cutoff=0.6)
        hint = f"did you mean --{near[0]}?" if near else "twistd nodeapi --help lists the options"
        return f"{dashes}{name}: unknown option; {hint}"


def makeService(options, reactor=None):
    """The root service of the mode of parsed ``options`` (module doc).

    :param reactor: the reactor every part uses (the global reactor when
        None: the only place it is imported).
    :raises SystemExit: after printing ``nodeapi: <problem>``: status
        :data:`EX_CONFIG` for a configuration error (bad api-access file,
        a ``NOTIFY_SOCKET`` that is no address), 1 for a storage error
        (unreadable or corrupt block log).
    """
    if reactor is None:
        from twisted.internet import reactor
    _log_version()
    try:
        _prepare(options, reactor)
        if options["upstream"]:
            from nodeapi.modes.gateway import make_gateway

            return make_gateway(options, reactor)
        from nodeapi.modes.node import make_node

        return make_node(options, reactor)
    except ConfigError as exc:
        raise config_exit(str(exc)) from None
    except StorageError as exc:
        raise SystemExit(f"nodeapi: {exc}") from None


def _log_version() -> None:
    """The first line of the log: what runs (nodeapi, Twisted and Python
    versions)."""
    from nodeapi.modes.ports import identity

    ident = identity("", "", ())
    log.info("nodeapi {version} (Twisted {twisted}, Python {python})",
             version=ident["version"], twisted=ident["twisted"], python=ident["python"])


def _prepare(options, reactor) -> None:
    """What every mode needs first: the devnet's options checked and
    applied, the data dir made, a first ``config.ini`` written."""
    if options["fork-url"] is not None and options["load-state"]:
        raise ConfigError("--fork-url and --load-state both give the devnet's start state: "
                          "choose one")
    if options["devnet"]:
        _devnet_options(options, reactor)
    elif options["load-state"]:
        raise ConfigError("--load-state needs --devnet")
    elif options["fork-url"] is not None:
        raise ConfigError("--fork-url needs --devnet")
    data_dir = options["data-dir"]
    try:
        os.makedirs(data_dir, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"--data-dir {data_dir}: {exc.strerror}") from None
    new_config = getattr(options, "new_config", None)
    if new_config and not options["devnet"]:
        _write_new_config(new_config)


def _write_new_config(path: str) -> None:
    """The data dir's first ``config.ini`` (:mod:`nodeapi.config_file`)."""
    from nodeapi.config_file import write_new_config

    try:
        write_new_config(path)
    except FileExistsError:
        return  # another start wrote it in between: it is read at the next start
    except OSError as exc:
        raise ConfigError(f"--data-dir: cannot write {path}: {exc.strerror}") from None
    log.info("Wrote {path}: every option commented out at its default", path=path)


# -- devnet (--devnet) ----------------------------------------------------------------


def _devnet_options(options, reactor) -> None:
    """``--devnet``: a fresh temporary data dir (removed after the reactor
    stops), no witness plugin (the devnet produces the blocks), a
    checkpoint only at stop; a warning when the RPC port, open to all
    without an api-access file, is not on a loopback address."""
    import shutil
    import tempfile

    endpoint = options["rpc-endpoint"]
    if not re.search(r"interface=(127\.|localhost|\\?:\\?:1$)", endpoint) \
            and not options["api-access"]:
        log.warn("--devnet: every API set but debug, devnet included, is open without login "
                 "on {endpoint}, not a loopback address", endpoint=endpoint)
    options["data-dir"] = tempfile.mkdtemp(prefix="nodeapi-devnet-")
    reactor.addSystemEventTrigger("after", "shutdown", shutil.rmtree, options["data-dir"], True)
    options["plugins"] = [p for p in options["plugins"] if p != "witness"]
    options["checkpoint-interval"] = 0
