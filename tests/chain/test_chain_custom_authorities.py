"""Custom active authorities (BSIP 40): the restriction predicates
(bitshares-core restriction_predicate.hxx rules), custom_authority_create /
update / delete (54-56) on a chain whose committee parameters allow them,
and transactions signed only by a custom authority's key, accepted exactly
when the restrictions hold."""

import pytest
import pytest_twisted

from nodeapi.chain.errors import InvalidOperation, MissingAuthority
from nodeapi.protocol.operations import OPERATIONS
from nodeapi.protocol.restrictions import restriction_count, restriction_predicate
from nodeapi.protocol.times import format_time

from nodeapi.chain.evaluators.custom_authority import HARDFORK_BSIP_40_TIME

from kit.chain import (CORE, claim_wire, genesis_with, jump, open_chain, produce,
                       push_wire)
from kit.keys import DEV_PUB, DEV_WIF, OTHER_PUB, OTHER_WIF
from kit.signing import sign, sign_wire

TRANSFER = OPERATIONS[0][1]
INIT0, INIT1, INIT2 = "1.2.6", "1.2.7", "1.2.8"
FEE0 = {"amount": 0, "asset_id": CORE}
OPTIONS = {"max_custom_authority_lifetime_seconds": 86400 * 30,
           "max_custom_authorities_per_account": 3,
           "max_custom_authorities_per_account_op": 2,
           "max_custom_authority_restrictions": 5}


def r(member, function, tag, value):
    """A restriction in wire form; ``function`` by name."""
    names = ["eq", "ne", "lt", "le", "gt", "ge", "in", "not_in", "has_all", "has_none", "attr",
             "logical_or", "variant_assert"]
    return {"member_index": member, "restriction_type": names.index(function),
            "argument": [tag, value], "extensions": []}


def transfer(to=INIT1, amount=500, memo=None):
    data = {"fee": {"amount": 20, "asset_id": CORE}, "from": INIT0, "to": to,
            "amount": {"amount": amount, "asset_id": CORE}, "extensions": []}
    if memo is not None:
        data["memo"] = memo
    return data


# -- the predicates ----------------------------------------------------------------------

#: transfer members: 0 fee, 1 from, 2 to, 3 amount, 4 memo, 5 extensions
TO_INIT1 = r(2, "eq", 7, INIT1)
AMOUNT_AT_MOST_1000 = r(3, "attr", 39, [r(0, "le", 2, 1000)])


@pytest.mark.parametrize("restrictions, data, holds", [
    ([], transfer(), True),
    ([TO_INIT1], transfer(), True),
    ([TO_INIT1], transfer(to=INIT2), False),
    ([r(2, "ne", 7, INIT1)], transfer(to=INIT2), True),
    ([AMOUNT_AT_MOST_1000], transfer(amount=1000), True),
    ([AMOUNT_AT_MOST_1000], transfer(amount=1001), False),
    ([TO_INIT1, AMOUNT_AT_MOST_1000], transfer(to=INIT1, amount=1001), False),
    ([r(2, "in", 26, [INIT1, INIT2])], transfer(to=INIT2), True),
    ([r(2, "not_in", 26, [INIT1, INIT2])], transfer(to=INIT2), False),
    # an absent optional: eq void holds, any comparison fails
    ([r(4, "eq", 0, {})], transfer(), True),
    ([r(4, "eq", 0, {})], transfer(memo={"from": DEV_PUB, "to": DEV_PUB, "nonce": 1,
                                         "message": "00"}), False),
    ([r(4, "attr", 39, [r(2, "eq", 2, 1)])], transfer(), False),
    ([r(4, "attr", 39, [r(2, "eq", 2, 1)])],
     transfer(memo={"from": DEV_PUB, "to": DEV_PUB, "nonce": "1", "message": "00"}), True),
    # an integer against a container's size
    ([r(5, "eq", 2, 0)], transfer(), True),
    # either branch
    ([r(2, "logical_or", 40, [[TO_INIT1], [AMOUNT_AT_MOST_1000]])], transfer(to=INIT2,
                                                                            amount=5), True),
    ([r(2, "logical_or", 40, [[TO_INIT1], [AMOUNT_AT_MOST_1000]])], transfer(to=INIT2,
                                                                            amount=5000), False),
])
def test_transfer_restrictions(restrictions, data, holds):
    assert restriction_predicate(restrictions, TRANSFER)(data) is holds


