"""The settings of the ``searchdb-objects`` plugin: the object kinds it
writes (:data:`KINDS`, :class:`ObjectKind`) and its options
(:class:`ObjectsOptions`), as bitshares-core's es_objects plugin has them
(libraries/plugins/es_objects/es_objects.cpp ``plugin_options``).
"""

import attr

#: kind option name -> (object space.type, index name, default no-delete)
#: (es_objects.cpp ``plugin_options``).
KINDS = {
    "proposals": ("1.10", "proposal", True),
    "accounts": ("1.2", "account", True),
    "assets": ("1.3", "asset", True),
    "balances": ("2.5", "balance", True),
    "limit-orders": ("1.7", "limitorder", False),
    "asset-bitasset": ("2.4", "bitasset", True),
    "budget-records": ("2.13", "budget", True),
}


@attr.s(frozen=True, auto_attribs=True)
class ObjectKind:
    """One kind's switches: ``enabled``, ``store_updates``, ``no_delete``
    (True whenever ``store_updates`` is), ``index`` (the name after the
    prefix) and ``space_type`` (``"1.7"``)."""

    space_type: str
    index: str
    enabled: bool = True
    store_updates: bool = False
    no_delete: bool = False


@attr.s(frozen=True, auto_attribs=True)
class ObjectsOptions:
    """The ``searchdb-objects-*`` options (reference ``es-objects-*``).

    :ivar kinds: ``{space_type: ObjectKind}`` of every kind (enabled or not).
    :ivar bulk_replay: documents per bulk while synchronizing (10000).
    :ivar bulk_sync: documents per bulk for live blocks (100); a live
        block's bulk is sealed at the block's end anyway.
    :ivar index_prefix: ``objects-``.
    :ivar max_mapping_depth: 10.
    :ivar start_after_block: blocks up to this number are not written.
    :ivar sync_db_on_startup: synchronize at every start.
    """

    kinds: dict
    bulk_replay: int = 10000
    bulk_sync: int = 100
    index_prefix: str = "objects-"
    max_mapping_depth: int = 10
    start_after_block: int = 0
    sync_db_on_startup: bool = False

    @classmethod
    def from_options(cls, get) -> "ObjectsOptions":
        """From ``get(name)`` of the ``searchdb-objects-*`` option names
        without the prefix (``get("accounts-store-updates")``)."""
        kinds = {}
        for name, (space_type, index, no_delete) in KINDS.items():
            updates = bool(get(f"{name}-store-updates")) if name != "budget-records" else False
            if name in ("proposals", "limit-orders"):
                no_delete = bool(get(f"{name}-no-delete"))
            kinds[space_type] = ObjectKind(space_type, index, bool(get(name)), updates,
                                           no_delete or updates)
        return cls(kinds, get("bulk-replay"), get("bulk-sync"), get("index-prefix"),
                   get("max-mapping-depth"), get("start-after-block"),
                   bool(get("sync-db-on-startup")))
