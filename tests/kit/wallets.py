"""Many accounts on a test chain and payments to each, for the gateway's
subscription scale tests and bench/gateway_wallets.py: accounts registered
by init0 (owner and active the dev key, bitshares-core
libraries/protocol/account.cpp ``account_create_operation``), transfers from
init0, packed into transactions under the genesis'
``maximum_transaction_size`` (2048 bytes); on a test chain object or, over
JSON-RPC, on a running node (a nodeapi daemon, the reference
``witness_node``)."""

from bitsharesbase import operations

from kit.chain import account_options, key_auth, produce, transfer_op, with_fee
from kit.signing import sign

#: account_create operations per transaction (about 250 bytes each)
CREATES_PER_TRX = 6
#: transfers per transaction (about 45 bytes each)
TRANSFERS_PER_TRX = 30


def wallet_names(n: int, prefix: str = "wallet") -> list:
    """``n`` account names (non-premium: a dash and digits)."""
    return [f"{prefix}-{i}" for i in range(n)]


def create_accounts(chain, names: list) -> list:
    """Register ``names`` (init0 pays); blocks produced along the way and
    at the end.  Returns their account ids, in order."""
    pub = chain.state.get("1.2.6")["active"]["key_auths"][0][0]
    ids = []
    for k, i in enumerate(range(0, len(names), CREATES_PER_TRX)):
        ops = []
        for name in names[i:i + CREATES_PER_TRX]:
            data = dict(registrar="1.2.6", referrer="1.2.6", referrer_percent=0, name=name,
                        owner=key_auth(pub), active=key_auth(pub),
                        options=account_options(pub), extensions={})
            _op, fee = with_fee(chain, operations.Account_create, **data)
            # every accounts_per_fee_scale (1000) registrations the fee grows
            # 2^account_fee_scale_bitshifts (16) times, maybe within this
            # transaction: a fee over the required one is accepted
            ops.append(operations.Account_create(
                fee={"amount": fee * 16, "asset_id": "1.3.0"}, prefix="TEST", **data))
        result = chain.push_transaction(sign(chain, ops))
        ids += [r[1] for r in result["operation_results"]]
        if k % 20 == 19:
            produce(chain)
    produce(chain)
    return ids


def pay_each(chain, accounts: list, amount: int) -> None:
    """Push one transfer of ``amount`` (core) from init0 to each of
    ``accounts`` (pending: the caller produces the block)."""
    for i in range(0, len(accounts), TRANSFERS_PER_TRX):
        chain.push_transaction(sign(chain, [transfer_op(amount, to=a)
                                            for a in accounts[i:i + TRANSFERS_PER_TRX]]))


def paid(notices, account: str, amount: int) -> bool:
    """Whether ``notices`` (a client's ``[cb, [batch]]`` list) show
    ``account``'s core balance object at ``amount``."""
    for _cb, params in notices:
        for obj in params[0] if params and type(params[0]) is list else ():
            if (type(obj) is dict and obj.get("owner") == account
                    and obj.get("asset_type") == "1.3.0"
                    and str(obj.get("balance")) == str(amount)):
                return True
    return False


def create_accounts_over_rpc(node, names: list) -> list:
    """Register ``names`` on a running node (``node.call(method, *params,
    api=...)``: kit.daemon.Daemon, kit.reference.ReferenceNode), init0
    paying 16 times the fee the node asks (``get_required_fees``; the
    fee scale may grow within a transaction); returns their account ids
    once a block holds them all (the last transaction is broadcast
    synchronously; a node's reads see pending transactions too)."""
    import time

    from kit.chain import FEE0, op_id
    from kit.signing import signed_over_head  # python-bitshares, as sign

    pub = node.call("get_accounts", ["1.2.6"], api="database")[0]["active"]["key_auths"][0][0]
    for i in range(0, len(names), CREATES_PER_TRX):
        datas = [dict(registrar="1.2.6", referrer="1.2.6", referrer_percent=0, name=name,
                      owner=key_auth(pub), active=key_auth(pub),
                      options=account_options(pub), extensions={})
                 for name in names[i:i + CREATES_PER_TRX]]
        free = [operations.Account_create(fee=FEE0, prefix="TEST", **d) for d in datas]
        fees = node.call("get_required_fees",
                         [[op_id(operations.Account_create), op.json()] for op in free],
                         "1.3.0", api="database")
        ops = [operations.Account_create(fee={"amount": int(fee["amount"]) * 16,
                                              "asset_id": "1.3.0"}, prefix="TEST", **d)
               for d, fee in zip(datas, fees)]
        last = i + CREATES_PER_TRX >= len(names)  # waited for until a block holds it
        node.call("broadcast_transaction_synchronous" if last else "broadcast_transaction",
                  signed_over_head(node, ops), api="network_broadcast", timeout=60)
    deadline = time.time() + 60
    while time.time() < deadline:
        found = node.call("lookup_account_names", names, api="database")
        if all(found):
            return [account["id"] for account in found]
        time.sleep(0.5)
    raise AssertionError("the accounts were not all registered in 60 s")


def pay_over_rpc(node, accounts: list, amount: int) -> None:
    """A transfer of ``amount`` from init0 to each of ``accounts``, in one
    transaction broadcast to ``node`` and waited for until a block holds it
    (``broadcast_transaction_synchronous``)."""
    from kit.signing import signed_over_head

    trx = signed_over_head(node, [transfer_op(amount, to=a) for a in accounts])
    node.call("broadcast_transaction_synchronous", trx, api="network_broadcast", timeout=60)
