"""Limits per user and per source address: calls per second, WebSocket
connections, subscribed items.  What they are, where they come from
(api-access ``limits``, the ``--max-*-per-ip`` options), what is charged
and the errors a client sees: docs/rpc-access.rst "Limits per user and per
source address" (README, the same section, for operators).

A :class:`LimitBook` holds the :class:`Account` of each user and address
on the site's clock; each session's :class:`SessionLimits` charges a call,
a connection or a subscribed item to both of its accounts and refuses it,
charging neither, when either is at its limit: :class:`CallRateExceeded`,
:class:`ConnectionLimitExceeded`,
:class:`~nodeapi.api.budget.SubscriptionLimitExceeded`, each counted
(``nodeapi_rpc_limit_refusals_total{limit, scope}``) and logged through a
:class:`nodeapi.rpc.throttled_log.ThrottledLog`.  Open connections per
address are :class:`nodeapi.rpc.guard.ConnectionGuard`'s.  Without any
limit configured no :class:`LimitBook` exists (the site passes None) and
sessions check nothing.
"""

import math
from typing import Any, Optional

import attr

from nodeapi.api.budget import SubscriptionBudget, SubscriptionLimitExceeded
from nodeapi.errors import ClientLimitExceeded, ConfigError

#: Accounts kept before idle ones are forgotten (see :meth:`LimitBook.account`).
PRUNE_AT = 1024


def default_burst(calls_per_second: float) -> int:
    """The bucket size when none is given: two seconds' worth of calls, at
    least one."""
    return max(1, math.ceil(2 * calls_per_second))


@attr.s(frozen=True, slots=True, auto_attribs=True)
class ClientLimits:
    """One set of limits; 0 switches a limit off.

    :ivar calls_per_second: refill rate of the call bucket (calls/s).
    :ivar burst: bucket size in calls (0: :func:`default_burst`).
    :ivar connections: WebSocket connections logged in at once.
    :ivar subscriptions: subscribed items held at once
        (:mod:`nodeapi.api.budget`).
    """

    calls_per_second: float = 0.0
    burst: int = 0
    connections: int = 0
    subscriptions: int = 0

    @property
    def bucket_size(self) -> int:
        """Calls the token bucket holds: ``burst``, else
        :func:`default_burst` of ``calls_per_second``."""
        return self.burst or default_burst(self.calls_per_second)

    def __bool__(self) -> bool:
        return bool(self.calls_per_second or self.connections or self.subscriptions)

    @classmethod
    def from_json(cls, doc: Any, where: str) -> "ClientLimits":
        """The ``limits`` object of an api-access entry:
        ``{"calls_per_second": number, "burst": int, "connections": int,
        "subscriptions": int}``, every key optional.

        :raises ConfigError: naming ``where`` and the key: not an object, an
            unknown key, a value that is not a number >= 0 (an integer for
            all but ``calls_per_second``), ``burst`` without
            ``calls_per_second``."""
        if not isinstance(doc, dict):
            raise ConfigError(f"{where}: 'limits' must be an object")
        names = [f.name for f in attr.fields(cls)]
        unknown = sorted(set(doc) - set(names))
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)} in 'limits'; "
                              f"known: {', '.join(names)}")
        values = {}
        for name, value in doc.items():
            whole = name != "calls_per_second"
            if (isinstance(value, bool) or not isinstance(value, (int, float))
                    or (whole and not isinstance(value, int)) or not 0 <= value < 2 ** 31):
                what = "an integer" if whole else "a number"
                raise ConfigError(f"{where}: limits.{name} must be {what} from 0 to "
                                  f"{2 ** 31 - 1}, got {value!r}")
            values[name] = float(value) if not whole else value
        if values.get("burst") and not values.get("calls_per_second"):
            raise ConfigError(f"{where}: limits.burst needs limits.calls_per_second")
        return cls(**values)


#: The option setting each per-address limit.
_OPTIONS = {"calls_per_second": "--max-calls-per-second-per-ip",
            "burst": "--max-call-burst-per-ip",
            "subscriptions": "--max-subscriptions-per-ip",
            "connections": "--max-connections-per-ip"}

#: No limits (an api-access entry without ``limits``).
NO_LIMITS = ClientLimits()


