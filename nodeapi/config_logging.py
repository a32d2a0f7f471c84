"""The logging sections of a bitshares ``config.ini`` (or ``logging.ini``).

bitshares-core (libraries/app/config_util.cpp,
``load_logging_config_from_ini_file``) reads three kinds of INI section
besides the options:

* ``[log.console_appender.NAME]`` with ``stream`` (``std_error``/``std_out``);
* ``[log.file_appender.NAME]`` with ``filename`` (relative to the INI file's
  directory), ``rotation_interval`` (minutes) and ``rotation_limit`` (days);
* ``[logger.NAME]`` with ``level`` (``all``, ``debug``, ``info``, ``warn``,
  ``error``, ``off``) and ``appenders`` (names separated by commas or
  spaces).

What has a meaning here is the ``default`` logger (nodeapi logs through one
logger): its file appenders become log files that receive the events of
that level and above, next to twistd's own log (stdout or ``--logfile``,
which keeps every level).  Everything else - console appenders (twistd
writes the console), other loggers (``p2p``, ``rpc``), rotation settings
(use logrotate) - is one warning per section.  A bad level or a file
appender without ``filename`` is a configuration error naming the file and
line.
"""

import os

import attr
from twisted.logger import (
    FilteringLogObserver, LogLevel, LogLevelFilterPredicate, Logger, textFileLogObserver)

#: fc log level names (fc/log/log_message.hpp) -> the lowest Twisted level
#: kept; ``off`` keeps nothing (None).
LEVELS = {"all": LogLevel.debug, "debug": LogLevel.debug, "info": LogLevel.info,
          "warn": LogLevel.warn, "error": LogLevel.error, "off": None}
CONSOLE, FILE, LOGGER = "log.console_appender.", "log.file_appender.", "logger."


def is_logging_section(section: str) -> bool:
    """True for a section name bitshares reads as logging configuration
    (``log.*``, ``logger.*``; also a bare ``log``/``logger``)."""
    return section in ("log", "logger") or section.startswith(("log.", "logger."))


class SurvivingFile:
    """The text stream of a log file that a failing write (a full disk, an
    I/O error) does not break: the first failure is one error line (through
    the other observers; this file drops it), the lines written while it
    fails are counted and lost, and the first line that is written again is
    followed by one warning with their number - never a traceback per
    event, which Twisted's log publisher would log for an observer that
    raises.

    :param stream: the opened text file (``write``, ``flush``).
    :param path: its path, for the messages.
    """

    log = Logger()

    def __init__(self, stream, path: str) -> None:
        self.stream, self.path = stream, path
        self.lost = 0

    def write(self, text: str) -> None:
        """Write ``text`` and flush; a failing write (``OSError``) is counted
        and its text lost, as the class docstring says."""
        try:
            self.stream.write(text)
            self.stream.flush()
        except OSError as exc:
            self.lost += 1
            if self.lost == 1:
                self.log.error("log file {path}: {error}; its lines are lost until it can be "
                               "written again", path=self.path, error=exc.strerror or exc)
            return
        if self.lost:
            lost, self.lost = self.lost, 0
            self.log.warn("log file {path}: written again, {lost} lines lost", path=self.path,
                          lost=lost)

    def flush(self) -> None:
        """Nothing: :meth:`write` flushes."""


@attr.s(frozen=True)
class LogFile:
    """One file appender of the default logger: ``path`` (absolute),
    ``level`` (lowest :class:`twisted.logger.LogLevel` written)."""

    path = attr.ib()
    level = attr.ib()


