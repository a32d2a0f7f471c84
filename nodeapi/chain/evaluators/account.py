"""Account evaluators: account_create (5), account_update (6),
account_whitelist (7), account_upgrade (8).

Reference: graphene libraries/chain/account_evaluator.cpp.
"""

from nodeapi.protocol.ids import instance_number
from nodeapi.protocol.validation_checks import is_valid_name
from nodeapi.protocol.config import COMMITTEE_ACCOUNT, GRAPHENE_100_PERCENT, MAX_TIME, TEMP_ACCOUNT
from nodeapi.chain.special_authority import apply_extensions, check_extensions
from nodeapi.chain.errors import InvalidOperation, UnknownObject, fc_assert
from nodeapi.chain.fees import process_account_fees, scale_account_fee
from nodeapi.chain.evaluators.context import VOID, ApplyContext
from nodeapi.chain.evaluators.governance import (
    is_voting, num_committee_voted, verify_account_votes)
from nodeapi.chain.genesis import make_lifetime_member, new_account
from nodeapi.errors import ProtocolError
from nodeapi.protocol.keys import public_key_bytes


def _canonical_map(entries: list, sort_key) -> list:
    """``[[k, w], ...]`` as graphene's flat_map holds it: sorted by
    ``sort_key``, a repeated key keeps its first weight (fc inserts)."""
    seen: dict = {}
    for k, w in entries:
        seen.setdefault(k, int(w))
    return [[k, seen[k]] for k in sorted(seen, key=sort_key)]


def _check_authority(ctx: ApplyContext, auth: dict, what: str) -> dict:
    """Validate a new owner/active authority and return it in canonical form.

    - graphene ``account_create/update_operation::validate``: at least one
      entry (``num_auths() != 0``), no ``address_auths``, not impossible
      (the weights sum to at least ``weight_threshold``; 0 is allowed);
    - graphene ``verify_authority_accounts`` (account_evaluator.cpp): at
      most ``maximum_authority_membership`` entries, every account of
      ``account_auths`` exists.

    The result orders ``key_auths`` by compressed key bytes (graphene
    ``pubkey_comparator``) and ``account_auths`` by instance, as graphene
    stores and serializes them; :func:`nodeapi.chain.authority.verify_authority`
    walks them in that order.

    :raises InvalidOperation: a validate() rule or the membership limit.
    :raises UnknownObject: an ``account_auths`` account does not exist.
    """
    if auth.get("address_auths"):
        raise InvalidOperation(f"{what} authority may not have address_auths")
    try:
        keys = _canonical_map(auth.get("key_auths", []), lambda k: public_key_bytes(k))
    except ProtocolError as exc:
        raise InvalidOperation(f"{what} authority: {exc}") from None
    for aid, _w in auth.get("account_auths", []):
        if not (isinstance(aid, str) and aid.startswith("1.2.")
                and aid[4:].isdigit()):
            raise InvalidOperation(f"{what} authority: {aid!r} is not an account id")
    accounts = _canonical_map(auth.get("account_auths", []), instance_number)
    threshold = int(auth["weight_threshold"])
    members = len(keys) + len(accounts)
    if members == 0:
        raise InvalidOperation(f"{what} authority has no keys or accounts")
    if sum(w for _k, w in keys) + sum(w for _a, w in accounts) < threshold:
        raise InvalidOperation(f"{what} authority can never be satisfied (impossible threshold)")
    limit = int(ctx.state.objects["2.0.0"]["parameters"]["maximum_authority_membership"])
    if members > limit:
        raise InvalidOperation(
            f"{what} authority has {members} members: maximum_authority_membership "
            f"{limit} exceeded")
    for aid, _w in accounts:
        if aid not in ctx.state.objects:
            raise UnknownObject(f"Account {aid} specified in {what.lower()} authority "
                                "does not exist")
    return {"weight_threshold": threshold, "account_auths": accounts, "key_auths": keys,
            "address_auths": []}


def _is_lifetime(acc: dict) -> bool:
    return acc["membership_expiration_date"] == MAX_TIME


