"""The differential run: bitshares-core's witness_node produces, a nodeapi
node follows it over RPC, and the same seeded transactions go through
both.

Flow (one round per block):

1. the scenario (:mod:`tools.differential.scenario`) makes a batch of
   transactions over the reference's head; each is priced with
   ``get_required_fees`` and signed with nodeapi's signer;
2. both nodes judge each one with ``validate_transaction`` on the same head
   (the reference holds no pending transaction then): accepted by both, or
   refused by both with the same error name, else a *validation
   difference* (texts that differ are listed apart); the transactions both
   accept go to the reference with ``broadcast_transaction``;
3. the reference makes one block with ``debug_generate_blocks`` (one slot
   after its head, never ahead of the clock: the run waits for the slot);
   nodeapi must reach the same head with the same block id, else a
   *refused block* (the run ends there: nodeapi stopped following);
4. the objects the block touched (every id its transactions and results
   name, with the accounts' statistics and the assets' dynamic data) are
   read with ``get_objects`` on both and compared field by field; every
   ``sweep_every`` blocks and at the end every object of every space (1.x,
   2.x) is, and the fixed list of reads (:data:`READS`) is compared.

The reference starts as a stale producer for one block (so its head time is
now and every hardfork is active), then runs without the witness plugin so
that blocks come only when the run asks: a seed names one chain.

With ``producer="nodeapi"`` (``--producer nodeapi``) the roles turn: nodeapi
makes the first block now with its witness plugin, then runs without it
and produces each block with ``debug_generate_blocks``; the reference
(``witness_node --seed-node`` nodeapi's ``p2p-endpoint``, no witness)
follows it over graphene's P2P protocol and applies every block with
bitshares-core's own rules.  A block the reference does not reach is a
*refused block* (the reference's log in the difference); the comparisons
are the same."""

import json
import os
import random
import shutil
import tempfile
import time

import attr

from nodeapi.chain.genesis import DEFAULT_GENESIS
from nodeapi.protocol.errors import BadCast
from nodeapi.protocol.operations import serialize_operation
from nodeapi.protocol.times import format_time, parse_time
from nodeapi.protocol.transaction import sign_transaction
from nodeapi.plugins.witness.plugin import DEV_WIF

from tools.differential.compare import (
    SPACES, Deliberate, field_differences, general_path, object_kind)
from tools.differential.scenario import CORE, NOT_SENT, Scenario
from tools.nodeapi_daemon import Daemon, free_port
from tools.reference_node import API_ACCESS, ReferenceError, ReferenceNode, start_on_demand

CHAIN_PREFIX = "TEST"
#: the follower: the reference's plugins without the witness (it must not
#: produce), statistics numbered 2.6.N as graphene numbers them
NODEAPI_ARGS = ("--plugins", "account_history market_history grouped_orders custom_operations",
                "--account-statistics-type", "6")
#: ids per get_objects call
OBJECTS_PER_CALL = 50
#: the run's genesis: the bundled one with a maintenance every this many
#: seconds (so votes, budgets, pay and pending parameters are reached in a
#: short run) ...
MAINTENANCE_INTERVAL = 20
#: ... and a committee proposal review period of this many seconds
REVIEW_PERIOD = 10
#: a read whose reply is larger is compared, but only its first differences kept
MAX_DIFFS_PER_READ = 20


