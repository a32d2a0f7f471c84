"""Signatures as the chain checks them, and graphene's ``verify_authority``.

The protocol itself (transaction bytes, ids and signature digests, block
ids, block signing digests, merkle roots, key encodings) lives in
:mod:`nodeapi.protocol` (``transaction``, ``block``, ``keys``); this module
only adds the chain's rules on top of it:

- :func:`recover_keys` turns 65-byte compact signatures into public key
  strings (:meth:`nodeapi.protocol.keys.PublicKey.recover`); like graphene,
  a non-canonical signature is rejected.  Every failure is
  :class:`~nodeapi.protocol.errors.InvalidSignature` (a ProtocolError and a
  ChainError; any other protocol error is its ``__cause__``).
- what an operation requires is :func:`nodeapi.protocol.impacted.required_authorities`
  and :func:`~nodeapi.protocol.impacted.other_authorities` (graphene
  ``operation_get_required_authorities``: the fee payer's active authority
  always - balance_claim's ``deposit_to_account`` too -, account_update's
  owner when it changes the owner, ...); there is no second version here.
- :func:`verify_authority` follows ``graphene::protocol::verify_authority``
  (libraries/protocol/transaction.cpp): every required active authority is
  satisfied by its active or owner authority, owner requirements by the owner,
  other authorities (balance_claim's key) directly; account_auths recurse up
  to ``max_authority_depth``; a signature that contributes nothing is an error.
  custom's ``required_auths`` are required (graphene after
  HARDFORK_CORE_210; this chain applies the current rules at every time).
- :func:`required_signatures` and :func:`potential_signatures` run the same
  sign state the way ``signed_transaction::get_required_signatures`` does
  (for the database API functions of those names).
"""

from nodeapi.chain.errors import (
    CommitteeApproval, MissingActiveAuthority, MissingOtherAuthority, MissingOwnerAuthority)
from nodeapi.errors import ProtocolError
from nodeapi.protocol.errors import InvalidSignature
from nodeapi.protocol.config import COMMITTEE_ACCOUNT, TEMP_ACCOUNT
from nodeapi.protocol.ids import instance_number
from nodeapi.protocol.impacted import other_authorities, required_authorities
from nodeapi.protocol.keys import PrivateKey, PublicKey


def recover_key(signature_hex: str, digest: bytes, prefix: str) -> str:
    """The public key string that made a compact signature of ``digest``;
    raises :class:`InvalidSignature`."""
    try:
        pub = PublicKey.recover(bytes.fromhex(signature_hex), digest)
    except InvalidSignature:
        raise
    except ProtocolError as exc:
        raise InvalidSignature(str(exc)) from exc
    except (ValueError, TypeError) as exc:
        raise InvalidSignature(f"Invalid signature {str(signature_hex)[:16]}...: "
                               "not hex") from exc
    return pub.to_str(prefix)


#: Bytes of one compact signature (fc ``compact_signature``).
SIGNATURE_BYTES = 65


def signed_size(unsigned_size: int, signatures: list) -> int:
    """Packed size in bytes of a signed transaction whose unsigned part packs
    to ``unsigned_size`` bytes: plus the varint count and 65 bytes per
    signature (graphene ``precomputable_transaction::get_packed_size``, the
    size ``_apply_transaction`` compares with ``maximum_transaction_size``)."""
    n = len(signatures)
    count = 1
    while n >= 0x80:
        n >>= 7
        count += 1
    return unsigned_size + count + SIGNATURE_BYTES * len(signatures)


