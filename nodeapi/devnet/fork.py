"""Fork mode: ``twistd nodeapi --devnet --fork-url ws://node [--fork-block N]``
starts the devnet from a live chain's state, local blocks on top.

Lazily (:func:`fork_lazily`, the default, and ``--fork-block`` equal to the
node's head): the devnet starts in seconds, whatever the chain's length,
at the live node's head block, and fetches every object it touches when
first needed with the database API (:mod:`nodeapi.chain.remote`,
:class:`LazyLoader`); its own objects take ids above the live chain's
(:func:`find_limits`).  Synced (:func:`sync_from`, ``--fork-block`` below
the node's head): blocks 1..N pushed through the chain.  The connection to
the node is a :class:`LiveNode`, the owner of a
:class:`~nodeapi.peers.remote.RemoteNode`.  The steps, the consistency of
a lazy fork and the synced fork: docs/DESIGN.rst, "A lazy fork".
"""

from twisted.application.internet import backoffPolicy
from twisted.internet import defer, task
from twisted.logger import Logger
from zope.interface import implementer

from nodeapi.chain.evaluators.balance import key_addresses
from nodeapi.chain.remote import RemoteState
from nodeapi.chain.state import ObjectStore
from nodeapi.errors import NodeAPIError
from nodeapi.peers.errors import UpstreamTimeout
from nodeapi.peers.remote import IRemoteOwner, RemoteNode
from nodeapi.protocol.config import CORE_ASSET
from nodeapi.protocol.times import parse_time
from nodeapi.protocol.wire import object_from_wire, strip_block_info

#: get_block calls in flight at once
WINDOW = 50
#: blocks applied between returns to the reactor
APPLY_SLICE = 50
#: calls a lazy fork's start keeps in flight at once (LiveNode.call_many)
IN_FLIGHT = 16
#: the object spaces whose next instance a lazy fork finds on the live
#: chain (``space.type``); the operation history 1.11 and account history
#: 2.9 are numbered by the chain itself, from the live chain's next ones
SPACES = ("1.2", "1.3", "1.4", "1.5", "1.6", "1.7", "1.8", "1.9", "1.10", "1.11", "1.12",
          "1.13", "1.14", "1.15", "1.16", "1.17", "1.18", "1.19", "1.20", "1.21", "1.22",
          "1.23", "1.24", "1.25", "2.0", "2.1", "2.3", "2.4", "2.5", "2.6", "2.7", "2.9",
          "2.11", "2.12", "2.13", "2.14", "2.15", "2.16", "2.17", "2.18", "2.19")
#: spaces whose objects the live chain removes (orders, positions,
#: proposals, ...): the newest ones may be gone, so the devnet's own ids
#: start this many instances past the newest found
REMOVED_SPACE_GAP = 10_000
_REMOVED = frozenset(("1.4", "1.7", "1.8", "1.10", "1.11", "1.12", "1.13", "1.16", "1.17",
                      "1.18", "1.19", "1.20", "1.21", "1.22", "1.23", "1.24", "1.25", "2.7",
                      "2.9", "2.17", "2.18", "2.19"))
#: consecutive instances a probe asks for (an id removed on the live chain
#: leaves a hole; a probe hits when any of them exists)
PROBE_WIDTH = 8
#: the largest instance probed is 2 ** PROBE_BITS
PROBE_BITS = 36
#: the most orders (of one side of a market, or positions, settlements of
#: an asset) the reference node returns in one call (bitshares-core's
#: ``api_limit_get_limit_orders`` etc.); a market holding more is refused
#: with an error rather than loaded in part
MARKET_PAGE = 300
BIDS_PAGE = 100


class ForkError(NodeAPIError):
    """The fork could not be made or a fetch failed: the node unreachable
    or not answering in time, a reply of the wrong shape, a block it sent
    refused by the chain, N past its head, or a market too large to load."""

    name = "devnet_fork"


