"""The node under systemd (systemd/nodeapi.service): readiness sent to a
real datagram socket as NOTIFY_SOCKET (path and abstract namespace), the
log format when the standard output is the journal, exit status 78 for a
configuration error and the unit that does not restart it."""

import configparser
import io
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest
import pytest_twisted
from twisted.logger import LogLevel, Logger
from twisted.python.failure import Failure

from nodeapi.service_systemd import (
    JournalObserver, Notifier, notify_address, stream_is_journal)

from kit.daemon import ROOT, Daemon, twistd_command
from kit.journal import journal_stream_env

UNIT = os.path.join(ROOT, "systemd", "nodeapi.service")


def _receive(sock, until: str, timeout: float, node=None) -> list:
    """Datagrams from ``sock`` (text) up to the first holding ``until``."""
    got = []
    deadline = time.time() + timeout
    while not any(until in m.split("\n") for m in got):
        if node is not None and node.proc.poll() is not None:
            raise AssertionError(f"daemon exited {node.proc.returncode}:\n{node.log()}")
        sock.settimeout(max(0.1, min(1.0, deadline - time.time())))
        try:
            got.append(sock.recv(4096).decode())
        except socket.timeout:
            if time.time() > deadline:
                raise AssertionError(f"no {until} in {timeout} s: {got}") from None
    return got


