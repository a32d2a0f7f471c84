"""Proposals: proposal_create (22), proposal_update (23), proposal_delete
(24), the execution of an approved proposal and the expiry of proposals;
objects 1.10.N.  committee_member_update_global_parameters (31) is applied
only inside a proposal (its evaluator is here too: it sets the pending
parameters the next maintenance applies).

Graphene reference: libraries/chain/proposal_evaluator.cpp,
proposal_object.cpp (``is_authorized_to_execute``), db_block.cpp
(``push_proposal``), db_update.cpp (``clear_expired_proposals``),
committee_member_evaluator.cpp, with every hardfork passed (a proposal may
nest at most one proposal_update; it may not update or delete a proposal
created after it; review periods of committee proposals).

Object (the wire shape; its times are seconds in the chain): ``{id,
expiration_time, review_period_time?,
proposed_transaction: {ref_block_num: 0, ref_block_prefix: 0, expiration,
operations, extensions: []}, required_active_approvals,
available_active_approvals, required_owner_approvals,
available_owner_approvals, available_key_approvals, proposer,
fail_reason}``; approval sets are sorted like graphene's flat_sets (account
ids by instance, keys by their bytes).

Execution: a proposal without review period is executed by the
proposal_update that completes its approvals (as the reference, creation
alone never executes it); one with a review period only when it expires.
Executing applies the proposed operations in a nested undo session, as
virtual operations of the transaction or block that executed it (their
results with them), and removes the proposal; a failure undoes them, keeps
the proposal with ``fail_reason`` and is retried at expiry; at expiry a
proposal is executed if authorized, then removed either way.
"""

from nodeapi.chain import authority as auth
from nodeapi.chain.errors import MissingAuthority, OperationRefused, fc_assert
from nodeapi.chain.evaluators.context import VOID, ApplyContext
from nodeapi.chain.evaluators.custom_authority import (
    check_proposed_before_bsip_40, viable_custom_authorities)
from nodeapi.chain.evaluators.samet_fund import check_no_unpaid_debt
from nodeapi.protocol.times import parse_time
from nodeapi.errors import ChainError, ProtocolError
from nodeapi.protocol.ids import instance_number
from nodeapi.protocol.keys import public_key_bytes
from nodeapi.protocol.config import COMMITTEE_ACCOUNT

KIND = "1.10"


def _accounts(ids) -> list:
    return sorted(set(ids), key=instance_number)


def _keys(keys) -> list:
    return sorted(set(keys), key=public_key_bytes)


def _nested_updates(ops: list, found: list) -> None:
    """The proposal ids every nested proposal_update / proposal_delete of
    ``ops`` (through nested proposal_create) names (graphene
    ``hardfork_visitor_1479``)."""
    for op in ops:
        kind, data = int(op[0]), op[1]
        if kind in (23, 24):
            found.append(instance_number(data["proposal"]))
        elif kind == 22:
            _nested_updates([w["op"] for w in data["proposed_ops"]], found)


def _check_nesting(ops: list, now: int) -> None:
    """``proposal_operation_hardfork_visitor`` on the proposed operations,
    at every level: at most one proposal_update directly inside each
    proposal_create, and the hardforks not yet passed at ``now`` (BSIP 40:
    :func:`~nodeapi.chain.evaluators.custom_authority.check_proposed_before_bsip_40`)."""
    updates = 0
    for op in ops:
        kind = int(op[0])
        check_proposed_before_bsip_40(kind, op[1], now)
        if kind == 22:
            _check_nesting([w["op"] for w in op[1]["proposed_ops"]], now)
        elif kind == 23:
            updates += 1
            fc_assert(updates <= 1, "!already_contains_proposal_update",
                      "At most one proposal update can be nested in a proposal!")


