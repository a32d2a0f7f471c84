"""database API: transaction serialization, authority and fees (a mixin of
:class:`nodeapi.api.database.DatabaseApi`).

Graphene reference: bitshares-core libraries/app/database_api.cpp section
"Authority / validation" (``get_transaction_hex``,
``get_required_signatures``, ``get_potential_signatures``,
``verify_authority``, ``verify_account_authority``, ``get_required_fees``)
and libraries/protocol/transaction.cpp (``sign_state``).  Required
authorities come from :func:`nodeapi.chain.authority.required_authorities`,
so they cover the operations this chain evaluates.
"""

from nodeapi.protocol.transaction import serialize_signed_transaction

from nodeapi.api.base import api_function
from nodeapi.api.database_common import get_account, get_asset, require_list
from nodeapi.api.database_globals import check_public_key
from nodeapi.chain import authority as auth
from nodeapi.errors import ApiError, ChainError, NodeAPIError


def guarded(what: str, fn, *args):
    """Call ``fn(*args)``; malformed input (missing fields, wrong types) that
    makes the serializers fail becomes ``ApiError("Malformed <what>: ...")``;
    :class:`NodeAPIError` passes through."""
    try:
        return fn(*args)
    except NodeAPIError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, AssertionError,
            OverflowError) as exc:
        raise ApiError(f"Malformed {what}: {type(exc).__name__}: {exc}") from None


def require_trx(trx) -> dict:
    """``trx`` if it is a JSON object with the transaction fields."""
    if not isinstance(trx, dict):
        raise ApiError(f"trx must be a transaction object, got {type(trx).__name__}")
    missing = [k for k in ("ref_block_num", "ref_block_prefix", "expiration", "operations")
               if k not in trx]
    if missing:
        raise ApiError(f"Malformed transaction: missing {', '.join(missing)}")
    require_list(trx["operations"], "operations")
    return trx


def _key_order(key: str) -> bytes:
    return auth.public_key_bytes(key)


class _SignState:
    """graphene ``sign_state`` over the keys that signed plus the keys a
    client has (``available``): records every such key an authority check
    consults (``used``) and every key of every authority visited (``seen``,
    for ``get_potential_signatures``)."""

    def __init__(self, keys: set, get_account_fn, max_depth: int) -> None:
        self.keys = keys
        self.get_account = get_account_fn
        self.max_depth = max_depth
        self.used: set = set()
        self.seen: set = set()
        self.seen_addresses: set = set()
        self.approved: set = set()

    def check(self, authority: dict, depth: int = 0) -> bool:
        total, threshold = 0, int(authority["weight_threshold"])
        for key, weight in authority["key_auths"]:
            self.seen.add(key)
            if key in self.keys:
                self.used.add(key)
                total += int(weight)
                if total >= threshold:
                    return True
        self.seen_addresses.update(a for a, _ in authority.get("address_auths", []))
        for aid, weight in authority["account_auths"]:
            if aid not in self.approved:
                if depth == self.max_depth:
                    continue
                account = self.get_account(aid)
                if not (self.check(account["active"], depth + 1)
                        or self.check(account["owner"], depth + 1)):
                    continue
                self.approved.add(aid)
            total += int(weight)
            if total >= threshold:
                return True
        return total >= threshold

    def run(self, operations: list) -> None:
        """Check every authority ``operations`` require (graphene order:
        other, owner, active-or-owner)."""
        for op in operations:
            active, owner, other = auth.required_authorities(op)
            for authority in other:
                self.check(authority)
            for aid in sorted(owner):
                self.check(self.get_account(aid)["owner"])
            for aid in sorted(active):
                account = self.get_account(aid)
                if not self.check(account["active"]):
                    self.check(account["owner"])


