"""Account evaluators: account_create (5), account_update (6),
account_whitelist (7), account_upgrade (8).

Reference: graphene libraries/chain/account_evaluator.cpp.
"""

import re

from nodeapi.chain.errors import InvalidOperation
from nodeapi.chain.evaluators import EVALUATORS, VOID, ApplyContext
from nodeapi.chain.genesis import MAX_TIME, format_time, make_lifetime_member, new_account

_NAME = re.compile(r"^[a-z][a-z0-9-]{1,61}[a-z0-9](\.[a-z][a-z0-9-]{1,61}[a-z0-9])*$")
ONE_YEAR = 365 * 24 * 3600


def _check_authority(ctx: ApplyContext, auth: dict, what: str) -> None:
    for aid, _w in auth.get("account_auths", []):
        ctx.state.require(aid)
    total = sum(w for _k, w in auth.get("key_auths", [])) + sum(
        w for _a, w in auth.get("account_auths", []))
    if auth["weight_threshold"] <= 0 or total < auth["weight_threshold"]:
        raise InvalidOperation(f"{what} authority can never be satisfied")


def _is_lifetime(acc: dict) -> bool:
    return acc["membership_expiration_date"] == MAX_TIME


def account_create(ctx: ApplyContext, data: dict) -> list:
    """account_create (5): a new account 1.2.N with statistics 2.7.N;
    result ``[1, "1.2.N"]``."""
    state = ctx.state
    name = data["name"]
    if not _NAME.match(name):
        raise InvalidOperation(f"Invalid account name {name!r}")
    if name in state.account_by_name:
        raise InvalidOperation(f"Account name {name!r} is already taken")
    registrar = state.require(data["registrar"])
    referrer = state.require(data["referrer"])
    if not _is_lifetime(registrar):
        raise InvalidOperation("Only lifetime members may register an account")
    if not _is_lifetime(referrer) and referrer["membership_expiration_date"] < format_time(
            ctx.now):
        raise InvalidOperation("The referrer must be a member")
    pct = int(data.get("referrer_percent", 0))
    if not 0 <= pct <= 10000:
        raise InvalidOperation("referrer_percent must be within 0..10000")
    _check_authority(ctx, data["owner"], "Owner")
    _check_authority(ctx, data["active"], "Active")
    opts = data["options"]
    acc = new_account(state, name, data["owner"], data["active"], opts["memo_key"],
                      registrar["id"], referrer["id"], ctx.now, ctx.block_num)
    acc = state.modify(acc["id"])
    old = dict(acc)
    acc["options"] = {k: opts.get(k, v) for k, v in acc["options"].items()}
    acc["lifetime_referrer"] = referrer["lifetime_referrer"]
    acc["lifetime_referrer_fee_percentage"] = referrer["lifetime_referrer_fee_percentage"]
    acc["referrer_rewards_percentage"] = pct
    state.reindex(acc, old)
    dgp = state.modify("2.1.0")
    dgp["accounts_registered_this_interval"] += 1
    return [1, acc["id"]]


def account_update(ctx: ApplyContext, data: dict) -> list:
    """account_update (6): replace owner, active and/or options."""
    state = ctx.state
    state.require(data["account"])
    acc = state.modify(data["account"])
    old = dict(acc)
    if "owner" in data:
        _check_authority(ctx, data["owner"], "Owner")
        acc["owner"] = data["owner"]
    if "active" in data:
        _check_authority(ctx, data["active"], "Active")
        acc["active"] = data["active"]
    if "new_options" in data:
        opts = data["new_options"]
        state.require(opts["voting_account"])
        acc["options"] = {k: opts.get(k, v) for k, v in acc["options"].items()}
    state.reindex(acc, old)
    return VOID


def account_whitelist(ctx: ApplyContext, data: dict) -> list:
    """account_whitelist (7): ``new_listing`` bit 1 white, bit 2 black."""
    state = ctx.state
    who, listed = data["authorizing_account"], data["account_to_list"]
    state.require(who)
    state.require(listed)
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
        key = lambda a: int(a.rsplit(".", 1)[1])  # noqa: E731
        target[on_target] = sorted(t, key=key)
        auth[on_auth] = sorted(s, key=key)
    return VOID


def account_upgrade(ctx: ApplyContext, data: dict) -> list:
    """account_upgrade (8): lifetime membership, or one more year."""
    state = ctx.state
    acc = state.require(data["account_to_upgrade"])
    if _is_lifetime(acc):
        raise InvalidOperation(f"{acc['name']} is already a lifetime member")
    if data.get("upgrade_to_lifetime_member"):
        make_lifetime_member(state, acc["id"])
    else:
        acc = state.modify(acc["id"])
        start = max(ctx.now, 0)
        acc["membership_expiration_date"] = format_time(start + ONE_YEAR)
        acc["referrer"] = acc["registrar"] = acc["lifetime_referrer"] = acc["id"]
    return VOID


EVALUATORS.update({5: account_create, 6: account_update, 7: account_whitelist,
                   8: account_upgrade})
