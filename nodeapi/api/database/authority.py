"""database API, graphene section "Authority / validation": transaction
serialization, signatures, authority checks and fees (a section of
:class:`nodeapi.api.database.DatabaseApi`).

Graphene reference: bitshares-core libraries/app/database_api.cpp section
"Authority / validation" (``get_transaction_hex``,
``get_required_signatures``, ``get_potential_signatures``,
``verify_authority``, ``verify_account_authority``, ``get_required_fees``)
and libraries/protocol/transaction.cpp (``sign_state``).  All authority
logic is :mod:`nodeapi.chain.authority` (the same sign state the chain
verifies transactions with), so the answers match what the chain accepts
for the operations it evaluates.
"""

from nodeapi.api.arguments import check_public_key, guarded, require_list, require_trx
from nodeapi.api.base import Section, api_function
from nodeapi.api.lookup import get_account, get_asset
from nodeapi.chain import authority as auth
from nodeapi.chain.evaluators.custom_authority import viable_custom_authorities
from nodeapi.chain.validation import check_size, check_size_bound
from nodeapi.errors import ApiError, ChainError
from nodeapi.protocol.keys import address_bytes, public_key_bytes
from nodeapi.protocol.operations import canonical_operation
from nodeapi.protocol.transaction import (
    serialize_signed_transaction, serialize_transaction, signature_digest_of)


def _key_order(key: str) -> bytes:
    return public_key_bytes(key)


def _address_order(address: str) -> bytes:
    # graphene ``set<address>`` orders by the 20-byte ripemd160
    return address_bytes(address, None)


class Authority(Section):
    """Transaction hex, signatures, authority checks, fees."""

    def _packed(self, trx: dict) -> bytes:
        return guarded("transaction", serialize_transaction, require_trx(trx),
                       self.chain.address_prefix)

    def _signers(self, trx: dict) -> set:
        """The keys that signed ``trx``, after the chain's checks that need
        no recovery (size with signatures, duplicates, more signatures than
        required keys: :func:`nodeapi.chain.validation.check_size_bound`
        before serializing, :func:`~nodeapi.chain.validation.check_size`,
        :func:`nodeapi.chain.authority.signer_keys`), so one request costs a
        bounded number of recoveries and a bounded serialization."""
        params = self.chain.state.objects["2.0.0"]["parameters"]
        check_size_bound(require_trx(trx), params)
        packed = self._packed(trx)
        signatures = require_list(trx.get("signatures", []), "signatures")
        check_size(len(packed), signatures, params)
        digest = signature_digest_of(packed, self.chain.chain_id)
        return guarded("transaction", auth.signer_keys, signatures, digest,
                       self.chain.address_prefix, trx["operations"],
                       self.chain.state.require, self._max_depth(), self._custom())

    def _custom(self):
        """The chain's viable custom authorities at the head time (BSIP 40)."""
        return viable_custom_authorities(self.chain.state, self.chain.head_block_time)

    def _max_depth(self) -> int:
        return int(self.chain.state.objects["2.0.0"]["parameters"]["max_authority_depth"])

    def _potential(self, trx: dict) -> tuple[set, set]:
        signed = self._signers(trx)
        return guarded("transaction", auth.potential_signatures, trx["operations"], signed,
                       self.chain.state.require, self._max_depth())

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
        left out), sorted by key bytes; graphene
        ``signed_transaction::get_required_signatures`` via
        :func:`nodeapi.chain.authority.required_signatures`.  Bad signatures
        in ``trx`` raise :class:`~nodeapi.chain.errors.InvalidSignature`."""
        prefix = self.chain.address_prefix
        available = {check_public_key(k, prefix)
                     for k in require_list(available_keys, "available_keys")}
        signed = self._signers(trx)
        keys = guarded("transaction", auth.required_signatures, trx["operations"], signed,
                       available, self.chain.state.require, self._max_depth())
        return sorted(keys, key=_key_order)

    @api_function
    def get_potential_signatures(self, trx):
        """Every public key that could sign for ``trx``: the keys of the
        active and owner authorities the sign state fetches for the accounts
        it requires (account authorities followed up to
        ``max_authority_depth``; a walk stops where the existing signatures
        already satisfy an authority) and of its other required
        authorities, sorted by key bytes (graphene
        ``database_api::get_potential_signatures``)."""
        return sorted(self._potential(trx)[0], key=_key_order)

    @api_function
    def get_potential_address_signatures(self, trx):
        """Like :meth:`get_potential_signatures` for the ``address_auths``
        of the fetched account authorities (not the other authorities, as
        graphene), sorted by address bytes."""
        return sorted(self._potential(trx)[1], key=_address_order)

    @api_function
    def verify_authority(self, trx):
        """True if the signatures of ``trx`` satisfy every authority it
        requires; otherwise the chain's error (missing authority,
        unnecessary or invalid signature)."""
        signers = self._signers(trx)
        guarded("transaction", auth.verify_authority, trx["operations"], signers,
                self.chain.state.require, self._max_depth(), self._custom())
        return True

    @api_function
    def verify_account_authority(self, account_name_or_id, signers):
        """True if the keys ``signers`` (exactly, none unused) satisfy the
        account's active authority (or its owner), false otherwise.  As
        graphene, a dummy transfer from the account is verified with the
        default depth ``GRAPHENE_MAX_SIG_CHECK_DEPTH`` (2), not the chain
        parameter."""
        account = get_account(self.chain.state, account_name_or_id)
        prefix = self.chain.address_prefix
        keys = {check_public_key(k, prefix) for k in require_list(signers, "signers")}
        try:
            auth.verify_authority([[0, {"from": account["id"]}]], keys,
                                  self.chain.state.require, auth.MAX_SIG_CHECK_DEPTH)
        except ChainError:
            return False
        return True

    @api_function
    def validate_transaction(self, trx):
        """The processed transaction (``trx`` plus ``operation_results``)
        if ``trx`` would be accepted now; nothing is kept.  Otherwise the
        chain's error, as ``broadcast_transaction`` gives it."""
        trx = require_trx(trx)
        return guarded("transaction", self.chain.validate_transaction, trx)

    # -- fees --------------------------------------------------------------------

    def _op_fee(self, op, asset_id: str):
        if not (isinstance(op, list) and len(op) == 2 and isinstance(op[1], dict)):
            raise ApiError(f"Malformed operation {op!r}: expected [type, {{...}}]")
        # read like graphene's from_variant first (UnknownOperation for a tag
        # fc cannot read; "0" and 0.0 become the integer 0)
        op = guarded("operation", canonical_operation, op, self.chain.address_prefix)
        return guarded("operation", self.chain.required_fee, op, asset_id)

    @api_function
    def get_required_fees(self, ops, asset_symbol_or_id):
        """The fee each operation needs under the current fee schedule, as
        ``{amount, asset_id}`` in the given asset (converted through its
        core exchange rate, rounded up); a proposal_create answers graphene's
        ``[fee, [fees of the proposed operations]]`` and a virtual operation
        0 (graphene ``get_required_fees``; rules in
        :mod:`nodeapi.protocol.fee_schedule`).  An operation that does not
        deserialize raises a :class:`~nodeapi.errors.ProtocolError` (code
        10), e.g. :class:`~nodeapi.protocol.errors.UnknownOperation` for a
        type tag that is not an integer 0-77."""
        ops = require_list(ops, "ops")
        asset_id = get_asset(self.chain.state, asset_symbol_or_id)["id"]
        return [self._op_fee(op, asset_id) for op in ops]
