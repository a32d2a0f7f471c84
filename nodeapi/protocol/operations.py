"""Operation definitions by type number, and operation (de)serialization.

An operation on the wire is ``[type, {fields}]``; in binary it is the
``static_variant`` tag (varint type number) followed by the struct.  Field
order follows bitshares-core's ``FC_REFLECT`` of each operation
(``libraries/protocol/include/graphene/protocol/transfer.hpp``,
``market.hpp``, ``account.hpp``, ``asset_ops.hpp``, ``custom.hpp``,
``balance.hpp``).  nodeapi supports the operations listed in
:data:`OPERATIONS` (the 14 the chain evaluates plus the virtual fill_order
it generates); any other type raises :class:`UnknownOperation`.
"""

from nodeapi.protocol.composite import FUTURE_EXTENSIONS, Extension, FlatSet, Optional, Struct
from nodeapi.protocol.errors import InvalidField, UnknownOperation
from nodeapi.protocol.serialize import (
    BOOL, BYTES, OBJECT_ID, PUBLIC_KEY, STRING, TIME, UINT8, UINT16, VOID, Bool, pack_varint,
    unpack, unpack_varint)
from nodeapi.protocol.types import (
    ACCOUNT_ID, ACCOUNT_OPTIONS, ASSET, ASSET_ID, ASSET_OPTIONS, AUTHORITY, BALANCE_ID,
    BITASSET_OPTIONS, BUYBACK_OPTIONS, LIMIT_ORDER_ID, MEMO, PRICE, SHARE, SPECIAL_AUTHORITY)

FEE = ("fee", ASSET)
EXT = ("extensions", FUTURE_EXTENSIONS)


def _op(name: str, fields: list) -> Struct:
    return Struct(name + "_operation", fields)


#: type number -> (name, struct)
OPERATIONS = {
    0: ("transfer", _op("transfer", [
        FEE, ("from", ACCOUNT_ID), ("to", ACCOUNT_ID), ("amount", ASSET),
        ("memo", Optional(MEMO)), EXT])),
    1: ("limit_order_create", _op("limit_order_create", [
        FEE, ("seller", ACCOUNT_ID), ("amount_to_sell", ASSET), ("min_to_receive", ASSET),
        ("expiration", TIME), ("fill_or_kill", BOOL), EXT])),
    2: ("limit_order_cancel", _op("limit_order_cancel", [
        FEE, ("fee_paying_account", ACCOUNT_ID), ("order", LIMIT_ORDER_ID), EXT])),
    4: ("fill_order", _op("fill_order", [  # virtual: made by the chain, never signed
        FEE, ("order_id", OBJECT_ID), ("account_id", ACCOUNT_ID), ("pays", ASSET),
        ("receives", ASSET), ("fill_price", PRICE), ("is_maker", Bool(default=False))])),
    5: ("account_create", _op("account_create", [
        FEE, ("registrar", ACCOUNT_ID), ("referrer", ACCOUNT_ID), ("referrer_percent", UINT16),
        ("name", STRING), ("owner", AUTHORITY), ("active", AUTHORITY),
        ("options", ACCOUNT_OPTIONS),
        ("extensions", Extension("account_create_operation::ext", [
            ("null_ext", VOID),
            ("owner_special_authority", SPECIAL_AUTHORITY),
            ("active_special_authority", SPECIAL_AUTHORITY),
            ("buyback_options", BUYBACK_OPTIONS),
        ]))])),
    6: ("account_update", _op("account_update", [
        FEE, ("account", ACCOUNT_ID), ("owner", Optional(AUTHORITY)),
        ("active", Optional(AUTHORITY)), ("new_options", Optional(ACCOUNT_OPTIONS)),
        ("extensions", Extension("account_update_operation::ext", [
            ("null_ext", VOID),
            ("owner_special_authority", SPECIAL_AUTHORITY),
            ("active_special_authority", SPECIAL_AUTHORITY),
        ]))])),
    7: ("account_whitelist", _op("account_whitelist", [
        FEE, ("authorizing_account", ACCOUNT_ID), ("account_to_list", ACCOUNT_ID),
        ("new_listing", UINT8), EXT])),
    8: ("account_upgrade", _op("account_upgrade", [
        FEE, ("account_to_upgrade", ACCOUNT_ID), ("upgrade_to_lifetime_member", BOOL), EXT])),
    10: ("asset_create", _op("asset_create", [
        FEE, ("issuer", ACCOUNT_ID), ("symbol", STRING), ("precision", UINT8),
        ("common_options", ASSET_OPTIONS), ("bitasset_opts", Optional(BITASSET_OPTIONS)),
        ("is_prediction_market", BOOL), EXT])),
    11: ("asset_update", _op("asset_update", [
        FEE, ("issuer", ACCOUNT_ID), ("asset_to_update", ASSET_ID),
        ("new_issuer", Optional(ACCOUNT_ID)), ("new_options", ASSET_OPTIONS),
        ("extensions", Extension("asset_update_operation::ext", [
            ("new_precision", UINT8),
            ("skip_core_exchange_rate", BOOL),
        ]))])),
    14: ("asset_issue", _op("asset_issue", [
        FEE, ("issuer", ACCOUNT_ID), ("asset_to_issue", ASSET),
        ("issue_to_account", ACCOUNT_ID), ("memo", Optional(MEMO)), EXT])),
    15: ("asset_reserve", _op("asset_reserve", [
        FEE, ("payer", ACCOUNT_ID), ("amount_to_reserve", ASSET), EXT])),
    16: ("asset_fund_fee_pool", _op("asset_fund_fee_pool", [
        FEE, ("from_account", ACCOUNT_ID), ("asset_id", ASSET_ID), ("amount", SHARE), EXT])),
    35: ("custom", _op("custom", [
        FEE, ("payer", ACCOUNT_ID), ("required_auths", FlatSet(ACCOUNT_ID)), ("id", UINT16),
        ("data", BYTES)])),
    37: ("balance_claim", _op("balance_claim", [
        FEE, ("deposit_to_account", ACCOUNT_ID), ("balance_to_claim", BALANCE_ID),
        ("balance_owner_key", PUBLIC_KEY), ("total_claimed", ASSET)])),
}

