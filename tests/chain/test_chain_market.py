"""Limit orders with graphene semantics: deferred creation fee and its
refund on cancel, expiration bound, expired-order sweep with the capped
cancel fee, matching with round-up for the smaller taker and market fees."""

import copy

import pytest
from bitsharesbase import operations

from nodeapi.chain import errors
from nodeapi.chain.genesis import Genesis
from nodeapi.protocol.times import format_time

from kit.chain import claim_op, create_asset, issue, produce, transfer_op, with_fee
from kit.signing import sign


def order(chain, seller, sell, sell_asset, recv, recv_asset, expiration="2030-01-01T00:00:00"):
    op, fee = with_fee(chain, operations.Limit_order_create, seller=seller,
                       amount_to_sell={"amount": sell, "asset_id": sell_asset},
                       min_to_receive={"amount": recv, "asset_id": recv_asset},
                       expiration=expiration, fill_or_kill=False, extensions=[])
    return chain.push_transaction(sign(chain, [op]))["operation_results"][0][1], fee


def cancel(chain, order_id, seller="1.2.6"):
    op, fee = with_fee(chain, operations.Limit_order_cancel, fee_paying_account=seller,
                       order=order_id, extensions=[])
    return chain.push_transaction(sign(chain, [op]))["operation_results"][0], fee


def test_fee_deferred_and_refunded_on_cancel(funded):
    chain = funded
    gold, _ = create_asset(chain, "GOLD")
    produce(chain)
    core0 = chain.state.balance("1.2.6", "1.3.0")
    stats0 = dict(chain.state.get("2.7.6"))
    oid, fee = order(chain, "1.2.6", 1000, "1.3.0", 100, gold)
    produce(chain)
    assert fee == 500000
    obj = chain.state.get(oid)
    assert obj["deferred_fee"] == 500000
    assert obj["deferred_paid_fee"] == {"amount": 0, "asset_id": "1.3.0"}
    # bitshares-core 7.x limit_order_object's fields, in its order
    assert list(obj) == ["id", "expiration", "seller", "for_sale", "sell_price",
                         "filled_amount", "deferred_fee", "deferred_paid_fee",
                         "is_settled_debt", "on_fill"]
    assert (obj["filled_amount"], obj["is_settled_debt"], obj["on_fill"]) == ("0", False, [])
    stats = chain.state.get("2.7.6")
    assert stats["pending_vested_fees"] == stats0["pending_vested_fees"]
    assert stats["total_core_in_orders"] == 1000
    assert chain.state.balance("1.2.6", "1.3.0") == core0 - 1000 - 500000
    result, cancel_fee = cancel(chain, oid)
    produce(chain)
    assert cancel_fee == 0
    assert result == [2, {"amount": 1000, "asset_id": "1.3.0"}]
    assert oid not in chain.state.objects
    assert chain.state.balance("1.2.6", "1.3.0") == core0
    assert chain.state.get("2.7.6")["total_core_in_orders"] == 0


def test_expiration_bound(funded):
    chain = funded
    gold, _ = create_asset(chain, "GOLD")
    produce(chain)
    head = chain.head_block_time
    with pytest.raises(errors.InvalidOperation, match="before the head block time"):
        order(chain, "1.2.6", 1000, "1.3.0", 100, gold, expiration=format_time(head - 1))
    oid, _ = order(chain, "1.2.6", 1000, "1.3.0", 100, gold, expiration=format_time(head))
    assert chain.state.get(oid)["expiration"] == head
    produce(chain)  # expiration <= new head time: swept by the block
    assert oid not in chain.state.objects


@pytest.fixture
def cancel_fee_chain(genesis, new_chain):
    """A chain whose limit_order_cancel fee is 300000 (bundled genesis: 0)."""
    data = copy.deepcopy(genesis.data)
    data["initial_parameters"]["current_fees"]["parameters"] = [
        [k, {"fee": 300000} if k == 2 else v]
        for k, v in data["initial_parameters"]["current_fees"]["parameters"]]
    chain = new_chain(Genesis(data, genesis.chain_id, genesis.address_prefix,
                              genesis.core_symbol))
    chain.push_transaction(sign(chain, [claim_op()]))
    produce(chain)
    return chain


