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
    import graphenebase.ecdsa
    from bitshares.account import Account

    graphenebase.ecdsa.SECP256K1_MODULE = "ecdsa"  # this machine's signer


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
    assert out[1].strip() == "['nodeapi', 'nodeapi.devnet', 'nodeapi.devnet.pytest_plugin']"
