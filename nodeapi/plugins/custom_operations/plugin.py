"""The ``custom_operations`` plugin's option and build (bitshares-core
libraries/plugins/custom_operations/custom_operations_plugin.cpp
``plugin_set_program_options`` and ``plugin_initialize``):
``custom-operations-start-block``.  The part the API reads
(``node.plugins["custom_operations"]``) is the
:class:`~nodeapi.plugins.custom_operations.storage.AccountStorage`, also
the block consumer.
"""

from nodeapi.plugins.custom_operations.storage import AccountStorage
from nodeapi.plugins.interface import Option, Plugin, PluginContext, PluginParts
from nodeapi.plugins.values import parse_int

#: The plugin's option rows.
OPTIONS = (
    Option("custom-operations-start-block", parse_int(0, 2 ** 32 - 1),
           "custom_operations: first block whose custom operations are read (default "
           "45000000).", "45000000"),
)


def build(context: PluginContext) -> PluginParts:
    """An :class:`AccountStorage` reading from the configured block on."""
    storage = AccountStorage(context.values["custom-operations-start-block"])
    return PluginParts(api=storage, consumers=(storage,))


PLUGIN = Plugin("custom_operations", OPTIONS, build, default=True)
