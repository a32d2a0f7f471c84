"""Specific errors of :mod:`nodeapi.protocol`: malformed wire data.

Every class is a :class:`nodeapi.errors.ProtocolError` (and so a
``ValueError``); the RPC layer turns any of them into a JSON-RPC error with
code 10 and the message shown here (docs/wire-contract.rst section 4).  Messages
name the offending value so a client can correct its request.
"""

from nodeapi.errors import ASSERT_CODE, ASSERT_NAME, ASSERT_WHAT, ChainError, ProtocolError


class InvalidObjectId(ProtocolError):
    """Invalid object id: expected space.type.instance, e.g. 1.2.17"""

    name = "invalid_object_id"


class InvalidHex(ProtocolError):
    """Invalid hex string: expected an even number of hex digits"""

    name = "invalid_hex"


class InvalidBase58(ProtocolError):
    """Invalid base58 text: a character outside the base58 alphabet"""

    name = "invalid_base58"


class InvalidChecksum(ProtocolError):
    """Checksum mismatch in a base58 key, address or WIF"""

    name = "invalid_checksum"


class WrongKeyPrefix(ProtocolError):
    """Public key or address with a prefix other than the chain's"""

    name = "wrong_key_prefix"


class InvalidKey(ProtocolError):
    """Malformed key: wrong length, or not a point/secret of secp256k1"""

    name = "invalid_key"


class InvalidSignature(ProtocolError, ChainError):
    """Malformed signature: expected 65 bytes (130 hex digits) whose first
    byte is 27..34 and which recovers to a public key

    The one signature error of nodeapi: the protocol raises it for a
    signature that is malformed or recovers no key, the chain
    (:mod:`nodeapi.chain.authority`) for a duplicate signature or one that
    signs nothing required (graphene ``tx_duplicate_sig``,
    ``tx_irrelevant_sig``).  Both a :class:`~nodeapi.errors.ProtocolError`
    and a :class:`~nodeapi.errors.ChainError`: a transaction refused for its
    signatures always fails with a ChainError."""

    name = "invalid_signature"


class NonCanonicalSignature(InvalidSignature):
    """Non-canonical signature: graphene accepts only signatures whose r and s
    have their high bit clear and are not zero-padded (is_canonical)"""

    name = "non_canonical_signature"


class IntegerOutOfRange(ProtocolError):
    """Integer out of range for its wire type"""

    name = "integer_out_of_range"


class UnknownOperation(ProtocolError):
    """Unknown or unsupported operation type"""

    name = "unknown_operation"


class InvalidTime(ProtocolError):
    """Invalid time: expected UTC YYYY-MM-DDTHH:MM:SS"""

    name = "invalid_time"


class InvalidField(ProtocolError):
    """Missing field or value of the wrong JSON type"""

    name = "invalid_field"


class TruncatedData(ProtocolError):
    """Binary data ends early or has bytes left over"""

    name = "truncated_data"


class InvalidPeerAddress(ProtocolError):
    """Invalid node address: expected host:port, [v6]:port or ws://host:port/path"""

    name = "invalid_peer_address"


class InvalidOperation(ProtocolError, ChainError):
    """Assert Exception: the operation breaks a rule of its type

    The one "operation is invalid" error of nodeapi, fc's
    ``assert_exception`` (code 10, "Assert Exception") whoever raises it:
    the protocol for a rule of the operation's ``validate()``
    (:func:`nodeapi.protocol.validation.validate_operation`, the
    restrictions of a custom authority), the chain for a rule of its
    evaluator (graphene ``do_evaluate``'s ``FC_ASSERT``,
    :func:`nodeapi.chain.errors.fc_assert`).  Text ``Assert Exception:
    <expression>: <message>``.  Both a :class:`~nodeapi.errors.ProtocolError`
    and a :class:`~nodeapi.errors.ChainError`: a transaction refused for an
    invalid operation always fails with a ChainError, as one refused for
    its signatures (:class:`InvalidSignature`)."""

    name = ASSERT_NAME
    code = ASSERT_CODE
    what = ASSERT_WHAT


#: fc's variant type names (bitshares-fc variant.hpp ``variant::type_id``,
#: as ``variant::get_array`` names them in its refusal)
VARIANT_TYPES = {type(None): "null_type", bool: "bool_type", int: "int64_type",
                 float: "double_type", str: "string_type", list: "array_type",
                 tuple: "array_type", dict: "object_type"}


class BadCast(ProtocolError):
    """Bad Cast: a JSON value of another type where fc reads an array

    fc's ``bad_cast_exception`` (code 7, "Bad Cast"), raised by
    ``variant::get_array`` (bitshares-fc src/variant.cpp: ``FC_THROW_EXCEPTION(
    bad_cast_exception, "Invalid cast from ${type} to Array", ("type",
    get_type()) )``) when ``from_variant`` of a ``vector``/``flat_set`` field
    (an ``extensions`` array among them) meets another type."""

    name = "bad_cast_exception"
    code = 7
    what = "Bad Cast"
    fc_format = "Invalid cast from ${type} to Array"

    def __init__(self, value) -> None:
        kind = VARIANT_TYPES.get(type(value), "object_type")
        super().__init__(f"Bad Cast: Invalid cast from {kind} to Array")
        self.details = {"type": kind}
