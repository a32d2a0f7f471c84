"""The reference node: bitshares-core 7.0.2's ``witness_node``
(``../shared/reference/witness_node``, built by its ``build.sh``: same
bundled genesis, so the same chain id; TEST prefix; mainnet rules) run
beside nodeapi in a subprocess, on loopback only, never dialling anything
but this machine (``--seed-nodes "[]"`` or a loopback seed).

:class:`ReferenceNode` starts a producer (the 11 init witnesses signing
with the development key, ``--enable-stale-production
--required-participation 0``) or a follower over graphene P2P
(``seed_node=producer.p2p``), or a producer on demand (``on_demand=True``:
blocks only when a test calls :meth:`ReferenceNode.generate_blocks`, so
the chain stands still while a test reads it; its time starts at the
genesis' and moves one block interval a block), waits until its RPC
serves, calls it over HTTP JSON-RPC, and stops it cleanly.  Tests that need it are marked
``reference`` and skip, naming the path, only when the file is missing
(``kit.reference.requires_reference``).  The test kit re-exports it as
``kit.reference``; the differential runner drives it."""

import calendar
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request

from nodeapi.protocol.keys import PrivateKey
from nodeapi.plugins.witness.plugin import DEV_WIF

from tools.nodeapi_daemon import ROOT, Daemon, free_port
from tools.processes import read_log, stop_process

#: the development key's public key (the init witnesses' and init accounts')
DEV_PUB = PrivateKey.from_wif(DEV_WIF).public_key.to_str("TEST")

#: the reference binary, beside the repository (``../shared/reference``)
WITNESS_NODE = os.environ.get(
    "NODEAPI_REFERENCE_NODE",
    os.path.join(os.path.dirname(ROOT), "shared", "reference", "witness_node"))

#: the plugins a producer runs unless a test names others
DEFAULT_PLUGINS = ("witness", "account_history", "market_history", "grouped_orders",
                   "api_helper_indexes", "custom_operations", "debug_witness")

#: every API set for every user without a password (the reference is a
#: test node on loopback): its ``--api-access`` file
API_ACCESS = {"permission_map": [["*", {
    "password_hash_b64": "*", "password_salt_b64": "*",
    "allowed_apis": ["database_api", "network_broadcast_api", "history_api",
                     "network_node_api", "block_api", "asset_api", "crypto_api",
                     "orders_api", "custom_operations_api", "debug_api"]}]]}

#: the 11 init witnesses of the bundled genesis
INIT_WITNESSES = tuple(f"1.6.{i}" for i in range(1, 12))


class ReferenceError(RuntimeError):
    """A JSON-RPC error answered by the reference: ``.error`` is fc's
    ``{"code", "message", "data"}``."""

    def __init__(self, error):
        super().__init__(error.get("message", error))
        self.error = error