@attr.s(slots=True)
class Settings:
    """One run: ``seed``, ``transactions`` (how many to judge), ``per_block``
    (at most this many per block), ``sweep_every`` (blocks between full
    sweeps and reads), ``broadcast_disputed`` (also broadcast what only the
    reference accepts: a chain split is then likely), ``work_dir`` (data
    dirs and logs; a fresh temporary one when None), ``keep`` (keep it),
    ``deliberate_path`` (another deliberate list), ``progress`` (called with
    the summary line after each block), ``objects_per_call`` (ids per
    ``get_objects``), ``producer`` (``"reference"``: nodeapi follows it
    over RPC; ``"nodeapi"``: the reference follows nodeapi over P2P)."""
    seed = attr.ib(default=1)
    transactions = attr.ib(default=200)
    per_block = attr.ib(default=8)
    sweep_every = attr.ib(default=10)
    broadcast_disputed = attr.ib(default=False)
    work_dir = attr.ib(default=None)
    keep = attr.ib(default=False)
    deliberate_path = attr.ib(default=None)
    progress = attr.ib(default=None)
    objects_per_call = attr.ib(default=OBJECTS_PER_CALL)
    producer = attr.ib(default="reference",
                       validator=attr.validators.in_(("reference", "nodeapi")))
    maintenance_interval = attr.ib(default=MAINTENANCE_INTERVAL)
    review_period = attr.ib(default=REVIEW_PERIOD)


def error_of(exc):
    """(name, text) of a JSON-RPC error raised by either node: fc's
    exception name (``data.name``) and its first formatted stack line, else
    the message."""
    err = getattr(exc, "error", None)
    if err is None and exc.args and isinstance(exc.args[0], dict):
        err = exc.args[0]
    if not isinstance(err, dict):
        return type(exc).__name__, str(exc)
    data = err.get("data") if isinstance(err.get("data"), dict) else {}
    name = data.get("name") or str(err.get("code"))
    text = err.get("message", "")
    stack = data.get("stack") or []
    if stack and isinstance(stack[0], dict) and stack[0].get("format"):
        text = stack[0]["format"]
    return name, text


