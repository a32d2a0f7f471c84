"""api-access files, salted passwords and nodeapi-saltpass (docs/wire-contract.rst s. 2)."""

import base64
import io
import json

import orjson
import pytest

from nodeapi import saltpass
from nodeapi.errors import ConfigError
from nodeapi.rpc.access import DEFAULT_ALLOWED_APIS, ApiAccess, hash_password

from kit.access import VECTORS
from kit.paths import ROOT


def test_hash_is_password_bytes_then_salt():
    assert hash_password("supersecret", base64.b64decode("INDdM6iCi/8=")) == \
        "9e9GF7ooXVb9k4BoSfNIPTelXeGOZ5DrgOYMj94elaY="
    assert hash_password("superpassword2", base64.b64decode("Zb8JrQDKNIQ=")) == \
        "myadjRISnFOWn2TTd91zqbY50q0w2j/oJGlcdQkUB0Y="


def test_vectors():
    access = ApiAccess.from_json(VECTORS)
    assert access.check("bytemaster", "supersecret") == frozenset(
        {"database_api", "network_broadcast_api", "history_api", "network_node_api",
         "block_api"})
    assert access.check("user2", "superpassword2") == frozenset({"database_api", "history_api"})
    # a known user with a wrong password does not fall back to "*"
    assert access.check("bytemaster", "wrong") is None
    assert access.check("user2", "supersecret") is None
    # unknown users and anonymous logins match "*"
    star = frozenset({"database_api", "network_broadcast_api", "history_api"})
    assert access.check("nobody", "whatever") == star
    assert access.check("", "") == star


def test_without_star_unknown_user_fails():
    doc = {"permission_map": VECTORS["permission_map"][:2]}
    assert ApiAccess.from_json(doc).check("", "") is None


def test_every_check_hashes_once(monkeypatch):
    """Known user (right or wrong password), unknown user falling back to
    "*", and unknown user without "*": each check hashes the password once,
    so its time does not reveal which user names exist; results unchanged."""
    from nodeapi.rpc import access as access_module

    salts = []
    real = access_module.password_digest

    def counting(password, salt):
        salts.append(salt)
        return real(password, salt)

    monkeypatch.setattr(access_module, "password_digest", counting)
    with_star = ApiAccess.from_json(VECTORS)
    without_star = ApiAccess.from_json({"permission_map": VECTORS["permission_map"][:2]})
    bytemaster_salt = base64.b64decode("INDdM6iCi/8=")
    cases = [
        (with_star, "bytemaster", "supersecret", True, bytemaster_salt),
        (with_star, "bytemaster", "wrong", False, bytemaster_salt),
        (with_star, "nobody", "whatever", True, access_module.DUMMY_SALT),
        (without_star, "bytemaster", "wrong", False, bytemaster_salt),
        (without_star, "nobody", "whatever", False, access_module.DUMMY_SALT),
        (without_star, "", "", False, access_module.DUMMY_SALT),
    ]
    for access, user, password, allowed, salt in cases:
        salts.clear()
        result = access.check(user, password)
        assert (result is not None) == allowed, (user, password)
        assert salts == [salt], (user, password)
    assert len(access_module.DUMMY_SALT) == len(bytemaster_salt)


def test_first_duplicate_wins():
    first = ["dup", {"password_hash_b64": "*", "password_salt_b64": "*",
                     "allowed_apis": ["database_api"]}]
    second = ["dup", {"password_hash_b64": "*", "password_salt_b64": "*",
                      "allowed_apis": ["network_node_api"]}]
    access = ApiAccess.from_json({"permission_map": [first, second]})
    assert access.check("dup", "x") == frozenset({"database_api"})


def test_default_access():
    access = ApiAccess.default()
    assert access.check("", "") == DEFAULT_ALLOWED_APIS
    assert "network_node_api" not in DEFAULT_ALLOWED_APIS
    assert DEFAULT_ALLOWED_APIS == {"database_api", "network_broadcast_api", "history_api",
                                    "orders_api", "custom_operations_api"}


def test_load_file(tmp_path):
    path = tmp_path / "api-access.json"
    path.write_bytes(orjson.dumps(VECTORS))
    access = ApiAccess.load(str(path))
    assert access.check("bytemaster", "supersecret") is not None
    assert access.source == str(path)


