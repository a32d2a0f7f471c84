"""The node under systemd: readiness notifications and journal-friendly
log lines.

Readiness (``Type=notify`` units, sd_notify(3)): systemd passes the path
of a unix datagram socket in ``NOTIFY_SOCKET`` (an absolute path, or
``@name`` for a name in the abstract namespace).  :class:`Notifier` sends
it ``READY=1`` once the node serves its RPC port, ``STOPPING=1`` when a
stop begins, ``STATUS=...`` lines for ``systemctl status`` and, while the
startup (replay) runs, ``EXTEND_TIMEOUT_USEC=...`` so a long replay is not
taken for a hung start.  :class:`nodeapi.service.NodeService` sends them.

The journal (systemd.exec(5), ``JOURNAL_STREAM``): when the standard
output of the process is the journal's stream - systemd sets
``JOURNAL_STREAM`` to ``<device>:<inode>`` of that stream - the journal
already stamps every line with its time, so twistd's own timestamp would
only be noise in front of the message, and in front of what a log reader
such as fail2ban matches.  :func:`journal_observer` writes each event as
``<P>[namespace#level] text`` instead: ``<P>`` is the syslog priority
(sd-daemon(3) ``SD_WARNING`` etc.), which journald strips and stores as
the entry's ``PRIORITY`` (``journalctl -p warning`` works), and the rest
is exactly twistd's line without its timestamp.  :func:`use_journal_format`
makes twistd log that way when it would log to a standard output that is
the journal, and with twistd's own text format (:func:`text_observer`)
when it would log to any other standard output; either way twistd's
start-up lines that tell an operator nothing (the reactor class, a
listening port's "<factory> starting on <port>") are left out
(:func:`is_noise`).
"""

import os
import socket
import sys
from typing import Mapping, Optional

from twisted.logger import (
    FilteringLogObserver, ILogObserver, LogLevel, Logger, PredicateResult, eventAsText,
    textFileLogObserver)
from zope.interface import implementer

#: syslog priorities of twisted.logger's levels (sd-daemon(3): SD_CRIT .. SD_DEBUG)
PRIORITY = {LogLevel.critical: 2, LogLevel.error: 3, LogLevel.warn: 4, LogLevel.info: 6,
            LogLevel.debug: 7}
#: bytes: the largest notification sent (systemd reads a datagram of up to 4 KiB
#: of state lines; STATUS text is cut to fit)
MAX_NOTIFICATION = 4096


def notify_address(value: str):
    """The ``sendto`` address of a ``NOTIFY_SOCKET`` value: an absolute
    path as it is, ``@name`` as ``"\\0name"`` (the abstract namespace).
    ValueError for anything else (systemd's ``vsock:`` addresses are not
    supported)."""
    if value.startswith("@") and len(value) > 1:
        return "\0" + value[1:]
    if value.startswith("/"):
        return value
    raise ValueError(f"NOTIFY_SOCKET {value!r}: neither an absolute path nor @name")


class Notifier:
    """Sends sd_notify(3) state lines to a unix datagram socket.

    :param address: a ``sendto`` address (:func:`notify_address`).

    A notification that cannot be sent (socket gone, queue full) is logged
    once and otherwise ignored: the service manager's timeouts handle a
    node whose readiness it never learns.
    """

    log = Logger()

    def __init__(self, address) -> None:
        self.address = address
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
        self._socket.setblocking(False)
        self._failed = False

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> Optional["Notifier"]:
        """The notifier of ``environ["NOTIFY_SOCKET"]``, or None when unset
        or empty.  ValueError naming the variable for a value that is not
        an address (:func:`notify_address`)."""
        value = environ.get("NOTIFY_SOCKET", "")
        return cls(notify_address(value)) if value else None

    def send(self, *lines: str) -> bool:
        """Send ``lines`` (``"READY=1"``, ``"STATUS=..."``) as one
        datagram; True when it was sent."""
        data = "\n".join(line.replace("\n", " ") for line in lines).encode()[:MAX_NOTIFICATION]
        try:
            self._socket.sendto(data, self.address)
        except OSError as exc:
            if not self._failed:
                self._failed = True
                self.log.warn("Cannot notify the service manager at {address}: {error}",
                              address=self.address.replace("\0", "@"), error=exc.strerror)
            return False
        return True

    def close(self) -> None:
        """Close the socket (sending after that fails and is logged once)."""
        self._socket.close()


