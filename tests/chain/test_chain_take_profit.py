"""Take-profit orders (limit orders' ``on_fill``, bitshares-core 7.0):
amounts by hand from libraries/chain/db_market.cpp
``process_limit_order_on_fill`` / ``fill_limit_order`` and
market_evaluator.cpp (``limit_order_update_evaluator``:
``process_deferred_fee``, ``is_linked_tp_order_compatible``,
``do_evaluate``).  The market follows bitshares-core's
tests/tests/oso_take_profit_order_tests.cpp
(``oso_take_profit_order_trigger_and_cancel_test``): USD with a 0.3% market
fee, Sam selling CORE for USD with take-profit actions."""

import orjson
import pytest
import pytest_twisted
import treq

from nodeapi.chain.errors import InvalidOperation
from nodeapi.plugins.account_history.history import AccountHistory
from nodeapi.protocol.times import format_time
from nodeapi.rpc.access import ApiAccess

from kit.chain import CORE, asset_options, claim_wire, open_chain, produce
from kit.chain import push_wire as push
from kit.signing import sign_wire
from kit.site import RunningSite, make_node

SAM, TED = "1.2.6", "1.2.7"
FOREVER = "2030-01-01T00:00:00"


def amt(n, asset_id=CORE):
    return {"amount": n, "asset_id": asset_id}


def action(fee_asset=CORE, spread=100, size=10000, seconds=3600, repeat=False):
    return [0, {"fee_asset_id": fee_asset, "spread_percent": spread, "size_percent": size,
                "expiration_seconds": seconds, "repeat": repeat, "extensions": []}]


class Blocks:
    """A consumer keeping every AppliedBlock; ``history`` an account
    history plugin fed the same blocks."""

    def __init__(self):
        self.seen = []
        self.history = AccountHistory()

    def block_applied(self, applied):
        self.seen.append(applied)


@pytest.fixture
def market(genesis, tmp_path):
    """Sam (init0) holds core and 10,000,000 USD sat; Ted (init1) holds
    core and USD.  USD (1.3.1) charges 0.3% market fees; its core exchange
    rate is 2 core : 3 USD and its fee pool holds 10,000,000 core sat."""
    chain = open_chain(genesis, tmp_path / "tp")
    push(chain, claim_wire())
    produce(chain)
    [[_t, usd]] = push(chain, [10, {
        "issuer": SAM, "symbol": "USD", "precision": 4, "is_prediction_market": False,
        "common_options": asset_options(percent=30, flags=1, base=2, quote=3,
                                        max_market_fee=10 ** 9),
        "extensions": []}])
    push(chain, [14, {"issuer": SAM, "asset_to_issue": amt(10 ** 8, usd),
                      "issue_to_account": TED, "extensions": []}],
         [14, {"issuer": SAM, "asset_to_issue": amt(10 ** 7, usd),
               "issue_to_account": SAM, "extensions": []}],
         [0, {"from": SAM, "to": TED, "amount": amt(10 ** 10), "extensions": []}],
         [16, {"from_account": SAM, "asset_id": usd, "amount": 10 ** 7, "extensions": []}])
    produce(chain)
    blocks = Blocks()
    chain.add_consumer(blocks)
    chain.add_consumer(blocks.history)
    yield chain, usd, blocks
    chain.block_log.close()


def order(chain, seller, sell, receive, on_fill=None):
    ext = {"on_fill": on_fill} if on_fill is not None else {}
    [[_t, oid]] = push(chain, [1, {"seller": seller, "amount_to_sell": sell,
                                   "min_to_receive": receive, "expiration": FOREVER,
                                   "fill_or_kill": False, "extensions": ext}])
    return oid


def fee(chain, op_type, body):
    return chain.required_fee([op_type, dict(body, fee=amt(0))])["amount"]


def fees(chain, usd):
    create = fee(chain, 1, {"seller": SAM, "amount_to_sell": amt(1), "min_to_receive":
                            amt(1, usd), "expiration": FOREVER, "fill_or_kill": False,
                            "extensions": {}})
    update = fee(chain, 77, {"seller": SAM, "order": "1.7.0", "extensions": []})
    cancel = fee(chain, 2, {"fee_paying_account": SAM, "order": "1.7.0", "extensions": []})
    return create, update, cancel


def next_order_id(chain):
    return f"1.7.{chain.state.next_instance.get('1.7', 0)}"


