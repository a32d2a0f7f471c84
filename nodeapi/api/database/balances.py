"""database API, graphene section "Balances": what accounts hold, their
vesting balances and the unclaimed genesis balances (a section of
:class:`nodeapi.api.database.DatabaseApi`).

Graphene reference: bitshares-core libraries/app/database_api.cpp section
"Balances" (``get_account_balances``, ``get_named_account_balances``,
``get_balance_objects``, ``get_vesting_balances``).  Account arguments
accept a name or a ``1.2.N`` id.  Vesting balances are the 1.13.N objects
maintenance creates for cashback (:mod:`nodeapi.chain.fees`).
"""

from nodeapi.api.arguments import check_count, id_key, parse_object_id, require_list, typed_id
from nodeapi.api.base import Section, api_function
from nodeapi.api.lookup import get_account
from nodeapi.errors import ApiAssert, ApiError
from nodeapi.protocol.times import parse_time
from nodeapi.protocol.asset import amount_of, asset


def vesting_balances_of(state, account_id: str) -> list:
    """The 1.13.N vesting balance objects of account ``account_id`` in id
    order (graphene ``vesting_balance_index`` ``by_account``)."""
    objects = state.objects
    return [objects[i] for i in state.ids_of_type("1.13.") if objects[i]["owner"] == account_id]


class Balances(Section):
    """Account balances, vesting balances, genesis balance objects."""

    @api_function
    def get_account_balances(self, account_name_or_id, assets):
        """``[{amount, asset_id}]`` of the account: for each asset id of
        ``assets`` (ascending, each once; 0 when it holds none), or every
        balance it has when ``assets`` is empty.  At most
        ``api-limit-get-account-balances`` asset ids."""
        account = get_account(self.chain.state, account_name_or_id)
        asset_ids = {typed_id(a, "1.3", "asset id") for a in require_list(assets, "assets")}
        check_count(len(asset_ids), self.node.limits.get_account_balances,
                    "assets")
        state = self.chain.state
        if not asset_ids:
            return [asset(b["balance"], b["asset_type"])
                    for b in state.balances_of(account["id"])]
        return [asset(state.balance(account["id"], a), a)
                for a in sorted(asset_ids, key=id_key)]

    @api_function
    def get_vesting_balances(self, account_id_or_name):
        """The account's vesting balance objects ``1.13.N`` in id order
        (graphene ``database_api::get_vesting_balances``): ``[{id, owner,
        balance: {amount, asset_id}, policy: [1, {vesting_seconds,
        start_claim, coin_seconds_earned, coin_seconds_earned_last_update}],
        balance_type}]`` (``cdd_vesting_policy``; here the cashback balances
        maintenance creates).  Unknown account: :class:`ApiError`."""
        account = get_account(self.chain.state, account_id_or_name)
        return vesting_balances_of(self.chain.state, account["id"])

    @api_function
    def get_named_account_balances(self, name, assets):
        """Same as :meth:`get_account_balances` (graphene keeps both names)."""
        return self.get_account_balances(name, assets)

    @api_function
    def get_balance_objects(self, addrs):
        """Unclaimed genesis balance objects ``1.15.N`` owned by the given
        addresses (``TEST...`` address strings), by address then asset and
        id."""
        addrs = require_list(addrs, "addrs")
        check_count(len(addrs), self.node.limits.get_objects, "addresses")
        state = self.chain.state
        prefix = self.chain.address_prefix
        out = []
        for addr in addrs:
            if not isinstance(addr, str) or not addr.startswith(prefix):
                raise ApiError(f"Invalid address {addr!r}: expected a {prefix}... address")
            ids = state.genesis_balances_by_owner.get(addr, ())
            objs = [state.objects[i] for i in ids]
            objs.sort(key=lambda o: (id_key(o["balance"]["asset_id"]), id_key(o["id"])))
            out.extend(objs)
        return out

    @api_function
    def get_vested_balances(self, objs):
        """``[{amount, asset_id}]``: what each genesis balance object
        ``1.15.N`` allows to claim at the head block time (graphene
        ``balance_object::available``: the whole balance, or under a
        ``linear_vesting_policy`` the vested part not yet withdrawn).

        :raises ApiAssert: an unknown id (graphene's ``obj(_db)``: the
            index's ``FC_ASSERT``, "Unable to find Object ${id}"), or an id
            of another type (``balance_id_type``'s conversion asserts it).
        :raises ApiError: not a list, not an object id."""
        state = self.chain.state
        now = self.chain.head_block_time
        out = []
        for oid in require_list(objs, "objs"):
            oid = parse_object_id(oid, "balance id")
            if not oid.startswith("1.15."):
                raise ApiAssert(f"Assert Exception: id.is<balance_id_type>(): Invalid id "
                                f"{oid}: not a balance id 1.15.N")
            obj = state.objects.get(oid)
            if obj is None:
                error = ApiAssert(f"Assert Exception: maybe_found != nullptr: Unable to find "
                                  f"Object {oid}")
                error.fc_format = "maybe_found != nullptr: Unable to find Object ${id}"
                error.details = {"id": oid}
                raise error
            out.append(asset(_available(obj, now), obj["balance"]["asset_id"]))
        return out


def _available(obj: dict, now: int) -> int:
    """graphene ``balance_object::available(now)`` in satoshis."""
    balance = amount_of(obj["balance"])
    policy = obj.get("vesting_policy")
    if not policy:
        return balance
    begin_balance = int(policy["begin_balance"])
    elapsed = now - parse_time(policy["begin_timestamp"])
    if elapsed <= 0 or elapsed < int(policy["vesting_cliff_seconds"]):
        return 0
    duration = int(policy["vesting_duration_seconds"])
    vested = begin_balance if elapsed >= duration else begin_balance * elapsed // duration
    return max(vested - (begin_balance - balance), 0)
