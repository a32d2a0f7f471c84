"""Cooperative replay: applying a long run of blocks in chunks so the
reactor stays responsive, with progress logging (blocks/s, ETA).

:meth:`nodeapi.chain.chain.Chain.replay` drives it over the block log at
startup (graphene ``database::reindex``, which applies the stored blocks with
the skip flags of a replay); the chain supplies the blocks and the function
applying one, this module the scheduling through a Twisted cooperator.
"""


def replay_blocks(blocks, apply_block, head_num, total: int, clock, log,
                  cooperator=None, chunk: int = 200, progress_every: float = 5.0):
    """Apply blocks cooperatively; returns a Deferred firing with the number
    of blocks applied (failing with the first exception ``apply_block``
    raises).

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
    :param chunk: blocks applied per cooperator step.
    :param progress_every: seconds of ``clock`` between progress events.
    """
    from twisted.internet import task

    count = [0]
    started = clock.seconds()

    def work():
        n = 0
        last_log = started
        for _num, block in blocks():
            apply_block(block)
            count[0] += 1
            n += 1
            if n >= chunk:
                n = 0
                now = clock.seconds()
                if now - last_log >= progress_every:
                    last_log = now
                    rate = count[0] / max(now - started, 1e-9)
                    log.info("Replay: block {num} of {total}, {rate:.0f} blocks/s, "
                             "ETA {eta:.0f} s", num=head_num(), total=total,
                             rate=rate, eta=max(total - count[0], 0) / max(rate, 1e-9))
                yield None

    coop = cooperator or task
    return coop.cooperate(work()).whenDone().addCallback(lambda _: count[0])