def account_create(ctx: ApplyContext, data: dict) -> list:
    """account_create (5): a new account 1.2.N with its statistics object;
    result ``[1, "1.2.N"]``.

    graphene ``account_create_operation::validate`` and
    ``account_create_evaluator``: valid and free name, lifetime-member
    registrar, member referrer (lifetime, or annual not yet expired),
    existing voting account, owner/active as :func:`_check_authority`
    (stored in canonical order).  The new account's fee shares are the
    chain parameters' ``network_percent_of_fee`` and
    ``lifetime_referrer_percent_of_fee``, its lifetime referrer the
    referrer's; the registration counts in
    ``accounts_registered_this_interval`` and may scale the registration
    fee (:func:`nodeapi.chain.fees.scale_account_fee`).

    :raises InvalidOperation, UnknownObject: a rule above is broken."""
    state = ctx.state
    name = data["name"]
    if not is_valid_name(name):
        raise InvalidOperation(f"Invalid account name {name!r}")
    registrar = state.require(data["registrar"])
    referrer = state.require(data["referrer"])
    fc_assert(_is_lifetime(registrar), "fee_paying_account->is_lifetime_member()",
              "Only Lifetime members may register an account.")
    fc_assert(_is_lifetime(referrer) or referrer["membership_expiration_date"] > ctx.now,
              "op.referrer(d).is_member(d.head_block_time())",
              "The referrer must be either a lifetime or annual subscriber.")
    pct = int(data.get("referrer_percent", 0))
    if not 0 <= pct <= GRAPHENE_100_PERCENT:
        raise InvalidOperation(f"referrer_percent must be within 0..{GRAPHENE_100_PERCENT}")
    owner = _check_authority(ctx, data["owner"], "Owner")
    active = _check_authority(ctx, data["active"], "Active")
    check_extensions(state, data)
    verify_account_votes(state, data["options"])
    fc_assert(name not in state.account_by_name,
              "current_account_itr == acnt_indx.indices().get<by_name>().end()",
              f"Account '{name}' already exists.")
    opts = data["options"]
    params = ctx.parameters
    acc = new_account(state, name, owner, active, opts["memo_key"],
                      registrar["id"], referrer["id"], ctx.block_time, ctx.block_num,
                      int(params["network_percent_of_fee"]),
                      int(params["lifetime_referrer_percent_of_fee"]),
                      lifetime_referrer=referrer["lifetime_referrer"])
    acc = state.modify(acc["id"])
    old = dict(acc)
    acc["options"] = {k: opts.get(k, v) for k, v in acc["options"].items()}
    acc["referrer_rewards_percentage"] = pct
    acc["num_committee_voted"] = num_committee_voted(acc["options"])
    apply_extensions(state, acc, data, created=True)
    state.reindex(acc, old)
    state.modify(acc["statistics"])["is_voting"] = is_voting(acc["options"])
    dgp = state.modify("2.1.0")
    dgp["accounts_registered_this_interval"] += 1
    scale_account_fee(state)
    return [1, acc["id"]]


def account_update(ctx: ApplyContext, data: dict) -> list:
    """account_update (6): replace owner, active and/or options.

    graphene ``account_update_operation::validate`` (not the temp or the
    committee account; authorities as :func:`_check_authority`) and
    ``account_update_evaluator``: new options pass
    :func:`~nodeapi.chain.evaluators.governance.verify_account_votes`; a
    changed proxy or vote list sets statistics ``is_voting`` and
    ``last_vote_time`` (the vote tally's decay starts from it)."""
    state = ctx.state
    if data["account"] in (TEMP_ACCOUNT, COMMITTEE_ACCOUNT):
        raise InvalidOperation(f"account_update may not update {data['account']}")
    owner = _check_authority(ctx, data["owner"], "Owner") if "owner" in data else None
    active = _check_authority(ctx, data["active"], "Active") if "active" in data else None
    state.require(data["account"])
    check_extensions(state, data)
    acc = state.modify(data["account"])
    old = dict(acc)
    if owner is not None:
        acc["owner"] = owner
        acc["top_n_control_flags"] = 0
    if active is not None:
        acc["active"] = active
        acc["top_n_control_flags"] = 0
    apply_extensions(state, acc, data, created=False)
    if "new_options" in data:
        opts = data["new_options"]
        verify_account_votes(state, opts)
        if (opts["voting_account"] != old["options"]["voting_account"]
                or opts.get("votes", []) != old["options"]["votes"]):
            stats = state.modify(acc["statistics"])
            stats["is_voting"] = is_voting(opts)
            stats["last_vote_time"] = ctx.now
        acc["options"] = {k: opts.get(k, v) for k, v in acc["options"].items()}
        acc["num_committee_voted"] = num_committee_voted(acc["options"])
    state.reindex(acc, old)
    return VOID


