"""The ``market_history`` plugin's options and build (bitshares-core
libraries/plugins/market_history/market_history_plugin.cpp
``plugin_set_program_options`` and ``plugin_initialize``).

Options: ``bucket-size``, ``history-per-size``,
``max-order-his-records-per-market``, ``max-order-his-seconds-per-market``
(:data:`OPTIONS`), read into a
:class:`~nodeapi.plugins.market_history.history.MarketHistoryOptions` by
:func:`market_history_options`.  The part the API reads
(``node.plugins["market_history"]``) is the
:class:`~nodeapi.plugins.market_history.history.MarketHistory`, whose
``pools`` is the
:class:`~nodeapi.plugins.market_history.pools.LiquidityPoolHistory`; both
are block consumers.
"""

import json
from typing import Mapping

from nodeapi.plugins.market_history.history import MarketHistory, MarketHistoryOptions
from nodeapi.plugins.market_history.pools import LiquidityPoolHistory
from nodeapi.plugins.interface import Option, Plugin, PluginContext, PluginParts
from nodeapi.plugins.values import parse_int, parse_text


def parse_bucket_sizes(text) -> tuple:
    """Coercer: a JSON array of seconds (0 to 2^32-1, numbers or numeric
    strings, as fc reads ``flat_set<uint32_t>``) -> ascending tuple without
    duplicates and without 0 (bitshares ``bucket-size``: 0 is dropped)."""
    raw = parse_text(text)
    try:
        values = json.loads(raw)
    except ValueError:
        values = None
    if not isinstance(values, list):
        raise ValueError(f"{raw!r} is not a JSON array of seconds, e.g. [60,300,3600]")
    sizes = set()
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ValueError(f"{value!r} is not a number of seconds")
        sizes.add(parse_int(0, 2 ** 32 - 1)(value))
    return tuple(sorted(sizes - {0}))


#: The plugin's option rows, in ``--help`` order.
OPTIONS = (
    Option("bucket-size", parse_bucket_sizes,
           "market_history: bucket sizes in seconds, a JSON array "
           "(default [60,300,900,3600,14400,86400,604800]).",
           "[60,300,900,3600,14400,86400,604800]"),
    Option("history-per-size", parse_int(0, 2 ** 32 - 1),
           "market_history: buckets kept per market and size (default 1500).", "1500"),
    Option("max-order-his-records-per-market", parse_int(0, 2 ** 32 - 1),
           "market_history: fills always kept per market (default 1000).", "1000"),
    Option("max-order-his-seconds-per-market", parse_int(0, 2 ** 32 - 1),
           "market_history: fills younger than this many seconds are kept too (default "
           "259200).", "259200"),
)


def market_history_options(values: Mapping) -> MarketHistoryOptions:
    """The parsed option ``values`` (by option name) as
    :class:`~nodeapi.plugins.market_history.history.MarketHistoryOptions`."""
    return MarketHistoryOptions(
        bucket_sizes=values["bucket-size"], history_per_size=values["history-per-size"],
        max_order_his_records_per_market=values["max-order-his-records-per-market"],
        max_order_his_seconds_per_market=values["max-order-his-seconds-per-market"])


def build(context: PluginContext) -> PluginParts:
    """A :class:`MarketHistory` with its pool history, both consumers."""
    pools = LiquidityPoolHistory()
    market = MarketHistory(market_history_options(context.values), pools=pools)
    return PluginParts(api=market, consumers=(market, pools))


PLUGIN = Plugin("market_history", OPTIONS, build, default=True)