def test_a_partial_fill_creates_the_take_profit_order(market):
    chain, usd, blocks = market
    state = chain.state
    create_fee, _u, _c = fees(chain, usd)
    sell1 = order(chain, SAM, amt(10000), amt(12345, usd), [action()])
    assert state.objects[sell1]["on_fill"] == [action()]
    assert "take_profit_order_id" not in state.objects[sell1]
    core0, usd0 = state.balance(SAM, CORE), state.balance(SAM, usd)
    now = chain.head_block_time
    tp = f"1.7.{int(sell1.split('.')[2]) + 2}"  # after Ted's order
    # Ted buys 1000 core with 1235 USD: Sam's order (the maker) gets 1235
    # USD, market fee round_down(1235 * 0.3%) = 3, so 1232 goes into the
    # take-profit order at (12345 / 10000) / 101% = 12345 / 10100:
    # min to receive = round_up(1232 * 10100 / 12345) = 1008
    order(chain, TED, amt(1235, usd), amt(1000))
    obj = state.objects[tp]
    assert obj["seller"] == SAM and obj["for_sale"] == 1232
    assert obj["sell_price"] == {"base": amt(1232, usd), "quote": amt(1008)}
    assert obj["expiration"] == now + 3600
    assert obj["on_fill"] == [] and obj["take_profit_order_id"] == sell1
    # the take-profit order's fee is Sam's, deferred like any order's
    assert obj["deferred_fee"] == create_fee
    assert state.balance(SAM, CORE) == core0 - create_fee
    assert state.balance(SAM, usd) == usd0 + 1235 - 3 - 1232
    assert state.objects[sell1]["for_sale"] == 9000
    assert state.objects[sell1]["take_profit_order_id"] == tp
    produce(chain)
    assert state.objects[tp]["take_profit_order_id"] == sell1
    # history: Ted's order, the fills (taker first), then the nested
    # limit_order_create with its result, numbered under Ted's operation
    ops = blocks.seen[-1].operations[-4:]
    assert [(o.op[0], o.virtual_op, o.is_virtual) for o in ops] == [
        (1, 0, False), (4, 1, True), (4, 2, True), (1, 3, True)]
    assert ops[2].op[1]["order_id"] == sell1 and ops[2].op[1]["fee"] == amt(3, usd)
    assert ops[3].op == [1, {
        "fee": amt(create_fee), "seller": SAM, "amount_to_sell": amt(1232, usd),
        "min_to_receive": amt(1008), "expiration": format_time(now + 3600),
        "fill_or_kill": False, "extensions": {}}]
    assert ops[3].result == [1, tp]
    # Sam's account history holds it with its result, after his fill
    [newest, fill] = blocks.history.get_account_history(SAM, 0, 2, 0)
    assert newest["op"] == ops[3].op and newest["result"] == [1, tp]
    assert (newest["virtual_op"], newest["is_virtual"]) == (3, True)
    assert fill["op"][0] == 4 and fill["op"][1]["order_id"] == sell1


