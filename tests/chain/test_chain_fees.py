"""Fee accounting with graphene semantics: pending fees on the statistics,
maintenance-time process_fees (lifetime_fees_paid, network cut, cashback
vesting balance), asset_create's fee-pool half, custom fee over the whole
operation, asset_update permission/supply checks."""

import pytest
from bitsharesbase import operations

from nodeapi.chain import errors
from nodeapi.protocol.fee_schedule import operation_fee
from nodeapi.protocol import serialize_operation_body

from kit.chain import FEE0, asset_options, create_asset, issue, produce, transfer_op, with_fee
from kit.keys import DEV_WIF
from kit.signing import sign


def test_fees_pending_until_maintenance(funded):
    chain = funded
    chain.push_transaction(sign(chain, [transfer_op(1, fee=2000000)]))  # <= threshold
    chain.push_transaction(sign(chain, [transfer_op(2, fee=20000000)]))  # > threshold
    produce(chain)
    stats = chain.state.get("2.7.6")
    assert (stats["pending_fees"], stats["pending_vested_fees"]) == (20000000, 2000000)
    assert stats["lifetime_fees_paid"] == 0
    assert chain.state.get("2.3.0")["accumulated_fees"] == 0
    supply = chain.state.get("2.3.0")["current_supply"]
    # a block at next_maintenance_time runs process_fees
    when = chain.dgp["next_maintenance_time"]
    slot = chain.get_slot_at_time(when)
    chain.generate_block(when, chain.get_scheduled_witness(slot), DEV_WIF)
    stats = chain.state.get("2.7.6")
    assert (stats["pending_fees"], stats["pending_vested_fees"]) == (0, 0)
    assert stats["lifetime_fees_paid"] == 22000000
    # init0 is a lifetime member: 20 % network, 80 % cashback to itself; the
    # network's 20 % reach accumulated_fees, which the budget returns to the
    # reserve (db_maint.cpp process_budget).  The budget (the second: block
    # 1 made the first) releases ceil(reserve * dt * 17 / 2^32) of the
    # reserve (initialize_budget_record): the 4,400,000 for dt = 52,894 s
    # (block 1 at 09:18:26 to the maintenance at midnight): 922, all of it
    # witness budget (requested 1,000,000 a block)
    assert 4400000 * 52894 * 17 / 2 ** 32 == pytest.approx(921.2, abs=0.1)
    record = chain.state.get("2.13.1")["record"]
    assert record["time_since_last_budget"] == 52894
    assert record["from_accumulated_fees"] == 4400000 and record["total_budget"] == 922
    assert record["witness_budget"] == 922 and record["supply_delta"] == 922 - 4400000
    assert chain.state.get("2.3.0")["accumulated_fees"] == 0
    assert chain.state.get("2.3.0")["current_supply"] == supply - 4400000 + 922
    vb_id = chain.state.get("1.2.6")["cashback_vb"]
    assert vb_id == "1.13.0" and stats["has_cashback_vb"] is True
    vb = chain.state.get(vb_id)
    assert vb["owner"] == "1.2.6" and vb["balance_type"] == "cashback"
    assert vb["balance"] == {"amount": 16000000 + 1600000, "asset_id": "1.3.0"}
    policy = vb["policy"][1]
    assert vb["policy"][0] == 1 and policy["vesting_seconds"] == 31536000
    assert policy["coin_seconds_earned"] == str(1600000 * 31536000)
    assert chain.dgp["next_maintenance_time"] > chain.dgp["time"]


def test_custom_fee_over_whole_operation(funded):
    chain = funded
    schedule = chain.state.get("2.0.0")["parameters"]["current_fees"]
    op = [35, {"fee": FEE0, "payer": "1.2.6", "required_auths": [], "id": 7,
               "data": "00" * 3000}]
    size = len(serialize_operation_body(op, "TEST"))
    assert size > 3000
    assert operation_fee(op, schedule, "TEST") == 100000 + size * 10 // 1024
    assert operation_fee(op, schedule, "TEST") == 100000 + 29  # 3011 bytes * 10 / 1024


def test_asset_create_fee_paid_in_other_asset(funded):
    chain = funded
    gold, _ = create_asset(chain, "GOLD", base=1, quote=2)  # 2 GOLD = 1 TEST
    issue(chain, gold, 10 ** 10, to="1.2.6")
    fund, _ = with_fee(chain, operations.Asset_fund_fee_pool, from_account="1.2.6",
                       asset_id=gold, amount=10 ** 9, extensions=[])
    chain.push_transaction(sign(chain, [fund]))
    produce(chain)
    pool_before = chain.state.get("2.3.1")["fee_pool"]
    stats_before = chain.state.get("2.7.6")
    data = dict(issuer="1.2.6", symbol="SILVERX", precision=3,
                common_options=asset_options(cer_quote="1.3.1"), is_prediction_market=False,
                extensions=[])
    required = operation_fee([10, operations.Asset_create(fee=FEE0, prefix="TEST", **data).json()],
                             chain.state.get("2.0.0")["parameters"]["current_fees"], "TEST")
    paid = 2 * required + 3  # core value (rounded down): required + 1
    op = operations.Asset_create(fee={"amount": paid, "asset_id": gold}, prefix="TEST", **data)
    res = chain.push_transaction(sign(chain, [op]))
    produce(chain)
    core_paid = required + 1
    assert res["operation_results"][0] == [1, "1.3.2"]
    assert chain.state.get("2.3.1")["fee_pool"] == pool_before - core_paid
    assert chain.state.get("2.3.1")["accumulated_fees"] == paid
    assert chain.state.get("2.3.2")["fee_pool"] == core_paid // 2
    assert chain.state.get("2.3.0")["accumulated_fees"] == 0
    stats = chain.state.get("2.7.6")
    booked = (stats["pending_fees"] + stats["pending_vested_fees"]
              - stats_before["pending_fees"] - stats_before["pending_vested_fees"])
    assert booked == core_paid - core_paid // 2
    assert booked + core_paid // 2 == core_paid
    assert chain.state.get("1.3.2")["options"]["core_exchange_rate"]["quote"]["asset_id"] \
        == "1.3.2"


