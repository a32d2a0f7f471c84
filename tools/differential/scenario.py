"""The seeded scenario generator of the differential runner: transactions
signed with known keys, built from what the chain holds now (read from the
reference), in valid forms and near-miss invalid ones.

A :class:`Scenario` keeps a model of what it made (accounts and their keys,
assets, orders, proposals, HTLCs, pools, funds, offers, deals, ...) and,
each block, :meth:`Scenario.batch` answers a list of :class:`Intent` (one
transaction each: wire-JSON operations, the keys that sign it, whether it
is a deliberate near miss, and what to remember when it is applied).  Every
choice comes from ``random.Random(seed)``, so a seed names one run.

Beside the random actions, *plans* (:data:`PLANS`, ``Scenario.plan_*``)
run scripted flows over many blocks, on a seeded schedule: margin calls
(MCFR, MSSR), black swans under each black swan response method with the
settlements, bids and revival after them, take-profit orders, white/black
lists, proposals with review periods, committee proposals across
maintenance intervals and custom authority operations (refused under
mainnet rules before BSIP 40), each with its near misses; what they saw
happen is counted in :attr:`Scenario.observed`.

Operation forms follow bitshares-core 7.0.2's ``FC_REFLECT`` of each
operation (wire JSON with the ``TEST`` prefix); preconditions that the
scenario knows it cannot meet are skipped, everything else goes to both
nodes' judgement, which is the point."""

import hashlib

import attr

from nodeapi.protocol.keys import PrivateKey, ripemd160
from nodeapi.protocol.times import format_time, parse_time

CORE = "1.3.0"
#: the genesis balance and the key that owns it (the bundled genesis)
GENESIS_BALANCE = "1.15.0"
GENESIS_AMOUNT = 10 ** 15
#: init0..init10: lifetime members with the development key
INIT_ACCOUNTS = tuple(f"1.2.{i}" for i in range(6, 17))
#: a UIA's issuer permissions: charge_market_fee, white_list, override_authority,
#: transfer_restricted, disable_confidential, lock_max_supply (types.hpp; none of
#: NON_UIA_ONLY_ISSUER_PERMISSION_MASK)
UIA_PERMISSIONS = 0x01 | 0x02 | 0x04 | 0x08 | 0x40 | 0x200
#: a key no account holds (the "missing authority" near miss)
STRANGER = PrivateKey.from_seed("differential-stranger")

#: operation types no scenario sends (account_transfer is not implemented by
#: bitshares-core; the blind transfers need range proofs)
NOT_SENT = frozenset({9, 39, 40, 41})
#: virtual operations: only ever sent as near misses (both must refuse)
VIRTUAL = (4, 42, 44, 46, 51, 53, 74)


class PlanGaveUp(Exception):
    """A plan waited too long for an object or a time: it ends."""


@attr.s(slots=True)
class Account:
    """An account the scenario holds the key of."""
    id = attr.ib()
    name = attr.ib()
    wif = attr.ib()
    pub = attr.ib()
    member = attr.ib(default=False)


@attr.s(slots=True)
class Intent:
    """One transaction to judge: ``ops`` (wire JSON, fees still zero),
    ``wifs`` (its signers), ``label`` (the action, e.g. ``transfer`` or
    ``transfer/insufficient``), ``bad`` (a deliberate near miss),
    ``mutate`` (a function applied to the signed-over transaction before
    signing, e.g. an expiration in the past), ``fee_asset`` and
    ``applied`` (called with the operation results once in a block)."""
    label = attr.ib()
    ops = attr.ib()
    wifs = attr.ib()
    bad = attr.ib(default=False)
    mutate = attr.ib(default=None)
    fee_asset = attr.ib(default=CORE)
    applied = attr.ib(default=None)


def amount(value, asset=CORE) -> dict:
    return {"amount": int(value), "asset_id": asset}


def price(base, quote) -> dict:
    return {"base": base, "quote": quote}


def key_authority(pub) -> dict:
    return {"weight_threshold": 1, "account_auths": [], "key_auths": [[pub, 1]],
            "address_auths": []}


def new_object_id(result):
    """The id an operation result names: ``[1, id]``, or the first new
    object of a generic (``[3, {...}]``) or extendable (``[5, {...}]``)
    result's ``new_objects``; else None."""
    if not isinstance(result, list) or len(result) != 2:
        return None
    kind, value = result
    if kind == 1:
        return value
    if kind in (3, 5) and isinstance(value, dict) and value.get("new_objects"):
        return value["new_objects"][0]
    return None


