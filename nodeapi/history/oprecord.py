"""Compact records of the operation history objects (``1.11.M``) the
in-memory ``account_history`` plugin keeps.

One record is one ``bytes`` object: a fixed header, the instances of the
accounts that got an entry ``2.9.N`` for the operation (in their N order,
the first being ``first_n``), then the operation and its result as wire
JSON (orjson), deflated::

    block_num u32 | block time u32 (seconds since the epoch) | trx_in_block u16
    | op_in_trx u16 | virtual_op u32 | is_virtual u8 | operation type u16
    | account count u16 | first_n u64 | account instances u64 ...
    | deflate(JSON [op, result])

Why: keeping the chain's :class:`~nodeapi.applied.AppliedOperation` (its
parsed JSON tree of dicts, lists and strings, plus the transaction id and
the impacted tuple) costs about 1.8 KB of memory per operation; a record of
a transfer is 88 bytes (its JSON is 156).  The JSON is raw deflate (zlib,
level 1, a 1 KiB window) primed with :data:`ZDICT`, the fragments wire
operations repeat (fee, amounts, account and order ids, authorities,
options, fills): a transfer's 156 bytes become about 41, a fill's 308 about
71, the 203 mainnet samples of tests/fixtures halve; it costs about 5 us
to write and 1 us to read a record.  :func:`history_entry` gives back exactly the
dict the API answered from the original objects (graphene
``operation_history_object``, libraries/chain/include/graphene/chain/
operation_history_object.hpp; docs/wire-contract.rst section 6): JSON round-trips
every value a wire operation holds (ints up to 64 bits, strings, lists,
objects, booleans).
"""

import struct
import zlib

import orjson

from nodeapi.protocol.times import format_time

_HEADER = struct.Struct("<IIHHIBHHQ")
_HEADER_SIZE = _HEADER.size
_TYPE_OFFSET = 4 + 4 + 2 + 2 + 4 + 1
_TYPE = struct.Struct("<H")

#: The preset dictionary of the deflated JSON: fragments of wire operations
#: and results, the most frequent last (deflate finds the nearest match
#: first).  Changing it changes the record format (checkpoint FORMAT).
ZDICT = (
    b'"memo":{"from":"BTS","to":"BTS","nonce":"message":"'
    b'"key_auths":[["BTS","account_auths":[],"address_auths":[],"weight_threshold":1}'
    b'"new_options":"options":{"extensions":[],"memo_key":"BTS","num_committee":0,'
    b'"num_witness":0,"votes":[],"voting_account":"1.2.5"}'
    b'"expiration":"20","fill_or_kill":false,"seller":"1.2.","min_to_receive":{"amount":'
    b'"amount_to_sell":{"amount":'
    b'"order_id":"1.7.","account_id":"1.2.","pays":{"amount":"receives":{"amount":'
    b'"fill_price":{"base":{"amount":"quote":{"amount":"is_maker":true'
    b'],[1,"1.7.],[2,{"amount":'
    b'{"fee":{"amount":"from":"1.2.","to":"1.2.","amount":{"amount":,"asset_id":"1.3.0"},'
    b'"extensions":[]}],[0,{}]]')
_WBITS = -10  # raw deflate, 1 KiB window


def _deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(1, zlib.DEFLATED, _WBITS, 1, zlib.Z_DEFAULT_STRATEGY, ZDICT)
    return packer.compress(data) + packer.flush()


def _inflate(data) -> bytes:
    return zlib.decompressobj(_WBITS, ZDICT).decompress(data)


def pack_record(op, timestamp: int, accounts, first_n: int = 0) -> bytes:
    """The record of ``op`` (an :class:`~nodeapi.applied.AppliedOperation`)
    applied in a block of time ``timestamp`` (int, seconds since the epoch);
    ``accounts``: the instance numbers (ints) of the accounts that got its
    entries ``2.9.first_n`` ... in that order (the plugin finds an entry and
    drops an operation nobody keeps with them).

    :raises TypeError: the operation or result is not JSON (never for what
        the chain applies)."""
    n = len(accounts)
    return b"".join((
        _HEADER.pack(op.block_num, timestamp, op.trx_in_block, op.op_in_trx, op.virtual_op,
                     1 if op.is_virtual else 0, op.op[0], n, first_n),
        struct.pack(f"<{n}Q", *accounts),
        _deflate(orjson.dumps((op.op, op.result))),
    ))


def record_block_num(record: bytes) -> int:
    """The number of the block that applied the record's operation."""
    return _HEADER.unpack_from(record)[0]


def record_type(record: bytes) -> int:
    """The operation type number (``op[0]``) of the record."""
    return _TYPE.unpack_from(record, _TYPE_OFFSET)[0]


def record_first_n(record: bytes) -> int:
    """N of the first entry ``2.9.N`` of the record's accounts."""
    return _HEADER.unpack_from(record)[8]


def record_accounts(record: bytes) -> tuple:
    """The account instances (ints) given to :func:`pack_record`."""
    n = _HEADER.unpack_from(record)[7]
    return struct.unpack_from(f"<{n}Q", record, _HEADER_SIZE)


def history_entry(m: int, record: bytes) -> dict:
    """The API form of operation ``1.11.m`` from its record (graphene
    ``operation_history_object``): ``{id, op, result, block_num,
    trx_in_block, op_in_trx, virtual_op, is_virtual, block_time}``."""
    block_num, ts, trx_in_block, op_in_trx, virtual_op, is_virtual, _t, n, _first = \
        _HEADER.unpack_from(record)
    op, result = orjson.loads(_inflate(memoryview(record)[_HEADER_SIZE + 8 * n:]))
    return {
        "id": f"1.11.{m}",
        "op": op,
        "result": result,
        "block_num": block_num,
        "trx_in_block": trx_in_block,
        "op_in_trx": op_in_trx,
        "virtual_op": virtual_op,
        "is_virtual": bool(is_virtual),
        "block_time": format_time(ts),
    }