def stream_is_journal(environ: Mapping[str, str], fd: int) -> bool:
    """True when file descriptor ``fd`` is the stream of ``JOURNAL_STREAM``
    (``<st_dev>:<st_ino>``, systemd.exec(5)); a redirected standard output
    (``> file``, a pipe) is not."""
    value = environ.get("JOURNAL_STREAM", "")
    try:
        device, inode = (int(part) for part in value.split(":"))
        st = os.fstat(fd)
    except (ValueError, OSError):
        return False
    return (st.st_dev, st.st_ino) == (device, inode)


@implementer(ILogObserver)
class JournalObserver:
    """Writes log events to a text stream for the journal: each physical
    line ``<P>`` (the event's syslog priority), the first one
    ``[namespace#level] text``, continuation lines (tracebacks) indented
    by a tab, as twistd's text format but without its timestamp.

    :param stream: a text file (the process's standard output).
    """

    def __init__(self, stream) -> None:
        self.stream = stream

    def __call__(self, event: dict) -> None:
        text = eventAsText(event, includeTimestamp=False)
        if not text:
            return
        prefix = f"<{PRIORITY.get(event.get('log_level'), 6)}>"
        lines = text.splitlines() or [""]
        self.stream.write("".join(
            prefix + ("\t" if number else "") + line + "\n" for number, line in enumerate(lines)))
        self.stream.flush()


def is_noise(event: dict) -> PredicateResult:
    """``PredicateResult.no`` for twistd's and Twisted's start-up lines an
    operator has no use for: "reactor class: ..." (twistd's AppLogger) and
    a listening port's "<factory> starting on <port>" (the node logs what
    listens where itself, by purpose); ``maybe`` for every other event."""
    namespace = event.get("log_namespace", "")
    text = event.get("log_format") or ""
    if namespace.startswith("twisted.scripts.") and text.startswith("reactor class"):
        return PredicateResult.no
    if namespace == "log_legacy":
        message = event.get("message") or ()
        if len(message) == 1 and " starting on " in str(message[0]):
            return PredicateResult.no
    return PredicateResult.maybe


def journal_observer() -> ILogObserver:
    """A :class:`JournalObserver` on the standard output as it is now
    (twistd calls a ``--logger`` factory before it redirects the standard
    streams into the log), without :func:`is_noise`'s lines;
    ``twistd --logger nodeapi.service_systemd.journal_observer`` selects it
    by hand."""
    return FilteringLogObserver(JournalObserver(sys.stdout), [is_noise])


def text_observer() -> ILogObserver:
    """twistd's own text format (``textFileLogObserver``) on the standard
    output as it is now, without :func:`is_noise`'s lines."""
    return FilteringLogObserver(textFileLogObserver(sys.stdout), [is_noise])


def use_journal_format(twistd_options, environ: Mapping[str, str]) -> bool:
    """Make twistd log with :func:`journal_observer` when it would write
    its text format to a standard output that is the journal (``-n`` with
    ``--logfile=-`` or no ``--logfile``, no ``--logger``, no ``--syslog``)
    and ``JOURNAL_STREAM`` names that stream, else (the same standard
    output, not the journal) with :func:`text_observer`.  ``twistd_options``:
    twistd's ``ServerOptions`` (the parent of the plugin's options), or
    None.  True when the journal format was chosen."""
    if twistd_options is None or twistd_options.get("logger") or \
            twistd_options.get("syslog") or not twistd_options.get("nodaemon"):
        return False
    if (twistd_options.get("logfile") or "") not in ("", "-"):
        return False
    journal = stream_is_journal(environ, 1)
    # twistd's own postOptions (after this one's) imports the factory by name
    twistd_options["logger"] = f"{__name__}.{'journal' if journal else 'text'}_observer"
    return journal
