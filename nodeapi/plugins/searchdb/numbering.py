"""Whether the search database was filled with this node's operation
numbering.

The ``1.11.M`` and ``2.9.N`` ids of the documents are those the chain gives
(:mod:`nodeapi.chain.numbering`).  Older versions of this node numbered the
virtual operations of a transaction after all its operations (the
reference numbers each one right after the operation that raised it,
bitshares-core db_block.cpp ``apply_operation``); a database they filled
holds other ids for the same operations, and writing on from the resume
point would mix both numberings.

At start (and on every reconnection) the plugin reads the database's
newest document and its newest virtual operation's document
(:func:`newest_documents`: a numbering change moves only virtual
operations, so either both agree or the newest virtual one disagrees) and
ships nothing until the chain has numbered those operations:

* each agrees with the chain's operation of the same ``1.11.M`` (block,
  ``trx_in_block``, ``op_in_trx``, ``virtual_op``, ``is_virtual``,
  operation type; :func:`operation_facts`): shipping goes on;
* one disagrees, or the chain's block of that document ends before that
  ``1.11.M``: the plugin writes nothing more and says in one line what
  to do (:func:`mismatch_message`: delete the indices and restart, which
  re-creates them); found during the start's replay, the node's start
  fails with that line (:class:`NumberingMismatch`).

A document the chain numbered before the check could be made (the database
answered only after the replay passed it), or of a block before the first
one the plugin was handed since the start (a checkpoint, the indexer's
saved position after it), is not checked.
"""

from typing import Callable, Optional

from twisted.internet import defer
from twisted.logger import Logger

from nodeapi.errors import HistoryError

#: The document fields :func:`document_facts` reads.
FACT_FIELDS = ["operation_id_num", "operation_type", "block_data.block_num",
               "operation_history.trx_in_block", "operation_history.op_in_trx",
               "operation_history.virtual_op", "operation_history.is_virtual"]


class NumberingMismatch(HistoryError):
    """The search database holds documents numbered otherwise than this
    node numbers operations (module docstring); the message is the one
    line of :func:`mismatch_message`."""


def operation_facts(op) -> tuple:
    """``(block_num, trx_in_block, op_in_trx, virtual_op, is_virtual,
    operation type)`` of an :class:`~nodeapi.applied.AppliedOperation`."""
    return (op.block_num, op.trx_in_block, op.op_in_trx, op.virtual_op, bool(op.is_virtual),
            op.op[0])


def document_facts(source: dict) -> tuple:
    """The same facts of a stored document's ``_source``
    (docs/wire-contract.rst section 8); raises ``KeyError``, ``TypeError``
    or ``ValueError`` for a document without them."""
    oh = source["operation_history"]
    return (int(source["block_data"]["block_num"]), int(oh["trx_in_block"]),
            int(oh["op_in_trx"]), int(oh["virtual_op"]), bool(oh["is_virtual"]),
            int(source["operation_type"]))


def describe(facts: tuple) -> str:
    """Human-readable facts, for :func:`mismatch_message`."""
    block, trx, op, vop, virtual, kind = facts
    return (f"type {kind} in block {block} at trx_in_block {trx}, op_in_trx {op}, "
            f"virtual_op {vop}{' (virtual)' if virtual else ''}")


def mismatch_message(m: int, stored: tuple, ours: str, prefix: str, url: str) -> str:
    """The one line telling the operator what to do; ``ours`` says what
    the chain has instead (:func:`describe` of its operation)."""
    return (f"searchdb: the database at {url} was filled with another operation numbering "
            f"(an older nodeapi, or another chain): its 1.11.{m} is {describe(stored)}, this "
            f"node's {ours}; nothing more is written - delete the indices {prefix}* and "
            f"restart the node to re-create them")


@defer.inlineCallbacks
def newest_documents(client, prefix: str):
    """``{M: facts}`` of the newest document of ``<prefix>*`` and of its
    newest document of a virtual operation (highest ``operation_id_num``;
    :func:`document_facts`); ``{}`` for an empty database.  ``client.info``
    must be set.

    :raises SearchDBError: when the database does not answer as expected."""
    found = {}
    newest = {"size": 1, "_source": FACT_FIELDS,
              "sort": [{"operation_id_num": {"order": "desc"}}]}
    virtual = dict(newest, query={"term": {"operation_history.is_virtual": True}})
    for body in (newest, virtual):
        answer = yield client.search(prefix, body)
        hits = (answer.get("hits") or {}).get("hits") or []
        for hit in hits[:1]:
            source = hit.get("_source") or {}
            try:
                found[int(source["operation_id_num"])] = document_facts(source)
            except (KeyError, TypeError, ValueError):
                continue  # not a document of this plugin: nothing to compare
    return found


