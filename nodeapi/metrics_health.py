"""The node's key figures and whether it is in sync: what ``GET /healthz``
answers and ``GET /status`` shows (:mod:`nodeapi.metrics_status`), on the
metrics port.

:func:`key_figures` reads the parts of a running node (chain, witness,
peers, upstream, searchdb, RPC counters) without changing anything;
:func:`health` judges them against :class:`HealthLimits`.  Both are plain
functions over plain values, so a load balancer check or a replica
supervisor can call them too.

Sources: the head block, last irreversible block and witness participation
are those of graphene's ``dynamic_global_property_object``
(libraries/chain/include/graphene/chain/global_property_object.hpp;
participation as the cli_wallet's ``info`` computes it: the filled slots of
the 128 recent slots, ``recent_slots_filled``, in percent).
"""

import collections
import os

import attr

from nodeapi.protocol.times import format_time

#: Seconds the call rate is averaged over.
RATE_WINDOW = 60
#: calls the status page's latency figures are taken over
LATENCY_CALLS = 1000
#: entries :class:`RecentErrors` keeps; characters of each entry's text
RECENT_ERRORS, ERROR_TEXT = 20, 300


@attr.s(frozen=True)
class HealthLimits:
    """When the node counts as in sync.

    :ivar max_head_age: largest age of the head block, seconds (its
        timestamp against the clock; in indexer mode, of the last block
        indexed).
    :ivar max_searchdb_lag: largest search database lag, blocks (head minus
        the last block the database confirmed), when searchdb runs.
    """

    max_head_age = attr.ib(default=30.0)
    max_searchdb_lag = attr.ib(default=20)


class RateWindow:
    """Events per second over the last :data:`RATE_WINDOW` seconds of
    ``clock`` (an ``IReactorTime``), counted in one-second buckets."""

    def __init__(self, clock, window: int = RATE_WINDOW) -> None:
        self.clock, self.window = clock, window
        self.buckets = collections.deque()  # [second, count], oldest first
        self.started = clock.seconds()

    def add(self, count: int = 1) -> None:
        """Count ``count`` events now."""
        second = int(self.clock.seconds())
        if self.buckets and self.buckets[-1][0] == second:
            self.buckets[-1][1] += count
        else:
            self.buckets.append([second, count])
        self._trim(second)

    def _trim(self, second: int) -> None:
        while self.buckets and self.buckets[0][0] <= second - self.window:
            self.buckets.popleft()

    def rate(self) -> float:
        """Events per second over the window (over the time since the
        window started, when that is shorter; at least one second)."""
        now = self.clock.seconds()
        self._trim(int(now))
        span = min(max(now - self.started, 1.0), self.window)
        return sum(count for _s, count in self.buckets) / span


class LatencyWindow:
    """The durations of the last :data:`LATENCY_CALLS` answered calls
    (seconds), for the status page's median and 99th percentile.

    Bounded: a ``deque`` of at most that many floats."""

    def __init__(self, size: int = LATENCY_CALLS) -> None:
        self.durations: collections.deque = collections.deque(maxlen=size)

    def add(self, seconds: float) -> None:
        """One call answered in ``seconds``."""
        self.durations.append(max(seconds, 0.0))

    def summary(self) -> dict:
        """``{"calls", "p50_ms", "p99_ms", "max_ms"}`` over the window
        (milliseconds rounded to 0.1; None without calls)."""
        ordered = sorted(self.durations)
        if not ordered:
            return {"calls": 0, "p50_ms": None, "p99_ms": None, "max_ms": None}

        def at(q: float) -> float:
            return round(1000.0 * ordered[min(int(q * len(ordered)), len(ordered) - 1)], 1)

        return {"calls": len(ordered), "p50_ms": at(0.5), "p99_ms": at(0.99),
                "max_ms": round(1000.0 * ordered[-1], 1)}


