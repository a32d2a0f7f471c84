"""``nodeapi-saltpass``: make the password hash and salt of an api-access entry.

Prompts for the password without echo (twice), draws 8 random salt bytes and
prints ``{"password_hash_b64": ..., "password_salt_b64": ...}``; with
``--user NAME --apis a,b`` it prints a whole ``permission_map`` entry
``[NAME, {..., "allowed_apis": [...]}]`` ready to paste into api-access.json.
Hashing: :func:`nodeapi.rpc.access.hash_password` (graphene's
``programs/util/saltpass.py``, docs/wire-contract.rst section 2).
"""

import base64
import getpass
import os
import sys

import orjson
from twisted.python import usage

from nodeapi.rpc.access import KNOWN_APIS, hash_password


class Options(usage.Options):
    """Command line of ``nodeapi-saltpass``."""

    synopsis = "nodeapi-saltpass [--user NAME --apis database_api,history_api]"
    optParameters = [
        ["user", "u", None, "Print a whole permission_map entry for this user."],
        ["apis", "a", None, "Comma-separated allowed_apis for --user "
                            "(e.g. database_api,network_node_api)."],
    ]

    def postOptions(self) -> None:
        """``usage.Options.postOptions``: ``--apis`` needs ``--user`` and names
        only known API sets; ``self["apis"]`` becomes their list.

        :raises usage.UsageError: otherwise."""
        if self["apis"] is not None and self["user"] is None:
            raise usage.UsageError("--apis needs --user")
        if self["user"] is not None:
            apis = [a.strip() for a in (self["apis"] or "").split(",") if a.strip()]
            unknown = sorted(set(apis) - KNOWN_APIS)
            if unknown:
                raise usage.UsageError(f"--apis: unknown API name(s) {', '.join(unknown)}; "
                                       f"known: {', '.join(sorted(KNOWN_APIS))}")
            self["apis"] = apis


def make_entry(password: str, salt: bytes, user=None, apis=()) -> object:
    """The JSON value printed for ``password``: the hash/salt object, or the
    ``[user, {..., allowed_apis}]`` pair when ``user`` is given."""
    entry = {"password_hash_b64": hash_password(password, salt),
             "password_salt_b64": base64.b64encode(salt).decode("ascii")}
    if user is None:
        return entry
    entry["allowed_apis"] = list(apis)
    return [user, entry]


def _ask(prompt, text: str):
    """``prompt(text)``, or None when the input ends first (EOFError: for
    example only one line piped into the command)."""
    try:
        return prompt(text)
    except EOFError:
        return None


def main(argv=None, prompt=getpass.getpass, out=None) -> int:
    """Entry point; returns the process exit status: 0 with the JSON printed
    on ``out``; 2 on usage errors; 1 with a one-line message on stderr when
    the input ends before both passwords were read (``prompt`` raising
    EOFError, for example a single piped line), when the password is empty
    (refused: graphene would accept it, but an empty password is no
    protection) or when the two passwords differ.  ``prompt(text)`` returns
    the line typed (default :func:`getpass.getpass`, no echo)."""
    out = out or sys.stdout
    options = Options()
    try:
        options.parseOptions(sys.argv[1:] if argv is None else argv)
    except usage.UsageError as exc:
        print(f"nodeapi-saltpass: {exc}", file=sys.stderr)
        return 2
    password = _ask(prompt, "Password: ")
    if password is None:
        print("nodeapi-saltpass: no password given (input ended)", file=sys.stderr)
        return 1
    if not password:
        print("nodeapi-saltpass: empty password refused", file=sys.stderr)
        return 1
    again = _ask(prompt, "Again: ")
    if again is None:
        print("nodeapi-saltpass: the password must be given twice (input ended "
              "after the first one)", file=sys.stderr)
        return 1
    if again != password:
        print("nodeapi-saltpass: the passwords differ", file=sys.stderr)
        return 1
    value = make_entry(password, os.urandom(8), options["user"], options["apis"] or ())
    out.write(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
