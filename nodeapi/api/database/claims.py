"""database API, graphene sections "Proposed transactions", "Blinded
balances" and "Tickets": objects through which an account holds a claim on
a transfer or a vote (a section of :class:`nodeapi.api.database.DatabaseApi`;
withdraw permissions and HTLCs are :mod:`~nodeapi.api.database.withdrawals`
and :mod:`~nodeapi.api.database.htlc`).

Graphene reference: bitshares-core libraries/app/database_api.cpp sections
"Proposed transactions" (proposals ``1.10.N`` by the accounts of their
required and available approvals, graphene ``required_approval_index``),
"Blinded balances" (``2.10.N`` by ``commitment``) and "Tickets"
(``1.18.N`` by ``account``).  Each answer is a lookup over the chain's
objects of that kind (:mod:`~nodeapi.api.database.listing`).
"""

from nodeapi.api.arguments import require_hex, require_list
from nodeapi.api.base import Section, api_function
from nodeapi.api.database.listing import matching, objects_of_kind, optional_limit, page, start_key
from nodeapi.api.lookup import get_account
from nodeapi.chain.evaluators.proposal import approval_index_accounts

PROPOSAL, TICKET, BLINDED_BALANCE = "1.10", "1.18", "2.10"


def proposals_of(state, account_id: str) -> list:
    """The proposals ``1.10.N`` whose required or given approvals name
    account ``account_id``, by id, as graphene's ``required_approval_index``
    lists them (:func:`~nodeapi.chain.evaluators.proposal.approval_index_accounts`:
    an account whose approval was removed is left out until it approves
    again)."""
    return [p for p in objects_of_kind(state, PROPOSAL)
            if account_id in approval_index_accounts(p)]


class Claims(Section):
    """Proposals, blinded balances, tickets."""

    @api_function
    def get_proposed_transactions(self, account_id_or_name):
        """Proposals ``1.10.N`` whose required or given approvals name the
        account (graphene ``required_approval_index``), by id."""
        state = self.chain.state
        return proposals_of(state, get_account(state, account_id_or_name)["id"])

    @api_function
    def get_blinded_balances(self, commitments):
        """Blinded balance objects ``2.10.N`` for the commitments (hex
        strings of 33 bytes), in commitment order, each once; unknown
        commitments are left out."""
        wanted = {require_hex(c, 33, "commitment").hex()
                  for c in require_list(commitments, "commitments")}
        by_commitment = {b["commitment"]: b
                         for b in objects_of_kind(self.chain.state, BLINDED_BALANCE)}
        return [by_commitment[c] for c in sorted(wanted) if c in by_commitment]

    @api_function
    def list_tickets(self, limit=None, start_id=None):
        """Tickets ``1.18.N`` by id from ``start_id``, at most ``limit``
        (default and maximum ``api-limit-get-tickets``, 101)."""
        limit = optional_limit(limit, self.node.limits.get_tickets)
        return page(objects_of_kind(self.chain.state, TICKET), start_key(start_id, TICKET), limit)

    @api_function
    def get_tickets_by_account(self, account_name_or_id, limit=None, start_id=None):
        """The account's tickets by id from ``start_id``."""
        account_id = get_account(self.chain.state, account_name_or_id)["id"]
        limit = optional_limit(limit, self.node.limits.get_tickets)
        return page(matching(self.chain.state, TICKET, account=account_id),
                    start_key(start_id, TICKET), limit)
