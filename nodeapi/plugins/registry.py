"""The plugins of ``twistd nodeapi`` (:class:`nodeapi.plugins.interface.IPlugin`),
in build order: :func:`nodeapi.tap.makeService` builds the ones named in
``--plugins`` in this order, so their block consumers see a block in it and
their services start in it (and stop in reverse: the witness before the
search database plugins, which then flush).  :mod:`nodeapi.config_options`
takes their option rows and INI aliases from here.

Adding a plugin: a package (or module) declaring a
:class:`~nodeapi.plugins.interface.Plugin` (name, option rows, ``build``),
listed in :data:`PLUGINS` and in
:data:`nodeapi.config_parse.KNOWN_PLUGINS` (the ``--plugins`` help order).
"""

from nodeapi.plugins.account_history.plugin import PLUGIN as ACCOUNT_HISTORY
from nodeapi.plugins.custom_operations.plugin import PLUGIN as CUSTOM_OPERATIONS
from nodeapi.plugins.grouped_orders.plugin import PLUGIN as GROUPED_ORDERS
from nodeapi.plugins.market_history.plugin import PLUGIN as MARKET_HISTORY
from nodeapi.plugins.searchdb.plugin import PLUGIN as SEARCHDB
from nodeapi.plugins.searchdb_objects.plugin import PLUGIN as SEARCHDB_OBJECTS
from nodeapi.plugins.witness.plugin import PLUGIN as WITNESS

#: Every plugin, in build order.
PLUGINS = (ACCOUNT_HISTORY, SEARCHDB, SEARCHDB_OBJECTS, MARKET_HISTORY, GROUPED_ORDERS,
           CUSTOM_OPERATIONS, WITNESS)
