"""Failed logins in the log, in one stable line a ban tool can match.

A login fails when ``login(user, password)`` over WebSocket, or the Basic
credentials of an HTTP request or WebSocket upgrade, match no api-access
entry (:meth:`nodeapi.rpc.access.ApiAccess.check`).  Each failure is one
warning::

    Failed login from 203.0.113.7 user "bob" via websocket

(``via`` is ``websocket`` or ``http``).  The user name is cut to 64
characters and every character outside ``A-Z a-z 0-9 . _ @ + -`` becomes
``?``, so a name cannot forge a second line or another address.  The
anonymous login every connection makes (``""``/``""``) is never logged.

Rate limit: at most one line per source address per ``interval`` seconds
(the next line says how many were left out), and at most ``burst`` lines
per ``interval`` from all addresses together; a fail2ban jail counting
lines per address (``etc/fail2ban``) still sees a guessing client within
its ``findtime``.  The file ``etc/fail2ban/filter.d/nodeapi.conf`` matches
this line (tests/api/test_failed_logins.py checks it against real log output).
"""

import collections
import re

from twisted.logger import Logger

#: Characters of a user name written as they are; others become "?".
_UNSAFE = re.compile(r"[^A-Za-z0-9._@+\-]")
#: Addresses remembered for the per-address limit (oldest forgotten first).
MAX_TRACKED = 4096


def safe_user(user: str) -> str:
    """``user`` cut to 64 characters, unsafe characters as ``?``."""
    return _UNSAFE.sub("?", user[:64])


class FailedLogins:
    """Logs failed logins (module docstring).

    :param clock: ``IReactorTime`` (``seconds()``).
    :param interval: seconds between two lines about one address.
    :param burst: lines per ``interval`` over every address.
    """

    log = Logger()

    def __init__(self, clock, interval: float = 1.0, burst: int = 50) -> None:
        self.clock, self.interval, self.burst = clock, interval, burst
        self._last = collections.OrderedDict()  # host -> time of its last line
        self._left_out = collections.Counter()  # host -> failures not logged
        self._window = (0.0, 0)  # (start, lines in it)
        self.total = 0

    def failed(self, host: str, user: str, via: str) -> bool:
        """Record one failed login of ``user`` from ``host`` over ``via``
        (``"websocket"``/``"http"``); True when a line was written."""
        self.total += 1
        now = self.clock.seconds()
        last = self._last.get(host)
        start, count = self._window
        if now - start >= self.interval:
            start, count = now, 0
        if (last is not None and now - last < self.interval) or count >= self.burst:
            self._left_out[host] += 1
            return False
        self._window = (start, count + 1)
        self._last[host] = now
        self._last.move_to_end(host)
        while len(self._last) > MAX_TRACKED:
            old, _t = self._last.popitem(last=False)
            self._left_out.pop(old, None)
        left_out = self._left_out.pop(host, 0)
        text = 'Failed login from {host} user "{user}" via {via}'
        if left_out:
            text += " ({left_out} more from this address not logged)"
        self.log.warn(text, host=host, user=safe_user(user), via=via, left_out=left_out,
                      event="failed_login")
        return True
