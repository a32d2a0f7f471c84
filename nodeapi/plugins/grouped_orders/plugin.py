"""The ``grouped_orders`` plugin's option and build (bitshares-core
libraries/plugins/grouped_orders/grouped_orders_plugin.cpp
``plugin_set_program_options`` and ``plugin_initialize``): ``tracked-groups``.
The part the API reads (``node.plugins["grouped_orders"]``) is the
:class:`~nodeapi.plugins.grouped_orders.orders.GroupedOrders`, also the
block consumer.
"""

import json

from nodeapi.plugins.grouped_orders.orders import GroupedOrders
from nodeapi.plugins.interface import Option, Plugin, PluginContext, PluginParts
from nodeapi.plugins.values import parse_text


def parse_tracked_groups(text) -> list:
    """``tracked-groups``: a JSON array of group widths in 1/10000 (0..65535),
    sorted, each once, 0 dropped (graphene grouped_orders plugin)."""
    try:
        value = json.loads(parse_text(text))
    except ValueError:
        raise ValueError(f"{text!r} is not a JSON array of numbers") from None
    if not isinstance(value, list) or not all(
            isinstance(g, int) and not isinstance(g, bool) and 0 <= g <= 0xFFFF for g in value):
        raise ValueError(f"{text!r} is not a JSON array of numbers 0..65535")
    return sorted(set(value) - {0})


#: The plugin's option rows.
OPTIONS = (
    Option("tracked-groups", parse_tracked_groups,
           "grouped_orders: JSON array of group widths in 1/10000 (default [10,100]: 0.1% "
           "and 1%).", "[10,100]"),
)


def build(context: PluginContext) -> PluginParts:
    """A :class:`GroupedOrders` over the context's chain."""
    orders = GroupedOrders(context.chain, context.values["tracked-groups"])
    return PluginParts(api=orders, consumers=(orders,))


PLUGIN = Plugin("grouped_orders", OPTIONS, build, default=True)
