"""The devnet's ready accounts: keys derived from a seed, the transactions
that create and fund them, and the table printed at start.

Account ``devK`` has one key for owner, active and memo: the private key
``sha256("<seed> devK")`` (graphene ``private_key::regenerate`` of that
digest, :meth:`~nodeapi.protocol.keys.PrivateKey.from_seed`), so a test
suite can hard-code its WIF for a given seed.  The accounts are made by
real transactions in the first blocks of a fresh devnet: the registrar
``init0`` claims the genesis balance (balance_claim, graphene
balance_evaluator.cpp), registers each account (account_create with
``init0`` as registrar and referrer) and transfers it its balance; ``init0``
(the bundled genesis' development key) stays the faucet.
"""

import struct

import attr

from nodeapi.chain import authority as auth
from nodeapi.chain.evaluators.balance import key_addresses
from nodeapi.protocol.keys import PrivateKey
from nodeapi.protocol.times import format_time
from nodeapi.devnet.registration import registration_lines
from nodeapi.protocol.transaction import sign_transaction
from nodeapi.protocol.asset import amount_of, core
from nodeapi.protocol.config import CORE_ASSET

#: satoshis of one TEST (the bundled genesis' core precision, 5)
CORE_UNIT = 100_000
#: the balance each ready account gets, in core satoshis (1,000,000 TEST)
DEFAULT_BALANCE = 1_000_000 * CORE_UNIT
DEFAULT_SEED = "nodeapi-devnet"
#: the registrar and faucet of the devnet (an init account of the genesis)
REGISTRAR = "init0"
#: seconds a devnet transaction is valid after the head block
EXPIRATION = 120


@attr.s(slots=True, frozen=True, auto_attribs=True)
class DevAccount:
    """A ready account: ``name``, ``wif`` (its private key), ``public_key``
    (``TEST...``)."""

    name: str
    wif: str
    public_key: str

    def as_dict(self, chain) -> dict:
        """``{"name", "id", "wif", "public_key", "balance"}`` (balance in
        core satoshis; id None when the account does not exist)."""
        oid = chain.state.account_by_name.get(self.name)
        return {"name": self.name, "id": oid, "wif": self.wif, "public_key": self.public_key,
                "balance": core_balance(chain, oid) if oid else 0}


def dev_accounts(seed: str, count: int, prefix: str) -> list:
    """The ``count`` accounts ``dev0``.. of ``seed`` (module text)."""
    out = []
    for i in range(count):
        key = PrivateKey.from_seed(f"{seed} dev{i}")
        out.append(DevAccount(f"dev{i}", key.to_wif(), key.public_key.to_str(prefix)))
    return out


def core_balance(chain, account_id: str) -> int:
    """The core balance of ``account_id`` in satoshis (0 without one)."""
    return chain.state.balance(account_id, CORE_ASSET) if account_id else 0


def key_authority(public_key: str) -> dict:
    """The authority of one key (threshold 1)."""
    return {"weight_threshold": 1, "account_auths": [], "key_auths": [[public_key, 1]],
            "address_auths": []}


def signed(chain, ops: list, wifs: list) -> dict:
    """A transaction of wire ``ops`` over the chain's head (TaPoS as
    graphene ``set_reference_block``; expiring :data:`EXPIRATION` s after
    the head), each op's fee set to the required one, signed with
    ``wifs``."""
    ops = [[kind, dict(body, fee=chain.required_fee([kind, body]))] for kind, body in ops]
    trx = {"ref_block_num": chain.head_block_num & 0xFFFF,
           "ref_block_prefix": struct.unpack_from("<I", bytes.fromhex(chain.head_block_id), 4)[0],
           "expiration": format_time(chain.head_block_time + EXPIRATION),
           "operations": ops, "extensions": [], "signatures": []}
    return sign_transaction(trx, chain.chain_id, wifs, chain.address_prefix)


def create_ops(registrar: str, name: str, owner_key: str, *, active_key: str | None = None,
               memo_key: str | None = None, referrer: str | None = None) -> list:
    """account_create of ``name`` by ``registrar`` (also its referrer
    unless ``referrer`` is given; graphene account_evaluator.cpp), owner
    ``owner_key``, active and memo keys the same unless given."""
    fee = core(0)
    active_key = active_key or owner_key
    return [[5, {"fee": fee, "registrar": registrar, "referrer": referrer or registrar,
                 "referrer_percent": 0, "name": name,
                 "owner": key_authority(owner_key), "active": key_authority(active_key),
                 "options": {"memo_key": memo_key or active_key, "voting_account": "1.2.5",
                             "num_witness": 0, "num_committee": 0, "votes": [],
                             "extensions": []},
                 "extensions": {}}]]


def upgrade_op(account_id: str) -> list:
    """account_upgrade of ``account_id`` to lifetime member (it pays the
    fee; graphene account_evaluator.cpp ``account_upgrade_evaluator``):
    it may then register accounts and earns its cashback."""
    return [8, {"fee": core(0), "account_to_upgrade": account_id,
                "upgrade_to_lifetime_member": True, "extensions": []}]


def transfer_op(frm: str, to: str, amount: int) -> list:
    """A core transfer of ``amount`` satoshis."""
    return [0, {"fee": core(0), "from": frm, "to": to,
                "amount": core(amount), "extensions": []}]


def claim_ops(chain, registrar_id: str, wif: str) -> list:
    """balance_claim of every genesis balance owned by ``wif``'s key into
    ``registrar_id`` (one op per balance object 1.15.N), [] when none is
    left."""
    public = auth.public_key_of(wif, chain.address_prefix)
    owned = key_addresses(public, chain.address_prefix)
    ops = []
    for oid in sorted(oid for owner, ids in chain.state.genesis_balances_by_owner.items()
                      if owner in owned for oid in ids):
        obj = chain.state.objects[oid]
        if amount_of(obj["balance"]) > 0:
            ops.append([37, {"fee": core(0),
                             "deposit_to_account": registrar_id, "balance_to_claim": oid,
                             "balance_owner_key": public, "total_claimed": obj["balance"]}])
    return ops


def table(chain, accounts: list, seed: str, registrar_wif: str, url: str) -> str:
    """The text printed at start: the RPC URL, the seed, one line per
    account (name, id, balance, public key, WIF), the registrar first, and
    the lines registering the chain with python-bitshares and bitsharesjs
    (:mod:`nodeapi.devnet.registration`)."""
    rows = [("name", "id", "balance", "public key", "private key (WIF)")]
    reg = chain.state.account_by_name.get(REGISTRAR)
    rows.append((f"{REGISTRAR} (faucet)", reg or "-", _amount(core_balance(chain, reg)),
                 auth.public_key_of(registrar_wif, chain.address_prefix), registrar_wif))
    for acc in accounts:
        d = acc.as_dict(chain)
        rows.append((acc.name, d["id"] or "-", _amount(d["balance"]), acc.public_key, acc.wif))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = ["", f"nodeapi devnet: {url} (HTTP {url.replace('ws://', 'http://')}/rpc), "
             f"chain id {chain.chain_id}",
             f"Ready accounts (seed {seed!r}, keys: sha256(\"<seed> devK\")):"]
    lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.append("Register the chain with your client (python-bitshares, bitsharesjs):")
    lines += ["  " + line for line in registration_lines(chain.chain_id).values()]
    return "\n".join(lines) + "\n"


def _amount(satoshis: int) -> str:
    return f"{satoshis / 100_000:,.5f} TEST".replace(".00000 ", " ")