class ReferenceNode:
    """One ``witness_node`` process with its own data dir and log.

    ``produce=True``: the init witnesses ``witnesses`` (default all 11)
    with the development key (``witness`` must be among ``plugins``).
    ``on_demand=True`` (with ``produce=False``): no ``witness`` plugin, only
    ``debug_witness``, so a block is made only by :meth:`generate_blocks`
    (:func:`start_on_demand` starts one whose chain is at the wall clock:
    the tests' and the differential runner's one way).  ``rpc_port``: a
    fixed RPC port (a restarted node keeps its URL), else a free one.
    ``seed_node``: a loopback ``host:port`` to follow over graphene P2P.  ``extra``: more command-line
    arguments (e.g. ``["--genesis-json", path]``).
    """

    def __init__(self, data_dir, *, plugins=DEFAULT_PLUGINS, produce=True,
                 on_demand=False, seed_node=None, witnesses=INIT_WITNESSES, extra=(),
                 rpc_port=None):
        if produce and on_demand:
            raise ValueError("on_demand is a producer without the witness plugin: "
                             "produce=False")
        self.data_dir = str(data_dir)
        self.fixed_rpc_port = rpc_port is not None
        self.rpc_port = rpc_port or free_port()
        self.p2p_port = free_port()
        dropped = ("witness",) if on_demand else ("witness", "debug_witness")
        self.plugins = tuple(plugins) if produce else tuple(
            p for p in plugins if p not in dropped)
        self.produce = produce
        self.witnesses = tuple(witnesses)
        self.seed_node = seed_node
        self.extra = list(extra)
        self.log_path = self.data_dir.rstrip("/") + ".log"
        self.proc = None

    @property
    def p2p(self) -> str:
        """``127.0.0.1:PORT`` of its P2P endpoint (another node's seed)."""
        return f"127.0.0.1:{self.p2p_port}"

    @property
    def ws_url(self) -> str:
        """Its WebSocket RPC URL (a nodeapi follower's ``seed-node``)."""
        return f"ws://127.0.0.1:{self.rpc_port}"

    def command(self) -> list:
        access = os.path.join(self.data_dir, "api-access.json")
        args = [WITNESS_NODE, "--data-dir", self.data_dir, "--api-access", access,
                "--rpc-endpoint", f"127.0.0.1:{self.rpc_port}",
                "--p2p-endpoint", f"127.0.0.1:{self.p2p_port}",
                "--seed-nodes", "[]",
                "--plugins", " ".join(self.plugins)]
        if self.seed_node:
            args += ["--seed-node", self.seed_node]
        if self.produce:
            args += ["--enable-stale-production", "--required-participation", "0",
                     "--private-key", json.dumps([DEV_PUB, DEV_WIF])]
            for wid in self.witnesses:
                args += ["--witness-id", json.dumps(wid)]
        if "debug_witness" in self.plugins:
            args += ["--debug-private-key", json.dumps([DEV_PUB, DEV_WIF])]
        return args + self.extra

    def start(self, timeout=60, before_attempt=None):
        """Start the process and wait up to ``timeout`` s until its RPC
        answers; returns ``self``.  A port found free may be taken again
        before witness_node binds it ("Address already in use" for the P2P
        port, "Underlying Transport Error" for the RPC port; witness_node
        binds its RPC port only after opening, or replaying, its chain, and
        an outgoing connection of its own, such as a plugin's to a search
        database, may have taken that ephemeral port by then): then it
        starts again on other free ports (not a fixed ``rpc_port``), up to
        5 times.  ``before_attempt()``, when given, is called before each
        start (a caller measuring the start forgets a failed attempt's
        work).  AssertionError with the log's tail when it exits or does
        not serve in time."""
        os.makedirs(self.data_dir, exist_ok=True)
        with open(os.path.join(self.data_dir, "api-access.json"), "w") as f:
            json.dump(API_ACCESS, f)
        for attempt in range(5):
            if before_attempt is not None:
                before_attempt()
            logged = os.path.getsize(self.log_path) if os.path.exists(self.log_path) else 0
            try:
                return self._start_once(timeout)
            except AssertionError:
                with open(self.log_path, "rb") as f:
                    f.seek(logged)
                    tail = f.read()
                # the P2P port (boost's bind error) or the RPC port
                # (websocketpp's transport error) taken
                bind_failed = (b"Address already in use" in tail
                               or b"Underlying Transport Error" in tail)
                if not bind_failed or attempt == 4:
                    raise
                self.p2p_port = free_port()
                if not self.fixed_rpc_port:
                    self.rpc_port = free_port()

    def _start_once(self, timeout):
        self.log_file = open(self.log_path, "ab")
        self.proc = subprocess.Popen(self.command(), stdout=self.log_file,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                self.log_file.close()
                raise AssertionError(
                    f"witness_node exited {self.proc.returncode}:\n{self.log()[-4000:]}")
            try:
                # a short wait per try: a port taken by a process that
                # accepts but never answers must not hold the loop 30 s
                self.call("get_chain_id", timeout=5)
                return self
            except OSError:
                time.sleep(0.2)
        raise AssertionError(f"witness_node RPC not up in {timeout} s:\n{self.log()[-4000:]}")

    def call(self, method, *params, api="database", timeout=30):
        """``call(api, method, params)`` over HTTP; the result, or
        :class:`ReferenceError` with the node's error object."""
        body = {"jsonrpc": "2.0", "id": 1, "method": "call",
                "params": [api, method, list(params)]}
        req = urllib.request.Request(f"http://127.0.0.1:{self.rpc_port}/rpc",
                                     data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                reply = json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            reply = json.loads(exc.read())
        if "error" in reply:
            raise ReferenceError(reply["error"])
        return reply["result"]

    def head(self) -> int:
        return self.call("get_dynamic_global_properties")["head_block_number"]

    def wait_head(self, num, timeout=60) -> int:
        deadline = time.time() + timeout
        while time.time() < deadline:
            head = self.head()
            if head >= num:
                return head
            time.sleep(0.2)
        raise AssertionError(f"reference head did not reach {num}:\n{self.log()[-4000:]}")

    def generate_blocks(self, count) -> int:
        """``debug.debug_generate_blocks`` with the development key: ``count``
        blocks at once, time moving by a block interval each (so the head
        runs ahead of the clock, and a P2P follower refuses those blocks
        as too far in the future); needs the ``debug_witness`` plugin.
        Answers the new head block number (the call itself answers null)."""
        self.call("debug_generate_blocks", DEV_WIF, count, api="debug")
        return self.head()

    def next_slot_time(self) -> int:
        """The time (seconds since the epoch) of the next block slot: the
        head's time plus a block interval, plus ``maintenance_skip_slots``
        intervals after a maintenance block (graphene
        ``database::get_slot_time(1)``)."""
        props = self.call("get_dynamic_global_properties")
        params = self.call("get_global_properties")["parameters"]
        skip = params["maintenance_skip_slots"] if props["dynamic_flags"] & 1 else 0
        head = calendar.timegm(time.strptime(props["time"], "%Y-%m-%dT%H:%M:%S"))
        return head + params["block_interval"] * (1 + skip)

    def produce_block(self, timeout=30) -> int:
        """One block at the next slot, made (:meth:`generate_blocks`) once
        the wall clock has reached that slot, so a follower never sees it
        in the future; answers the new head block number."""
        wait = self.next_slot_time() - time.time()
        if wait > timeout:
            raise AssertionError(f"the next slot is {wait:.0f} s away")
        if wait > 0:
            time.sleep(wait)
        return self.generate_blocks(1)

    def stop(self, timeout=30):
        """SIGINT (witness_node's clean stop), then SIGKILL after ``timeout`` s."""
        return stop_process(self.proc, self.log_file, signal.SIGINT, timeout)

    def log(self) -> str:
        return read_log(self.log_path)


#: the plugins of a nodeapi node following the reference (no witness: it
#: must only apply the reference's blocks, never produce its own)
FOLLOWER_PLUGINS = "account_history market_history"


def nodeapi_follower(tmp_path, reference, *args, name="nodeapi"):
    """A started nodeapi daemon (kit.daemon.Daemon) following ``reference``
    over RPC (``--seed-node ws://…``) with :data:`FOLLOWER_PLUGINS` unless
    ``args`` name ``--plugins``."""
    plugins = () if "--plugins" in args else ("--plugins", FOLLOWER_PLUGINS)
    return Daemon(os.path.join(str(tmp_path), name), "--seed-node", reference.ws_url,
                  *plugins, *args).start()


def start_reference(tmp_path, name="reference", **kwargs) -> ReferenceNode:
    """A started :class:`ReferenceNode` in ``tmp_path/name`` (its data dir
    removed first)."""
    path = os.path.join(str(tmp_path), name)
    shutil.rmtree(path, ignore_errors=True)
    return ReferenceNode(path, **kwargs).start()


def start_on_demand(tmp_path, name="reference", timeout=60, **kwargs) -> ReferenceNode:
    """A producer on demand whose chain is at the wall clock (so every
    hardfork of the reference is in force, as nodeapi applies them from
    genesis): the witness plugin makes the first blocks now (stale
    production, block 1 running the first maintenance), then the node
    restarts on the same data dir without it (``on_demand=True``); later
    blocks come only from :meth:`ReferenceNode.produce_block` or
    :meth:`ReferenceNode.generate_blocks`, so the chain stands still while
    a test reads it.  ``kwargs`` as for :class:`ReferenceNode`."""
    path = os.path.join(str(tmp_path), name)
    shutil.rmtree(path, ignore_errors=True)
    first = ReferenceNode(path, **kwargs).start(timeout)
    try:
        first.wait_head(1, timeout)
    finally:
        first.stop()
    return ReferenceNode(path, produce=False, on_demand=True, **kwargs).start(timeout)
