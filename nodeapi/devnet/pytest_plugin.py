"""The pytest plugin of nodeapi (entry point ``pytest11``): a devnet for a
test suite, as anvil is for Ethereum test suites.

Fixtures:

- ``nodeapi_devnet`` (session): ``twistd nodeapi --devnet`` started in a
  subprocess on a free 127.0.0.1 port and stopped at the end; a
  :class:`DevnetProcess` with ``url`` (``ws://``), ``http_url``,
  ``chain_id``, ``accounts`` (:class:`DevAccount`: name, id, wif,
  public_key) and the devnet API as methods (``advance_time``,
  ``snapshot``, ...; :meth:`DevnetProcess.call` for any other).  Extra
  ``twistd nodeapi`` options come from the ``NODEAPI_DEVNET_ARGS``
  environment variable (shell words, e.g. ``--devnet-accounts 3``);
- ``nodeapi_snapshot`` (function): the same devnet, snapshotted before the
  test and reverted after it, so every test starts from the same state.

pytest loads this module in every run of anyone who installed nodeapi, so
it imports nothing but the standard library and pytest, and starts
nothing until a test asks for a fixture.
"""

import calendar
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from typing import NamedTuple

import pytest

from nodeapi.devnet.registration import registration_lines

_READY = re.compile(r"Devnet ready on (ws://\S+)")
#: the key of the faucet init0 (the bundled genesis' published development key)
INIT0_WIF = "5KQwrPbwdL6PhXujxW37FSSQZ1JiwsST4cqQzDeyXtP79zkvFD3"


#: Linux prctl option: the signal a process gets when its parent dies
PR_SET_PDEATHSIG = 1


def _die_with_parent(parent_pid: int):
    """A ``preexec_fn`` making the devnet get SIGTERM when the process that
    started it dies, even by SIGKILL (Linux ``prctl(PR_SET_PDEATHSIG)``),
    so a killed pytest leaves no devnet running; None elsewhere.  The child
    exits at once if the parent died before the call took effect."""
    if not sys.platform.startswith("linux"):
        return None

    def preexec() -> None:
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        except (OSError, AttributeError):
            return
        if os.getppid() != parent_pid:
            os._exit(1)

    return preexec


class DevAccount(NamedTuple):
    """A ready account of the devnet."""

    name: str
    id: str
    wif: str
    public_key: str


class DevnetError(RuntimeError):
    """The devnet did not start, or answered a call with an error (the
    JSON-RPC error object is :attr:`error`)."""

    def __init__(self, message: str, error=None) -> None:
        super().__init__(message)
        self.error = error