class CallRateExceeded(ClientLimitExceeded):
    """Too many calls

    A call found its user's or its source address' bucket empty.
    ``error.data.stack[0].data``: ``{"calls_per_second", "burst", "scope",
    "retry_after"}`` (seconds until the next call is accepted)."""

    name = "rate_limit_exceeded"

    def __init__(self, account: "Account", wait: float) -> None:
        limits = account.limits
        super().__init__(f"Too many calls: over {limits.calls_per_second:g} per second "
                         f"(burst {limits.bucket_size}) for {account.whom} "
                         f"({account.setting('calls_per_second')}); try again in {wait:.3f} s")
        self.details = {"calls_per_second": limits.calls_per_second,
                        "burst": limits.bucket_size, "scope": account.scope,
                        "retry_after": round(wait, 3)}


class ConnectionLimitExceeded(ClientLimitExceeded):
    """Too many connections

    A login (at connect or by ``login``) would give its user more logged-in
    WebSocket connections than its ``limits.connections``.
    ``error.data.stack[0].data``: ``{"limit", "scope"}``."""

    name = "connection_limit_exceeded"

    def __init__(self, account: "Account") -> None:
        limit = account.limits.connections
        super().__init__(f"Too many connections: {limit} WebSocket connections are logged in "
                         f"for {account.whom} ({account.setting('connections')})")
        self.details = {"limit": limit, "scope": account.scope}


class Account:
    """What one user (or the ``*`` entry at one address, or one address)
    holds: its limits, its call bucket, its connections and items.

    :ivar scope: ``"user"`` (an api-access entry) or ``"source"`` (options).
    :ivar whom: how messages name it.
    """

    __slots__ = ("limits", "scope", "whom", "tokens", "stamp", "connections",
                 "subscriptions")

    def __init__(self, limits: ClientLimits, scope: str, whom: str, now: float) -> None:
        self.limits, self.scope, self.whom = limits, scope, whom
        self.tokens = float(limits.bucket_size)
        self.stamp = now
        self.connections = 0
        self.subscriptions = 0

    def setting(self, name: str) -> str:
        """Where the limit ``name`` (a :class:`ClientLimits` field) of this
        account is set, as messages name it."""
        if self.scope == "user":
            return f"api-access limits.{name}"
        return _OPTIONS[name]

    def refill(self, now: float) -> float:
        """The token bucket's tokens at ``now`` (fractions of calls): it
        holds ``burst`` calls and refills at ``calls_per_second``; each call
        takes one, an empty bucket refuses it."""
        if now > self.stamp:
            self.tokens = min(float(self.limits.bucket_size),
                              self.tokens + (now - self.stamp) * self.limits.calls_per_second)
            self.stamp = now
        return self.tokens

    def idle(self, now: float) -> bool:
        """Holds nothing and its bucket is full: forgetting it changes
        nothing (a forgotten account behaves exactly like a new one)."""
        return (not self.connections and not self.subscriptions
                and (not self.limits.calls_per_second
                     or self.refill(now) >= self.limits.bucket_size))


class LimitBook:
    """The accounts of one RPC site.

    :param clock: ``IReactorTime`` (the site's reactor; a ``task.Clock`` in tests).
    :param per_ip: the options' :class:`ClientLimits` for each source address.
    :param metrics: :class:`nodeapi.metrics.Metrics` (``limit_refused``) or None.
    :param events: the site's :class:`nodeapi.rpc.throttled_log.ThrottledLog`.
    """

    def __init__(self, clock, per_ip: ClientLimits, metrics=None, events=None) -> None:
        self.clock, self.per_ip, self.metrics, self.events = clock, per_ip, metrics, events
        self.accounts: dict = {}
        self._prune_at = PRUNE_AT

    def account(self, key: tuple, limits: ClientLimits, scope: str,
                whom: str) -> Optional[Account]:
        """The account of ``key`` (made on first use), or None when
        ``limits`` limit nothing.  Past :data:`PRUNE_AT` accounts (and
        each doubling after) the idle ones are forgotten first."""
        if not limits:
            return None
        account = self.accounts.get(key)
        if account is None:
            now = self.clock.seconds()
            if len(self.accounts) >= self._prune_at:
                self.accounts = {k: a for k, a in self.accounts.items() if not a.idle(now)}
                self._prune_at = max(PRUNE_AT, 2 * len(self.accounts))
            account = self.accounts[key] = Account(limits, scope, whom, now)
        return account

    def session(self, host: str, websocket: bool) -> "SessionLimits":
        """The limits of a new session from ``host`` (WebSocket sessions
        count as connections)."""
        source = self.account(("ip", host), self.per_ip, "source", f"source address {host}")
        return SessionLimits(self, host, websocket, source)

    def refused(self, kind: str, account: Account, host: str) -> None:
        """Count and log one refusal of ``kind`` (``calls``, ``connections``,
        ``subscriptions``) by ``account``."""
        if self.metrics is not None:
            self.metrics.limit_refused(kind, account.scope)
        if self.events is not None:
            self.events.event(f"{kind}_per_{account.scope}",
                              "RPC {limit} from {peer} refused: {whom} is at its limit",
                              limit=kind, peer=host, whom=account.whom)


