"""``twistd -n nodeapi`` as a user runs it: defaults produce blocks at the
wall clock, SIGTERM stops gracefully, a restart replays the block log to the
same head, kill -9 is survived, bad options stop startup with a message."""

import os
import pwd
import signal
import socket
import subprocess
import sys

import pytest

from kit.daemon import ROOT, Daemon, twistd_command


pytestmark = pytest.mark.slow


def test_defaults_produce_blocks_and_restart_replays(tmp_path):
    node = Daemon(tmp_path / "data").start()
    try:
        num, _ = node.wait_head(3)
        assert node.call("get_chain_id") == \
            "569cba9a00ee6e807a62389ea67de7c6954835390be62371709ec804c6bfe1f2"
        block = node.call("get_block", num)
        assert block["witness"].startswith("1.6.")
    finally:
        assert node.stop() == -signal.SIGTERM
    log = node.log()
    assert "Node stopped at head block" in log
    head_at_stop = int(log.rsplit("Node stopped at head block", 1)[1].split()[0])
    assert (tmp_path / "data" / "blocks.log").stat().st_size > 0

    again = Daemon(tmp_path / "data").start()
    try:
        # the clean stop wrote a checkpoint of its head: the restarted node
        # loads it, replays nothing, and continues
        assert again.call("get_block", head_at_stop)["previous"] == \
            node_block_previous(again, head_at_stop)
        assert f"Checkpoint at block {head_at_stop} loaded" in again.log()
        assert "Replayed 0 blocks" in again.log()
        again.wait_head(head_at_stop + 1)
    finally:
        assert again.stop() == -signal.SIGTERM
    # --replay-blockchain replays them all
    third = Daemon(tmp_path / "data", "--replay-blockchain", "--plugins", "account_history")
    third.start()
    try:
        assert "Checkpoints: --replay-blockchain" in third.log()
        replayed = int(third.log().rsplit("Replayed ", 1)[1].split()[0])
        assert replayed > head_at_stop
    finally:
        third.stop()


def node_block_previous(node, num):
    return node.call("get_block_header", num)["previous"]


def test_kill_9_then_restart(tmp_path):
    node = Daemon(tmp_path / "data").start()
    num, head_id = node.wait_head(3)
    init0 = node.call("get_account_balances", "init0", [])
    header = node.call("get_block_header", num)
    node.stop(signal.SIGKILL)
    again = Daemon(tmp_path / "data").start()
    try:
        # every block the node had answered for survives, with the same id
        assert again.head()[0] >= num
        assert again.call("get_block_header", num) == header
        assert again.call("get_account_balances", "init0", []) == init0
        again.wait_head(num + 1)  # production goes on from the same block id
        assert again.call("get_block_header", num + 1)["previous"] == head_id
    finally:
        assert again.stop() == -signal.SIGTERM


@pytest.mark.parametrize("args, message", [
    (["--rpc-endpoint", "nonsense:::"], "--rpc-endpoint"),
    (["--plugins", "witness account_history searchdb"], "cannot run together"),
    (["--api-access", "/nonexistent/api-access.json"], "--api-access"),
    (["--genesis-json", "/nonexistent/genesis.json"], "--genesis-json"),
])
def test_bad_options_stop_startup_with_a_message(tmp_path, args, message):
    proc = subprocess.run(twistd_command("-n", "--pidfile=", "nodeapi", "--data-dir",
                                         str(tmp_path / "d"), *args),
                          cwd=ROOT, capture_output=True, timeout=60)
    assert proc.returncode != 0
    out = (proc.stdout + proc.stderr).decode()
    assert message in out
    assert "Traceback" not in out


