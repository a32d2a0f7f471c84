"""database API authority functions over a real Chain: transaction hex,
required/potential signatures, verify_authority, verify_account_authority,
get_required_fees; transactions signed by python-bitshares."""

import pytest
from bitsharesbase import operations

from nodeapi.chain import authority as auth
from nodeapi.chain import errors
from nodeapi.errors import ApiError, ProtocolError
from nodeapi.protocol.errors import UnknownOperation
from nodeapi.protocol.keys import public_key_bytes
from nodeapi.protocol.transaction import serialize_transaction

from kit.api import create_gold
from kit.authority import K1, K2, K3, K4, chain_of_accounts, create, pay
from kit.authority import auth as authority
from kit.chain import account_options, fund, key_auth, transfer_op, with_fee
from kit.keys import DEV_PUB, DEV_WIF, OTHER_PUB, OTHER_WIF
from kit.signing import sign, sign_canonical as canonical_sign


@pytest.fixture
def funded(chain):
    """init0 claimed the genesis balance; init1 got 12345 in block 2."""
    return fund(chain, init1=12345)


def unsigned(chain, ops):
    trx = sign(chain, ops)
    trx["signatures"] = []
    return trx


def test_transaction_hex(db, funded):
    trx = sign(funded, [transfer_op(5)])
    packed = serialize_transaction(trx, "TEST")
    assert db.call("get_transaction_hex_without_sig", [trx]) == packed.hex()
    full = db.call("get_transaction_hex", [trx])
    # signatures: varint count 1, then the 65-byte signature
    assert full == packed.hex() + "01" + trx["signatures"][0]
    with pytest.raises(ApiError, match="Malformed transaction"):
        db.call("get_transaction_hex", [{"ref_block_num": 1}])
    with pytest.raises(ApiError, match="transaction object"):
        db.call("get_transaction_hex_without_sig", [[1, 2]])


def test_required_and_potential_signatures(db, funded):
    trx = unsigned(funded, [transfer_op(5)])
    assert db.call("get_potential_signatures", [trx]) == [DEV_PUB]
    assert db.call("get_required_signatures", [trx, [OTHER_PUB, DEV_PUB]]) == [DEV_PUB]
    assert db.call("get_required_signatures", [trx, [OTHER_PUB]]) == []
    signed = sign(funded, [transfer_op(5)])
    assert db.call("get_required_signatures", [signed, [DEV_PUB]]) == []
    assert db.call("get_potential_address_signatures", [trx]) == []
    with pytest.raises(ApiError, match="Invalid public key"):
        db.call("get_required_signatures", [trx, ["nope"]])


def test_signatures_through_account_authority(db, funded):
    """An account whose active authority is another account: the keys of
    that account are potential and required signers."""
    op, _ = with_fee(funded, operations.Account_create, registrar="1.2.6", referrer="1.2.6",
                     referrer_percent=0, name="multi-1", owner=key_auth(OTHER_PUB),
                     active={"weight_threshold": 1, "account_auths": [["1.2.6", 1]],
                             "key_auths": [], "address_auths": []},
                     options=account_options(OTHER_PUB), extensions={})
    new_id = funded.push_transaction(sign(funded, [op]))["operation_results"][0][1]
    funded.push_transaction(sign(funded, [transfer_op(10 ** 7, to=new_id)]))
    trx = unsigned(funded, [transfer_op(1, frm=new_id, to="1.2.7")])
    assert sorted(db.call("get_potential_signatures", [trx])) == sorted([DEV_PUB, OTHER_PUB])
    assert db.call("get_required_signatures", [trx, [DEV_PUB, OTHER_PUB]]) == [DEV_PUB]
    assert db.call("get_account_references", ["init0"]) == [new_id]
    assert db.call("verify_account_authority", ["multi-1", [DEV_PUB]]) is True
    assert db.call("verify_account_authority", ["multi-1", [OTHER_PUB]]) is True
    assert db.call("verify_account_authority", ["init1", [OTHER_PUB]]) is False


