"""Hashed time-lock contracts: htlc_create (49), htlc_redeem (50, with the
virtual htlc_redeemed 51), htlc_extend (52), and the refund at expiry
(virtual htlc_refund 53); objects 1.16.N.

Graphene reference: libraries/chain/htlc_evaluator.cpp, htlc_object.hpp
(object shape; reflected in small_objects.cpp), db_update.cpp
(``clear_expired_htlcs``), with the BSIP64 hardfork passed (hash160
allowed, the memo extension stored, transfer-restricted assets only to or
from their issuer, a zero ``preimage_size`` accepting any preimage length).

Object (wire): ``{id, transfer: {from, to, amount, asset_id}, conditions:
{hash_lock: {preimage_hash: [which, hex], preimage_size}, time_lock:
{expiration}}, memo?}`` (``memo`` only when the creation carried one, as fc
leaves out an empty optional).  ``preimage_hash`` is the ``htlc_hash``
static_variant: 0 ripemd160, 1 sha1, 2 sha256, 3 hash160
(ripemd160 of sha256).

Committee parameters: the ``updatable_htlc_options`` extension of the chain
parameters (``max_timeout_secs``, ``max_preimage_size``; the bundled
genesis sets 2592000 and 1024000).  A chain without it refuses htlc_create
with graphene's "HTLC Committee options are not set."; graphene's
htlc_extend reads the absent options without a check (undefined), here it
fails with the same text.  Failures raise
:class:`~nodeapi.chain.errors.InvalidOperation` with graphene's
``FC_ASSERT`` texts.
"""

import hashlib

from nodeapi.protocol.ids import instance_number
from nodeapi.chain.errors import fc_assert
from nodeapi.chain.evaluators.context import VOID, ApplyContext
from nodeapi.chain.balances import adjust_balance
from nodeapi.chain.whitelist import is_authorized_asset
from nodeapi.protocol.keys import ripemd160
from nodeapi.protocol.config import MAX_TIME
from nodeapi.protocol.flags import TRANSFER_RESTRICTED
from nodeapi.protocol.asset import amount_of, asset, core



def _sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


#: ``htlc_hash`` alternatives: which -> digest function
HASHES = {
    0: ripemd160,
    1: lambda data: hashlib.sha1(data).digest(),
    2: _sha256,
    3: lambda data: ripemd160(_sha256(data)),
}


def preimage_matches(preimage_hash: list, preimage: bytes) -> bool:
    """True when ``preimage`` hashes to ``preimage_hash`` (``[which, hex]``)
    with its algorithm (graphene ``htlc_redeem_visitor``)."""
    which, digest = preimage_hash
    return HASHES[int(which)](preimage).hex() == digest.lower()


def htlc_options(ctx: ApplyContext) -> dict:
    """The committee's ``updatable_htlc_options`` ``{max_timeout_secs,
    max_preimage_size}``; raises :class:`InvalidOperation` ("HTLC Committee
    options are not set.") when the chain parameters lack them."""
    ext = ctx.parameters.get("extensions") or {}
    options = ext.get("updatable_htlc_options") if isinstance(ext, dict) else None
    fc_assert(options is not None, "htlc_options", "HTLC Committee options are not set.")
    return options


def htlc_create(ctx: ApplyContext, data: dict) -> list:
    """htlc_create (49): escrow ``amount`` from ``from`` until ``head time +
    claim_period_seconds``; result ``[1, "1.16.N"]``.  Both ``from`` and
    ``to`` must be authorized to hold the asset
    (:func:`~nodeapi.chain.whitelist.is_authorized_asset`; graphene
    ``htlc_create_evaluator::do_evaluate``, its texts)."""
    state = ctx.state
    options = htlc_options(ctx)
    fc_assert(int(data["claim_period_seconds"]) <= int(options["max_timeout_secs"]),
              "o.claim_period_seconds <= htlc_options->max_timeout_secs",
              "HTLC Timeout exceeds allowed length")
    fc_assert(int(data["preimage_size"]) <= int(options["max_preimage_size"]),
              "o.preimage_size <= htlc_options->max_preimage_size",
              "HTLC preimage length exceeds allowed length")
    amount = data["amount"]
    value, asset_id = amount_of(amount), amount["asset_id"]
    fc_assert(state.balance(data["from"], asset_id) >= value,
              "d.get_balance( o.from, o.amount.asset_id) >= (o.amount)", "Insufficient funds")
    asset = state.require(asset_id)
    state.require(data["from"])
    state.require(data["to"])
    if int(asset["options"]["flags"]) & TRANSFER_RESTRICTED:
        fc_assert(asset["issuer"] in (data["from"], data["to"]),
                  "!asset_to_transfer.is_transfer_restricted() || op.from == "
                  "asset_to_transfer.issuer || op.to == asset_to_transfer.issuer",
                  f"Asset {asset_id} cannot be transfered.")
    for side, account in (("from_account", data["from"]), ("to_account", data["to"])):
        fc_assert(is_authorized_asset(state, account, asset),
                  f"is_authorized_asset( d, {side}, asset_to_transfer )",
                  f"Asset {asset_id} is not authorized for account {account}.")
    adjust_balance(state, data["from"], asset_id, -value)
    fields = {
        "transfer": {"from": data["from"], "to": data["to"], "amount": value,
                     "asset_id": asset_id},
        "conditions": {
            "hash_lock": {"preimage_hash": [int(data["preimage_hash"][0]),
                                            data["preimage_hash"][1]],
                          "preimage_size": int(data["preimage_size"])},
            "time_lock": {"expiration": ctx.now + int(data["claim_period_seconds"])},
        },
    }
    ext = data.get("extensions") or {}
    if isinstance(ext, dict) and ext.get("memo") is not None:
        fields["memo"] = ext["memo"]
    return [1, state.create("1.16", fields)["id"]]


