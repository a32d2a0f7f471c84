"""``twistd nodeapi --help`` fits a screen: the node's main options grouped
by purpose (nodeapi.config_help); ``--help-all`` is twistd's whole usage
text with every option."""

import subprocess

from nodeapi.config_help import GROUPS
from nodeapi.config_options import FLAGS, MULTI, SINGLE
from nodeapi.plugins.registry import PLUGINS

from kit.daemon import twistd_command


def _run(*args) -> str:
    proc = subprocess.run(twistd_command("nodeapi", *args), capture_output=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    return proc.stdout.decode()


def test_every_main_option_is_in_one_group():
    """The node's own options (not api-limit-*, not a plugin's but the
    witness plugin's) are each in exactly one group; every name exists."""
    plugin_only = {o.name for p in PLUGINS if p.name != "witness" for o in p.options}
    every = ([n for n, *_ in SINGLE] + [n for n, _ in FLAGS] + [n for n, *_ in MULTI])
    main = {n for n in every if not n.startswith("api-limit-") and n not in plugin_only}
    grouped = [name for _title, entries in GROUPS for names, _words in entries
               for name in ((names,) if isinstance(names, str) else names)]
    assert sorted(grouped) == sorted(main)
    assert all(len(words) <= 43 for _t, entries in GROUPS for _n, words in entries)


def test_help_fits_a_screen_and_help_all_lists_everything():
    text = _run("--help")
    lines = text.splitlines()
    assert len(lines) <= 60 and max(map(len, lines)) <= 79, text
    assert lines[0] == "Usage: twistd [options] nodeapi [options]"
    assert "  --rpc-endpoint=127.0.0.1:8090     host:port of WebSocket and HTTP RPC" in lines
    assert "--api-limit-get-assets" not in text and "--searchdb-node-url" not in text
    assert "--help-all" in text
    assert _run("-h") == text
    full = _run("--help-all")
    for name in ([n for n, *_ in SINGLE] + [n for n, _ in FLAGS] + [n for n, *_ in MULTI]):
        assert f"--{name}" in full, name
    assert len(full.splitlines()) > 300
