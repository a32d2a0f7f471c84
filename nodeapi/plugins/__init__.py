"""The plugin interface of ``twistd nodeapi`` (:mod:`nodeapi.plugins.interface`)
and the value parsers plugins declare their options with
(:mod:`nodeapi.plugins.values`).

As bitshares-core's ``abstract_plugin`` (libraries/app/include/graphene/app/
plugin.hpp): a plugin names itself, declares its options
(``plugin_set_program_options``) and builds itself from the parsed values
(``plugin_initialize``); :func:`nodeapi.modes.node.build_plugins` loops over the
plugins of ``--plugins`` (:data:`nodeapi.plugins.registry.PLUGINS`).
"""
