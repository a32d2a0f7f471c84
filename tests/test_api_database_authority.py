"""database API authority functions over a real Chain: transaction hex,
required/potential signatures, verify_authority, verify_account_authority,
get_required_fees; transactions signed by python-bitshares."""

import pytest
from bitsharesbase import operations

from conftest import DEV_PUB, DEV_WIF
from test_api_database import OTHER_PUB, OTHER_WIF, create_gold, funded, make_api  # noqa: F401
from test_chain_core import sign, transfer_op
from test_chain_ops import _auth, _options, with_fee

from nodeapi.chain import authority as auth
from nodeapi.chain import errors
from nodeapi.errors import ApiError
from nodeapi.protocol.errors import UnknownOperation


@pytest.fixture
def db(funded):
    return make_api(funded)[0]


def unsigned(chain, ops):
    trx = sign(chain, ops)
    trx["signatures"] = []
    return trx


def test_transaction_hex(db, funded):
    trx = sign(funded, [transfer_op(5)])
    packed = auth.pack_transaction(trx, "TEST")
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
                     referrer_percent=0, name="multi-1", owner=_auth(OTHER_PUB),
                     active={"weight_threshold": 1, "account_auths": [["1.2.6", 1]],
                             "key_auths": [], "address_auths": []},
                     options=_options(OTHER_PUB), extensions={})
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
    for kind in (999, -1, 3):
        with pytest.raises(UnknownOperation, match=f"Operation type {kind} is not supported"):
            db.call("get_required_fees", [[[kind, {}]], "1.3.0"])
    for kind in ("999", "transfer", True, 0.0):
        with pytest.raises(UnknownOperation, match="is not an integer"):
            db.call("get_required_fees", [[[kind, op]], "1.3.0"])
    with pytest.raises(UnknownOperation, match="22 is not supported"):  # nor proposals
        db.call("get_required_fees", [[[22, {"proposed_ops": [{"op": [999, {}]}]}]], "1.3.0"])