def test_verify_authority(db, funded):
    assert db.call("verify_authority", [sign(funded, [transfer_op(5)])]) is True
    with pytest.raises(errors.MissingAuthority):
        db.call("verify_authority", [sign(funded, [transfer_op(5)], wifs=(OTHER_WIF,))])
    with pytest.raises(errors.InvalidSignature):
        db.call("verify_authority", [sign(funded, [transfer_op(5)], wifs=(DEV_WIF, OTHER_WIF))])
    assert db.call("verify_account_authority", ["init0", [DEV_PUB]]) is True
    assert db.call("verify_account_authority", ["init0", [DEV_PUB, OTHER_PUB]]) is False
    with pytest.raises(ApiError, match="no such account"):
        db.call("verify_account_authority", ["nobody", [DEV_PUB]])


def test_required_fees(db, funded):
    create_gold(funded)  # core_exchange_rate 1 TEST = 2 GOLD satoshis
    op = transfer_op(1).json()
    assert db.call("get_required_fees", [[[0, op]], "1.3.0"]) == [
        {"amount": 2000000, "asset_id": "1.3.0"}]
    assert db.call("get_required_fees", [[[0, op], [0, op]], "GOLD"]) == [
        {"amount": 4000000, "asset_id": "1.3.1"}] * 2
    with pytest.raises(ApiError, match="no such asset"):
        db.call("get_required_fees", [[[0, op]], "SILVER"])
    with pytest.raises(ApiError, match="Malformed operation"):
        db.call("get_required_fees", [[[0]], "1.3.0"])
    with pytest.raises(ApiError, match="Malformed operation"):
        db.call("get_required_fees", [[[0, 5]], "1.3.0"])
    # an unknown type is an error (graphene cannot deserialize it), not a fee of 0
    for kind in (999, -1, 78, "999"):
        with pytest.raises(UnknownOperation, match=f"Operation type {kind} is not supported"):
            db.call("get_required_fees", [[[kind, {}]], "1.3.0"])
    for kind in ("transfer", [0], "0.5"):
        with pytest.raises(UnknownOperation, match="is not an integer"):
            db.call("get_required_fees", [[[kind, op]], "1.3.0"])
    # fc reads the tag with as_uint64 (fc/src/variant.cpp): "0", 0.0, 0.5
    # and false are transfers
    assert db.call("get_required_fees", [[["0", op], [0.0, op], [0.5, op], [False, op]],
                                         "1.3.0"]) == [
        {"amount": 2000000, "asset_id": "1.3.0"}] * 4
    with pytest.raises(ProtocolError):  # a field of the wrong type
        db.call("get_required_fees", [[[3, {"delta_debt": 5}]], "1.3.0"])
    # absent members keep their defaults (fc/reflect/variant.hpp from_variant)
    fee, = db.call("get_required_fees", [[[3, {}]], "1.3.0"])
    assert fee["asset_id"] == "1.3.0"
    with pytest.raises(UnknownOperation, match="Operation type"):  # nor inside proposals
        db.call("get_required_fees", [[[22, {
            "fee": {"amount": 0, "asset_id": "1.3.0"}, "fee_paying_account": "1.2.6",
            "expiration_time": "2030-01-01T00:00:00", "proposed_ops": [{"op": [999, {}]}],
            "extensions": []}]], "1.3.0"])
    proposal = [22, {"fee": {"amount": 0, "asset_id": "1.3.0"}, "fee_paying_account": "1.2.6",
                     "expiration_time": "2030-01-01T00:00:00",
                     "proposed_ops": [{"op": [0, op]}, {"op": [4, {
                         "fee": {"amount": 0, "asset_id": "1.3.0"}, "order_id": "1.7.0",
                         "account_id": "1.2.6", "pays": op["amount"], "receives": op["amount"],
                         "fill_price": {"base": op["amount"], "quote": op["amount"]},
                         "is_maker": True}]}],
                     "extensions": []}]
    # graphene's [proposal fee, [proposed fees]]; a virtual operation costs 0
    assert db.call("get_required_fees", [[proposal], "GOLD"]) == [
        [{"amount": 4000000, "asset_id": "1.3.1"},
         [{"amount": 4000000, "asset_id": "1.3.1"}, {"amount": 0, "asset_id": "1.3.1"}]]]


