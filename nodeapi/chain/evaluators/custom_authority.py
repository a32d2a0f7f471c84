"""Custom active authorities (BSIP 40): custom_authority_create (54),
custom_authority_update (55), custom_authority_delete (56); objects 1.17.N;
the authorities they lend to transactions; their removal after expiry.

Graphene reference: libraries/chain/custom_authority_evaluator.cpp,
custom_authority_object.hpp, db_getter.cpp
(``get_viable_custom_authorities``), db_maint.cpp
(``delete_expired_custom_auths``), protocol/transaction.cpp
(``verify_authority``: an operation's required active authority of an
account is also met by a viable custom authority of that account).

Object (wire): ``{id, account, enabled, valid_from, valid_to,
operation_type, auth, restrictions: [[restriction id, restriction], ...],
restriction_counter}``.

Hardfork: under mainnet rules BSIP 40 is in force only from
:data:`HARDFORK_BSIP_40_TIME` (2030-01-01): before it custom_authority_create
fails with "Custom active authorities are not yet enabled", and proposals
may neither carry these operations nor set the options below
(:func:`check_proposed_before_bsip_40`).

Committee parameters: the ``custom_authority_options`` extension of the
chain parameters (``max_custom_authority_lifetime_seconds``,
``max_custom_authorities_per_account``,
``max_custom_authorities_per_account_op``,
``max_custom_authority_restrictions``); without it creation fails with
graphene's "Cannot use custom authorities yet: global configuration not
set".  Failures raise :class:`~nodeapi.chain.errors.InvalidOperation` with
graphene's ``FC_ASSERT`` texts.

BSIP 40 is not in force before :data:`HARDFORK_BSIP_40_TIME`
(hardfork.d/BSIP_40.hf: a placeholder date "until a hardfork date is
scheduled", so on today's chains never): custom_authority_create's
``do_evaluate`` refuses first of all ("Custom active authorities are not yet
enabled"), and a proposal may not carry any of the three operations
(:func:`bsip40_passed`, used by the proposal evaluator).
"""

from nodeapi.chain.errors import InvalidOperation, fc_assert
from nodeapi.chain.evaluators.context import VOID, ApplyContext
from nodeapi.protocol.times import parse_time
from nodeapi.protocol.operations import OPERATIONS
from nodeapi.protocol.restrictions import restriction_count, restriction_predicate

KIND = "1.17"
#: HARDFORK_BSIP_40_TIME (hardfork.d/BSIP_40.hf): 2030-01-01T00:00:00, "a dummy
#: date until a hardfork date is scheduled"; under mainnet rules custom
#: authorities are not enabled before it
HARDFORK_BSIP_40_TIME = 1893456000
#: the custom authority operations whose fees a committee may not set before it
CUSTOM_AUTHORITY_OPERATIONS = (54, 55, 56)


def bsip_40_passed(now: int) -> bool:
    """``HARDFORK_BSIP_40_PASSED(now)`` (``now``: head block time, seconds)."""
    return now >= HARDFORK_BSIP_40_TIME


def check_proposed_before_bsip_40(kind: int, data: dict, now: int) -> None:
    """The BSIP 40 part of proposal_evaluator.cpp's
    ``proposal_operation_hardfork_visitor`` for one proposed operation of
    type ``kind``: before the hardfork, custom_authority_create / update /
    delete may not be proposed ("Not allowed until hardfork BSIP 40"), and a
    committee_member_update_global_parameters may neither set
    ``custom_authority_options`` nor fees of those operations.

    :raises InvalidOperation: with the reference's ``FC_ASSERT`` texts.
    """
    if bsip_40_passed(now):
        return
    if kind in CUSTOM_AUTHORITY_OPERATIONS:
        fc_assert(False, "HARDFORK_BSIP_40_PASSED(block_time)",
                  "Not allowed until hardfork BSIP 40")
    if kind != 31:
        return
    params = data["new_parameters"]
    ext = params.get("extensions") or {}
    fc_assert(not (isinstance(ext, dict) and ext.get("custom_authority_options") is not None),
              "!op.new_parameters.extensions.value.custom_authority_options.valid()",
              "Unable to set Custom Authority Options before hardfork BSIP 40")
    fees = {int(tag) for tag, _ in (params.get("current_fees") or {}).get("parameters", [])}
    for tag, name in zip(CUSTOM_AUTHORITY_OPERATIONS,
                         ("create", "update", "delete")):
        fc_assert(tag not in fees,
                  f"!op.new_parameters.current_fees->exists<custom_authority_{name}_operation>()",
                  "Unable to define fees for custom authority operations prior to hardfork "
                  "BSIP 40")