def test_expired_order_swept_with_capped_cancel_fee(cancel_fee_chain):
    chain = cancel_fee_chain
    gold, _ = create_asset(chain, "GOLD")
    produce(chain)
    core0 = chain.state.balance("1.2.6", "1.3.0")
    vested0 = chain.state.get("2.7.6")["pending_vested_fees"]
    oid, fee = order(chain, "1.2.6", 1000, "1.3.0", 100, gold,
                     expiration=format_time(chain.head_block_time + 3))
    produce(chain, 2)
    assert oid in chain.state.objects
    seen = []
    chain.add_consumer(type("C", (), {"block_applied": lambda self, b: seen.append(b)})())
    produce(chain)
    assert oid not in chain.state.objects
    # the sweep is a virtual limit_order_cancel that plugins (history) see
    [cancel] = seen[-1].operations
    assert cancel.is_virtual and cancel.op[0] == 2
    assert cancel.op[1]["order"] == oid and cancel.op[1]["fee_paying_account"] == "1.2.6"
    assert cancel.op[1]["fee"] == {"amount": 300000, "asset_id": "1.3.0"}
    assert cancel.trx_in_block == 0 and cancel.trx_id == "0" * 40
    # refund: the order and the deferred 500000 minus the 300000 cancel fee
    assert chain.state.balance("1.2.6", "1.3.0") == core0 - 300000
    assert chain.state.get("2.7.6")["pending_vested_fees"] == vested0 + 300000
    assert chain.state.get("2.7.6")["total_core_in_orders"] == 0


def test_match_taker_smaller_rounds_up_and_culls(funded):
    chain = funded
    # GOLD charges a 1 % market fee
    gold, _ = create_asset(chain, "GOLD", perms=0x01, flags=0x01, percent=100)
    issue(chain, gold, 5000)
    chain.push_transaction(sign(chain, [transfer_op(10 ** 8)]))
    produce(chain)
    maker, _ = order(chain, "1.2.7", 3000, gold, 1000001, "1.3.0")
    produce(chain)
    core6 = chain.state.balance("1.2.6", "1.3.0")
    core7 = chain.state.balance("1.2.7", "1.3.0")
    seen = []
    chain.add_consumer(type("C", (), {"block_applied": lambda self, b: seen.append(b)})())
    taker, fee = order(chain, "1.2.6", 500000, "1.3.0", 1000, gold)
    produce(chain)
    # taker receives floor(500000 * 3000 / 1000001) = 1499 GOLD and pays
    # ceil(1499 * 1000001 / 3000) = 499668 TEST; its 332 TEST remainder is culled
    assert taker not in chain.state.objects
    assert chain.state.balance("1.2.6", "1.3.0") == core6 - fee - 499668
    assert chain.state.balance("1.2.6", gold) == 1499 - 14  # 1 % market fee, rounded down
    assert chain.state.get("2.3.1")["accumulated_fees"] == 14
    assert chain.state.get(maker)["for_sale"] == 3000 - 1499
    assert chain.state.get(maker)["filled_amount"] == "1499"  # sold so far
    assert chain.state.balance("1.2.7", "1.3.0") == core7 + 499668
    assert chain.state.get("2.7.6")["total_core_in_orders"] == 0
    vops = [o.op for o in seen[-1].operations if o.is_virtual]
    assert [v[0] for v in vops] == [4, 2, 4]
    assert vops[0][1]["pays"] == {"amount": 499668, "asset_id": "1.3.0"}
    assert vops[0][1]["receives"] == {"amount": 1499, "asset_id": gold}
    assert vops[0][1]["fee"] == {"amount": 14, "asset_id": gold}
    assert vops[1][1]["order"] == taker and vops[1][1]["fee"]["amount"] == 0
    assert vops[2][1]["is_maker"] is True and vops[2][1]["fee"]["amount"] == 0
    # the deferred creation fees were booked on the fills
    assert chain.state.get(maker)["deferred_fee"] == 0


def test_book_order_is_graphenes_by_price_exactly():
    """graphene ``limit_order_index`` by_price (market_object.hpp): the
    inverted sell price ascending, then the id.  Prices whose doubles are
    equal but whose exact values differ (amounts past 2**53) keep their
    exact order; equal prices keep the id order (1.7.0 before 1.7.2 though
    listed after it)."""
    from nodeapi.chain.state import sort_book

    def order(n, base, quote):
        return {"id": f"1.7.{n}", "sell_price": {"base": {"amount": base, "asset_id": "1.3.0"},
                                                 "quote": {"amount": quote,
                                                           "asset_id": "1.3.1"}}}

    big = 2 ** 60
    orders = [order(1, big, big + 2), order(2, big, big + 1), order(3, 2, 1),
              order(0, big, big + 1), order(4, 3, 3), order(10, 1, 1), order(5, 2 * big, 2 * big)]
    assert (big + 1) / big == (big + 2) / big == 1.0  # the doubles cannot tell them apart
    assert [o["id"] for o in sort_book(orders)] == [
        "1.7.3",  # 1/2
        "1.7.4", "1.7.5", "1.7.10",  # exactly 1, by id
        "1.7.0", "1.7.2",  # 1 + 2**-60, by id
        "1.7.1"]  # 1 + 2**-59
