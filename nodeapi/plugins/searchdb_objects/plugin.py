"""The ``searchdb-objects`` plugin's options and build (bitshares-core
libraries/plugins/es_objects/es_objects.cpp ``plugin_set_program_options``
and ``plugin_initialize``; docs/searchdb-plugin.rst "Objects").

Options: ``searchdb-objects-url`` and ``-basic-auth`` (those of searchdb
when not given), ``-bulk-replay``, ``-bulk-sync``, ``-index-prefix``,
``-max-mapping-depth``, ``-start-after-block``, ``-sync-db-on-startup`` and
per kind ``searchdb-objects-<kind>``, ``-store-updates`` and (proposals,
limit orders) ``-no-delete`` (:data:`OPTIONS`; an INI file may use the
reference's ``es-objects-*`` names, :data:`REFERENCE_NAMES`).  The service
(attached as ``searchdb-objects``, also a block consumer) is an
:class:`~nodeapi.plugins.searchdb_objects.service.ObjectsService`; it
serves no API.
"""

from typing import Mapping

from nodeapi.plugins.searchdb.client import SearchDBClient
from nodeapi.plugins.searchdb_objects.service import ObjectsService
from nodeapi.plugins.searchdb_objects.settings import ObjectsOptions
from nodeapi.plugins.interface import Option, Plugin, PluginContext, PluginParts
from nodeapi.plugins.values import (
    parse_basic_auth, parse_bool, parse_index_prefix, parse_int, parse_optional_url)

PREFIX = "searchdb-objects-"

#: The plugin's option rows, in ``--help`` order.
OPTIONS = (
    Option(PREFIX + "url", parse_optional_url,
           "searchdb-objects: search database URL (default: searchdb-node-url)."),
    Option(PREFIX + "basic-auth", parse_basic_auth,
           "searchdb-objects: <username>:<password> (default: searchdb-basic-auth)."),
    Option(PREFIX + "bulk-replay", parse_int(1),
           "searchdb-objects: documents per bulk while loading all objects (default 10000).",
           "10000"),
    Option(PREFIX + "bulk-sync", parse_int(1),
           "searchdb-objects: documents per bulk for a live block (default 100).", "100"),
    Option(PREFIX + "index-prefix", parse_index_prefix,
           "searchdb-objects: prefix of the index names (default objects-).", "objects-"),
    Option(PREFIX + "max-mapping-depth", parse_int(2, 65535),
           "searchdb-objects: largest field depth of a document (default 10).", "10"),
    Option(PREFIX + "start-after-block", parse_int(0, 2 ** 32 - 1),
           "searchdb-objects: write objects changed by the blocks after this number only "
           "(default 0).", "0"),
    Option(PREFIX + "sync-db-on-startup", parse_bool,
           "searchdb-objects: load every object at each start (default false: only when the "
           "database is behind the chain).", "false"),
) + tuple(
    Option(f"{PREFIX}{kind}{suffix}", parse_bool,
           f"searchdb-objects: {what} (default {default}).", default)
    for kind, suffix, default, what in (
        ("proposals", "", "true", "store proposal objects"),
        ("proposals", "-store-updates", "false", "store every update of proposals"),
        ("proposals", "-no-delete", "true", "keep removed proposals"),
        ("accounts", "", "true", "store account objects"),
        ("accounts", "-store-updates", "false", "store every update of accounts"),
        ("assets", "", "true", "store asset objects"),
        ("assets", "-store-updates", "false", "store every update of assets"),
        ("balances", "", "true", "store account balance objects"),
        ("balances", "-store-updates", "false", "store every update of balances"),
        ("limit-orders", "", "true", "store limit order objects"),
        ("limit-orders", "-store-updates", "false", "store every update of limit orders"),
        ("limit-orders", "-no-delete", "false", "keep removed limit orders"),
        ("asset-bitasset", "", "true", "store bitasset data objects"),
        ("asset-bitasset", "-store-updates", "false", "store every update of bitasset data"),
        ("budget-records", "", "true", "store budget records")))
#: bitshares-core es_objects plugin names (es_objects.cpp) of the options,
#: read from an INI file as the searchdb-objects name.
REFERENCE_NAMES = dict({
    "es-objects-elasticsearch-url": PREFIX + "url",
    "es-objects-auth": PREFIX + "basic-auth",
    "es-objects-start-es-after-block": PREFIX + "start-after-block"}, **{
    f"es-objects-{option.name[len(PREFIX):]}": option.name for option in OPTIONS
    if option.name[len(PREFIX):] not in ("url", "basic-auth", "start-after-block")})


def objects_options(values: Mapping) -> ObjectsOptions:
    """The parsed ``searchdb-objects-*`` option ``values`` (by option name)
    as :class:`~nodeapi.plugins.searchdb_objects.settings.ObjectsOptions`
    (store-updates implies no-delete)."""
    return ObjectsOptions.from_options(lambda name: values[PREFIX + name])


def objects_client(values: Mapping, reactor) -> SearchDBClient:
    """The client of the objects' database: ``searchdb-objects-url`` and
    ``-basic-auth``, those of searchdb when not given."""
    return SearchDBClient(values[PREFIX + "url"] or values["searchdb-node-url"],
                          values[PREFIX + "basic-auth"] or values["searchdb-basic-auth"],
                          reactor)


def build(context: PluginContext) -> PluginParts:
    """An :class:`ObjectsService` over the context's chain."""
    svc = ObjectsService(objects_client(context.values, context.reactor), context.chain,
                         context.data_dir, context.reactor, objects_options(context.values))
    return PluginParts(consumers=(svc,), service=svc)


PLUGIN = Plugin("searchdb-objects", OPTIONS, build, REFERENCE_NAMES,
                reference_names=("es_objects",))
