"""Cooperative replay: applying a long run of blocks in chunks so the
reactor stays responsive, with progress logging (blocks/s, ETA).

:meth:`nodeapi.chain.chain.Chain.replay` drives it over the block log at
startup (graphene ``database::reindex``, which applies the stored blocks with
the skip flags of a replay); the chain supplies the blocks and the function
applying one, this module the scheduling through a Twisted cooperator.
"""


def replay_blocks(blocks, apply_block, head_num, total: int, clock, log,
                  cooperator=None, chunk: int = 200, progress_every: float = 5.0,
                  step_seconds: float = 0.002):
    """Apply blocks cooperatively; returns a Deferred firing with the number
    of blocks applied (failing with the first exception ``apply_block``
    raises).

    Cancelling the Deferred stops the replay (a SIGTERM during startup,
    :meth:`nodeapi.service.NodeService.stopService`): between two steps -
    the normal case, since the reactor runs the stop between steps - the
    cooperative task is stopped and the block iterator closed before
    ``cancel()`` returns, so nothing reads the block log afterwards and it can
    be closed at once; the Deferred fails with ``CancelledError``.  Cancelled
    from inside ``apply_block`` (a block consumer), the block being applied
    finishes, then the work loop returns without reading another block.

    :param blocks: zero-argument callable returning an iterable of
        ``(num, block)``; called when the first chunk runs.
    :param apply_block: ``apply_block(block)`` applies one block.
    :param head_num: zero-argument callable giving the head block number
        (for the progress events).
    :param total: the number of blocks expected (for the ETA).
    :param clock: ``IReactorTime`` whose ``seconds()`` times the progress.
    :param log: the ``twisted.logger.Logger`` of the progress events
        (``"Replay: block {num} of {total}, {rate} blocks/s, ETA {eta} s"``).
    :param cooperator: an ``ITaskCooperator`` (``cooperate(iterator)``);
        default ``twisted.internet.task``'s global cooperator.
    :param chunk: at most this many blocks applied per cooperator step.
    :param progress_every: seconds of ``clock`` between progress events.
    :param step_seconds: a step also ends once it has run this long by
        ``clock`` (checked after each block): the reactor gets a turn every
        few milliseconds, so what a consumer sends meanwhile (the searchdb
        plugin's bulks: a transport writes at most 128 KiB per turn) goes
        out during the replay rather than after it.
    """
    from twisted.internet import defer, task

    count = [0]
    stopping = [False]
    started = clock.seconds()

    def work():
        last_log = started
        items = iter(blocks())
        try:
            while True:
                deadline = clock.seconds() + step_seconds
                for _ in range(chunk):
                    item = next(items, None)
                    if item is None:
                        return
                    apply_block(item[1])
                    count[0] += 1
                    if stopping[0]:
                        return
                    if clock.seconds() >= deadline:
                        break
                now = clock.seconds()
                if now - last_log >= progress_every:
                    last_log = now
                    rate = count[0] / max(now - started, 1e-9)
                    log.info("Replay: block {num} of {total}, {rate:.0f} blocks/s, "
                             "ETA {eta:.0f} s", num=head_num(), total=total,
                             rate=rate, eta=max(total - count[0], 0) / max(rate, 1e-9))
                yield None
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()

    steps = work()
    coop = cooperator or task
    cooperative = coop.cooperate(steps)

    def cancel(_d):
        stopping[0] = True
        if steps.gi_running:
            return  # inside apply_block: the loop returns after this block
        try:
            cooperative.stop()
        except task.TaskFinished:
            pass
        steps.close()

    result = defer.Deferred(cancel)

    def finished(_):
        if not result.called:
            result.callback(count[0])

    def failed(failure):
        if stopping[0] and failure.check(task.TaskStopped):
            return None  # our own stop: ``result`` fails with CancelledError
        if not result.called:
            result.errback(failure)
        return None

    cooperative.whenDone().addCallbacks(finished, failed)
    return result