def test_corrupt_block_log_is_a_startup_error(tmp_path, genesis):
    """A block log of 4 blocks (written by the chain the daemon runs, in
    this process: no daemon needs to produce them first) with a flipped
    byte in its first record stops startup with the file and the offset."""
    from kit.chain import open_chain, produce

    (tmp_path / "data").mkdir()
    path = tmp_path / "data" / "blocks.log"
    chain = open_chain(genesis, path)
    produce(chain, 4)
    chain.block_log.close()
    data = bytearray(path.read_bytes())
    data[20] ^= 0xFF  # inside the first record
    path.write_bytes(bytes(data))
    proc = subprocess.run(twistd_command("-n", "--pidfile=", "nodeapi", "--data-dir",
                                         str(tmp_path / "data")),
                          cwd=ROOT, capture_output=True, timeout=60)
    out = (proc.stdout + proc.stderr).decode()
    assert proc.returncode != 0
    assert str(path) in out and "offset" in out


def test_rpc_port_in_use_stops_the_node_with_status_1(tmp_path):
    """A bind failure is a startup failure: one line naming the endpoint and
    the error, exit status 1 (systemd Restart=on-failure), no block produced
    without RPC, no "Unhandled error in Deferred"."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        port = held.getsockname()[1]
        endpoint = f"tcp:{port}:interface=127.0.0.1"
        proc = subprocess.run(twistd_command("-n", "--pidfile=", "nodeapi", "--data-dir",
                                             str(tmp_path / "data"), "--rpc-endpoint",
                                             endpoint),
                              cwd=ROOT, capture_output=True, timeout=60)
    out = (proc.stdout + proc.stderr).decode()
    assert proc.returncode == 1, out
    failed = [line for line in out.splitlines() if "Node startup failed" in line]
    assert len(failed) == 1, out
    assert f"cannot listen on {endpoint}" in failed[0]
    assert "Address already in use" in failed[0]
    assert "Unhandled error in Deferred" not in out
    assert "Traceback" not in out
    assert "Node stopped at head block" in out


def test_a_port_taken_meanwhile_starts_the_daemon_on_another_port(tmp_path):
    """A port found free (free_port) may be taken before the daemon binds
    it (another pytest worker): Daemon.start starts it again on another
    free port; a port given to the constructor is kept (and fails)."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        port = held.getsockname()[1]
        node = Daemon(tmp_path / "data")
        node.port = port  # as if free_port's port were taken meanwhile
        node.start()
        try:
            assert node.port != port
            assert node.call("get_chain_id") == \
                "569cba9a00ee6e807a62389ea67de7c6954835390be62371709ec804c6bfe1f2"
            assert f"cannot listen on tcp:{port}:interface=127.0.0.1" in node.log()
        finally:
            node.stop()
        fixed = Daemon(tmp_path / "fixed", port=port)
        with pytest.raises(AssertionError, match="Address already in use"):
            fixed.start()
        assert fixed.port == port


def privileged_free_port() -> int:
    """A free TCP port below 1024 on 127.0.0.1 (only root can bind one)."""
    for port in range(980, 600, -1):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    pytest.skip("no free port below 1024")


@pytest.mark.skipif(os.geteuid() != 0, reason="binding a port below 1024 needs root")
def test_uid_binds_a_privileged_port_then_drops_privileges(tmp_path):
    """``twistd --uid``: the RPC port is bound before the privileges are
    dropped (privilegedStartService), the node then runs as that user."""
    nobody = pwd.getpwnam("nobody")
    try:
        readable = subprocess.run(
            [sys.executable, "-c", "import email.policy, twisted, nodeapi"], cwd=ROOT,
            user=nobody.pw_uid, group=nobody.pw_gid, capture_output=True).returncode == 0
    except OSError:
        readable = False
    if not readable:  # the node imports modules lazily after the switch
        pytest.skip("this Python installation is not readable by nobody")
    data = tmp_path / "data"
    data.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chown(data, nobody.pw_uid, nobody.pw_gid)
    node = Daemon(data, port=privileged_free_port(),
                  twistd_args=["--uid", str(nobody.pw_uid), "--gid", str(nobody.pw_gid)])
    try:
        node.start()
        node.wait_head(1)
        with open(f"/proc/{node.proc.pid}/status") as f:
            uids = next(line for line in f if line.startswith("Uid:")).split()[1:]
        assert set(uids) == {str(nobody.pw_uid)}
    finally:
        code = node.stop()
    assert code == -signal.SIGTERM