class SessionLimits(SubscriptionBudget):
    """The limits one session (WebSocket connection, HTTP request) is
    charged to: its user's account (changed by each successful login) and
    its source address' account.  It is the session's subscription budget
    (:mod:`nodeapi.api.budget`).

    :ivar held: subscribed items this session holds.
    """

    def __init__(self, book: LimitBook, host: str, websocket: bool,
                 source: Optional[Account]) -> None:
        self.book, self.host, self.websocket = book, host, websocket
        self.user: Optional[Account] = None
        self.source = source
        self.held = 0
        self._closed = False
        if websocket and source is not None:
            source.connections += 1

    def _accounts(self):
        return [a for a in (self.user, self.source) if a is not None]

    def log_in(self, entry_user: str, limits: ClientLimits) -> None:
        """A login matched the api-access entry ``entry_user`` with
        ``limits``: charge this session to that entry's account from now
        on (its connection and the items it holds move along).

        :raises ConnectionLimitExceeded: a WebSocket session and the
            account has its ``limits.connections`` logged in already (the
            session stays charged as before)."""
        if entry_user == "*":
            key, whom = ("*", self.host), f"the '*' entry from {self.host}"
        else:
            key, whom = ("user", entry_user), f"user '{entry_user}'"
        account = self.book.account(key, limits, "user", whom)
        old = self.user
        if account is old or self._closed:
            return
        if (self.websocket and account is not None and limits.connections
                and account.connections >= limits.connections):
            self.book.refused("connections", account, self.host)
            raise ConnectionLimitExceeded(account)
        if old is not None:
            old.connections -= int(self.websocket)
            old.subscriptions -= self.held
        if account is not None:
            account.connections += int(self.websocket)
            account.subscriptions += self.held
        self.user = account

    def call(self) -> None:
        """Charge one call.

        :raises CallRateExceeded: an account's bucket is empty (nothing is
            charged then)."""
        accounts = [a for a in self._accounts() if a.limits.calls_per_second]
        if not accounts:
            return
        now = self.book.clock.seconds()
        for account in accounts:
            tokens = account.refill(now)
            if tokens < 1.0:
                self.book.refused("calls", account, self.host)
                raise CallRateExceeded(account, (1.0 - tokens) / account.limits.calls_per_second)
        for account in accounts:
            account.tokens -= 1.0

    # -- SubscriptionBudget ----------------------------------------------------------
    def take(self, count: int = 1) -> None:
        """``SubscriptionBudget.take``: hold ``count`` more subscribed
        items on each limit account of the session.

        :raises SubscriptionLimitExceeded: one account would pass its
            ``subscriptions`` limit (nothing is taken)."""
        accounts = self._accounts()
        for account in accounts:
            limit = account.limits.subscriptions
            if limit and account.subscriptions + count > limit:
                self.book.refused("subscriptions", account, self.host)
                raise SubscriptionLimitExceeded(limit, account.scope, account.whom,
                                                account.setting("subscriptions"))
        for account in accounts:
            account.subscriptions += count
        self.held += count

    def give_back(self, count: int = 1) -> None:
        """``SubscriptionBudget.give_back``: ``count`` items (at most those
        held) are no longer subscribed."""
        count = min(count, self.held)
        for account in self._accounts():
            account.subscriptions -= count
        self.held -= count

    def close(self) -> None:
        """The session ended: its connection and remaining items are given
        back (once)."""
        if self._closed:
            return
        self.give_back(self.held)
        if self.websocket:
            for account in self._accounts():
                account.connections -= 1
        self._closed = True
