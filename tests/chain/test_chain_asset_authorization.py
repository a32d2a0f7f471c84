"""Asset authorization (graphene ``is_authorized_asset``) where
bitshares-core 7.x checks it besides transfers and orders, with its texts:

- evaluator.cpp ``generic_evaluator::prepare_fee``: the fee asset;
- htlc_evaluator.cpp ``htlc_create_evaluator::do_evaluate``: ``from`` and
  ``to``;
- vesting_balance_evaluator.cpp ``vesting_balance_create_evaluator::
  do_evaluate``: creator and owner;
- withdraw_permission_evaluator.cpp ``withdraw_permission_claim_evaluator::
  do_evaluate``: the authorized account, then the giver;
- market_evaluator.cpp ``limit_order_create_evaluator::do_evaluate``: the
  seller's balance ("insufficient balance");
- account_evaluator.cpp: the account evaluators' texts.

KYC (1.3.1) has the white_list flag and init0 as its only whitelist
authority: an account may hold it while init0 whitelists it.  A refused
operation changes nothing."""

import hashlib

import pytest

from nodeapi.chain.errors import InsufficientBalance, InvalidOperation, OperationRefused
from nodeapi.protocol.times import format_time

from kit.chain import CORE, asset_options, claim_wire, open_chain, produce
from kit.chain import push_wire as push
from kit.signing import sign_wire

INIT0, INIT1, INIT2 = "1.2.6", "1.2.7", "1.2.8"
WHITE_LIST = 0x02
PREIMAGE = b"money rules"


def amount(n, asset_id):
    return {"amount": n, "asset_id": asset_id}


def listing(listed, new_listing, who=INIT0):
    return [7, {"authorizing_account": who, "account_to_list": listed,
                "new_listing": new_listing, "extensions": []}]


@pytest.fixture
def chain(genesis, tmp_path):
    """init1 and init2 hold core; init1 (whitelisted) holds 10^8 KYC, whose
    fee pool has 10^9 core (1 KYC satoshi = 1 core satoshi)."""
    chain = open_chain(genesis, tmp_path / "auth")
    push(chain, claim_wire())
    for who in (INIT1, INIT2):
        push(chain, [0, {"from": INIT0, "to": who, "amount": amount(10 ** 10, CORE),
                         "extensions": []}])
    opts = dict(asset_options(flags=WHITE_LIST, perms=WHITE_LIST), whitelist_authorities=[INIT0])
    [[_t, kyc]] = push(chain, [10, {"issuer": INIT0, "symbol": "KYC", "precision": 3,
                                    "common_options": opts, "is_prediction_market": False,
                                    "extensions": []}])
    assert kyc == "1.3.1"
    push(chain, [16, {"from_account": INIT0, "asset_id": kyc, "amount": 10 ** 9,
                      "extensions": []}])
    push(chain, listing(INIT1, 1))
    push(chain, [14, {"issuer": INIT0, "asset_to_issue": amount(10 ** 8, kyc),
                      "issue_to_account": INIT1, "extensions": []}])
    produce(chain)
    yield chain
    chain.block_log.close()


def with_kyc_fee(chain, op):
    """``op`` with its required fee paid in KYC (through its core exchange
    rate 1:1)."""
    zero = [op[0], dict(op[1], fee=amount(0, CORE))]
    return [op[0], dict(op[1], fee=chain.required_fee(zero, "1.3.1"))]


def refused(chain, op, match, error=InvalidOperation, fee_in_kyc=False):
    """Push ``op`` (fee in core, or in KYC): refused with ``match``,
    nothing changed."""
    version = chain.state.balance(INIT1, "1.3.1"), chain.state.balance(INIT1, CORE)
    if fee_in_kyc:
        trx = sign_wire(chain, [with_kyc_fee(chain, op)])
        with pytest.raises(error, match=match):
            chain.push_transaction(trx)
    else:
        with pytest.raises(error, match=match):
            push(chain, op)
    assert (chain.state.balance(INIT1, "1.3.1"), chain.state.balance(INIT1, CORE)) == version


