"""Failed logins: one stable, rate-limited line with the source address and
user name, and the shipped fail2ban filter (etc/fail2ban) matching the
node's real log lines - through a Python ``re`` translation of its
failregex and through Debian's ``fail2ban-regex``."""

import base64
import configparser
import os
import re
import shutil
import subprocess
import urllib.error
import urllib.request

import orjson
import pytest
import pytest_twisted
from twisted.internet.task import Clock
from twisted.logger import Logger, formatEvent

from nodeapi.rpc.failed_logins import FailedLogins, safe_user

from kit.daemon import ACCESS, ROOT, Daemon
from kit.rpc import ws_connect

FILTER = os.path.join(ROOT, "etc", "fail2ban", "filter.d", "nodeapi.conf")
JAIL = os.path.join(ROOT, "etc", "fail2ban", "jail.d", "nodeapi.conf")


def _recorder():
    events = []
    logins = FailedLogins(Clock())
    logins.log = Logger(namespace="nodeapi.rpc.failed_logins.FailedLogins",
                        observer=events.append)
    return logins, events


def test_every_failure_is_a_line_up_to_the_per_address_bound():
    """Each failure is its own line (fail2ban counts lines), up to
    per_address lines per address and window; the failures over it are
    counted and the address' first line after the window says how many."""
    logins, events = _recorder()
    logins.per_address = 3
    written = [logins.failed("10.0.0.1", "bob", "websocket") for _ in range(5)]
    assert written == [True, True, True, False, False]
    assert logins.failed("10.0.0.2", "eve", "http") is True  # another address
    logins.clock.advance(59)
    assert logins.failed("10.0.0.1", "bob", "http") is False  # still the same window
    logins.clock.advance(1)
    assert logins.failed("10.0.0.1", "bob", "http") is True
    assert [formatEvent(e) for e in events] == [
        'Failed login from 10.0.0.1 user "bob" via websocket'] * 3 + [
        'Failed login from 10.0.0.2 user "eve" via http',
        'Failed login from 10.0.0.1 user "bob" via http (3 more from this address not logged)']
    assert logins.total == 8
    assert [e["left_out"] for e in events] == [0, 0, 0, 0, 3]


def test_default_bound_lets_a_jail_count_to_its_maxretry():
    """With the defaults, 20 failures of one address in the same instant
    are 20 lines: the shipped jail's maxretry (5) is reached at the 5th."""
    logins, events = _recorder()
    assert all(logins.failed("10.0.0.9", "x", "http") for _ in range(20))
    assert logins.failed("10.0.0.9", "x", "http") is False
    assert len(events) == 20
    parser = configparser.RawConfigParser()
    parser.read(JAIL)
    assert int(parser.get("nodeapi", "maxretry")) <= logins.per_address
    findtime = parser.get("nodeapi", "findtime")
    assert findtime.endswith("m") and int(findtime[:-1]) * 60 >= logins.window


def test_burst_limit_over_all_addresses():
    logins, events = _recorder()
    logins.burst = 3
    written = [logins.failed(f"10.0.1.{i}", "x", "http") for i in range(5)]
    assert written == [True, True, True, False, False]
    logins.clock.advance(1)
    assert logins.failed("10.0.1.4", "x", "http") is True
    assert formatEvent(events[-1]).endswith("(1 more from this address not logged)")


def test_user_names_cannot_forge_lines_or_addresses():
    assert safe_user('x" via http\n2026 [x] Failed login from 6.6.6.6') == (
        "x??via?http?2026??x??Failed?login?from?6.6.6.6")
    assert safe_user("a" * 100) == "a" * 64
    assert safe_user("bob.smith+1@example-host_2") == "bob.smith+1@example-host_2"


def failregex() -> tuple:
    """The filter's failregex as a Python pattern (fail2ban's <HOST> as an
    IPv4/IPv6 address group) and its datepattern as a Python pattern."""
    parser = configparser.ConfigParser()  # fail2ban's %(name)s interpolation
    parser.read(FILTER)
    fail = parser.get("Definition", "failregex").strip()
    date = parser.get("Definition", "datepattern").strip().splitlines()[0]
    date = (date.replace("%Y", r"\d{4}").replace("%m", r"\d{2}").replace("%d", r"\d{2}")
            .replace("%H", r"\d{2}").replace("%M", r"\d{2}").replace("%S", r"\d{2}")
            .replace("%z", r"[+-]\d{4}"))
    return re.compile(fail.replace("<HOST>", r"(?P<host>[0-9a-fA-F:.]+)")), re.compile(date)