@implementer(IRemoteOwner)
class LiveNode:
    """The connection to the live chain's node (``address``, a
    :class:`~nodeapi.protocol.node_address.NodeAddress`): the owner of a
    :class:`~nodeapi.peers.remote.RemoteNode` (login with the address'
    credentials, reconnection when lost), kept for the fork's life.  Every
    call is bounded by ``timeout`` seconds; every failure is a
    :class:`ForkError` naming the node and the call.

    :param chain_id: the chain the node must serve, or None (any: the
        caller checks it, :func:`fork_lazily`).
    :ivar calls: calls made through :meth:`call` (figures).
    :ivar error: the first problem of the connection (an exception), or None.
    """

    def __init__(self, address, reactor, *, max_message_size: int,
                 timeout: float = 30.0, chain_id: str | None = None) -> None:
        self.address = address
        self.reactor = reactor
        self.timeout = timeout
        self.chain_id = chain_id
        self.calls = 0
        self.error = None
        self._waiting: list = []  # Deferreds of connect() calls waiting for the connection
        self.remote = RemoteNode(address, self, reactor=reactor,
                                 backoff=backoffPolicy(0.5, 5.0),
                                 what=f"--fork-url {address.url}",
                                 max_message_size=max_message_size, timeout=timeout)

    # -- IRemoteOwner ------------------------------------------------------------------

    def claim_chain(self, remote, chain_id: str) -> bool:
        """``IRemoteOwner.claim_chain``: True when the node serves
        ``chain_id``, or for any chain when none was given."""
        return self.chain_id is None or chain_id == self.chain_id

    def connected(self, remote, head) -> None:
        """``IRemoteOwner.connected``: the :meth:`connect` calls waiting for
        the connection go on."""
        waiting, self._waiting = self._waiting, []
        for d in waiting:
            if not d.called:
                d.callback(None)

    def notice(self, remote, callback_id, payload) -> None:
        """``IRemoteOwner.notice``: ignored (the fork subscribes to
        nothing)."""
        pass

    def call_timed_out(self, remote, method: str) -> None:
        """``IRemoteOwner.call_timed_out``: nothing more (:meth:`call` turns
        the call's ``UpstreamTimeout`` into a :class:`ForkError`)."""
        pass

    def failed(self, remote, error) -> bool:
        """Kept (:attr:`error`); a connection being waited for fails."""
        self.error = self.error or error
        waiting, self._waiting = self._waiting, []
        for d in waiting:
            if not d.called:
                d.errback(error)
        return False

    def lost(self, remote) -> None:
        """``IRemoteOwner.lost``: nothing (the remote reconnects;
        :meth:`connect` waits for it)."""
        pass

    # -- calls -------------------------------------------------------------------------

    async def connect(self) -> None:
        """Open the connection (logged in, chain checked), or wait for the
        reconnection of a lost one.

        :raises ForkError: no connection in ``timeout`` seconds, or the
            first attempt failed."""
        if self.remote.ready:
            return
        ready = defer.Deferred()
        self._waiting.append(ready)
        opened = None
        if not self.remote.running:
            opened = self.remote.when_open()  # fails at the first failed attempt
            self.remote.startService()
        else:
            self.remote.hurry()
        try:
            if opened is not None:
                await _bounded(opened, self.timeout, self.reactor)
            await _bounded(ready, self.timeout, self.reactor)
        except Exception as exc:
            if ready in self._waiting:
                self._waiting.remove(ready)
            if opened is not None:  # the first connection failed: no retries behind
                self.remote.stopService()
            raise ForkError(f"--fork-url {self.address.url}: cannot connect: "
                            f"{self.error or exc}") from None

    async def call(self, method: str, *args, api: str = "database"):
        """The ``result`` of ``api.method(args)`` on the node (connecting
        first when the connection is gone)."""
        await self.connect()
        self.calls += 1
        try:
            return await self.remote.call(api, method, list(args))
        except UpstreamTimeout:
            raise ForkError(f"--fork-url {self.address.url}: {api}.{method} not answered "
                            f"in {self.timeout:g} s") from None
        except Exception as exc:
            raise ForkError(f"--fork-url {self.address.url}: {api}.{method} failed: "
                            f"{self.error or exc}") from None

    async def call_many(self, calls, errors: bool = False) -> list:
        """The results of ``calls`` (``[(method, *args)]`` of the database
        set), at most :data:`IN_FLIGHT` at once, in order; with ``errors``
        a failing call's :class:`ForkError` takes its place, else the first
        one is raised."""
        await self.connect()
        limit = defer.DeferredSemaphore(IN_FLIGHT)

        async def one(method, *args):
            try:
                return await self.call(method, *args)
            except ForkError as exc:
                if errors:
                    return exc
                raise

        return await defer.gatherResults(
            [limit.run(lambda c=c: defer.Deferred.fromCoroutine(one(*c))) for c in calls],
            consumeErrors=True).addErrback(lambda f: f.value.subFailure)

    def close(self) -> defer.Deferred:
        """Close the connection; no reconnection."""
        if self.remote.running:
            return self.remote.stopService()
        return defer.succeed(None)

    @property
    def protocol(self):
        """The open :class:`~nodeapi.peers.client.RemoteProtocol`, or None."""
        return self.remote.protocol


