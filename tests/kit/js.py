"""The JavaScript clients of tests/js (bitsharesjs, bitsharesjs-ws, btsdex)."""

import os
import shutil
import subprocess


from kit.paths import JS_DIR


def npm_install():
    """``npm ci`` in tests/js unless its node_modules hold every client."""
    if all(os.path.isdir(os.path.join(JS_DIR, "node_modules", name))
           for name in ("bitsharesjs", "bitsharesjs-ws", "btsdex")):
        return
    npm = shutil.which("npm")
    assert npm, "npm is needed for the bitsharesjs tests (.ci/run installs node and npm)"
    subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--prefix", JS_DIR], check=True,
                   capture_output=True, timeout=600)
