"""database API, graphene sections "SameT Funds" and "Credit offers and
credit deals" (a section of :class:`nodeapi.api.database.DatabaseApi`).

Graphene reference: bitshares-core libraries/app/database_api.cpp sections
"SameT Funds" and "Credit offers and credit deals" (each a
``get_objects_by_x`` over an index ordered by ``(key, id)``).  SameT funds
are ``1.20.N`` (``owner_account``, ``asset_type``), credit offers ``1.21.N``
(``owner_account``, ``asset_type``), credit deals ``1.22.N`` (``offer_id``,
``offer_owner``, ``borrower``, ``debt_asset``, ``collateral_asset``).
Limits: ``api-limit-get-samet-funds`` (101) and
``api-limit-get-credit-offers`` (101, also for deals, as graphene).
"""

from nodeapi.api.arguments import typed_id
from nodeapi.api.base import Section, api_function
from nodeapi.api.database.listing import matching, optional_limit, page, start_key
from nodeapi.api.lookup import get_account, get_asset

SAMET_FUND, CREDIT_OFFER, CREDIT_DEAL = "1.20", "1.21", "1.22"


class Funds(Section):
    """SameT funds, credit offers and credit deals."""

    def _by_x(self, kind: str, configured: int, limit, start_id, **keys) -> list:
        limit = optional_limit(limit, configured)
        return page(matching(self.chain.state, kind, **keys), start_key(start_id, kind), limit)

    def _account(self, name_or_id) -> str:
        return get_account(self.chain.state, name_or_id)["id"]

    def _asset(self, symbol_or_id) -> str:
        return get_asset(self.chain.state, symbol_or_id)["id"]

    # -- SameT funds ---------------------------------------------------------------

    @api_function
    def list_samet_funds(self, limit=None, start_id=None):
        """SameT funds by id from ``start_id``."""
        return self._by_x(SAMET_FUND, self.node.limits.get_samet_funds, limit, start_id)

    @api_function
    def get_samet_funds_by_owner(self, account_name_or_id, limit=None, start_id=None):
        """SameT funds of an owner account, by id."""
        return self._by_x(SAMET_FUND, self.node.limits.get_samet_funds, limit, start_id,
                          owner_account=self._account(account_name_or_id))

    @api_function
    def get_samet_funds_by_asset(self, asset_symbol_or_id, limit=None, start_id=None):
        """SameT funds of an asset, by id."""
        return self._by_x(SAMET_FUND, self.node.limits.get_samet_funds, limit, start_id,
                          asset_type=self._asset(asset_symbol_or_id))

    # -- credit offers ---------------------------------------------------------------

    @api_function
    def list_credit_offers(self, limit=None, start_id=None):
        """Credit offers by id from ``start_id``."""
        return self._by_x(CREDIT_OFFER, self.node.limits.get_credit_offers, limit, start_id)

    @api_function
    def get_credit_offers_by_owner(self, account_name_or_id, limit=None, start_id=None):
        """Credit offers of an owner account, by id."""
        return self._by_x(CREDIT_OFFER, self.node.limits.get_credit_offers, limit, start_id,
                          owner_account=self._account(account_name_or_id))

    @api_function
    def get_credit_offers_by_asset(self, asset_symbol_or_id, limit=None, start_id=None):
        """Credit offers of an asset, by id."""
        return self._by_x(CREDIT_OFFER, self.node.limits.get_credit_offers, limit, start_id,
                          asset_type=self._asset(asset_symbol_or_id))

    # -- credit deals ------------------------------------------------------------------

    @api_function
    def list_credit_deals(self, limit=None, start_id=None):
        """Credit deals by id from ``start_id``."""
        return self._by_x(CREDIT_DEAL, self.node.limits.get_credit_offers, limit, start_id)

    @api_function
    def get_credit_deals_by_offer_id(self, offer_id, limit=None, start_id=None):
        """Credit deals of a credit offer (``1.21.N``), by id."""
        return self._by_x(CREDIT_DEAL, self.node.limits.get_credit_offers, limit, start_id,
                          offer_id=typed_id(offer_id, CREDIT_OFFER, "offer_id"))

    @api_function
    def get_credit_deals_by_offer_owner(self, account_name_or_id, limit=None, start_id=None):
        """Credit deals of offers owned by the account, by id."""
        return self._by_x(CREDIT_DEAL, self.node.limits.get_credit_offers, limit, start_id,
                          offer_owner=self._account(account_name_or_id))

    @api_function
    def get_credit_deals_by_borrower(self, account_name_or_id, limit=None, start_id=None):
        """Credit deals the account borrowed in, by id."""
        return self._by_x(CREDIT_DEAL, self.node.limits.get_credit_offers, limit, start_id,
                          borrower=self._account(account_name_or_id))

    @api_function
    def get_credit_deals_by_debt_asset(self, asset_symbol_or_id, limit=None, start_id=None):
        """Credit deals lending the asset, by id."""
        return self._by_x(CREDIT_DEAL, self.node.limits.get_credit_offers, limit, start_id,
                          debt_asset=self._asset(asset_symbol_or_id))

    @api_function
    def get_credit_deals_by_collateral_asset(self, asset_symbol_or_id, limit=None,
                                             start_id=None):
        """Credit deals secured by the asset, by id."""
        return self._by_x(CREDIT_DEAL, self.node.limits.get_credit_offers, limit, start_id,
                          collateral_asset=self._asset(asset_symbol_or_id))