async def find_limits(node: LiveNode, spaces=SPACES) -> dict:
    """``{"space.type": next instance}`` of the live chain for ``spaces``:
    per space the first instance past the newest object a probe of
    :data:`PROBE_WIDTH` consecutive ids finds (at every power of two, then
    halving between the highest hit and the next power), plus
    :data:`REMOVED_SPACE_GAP` for spaces whose objects are removed; 0 for
    a space without objects or that the node lacks.  ``get_objects`` of at
    most 96 ids per call, the spaces' probes of a round together."""
    async def exists(pairs):  # [(space, instance)] -> [bool] (any of the window)
        ids = [f"{space}.{start + k}" for space, start in pairs for k in range(PROBE_WIDTH)]
        parts = await node.call_many([("get_objects", ids[at:at + 96])
                                      for at in range(0, len(ids), 96)])
        found = [obj for part in parts for obj in part]
        return [any(found[i * PROBE_WIDTH:(i + 1) * PROBE_WIDTH])
                for i in range(len(pairs))]

    # the spaces the node has (an index it lacks answers an error)
    answers = await node.call_many([("get_objects", [f"{space}.0"]) for space in spaces],
                                   errors=True)
    known = [space for space, answer in zip(spaces, answers)
             if not isinstance(answer, ForkError)]
    absent = {s: 0 for s in spaces if s not in known}
    spaces = known
    # every power of two at once (the oldest objects of a space may all be
    # gone: orders filled long ago): lo is the largest start that hit
    # (-1: none), hi the next one, a miss
    starts = [0] + [1 << k for k in range(3, PROBE_BITS + 1)]
    hits = await exists([(s, start) for s in spaces for start in starts])
    lo, hi = {}, {}
    for i, s in enumerate(spaces):
        found = [start for start, hit in zip(starts, hits[i * len(starts):]) if hit]
        lo[s] = max(found, default=-1)
        hi[s] = max(lo[s] * 2, PROBE_WIDTH)
        if lo[s] == starts[-1]:
            raise ForkError(f"--fork-url {node.address.url}: space {s} holds objects past "
                            f"instance {starts[-1]}")
    # halving between lo (hit) and hi (miss)
    active = [s for s in spaces if lo[s] >= 0 and hi[s] - lo[s] > PROBE_WIDTH]
    while active:
        mids = {s: (lo[s] + hi[s]) // 2 for s in active}
        hits = await exists([(s, mids[s]) for s in active])
        for s, hit in zip(active, hits):
            if hit:
                lo[s] = mids[s]
            else:
                hi[s] = mids[s]
        active = [s for s in active if hi[s] - lo[s] > PROBE_WIDTH]
    # the last window: the exact newest object of [lo, lo + 2 * width)
    limits = {s: 0 for s in spaces if lo[s] < 0}
    found = [s for s in spaces if lo[s] >= 0]
    windows = await node.call_many([("get_objects", [f"{s}.{lo[s] + k}"
                                                     for k in range(2 * PROBE_WIDTH)])
                                    for s in found])
    for s, window in zip(found, windows):
        top = max(lo[s] + k for k, obj in enumerate(window) if obj)
        limits[s] = top + 1 + (REMOVED_SPACE_GAP if s in _REMOVED else 0)
    return dict(absent, **limits)


class LazyLoader:
    """Fetches the wants of a lazy fork (:mod:`nodeapi.chain.remote`) from
    the live node into its :class:`~nodeapi.chain.remote.RemoteState`;
    each call a fetch of its own, bounded by the node's timeout, with the
    database API (``get_objects``, ``get_full_accounts``,
    ``get_account_by_name``, ``lookup_asset_symbols``,
    ``get_limit_orders``, ``get_call_orders``, ``get_settle_orders``,
    ``get_collateral_bids``, ``get_vesting_balances``,
    ``get_witness_by_account``, ``get_committee_member_by_account``,
    ``get_key_references``, ``get_balance_objects``)."""

    log = Logger()

    def __init__(self, node: LiveNode) -> None:
        self.node = node
        self.remote: RemoteState | None = None

    def __call__(self, want: tuple) -> defer.Deferred:
        """Fetch ``want`` (a Deferred; a want fetched twice at once is
        inserted once, :meth:`RemoteState.insert`)."""
        return defer.Deferred.fromCoroutine(self._load(want))

    async def _load(self, want: tuple) -> None:
        kind, key = want[0], want[1:]
        handler = getattr(self, f"_load_{kind}")
        await handler(*key)
        self.remote.mark_done(want)
        self.log.debug("Devnet fork: loaded {want}", want=want)

    def _put(self, objects) -> list:
        return self.remote.insert([object_from_wire(o) for o in objects
                                   if isinstance(o, dict)])

    async def objects(self, ids) -> list:
        """Fetch ``ids`` not known yet (with each asset's dynamic and
        bitasset data, each account's statistics) and insert them."""
        remote = self.remote
        todo = [i for i in dict.fromkeys(ids) if i not in remote.known and remote.is_remote(i)]
        while todo:
            found = []
            for at in range(0, len(todo), 96):
                found += await self.node.call("get_objects", todo[at:at + 96])
            self._put(found)
            remote.mark_done(*[("object", i) for i in todo])
            more = []
            for obj in found:
                if not isinstance(obj, dict):
                    continue
                more += [obj.get(k) for k in ("dynamic_asset_data_id", "bitasset_data_id",
                                               "statistics")]
            todo = [i for i in dict.fromkeys(more) if isinstance(i, str)
                    and i not in remote.known and remote.is_remote(i)]
        return ids

    async def _load_object(self, oid: str) -> None:
        await self.objects([oid])

    async def _load_name(self, name: str) -> None:
        account = await self.node.call("get_account_by_name", name)
        if isinstance(account, dict):
            await self.objects([account["id"]])

    async def _load_symbol(self, symbol: str) -> None:
        [asset] = await self.node.call("lookup_asset_symbols", [symbol])
        if isinstance(asset, dict):
            await self.objects([asset["id"]])

    async def _load_account(self, account_id: str) -> None:
        found = await self.node.call("get_full_accounts", [account_id], False)
        full = found[0][1] if found else None
        if not isinstance(full, dict):
            await self.objects([account_id])
            return
        more = [k for k, v in (full.get("more_data_available") or {}).items() if v]
        if more:
            raise ForkError(f"--fork-url {self.node.address.url}: account {account_id} has "
                            f"more {', '.join(more)} than get_full_accounts returns; a fork "
                            f"loads accounts whole")
        objs = [full.get("account"), full.get("statistics")]
        for key in ("balances", "limit_orders", "call_orders", "settle_orders",
                    "vesting_balances"):
            objs += full.get(key) or []
        self._put(objs)
        self.remote.mark_done(("vesting", account_id))
        await self.objects([account_id, full["account"]["statistics"]])

    async def _load_vesting(self, account_id: str) -> None:
        self._put(await self.node.call("get_vesting_balances", account_id))

    async def _load_market(self, base: str, quote: str) -> None:
        orders = await self.node.call("get_limit_orders", base, quote, MARKET_PAGE)
        sides = {}
        for o in orders:
            side = o["sell_price"]["base"]["asset_id"]
            sides[side] = sides.get(side, 0) + 1
        if any(n >= MARKET_PAGE for n in sides.values()):
            raise ForkError(f"--fork-url {self.node.address.url}: market {base}/{quote} has "
                            f"{MARKET_PAGE} or more orders on a side, more than a fork loads")
        self._put(orders)
        self.remote.mark_done(("market", base, quote))

    async def _load_calls(self, asset_id: str) -> None:
        calls = await self.node.call("get_call_orders", asset_id, MARKET_PAGE)
        if len(calls) >= MARKET_PAGE:
            raise ForkError(f"--fork-url {self.node.address.url}: {asset_id} has "
                            f"{MARKET_PAGE} or more positions, more than a fork loads")
        self._put(calls)

    async def _load_settles(self, asset_id: str) -> None:
        settles = await self.node.call("get_settle_orders", asset_id, MARKET_PAGE)
        if len(settles) >= MARKET_PAGE:
            raise ForkError(f"--fork-url {self.node.address.url}: {asset_id} has "
                            f"{MARKET_PAGE} or more force settlements, more than a fork loads")
        self._put(settles)

    async def _load_bids(self, asset_id: str) -> None:
        bids = await self.node.call("get_collateral_bids", asset_id, BIDS_PAGE, 0)
        if len(bids) >= BIDS_PAGE:
            raise ForkError(f"--fork-url {self.node.address.url}: {asset_id} has "
                            f"{BIDS_PAGE} or more collateral bids, more than a fork loads")
        self._put(bids)

    async def _load_key(self, key: str) -> None:
        [ids] = await self.node.call("get_key_references", [key])
        await self.objects(ids)

    async def _load_balance_objects(self, address: str) -> None:
        self._put(await self.node.call("get_balance_objects", [address]))

    async def _load_witness_of(self, account_id: str) -> None:
        self._put([await self.node.call("get_witness_by_account", account_id)])

    async def _load_committee_of(self, account_id: str) -> None:
        self._put([await self.node.call("get_committee_member_by_account", account_id)])


class ForkBlockLog:
    """A block log holding a lazy fork's own blocks N+1, N+2, ... (``log``,
    a :class:`~nodeapi.chain.blocklog.BlockLog` numbering them 1, 2, ...
    in its file): the chain's numbers in and out.  The live chain's blocks
    1..N are not here (``read`` gives None for them: the devnet has only
    their state)."""

    def __init__(self, log, base: int) -> None:
        self.log = log
        self.base = base
        log.numbering_offset = base

    @property
    def head_num(self) -> int:
        """The chain's number of the last block (the fork block N when the
        devnet has made none)."""
        return self.base + self.log.head_num

    def append(self, block: dict) -> int:
        """Append block ``head_num + 1``; its number (BlockLog.append)."""
        return self.base + self.log.append(block)

    def read(self, num: int):
        """Block ``num`` (a dict) or None (a live chain's block, or past
        the head)."""
        return self.log.read(num - self.base) if num > self.base else None

    def read_raw(self, num: int):
        """The payload bytes of block ``num`` or None, as :meth:`read`."""
        return self.log.read_raw(num - self.base) if num > self.base else None

    def blocks(self, start: int = 1):
        """``(num, block)`` of the devnet's blocks from ``start`` on."""
        for num, block in self.log.blocks(max(start - self.base, 1)):
            yield num + self.base, block

    def truncate(self, num: int) -> None:
        """Drop the blocks after ``num`` (not below the fork block:
        ValueError)."""
        if num < self.base:
            raise ValueError(f"Cannot truncate the fork's block log to block {num}: it "
                             f"starts after block {self.base} of the live chain")
        self.log.truncate(num - self.base)

    def __getattr__(self, name):  # open, close, batched, path, sync, ...
        return getattr(self.log, name)


async def fork_lazily(chain, node: LiveNode, *, dev_key: str, dev_names=(),
                      registrar: str = "", log: Logger | None = None) -> LazyLoader:
    """Make ``chain`` (fresh, at its genesis) a lazy fork of the live node
    ``node`` (connected) at its head block (docs/DESIGN.rst, "A lazy
    fork"): the head, the global objects, the active witnesses, the genesis balances of
    ``dev_key``'s addresses, the accounts named ``dev_names`` (looked up)
    and ``registrar`` (loaded whole).  Returns the loader (its
    ``remote``: the chain's :class:`~nodeapi.chain.remote.RemoteState`).

    :raises ForkError: the node of another chain, or failing a call."""
    log = log or Logger()
    url = node.address.url
    if chain.head_block_num != 0 or chain.block_log.head_num != 0:
        raise ForkError(f"--fork-url needs a fresh chain, this one is at block "
                        f"{chain.head_block_num}")
    props = await node.call("get_chain_properties")
    if props.get("chain_id") != chain.chain_id:
        raise ForkError(f"--fork-url {url} is chain {props.get('chain_id')}, not the devnet's "
                        f"{chain.chain_id}: start with --genesis-json of that chain")
    limits = await find_limits(node)
    loader = LazyLoader(node)
    remote = loader.remote = RemoteState(limits, loader)
    [gpo, dgp, schedule] = await node.call("get_objects", ["2.0.0", "2.1.0", "2.12.0"])
    committee = await node.call("get_objects", ["1.2.0"])
    statistics = committee[0]["statistics"]
    store = ObjectStore(statistics[:statistics.rfind(".")])
    store.next_instance = dict(limits)
    remote.install(store)
    loader._put([gpo, dgp, schedule])
    await loader.objects([CORE_ASSET, "2.11.0", "2.13.0"] + list(gpo["active_witnesses"])
                         + list(gpo.get("active_committee_members", [])))
    witnesses = [store.objects[w] for w in gpo["active_witnesses"]]
    await loader.objects([w["witness_account"] for w in witnesses]
                         + [w["pay_vb"] for w in witnesses if w.get("pay_vb")])
    for name in dev_names:
        await loader(("name", name))
    if registrar:
        await loader(("name", registrar))
        reg = dict.get(store.account_by_name, registrar)
        if reg:
            await loader(("account", reg))
    addresses = sorted(key_addresses(dev_key, chain.address_prefix))
    loader._put(await node.call("get_balance_objects", addresses))
    remote.mark_done(*[("balance_objects", a) for a in addresses])
    head = store.objects["2.1.0"]
    num, bid = head["head_block_number"], head["head_block_id"]
    chain.block_log = chain.blocks.block_log = ForkBlockLog(chain.block_log, num)
    chain.restore(store, {num & 0xFFFF: bid}, {}, limits.get("1.11", 0), limits.get("2.9", 0))
    chain.blocks.block_log = chain.block_log
    log.info("Devnet fork of {url} at its head block {num} ({id}), state loaded lazily; "
             "{calls} calls to start", url=url, num=num, id=bid, calls=node.calls)
    return loader


async def sync_from(chain, address, block: int, reactor, *, max_message_size: int,
                    timeout: float = 30.0, log: Logger | None = None) -> int:
    """Push blocks 1..``block`` (0: the node's head block now) of the node
    at ``address`` (a :class:`~nodeapi.protocol.node_address.NodeAddress`,
    of ``chain``'s chain) into ``chain`` (at block 0) over a
    :class:`LiveNode`; returns the head number.

    Every wait is bounded by ``timeout`` seconds (connecting, each call).

    :raises ForkError: the node unreachable, on another chain or failing a
        call, a block refused (the chain's error named), ``block`` past its
        head, or a chain already past block 0."""
    log = log or Logger()
    if chain.head_block_num != 0:
        raise ForkError(f"--fork-url needs a fresh chain, this one is at block "
                        f"{chain.head_block_num}")
    node = LiveNode(address, reactor, max_message_size=max_message_size, timeout=timeout,
                    chain_id=chain.chain_id)
    try:
        props = await node.call("get_dynamic_global_properties")
        head = int(props["head_block_number"])
        target = block or head
        if target > head:
            raise ForkError(f"--fork-block {target} is past the head {head} of "
                            f"{address.url}")
        log.info("Devnet fork: syncing blocks 1..{target} from {url}", target=target,
                 url=address.url)
        num = 1
        while num <= target:
            last = min(num + WINDOW - 1, target)
            try:
                blocks = await defer.gatherResults(
                    [defer.Deferred.fromCoroutine(node.call("get_block", n))
                     for n in range(num, last + 1)], consumeErrors=True)
            except defer.FirstError as exc:
                raise exc.subFailure.value from None
            for offset, raw in enumerate(blocks):
                if not isinstance(raw, dict):
                    raise ForkError(f"--fork-url {address.url} has no block {num + offset}")
                try:
                    block_in = strip_block_info(raw)
                    # the live chain's history: its time may run ahead of
                    # this machine's clock (a chain made faster than real
                    # time); every other check of a pushed block holds
                    chain.push_block(block_in, now=parse_time(block_in["timestamp"]))
                except Exception as exc:
                    raise ForkError(f"--fork-url {address.url}: block {num + offset} "
                                    f"refused: {exc}") from None
                if (offset + 1) % APPLY_SLICE == 0:
                    await task.deferLater(reactor, 0, lambda: None)
            num = last + 1
        return chain.head_block_num
    finally:
        await node.close()


def _bounded(d: defer.Deferred, timeout: float, reactor) -> defer.Deferred:
    """``d`` failing with ``TimeoutError`` after ``timeout`` seconds."""
    return d.addTimeout(timeout, reactor)