def test_asset_create_core_fee_halves(funded):
    chain = funded
    before = chain.state.get("2.7.6")["pending_fees"]
    _, fee = create_asset(chain, "GOLD")
    produce(chain)
    assert fee == 30000000000 + 0  # symbol4 (no price_per_kbyte share for a short op)
    assert chain.state.get("2.3.1")["fee_pool"] == fee // 2
    assert chain.state.get("2.7.6")["pending_fees"] - before == fee - fee // 2
    assert chain.state.get("2.3.0")["accumulated_fees"] == 0


def _update(chain, asset_id, **opts):
    op, _ = with_fee(chain, operations.Asset_update, issuer="1.2.6", asset_to_update=asset_id,
                     new_options=asset_options(**opts), extensions=[])
    return chain.push_transaction(sign(chain, [op]))


def test_asset_update_checks(funded):
    chain = funded
    gold, _ = create_asset(chain, "GOLD", perms=0x01, flags=0x01)
    issue(chain, gold, 5000)
    produce(chain)
    with pytest.raises(errors.InvalidOperation, match="current supply"):
        _update(chain, gold, perms=0x01, flags=0x01, max_supply=4999)
    _update(chain, gold, perms=0x01, flags=0x00, max_supply=5000)  # flag allowed by perms
    produce(chain)
    assert chain.state.get(gold)["options"]["max_supply"] == 5000
    assert chain.state.get(gold)["options"]["flags"] == 0
    _update(chain, gold, perms=0x00, flags=0x00, max_supply=5000)  # revoke
    produce(chain)
    with pytest.raises(errors.InvalidOperation, match="reinstate"):
        _update(chain, gold, perms=0x01, flags=0x00, max_supply=5000)
    with pytest.raises(errors.InvalidOperation, match="forbidden by issuer permissions"):
        _update(chain, gold, perms=0x00, flags=0x01, max_supply=5000)
    # with no supply, permissions may come back
    # a new asset's rate names 1.3.1, the placeholder the evaluator replaces
    # (asset_create_operation::validate: asset(1) * rate lands in asset 1.3.1)
    silver, _ = create_asset(chain, "SILV", cer_quote="1.3.1", perms=0)
    _update(chain, silver, cer_quote="1.3.2", perms=0x01, flags=0)
    produce(chain)
    assert chain.state.get(silver)["options"]["issuer_permissions"] == 1


def test_fee_pool_shortfall_refused_with_prepare_fees_text(funded):
    """evaluator.cpp generic_evaluator::prepare_fee: a fee in another asset
    converted at its core_exchange_rate must be covered by its fee pool,
    FC_ASSERT( core_fee_paid <= fee_pool, "Fee pool balance of '${b}' is
    less than the ${r} required to convert ${c}" ) with
    database::to_pretty_string amounts."""
    from kit.chain import amt, push_wire
    from kit.signing import sign_wire

    chain = funded
    gold, _ = create_asset(chain, "GOLD", base=1, quote=2)  # 2 GOLD sat = 1 TEST sat
    issue(chain, gold, 10 ** 8, to="1.2.6")
    pool = int(chain.state.get("2.3.1")["fee_pool"])  # half of asset_create's fee
    # the issuer leaves 1,234,567 TEST sat (12.34567 TEST) in the pool
    push_wire(chain, [47, {"issuer": "1.2.6", "asset_id": gold,
                           "amount_to_claim": amt(pool - 1234567), "extensions": []}])
    assert chain.state.get("2.3.1")["fee_pool"] == 1234567
    # 4,000,000 GOLD sat (4000 GOLD, precision 3) convert to 2,000,000 TEST
    # sat (20 TEST): more than the pool
    trx = sign_wire(chain, [[0, {"fee": amt(4000000, gold), "from": "1.2.6", "to": "1.2.7",
                                 "amount": amt(1), "extensions": []}]])
    with pytest.raises(errors.InvalidOperation) as info:
        chain.push_transaction(trx)
    assert str(info.value) == (
        "Assert Exception: core_fee_paid <= fee_asset_dyn_data->fee_pool: Fee pool balance of "
        "'12.34567 TEST' is less than the 20 TEST required to convert 4000 GOLD")
    assert chain.state.get("2.3.1")["fee_pool"] == 1234567


def test_to_pretty_string_as_asset_object_amount_to_string(funded):
    """asset_object::amount_to_string: whole units, then every decimal when
    any is not zero; "-0" before the decimals of a small negative amount."""
    from nodeapi.chain.balances import to_pretty_string

    state = funded.state
    assert to_pretty_string(state, 2000000, "1.3.0") == "20 TEST"
    assert to_pretty_string(state, 1234500, "1.3.0") == "12.34500 TEST"
    assert to_pretty_string(state, -5, "1.3.0") == "-0.00005 TEST"
    assert to_pretty_string(state, -100005, "1.3.0") == "-1.00005 TEST"
    assert to_pretty_string(state, 0, "1.3.0") == "0 TEST"
