"""Account white/black lists of assets (graphene ``is_authorized_asset``)
and market lists, enforced on transfers, issues, orders and pool
exchanges, with bitshares-core's texts; account_whitelist (7) keeps the
lists."""

import pytest

from nodeapi.chain.errors import InvalidOperation, OperationRefused

from kit.chain import CORE, asset_options, claim_wire, open_chain, produce
from kit.keys import DEV_PUB
from kit.chain import push_wire as push

INIT0, INIT1, INIT2 = "1.2.6", "1.2.7", "1.2.8"
FEE0 = {"amount": 0, "asset_id": CORE}
WHITE_LIST = 0x02




def amount(n, asset_id):
    return {"amount": n, "asset_id": asset_id}


def listing(who, listed, new_listing):
    return [7, {"authorizing_account": who, "account_to_list": listed,
                "new_listing": new_listing, "extensions": []}]


@pytest.fixture
def chain(genesis, tmp_path):
    chain = open_chain(genesis, tmp_path / "wl")
    push(chain, claim_wire())
    for who in (INIT1, INIT2):
        push(chain, [0, {"from": INIT0, "to": who, "amount": amount(10 ** 10, CORE),
                         "extensions": []}])
    produce(chain)
    yield chain
    chain.block_log.close()


def wl_asset(chain, symbol, **extra):
    opts = dict(asset_options(flags=WHITE_LIST, perms=WHITE_LIST), **extra)
    [[_t, aid]] = push(chain, [10, {"issuer": INIT0, "symbol": symbol, "precision": 3,
                                    "common_options": opts, "is_prediction_market": False,
                                    "extensions": []}])
    return aid


def test_whitelist_authorities_decide_who_may_hold(chain):
    wl = wl_asset(chain, "KYC", whitelist_authorities=[INIT0])
    # nobody is on init0's white list yet
    with pytest.raises(InvalidOperation, match="is_authorized_asset"):
        push(chain, [14, {"issuer": INIT0, "asset_to_issue": amount(1000, wl),
                          "issue_to_account": INIT1, "extensions": []}])
    push(chain, listing(INIT0, INIT1, 1))
    assert chain.state.objects[INIT1]["whitelisting_accounts"] == [INIT0]
    push(chain, [14, {"issuer": INIT0, "asset_to_issue": amount(1000, wl),
                      "issue_to_account": INIT1, "extensions": []}])
    with pytest.raises(InvalidOperation, match="'to' account 1.2.8 is not whitelisted") as info:
        push(chain, [0, {"from": INIT1, "to": INIT2, "amount": amount(10, wl),
                         "extensions": []}])
    # transfer_evaluator.cpp's GRAPHENE_ASSERT: fc's format and values are
    # the stack's first entry, as the reference sends them
    assert info.value.name == "transfer_to_account_not_whitelisted"
    assert info.value.log_format == "'to' account ${to} is not whitelisted for asset ${asset}"
    assert info.value.details == {"to": INIT2, "asset": wl}
    push(chain, listing(INIT0, INIT2, 1))
    push(chain, [0, {"from": INIT1, "to": INIT2, "amount": amount(10, wl), "extensions": []}])
    assert chain.state.balance(INIT2, wl) == 10
    # taken off the list: init2 can neither send nor trade it
    push(chain, listing(INIT0, INIT2, 0))
    with pytest.raises(InvalidOperation, match="'from' account 1.2.8 is not whitelisted") as info:
        push(chain, [0, {"from": INIT2, "to": INIT1, "amount": amount(1, wl),
                         "extensions": []}])
    assert info.value.log_format == "'from' account ${from} is not whitelisted for asset ${asset}"
    assert info.value.details == {"from": INIT2, "asset": wl}
    with pytest.raises(InvalidOperation, match="not allowed to transact the selling asset"):
        push(chain, [1, {"seller": INIT2, "amount_to_sell": amount(1, wl),
                         "min_to_receive": amount(1, CORE), "expiration": "2030-01-01T00:00:00",
                         "fill_or_kill": False, "extensions": {}}])


