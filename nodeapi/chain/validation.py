"""Transaction acceptance checks: what a transaction must satisfy before its
operations are evaluated.

Graphene reference: libraries/chain/db_block.cpp ``_apply_transaction``
(at least one operation and each operation's ``validate()`` -
``transaction::validate`` -, maximum size, duplicate check against the transaction index, expiration
window, TaPoS against the block summary, ``verify_authority``).  The chain
(:class:`~nodeapi.chain.chain.Chain`) calls :func:`check_transaction` for
every transaction it queues or applies; errors are the
:mod:`nodeapi.chain.errors` classes graphene's messages map to.  The checks
of a peer's block before it is applied (form, limits, merkle root) are here
too.
"""

import hashlib
import struct

from nodeapi.chain import authority as auth
from nodeapi.chain.blockrecord import BLOCK_FIELDS
from nodeapi.chain.errors import (
    BadTaposReference, BlockExtensionsNotEmpty, BlockFromFuture, BlockTooLarge,
    DuplicateTransaction, EmptyTransaction, ExpirationTooFar, MalformedBlock,
    MerkleRootMismatch, TransactionExpired, TransactionTooLarge, assertion)
from nodeapi.chain.evaluators.custom_authority import viable_custom_authorities
from nodeapi.chain.evaluators.registry import check_applied
from nodeapi.protocol.times import format_time, parse_time
from nodeapi.errors import ProtocolError
from nodeapi.protocol.block import (
    block_header_bytes, header_time, merkle_root, merkle_root_of_digests)
from nodeapi.protocol.serialize import pack_varint
from nodeapi.protocol.validation import validate_operation
from nodeapi.protocol.transaction import (
    canonical_transaction, serialize_processed_transaction, serialize_transaction,
    signature_digest_of, transaction_id_of)

#: A block whose timestamp is this many seconds or more after the local wall
#: clock is refused: bitshares-core 7.x libraries/app/application.cpp
#: ``handle_block`` asserts ``latency > -2500`` ms ("Rejecting block with
#: timestamp in the future").
FUTURE_BLOCK_TOLERANCE = 2.5
_BLOCK_FIELD_SET = frozenset(BLOCK_FIELDS)



def received_transaction(trx: dict, prefix: str, params: dict) -> dict:
    """``trx`` (wire JSON signed transaction, as a client or peer sent it)
    in the form the chain holds and applies: graphene reads a transaction
    with ``from_variant``, so an operation tag given as a numeric string
    (``["0", {...}]``) is that operation (a transfer), as
    :func:`nodeapi.protocol.operations.canonical_operation` reads it
    (:func:`nodeapi.protocol.transaction.canonical_transaction`; bytes, id
    and signatures unchanged).

    :param params: the global parameters (``maximum_transaction_size``).
    :raises EmptyTransaction: no operations (checked first).
    :raises TransactionTooLarge: :func:`check_size_bound`, before anything
        is serialized.
    :raises UnsupportedOperation: an operation type the chain does not
        apply, named before anything else is checked
        (:func:`nodeapi.chain.evaluators.registry.check_applied`).
    :raises ProtocolError: a subclass naming the field that does not
        serialize."""
    if not trx.get("operations"):
        raise no_operations()
    check_size_bound(trx, params)
    check_applied(trx["operations"])
    return canonical_transaction(trx, prefix)