def transfer(frm, to, n, asset_id=CORE):
    return [0, {"from": frm, "to": to, "amount": amount(n, asset_id), "extensions": []}]


def test_fee_in_an_unauthorized_asset(chain):
    state = chain.state
    pool = state.objects["2.3.1"]["fee_pool"]
    op = with_kyc_fee(chain, transfer(INIT1, INIT0, 1))
    fee = op[1]["fee"]["amount"]
    chain.push_transaction(sign_wire(chain, [op]))
    assert state.balance(INIT1, "1.3.1") == 10 ** 8 - fee
    assert state.objects["2.3.1"]["fee_pool"] == pool - fee
    # init0 takes init1 off its white list: init1 may no longer pay in KYC
    push(chain, listing(INIT1, 0))
    produce(chain)
    refused(chain, transfer(INIT1, INIT0, 1),
            r"Assert Exception: is_authorized_asset\( d, \*fee_paying_account, \*fee_asset \): "
            r"Account 1\.2\.7 'init1' attempted to pay fee by using asset 1\.3\.1 'KYC', "
            r"which is unauthorized due to whitelist / blacklist$", fee_in_kyc=True)
    assert state.balance(INIT1, "1.3.1") == 10 ** 8 - fee


def htlc(frm, to, n):
    return [49, {"from": frm, "to": to, "amount": amount(n, "1.3.1"),
                 "preimage_hash": [1, hashlib.sha1(PREIMAGE).hexdigest()],
                 "preimage_size": len(PREIMAGE), "claim_period_seconds": 3600,
                 "extensions": {}}]


def test_htlc_create_needs_both_accounts_authorized(chain):
    refused(chain, htlc(INIT1, INIT2, 100),
            r"is_authorized_asset\( d, to_account, asset_to_transfer \): "
            r"Asset 1\.3\.1 is not authorized for account 1\.2\.8\.$")
    push(chain, listing(INIT2, 1))
    [[_t, hid]] = push(chain, htlc(INIT1, INIT2, 100))
    assert chain.state.objects[hid]["transfer"]["amount"] == 100
    assert chain.state.balance(INIT1, "1.3.1") == 10 ** 8 - 100
    push(chain, listing(INIT1, 0))
    produce(chain)
    refused(chain, htlc(INIT1, INIT2, 100),
            r"is_authorized_asset\( d, from_account, asset_to_transfer \): "
            r"Asset 1\.3\.1 is not authorized for account 1\.2\.7\.$")


def vesting(creator, owner, n):
    return [32, {"creator": creator, "owner": owner, "amount": amount(n, "1.3.1"),
                 "policy": [1, {"start_claim": "1970-01-01T00:00:00", "vesting_seconds": 0}]}]


def test_vesting_balance_create_needs_creator_and_owner_authorized(chain):
    refused(chain, vesting(INIT1, INIT2, 100),
            r"is_authorized_asset\( d, owner_account, asset_obj \): "
            r"The owner account is not allowed to transact the asset$")
    push(chain, listing(INIT2, 1))
    [[_t, vb]] = push(chain, vesting(INIT1, INIT2, 100))
    assert chain.state.objects[vb]["balance"] == amount(100, "1.3.1")
    push(chain, listing(INIT1, 0))
    produce(chain)
    refused(chain, vesting(INIT1, INIT2, 100),
            r"is_authorized_asset\( d, creator_account, asset_obj \): "
            r"The creator account is not allowed to transact the asset$")