class Run:
    """One differential run; :meth:`run` answers the summary dict and
    fills :attr:`differences`."""

    def __init__(self, settings: Settings):
        self.s = settings
        self.rng = random.Random(settings.seed)
        self.deliberate = Deliberate.load(settings.deliberate_path)
        self.differences = []
        self.seen = set()
        self.counts = {"transactions": 0, "accepted": 0, "broadcast": 0, "dropped": 0,
                       "operations": 0, "blocks": 0, "refused_blocks": 0,
                       "validation": 0, "validation_text": 0, "object": 0, "read": 0,
                       "deliberate": 0, "objects_compared": 0, "reads_compared": 0}
        self.op_types = set()
        self.op_types_applied = set()
        self.labels = {}
        self.refused = {}      # "label: error name: text" -> how often both refused it
        self.last_touch = {}   # object id -> label and trx id of the last transaction naming it
        self.max_instance = {}  # (space, type) -> highest instance seen
        self.ref = None
        self.node = None

    # -- processes --------------------------------------------------------------

    @property
    def producer(self):
        """The node that makes the blocks (the transactions go to it)."""
        return self.node if self.s.producer == "nodeapi" else self.ref

    @property
    def follower(self):
        """The node that follows the producer."""
        return self.ref if self.s.producer == "nodeapi" else self.node

    def start(self):
        base = self.s.work_dir or tempfile.mkdtemp(prefix="differential-")
        self.base = base
        shutil.rmtree(os.path.join(base, "nodeapi"), ignore_errors=True)
        os.makedirs(base, exist_ok=True)
        genesis = os.path.join(base, "genesis.json")
        with open(genesis, "w") as f:
            json.dump(run_genesis(self.s.maintenance_interval, self.s.review_period), f,
                      indent=1)
        extra = ["--genesis-json", genesis]
        if self.s.producer == "nodeapi":
            ref_dir = os.path.join(base, "reference")
            shutil.rmtree(ref_dir, ignore_errors=True)
            self._start_nodeapi_producer(base, ref_dir, genesis)
            return
        # block 1 at the wall clock, then blocks only when the run asks
        self.ref = start_on_demand(base, "reference", extra=extra)
        # every API set for everyone, as the reference is configured
        access = os.path.join(base, "nodeapi-api-access.json")
        with open(access, "w") as f:
            json.dump(API_ACCESS, f)
        self.node = Daemon(os.path.join(base, "nodeapi"), *NODEAPI_ARGS, "--api-access", access,
                           "--seed-node", self.ref.ws_url, "--genesis-json", genesis).start()
        self.wait_follow()

    def _start_nodeapi_producer(self, base, ref_dir, genesis):
        access = os.path.join(base, "nodeapi-api-access.json")
        with open(access, "w") as f:
            json.dump(API_ACCESS, f)
        node_dir = os.path.join(base, "nodeapi")
        plugins = NODEAPI_ARGS[1]
        first = Daemon(node_dir, "--plugins", plugins + " witness", *NODEAPI_ARGS[2:],
                       "--api-access", access, "--genesis-json", genesis).start()
        try:
            first.wait_head(1)
        finally:
            first.stop()
        port = free_port()
        self.node = Daemon(node_dir, *NODEAPI_ARGS, "--api-access", access,
                           "--p2p-endpoint", f"127.0.0.1:{port}", "--genesis-json", genesis).start()
        self.ref = ReferenceNode(ref_dir, produce=False, seed_node=f"127.0.0.1:{port}",
                                 extra=["--genesis-json", genesis]).start()
        self.wait_follow(timeout=60)

    def stop(self):
        for proc in (self.node, self.ref):
            if proc is not None:
                proc.stop()
        if not self.s.keep and not self.s.work_dir:
            shutil.rmtree(self.base, ignore_errors=True)

    def wait_follow(self, timeout=30):
        """Wait until the follower's head is the producer's (number and
        id); False when it stops short."""
        props = self.producer.call("get_dynamic_global_properties")
        want = (props["head_block_number"], props["head_block_id"])
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.follower.proc.poll() is not None:
                return False
            try:
                props = self.follower.call("get_dynamic_global_properties")
                if (props["head_block_number"], props["head_block_id"]) == want:
                    return True
            except OSError:
                pass
            time.sleep(0.05)
        return False

    # -- recording --------------------------------------------------------------

    def record(self, kind, where, field, ref_value, node_value, cause, key=None):
        """One difference (deduplicated on kind, where's kind and field
        path, or ``key``): counted, and kept with both values and the
        transaction that made it."""
        key = key or (kind, object_kind(where), general_path(field))
        if key in self.seen:
            return
        self.seen.add(key)
        entry = self.deliberate.match(kind, where, field, ref_value, node_value, values=True)
        item = {"kind": kind, "where": where, "field": field, "reference": ref_value,
                "nodeapi": node_value, "cause": cause}
        if entry:
            item["deliberate"] = entry["reason"]
            self.counts["deliberate"] += 1
        else:
            self.counts[kind] = self.counts.get(kind, 0) + 1
        self.differences.append(item)

    # -- transactions -----------------------------------------------------------

    def set_fees(self, ops, fees):
        for op, fee in zip(ops, fees):
            if isinstance(fee, list):
                fee, inner = fee[0], fee[1]
                self.set_fees([p["op"] for p in op[1].get("proposed_ops", [])], inner)
            op[1]["fee"] = fee

    def build(self, intent, props):
        head_time = parse_time(props["time"])
        try:
            fees = self.ref.call("get_required_fees", intent.ops, intent.fee_asset)
            self.set_fees(intent.ops, fees)
        except ReferenceError:
            pass
        trx = {"ref_block_num": props["head_block_number"] & 0xFFFF,
               "ref_block_prefix": int.from_bytes(
                   bytes.fromhex(props["head_block_id"])[4:8], "little"),
               "expiration": format_time(head_time + 120),
               "operations": intent.ops, "extensions": [], "signatures": []}
        if intent.mutate:
            intent.mutate(trx)
        signed = sign_transaction(signing_form(trx), self.chain_id, intent.wifs, CHAIN_PREFIX)
        return dict(trx, signatures=signed["signatures"])

    def judge(self, intent, trx):
        """Both nodes' ``validate_transaction``; True when the reference
        accepts it (and nodeapi too, unless disputed ones are broadcast)."""
        cause = {"label": intent.label, "trx": trx}
        outcome = []
        for who, call in (("reference", self.ref.call), ("nodeapi", self.node.call)):
            try:
                outcome.append(("ok", call("validate_transaction", trx)))
            except (ReferenceError, RuntimeError) as exc:
                outcome.append(("error",) + error_of(exc))
        (rk, *rv), (nk, *nv) = outcome
        label = intent.label
        if rk != nk:
            refusal = rv if rk == "error" else nv
            self.record("validation", label, "accepted",
                        True if rk == "ok" else rv, True if nk == "ok" else nv, cause,
                        key=("validation", label.split("/")[0], rk, nk, refusal[0]))
        elif rk == "error":
            key = f"{label}: {rv[0]}: {rv[1][:100]}"
            self.refused[key] = self.refused.get(key, 0) + 1
            if rv[0] != nv[0]:
                self.record("validation", label, "error.name", rv[0], nv[0], cause,
                            key=("validation", "name", rv[0], nv[0]))
            elif rv[1] != nv[1]:
                self.record("validation_text", label, "error.text", rv[1], nv[1], cause,
                            key=("validation_text", rv[0], rv[1]))
        else:
            for path, a, b in field_differences(rv[0].get("operation_results"),
                                                nv[0].get("operation_results"))[:5]:
                self.record("validation", label, "operation_results" + path, a, b, cause)
        self.compare_reads([("get_transaction_hex", (trx,), "database"),
                            ("get_potential_signatures", (trx,), "database"),
                            ("get_required_fees", (intent.ops, intent.fee_asset), "database")],
                           cause)
        return rk == "ok" and (nk == "ok" or self.s.broadcast_disputed)

    # -- objects and reads ------------------------------------------------------

    def get_objects(self, node_call, ids):
        try:
            return node_call("get_objects", ids)
        except (ReferenceError, RuntimeError) as exc:
            return [{"<error>": error_of(exc)[0]}] * len(ids)
        except OSError as exc:
            return [{"<error>": f"transport: {type(exc).__name__}"}] * len(ids)

    def compare_objects(self, ids, cause_of):
        ids = list(dict.fromkeys(ids))
        step = self.s.objects_per_call
        for i in range(0, len(ids), step):
            chunk = ids[i:i + step]
            ra = self.get_objects(self.ref.call, chunk)
            na = self.get_objects(self.node.call, chunk)
            for oid, a, b in zip(chunk, ra, na):
                self.counts["objects_compared"] += a is not None or b is not None
                for path, x, y in field_differences(a, b):
                    self.record("object", oid, path, x, y, cause_of(oid))
            yield chunk, ra, na

    def sweep(self, cause_of):
        """Every instance of every object type until a whole call's worth
        is null on both and beyond the highest instance seen."""
        head = self.ref.head()
        for space, types in SPACES:
            for t in types:
                if (space, t) == (2, 8):
                    # block summaries: graphene makes all 65536 at genesis; the
                    # ones up to the head are the written ones
                    ids = [f"2.8.{n}" for n in range(0, min(head + 2, 0x10000))]
                    list(self.compare_objects(ids, cause_of))
                    continue
                start = 0
                while True:
                    ids = [f"{space}.{t}.{n}"
                           for n in range(start, start + self.s.objects_per_call)]
                    empty = True
                    for _, ra, na in self.compare_objects(ids, cause_of):
                        empty = all(absent(x) for x in ra) and all(absent(y) for y in na)
                    if empty and start > self.max_instance.get((space, t), -1):
                        break
                    start += self.s.objects_per_call

    def call_both(self, method, params, api):
        out = []
        for call in (self.ref.call, self.node.call):
            try:
                out.append(call(method, *params, api=api))
            except (ReferenceError, RuntimeError) as exc:
                out.append({"<error>": error_of(exc)[0]})
            except OSError as exc:
                out.append({"<error>": f"transport: {type(exc).__name__}"})
        return out

    def compare_reads(self, reads, cause):
        for method, params, api in reads:
            a, b = self.call_both(method, params, api)
            self.counts["reads_compared"] += 1
            for path, x, y in field_differences(a, b)[:MAX_DIFFS_PER_READ]:
                self.record("read", method, path, x, y, dict(cause, params=params))

    def reads(self):
        """The fixed list of reads over what the scenario made."""
        sc = self.scenario
        accounts = sorted(sc.accounts, key=lambda i: int(i.split(".")[2]))
        assets = sorted(sc.assets, key=lambda i: int(i.split(".")[2]))
        props = self.ref.call("get_dynamic_global_properties")
        now = props["time"]
        day_ago = format_time(parse_time(now) - 86400)
        out = [("get_config", (), "database"), ("get_chain_properties", (), "database"),
               ("get_global_properties", (), "database"),
               ("get_dynamic_global_properties", (), "database"),
               ("lookup_accounts", ("", 100), "database"),
               ("list_assets", ("", 100), "database"),
               ("get_account_count", (), "database"),
               ("lookup_vote_ids", ([f"1:{i}" for i in range(20)]
                                    + [f"0:{i}" for i in range(20)],), "database"),
               ("get_witnesses", ([f"1.6.{i}" for i in range(1, 30)],), "database"),
               ("get_committee_members", ([f"1.5.{i}" for i in range(0, 30)],), "database"),
               ("get_all_workers", (), "database"),
               ("list_htlcs", ("1.16.0", 100), "database"),
               ("list_liquidity_pools", (100,), "database"),
               ("list_samet_funds", (100,), "database"),
               ("list_credit_offers", (100,), "database"),
               ("list_credit_deals", (100,), "database"),
               ("list_tickets", (100,), "database"),
               ("get_block", (props["head_block_number"],), "database")]
        for i in range(0, len(accounts), 10):
            out.append(("get_full_accounts", (accounts[i:i + 10], False), "database"))
        for acct in accounts:
            out.append(("get_account_history", (acct, "1.11.0", 100, "1.11.0"), "history"))
            out.append(("get_htlc_by_from", (acct, "1.16.0", 100), "database"))
        vesting = [v[0] for v in sc.objects["vesting"]][:50]
        if vesting:
            out.append(("get_vested_balances", (vesting,), "database"))
        for asset in assets:
            out += [("get_order_book", (CORE, asset, 50), "database"),
                    ("get_limit_orders", (CORE, asset, 100), "database"),
                    ("get_ticker", (CORE, asset), "database"),
                    ("get_call_orders", (asset, 100), "database"),
                    ("get_settle_orders", (asset, 100), "database"),
                    ("get_collateral_bids", (asset, 100, 0), "database"),
                    ("get_trade_history", (CORE, asset, now, day_ago, 100), "database"),
                    ("get_market_history", (CORE, asset, 60, day_ago, now), "history"),
                    ("get_asset_holders", (asset, 0, 100), "asset"),
                    ("get_asset_holders_count", (asset,), "asset")]
        return out

    # -- the loop ---------------------------------------------------------------

    def cause_for(self, block_num):
        def cause_of(oid):
            return dict(self.last_touch.get(oid, {}), block=block_num)
        return cause_of

    def round(self):
        producer = self.producer
        props = producer.call("get_dynamic_global_properties")
        self.scenario.new_block(props)
        left = self.s.transactions - self.counts["transactions"]
        intents = self.scenario.batch(min(left, self.rng.randint(1, self.s.per_block)), left)
        send = []
        for intent in intents:
            trx = self.build(intent, props)
            self.counts["transactions"] += 1
            self.counts["operations"] += len(trx["operations"])
            self.op_types.update(op[0] for op in trx["operations"])
            self.labels[intent.label] = self.labels.get(intent.label, 0) + 1
            if self.judge(intent, trx):
                send.append((intent, trx))
        sent = {}
        for intent, trx in send:
            try:
                producer.call("broadcast_transaction", trx, api="network_broadcast")
                sent[trx["signatures"][0]] = (intent, trx)
                self.counts["broadcast"] += 1
            except RuntimeError:  # ReferenceError, DaemonError
                self.counts["dropped"] += 1  # a conflict inside the batch: not a difference
        # the next slot, never ahead of the clock
        slot = parse_time(props["time"]) + 1 + (3 if props.get("dynamic_flags", 0) & 1 else 0)
        delay = slot - time.time() + 0.05
        if delay > 0:
            time.sleep(min(delay, 5))
        if producer is self.ref:
            num = self.ref.generate_blocks(1)
        else:
            self.node.call("debug_generate_blocks", DEV_WIF, 1, api="debug", timeout=30)
            num = self.node.head()[0]
        self.counts["blocks"] += 1
        block = producer.call("get_block", num)
        # the block's operation results (get_block carries none): the
        # reference's account history of the block, by (transaction, operation)
        results = {}
        if block["transactions"]:
            for h in producer.call("get_block_operation_history", num, api="history"):
                if not h.get("virtual_op"):
                    results[(h["trx_in_block"], h["op_in_trx"])] = h["result"]
        touched = {"2.0.0", "2.1.0", "2.12.0", "2.11.0"}
        for index, trx in enumerate(block["transactions"]):
            intent, _ = sent.get(trx["signatures"][0], (None, None))
            label = intent.label if intent else "?"
            trx = dict(trx, operation_results=[results.get((index, i))
                                               for i in range(len(trx["operations"]))])
            ids = set(ids_in(trx))
            for oid in ids:
                self.last_touch[oid] = {"label": label, "block": num,
                                        "trx": {"operations": trx["operations"]}}
            touched |= ids
            self.op_types_applied.update(op[0] for op in trx["operations"])
            if intent and intent.applied:
                intent.applied(trx["operation_results"])
        for oid in list(touched):
            space, typ, inst = (int(x) for x in oid.split("."))
            key = (space, typ)
            self.max_instance[key] = max(self.max_instance.get(key, -1), inst)
            if space == 1 and typ == 2:
                touched.add(f"2.6.{inst}")
            elif space == 1 and typ == 3:
                touched.add(f"2.3.{inst}")
        if not self.wait_follow():
            self.counts["refused_blocks"] += 1
            follower = self.follower
            exited = follower.proc.poll()
            if exited is None:
                head = follower.call("get_dynamic_global_properties")["head_block_number"]
            self.record("refused_block", str(num), "block" if exited is None else "exited",
                        num, head if exited is None else f"exit {exited}",
                        {"block": num, "refused_by": "nodeapi" if follower is self.node
                         else "reference",
                         "labels": [sent.get(t["signatures"][0], (None,))[0].label
                                    if t["signatures"][0] in sent else "?"
                                    for t in block["transactions"]],
                         "log": follower.log()[-3000:]})
            return False
        list(self.compare_objects(sorted(touched), self.cause_for(num)))
        self.compare_reads([("get_block", (num,), "database")], {"block": num})
        if self.counts["blocks"] % self.s.sweep_every == 0:
            self.sweep(self.cause_for(num))
            self.compare_reads(self.reads(), {"block": num})
        return True

    def run(self):
        """Start both nodes, run the rounds, sweep at the end, stop."""
        t0 = time.time()
        self.start()
        try:
            self.chain_id = self.ref.call("get_chain_id")
            self.scenario = Scenario(self.producer, self.rng, DEV_WIF, CHAIN_PREFIX)
            ok = True
            while ok and self.counts["transactions"] < self.s.transactions:
                ok = self.round()
                if ok and self.follower.proc.poll() is not None:
                    self.counts["refused_blocks"] += 1
                    name = "nodeapi" if self.follower is self.node else "reference"
                    self.record("refused_block", name, "exited", None,
                                f"exit {self.follower.proc.returncode}",
                                {"block": self.counts["blocks"],
                                 "log": self.follower.log()[-3000:]})
                    ok = False
                if self.s.progress:
                    self.s.progress(self.summary_line())
            if ok:
                num = self.producer.call("get_dynamic_global_properties")["head_block_number"]
                self.sweep(self.cause_for(num))
                self.compare_reads(self.reads(), {"block": num})
        finally:
            self.stop()
        self.seconds = round(time.time() - t0, 1)
        return self.summary()

    def summary(self):
        c = self.counts
        return {
            "seed": self.s.seed, "producer": self.s.producer,
            "seconds": getattr(self, "seconds", None),
            "transactions": c["transactions"], "accepted_and_broadcast": c["broadcast"],
            "dropped_at_broadcast": c["dropped"], "operations": c["operations"],
            "operation_types_sent": sorted(self.op_types),
            "operation_types_applied": sorted(self.op_types_applied),
            "operation_types_not_sent": sorted(set(range(78)) - self.op_types - NOT_SENT),
            "blocks": c["blocks"], "refused_blocks": c["refused_blocks"],
            "validation_differences": c["validation"],
            "validation_text_differences": c["validation_text"],
            "object_differences": c["object"], "read_differences": c["read"],
            "deliberate_differences": c["deliberate"],
            "objects_compared": c["objects_compared"], "reads_compared": c["reads_compared"],
            "labels": dict(sorted(self.labels.items())),
            "observed": dict(sorted(getattr(self, "scenario", None).observed.items()))
            if getattr(self, "scenario", None) else {},
            "refused_by_both": dict(sorted(self.refused.items())),
            "unused_deliberate": [e for e, n in zip(self.deliberate.entries,
                                                     self.deliberate.used) if not n],
        }

    def summary_line(self):
        c = self.counts
        return (f"transactions {c['transactions']} operations {c['operations']} "
                f"types {len(self.op_types)} (applied {len(self.op_types_applied)}) "
                f"blocks {c['blocks']} refused blocks {c['refused_blocks']} "
                f"validation differences {c['validation']} (texts {c['validation_text']}) "
                f"object differences {c['object']} read differences {c['read']} "
                f"deliberate {c['deliberate']}")

    def write(self, path):
        with open(path, "w") as f:
            json.dump({"summary": self.summary(), "differences": self.differences}, f,
                      indent=1, default=str)


