"""The plugins of ``twistd nodeapi`` (:class:`nodeapi.plugins.interface.IPlugin`):
the one list :data:`PLUGINS`, in build order, and what derives from it.

The node's maker builds the ones named in ``--plugins`` in this order, so
their block consumers see a block in it and their services start in it
(and stop in reverse: the witness before the search database plugins,
which then flush), as bitshares-core's ``application::initialize_plugins``
walks its registered plugins.  ``--plugins`` is read by
:func:`parse_plugins` (the names and each plugin's ``reference_names``),
its default is :data:`DEFAULT` (the plugins declaring ``default``) and its
help :func:`plugins_help`; :mod:`nodeapi.config_options` takes the option
rows and INI aliases from here.

Adding a plugin: a package ``nodeapi/plugins/<name>/`` whose ``plugin.py``
declares ``PLUGIN`` (:class:`~nodeapi.plugins.interface.Plugin`: name,
option rows, ``build``, ``check``), listed once in :data:`PLUGINS`
(``nodeapi/plugins/template/`` is the smallest one).
"""

import re

from nodeapi.plugins.account_history.plugin import PLUGIN as ACCOUNT_HISTORY
from nodeapi.plugins.custom_operations.plugin import PLUGIN as CUSTOM_OPERATIONS
from nodeapi.plugins.grouped_orders.plugin import PLUGIN as GROUPED_ORDERS
from nodeapi.plugins.market_history.plugin import PLUGIN as MARKET_HISTORY
from nodeapi.plugins.searchdb.plugin import PLUGIN as SEARCHDB
from nodeapi.plugins.searchdb_objects.plugin import PLUGIN as SEARCHDB_OBJECTS
from nodeapi.plugins.template.plugin import PLUGIN as TEMPLATE
from nodeapi.plugins.values import parse_text
from nodeapi.plugins.witness.plugin import PLUGIN as WITNESS

#: Every plugin, in build order.
PLUGINS = (ACCOUNT_HISTORY, SEARCHDB, SEARCHDB_OBJECTS, MARKET_HISTORY, GROUPED_ORDERS,
           CUSTOM_OPERATIONS, WITNESS, TEMPLATE)
#: The names of the default ``--plugins``, in build order.
DEFAULT = tuple(plugin.name for plugin in PLUGINS if plugin.default)
#: bitshares-core plugin names nodeapi has no plugin of: accepted, then
#: dropped with a warning (``api_helper_indexes``: its lookups are always
#: on here, the warning says so).
NOT_PROVIDED = ("api_helper_indexes", "delayed_node", "snapshot", "debug_witness")
#: ``{bitshares-core name: plugin name}`` (``elasticsearch``: ``searchdb``).
REFERENCE_NAMES = {alias: plugin.name for plugin in PLUGINS for alias in plugin.reference_names}


def plugin_named(name: str):
    """The plugin of :data:`PLUGINS` called ``name``; ``KeyError``."""
    for plugin in PLUGINS:
        if plugin.name == name:
            return plugin
    raise KeyError(name)


def parse_plugins(text) -> list:
    """``--plugins``: space- or comma-separated names (a plugin's own, one
    of its ``reference_names`` or one of :data:`NOT_PROVIDED`) -> list,
    duplicates dropped; ``ValueError`` naming the known ones for another
    name."""
    names = []
    known = [plugin.name for plugin in PLUGINS]
    for name in re.split(r"[\s,]+", parse_text(text)):
        name = REFERENCE_NAMES.get(name, name)
        if name and name not in names:
            if name not in known and name not in NOT_PROVIDED:
                raise ValueError(f"unknown plugin {name!r} (known: {', '.join(known)})")
            names.append(name)
    return names


def plugins_help() -> str:
    """The ``--plugins`` help line: every name (with its bitshares-core
    names) and the default."""
    names = ", ".join(
        plugin.name + (f" (alias {', '.join(plugin.reference_names)})"
                       if plugin.reference_names else "") for plugin in PLUGINS)
    return f"Plugins to enable, space separated: {names} (default: {' '.join(DEFAULT)})."