def _startup_failure(tmp_path, payload: bytes) -> tuple:
    """Start the node over a block log holding one record of ``payload``;
    it must stop with exit status 1, no traceback and one "Node startup
    failed" line.  Returns ``(that line, the block log path)``."""
    from nodeapi.chain.blockrecord import MAGIC, frame

    data = tmp_path / "data"
    data.mkdir()
    path = data / "blocks.log"
    path.write_bytes(MAGIC + frame(1, payload))
    proc = subprocess.run(twistd_command("-n", "--pidfile=", "nodeapi", "--data-dir",
                                         str(data), "--rpc-endpoint", "tcp:0:interface=127.0.0.1"),
                          cwd=ROOT, capture_output=True, timeout=60)
    out = (proc.stdout + proc.stderr).decode()
    assert proc.returncode == 1, out
    assert "Traceback" not in out, out
    failed = [line for line in out.splitlines() if "Node startup failed" in line]
    assert len(failed) == 1, out
    return failed[0], path


@pytest.mark.parametrize("payload", [b"\x01{}", b"\x01[]", b"\x01{not json", b"\x07{}"],
                         ids=["empty-object", "array", "bad-json", "unknown-codec"])
def test_block_log_record_that_is_no_block_is_one_line(tmp_path, payload):
    """A record with a valid checksum whose payload is no block stops
    startup with one line naming the file and the offset, exit status 1, no
    traceback (nodeapi.chain.blocklog.BlockLog._decode)."""
    from nodeapi.chain.blockrecord import MAGIC

    failed, path = _startup_failure(tmp_path, payload)
    assert f"Block log {path} is corrupt at byte offset {len(MAGIC)} (block 1)" in failed
    assert "not a block" in failed or "unknown payload codec" in failed


def _bad_block(**fields) -> dict:
    block = {"previous": "00" * 20, "timestamp": "2016-01-01T00:00:03", "witness": "1.6.1",
             "transaction_merkle_root": "00" * 20, "extensions": [],
             "witness_signature": "00" * 65, "transactions": []}
    block.update(fields)
    return block


@pytest.mark.parametrize("block", [
    _bad_block(timestamp="not a time"),
    _bad_block(witness=None),
    _bad_block(transactions=[{"operations": [[0, {}]]}]),
    _bad_block(transactions=[7]),
], ids=["bad-timestamp", "no-witness", "bad-transaction", "transaction-not-object"])
def test_block_log_block_that_cannot_be_replayed_is_one_line(tmp_path, block):
    """A record that decodes to a block-shaped object whose values cannot
    be replayed stops startup with one line naming the file, the offset and
    the block, exit status 1 (nodeapi.chain.blocks, BlockLog.corrupt)."""
    import json

    from nodeapi.chain.blockrecord import MAGIC

    failed, path = _startup_failure(tmp_path, b"\x01" + json.dumps(block).encode())
    assert (f"Block log {path} is corrupt at byte offset {len(MAGIC)} (block 1): "
            "the block cannot be replayed: ") in failed


@pytest.mark.parametrize("args, where", [
    (["--max-calls-in-flight", "lots"], "--max-calls-in-flight: 'lots' is not an integer"),
    (["--config", "bad.ini"], "max-calls-in-flight ({ini} line 2): 'lots' is not an integer"),
    (["--config", "bad-level.ini"], "--config: {ini2} line 2: [logger.default] level 'loud'"),
    (["--max-calls-per-second-per-ip", "-5"],
     "--max-calls-per-second-per-ip: -5.0 is not between 0 and 1000000"),
    (["--api-access", "limits.json"],
     "--api-access: api-access file {limits}: permission_map[0]: limits.connections must "
     "be an integer from 0 to 2147483647, got -1"),
])
def test_bad_value_is_one_line_and_status_78(tmp_path, args, where):
    """A bad value is one line naming the option (with file and line for an
    INI value), exit status 78 (EX_CONFIG: the unit's
    RestartPreventExitStatus), no usage text."""
    (tmp_path / "bad.ini").write_text("# x\nmax-calls-in-flight = lots\n")
    (tmp_path / "bad-level.ini").write_text("[logger.default]\nlevel = loud\n")
    (tmp_path / "limits.json").write_text(
        '{"permission_map": [["*", {"password_hash_b64": "*", "password_salt_b64": "*", '
        '"allowed_apis": ["database_api"], "limits": {"connections": -1}}]]}')
    proc = subprocess.run(twistd_command("-n", "--pidfile=", "nodeapi", "--data-dir",
                                         str(tmp_path / "d"), *args),
                          cwd=tmp_path, capture_output=True, timeout=60)
    out = (proc.stdout + proc.stderr).decode()
    assert proc.returncode == 78, out
    lines = out.strip().splitlines()
    assert len(lines) == 1, out
    assert lines[0].startswith(
        "nodeapi: " + where.format(ini=tmp_path / "bad.ini", ini2=tmp_path / "bad-level.ini",
                                   limits=tmp_path / "limits.json"))
    assert "Usage" not in out