def run_genesis(maintenance_interval, review_period) -> dict:
    """The bundled genesis with ``maintenance_interval`` and
    ``committee_proposal_review_period`` (seconds) of the run: both nodes
    start from it (``--genesis-json``), so the chain id is the sha256 of
    that file, the same on both."""
    with open(DEFAULT_GENESIS) as f:
        genesis = json.load(f)
    params = genesis["initial_parameters"]
    params["maintenance_interval"] = int(maintenance_interval)
    params["committee_proposal_review_period"] = int(review_period)
    return genesis


def signing_form(trx: dict) -> dict:
    """``trx`` as its signatures are made: an operation whose
    ``extensions_type`` is written as an object (a near miss both nodes
    must refuse: fc reads it only from an array) is signed as the empty
    array, so the refusal is the cast and not the signature."""
    ops = []
    for op in trx["operations"]:
        if op[1].get("extensions") == {}:
            try:
                serialize_operation(op, CHAIN_PREFIX)
            except BadCast:
                op = [op[0], dict(op[1], extensions=[])]
        ops.append(op)
    return dict(trx, operations=ops)


def absent(value):
    """A ``get_objects`` entry that ends a sweep: null, or an error reply."""
    return value is None or (isinstance(value, dict) and "<error>" in value)


def ids_in(value):
    """Every object id (``S.T.I``) named anywhere in a JSON value."""
    if isinstance(value, str):
        parts = value.split(".")
        if len(parts) == 3 and all(p.isdigit() for p in parts) and len(value) < 40:
            yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from ids_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from ids_in(v)