class RecentErrors:
    """A ``twisted.logger`` observer keeping the last :data:`RECENT_ERRORS`
    events of level ``warn`` or higher, for the status page.

    Each kept entry is ``{"time" (wire time), "level", "text"}``, the text
    formatted by ``twisted.logger.formatEvent`` and cut at
    :data:`ERROR_TEXT` characters (a traceback keeps its first line only):
    bounded in count and size, whatever the node logs.  An event seen again
    (same time, level and text: twistd hands the events logged before its
    log began to every observer once more) is not counted twice.

    :ivar counts: ``{"warn": n, "error": n, "critical": n}`` since start.
    """

    def __init__(self, size: int = RECENT_ERRORS) -> None:
        self.entries: collections.deque = collections.deque(maxlen=size)
        self._keys: collections.deque = collections.deque(maxlen=size)
        self.counts = {"warn": 0, "error": 0, "critical": 0}

    def __call__(self, event: dict) -> None:
        from twisted.logger import LogLevel, formatEvent

        level = event.get("log_level")
        if level not in (LogLevel.warn, LogLevel.error, LogLevel.critical):
            return
        try:
            text = formatEvent(event)
        except Exception:  # never let a bad event break the log publisher
            text = str(event.get("log_format", "?"))
        if not text and event.get("log_failure") is not None:
            text = event["log_failure"].getErrorMessage()
        text = (text.splitlines() or [""])[0][:ERROR_TEXT]
        key = (event.get("log_time"), level.name, text)
        if key in self._keys:  # twistd replays the events logged before it began logging
            return
        self._keys.append(key)
        self.counts[level.name] += 1
        self.entries.append({"time": format_time(int(event.get("log_time") or 0)),
                             "level": level.name, "text": text})

    def recent(self) -> list:
        """The kept entries, newest first."""
        return list(reversed(self.entries))


