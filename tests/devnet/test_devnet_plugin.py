"""The pytest plugin as another project uses it: a test directory of its
own (one test file, no conftest) run by pytest in a subprocess against
the installed package alone (the worktree installed with pip into a
target directory, so the ``pytest11`` entry point of setup.cfg is what
loads the plugin); and the plugin module's import cost, paid by every
pytest run of anyone who installed nodeapi."""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from kit.daemon import ROOT

pytestmark = pytest.mark.slow

PROJECT_TEST = textwrap.dedent('''
    from bitshares.account import Account


    def test_transfer(nodeapi_snapshot):
        bts = nodeapi_snapshot.bitshares()
        bts.transfer("dev1", 10, "TEST", account="dev0")
        assert Account("dev1", blockchain_instance=bts).balance("TEST") == 1_000_010


    def test_each_test_starts_from_the_same_state(nodeapi_snapshot):
        bts = nodeapi_snapshot.bitshares()
        assert Account("dev1", blockchain_instance=bts, lazy=False,
                       use_cache=False).balance("TEST") == 1_000_000


    def test_session_devnet(nodeapi_devnet):
        import os, nodeapi
        assert nodeapi.__file__.startswith(os.environ["PYTHONPATH"])  # the installed one
        assert nodeapi_devnet.url.startswith("ws://127.0.0.1:")
        assert nodeapi_devnet.http_url.startswith("http://127.0.0.1:")
        assert len(nodeapi_devnet.chain_id) == 64
        names = [a.name for a in nodeapi_devnet.accounts]
        assert names == ["dev0", "dev1", "dev2"]
        assert nodeapi_devnet.accounts[0].wif.startswith("5")
''')


def _install(source, target):
    """pip-install this checkout (no dependencies: they are this venv's)
    into ``target``, building from a copy in ``source`` (pip builds in the
    source tree); returns pip's exit status and output."""
    for name in ("setup.cfg", "pyproject.toml", "README.rst"):
        shutil.copy(os.path.join(ROOT, name), source / name)
    for name in ("nodeapi", "twisted"):
        shutil.copytree(os.path.join(ROOT, name), source / name,
                        ignore=shutil.ignore_patterns("__pycache__", "dropin.cache"))
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                           "--no-compile", "--target", str(target), str(source)],
                          capture_output=True, text=True, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


def test_a_project_outside_uses_the_plugin_through_the_installed_package(tmp_path):
    site = tmp_path / "site"
    (tmp_path / "source").mkdir()
    code, output = _install(tmp_path / "source", site)
    assert code == 0, output
    entry_points = next(site.glob("nodeapi-*.dist-info")) / "entry_points.txt"
    assert "nodeapi = nodeapi.devnet.pytest_plugin" in entry_points.read_text()
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_with_devnet.py").write_text(PROJECT_TEST)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["PYTHONPATH"] = str(site)  # the installed package, not this checkout
    env["NODEAPI_DEVNET_ARGS"] = "--devnet-accounts 3"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "test_with_devnet.py"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 passed" in proc.stdout