@pytest.mark.parametrize("content, problem", [
    (None, "cannot read"),
    (b"{not json", "not valid JSON"),
    (b"[]", "'permission_map' array"),
    (b'{"permission_map": [["a"]]}', "permission_map[0]: expected [user"),
    (b'{"permission_map": [["a", {"password_hash_b64": "*", "password_salt_b64": "*"}]]}',
     "missing 'allowed_apis'"),
    (b'{"permission_map": [["a", {"password_hash_b64": "*", "password_salt_b64": "*",'
     b' "allowed_apis": ["nope_api"]}]]}', "unknown API name(s) nope_api"),
    (b'{"permission_map": [["a", {"password_hash_b64": "!!", "password_salt_b64": "AA==",'
     b' "allowed_apis": []}]]}', "not valid base64"),
    (b'{"permission_map": [["a", {"password_hash_b64": "AAAA", "password_salt_b64": "AA==",'
     b' "allowed_apis": []}]]}', "must decode to 32 bytes"),
])
def test_bad_files_name_path_and_problem(tmp_path, content, problem):
    path = tmp_path / "access.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ConfigError) as info:
        ApiAccess.load(str(path))
    assert str(path) in str(info.value)
    assert problem in str(info.value)


def test_saltpass_prints_a_hash_that_logs_in():
    out = io.StringIO()
    answers = iter(["s3cret", "s3cret"])
    assert saltpass.main([], prompt=lambda _: next(answers), out=out) == 0
    entry = json.loads(out.getvalue())
    assert set(entry) == {"password_hash_b64", "password_salt_b64"}
    assert len(base64.b64decode(entry["password_salt_b64"])) == 8
    access = ApiAccess.from_json({"permission_map": [["me", dict(entry, allowed_apis=[
        "database_api"])]]})
    assert access.check("me", "s3cret") == frozenset({"database_api"})
    assert access.check("me", "other") is None


def test_saltpass_whole_entry_and_errors(capsys):
    out = io.StringIO()
    answers = iter(["pw", "pw"])
    assert saltpass.main(["--user", "alice", "--apis", "database_api,network_node_api"],
                         prompt=lambda _: next(answers), out=out) == 0
    user, entry = json.loads(out.getvalue())
    assert user == "alice"
    assert entry["allowed_apis"] == ["database_api", "network_node_api"]
    assert ApiAccess.from_json({"permission_map": [[user, entry]]}).check("alice", "pw")
    answers = iter(["a", "b"])
    assert saltpass.main([], prompt=lambda _: next(answers), out=io.StringIO()) == 1
    assert "differ" in capsys.readouterr().err
    assert saltpass.main(["--apis", "x"], prompt=lambda _: "", out=io.StringIO()) == 2
    assert saltpass.main(["--user", "a", "--apis", "bogus_api"], prompt=lambda _: "",
                         out=io.StringIO()) == 2
    assert "bogus_api" in capsys.readouterr().err


def _lines(*lines):
    """A prompt answering ``lines`` then raising EOFError, as getpass does
    when piped input ends."""
    answers = iter(lines)

    def prompt(_text):
        try:
            return next(answers)
        except StopIteration:
            raise EOFError from None
    return prompt


@pytest.mark.parametrize("lines, message", [
    ((), "no password given (input ended)"),
    (("only-once",), "the password must be given twice (input ended after the first one)"),
    (("",), "empty password refused"),
    (("", ""), "empty password refused"),
])
def test_saltpass_ended_or_empty_input_is_a_clear_error(capsys, lines, message):
    out = io.StringIO()
    assert saltpass.main([], prompt=_lines(*lines), out=out) == 1
    assert out.getvalue() == ""
    assert capsys.readouterr().err == f"nodeapi-saltpass: {message}\n"


def test_saltpass_one_piped_line_exits_1_without_traceback():
    import os
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "nodeapi.saltpass"], input=b"pw\n",
                          capture_output=True, cwd=ROOT, timeout=30)
    assert proc.returncode == 1 and proc.stdout == b""
    assert b"Traceback" not in proc.stderr
    assert b"nodeapi-saltpass: the password must be given twice" in proc.stderr