def test_blacklist_authorities(chain):
    bl = wl_asset(chain, "OPEN", blacklist_authorities=[INIT0])
    push(chain, [14, {"issuer": INIT0, "asset_to_issue": amount(1000, bl),
                      "issue_to_account": INIT1, "extensions": []}])
    push(chain, listing(INIT0, INIT2, 2))  # init0 blacklists init2
    assert chain.state.objects[INIT2]["blacklisting_accounts"] == [INIT0]
    with pytest.raises(InvalidOperation, match="'to' account 1.2.8 is not whitelisted"):
        push(chain, [0, {"from": INIT1, "to": INIT2, "amount": amount(10, bl),
                         "extensions": []}])
    with pytest.raises(InvalidOperation, match="not allowed to transact the receiving asset"):
        push(chain, [1, {"seller": INIT2, "amount_to_sell": amount(1, CORE),
                         "min_to_receive": amount(1, bl), "expiration": "2030-01-01T00:00:00",
                         "fill_or_kill": False, "extensions": {}}])


def test_market_lists_of_the_selling_asset(chain):
    other = wl_asset(chain, "OTHER")
    gated = wl_asset(chain, "GATED", whitelist_markets=[other])
    push(chain, [14, {"issuer": INIT0, "asset_to_issue": amount(1000, gated),
                      "issue_to_account": INIT0, "extensions": []}])
    with pytest.raises(InvalidOperation, match="has not been whitelisted by the selling asset"):
        push(chain, [1, {"seller": INIT0, "amount_to_sell": amount(1, gated),
                         "min_to_receive": amount(1, CORE), "expiration": "2030-01-01T00:00:00",
                         "fill_or_kill": False, "extensions": {}}])
    push(chain, [1, {"seller": INIT0, "amount_to_sell": amount(1, gated),
                     "min_to_receive": amount(1, other), "expiration": "2030-01-01T00:00:00",
                     "fill_or_kill": False, "extensions": {}}])


def test_order_refusals_carry_graphenes_exceptions(chain):
    """market_evaluator.cpp ``limit_order_create_evaluator::do_evaluate``
    refuses with ``GRAPHENE_ASSERT``: limit_order_create_market_not_whitelisted
    (3050000 + 100 x 1 + 2), ..._market_blacklisted (+3),
    ..._selling_asset_unauthorized (+4), ..._receiving_asset_unauthorized
    (+5); ``limit_order_update_evaluator::do_evaluate`` has the same checks
    as plain ``FC_ASSERT`` (invalid_operation here)."""
    other = wl_asset(chain, "OTHERX")
    gated = wl_asset(chain, "GATEDX", whitelist_markets=[other])
    barred = wl_asset(chain, "BARRED", blacklist_markets=[CORE])
    listed = wl_asset(chain, "LISTED", whitelist_authorities=[INIT0])
    for asset in (gated, barred):
        push(chain, [14, {"issuer": INIT0, "asset_to_issue": amount(1000, asset),
                          "issue_to_account": INIT0, "extensions": []}])

    def order(seller, sell, receive):
        return [1, {"seller": seller, "amount_to_sell": sell, "min_to_receive": receive,
                    "expiration": "2030-01-01T00:00:00", "fill_or_kill": False,
                    "extensions": {}}]

    cases = [(order(INIT0, amount(1, gated), amount(1, CORE)), 3050102,
              "limit_order_create_market_not_whitelisted"),
             (order(INIT0, amount(1, barred), amount(1, CORE)), 3050103,
              "limit_order_create_market_blacklisted"),
             (order(INIT1, amount(1, CORE), amount(1, listed)), 3050105,
              "limit_order_create_receiving_asset_unauthorized")]
    for op, code, name in cases:
        with pytest.raises(OperationRefused) as info:
            push(chain, op)
        assert (info.value.code, info.value.name) == (code, name)
    # init0 lists nobody: init1 may not sell what it cannot hold
    push(chain, listing(INIT0, INIT1, 1))
    push(chain, [14, {"issuer": INIT0, "asset_to_issue": amount(100, listed),
                      "issue_to_account": INIT1, "extensions": []}])
    [[_t, oid]] = push(chain, order(INIT1, amount(10, listed), amount(10, CORE)))
    push(chain, listing(INIT0, INIT1, 0))
    with pytest.raises(OperationRefused) as info:
        push(chain, order(INIT1, amount(1, listed), amount(1, CORE)))
    assert info.value.name == "limit_order_create_selling_asset_unauthorized"
    assert info.value.code == 3050104
    # the update of its standing order: the same rule, a plain assert
    with pytest.raises(InvalidOperation) as info:
        push(chain, [77, {"seller": INIT1, "order": oid,
                          "new_expiration": "2029-01-01T00:00:00", "extensions": []}])
    assert not isinstance(info.value, OperationRefused)
    assert info.value.name == "assert_exception"
    assert "not allowed to transact the selling asset" in str(info.value)