@attr.s(frozen=True)
class LoggingConfig:
    """What the INI's logging sections mean here: ``files`` (a tuple of
    :class:`LogFile`) and ``warnings`` (lines to log once at startup)."""

    files = attr.ib(default=())
    warnings = attr.ib(default=())

    def observers(self, problems: list | None = None) -> list:
        """One filtering observer per file (files opened for appending,
        their directories created, written through :class:`SurvivingFile`).
        A file that cannot be opened (a
        read-only directory: relative names follow the INI file, which
        systemd hands over in a read-only credentials directory) is left
        out, with one line in ``problems``."""
        out = []
        for log_file in self.files:
            try:
                os.makedirs(os.path.dirname(log_file.path), exist_ok=True)
                stream = open(log_file.path, "a", encoding="utf-8")  # noqa: SIM115 (lives on)
            except OSError as exc:
                if problems is not None:
                    problems.append(f"log file {log_file.path}: {exc.strerror}; not written "
                                    "(give an absolute, writable filename)")
                continue
            out.append(FilteringLogObserver(
                textFileLogObserver(SurvivingFile(stream, log_file.path)),
                [LogLevelFilterPredicate(defaultLogLevel=log_file.level)]))
        return out


def logging_config(sections: dict, ini_path: str) -> LoggingConfig:
    """``sections`` ``{name: {key: (value, where)}}`` (in file order, ``where``
    is ``"FILE line N"``; a section's own line is under key ``""``) of the
    INI file ``ini_path`` -> :class:`LoggingConfig`.

    :raises ValueError: naming the file and line of a bad ``level`` or a
        file appender without ``filename``.
    """
    warnings, files = [], []
    base = os.path.dirname(os.path.abspath(ini_path))
    appenders = {}
    for name, keys in sections.items():
        where = keys.get("", ("", ini_path))[1]
        if name.startswith(FILE):
            if "filename" not in keys:
                raise ValueError(f"{where}: [{name}] has no filename")
            appenders[name[len(FILE):]] = (os.path.join(base, keys["filename"][0]), keys)
        elif name.startswith(CONSOLE):
            appenders[name[len(CONSOLE):]] = (None, keys)
    used = set()
    for name, keys in sections.items():
        where = keys.get("", ("", ini_path))[1]
        if not name.startswith(LOGGER):
            continue
        level_text, level_where = keys.get("level", ("info", where))
        if level_text.strip().lower() not in LEVELS:
            raise ValueError(f"{level_where}: [{name}] level {level_text!r} is not one of "
                             f"{', '.join(LEVELS)}")
        level = LEVELS[level_text.strip().lower()]
        if name != LOGGER + "default":
            warnings.append(f"{where}: [{name}]: nodeapi logs through one logger, 'default'; "
                            "this section is ignored")
            continue
        names = keys.get("appenders", ("", where))[0].replace(",", " ").split()
        for appender in names:
            path, _keys = appenders.get(appender, (None, None))
            if _keys is None:
                warnings.append(f"{where}: [{name}]: appender {appender!r} is not declared; "
                                "ignored")
            elif path is not None and level is not None:
                used.add(appender)
                files.append(LogFile(path, level))
    for name, keys in sections.items():
        where = keys.get("", ("", ini_path))[1]
        if name.startswith(FILE) and name[len(FILE):] in used:
            extra = [k for k in keys if k not in ("", "filename")]
            if extra:
                warnings.append(f"{where}: [{name}]: {', '.join(extra)} not applied (nodeapi "
                                "appends to the file; rotate it with logrotate)")
        elif name.startswith(FILE):
            warnings.append(f"{where}: [{name}]: no 'default' logger writes to it; ignored")
        elif name.startswith(CONSOLE):
            warnings.append(f"{where}: [{name}]: the console is twistd's log (stdout or "
                            "--logfile, every level); ignored")
        elif not name.startswith(LOGGER):
            warnings.append(f"{where}: [{name}]: not a bitshares logging section; ignored")
    return LoggingConfig(files=tuple(files), warnings=tuple(sorted(warnings, key=_line)))


def _line(warning: str) -> int:
    """The line number of a ``"FILE line N: ..."`` warning (file order)."""
    head = warning.split(": ", 1)[0]
    number = head.rpartition(" line ")[2]
    return int(number) if number.isdigit() else 0