def _hash_lock(htlc: dict) -> tuple:
    lock = htlc["conditions"]["hash_lock"]
    return lock["preimage_hash"], int(lock["preimage_size"])


def htlc_redeem(ctx: ApplyContext, data: dict) -> list:
    """htlc_redeem (50): with the right preimage, pay the HTLC to its ``to``
    account, emit the virtual htlc_redeemed (51) and remove it; result
    void."""
    state = ctx.state
    htlc = state.require(data["htlc_id"])
    preimage = bytes.fromhex(data["preimage"])
    preimage_hash, size = _hash_lock(htlc)
    if size > 0:
        fc_assert(len(preimage) == size,
                  "op.preimage.size() == htlc_obj->conditions.hash_lock.preimage_size",
                  "Preimage size mismatch.")
    fc_assert(preimage_matches(preimage_hash, preimage),
              "htlc_obj->conditions.hash_lock.preimage_hash.visit( vtor )",
              "Provided preimage does not generate correct hash.")
    transfer = htlc["transfer"]
    amount = asset(amount_of(transfer), transfer["asset_id"])
    adjust_balance(state, transfer["to"], amount["asset_id"], amount["amount"])
    ctx.virtual_ops.append(([51, {
        "fee": core(0),
        "htlc_id": htlc["id"], "from": transfer["from"], "to": transfer["to"],
        "redeemer": data["redeemer"], "amount": amount,
        "htlc_preimage_hash": preimage_hash, "htlc_preimage_size": size,
        "preimage": data["preimage"],
    }], VOID))
    state.remove(htlc["id"])
    return VOID


def htlc_extend(ctx: ApplyContext, data: dict) -> list:
    """htlc_extend (52): the creator moves the expiration
    ``seconds_to_add`` later, at most ``max_timeout_secs`` after the head
    time; result void."""
    state = ctx.state
    htlc = state.require(data["htlc_id"])
    fc_assert(data["update_issuer"] == htlc["transfer"]["from"],
              "o.update_issuer == htlc_obj->transfer.from",
              "HTLC may only be extended by its creator.")
    options = htlc_options(ctx)
    expiration = htlc["conditions"]["time_lock"]["expiration"]
    extended = expiration + int(data["seconds_to_add"])
    fc_assert(extended < MAX_TIME,
              "htlc_obj->conditions.time_lock.expiration.sec_since_epoch() + "
              "static_cast<uint64_t>(o.seconds_to_add) < "
              "fc::time_point_sec::maximum().sec_since_epoch()",
              "Extension would cause an invalid date")
    fc_assert(extended <= ctx.now + int(options["max_timeout_secs"]),
              "htlc_obj->conditions.time_lock.expiration + o.seconds_to_add <= "
              "db().head_block_time() + htlc_options->max_timeout_secs",
              "Extension pushes contract too far into the future")
    htlc = state.modify(htlc["id"])
    conditions = dict(htlc["conditions"])
    conditions["time_lock"] = {"expiration": extended}
    htlc["conditions"] = conditions
    return VOID


def clear_expired_htlcs(state, now: int) -> list:
    """graphene ``database::clear_expired_htlcs``: refund every 1.16.N with
    ``expiration <= now`` (by expiration, then id) to its ``from`` account
    and remove it; returns the virtual htlc_refund operations ``[(op,
    result)]``."""
    if not state.htlc_ids:  # no HTLCs: the usual block
        return []
    expired = [(state.objects[o]["conditions"]["time_lock"]["expiration"],
                instance_number(o), o) for o in state.htlc_ids]
    vops = []
    for when, _n, oid in sorted(expired):
        if when > now:
            break
        htlc = state.objects[oid]
        transfer = htlc["transfer"]
        amount = asset(amount_of(transfer), transfer["asset_id"])
        adjust_balance(state, transfer["from"], amount["asset_id"], amount["amount"])
        preimage_hash, size = _hash_lock(htlc)
        vops.append(([53, {
            "fee": core(0), "htlc_id": oid,
            "to": transfer["from"], "original_htlc_recipient": transfer["to"],
            "htlc_amount": amount, "htlc_preimage_hash": preimage_hash,
            "htlc_preimage_size": size,
        }], VOID))
        state.remove(oid)
    return vops

