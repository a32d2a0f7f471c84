"""One valid operation of every type 0-77 (bitshares-core 7.x), in wire JSON
with the TEST key prefix, for the per-type table tests (fees, authorities,
impacted accounts, validate()).  Field names and order follow each
operation's ``FC_REFLECT``.  Sizes that matter for fees are noted where the
operation is defined; ``SAMPLES[type]`` is the operation."""

import json
import pathlib

from kit.keys import DEV_PUB

FEE = {"amount": 0, "asset_id": "1.3.0"}
CORE = {"amount": 100, "asset_id": "1.3.0"}
USD = {"amount": 50, "asset_id": "1.3.1"}
EXT = []
#: 33 + 33 + 8 + 1 = 75 bytes; as an optional: 76
MEMO = {"from": DEV_PUB, "to": DEV_PUB, "nonce": 1, "message": ""}
#: 4 + 1 + (1 + 33 + 2) + 1 = 42 bytes
KEY_AUTH = {"weight_threshold": 1, "account_auths": [], "key_auths": [[DEV_PUB, 1]],
            "address_auths": []}


def account_auth(*accounts) -> dict:
    return {"weight_threshold": 1, "account_auths": [[a, 1] for a in accounts],
            "key_auths": [], "address_auths": []}


#: 33 + 1 + 2 + 2 + 1 + 1 = 40 bytes
OPTIONS = {"memo_key": DEV_PUB, "voting_account": "1.2.5", "num_witness": 0,
           "num_committee": 0, "votes": [], "extensions": []}
PRICE = {"base": {"amount": 1, "asset_id": "1.3.0"}, "quote": {"amount": 2, "asset_id": "1.3.1"}}
#: 8 + 2 + 8 + 2 + 2 + 18 + 4 + 1 + 1 = 46 bytes
ASSET_OPTIONS = {"max_supply": 10 ** 10, "market_fee_percent": 0, "max_market_fee": 0,
                 "issuer_permissions": 0, "flags": 0, "core_exchange_rate": PRICE,
                 "whitelist_authorities": [], "blacklist_authorities": [],
                 "whitelist_markets": [], "blacklist_markets": [], "description": "",
                 "extensions": {}}
BITASSET = {"feed_lifetime_sec": 86400, "minimum_feeds": 1,
            "force_settlement_delay_sec": 86400, "force_settlement_offset_percent": 0,
            "maximum_force_settlement_volume": 2000, "short_backing_asset": "1.3.0",
            "extensions": {}}
FEED = {"settlement_price": {"base": {"amount": 1, "asset_id": "1.3.1"},
                             "quote": {"amount": 3, "asset_id": "1.3.0"}},
        "maintenance_collateral_ratio": 1750, "maximum_short_squeeze_ratio": 1500,
        "core_exchange_rate": {"base": {"amount": 1, "asset_id": "1.3.1"},
                               "quote": {"amount": 4, "asset_id": "1.3.0"}}}
COMMIT = ["02" + "%02x" % i * 32 for i in range(1, 5)]
BLIND = "11" * 32
GENESIS = json.loads((pathlib.Path(__file__).parent.parent.parent / "nodeapi" / "data"
                      / "genesis.json").read_text())
PARAMETERS = GENESIS["initial_parameters"]


def _out(commitment, *accounts):
    owner = account_auth(*accounts) if accounts else KEY_AUTH
    return {"commitment": commitment, "range_proof": "", "owner": owner}


