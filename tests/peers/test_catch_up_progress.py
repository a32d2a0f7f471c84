"""Long catch-ups show progress like the replay: a line every few seconds
with the block reached, the target, blocks/s and an ETA - the follower
syncing from a peer (a real sync over loopback) and the indexer."""

import pytest_twisted
from twisted.internet import reactor
from twisted.internet.task import Clock
from twisted.logger import Logger, formatEvent, globalLogPublisher

from nodeapi.peers.progress import CatchUpProgress
from nodeapi.peers.service import PeerService

from kit.chain import produce
from kit.peer_stub import ChainRpcFactory
from kit.peers import FAST, listen
from kit.wait import wait_for


def test_progress_line_every_few_seconds_with_rate_and_eta():
    clock, events = Clock(), []
    progress = CatchUpProgress(clock, Logger(observer=events.append), "Sync", every=5)
    assert progress.step(100, 1000) is False  # the start
    clock.advance(4)
    assert progress.step(140, 1000) is False  # under 5 s
    clock.advance(1)
    assert progress.step(150, 1000) is True  # 50 blocks in 5 s
    assert formatEvent(events[-1]) == "Sync: block 150 of 1000, 10 blocks/s, ETA 85 s"
    assert events[-1]["rate"] == 10 and events[-1]["eta"] == 85
    assert progress.step(1000, 1000) is False  # caught up: starts afresh
    assert progress.step(1001, 2000) is False
    clock.advance(10)
    assert progress.step(1501, 2000) is True
    assert formatEvent(events[-1]) == "Sync: block 1501 of 2000, 50 blocks/s, ETA 10 s"


class TickingClock(Clock):
    """Each ``seconds()`` is one second later (a slow sync, in no time)."""

    def seconds(self):
        self.rightNow += 1
        return self.rightNow


@pytest_twisted.inlineCallbacks
def test_follower_sync_logs_progress(producer, follower):
    produce(producer, 30)
    port = yield listen(ChainRpcFactory(producer, block_api=True))
    svc = PeerService(follower, reactor=reactor, clock=TickingClock(),
                      parameters=dict(FAST, sync_batch_size=10))
    events = []
    globalLogPublisher.addObserver(events.append)
    try:
        svc.startService()
        yield svc.add_node(f"127.0.0.1:{port.getHost().port}")
        yield wait_for(lambda: follower.head_block_num == 30)
    finally:
        globalLogPublisher.removeObserver(events.append)
        yield svc.stopService()
        yield port.stopListening()
    lines = [formatEvent(e) for e in events if "Sync from peer" in (formatEvent(e) or "")]
    assert lines, "no progress line"
    assert all(" of 30, " in line and "blocks/s, ETA" in line for line in lines)
