"""nodeapi's objects equal the reference's, field by field (kit.compare):
bitshares-core 7.0.2's witness_node produces the bundled genesis' chain
on demand (kit.reference.start_on_demand: block 1 at the wall clock, so
every hardfork is in force as nodeapi applies them; then a block only
when asked, so both nodes stand still while they are read), a nodeapi
node follows it over RPC with the reference's numbering of account
statistics (2.6.N), and every object of spaces 1 and 2 plus the
assembled answers (properties, config, full accounts) are compared,
leaving out only the deliberate differences of
docs/reference-differences.rst (tests/kit/reference_differences.json)."""

import calendar
import hashlib
import json
import time
from contextlib import contextmanager

import pytest
from bitsharesbase import operations
from bitsharesbase.operationids import operations as op_ids

from nodeapi.chain.genesis import DEFAULT_GENESIS
from nodeapi.protocol.transaction import sign_transaction

from kit.chain import CORE, account_options, asset_options, claim_op, claim_wire
from kit.compare import compare_objects, report
from kit.daemon import Daemon
from kit.keys import DEV_PUB, DEV_WIF
from kit.reference import requires_reference, start_on_demand
from kit.signing import signed_over_head, tapos

pytestmark = [pytest.mark.reference, pytest.mark.slow, requires_reference]

#: the follower: no witness plugin (it must not produce), graphene's 2.6.N
FOLLOWER_ARGS = ("--account-statistics-type", "6",
                 "--plugins", "account_history market_history grouped_orders custom_operations")


@contextmanager
def following(tmp_path, *genesis_args):
    """(reference, nodeapi) at the same head block, both over the genesis
    ``genesis_args`` names (``--genesis-json PATH``; none: the bundled)."""
    ref = start_on_demand(tmp_path, "reference", extra=list(genesis_args))
    node = None
    try:
        node = Daemon(tmp_path / "nodeapi", "--seed-node", ref.ws_url, *genesis_args,
                      *FOLLOWER_ARGS).start()
        node.wait_head(ref.head())
        yield ref, node
    finally:
        if node is not None:
            node.stop()
        ref.stop()


@pytest.fixture
def nodes(tmp_path):
    """(reference, nodeapi) over the bundled genesis at the same head."""
    with following(tmp_path) as pair:
        yield pair


def same_head(ref, node):
    """Both nodes at the reference's head block, the same block."""
    num = ref.head()
    head = node.wait_head(num)
    assert head == (num, ref.call("get_dynamic_global_properties")["head_block_id"])


def with_fee(ref, op_class, **data):
    """A bitsharesbase operation with the fee the reference requires."""
    op = op_class(fee={"amount": 0, "asset_id": CORE}, prefix="TEST", **data)
    fee, = ref.call("get_required_fees", [[op_ids[op_class.__name__.lower()], op.json()]], CORE)
    return op_class(fee=fee, prefix="TEST", **data)


def in_a_block(ref, node, *ops):
    """Broadcast ``ops`` (one transaction signed with the development key)
    to the reference, which puts it in its next block; the follower
    applies that block too."""
    ref.call("broadcast_transaction", signed_over_head(ref, list(ops)), api="network_broadcast")
    ref.produce_block()
    same_head(ref, node)


def test_after_genesis_every_object_equals_the_references(nodes):
    """The genesis objects and block 1's first maintenance (the reference
    made block 1), then one empty block: no difference but the
    documented ones."""
    ref, node = nodes
    same_head(ref, node)
    diffs = compare_objects(ref, node)
    assert not diffs, report(diffs)
    # the committee account's core balance of the genesis is 2.5.0 on both
    balance, = node.call("get_objects", ["2.5.0"])
    assert balance["owner"] == "1.2.0" and balance["balance"] == 0
    ref.produce_block()
    same_head(ref, node)
    diffs = compare_objects(ref, node)
    assert not diffs, report(diffs)


def test_after_these_transactions_every_object_equals_the_references(nodes):
    """A genesis balance claimed, a transfer, an account and an asset
    created (with a max_market_fee that fits in 32 bits: a JSON number on
    both), the asset issued and its fee pool funded, two orders that fill,
    votes: every object equal after each block, but the documented
    differences."""
    ref, node = nodes
    key = {"weight_threshold": 1, "account_auths": [], "key_auths": [[DEV_PUB, 1]],
           "address_auths": []}
    steps = [
        ("claim", [claim_op()]),
        ("transfer", [with_fee(ref, operations.Transfer, **{
            "from": "1.2.6", "to": "1.2.7", "amount": {"amount": 123456789, "asset_id": CORE},
            "extensions": []})]),
        ("account_create", [with_fee(ref, operations.Account_create, registrar="1.2.6",
                                     referrer="1.2.6", referrer_percent=0, name="alice-1",
                                     owner=key, active=key, options=account_options(DEV_PUB),
                                     extensions={})]),
        ("asset_create", [with_fee(ref, operations.Asset_create, issuer="1.2.6", symbol="GOLD",
                                   precision=3, common_options=asset_options(cer_quote="1.3.1"),
                                   is_prediction_market=False, extensions=[])]),
        ("asset_issue", [with_fee(ref, operations.Asset_issue, issuer="1.2.6",
                                  asset_to_issue={"amount": 100000, "asset_id": "1.3.1"},
                                  issue_to_account="1.2.7", extensions=[])]),
        ("fee_pool", [with_fee(ref, operations.Asset_fund_fee_pool, from_account="1.2.6",
                               asset_id="1.3.1", amount=10000000, extensions=[])]),
        ("order", [with_fee(ref, operations.Limit_order_create, seller="1.2.7",
                            amount_to_sell={"amount": 1000, "asset_id": "1.3.1"},
                            min_to_receive={"amount": 5000000, "asset_id": CORE},
                            expiration="2030-01-01T00:00:00", fill_or_kill=False,
                            extensions=[])]),
        ("order_filling", [with_fee(ref, operations.Limit_order_create, seller="1.2.6",
                                    amount_to_sell={"amount": 2500000, "asset_id": CORE},
                                    min_to_receive={"amount": 500, "asset_id": "1.3.1"},
                                    expiration="2030-01-01T00:00:00", fill_or_kill=False,
                                    extensions=[])]),
        ("votes", [with_fee(ref, operations.Account_update, account="1.2.6",
                            new_options=dict(account_options(DEV_PUB), num_committee=1,
                                             num_witness=1, votes=["0:11", "1:0"]),
                            extensions={})]),
    ]
    for name, ops in steps:
        in_a_block(ref, node, *ops)
        diffs = compare_objects(ref, node)
        assert not diffs, f"after {name}:\n{report(diffs)}"
    # the shapes the known differences were about
    gold, = node.call("get_objects", ["1.3.1"])
    assert gold["options"]["max_market_fee"] == 1000000  # a number, as fc writes it
    claimed = node.call("get_account_balances", "init0", [CORE])
    assert claimed == ref.call("get_account_balances", "init0", [CORE])
    init0_core = node.call("get_full_accounts", ["init0"], False)[0][1]["balances"]
    assert [b["id"] for b in init0_core if b["asset_type"] == CORE] == ["2.5.1"]
    assert all(b["maintenance_flag"] for b in init0_core if b["asset_type"] == CORE)