def signer_keys(signatures, digest: bytes, prefix: str, ops: list, get_account,
                max_depth: int, get_custom=None) -> set:
    """The public key strings that made ``signatures`` (hex strings) of
    ``digest``, recovering no more keys than the transaction can use
    (recovery is the expensive step, about 0.1 ms each).

    Before any recovery: ``signatures`` must be a list of hex strings and
    no signature may appear twice.  When there are more signatures than
    keys in every authority ``ops`` can require (the keys
    :func:`potential_signatures` gives without signatures: account
    authorities reachable within ``max_depth`` and the other authorities),
    some signature signs nothing required: only the first (that many + 1)
    are recovered, which names at least one such key.  The keys of the
    viable custom authorities (``get_custom``, see :func:`verify_authority`)
    count as usable too.  Together with the
    size limit counted with the signatures
    (:func:`nodeapi.chain.validation.check_size`), this bounds the CPU one
    transaction or API request costs.

    :raises InvalidSignature: not a list of strings; a duplicate (graphene
        ``tx_duplicate_sig``, "Duplicate Signature detected"); a malformed
        signature (:func:`recover_key`); too many signatures ("Unnecessary
        signature(s) by ...", graphene ``tx_irrelevant_sig``)."""
    if not isinstance(signatures, list):
        raise InvalidSignature(f"signatures must be an array, got {type(signatures).__name__}")
    seen = set()
    for sig in signatures:
        if not isinstance(sig, str):
            raise InvalidSignature(f"Invalid signature {sig!r}: expected a hex string")
        canonical = sig.lower()
        if canonical in seen:
            raise InvalidSignature(f"Duplicate signature {sig[:16]}...")
        seen.add(canonical)
    if len(signatures) <= 1:
        return recover_keys(signatures, digest, prefix)
    usable, _addresses = potential_signatures(ops, set(), get_account, max_depth)
    if get_custom is not None:
        for op in ops:
            for aid in required_authorities(op)[0]:
                usable = usable | {k for a in get_custom(aid, op) for k, _w in a["key_auths"]}
    if len(signatures) <= len(usable):
        return recover_keys(signatures, digest, prefix)
    keys = recover_keys(signatures[:len(usable) + 1], digest, prefix)
    raise InvalidSignature(f"Unnecessary signature(s) by {', '.join(sorted(keys - usable))}")


def recover_keys(signatures: list, digest: bytes, prefix: str) -> set:
    """Public key strings of all signatures; duplicates are an error."""
    keys = set()
    for sig in signatures:
        key = recover_key(sig, digest, prefix)
        if key in keys:
            raise InvalidSignature(f"Duplicate signature by {key}")
        keys.add(key)
    return keys


def secret_of(key) -> bytes:
    """The 32-byte secret of a private key given as WIF string, coincurve
    key, 32 bytes, or an object with ``secret`` / ``__bytes__``."""
    if isinstance(key, str):
        return PrivateKey.from_wif(key).secret
    if isinstance(key, (bytes, bytearray)):
        return bytes(key)
    for attr_name in ("secret", "secret_bytes", "raw"):
        secret = getattr(key, attr_name, None)
        if isinstance(secret, (bytes, bytearray)):
            return bytes(secret)
    to_wif = getattr(key, "to_wif", None)
    if callable(to_wif):
        return PrivateKey.from_wif(to_wif()).secret
    return bytes(key)


def _private(key) -> PrivateKey:
    """``key`` itself when a :class:`PrivateKey` (made once: a producer
    signing every block), else one made from what :func:`secret_of` reads."""
    return key if isinstance(key, PrivateKey) else PrivateKey(secret_of(key))


def sign_digest(digest: bytes, key) -> str:
    """65-byte canonical compact signature (hex) of a 32-byte digest
    (deterministic, as fc ``sign_compact``)."""
    return _private(key).sign_digest(digest).hex()


def public_key_of(key, prefix: str) -> str:
    """Public key string of a private key (any form :func:`secret_of` takes)."""
    return _private(key).public_key.to_str(prefix)


def public_key_data(key) -> bytes:
    """The 33-byte compressed public key of a private key (any form
    :func:`secret_of` takes): what keys of any prefix compare by."""
    return _private(key).public_key.compressed




