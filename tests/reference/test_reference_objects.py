"""nodeapi's objects equal the reference's, field by field (kit.compare):
bitshares-core 7.0.2's witness_node produces the bundled genesis' chain
on demand (kit.reference.start_on_demand: block 1 at the wall clock, so
every hardfork is in force as nodeapi applies them; then a block only
when asked, so both nodes stand still while they are read), a nodeapi
node follows it over RPC with the reference's numbering of account
statistics (2.6.N), and every object of spaces 1 and 2 plus the
assembled answers (properties, config, full accounts) are compared,
leaving out only the deliberate differences of
docs/reference-differences.rst (tools/differential/deliberate.json, the
differential runner's list)."""

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
        if isinstance(fee, list):  # a proposal: [its fee, the proposed operations']
            fee = fee[0]
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


def test_after_more_operations_every_object_equals_the_references(nodes):
    """Vesting, membership, witness / committee member / worker creation,
    a market-issued asset with a feed and a debt position, an HTLC, a
    ticket, a proposal approved into execution, a whitelisting, a UIA
    order partly filled, cancelled, a reserve and a memo: every object
    equal after each block, but the documented differences."""
    ref, node = nodes

    def amount(n, asset=CORE):
        return {"amount": n, "asset_id": asset}

    key = {"weight_threshold": 1, "account_auths": [], "key_auths": [[DEV_PUB, 1]],
           "address_auths": []}
    bitasset = {"feed_lifetime_sec": 86400, "minimum_feeds": 1,
                "force_settlement_delay_sec": 86400, "force_settlement_offset_percent": 0,
                "maximum_force_settlement_volume": 2000, "short_backing_asset": CORE,
                "extensions": {}}
    feed = {"settlement_price": {"base": amount(1, "1.3.1"), "quote": amount(10)},
            "maintenance_collateral_ratio": 1750, "maximum_short_squeeze_ratio": 1100,
            "core_exchange_rate": {"base": amount(1, "1.3.1"), "quote": amount(10)}}
    proposed = [0, {"fee": amount(2000000), "from": "1.2.6", "to": "1.2.7", "amount": amount(1),
                    "extensions": []}]
    steps = [
        ("claim", claim_wire()),
        ("transfer to init1", [0, {"from": "1.2.6", "to": "1.2.7", "amount": amount(10 ** 10),
                                   "extensions": []}]),
        ("account_create", [5, {"registrar": "1.2.6", "referrer": "1.2.6", "referrer_percent": 0,
                                "name": "bob-1", "owner": key, "active": key,
                                "options": account_options(DEV_PUB), "extensions": {}}]),
        ("transfer", [0, {"from": "1.2.6", "to": "1.2.18", "amount": amount(10 ** 10),
                          "extensions": []}]),
        ("vesting_balance_create", [32, {"creator": "1.2.6", "owner": "1.2.18",
                                         "amount": amount(100000), "policy": [1, {
                                             "start_claim": "2020-01-01T00:00:00",
                                             "vesting_seconds": 100}]}]),
        ("account_upgrade", [8, {"account_to_upgrade": "1.2.18",
                                 "upgrade_to_lifetime_member": True, "extensions": []}]),
        ("witness_create", [20, {"witness_account": "1.2.18", "url": "http://w",
                                 "block_signing_key": DEV_PUB}]),
        ("committee_member_create", [29, {"committee_member_account": "1.2.18",
                                          "url": "http://c"}]),
        ("worker_create", [34, {"owner": "1.2.18", "work_begin_date": "2030-01-01T00:00:00",
                                "work_end_date": "2031-01-01T00:00:00", "daily_pay": 1000,
                                "name": "w1", "url": "", "initializer": [1, {}]}]),
        ("asset_create (market-issued)", [10, {
            "issuer": "1.2.6", "symbol": "USDX", "precision": 4,
            "common_options": asset_options(cer_quote="1.3.1", perms=511, flags=0),
            "bitasset_opts": bitasset, "is_prediction_market": False, "extensions": []}]),
        ("asset_update_feed_producers", [13, {"issuer": "1.2.6", "asset_to_update": "1.3.1",
                                              "new_feed_producers": ["1.2.6"],
                                              "extensions": []}]),
        ("asset_publish_feed", [19, {"publisher": "1.2.6", "asset_id": "1.3.1", "feed": feed,
                                     "extensions": {}}]),
        ("call_order_update", [3, {"funding_account": "1.2.6", "delta_collateral": amount(10 ** 8),
                                   "delta_debt": amount(1000, "1.3.1"), "extensions": {}}]),
        ("htlc_create", [49, {"from": "1.2.6", "to": "1.2.7", "amount": amount(1000),
                              "preimage_hash": [2, "00" * 32], "preimage_size": 0,
                              "claim_period_seconds": 3600, "extensions": {}}]),
        ("ticket_create", [57, {"account": "1.2.6", "target_type": 1, "amount": amount(10 ** 8),
                                "extensions": []}]),
        ("proposal_create", [22, {"fee_paying_account": "1.2.6",
                                  "expiration_time": None,  # set below from the head time
                                  "proposed_ops": [{"op": proposed}], "extensions": []}]),
        ("proposal_update", [23, {"fee_paying_account": "1.2.6", "proposal": "1.10.0",
                                  "active_approvals_to_add": ["1.2.6"],
                                  "active_approvals_to_remove": [], "owner_approvals_to_add": [],
                                  "owner_approvals_to_remove": [], "key_approvals_to_add": [],
                                  "key_approvals_to_remove": [], "extensions": []}]),
        ("account_whitelist", [7, {"authorizing_account": "1.2.6", "account_to_list": "1.2.7",
                                   "new_listing": 1, "extensions": []}]),
        ("asset_create (UIA)", [10, {
            "issuer": "1.2.6", "symbol": "GOLD", "precision": 3,
            # asset_create's rate names the new asset 1.3.1 (asset_ops.cpp)
            "common_options": asset_options(cer_quote="1.3.1", perms=0x8f, percent=100,
                                            max_market_fee=5000),
            "is_prediction_market": False, "extensions": []}]),
        ("asset_issue", [14, {"issuer": "1.2.6", "asset_to_issue": amount(10 ** 6, "1.3.2"),
                              "issue_to_account": "1.2.7", "extensions": []}]),
        ("limit_order_create", [1, {"seller": "1.2.7", "amount_to_sell": amount(1000, "1.3.2"),
                                    "min_to_receive": amount(10 ** 5),
                                    "expiration": "2030-01-01T00:00:00", "fill_or_kill": False,
                                    "extensions": {}}]),
        ("limit_order_create (partly filling)", [1, {
            "seller": "1.2.6", "amount_to_sell": amount(5 * 10 ** 4),
            "min_to_receive": amount(500, "1.3.2"), "expiration": "2030-01-01T00:00:00",
            "fill_or_kill": False, "extensions": {}}]),
        ("limit_order_cancel", [2, {"fee_paying_account": "1.2.7", "order": "1.7.0",
                                    "extensions": []}]),
        ("asset_reserve", [15, {"payer": "1.2.7", "amount_to_reserve": amount(10, "1.3.2"),
                                "extensions": []}]),
        ("transfer with a memo", [0, {"from": "1.2.7", "to": "1.2.6",
                                      "amount": amount(10, "1.3.2"),
                                      "memo": {"from": DEV_PUB, "to": DEV_PUB, "nonce": 5,
                                               "message": "00"}, "extensions": []}]),
    ]
    chain_id = ref.call("get_chain_id")
    for name, op in steps:
        if op[0] == 22:  # a week after the head (at most maximum_proposal_lifetime)
            head = ref.call("get_dynamic_global_properties")["time"]
            when = calendar.timegm(time.strptime(head, "%Y-%m-%dT%H:%M:%S")) + 7 * 86400
            op = [22, dict(op[1], expiration_time=time.strftime("%Y-%m-%dT%H:%M:%S",
                                                                time.gmtime(when)))]
        in_a_block_wire(ref, node, chain_id, op)
        diffs = compare_objects(ref, node)
        assert not diffs, f"after {name}:\n{report(diffs)}"
    executed, = node.call("get_objects", ["1.10.0"])
    assert executed is None  # approved, so executed and removed, on both
