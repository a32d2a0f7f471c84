"""database API, graphene sections "Witnesses", "Committee members",
"Workers" and "Votes": the elected roles and what votes point at (a section of
:class:`nodeapi.api.database.DatabaseApi`).

Graphene reference: bitshares-core libraries/app/database_api.cpp sections
"Witnesses", "Committee members", "Workers", "Votes".  Role arguments accept
the role's object id (``1.6.N`` witness, ``1.5.N`` committee member) or, for
the ``*_by_account`` functions, an account name or id.  Workers are the
``1.14.N`` objects (worker_create; vote ids of type 2).
"""

from nodeapi.api.arguments import (
    check_count, check_limit, id_key, optional_bool, require_list, require_str,
    typed_id)
from nodeapi.api.base import Section, api_function
from nodeapi.api.database.listing import matching, objects_of_kind
from nodeapi.api.lookup import get_account
from nodeapi.errors import ApiError


def vote_objects(state, votes: list) -> list:
    """The committee member / witness / worker objects voted for by
    ``"type:instance"`` vote ids (0 committee, 1 witness, 2 worker: the
    worker whose ``vote_for``, else whose ``vote_against`` it is), null when
    unknown, in order (bitshares-core database_api.cpp ``lookup_vote_ids``).

    :raises ApiError: a malformed vote id."""
    by_vote = {}
    for space_type in ("1.5.", "1.6."):
        for oid in state.ids_of_type(space_type):
            by_vote[state.objects[oid]["vote_id"]] = state.objects[oid]
    workers = [state.objects[oid] for oid in state.ids_of_type("1.14.")]
    for worker in workers:
        by_vote.setdefault(worker["vote_against"], worker)
    for worker in workers:
        by_vote[worker["vote_for"]] = worker
    result = []
    for vote in votes:
        kind, sep, instance = vote.partition(":") if isinstance(vote, str) else ("", "", "")
        if not sep or kind not in ("0", "1", "2") or not instance.isdigit():
            raise ApiError(f"Invalid vote id {vote!r}: expected type:instance, type 0-2")
        result.append(by_vote.get(f"{kind}:{int(instance)}"))
    return result


class Governance(Section):
    """Witnesses, committee members, vote ids."""

    def _objects_by_ids(self, ids, space_type: str, what: str) -> list:
        objects = self.chain.state.objects
        ids = require_list(ids, what + "s")
        check_count(len(ids), self.node.limits.get_objects, what + "s")
        return [objects.get(typed_id(i, space_type, what + " id")) for i in ids]

    def _lookup_by_name(self, space_type: str, account_field: str, lower_bound_name,
                        limit: int, configured: int) -> list:
        require_str(lower_bound_name, "lower_bound_name")
        check_limit(limit, configured)
        state = self.chain.state
        found = []
        for oid in state.ids_of_type(space_type + "."):
            account = state.objects.get(state.objects[oid][account_field])
            if account is not None and account["name"] >= lower_bound_name:
                found.append((account["name"], oid))
        found.sort()
        return [list(pair) for pair in found[:limit]]

    @api_function
    def get_witnesses(self, witness_ids):
        """``[witness | null]`` for ``1.6.N`` ids."""
        return self._objects_by_ids(witness_ids, "1.6", "witness")

    @api_function
    def get_witness_by_account(self, account_id_or_name):
        """The witness object of an account (name or id), or null;
        ``no such account`` for an unknown account."""
        account = get_account(self.chain.state, account_id_or_name)
        return self.chain.state.witness_of(account["id"])

    @api_function
    def lookup_witness_accounts(self, lower_bound_name, limit: int):
        """``[[account name, witness id], ...]`` by name from
        ``lower_bound_name``; ``limit`` <= ``api-limit-lookup-witness-accounts``
        (1000)."""
        return self._lookup_by_name("1.6", "witness_account", lower_bound_name, limit,
                                    self.node.limits.lookup_witness_accounts)

    @api_function
    def get_witness_count(self):
        """Number of witness objects."""
        return len(self.chain.state.ids_of_type("1.6."))

    @api_function
    def get_committee_members(self, committee_member_ids):
        """``[committee member | null]`` for ``1.5.N`` ids."""
        return self._objects_by_ids(committee_member_ids, "1.5", "committee member")

    @api_function
    def get_committee_member_by_account(self, account_id_or_name):
        """The committee member object of an account, or null."""
        state = self.chain.state
        account = get_account(state, account_id_or_name)
        cid = state.committee_member_by_account.get(account["id"])
        return state.objects.get(cid) if cid else None

    @api_function
    def lookup_committee_member_accounts(self, lower_bound_name, limit: int):
        """``[[account name, committee member id], ...]`` by name."""
        return self._lookup_by_name("1.5", "committee_member_account", lower_bound_name,
                                    limit, self.node.limits.lookup_committee_member_accounts)

    @api_function
    def get_committee_count(self):
        """Number of committee member objects."""
        return len(self.chain.state.ids_of_type("1.5."))

    # -- workers -----------------------------------------------------------------

    @api_function
    def get_all_workers(self, is_expired: bool | None = None):
        """Worker objects ``1.14.N``: all by id, or with ``is_expired``
        true those whose ``work_end_date`` is at or before the head block
        time, false the others, by end date then id."""
        workers = objects_of_kind(self.chain.state, "1.14")
        expired = optional_bool(is_expired, "is_expired")
        if expired is None:
            return workers
        now = self.chain.head_block_time
        chosen = [w for w in workers if (w["work_end_date"] <= now) == expired]
        chosen.sort(key=lambda w: (w["work_end_date"], id_key(w["id"])))
        return chosen

    @api_function
    def get_workers_by_account(self, account_id_or_name):
        """The account's worker objects by id."""
        account = get_account(self.chain.state, account_id_or_name)
        return matching(self.chain.state, "1.14", worker_account=account["id"])

    @api_function
    def get_worker_count(self):
        """Number of worker objects."""
        return len(objects_of_kind(self.chain.state, "1.14"))

    # -- votes -------------------------------------------------------------------

    @api_function
    def lookup_vote_ids(self, votes):
        """Objects voted for by ``"type:instance"`` vote ids (committee
        members, witnesses, workers), null when unknown.  At most
        ``api-limit-lookup-vote-ids`` (1000) ids."""
        votes = require_list(votes, "votes")
        check_count(len(votes), self.node.limits.lookup_vote_ids, "votes")
        return vote_objects(self.chain.state, votes)
