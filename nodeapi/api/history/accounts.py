"""history API, the operations of one account (a section of
:class:`nodeapi.api.history.HistoryApi`): ``get_account_history``,
``get_relative_account_history``, ``get_account_history_operations``,
``get_account_history_by_time``, ``get_account_history_by_operations``.

Graphene reference: bitshares-core libraries/app/api.cpp (``history_api``)
and wire-contract section 6.  An account is a name or a ``1.2.N`` id; an
unknown account answers ``[]``, and so does every function without a
history plugin.  The answers come from ``node.account_history()`` (an
:class:`nodeapi.applied.IAccountHistory`: the in-memory ``account_history``
plugin or ``searchdb``), which may return a Deferred.  Each is a list of
``{id, op, result, block_num, trx_in_block, op_in_trx, virtual_op,
is_virtual, block_time}`` newest first.
"""

from typing import Any

from twisted.internet.defer import maybeDeferred

from nodeapi.api.base import Section, api_function
from nodeapi.api.history.arguments import (
    U16, U32, check_limit, limit_or_default, optional_time, parse_operation_history_id, uint,
    unsigned)
from nodeapi.errors import ApiError
from nodeapi.protocol.validation_checks import is_valid_name


def with_account(node, account: Any, answer) -> Any:
    """``answer(account id)`` of ``account`` (a name or id) over ``node``,
    or ``[]`` for an unknown account or without a history plugin (as the
    reference).  Without a chain (indexer mode) a valid name is resolved by
    ``node.account_lookup`` (the upstream's) and the answer is a Deferred.

    :raises ApiError: ``account`` is not a string; in indexer mode, a name
        when the node has no ``account_lookup``."""
    if not isinstance(account, str):
        raise ApiError(f"account: expected an account name or id, got {account!r}")
    if node.account_history() is None:
        return []
    if node.chain is None:  # indexer mode: no chain state to look names up in
        if account.startswith("1.2."):
            return answer(account)
        if node.account_lookup is None:
            raise ApiError("This indexer answers account ids (1.2.N), not names")
        if not is_valid_name(account):  # no account has it: nothing to ask upstream
            return []
        return node.account_lookup(account).addCallback(
            lambda account_id: [] if account_id is None else answer(account_id))
    obj = node.chain.state.account_by_name_or_id(account)
    return [] if obj is None else answer(obj["id"])


def in_memory(section, args: list) -> bool:
    """The ``shared`` rule (:func:`~nodeapi.api.base.api_function`) of the
    account history getters: their reply may be shared between identical
    calls while the chain state is unchanged when the in-memory
    ``account_history`` plugin answers (synchronously, from entries it
    changes only as blocks are applied, each of which changes the state's
    version first); not for ``searchdb`` answers (a Deferred from the
    search database: a gateway's only history)."""
    return section.node.plugins.get("account_history") is not None


class AccountHistory(Section):
    """An account's operations by operation id, by the account's sequence
    numbers, by type, by time (module docstring)."""

    @api_function(shared=in_memory)
    def get_account_history(self, account, stop, limit: int, start) -> Any:
        """Operations of ``account`` from ``start`` (newest included,
        ``1.11.0`` = the newest) back to ``stop`` (excluded; ``1.11.0``
        includes op 0), newest first, at most ``limit`` (<=
        ``api-limit-get-account-history``)."""
        check_limit(self.node, "get_account_history", limit)
        stop_n = parse_operation_history_id(stop, "stop")
        start_n = parse_operation_history_id(start, "start")
        if start_n != 0 and start_n < stop_n:
            return []
        return with_account(self.node, account, lambda account_id: (
            self.node.account_history().get_account_history(account_id, stop_n, limit, start_n)))

    @api_function(shared=in_memory)
    def get_relative_account_history(self, account, stop: int, limit: int, start: int) -> Any:
        """By the account's 1-based sequence numbers, ``[stop, start]``
        inclusive, newest first; ``start`` 0 = the latest."""
        check_limit(self.node, "get_relative_account_history", limit)
        unsigned(stop, "stop")
        unsigned(start, "start")
        return with_account(self.node, account, lambda account_id: (
            self.node.account_history().get_relative_account_history(account_id, stop, limit, start)))

    @api_function(shared=in_memory)
    def get_account_history_operations(self, account, operation_type: int, start, stop,
                                       limit: int) -> Any:
        """Operations of type ``operation_type`` from ``start`` (``1.11.0`` =
        the account's newest) back to ``stop`` (excluded; ``1.11.0`` includes
        op 0), newest first, at most ``limit``.  Note the argument order:
        start before stop."""
        check_limit(self.node, "get_account_history_operations", limit)
        start_n = parse_operation_history_id(start, "start")
        stop_n = parse_operation_history_id(stop, "stop")
        return with_account(self.node, account, lambda account_id: (
            self.node.account_history().get_account_history_operations(
                account_id, operation_type, start_n, stop_n, limit)))

    @api_function
    def get_account_history_by_time(self, account_name_or_id, limit=None, start=None) -> Any:
        """The account's operations at or before ``start`` (default: no
        bound), newest first, at most ``limit`` (default and maximum
        ``api-limit-get-account-history``); ``[]`` for an unknown account."""
        limit = limit_or_default(self.node, limit, "get_account_history")
        start_s = optional_time(start, "start")
        return with_account(self.node, account_name_or_id, lambda account_id: (
            self.node.account_history().get_account_history_by_time(account_id, limit, start_s)))

    @api_function
    def get_account_history_by_operations(self, account_name_or_id, operation_types,
                                          start: int, limit: int) -> Any:
        """``{total_count, operation_history_objs}``: the account's entries
        with sequence numbers ``[start, start + limit - 1]`` (graphene calls
        ``get_relative_account_history(account, start, limit, start + limit
        - 1)``, so its limit applies too), ``total_count`` of them, kept when
        their type is in ``operation_types`` (all when empty)."""
        check_limit(self.node, "get_account_history_by_operations", uint(limit, "limit", U32))
        if not isinstance(operation_types, list):
            raise ApiError("operation_types must be an array of operation type numbers")
        types = {uint(t, "operation_types", U16) for t in operation_types}
        start = uint(start, "start", U32)
        top = (limit + start - 1) & U32  # graphene computes it in uint32_t
        objs = maybeDeferred(self.get_relative_account_history, account_name_or_id, start,
                             limit, top)

        def detail(entries):
            kept = [e for e in entries if not types or e["op"][0] in types]
            return {"total_count": len(entries), "operation_history_objs": kept}

        return objs.addCallback(detail)
