"""database API, graphene section "HTLC": the hashed time-lock contracts
1.16.N (a section of :class:`nodeapi.api.database.DatabaseApi`).

Graphene reference: bitshares-core libraries/app/database_api.cpp
(``get_htlc``: ``get_objects`` of the one id, so ``null`` when absent, and
subscribing like it; ``get_htlc_by_from`` / ``get_htlc_by_to``: index
``by_from_id`` / ``by_to_id`` from ``start`` on; ``list_htlcs``: by id from
``start``; limits ``api-limit-get-htlc-by`` and ``api-limit-list-htlcs``,
default 100).  The objects are the ones
:mod:`nodeapi.chain.evaluators.htlc` creates.
"""

from nodeapi.api.arguments import check_limit, id_key, typed_id
from nodeapi.api.base import Section, api_function
from nodeapi.api.database.objects import fetch_objects
from nodeapi.api.lookup import get_account


def htlcs_of(state, side: str, account_id: str, start: str = "1.16.0") -> list:
    """The 1.16.N objects whose ``transfer[side]`` (``from`` or ``to``) is
    ``account_id``, ids from ``start`` on, in id order."""
    low = id_key(start)
    ids = sorted((o for o in state.htlc_ids
                  if state.objects[o]["transfer"][side] == account_id and id_key(o) >= low),
                 key=id_key)
    return [state.objects[o] for o in ids]


class Htlcs(Section):
    """HTLC objects by id (subscribed through ``subscriptions`` like
    ``get_objects``), by sender, by recipient, all."""

    def __init__(self, node, subscriptions) -> None:
        super().__init__(node)
        self.subscriptions = subscriptions

    @api_function
    def get_htlc(self, id, subscribe: bool | None = None):  # noqa: A002 (graphene's name)
        """The HTLC ``id`` (``1.16.N``): ``{id, transfer: {from, to, amount,
        asset_id}, conditions: {hash_lock: {preimage_hash: [which, hex],
        preimage_size}, time_lock: {expiration}}, memo?}``, or ``null``
        (graphene: ``get_objects([id], subscribe)``)."""
        return fetch_objects(self.node, self.subscriptions, [typed_id(id, "1.16", "htlc id")],
                             subscribe)[0]

    def _htlcs_by(self, side: str, account, start, limit: int) -> list:
        check_limit(limit, self.node.limits.get_htlc_by)
        state = self.chain.state
        account_id = get_account(state, account)["id"]
        return htlcs_of(state, side, account_id, typed_id(start, "1.16", "start"))[:limit]

    @api_function
    def get_htlc_by_from(self, account_id_or_name, start, limit: int):
        """The HTLCs the account sent, ids from ``start`` on, at most
        ``limit`` (<= ``api-limit-get-htlc-by``, else "limit can not be
        greater than N")."""
        return self._htlcs_by("from", account_id_or_name, start, limit)

    @api_function
    def get_htlc_by_to(self, account_id_or_name, start, limit: int):
        """The HTLCs the account may redeem, as :meth:`get_htlc_by_from`."""
        return self._htlcs_by("to", account_id_or_name, start, limit)

    @api_function
    def list_htlcs(self, start, limit: int):
        """Every HTLC by id from ``start`` on, at most ``limit`` (<=
        ``api-limit-list-htlcs``)."""
        check_limit(limit, self.node.limits.list_htlcs)
        state = self.chain.state
        low = id_key(typed_id(start, "1.16", "start"))
        ids = sorted((o for o in state.htlc_ids if id_key(o) >= low), key=id_key)
        return [state.objects[o] for o in ids[:limit]]
