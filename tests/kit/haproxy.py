"""HAProxy (Debian's ``haproxy``) in front of nodeapi daemons, with the
shipped ``etc/haproxy.cfg``: the addresses go in through its environment
variables, the runtime API (``show stat``, ``set server``) through its unix
socket."""

import csv
import io
import os
import shutil
import socket
import subprocess
import time

from kit.daemon import ROOT, free_port

CONFIG = os.path.join(ROOT, "etc", "haproxy.cfg")


def haproxy_binary() -> str:
    """The ``haproxy`` executable (.ci/run installs Debian's package)."""
    path = shutil.which("haproxy") or (os.path.exists("/usr/sbin/haproxy")
                                       and "/usr/sbin/haproxy")
    assert path, "haproxy is needed for the replica tests (.ci/run installs it)"
    return path


class HAProxy:
    """``haproxy -db -f etc/haproxy.cfg`` with the producer and two
    followers given as ``host:port`` strings; its log in ``<workdir>/haproxy.log``.
    ``send_proxy``: the shipped file with ``send-proxy-v2`` on its
    ``default-server`` line (the client's address as a PROXY protocol
    header instead of ``X-Forwarded-For``; the nodes then need
    ``--trusted-proxies``), written to ``<workdir>/haproxy-proxy-v2.cfg``.

    :ivar port: the frontend's port on 127.0.0.1.
    """

    def __init__(self, workdir, producer: str, follower1: str, follower2: str,
                 send_proxy: bool = False):
        self.config = CONFIG
        if send_proxy:
            with open(CONFIG) as f:
                text = f.read()
            assert text.count("\n    default-server ") == 1
            text = text.replace("\n    default-server ", "\n    default-server send-proxy-v2 ")
            self.config = os.path.join(str(workdir), "haproxy-proxy-v2.cfg")
            with open(self.config, "w") as f:
                f.write(text)
        self.port = free_port()
        name = "haproxy-proxy-v2" if send_proxy else "haproxy"
        self.socket_path = os.path.join(str(workdir), f"{name}.sock")
        self.log_path = os.path.join(str(workdir), f"{name}.log")
        self.env = dict(os.environ, NODEAPI_LISTEN=f"127.0.0.1:{self.port}",
                        NODEAPI_PRODUCER=producer, NODEAPI_FOLLOWER1=follower1,
                        NODEAPI_FOLLOWER2=follower2, NODEAPI_HAPROXY_SOCKET=self.socket_path,
                        NODEAPI_HAPROXY_LOG="stdout")
        self.proc = None

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout=20):
        """Start it and wait until every server passed its health check."""
        self.log_file = open(self.log_path, "ab")
        self.proc = subprocess.Popen([haproxy_binary(), "-db", "-f", self.config], env=self.env,
                                     stdout=self.log_file, stderr=subprocess.STDOUT)
        self.wait_status(lambda s: s == "UP", timeout)
        return self

    def command(self, line: str) -> str:
        """One runtime API command (``show stat``, ``set server ...``); its answer."""
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(5)
            s.connect(self.socket_path)
            s.sendall(line.encode() + b"\n")
            chunks = []
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def servers(self, backend="nodeapi_http") -> dict:
        """``{server name: its "show stat" row}`` of ``backend`` (fields
        ``status``, ``scur`` current sessions, ``stot`` total sessions...)."""
        text = self.command("show stat").lstrip("# ")
        return {row["svname"]: row for row in csv.DictReader(io.StringIO(text))
                if row["pxname"] == backend and row["svname"] not in ("FRONTEND", "BACKEND")}

    def wait_status(self, wanted, timeout=20, backend="nodeapi_http", names=None):
        """Wait until ``wanted(status)`` holds for the servers ``names``
        (default: all) of ``backend``; AssertionError with the log after
        ``timeout`` s."""
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"haproxy exited {self.proc.returncode}:\n{self.log()}")
            try:
                last = self.servers(backend)
                if last and all(wanted(row["status"]) for name, row in last.items()
                                if names is None or name in names):
                    return last
            except OSError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"haproxy servers not as wanted: "
                             f"{ {n: r['status'] for n, r in (last or {}).items()} }\n"
                             f"{self.log()}")

    def sessions(self, backend="nodeapi_ws") -> dict:
        """``{server name: current sessions}`` of ``backend``."""
        return {name: int(row["scur"]) for name, row in self.servers(backend).items()}

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.log_file.close()

    def log(self) -> str:
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")[-5000:]