@pytest.mark.parametrize("restrictions, message", [
    ([r(6, "eq", 7, INIT1)], "Invalid member index 6 for object transfer_operation"),
    ([r(2, "eq", 3, "init1")], "Invalid types for predicate"),
    ([r(2, "lt", 2, 5)], "Invalid types for predicate"),
    ([r(2, "attr", 39, [r(0, "eq", 2, 1)])],
     "Invalid restriction references member of non-object type"),
    ([r(3, "attr", 39, [])], "Empty attribute assertions and logical OR branches are not "
                             "permitted"),
    ([r(2, "logical_or", 40, [[TO_INIT1]])], "Logical OR must have at least two branches"),
    ([r(2, "logical_or", 39, [TO_INIT1])], "must be list of restriction lists"),
    ([r(2, "variant_assert", 41, [0, []])], "Invalid variant assertion on non-variant field"),
    ([r(2, 13 and "eq", 7, INIT1) | {"restriction_type": 13}],
     "Invalid function type on restriction"),
])
def test_restrictions_the_reference_refuses(restrictions, message):
    with pytest.raises(InvalidOperation, match=message):
        restriction_predicate(restrictions, TRANSFER)


def test_restriction_count_counts_nested_ones():
    # 1 (or) + 1 (to) + 1 (attr) + 1 (le) = 4; plus the top TO_INIT1
    assert restriction_count([r(2, "logical_or", 40, [[TO_INIT1], [AMOUNT_AT_MOST_1000]]),
                              TO_INIT1]) == 5


def test_variant_assert_on_a_worker_initializer():
    worker_create = OPERATIONS[34][1]
    names = [name for name, _t in worker_create.fields]
    initializer = names.index("initializer")
    # alternative 1: vesting_balance_worker_initializer {pay_vesting_period_days}
    only_vesting = [r(initializer, "variant_assert", 41, [1, [r(0, "le", 2, 7)]])]
    holds = restriction_predicate(only_vesting, worker_create)
    assert holds({"initializer": [1, {"pay_vesting_period_days": 7}]})
    assert not holds({"initializer": [1, {"pay_vesting_period_days": 8}]})
    assert not holds({"initializer": [0, {}]})


# -- on the chain --------------------------------------------------------------------------


#: HARDFORK_BSIP_40_TIME (bitshares-core hardfork.d/BSIP_40.hf, a
#: placeholder "until a hardfork date is scheduled"): these chains start
#: there, as custom authorities are refused before it
AFTER_BSIP_40 = "2030-01-01T00:00:00"


@pytest.fixture
def chain(genesis, tmp_path):
    params = genesis.data["initial_parameters"]
    ext = dict(params.get("extensions") or {}, custom_authority_options=OPTIONS)
    chain = open_chain(genesis_with(genesis, AFTER_BSIP_40, extensions=ext),
                       tmp_path / "blocks")
    chain.push_transaction(sign_wire(chain, [claim_wire()]))
    produce(chain)
    yield chain
    chain.block_log.close()


def push(chain, ops, wif=DEV_WIF):
    return push_wire(chain, *ops, wif=wif)


def create(chain, restrictions, valid_for=3600, enabled=True):
    now = chain.head_block_time
    [[_tag, cid]] = push(chain, [[54, {
        "account": INIT0, "enabled": enabled, "valid_from": format_time(now),
        "valid_to": format_time(now + valid_for), "operation_type": 0,
        "auth": {"weight_threshold": 1, "account_auths": [], "key_auths": [[OTHER_PUB, 1]],
                 "address_auths": []},
        "restrictions": restrictions, "extensions": []}]])
    produce(chain)
    return cid


def transfer_op(to, amount):
    return [0, {"from": INIT0, "to": to, "amount": {"amount": amount, "asset_id": CORE},
                "extensions": []}]


