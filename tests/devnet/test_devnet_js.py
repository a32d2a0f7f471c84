"""The devnet from Node.js: tests/js/devnet.js starts ``twistd nodeapi
--devnet`` itself, reads the printed URL and drives it with bitsharesjs
(TransactionBuilder) and the devnet API set called by name over
bitsharesjs-ws, as the README's example does."""

import json
import os
import subprocess
import sys

import pytest

from kit.daemon import ROOT
from kit.js import JS_DIR

pytestmark = pytest.mark.slow


def test_bitsharesjs_script_starts_a_devnet_transfers_and_reverts(js_client):
    env = dict(os.environ, PYTHONPATH=ROOT,
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    proc = subprocess.run([js_client, os.path.join(JS_DIR, "devnet.js")], cwd=JS_DIR,
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["url"].startswith("ws://127.0.0.1:")
    assert out["after"] == out["before"] + 1_250_000
    assert out["confirmed_block"] >= 3  # after the two blocks making the ready accounts
    assert out["ms"] < 2000  # automined: no waiting for a slot
    assert out["reverted"] is True and out["after_revert"] == out["before"]