class NumberingCheck:
    """The documents still to compare with the chain's operations.

    :ivar pending: ``{M: facts}`` of the documents not checked yet.
    """

    def __init__(self) -> None:
        self.pending: dict = {}

    @property
    def settled(self) -> bool:
        """True when nothing is left to compare."""
        return not self.pending

    @defer.inlineCallbacks
    def learn(self, client, prefix: str, numbered: int):
        """Read the newest documents (:func:`newest_documents`); those of
        operations after ``1.11.numbered`` (the last the chain numbered) are
        to be compared.  Fires with :attr:`pending`."""
        found = yield newest_documents(client, prefix)
        self.pending = {m: facts for m, facts in found.items() if m > numbered}
        return self.pending

    def forget_through(self, numbered: int) -> None:
        """Drop what the chain will never number again (a checkpoint
        restored the numbering after ``1.11.numbered``)."""
        self.pending = {m: f for m, f in self.pending.items() if m > numbered}

    def forget_before(self, block_num: int) -> None:
        """Drop the documents of blocks before ``block_num``, the first
        block the plugin was handed since the start: their operations were
        numbered before (checkpoint, indexer position) and are not seen."""
        self.pending = {m: f for m, f in self.pending.items() if f[0] >= block_num}

    def passed(self, block_num: int) -> Optional[tuple]:
        """After the chain's block ``block_num``: ``(M, stored facts)`` of a
        document of that block (or an earlier one) still pending - the
        chain's block ended before that ``1.11.M`` - else None."""
        for m, facts in sorted(self.pending.items()):
            if facts[0] <= block_num:
                return m, facts
        return None

    def compare(self, op) -> Optional[tuple]:
        """Compare the chain's operation ``op`` (an AppliedOperation) with
        the document of its ``1.11.M`` when one is pending; returns
        ``(stored facts, op's facts)`` when they disagree, else None."""
        stored = self.pending.pop(op.id_num, None)
        if stored is None:
            return None
        ours = operation_facts(op)
        return None if ours == stored else (stored, ours)


class NumberingGuard:
    """Holds the history plugin's shipping until the database's newest
    documents are found numbered as this node numbers them (module
    docstring); on a mismatch logs the one line and stops the writing: no
    backfill, nothing shipped, the queue dropped.  Owned by
    :class:`~nodeapi.plugins.searchdb.service.SearchDBService`.

    :param client: the plugin's
        :class:`~nodeapi.plugins.searchdb.client.SearchDBClient`.
    :param index_prefix: ``searchdb-index-prefix``.
    :param shipper: the plugin's
        :class:`~nodeapi.plugins.searchdb.shipper.BulkShipper` (held and
        released through :meth:`~BulkShipper.hold`).
    :param queue: the plugin's bulk queue (dropped on a mismatch).
    :param backfills: the plugin's
        :class:`~nodeapi.plugins.searchdb.backfill.BackfillControl`.
    :param live_op: ``fn() -> int``, the last ``1.11.M`` the chain numbered.
    :ivar error: None, or the one line of a mismatch found (the plugin then
        writes nothing more).
    """

    log = Logger()

    def __init__(self, client, index_prefix: str, shipper, queue, backfills,
                 live_op: Callable[[], int]) -> None:
        self.client = client
        self.index_prefix = index_prefix
        self.shipper = shipper
        self.queue = queue
        self.backfills = backfills
        self.live_op = live_op
        self.check = NumberingCheck()
        self.error: Optional[str] = None
        self.first_block: Optional[int] = None  # the first block handed over

    @property
    def pending(self) -> bool:
        """True while documents are left to compare."""
        return bool(self.check.pending)

    @defer.inlineCallbacks
    def learn(self):
        """After a check of the database: learn its newest documents and
        hold shipping until they are compared."""
        yield self.check.learn(self.client, self.index_prefix, self.live_op())
        if self.first_block is not None:
            self.check.forget_before(self.first_block)
        pending = self.check.pending
        self.shipper.hold(bool(pending))
        if pending:
            self.log.info("searchdb: shipping waits until this node has numbered {ops}, the "
                          "database's newest documents, and found them the same",
                          ops=", ".join(f"1.11.{m}" for m in sorted(pending)))

    def forget_through(self, numbered: int) -> None:
        """A checkpoint restored the numbering after ``1.11.numbered``."""
        self.check.forget_through(numbered)
        self._release()

    def before(self, block_num: int) -> None:
        """Before the operations of the chain's block ``block_num``."""
        if self.first_block is None:
            self.first_block = block_num
            self.check.forget_before(block_num)
            self._release()

    def agrees(self, op) -> bool:
        """Compare the chain's ``op`` with a pending document; False (and
        the writing stopped, :meth:`_refuse`) on a mismatch."""
        wrong = self.check.compare(op)
        if wrong is not None:
            self._refuse(op.id_num, wrong[0], f"is {describe(wrong[1])}")
            return False
        self._release()
        return True

    def after(self, block_num: int) -> bool:
        """After the operations of block ``block_num``: False (and the
        writing stopped) when a pending document's block is done without
        its ``1.11.M``."""
        left = self.check.passed(block_num)
        if left is None:
            return True
        self._refuse(left[0], left[1], f"block {left[1][0]} ends with 1.11.{self.live_op()}")
        return False

    def _release(self) -> None:
        """Ship again once nothing is pending."""
        if self.check.settled:
            self.shipper.hold(False)

    def _refuse(self, m: int, stored: tuple, ours: str) -> None:
        """Log the one line, stop writing: no backfill, nothing shipped,
        the queue dropped."""
        self.error = mismatch_message(m, stored, ours, self.index_prefix, self.client.safe_url)
        self.log.error("{error}", error=self.error)
        self.backfills.end("stopped: the database holds another numbering")
        self.shipper.close()
        self.queue.discard()