def resident_bytes() -> int:
    """This process's resident set size in bytes (``/proc/self/statm``;
    elsewhere the peak from ``getrusage``), 0 when unknown."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        try:
            import resource

            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        except Exception:
            return 0


def free_bytes(path: str):
    """Bytes an unprivileged writer may still use on the file system of
    ``path`` (``statvfs``: ``f_bavail * f_frsize``), or None when it cannot
    be read (a removed directory)."""
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def participation(dgp: dict) -> float:
    """Percent of the last 128 slots a witness filled (``recent_slots_filled``,
    a 128-bit mask as a decimal string or int) -> 0.0..100.0."""
    filled = int(dgp.get("recent_slots_filled", 0))
    return round(100.0 * bin(filled).count("1") / 128, 1)


def key_figures(*, now: float, chain=None, witness=None, peers=None, upstream=None,
                searchdb=None, rpc=None, node=None, checkpoint=None) -> dict:
    """The figures of a node at ``now`` (seconds since the epoch).

    :param chain: the :class:`~nodeapi.chain.chain.Chain` or None (indexer).
    :param witness: the WitnessService or None.
    :param peers: the PeerService or None.
    :param upstream: indexer mode's UpstreamService or None.
    :param searchdb: the searchdb plugin or None.
    :param rpc: ``{"connections": int, "calls_total": int,
        "calls_per_second": float, ...}`` or None (shown as given).
    :param node: the identity and resources of the process, shown as
        given: ``{"version", "chain_id", "mode", "plugins", "uptime",
        "rss_bytes", "data_dir", "data_dir_free_bytes", "errors"}`` or None.
    :param checkpoint: ``{"block_num", "age"}`` of the newest checkpoint
        (None each when there is none), or None without checkpoints.
    :returns: ``{"head_block_num", "head_block_id", "head_block_time"
        (wire time or None), "head_block_age" (seconds or None),
        "last_irreversible_block_num", "participation" (percent or None),
        "replay" ({"block", "target", "percent"} while replaying, else None),
        "blocks_produced" (or None without witness), "peers" ([{"addr",
        "state", "head_block_num", "lag"}]), "upstream" ({"lag_blocks",
        "lag_seconds", "reconnects"} and, for a gateway's upstreams whose
        ``upstream.states()`` tells, "upstreams": that list of
        ``{"upstream", "state", "head_block_num", "lag_blocks", "fault"}``;
        or None), "searchdb" ({"lag_blocks",
        "queue", "spooled_bytes", "shipped", "failed"} or None), "rpc",
        "node", "checkpoint"}``; a peer's ``lag`` is how far it is ahead
        of this node, ``reconnects`` its connections after the first.
    """
    out = {"head_block_num": 0, "head_block_id": None, "head_block_time": None,
           "head_block_age": None, "last_irreversible_block_num": None,
           "participation": None, "replay": None, "blocks_produced": None, "peers": [],
           "upstream": None, "searchdb": None, "rpc": rpc,
           "node": node, "checkpoint": checkpoint}
    if chain is not None:
        dgp = chain.state.objects["2.1.0"]
        time = chain.head_block_time
        out.update(head_block_num=chain.head_block_num, head_block_id=chain.head_block_id,
                   head_block_time=format_time(time),
                   head_block_age=round(max(now - time, 0.0), 1),
                   last_irreversible_block_num=dgp.get("last_irreversible_block_num"),
                   participation=participation(dgp))
        target = getattr(chain, "replay_target", None)
        if target:
            out["replay"] = {"block": chain.head_block_num, "target": target,
                             "percent": round(100.0 * chain.head_block_num / target, 1)}
    if witness is not None:
        out["blocks_produced"] = getattr(witness, "produced", 0)
    if peers is not None:
        head = out["head_block_num"]
        out["peers"] = [{"addr": p["addr"], "state": p["state"],
                         "head_block_num": p["head_block_num"],
                         "lag": (max(p["head_block_num"] - head, 0)
                                 if p["head_block_num"] is not None else None),
                         "reconnects": p.get("reconnects", 0)}
                        for p in peers.peer_states()]
    if upstream is not None:
        head = upstream.next_block - 1
        last = upstream.last_block_time
        out.update(head_block_num=head,
                   head_block_time=format_time(int(last)) if last is not None else None,
                   head_block_age=round(upstream.lag_seconds, 1) if last is not None else None)
        out["upstream"] = {"lag_blocks": upstream.lag_blocks,
                           "lag_seconds": round(upstream.lag_seconds, 1),
                           "reconnects": upstream.reconnects}
        states = getattr(upstream, "states", None)
        if states is not None:
            out["upstream"]["upstreams"] = states()
    if searchdb is not None:
        confirmed = getattr(searchdb, "confirmed_block_num", None)
        head = out["head_block_num"]
        out["searchdb"] = {
            "lag_blocks": max(head - confirmed, 0) if confirmed is not None else head,
            "queue": getattr(searchdb, "documents_pending", 0),
            "spooled_bytes": getattr(getattr(searchdb, "queue", None), "spooled_bytes", 0),
            "shipped": getattr(searchdb, "documents_shipped", 0),
            "failed": getattr(searchdb, "documents_failed", 0)}
    return out


def health(figures: dict, limits: HealthLimits) -> dict:
    """``figures`` (:func:`key_figures`) judged by ``limits`` ->
    ``{"ok": bool, "problems": [text], **figures}``: not ok while replaying,
    without a head block time, with a head older than
    ``limits.max_head_age``, a search database lag above
    ``limits.max_searchdb_lag``, or (a gateway) no upstream serving reads,
    each named with its state and the fault that opened its breaker.
    ``GET /healthz`` answers 200 when ok, 503 otherwise."""
    problems = []
    up = figures.get("upstream")
    states = up.get("upstreams") if up is not None else None
    if states is not None and not any(s["state"] == "serving" for s in states):
        problems.append("no upstream serves reads: " + "; ".join(
            f"{s['upstream']} {s['state']}" + (f" ({s['fault']})" if s["fault"] else "")
            for s in states))
    if figures["replay"] is not None:
        problems.append(f"replaying: block {figures['replay']['block']} of "
                        f"{figures['replay']['target']}")
    age = figures["head_block_age"]
    if age is None:
        problems.append("no head block time yet")
    elif age > limits.max_head_age:
        problems.append(f"head block is {age:.0f} s old (limit {limits.max_head_age:g} s)")
    db = figures["searchdb"]
    if db is not None and db["lag_blocks"] > limits.max_searchdb_lag:
        problems.append(f"search database is {db['lag_blocks']} blocks behind "
                        f"(limit {limits.max_searchdb_lag})")
    return dict(figures, ok=not problems, problems=problems)
