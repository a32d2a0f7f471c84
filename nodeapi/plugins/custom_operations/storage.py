"""The ``custom_operations`` plugin: account storage maps carried in
custom operations (type 35), for ``custom_operations_api.get_storage_info``.

Graphene reference: bitshares-core libraries/plugins/custom_operations
(custom_operations_plugin.cpp, custom_evaluators.cpp, custom_objects.hpp,
custom_operations.hpp).  A custom operation whose ``data`` unpacks as the
static variant ``custom_plugin_operation`` = ``[account_storage_map]``
(tag 0, then ``bool remove``, ``string catalog``,
``flat_map<string, optional<string>> key_values``) changes the storage of
the operation's ``payer``: without ``remove`` each key is created or its
value (a JSON text, stored parsed; null clears it) replaced, keys longer
than 200 characters skipped; with ``remove`` the keys are deleted.  The
catalog must be 1 to 200 characters.  Data that does not unpack or
validate, or a value that is not JSON, is skipped with a log line, as
graphene does.  Objects are ``7.0.N``: ``{id, account, catalog, key,
value}`` (``value`` left out when null).  Operations of blocks below the
``custom-operations-start-block`` option are ignored.
"""

import collections
import json

from twisted.logger import Logger
from zope.interface import implementer

from nodeapi.applied import IBlockConsumer, ICheckpointed
from nodeapi.history.snapshot import chunked, joined
from nodeapi.protocol.serialize import need_bytes, unpack_varint

CUSTOM = 35
MAX_KEY_SIZE = 200
STORAGE = "7.0"
#: blocks whose storage changes are kept to undo them (a fork switch pops
#: blocks above the last irreversible one; the chain's undo history holds
#: at most as many, graphene ``GRAPHENE_MAX_UNDO_HISTORY``)
MAX_UNDO_BLOCKS = 10000


class StorageOperationError(ValueError):
    """Custom operation data that is no valid account_storage_map."""


def _string(data: bytes, pos: int) -> tuple[str, int]:
    n, pos = unpack_varint(data, pos)
    end = need_bytes(data, pos, n)
    try:
        return data[pos:end].decode("utf-8"), end
    except UnicodeDecodeError:
        raise StorageOperationError("a string is not UTF-8") from None


def unpack_storage_map(data: bytes) -> tuple[bool, str, list]:
    """``(remove, catalog, [(key, value text or None)])`` (keys sorted) of a packed
    ``custom_plugin_operation``; raises :class:`StorageOperationError` (or
    the serializer's errors) for anything else."""
    tag, pos = unpack_varint(data, 0)
    if tag != 0:
        raise StorageOperationError(f"unknown custom plugin operation {tag}")
    need_bytes(data, pos, 1)
    if data[pos] > 1:
        raise StorageOperationError("remove is not a bool")
    remove, pos = bool(data[pos]), pos + 1
    catalog, pos = _string(data, pos)
    count, pos = unpack_varint(data, pos)
    pairs = []
    for _ in range(count):
        key, pos = _string(data, pos)
        need_bytes(data, pos, 1)
        present, pos = data[pos], pos + 1
        value = None
        if present == 1:
            value, pos = _string(data, pos)
        elif present != 0:
            raise StorageOperationError("optional flag is not 0 or 1")
        pairs.append((key, value))
    if not 0 < len(catalog) <= MAX_KEY_SIZE:
        raise StorageOperationError("catalog must be 1 to 200 characters")
    # fc reads a flat_map by inserting: sorted by key, the first of equal keys kept
    first: dict = {}
    for key, value in pairs:
        first.setdefault(key, value)
    return remove, catalog, sorted(first.items(), key=lambda kv: kv[0].encode())


