"""Rules the differential runner's scenario plans found differing, on
bitshares-core 7.0.2's witness_node and on nodeapi side by side
(kit.side_by_side), under mainnet rules.

BSIP 40 (custom active authorities): HARDFORK_BSIP_40_TIME
(hardfork.d/BSIP_40.hf) is 2030-01-01, so

- custom_authority_evaluator.cpp ``custom_authority_create_evaluator::
  do_evaluate`` refuses every creation ("Custom active authorities are not
  yet enabled") before it looks at the committee's options;
- proposal_evaluator.cpp ``proposal_operation_hardfork_visitor`` refuses a
  committee proposal of committee_member_update_global_parameters that sets
  ``custom_authority_options`` ("Unable to set Custom Authority Options
  before hardfork BSIP 40") and one proposing a custom authority operation
  ("Not allowed until hardfork BSIP 40");
- the same committee proposal without the options is accepted by both.

A committee proposal without its review period is refused with
``proposal_create_review_period_required`` / ``_insufficient``; a limit
order the selling asset's market lists refuse with
``limit_order_create_market_not_whitelisted`` / ``_market_blacklisted``."""

import calendar
import time

import pytest

from kit.keys import DEV_PUB
from kit.reference import requires_reference
from kit.side_by_side import core, start_sides, stop_sides

pytestmark = [pytest.mark.reference, pytest.mark.slow, requires_reference]

INIT0 = "1.2.6"
OPTIONS = {"max_custom_authority_lifetime_seconds": 86400,
           "max_custom_authorities_per_account": 3,
           "max_custom_authorities_per_account_op": 2,
           "max_custom_authority_restrictions": 5}


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    pair = start_sides(tmp_path_factory.mktemp("bsip40"))
    try:
        yield pair
    finally:
        stop_sides(pair)


def filled(error) -> str:
    """The error's first stack format with its ``${name}`` filled in (the
    reference), else its message (nodeapi)."""
    stack = error.get("data", {}).get("stack") or []
    if stack and stack[0].get("format"):
        text = stack[0]["format"]
        for key, value in (stack[0].get("data") or {}).items():
            text = text.replace("${%s}" % key, str(value))
        return text
    return error.get("message", "")


def message(error) -> str:
    return str(error.get("message", "")) + str(error.get("data", ""))


def test_custom_authorities_are_not_enabled_before_bsip_40(sides):
    outcomes = []
    for side in sides:
        now = side.head_time()
        create = [54, {"account": INIT0, "enabled": True,
                       "valid_from": side.expiration(0), "valid_to": side.expiration(600),
                       "operation_type": 0, "auth": {
                           "weight_threshold": 1, "account_auths": [],
                           "key_auths": [[DEV_PUB, 1]], "address_auths": []},
                       "restrictions": [], "extensions": []}]
        refused = side.refusal(create)
        params = side.call("get_global_properties")["parameters"]
        review = int(params["committee_proposal_review_period"])
        with_options = dict(params, extensions=dict(params.get("extensions") or {},
                                                    custom_authority_options=OPTIONS))

        def propose(op, review=review):
            return [22, {"fee_paying_account": INIT0,
                         "expiration_time": side.expiration(review + 3600),
                         "proposed_ops": [{"op": op}], "review_period_seconds": review,
                         "extensions": []}]

        options_refused = side.refusal(propose([31, {"fee": core(0),
                                                     "new_parameters": with_options}]))
        proposed_refused = side.refusal(propose([54, dict(create[1], fee=core(0))], 0))
        [[_tag, pid]] = side.push(propose([31, {"fee": core(0), "new_parameters": params}]))
        proposal = side.get(pid)
        # review_period_time = expiration_time - review_period_seconds
        # (proposal_create_evaluator::do_apply): the review starts 3600 s after
        # the head time when it was proposed (a few blocks after `now`)
        start = calendar.timegm(time.strptime(proposal["review_period_time"],
                                              "%Y-%m-%dT%H:%M:%S"))
        outcomes.append((pid.startswith("1.10."), 3600 <= start - now <= 3610,
                         proposal["required_active_approvals"]))
        assert "Custom active authorities are not yet enabled" in message(refused), refused
        assert "Unable to set Custom Authority Options before hardfork BSIP 40" in \
            message(options_refused), options_refused
        assert "Not allowed until hardfork BSIP 40" in message(proposed_refused), \
            proposed_refused
    theirs, mine = outcomes
    assert theirs == mine
    assert theirs == (True, True, ["1.2.0"])


