"""Failed logins in the log (:class:`FailedLogins`), one stable line a ban
tool can match::

    Failed login from 203.0.113.7 user "bob" via websocket

A failure is a WebSocket ``login(user, password)``, or the Basic
credentials of an HTTP request or WebSocket upgrade, matching no
api-access entry (:meth:`nodeapi.rpc.access.ApiAccess.check`); the
anonymous login (``""``/``""``) is never logged.  The line, the user name's
cut (:func:`safe_user`) and the fail2ban set-up: README.rst "Logs and
failed logins (fail2ban)".

The bound is on lines per address in a window, not one summary line: fail2ban
counts lines (a filter cannot turn a count in a line into matches), so a
jail whose ``maxretry`` is at most ``per_address`` and whose ``findtime``
is at least ``window`` sees every failure up to the ban; a cap on lines
per second over every address keeps many addresses failing at once from
flooding the log.  An address' first line after its window says how many
of its failures were left out.
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