class Scenario:
    """The generator.  ``reference`` answers ``call(method, *params,
    api=...)`` (the reference node: state is read there); ``rng`` is a
    ``random.Random``; ``dev_wif`` the key of the init accounts."""

    def __init__(self, reference, rng, dev_wif, prefix="TEST"):
        self.ref = reference
        self.rng = rng
        self.dev_wif = dev_wif
        self.prefix = prefix
        dev_pub = PrivateKey.from_wif(dev_wif).public_key.to_str(prefix)
        self.dev_pub = dev_pub
        self.accounts = {i: Account(i, f"init{n}", dev_wif, dev_pub, True)
                         for n, i in enumerate(INIT_ACCOUNTS)}
        self.claimed = False
        self.names = 0
        self.assets = {}        # id -> {"symbol", "issuer", "kind", "flags"}
        self.objects = {kind: [] for kind in (
            "order", "proposal", "withdraw", "vesting", "htlc", "ticket", "pool",
            "samet", "offer", "deal", "authority", "worker", "witness", "committee")}
        self.head = None
        self._balances = {}
        self.rounds = 0
        #: what the plans saw happen on the reference (a margin call filled, a
        #: global settlement, a take-profit order, a maintenance ...): how often
        self.observed = {}
        #: plan name -> [the running generator or None, the round it starts
        #: next, tries left, its step waiting for room in a round or None]
        self.plans = {name: [None, first, PLAN_TRIES, None] for name, first, _ in PLANS}

    # -- state read from the reference --------------------------------------------

    def new_block(self, props):
        """Called with the reference's dynamic global properties before each
        batch: the head that transactions refer to; balances read anew."""
        if self.head and props["next_maintenance_time"] != self.head["next_maintenance_time"]:
            self.observe("maintenance")
        self.head = props
        self._balances = {}

    def observe(self, what):
        """Count one sighting of ``what`` (:attr:`observed`)."""
        self.observed[what] = self.observed.get(what, 0) + 1

    def bitasset(self, asset):
        """The reference's asset_bitasset_data_object of ``asset``."""
        dyn = self.ref.call("get_objects", [asset])[0]
        return self.ref.call("get_objects", [dyn["bitasset_data_id"]])[0]

    def observe_bitasset(self, tag, asset):
        """What a black swan response left on ``asset`` (its bitasset data
        and the settled debt's order on the book)."""
        data = self.bitasset(asset)
        if int(data["settlement_fund"]) > 0:
            self.observe(f"{tag}: globally settled")
        if int(data.get("individual_settlement_debt", 0)) > 0:
            self.observe(f"{tag}: individual settlement fund")
        if data["current_feed"]["settlement_price"] != data["median_feed"]["settlement_price"]:
            self.observe(f"{tag}: current feed capped")
        book = self.ref.call("get_limit_orders", asset, CORE, 100)
        if any(o.get("is_settled_debt") for o in book):
            self.observe(f"{tag}: settled debt order")
        if self.ref.call("get_collateral_bids", asset, 10, 0):
            self.observe(f"{tag}: collateral bids")

    def head_time(self) -> int:
        """The head block's time, seconds since the epoch."""
        return parse_time(self.head["time"])

    def balance(self, account, asset=CORE) -> int:
        key = (account, asset)
        if key not in self._balances:
            got = self.ref.call("get_account_balances", account, [asset])
            self._balances[key] = int(got[0]["amount"]) if got else 0
        return self._balances[key]

    def spend(self, account, asset, value):
        """What this batch has already promised out of ``account``'s balance."""
        self._balances[(account, asset)] = self.balance(account, asset) - value

    # -- choices ----------------------------------------------------------------------

    def pick_account(self, funded=True, exclude=()):
        pool = [a for a in self.accounts.values() if a.id not in exclude
                and (not funded or self.balance(a.id) > 10 ** 9)]
        return self.rng.choice(pool) if pool else None

    def pick(self, kind):
        items = self.objects[kind]
        return self.rng.choice(items) if items else None

    def share(self, account, asset=CORE, low=0.001, high=0.05):
        have = self.balance(account.id, asset)
        if have <= 0:
            return 0
        return max(1, int(have * self.rng.uniform(low, high)))

    def memo(self, frm, to) -> dict:
        return {"from": frm.pub, "to": to.pub, "nonce": self.rng.getrandbits(63),
                "message": self.rng.randbytes(
                    self.rng.choice((16, 32, 48))).hex()}

    def intent(self, label, ops, signers, **kw) -> Intent:
        return Intent(label, ops, [s.wif if isinstance(s, Account) else s for s in signers],
                      **kw)

    def near_miss(self, intent: Intent) -> Intent:
        """A near-miss form of a valid ``intent``: signed by a stranger,
        expired, paid in an asset without a fee pool, expiring too far
        ahead, or an ``extensions_type`` written as an object."""
        forms = ["missing_authority", "expired", "too_far", "no_fee_pool"]
        if isinstance(intent.ops[0][1].get("extensions"), list):
            forms.append("extensions_object")
        form = self.rng.choice(forms)
        intent.bad = True
        intent.label += "/" + form
        if form == "missing_authority":
            intent.wifs = [STRANGER.to_wif()]
        elif form == "expired":
            intent.mutate = lambda trx: trx.update(
                expiration=format_time(self.head_time() - 1))
        elif form == "extensions_object":
            # fc reads an extensions_type (a flat_set) only from an array
            intent.ops[0][1]["extensions"] = {}
        elif form == "too_far":
            intent.mutate = lambda trx: trx.update(
                expiration=format_time(self.head_time() + 86400 + 60))
        else:
            uias = [a for a, v in self.assets.items() if v["kind"] == "uia"]
            if uias:
                intent.fee_asset = self.rng.choice(uias)
            else:
                intent.wifs = [STRANGER.to_wif()]
        return intent

    # -- the batch ------------------------------------------------------------------

    def batch(self, size, limit=None):
        """About ``size`` intents for the next block, never more than
        ``limit`` (the run's transactions left; the first batch claims the
        genesis balance and upgrades nothing else): the plans' steps first
        (a step larger than ``limit`` waits), then random actions up to
        ``size``, at least one."""
        if not self.claimed:
            self.claimed = True
            claim = [37, {"fee": amount(0), "deposit_to_account": "1.2.6",
                          "balance_to_claim": GENESIS_BALANCE,
                          "balance_owner_key": self.dev_pub,
                          "total_claimed": amount(GENESIS_AMOUNT)}]
            bad = dict(claim[1], total_claimed=amount(GENESIS_AMOUNT + 1))
            return [Intent("balance_claim/too_much", [[37, bad]], [self.dev_wif], bad=True),
                    Intent("balance_claim", [claim], [self.dev_wif])]
        self.rounds += 1
        limit = size if limit is None else limit
        out = self.run_plans(limit)
        size = min(limit, max(size, len(out) + 1))
        tries = 0
        while len(out) < size and tries < size * 6:
            tries += 1
            name = self.rng.choices(ACTIONS, weights=[w for _, w in ACTIONS])[0][0]
            made = getattr(self, "act_" + name)()
            if made is None:
                continue
            if not made.bad and self.rng.random() < 0.12:
                made = self.near_miss(made)
            out.append(made)
        return out

    def run_plans(self, budget):
        """This round's intents of the plans (:data:`PLANS`), at most
        ``budget``: a plan due starts, a running one makes its next step (a
        step larger than what is left of the budget waits for a later
        round, whole); a plan that ends (or gives up waiting) starts again
        ``gap`` rounds later when it repeats; one that could not start
        tries again a few rounds later."""
        out = []
        for name, first, gap in PLANS:
            state = self.plans[name]
            if state[3] is not None:
                if len(state[3]) <= budget - len(out):
                    out.extend(state[3])
                    state[3] = None
                continue
            gen, due, tries, _ = state
            if gen is None:
                if self.rounds < due or tries <= 0:
                    continue
                gen = state[0] = getattr(self, "plan_" + name)()
                fresh = True
            else:
                fresh = False
            try:
                step = next(gen)
            except (StopIteration, PlanGaveUp):
                state[0] = None
                if fresh:
                    state[1], state[2] = self.rounds + 5, tries - 1
                else:
                    state[1] = self.rounds + gap if gap else 1 << 60
                continue
            step = [step] if isinstance(step, Intent) else list(step or ())
            if len(step) <= budget - len(out):
                out.extend(step)
            else:
                state[3] = step
        return out

    # -- plans: scripted flows over many blocks -----------------------------------
    #
    # A plan is a generator: each round it yields an Intent, a list of them, or
    # None (nothing this round: it waits for a block, a maintenance or an
    # object), and it ends when it returns.  Plans start on a seeded schedule
    # (PLANS) and run beside the random actions; they reach what random
    # actions do not (a margin call needs a feed that moves under a position,
    # a custom authority needs parameters a committee proposal set).

    def waiting(self, condition, rounds=60):
        """Yield None (nothing this round) until ``condition()`` holds;
        :class:`PlanGaveUp` after ``rounds`` rounds (what it waits for was
        refused, or never came)."""
        for _ in range(rounds):
            if condition():
                return
            yield None
        raise PlanGaveUp()

    def maintenance_passed(self):
        """A condition: true once a maintenance after now has run."""
        due = parse_time(self.head["next_maintenance_time"])
        return lambda: self.head_time() >= due and \
            parse_time(self.head["next_maintenance_time"]) > due

    def created(self, box):
        """An ``applied`` callback keeping the new object id in ``box``."""
        def applied(results):
            box.append(new_object_id(results[0]))
        return applied

    def sorted_ids(self, ids):
        """``ids`` (object ids) once each, by instance, as flat_sets sort."""
        return sorted(set(ids), key=lambda i: int(i.split(".")[2]))

    def plan_committee(self):
        """Votes for committee members and witnesses (init0), then a
        committee proposal of committee_member_update_global_parameters
        (witness pay, worker budget, the market fee network share and maker
        discount): refused without the review period or with a short one,
        approved by the committee members' accounts before the review, an
        approval refused in it, then at its expiration executed (when the
        committee account's authority is met) and applied by the next
        maintenance, or removed unexecuted.
        Custom authorities stay refused under mainnet rules
        (HARDFORK_BSIP_40_TIME is 2030-01-01): the same proposal setting
        ``custom_authority_options``, a proposed custom_authority_create,
        and a custom_authority_create are near misses."""
        init0 = self.accounts["1.2.6"]
        committee = [c["vote_id"] for c in self.ref.call(
            "lookup_vote_ids", [f"0:{i}" for i in range(30)]) if c]
        witnesses = [w["vote_id"] for w in self.ref.call(
            "lookup_vote_ids", [f"1:{i}" for i in range(30)]) if w]
        workers = [w["vote_for"] for w in self.ref.call("get_all_workers")][:3]
        chosen = self.rng.sample(committee, min(len(committee), self.rng.randint(5, 9)))
        wchosen = self.rng.sample(witnesses, min(len(witnesses), self.rng.randint(5, 11)))
        votes = sorted(chosen + wchosen + workers,
                       key=lambda v: (int(v.split(":")[0]), int(v.split(":")[1])))
        yield self.intent("plan/committee_vote", [[6, {
            "fee": amount(0), "account": init0.id, "new_options": {
                "memo_key": init0.pub, "voting_account": "1.2.5",
                "num_witness": len(wchosen), "num_committee": len(chosen),
                "votes": votes, "extensions": []}, "extensions": {}}]], [init0])
        yield from self.waiting(self.maintenance_passed())
        # the members' accounts approve; since HARDFORK_CORE_2262 only
        # tickets vote (a new ticket charges 15 days before it counts), so in
        # a run the committee account's active authority stays as the
        # genesis left it and the proposal expires unexecuted: an expired
        # committee proposal is what a run can show
        active = self.ref.call("get_objects", ["1.2.0"])[0]["active"]
        if not active["account_auths"]:
            self.observe("committee account without voted members")
        members = self.ref.call("get_global_properties")["active_committee_members"]
        approvers = self.sorted_ids(
            m["committee_member_account"] for m in self.ref.call("get_objects", members)
            if m and m["committee_member_account"] in self.accounts)
        params = self.ref.call("get_global_properties")["parameters"]
        review = int(params["committee_proposal_review_period"])
        params["witness_pay_per_block"] = self.rng.choice((500000, 2000000))
        params["worker_budget_per_day"] = str(self.rng.choice((10 ** 10, 10 ** 11)))
        params["extensions"] = dict(params.get("extensions") or {},
                                    market_fee_network_percent=self.rng.choice((0, 1000, 3000)),
                                    maker_fee_discount_percent=self.rng.choice((0, 2500)))
        with_options = dict(params, extensions=dict(params["extensions"],
                                                    custom_authority_options={
            "max_custom_authority_lifetime_seconds": 86400 * 10,
            "max_custom_authorities_per_account": 5,
            "max_custom_authorities_per_account_op": 2,
            "max_custom_authority_restrictions": 6}))
        proposer = self.pick_account() or init0
        expiration = self.head_time() + review + 6

        def proposal(new_params, review_period, label, **kw):
            op = {"fee": amount(0), "fee_paying_account": proposer.id,
                  "expiration_time": format_time(expiration),
                  "proposed_ops": [{"op": [31, {"fee": amount(0),
                                                "new_parameters": new_params}]}],
                  "extensions": []}
            if review_period is not None:
                op["review_period_seconds"] = review_period
            return self.intent(label, [[22, op]], [proposer], **kw)

        box = []
        yield [proposal(params, review, "plan/committee_proposal", applied=self.created(box)),
               proposal(params, review - 1, "plan/committee_proposal/short_review", bad=True),
               proposal(params, None, "plan/committee_proposal/no_review", bad=True),
               proposal(with_options, review, "plan/committee_proposal/custom_authority_options",
                        bad=True)]
        yield from self.waiting(lambda: box)
        pid = box[0]
        if pid is None or not approvers:
            return
        start = expiration - review
        update = {"fee": amount(0), "fee_paying_account": init0.id, "proposal": pid,
                  "active_approvals_to_add": approvers, "active_approvals_to_remove": [],
                  "owner_approvals_to_add": [], "owner_approvals_to_remove": [],
                  "key_approvals_to_add": [], "key_approvals_to_remove": [],
                  "extensions": []}
        if self.head_time() < start:
            yield self.intent("plan/committee_approve", [[23, update]], [self.dev_wif])
        yield from self.waiting(lambda: self.head_time() >= start)
        late = dict(update, active_approvals_to_add=[approvers[0]])
        yield self.intent("plan/committee_approve/in_review", [[23, late]], [self.dev_wif],
                          bad=True)
        yield from self.waiting(lambda: self.head_time() > expiration)
        yield from self.waiting(self.maintenance_passed())
        now = self.ref.call("get_global_properties")["parameters"]
        if now["witness_pay_per_block"] == params["witness_pay_per_block"]:
            self.observe("committee parameters applied")
        elif self.ref.call("get_objects", [pid])[0] is None:
            self.observe("committee proposal expired unexecuted")
        yield from self.plan_custom_authority_refused()

    def plan_custom_authority_refused(self):
        """Custom authority operations as mainnet rules take them before
        BSIP 40: a custom_authority_create (a transfer authority with ``to``
        restricted), the same proposed, a transfer signed only by the key
        it would have lent, an update and a delete of an authority that
        cannot exist: all refused by both."""
        owner = self.pick_account()
        agent = self.pick_account(funded=False, exclude=(owner.id,) if owner else ())
        if owner is None or agent is None:
            return
        target = self.rng.choice([a for a in self.accounts.values()
                                  if a.id not in (owner.id, agent.id)])
        now = self.head_time()
        create = {"fee": amount(0), "account": owner.id, "enabled": True,
                  "valid_from": format_time(now), "valid_to": format_time(now + 3600),
                  "operation_type": 0, "auth": key_authority(agent.pub),
                  "restrictions": [{"member_index": 2, "restriction_type": 0,
                                    "argument": [7, target.id], "extensions": []}],
                  "extensions": []}
        proposed = {"fee": amount(0), "fee_paying_account": owner.id,
                    "expiration_time": format_time(now + 600),
                    "proposed_ops": [{"op": [54, dict(create)]}], "extensions": []}
        yield [self.intent("plan/custom_authority_create", [[54, create]], [owner], bad=True),
               self.intent("plan/custom_authority_proposed", [[22, proposed]], [owner],
                           bad=True),
               self.intent("plan/custom_authority_transfer", [[0, {
                   "fee": amount(0), "from": owner.id, "to": target.id,
                   "amount": amount(self.rng.randint(1, 10 ** 5)), "extensions": []}]],
                   [agent], bad=True),
               self.intent("plan/custom_authority_update", [[55, {
                   "fee": amount(0), "account": owner.id, "authority_to_update": "1.17.0",
                   "new_enabled": False, "restrictions_to_remove": [],
                   "restrictions_to_add": [], "extensions": []}]], [owner], bad=True),
               self.intent("plan/custom_authority_delete", [[56, {
                   "fee": amount(0), "account": owner.id, "authority_to_delete": "1.17.0",
                   "extensions": []}]], [owner], bad=True)]

    def mpa_create(self, label, issuer, bsrm=None, mcfr=None, mssr=None):
        """An asset_create of a market-issued asset backed by TEST with a
        minute's settlement delay; ``bsrm`` (black_swan_response_method),
        ``mcfr`` (margin_call_fee_ratio), ``mssr`` in its bitasset options'
        extensions; the new id lands in the box it answers."""
        symbol = "M" + "".join(self.rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in range(6))
        ext = {}
        if bsrm is not None:
            ext["black_swan_response_method"] = bsrm
        if mcfr is not None:
            ext["margin_call_fee_ratio"] = mcfr
        if mssr is not None:
            ext["maximum_short_squeeze_ratio"] = mssr
        # every permission bit below disable_collateral_bidding (0x8000): the
        # issuer could change all but that (bids stay possible); no flag set
        permissions = 0x7fff
        options = self.asset_options(issuer, 0, 0, permissions)
        options["core_exchange_rate"] = price(amount(1), amount(1, "1.3.1"))
        op = {"fee": amount(0), "issuer": issuer.id, "symbol": symbol, "precision": 4,
              "common_options": options, "is_prediction_market": False,
              "bitasset_opts": {
                  "feed_lifetime_sec": 86400, "minimum_feeds": 1,
                  "force_settlement_delay_sec": 5, "force_settlement_offset_percent": 100,
                  "maximum_force_settlement_volume": 10000, "short_backing_asset": CORE,
                  "extensions": ext},
              "extensions": []}
        box = []

        def applied(results):
            new = new_object_id(results[0])
            box.append(new)
            if new:
                self.assets[new] = {"symbol": symbol, "issuer": issuer.id, "kind": "mpa",
                                    "flags": 0, "producers": [issuer.id], "planned": True}

        return self.intent(label, [[10, op]], [issuer], applied=applied), box

    def feed(self, label, issuer, asset, core_per_unit, mcr=1750, mssr=1100, **kw):
        """An asset_publish_feed: one unit (satoshi) of ``asset`` is worth
        ``core_per_unit`` (a fraction given as (n, d)) TEST satoshis."""
        n, d = core_per_unit
        feed = {"settlement_price": price(amount(d, asset), amount(n)),
                "maintenance_collateral_ratio": mcr, "maximum_short_squeeze_ratio": mssr,
                "core_exchange_rate": price(amount(d, asset), amount(n))}
        return self.intent(label, [[19, {"fee": amount(0), "publisher": issuer.id,
                                         "asset_id": asset, "feed": feed,
                                         "extensions": {}}]], [issuer], **kw)

    def borrow(self, label, acct, asset, debt, collateral, **kw):
        """A call_order_update of ``acct``: ``collateral`` TEST satoshis
        more, ``debt`` of ``asset`` more."""
        return self.intent(label, [[3, {
            "fee": amount(0), "funding_account": acct.id, "delta_collateral": amount(collateral),
            "delta_debt": amount(debt, asset), "extensions": {}}]], [acct], **kw)

    def market_accounts(self, n):
        """``n`` distinct accounts of the scenario, funded by init0 first
        (one transfer each, in this round) when they hold less than 10,000
        TEST; used as ``picked = yield from self.market_accounts(n)``."""
        pool = [a for a in self.accounts.values() if a.id != "1.2.6"]
        if len(pool) < n:
            return None
        picked = self.rng.sample(pool, n)
        init0 = self.accounts["1.2.6"]
        low = [a for a in picked if self.balance(a.id) < 10 ** 9]
        if low:
            yield [self.intent("plan/fund", [[0, {
                "fee": amount(0), "from": init0.id, "to": a.id,
                "amount": amount(10 ** 11), "extensions": []}]], [init0]) for a in low]
            yield None
        return picked

    def plan_margin_call(self):
        """A market-issued asset with a margin call fee ratio: two
        positions (CR 1.9 and 4), a sell order of the debt asset, then the
        feed moves up 25 %: the first position is margin called against
        the order (MSSR 1.1 caps the price, MCFR takes its share), and a
        second order is taken by the call at once."""
        picked = yield from self.market_accounts(3)
        if picked is None:
            return
        issuer, weak, strong = picked
        create, box = self.mpa_create("plan/margin/asset_create", issuer,
                                      mcfr=self.rng.choice((0, 30, 50)),
                                      mssr=self.rng.choice((None, 1050, 1250)))
        yield create
        yield from self.waiting(lambda: box)
        asset = box[0]
        if asset is None:
            return
        yield self.intent("plan/margin/feed_producers", [[13, {
            "fee": amount(0), "issuer": issuer.id, "asset_to_update": asset,
            "new_feed_producers": [issuer.id], "extensions": []}]], [issuer])
        yield self.feed("plan/margin/feed", issuer, asset, (10, 1))
        debt = self.rng.randint(10 ** 5, 10 ** 6)
        yield [self.borrow("plan/margin/borrow_weak", weak, asset, debt, debt * 19),
               self.borrow("plan/margin/borrow_strong", strong, asset, debt * 2, debt * 80),
               self.borrow("plan/margin/borrow_under_mcr", weak, asset, debt, debt * 11,
                           bad=True)]
        sell = debt // 2
        yield self.intent("plan/margin/sell_debt", [[1, {
            "fee": amount(0), "seller": strong.id, "amount_to_sell": amount(sell, asset),
            "min_to_receive": amount(sell * 11), "expiration": format_time(
                self.head_time() + 86400), "fill_or_kill": False, "extensions": {}}]],
            [strong])
        yield self.feed("plan/margin/feed_up", issuer, asset, (25, 2))
        yield self.intent("plan/margin/sell_into_call", [[1, {
            "fee": amount(0), "seller": strong.id, "amount_to_sell": amount(sell // 2, asset),
            "min_to_receive": amount(sell // 2 * 12), "expiration": format_time(
                self.head_time() + 86400), "fill_or_kill": False, "extensions": {}}]],
            [strong])
        yield None
        calls = {c["borrower"]: int(c["debt"])
                 for c in self.ref.call("get_call_orders", asset, 10)}
        if calls.get(weak.id, 0) < debt:
            self.observe("margin call filled")
        if self.ref.call("get_objects", [f"2.3.{asset.split('.')[2]}"])[0][
                "accumulated_collateral_fees"] not in (0, "0"):
            self.observe("margin call fee collected")
        yield self.intent("plan/margin/cover", [[3, {
            "fee": amount(0), "funding_account": strong.id, "delta_collateral": amount(0),
            "delta_debt": amount(-(debt // 4), asset), "extensions": {}}]], [strong])

    def plan_black_swan_0(self):
        return self.plan_black_swan(0)

    def plan_black_swan_1(self):
        return self.plan_black_swan(1)

    def plan_black_swan_2(self):
        return self.plan_black_swan(2)

    def plan_black_swan_3(self):
        return self.plan_black_swan(3)

    def plan_black_swan(self, method):
        """A market-issued asset with black swan response method
        ``method`` (0 global settlement, 1 no settlement, 2 individual
        settlement to fund, 3 individual settlement to order): positions at
        CR 2 and 6, a holder, then the feed triples: the CR 2 position is
        undercollateralized.  Then what each method allows: force
        settlements (instant from the fund after a global settlement,
        delayed otherwise), collateral bids, borrowing on a settled asset
        (refused), a buy of the settled debt's order, and the feed back."""
        picked = yield from self.market_accounts(4)
        if picked is None:
            return
        issuer, weak, strong, holder = picked
        create, box = self.mpa_create(f"plan/bsrm{method}/asset_create", issuer, bsrm=method,
                                      mcfr=self.rng.choice((None, 20)))
        yield create
        yield from self.waiting(lambda: box)
        asset = box[0]
        if asset is None:
            return
        tag = f"plan/bsrm{method}"
        yield self.intent(f"{tag}/feed_producers", [[13, {
            "fee": amount(0), "issuer": issuer.id, "asset_to_update": asset,
            "new_feed_producers": [issuer.id], "extensions": []}]], [issuer])
        yield self.feed(f"{tag}/feed", issuer, asset, (10, 1))
        debt = self.rng.randint(10 ** 5, 10 ** 6)
        yield [self.borrow(f"{tag}/borrow_weak", weak, asset, debt, debt * 20),
               self.borrow(f"{tag}/borrow_strong", strong, asset, debt, debt * 60)]
        yield [self.intent(f"{tag}/to_holder", [[0, {
            "fee": amount(0), "from": weak.id, "to": holder.id,
            "amount": amount(debt // 2, asset), "extensions": []}]], [weak]),
            self.intent(f"{tag}/settle_before", [[17, {
                "fee": amount(0), "account": strong.id, "amount": amount(debt // 10, asset),
                "extensions": []}]], [strong])]
        yield self.feed(f"{tag}/feed_swan", issuer, asset, (30, 1))
        yield None
        self.observe_bitasset(tag, asset)
        holders = [strong, holder]
        yield [self.intent(f"{tag}/settle_after", [[17, {
            "fee": amount(0), "account": h.id, "amount": amount(debt // 8, asset),
            "extensions": []}]], [h]) for h in holders]
        yield [self.borrow(f"{tag}/borrow_after", holder, asset, debt // 10, debt * 10),
               self.intent(f"{tag}/bid", [[45, {
                   "fee": amount(0), "bidder": holder.id,
                   "additional_collateral": amount(debt * 40),
                   "debt_covered": amount(debt, asset), "extensions": []}]], [holder]),
               self.intent(f"{tag}/buy_settled", [[1, {
                   "fee": amount(0), "seller": holder.id, "amount_to_sell": amount(debt * 40),
                   "min_to_receive": amount(debt // 20, asset), "expiration": format_time(
                       self.head_time() + 3600), "fill_or_kill": False,
                   "extensions": {}}]], [holder])]
        yield self.intent(f"{tag}/settle_too_much", [[17, {
            "fee": amount(0), "account": holder.id, "amount": amount(debt * 100, asset),
            "extensions": []}]], [holder], bad=True)
        self.observe_bitasset(tag, asset)
        yield self.feed(f"{tag}/feed_back", issuer, asset, (5, 1))
        yield from self.waiting(self.maintenance_passed())
        data = self.bitasset(asset)
        if method == 0 and int(data["settlement_fund"]) == 0:
            self.observe(f"{tag}: revived")
        yield [self.intent(f"{tag}/settle_late", [[17, {
            "fee": amount(0), "account": h.id, "amount": amount(max(1, debt // 50), asset),
            "extensions": []}]], [h]) for h in holders]

    def plan_take_profit(self):
        """Limit orders with a take-profit ``on_fill`` action: one that
        fills and makes its take-profit order (repeating), one whose action
        pays its fee in an asset of neither side (accepted at creation; the
        fill decides), an update of its ``on_fill`` and price, the
        take-profit orders filled back and their ``on_fill`` removed; a
        near miss (a zero spread)."""
        uias = [a for a, v in self.assets.items() if v["kind"] == "uia"]
        if not uias:
            made = self.act_asset_create("uia")
            if made is None:
                return
            yield made
            yield from self.waiting(lambda: any(v["kind"] == "uia"
                                                for v in self.assets.values()))
            uias = [a for a, v in self.assets.items() if v["kind"] == "uia"]
        picked = yield from self.market_accounts(2)
        if picked is None:
            return
        asset = self.rng.choice(uias)
        maker, taker = picked
        info = self.assets[asset]
        issuer = self.accounts[info["issuer"]]
        yield self.intent("plan/take_profit/issue", [[14, {
            "fee": amount(0), "issuer": issuer.id,
            "asset_to_issue": amount(10 ** 9, asset), "issue_to_account": taker.id,
            "extensions": []}]], [issuer])
        action = {"fee_asset_id": CORE, "spread_percent": self.rng.choice((50, 100, 500)),
                  "size_percent": self.rng.choice((5000, 10000)),
                  "expiration_seconds": 3600, "repeat": self.rng.random() < 0.7,
                  "extensions": []}
        value = 10 ** 6
        box = []
        order = {"fee": amount(0), "seller": maker.id, "amount_to_sell": amount(value),
                 "min_to_receive": amount(value, asset),
                 "expiration": format_time(self.head_time() + 86400), "fill_or_kill": False,
                 "extensions": {"on_fill": [[0, action]]}}
        zero = dict(order, extensions={"on_fill": [[0, dict(action, spread_percent=0)]]})
        other = [a for a in uias if a != asset]
        other_fee = dict(order, extensions={"on_fill": [[0, dict(
            action, fee_asset_id=other[0] if other else "1.3.1")]]})
        yield [self.intent("plan/take_profit/create", [[1, order]], [maker],
                           applied=self.created(box)),
               self.intent("plan/take_profit/zero_spread", [[1, zero]], [maker], bad=True),
               self.intent("plan/take_profit/other_fee_asset", [[1, other_fee]], [maker])]
        yield from self.waiting(lambda: box)
        oid = box[0]
        if oid is None:
            return
        yield self.intent("plan/take_profit/update", [[77, {
            "fee": amount(0), "seller": maker.id, "order": oid,
            "new_price": price(amount(value), amount(value * 11 // 10, asset)),
            "on_fill": [[0, dict(action, spread_percent=200, repeat=True)]],
            "extensions": []}]], [maker])
        yield self.intent("plan/take_profit/fill", [[1, {
            "fee": amount(0), "seller": taker.id, "amount_to_sell": amount(value * 2, asset),
            "min_to_receive": amount(value // 2), "expiration": format_time(
                self.head_time() + 3600), "fill_or_kill": False, "extensions": {}}]], [taker])
        yield None
        book = self.ref.call("get_limit_orders", CORE, asset, 100)
        if any(o.get("take_profit_order_id") for o in book) or any(
                o.get("on_fill") and o["seller"] == maker.id and o["id"] != oid for o in book):
            self.observe("take-profit order made")
        # the take-profit orders now on the book: fill them back
        yield self.intent("plan/take_profit/fill_back", [[1, {
            "fee": amount(0), "seller": maker.id, "amount_to_sell": amount(value // 10),
            "min_to_receive": amount(1, asset), "expiration": format_time(
                self.head_time() + 3600), "fill_or_kill": False, "extensions": {}}]], [maker])
        mine = [o for o in self.ref.call("get_limit_orders", CORE, asset, 100)
                if o["seller"] in (maker.id, taker.id)]
        for o in mine[:2]:
            yield self.intent("plan/take_profit/update_remove", [[77, {
                "fee": amount(0), "seller": o["seller"], "order": o["id"], "on_fill": [],
                "new_expiration": format_time(self.head_time() + 7200),
                "extensions": []}]], [self.accounts[o["seller"]]])

    def plan_whitelist(self):
        """A user-issued asset with the white_list flag, a whitelist and a
        blacklist authority and a whitelisted market (or a blacklisted
        one): account_whitelist
        listings by both authorities, issues and transfers to listed and
        unlisted accounts, orders in and out of the allowed market, a
        listing taken back."""
        picked = yield from self.market_accounts(5)
        if picked is None:
            return
        issuer, wauth, bauth, good, bad = picked
        if not issuer.member:
            yield self.intent("plan/whitelist/upgrade", [[8, {
                "fee": amount(0), "account_to_upgrade": issuer.id,
                "upgrade_to_lifetime_member": True, "extensions": []}]], [issuer])
            issuer.member = True
        symbol = "W" + "".join(self.rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in range(6))
        other = [a for a, v in self.assets.items() if v["kind"] == "uia"]
        options = self.asset_options(issuer, 100, 0x01 | 0x02, UIA_PERMISSIONS)
        options["whitelist_authorities"] = self.sorted_ids([wauth.id])
        options["blacklist_authorities"] = self.sorted_ids([bauth.id])
        # the markets: only TEST's allowed, or the other asset's barred
        barred = self.rng.random() < 0.5 and bool(other)
        if barred:
            options["blacklist_markets"] = [other[0]]
        else:
            options["whitelist_markets"] = [CORE]
        box = []

        def applied(results):
            new = new_object_id(results[0])
            box.append(new)
            if new:
                self.assets[new] = {"symbol": symbol, "issuer": issuer.id, "kind": "wl",
                                    "flags": 0x03}

        yield self.intent("plan/whitelist/asset_create", [[10, {
            "fee": amount(0), "issuer": issuer.id, "symbol": symbol, "precision": 3,
            "common_options": options, "is_prediction_market": False, "extensions": []}]],
            [issuer], applied=applied)
        yield from self.waiting(lambda: box)
        asset = box[0]
        if asset is None:
            return

        def listing(auth, acct, how):
            return self.intent(f"plan/whitelist/list_{how}", [[7, {
                "fee": amount(0), "authorizing_account": auth.id, "account_to_list": acct.id,
                "new_listing": how, "extensions": []}]], [auth])

        yield [listing(wauth, good, 1), listing(wauth, issuer, 1), listing(wauth, bad, 1),
               listing(bauth, bad, 2)]

        def issue(to, **kw):
            return self.intent("plan/whitelist/issue" + ("/unlisted" if kw.get("bad") else ""),
                               [[14, {"fee": amount(0), "issuer": issuer.id,
                                      "asset_to_issue": amount(10 ** 7, asset),
                                      "issue_to_account": to.id, "extensions": []}]],
                               [issuer], **kw)

        stranger = self.rng.choice([a for a in self.accounts.values()
                                    if a.id not in (issuer.id, good.id, bad.id)])
        yield [issue(good), issue(bad, bad=True), issue(stranger, bad=True)]

        def send(frm, to, label, **kw):
            return self.intent(label, [[0, {
                "fee": amount(0), "from": frm.id, "to": to.id,
                "amount": amount(10 ** 4, asset), "extensions": []}]], [frm], **kw)

        def order(receive, label, **kw):
            return self.intent(label, [[1, {
                "fee": amount(0), "seller": good.id, "amount_to_sell": amount(10 ** 4, asset),
                "min_to_receive": amount(10 ** 4, receive),
                "expiration": format_time(self.head_time() + 3600), "fill_or_kill": False,
                "extensions": {}}]], [good], **kw)

        batch = [send(good, issuer, "plan/whitelist/transfer"),
                 send(good, bad, "plan/whitelist/transfer_blacklisted", bad=True),
                 send(good, stranger, "plan/whitelist/transfer_unlisted", bad=True),
                 order(CORE, "plan/whitelist/order")]
        if other:
            batch.append(order(other[0], "plan/whitelist/order_barred_market" if barred
                               else "plan/whitelist/order_other_market", bad=True))
        yield batch
        yield listing(wauth, good, 0)
        yield send(good, issuer, "plan/whitelist/transfer_delisted", bad=True)

    def plan_review(self):
        """A proposal with a review period: approved before the period
        (by its proposer), an approval refused in it and one removed, then
        executed (or expired unapproved) at its expiration; near misses: a
        review period as long as the lifetime."""
        picked = yield from self.market_accounts(3)
        if picked is None:
            return
        frm, to, helper = picked
        review = self.rng.randint(3, 6)
        lifetime = review + self.rng.randint(4, 8)

        def proposal(review_period, label, **kw):
            box = []
            inner = [0, {"fee": amount(0), "from": frm.id, "to": to.id,
                         "amount": amount(self.rng.randint(10 ** 4, 10 ** 6)),
                         "extensions": []}]
            op = {"fee": amount(0), "fee_paying_account": helper.id,
                  "expiration_time": format_time(self.head_time() + lifetime),
                  "proposed_ops": [{"op": inner}], "review_period_seconds": review_period,
                  "extensions": []}
            return self.intent(label, [[22, op]], [helper], applied=self.created(box), **kw), \
                box, op

        one, box, op = proposal(review, "plan/review/create")
        two, box2, _ = proposal(review, "plan/review/create_second")
        bad, _, _ = proposal(lifetime, "plan/review/lifetime_review", bad=True)
        yield [one, two, bad]
        yield from self.waiting(lambda: box and box2)
        if None in (box[0], box2[0]):
            return
        start = parse_time(op["expiration_time"]) - review

        def update(pid, add=(), remove=(), label="plan/review/approve", **kw):
            return self.intent(label, [[23, {
                "fee": amount(0), "fee_paying_account": frm.id, "proposal": pid,
                "active_approvals_to_add": list(add), "active_approvals_to_remove": list(remove),
                "owner_approvals_to_add": [], "owner_approvals_to_remove": [],
                "key_approvals_to_add": [], "key_approvals_to_remove": [],
                "extensions": []}]], [frm], **kw)

        if self.head_time() < start:
            yield [update(box[0], add=[frm.id]), update(box2[0], add=[frm.id])]
        yield from self.waiting(lambda: self.head_time() >= start)
        yield [update(box2[0], remove=[frm.id], label="plan/review/remove_in_review"),
               update(box[0], add=[frm.id], label="plan/review/approve_in_review", bad=True)]

    # -- actions (each answers an Intent or None when it cannot be made now) -----

    def act_fund(self):
        """init0 sends an account of the scenario some TEST (keeps them able
        to pay)."""
        made = [a for a in self.accounts.values() if a.id not in INIT_ACCOUNTS]
        to = self.rng.choice(made if made and self.rng.random() < 0.8
                             else list(self.accounts.values()))
        init0 = self.accounts["1.2.6"]
        if to.id == init0.id or self.balance(init0.id) < 10 ** 11:
            return None
        value = self.rng.randint(10 ** 9, 5 * 10 ** 10)
        self.spend(init0.id, CORE, value)
        return self.intent("fund", [[0, {"fee": amount(0), "from": init0.id, "to": to.id,
                                         "amount": amount(value), "extensions": []}]], [init0])

    def act_transfer(self):
        frm = self.pick_account()
        if frm is None:
            return None
        to = self.rng.choice([a for a in self.accounts.values() if a.id != frm.id])
        held = [CORE] + [a for a in self.assets if self.balance(frm.id, a) > 0]
        asset = self.rng.choice(held)
        bad = self.rng.random() < 0.1
        value = (self.balance(frm.id, asset) + 1) if bad else self.share(frm, asset)
        if value <= 0:
            return None
        op = {"fee": amount(0), "from": frm.id, "to": to.id, "amount": amount(value, asset),
              "extensions": []}
        if self.rng.random() < 0.6:
            op["memo"] = self.memo(frm, to)
        self.spend(frm.id, asset, value)
        return self.intent("transfer/insufficient" if bad else "transfer", [[0, op]], [frm],
                           bad=bad)

    def act_account_create(self):
        registrar = self.rng.choice([a for a in self.accounts.values() if a.member])
        if self.balance(registrar.id) < 10 ** 9:
            return None
        self.names += 1
        name = f"d{self.rng.getrandbits(32):08x}-{self.names}"
        key = PrivateKey.from_seed(f"differential-{name}")
        pub = key.public_key.to_str(self.prefix)
        referrer = self.rng.choice([a for a in self.accounts.values() if a.member])
        op = {"fee": amount(0), "registrar": registrar.id, "referrer": referrer.id,
              "referrer_percent": self.rng.choice((0, 50, 10000)), "name": name,
              "owner": key_authority(pub), "active": key_authority(pub),
              "options": {"memo_key": pub, "voting_account": "1.2.5", "num_witness": 0,
                          "num_committee": 0, "votes": [], "extensions": []},
              "extensions": {}}
        bad = self.rng.random() < 0.05
        if bad:
            op["name"] = "Bad_Name"

        def applied(results, name=name, key=key, pub=pub):
            new = new_object_id(results[0])
            if new:
                self.accounts[new] = Account(new, name, key.to_wif(), pub)

        return self.intent("account_create/bad_name" if bad else "account_create",
                           [[5, op]], [registrar], applied=applied, bad=bad)

    def act_account_upgrade(self):
        acct = self.pick_account()
        if acct is None or acct.member:
            return None
        # annual membership is refused since hardfork 613: a near miss
        lifetime = self.rng.random() < 0.9

        def applied(results, acct=acct):
            acct.member = acct.member or lifetime

        return self.intent("account_upgrade" if lifetime else "account_upgrade/annual", [[8, {
            "fee": amount(0), "account_to_upgrade": acct.id,
            "upgrade_to_lifetime_member": lifetime, "extensions": []}]], [acct],
            applied=applied, bad=not lifetime)

    def act_account_update(self):
        # init0's votes are the committee plan's (its stake elects the
        # committee that approves the committee proposal)
        acct = self.pick_account(exclude=("1.2.6",))
        if acct is None:
            return None
        witnesses = self.ref.call("lookup_vote_ids", [f"1:{i}" for i in range(11)])
        witnesses = [w for w in witnesses if w]
        votes = sorted({w["vote_id"] for w in self.rng.sample(
            witnesses, self.rng.randint(0, min(5, len(witnesses))))},
            key=lambda v: (int(v.split(":")[0]), int(v.split(":")[1])))
        committee = self.ref.call("lookup_vote_ids", [f"0:{i}" for i in range(11)])
        committee = [c for c in committee if c]
        cvotes = sorted({c["vote_id"] for c in self.rng.sample(
            committee, self.rng.randint(0, min(3, len(committee))))},
            key=lambda v: int(v.split(":")[1]))
        proxy = self.rng.choice(["1.2.5"] * 3 + [a for a in self.accounts if a != acct.id])
        opts = {"memo_key": acct.pub, "voting_account": proxy,
                "num_witness": len(votes), "num_committee": len(cvotes),
                "votes": sorted(cvotes + votes,
                                key=lambda v: (int(v.split(":")[0]), int(v.split(":")[1]))),
                "extensions": []}
        bad = self.rng.random() < 0.1
        if bad:
            opts["num_witness"] = len(votes) + 3
        return self.intent("account_update/too_many_votes" if bad else "account_update",
                           [[6, {"fee": amount(0), "account": acct.id, "new_options": opts,
                                 "extensions": {}}]], [acct], bad=bad)

    def act_account_whitelist(self):
        acct = self.pick_account()
        other = self.pick_account(funded=False, exclude=(acct.id,) if acct else ())
        if acct is None or other is None:
            return None
        return self.intent("account_whitelist", [[7, {
            "fee": amount(0), "authorizing_account": acct.id, "account_to_list": other.id,
            "new_listing": self.rng.choice((0, 1, 2, 3)), "extensions": []}]], [acct])

    def asset_options(self, issuer, market_fee, flags, permissions):
        return {"max_supply": str(10 ** 15), "market_fee_percent": market_fee,
                "max_market_fee": 10 ** 12, "issuer_permissions": permissions,
                "flags": flags,
                "core_exchange_rate": price(amount(1), amount(1, "1.3.1")),
                "whitelist_authorities": [], "blacklist_authorities": [],
                "whitelist_markets": [], "blacklist_markets": [],
                "description": "differential", "extensions": {}}

    def act_asset_create(self, kind=None):
        issuer = self.rng.choice([a for a in self.accounts.values() if a.member])
        if self.balance(issuer.id) < 10 ** 10:
            return None
        kinds = {v["kind"] for v in self.assets.values()}
        kind = kind or next((k for k in ("uia", "mpa", "share") if k not in kinds), None) \
            or self.rng.choice(("uia", "uia", "uia", "mpa", "share"))
        symbol = "D" + "".join(self.rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ")
                               for _ in range(self.rng.randint(4, 7)))
        # charge_market_fee 0x01, white_list 0x02, override_authority 0x04,
        # transfer_restricted 0x08
        if kind == "mpa":
            permissions, flags, fee = 0x1ff, 0, 0
        elif kind == "share":
            permissions, flags, fee = 0, 0, 0
        else:
            permissions = UIA_PERMISSIONS
            flags = 0x01 | (0x04 if self.rng.random() < 0.5 else 0)
            fee = self.rng.choice((10, 100, 250, 1000))
        options = self.asset_options(issuer, fee, flags, permissions)
        options["core_exchange_rate"] = price(amount(1), amount(1, "1.3.1"))
        op = {"fee": amount(0), "issuer": issuer.id, "symbol": symbol,
              "precision": self.rng.choice((2, 4, 5)), "common_options": options,
              "is_prediction_market": False, "extensions": []}
        if kind == "mpa":
            op["bitasset_opts"] = {
                "feed_lifetime_sec": 86400, "minimum_feeds": 1,
                "force_settlement_delay_sec": 60, "force_settlement_offset_percent": 100,
                "maximum_force_settlement_volume": 2000, "short_backing_asset": CORE,
                "extensions": {}}

        def applied(results, symbol=symbol, issuer=issuer, kind=kind, flags=flags):
            new = new_object_id(results[0])
            if new:
                self.assets[new] = {"symbol": symbol, "issuer": issuer.id, "kind": kind,
                                    "flags": flags}

        return self.intent(f"asset_create/{kind}", [[10, op]], [issuer], applied=applied)

    def my_asset(self, kind=None):
        mine = [(a, v) for a, v in self.assets.items()
                if (kind is None or v["kind"] == kind) and not v.get("planned")]
        if not mine:
            return None, None, None
        asset, info = self.rng.choice(mine)
        return asset, info, self.accounts[info["issuer"]]

    def act_asset_issue(self):
        # share assets stay unissued: a pool takes only an asset with no supply
        asset, info, issuer = self.my_asset("uia")
        if asset is None:
            return None
        to = self.rng.choice(list(self.accounts.values()))
        op = {"fee": amount(0), "issuer": issuer.id,
              "asset_to_issue": amount(self.rng.randint(10 ** 6, 10 ** 10), asset),
              "issue_to_account": to.id, "extensions": []}
        if self.rng.random() < 0.3:
            op["memo"] = self.memo(issuer, to)
        bad = self.rng.random() < 0.1
        signer = to if bad and to.id != issuer.id else issuer
        return self.intent("asset_issue/not_issuer" if signer is not issuer else "asset_issue",
                           [[14, op]], [signer], bad=signer is not issuer)

    def act_asset_reserve(self):
        asset, info, issuer = self.my_asset("uia")
        if asset is None:
            return None
        holder = self.rng.choice(list(self.accounts.values()))
        have = self.balance(holder.id, asset)
        if have <= 0:
            return None
        value = self.rng.randint(1, have)
        self.spend(holder.id, asset, value)
        return self.intent("asset_reserve", [[15, {
            "fee": amount(0), "payer": holder.id, "amount_to_reserve": amount(value, asset),
            "extensions": []}]], [holder])

    def act_asset_fund_fee_pool(self):
        asset, info, issuer = self.my_asset()
        acct = self.pick_account()
        if asset is None or acct is None:
            return None
        value = self.share(acct, CORE, 0.0001, 0.002)
        self.spend(acct.id, CORE, value)
        return self.intent("asset_fund_fee_pool", [[16, {
            "fee": amount(0), "from_account": acct.id, "asset_id": asset, "amount": value,
            "extensions": []}]], [acct])

    def act_asset_update(self):
        asset, info, issuer = self.my_asset("uia")
        if asset is None:
            return None
        fee = self.rng.choice((0, 50, 500, 2000))
        options = self.asset_options(issuer, fee, info["flags"], UIA_PERMISSIONS)
        options["core_exchange_rate"] = price(amount(self.rng.randint(1, 100)),
                                              amount(self.rng.randint(1, 100), asset))
        return self.intent("asset_update", [[11, {
            "fee": amount(0), "issuer": issuer.id, "asset_to_update": asset,
            "new_options": options, "extensions": {}}]], [issuer])

    def act_asset_update_issuer(self):
        asset, info, issuer = self.my_asset("uia")
        to = self.rng.choice([a for a in self.accounts.values() if a.member])
        if asset is None or to.id == issuer.id:
            return None

        def applied(results, asset=asset, to=to):
            self.assets[asset]["issuer"] = to.id

        return self.intent("asset_update_issuer", [[48, {
            "fee": amount(0), "issuer": issuer.id, "asset_to_update": asset,
            "new_issuer": to.id, "extensions": []}]], [issuer], applied=applied)

    def act_asset_claim_fees(self):
        asset, info, issuer = self.my_asset("uia")
        if asset is None:
            return None
        accumulated = self.ref.call("get_objects", [f"2.3.{asset.split('.')[2]}"])[0]
        fees = int(accumulated["accumulated_fees"]) if accumulated else 0
        value = fees if fees and self.rng.random() < 0.8 else fees + 1
        return self.intent("asset_claim_fees", [[43, {
            "fee": amount(0), "issuer": issuer.id, "amount_to_claim": amount(value, asset),
            "extensions": {}}]], [issuer], bad=value > fees)

    def act_asset_claim_pool(self):
        asset, info, issuer = self.my_asset()
        if asset is None:
            return None
        dyn = self.ref.call("get_objects", [f"2.3.{asset.split('.')[2]}"])[0]
        pool = int(dyn["fee_pool"]) if dyn else 0
        value = self.rng.randint(1, pool) if pool > 1 else 1
        return self.intent("asset_claim_pool", [[47, {
            "fee": amount(0), "issuer": issuer.id, "asset_id": asset,
            "amount_to_claim": amount(value), "extensions": []}]], [issuer], bad=pool < 1)

    def act_override_transfer(self):
        overridable = [a for a, v in self.assets.items() if v["kind"] == "uia"
                       and v["flags"] & 0x04]
        if not overridable:
            return None
        asset = self.rng.choice(overridable)
        info = self.assets[asset]
        issuer = self.accounts[info["issuer"]]
        holders = [a for a in self.accounts.values() if self.balance(a.id, asset) > 0
                   and a.id != issuer.id]
        if not holders:
            return None
        frm = self.rng.choice(holders)
        value = self.rng.randint(1, self.balance(frm.id, asset))
        self.spend(frm.id, asset, value)
        return self.intent("override_transfer", [[38, {
            "fee": amount(0), "issuer": issuer.id, "from": frm.id, "to": issuer.id,
            "amount": amount(value, asset), "extensions": []}]], [issuer])

    def act_limit_order_create(self):
        tradable = [a for a, v in self.assets.items() if v["kind"] in ("uia", "mpa")]
        if not tradable:
            return None
        asset = self.rng.choice(tradable)
        seller = self.pick_account()
        if seller is None:
            return None
        sell_core = self.rng.random() < 0.5 or self.balance(seller.id, asset) <= 0
        sell_asset, buy_asset = (CORE, asset) if sell_core else (asset, CORE)
        value = self.share(seller, sell_asset, 0.001, 0.02)
        if value <= 0:
            return None
        # a price near 1:1 on both sides, so orders cross and fill
        ratio = self.rng.uniform(0.8, 1.25)
        receive = max(1, int(value * ratio))
        self.spend(seller.id, sell_asset, value)
        op = {"fee": amount(0), "seller": seller.id,
              "amount_to_sell": amount(value, sell_asset),
              "min_to_receive": amount(receive, buy_asset),
              "expiration": format_time(self.head_time() + self.rng.choice(
                  (60, 3600, 86400 * 30))),
              "fill_or_kill": self.rng.random() < 0.1, "extensions": {}}

        def applied(results, seller=seller):
            new = new_object_id(results[0])
            if new:
                self.objects["order"].append((new, seller.id))

        return self.intent("limit_order_create", [[1, op]], [seller], applied=applied)

    def live(self, kind, idx=0):
        """A remembered object still on the reference (dropped if gone)."""
        while self.objects[kind]:
            item = self.rng.choice(self.objects[kind])
            oid = item[idx] if isinstance(item, tuple) else item
            got = self.ref.call("get_objects", [oid])[0]
            if got:
                return item, got
            self.objects[kind].remove(item)
        return None, None

    def act_limit_order_cancel(self):
        item, order = self.live("order")
        if item is None:
            return None
        oid, owner = item
        self.objects["order"].remove(item)
        return self.intent("limit_order_cancel", [[2, {
            "fee": amount(0), "fee_paying_account": owner, "order": oid,
            "extensions": []}]], [self.accounts[owner]])

    def act_limit_order_update(self):
        item, order = self.live("order")
        if item is None:
            return None
        oid, owner = item
        sell = order["sell_price"]["base"]["asset_id"]
        delta = self.rng.randint(1, 1000)
        return self.intent("limit_order_update", [[77, {
            "fee": amount(0), "seller": owner, "order": oid,
            "delta_amount_to_sell": amount(delta, sell), "extensions": []}]],
            [self.accounts[owner]])

    def act_mpa_feed(self):
        asset, info, issuer = self.my_asset("mpa")
        if asset is None:
            return None
        if not info.get("producers") or self.rng.random() < 0.15:
            producers = sorted({issuer.id, self.rng.choice(list(self.accounts))},
                               key=lambda i: int(i.split(".")[2]))

            def applied(results, info=info, producers=producers):
                info["producers"] = producers

            return self.intent("asset_update_feed_producers", [[13, {
                "fee": amount(0), "issuer": issuer.id, "asset_to_update": asset,
                "new_feed_producers": producers, "extensions": []}]], [issuer],
                applied=applied)
        if issuer.id not in info["producers"]:
            return None
        if self.rng.random() < 0.1:
            return self.intent("asset_update_bitasset", [[12, {
                "fee": amount(0), "issuer": issuer.id, "asset_to_update": asset,
                "new_options": {
                    "feed_lifetime_sec": self.rng.choice((3600, 86400)), "minimum_feeds": 1,
                    "force_settlement_delay_sec": self.rng.choice((10, 60)),
                    "force_settlement_offset_percent": self.rng.choice((0, 100, 500)),
                    "maximum_force_settlement_volume": 2000, "short_backing_asset": CORE,
                    "extensions": {}},
                "extensions": []}]], [issuer])
        n = self.rng.randint(1, 4)
        feed = {"settlement_price": price(amount(1, asset), amount(n)),
                "maintenance_collateral_ratio": 1750, "maximum_short_squeeze_ratio": 1100,
                "core_exchange_rate": price(amount(1, asset), amount(n))}
        return self.intent("asset_publish_feed", [[19, {
            "fee": amount(0), "publisher": issuer.id, "asset_id": asset, "feed": feed,
            "extensions": {}}]], [issuer])

    def act_borrow(self):
        asset, info, issuer = self.my_asset("mpa")
        acct = self.pick_account()
        if asset is None or acct is None:
            return None
        debt = self.rng.randint(100, 10 ** 6)
        collateral = debt * self.rng.choice((1, 5, 10, 20))
        op = {"fee": amount(0), "funding_account": acct.id,
              "delta_collateral": amount(collateral), "delta_debt": amount(debt, asset),
              "extensions": {}}
        if self.rng.random() < 0.3:
            op["extensions"] = {"target_collateral_ratio": self.rng.choice((1750, 2000, 3000))}
        return self.intent("call_order_update", [[3, op]], [acct])

    def act_settle(self):
        asset, info, issuer = self.my_asset("mpa")
        if asset is None:
            return None
        r = self.rng.random()
        if r < 0.2:
            return self.intent("asset_global_settle", [[18, {
                "fee": amount(0), "issuer": issuer.id, "asset_to_settle": asset,
                "settle_price": price(amount(1, asset), amount(3)), "extensions": []}]],
                [issuer])
        holders = [a for a in self.accounts.values() if self.balance(a.id, asset) > 0]
        if r < 0.4:
            acct = self.pick_account()
            return self.intent("bid_collateral", [[45, {
                "fee": amount(0), "bidder": acct.id,
                "additional_collateral": amount(self.share(acct, CORE, 0.0001, 0.001)),
                "debt_covered": amount(self.rng.randint(1, 1000), asset),
                "extensions": []}]], [acct])
        if not holders:
            return None
        acct = self.rng.choice(holders)
        value = self.rng.randint(1, self.balance(acct.id, asset))
        self.spend(acct.id, asset, value)
        return self.intent("asset_settle", [[17, {
            "fee": amount(0), "account": acct.id, "amount": amount(value, asset),
            "extensions": []}]], [acct])

    def act_witness(self):
        acct = self.rng.choice([a for a in self.accounts.values() if a.member
                                and a.id not in INIT_ACCOUNTS] or [None])
        if acct is None or self.balance(acct.id) < 6 * 10 ** 8:
            return None
        mine = [w for w in self.objects["witness"] if w[1] == acct.id]
        if mine:
            return self.intent("witness_update", [[21, {
                "fee": amount(0), "witness": mine[0][0], "witness_account": acct.id,
                "new_url": f"https://w{self.rng.getrandbits(16)}.example",
                "new_signing_key": acct.pub}]], [acct])

        def applied(results, acct=acct):
            new = new_object_id(results[0])
            if new:
                self.objects["witness"].append((new, acct.id))

        return self.intent("witness_create", [[20, {
            "fee": amount(0), "witness_account": acct.id, "url": "https://w.example",
            "block_signing_key": acct.pub}]], [acct], applied=applied)

    def act_committee(self):
        acct = self.rng.choice([a for a in self.accounts.values() if a.member
                                and a.id not in INIT_ACCOUNTS] or [None])
        if acct is None or self.balance(acct.id) < 6 * 10 ** 8:
            return None
        mine = [c for c in self.objects["committee"] if c[1] == acct.id]
        if mine:
            return self.intent("committee_member_update", [[30, {
                "fee": amount(0), "committee_member": mine[0][0],
                "committee_member_account": acct.id,
                "new_url": f"https://c{self.rng.getrandbits(16)}.example"}]], [acct])

        def applied(results, acct=acct):
            new = new_object_id(results[0])
            if new:
                self.objects["committee"].append((new, acct.id))

        return self.intent("committee_member_create", [[29, {
            "fee": amount(0), "committee_member_account": acct.id,
            "url": "https://c.example"}]], [acct], applied=applied)

    def act_proposal(self):
        r = self.rng.random()
        item, prop = self.live("proposal") if r < 0.6 else (None, None)
        if item is not None:
            pid, frm, proposer = item
            if r < 0.45:
                return self.intent("proposal_update", [[23, {
                    "fee": amount(0), "fee_paying_account": frm, "proposal": pid,
                    "active_approvals_to_add": [frm], "active_approvals_to_remove": [],
                    "owner_approvals_to_add": [], "owner_approvals_to_remove": [],
                    "key_approvals_to_add": [], "key_approvals_to_remove": [],
                    "extensions": []}]], [self.accounts[frm]])
            return self.intent("proposal_delete", [[24, {
                "fee": amount(0), "fee_paying_account": proposer,
                "using_owner_authority": False, "proposal": pid, "extensions": []}]],
                [self.accounts[proposer]])
        frm = self.pick_account()
        proposer = self.pick_account()
        if frm is None or proposer is None:
            return None
        to = self.rng.choice([a for a in self.accounts.values() if a.id != frm.id])
        inner = [0, {"fee": amount(0), "from": frm.id, "to": to.id,
                     "amount": amount(self.share(frm, CORE, 0.0001, 0.001)),
                     "extensions": []}]
        op = {"fee": amount(0), "fee_paying_account": proposer.id,
              "expiration_time": format_time(self.head_time() + self.rng.choice((120, 3600))),
              "proposed_ops": [{"op": inner}], "extensions": []}

        def applied(results, frm=frm, proposer=proposer):
            new = new_object_id(results[0])
            if new:
                self.objects["proposal"].append((new, frm.id, proposer.id))

        return self.intent("proposal_create", [[22, op]], [proposer], applied=applied)

    def act_withdraw_permission(self):
        item, perm = self.live("withdraw")
        if item is not None:
            pid, frm, to = item
            r = self.rng.random()
            if r < 0.5:
                return self.intent("withdraw_permission_claim", [[27, {
                    "fee": amount(0), "withdraw_permission": pid, "withdraw_from_account": frm,
                    "withdraw_to_account": to,
                    "amount_to_withdraw": amount(self.rng.randint(1, 2 * 10 ** 5))}]],
                    [self.accounts[to]])
            if r < 0.75:
                return self.intent("withdraw_permission_update", [[26, {
                    "fee": amount(0), "withdraw_from_account": frm, "authorized_account": to,
                    "permission_to_update": pid,
                    "withdrawal_limit": amount(self.rng.randint(10 ** 5, 10 ** 6)),
                    "withdrawal_period_sec": 3600,
                    "period_start_time": format_time(self.head_time() + 5),
                    "periods_until_expiration": 5}]], [self.accounts[frm]])
            self.objects["withdraw"].remove(item)
            return self.intent("withdraw_permission_delete", [[28, {
                "fee": amount(0), "withdraw_from_account": frm, "authorized_account": to,
                "withdrawal_permission": pid}]], [self.accounts[frm]])
        frm = self.pick_account()
        to = self.pick_account(exclude=(frm.id,) if frm else ())
        if frm is None or to is None:
            return None

        def applied(results, frm=frm, to=to):
            new = new_object_id(results[0])
            if new:
                self.objects["withdraw"].append((new, frm.id, to.id))

        return self.intent("withdraw_permission_create", [[25, {
            "fee": amount(0), "withdraw_from_account": frm.id, "authorized_account": to.id,
            "withdrawal_limit": amount(10 ** 5), "withdrawal_period_sec": 3600,
            "periods_until_expiration": 10,
            "period_start_time": format_time(self.head_time() + 1)}]], [frm],
            applied=applied)

    def act_vesting(self):
        item, vb = self.live("vesting")
        if item is not None and self.rng.random() < 0.5:
            vid, owner = item
            value = self.rng.randint(1, 10 ** 5)
            return self.intent("vesting_balance_withdraw", [[33, {
                "fee": amount(0), "vesting_balance": vid, "owner": owner,
                "amount": amount(value)}]], [self.accounts[owner]])
        creator = self.pick_account()
        if creator is None:
            return None
        owner = self.rng.choice(list(self.accounts.values()))
        if self.rng.random() < 0.5:
            policy = [0, {"begin_timestamp": format_time(self.head_time()),
                          "vesting_cliff_seconds": 0,
                          "vesting_duration_seconds": self.rng.choice((10, 60, 3600))}]
        else:
            policy = [1, {"start_claim": format_time(self.head_time()),
                          "vesting_seconds": self.rng.choice((0, 10, 60))}]
        value = self.share(creator, CORE, 0.0001, 0.001)
        self.spend(creator.id, CORE, value)

        def applied(results, owner=owner):
            new = new_object_id(results[0])
            if new:
                self.objects["vesting"].append((new, owner.id))

        return self.intent("vesting_balance_create", [[32, {
            "fee": amount(0), "creator": creator.id, "owner": owner.id,
            "amount": amount(value), "policy": policy}]], [creator], applied=applied)

    def act_worker(self):
        owner = self.rng.choice([a for a in self.accounts.values() if a.member])
        if self.balance(owner.id) < 6 * 10 ** 8:
            return None
        kind = self.rng.choice((0, 1, 2))
        init = [kind, {"pay_vesting_period_days": 1} if kind == 1 else {}]
        start = self.head_time() + 10
        return self.intent("worker_create", [[34, {
            "fee": amount(0), "owner": owner.id, "work_begin_date": format_time(start),
            "work_end_date": format_time(start + 86400 * 10),
            "daily_pay": self.rng.randint(1, 10 ** 6), "name": f"worker{self.names}",
            "url": "https://work.example", "initializer": init}]], [owner])

    def act_custom(self):
        acct = self.pick_account()
        if acct is None:
            return None
        if self.rng.random() < 0.5:
            return self.intent("custom", [[35, {
                "fee": amount(0), "payer": acct.id, "required_auths": [],
                "id": self.rng.randint(0, 65535),
                "data": self.rng.randbytes(self.rng.randint(0, 200)).hex()}]], [acct])
        ok = self.rng.random() < 0.7
        return self.intent("assert", [[36, {
            "fee": amount(0), "fee_paying_account": acct.id,
            "predicates": [[0, {"account_id": acct.id,
                                "name": acct.name if ok else acct.name + "x"}]],
            "required_auths": [], "extensions": []}]], [acct], bad=not ok)

    def act_htlc(self):
        item, htlc = self.live("htlc")
        if item is not None:
            hid, frm, to, preimage = item
            if self.rng.random() < 0.6:
                good = self.rng.random() < 0.8
                return self.intent("htlc_redeem" + ("" if good else "/wrong_preimage"), [[50, {
                    "fee": amount(0), "htlc_id": hid, "redeemer": to,
                    "preimage": (preimage if good else preimage[::-1] + "00"),
                    "extensions": []}]], [self.accounts[to]], bad=not good)
            return self.intent("htlc_extend", [[52, {
                "fee": amount(0), "htlc_id": hid, "update_issuer": frm,
                "seconds_to_add": self.rng.randint(1, 3600), "extensions": []}]],
                [self.accounts[frm]])
        frm = self.pick_account()
        to = self.pick_account(funded=False, exclude=(frm.id,) if frm else ())
        if frm is None or to is None:
            return None
        preimage = self.rng.randbytes(self.rng.randint(1, 64))
        algo = self.rng.choice((0, 1, 2, 3))
        digest = {0: ripemd160(preimage), 1: hashlib.sha1(preimage).digest(),
                  2: hashlib.sha256(preimage).digest(),
                  3: ripemd160(hashlib.sha256(preimage).digest())}[algo]
        value = self.share(frm, CORE, 0.0001, 0.001)
        self.spend(frm.id, CORE, value)
        op = {"fee": amount(0), "from": frm.id, "to": to.id, "amount": amount(value),
              "preimage_hash": [algo, digest.hex()], "preimage_size": len(preimage),
              "claim_period_seconds": self.rng.choice((60, 3600, 86400)), "extensions": {}}
        if self.rng.random() < 0.3:
            op["extensions"] = {"memo": self.memo(frm, to)}

        def applied(results, frm=frm, to=to, pre=preimage.hex()):
            new = new_object_id(results[0])
            if new:
                self.objects["htlc"].append((new, frm.id, to.id, pre))

        return self.intent("htlc_create", [[49, op]], [frm], applied=applied)

    def act_ticket(self):
        item, ticket = self.live("ticket")
        if item is not None and self.rng.random() < 0.5:
            tid, owner = item
            target = self.rng.choice((0, 1, 2, 3, 4))
            op = {"fee": amount(0), "ticket": tid, "account": owner, "target_type": target,
                  "extensions": []}
            if self.rng.random() < 0.5:
                op["amount_for_new_target"] = amount(self.rng.randint(1, 10 ** 5))
            return self.intent("ticket_update", [[58, op]], [self.accounts[owner]])
        acct = self.pick_account()
        if acct is None:
            return None
        value = self.share(acct, CORE, 0.0001, 0.001)
        self.spend(acct.id, CORE, value)

        def applied(results, acct=acct):
            new = new_object_id(results[0])
            if new:
                self.objects["ticket"].append((new, acct.id))

        return self.intent("ticket_create", [[57, {
            "fee": amount(0), "account": acct.id, "target_type": self.rng.choice((1, 2, 3)),
            "amount": amount(value), "extensions": []}]], [acct], applied=applied)

    def act_pool(self):
        item, pool = self.live("pool")
        if item is not None:
            pid, owner, a, b, share = item
            acct = self.accounts[owner]
            r = self.rng.random()
            if r < 0.35:
                va, vb = self.balance(owner, a), self.balance(owner, b)
                if va <= 0 or vb <= 0:
                    return None
                return self.intent("liquidity_pool_deposit", [[61, {
                    "fee": amount(0), "account": owner, "pool": pid,
                    "amount_a": amount(max(1, va // 50), a),
                    "amount_b": amount(max(1, vb // 50), b), "extensions": []}]], [acct])
            if r < 0.65:
                sell, buy = (a, b) if self.rng.random() < 0.5 else (b, a)
                trader = self.pick_account()
                have = self.balance(trader.id, sell) if trader else 0
                if have <= 0:
                    return None
                return self.intent("liquidity_pool_exchange", [[63, {
                    "fee": amount(0), "account": trader.id, "pool": pid,
                    "amount_to_sell": amount(max(1, have // 100), sell),
                    "min_to_receive": amount(1, buy), "extensions": []}]], [trader])
            if r < 0.8:
                shares = self.balance(owner, share)
                return self.intent("liquidity_pool_withdraw", [[62, {
                    "fee": amount(0), "account": owner, "pool": pid,
                    "share_amount": amount(max(1, shares // 3), share), "extensions": []}]],
                    [acct], bad=shares <= 0)
            if r < 0.92:
                return self.intent("liquidity_pool_update", [[75, {
                    "fee": amount(0), "account": owner, "pool": pid,
                    "taker_fee_percent": self.rng.randint(0, 100), "extensions": []}]],
                    [acct])
            return self.intent("liquidity_pool_delete", [[60, {
                "fee": amount(0), "account": owner, "pool": pid, "extensions": []}]], [acct])
        shares = [(a, v) for a, v in self.assets.items() if v["kind"] == "share"
                  and not v.get("pooled")]
        uias = [a for a, v in self.assets.items() if v["kind"] == "uia"]
        if not shares or not uias:
            return None
        share, info = self.rng.choice(shares)
        owner = self.accounts[info["issuer"]]
        other = self.rng.choice(uias)

        def applied(results, share=share, owner=owner, other=other):
            new = new_object_id(results[0])
            if new:
                self.assets[share]["pooled"] = True
                self.objects["pool"].append((new, owner.id, CORE, other, share))

        return self.intent("liquidity_pool_create", [[59, {
            "fee": amount(0), "account": owner.id, "asset_a": CORE, "asset_b": other,
            "share_asset": share, "taker_fee_percent": self.rng.randint(0, 100),
            "withdrawal_fee_percent": self.rng.randint(0, 100), "extensions": []}]], [owner],
            applied=applied)

    def act_samet(self):
        item, fund = self.live("samet")
        if item is not None:
            fid, owner = item
            r = self.rng.random()
            if r < 0.5:
                borrower = self.pick_account()
                if borrower is None:
                    return None
                value = self.rng.randint(1, max(1, int(fund["balance"]) // 2))
                fee = -(-value * int(fund["fee_rate"]) // 1000000)
                return self.intent("samet_fund_borrow+repay", [
                    [67, {"fee": amount(0), "borrower": borrower.id, "fund_id": fid,
                          "borrow_amount": amount(value), "extensions": []}],
                    [68, {"fee": amount(0), "account": borrower.id, "fund_id": fid,
                          "repay_amount": amount(value), "fund_fee": amount(fee),
                          "extensions": []}]], [borrower])
            if r < 0.6:
                borrower = self.pick_account()
                return self.intent("samet_fund_borrow/unrepaid", [[67, {
                    "fee": amount(0), "borrower": borrower.id, "fund_id": fid,
                    "borrow_amount": amount(1), "extensions": []}]], [borrower], bad=True)
            if r < 0.85:
                op = {"fee": amount(0), "owner_account": owner, "fund_id": fid,
                      "extensions": []}
                if self.rng.random() < 0.5:
                    op["delta_amount"] = amount(self.rng.randint(1, 10 ** 5))
                else:
                    op["new_fee_rate"] = self.rng.randint(0, 10000)
                return self.intent("samet_fund_update", [[66, op]], [self.accounts[owner]])
            self.objects["samet"].remove(item)
            return self.intent("samet_fund_delete", [[65, {
                "fee": amount(0), "owner_account": owner, "fund_id": fid,
                "extensions": []}]], [self.accounts[owner]])
        owner = self.pick_account()
        if owner is None:
            return None
        value = self.share(owner, CORE, 0.0001, 0.001)
        self.spend(owner.id, CORE, value)

        def applied(results, owner=owner):
            new = new_object_id(results[0])
            if new:
                self.objects["samet"].append((new, owner.id))

        return self.intent("samet_fund_create", [[64, {
            "fee": amount(0), "owner_account": owner.id, "asset_type": CORE, "balance": value,
            "fee_rate": self.rng.randint(0, 10000), "extensions": []}]], [owner],
            applied=applied)

    def act_credit(self):
        r = self.rng.random()
        deal, got = self.live("deal") if r < 0.3 else (None, None)
        if deal is not None:
            did, borrower = deal
            if self.rng.random() < 0.7:
                debt = int(got["debt_amount"])
                value = self.rng.randint(1, debt)
                fee = -(-value * int(got["fee_rate"]) // 1000000)
                return self.intent("credit_deal_repay", [[73, {
                    "fee": amount(0), "account": borrower, "deal_id": did,
                    "repay_amount": amount(value, got["debt_asset"]),
                    "credit_fee": amount(fee, got["debt_asset"]), "extensions": []}]],
                    [self.accounts[borrower]])
            return self.intent("credit_deal_update", [[76, {
                "fee": amount(0), "account": borrower, "deal_id": did,
                "auto_repay": self.rng.choice((0, 1, 2)), "extensions": []}]],
                [self.accounts[borrower]])
        item, offer = self.live("offer") if r < 0.8 else (None, None)
        if item is not None:
            oid, owner = item
            s = self.rng.random()
            if s < 0.6:
                collat = [c for c, _ in offer["acceptable_collateral"]]
                borrower = self.pick_account(exclude=(owner,))
                if borrower is None:
                    return None
                cas = self.rng.choice(collat)
                borrow = self.rng.randint(int(offer["min_deal_amount"]),
                                          max(int(offer["min_deal_amount"]),
                                              int(offer["current_balance"]) // 4 or 1))
                have = self.balance(borrower.id, cas)
                if have <= 0:
                    return None

                def applied(results, borrower=borrower):
                    new = new_object_id(results[0])
                    if new:
                        self.objects["deal"].append((new, borrower.id))

                return self.intent("credit_offer_accept", [[72, {
                    "fee": amount(0), "borrower": borrower.id, "offer_id": oid,
                    "borrow_amount": amount(borrow, offer["asset_type"]),
                    "collateral": amount(max(1, have // 10), cas),
                    "max_fee_rate": int(offer["fee_rate"]),
                    "min_duration_seconds": self.rng.choice((0, 60)), "extensions": {}}]],
                    [borrower], applied=applied)
            if s < 0.85:
                op = {"fee": amount(0), "owner_account": owner, "offer_id": oid,
                      "extensions": []}
                pick = self.rng.choice(("delta_amount", "fee_rate", "enabled",
                                        "max_duration_seconds"))
                op[pick] = {"delta_amount": amount(self.rng.randint(1, 10 ** 5)),
                            "fee_rate": self.rng.randint(0, 10000),
                            "enabled": self.rng.random() < 0.7,
                            "max_duration_seconds": self.rng.choice((60, 3600, 86400))}[pick]
                return self.intent("credit_offer_update", [[71, op]], [self.accounts[owner]])
            self.objects["offer"].remove(item)
            return self.intent("credit_offer_delete", [[70, {
                "fee": amount(0), "owner_account": owner, "offer_id": oid,
                "extensions": []}]], [self.accounts[owner]])
        owner = self.pick_account()
        uias = [a for a, v in self.assets.items() if v["kind"] == "uia"]
        if owner is None:
            return None
        value = self.share(owner, CORE, 0.0001, 0.001)
        self.spend(owner.id, CORE, value)
        collateral = [[a, price(amount(1), amount(self.rng.randint(1, 5), a))]
                      for a in sorted(self.rng.sample(uias, min(len(uias), 2)),
                                      key=lambda i: int(i.split(".")[2]))]
        if not collateral:
            return None

        def applied(results, owner=owner):
            new = new_object_id(results[0])
            if new:
                self.objects["offer"].append((new, owner.id))

        return self.intent("credit_offer_create", [[69, {
            "fee": amount(0), "owner_account": owner.id, "asset_type": CORE, "balance": value,
            "fee_rate": self.rng.randint(0, 10000), "max_duration_seconds": 3600,
            "min_deal_amount": 1, "enabled": True,
            "auto_disable_time": format_time(self.head_time() + 86400),
            "acceptable_collateral": collateral, "acceptable_borrowers": [],
            "extensions": []}]], [owner], applied=applied)

    def act_custom_authority(self):
        item, auth = self.live("authority")
        if item is not None:
            aid, owner = item
            if self.rng.random() < 0.5:
                return self.intent("custom_authority_update", [[55, {
                    "fee": amount(0), "account": owner, "authority_to_update": aid,
                    "new_enabled": self.rng.random() < 0.5, "restrictions_to_remove": [],
                    "restrictions_to_add": [], "extensions": []}]], [self.accounts[owner]])
            self.objects["authority"].remove(item)
            return self.intent("custom_authority_delete", [[56, {
                "fee": amount(0), "account": owner, "authority_to_delete": aid,
                "extensions": []}]], [self.accounts[owner]])
        acct = self.pick_account()
        other = self.pick_account(funded=False, exclude=(acct.id,) if acct else ())
        if acct is None or other is None:
            return None

        def applied(results, acct=acct):
            new = new_object_id(results[0])
            if new:
                self.objects["authority"].append((new, acct.id))

        return self.intent("custom_authority_create", [[54, {
            "fee": amount(0), "account": acct.id, "enabled": True,
            "valid_from": format_time(self.head_time()),
            "valid_to": format_time(self.head_time() + 86400), "operation_type": 0,
            "auth": key_authority(other.pub),
            "restrictions": [{"member_index": 2, "restriction_type": 0,
                              "argument": [7, other.id], "extensions": []}],
            "extensions": []}]], [acct], applied=applied)

    def act_virtual(self):
        """A virtual operation sent as if it were an ordinary one (both
        nodes must refuse it)."""
        acct = self.pick_account()
        if acct is None:
            return None
        kind = self.rng.choice(VIRTUAL)
        one = amount(1)
        body = {
            4: {"fee": amount(0), "order_id": "1.7.0", "account_id": acct.id, "pays": one,
                "receives": one, "fill_price": price(one, one), "is_maker": True},
            42: {"fee": amount(0), "settlement": "1.4.0", "account": acct.id, "amount": one},
            44: {"fee": amount(0), "account_id": acct.id, "fba_id": "2.16.0", "amount": 1},
            46: {"fee": amount(0), "bidder": acct.id, "debt": one, "collateral": one},
            51: {"fee": amount(0), "htlc_id": "1.16.0", "from": acct.id, "to": acct.id,
                 "redeemer": acct.id, "amount": one, "htlc_preimage_hash": [0, "00" * 20],
                 "htlc_preimage_size": 1, "preimage": "ab"},
            53: {"fee": amount(0), "htlc_id": "1.16.0", "to": acct.id,
                 "original_htlc_recipient": acct.id, "htlc_amount": one,
                 "htlc_preimage_hash": [0, "00" * 20], "htlc_preimage_size": 1},
            74: {"fee": amount(0), "deal_id": "1.22.0", "offer_id": "1.21.0",
                 "offer_owner": acct.id, "borrower": acct.id, "unpaid_amount": one,
                 "collateral": one, "fee_rate": 1},
        }[kind]
        return self.intent(f"virtual_{kind}", [[kind, body]], [acct], bad=True)


#: actions and their weights (how often each is drawn)
ACTIONS = [("fund", 4), ("transfer", 10), ("account_create", 6), ("account_upgrade", 3),
           ("account_update", 3), ("account_whitelist", 1), ("asset_create", 3),
           ("asset_issue", 5), ("asset_reserve", 1), ("asset_fund_fee_pool", 2),
           ("asset_update", 1), ("asset_update_issuer", 1), ("asset_claim_fees", 1),
           ("asset_claim_pool", 1), ("override_transfer", 1), ("limit_order_create", 10),
           ("limit_order_cancel", 2), ("limit_order_update", 2), ("mpa_feed", 2),
           ("borrow", 3), ("settle", 1), ("witness", 1), ("committee", 1), ("proposal", 3),
           ("withdraw_permission", 3), ("vesting", 2), ("worker", 1), ("custom", 2),
           ("htlc", 3), ("ticket", 2), ("pool", 5), ("samet", 3), ("credit", 5),
           ("custom_authority", 2), ("virtual", 1)]

#: the plans (Scenario.plan_NAME): name, the round it first starts, rounds
#: between its end and its next start (None: once)
PLANS = [("committee", 1, None), ("margin_call", 2, 40), ("black_swan_0", 3, 60),
         ("black_swan_1", 4, 60), ("black_swan_2", 5, 60), ("black_swan_3", 6, 60),
         ("review", 3, 30), ("whitelist", 7, 80), ("take_profit", 6, 40)]
#: how often a plan that cannot start (no funded accounts yet) is tried
PLAN_TRIES = 20