def check_transaction(trx: dict, now: int, state, chain_id: str, prefix: str,
                      block_summary: dict, is_known, check_sigs: bool,
                      packed: bytes | None = None, approved=(), replay: bool = False):
    """Check ``trx`` (wire JSON) for acceptance at head time ``now``
    (seconds); returns ``(packed, trx_id, expiration)``: its serialized
    bytes (without signatures), its id (hex) and its expiration in seconds.

    :param state: the :class:`~nodeapi.chain.state.ObjectStore` (global
        parameters of 2.0.0, accounts for the authority check).
    :param chain_id: hex chain id (signature digests).
    :param prefix: the chain's key prefix.
    :param block_summary: ``{ref_block_num (block number & 0xFFFF): block id}``.
    :param is_known: ``is_known(trx_id) -> bool``: already applied or pending.
    :param check_sigs: recover the signers and verify the authorities.
    :param packed: :func:`~nodeapi.protocol.transaction.serialize_transaction`
        of ``trx`` when the caller made it already (a pushed block's
        transactions, packed once by :func:`check_block_form`).
    :param approved: account ids whose active and owner authorities count
        as given without signatures (a devnet's impersonated accounts,
        anvil ``anvil_impersonateAccount``; empty on any other node).
    :param replay: a transaction of a block replayed from the node's own
        block log, which passed every check when it was written: the size
        limits and TaPoS are not checked again, as bitshares-core's replay
        skips them (libraries/app/application.cpp: ``skip_block_size_check``,
        ``skip_tapos_check``; db_block.cpp ``_apply_transaction``); the
        operations' ``validate()``, the duplicate check and the expiration
        window still run.  Never for a block from a peer.
    :raises EmptyTransaction: no operations (graphene
        ``transaction::validate``), checked first.
    :raises UnsupportedOperation: an operation type the chain does not
        apply (:func:`nodeapi.chain.evaluators.registry.check_applied`).
    :raises InvalidOperation: an operation fails its type's ``validate()``
        (:func:`nodeapi.protocol.validation.validate_operation`, also part of
        ``transaction::validate``), checked once the transaction serializes.
    :raises TransactionTooLarge: more than ``maximum_transaction_size`` bytes
        with the signatures (:func:`check_size_bound` before serializing,
        then :func:`check_size`).
    :raises DuplicateTransaction: ``is_known(trx_id)``.
    :raises InvalidSignature, MissingAuthority: from
        :func:`nodeapi.chain.authority.signer_keys` (at most as many
        recoveries as the transaction can use) and ``verify_authority``.
    :raises BadTaposReference: ``ref_block_num``/``ref_block_prefix`` name no
        recent block.
    :raises ExpirationTooFar: expiration more than
        ``maximum_time_until_expiration`` after ``now``.
    :raises TransactionExpired: expiration before ``now``.

    In the reference's order (db_block.cpp ``_apply_transaction``: the
    duplicate check, ``verify_authority``, TaPoS, the expiration window),
    so a transaction failing several rules gets the reference's error.
    """
    if not trx.get("operations"):
        raise no_operations()
    params = state.objects["2.0.0"]["parameters"]
    if not replay:
        check_size_bound(trx, params)
    check_applied(trx["operations"])
    if packed is None:
        packed = serialize_transaction(trx, prefix)
    for op in trx["operations"]:
        validate_operation(op)
    signatures = trx.get("signatures", [])
    if not replay:
        check_size(len(packed), signatures, params)
    trx_id = transaction_id_of(packed)
    if is_known(trx_id):
        raise DuplicateTransaction(trx_id)
    if check_sigs:
        depth = int(params["max_authority_depth"])
        custom = viable_custom_authorities(state, now)
        keys = auth.signer_keys(signatures, signature_digest_of(packed, chain_id), prefix,
                                trx["operations"], state.require, depth, custom)
        auth.verify_authority(trx["operations"], keys, state.require, depth, custom,
                              approved_active=approved, approved_owner=approved)
    ref = None if replay else block_summary.get(int(trx["ref_block_num"]))
    if not replay and (ref is None or struct.unpack_from("<I", bytes.fromhex(ref), 4)[0] != int(
            trx["ref_block_prefix"])):
        raise assertion(BadTaposReference,
                        "trx.ref_block_prefix == tapos_block_summary.block_id._hash[1].value()")
    exp = parse_time(trx["expiration"])
    window = int(params["maximum_time_until_expiration"])
    if exp > now + window:
        raise assertion(ExpirationTooFar,
                        "trx.expiration <= now + chain_parameters.maximum_time_until_expiration",
                        details={"trx.expiration": trx["expiration"], "now": format_time(now),
                                 "max_til_exp": window})
    if exp < now:
        raise assertion(TransactionExpired, "now <= trx.expiration",
                        details={"now": format_time(now), "trx.exp": trx["expiration"]})
    return packed, trx_id, exp


def no_operations() -> EmptyTransaction:
    """graphene ``transaction::validate``'s refusal of a transaction without
    operations: ``FC_ASSERT( operations.size() > 0, "A transaction must
    have at least one operation", ("trx",*this) )``."""
    return assertion(EmptyTransaction, "operations.size() > 0",
                     "A transaction must have at least one operation")


def check_size(unsigned_size: int, signatures, params: dict) -> None:
    """Raise :class:`TransactionTooLarge` when the transaction packs (with
    its signatures, :func:`nodeapi.chain.authority.signed_size`) to more
    than the ``maximum_transaction_size`` of the global parameters
    ``params`` (graphene ``_apply_transaction``, after HARDFORK_CORE_1573).
    Checked before any signature is recovered."""
    if not isinstance(signatures, list):
        signatures = []
    size = auth.signed_size(unsigned_size, signatures)
    limit = int(params["maximum_transaction_size"])
    if size > limit:
        raise TransactionTooLarge(
            f"Transaction of {size} bytes (with its {len(signatures)} signatures) exceeds "
            f"maximum_transaction_size {limit}")


#: Fewest bytes a transaction packs to besides its operations and
#: signatures: ref_block_num (2), ref_block_prefix (4), expiration (4), the
#: operation count and the extensions count (a varint of 1 byte at least).
MIN_TRANSACTION_BYTES = 12
#: Fewest bytes one operation packs to: its tag (a varint) and its fee, the
#: first field of every graphene operation (int64 amount, varint asset id).
MIN_OPERATION_BYTES = 10


