"""The scripts under bench/ stay runnable: each imports (a rename of
something it uses fails here, not the next time someone measures), and
bench/reference.py runs end to end in a tiny configuration against the
reference node (a few dozen blocks, windows of a fraction of a second)."""

import os
import re
import subprocess
import sys
import textwrap

import pytest

from kit.paths import ROOT
from kit.reference import requires_reference

BENCH = os.path.join(ROOT, "bench")
SCRIPTS = sorted(name[:-3] for name in os.listdir(BENCH) if name.endswith(".py"))


def run_python(code_or_args, timeout):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, *code_or_args], cwd=ROOT, env=env, timeout=timeout,
                          capture_output=True, text=True)


def run_in_bench(code: str, timeout):
    """``code`` run by a child Python with bench/ first on sys.path, as
    ``python bench/<name>.py`` has it (bench/common.py then adds the
    repository and tests/)."""
    return run_python(["-c", f"import sys\nsys.path.insert(0, {BENCH!r})\n{code}"], timeout)


def test_there_are_bench_scripts():
    assert {"chain", "rpc", "reference", "peers", "common"} <= set(SCRIPTS)


@pytest.mark.parametrize("name", SCRIPTS)
def test_each_bench_script_imports(name):
    """Imported in a child as ``python bench/<name>.py`` runs it (bench/
    first on sys.path; bench/common.py adds the repository and tests/),
    under another name than __main__, so nothing runs but the imports."""
    code = ("import importlib.util\n"
            f"spec = importlib.util.spec_from_file_location('bench_{name}', "
            f"{os.path.join(BENCH, name + '.py')!r})\n"
            "module = importlib.util.module_from_spec(spec)\n"
            "spec.loader.exec_module(module)\n"
            "assert module.__doc__, 'no docstring'\n"
            "print('imported')\n")
    done = run_in_bench(code, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "imported", done.stderr[-3000:]


@pytest.mark.reference
@pytest.mark.slow
@requires_reference
def test_reference_bench_runs_tiny():
    done = run_python([os.path.join(BENCH, "reference.py"), "--blocks", "40", "--tx-every",
                       "4", "--transfers", "3", "--seconds", "0.3", "--warm-up", "0.2",
                       "--ws-conns", "2", "--http-conns", "2", "--window", "8",
                       "--subscribers", "50", "--notice-blocks", "2"], timeout=300)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    out = done.stdout
    assert re.search(r"^reference: chain of 40 blocks, \d+ operations", out, re.M), out
    for label in ("signatures skipped (default)", "--force-validate"):
        assert re.search(rf"^following 40 blocks: nodeapi catching up over RPC, "
                         rf"{re.escape(label)}: [\d,]+ blocks/s .* ratio \d+\.\d\d", out,
                         re.M), out
    for call in ("get_dynamic_global_properties", "get_full_accounts", "get_order_book",
                 "get_objects(100)", "get_account_history"):
        for kind in ("WebSocket pipelined", "HTTP, a connection per request"):
            # a window of 0.2 s on a busy machine may hold no reply of one node
            assert re.search(rf"^reads {re.escape(kind)} {re.escape(call)}: nodeapi [\d,]+ "
                             rf"calls/s .* ratio (\d+\.\d\d|n/a)", out, re.M), (kind, call, out)
    assert re.search(r"^memory: .* ratio started \d+\.\d\d$", out, re.M), out
    assert re.search(r"^startup: .* ratio \d+\.\d\d$", out, re.M), out
    assert re.search(r"^notices: 50 wallets .* ratio p99 \d+\.\d+", out, re.M), out
    # 40 blocks are less than one bulk: the reference sends none while
    # replaying, and the figure still ends
    assert re.search(r"^history into the search database .* ratio \d+\.\d\d", out, re.M), out


def _bench_common():
    """bench/common.py, imported as the scripts import it."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_common",
                                                  os.path.join(BENCH, "common.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bench_frame_parser_reads_the_nodes_frames():
    """The shared client-side parser cuts the frames the node writes
    (nodeapi.rpc.framing, 7-, 16- and 64-bit lengths), keeps a partial one
    for later, and stops at a close frame; the client frames it makes carry
    their payload under a zero mask (RFC 6455 section 5.3)."""
    from nodeapi.rpc.framing import text_frame_header

    common = _bench_common()
    texts = [b"a" * 5, b"b" * 300, b"c" * 70000]
    wire = b"".join(text_frame_header(len(t)) + t for t in texts)
    frames, used = common.read_frames(wire + wire[:3])
    assert used == len(wire)
    assert [wire[start:end] for _, start, end in frames] == texts
    assert {opcode for opcode, _, _ in frames} == {1}
    frames, used = common.read_frames(bytearray(wire[:-1]))
    assert len(frames) == 2 and used == len(wire) - len(texts[2]) - 10
    with pytest.raises(SystemExit, match="server closed"):
        common.read_frames(bytes((0x88, 2)) + b"\x03\xe8")
    for text in texts:
        frame = common.masked_frame(text)
        head = 2 + {5: 0, 300: 2, 70000: 8}[len(text)]
        assert frame[0] == 0x81 and frame[1] & 0x80
        assert frame[head:head + 4] == b"\0\0\0\0" and frame[head + 4:] == text
    assert common.percentile([5, 1, 4, 2, 3], 0.5) == 3
    assert common.percentile([5, 1, 4, 2, 3], 0.99) == 5


def test_the_rpc_bench_market_is_built_on_a_chain():
    """bench/rpc.py's market (GOLD, 20 orders a side), which bench/notices.py
    uses too, is made of operations the chain takes (an array
    ``extensions`` given as ``{}`` is refused, as fc refuses it)."""
    code = textwrap.dedent("""
        import os, tempfile
        import rpc
        from kit.chain import open_chain
        from nodeapi.chain.genesis import load_genesis
        chain = open_chain(load_genesis(), os.path.join(tempfile.mkdtemp(), "blocks.log"))
        rpc.build_market(chain)
        print(sum(1 for oid in chain.state.objects if oid.startswith("1.7.")))
        """)
    done = run_in_bench(code, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "40", done.stderr[-3000:]