def test_committee_proposals_need_the_review_period(sides):
    """proposal_evaluator.cpp ``proposal_create_evaluator::do_evaluate``: a
    proposal the committee account must approve names a review period of
    at least ``committee_proposal_review_period`` (1,209,600 s in the
    genesis), else ``proposal_create_review_period_required`` (3052201) or
    ``..._insufficient`` (3052202) with the numbers in the text."""
    outcomes = []
    for side in sides:
        params = side.call("get_global_properties")["parameters"]
        review = int(params["committee_proposal_review_period"])
        assert review == 14 * 86400

        def propose(review_period):
            data = {"fee_paying_account": INIT0,
                    "expiration_time": side.expiration(review + 3600),
                    "proposed_ops": [{"op": [31, {"fee": core(0), "new_parameters": params}]}],
                    "extensions": []}
            if review_period is not None:
                data["review_period_seconds"] = review_period
            return [22, data]

        got = []
        for given in (None, review - 1):
            error = side.refusal(propose(given))
            got.append((error["data"]["code"], error["data"]["name"]))
            assert f"at least {review} required" in filled(error), error
        outcomes.append(got)
    theirs, mine = outcomes
    assert theirs == mine == [(3052201, "proposal_create_review_period_required"),
                              (3052202, "proposal_create_review_period_insufficient")]


def test_order_market_lists_refuse_with_graphenes_exceptions(sides):
    """market_evaluator.cpp ``limit_order_create_evaluator::do_evaluate``:
    an order selling an asset whose ``whitelist_markets`` lacks the asset
    bought (3050102) or whose ``blacklist_markets`` has it (3050103)."""
    outcomes = []
    for side in sides:
        made = []
        for symbol, lists in (("MKTWL", {"whitelist_markets": ["1.3.1"]}),
                              ("MKTBL", {"blacklist_markets": ["1.3.0"]})):
            options = {"max_supply": 10 ** 12, "market_fee_percent": 0, "max_market_fee": 0,
                       "issuer_permissions": 0, "flags": 0,
                       "core_exchange_rate": {"base": core(1),
                                              "quote": {"amount": 1, "asset_id": "1.3.1"}},
                       "whitelist_authorities": [], "blacklist_authorities": [],
                       "whitelist_markets": [], "blacklist_markets": [], "description": "",
                       "extensions": []}
            options.update(lists)
            [[_tag, asset_id]] = side.push([10, {
                "issuer": INIT0, "symbol": symbol, "precision": 3,
                "common_options": options, "is_prediction_market": False,
                "extensions": []}])
            side.push([14, {"issuer": INIT0, "asset_to_issue": {"amount": 100,
                                                                 "asset_id": asset_id},
                            "issue_to_account": INIT0, "extensions": []}])
            made.append(asset_id)
        got = []
        for asset_id in made:
            error = side.refusal([1, {"seller": INIT0,
                                      "amount_to_sell": {"amount": 10, "asset_id": asset_id},
                                      "min_to_receive": core(10),
                                      "expiration": side.expiration(3600),
                                      "fill_or_kill": False, "extensions": {}}])
            got.append((error["data"]["code"], error["data"]["name"]))
        outcomes.append(got)
    theirs, mine = outcomes
    assert theirs == mine == [(3050102, "limit_order_create_market_not_whitelisted"),
                              (3050103, "limit_order_create_market_blacklisted")]


def test_an_account_whose_approval_is_removed_drops_out_of_the_lists(sides):
    """proposal_object.cpp ``required_approval_index::object_modified``: the
    proposals an account is listed with follow the changes of the
    available approvals only, so init1, required by the proposal, is not
    listed once its approval is removed, and is again once it approves."""
    init1 = "1.2.7"
    outcomes = []
    for side in sides:
        [[_tag, pid]] = side.push([22, {
            "fee_paying_account": INIT0, "expiration_time": side.expiration(600),
            "proposed_ops": [{"op": [0, {"fee": core(0), "from": init1, "to": INIT0,
                                         "amount": core(1), "extensions": []}]}],
            "review_period_seconds": 300, "extensions": []}])

        def update(add=(), remove=()):
            side.push([23, {"fee_paying_account": INIT0, "proposal": pid,
                            "active_approvals_to_add": list(add),
                            "active_approvals_to_remove": list(remove),
                            "owner_approvals_to_add": [], "owner_approvals_to_remove": [],
                            "key_approvals_to_add": [], "key_approvals_to_remove": [],
                            "extensions": []}])

        def listed():
            return [p["id"] == pid for p in side.call("get_proposed_transactions", init1)]

        seen = [listed()]
        update(add=[init1])
        seen.append(listed())
        update(remove=[init1])
        seen.append(listed())
        [[_name, full]] = side.call("get_full_accounts", [init1], False)
        seen.append([p["id"] == pid for p in full["proposals"]])
        update(add=[init1])
        seen.append(listed())
        outcomes.append(seen)
    theirs, mine = outcomes
    assert theirs == mine == [[True], [True], [], [], [True]]