def test_the_plugin_module_is_cheap_to_import():
    """Only the standard library and pytest: no Twisted, no nodeapi
    module beyond its package (what it costs in time is a machine's
    business, not a test's)."""
    code = ("import sys; import pytest; import nodeapi.devnet.pytest_plugin; "
            "print(0, sorted(m for m in sys.modules if m.startswith(('twisted', 'nodeapi', "
            "'autobahn', 'orjson', 'bitshares'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=ROOT), check=True).stdout.split(" ", 1)
    assert out[1].strip() == ("['nodeapi', 'nodeapi.devnet', 'nodeapi.devnet.pytest_plugin', "
                              "'nodeapi.devnet.registration']")


def test_python_bitshares_signs_in_a_venv_with_nodeapi():
    """graphenelib picks secp256k1 (a dependency of nodeapi) before
    cryptography (autobahn's), whose path fails with every ecdsa graphenelib
    accepts (``'PointJacobi' object has no attribute '_Point__x'``): a
    signature made without any patch recovers the signing key."""
    code = ("import graphenebase.ecdsa as e\n"
            "from graphenebase.account import PrivateKey\n"
            "wif = '5KQwrPbwdL6PhXujxW37FSSQZ1JiwsST4cqQzDeyXtP79zkvFD3'\n"
            "sig = e.sign_message(b'devnet', wif)\n"
            "pub = e.verify_message(b'devnet', sig)\n"
            "print(e.SECP256K1_MODULE, pub == bytes(PrivateKey(wif).pubkey))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["secp256k1", "True"]


def test_a_killed_test_run_leaves_no_devnet(tmp_path):
    """The process holding the devnet (a pytest run) is SIGKILLed: the
    devnet gets SIGTERM from the kernel (PR_SET_PDEATHSIG) and exits."""
    import signal
    import time

    code = ("import sys, time\n"
            "from nodeapi.devnet.pytest_plugin import DevnetProcess\n"
            "d = DevnetProcess('--devnet-accounts', '1').start()\n"
            "print(d.pid, flush=True)\n"
            "time.sleep(120)\n")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONPATH=ROOT))
    try:
        child = int(parent.stdout.readline())
        os.kill(child, 0)  # running
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                os.kill(child, 0)
            except ProcessLookupError:
                break
            with open(f"/proc/{child}/stat") as f:  # exited, not reaped yet
                if f.read().split(") ", 1)[1].startswith("Z"):
                    break
            time.sleep(0.1)
        else:
            os.kill(child, signal.SIGKILL)
            raise AssertionError("the devnet outlived the killed test run")
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def test_devnet_balance_and_the_registration_lines_in_the_banner():
    """``--devnet-balance 250``: each ready account holds 250 TEST; the
    banner prints the lines registering the chain with each client."""
    from nodeapi.devnet.pytest_plugin import DevnetProcess

    devnet = DevnetProcess("--devnet-accounts", "1", "--devnet-balance", "250",
                           env=dict(os.environ, PYTHONPATH=ROOT)).start()
    try:
        [account] = devnet.accounts
        [bal] = devnet.call("database", "get_account_balances", account.id, ["1.3.0"])
        assert int(bal["amount"]) == 250 * 100_000
        log = devnet.log()
        for line in devnet.chain_registration().values():
            assert line in log
        assert f"chain_id: '{devnet.chain_id}'" in devnet.chain_registration()["bitsharesjs"]
    finally:
        devnet.stop()


def test_a_devnet_of_ones_own_genesis(tmp_path, genesis):
    """anvil's ``--chain-id``: a genesis of one's own (``--genesis-json``;
    here the bundled one with another maintenance interval) gives the
    devnet its own chain id (the digest of the file), which the banner's
    lines and the plugin's ``bitshares()`` register: a transfer signs for
    it."""
    import json

    from bitshares.account import Account

    from kit.chain import genesis_with
    from kit.clients import forget_cached_objects
    from nodeapi.devnet.pytest_plugin import DevnetProcess

    own = genesis_with(genesis, maintenance_interval=600)
    path = tmp_path / "genesis.json"
    path.write_text(json.dumps(own.data, sort_keys=True))
    devnet = DevnetProcess("--devnet-accounts", "2", "--genesis-json", str(path),
                           env=dict(os.environ, PYTHONPATH=ROOT)).start()
    try:
        assert devnet.chain_id == own.chain_id != genesis.chain_id
        assert own.chain_id in devnet.chain_registration()["python-bitshares"]
        forget_cached_objects()
        bts = devnet.bitshares()
        bts.transfer("dev1", 10, "TEST", account="dev0")
        assert Account("dev1", blockchain_instance=bts, use_cache=False,
                       lazy=False).balance("TEST") == 1_000_010
    finally:
        devnet.stop()
