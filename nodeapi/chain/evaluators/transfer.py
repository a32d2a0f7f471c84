"""Transfer evaluators: transfer (0).

The family's later members (override_transfer 38, the blinded transfers
39-41) belong here.  Reference: graphene libraries/chain/transfer_evaluator.cpp.
"""

from nodeapi.chain.errors import (
    InsufficientBalance, InvalidOperation, TransferNotAuthorized, fc_assert)
from nodeapi.chain.evaluators.context import VOID, ApplyContext
from nodeapi.chain.balances import adjust_balance, overdraft_details, to_pretty_string
from nodeapi.chain.whitelist import is_authorized_asset
from nodeapi.protocol.flags import OVERRIDE_AUTHORITY
from nodeapi.protocol.asset import amount_of


def _positive(amount: dict, what: str) -> int:
    value = amount_of(amount)
    if value <= 0:
        raise InvalidOperation(f"{what} must be positive, got {value}")
    return value


def transfer(ctx: ApplyContext, data: dict) -> list:
    """transfer (0): move ``amount`` from ``from`` to ``to``; result void.

    :raises InvalidOperation: amount not positive, transfer to oneself;
        :class:`~nodeapi.chain.errors.TransferNotAuthorized` for an account
        the asset's white/black lists do not authorize
        (:func:`~nodeapi.chain.whitelist.is_authorized_asset`) or a
        ``transfer_restricted`` asset between two non-issuers, with the
        reference's codes and texts ("owner mismatch: 'to' account 1.2.7 is
        not whitelisted for asset 1.3.1 Unable to transfer 0.010 KYC from
        init0 to init1").
    :raises UnknownObject: ``to`` or the asset does not exist.
    :raises InsufficientBalance: ``from`` lacks the amount (the balance
        before the fee: transfer_evaluator.cpp ``do_evaluate``'s assertion
        and text, with the "Unable to transfer ..." its
        ``FC_RETHROW_EXCEPTIONS`` adds; the fee is taken after the
        transfer)."""
    state = ctx.state
    value = _positive(data["amount"], "Transfer amount")
    if data["from"] == data["to"]:
        raise InvalidOperation("Cannot transfer to the same account")
    state.require(data["to"])
    asset = state.require(data["amount"]["asset_id"])
    # FC_RETHROW_EXCEPTIONS( error, "Unable to transfer ${a} from ${f} to ${t}" )
    unable = (f"Unable to transfer {to_pretty_string(state, value, asset['id'])} from "
              f"{state.objects[data['from']]['name']} to {state.objects[data['to']]['name']}")
    if not is_authorized_asset(state, data["from"], asset):
        raise TransferNotAuthorized("from", f"'from' account {data['from']} is not whitelisted "
                                    f"for asset {asset['id']}", unable,
                                    "'from' account ${from} is not whitelisted for asset ${asset}",
                                    {"from": data["from"], "asset": asset["id"]})
    if not is_authorized_asset(state, data["to"], asset):
        raise TransferNotAuthorized("to", f"'to' account {data['to']} is not whitelisted for "
                                    f"asset {asset['id']}", unable,
                                    "'to' account ${to} is not whitelisted for asset ${asset}",
                                    {"to": data["to"], "asset": asset["id"]})
    if asset["options"]["flags"] & 0x08:  # transfer_restricted
        if asset["issuer"] not in (data["from"], data["to"]):
            raise TransferNotAuthorized(
                "restricted", f"Asset {asset['id']} has transfer_restricted flag enabled", unable,
                "Asset ${asset} has transfer_restricted flag enabled", {"asset": asset["id"]})
    balance = state.balance(data["from"], asset["id"])
    if balance < value:
        error = InsufficientBalance(
            f"Assert Exception: insufficient_balance: Insufficient Balance: "
            f"{to_pretty_string(state, balance, asset['id'])}, unable to transfer "
            f"'{to_pretty_string(state, value, asset['id'])}' from account "
            f"'{state.objects[data['from']]['name']}' to '{state.objects[data['to']]['name']}' "
            + unable)
        # the reference's format and its values (transfer_evaluator.cpp), beside ours
        error.fc_format = ("insufficient_balance: Insufficient Balance: ${balance}, unable to "
                           "transfer '${total_transfer}' from account '${a}' to '${t}'")
        error.details = dict(overdraft_details(state, data["from"], asset["id"], balance, value),
                             to=data["to"], a=state.objects[data["from"]]["name"],
                             t=state.objects[data["to"]]["name"],
                             total_transfer=to_pretty_string(state, value, asset["id"]))
        raise error
    adjust_balance(state, data["from"], asset["id"], -value)
    adjust_balance(state, data["to"], asset["id"], value)
    return VOID


def override_transfer(ctx: ApplyContext, data: dict) -> list:
    """override_transfer (38): the issuer of an asset with the
    ``override_authority`` flag moves it from ``from`` to ``to`` (graphene
    override_transfer_evaluator; after core-2295 only ``to`` must be
    authorized by the asset's white/black lists)."""
    state = ctx.state
    value = _positive(data["amount"], "Transfer amount")
    asset = state.require(data["amount"]["asset_id"])
    if not int(asset["options"]["flags"]) & OVERRIDE_AUTHORITY:
        raise InvalidOperation(f"override_transfer not permitted for asset {asset['id']}")
    fc_assert(asset["issuer"] == data["issuer"], "asset_type.issuer == op.issuer")
    state.require(data["from"])
    state.require(data["to"])
    fc_assert(is_authorized_asset(state, data["to"], asset),
              "is_authorized_asset( d, to_account, asset_type )",
              "The to_account is not allowed to transact the asset")
    fc_assert(state.balance(data["from"], asset["id"]) >= value,
              "d.get_balance( from_account, asset_type ).amount >= op.amount.amount")
    adjust_balance(state, data["from"], asset["id"], -value)
    adjust_balance(state, data["to"], asset["id"], value)
    return VOID