def test_withdraw_permission_claim_needs_both_accounts_authorized(chain):
    [[_t, permit]] = push(chain, [25, {
        "withdraw_from_account": INIT1, "authorized_account": INIT2,
        "withdrawal_limit": amount(500, "1.3.1"), "withdrawal_period_sec": 3600,
        "periods_until_expiration": 10,
        "period_start_time": format_time(chain.head_block_time + 1)}])
    produce(chain, 2)
    claim = [27, {"withdraw_permission": permit, "withdraw_from_account": INIT1,
                  "withdraw_to_account": INIT2, "amount_to_withdraw": amount(100, "1.3.1")}]
    refused(chain, claim,
            r"is_authorized_asset\( d, to, _asset \): Account 1\.2\.8 'init2' is unauthorized "
            r"to transact asset 1\.3\.1 'KYC' due to whitelist / blacklist$")
    push(chain, listing(INIT2, 1))
    push(chain, claim)
    assert chain.state.balance(INIT2, "1.3.1") == 100
    push(chain, listing(INIT1, 0))
    produce(chain)
    refused(chain, claim,
            r"from_is_authorized: Account 1\.2\.7 'init1' is unauthorized to withdraw asset "
            r"1\.3\.1 'KYC' due to whitelist / blacklist$")
    assert chain.state.balance(INIT2, "1.3.1") == 100


def order(seller, sell, receive):
    return [1, {"seller": seller, "amount_to_sell": sell, "min_to_receive": receive,
                "expiration": "2030-01-01T00:00:00", "fill_or_kill": False,
                "extensions": {}}]


def test_limit_order_insufficient_balance(chain):
    """market_evaluator.cpp ``GRAPHENE_ASSERT( ...,
    limit_order_create_insufficient_balance, "insufficient balance", ...)``
    (fc's text: its description, then the format), the balance before the
    fee: an order of the whole KYC balance with its fee in KYC passes that
    check, then the balance cannot cover both."""
    op = order(INIT1, amount(10 ** 8 + 1, "1.3.1"), amount(1, CORE))
    with pytest.raises(OperationRefused,
                       match="^Insufficient balance: insufficient balance$") as caught:
        push(chain, op)
    assert (caught.value.name, caught.value.code) == ("limit_order_create_insufficient_balance",
                                                      3050106)
    assert caught.value.details == {"balance": amount(10 ** 8, "1.3.1"),
                                    "amount_to_sell": amount(10 ** 8 + 1, "1.3.1")}
    whole = with_kyc_fee(chain, order(INIT1, amount(10 ** 8, "1.3.1"), amount(1, CORE)))
    with pytest.raises(InsufficientBalance, match=r"^Assert Exception: abo->get_balance\(\) "
                                                  r">= -delta: Insufficient Balance: "):
        chain.push_transaction(sign_wire(chain, [whole]))
    assert chain.state.balance(INIT1, "1.3.1") == 10 ** 8


def test_account_texts(chain):
    """account_evaluator.cpp: a basic account may not whitelist (the
    parameters' ``allow_non_member_whitelists`` is false), nor register;
    names are unique."""
    basic = [5, {"registrar": INIT0, "referrer": INIT0, "referrer_percent": 0,
                 "name": "basic-1", "owner": _key_auth(chain), "active": _key_auth(chain),
                 "options": _options(chain), "extensions": {}}]
    [[_t, aid]] = push(chain, basic)
    push(chain, transfer(INIT0, aid, 10 ** 9))
    assert chain.state.objects["2.0.0"]["parameters"]["allow_non_member_whitelists"] is False
    with pytest.raises(InvalidOperation,
                       match=r"^Assert Exception: o\.authorizing_account\(d\)\."
                             r"is_lifetime_member\(\): The authorizing account must be a "
                             r"lifetime member\.$"):
        push(chain, listing(INIT2, 1, who=aid))
    assert chain.state.objects[INIT2]["whitelisting_accounts"] == []
    with pytest.raises(InvalidOperation, match=r"Only Lifetime members may register an "
                                               r"account\.$"):
        push(chain, [5, dict(basic[1], registrar=aid, name="basic-2")])
    produce(chain)
    with pytest.raises(InvalidOperation, match=r"Account 'basic-1' already exists\.$"):
        push(chain, basic)


