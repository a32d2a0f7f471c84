"""What the chain hands to its plugins: applied blocks and operations.

The chain (:mod:`nodeapi.chain.chain`) calls every registered
:class:`IBlockConsumer` synchronously, in block order, after a block has been
applied (live or during replay).  Consumers must be quick; anything slow
(network I/O) is queued and done later by the consumer's own service.

Graphene reference: ``database::applied_block`` signal and
``operation_history_object`` (libraries/chain/include/graphene/chain/
operation_history_object.hpp).
"""

from typing import Any, NamedTuple

import attr
from zope.interface import Attribute, Interface


class AccountHistoryEntry(NamedTuple):
    """One account transaction history entry ``2.9.n`` of an applied
    operation, numbered by the chain (:mod:`nodeapi.chain.numbering`; the
    rule of graphene's ``account_history_plugin::add_account_history`` and
    ``elasticsearch_plugin`` ``addNewEntry``, docs/searchdb-plugin.rst).

    :ivar n: the instance of ``2.9.n`` (int >= 0), counted over every
        (operation, account) pair since genesis.
    :ivar account: the account id ``"1.2.x"``.
    :ivar sequence: the account's 1-based count of entries, this one included.
    :ivar next_n: the instance of the account's previous entry (0 for its
        first: graphene's default ``account_transaction_history_id_type``).
    """

    n: int
    account: str
    sequence: int
    next_n: int

    @property
    def id(self) -> str:
        """The id ``"2.9.n"``: graphene ``account_transaction_history_object``
        is type 9 of the implementation space 2."""
        return f"2.9.{self.n}"


@attr.s(frozen=True, slots=True, auto_attribs=True)
class AppliedOperation:
    """One applied operation, with everything a history plugin stores.

    :ivar id_num: M of the operation history id ``1.11.M``; the chain counts
        every applied operation from 0.
    :ivar op: the operation in wire JSON, ``[type, {...}]``.
    :ivar result: graphene ``operation_result``: ``[0, {}]`` (void),
        ``[1, "1.2.17"]`` (new object id) or ``[2, {"amount", "asset_id"}]``.
    :ivar block_num: number of the block holding it.
    :ivar trx_in_block: index of its transaction in the block (the number
        of transactions for the block's own virtual operations).
    :ivar op_in_trx: index of the operation in the transaction; for a
        virtual operation, that of the operation that raised it (0 outside
        transactions).
    :ivar virtual_op: graphene's ``_current_virtual_op``: 0 for an
        operation of a transaction, 1, 2, ... for the virtual operations it
        raised, 0, 1, ... for the block's own (nodeapi.chain.numbering).
    :ivar is_virtual: True for operations the chain generated (fills).
    :ivar trx_id: hex transaction id (40 chars).
    :ivar fee_payer: account id paying the fee.
    :ivar impacted: impacted account ids, ascending by instance
        (docs/wire-contract.rst section 8).
    :ivar account_history: its :class:`AccountHistoryEntry` values, one per
        account that records it, ascending by account instance (the chain
        numbers them once; every history plugin uses these ids).
    """

    id_num: int
    op: list
    result: list
    block_num: int
    trx_in_block: int
    op_in_trx: int
    virtual_op: int
    is_virtual: bool
    trx_id: str
    fee_payer: str
    impacted: tuple
    account_history: tuple = ()

    @property
    def id(self) -> str:
        """The operation history id ``"1.11.M"`` (str, M = :attr:`id_num`):
        graphene ``operation_history_object`` is object type 11 of the
        protocol space 1 (libraries/protocol/include/graphene/protocol/
        object_id.hpp, operation_history_object.hpp)."""
        return f"1.11.{self.id_num}"


@attr.s(frozen=True, slots=True, auto_attribs=True)
class AppliedBlock:
    """A block the chain has applied.

    :ivar block_num: its number (1 is the first block after genesis).
    :ivar block_id: hex block id (40 chars).
    :ivar block: the signed block in wire JSON (``previous``, ``timestamp``,
        ``witness``, ``transaction_merkle_root``, ``extensions``,
        ``witness_signature``, ``transactions``).
    :ivar timestamp: block time, seconds since the epoch (UTC).
    :ivar operations: the applied operations in order.
    :ivar replay: True while the node replays its block log at start.
    """

    block_num: int
    block_id: str
    block: dict
    timestamp: int
    operations: tuple
    replay: bool

    @property
    def time_iso(self) -> str:
        """Block time as ``YYYY-MM-DDTHH:MM:SS`` (docs/wire-contract.rst section 7)."""
        import time

        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.timestamp))