@pytest.mark.slow
@pytest.mark.parametrize("abstract", [False, True], ids=["path", "abstract"])
def test_ready_once_the_rpc_port_serves_and_stopping_at_stop(tmp_path, abstract):
    """The daemon with NOTIFY_SOCKET (a unix datagram socket this test
    binds: a path, or ``@name`` in the abstract namespace) sends
    EXTEND_TIMEOUT_USEC while it starts, READY=1 with a STATUS once its RPC
    port serves (a call made right after READY is answered), STOPPING=1
    when SIGTERM stops it.  Its standard output is not the stream
    JOURNAL_STREAM names (another file): the lines keep twistd's date."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    if abstract:
        name = f"nodeapi-test-{os.getpid()}-{time.monotonic_ns()}"
        sock.bind("\0" + name)
        address = "@" + name
    else:
        address = str(tmp_path / "notify")
        sock.bind(address)
    env = dict(journal_stream_env(tmp_path / "not-stdout"), NOTIFY_SOCKET=address)
    node = Daemon(tmp_path / "data", env=env).start(wait=False)
    try:
        got = _receive(sock, "READY=1", 60, node)
        assert node.call("get_chain_id")  # serving when READY=1 arrived
        assert "EXTEND_TIMEOUT_USEC=30000000" in got[0].split("\n"), got
        ready = got[-1].split("\n")
        assert re.fullmatch(r"STATUS=Serving, head block \d+", ready[1]), got
        assert node.stop() == -signal.SIGTERM
        stopping = _receive(sock, "STOPPING=1", 10)
        assert "STATUS=Stopping" in stopping[-1].split("\n")
    finally:
        node.stop()
        sock.close()
    assert re.search(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} \[nodeapi\.service\.",
                     node.log(), re.M), node.log()
    # the same quiet start-up in twistd's own format on a plain standard output
    assert "reactor class" not in node.log() and " starting on " not in node.log()


@pytest.mark.slow
def test_journal_stream_lines_carry_the_priority_and_no_date(tmp_path):
    """With the standard output the JOURNAL_STREAM stream each line is
    ``<P>[namespace#level] text``: the journal's priority of the level, no
    twistd date (the journal stamps entries itself).  The first line says
    what runs; no "Starting factory <... at 0x...>" lines; the witnesses in
    id order."""
    log = tmp_path / "data.log"
    node = Daemon(tmp_path / "data", env=journal_stream_env(log)).start()
    node.stop()
    lines = log.read_text().splitlines()
    assert lines, log.read_text()
    assert all(re.match(r"<[2-7]>(\[[^\]]+\] |\t)", line) for line in lines), lines
    assert re.fullmatch(r"<6>\[nodeapi\.tap#info\] nodeapi \d+\.\d+\.\d+\S* \(Twisted \S+, "
                        r"Python \d+\.\d+\.\d+\)", lines[0]), lines[0]
    assert not [line for line in lines if "factory" in line or " at 0x" in line], lines
    # twistd's reactor class, a port's "<factory> starting on <port>", and a
    # replay of no block on a new chain tell an operator nothing
    assert not [line for line in lines if "reactor class" in line or " starting on " in line
                or "Replayed 0 blocks" in line], lines
    assert any(line.startswith("<6>[nodeapi.service.NodeService#info] Chain ready")
               for line in lines), lines
    assert any("producing for 11 witness(es) ['1.6.1', '1.6.2', '1.6.3', '1.6.4', '1.6.5', "
               "'1.6.6', '1.6.7', '1.6.8', '1.6.9', '1.6.10', '1.6.11']" in line
               for line in lines), lines  # in id order
    assert any(line.startswith("<4>[nodeapi.modes.ports#warn] witness: signing with the "
                               "published development key") for line in lines), lines


def test_notify_addresses():
    assert notify_address("/run/systemd/notify") == "/run/systemd/notify"
    assert notify_address("@nodeapi/x") == "\0nodeapi/x"
    for bad in ("relative/path", "@", "vsock:2:123"):
        with pytest.raises(ValueError, match="NOTIFY_SOCKET"):
            notify_address(bad)
    assert Notifier.from_environment({}) is None
    assert Notifier.from_environment({"NOTIFY_SOCKET": ""}) is None


def test_a_notification_nobody_receives_is_logged_once(tmp_path):
    events = []
    notifier = Notifier(str(tmp_path / "gone"))
    notifier.log = Logger(observer=events.append)
    assert notifier.send("READY=1") is False
    assert notifier.send("STOPPING=1") is False
    assert len(events) == 1 and events[0]["error"] == "No such file or directory"
    notifier.close()


def test_journal_stream_is_the_stream_named(tmp_path):
    env = journal_stream_env(tmp_path / "out")
    with open(tmp_path / "out", "ab") as same, open(tmp_path / "other", "ab") as other:
        assert stream_is_journal(env, same.fileno())
        assert not stream_is_journal(env, other.fileno())
        assert not stream_is_journal({}, same.fileno())
        assert not stream_is_journal({"JOURNAL_STREAM": "x:y"}, same.fileno())


def test_journal_observer_prefixes_every_line_with_the_priority():
    """A traceback's lines each carry the event's priority (journald makes
    each line an entry), continuation lines indented by a tab."""
    out = io.StringIO()
    log = Logger(namespace="nodeapi.x", observer=JournalObserver(out))
    log.warn("careful {n}", n=3)
    log.info("fine")
    try:
        1 / 0
    except ZeroDivisionError:
        log.failure("broke", Failure())
    lines = out.getvalue().splitlines()
    assert lines[:3] == ["<4>[nodeapi.x#warn] careful 3", "<6>[nodeapi.x#info] fine",
                         "<2>[nodeapi.x#critical] broke"]
    assert len(lines) > 4 and all(line.startswith("<2>\t") for line in lines[3:])
    assert lines[-1] == "<2>\tbuiltins.ZeroDivisionError: division by zero"
    assert LogLevel.critical  # the levels map (PRIORITY) covers them all


@pytest.mark.parametrize("args, message", [
    (["--max-calls-in-flight", "lots"], "--max-calls-in-flight: 'lots' is not an integer"),
    (["--rpc-endpont", "9000"], "--rpc-endpont: unknown option; did you mean --rpc-endpoint?"),
])
def test_a_configuration_error_exits_78(tmp_path, args, message):
    proc = subprocess.run(twistd_command("-n", "--pidfile=", "nodeapi", "--data-dir",
                                         str(tmp_path / "d"), *args),
                          cwd=tmp_path, capture_output=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    assert proc.returncode == 78, proc.stderr
    assert proc.stdout == b""
    assert proc.stderr.decode().splitlines() == [f"nodeapi: {message}"]


def test_the_unit_waits_for_readiness_and_does_not_restart_a_bad_config(tmp_path):
    """systemd/nodeapi.service: Type=notify, RestartPreventExitStatus=78,
    the journal's identifier nodeapi (etc/fail2ban), and systemd-analyze
    verify finds nothing wrong with it (ExecStart pointed at an existing
    twistd)."""
    unit = configparser.RawConfigParser(strict=False)
    with open(UNIT) as f:
        text = f.read()
    unit.read_string(text)
    assert unit.get("Service", "Type") == "notify"
    assert unit.get("Service", "NotifyAccess") == "main"
    assert unit.get("Service", "Restart") == "on-failure"
    assert "78" in unit.get("Service", "RestartPreventExitStatus").split()
    assert unit.get("Service", "SyslogIdentifier") == "nodeapi"
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.fail("systemd-analyze is not installed (Debian: apt-get install -y systemd)")
    twistd = os.path.join(os.path.dirname(sys.executable), "twistd")
    copy = tmp_path / "nodeapi.service"
    copy.write_text(text.replace("/opt/nodeapi/venv/bin/twistd", twistd))
    proc = subprocess.run([analyze, "verify", str(copy)], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_a_clean_stop_closes_websockets_with_going_away(tmp_path):
    """SIGTERM (systemctl stop): an open WebSocket client receives a close
    frame with code 1001 (going away) and reason "node stopping" before
    the process exits; the stop stays clean (-SIGTERM)."""
    from twisted.internet import reactor
    from twisted.internet.task import deferLater

    from kit.rpc import ws_connect

    node = Daemon(tmp_path / "data").start()
    try:
        ws = yield ws_connect(node.port)
        assert (yield ws.call(1, "login", "", "")) is True
        node.proc.send_signal(signal.SIGTERM)
        code = yield ws.closed.addTimeout(10, reactor)
        assert code == 1001
        for _ in range(100):
            if node.proc.poll() is not None:
                break
            yield deferLater(reactor, 0.1, lambda: None)
    finally:
        assert node.stop() == -signal.SIGTERM