def _key_auth(chain):
    return chain.state.objects[INIT0]["active"]


def _options(chain):
    return dict(chain.state.objects[INIT0]["options"], votes=[])


def test_order_cancel_and_restricted_transfer_texts(chain):
    """market_evaluator.cpp ``limit_order_cancel_evaluator::do_evaluate``
    (``GRAPHENE_ASSERT( ..., limit_order_cancel_owner_mismatch / _nonexist_order,
    ...)``: fc's name, code 3050000 + 100 * 2 + 2 / + 1, the description then
    the format) and transfer_evaluator.cpp ``transfer_evaluator::do_evaluate``."""
    [[_t, oid]] = push(chain, order(INIT1, amount(100, "1.3.1"), amount(1000, CORE)))
    cancel = [2, {"fee_paying_account": INIT2, "order": oid, "extensions": []}]
    with pytest.raises(OperationRefused, match=rf"^Order owned by someone else: Limit order "
                                               rf"{oid} is owned by someone else$") as caught:
        push(chain, cancel)
    assert (caught.value.name, caught.value.code) == ("limit_order_cancel_owner_mismatch",
                                                      3050202)
    assert caught.value.log_format == "Limit order ${oid} is owned by someone else"
    with pytest.raises(OperationRefused, match=r"^Order does not exist: Limit order 1\.7\.99 "
                                               r"does not exist$") as caught:
        push(chain, [2, {"fee_paying_account": INIT1, "order": "1.7.99", "extensions": []}])
    assert (caught.value.name, caught.value.code) == ("limit_order_cancel_nonexist_order",
                                                      3050201)
    assert chain.state.objects[oid]["for_sale"] == 100
    opts = asset_options(flags=0x08, perms=0x08)
    [[_t, held]] = push(chain, [10, {"issuer": INIT0, "symbol": "HELD", "precision": 3,
                                     "common_options": opts, "is_prediction_market": False,
                                     "extensions": []}])
    push(chain, [14, {"issuer": INIT0, "asset_to_issue": amount(1000, held),
                      "issue_to_account": INIT1, "extensions": []}])
    # GRAPHENE_ASSERT( ..., transfer_restricted_transfer_asset, ...) inside
    # FC_RETHROW_EXCEPTIONS: fc's to_string; 10 sat of precision 3: "0.010"
    with pytest.raises(InvalidOperation) as info:
        push(chain, transfer(INIT1, INIT2, 10, held))
    assert str(info.value) == (f"restricted transfer asset: Asset {held} has "
                               "transfer_restricted flag enabled Unable to transfer 0.010 HELD "
                               "from init1 to init2")
    assert (info.value.code, info.value.name) == (3050003, "transfer_restricted_transfer_asset")
    assert chain.state.balance(INIT1, held) == 1000


def test_htlc_balance_checked_before_the_fee(chain):
    """htlc_evaluator.cpp: ``d.get_balance( o.from, o.amount.asset_id) >=
    (o.amount)``, "Insufficient funds", sees the balance before the fee
    (graphene takes the fee after ``do_apply``): init2's whole core balance
    passes it, then cannot pay both (db_balance.cpp ``adjust_balance``)."""
    whole = chain.state.balance(INIT2, CORE)
    op = [49, dict(htlc(INIT2, INIT1, 0)[1], amount=amount(whole + 1, CORE))]
    with pytest.raises(InvalidOperation, match=r"o\.amount\): Insufficient funds$"):
        push(chain, op)
    op = [49, dict(htlc(INIT2, INIT1, 0)[1], amount=amount(whole, CORE))]
    with pytest.raises(InsufficientBalance, match=r"^Assert Exception: abo->get_balance\(\) "
                                                  r">= -delta: Insufficient Balance: "):
        push(chain, op)
    assert chain.state.balance(INIT2, CORE) == whole
