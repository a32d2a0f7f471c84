"""A test chain with real history: balance claim, transfers, account
creation, asset create/issue, limit orders with fills and a second
calendar month, signed by python-bitshares.  Shared by the history and
searchdb tests."""

from bitsharesbase import operations

from kit.chain import (INIT, account_options, asset_options, claim_op, jump, key_auth,
                       produce, transfer_op, with_fee)
from kit.signing import sign


GOLD_OPTS = asset_options(max_market_fee=0)


def build_history_chain(chain, rounds: int = 2, per_trx: int = 10,
                        next_month: bool = True) -> dict:
    """Fill ``chain`` with history; returns facts the tests check:
    ``{"accounts": [new account ids], "asset": "1.3.1"}``.

    Every round adds ``per_trx`` transfers among init0..init10 and the new
    accounts in one transaction, an issue and a crossing order pair."""
    chain.push_transaction(sign(chain, [claim_op()]))
    produce(chain)
    pub = chain.state.get("1.2.6")["active"]["key_auths"][0][0]
    new_accounts = []
    for name in ("alice-1", "bob-1"):
        op, _fee = with_fee(chain, operations.Account_create, registrar="1.2.6",
                            referrer="1.2.6", referrer_percent=0, name=name,
                            owner=key_auth(pub), active=key_auth(pub),
                            options=account_options(pub), extensions={})
        res = chain.push_transaction(sign(chain, [op]))
        new_accounts.append(res["operation_results"][0][1])
    produce(chain)
    op, _ = with_fee(chain, operations.Asset_create, issuer="1.2.6", symbol="GOLD",
                     precision=3, common_options=GOLD_OPTS, is_prediction_market=False,
                     extensions=[])
    chain.push_transaction(sign(chain, [op]))
    # fund the others so they can trade and transfer back
    chain.push_transaction(sign(chain, [transfer_op(10 ** 10, to=a)
                                        for a in INIT[1:4] + new_accounts]))
    produce(chain)
    for r in range(rounds):
        if next_month and r == rounds // 2 and r > 0:
            jump(chain, 40 * 86400)
        issue, _ = with_fee(chain, operations.Asset_issue, issuer="1.2.6",
                            asset_to_issue={"amount": 5000 + r, "asset_id": "1.3.1"},
                            issue_to_account=INIT[1], extensions=[])
        ops = [issue]
        for i in range(per_trx):
            to = (INIT[1:4] + new_accounts)[i % 5]
            ops.append(transfer_op(1000 + i + r, fee=3000000, to=to))
        chain.push_transaction(sign(chain, ops))
        sell, _ = with_fee(chain, operations.Limit_order_create, seller="1.2.6",
                           amount_to_sell={"amount": 1000, "asset_id": "1.3.0"},
                           min_to_receive={"amount": 100, "asset_id": "1.3.1"},
                           expiration="2030-01-01T00:00:00", fill_or_kill=False,
                           extensions=[])
        chain.push_transaction(sign(chain, [sell]))
        produce(chain)
        buy, _ = with_fee(chain, operations.Limit_order_create, seller=INIT[1],
                          amount_to_sell={"amount": 100, "asset_id": "1.3.1"},
                          min_to_receive={"amount": 1000, "asset_id": "1.3.0"},
                          expiration="2030-01-01T00:00:00", fill_or_kill=False,
                          extensions=[])
        chain.push_transaction(sign(chain, [buy]))
        back = transfer_op(77 + r, frm=new_accounts[r % 2], to=INIT[2])
        chain.push_transaction(sign(chain, [back]))
        produce(chain)
    return {"accounts": new_accounts, "asset": "1.3.1"}


class Recorder:
    """An IBlockConsumer that keeps every applied block in ``blocks``."""

    def __init__(self):
        self.blocks = []

    def block_applied(self, applied):
        self.blocks.append(applied)


class SyntheticNumbering:
    """Numbers hand-made AppliedOperations (no chain) with the chain's own
    2.9 rule (:func:`nodeapi.chain.numbering.number_entries`) over plain
    dict statistics: ``numbered(op)`` returns ``op`` with its
    ``account_history`` entries."""

    def __init__(self):
        self.next_ath = 0
        self._stats = {}

    def _stats_of(self, account):
        return self._stats.setdefault(account, {"most_recent_op": "2.9.0", "total_ops": 0})

    def numbered(self, op):
        import attr

        from nodeapi.chain.numbering import history_accounts, number_entries

        accounts = history_accounts(op.op, op.result, tuple(op.impacted))
        entries, self.next_ath = number_entries(accounts, self.next_ath, self._stats_of)
        return attr.evolve(op, account_history=entries)