def test_custom_authority_signs_only_what_its_restrictions_allow(chain):
    cid = create(chain, [TO_INIT1, r(3, "attr", 39, [r(0, "le", 2, 1000000)])])
    obj = chain.state.objects[cid]
    assert cid.startswith("1.17.") and obj["account"] == INIT0 and obj["enabled"] is True
    assert [i for i, _r in obj["restrictions"]] == [0, 1] and obj["restriction_counter"] == 2
    before = chain.state.balance(INIT0, CORE), chain.state.balance(INIT1, CORE)
    fee = chain.required_fee([0, dict(transfer_op(INIT1, 1)[1], fee=FEE0)])["amount"]
    # signed by OTHER_WIF alone: the custom authority's key
    push(chain, [transfer_op(INIT1, 700000)], OTHER_WIF)
    produce(chain)
    assert chain.state.balance(INIT1, CORE) - before[1] == 700000
    assert before[0] - chain.state.balance(INIT0, CORE) == 700000 + fee
    # outside the restrictions the key is nobody's
    for to, amount in ((INIT2, 1000), (INIT1, 1000001)):
        with pytest.raises(MissingAuthority, match="1.2.6"):
            push(chain, [transfer_op(to, amount)], OTHER_WIF)
    # another operation type is not lent either
    with pytest.raises(MissingAuthority):
        push(chain, [[15, {"payer": INIT0, "amount_to_reserve": {"amount": 1, "asset_id": CORE},
                           "extensions": []}]], OTHER_WIF)
    # disabled, then enabled again, then deleted
    push(chain, [[55, {"account": INIT0, "authority_to_update": cid, "new_enabled": False,
                       "restrictions_to_remove": [], "restrictions_to_add": [],
                       "extensions": []}]])
    produce(chain)
    with pytest.raises(MissingAuthority):
        push(chain, [transfer_op(INIT1, 10)], OTHER_WIF)
    push(chain, [[55, {"account": INIT0, "authority_to_update": cid, "new_enabled": True,
                       "restrictions_to_remove": [0], "restrictions_to_add": [
                           r(2, "eq", 7, INIT2)], "extensions": []}]])
    produce(chain)
    assert [i for i, _r in chain.state.objects[cid]["restrictions"]] == [1, 2]
    push(chain, [transfer_op(INIT2, 10)], OTHER_WIF)
    produce(chain)
    push(chain, [[56, {"account": INIT0, "authority_to_delete": cid, "extensions": []}]])
    produce(chain)
    assert chain.state.find(cid) is None
    with pytest.raises(MissingAuthority):
        push(chain, [transfer_op(INIT2, 10)], OTHER_WIF)


def test_creation_rules(chain):
    with pytest.raises(InvalidOperation, match="more than the maximum number of restrictions"):
        create(chain, [r(2, "logical_or", 40, [[TO_INIT1, TO_INIT1, TO_INIT1],
                                               [TO_INIT1, TO_INIT1]])])
    with pytest.raises(InvalidOperation, match="lifetime exceeds maximum limit"):
        create(chain, [], valid_for=86400 * 31)
    with pytest.raises(InvalidOperation, match="Invalid types for predicate"):
        create(chain, [r(2, "eq", 3, "init1")])
    create(chain, [])
    create(chain, [TO_INIT1])
    with pytest.raises(InvalidOperation, match="maximum number for this operation type"):
        create(chain, [])
    assert len(chain.state.ids_of_type("1.17.")) == 2


def test_without_the_committee_options_creation_is_refused(genesis, tmp_path):
    """custom_authority_evaluator.cpp ``do_evaluate``: past BSIP 40,
    ``FC_ASSERT( config.valid(), "Cannot use custom authorities yet: global
    configuration not set" )``."""
    chain = open_chain(genesis_with(genesis, AFTER_BSIP_40), tmp_path / "plain")
    chain.push_transaction(sign_wire(chain, [claim_wire()]))
    produce(chain)
    with pytest.raises(InvalidOperation, match="global configuration not set"):
        create(chain, [])
    chain.block_log.close()


