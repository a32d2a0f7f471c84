"""The database API set (login accessor ``database``, access name
``database_api``): read access to the chain state plus callbacks.

Graphene reference: bitshares-core libraries/app/database_api.cpp; the
functions clients use first are listed in wire-contract.md section 6, the
callbacks in section 5.  The functions live in mixins by topic:

- :mod:`nodeapi.api.database_globals`: ``get_objects``, ``get_chain_properties``,
  ``get_global_properties``, ``get_dynamic_global_properties``,
  ``get_chain_id``, ``get_config``, ``get_block_header``,
  ``get_block_header_batch``, ``get_block``, ``get_transaction``,
  ``get_key_references``, ``is_public_key_registered``, witnesses, committee
  members, ``lookup_vote_ids``;
- :mod:`nodeapi.api.database_accounts`: accounts, full accounts, balances,
  genesis balance objects;
- :mod:`nodeapi.api.database_assets`: assets, limit orders, order book;
- :mod:`nodeapi.api.database_authority`: transaction hex, required and
  potential signatures, ``verify_authority``, ``get_required_fees``;
- :mod:`nodeapi.api.database_subscriptions`: ``set_subscribe_callback``,
  ``set_auto_subscription``, ``set_pending_transaction_callback``,
  ``set_block_applied_callback``, ``cancel_all_subscriptions``.

Every function reads ``node.chain.state``, which is the head state plus the
pending transactions, like graphene's database during its pending session.
Bad arguments raise :class:`~nodeapi.errors.ApiError`; limits are the
``api-limit-*`` options in ``node.limits``.
"""

from nodeapi.api.base import ApiSet
from nodeapi.api.database_accounts import AccountsMixin
from nodeapi.api.database_assets import AssetsMixin
from nodeapi.api.database_authority import AuthorityMixin
from nodeapi.api.database_globals import GlobalsMixin
from nodeapi.api.database_subscriptions import SubscriptionsMixin


class DatabaseApi(SubscriptionsMixin, GlobalsMixin, AccountsMixin, AssetsMixin, AuthorityMixin,
                  ApiSet):
    """graphene ``database_api`` over :class:`nodeapi.chain.chain.Chain`
    (see the module docstring for the function groups).  One instance per
    connection; :meth:`close` removes its chain observers."""

    name = "database"

    def __init__(self, node, session) -> None:
        super().__init__(node, session)
        self._init_subscriptions()
