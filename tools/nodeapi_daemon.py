"""The one daemon runner: ``twistd -n nodeapi`` in a subprocess, as a user
would run it, with its JSON-RPC over HTTP (docs/wire-contract.rst).  The
test kit re-exports it as ``kit.daemon``; the differential runner starts
its follower with it."""

import os
import signal
import socket
import subprocess
import sys
import time

import orjson
import urllib.error
import urllib.request

from tools.processes import read_log, stop_process

#: the repository's root (the daemon runs from it, its nodeapi first on the path)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: the shipped api-access file (bytemaster / supersecret: every API)
ACCESS = os.path.join(ROOT, "etc", "api-access.json")


def twistd_command(*args) -> list:
    """``twistd ARGS`` with this interpreter (the venv's twistd, as users run it),
    this checkout's nodeapi first on the path (not a copy installed in the venv)."""
    return [sys.executable, "-c", f"import sys; sys.path.insert(0, {ROOT!r}); "
            "from twisted.scripts.twistd import run; run()", *args]


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the OS picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DaemonError(RuntimeError):
    """A JSON-RPC error answered by the daemon: ``.error`` is the error
    object (``{"code", "message", "data"}``); ``args[0]`` is that object
    too, as callers matching ``RuntimeError(error)`` expect."""

    def __init__(self, error):
        super().__init__(error)
        self.error = error


class Daemon:
    """One ``twistd -n nodeapi`` process with its log in ``<data_dir>.log``."""

    def __init__(self, data_dir, *args, port=None, twistd_args=(), env=None):
        self.data_dir = str(data_dir)
        self.env = dict(env or {})  # more environment variables
        self.fixed_port = port is not None
        self.port = port or free_port()
        self.twistd_args = list(twistd_args)  # before the "nodeapi" subcommand
        self.args = ["--data-dir", self.data_dir, *args]  # and --rpc-endpoint self.port
        self.log_path = self.data_dir.rstrip("/") + ".log"
        self.proc = None

    @property
    def ws_url(self) -> str:
        """Its WebSocket RPC URL on loopback (clients' ``node``)."""
        return f"ws://127.0.0.1:{self.port}"

    def start(self, wait=True, timeout=60):
        """Start ``twistd -n nodeapi`` and (``wait``) wait up to ``timeout`` s
        until its RPC answers; returns ``self``.  A port found free by
        :func:`free_port` may be taken by another process (another pytest
        worker) before the daemon binds it: when the daemon exits at once
        saying its own RPC endpoint is in use, it starts again on another
        free port (not a ``port`` given to the constructor), up to 5 times.
        AssertionError with the log when it exits or does not serve in time."""
        for attempt in range(5):
            logged = os.path.getsize(self.log_path) if os.path.exists(self.log_path) else 0
            self._spawn()
            if not wait:
                return self
            try:
                self.wait_rpc(timeout)
                return self
            except AssertionError:
                with open(self.log_path, "rb") as f:
                    f.seek(logged)
                    tail = f.read()
                taken = (self.proc.poll() is not None and b"Address already in use" in tail
                         and f"cannot listen on {self.rpc_endpoint}".encode() in tail)
                if not taken or self.fixed_port or attempt == 4:
                    raise
                self.log_file.close()
                self.port = free_port()

    @property
    def rpc_endpoint(self) -> str:
        """Its ``--rpc-endpoint``: ``tcp:PORT:interface=127.0.0.1``."""
        return f"tcp:{self.port}:interface=127.0.0.1"

    def _spawn(self):
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   **self.env)
        self.log_file = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            twistd_command("-n", "--pidfile=", *self.twistd_args, "nodeapi",
                           "--rpc-endpoint", self.rpc_endpoint, *self.args),
            cwd=ROOT, env=env, stdout=self.log_file, stderr=subprocess.STDOUT)

    def wait_rpc(self, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"daemon exited {self.proc.returncode}:\n{self.log()}")
            try:
                # a short wait per try: a port taken by a process that
                # accepts but never answers must not hold the loop long
                return self.call("get_chain_id", timeout=5)
            except OSError:
                time.sleep(0.2)
        raise AssertionError(f"daemon RPC not up in {timeout} s:\n{self.log()}")

    def call(self, method, *params, api=None, timeout=10):
        body = ({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}
                if api is None else
                {"jsonrpc": "2.0", "id": 1, "method": "call", "params": [api, method,
                                                                          list(params)]})
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/rpc",
                                     data=orjson.dumps(body),
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                reply = orjson.loads(resp.read())
        except urllib.error.HTTPError as exc:  # JSON-RPC errors come with 4xx/5xx
            reply = orjson.loads(exc.read())
        if "error" in reply:
            raise DaemonError(reply["error"])
        return reply["result"]

    def head(self):
        props = self.call("get_dynamic_global_properties")
        return props["head_block_number"], props["head_block_id"]

    def wait_head(self, num, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.head()[0] >= num:
                return self.head()
            time.sleep(0.2)
        raise AssertionError(f"head did not reach {num}:\n{self.log()}")

    def stop(self, sig=signal.SIGTERM, timeout=30):
        """Send ``sig`` and wait; the exit status (twistd re-raises the
        signal it stopped on, so a graceful SIGTERM stop is ``-SIGTERM``,
        which systemd counts as a clean stop)."""
        return stop_process(self.proc, self.log_file, sig, timeout)

    def log(self):
        return read_log(self.log_path)

