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

Every failure is counted: a ban tool such as fail2ban counts matching
lines per address (``maxretry`` lines within ``findtime``), so each
failure is its own line, up to a bound on the log's volume:

* per address, at most ``per_address`` lines (default 20) in a window of
  ``window`` seconds (default 60) that starts at its first logged failure;
  the failures over that are counted, and the address' first line after
  the window says how many were left out (``(37 more from this address not
  logged)``).  A jail whose ``maxretry`` is at most ``per_address`` and
  whose ``findtime`` is at least ``window`` sees every failure up to the
  ban: a guessing client is banned before any of its lines are left out.
  The count in a later line cannot be counted by fail2ban (one line is one
  match; a filter cannot turn a number into matches), which is why the
  bound is lines per address and not one summary line;
* over every address together, at most ``burst`` lines per second
  (default 50): many addresses failing at once (a botnet) cannot flood the
  log; their failures over the cap are counted as above.

:attr:`FailedLogins.total` counts every failure, logged or not.
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
    :param per_address: lines about one address per ``window``.
    :param window: seconds of an address' window.
    :param burst: lines per second over every address.
    :ivar total: failures recorded, logged or not.
    """

    log = Logger()

    def __init__(self, clock, per_address: int = 20, window: float = 60.0,
                 burst: int = 50) -> None:
        self.clock, self.per_address, self.window, self.burst = clock, per_address, window, burst
        # host -> [window start, lines in the window, failures not logged]
        self._hosts: collections.OrderedDict = collections.OrderedDict()
        self._second = (0.0, 0)  # (start, lines in it) over every address
        self.total = 0

    def failed(self, host: str, user: str, via: str) -> bool:
        """Record one failed login of ``user`` from ``host`` over ``via``
        (``"websocket"``/``"http"``); True when a line was written."""
        self.total += 1
        now = self.clock.seconds()
        state = self._hosts.get(host)
        if state is None:
            state = self._hosts[host] = [now, 0, 0]
            while len(self._hosts) > MAX_TRACKED:
                self._hosts.popitem(last=False)
        self._hosts.move_to_end(host)
        if now - state[0] >= self.window:
            state[0], state[1] = now, 0
        start, count = self._second
        if now - start >= 1.0:
            start, count = now, 0
        if state[1] >= self.per_address or count >= self.burst:
            state[2] += 1
            return False
        self._second = (start, count + 1)
        state[1] += 1
        left_out, state[2] = state[2], 0
        text = 'Failed login from {host} user "{user}" via {via}'
        if left_out:
            text += " ({left_out} more from this address not logged)"
        self.log.warn(text, host=host, user=safe_user(user), via=via, left_out=left_out,
                      event="failed_login")
        return True
