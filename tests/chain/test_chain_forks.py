"""Fork switching: graphene ``database::push_block`` with its fork
database (bitshares-core libraries/chain/db_block.cpp ``_push_block``,
``pop_block``; fork_database.cpp ``push_block``, ``fetch_branch_from``).

Two chains share blocks 1-2 (the claim of the genesis balance), then each
produces on its own: A one block at slot 1 (a transfer of 1,000 to init1),
B two blocks at slots 2 and 3 (a transfer of 5,000).  B's branch is longer,
so A, given B's blocks, pops its block 3 and applies B's 3 and 4; the
popped transfer goes back to A's pending transactions.
"""

import pytest

from nodeapi.chain.errors import InvalidBlock, UnlinkableBlock
from nodeapi.protocol.block import block_id as compute_block_id

from kit.chain import fund, signed_wire, transfer_wire
from kit.keys import DEV_WIF


def produce_at(chain, slot: int) -> dict:
    """A block at ``slot`` slots after the head (the slots before missed)."""
    return chain.generate_block(chain.get_slot_time(slot), chain.get_scheduled_witness(slot),
                                DEV_WIF)


def push(chain, block, **kw):
    return chain.push_network_block(block, now=chain.head_block_time + 3600, **kw)


@pytest.fixture
def forked(new_chain):
    """(A, B, A's block 3, B's blocks 3 and 4): A with its own block 3, B
    with a longer branch after the shared blocks 1-2."""
    a, b = new_chain(), new_chain()
    fund(a, init1=10 ** 8)
    for num in (1, 2):
        push(b, a.get_block(num))
    a.push_transaction(signed_wire(a, transfer_wire(1000)))
    a3 = produce_at(a, 1)
    b.push_transaction(signed_wire(b, transfer_wire(5000)))
    b3 = produce_at(b, 2)
    b4 = produce_at(b, 1)
    return a, b, a3, (b3, b4)


def committed(chain) -> dict:
    return chain.state.committed()[0]


def test_longer_fork_is_switched_to(forked):
    a, b, a3, (b3, b4) = forked
    init1_before = a.state.balance("1.2.7", "1.3.0")
    first = push(a, b3)
    assert first.kept and not first.applied and a.head_block_num == 3
    assert a.head_block_id != b.head_block_id
    result = push(a, b4)
    assert result.switched
    assert [p.block_num for p in result.popped] == [3]
    assert [x.block_num for x in result.applied] == [3, 4]
    assert a.head_block_id == b.head_block_id
    assert a.block_log.head_num == 4
    assert a.get_block(3) == b3 and a.get_block(4) == b4
    assert committed(a) == committed(b)
    # the popped block's transfer of 1,000 is pending again, B's 5,000 applied:
    # init1 holds 10^8 + 5,000 in the head state, + 1,000 with the pending one
    pending = a.pending_transactions
    assert [t["operations"][0][1]["amount"]["amount"] for t in pending] == [1000]
    assert a.state.balance("1.2.7", "1.3.0") == init1_before - 1000 + 5000 + 1000


def test_shorter_fork_is_kept_not_switched(forked):
    a, b, a3, (b3, b4) = forked
    push(a, b3)
    push(a, b4)
    # B hears of A's block 3: its branch is shorter, kept only
    result = push(b, a3)
    assert result.kept and not result.switched
    assert b.head_block_num == 4 and b.head_block_id == compute_block_id(b4)
    assert b.forks.get(compute_block_id(a3)) == a3


def test_switching_back_to_a_branch_that_grows(forked, new_chain):
    a, b, a3, (b3, b4) = forked
    c = new_chain()  # a copy of A's branch
    for num in (1, 2, 3):
        push(c, a.get_block(num))
    push(a, b3)
    push(a, b4)
    # A's popped block 3 stays in its fork database; C grows that branch
    # past B's, and A switches back to it
    assert a.forks.get(compute_block_id(a3)) == a3
    c4 = produce_at(c, 3)
    c5 = produce_at(c, 1)
    assert not push(a, c4).switched  # 4 against 4: kept
    result = push(a, c5)
    assert [p.block_num for p in result.popped] == [4, 3]
    assert [x.block_num for x in result.applied] == [3, 4, 5]
    assert a.head_block_id == c.head_block_id
    assert committed(a) == committed(c)
    # B's transfer of 5,000 went back to the pending transactions
    assert [t["operations"][0][1]["amount"]["amount"] for t in a.pending_transactions] == [5000]


def test_refused_fork_block_leaves_the_main_branch(forked):
    a, b, a3, (b3, b4) = forked
    push(a, b3)
    bad = dict(b4, transaction_merkle_root="11" * 20)  # no longer what the witness signed
    state_before = committed(a)
    with pytest.raises(InvalidBlock):
        push(a, bad)
    assert a.head_block_num == 3 and a.get_block(3) == a3
    assert committed(a) == state_before
    assert a.block_log.head_num == 3
    # the refused block is out of the fork database; b3 (valid) stays
    assert compute_block_id(bad) not in a.forks and compute_block_id(b3) in a.forks
    # the good one switches A all the same
    assert push(a, b4).switched
    assert a.head_block_id == b.head_block_id


