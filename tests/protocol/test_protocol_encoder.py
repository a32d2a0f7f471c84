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


def test_from_wire_turns_only_named_members_back_into_ints():
    """fc writes 64-bit integers as strings (libraries/fc variant.cpp); a
    block read back over the wire has the named members made ints again,
    at any depth, within the 64-bit range only; strings directly in a list,
    other members and non-decimal strings stay as they are; a dict subclass
    comes back a plain dict with the same conversion."""
    from collections import OrderedDict

    from nodeapi.protocol.wire import from_wire

    wire = {"ref_block_prefix": "3000000000", "amount": "-5", "memo": {"nonce": "7"},
            "operations": [[0, {"amount": {"amount": "18446744073709551615",
                                           "asset_id": "1.3.0"},
                                "fee": {"amount": "18446744073709551616"}}]],
            "signatures": ["1234"], "extensions": [], "x": 1.5, "flag": True,
            "none": None, "odd": OrderedDict(amount="12", name="12")}
    assert from_wire(wire) == {
        "ref_block_prefix": 3000000000, "amount": -5, "memo": {"nonce": "7"},
        "operations": [[0, {"amount": {"amount": 18446744073709551615, "asset_id": "1.3.0"},
                            "fee": {"amount": "18446744073709551616"}}]],
        "signatures": ["1234"], "extensions": [], "x": 1.5, "flag": True, "none": None,
        "odd": {"amount": 12, "name": "12"}}
    assert type(from_wire(wire)["odd"]) is dict
    assert from_wire("12", "amount") == 12 and from_wire("12") == "12"
    assert from_wire(["12"], "amount") == ["12"]