def in_a_block_wire(ref, node, chain_id, *ops):
    """Wire ``ops`` with the fees the reference requires, signed for
    ``chain_id`` with the development key, in the reference's next block."""
    props = ref.call("get_dynamic_global_properties")
    head_time = calendar.timegm(time.strptime(props["time"], "%Y-%m-%dT%H:%M:%S"))
    paid = []
    for kind, body in ops:
        zero = [kind, dict(body, fee={"amount": 0, "asset_id": CORE})]
        fee, = ref.call("get_required_fees", [zero], CORE)
        paid.append([kind, dict(body, fee=fee)])
    trx = dict(tapos(props["head_block_number"], props["head_block_id"], head_time),
               operations=paid, extensions=[], signatures=[])
    trx = sign_transaction(trx, chain_id, [DEV_WIF], "TEST")
    ref.call("broadcast_transaction", trx, api="network_broadcast")
    ref.produce_block()
    same_head(ref, node)


def test_after_a_maintenance_every_object_equals_the_references(tmp_path):
    """A chain whose maintenance interval is 20 s: init0 votes for a
    committee member and a witness, init1 proxies to init0, then the next
    maintenance (vote tally with core_in_balance as of the account pass,
    fees, budget, the elected sets and authorities) and the blocks after
    it: every object equal, but the documented differences."""
    with open(DEFAULT_GENESIS) as f:
        data = json.load(f)
    data["initial_parameters"]["maintenance_interval"] = 20
    raw = json.dumps(data, indent=1).encode()
    path = tmp_path / "genesis.json"
    path.write_bytes(raw)
    chain_id = hashlib.sha256(raw).hexdigest()  # the file's digest, on both nodes
    with following(tmp_path, "--genesis-json", str(path)) as (ref, node):
        assert ref.call("get_chain_id") == node.call("get_chain_id") == chain_id
        votes = dict(account_options(DEV_PUB), num_committee=1, num_witness=1,
                     votes=["0:11", "1:0"])
        in_a_block_wire(ref, node, chain_id, claim_wire())
        in_a_block_wire(ref, node, chain_id, [0, {
            "from": "1.2.6", "to": "1.2.7", "amount": {"amount": 10 ** 10, "asset_id": CORE},
            "extensions": []}])
        in_a_block_wire(ref, node, chain_id, [10, {
            "issuer": "1.2.6", "symbol": "GOLD", "precision": 3,
            "common_options": asset_options(cer_quote="1.3.1"), "is_prediction_market": False,
            "extensions": []}])
        # core in an order is voting stake (core-2262: a liquid balance is not)
        in_a_block_wire(ref, node, chain_id, [1, {
            "seller": "1.2.6", "amount_to_sell": {"amount": 10 ** 9, "asset_id": CORE},
            "min_to_receive": {"amount": 10 ** 6, "asset_id": "1.3.1"},
            "expiration": "2030-01-01T00:00:00", "fill_or_kill": False, "extensions": {}}])
        in_a_block_wire(ref, node, chain_id, [6, {"account": "1.2.6", "new_options": votes,
                                                  "extensions": {}}])
        in_a_block_wire(ref, node, chain_id, [6, {
            "account": "1.2.7", "new_options": dict(votes, voting_account="1.2.6"),
            "extensions": {}}])
        before = ref.call("get_dynamic_global_properties")["next_maintenance_time"]
        while ref.call("get_dynamic_global_properties")["next_maintenance_time"] == before:
            ref.produce_block()
        same_head(ref, node)
        diffs = compare_objects(ref, node)
        assert not diffs, f"after the maintenance:\n{report(diffs)}"
        stats, = node.call("get_objects", ["2.6.6"])  # init0's, tallied at this block
        head_time = node.call("get_dynamic_global_properties")["time"]
        assert int(stats["core_in_balance"]) > 0 and stats["vote_tally_time"] == head_time
        assert stats["vp_committee"] == 10 ** 9  # its order's core
        member, = node.call("get_objects", ["1.5.0"])  # vote id 0:11
        assert member["total_votes"] == 10 ** 9
        for _ in range(3):
            ref.produce_block()
        same_head(ref, node)
        diffs = compare_objects(ref, node)
        assert not diffs, f"after the blocks after it:\n{report(diffs)}"
