"""database API, graphene section "Withdrawals": the withdraw permissions
1.12.N an account gives or receives (a section of
:class:`nodeapi.api.database.DatabaseApi`).

Graphene reference: bitshares-core libraries/app/database_api.cpp
(``get_withdraw_permissions_by_giver`` / ``_by_recipient``: index
``by_from`` / ``by_authorized``, from ``start`` on in id order, at most
``limit``; the limits ``api-limit-get-withdraw-permissions-by-giver`` /
``-by-recipient``, default 101).  The objects are the ones
:mod:`nodeapi.chain.evaluators.withdraw_permission` creates.
"""

from nodeapi.api.arguments import check_limit, id_key, typed_id
from nodeapi.api.base import Section, api_function
from nodeapi.api.lookup import get_account


def permissions_of(state, field: str, account_id: str, start: str = "1.12.0") -> list:
    """The 1.12.N objects whose ``field`` (``withdraw_from_account`` or
    ``authorized_account``) is ``account_id``, from ``start`` on, in id
    order (graphene ``by_from`` / ``by_authorized``)."""
    low = id_key(start)
    ids = sorted((o for o in state.withdraw_permission_ids
                  if state.objects[o][field] == account_id and id_key(o) >= low), key=id_key)
    return [state.objects[o] for o in ids]


class Withdrawals(Section):
    """Withdraw permissions by giver and by recipient."""

    def _withdraw_permissions(self, field: str, configured: int, account, start, limit):
        check_limit(limit, configured)
        state = self.chain.state
        account_id = get_account(state, account)["id"]
        start = typed_id(start, "1.12", "withdraw permission id")
        return permissions_of(state, field, account_id, start)[:limit]

    @api_function
    def get_withdraw_permissions_by_giver(self, account_id_or_name, start, limit: int):
        """The permissions ``account_id_or_name`` gave, ``[{id,
        withdraw_from_account, authorized_account, withdrawal_limit:
        {amount, asset_id}, withdrawal_period_sec, period_start_time,
        expiration, claimed_this_period}]``, ids from ``start`` (``1.12.N``)
        on, at most ``limit`` (<= ``api-limit-get-withdraw-permissions-by-giver``,
        else "limit can not be greater than N").  Unknown account:
        :class:`ApiError`."""
        return self._withdraw_permissions("withdraw_from_account",
                                          self.node.limits.get_withdraw_permissions_by_giver,
                                          account_id_or_name, start, limit)

    @api_function
    def get_withdraw_permissions_by_recipient(self, account_id_or_name, start, limit: int):
        """As :meth:`get_withdraw_permissions_by_giver` for the permissions
        whose ``authorized_account`` is the account (limit
        ``api-limit-get-withdraw-permissions-by-recipient``)."""
        return self._withdraw_permissions("authorized_account",
                                          self.node.limits.get_withdraw_permissions_by_recipient,
                                          account_id_or_name, start, limit)
