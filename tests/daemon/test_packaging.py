"""The installed node needs only its install_requires: python-bitshares,
graphenelib, hypothesis and osmem-server are test dependencies, so no module
of nodeapi may import them (but the pytest plugin, which pytest loads, imports
pytest)."""

import subprocess
import sys

from kit.daemon import ROOT


_CHECK = r"""
import importlib, pkgutil, sys
for name in ("bitshares", "bitsharesbase", "bitsharesapi", "graphenebase", "grapheneapi",
             "graphenecommon", "hypothesis", "osmem_server", "pytest"):
    sys.modules[name] = None  # any import of it now raises ImportError
import nodeapi
names = ["nodeapi.tap"] + [m.name for m in pkgutil.walk_packages(nodeapi.__path__, "nodeapi.")
                          if m.name != "nodeapi.devnet.pytest_plugin"]  # loaded by pytest only
for name in names:
    importlib.import_module(name)
from nodeapi.config import Options
from nodeapi.tap import makeService
options = Options()
options.parseOptions(["--data-dir", sys.argv[1]])
service = makeService(options)
print(len(names), type(service).__name__)
"""


def test_nodeapi_imports_and_builds_without_test_dependencies(tmp_path):
    proc = subprocess.run([sys.executable, "-c", _CHECK, str(tmp_path / "data")], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    count, kind = proc.stdout.split()
    assert int(count) > 30 and kind == "NodeService"


def test_setup_cfg_lists_every_package_of_the_tree():
    """setup.cfg lists the packages by hand (``twisted.plugins`` must be
    listed, and ``find:`` cannot find it), so a package added or moved in
    the tree but not in the list would be missing from an installed node:
    every directory of nodeapi/ holding Python modules is a package (an
    ``__init__.py``) and is listed."""
    import configparser
    import pathlib

    config = configparser.ConfigParser()
    config.read(pathlib.Path(ROOT) / "setup.cfg")
    listed = set(config["options"]["packages"].split())
    tree = pathlib.Path(ROOT) / "nodeapi"
    with_modules = {".".join(path.parent.relative_to(ROOT).parts)
                    for path in tree.rglob("*.py") if "__pycache__" not in path.parts}
    missing_init = sorted(name for name in with_modules
                          if not (pathlib.Path(ROOT, *name.split(".")) / "__init__.py").exists())
    assert missing_init == [], "directories of modules without __init__.py"
    assert sorted(with_modules - listed) == [], "packages missing from setup.cfg"
    assert sorted(name for name in listed - with_modules if name != "twisted.plugins") == []
