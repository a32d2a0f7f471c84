"""README.rst stays true: its options table lists every option of
``twistd nodeapi`` with the default the code uses, and the two newcomer
commands are at the top."""

import os
import re

from nodeapi import config

from kit.paths import ROOT

README = os.path.join(ROOT, "README.rst")


def _table_rows() -> dict:
    text = open(README, encoding="utf-8").read()
    rows = {}
    for line in text.splitlines():
        m = re.match(r"^(--[a-z0-9-]+)(?: \(repeatable\))?\s{2,}(\S.*?)?\s{2,}\S", line)
        if m:
            rows[m.group(1)[2:]] = (m.group(2) or "").strip()
        elif re.match(r"^--[a-z]", line):
            rows[line.split()[0][2:]] = ""
    return rows


def test_every_option_is_in_the_readme_with_its_default():
    rows = _table_rows()
    for name, default, _coerce, _help in config.SINGLE:
        assert name in rows, name
        if name != "genesis-json" and default != "":
            assert rows[name] == f"``{default}``", (name, rows[name], default)
    for name, _help in config.FLAGS:
        assert name in rows, name
    for name, _coerce, _help in config.MULTI:
        assert name in rows, name
    known = ({n for n, *_ in config.SINGLE} | {n for n, _ in config.FLAGS}
             | {n for n, *_ in config.MULTI} | {"config"})
    assert set(rows) <= known, set(rows) - known


def test_the_two_commands_come_first():
    text = open(README, encoding="utf-8").read()
    head = text[:text.index("Operator guide")]
    assert "pip install . && twistd -n nodeapi" in head
    assert "pip install '.[test]' && python -m pytest -q -n 2 --dist loadfile" in head


def test_ci_runs_the_readmes_test_command():
    """.ci/run ends with the README's test command (after its install)."""
    text = open(README, encoding="utf-8").read()
    command = text[text.index("pip install '.[test]' && "):].split("\n")[0]
    with open(os.path.join(os.path.dirname(README), ".ci", "run"), encoding="utf-8") as f:
        lines = f.read().splitlines()
    install, run = command.split(" && ")
    assert install in lines and lines[-1] == run