def _options(ctx: ApplyContext) -> dict:
    ext = ctx.parameters.get("extensions") or {}
    options = ext.get("custom_authority_options") if isinstance(ext, dict) else None
    fc_assert(options is not None, "config.valid()",
              "Cannot use custom authorities yet: global configuration not set")
    return options


def _predicate(restrictions: list, operation_type: int):
    """The restrictions' predicate on the operation type (raises
    :class:`InvalidOperation` with the reference's text)."""
    return restriction_predicate(restrictions, OPERATIONS[operation_type][1])


def _lifetime(ctx: ApplyContext, options: dict, valid_to: int) -> None:
    fc_assert(valid_to > ctx.now, "op.valid_to > now",
              "Custom authority expiration must be in the future")
    fc_assert(valid_to - ctx.now <= int(options["max_custom_authority_lifetime_seconds"]),
              "(op.valid_to - now).to_seconds() <= config->max_custom_authority_lifetime_seconds",
              "Custom authority lifetime exceeds maximum limit")


def _account_auths_exist(ctx: ApplyContext, auth: dict) -> None:
    for account, _weight in auth.get("account_auths", []):
        if ctx.state.find(account) is None:
            raise InvalidOperation(f"Unable to find Object {account}")


def _of(state, account: str, operation_type=None) -> list:
    return [state.objects[oid] for oid in state.ids_of_type(KIND + ".")
            if state.objects[oid]["account"] == account
            and (operation_type is None or int(state.objects[oid]["operation_type"])
                 == operation_type)]


def custom_authority_create(ctx: ApplyContext, data: dict) -> list:
    """custom_authority_create (54); result ``[1, "1.17.N"]``."""
    state = ctx.state
    fc_assert(bsip_40_passed(ctx.now), "HARDFORK_BSIP_40_PASSED(now)",
              "Custom active authorities are not yet enabled")
    state.require(data["account"])
    options = _options(ctx)
    valid_to = parse_time(data["valid_to"])
    _lifetime(ctx, options, valid_to)
    operation_type = int(data["operation_type"])
    restrictions = data.get("restrictions", [])
    _predicate(restrictions, operation_type)
    fc_assert(restriction_count(restrictions) <= int(options["max_custom_authority_restrictions"]),
              "restriction_count <= config->max_custom_authority_restrictions",
              "Custom authority has more than the maximum number of restrictions")
    _account_auths_exist(ctx, data["auth"])
    fc_assert(len(_of(state, data["account"])) < int(options["max_custom_authorities_per_account"]),
              "std::distance(range.first, range.second) < "
              "config->max_custom_authorities_per_account",
              "Cannot create custom authority: account already has maximum number")
    fc_assert(len(_of(state, data["account"], operation_type))
              < int(options["max_custom_authorities_per_account_op"]),
              "std::distance(range.first, range.second) < "
              "config->max_custom_authorities_per_account_op",
              "Cannot create custom authority: account already has maximum number for this "
              "operation type")
    obj = state.create(KIND, {
        "account": data["account"], "enabled": bool(data["enabled"]),
        "valid_from": parse_time(data["valid_from"]), "valid_to": valid_to,
        "operation_type": operation_type, "auth": data["auth"],
        "restrictions": [[i, r] for i, r in enumerate(restrictions)],
        "restriction_counter": len(restrictions)})
    return [1, obj["id"]]


