"""The JavaScript clients of tests/js (bitsharesjs, bitsharesjs-ws, btsdex)."""

import fcntl
import os
import shutil
import subprocess
import time


from kit.paths import JS_DIR


#: the clients ``npm ci`` installs in tests/js/node_modules
CLIENTS = ("bitsharesjs", "bitsharesjs-ws", "btsdex")


def npm_install(timeout=600):
    """``npm ci`` in tests/js unless its node_modules hold every client.
    Parallel pytest workers (pytest-xdist) each call it: an exclusive lock
    on ``tests/js/.npm-install.lock`` lets one install while the others
    wait (up to ``timeout`` s, then TimeoutError) and then find it done;
    the clients are looked for only under the lock (never half installed)."""
    with open(os.path.join(JS_DIR, ".npm-install.lock"), "w") as lock:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"another npm ci in {JS_DIR} for over {timeout} s")
                time.sleep(0.5)
        try:
            if all(os.path.isdir(os.path.join(JS_DIR, "node_modules", name))
                   for name in CLIENTS):
                return  # installed before, or by another worker meanwhile
            npm = shutil.which("npm")
            assert npm, ("npm is needed for the bitsharesjs tests "
                         "(.ci/run installs node and npm)")
            subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--prefix", JS_DIR],
                           check=True, capture_output=True, timeout=timeout)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
