"""The reference node and nodeapi side by side: each produces its own chain
from the bundled genesis (same chain id, same keys), and a test sends both
the same operations, signed over each one's head, then compares what they
answer.  :class:`Side` gives both one small API; :func:`start_sides`
starts the pair with init0 holding the genesis balance.

Used by tests marked ``reference`` (kit.reference)."""

import calendar
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from nodeapi.protocol.times import format_time
from nodeapi.protocol.transaction import sign_transaction

from kit.daemon import Daemon
from kit.keys import CHAIN_ID, DEV_PUB, DEV_WIF
from kit.reference import ReferenceError, start_reference
from kit.signing import tapos

INIT0 = "1.2.6"


def core(n: int) -> dict:
    """``n`` core satoshis (TEST, 1.3.0)."""
    return {"amount": n, "asset_id": "1.3.0"}


def amount(n: int, asset_id: str) -> dict:
    return {"amount": n, "asset_id": asset_id}


class Refused(Exception):
    """A JSON-RPC error answer; ``.error`` is the error object."""

    def __init__(self, error):
        super().__init__(error.get("message"))
        self.error = error


class Side:
    """One node, the reference (:class:`kit.reference.ReferenceNode`) or
    nodeapi (:class:`kit.daemon.Daemon`), behind one API: ``call`` answers
    the result or raises :class:`Refused`."""

    def __init__(self, node, name: str):
        self.node, self.name = node, name

    @property
    def ws_url(self) -> str:
        """The node's WebSocket RPC URL (what a client connects to)."""
        return self.node.ws_url

    def call(self, method, *params, api="database"):
        try:
            return self.node.call(method, *params, api=api)
        except ReferenceError as exc:
            raise Refused(exc.error) from None
        except RuntimeError as exc:  # kit.daemon: RuntimeError(error object)
            raise Refused(exc.args[0]) from None

    def head_time(self) -> int:
        props = self.call("get_dynamic_global_properties")
        return calendar.timegm(time.strptime(props["time"], "%Y-%m-%dT%H:%M:%S"))

    def expiration(self, seconds: int) -> str:
        """The head time plus ``seconds``, as fc writes a time."""
        return format_time(self.head_time() + seconds)

    def signed(self, ops, wif=DEV_WIF) -> dict:
        props = self.call("get_dynamic_global_properties")
        head_time = calendar.timegm(time.strptime(props["time"], "%Y-%m-%dT%H:%M:%S"))
        trx = dict(tapos(props["head_block_number"], props["head_block_id"], head_time),
                   operations=ops, extensions=[], signatures=[])
        return sign_transaction(trx, CHAIN_ID, [wif], "TEST")

    def with_fees(self, ops) -> list:
        """``ops`` with each fee the node's required core fee."""
        zero = [[t, dict(d, fee=core(0))] for t, d in ops]
        fees = self.call("get_required_fees", zero, "1.3.0")
        return [[t, dict(d, fee=f[0] if isinstance(f, list) else f)]
                for (t, d), f in zip(zero, fees)]

    def push(self, *ops, wif=DEV_WIF, fees=True) -> list:
        """Broadcast ``ops`` in one transaction (each fee set to the required
        core fee unless ``fees`` is false: then ``ops`` carry theirs) and
        wait for its block; the operation results."""
        ops = self.with_fees(ops) if fees else list(ops)
        reply = self.call("broadcast_transaction_synchronous", self.signed(ops, wif),
                          api="network_broadcast")
        return reply["trx"]["operation_results"]

    def refusal(self, *ops, wif=DEV_WIF, fees=True) -> dict:
        """The error object refusing ``ops`` in one transaction (fees as
        :meth:`push` sets them)."""
        ops = self.with_fees(ops) if fees else list(ops)
        with pytest.raises(Refused) as info:
            self.call("broadcast_transaction", self.signed(ops, wif), api="network_broadcast")
        return info.value.error

    def balance(self, account: str, asset_id: str) -> int:
        [bal] = self.call("get_account_balances", account, [asset_id])
        return int(bal["amount"])

    def get(self, object_id: str) -> dict:
        [obj] = self.call("get_objects", [object_id])
        return obj


def on_both(pair, fn) -> list:
    """``[fn(reference), fn(nodeapi)]``, the two run at once (a thread
    each: both chains make their blocks at the wall clock, so a test
    waiting for blocks or for a due time waits once, not twice); an
    exception of either is raised (the reference's first)."""
    with ThreadPoolExecutor(max_workers=len(pair)) as pool:
        futures = [pool.submit(fn, side) for side in pair]
        return [future.result() for future in futures]


def start_sides(tmp) -> tuple:
    """``(reference, nodeapi)`` :class:`Side` objects, started under
    ``tmp`` (at once), init0 holding the genesis balance on both; stop
    them with :func:`stop_sides`."""
    node = Daemon(tmp / "nodeapi").start(wait=False)
    reference = None
    try:
        reference = start_reference(tmp, "reference")
        node.wait_rpc()
        # their first blocks are now (the genesis is of 2016): before them,
        # a transaction's TaPoS and expiration would refer to the genesis
        reference.wait_head(1)
        node.wait_head(1)
        pair = (Side(reference, "reference"), Side(node, "nodeapi"))
        on_both(pair, lambda side: side.push([37, {
            "deposit_to_account": INIT0, "balance_to_claim": "1.15.0",
            "balance_owner_key": DEV_PUB, "total_claimed": core(10 ** 15)}]))
    except BaseException:
        node.stop()
        if reference is not None:
            reference.stop()
        raise
    return pair


def stop_sides(pair) -> None:
    for side in pair:
        side.node.stop()