def custom_authority_update(ctx: ApplyContext, data: dict) -> list:
    """custom_authority_update (55)."""
    state = ctx.state
    old = state.require(data["authority_to_update"])
    fc_assert(old["account"] == data["account"], "old_object->account == op.account",
              "Cannot update a different account's custom authority")
    if data.get("new_enabled") is not None:
        fc_assert(bool(data["new_enabled"]) != old["enabled"],
                  "*op.new_enabled != old_object->enabled",
                  "Custom authority update specifies an enabled flag, but flag is not changed")
    valid_from, valid_to = old["valid_from"], old["valid_to"]
    if data.get("new_valid_from") is not None:
        fc_assert(parse_time(data["new_valid_from"]) != valid_from,
                  "*op.new_valid_from != old_object->valid_from",
                  "Custom authority update specifies a new valid from date, but date is not "
                  "changed")
        valid_from = parse_time(data["new_valid_from"])
    if data.get("new_valid_to") is not None:
        fc_assert(parse_time(data["new_valid_to"]) != valid_to,
                  "*op.new_valid_to != old_object->valid_to",
                  "Custom authority update specifies a new valid to date, but date is not "
                  "changed")
        valid_to = parse_time(data["new_valid_to"])
        _lifetime(ctx, _options(ctx), valid_to)
    fc_assert(valid_from < valid_to, "valid_from < valid_to",
              "Custom authority validity begin date must be before expiration date")
    if data.get("new_auth") is not None:
        fc_assert(data["new_auth"] != old["auth"], "*op.new_auth != old_object->auth",
                  "Custom authority update specifies a new authentication authority, but "
                  "authority is not changed")
        _account_auths_exist(ctx, data["new_auth"])
    held = {int(i): r for i, r in old["restrictions"]}
    remove = [int(i) for i in data.get("restrictions_to_remove", [])]
    for rid in remove:
        fc_assert(rid in held, "old_object->restrictions.count(id) == 1",
                  f"Cannot remove restriction ID {rid}: ID not found")
    add = data.get("restrictions_to_add", [])
    fc_assert(int(old["restriction_counter"]) + len(add) <= 0xFFFF,
              "old_object->restriction_counter + op.restrictions_to_add.size() > "
              "old_object->restriction_counter",
              "Unable to add restrictions: causes wraparound of restriction IDs")
    count = sum(restriction_count([r]) for i, r in held.items() if i not in remove)
    count += restriction_count(add)
    limit = int(_options(ctx)["max_custom_authority_restrictions"])
    fc_assert(count <= limit, "restriction_count <= config->max_custom_authority_restrictions",
              "Cannot update custom authority: updated authority would exceed the maximum "
              "number of restrictions")
    _predicate(add, int(old["operation_type"]))
    obj = state.modify(old["id"])
    if data.get("new_enabled") is not None:
        obj["enabled"] = bool(data["new_enabled"])
    obj["valid_from"], obj["valid_to"] = valid_from, valid_to
    if data.get("new_auth") is not None:
        obj["auth"] = data["new_auth"]
    kept = [[i, r] for i, r in sorted(held.items()) if i not in remove]
    counter = int(old["restriction_counter"])
    for r in add:
        kept.append([counter, r])
        counter += 1
    obj["restrictions"] = kept
    obj["restriction_counter"] = counter
    return VOID


def custom_authority_delete(ctx: ApplyContext, data: dict) -> list:
    """custom_authority_delete (56)."""
    old = ctx.state.require(data["authority_to_delete"])
    fc_assert(old["account"] == data["account"], "old_object->account == op.account",
              "Cannot delete a different account's custom authority")
    ctx.state.remove(old["id"])
    return VOID


def viable_custom_authorities(state, now: int):
    """graphene ``get_viable_custom_authorities`` as a function
    ``(account id, operation [type, data]) -> [authority]``: the ``auth``
    of each of the account's custom authorities for the operation's type
    that is enabled, valid at ``now`` (``valid_from <= now < valid_to``)
    and whose restrictions hold for the operation.  Restrictions that fail
    to build count as not holding, as the reference catches them."""
    if not state.ids_of_type(KIND + "."):
        return None

    def lookup(account: str, op: list) -> list:
        found = []
        for obj in _of(state, account, int(op[0])):
            if not (obj["enabled"] and obj["valid_from"] <= now < obj["valid_to"]):
                continue
            try:
                holds = restriction_predicate([r for _i, r in obj["restrictions"]],
                                              OPERATIONS[int(op[0])][1])(op[1])
            except (InvalidOperation, KeyError, TypeError, ValueError):
                holds = False
            if holds:
                found.append(obj["auth"])
        return found
    return lookup


def delete_expired_custom_authorities(state, now: int) -> None:
    """At maintenance: remove the custom authorities whose ``valid_to`` is
    before ``now`` (graphene ``delete_expired_custom_auths``)."""
    for oid in state.ids_of_type(KIND + "."):
        if state.objects[oid]["valid_to"] < now:
            state.remove(oid)
