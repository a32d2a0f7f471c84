"""Every plugin of ``twistd nodeapi``, one package each
(``nodeapi/plugins/<name>/``, as bitshares-core's libraries/plugins/),
with what they share: the interface (:mod:`nodeapi.plugins.interface`),
the value parsers their options use (:mod:`nodeapi.plugins.values`) and
the one list of them (:mod:`nodeapi.plugins.registry`).

As bitshares-core's ``abstract_plugin`` (libraries/app/include/graphene/app/
plugin.hpp): a plugin names itself, declares its options
(``plugin_set_program_options``), checks them and builds itself from the
parsed values (``plugin_initialize``); :func:`nodeapi.modes.node.build_plugins`
builds the plugins of ``--plugins`` in the registry's order, the indexer
(:mod:`nodeapi.modes.indexer`) the ``searchdb`` plugin.
"""