def test_before_bsip_40_custom_authorities_are_not_enabled(genesis, tmp_path):
    """custom_authority_evaluator.cpp ``custom_authority_create_evaluator::
    do_evaluate`` asserts ``HARDFORK_BSIP_40_PASSED(now)`` before anything
    else, and proposal_evaluator.cpp's ``proposal_operation_hardfork_visitor``
    refuses custom authority operations in proposals and committee
    parameters with ``custom_authority_options`` (or fees of 54-56) before
    it: HARDFORK_BSIP_40_TIME is 2030-01-01 under mainnet rules, so even a
    chain whose genesis sets the options has them unusable today."""
    params = genesis.data["initial_parameters"]
    ext = dict(params.get("extensions") or {}, custom_authority_options=OPTIONS)
    chain = open_chain(genesis_with(genesis, extensions=ext,
                                    committee_proposal_review_period=600),
                       tmp_path / "early")
    chain.push_transaction(sign_wire(chain, [claim_wire()]))
    produce(chain)
    assert chain.head_block_time < HARDFORK_BSIP_40_TIME == 1893456000
    with pytest.raises(InvalidOperation, match="Custom active authorities are not yet enabled"):
        create(chain, [])
    now = chain.head_block_time
    ca_create = [54, {"fee": FEE0, "account": INIT0, "enabled": True,
                      "valid_from": format_time(now), "valid_to": format_time(now + 60),
                      "operation_type": 0, "auth": {
                          "weight_threshold": 1, "account_auths": [],
                          "key_auths": [[OTHER_PUB, 1]], "address_auths": []},
                      "restrictions": [], "extensions": []}]
    new_params = dict(chain.state.objects["2.0.0"]["parameters"])

    def propose(op, review=None):
        data = {"fee_paying_account": INIT0, "expiration_time": format_time(now + 3600),
                "proposed_ops": [{"op": op}], "extensions": []}
        if review is not None:
            data["review_period_seconds"] = review
        return push(chain, [[22, data]])

    with pytest.raises(InvalidOperation, match="Not allowed until hardfork BSIP 40"):
        propose(ca_create)
    # nested one level down as well
    inner = [22, {"fee": FEE0, "fee_paying_account": INIT0,
                  "expiration_time": format_time(now + 1800),
                  "proposed_ops": [{"op": [56, {"fee": FEE0, "account": INIT0,
                                                "authority_to_delete": "1.17.0",
                                                "extensions": []}]}], "extensions": []}]
    with pytest.raises(InvalidOperation, match="Not allowed until hardfork BSIP 40"):
        propose(inner)
    review = int(new_params["committee_proposal_review_period"])
    with pytest.raises(InvalidOperation, match="Unable to set Custom Authority Options"):
        propose([31, {"fee": FEE0, "new_parameters": new_params}], review)
    fees = dict(new_params["current_fees"])
    fees["parameters"] = list(fees["parameters"]) + [[55, {"fee": 1, "price_per_kbyte": 1}]]
    without = dict(new_params, extensions={}, current_fees=fees)
    with pytest.raises(InvalidOperation, match="Unable to define fees for custom authority"):
        propose([31, {"fee": FEE0, "new_parameters": without}], review)
    # the same parameters without them are a valid committee proposal
    plain = dict(new_params, extensions={})
    [[_tag, pid]] = propose([31, {"fee": FEE0, "new_parameters": plain}], review)
    assert pid.startswith("1.10.")
    chain.block_log.close()


def test_expired_custom_authorities_go_at_maintenance(chain):
    cid = create(chain, [], valid_for=120)
    interval = int(chain.state.objects["2.0.0"]["parameters"]["maintenance_interval"])
    jump(chain, interval + 10)
    assert chain.state.find(cid) is None


def test_database_api_verify_authority_counts_custom_authorities(chain):
    from kit.api import make_api

    db = make_api(chain)[0]
    create(chain, [TO_INIT1])
    ops = [transfer_op(INIT1, 5)]
    ops[0][1]["fee"] = chain.required_fee([0, dict(ops[0][1], fee=FEE0)])
    assert db.verify_authority(sign_wire(chain, ops, OTHER_WIF)) is True
    ops = [transfer_op(INIT2, 5)]
    ops[0][1]["fee"] = chain.required_fee([0, dict(ops[0][1], fee=FEE0)])
    with pytest.raises(Exception, match="1.2.6"):
        db.verify_authority(sign_wire(chain, ops, OTHER_WIF))


@pytest_twisted.inlineCallbacks
def test_custom_authority_over_rpc(chain, vectors_site):
    """A transfer signed only by a custom authority's key goes through the
    node's RPC (``broadcast_transaction``), and the database API's
    ``verify_authority`` agrees; one outside the restrictions is refused
    with the missing authority (python-bitshares in a thread)."""
    from twisted.internet import threads

    from kit.clients import bitshares_client

    create(chain, [TO_INIT1])
    produce(chain)

    def signed(to):
        op = transfer_op(to, 321)
        op[1]["fee"] = chain.required_fee([0, dict(op[1], fee=FEE0)])
        return sign_wire(chain, [op], OTHER_WIF)
    good, bad = signed(INIT1), signed(INIT2)
    before = chain.state.balance(INIT1, CORE)

    def remote():
        bts = bitshares_client(f"ws://127.0.0.1:{vectors_site.port}")
        verified = bts.rpc.verify_authority(good)
        bts.rpc.broadcast_transaction(good, api="network_broadcast")
        try:
            bts.rpc.broadcast_transaction(bad, api="network_broadcast")
        except Exception as exc:  # the node's error, as python-bitshares raises it
            return verified, str(exc)
        return verified, None
    verified, refused = yield threads.deferToThread(remote)
    assert verified is True
    assert refused is not None and "1.2.6" in refused
    produce(chain)
    assert chain.state.balance(INIT1, CORE) - before == 321
