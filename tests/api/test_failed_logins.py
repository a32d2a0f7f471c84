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


def test_one_line_per_address_per_second_and_the_count_left_out():
    logins, events = _recorder()
    assert logins.failed("10.0.0.1", "bob", "websocket") is True
    assert logins.failed("10.0.0.1", "bob", "websocket") is False
    assert logins.failed("10.0.0.2", "eve", "http") is True  # another address
    logins.clock.advance(1)
    assert logins.failed("10.0.0.1", "bob", "http") is True
    assert [formatEvent(e) for e in events] == [
        'Failed login from 10.0.0.1 user "bob" via websocket',
        'Failed login from 10.0.0.2 user "eve" via http',
        'Failed login from 10.0.0.1 user "bob" via http (1 more from this address not logged)']
    assert logins.total == 4


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
    parser = configparser.RawConfigParser()
    parser.read(FILTER)
    fail = parser.get("Definition", "failregex").strip()
    date = parser.get("Definition", "datepattern").strip().replace("%%", "%")
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


@pytest.mark.slow
@pytest_twisted.inlineCallbacks
def test_failed_logins_of_a_running_node_match_the_fail2ban_filter(tmp_path):
    """A daemon with the shipped api-access file: a wrong WebSocket login,
    a wrong Basic password over HTTP and an attempt whose user name holds a
    forged line are logged; the filter finds 127.0.0.1 in exactly those
    lines (its re translation and fail2ban-regex), a right login and the
    anonymous login are not logged."""
    node = Daemon(tmp_path / "data", "--api-access", ACCESS).start()
    try:
        ws = yield ws_connect(node.port)
        assert (yield ws.call(1, "login", "bytemaster", "wrong")) is False
        assert (yield ws.call(1, "login", "bytemaster", "supersecret")) is True
        ws.dropConnection()
        yield _sleep(1.1)  # one line per address and second
        token = base64.b64encode(b"user2:guess").decode()
        req = urllib.request.Request(
            f"http://127.0.0.1:{node.port}/rpc",
            data=orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "get_chain_id",
                               "params": []}),
            headers={"Content-Type": "application/json", "Authorization": "Basic " + token})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(req, timeout=10)
        assert "get_chain_id" in refused.value.read().decode()  # id 0 is the dummy set
        yield _sleep(1.1)
        ws = yield ws_connect(node.port)
        assert (yield ws.call(1, "login", 'user2" from 6.6.6.6', "x")) is True  # '*' entry
        assert (yield ws.call(1, "login", "user2", "Failed login from 6.6.6.6 ")) is False
        ws.dropConnection()
    finally:
        node.stop()
    lines = [line for line in node.log().splitlines() if "Failed login" in line]
    assert len(lines) == 3, node.log()
    assert lines[0].split(" ", 1)[1] == ('[nodeapi.rpc.failed_logins.FailedLogins#warn] '
                                         'Failed login from 127.0.0.1 user "bytemaster" via '
                                         'websocket')
    assert lines[1].endswith('Failed login from 127.0.0.1 user "user2" via http')
    assert lines[2].endswith('Failed login from 127.0.0.1 user "user2" via websocket')
    assert matches(node.log().splitlines()) == ["127.0.0.1"] * 3
    regex = shutil.which("fail2ban-regex")
    if regex is None:
        pytest.fail("fail2ban-regex is not installed (Debian: apt-get install -y fail2ban)")
    proc = subprocess.run([regex, node.log_path, FILTER], capture_output=True, timeout=120)
    out = proc.stdout.decode()
    assert proc.returncode == 0, out + proc.stderr.decode()
    assert re.search(r"Failregex: 3 total", out), out
    assert re.search(r"Lines: \d+ lines, 0 ignored, 3 matched", out), out


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
    different logger, is not a match."""
    assert matches(['2026-11-27T00:16:10+0000 [nodeapi.rpc.failed_logins.FailedLogins#warn] '
                    'Failed login from 10.1.2.3 user "a?b" via http']) == ["10.1.2.3"]
    assert matches(['2026-11-27T00:16:10+0000 [nodeapi.other#warn] Failed login from 10.1.2.3 '
                    'user "a" via http',
                    '2026-11-27T00:16:10+0000 [nodeapi.rpc.failed_logins.FailedLogins#warn] '
                    'Failed login from 10.1.2.3 user "x" via http [nodeapi.rpc.failed_logins.'
                    'FailedLogins#warn] Failed login from 6.6.6.6 user "y" via http']) == []