SAMPLES = {
    0: {"fee": FEE, "from": "1.2.6", "to": "1.2.7", "amount": CORE, "memo": MEMO,
        "extensions": EXT},
    1: {"fee": FEE, "seller": "1.2.6", "amount_to_sell": CORE, "min_to_receive": USD,
        "expiration": "2030-01-01T00:00:00", "fill_or_kill": False, "extensions": {}},
    2: {"fee": FEE, "fee_paying_account": "1.2.6", "order": "1.7.1", "extensions": EXT},
    3: {"fee": FEE, "funding_account": "1.2.6", "delta_collateral": CORE, "delta_debt": USD,
        "extensions": {}},
    4: {"fee": FEE, "order_id": "1.7.1", "account_id": "1.2.6", "pays": CORE, "receives": USD,
        "fill_price": PRICE, "is_maker": True},
    # body: 9 + 1 + 1 + 2 + (1 + 5) + 42 + 42 + 40 + 1 = 144 bytes
    5: {"fee": FEE, "registrar": "1.2.6", "referrer": "1.2.7", "referrer_percent": 0,
        "name": "alice", "owner": KEY_AUTH, "active": KEY_AUTH, "options": OPTIONS,
        "extensions": {}},
    # body: 9 + 1 + 1 + 1 + (1 + 40) + 1 = 54 bytes
    6: {"fee": FEE, "account": "1.2.6", "new_options": OPTIONS, "extensions": {}},
    7: {"fee": FEE, "authorizing_account": "1.2.6", "account_to_list": "1.2.7",
        "new_listing": 1, "extensions": EXT},
    8: {"fee": FEE, "account_to_upgrade": "1.2.6", "upgrade_to_lifetime_member": True,
        "extensions": EXT},
    9: {"fee": FEE, "account_id": "1.2.6", "new_owner": "1.2.7", "extensions": EXT},
    # body: 9 + 1 + (1 + 3) + 1 + 46 + 1 + 1 + 1 = 64 bytes
    10: {"fee": FEE, "issuer": "1.2.6", "symbol": "ABC", "precision": 4,
         "common_options": ASSET_OPTIONS, "is_prediction_market": False, "extensions": EXT},
    11: {"fee": FEE, "issuer": "1.2.6", "asset_to_update": "1.3.1", "new_issuer": "1.2.8",
         "new_options": ASSET_OPTIONS, "extensions": {}},
    12: {"fee": FEE, "issuer": "1.2.6", "asset_to_update": "1.3.1", "new_options": BITASSET,
         "extensions": EXT},
    13: {"fee": FEE, "issuer": "1.2.6", "asset_to_update": "1.3.1",
         "new_feed_producers": ["1.2.7"], "extensions": EXT},
    14: {"fee": FEE, "issuer": "1.2.6", "asset_to_issue": USD, "issue_to_account": "1.2.7",
         "extensions": EXT},
    15: {"fee": FEE, "payer": "1.2.6", "amount_to_reserve": USD, "extensions": EXT},
    16: {"fee": FEE, "from_account": "1.2.6", "asset_id": "1.3.1", "amount": 5,
         "extensions": EXT},
    17: {"fee": FEE, "account": "1.2.6", "amount": USD, "extensions": EXT},
    18: {"fee": FEE, "issuer": "1.2.6", "asset_to_settle": "1.3.1",
         "settle_price": FEED["settlement_price"], "extensions": EXT},
    19: {"fee": FEE, "publisher": "1.2.6", "asset_id": "1.3.1", "feed": FEED, "extensions": {}},
    20: {"fee": FEE, "witness_account": "1.2.6", "url": "https://w",
         "block_signing_key": DEV_PUB},
    21: {"fee": FEE, "witness": "1.6.1", "witness_account": "1.2.6", "new_url": "https://x"},
    22: {"fee": FEE, "fee_paying_account": "1.2.6", "expiration_time": "2030-01-01T00:00:00",
         "proposed_ops": [{"op": [0, {"fee": FEE, "from": "1.2.7", "to": "1.2.8",
                                      "amount": CORE, "extensions": EXT}]}],
         "extensions": EXT},
    23: {"fee": FEE, "fee_paying_account": "1.2.6", "proposal": "1.10.1",
         "active_approvals_to_add": ["1.2.7"], "active_approvals_to_remove": [],
         "owner_approvals_to_add": ["1.2.8"], "owner_approvals_to_remove": [],
         "key_approvals_to_add": [DEV_PUB], "key_approvals_to_remove": [], "extensions": EXT},
    24: {"fee": FEE, "fee_paying_account": "1.2.6", "using_owner_authority": False,
         "proposal": "1.10.1", "extensions": EXT},
    25: {"fee": FEE, "withdraw_from_account": "1.2.6", "authorized_account": "1.2.7",
         "withdrawal_limit": CORE, "withdrawal_period_sec": 3600,
         "periods_until_expiration": 2, "period_start_time": "2030-01-01T00:00:00"},
    26: {"fee": FEE, "withdraw_from_account": "1.2.6", "authorized_account": "1.2.7",
         "permission_to_update": "1.12.1", "withdrawal_limit": CORE,
         "withdrawal_period_sec": 3600, "period_start_time": "2030-01-01T00:00:00",
         "periods_until_expiration": 2},
    27: {"fee": FEE, "withdraw_permission": "1.12.1", "withdraw_from_account": "1.2.7",
         "withdraw_to_account": "1.2.6", "amount_to_withdraw": CORE, "memo": MEMO},
    28: {"fee": FEE, "withdraw_from_account": "1.2.6", "authorized_account": "1.2.7",
         "withdrawal_permission": "1.12.1"},
    29: {"fee": FEE, "committee_member_account": "1.2.6", "url": "https://c"},
    30: {"fee": FEE, "committee_member": "1.5.1", "committee_member_account": "1.2.6",
         "new_url": "https://d"},
    31: {"fee": FEE, "new_parameters": PARAMETERS},
    32: {"fee": FEE, "creator": "1.2.6", "owner": "1.2.7", "amount": CORE,
         "policy": [1, {"start_claim": "2030-01-01T00:00:00", "vesting_seconds": 60}]},
    33: {"fee": FEE, "vesting_balance": "1.13.1", "owner": "1.2.6", "amount": CORE},
    34: {"fee": FEE, "owner": "1.2.6", "work_begin_date": "2030-01-01T00:00:00",
         "work_end_date": "2030-02-01T00:00:00", "daily_pay": 1000, "name": "w",
         "url": "https://u", "initializer": [1, {"pay_vesting_period_days": 1}]},
    # body: 9 + 1 + 1 + 2 + (2 + 2048) = 2063 bytes
    35: {"fee": {"amount": 1, "asset_id": "1.3.0"}, "payer": "1.2.6", "required_auths": [],
         "id": 7, "data": "00" * 2048},
    36: {"fee": FEE, "fee_paying_account": "1.2.6",
         "predicates": [[0, {"account_id": "1.2.6", "name": "init0"}],
                        [2, {"id": "00" * 20}]], "required_auths": [], "extensions": EXT},
    37: {"fee": FEE, "deposit_to_account": "1.2.6", "balance_to_claim": "1.15.0",
         "balance_owner_key": DEV_PUB, "total_claimed": CORE},
    38: {"fee": FEE, "issuer": "1.2.6", "from": "1.2.7", "to": "1.2.8", "amount": USD,
         "memo": MEMO, "extensions": EXT},
    39: {"fee": FEE, "amount": CORE, "from": "1.2.6", "blinding_factor": BLIND,
         "outputs": [_out(COMMIT[0], "1.2.9"), _out(COMMIT[1])]},
    40: {"fee": FEE, "inputs": [{"commitment": COMMIT[0], "owner": account_auth("1.2.10")}],
         "outputs": [_out(COMMIT[1], "1.2.11"), _out(COMMIT[2]), _out(COMMIT[3])]},
    41: {"fee": FEE, "amount": CORE, "to": "1.2.6", "blinding_factor": BLIND,
         "inputs": [{"commitment": COMMIT[0], "owner": account_auth("1.2.12")}]},
    42: {"fee": FEE, "settlement": "1.4.1", "account": "1.2.6", "amount": USD},
    43: {"fee": FEE, "issuer": "1.2.6", "amount_to_claim": USD, "extensions": {}},
    44: {"fee": FEE, "account_id": "1.2.6", "fba_id": "2.16.1", "amount": 5},
    45: {"fee": FEE, "bidder": "1.2.6", "additional_collateral": CORE, "debt_covered": USD,
         "extensions": EXT},
    46: {"fee": FEE, "bidder": "1.2.6", "debt": USD, "collateral": CORE},
    47: {"fee": FEE, "issuer": "1.2.6", "asset_id": "1.3.1", "amount_to_claim": CORE,
         "extensions": EXT},
    48: {"fee": FEE, "issuer": "1.2.6", "asset_to_update": "1.3.1", "new_issuer": "1.2.7",
         "extensions": EXT},
    49: {"fee": FEE, "from": "1.2.6", "to": "1.2.7", "amount": CORE,
         "preimage_hash": [0, "00" * 20], "preimage_size": 1025,
         "claim_period_seconds": 86401, "extensions": {"memo": MEMO}},
    50: {"fee": FEE, "htlc_id": "1.16.1", "redeemer": "1.2.6", "preimage": "ab" * 1025,
         "extensions": EXT},
    51: {"fee": FEE, "htlc_id": "1.16.1", "from": "1.2.6", "to": "1.2.7", "redeemer": "1.2.8",
         "amount": CORE, "htlc_preimage_hash": [0, "00" * 20], "htlc_preimage_size": 1,
         "preimage": "ab"},
    52: {"fee": FEE, "htlc_id": "1.16.1", "update_issuer": "1.2.6",
         "seconds_to_add": 3 * 86400 + 1, "extensions": EXT},
    53: {"fee": FEE, "htlc_id": "1.16.1", "to": "1.2.6", "original_htlc_recipient": "1.2.7",
         "htlc_amount": CORE, "htlc_preimage_hash": [0, "00" * 20], "htlc_preimage_size": 1},
    # priced: restrictions (1 byte) + auth (42 bytes)
    54: {"fee": FEE, "account": "1.2.6", "enabled": True, "valid_from": "2030-01-01T00:00:00",
         "valid_to": "2031-01-01T00:00:00", "operation_type": 0, "auth": KEY_AUTH,
         "restrictions": [], "extensions": EXT},
    # priced: restrictions_to_add (1 byte) + new_auth (42 bytes)
    55: {"fee": FEE, "account": "1.2.6", "authority_to_update": "1.17.1", "new_auth": KEY_AUTH,
         "restrictions_to_remove": [], "restrictions_to_add": [], "extensions": EXT},
    56: {"fee": FEE, "account": "1.2.6", "authority_to_delete": "1.17.1", "extensions": EXT},
    57: {"fee": FEE, "account": "1.2.6", "target_type": 1, "amount": CORE, "extensions": EXT},
    58: {"fee": FEE, "ticket": "1.18.1", "account": "1.2.6", "target_type": 2,
         "amount_for_new_target": CORE, "extensions": EXT},
    59: {"fee": FEE, "account": "1.2.6", "asset_a": "1.3.0", "asset_b": "1.3.1",
         "share_asset": "1.3.2", "taker_fee_percent": 30, "withdrawal_fee_percent": 0,
         "extensions": EXT},
    60: {"fee": FEE, "account": "1.2.6", "pool": "1.19.1", "extensions": EXT},
    61: {"fee": FEE, "account": "1.2.6", "pool": "1.19.1", "amount_a": CORE, "amount_b": USD,
         "extensions": EXT},
    62: {"fee": FEE, "account": "1.2.6", "pool": "1.19.1",
         "share_amount": {"amount": 5, "asset_id": "1.3.2"}, "extensions": EXT},
    63: {"fee": FEE, "account": "1.2.6", "pool": "1.19.1", "amount_to_sell": CORE,
         "min_to_receive": USD, "extensions": EXT},
    64: {"fee": FEE, "owner_account": "1.2.6", "asset_type": "1.3.0", "balance": 100,
         "fee_rate": 10, "extensions": EXT},
    65: {"fee": FEE, "owner_account": "1.2.6", "fund_id": "1.20.1", "extensions": EXT},
    66: {"fee": FEE, "owner_account": "1.2.6", "fund_id": "1.20.1", "new_fee_rate": 5,
         "extensions": EXT},
    67: {"fee": FEE, "borrower": "1.2.6", "fund_id": "1.20.1", "borrow_amount": CORE,
         "extensions": EXT},
    68: {"fee": FEE, "account": "1.2.6", "fund_id": "1.20.1", "repay_amount": CORE,
         "fund_fee": {"amount": 1, "asset_id": "1.3.0"}, "extensions": EXT},
    # body: 9 + 1 + 1 + 8 + 4 + 4 + 8 + 1 + 4 + (1 + 1 + 18) + 1 + 1 = 62 bytes
    69: {"fee": FEE, "owner_account": "1.2.6", "asset_type": "1.3.0", "balance": 100,
         "fee_rate": 10, "max_duration_seconds": 86400, "min_deal_amount": 1, "enabled": True,
         "auto_disable_time": "2030-01-01T00:00:00",
         "acceptable_collateral": [["1.3.1", PRICE]], "acceptable_borrowers": [],
         "extensions": EXT},
    70: {"fee": FEE, "owner_account": "1.2.6", "offer_id": "1.21.1", "extensions": EXT},
    # body: 9 + 1 + 1 + (1 + 9) + 7 absent optionals + 1 = 29 bytes
    71: {"fee": FEE, "owner_account": "1.2.6", "offer_id": "1.21.1", "delta_amount": CORE,
         "extensions": EXT},
    72: {"fee": FEE, "borrower": "1.2.6", "offer_id": "1.21.1", "borrow_amount": CORE,
         "collateral": USD, "max_fee_rate": 10, "min_duration_seconds": 60, "extensions": {}},
    73: {"fee": FEE, "account": "1.2.6", "deal_id": "1.22.1", "repay_amount": CORE,
         "credit_fee": {"amount": 1, "asset_id": "1.3.0"}, "extensions": EXT},
    74: {"fee": FEE, "deal_id": "1.22.1", "offer_id": "1.21.1", "offer_owner": "1.2.6",
         "borrower": "1.2.7", "unpaid_amount": CORE, "collateral": USD, "fee_rate": 10},
    75: {"fee": FEE, "account": "1.2.6", "pool": "1.19.1", "taker_fee_percent": 10,
         "extensions": EXT},
    76: {"fee": FEE, "account": "1.2.6", "deal_id": "1.22.1", "auto_repay": 1,
         "extensions": EXT},
    77: {"fee": FEE, "seller": "1.2.6", "order": "1.7.1",
         "delta_amount_to_sell": CORE, "extensions": EXT},
}


def sample(kind: int) -> list:
    """A fresh copy of the sample operation of type ``kind``."""
    return json.loads(json.dumps([kind, SAMPLES[kind]]))