def proposal_create(ctx: ApplyContext, data: dict) -> list:
    """proposal_create (22); result ``[1, "1.10.N"]``."""
    state, now = ctx.state, ctx.now
    ops = [w["op"] for w in data["proposed_ops"]]
    _check_nesting(ops, now)
    params = ctx.parameters
    expiration = parse_time(data["expiration_time"])
    fc_assert(expiration > now, "o.expiration_time > block_time",
              "Proposal has already expired on creation.")
    fc_assert(expiration <= now + int(params["maximum_proposal_lifetime"]),
              "o.expiration_time <= block_time + global_parameters.maximum_proposal_lifetime",
              "Proposal expiration time is too far in the future.")
    review = data.get("review_period_seconds")
    fc_assert(review is None or int(review) < expiration - now,
              "!o.review_period_seconds || fc::seconds( *o.review_period_seconds ) < "
              "( o.expiration_time - block_time )",
              "Proposal review period must be less than its overall lifetime.")
    active, owner, other = auth.all_required(ops)
    active -= owner
    fc_assert(not other, "other.empty()",
              "Proposals containing operations requiring non-account authorities are not yet "
              "implemented.")
    if COMMITTEE_ACCOUNT in active or COMMITTEE_ACCOUNT in owner:
        minimum = int(params["committee_proposal_review_period"])
        if review is None:
            raise OperationRefused("proposal_create", "review_period_required",
                                   "Review period not given, but at least ${min} required",
                                   {"min": minimum})
        if int(review) < minimum:
            raise OperationRefused(
                "proposal_create", "review_period_insufficient",
                "Review period of ${t} specified, but at least ${min} required",
                {"t": int(review), "min": minimum})
    new_instance = state.next_instance_of(KIND)
    nested = []
    _nested_updates(ops, nested)
    fc_assert(not nested or new_instance > max(nested),
              "vtor_1479.nested_update_count == 0 || proposal.id.instance() > "
              "vtor_1479.max_update_instance",
              "Cannot update/delete a proposal with a future id!")
    fields = {
        "expiration_time": expiration,
        "proposed_transaction": {"ref_block_num": 0, "ref_block_prefix": 0,
                                 "expiration": expiration, "operations": ops,
                                 "extensions": []},
        "required_active_approvals": _accounts(active),
        "available_active_approvals": [],
        "required_owner_approvals": _accounts(owner),
        "available_owner_approvals": [],
        "available_key_approvals": [],
        "proposer": data["fee_paying_account"],
        "fail_reason": "",
    }
    if review is not None:
        fields = dict(fields, review_period_time=expiration - int(review))
        # keep graphene's field order: review_period_time after expiration_time
        fields = {k: fields[k] for k in ("expiration_time", "review_period_time",
                                         *[f for f in fields if f not in (
                                             "expiration_time", "review_period_time")])}
    obj = state.create(KIND, fields)
    return [1, obj["id"]]


def _dropped(proposal: dict) -> frozenset:
    """The accounts of ``proposal`` that graphene's
    ``required_approval_index`` has dropped although the proposal still
    names them (its chain-private state: :func:`_dropped_after`)."""
    return getattr(proposal, "private", None) or frozenset()


def _named(proposal: dict) -> set:
    return {a for field in ("required_active_approvals", "required_owner_approvals",
                            "available_active_approvals", "available_owner_approvals")
            for a in proposal.get(field, ())}


def approval_index_accounts(proposal: dict) -> set:
    """The accounts whose proposals (``get_proposed_transactions``,
    ``get_full_accounts``) list ``proposal``: graphene's
    ``required_approval_index`` (proposal_object.cpp), which enters the
    required and available approvals when the proposal is created, then
    follows only the changes of the available approvals
    (``insert_or_remove_delta``, active then owner): an approval removed
    drops its account even when the proposal still requires it, until it
    approves again.  A store restored from a checkpoint lists every named
    account again, as graphene rebuilds the index from the objects at
    start."""
    return _named(proposal) - _dropped(proposal)


def _dropped_after(before: dict, after: dict) -> frozenset:
    """The dropped accounts of a proposal changed from ``before`` to
    ``after``: the index set of ``before``, less the accounts removed from
    and plus those added to the available active approvals, then the same
    for the owner approvals (``required_approval_index::object_modified``);
    what ``after`` names and the index lacks."""
    members = approval_index_accounts(before)
    for field in ("available_active_approvals", "available_owner_approvals"):
        old, new = set(before.get(field, ())), set(after.get(field, ()))
        members -= old - new
        members |= new - old
    return frozenset(_named(after) - members)


def proposal_update(ctx: ApplyContext, data: dict) -> list:
    """proposal_update (23): add / remove approvals; executes the proposal
    once authorized unless it has a review period."""
    state = ctx.state
    proposal = state.require(data["proposal"])
    review = proposal.get("review_period_time")
    adding = data.get("active_approvals_to_add") or data.get("owner_approvals_to_add")
    if review is not None and ctx.now >= review:
        fc_assert(not adding, "o.active_approvals_to_add.empty() && "
                              "o.owner_approvals_to_add.empty()",
                  "This proposal is in its review period. No new approvals may be added.")
    for aid in data.get("active_approvals_to_remove") or ():
        fc_assert(aid in proposal["available_active_approvals"],
                  "_proposal->available_active_approvals.find(id) != "
                  "_proposal->available_active_approvals.end()")
    for aid in data.get("owner_approvals_to_remove") or ():
        fc_assert(aid in proposal["available_owner_approvals"],
                  "_proposal->available_owner_approvals.find(id) != "
                  "_proposal->available_owner_approvals.end()")
    obj = state.modify(proposal["id"])

    def update(field, add, remove):
        kept = set(obj[field]) | set(data.get(add) or ())
        kept -= set(data.get(remove) or ())
        obj[field] = _keys(kept) if field == "available_key_approvals" else _accounts(kept)
    update("available_active_approvals", "active_approvals_to_add", "active_approvals_to_remove")
    update("available_owner_approvals", "owner_approvals_to_add", "owner_approvals_to_remove")
    update("available_key_approvals", "key_approvals_to_add", "key_approvals_to_remove")
    dropped = _dropped_after(proposal, obj)
    if dropped != _dropped(proposal):
        obj = state.annotate(obj["id"], dropped)
    if review is None and is_authorized_to_execute(ctx, obj):
        try:
            execute_proposal(ctx, obj)
        except (ChainError, ProtocolError) as exc:
            state.modify(obj["id"])["fail_reason"] = str(exc)
    return VOID


