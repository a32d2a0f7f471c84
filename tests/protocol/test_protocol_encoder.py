"""The JSON encoder the RPC layer relies on: replies are lists holding the
encoded JSON of chain objects as ``orjson.Fragment`` values
(nodeapi.api.answers.EncodedObjects) beside other values.  orjson 3.12.0
and 3.13.0 write such a list past their buffer (invalid JSON or a heap
corruption that aborts the node: a ``get_objects`` of 50 ids did; 3.11.9
does not); setup.cfg keeps them out (``orjson < 3.12``).  The encoding runs in a child process, so an abort is a
failure of this test, not of the test run."""

import subprocess
import sys

CHILD = r"""
import orjson, random
rng = random.Random(7)
for trial in range(3000):
    body = orjson.dumps({"id": "2.4.0", "x": "a" * rng.randint(1800, 2200)})
    values = [orjson.Fragment(body) for _ in range(4)] + [None] * rng.randint(0, 40)
    rng.shuffle(values)
    decoded = orjson.loads(orjson.dumps(values))
    assert decoded == [orjson.loads(body) if v is not None else None for v in values]
print("ok", orjson.__version__)
"""


def test_lists_of_fragments_encode_to_valid_json():
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and proc.stdout.startswith("ok"), (proc.returncode,
                                                                   proc.stderr[-2000:])
