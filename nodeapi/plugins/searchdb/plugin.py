"""The ``searchdb`` plugin's options and build (bitshares-core
libraries/plugins/elasticsearch/elasticsearch_plugin.cpp
``plugin_set_program_options`` and ``plugin_initialize``;
docs/searchdb-plugin.rst).

Options: ``searchdb-node-url``, ``-bulk-replay``, ``-bulk-sync``,
``-visitor``, ``-basic-auth``, ``-index-prefix`` and the reference's
switches ``-mode``, ``-start-after-block``, ``-operation-object``,
``-operation-string``, ``-max-mapping-depth`` (:data:`OPTIONS`; an INI file
may use the reference's ``elasticsearch-*`` names, :data:`REFERENCE_NAMES`).
The service is a :class:`~nodeapi.plugins.searchdb.service.SearchDBService`
(attached as ``searchdb``; a block consumer unless ``only_query``), also
the part the API and the metrics read (``node.plugins["searchdb"]``): the
history set answers from its ``history``, a
:class:`~nodeapi.plugins.searchdb.query.SearchDBHistory` (None in
``only_save`` mode).

Modes (``searchdb-mode``, the reference's ``elasticsearch-mode``): ``all``
writes and the history API set answers from the database; ``only_save``
writes, and the history API set does not read the database (as the
reference, it answers from the node's own memory, which keeps no account
history beside this plugin: empty lists); ``only_query`` never writes (no
template, no documents: another node fills the database) and the history
API set answers from the database.
"""

from typing import Mapping, MutableMapping

from nodeapi.plugins.searchdb.client import SearchDBClient
from nodeapi.plugins.searchdb.service import SearchDBService
from nodeapi.plugins.interface import Option, Plugin, PluginContext, PluginParts
from nodeapi.plugins.values import (
    parse_basic_auth, parse_bool, parse_index_prefix, parse_int, parse_text, parse_url)

#: ``searchdb-mode`` values, in the order of the reference's numbers
#: (bitshares-core elasticsearch_plugin.hpp ``enum class mode``).
SEARCHDB_MODES = ("only_save", "only_query", "all")


def parse_searchdb_mode(text) -> str:
    """Coercer of ``searchdb-mode``: ``only_save``, ``only_query``, ``all``
    or the reference's numbers 0, 1, 2 -> the name."""
    text = parse_text(text).strip()
    if text in SEARCHDB_MODES:
        return text
    if text in ("0", "1", "2"):
        return SEARCHDB_MODES[int(text)]
    raise ValueError(f"{text!r} is not a searchdb mode: only_save (0), only_query (1) "
                     "or all (2)")


#: The plugin's option rows, in ``--help`` order.
OPTIONS = (
    Option("searchdb-node-url", parse_url,
           "Search database URL (default http://localhost:9200/).", "http://localhost:9200/"),
    Option("searchdb-bulk-replay", parse_int(2),
           "Lines per bulk request during replay (default 10000).", "10000"),
    Option("searchdb-bulk-sync", parse_int(2),
           "Lines per bulk request when synchronized (default 100).", "100"),
    Option("searchdb-visitor", parse_bool,
           "true: index fee and transfer values too (default false).", "false"),
    Option("searchdb-basic-auth", parse_basic_auth,
           "<username>:<password> for the search database (default: none)."),
    Option("searchdb-index-prefix", parse_index_prefix,
           "Prefix of the monthly index names (default chain-).", "chain-"),
    # the reference elasticsearch plugin's switches (docs/searchdb-plugin.rst)
    Option("searchdb-mode", parse_searchdb_mode,
           "only_save (0): write, the history API does not read the database; only_query "
           "(1): never write, the history API reads the database; all (2): both (default "
           "all).", "all"),
    Option("searchdb-start-after-block", parse_int(0, 2 ** 32 - 1),
           "Write documents of the blocks after this number only (default 0).", "0"),
    Option("searchdb-operation-object", parse_bool,
           "true: store op_object and operation_result_object (default true).", "true"),
    Option("searchdb-operation-string", parse_bool,
           "true: store op as JSON text, needed by the history API (default true).", "true"),
    Option("searchdb-max-mapping-depth", parse_int(2, 65535),
           "Largest field depth of a document, index.mapping.depth.limit (default 20).",
           "20"),
)
#: bitshares-core names (elasticsearch_plugin.cpp) of the options, read from
#: an INI file as the searchdb name.
REFERENCE_NAMES = dict({f"elasticsearch-{name}": f"searchdb-{name}" for name in (
    "node-url", "bulk-replay", "bulk-sync", "visitor", "basic-auth", "index-prefix",
    "mode", "operation-object", "operation-string", "max-mapping-depth")},
    **{"elasticsearch-start-es-after-block": "searchdb-start-after-block"})


def searchdb_service(values: Mapping, chain, data_dir: str, reactor,
                     asset_lookup=None) -> SearchDBService:
    """The :class:`SearchDBService` for the parsed option ``values`` (by
    option name): its client on ``searchdb-node-url`` with
    ``searchdb-basic-auth``, writing unless ``only_query``, its ``history``
    answering from the database unless ``only_save``.  ``chain`` is None
    in indexer mode, where ``asset_lookup`` gives the visitor's asset
    names (:class:`SearchDBService`)."""
    mode = values["searchdb-mode"]
    client = SearchDBClient(values["searchdb-node-url"], values["searchdb-basic-auth"], reactor)
    return SearchDBService(
        client, chain, data_dir, reactor, index_prefix=values["searchdb-index-prefix"],
        visitor=values["searchdb-visitor"], bulk_replay=values["searchdb-bulk-replay"],
        bulk_sync=values["searchdb-bulk-sync"], writes=mode != "only_query",
        queries=mode != "only_save", document_options={
            "max_mapping_depth": values["searchdb-max-mapping-depth"],
            "operation_object": values["searchdb-operation-object"],
            "operation_string": values["searchdb-operation-string"],
            "start_after_block": values["searchdb-start-after-block"]},
        asset_lookup=asset_lookup)


def check(values: MutableMapping, warnings: list) -> None:
    """The rules across options (``ValueError`` naming them): the plugin
    and ``account_history`` both answer the history set, so they cannot
    run together (as in bitshares-core, whose elasticsearch plugin refuses
    to start beside account_history); ``searchdb-mode all`` needs
    ``searchdb-operation-string`` (the history API reads ``op``); an
    indexer (``--upstream``) only writes, so not ``only_query``."""
    if "searchdb" in values["plugins"] and "account_history" in values["plugins"]:
        raise ValueError("--plugins: account_history and searchdb cannot run together")
    if values["searchdb-mode"] == "all" and not values["searchdb-operation-string"]:
        raise ValueError("searchdb-mode all needs searchdb-operation-string true (the "
                         "history API reads op)")
    if values["upstream"] and values["searchdb-mode"] == "only_query":
        raise ValueError(
            "searchdb-mode only_query: an indexer (--upstream) only writes the search "
            "database, and only_query never writes: use all or only_save")


def build(context: PluginContext) -> PluginParts:
    """The service of :func:`searchdb_service`, a consumer when it writes."""
    svc = searchdb_service(context.values, context.chain, context.data_dir, context.reactor,
                           asset_lookup=context.asset_lookup)
    return PluginParts(api=svc, consumers=(svc,) if svc.writes else (), service=svc)


PLUGIN = Plugin("searchdb", OPTIONS, build, REFERENCE_NAMES, check,
                reference_names=("elasticsearch",))