class DevnetProcess:
    """One ``twistd -n nodeapi --devnet`` subprocess (its log in
    :attr:`log_path`).

    :param args: more ``twistd nodeapi`` options.
    :param python: the interpreter running twistd (default: this one).
    :param env: the subprocess environment (default: this one's).
    """

    def __init__(self, *args, python: str = sys.executable, env=None) -> None:
        self.args = list(args)
        self.python = python
        self.env = dict(os.environ if env is None else env)
        self.proc = None
        self.url = self.http_url = self.chain_id = None
        self.accounts: list = []
        self._dir = tempfile.mkdtemp(prefix="nodeapi-devnet-test-")
        self.log_path = os.path.join(self._dir, "devnet.log")

    def start(self, timeout: float = 60.0) -> "DevnetProcess":
        """Start and wait for the "Devnet ready" line; raises
        :class:`DevnetError` (with the log) when it exits or times out."""
        command = [self.python, "-c", "from twisted.scripts.twistd import run; run()",
                   "-n", "--pidfile=", "nodeapi", "--devnet",
                   "--rpc-endpoint", "tcp:0:interface=127.0.0.1", *self.args]
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, cwd=self._dir, env=self.env,
                                         preexec_fn=_die_with_parent(os.getpid()))
        deadline = time.monotonic() + timeout
        while True:
            match = _READY.search(self.log())
            if match:
                break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                log = self.log()
                self.stop()
                raise DevnetError(f"nodeapi devnet did not start:\n{log}")
            time.sleep(0.05)
        self.url = match.group(1)
        self.http_url = self.url.replace("ws://", "http://", 1)
        self.chain_id = self.call("database", "get_chain_id")
        self.accounts = [DevAccount(a["name"], a["id"], a["wif"], a["public_key"])
                         for a in self.call("devnet", "get_accounts")]
        return self

    def log(self) -> str:
        """The daemon's log so far."""
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    @property
    def pid(self) -> int:
        """The devnet process' id."""
        return self.proc.pid

    def call(self, api: str, method: str, *params, timeout: float = 60.0):
        """``api.method(*params)`` over HTTP JSON-RPC; the result, or
        :class:`DevnetError` with the error object."""
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "call",
                           "params": [api, method, list(params)]}).encode()
        request = urllib.request.Request(self.http_url + "/rpc", data=body,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                reply = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            reply = json.loads(exc.read())
        if "error" in reply:
            raise DevnetError(f"{api}.{method}: {reply['error'].get('message')}", reply["error"])
        return reply["result"]

    # -- the devnet API (nodeapi.api.devnet) -------------------------------------

    def produce_blocks(self, count: int = 1) -> int:
        """Produce ``count`` (1..100000) blocks
        (:meth:`nodeapi.api.devnet.DevnetApi.produce_blocks`); the head block
        number.  :class:`DevnetError` as :meth:`call`."""
        return self.call("devnet", "produce_blocks", count)

    def advance_time(self, seconds: int) -> dict:
        """One block ``seconds`` (1..ten years) after the head block
        (:meth:`~nodeapi.api.devnet.DevnetApi.advance_time`); the head, as
        :meth:`head`.  :class:`DevnetError` as :meth:`call`."""
        return self.call("devnet", "advance_time", seconds)

    def advance_to_maintenance(self) -> dict:
        """The block at the next maintenance time
        (:meth:`~nodeapi.api.devnet.DevnetApi.advance_to_maintenance`); the
        head, as :meth:`head`.  :class:`DevnetError` as :meth:`call`."""
        return self.call("devnet", "advance_to_maintenance")

    def snapshot(self) -> int:
        """Capture the node state
        (:meth:`~nodeapi.api.devnet.DevnetApi.snapshot`); its id for
        :meth:`revert`.  :class:`DevnetError` as :meth:`call` (too many
        snapshots held)."""
        return self.call("devnet", "snapshot")

    def revert(self, snapshot_id: int) -> bool:
        """Put the node back to snapshot ``snapshot_id``, dropping it and later
        ones (:meth:`~nodeapi.api.devnet.DevnetApi.revert`); True.
        :class:`DevnetError` as :meth:`call` (no such snapshot)."""
        return self.call("devnet", "revert", snapshot_id)

    def set_balance(self, account: str, amount) -> dict:
        """Set ``account``'s (name or id) balance to ``amount``: core satoshis,
        or ``{"amount", "asset_id"}``
        (:meth:`~nodeapi.api.devnet.DevnetApi.set_balance`); the balance
        ``{"amount", "asset_id"}``.  :class:`DevnetError` as :meth:`call`."""
        return self.call("devnet", "set_balance", account, amount)

    def create_account(self, name: str, public_key: str, amount: int = 0) -> dict:
        """Register ``name`` with owner, active and memo key ``public_key`` and
        fund it with ``amount`` core satoshis
        (:meth:`~nodeapi.api.devnet.DevnetApi.create_account`); ``{"name",
        "id", "public_key"}``.  :class:`DevnetError` as :meth:`call`."""
        return self.call("devnet", "create_account", name, public_key, amount)

    def dump_state(self, path: str) -> int:
        """Write the devnet's state to ``path`` on this machine (the devnet
        API's ``dump_state()`` answers it as text; ``--load-state`` reads
        the file); the head block number written."""
        text = self.call("devnet", "dump_state")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        meta = json.loads(text.partition("\n")[0])  # ["meta", "nodeapi-checkpoint", {...}]
        return meta[2]["block_num"]

    def head(self) -> dict:
        """The head block and the devnet's clock
        (:meth:`~nodeapi.api.devnet.DevnetApi.get_head`):
        ``{"head_block_number", "head_block_id", "time", "offset", "clock",
        "next_block_time", "automine"}``.  :class:`DevnetError` as
        :meth:`call`."""
        return self.call("devnet", "get_head")

    def increase_time(self, seconds: int) -> dict:
        """Move the devnet's clock ``seconds`` (1..ten years) on without a
        block (:meth:`~nodeapi.api.devnet.DevnetApi.increase_time`); the head,
        as :meth:`head`.  :class:`DevnetError` as :meth:`call`."""
        return self.call("devnet", "increase_time", seconds)

    def set_next_block_time(self, when) -> str:
        """Stamp the next block at ``when`` (ISO text or seconds,
        :meth:`~nodeapi.api.devnet.DevnetApi.set_next_block_time`); the time as
        text.  :class:`DevnetError` as :meth:`call`."""
        return self.call("devnet", "set_next_block_time", when)

    def set_automine(self, enabled: bool) -> bool:
        """Automine on or off
        (:meth:`~nodeapi.api.devnet.DevnetApi.set_automine`); ``enabled``.
        :class:`DevnetError` as :meth:`call`."""
        return self.call("devnet", "set_automine", enabled)

    def set_confirming_blocks(self, enabled: bool) -> bool:
        """Automine's blocks followed by an empty one or not
        (:meth:`~nodeapi.api.devnet.DevnetApi.set_confirming_blocks`);
        ``enabled``.  :class:`DevnetError` as :meth:`call`."""
        return self.call("devnet", "set_confirming_blocks", enabled)

    def set_interval_mining(self, seconds: int) -> int:
        """A block every ``seconds`` (0..86400; 0: no timer;
        :meth:`~nodeapi.api.devnet.DevnetApi.set_interval_mining`);
        ``seconds``.  :class:`DevnetError` as :meth:`call`."""
        return self.call("devnet", "set_interval_mining", seconds)

    def pending_transactions(self) -> list:
        """The accepted transactions not in a block yet, ``[{"id",
        "transaction"}]``
        (:meth:`~nodeapi.api.devnet.DevnetApi.pending_transactions`).
        :class:`DevnetError` as :meth:`call`."""
        return self.call("devnet", "pending_transactions")

    def drop_transaction(self, trx_id: str) -> list:
        """Drop pending transaction ``trx_id`` (40 hex digits) and those that
        fail without it
        (:meth:`~nodeapi.api.devnet.DevnetApi.drop_transaction`); the ids
        dropped.  :class:`DevnetError` as :meth:`call` (no such
        transaction)."""
        return self.call("devnet", "drop_transaction", trx_id)

    def impersonate_account(self, account: str) -> list:
        """Accept transactions needing only ``account``'s (name or id)
        authority without its signatures
        (:meth:`~nodeapi.api.devnet.DevnetApi.impersonate_account`); the
        impersonated account ids.  :class:`DevnetError` as :meth:`call`."""
        return self.call("devnet", "impersonate_account", account)

    def stop_impersonating_account(self, account: str) -> list:
        """Require ``account``'s signatures again
        (:meth:`~nodeapi.api.devnet.DevnetApi.stop_impersonating_account`); the
        impersonated account ids left.  :class:`DevnetError` as
        :meth:`call`."""
        return self.call("devnet", "stop_impersonating_account", account)

    def chain_registration(self) -> dict:
        """The lines that make each client know the devnet's chain (the
        start banner prints them too): ``{"python-bitshares": ...,
        "bitsharesjs": ...}`` (python-bitshares refuses an unknown chain
        id; bitsharesjs falls back to the ``CBA`` key prefix)."""
        return registration_lines(self.chain_id)

    def expiration(self, seconds: int = 30) -> int:
        """Seconds from the wall clock that make a client's transaction
        expire ``seconds`` after the head block: python-bitshares takes its
        ``expiration`` from the wall clock, so once the head is ahead of it
        (after :meth:`advance_time`, or many blocks: one per second at
        least) make the client with
        ``BitShares(url, expiration=devnet.expiration())``."""
        head = calendar.timegm(time.strptime(self.head()["time"], "%Y-%m-%dT%H:%M:%S"))
        return max(head - int(time.time()), 0) + seconds

    def bitshares(self, **kwargs):
        """A python-bitshares ``BitShares`` on :attr:`url` holding every
        ready account's key (and the faucet init0's), the devnet's chain
        registered with python-bitshares first (it refuses unknown chain
        ids); ``kwargs`` go to ``BitShares`` (``expiration``, ...).
        Imports python-bitshares, which is not a dependency of nodeapi."""
        from bitshares import BitShares
        from bitsharesbase.chains import known_chains

        config = self.call("database", "get_config")
        known_chains["NODEAPI_DEVNET"] = {"chain_id": self.chain_id,
                                          "core_symbol": config["GRAPHENE_SYMBOL"],
                                          "prefix": config["GRAPHENE_ADDRESS_PREFIX"]}
        keys = [a.wif for a in self.accounts] + [INIT0_WIF]
        return BitShares(node=self.url, keys=kwargs.pop("keys", keys), **kwargs)

    def stop(self, timeout: float = 30.0):
        """SIGTERM and wait (SIGKILL after ``timeout``), then remove the
        log's directory; the exit status."""
        try:
            if self.proc is None or self.proc.poll() is not None:
                return None if self.proc is None else self.proc.returncode
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                return self.proc.wait()
        finally:
            shutil.rmtree(self._dir, ignore_errors=True)


@pytest.fixture(scope="session")
def nodeapi_devnet():
    """A running devnet for the session (module text)."""
    devnet = DevnetProcess(*shlex.split(os.environ.get("NODEAPI_DEVNET_ARGS", "")))
    devnet.start()
    yield devnet
    devnet.stop()


@pytest.fixture
def nodeapi_snapshot(nodeapi_devnet):
    """The session devnet, reverted after the test to its state before."""
    snapshot_id = nodeapi_devnet.snapshot()
    yield nodeapi_devnet
    nodeapi_devnet.revert(snapshot_id)
