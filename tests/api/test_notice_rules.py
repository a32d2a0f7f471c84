"""Who receives an object notice (nodeapi.api.database.notice_rules), checked
against bitshares-core's tables by hand: libraries/chain/db_notify.cpp
``get_relevant_accounts`` (the accounts of each object type) and
libraries/app/database_api.cpp ``handle_object_changed`` /
``is_impacted_account`` (the test of one id for one connection)."""

from nodeapi.api.database.notice_rules import batch_accounts, object_wanted, relevant_accounts


def _transfer(frm, to):
    return [0, {"fee": {"amount": 1, "asset_id": "1.3.0"}, "from": frm, "to": to,
                "amount": {"amount": 5, "asset_id": "1.3.0"}, "extensions": []}]


def test_relevant_accounts_by_object_type():
    cases = [
        ({"id": "1.2.9"}, {"1.2.9"}),  # account_object_type: itself
        ({"id": "1.3.4", "issuer": "1.2.17"}, {"1.2.17"}),  # asset: issuer
        ({"id": "1.4.1", "owner": "1.2.3"}, {"1.2.3"}),  # force settlement: owner
        ({"id": "1.5.0", "committee_member_account": "1.2.20"}, {"1.2.20"}),
        ({"id": "1.6.1", "witness_account": "1.2.21"}, {"1.2.21"}),
        ({"id": "1.7.8", "seller": "1.2.30"}, {"1.2.30"}),  # limit order: seller
        ({"id": "1.8.2", "borrower": "1.2.31"}, {"1.2.31"}),  # call order: borrower
        ({"id": "1.10.0", "proposed_transaction": {"operations": [_transfer("1.2.40", "1.2.41")]}},
         {"1.2.40", "1.2.41"}),  # proposal: transaction_get_impacted_accs
        ({"id": "1.11.5", "op": _transfer("1.2.42", "1.2.43")}, {"1.2.42", "1.2.43"}),
        ({"id": "1.12.0", "withdraw_from_account": "1.2.44", "authorized_account": "1.2.45"},
         {"1.2.44", "1.2.45"}),
        ({"id": "1.13.3", "owner": "1.2.46"}, {"1.2.46"}),  # vesting balance
        ({"id": "1.14.0", "worker_account": "1.2.47"}, {"1.2.47"}),
        ({"id": "1.15.0", "owner": "TEST6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5GDW5CV"},
         set()),  # balance_object_type: "free from any accounts"
        ({"id": "1.16.2", "transfer": {"from": "1.2.48", "to": "1.2.49"}}, {"1.2.48", "1.2.49"}),
        ({"id": "1.17.0", "account": "1.2.50",
          "auth": {"account_auths": [["1.2.51", 1]], "key_auths": []}}, {"1.2.50", "1.2.51"}),
        ({"id": "1.18.0", "account": "1.2.52"}, {"1.2.52"}),  # ticket
        ({"id": "1.19.0", "asset_a": "1.3.0"}, set()),  # liquidity pool: no account info
        ({"id": "1.20.0", "owner_account": "1.2.53"}, {"1.2.53"}),  # samet fund
        ({"id": "1.21.0", "owner_account": "1.2.54"}, {"1.2.54"}),  # credit offer
        ({"id": "1.22.0", "offer_owner": "1.2.55", "borrower": "1.2.56"}, {"1.2.55", "1.2.56"}),
        ({"id": "2.1.0", "head_block_number": 3}, set()),  # dynamic global properties
        ({"id": "2.3.0", "current_supply": 1}, set()),  # asset dynamic data
        ({"id": "2.5.7", "owner": "1.2.57"}, {"1.2.57"}),  # account balance
        ({"id": "2.6.7", "owner": "1.2.58"}, {"1.2.58"}),  # account statistics
        ({"id": "2.7.7", "owner": "1.2.59"}, {"1.2.59"}),  # statistics numbered 2.7
        ({"id": "2.7.1", "trx": {"operations": [_transfer("1.2.60", "1.2.61")]}},
         {"1.2.60", "1.2.61"}),  # transaction history
        ({"id": "2.9.4", "account": "1.2.62"}, {"1.2.62"}),  # account history
        ({"id": "2.10.0", "owner": {"account_auths": [["1.2.63", 1]]}}, {"1.2.63"}),
        ({"id": "2.17.0", "bidder": "1.2.64"}, {"1.2.64"}),  # collateral bid
        ({"id": "2.18.0", "offer_owner": "1.2.65", "borrower": "1.2.66"},
         {"1.2.65", "1.2.66"}),  # credit deal summary
        ({"no": "id"}, set()),
    ]
    for obj, accounts in cases:
        assert relevant_accounts(obj) == accounts, obj["id"] if "id" in obj else obj


def test_object_wanted_is_handle_object_changed():
    """``force_notify || is_subscribed_to_item(id) ||
    is_impacted_account(impacted_accounts)``: the impacted accounts are the
    batch's, so a subscribed account touched by one object of the batch
    receives every object of it."""
    batch = [{"id": "2.1.0"}, {"id": "2.5.1", "owner": "1.2.7"}, {"id": "2.6.8", "owner": "1.2.8"}]
    impacted = batch_accounts(batch + ["1.7.3"])  # ids (removals) add nothing
    assert impacted == {"1.2.7", "1.2.8"}
    assert all(object_wanted(o["id"], False, set(), {"1.2.7"}, impacted) for o in batch)
    assert not object_wanted("2.1.0", False, set(), {"1.2.9"}, impacted)
    assert object_wanted("2.1.0", False, {"2.1.0"}, set(), impacted)
    assert object_wanted("1.7.3", True, set(), set(), set())  # notify_remove_create
    assert not object_wanted("1.7.3", False, set(), set(), {"1.2.7"})