@implementer(IBlockConsumer, ICheckpointed)
class AccountStorage:
    """Account storage objects ``7.0.N`` (module text); checkpointed
    (:class:`~nodeapi.applied.ICheckpointed`).

    :param start_block: the ``custom-operations-start-block`` option."""

    log = Logger()
    checkpoint_key = "custom_operations"

    def __init__(self, start_block: int = 45_000_000) -> None:
        self.start_block = start_block
        self.objects: dict = {}  # id -> object, in id order
        self._by_key: dict = {}  # (account, catalog, key) -> id
        self._next = 0
        # (block number, next id before it, [(oid, key, old object, old id)])
        # of the last blocks that changed storage, to undo a popped one
        self._undo: collections.deque = collections.deque(maxlen=MAX_UNDO_BLOCKS)
        self._changes: list | None = None

    def block_applied(self, applied) -> None:
        """Apply the storage maps of the block's custom operations."""
        if applied.block_num < self.start_block:
            return
        self._changes, next_before = [], self._next
        for op in applied.operations:
            if op.op[0] != CUSTOM:
                continue
            data = op.op[1].get("data") or ""
            if not data:
                continue
            try:
                remove, catalog, pairs = unpack_storage_map(bytes.fromhex(data))
            except (ValueError, TypeError, IndexError) as exc:
                self.log.warn("Custom operations plugin serializing error: {error} in "
                              "operation {op}", error=str(exc), op=op.id)
                continue
            self._apply(op.op[1]["payer"], remove, catalog, pairs)
        if self._changes:
            self._undo.append((applied.block_num, next_before, self._changes))
        self._changes = None

    def block_popped(self, applied) -> None:
        """A block popped by a fork switch: its storage changes are taken
        back (graphene keeps the storage objects in the database, where
        the undo database takes them back)."""
        if not self._undo or self._undo[-1][0] != applied.block_num:
            return  # the block changed no storage (or is past MAX_UNDO_BLOCKS)
        _num, self._next, changes = self._undo.pop()
        for oid, key, old, old_id in reversed(changes):
            if old is None:
                self.objects.pop(oid, None)
            else:
                self.objects[oid] = old
            if old_id is None:
                self._by_key.pop(key, None)
            else:
                self._by_key[key] = old_id
        self.objects = dict(sorted(self.objects.items(),
                                   key=lambda item: int(item[0].rsplit(".", 1)[1])))

    def _record(self, oid: str, key: tuple) -> None:
        if self._changes is not None:
            self._changes.append((oid, key, self.objects.get(oid), self._by_key.get(key)))

    def _apply(self, account: str, remove: bool, catalog: str, pairs: list) -> None:
        for key, text in pairs:
            oid = self._by_key.get((account, catalog, key))
            if remove:
                if oid is not None:
                    self._record(oid, (account, catalog, key))
                    del self.objects[oid], self._by_key[(account, catalog, key)]
                continue
            if len(key) > MAX_KEY_SIZE:
                self.log.warn("Key can't be bigger than {max} characters", max=MAX_KEY_SIZE)
                continue
            try:
                value = None if text is None else json.loads(text)
            except ValueError as exc:
                self.log.warn("Custom operations plugin: value is not JSON: {error}",
                              error=str(exc))
                continue
            if oid is None:
                oid = f"{STORAGE}.{self._next}"
                self._record(oid, (account, catalog, key))
                self._next += 1
                self._by_key[(account, catalog, key)] = oid
            else:
                self._record(oid, (account, catalog, key))
            obj = {"id": oid, "account": account, "catalog": catalog, "key": key}
            if value is not None:
                obj["value"] = value
            self.objects[oid] = obj

    def checkpoint_records(self):
        """Records: the next instance and the objects (never changed once
        stored: a change stores a new dict)."""
        objects = list(self.objects.values())
        return [("next", self._next), *chunked("objects", objects)]

    def checkpoint_usable(self, meta: dict) -> bool:
        """``ICheckpointed``: always True (its records restore it whole)."""
        return True

    def restore_checkpoint(self, meta: dict, records: list) -> None:
        """``ICheckpointed``: the next instance and the objects from the
        records of :meth:`checkpoint_records`; the ``(account, catalog, key)``
        index is rebuilt from the objects."""
        self._next = next(v for k, v in records if k == "next")
        self.objects = {o["id"]: o for o in joined(records, "objects")}
        self._by_key = {(o["account"], o["catalog"], o["key"]): oid
                        for oid, o in self.objects.items()}

    def find(self, account=None, catalog=None, key=None) -> list:
        """Objects in graphene's index order for the given filters: by
        ``(account, catalog, key)`` (at most one), ``(account, catalog,
        id)``, ``(account, id)``, ``(catalog, key, id)``, ``(catalog, id)``
        or id."""
        if account is not None and catalog is not None and key is not None:
            oid = self._by_key.get((account, catalog, key))
            return [] if oid is None else [self.objects[oid]]
        return [o for o in self.objects.values()
                if (account is None or o["account"] == account)
                and (catalog is None or o["catalog"] == catalog)
                and (key is None or o["key"] == key)]