# -- the API walks nodeapi.chain.authority's sign state ---------------------------


def by_bytes(*keys):
    return sorted(keys, key=public_key_bytes)


@pytest.fixture
def multisig(funded):
    """``ms-1``: owner K4, active first K1 alone, then (account_update,
    signed by K1) threshold 2 over K1 (1), K2 (1) and account ``friend-1``
    (1; active K3, owner DEV).  Returns (ms id, friend id)."""
    friend = create(funded, "friend-1", authority(1, [(DEV_PUB, 1)]), authority(1, [(K3[1], 1)]))
    ms = create(funded, "ms-1", authority(1, [(K4[1], 1)]), authority(1, [(K1[1], 1)]))
    upd, _ = with_fee(funded, operations.Account_update, account=ms, extensions={},
                      active=authority(2, [(K1[1], 1), (K2[1], 1)], [(friend, 1)]))
    funded.push_transaction(canonical_sign(funded, [upd], wifs=(K1[0],)))
    return ms, friend


def test_multisig_required_and_potential_signatures(db, funded, multisig):
    ms, friend = multisig
    assert funded.state.get(ms)["active"]["account_auths"] == [[friend, 1]]
    trx = unsigned(funded, [pay(ms)])
    # fetched: ms active (K1, K2), friend active (K3) and owner (DEV), ms owner (K4)
    assert db.call("get_potential_signatures", [trx]) == by_bytes(
        K1[1], K2[1], K3[1], K4[1], DEV_PUB)
    assert db.call("get_potential_address_signatures", [trx]) == []
    assert db.call("get_required_signatures", [trx, [K1[1], K2[1], K3[1]]]) == by_bytes(
        K1[1], K2[1])
    assert db.call("get_required_signatures", [trx, [K1[1], K3[1]]]) == by_bytes(K1[1], K3[1])
    assert db.call("get_required_signatures", [trx, [K2[1], DEV_PUB]]) == by_bytes(
        K2[1], DEV_PUB)  # friend satisfied through its owner
    # graphene keeps every available key the walk consulted, even K1 of the
    # failed active check before the owner (K4) satisfied it
    assert db.call("get_required_signatures", [trx, [K4[1], K1[1]]]) == by_bytes(K1[1], K4[1])
    assert db.call("get_required_signatures", [trx, [K3[1]]]) == [K3[1]]  # not enough alone
    # signed by K1 already: one more key of K2/K3 is needed, K2 comes first
    half = canonical_sign(funded, [pay(ms)], wifs=(K1[0],))
    assert db.call("get_required_signatures", [half, [K2[1], K3[1]]]) == [K2[1]]
    assert db.call("get_required_signatures", [half, [K3[1]]]) == [K3[1]]
    assert db.call("get_required_signatures", [half, [K1[1]]]) == []
    # potential keys stop where signatures already satisfy the authority:
    # K1 + friend's K3 satisfy ms's active, so no owner is fetched
    full = canonical_sign(funded, [pay(ms)], wifs=(K1[0], K3[0]))
    assert db.call("get_potential_signatures", [full]) == by_bytes(K1[1], K2[1], K3[1])
    assert db.call("verify_authority", [full]) is True
    with pytest.raises(errors.MissingAuthority):
        db.call("verify_authority", [half])
    with pytest.raises(errors.InvalidSignature):
        db.call("verify_authority", [canonical_sign(funded, [pay(ms)],
                                                    wifs=(K1[0], K2[0], K3[0]))])
    assert db.call("verify_account_authority", [ms, [K1[1], K2[1]]]) is True
    assert db.call("verify_account_authority", ["ms-1", [K1[1], DEV_PUB]]) is True
    assert db.call("verify_account_authority", ["ms-1", [K4[1]]]) is True  # owner
    assert db.call("verify_account_authority", ["ms-1", [K1[1]]]) is False
    assert db.call("verify_account_authority", ["ms-1", [K1[1], K2[1], K3[1]]]) is False