def check_size_bound(trx: dict, params: dict) -> None:
    """Raise :class:`TransactionTooLarge` when ``trx`` (wire JSON) cannot
    fit ``maximum_transaction_size`` whatever its operations hold: its
    operation and signature counts alone give more bytes
    (:data:`MIN_TRANSACTION_BYTES`, :data:`MIN_OPERATION_BYTES`, 65 per
    signature).  Costs no serialization, so a hostile transaction of very
    many operations or signatures is refused before the chain or an API
    function packs it (serializing 100,000 operations takes about a
    second); :func:`check_size` then checks the exact size."""
    ops, signatures = trx.get("operations"), trx.get("signatures", [])
    n_ops = len(ops) if isinstance(ops, list) else 0
    if not isinstance(signatures, list):
        signatures = []
    size = auth.signed_size(MIN_TRANSACTION_BYTES + MIN_OPERATION_BYTES * n_ops, signatures)
    limit = int(params["maximum_transaction_size"])
    if size > limit:
        raise TransactionTooLarge(
            f"Transaction of at least {size} bytes ({n_ops} operations, with its "
            f"{len(signatures)} signatures) exceeds maximum_transaction_size {limit}")


def check_block_form(block, prefix: str) -> tuple:
    """Check that ``block`` (wire JSON) is a well-formed ``signed_block``:
    an object with every field of :data:`BLOCK_FIELDS`, a header fc can
    serialize (20-byte ids, time, witness id, 65-byte signature) and a list
    of transactions that serialize as ``processed_transaction`` with key
    prefix ``prefix``.  Returns ``(timestamp seconds, serialized size in
    bytes, signed header bytes, [processed transaction bytes])`` (the size
    is graphene ``fc::raw::pack_size(signed_block)``; the header gives the
    signing digest, the block id and the timestamp, the transactions' bytes
    the merkle root and their ids, without packing them again).

    :raises MalformedBlock: naming the first bad field.
    """
    if type(block) is not dict:
        raise MalformedBlock(f"Malformed block: expected an object, got {type(block).__name__}")
    if not block.keys() >= _BLOCK_FIELD_SET:
        missing = [f for f in BLOCK_FIELDS if f not in block]
        raise MalformedBlock(f"Malformed block: missing field(s) {', '.join(missing)}")
    trxs = block["transactions"]
    if type(trxs) is not list:
        raise MalformedBlock("Malformed block: transactions must be a list, got "
                             f"{type(trxs).__name__}")
    try:
        header = block_header_bytes(block, signed=True)
        size = bytearray(header)
        pack_varint(len(trxs), size)
        total = len(size)
        packed = []
        for i, trx in enumerate(trxs):
            try:
                packed.append(serialize_processed_transaction(trx, prefix))
            except ProtocolError as exc:
                raise MalformedBlock(f"Malformed block: transaction {i}: {exc}") from None
            total += len(packed[-1])
        ts = header_time(header)
    except ProtocolError as exc:
        raise MalformedBlock(f"Malformed block: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as exc:
        raise MalformedBlock(f"Malformed block: {type(exc).__name__}: {exc}") from None
    return ts, total, header, packed


def check_block_limits(block: dict, ts: int, size: int, params: dict, now: float) -> None:
    """The checks graphene makes on a well-formed block before applying it
    (``ts``/``size`` from :func:`check_block_form`; ``params``: the global
    parameters; ``now``: local wall-clock seconds).

    :raises BlockFromFuture: ``ts >= now + FUTURE_BLOCK_TOLERANCE`` (graphene
        application ``handle_block``).
    :raises BlockExtensionsNotEmpty: header ``extensions`` not empty.
    :raises BlockTooLarge: ``size > maximum_block_size`` (graphene
        ``database::_apply_block``: ``pack_size(next_block) <=
        maximum_block_size``).
    """
    if ts - now >= FUTURE_BLOCK_TOLERANCE:
        raise BlockFromFuture(
            f"Rejecting block with timestamp in the future: {block['timestamp']} is "
            f"{ts - now:.1f} s after the local clock {format_time(int(now))} "
            f"(tolerance {FUTURE_BLOCK_TOLERANCE} s)")
    if block["extensions"]:
        raise BlockExtensionsNotEmpty(
            f"Block extensions must be empty, got {len(block['extensions'])}")
    limit = int(params["maximum_block_size"])
    if size > limit:
        raise BlockTooLarge(f"Block of {size} bytes exceeds maximum_block_size {limit}")


def check_merkle_root(block: dict, prefix: str, packed: list | None = None) -> None:
    """Raise :class:`MerkleRootMismatch` unless ``block``'s
    ``transaction_merkle_root`` is :func:`nodeapi.protocol.block.merkle_root`
    of its ``transactions`` (graphene ``_apply_block``'s first check);
    ``packed``: their processed bytes when :func:`check_block_form` made
    them already."""
    if packed is None:
        computed = merkle_root(block["transactions"], prefix)
    else:
        computed = merkle_root_of_digests([hashlib.sha256(p).digest() for p in packed])
    if computed != block["transaction_merkle_root"]:
        raise MerkleRootMismatch(
            f"Transaction merkle root mismatch: block has "
            f"{block['transaction_merkle_root']}, its transactions give {computed}")
