"""The ``account_history`` plugin's options and build (bitshares-core
libraries/plugins/account_history/account_history_plugin.cpp
``plugin_set_program_options`` and ``plugin_initialize``).

Options: ``max-ops-per-account``, ``extended-max-ops-per-account``,
``min-blocks-to-keep``, ``max-ops-per-acc-by-min-blocks``,
``partial-operations``, ``track-account``, ``extended-history-by-account``
and ``extended-history-by-registrar`` (:data:`OPTIONS`), read into a
:class:`~nodeapi.plugins.account_history.retention.HistoryLimits` by
:func:`history_limits`.  The part the API reads
(``node.plugins["account_history"]``) is the
:class:`~nodeapi.plugins.account_history.history.AccountHistory`, also the
block consumer.
"""

from typing import Mapping

from nodeapi.plugins.account_history.history import AccountHistory
from nodeapi.plugins.account_history.retention import UNLIMITED, HistoryLimits
from nodeapi.plugins.interface import MULTI, Option, Plugin, PluginContext, PluginParts
from nodeapi.plugins.values import parse_account_ids, parse_bool, parse_int, parse_text


def parse_op_count(text) -> int:
    """Coercer: a count of operations, 0 to 2**64-1 (graphene ``uint64_t``);
    empty = 2**64-1, graphene's default ``-1``, i.e. unlimited."""
    text = parse_text(text)
    return UNLIMITED if text == "" else parse_int(0, UNLIMITED)(text)


#: The plugin's option rows, in ``--help`` order.
OPTIONS = (
    Option("max-ops-per-account", parse_op_count,
           "account_history: operations kept per account, 0 = no account history (default: "
           "unlimited; min-blocks-to-keep may keep more)."),
    Option("extended-max-ops-per-account", parse_op_count,
           "account_history: operations kept per extended-history account (default: "
           "unlimited; never less than max-ops-per-account)."),
    Option("min-blocks-to-keep", parse_int(0, 2 ** 32 - 1),
           "account_history: operations of the latest N blocks are kept up to "
           "max-ops-per-acc-by-min-blocks per account (default 30000).", "30000"),
    Option("max-ops-per-acc-by-min-blocks", parse_op_count,
           "account_history: most operations per account min-blocks-to-keep keeps (default "
           "1000; never less than max-ops-per-account).", "1000"),
    Option("partial-operations", parse_bool,
           "account_history: true = keep only operations some kept account history refers "
           "to (default false: keep every operation).", "false"),
    Option("track-account", parse_account_ids,
           'account_history: account id, e.g. "1.2.17", whose history is kept (repeatable; '
           "default: every account).", kind=MULTI),
    Option("extended-history-by-account", parse_account_ids,
           "account_history: account id that gets extended-max-ops-per-account "
           "(repeatable).", kind=MULTI),
    Option("extended-history-by-registrar", parse_account_ids,
           "account_history: accounts registered by this account id get "
           "extended-max-ops-per-account (repeatable).", kind=MULTI),
)


def history_limits(values: Mapping) -> HistoryLimits:
    """The parsed option ``values`` (by option name) as
    :class:`~nodeapi.plugins.account_history.retention.HistoryLimits`."""
    return HistoryLimits(
        max_ops_per_account=values["max-ops-per-account"],
        extended_max_ops_per_account=values["extended-max-ops-per-account"],
        min_blocks_to_keep=values["min-blocks-to-keep"],
        max_ops_per_acc_by_min_blocks=values["max-ops-per-acc-by-min-blocks"],
        partial_operations=values["partial-operations"],
        track_accounts=values["track-account"],
        extended_history_accounts=values["extended-history-by-account"],
        extended_history_registrars=values["extended-history-by-registrar"])


def build(context: PluginContext) -> PluginParts:
    """An :class:`AccountHistory` with the context's limits; the registrar
    of an account (``extended-history-by-registrar``) comes from the
    chain's state."""
    chain = context.chain
    history = AccountHistory(history_limits(context.values),
                             registrar_of=lambda a: chain.state.objects[a]["registrar"])
    return PluginParts(api=history, consumers=(history,))


PLUGIN = Plugin("account_history", OPTIONS, build, default=True)