def test_unknown_flag_is_one_line_naming_the_nearest_option_and_help_shows_usage(tmp_path):
    proc = subprocess.run(twistd_command("-n", "--pidfile=", "nodeapi", "--max-calls-in-flite",
                                         "3"), cwd=tmp_path, capture_output=True, timeout=60)
    assert proc.returncode == 78 and proc.stdout == b""
    assert proc.stderr.decode().splitlines() == [
        "nodeapi: --max-calls-in-flite: unknown option; did you mean --max-calls-in-flight?"]
    proc = subprocess.run(twistd_command("-n", "--pidfile=", "nodeapi", "--no-such-flag"),
                          cwd=tmp_path, capture_output=True, timeout=60)
    assert proc.returncode == 78 and "Usage" not in (proc.stdout + proc.stderr).decode()
    assert proc.stderr.decode().splitlines() == [
        "nodeapi: --no-such-flag: unknown option; twistd nodeapi --help lists the options"]
    proc = subprocess.run(twistd_command("nodeapi", "--help"), cwd=tmp_path,
                          capture_output=True, timeout=60)
    assert proc.returncode == 0 and "--max-calls-in-flight" in proc.stdout.decode()


@pytest.mark.parametrize("history", ["account_history", "elasticsearch"])
def test_bitshares_core_config_ini_of_an_api_node_starts(tmp_path, osmem, history):
    """bitshares-core's default config.ini (tests/fixtures, as witness_node
    writes it, logging sections included) with an API node's plugins starts
    the node with warnings only; the [logger.default] file appender
    (logs/default/default.log beside the INI file) receives the log.
    (account_history and elasticsearch cannot run together, here as in
    witness_node's "Plugin conflict" check; es_objects can.)"""
    fixture = os.path.join(ROOT, "tests", "fixtures", "bitshares-core_witness_node_config.ini")
    with open(fixture) as f:
        text = f.read()
    plugins = (f"witness {history} market_history grouped_orders api_helper_indexes "
               "custom_operations es_objects")
    text = text.replace("plugins = witness account_history market_history grouped_orders "
                        "api_helper_indexes custom_operations\n", f"plugins = {plugins}\n")
    text = text.replace("# es-objects-elasticsearch-url = \n",
                        f"es-objects-elasticsearch-url = {osmem.url}\n")
    text = text.replace("# elasticsearch-node-url = \n", f"elasticsearch-node-url = {osmem.url}\n")
    assert plugins in text and osmem.url in text
    (tmp_path / "config.ini").write_text(text)
    node = Daemon(tmp_path / "data", "--config", str(tmp_path / "config.ini")).start()
    try:
        assert node.call("get_chain_id")
        assert node.call("get_objects", ["2.1.0"])[0]["head_block_number"] == 0
    finally:
        assert node.stop() == -signal.SIGTERM
    log = node.log()
    assert "Traceback" not in log and "#critical" not in log and "#error" not in log, log
    warned = [line for line in log.splitlines() if "#warn]" in line]
    assert any("api_helper_indexes" in line for line in warned), log
    assert any("[logger.p2p]" in line for line in warned), log
    written = (tmp_path / "logs" / "default" / "default.log").read_text()
    assert "api_helper_indexes" in written and "Node stopped at head block" in written
