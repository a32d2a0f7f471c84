"""Operation test cases: the real mainnet samples (keys re-prefixed to TEST)
and one operation built from bitshares-core's headers for every type that
has no mainnet sample, with its extensions filled.

``EXTENSIONS_BITSHARESJS_DROPS`` lists the operations whose extension
bitsharesjs 6.0.3 declares as ``future_extensions`` (so it cannot write
it): for those the tests compare the operation without the extension with
bitsharesjs and check the extension bytes by hand from the C++ reflection.
"""

import json
import os

from kit.keys import DEV_PUB

from kit.paths import FIXTURES
OTHER_PUB = "TEST8aoWV6SV5aMTa4SfMPfysZBZx2UU9sTH4bJbJWFWZT83yt7mP1"


def _reprefix(value):
    if isinstance(value, dict):
        return {k: _reprefix(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_reprefix(v) for v in value]
    if isinstance(value, str) and value.startswith("BTS") and len(value) > 40:
        return "TEST" + value[3:]
    return value


def mainnet_samples() -> list:
    """``[(source file, [type, {...}])]`` of the 203 mainnet operations,
    public keys and addresses re-prefixed from BTS to TEST."""
    with open(os.path.join(FIXTURES, "mainnet_operation_samples.go-bitshares.json")) as f:
        data = json.load(f)["operations"]
    return [(s["source_file"], [s["op_id"], _reprefix(s["data"])])
            for group in data.values() for s in group]


def same_json(orig, back):
    """``back`` (read from bytes) equals the JSON ``orig`` up to the forms fc
    reads alike: numeric strings, absent nulls, ``[]``/``{}`` for empty
    extensions, the sort order of flat sets; members that are no field are
    ignored by fc (cdd_vesting_policy_initializer's ``coin_seconds_earned``
    in a go-bitshares sample)."""
    if isinstance(back, dict):
        if orig in ([], {}) and back in ([], {}):
            return True
        assert isinstance(orig, dict), (orig, back)
        return all(same_json(orig[k], v) for k, v in back.items())
    if isinstance(back, list):
        if orig == {} and back == []:
            return True
        assert isinstance(orig, list) and len(orig) == len(back), (orig, back)
        if orig != back and sorted(map(json.dumps, orig)) == sorted(map(json.dumps, back)):
            return True
        return all(same_json(o, b) for o, b in zip(orig, back))
    if isinstance(back, int) and isinstance(orig, str) and not isinstance(back, bool):
        return int(orig) == back
    assert orig == back, (orig, back)
    return True


def _a(amount, asset="1.3.0"):
    return {"amount": amount, "asset_id": asset}


FEE = _a(100000)
PRICE = {"base": _a(10, "1.3.0"), "quote": _a(3, "1.3.1")}
AUTH = {"weight_threshold": 1, "account_auths": [["1.2.17", 1]],
        "key_auths": [[DEV_PUB, 1]], "address_auths": []}
MEMO = {"from": DEV_PUB, "to": OTHER_PUB, "nonce": "5862723643998573708",
        "message": "00112233445566778899aabbccddeeff"}
TAKE_PROFIT = [0, {"fee_asset_id": "1.3.0", "spread_percent": 100, "size_percent": 10000,
                   "expiration_seconds": 86400, "repeat": True, "extensions": []}]
COMMITMENT = "02" + "11" * 32
BLIND_INPUT = {"commitment": COMMITMENT, "owner": AUTH}
SHA256_HEX = "ab" * 32

#: type -> an operation of that type from the reference headers; for the
#: types with mainnet samples, a form the samples do not show
PROTOTYPES = {
    1: {"fee": FEE, "seller": "1.2.17", "amount_to_sell": _a(1000),
        "min_to_receive": _a(7, "1.3.1"),
        "expiration": "2030-01-01T00:00:00", "fill_or_kill": False,
        "extensions": {"on_fill": [TAKE_PROFIT]}},
    9: {"fee": FEE, "account_id": "1.2.17", "new_owner": "1.2.18", "extensions": []},
    11: {"fee": FEE, "issuer": "1.2.17", "asset_to_update": "1.3.1",
         "new_options": {"max_supply": "1000000000000000", "market_fee_percent": 10,
                         "max_market_fee": 1000, "issuer_permissions": 79, "flags": 0,
                         "core_exchange_rate": PRICE, "whitelist_authorities": ["1.2.30", "1.2.4"],
                         "blacklist_authorities": [], "whitelist_markets": [],
                         "blacklist_markets": [], "description": "gold",
                         "extensions": {"reward_percent": 100,
                                        "whitelist_market_fee_sharing": ["1.2.9"],
                                        "taker_fee_percent": 20}},
         "extensions": {"new_precision": 4, "skip_core_exchange_rate": True}},
    19: {"fee": FEE, "publisher": "1.2.17", "asset_id": "1.3.1",
         "feed": {"settlement_price": PRICE, "maintenance_collateral_ratio": 1750,
                  "maximum_short_squeeze_ratio": 1100, "core_exchange_rate": PRICE},
         "extensions": {"initial_collateral_ratio": 1900}},
    26: {"fee": FEE, "withdraw_from_account": "1.2.17", "authorized_account": "1.2.18",
         "permission_to_update": "1.12.3", "withdrawal_limit": _a(500),
         "withdrawal_period_sec": 3600, "period_start_time": "2030-01-01T00:00:00",
         "periods_until_expiration": 10},
    27: {"fee": FEE, "withdraw_permission": "1.12.3", "withdraw_from_account": "1.2.17",
         "withdraw_to_account": "1.2.18", "amount_to_withdraw": _a(50), "memo": MEMO},
    30: {"fee": FEE, "committee_member": "1.5.3", "committee_member_account": "1.2.17",
         "new_url": "https://example.org"},
    36: {"fee": FEE, "fee_paying_account": "1.2.17", "predicates": [
        [0, {"account_id": "1.2.17", "name": "alice"}],
        [1, {"asset_id": "1.3.1", "symbol": "GOLD"}],
        [2, {"id": "00000102" + "cd" * 16}]], "required_auths": ["1.2.18"], "extensions": []},
    42: {"fee": FEE, "settlement": "1.4.7", "account": "1.2.17", "amount": _a(10, "1.3.1")},
    44: {"fee": FEE, "account_id": "1.2.17", "fba_id": "2.16.1", "amount": 1000},
    46: {"fee": FEE, "bidder": "1.2.17", "debt": _a(10, "1.3.1"), "collateral": _a(300)},
    47: {"fee": FEE, "issuer": "1.2.17", "asset_id": "1.3.1", "amount_to_claim": _a(100),
         "extensions": []},
    48: {"fee": FEE, "issuer": "1.2.17", "asset_to_update": "1.3.1", "new_issuer": "1.2.18",
         "extensions": []},
    49: {"fee": FEE, "from": "1.2.17", "to": "1.2.18", "amount": _a(1000),
         "preimage_hash": [2, SHA256_HEX], "preimage_size": 32, "claim_period_seconds": 3600,
         "extensions": {"memo": MEMO}},
    50: {"fee": FEE, "htlc_id": "1.16.2", "redeemer": "1.2.18", "preimage": "0102030405",
         "extensions": []},
    51: {"fee": FEE, "htlc_id": "1.16.2", "from": "1.2.17", "to": "1.2.18",
         "redeemer": "1.2.18", "amount": _a(1000), "htlc_preimage_hash": [0, "cd" * 20],
         "htlc_preimage_size": 5, "preimage": "0102030405"},
    52: {"fee": FEE, "htlc_id": "1.16.2", "update_issuer": "1.2.17", "seconds_to_add": 60,
         "extensions": []},
    53: {"fee": FEE, "htlc_id": "1.16.2", "to": "1.2.17", "original_htlc_recipient": "1.2.18",
         "htlc_amount": _a(1000), "htlc_preimage_hash": [1, "ef" * 20],
         "htlc_preimage_size": 5},
    54: {"fee": FEE, "account": "1.2.17", "enabled": True, "valid_from": "2030-01-01T00:00:00",
         "valid_to": "2031-01-01T00:00:00", "operation_type": 0, "auth": AUTH,
         "restrictions": [
             {"member_index": 2, "restriction_type": 0, "argument": [7, "1.2.18"],
              "extensions": []},
             {"member_index": 3, "restriction_type": 10, "argument": [39, [
                 {"member_index": 0, "restriction_type": 2, "argument": [2, 1000],
                  "extensions": []}]], "extensions": []},
             {"member_index": 4, "restriction_type": 12, "argument": [41, [0, [
                 {"member_index": 1, "restriction_type": 6, "argument": [26, ["1.2.9", "1.2.8"]],
                  "extensions": []}]]], "extensions": []},
             {"member_index": 0, "restriction_type": 11, "argument": [40, [[
                 {"member_index": 0, "restriction_type": 0, "argument": [3, "x"],
                  "extensions": []}], []]], "extensions": []}],
         "extensions": []},
    55: {"fee": FEE, "account": "1.2.17", "authority_to_update": "1.17.0", "new_enabled": False,
         "new_valid_from": "2030-01-01T00:00:00", "new_valid_to": "2031-01-01T00:00:00",
         "new_auth": AUTH, "restrictions_to_remove": [3, 1],
         "restrictions_to_add": [{"member_index": 1, "restriction_type": 1,
                                  "argument": [1, True], "extensions": []}],
         "extensions": []},
    56: {"fee": FEE, "account": "1.2.17", "authority_to_delete": "1.17.0", "extensions": []},
    57: {"fee": FEE, "account": "1.2.17", "target_type": 2, "amount": _a(100000),
         "extensions": []},
    58: {"fee": FEE, "ticket": "1.18.4", "account": "1.2.17", "target_type": 1,
         "amount_for_new_target": _a(500), "extensions": []},
    59: {"fee": FEE, "account": "1.2.17", "asset_a": "1.3.0", "asset_b": "1.3.1",
         "share_asset": "1.3.2", "taker_fee_percent": 30, "withdrawal_fee_percent": 10,
         "extensions": []},
    60: {"fee": FEE, "account": "1.2.17", "pool": "1.19.0", "extensions": []},
    61: {"fee": FEE, "account": "1.2.17", "pool": "1.19.0", "amount_a": _a(100),
         "amount_b": _a(200, "1.3.1"), "extensions": []},
    62: {"fee": FEE, "account": "1.2.17", "pool": "1.19.0", "share_amount": _a(50, "1.3.2"),
         "extensions": []},
    63: {"fee": FEE, "account": "1.2.17", "pool": "1.19.0", "amount_to_sell": _a(100),
         "min_to_receive": _a(1, "1.3.1"), "extensions": []},
    64: {"fee": FEE, "owner_account": "1.2.17", "asset_type": "1.3.0", "balance": 100000,
         "fee_rate": 100, "extensions": []},
    65: {"fee": FEE, "owner_account": "1.2.17", "fund_id": "1.20.1", "extensions": []},
    66: {"fee": FEE, "owner_account": "1.2.17", "fund_id": "1.20.1",
         "delta_amount": _a(-5), "new_fee_rate": 200, "extensions": []},
    67: {"fee": FEE, "borrower": "1.2.18", "fund_id": "1.20.1", "borrow_amount": _a(500),
         "extensions": []},
    68: {"fee": FEE, "account": "1.2.18", "fund_id": "1.20.1", "repay_amount": _a(500),
         "fund_fee": _a(1), "extensions": []},
    69: {"fee": FEE, "owner_account": "1.2.17", "asset_type": "1.3.0", "balance": 100000,
         "fee_rate": 100, "max_duration_seconds": 86400, "min_deal_amount": 10,
         "enabled": True, "auto_disable_time": "2031-01-01T00:00:00",
         "acceptable_collateral": [["1.3.1", {"base": _a(1), "quote": _a(2, "1.3.1")}]],
         "acceptable_borrowers": [["1.2.20", 5000], ["1.2.18", 1000]], "extensions": []},
    70: {"fee": FEE, "owner_account": "1.2.17", "offer_id": "1.21.0", "extensions": []},
    71: {"fee": FEE, "owner_account": "1.2.17", "offer_id": "1.21.0", "delta_amount": _a(5),
         "fee_rate": 50, "max_duration_seconds": 3600, "min_deal_amount": 1, "enabled": False,
         "auto_disable_time": "2031-06-01T00:00:00",
         "acceptable_collateral": [["1.3.1", {"base": _a(1), "quote": _a(3, "1.3.1")}]],
         "acceptable_borrowers": [["1.2.18", 0]], "extensions": []},
    72: {"fee": FEE, "borrower": "1.2.18", "offer_id": "1.21.0", "borrow_amount": _a(100),
         "collateral": _a(300, "1.3.1"), "max_fee_rate": 100, "min_duration_seconds": 60,
         "extensions": {"auto_repay": 1}},
    73: {"fee": FEE, "account": "1.2.18", "deal_id": "1.22.0", "repay_amount": _a(100),
         "credit_fee": _a(1), "extensions": []},
    74: {"fee": FEE, "deal_id": "1.22.0", "offer_id": "1.21.0", "offer_owner": "1.2.17",
         "borrower": "1.2.18", "unpaid_amount": _a(100), "collateral": _a(300, "1.3.1"),
         "fee_rate": 100},
    75: {"fee": FEE, "account": "1.2.17", "pool": "1.19.0", "taker_fee_percent": 40,
         "withdrawal_fee_percent": None, "extensions": []},
    76: {"fee": FEE, "account": "1.2.18", "deal_id": "1.22.0", "auto_repay": 2,
         "extensions": []},
    77: {"fee": FEE, "seller": "1.2.17", "order": "1.7.9", "new_price": PRICE,
         "delta_amount_to_sell": _a(-10), "new_expiration": "2030-02-01T00:00:00",
         "on_fill": [TAKE_PROFIT], "extensions": []},
}

#: types bitsharesjs 6.0.3 does not have (checked against hand-computed bytes)
BITSHARESJS_LACKS = {75, 76, 77}

#: type -> extension field bitsharesjs writes as an empty future_extensions
EXTENSIONS_BITSHARESJS_DROPS = {1: "on_fill", 5: "buyback_options", 11: "new_precision",
                                19: "initial_collateral_ratio", 49: "memo", 72: "auto_repay"}
