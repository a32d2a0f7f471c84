"""Vesting balances 1.13.N: their policies, deposits and withdrawals.

Graphene reference: libraries/chain/vesting_balance_object.cpp (the
``linear_vesting_policy``, ``cdd_vesting_policy`` and
``instant_vesting_policy`` rules) and db_balance.cpp
(``deposit_lazy_vesting``).  A vesting balance is stored in graphene's wire
shape: ``{"id", "owner", "balance": {"amount", "asset_id"}, "policy": [tag,
{...}], "balance_type"}`` with policy tags 0 linear (``begin_timestamp``,
``vesting_cliff_seconds``, ``vesting_duration_seconds``,
``begin_balance``), 1 cdd / coin-days-destroyed (``vesting_seconds``,
``start_claim``, ``coin_seconds_earned`` - a 128-bit value written as a
decimal string - ``coin_seconds_earned_last_update``), 2 instant (``{}``).
``balance_type`` is ``unspecified``, ``cashback``, ``worker``, ``witness``
or ``market_fee_sharing``.  Times are integer seconds since the epoch.
"""

from nodeapi.protocol.asset import amount_of, asset, core

LINEAR, CDD, INSTANT = 0, 1, 2


def _earned(policy: dict, balance: int, now: int) -> int:
    """graphene ``cdd_vesting_policy::compute_coin_seconds_earned``: the
    coin-seconds earned until ``now``, capped at ``balance`` times
    ``max(vesting_seconds, 1)``."""
    delta = max(now - policy["coin_seconds_earned_last_update"], 0)
    cap = balance * max(int(policy["vesting_seconds"]), 1)
    return min(int(policy["coin_seconds_earned"]) + balance * delta, cap)


def allowed_withdraw(vbo: dict, now: int) -> int:
    """What the owner may withdraw from vesting balance ``vbo`` at ``now``
    (graphene ``get_allowed_withdraw`` of its policy), in satoshis:

    - linear: nothing before ``begin_timestamp`` + ``vesting_cliff_seconds``,
      then ``begin_balance * elapsed / vesting_duration_seconds`` (all of
      it once the duration passed) minus what was already withdrawn
      (``begin_balance`` - balance);
    - cdd: nothing until after ``start_claim``, then the coin-seconds earned
      divided by ``max(vesting_seconds, 1)``;
    - instant: the whole balance."""
    tag, policy = vbo["policy"]
    balance = amount_of(vbo["balance"])
    if tag == INSTANT:
        return balance
    if tag == CDD:
        if now <= policy["start_claim"]:
            return 0
        return _earned(policy, balance, now) // max(int(policy["vesting_seconds"]), 1)
    elapsed = now - policy["begin_timestamp"]
    if elapsed <= 0 or elapsed < int(policy["vesting_cliff_seconds"]):
        return 0
    begin = int(policy["begin_balance"])
    duration = int(policy["vesting_duration_seconds"])
    vested = begin * elapsed // duration if elapsed < duration else begin
    return vested - (begin - balance)


def _cdd_updated(policy: dict, balance: int, now: int) -> dict:
    """graphene ``update_coin_seconds_earned``: the policy with the
    coin-seconds earned until ``now`` booked."""
    return dict(policy, coin_seconds_earned=str(_earned(policy, balance, now)),
                coin_seconds_earned_last_update=now)


def withdraw(state, vb_id: str, amount: int, now: int) -> None:
    """graphene ``vesting_balance_object::withdraw``: take ``amount``
    (<= :func:`allowed_withdraw`, checked by the caller) out of ``vb_id``; a
    cdd policy spends ``amount * max(vesting_seconds, 1)`` coin-seconds."""
    vbo = state.objects[vb_id]
    tag, policy = vbo["policy"]
    balance = amount_of(vbo["balance"])
    if tag == CDD:
        policy = _cdd_updated(policy, balance, now)
        needed = amount * max(int(policy["vesting_seconds"]), 1)
        policy["coin_seconds_earned"] = str(int(policy["coin_seconds_earned"]) - needed)
    vbo = state.modify(vb_id)
    vbo["balance"] = asset(balance - amount, vbo["balance"]["asset_id"])
    vbo["policy"] = [tag, policy]


def deposit(state, vb_id: str, amount: int, now: int) -> None:
    """graphene ``vesting_balance_object::deposit``: add ``amount`` core
    satoshis to ``vb_id``; a cdd policy first books the coin-seconds earned
    until ``now`` (the deposit itself earns from now on)."""
    vbo = state.objects[vb_id]
    tag, policy = vbo["policy"]
    balance = amount_of(vbo["balance"])
    if tag == CDD:
        policy = _cdd_updated(policy, balance, now)
    vbo = state.modify(vb_id)
    vbo["balance"] = asset(balance + amount, vbo["balance"]["asset_id"])
    vbo["policy"] = [tag, policy]


def deposit_lazy_vesting(state, vb_id: str | None, amount: int, vesting_seconds: int,
                         balance_type: str, owner: str, require_vesting: bool,
                         now: int) -> str | None:
    """graphene ``database::deposit_lazy_vesting``: deposit ``amount`` core
    satoshis into ``vb_id`` when it is a cdd balance of ``owner`` with
    ``vesting_seconds`` (``require_vesting`` False: the amount is vested at
    once - its coin-seconds are credited in full); otherwise create a new
    cdd balance 1.13.N of ``balance_type``.  Returns the new balance's id,
    or None when none was created (``amount`` 0 or deposited)."""
    if amount == 0:
        return None
    vbo = state.objects.get(vb_id) if vb_id else None
    if (vbo is not None and vbo["owner"] == owner and vbo["policy"][0] == CDD
            and int(vbo["policy"][1]["vesting_seconds"]) == vesting_seconds):
        balance = amount_of(vbo["balance"])
        policy = _cdd_updated(vbo["policy"][1], balance, now)
        if not require_vesting:
            policy["coin_seconds_earned"] = str(int(policy["coin_seconds_earned"])
                                                + amount * max(vesting_seconds, 1))
        vbo = state.modify(vb_id)
        vbo["balance"] = core(balance + amount)
        vbo["policy"] = [CDD, policy]
        return None
    vbo = state.create("1.13", {
        "owner": owner,
        "balance": core(amount),
        "policy": [CDD, {"vesting_seconds": vesting_seconds,
                         "start_claim": 0,
                         "coin_seconds_earned": str(0 if require_vesting
                                                    else amount * vesting_seconds),
                         "coin_seconds_earned_last_update": now}],
        "balance_type": balance_type,
    })
    return vbo["id"]