#: operation name -> type number (for messages and lookups; the wire form is
#: the number only, see :func:`operation_type`)
OPERATION_IDS = {name: number for number, (name, _s) in OPERATIONS.items()}

_STRUCTS = {number: struct for number, (_n, struct) in OPERATIONS.items()}


def operation_type(raw) -> int:
    """The type number of an operation's tag, which must be a JSON integer:
    graphene's ``operation`` static_variant tag is the integer ``which``
    (libraries/protocol/include/graphene/protocol/operations.hpp), and
    every client (bitsharesjs, python-bitshares) sends it as a number.
    Numeric strings (``"0"``), names (``"transfer"``), booleans and floats
    are refused here, so a transaction that serializes is one the chain can
    evaluate (wire-contract section 3's numeric-string conversion applies to
    API arguments, not to values inside a transaction).

    :raises UnknownOperation: the tag is not an integer, or is a type
        nodeapi does not support; the message names the value.
    """
    if type(raw) is not int:
        raise UnknownOperation(f"Operation type {raw!r} is not an integer "
                               "(graphene static_variant tag)")
    if raw not in _STRUCTS:
        raise UnknownOperation(f"Operation type {raw!r} is not supported by nodeapi "
                               f"(supported: {sorted(_STRUCTS)})")
    return raw


class OperationType:
    """The ``operation`` static_variant as a wire type (for vectors of
    operations inside transactions)."""

    name = "operation"
    default = None

    def pack(self, value, out, prefix=None) -> None:
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise InvalidField(f"operation: expected [type, {{...}}], got {str(value)[:80]}")
        number = operation_type(value[0])
        pack_varint(number, out)
        _STRUCTS[number].pack(value[1], out, prefix)

    def unpack(self, data, pos, prefix=None):
        number, pos = unpack_varint(data, pos)
        struct = _STRUCTS.get(number)
        if struct is None:
            raise UnknownOperation(f"Operation type {number} is not supported by nodeapi")
        body, pos = struct.unpack(data, pos, prefix)
        return [number, body], pos


OPERATION = OperationType()


def serialize_operation(op, prefix: str | None = None) -> bytes:
    """fc bytes of ``[type, {...}]`` (varint type + struct).  ``prefix``
    enforces the key prefix of public keys and addresses.  Raises a
    :class:`~nodeapi.errors.ProtocolError` subclass (UnknownOperation,
    InvalidField, IntegerOutOfRange, InvalidObjectId, WrongKeyPrefix, ...)."""
    out = bytearray()
    OPERATION.pack(op, out, prefix)
    return bytes(out)


def serialize_operation_body(op, prefix: str | None = None) -> bytes:
    """The operation's struct bytes without the type tag (graphene's
    ``fc::raw::pack_size(op)`` for fees charges these)."""
    out = bytearray()
    number = operation_type(op[0])
    _STRUCTS[number].pack(op[1], out, prefix)
    return bytes(out)


def deserialize_operation(data: bytes, prefix: str) -> list:
    """Inverse of :func:`serialize_operation`: ``[type, {...}]`` with keys
    written with ``prefix``; raises :class:`TruncatedData` when bytes are
    missing or left over."""
    return unpack(OPERATION, data, prefix)