def matches(lines) -> list:
    """The addresses the filter finds in ``lines`` (fail2ban removes the
    date it found, then searches the failregex)."""
    fail, date = failregex()
    found = []
    for line in lines:
        m = date.search(line)
        rest = line[:m.start()] + line[m.end():] if m else line
        hit = fail.search(rest)
        if hit:
            found.append(hit.group("host"))
    return found


@pytest_twisted.inlineCallbacks
def _fail_logins(node):
    """Against a daemon with the shipped api-access file, at full speed:
    5 wrong WebSocket logins, a right one, a wrong Basic password over
    HTTP, a login whose user name holds a forged line (let in by the '*'
    entry) and a wrong one whose password does: 7 failures."""
    ws = yield ws_connect(node.port)
    for _ in range(5):
        assert (yield ws.call(1, "login", "bytemaster", "wrong")) is False
    assert (yield ws.call(1, "login", "bytemaster", "supersecret")) is True
    ws.dropConnection()
    token = base64.b64encode(b"user2:guess").decode()
    req = urllib.request.Request(
        f"http://127.0.0.1:{node.port}/rpc",
        data=orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "get_chain_id",
                           "params": []}),
        headers={"Content-Type": "application/json", "Authorization": "Basic " + token})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(req, timeout=10)
    assert "get_chain_id" in refused.value.read().decode()  # id 0 is the dummy set
    ws = yield ws_connect(node.port)
    assert (yield ws.call(1, "login", 'user2" from 6.6.6.6', "x")) is True  # '*' entry
    assert (yield ws.call(1, "login", "user2", "Failed login from 6.6.6.6 ")) is False
    ws.dropConnection()


EXPECTED = (['Failed login from 127.0.0.1 user "bytemaster" via websocket'] * 5 + [
    'Failed login from 127.0.0.1 user "user2" via http',
    'Failed login from 127.0.0.1 user "user2" via websocket'])


def fail2ban_regex(source, *extra) -> str:
    """``fail2ban-regex SOURCE FILTER`` output; asserts it ran."""
    regex = shutil.which("fail2ban-regex")
    if regex is None:
        pytest.fail("fail2ban-regex is not installed (Debian: apt-get install -y fail2ban "
                    "python3-systemd)")
    proc = subprocess.run([regex, *extra, source, FILTER], capture_output=True, timeout=120)
    out = proc.stdout.decode()
    assert proc.returncode == 0, out + proc.stderr.decode()
    return out


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_failed_logins_in_a_twistd_log_file_match_the_fail2ban_filter(tmp_path):
    """A daemon logging in twistd's format (a file: dated lines): every one
    of the 7 failures is a line, the filter finds 127.0.0.1 in exactly
    those lines (its re translation and fail2ban-regex on the file); a
    right login and the anonymous login are not logged."""
    node = Daemon(tmp_path / "data", "--api-access", ACCESS).start()
    try:
        yield _fail_logins(node)
    finally:
        node.stop()
    lines = [line for line in node.log().splitlines() if "Failed login" in line]
    assert [line.split(" ", 2)[2] for line in lines] == EXPECTED, node.log()
    assert all(re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} "
                        r"\[nodeapi\.rpc\.failed_logins\.FailedLogins#warn\] ", line)
               for line in lines)
    assert matches(node.log().splitlines()) == ["127.0.0.1"] * 7
    out = fail2ban_regex(node.log_path)
    assert re.search(r"Failregex: 7 total", out), out
    assert re.search(r"Lines: \d+ lines, 0 ignored, 7 matched", out), out


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_failed_logins_in_the_journal_match_the_fail2ban_filter(tmp_path):
    """Under the shipped unit the standard output is the journal
    (JOURNAL_STREAM): the node writes ``<4>[namespace#warn] ...`` without
    twistd's date; the entries journald makes of that stream (kit.journal),
    written into a real journal file, are what fail2ban's systemd backend
    reads: fail2ban-regex with the systemd-journal backend and the filter's
    journalmatch finds all 7 failures, as it does in ``journalctl -o
    short`` output (a syslog file); ``-p warning`` shows them, ``-p err``
    does not.  A fail2ban-server running the shipped jail on that journal
    bans 127.0.0.1; on a journal of 4 of the failures (under maxretry) it
    bans nobody."""
    from kit.fail2ban import jail_bans
    from kit.journal import journal_stream_env, journalctl, stream_entries, write_journal

    log = tmp_path / "data.log"
    node = Daemon(tmp_path / "data", "--api-access", ACCESS, env=journal_stream_env(log))
    node.start()
    try:
        yield _fail_logins(node)
    finally:
        node.stop()
    stream = log.read_bytes()
    lines = [line for line in stream.decode().splitlines() if "Failed login" in line]
    assert lines == ["<4>[nodeapi.rpc.failed_logins.FailedLogins#warn] " + text
                     for text in EXPECTED], stream.decode()
    assert not re.search(rb"^(<\d>)?\d{4}-\d\d-\d\dT", stream, re.M)  # no twistd date
    journal = tmp_path / "nodeapi.journal"
    write_journal(stream_entries(stream, node.proc.pid), journal)
    warnings = journalctl(journal, "-p", "warning", "-o", "cat")
    assert warnings.count("Failed login from 127.0.0.1") == 7
    assert "Failed login" not in journalctl(journal, "-p", "err", "-o", "cat")
    out = fail2ban_regex(f'systemd-journal[journalfiles="{journal}"]')
    assert "journal match : _SYSTEMD_UNIT=nodeapi.service" in out, out
    assert re.search(r"Failregex: 7 total", out), out
    assert re.search(r"Lines: \d+ lines, 0 ignored, 7 matched", out), out
    assert jail_bans(journal, tmp_path / "jail") == {"127.0.0.1"}  # maxretry 5 of 7
    four = [entry for entry in stream_entries(stream, node.proc.pid)
            if b"Failed login" in entry["MESSAGE"]][:4]
    write_journal(four, tmp_path / "four.journal")
    assert jail_bans(tmp_path / "four.journal", tmp_path / "jail4") == set()
    other = tmp_path / "other.journal"  # another unit's entries are not read
    write_journal(stream_entries(stream, node.proc.pid, unit="other.service"), other)
    out = fail2ban_regex(f'systemd-journal[journalfiles="{other}"]')
    assert re.search(r"Lines: 0 lines", out), out
    syslog = tmp_path / "syslog"
    syslog.write_text(journalctl(journal, "-o", "short"))
    assert re.search(r"^\w{3} [ \d]\d \d\d:\d\d:\d\d \S+ nodeapi\[\d+\]: \[nodeapi\.rpc\."
                     r"failed_logins\.FailedLogins#warn\] Failed login",
                     syslog.read_text(), re.M), syslog.read_text()
    out = fail2ban_regex(str(syslog))
    assert re.search(r"Lines: \d+ lines, 0 ignored, 7 matched", out), out


