"""Witness and committee member evaluators, and the account vote checks.

Graphene reference: libraries/chain/witness_evaluator.cpp,
committee_member_evaluator.cpp and account_evaluator.cpp
(``verify_account_votes``).  A new witness 1.6.N or committee member 1.5.N
takes the next vote id instance of global properties'
``next_available_vote_id`` (one sequence over all vote types), written
``"type:instance"`` (type 1 witness, 0 committee) as graphene does.  Each
account has at most one of each (graphene's unique ``by_account`` indexes).
"""

from nodeapi.chain.errors import InvalidOperation
from nodeapi.chain.evaluators.context import VOID, ApplyContext
from nodeapi.protocol.config import MAX_TIME, PROXY_TO_SELF_ACCOUNT


def _lifetime_member(ctx: ApplyContext, account_id: str) -> None:
    acc = ctx.state.require(account_id)
    if acc["membership_expiration_date"] != MAX_TIME:
        raise InvalidOperation(f"Account {acc['name']} is not a lifetime member")


def _next_vote_id(ctx: ApplyContext, kind: int) -> str:
    gpo = ctx.state.modify("2.0.0")
    instance = int(gpo["next_available_vote_id"])
    gpo["next_available_vote_id"] = instance + 1
    return f"{kind}:{instance}"


def witness_create(ctx: ApplyContext, data: dict) -> list:
    """witness_create (20): a witness 1.6.N of a lifetime member with
    ``block_signing_key`` and ``url``; result ``[1, "1.6.N"]``.

    :raises InvalidOperation: not a lifetime member, or already a witness."""
    account = data["witness_account"]
    _lifetime_member(ctx, account)
    if account in ctx.state.witness_by_account:
        raise InvalidOperation(f"Account {account} already has witness "
                               f"{ctx.state.witness_by_account[account]}")
    wit = ctx.state.create("1.6", {
        "witness_account": account, "last_aslot": 0, "signing_key": data["block_signing_key"],
        "vote_id": _next_vote_id(ctx, 1), "total_votes": 0, "url": data["url"],
        "total_missed": 0, "last_confirmed_block_num": 0})
    return [1, wit["id"]]


def witness_update(ctx: ApplyContext, data: dict) -> list:
    """witness_update (21): ``new_url`` / ``new_signing_key`` of the witness
    ``witness`` owned by ``witness_account``.

    :raises UnknownObject: no such witness.
    :raises InvalidOperation: the witness belongs to another account."""
    wit = ctx.state.require(data["witness"])
    if wit["witness_account"] != data["witness_account"]:
        raise InvalidOperation(f"Witness {wit['id']} belongs to {wit['witness_account']}, "
                               f"not {data['witness_account']}")
    wit = ctx.state.modify(wit["id"])
    if data.get("new_url") is not None:
        wit["url"] = data["new_url"]
    if data.get("new_signing_key") is not None:
        wit["signing_key"] = data["new_signing_key"]
    return VOID


def committee_member_create(ctx: ApplyContext, data: dict) -> list:
    """committee_member_create (29): a committee member 1.5.N of a lifetime
    member; result ``[1, "1.5.N"]``.

    :raises InvalidOperation: not a lifetime member, or already a member."""
    account = data["committee_member_account"]
    _lifetime_member(ctx, account)
    if account in ctx.state.committee_member_by_account:
        raise InvalidOperation(f"Account {account} already has committee member "
                               f"{ctx.state.committee_member_by_account[account]}")
    member = ctx.state.create("1.5", {
        "committee_member_account": account, "vote_id": _next_vote_id(ctx, 0),
        "total_votes": 0, "url": data["url"]})
    return [1, member["id"]]


def committee_member_update(ctx: ApplyContext, data: dict) -> list:
    """committee_member_update (30): ``new_url`` of the member.

    :raises UnknownObject: no such committee member.
    :raises InvalidOperation: it belongs to another account."""
    member = ctx.state.require(data["committee_member"])
    if member["committee_member_account"] != data["committee_member_account"]:
        raise InvalidOperation(
            f"Committee member {member['id']} belongs to {member['committee_member_account']}"
            f", not {data['committee_member_account']}")
    if data.get("new_url") is not None:
        ctx.state.modify(member["id"])["url"] = data["new_url"]
    return VOID


def verify_account_votes(state, options: dict) -> None:
    """graphene ``verify_account_votes`` (the state part of the account
    options checks): ``num_witness`` / ``num_committee`` at most
    ``maximum_witness_count`` / ``maximum_committee_count``, an existing
    ``voting_account``, and each vote naming an existing committee member
    (type 0), witness (type 1) or worker (type 2, its vote for or against).

    :raises InvalidOperation: with graphene's texts."""
    params = state.objects["2.0.0"]["parameters"]
    if int(options["num_witness"]) > int(params["maximum_witness_count"]):
        raise InvalidOperation("Voted for more witnesses than currently allowed "
                               f"({params['maximum_witness_count']})")
    if int(options["num_committee"]) > int(params["maximum_committee_count"]):
        raise InvalidOperation("Voted for more committee members than currently allowed "
                               f"({params['maximum_committee_count']})")
    if options["voting_account"] not in state.objects:
        raise InvalidOperation("Invalid proxy account specified.")
    votes = options.get("votes", [])
    if not votes:
        return
    existing = {state.objects[oid]["vote_id"]
                for kind in ("1.5.", "1.6.") for oid in state.ids_of_type(kind)}
    for oid in state.ids_of_type("1.14."):  # a worker: its for and against ids
        existing.add(state.objects[oid]["vote_for"])
        existing.add(state.objects[oid]["vote_against"])
    limit = int(state.objects["2.0.0"]["next_available_vote_id"])
    for vote in votes:
        kind, instance = (int(x) for x in vote.split(":"))
        if instance >= limit or f"{kind}:{instance}" not in existing:
            raise InvalidOperation(f"Can not vote for {vote} which does not exist.")


def num_committee_voted(options: dict) -> int:
    """graphene ``account_options::num_committee_voted``: committee votes of
    an account voting directly (0 when it has a proxy)."""
    if options["voting_account"] != PROXY_TO_SELF_ACCOUNT:
        return 0
    return sum(1 for v in options.get("votes", []) if v.split(":")[0] == "0")


def is_voting(options: dict) -> bool:
    """graphene ``account_options::is_voting``: a proxy or some votes."""
    return options["voting_account"] != PROXY_TO_SELF_ACCOUNT or bool(options.get("votes"))

