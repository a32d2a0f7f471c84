"""Logs a person can read: state changes with hysteresis and no
per-connection lines of the search database's HTTP client."""

import pytest_twisted
from twisted.logger import formatEvent, globalLogPublisher

from nodeapi.applied import AppliedBlock
from nodeapi.plugins.searchdb import pace as searchdb_pace

from kit.searchdb import make_service


class FixedClock:
    def __init__(self, now):
        self.now = now

    def seconds(self):
        return self.now


def _block(num, timestamp, replay):
    return AppliedBlock(num, f"{num:08x}" + "0" * 32, {"transactions": []}, timestamp, (),
                        replay)


def _lines(events):
    return [formatEvent(e) for e in events if "searchdb:" in (formatEvent(e) or "")]


def test_searchdb_sync_state_has_hysteresis(new_chain, tmp_path):
    """An indexer whose upstream's irreversible block moves by two hands
    over one block as not live and the next as live: one "synchronized"
    line, not one line per block; a block older than UNSYNC_WINDOW is
    "catching up" again, and only a live block within SYNC_WINDOW returns."""
    chain = new_chain()
    now = 1_700_000_000
    svc = make_service("http://127.0.0.1:9/", chain, str(tmp_path), clock=FixedClock(now))
    events = []
    globalLogPublisher.addObserver(events.append)
    states = []
    try:
        for num in range(1, 41):  # 20 pairs of (not live, live)
            svc.block_applied(_block(num, now - 6 + (num % 2), replay=bool(num % 2)))
            states.append(svc.pace.synchronized)
        assert _lines(events) == ["searchdb: synchronized at block 2, bulks of 6 lines"]
        assert states[1:] == [True] * 39
        svc.block_applied(_block(41, now - searchdb_pace.UNSYNC_WINDOW - 1, replay=False))
        assert svc.pace.synchronized is False
        svc.block_applied(_block(42, now - 5, replay=True))
        assert svc.pace.synchronized is False
        svc.block_applied(_block(43, now - 5, replay=False))
        assert svc.pace.synchronized is True
    finally:
        globalLogPublisher.removeObserver(events.append)
    assert _lines(events)[1:] == ["searchdb: catching up at block 41, bulks of 8 lines",
                                  "searchdb: synchronized at block 43, bulks of 6 lines"]


@pytest_twisted.inlineCallbacks
def test_search_database_client_logs_no_factory_lines(osmem_url):
    """Twisted's HTTP client logs "Starting factory"/"Stopping factory" per
    connection (about 78 lines a minute on an idle node): the search
    database client's pool is quiet."""
    from twisted.internet import reactor

    from nodeapi.plugins.searchdb.client import SearchDBClient

    events = []
    globalLogPublisher.addObserver(events.append)
    try:
        client = SearchDBClient(osmem_url, "", reactor, request_timeout=10)
        yield client.detect()
        yield client.close()
    finally:
        globalLogPublisher.removeObserver(events.append)
    text = "\n".join(formatEvent(e) or "" for e in events)
    assert "Starting factory" not in text and "Stopping factory" not in text, text


@pytest_twisted.inlineCallbacks
def test_searchdb_objects_retries_a_down_database_with_backoff(new_chain, tmp_path):
    """Emptying an objects index while the database is down is retried with
    the shipper's backoff (growing delays), one line each - not every
    second."""
    from twisted.internet import defer, reactor
    from twisted.internet.task import Clock

    from nodeapi.plugins.searchdb.client import SearchDBClient
    from nodeapi.plugins.searchdb_objects.service import ObjectsService
    from nodeapi.plugins.searchdb_objects.settings import ObjectsOptions

    from kit.daemon import free_port
    from kit.wait import wait_for

    clock = Clock()
    client = SearchDBClient(f"http://127.0.0.1:{free_port()}/", "", reactor,
                            request_timeout=5)
    options = ObjectsOptions.from_options(lambda name: {
        "index-prefix": "objq-", "bulk-replay": 10, "bulk-sync": 5, "max-mapping-depth": 10,
        "start-after-block": 0, "sync-db-on-startup": False}.get(
            name, not name.endswith(("updates", "delete"))))
    svc = ObjectsService(client, new_chain(), str(tmp_path), clock, options)
    kind = next(iter(svc._enabled.values()))
    events = []
    globalLogPublisher.addObserver(events.append)
    try:
        d = defer.ensureDeferred(svc._delete_all(kind))
        delays = []
        for attempt in range(1, 5):
            yield wait_for(lambda: len(clock.getDelayedCalls()) == 1)
            call = clock.getDelayedCalls()[0]
            delays.append(call.getTime() - clock.seconds())
            clock.advance(delays[-1])
        d.cancel()
        d.addErrback(lambda f: None)
    finally:
        globalLogPublisher.removeObserver(events.append)
        yield client.close()
    assert delays == sorted(delays) and delays[0] < 2.01 and delays[-1] >= 8  # 0.5 * 2^n + jitter
    lines = [formatEvent(e) for e in events if "emptying objq-" in (formatEvent(e) or "")]
    assert len(lines) >= 4 and all("; retrying in " in line for line in lines)


def test_a_log_file_on_a_full_disk_is_one_line_not_a_traceback_per_event(tmp_path):
    """A [logger.default] file appender whose writes fail (/dev/full:
    ENOSPC) costs one error line, not a traceback per event; nothing is
    raised into the log publisher.  Once writes succeed again, one warning
    counts the lines lost."""
    from twisted.logger import LogLevel, LogPublisher, Logger

    from nodeapi.config_logging import LogFile, LoggingConfig, SurvivingFile

    problems = []
    [observer] = LoggingConfig(files=(LogFile("/dev/full", LogLevel.info),)).observers(
        problems)
    assert problems == []
    said = []
    publisher = LogPublisher(observer, said.append)
    SurvivingFile.log = Logger(namespace="nodeapi.config_logging", observer=publisher)
    try:
        log = Logger(namespace="nodeapi.x", observer=publisher)
        for n in range(100):
            log.info("event {n}", n=n)
        errors = [formatEvent(e) for e in said if e["log_namespace"] != "nodeapi.x"]
        assert errors == ["log file /dev/full: No space left on device; its lines are lost "
                          "until it can be written again"]
        assert not [e for e in said if "log_failure" in e]
        surviving = observer._observer._outFile
        surviving.stream = open(tmp_path / "fine.log", "a", encoding="utf-8")
        log.info("event again")
        # the 100 events and the error line itself were lost
        assert [formatEvent(e) for e in said[-2:]] == [
            "log file /dev/full: written again, 101 lines lost", "event again"]
        assert (tmp_path / "fine.log").read_text().count("event again") == 1
    finally:
        SurvivingFile.log = Logger()
