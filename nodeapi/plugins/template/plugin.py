"""The ``template`` plugin's option, check and build (bitshares-core
libraries/plugins/template_plugin/template_plugin.cpp
``plugin_set_program_options`` and ``plugin_initialize``).

What every plugin declares, in its smallest form: an option row
(``template-start-block``), a check across options (the plugin counts a
chain's blocks, so a gateway, ``--upstream``, has none to count), and a
build returning its parts: the
:class:`~nodeapi.plugins.template.counter.OperationCounter` is the block
consumer and the part the API sets would read as
``node.plugins["template"]``.
"""

from typing import MutableMapping

from nodeapi.plugins.interface import Option, Plugin, PluginContext, PluginParts
from nodeapi.plugins.template.counter import OperationCounter
from nodeapi.plugins.values import parse_int

#: The plugin's option rows, in ``--help`` order.
OPTIONS = (
    Option("template-start-block", parse_int(0, 2 ** 32 - 1),
           "template: first block whose operations are counted (default 0).", "0"),
)


def check(values: MutableMapping, warnings: list) -> None:
    """The plugin counts the node's own chain: not in gateway mode
    (``ValueError``)."""
    if "template" in values["plugins"] and values["upstream"]:
        raise ValueError("--plugins: template counts a chain's blocks, and a gateway "
                         "(--upstream) has no chain")


def build(context: PluginContext) -> PluginParts:
    """An :class:`OperationCounter` from the configured block on."""
    counter = OperationCounter(context.values["template-start-block"])
    return PluginParts(api=counter, consumers=(counter,))


PLUGIN = Plugin("template", OPTIONS, build, check=check)