def test_signatures_approved_account_counts_at_max_depth(db, funded):
    """``top`` reaches ``leaf`` (key K1) only at depth 3 > max_authority_depth
    2; paying from ``pre`` (lower id, checked first) approves ``leaf`` so it
    counts for ``top`` too (the same rule the chain applies)."""
    leaf, pre, l2, l1, top = chain_of_accounts(funded)
    alone = unsigned(funded, [pay(top)])
    assert db.call("get_required_signatures", [alone, [K1[1], K2[1]]]) == []
    # leaf is never fetched for top: only the owners' K4 are potential keys
    assert db.call("get_potential_signatures", [alone]) == [K4[1]]
    both = unsigned(funded, [pay(top, 2), pay(pre, 3)])
    assert db.call("get_required_signatures", [both, [K1[1], K2[1]]]) == [K1[1]]
    assert db.call("get_potential_signatures", [both]) == by_bytes(K1[1], K4[1])
    assert db.call("verify_authority",
                   [canonical_sign(funded, [pay(top, 2), pay(pre, 3)], wifs=(K1[0],))]) is True
    # l1: two levels down, within depth; signed by K1 only the actives are walked
    signed = canonical_sign(funded, [pay(l1)], wifs=(K1[0],))
    assert db.call("get_potential_signatures", [signed]) == [K1[1]]
    assert db.call("get_potential_signatures", [unsigned(funded, [pay(l1)])]) == by_bytes(
        K1[1], K4[1])
    assert db.call("verify_account_authority", [l1, [K1[1]]]) is True
    assert db.call("verify_account_authority", [top, [K1[1]]]) is False


def test_temp_account_is_always_approved(db, funded):
    """An active authority naming GRAPHENE_TEMP_ACCOUNT (1.2.4) is satisfied
    without any key, as graphene's sign_state seeds ``approved_by`` with it."""
    aid = create(funded, "temp-user", authority(1, [(K4[1], 1)]), authority(1, [(K1[1], 1)]))
    upd, _ = with_fee(funded, operations.Account_update, account=aid, extensions={},
                      active=authority(1, [], [(auth.TEMP_ACCOUNT, 1)]))
    funded.push_transaction(canonical_sign(funded, [upd], wifs=(K1[0],)))
    trx = unsigned(funded, [pay(aid)])
    assert db.call("get_required_signatures", [trx, [K1[1], K4[1]]]) == []
    assert db.call("get_potential_signatures", [trx]) == []
    assert db.call("verify_authority", [trx]) is True
    assert db.call("verify_account_authority", ["temp-user", []]) is True
    assert db.call("verify_account_authority", ["temp-user", [K4[1]]]) is False


def test_numeric_string_tag_in_check_paths(db, funded):
    """The authority functions read ``["0", {...}]`` as a transfer, as the
    chain does (nodeapi.chain.validation.received_transaction)."""
    signed = sign(funded, [transfer_op(5)])
    signed["operations"][0][0] = "0"
    trx = dict(signed, signatures=[])
    assert db.call("get_potential_signatures", [trx]) == [DEV_PUB]
    assert db.call("get_required_signatures", [trx, [OTHER_PUB, DEV_PUB]]) == [DEV_PUB]
    assert db.call("verify_authority", [signed]) is True
    assert db.call("get_transaction_hex_without_sig", [trx]) == serialize_transaction(
        dict(trx, operations=[[0, trx["operations"][0][1]]]), "TEST").hex()