def test_unlinkable_and_irreversible_blocks_refused(forked, new_chain):
    """A block on nothing known is ``UnlinkableBlock`` (fork_database.cpp
    ``_push_block``: "unlinkable block"); a fork block at or below the last
    irreversible block is refused (it could never be switched to)."""
    from kit.chain import produce

    a, b, a3, (b3, b4) = forked
    with pytest.raises(UnlinkableBlock):
        push(a, b4)  # builds on b3, which A has not seen
    c = new_chain()
    with pytest.raises(UnlinkableBlock):
        push(c, b4)
    produce(a, 12)  # every witness signs with the same key: blocks become irreversible
    assert a.dgp["last_irreversible_block_num"] >= 3
    with pytest.raises(InvalidBlock, match="irreversible"):
        push(a, b3)
    assert compute_block_id(b3) not in a.forks


def test_pop_block_undoes_state_log_and_puts_transactions_back(forked):
    a, b, a3, (b3, b4) = forked
    before = committed(a)
    balance = a.state.balance("1.2.7", "1.3.0")
    popped = a.pop_block()
    assert popped.block_num == 3 and a.head_block_num == 2
    assert a.block_log.head_num == 2
    assert committed(a) != before
    # the transfer is pending again: init1's balance in the pending state unchanged
    assert a.state.balance("1.2.7", "1.3.0") == balance
    assert len(a.pending_transactions) == 1


def test_account_history_follows_the_switch(new_chain):
    """A consumer with ``block_popped`` (the account history plugin)
    forgets the popped block's operations: after the switch A's history
    equals B's, which never saw A's block (graphene's undo database takes
    the history objects back)."""
    from nodeapi.plugins.account_history.history import AccountHistory

    a, b = new_chain(), new_chain()
    ha, hb = AccountHistory(), AccountHistory()
    a.add_consumer(ha)
    b.add_consumer(hb)
    fund(a, init1=10 ** 8)
    for num in (1, 2):
        push(b, a.get_block(num))
    a.push_transaction(signed_wire(a, transfer_wire(1000)))
    produce_at(a, 1)
    assert ha.operation_count != hb.operation_count
    b.push_transaction(signed_wire(b, transfer_wire(5000)))
    blocks = [produce_at(b, 2), produce_at(b, 1)]
    for block in blocks:
        push(a, block)
    assert a.head_block_id == b.head_block_id
    for account in ("1.2.6", "1.2.7"):
        assert (ha.get_account_history(account, 0, 100, 0)
                == hb.get_account_history(account, 0, 100, 0))
        assert ha.account_total_ops(account) == hb.account_total_ops(account)
    assert ha.entry_count == hb.entry_count and ha.operation_count == hb.operation_count
    assert ha.get_block_operation_history(3) == hb.get_block_operation_history(3)


def test_fork_database_bounds():
    """At most ``max_size`` blocks and ``max_bytes`` packed bytes are kept
    (the lowest go first); :meth:`remove` drops a block and what builds on
    it; :meth:`prune` forgets the irreversible heights."""
    from nodeapi.chain.forkdb import ForkDatabase

    def bid(num, tag):
        return f"{num:08x}" + tag * 32

    forks = ForkDatabase(max_size=3, max_bytes=250)
    forks.add(bid(5, "a"), {"previous": bid(4, "0")}, 100)
    forks.add(bid(6, "a"), {"previous": bid(5, "a")}, 100)
    assert forks.bytes == 200 and len(forks) == 2
    forks.add(bid(7, "a"), {"previous": bid(6, "a")}, 100)  # 300 bytes: block 5 goes
    assert bid(5, "a") not in forks and forks.bytes == 200
    forks.add(bid(7, "b"), {"previous": bid(6, "a")}, 10)
    forks.add(bid(8, "b"), {"previous": bid(7, "b")}, 10)   # 4 blocks: block 6 goes
    assert len(forks) == 3 and bid(6, "a") not in forks and forks.bytes == 120
    assert sorted(forks.remove(bid(7, "b"))) == [bid(7, "b"), bid(8, "b")]
    assert forks.bytes == 100
    forks.prune(7)
    assert len(forks) == 0 and forks.bytes == 0


def test_a_fork_older_than_the_undo_history_is_not_switched_to(forked):
    """After a debug update the blocks before it cannot be popped (their
    undo records would put objects back without the update): a fork from
    before it builds on no block the chain can still reach (graphene: the
    fork database holds only the undoable blocks), nothing changes."""
    a, b, a3, (b3, b4) = forked
    a.debug_update({"_action": "update", "id": "1.2.7", "name": "init1"})
    head, state = a.head_block_id, committed(a)
    for block in (b3, b4):
        with pytest.raises(UnlinkableBlock):
            push(a, block)
    assert a.head_block_id == head and committed(a) == state
    assert a.main_block_id(2) is None and a.main_block_id(3) == head