def plain_asset(chain, symbol):
    [[_t, aid]] = push(chain, [10, {"issuer": INIT0, "symbol": symbol, "precision": 3,
                                    "common_options": asset_options(),
                                    "is_prediction_market": False, "extensions": []}])
    return aid


def test_a_buyback_account_accepts_only_its_allowed_assets(chain):
    """is_authorized_asset.hpp: an account with ``allowed_assets`` leaves the
    fast path even for an asset without the white_list flag, and
    _is_authorized_asset refuses every asset not among them."""
    buy, other = plain_asset(chain, "BUY"), plain_asset(chain, "OTHER")
    null_auth = {"weight_threshold": 1, "account_auths": [["1.2.3", 1]], "key_auths": [],
                 "address_auths": []}
    options = {"memo_key": DEV_PUB, "voting_account": "1.2.5", "num_witness": 0,
               "num_committee": 0, "votes": [], "extensions": []}
    [[_t, bb]] = push(chain, [5, {
        "registrar": INIT0, "referrer": INIT0, "referrer_percent": 0, "name": "buyback-buy",
        "owner": null_auth, "active": null_auth, "options": options,
        "extensions": {"buyback_options": {"asset_to_buy": buy, "asset_to_buy_issuer": INIT0,
                                           "markets": [CORE]}}}])
    assert chain.state.objects[bb]["allowed_assets"] == [CORE, buy]
    push(chain, [14, {"issuer": INIT0, "asset_to_issue": amount(1000, other),
                      "issue_to_account": INIT1, "extensions": []}])
    with pytest.raises(InvalidOperation, match=f"'to' account {bb} is not whitelisted "
                                               f"for asset {other}"):
        push(chain, [0, {"from": INIT1, "to": bb, "amount": amount(10, other),
                         "extensions": []}])
    with pytest.raises(InvalidOperation, match="is_authorized_asset"):
        push(chain, [14, {"issuer": INIT0, "asset_to_issue": amount(10, other),
                          "issue_to_account": bb, "extensions": []}])
    # its own assets pass: 10 BUY and 7 core arrive whole
    push(chain, [14, {"issuer": INIT0, "asset_to_issue": amount(10, buy),
                      "issue_to_account": bb, "extensions": []}])
    push(chain, [0, {"from": INIT1, "to": bb, "amount": amount(7, CORE), "extensions": []}])
    assert chain.state.balance(bb, buy) == 10
    assert chain.state.balance(bb, CORE) == 7
    assert chain.state.balance(bb, other) == 0


def test_the_committee_account_is_exempt_from_the_lists(chain):
    """_is_authorized_asset: after BSIP 86 the committee account (1.2.0)
    transacts every asset, white listed or black listed."""
    wl = wl_asset(chain, "KYCC", whitelist_authorities=[INIT0], blacklist_authorities=[INIT0])
    push(chain, listing(INIT0, "1.2.0", 2))  # black listed by init0
    assert chain.state.objects["1.2.0"]["blacklisting_accounts"] == [INIT0]
    push(chain, [14, {"issuer": INIT0, "asset_to_issue": amount(500, wl),
                      "issue_to_account": "1.2.0", "extensions": []}])
    assert chain.state.balance("1.2.0", wl) == 500
    # anyone else on the same footing is refused
    push(chain, listing(INIT0, INIT1, 2))
    with pytest.raises(InvalidOperation, match="is_authorized_asset"):
        push(chain, [14, {"issuer": INIT0, "asset_to_issue": amount(500, wl),
                          "issue_to_account": INIT1, "extensions": []}])


def test_a_missing_object_is_graphenes_object_database_get_assert(chain):
    """An operation naming an object that does not exist: bitshares-core's
    ``op.id(d)`` is ``object_database::get``, ``FC_ASSERT( maybe_found !=
    nullptr, "Unable to find Object ${id}", ("id", id) )``: assert_exception,
    its format and the id as its value."""
    from nodeapi.chain.errors import UnknownObject

    with pytest.raises(UnknownObject) as info:
        push(chain, [0, {"from": INIT0, "to": "1.2.999", "amount": amount(1, CORE),
                         "extensions": []}])
    assert info.value.name == "assert_exception"
    assert info.value.message == ("Assert Exception: maybe_found != nullptr: "
                                  "Unable to find Object 1.2.999")
    assert info.value.log_format == "maybe_found != nullptr: Unable to find Object ${id}"
    assert info.value.details == {"id": "1.2.999"}