def proposal_delete(ctx: ApplyContext, data: dict) -> list:
    """proposal_delete (24): by an account whose (owner with
    ``using_owner_authority``) approval the proposal requires."""
    proposal = ctx.state.require(data["proposal"])
    required = proposal["required_owner_approvals" if data.get("using_owner_authority")
                        else "required_active_approvals"]
    fc_assert(data["fee_paying_account"] in required,
              "required_approvals->find(o.fee_paying_account) != required_approvals->end()",
              "Provided authority is not authoritative for this proposal.")
    ctx.state.remove(proposal["id"])
    return VOID


def committee_member_update_global_parameters(ctx: ApplyContext, data: dict) -> list:
    """committee_member_update_global_parameters (31): only inside an
    executed proposal; the new parameters wait in ``pending_parameters``
    of 2.0.0 until the next maintenance."""
    fc_assert(ctx.proposed, "trx_state->_is_proposed_trx")
    ctx.state.modify("2.0.0")["pending_parameters"] = data["new_parameters"]
    return VOID


def is_authorized_to_execute(ctx: ApplyContext, proposal: dict) -> bool:
    """graphene ``proposal_object::is_authorized_to_execute``: the proposed
    operations' authorities are met by the available approvals (accounts
    and keys; the committee allowed; custom authorities counted), and no
    key approval is superfluous."""
    state = ctx.state
    try:
        auth.verify_authority(
            proposal["proposed_transaction"]["operations"],
            set(proposal["available_key_approvals"]), state.require,
            int(ctx.parameters["max_authority_depth"]),
            viable_custom_authorities(state, ctx.now), allow_committee=True,
            approved_active=set(proposal["available_active_approvals"]),
            approved_owner=set(proposal["available_owner_approvals"]))
    except (MissingAuthority, ChainError, ProtocolError):
        return False
    return True


def execute_proposal(ctx: ApplyContext, proposal: dict) -> None:
    """graphene ``push_proposal``: apply the proposed operations in a
    nested session (each as a virtual operation with its result), then
    remove the proposal; on failure nothing stays applied and the error is
    raised.  The session counts towards the nesting limit it shares with
    take-profit actions (:meth:`ApplyContext.open_nested_session`).  Each
    operation is applied by ``ctx.apply_operation`` (the registry's
    :func:`~nodeapi.chain.evaluators.registry.apply_operation`, handed over
    by the chain: the registry imports this module)."""
    state = ctx.state
    vops_before = len(ctx.virtual_ops)
    was_proposed = ctx.proposed
    ctx.open_nested_session()
    state.begin()
    try:
        ctx.proposed = True
        for op in proposal["proposed_transaction"]["operations"]:
            at = len(ctx.virtual_ops)
            result = ctx.apply_operation(ctx, op)
            ctx.virtual_ops.insert(at, (op, result))
        check_no_unpaid_debt(state)
        state.remove(proposal["id"])
    except BaseException:
        state.rollback()
        del ctx.virtual_ops[vops_before:]
        raise
    finally:
        ctx.proposed = was_proposed
        ctx.nested_sessions -= 1
    state.commit()


def clear_expired_proposals(ctx: ApplyContext) -> None:
    """graphene ``clear_expired_proposals``: each proposal whose
    ``expiration_time`` is at or before the block time is executed if
    authorized, then removed (executed or failed) - oldest expiration
    first."""
    state = ctx.state
    if not state.by_kind.get(KIND):  # no proposals: the usual block
        return
    due = sorted((state.objects[oid]["expiration_time"], instance_number(oid), oid)
                 for oid in state.ids_of_type(KIND + "."))
    for when, _n, oid in due:
        if when > ctx.now:
            break
        proposal = state.find(oid)
        if proposal is None:
            continue
        if is_authorized_to_execute(ctx, proposal):
            try:
                execute_proposal(ctx, proposal)
                continue
            except (ChainError, ProtocolError):
                pass
        if state.find(oid) is not None:
            state.remove(oid)