class AuthorityMixin:
    """Transaction hex, signatures, authority checks, fees."""

    def _packed(self, trx: dict) -> bytes:
        return guarded("transaction", auth.pack_transaction, require_trx(trx),
                       self.chain.address_prefix)

    def _signers(self, trx: dict) -> set:
        digest = auth.signature_digest(self.chain.chain_id, self._packed(trx))
        return auth.recover_keys(require_list(trx.get("signatures", []), "signatures"),
                                 digest, self.chain.address_prefix)

    def _sign_state(self, keys: set) -> _SignState:
        depth = int(self.chain.state.objects["2.0.0"]["parameters"]["max_authority_depth"])
        return _SignState(keys, self.chain.state.require, depth)

    @api_function
    def get_transaction_hex(self, trx):
        """Hex of the signed transaction's binary serialization (with
        signatures)."""
        require_trx(trx)
        prefix = self.chain.address_prefix

        def pack():
            return serialize_signed_transaction(
                dict(trx, signatures=list(trx.get("signatures", []))), prefix).hex()

        return guarded("transaction", pack)

    @api_function
    def get_transaction_hex_without_sig(self, trx):
        """Hex of the transaction serialized without signatures (what its id
        and signature digest are computed from)."""
        return self._packed(trx).hex()

    @api_function
    def get_required_signatures(self, trx, available_keys):
        """The keys of ``available_keys`` that must still sign ``trx`` to
        satisfy the authorities it requires (keys that already signed are
        left out), sorted."""
        prefix = self.chain.address_prefix
        available = {check_public_key(k, prefix)
                     for k in require_list(available_keys, "available_keys")}
        signed = self._signers(trx)
        state = self._sign_state(signed | available)
        guarded("transaction", state.run, trx["operations"])
        return sorted((state.used & available) - signed, key=_key_order)

    @api_function
    def get_potential_signatures(self, trx):
        """Every public key that could sign for ``trx``: the keys of the
        active and owner authorities of the accounts it requires (following
        account authorities up to ``max_authority_depth``) and of its other
        required authorities, sorted."""
        require_trx(trx)
        state = self._sign_state(set())
        guarded("transaction", state.run, trx["operations"])
        return sorted(state.seen, key=_key_order)

    @api_function
    def get_potential_address_signatures(self, trx):
        """Like :meth:`get_potential_signatures` for the ``address_auths``
        of those authorities, sorted."""
        require_trx(trx)
        state = self._sign_state(set())
        guarded("transaction", state.run, trx["operations"])
        return sorted(state.seen_addresses)

    @api_function
    def verify_authority(self, trx):
        """True if the signatures of ``trx`` satisfy every authority it
        requires; otherwise the chain's error (missing authority,
        unnecessary or invalid signature)."""
        signers = self._signers(trx)
        depth = int(self.chain.state.objects["2.0.0"]["parameters"]["max_authority_depth"])
        guarded("transaction", auth.verify_authority, trx["operations"], signers,
                self.chain.state.require, depth)
        return True

    @api_function
    def verify_account_authority(self, account_name_or_id, signers):
        """True if the keys ``signers`` (exactly, none unused) satisfy the
        account's active authority (or its owner), false otherwise."""
        account = get_account(self.chain.state, account_name_or_id)
        prefix = self.chain.address_prefix
        keys = {check_public_key(k, prefix) for k in require_list(signers, "signers")}
        depth = int(self.chain.state.objects["2.0.0"]["parameters"]["max_authority_depth"])
        try:
            auth.verify_authority([[0, {"from": account["id"]}]], keys,
                                  self.chain.state.require, depth)
        except ChainError:
            return False
        return True

    # -- fees --------------------------------------------------------------------

    def _op_fee(self, op, asset_id: str):
        if not (isinstance(op, list) and len(op) == 2 and isinstance(op[1], dict)):
            raise ApiError(f"Malformed operation {op!r}: expected [type, {{...}}]")
        # the type tag is checked by chain.required_fee (UnknownOperation for
        # anything but a supported integer: graphene cannot deserialize it)
        return guarded("operation", self.chain.required_fee, op, asset_id)

    @api_function
    def get_required_fees(self, ops, asset_symbol_or_id):
        """The fee each operation needs under the current fee schedule, as
        ``{amount, asset_id}`` in the given asset (converted through its
        core exchange rate, rounded up).  An operation type that is not an
        integer nodeapi supports raises
        :class:`~nodeapi.protocol.errors.UnknownOperation` (code 10); that
        includes proposal_create (22), which this chain does not have, so
        graphene's nested ``[fee, [proposed fees]]`` form never arises."""
        ops = require_list(ops, "ops")
        asset_id = get_asset(self.chain.state, asset_symbol_or_id)["id"]
        return [self._op_fee(op, asset_id) for op in ops]