class IBlockConsumer(Interface):
    """Receives every applied block, in order (chain -> plugins).

    Registered with ``chain.add_consumer``; the chain calls
    :meth:`block_applied` for each block, during replay and live, after the
    block's state is committed (graphene ``database::applied_block`` signal,
    libraries/chain/db_block.cpp).

    A consumer may also have ``block_popped(applied)``: the chain calls it
    for each block a fork switch pops, newest first, after the block's
    state is undone (``Chain.push_network_block``; graphene's undo database
    takes back what plugins keep in the database).  A consumer without it
    keeps what it recorded of a popped block (the chain logs which ones).
    A consumer that keeps its own undo records for it bounds them to the
    chain's undo history (``MAX_UNDO_HISTORY`` blocks)."""

    def block_applied(applied: AppliedBlock) -> None:
        """Called synchronously right after ``applied`` was applied.  Must not
        raise for data reasons; must not block."""


class ICheckpointed(Interface):
    """A block consumer whose state goes into the node's checkpoints
    (nodeapi.chain.checkpoint, nodeapi.checkpoints).  A consumer not
    providing it makes every start a full replay.

    ``checkpoint_key`` names its section in the file (a short string, unique
    among plugins)."""

    checkpoint_key = Attribute("the section name of this plugin's records")

    def checkpoint_records() -> Any:
        """An iterable of JSON-able ``(key, value)`` records of the state
        after the last block applied.  The state is captured when this is
        called (copies, taking at most milliseconds); the records may be
        produced later, lazily, while blocks go on being applied."""

    def checkpoint_usable(meta: dict) -> bool:
        """Whether starting from a checkpoint at ``meta["block_num"]``
        (``meta["next_op"]``: the next 1.11 instance then) loses nothing
        this plugin needs (a search database already holding every document
        up to that block, say)."""

    def restore_checkpoint(meta: dict, records: list) -> None:
        """Put the state back as :meth:`checkpoint_records` described it
        (``records``: its ``[key, value]`` pairs in order); the plugin is
        fresh (no block applied yet)."""


class IAccountHistory(Interface):
    """What the history API set asks of the history plugin in use.

    Implemented by the in-memory ``account_history`` plugin and by
    ``searchdb``.  Each method returns a list of operation history entries
    ``{id, op, result, block_num, trx_in_block, op_in_trx, virtual_op,
    is_virtual, block_time}`` (or a Deferred firing with one).  Semantics:
    docs/wire-contract.rst section 6 (graphene ``history_api``).
    """

    def get_account_history(account_id: str, stop: int, limit: int, start: int) -> Any:
        """The account's operations, newest first: from ``1.11.start`` (0 =
        the newest) down to ``1.11.stop`` excluded (stop 0 includes op 0), at
        most ``limit`` entries (ints; the API set checks the limit).  ``[]``
        for an unknown account or start < stop.  docs/wire-contract.rst section 6;
        graphene ``history_api::get_account_history``."""

    def get_relative_account_history(account_id: str, stop: int, limit: int, start: int) -> Any:
        """The account's entries by its 1-based sequence numbers, ``[stop,
        start]`` inclusive (start 0 = the latest), newest first, at most
        ``limit``.  docs/wire-contract.rst section 6; graphene
        ``history_api::get_relative_account_history``."""

    def get_account_history_operations(
        account_id: str, operation_type: int, start: int, stop: int, limit: int
    ) -> Any:
        """Like :meth:`get_account_history` (note the argument order:
        ``start`` before ``stop``) but only operations whose type number is
        ``operation_type``, at most ``limit``.  docs/wire-contract.rst section 6;
        graphene ``history_api::get_account_history_operations``."""

    def get_account_history_by_time(account_id: str, limit: int, start: Any) -> Any:
        """The account's operations at or before ``start`` (seconds since
        the epoch, None = no bound), newest first, at most ``limit``;
        graphene ``history_api::get_account_history_by_time``."""

    def get_block_operation_history(block_num: int, trx_in_block: Any) -> Any:
        """The operations of block ``block_num`` ordered by (trx_in_block,
        op_in_trx, virtual_op); only transaction ``trx_in_block``'s unless
        it is None.  graphene ``history_api::get_block_operation_history``."""

    def get_block_operations_by_time(start: Any) -> Any:
        """The operations of the newest block holding operations whose time
        is at or before ``start`` (seconds, None = the newest), newest
        first; graphene ``history_api::get_block_operations_by_time``."""

    def get_history_objects(ids: list) -> Any:
        """``{id: object}`` (or a Deferred firing with it) for the
        operation history ``1.11.M`` and account history ``2.9.N`` ids of
        ``ids`` that are held (graphene ``operation_history_object``,
        ``account_transaction_history_object``; ``get_objects``)."""