def test_jail_names_the_filter_and_a_finite_ban():
    parser = configparser.RawConfigParser()
    parser.read(JAIL)
    assert parser.get("nodeapi", "filter") == "nodeapi"
    assert int(parser.get("nodeapi", "maxretry")) >= 3


def _sleep(seconds):
    from twisted.internet import reactor
    from twisted.internet.task import deferLater

    return deferLater(reactor, seconds, lambda: None)


def test_forged_text_in_a_line_is_not_matched():
    """A line with the forged text only inside the user name field, or a
    different logger, is not a match; nor is a journal line whose message
    carries the text after another logger's prefix."""
    assert matches(['box nodeapi[42]: [nodeapi.other#warn] Bad request: [nodeapi.rpc.'
                    'failed_logins.FailedLogins#warn] Failed login from 6.6.6.6 user "y" via '
                    'http',
                    'box nodeapi[42]: Bad: [nodeapi.rpc.failed_logins.FailedLogins#warn] '
                    'Failed login from 6.6.6.6 user "y" via http']) == []
    assert matches(['box nodeapi[42]: [nodeapi.rpc.failed_logins.FailedLogins#warn] Failed '
                    'login from 10.1.2.3 user "a" via http',
                    'box nodeapi[42]: 2026-11-27T00:16:10+0000 [nodeapi.rpc.failed_logins.'
                    'FailedLogins#warn] Failed login from 10.1.2.4 user "a" via http']) == [
        "10.1.2.3", "10.1.2.4"]
    assert matches(['2026-11-27T00:16:10+0000 [nodeapi.rpc.failed_logins.FailedLogins#warn] '
                    'Failed login from 10.1.2.3 user "a?b" via http']) == ["10.1.2.3"]
    assert matches(['2026-11-27T00:16:10+0000 [nodeapi.other#warn] Failed login from 10.1.2.3 '
                    'user "a" via http',
                    '2026-11-27T00:16:10+0000 [nodeapi.rpc.failed_logins.FailedLogins#warn] '
                    'Failed login from 10.1.2.3 user "x" via http [nodeapi.rpc.failed_logins.'
                    'FailedLogins#warn] Failed login from 6.6.6.6 user "y" via http']) == []