def test_a_second_fill_updates_the_linked_order(market):
    chain, usd, blocks = market
    state = chain.state
    create_fee, update_fee, cancel_fee = fees(chain, usd)
    sell1 = order(chain, SAM, amt(10000), amt(12345, usd), [action()])
    order(chain, TED, amt(1235, usd), amt(1000))
    tp = state.objects[sell1]["take_profit_order_id"]
    produce(chain)
    core0 = state.balance(SAM, CORE)
    now = chain.head_block_time
    # Ted sells 11200 USD for at least 9000 core: Sam's 9000 core remaining
    # get round_down(9000 * 12345 / 10000) = 11110 USD, fee 33, 11077 net
    ted = order(chain, TED, amt(11200, usd), amt(9000))
    assert sell1 not in state.objects
    obj = state.objects[tp]
    # 1232 + 11077 = 12309 for sale at 12345 / 10100:
    # round_up(12309 * 10100 / 12345) = 10071
    assert obj["for_sale"] == 12309
    assert obj["sell_price"] == {"base": amt(12309, usd), "quote": amt(10071)}
    assert obj["expiration"] == now + 3600
    assert "take_profit_order_id" not in obj  # the filled order is gone
    # the update's fee becomes the deferred fee; the old one comes back
    # minus round_down(cancel fee * update fee / create fee)
    kept = min(cancel_fee * update_fee // create_fee, create_fee)
    assert obj["deferred_fee"] == update_fee
    assert state.balance(SAM, CORE) == core0 - update_fee + create_fee - kept
    assert state.objects[ted]["for_sale"] == 11200 - 11110
    produce(chain)
    ops = blocks.seen[-1].operations
    assert [(o.op[0], o.virtual_op) for o in ops] == [(1, 0), (4, 1), (4, 2), (77, 3)]
    assert ops[3].op == [77, {
        "fee": amt(update_fee), "seller": SAM, "order": tp,
        "new_price": {"base": amt(12309, usd), "quote": amt(10071)},
        "delta_amount_to_sell": amt(11077, usd), "new_expiration": format_time(now + 3600),
        "extensions": []}]
    assert ops[3].result == [0, {}]


def test_repeat_size_and_a_fee_in_another_asset(market):
    chain, usd, _blocks = market
    state = chain.state
    create_fee, _u, _c = fees(chain, usd)
    repeat = action(fee_asset=usd, spread=70, size=9700, seconds=0xFFFFFFFF, repeat=True)
    sell2 = order(chain, SAM, amt(10000), amt(13000, usd), [repeat])
    usd0 = state.balance(SAM, usd)
    pool0 = state.objects["2.3.1"]["fee_pool"]
    tp = f"1.7.{int(sell2.split('.')[2]) + 2}"
    order(chain, TED, amt(13000, usd), amt(10000))
    assert sell2 not in state.objects
    obj = state.objects[tp]
    # 13000 - round_down(13000 * 0.3%) = 12961 received;
    # size round_up(12961 * 97%) = 12573 at (13000 / 10000) / 100.7%:
    # round_up(12573 * 10070 / 13000) = 9740; no expiration overflow
    assert obj["for_sale"] == 12573
    assert obj["sell_price"] == {"base": amt(12573, usd), "quote": amt(9740)}
    assert obj["expiration"] == 0xFFFFFFFF  # fc time_point_sec::maximum()
    assert obj["on_fill"] == [repeat] and "take_profit_order_id" not in obj
    # fee in USD: round_up(create fee * 3 / 2); its core value
    # round_down(paid * 2 / 3) leaves the USD fee pool
    paid = -(-create_fee * 3 // 2)
    assert obj["deferred_paid_fee"] == amt(paid, usd)
    assert obj["deferred_fee"] == paid * 2 // 3
    assert state.objects["2.3.1"]["fee_pool"] == pool0 - paid * 2 // 3
    assert state.balance(SAM, usd) == usd0 + 12961 - 12573 - paid


def test_a_failed_action_leaves_nothing(market):
    """The fee pool cannot pay the take-profit order's fee: the fill goes
    on, no order, no virtual operation, no order id used (the reference's
    check that the next order takes the next id)."""
    chain, usd, blocks = market
    state = chain.state
    [[_t, eur]] = push(chain, [10, {
        "issuer": SAM, "symbol": "EUR", "precision": 4, "is_prediction_market": False,
        "common_options": asset_options(), "extensions": []}])
    sell1 = order(chain, SAM, amt(10000), amt(12345, usd), [action(fee_asset=eur)])
    usd0 = state.balance(SAM, usd)
    ted = order(chain, TED, amt(1235, usd), amt(1000))
    assert state.find(ted) is None
    assert state.objects[sell1]["for_sale"] == 9000
    assert "take_profit_order_id" not in state.objects[sell1]
    assert state.balance(SAM, usd) == usd0 + 1232
    assert next_order_id(chain) == f"1.7.{int(ted.split('.')[2]) + 1}"
    produce(chain)
    assert [o.op[0] for o in blocks.seen[-1].operations][-3:] == [1, 4, 4]


def test_update_sets_and_removes_on_fill(market):
    chain, usd, _blocks = market
    state = chain.state
    sell1 = order(chain, SAM, amt(10000), amt(12345, usd))
    update = {"seller": SAM, "order": sell1, "extensions": []}
    push(chain, [77, dict(update, on_fill=[action(size=5000)])])
    assert state.objects[sell1]["on_fill"] == [action(size=5000)]
    order(chain, TED, amt(1235, usd), amt(1000))
    tp = state.objects[sell1]["take_profit_order_id"]
    # half of the 1232 received, rounded up
    assert state.objects[tp]["for_sale"] == 616
    # another size or expiration keeps the link (same spread and repeat)
    push(chain, [77, dict(update, on_fill=[action(size=8000, seconds=60)])])
    assert state.objects[sell1]["take_profit_order_id"] == tp
    # another spread unlinks both orders
    push(chain, [77, dict(update, on_fill=[action(spread=200)])])
    assert "take_profit_order_id" not in state.objects[sell1]
    assert "take_profit_order_id" not in state.objects[tp]
    # the next fill makes a new take-profit order; removing on_fill unlinks
    produce(chain)
    order(chain, TED, amt(1235, usd), amt(1000))
    tp2 = state.objects[sell1]["take_profit_order_id"]
    assert tp2 != tp and state.objects[tp2]["take_profit_order_id"] == sell1
    push(chain, [77, dict(update, on_fill=[])])
    assert state.objects[sell1]["on_fill"] == []
    assert "take_profit_order_id" not in state.objects[sell1]
    assert "take_profit_order_id" not in state.objects[tp2]


def test_a_price_change_and_a_cancel_unlink(market):
    chain, usd, _blocks = market
    state = chain.state
    sell1 = order(chain, SAM, amt(10000), amt(12345, usd), [action()])
    order(chain, TED, amt(1235, usd), amt(1000))
    tp = state.objects[sell1]["take_profit_order_id"]
    push(chain, [77, {"seller": SAM, "order": sell1, "extensions": [],
                      "new_price": {"base": amt(9000), "quote": amt(12000, usd)}}])
    assert "take_profit_order_id" not in state.objects[sell1]
    assert "take_profit_order_id" not in state.objects[tp]
    produce(chain)
    order(chain, TED, amt(1400, usd), amt(1000))
    tp2 = state.objects[sell1]["take_profit_order_id"]
    push(chain, [2, {"fee_paying_account": SAM, "order": sell1, "extensions": []}])
    assert "take_profit_order_id" not in state.objects[tp2]


@pytest.mark.parametrize("on_fill, message", [
    ([], "must contain only one action"),
    ([action(), action()], "must contain only one action"),
    ([action(fee_asset="1.3.9")], "Fee asset does not exist"),
])
def test_create_refusals(market, on_fill, message):
    """market_evaluator.cpp limit_order_create_evaluator::do_evaluate."""
    chain, usd, _blocks = market
    state = chain.state
    core0 = state.balance(SAM, CORE)
    with pytest.raises(InvalidOperation, match=message):
        order(chain, SAM, amt(10000), amt(12345, usd), on_fill)
    assert state.balance(SAM, CORE) == core0 and not state.limit_orders_of(SAM)


def _two_makers_and_a_taker(chain, usd, ted_sells, ted_receives):
    """Sam offers 1000 core for 1200 USD and 1000 core for 1210 USD; Ted
    then buys with ``ted_sells`` USD for at least ``ted_receives`` core,
    with a take-profit action (spread 1%, all of it, 1 hour)."""
    order(chain, SAM, amt(1000), amt(1200, usd))
    order(chain, SAM, amt(1000), amt(1210, usd))
    produce(chain)
    return order(chain, TED, amt(ted_sells, usd), amt(ted_receives), [action()])


def test_the_taker_meets_its_own_take_profit_order(market):
    """db_market.cpp ``apply_order`` takes the next order of the book
    before each match: the take-profit order the first fill of Ted's order
    created lies after the second maker, so Ted's order, still open after
    it, matches its own take-profit order at that order's price."""
    chain, usd, blocks = market
    state = chain.state
    # Ted: 3000 USD for 2400 core; take-profit price (2400 / 3000) / 101%
    # = 80 / 101 core per USD.
    # vs 1000 core for 1200: pays 1200, gets 1000 -> take-profit order
    #   1000 core for round_up(1000 * 101 / 80) = 1263 USD
    # vs 1000 core for 1210: pays 1210, gets 1000 -> the take-profit order
    #   grows to 2000 core for round_up(2000 * 101 / 80) = 2525 USD
    # vs its take-profit order (590 USD left): gets round_down(590 * 2000 /
    #   2525) = 467 core, pays round_up(467 * 2525 / 2000) = 590: filled;
    #   the take-profit order first grows to 2467 core for
    #   round_up(2467 * 101 / 80) = 3115 USD, then pays the 467 core
    ted = _two_makers_and_a_taker(chain, usd, 3000, 2400)
    assert ted not in state.objects
    [tp] = [o["id"] for o in state.limit_orders_of(TED)]
    obj = state.objects[tp]
    assert obj["for_sale"] == 2000
    assert obj["sell_price"] == {"base": amt(2467), "quote": amt(3115, usd)}
    assert "take_profit_order_id" not in obj
    produce(chain)
    ops = blocks.seen[-1].operations
    assert [o.op[0] for o in ops][-10:] == [1, 4, 1, 4, 4, 77, 4, 4, 77, 4]
    last_fill = ops[-1].op[1]
    assert last_fill["order_id"] == tp and last_fill["pays"] == amt(467)
    assert last_fill["receives"] == amt(590, usd) and last_fill["fee"] == amt(1, usd)


def test_a_match_that_fills_neither_order_fails(market):
    """As above with 10000 USD: Ted's order still has 7590 USD when it
    meets its own take-profit order (2000 core for 2525 USD), whose fill
    of Ted's order tops it up by what Ted's order receives; neither order
    is then filled and graphene's ``match_limit_normal_limit`` assertion
    fails the operation, leaving nothing."""
    chain, usd, _blocks = market
    state = chain.state
    order(chain, SAM, amt(1000), amt(1200, usd))
    order(chain, SAM, amt(1000), amt(1210, usd))
    produce(chain)
    before = (state.balance(TED, CORE), state.balance(TED, usd), next_order_id(chain))
    with pytest.raises(InvalidOperation, match="none_filled"):
        order(chain, TED, amt(10000, usd), amt(8000), [action()])
    assert (state.balance(TED, CORE), state.balance(TED, usd), next_order_id(chain)) == before
    assert len(state.limit_orders_of(SAM)) == 2 and not state.limit_orders_of(TED)


def test_nesting_deeper_than_twice_the_witnesses_is_refused(market):
    """db_block.cpp ``undo_session_nesting_guard``: at most twice the
    active witnesses nested sessions; past that the action fails like any
    other (logged, nothing left)."""
    from nodeapi.chain.market.take_profit import process_on_fill
    from nodeapi.chain.transactions import new_context

    chain, usd, _blocks = market
    state = chain.state
    sell1 = order(chain, SAM, amt(10000), amt(12345, usd), [action()])
    ctx = new_context(state, "TEST")
    ctx.nested_sessions = 2 * len(state.objects["2.0.0"]["active_witnesses"])
    before = next_order_id(chain)
    state.begin()
    try:
        assert process_on_fill(ctx, sell1, 1000) is None
        assert ctx.virtual_ops == [] and next_order_id(chain) == before
        ctx.nested_sessions -= 1
        tp = process_on_fill(ctx, sell1, 1000)
        assert tp == before and [op[0] for op, _r in ctx.virtual_ops] == [1]
        assert ctx.nested_sessions == 2 * len(state.objects["2.0.0"]["active_witnesses"]) - 1
    finally:
        state.rollback()


@pytest.fixture
def site(market):
    running = RunningSite(make_node(market[0]), ApiAccess.default())
    yield running
    running.stop_blocking()


@pytest_twisted.ensureDeferred
async def test_over_rpc_the_refusal_is_clear_and_the_links_are_shown(market, site):
    """network_broadcast answers a refused take-profit order with the
    reference's text and loses nothing; get_objects shows the orders'
    ``on_fill`` and their ``take_profit_order_id`` links."""
    chain, usd, _blocks = market
    state = chain.state
    core0 = state.balance(SAM, CORE)
    op = [1, {"fee": amt(10 ** 6), "seller": SAM, "amount_to_sell": amt(10000),
              "min_to_receive": amt(12345, usd), "expiration": FOREVER,
              "fill_or_kill": False, "extensions": {"on_fill": []}}]
    answer = await call(site, "network_broadcast", "broadcast_transaction",
                        sign_wire(chain, [op]))
    assert "must contain only one action" in answer["error"]["message"], answer
    assert state.balance(SAM, CORE) == core0 and not state.limit_orders_of(SAM)
    sell1 = order(chain, SAM, amt(10000), amt(12345, usd), [action()])
    order(chain, TED, amt(1235, usd), amt(1000))
    tp = state.objects[sell1]["take_profit_order_id"]
    [o1, o2] = (await call(site, "database", "get_objects", [sell1, tp]))["result"]
    assert o1["on_fill"] == [action()] and o1["take_profit_order_id"] == tp
    assert o2["on_fill"] == [] and o2["take_profit_order_id"] == sell1


async def call(site, api, method, *params):
    body = {"jsonrpc": "2.0", "id": 1, "method": "call", "params": [api, method, list(params)]}
    resp = await treq.post(site.url + "/rpc", data=orjson.dumps(body))
    return orjson.loads(await resp.content())