class _SignState:
    """graphene ``sign_state`` (libraries/protocol/transaction.cpp).

    ``available`` are the recovered signer keys, ``used`` the ones some
    checked authority consumed (graphene ``provided_signatures[k] = true``),
    ``approved`` the accounts already proven (graphene ``approved_by``,
    seeded with the temp account).  Current bitshares-core rules
    (after HARDFORK_CORE_584): an account inside ``account_auths`` is
    satisfied by its active *or* its owner authority.
    """

    def __init__(self, keys: set, get_account, max_depth: int) -> None:
        self.available = keys
        self.used: set = set()
        self.get_account = get_account
        self.max_depth = max_depth
        self.approved: set = {TEMP_ACCOUNT}
        #: every authority fetched through graphene's ``get_active`` /
        #: ``get_owner`` callbacks, in order (``get_potential_signatures``
        #: collects the keys of exactly these)
        self.fetched: list = []

    def active_of(self, aid: str) -> dict:
        """graphene ``get_active(id)``: the account's active authority."""
        authority = self.get_account(aid)["active"]
        self.fetched.append(authority)
        return authority

    def owner_of(self, aid: str) -> dict:
        """graphene ``get_owner(id)``: the account's owner authority."""
        authority = self.get_account(aid)["owner"]
        self.fetched.append(authority)
        return authority

    def check_account(self, aid: str) -> bool:
        """graphene ``check_authority(account_id)``: already approved, or
        its active or owner authority is satisfied from depth 0.  (Like
        graphene, a top-level success is not recorded in ``approved``.)"""
        if aid in self.approved:
            return True
        return self.check(self.active_of(aid)) or self.check(self.owner_of(aid))

    def check(self, auth: dict, depth: int = 0) -> bool:
        """graphene ``check_authority(const authority*, depth)``: sum the
        weights of signed keys, then of accounts that are approved or (below
        ``max_depth``) satisfy their active/owner authority one level deeper,
        stopping as soon as ``weight_threshold`` is reached.  An account
        approved earlier counts even at ``max_depth``."""
        total = 0
        threshold = auth["weight_threshold"]
        for key, weight in auth["key_auths"]:
            if key in self.available:
                self.used.add(key)
                total += weight
                if total >= threshold:
                    return True
        for aid, weight in auth["account_auths"]:
            if aid not in self.approved:
                if depth >= self.max_depth:
                    continue
                if not (self.check(self.active_of(aid), depth + 1)
                        or self.check(self.owner_of(aid), depth + 1)):
                    continue
                self.approved.add(aid)
            total += weight
            if total >= threshold:
                return True
        return total >= threshold


#: graphene ``GRAPHENE_MAX_SIG_CHECK_DEPTH``: the depth ``sign_state`` uses
#: when no chain parameter is passed (``database_api::verify_account_authority``).
MAX_SIG_CHECK_DEPTH = 2


def all_required(ops: list) -> tuple[set, set, list]:
    """``(active ids, owner ids, other authorities)`` all of ``ops`` need
    (graphene ``operation_get_required_authorities`` over each operation,
    the protocol's :func:`~nodeapi.protocol.impacted.required_authorities`
    and :func:`~nodeapi.protocol.impacted.other_authorities`)."""
    active, owner, other = set(), set(), []
    for op in ops:
        a, o = required_authorities(op)
        active |= a
        owner |= o
        other.extend(other_authorities(op))
    return active, owner, other


def _required_signatures_state(ops: list, keys: set, get_account,
                               max_depth: int) -> tuple[_SignState, list]:
    """Run graphene ``signed_transaction::get_required_signatures``' checks
    (libraries/protocol/transaction.cpp): the required authorities as
    ``transaction::get_required_authorities`` (accounts required as owner
    dropped from the active set), then other authorities, every owner, every
    active (approved, active, owner, then owner again), failures ignored.
    Returns the sign state and the other authorities."""
    active, owner, other = all_required(ops)
    active -= owner
    state = _SignState(set(keys), get_account, max_depth)
    for auth in other:
        state.check(auth)
    for aid in sorted(owner, key=instance_number):
        state.check(state.owner_of(aid))
    for aid in sorted(active, key=instance_number):
        if not state.check_account(aid):
            state.check(state.owner_of(aid))
    return state, other