def test_a_fork_may_build_on_the_last_irreversible_block(forked):
    """The first block of the undo history builds on a block that is no
    longer undoable (the last irreversible one): a fork from there can
    still be switched to (graphene pops back to it, no further)."""
    a, b, a3, (b3, b4) = forked
    a.blocks.undo_history.popleft()  # as if block 1 had become irreversible
    a.blocks.undo_history.popleft()  # ... and block 2
    assert a.main_block_id(2) == a.get_block(3)["previous"]
    push(a, b3)
    assert push(a, b4).switched and a.head_block_id == b.head_block_id


def _storage_op(catalog, pairs):
    def string(s):
        b = s.encode()
        return bytes([len(b)]) + b
    data = bytes([0, 0]) + string(catalog) + bytes([len(pairs)])
    for key, value in pairs:
        data += string(key) + b"\x01" + string(value)
    return [35, {"fee": {"amount": 0, "asset_id": "1.3.0"}, "payer": "1.2.6",
                 "required_auths": [], "id": 0, "data": data.hex()}]


def test_grouped_orders_and_account_storage_follow_the_switch(new_chain):
    """The grouped orders and custom operations plugins take a popped
    block back (graphene keeps their objects in the database, under its
    undo database): A's block 3 (an order, a storage change and a new
    storage key) is popped for B's branch (another key), and both plugins
    end as B's, which never saw A's block."""
    from nodeapi.plugins.custom_operations.storage import AccountStorage
    from nodeapi.plugins.grouped_orders.orders import GroupedOrders

    from kit.chain import amt, create_asset, limit_order, push_wire

    a, b = new_chain(), new_chain()
    plugins = {}
    for chain in (a, b):
        plugins[chain] = (AccountStorage(0), GroupedOrders(chain, [10, 100]))
        for consumer in plugins[chain]:
            chain.add_consumer(consumer)
    fund(a)
    uia, _ = create_asset(a, "FORKUIA")
    push_wire(a, _storage_op("settings", [("theme", '"dark"')]))
    produce_at(a, 1)
    for num in (1, 2):
        push(b, a.get_block(num))
    limit_order(a, "1.2.6", amt(100000), amt(10, uia))
    push_wire(a, _storage_op("settings", [("theme", '"light"'), ("lang", '"en"')]))
    a3 = produce_at(a, 1)
    assert plugins[a][1].groups(10, "1.3.0", uia, None, 10)
    push_wire(b, _storage_op("contacts", [("bob", '"x"')]))
    b3 = produce_at(b, 2)
    b4 = produce_at(b, 1)
    push(a, b3)
    assert push(a, b4).switched and a.get_block(3) != a3
    storage_a, groups_a = plugins[a]
    storage_b, groups_b = plugins[b]
    assert storage_a.objects == storage_b.objects and storage_a._next == storage_b._next
    assert [o["value"] for o in storage_a.find("1.2.6", "settings")] == ["dark"]
    assert groups_a.groups(10, "1.3.0", uia, None, 10) == []
    assert groups_a._seen == groups_b._seen


def test_liquidity_pool_history_takes_a_popped_block_back():
    """``block_popped`` takes back the records of the popped block: the
    count and each pool's sequence are as before it, so the fork's block
    numbers its records as graphene's undo database leaves them."""
    from nodeapi.applied import AppliedBlock, AppliedOperation
    from nodeapi.plugins.market_history.pools import LiquidityPoolHistory

    def op(n, kind, data, result=(0, {})):
        return AppliedOperation(n, [kind, data], list(result), 1, 0, 0, 0, False, "00" * 20,
                                "1.2.6", ("1.2.6",))

    def block(num, *ops):
        return AppliedBlock(num, "00" * 20, {}, 1000 + 3 * num, ops, False)

    pools = LiquidityPoolHistory()
    pools.block_applied(block(1, op(0, 59, {"account": "1.2.6"},
                                    (3, {"new_objects": ["1.19.0"]}))))
    before = pools.checkpoint_records()
    popped = block(2, op(1, 61, {"pool": "1.19.0"}), op(2, 61, {"pool": "1.19.1"}))
    pools.block_applied(popped)
    pools.block_applied(block(3))  # nothing recorded: popping it changes nothing
    pools.block_popped(block(3))
    pools.block_popped(popped)
    assert pools.checkpoint_records() == before
    pools.block_applied(block(2, op(1, 63, {"pool": "1.19.0"})))
    assert [(r["id"], r["sequence"], r["op_type"]) for r in pools._by_pool["1.19.0"]] == [
        ("5.4.0", 1, 59), ("5.4.1", 2, 63)]


def test_the_template_plugin_counts_a_popped_block_out(forked):
    """The template plugin's counter follows a switch: its figures are
    those of the blocks on the chain (A's block 3 counted out, B's 3 and 4
    counted in)."""
    from nodeapi.plugins.template.counter import OperationCounter

    a, b, a3, (b3, b4) = forked
    counter = OperationCounter(start_block=3)
    a.add_consumer(counter)
    counter.block_applied(a.blocks.undo_history[-1].applied)  # A's block 3
    assert counter.by_type == {0: 1} and counter.last_block_num == 3
    push(a, b3)
    push(a, b4)
    assert counter.blocks == 2 and counter.last_block_num == 4
    assert counter.by_type == {0: 1}  # B's transfer of 5,000; A's of 1,000 counted out