def account_whitelist(ctx: ApplyContext, data: dict) -> list:
    """account_whitelist (7): ``new_listing`` bit 1 white, bit 2 black.
    Unless the chain parameters' ``allow_non_member_whitelists`` is set,
    the authorizing account must be a lifetime member (graphene
    ``account_whitelist_evaluator::do_evaluate``, its text)."""
    state = ctx.state
    who, listed = data["authorizing_account"], data["account_to_list"]
    authorizing = state.require(who)
    state.require(listed)
    if not ctx.parameters.get("allow_non_member_whitelists"):
        fc_assert(_is_lifetime(authorizing), "o.authorizing_account(d).is_lifetime_member()",
                  "The authorizing account must be a lifetime member.")
    listing = int(data["new_listing"])
    if not 0 <= listing <= 3:
        raise InvalidOperation("new_listing must be 0..3")
    target = state.modify(listed)
    auth = state.modify(who)
    for bit, on_target, on_auth in ((1, "whitelisting_accounts", "whitelisted_accounts"),
                                    (2, "blacklisting_accounts", "blacklisted_accounts")):
        t = [a for a in target[on_target] if a != who]
        s = [a for a in auth[on_auth] if a != listed]
        if listing & bit:
            t.append(who)
            s.append(listed)
        key = lambda a: instance_number(a)  # noqa: E731
        target[on_target] = sorted(t, key=key)
        auth[on_auth] = sorted(s, key=key)
    return VOID


def account_upgrade(ctx: ApplyContext, data: dict) -> list:
    """account_upgrade (8): lifetime membership only.

    graphene ``account_upgrade_evaluator``: a lifetime member cannot be
    upgraded; ``upgrade_to_lifetime_member`` first pays out the account's
    pending fees, the upgrade fee among them, to its registrar and
    referrers as they are before the upgrade
    (:func:`nodeapi.chain.fees.process_account_fees`; graphene calls
    ``process_fees`` in ``do_apply``, after ``pay_fee`` booked the fee), so
    the upgrader gets no cashback of its own upgrade fee; it then makes the
    account its own
    registrar, referrer and lifetime referrer with
    ``membership_expiration_date`` at the maximum time.  Annual membership
    (a first year for a basic account, or one more year for an unexpired
    annual member) asserts ``head_block_time <= HARDFORK_613_TIME``
    (2016-03-23, bitshares-core #613 "Deprecate annual membership"); this
    chain applies current bitshares-core rules from genesis (it has no
    hardfork schedule), so every annual upgrade is rejected.

    :raises InvalidOperation: already a lifetime member, or an annual upgrade.
    """
    state = ctx.state
    acc = state.require(data["account_to_upgrade"])
    if _is_lifetime(acc):
        raise InvalidOperation(f"Unable to upgrade account {acc['name']!r}: "
                               "already a lifetime member")
    # an annual upgrade or renewal: account_evaluator.cpp do_apply asserts
    # FC_ASSERT( d.head_block_time() <= HARDFORK_613_TIME ) on both paths
    fc_assert(data.get("upgrade_to_lifetime_member"), "d.head_block_time() <= HARDFORK_613_TIME")
    process_account_fees(state, acc["id"], ctx.now)
    make_lifetime_member(state, acc["id"])
    return VOID