def required_signatures(ops: list, signed: set, available: set, get_account,
                        max_depth: int) -> set:
    """graphene ``signed_transaction::get_required_signatures``: the keys of
    ``available`` (public key strings) the sign state consumes while checking
    what ``ops`` require, minus the keys that already signed (``signed``,
    recovered from the transaction's signatures).  Unsatisfiable
    requirements are not an error (the result is then what would help)."""
    state, _ = _required_signatures_state(ops, set(signed) | set(available),
                                          get_account, max_depth)
    return (state.used & set(available)) - set(signed)


def potential_signatures(ops: list, signed: set, get_account, max_depth: int) -> tuple[set, set]:
    """``(keys, addresses)`` for graphene ``database_api::get_potential_signatures``
    / ``get_potential_address_signatures``: run
    :func:`required_signatures` with no available keys and collect the
    ``key_auths`` keys (and ``address_auths`` addresses) of every authority
    fetched on the way (accounts behind ``max_depth`` are never fetched;
    accounts whose authority the existing signatures ``signed`` already
    satisfy stop the walk), plus the keys of the other (non-account)
    authorities."""
    state, other = _required_signatures_state(ops, signed, get_account, max_depth)
    keys = {k for auth in state.fetched for k, _ in auth["key_auths"]}
    keys.update(k for auth in other for k, _ in auth["key_auths"])
    addresses = {a for auth in state.fetched for a, _ in auth.get("address_auths", [])}
    return keys, addresses


def verify_authority(ops: list, keys: set, get_account, max_depth: int,
                     get_custom=None, allow_committee: bool = False,
                     approved_active=(), approved_owner=()) -> None:
    """Raise a :class:`~nodeapi.chain.errors.MissingAuthority` (graphene's
    ``tx_missing_active_auth``, ``tx_missing_owner_auth``,
    ``tx_missing_other_auth``, ``invalid_committee_approval`` with their
    texts) unless ``keys`` satisfy every authority
    ``ops`` require, and :class:`InvalidSignature` for a signature no
    authority used.  ``get_account(id) -> account dict``; ``max_depth`` is
    the chain parameter ``max_authority_depth``; ``get_custom(account id,
    op) -> [authority]`` (or None) gives the viable custom active
    authorities (BSIP 40) of an account for an operation.

    graphene ``verify_authority``: per operation, an account whose active
    authority it requires is struck off when one of its viable custom
    authorities is satisfied; then other authorities, every required owner
    (by its owner authority), then every remaining required active
    (approved, its active, its owner), accounts in id order as graphene's
    ``flat_set<account_id_type>``.  Unless ``allow_committee`` (a proposal's
    check), an operation needing the committee account's active authority
    is refused.  ``approved_active`` / ``approved_owner``: accounts that
    approved already (a proposal's available approvals, graphene's
    ``active_aprovals`` / ``owner_approvals``); an owner approval satisfies
    a required owner authority."""
    state = _SignState(keys, get_account, max_depth)
    state.approved.update(approved_active)
    state.approved.update(approved_owner)
    if get_custom is None:
        active, owner, other = all_required(ops)
    else:
        active, owner, other = set(), set(), []
        for op in ops:
            op_active, op_owner = required_authorities(op)
            active |= {aid for aid in op_active
                       if not any(state.check(a) for a in get_custom(aid, op))}
            owner |= op_owner
            other.extend(other_authorities(op))
    if not allow_committee and COMMITTEE_ACCOUNT in active:
        raise CommitteeApproval()
    for auth in other:
        if not state.check(auth):
            raise MissingOtherAuthority(auth, keys)
    for aid in sorted(owner, key=instance_number):
        if aid not in approved_owner and not state.check(state.owner_of(aid)):
            raise MissingOwnerAuthority(aid, get_account(aid)["owner"])
    for aid in sorted(active, key=instance_number):
        if not state.check_account(aid) and not state.check(state.owner_of(aid)):
            account = get_account(aid)
            raise MissingActiveAuthority(aid, account["active"], account["owner"])
    unused = keys - state.used
    if unused:
        raise InvalidSignature(f"Unnecessary signature(s) by {', '.join(sorted(unused))}")
