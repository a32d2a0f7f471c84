"""The ``config.ini`` a first start writes into the data dir.

bitshares-core's witness_node writes ``<data-dir>/config.ini`` when it is
missing (libraries/app/config_util.cpp ``create_new_config_file``): each
option's description as a comment, then the option.  nodeapi does the same
(:func:`write_new_config`, called by :func:`nodeapi.tap.makeService` when
:attr:`nodeapi.config.Options.new_config` is set) with every option
commented out at its default - a later release's changed default applies
to a node that never set the option - the node's own options first, then
one block per plugin under a ``# ====`` header as witness_node writes its
plugins' sections.  The text comes from the option catalogue
(:mod:`nodeapi.config_options`), so it names every option there is;
uncommenting every option line gives the defaults back.
"""

import os
import textwrap

from nodeapi import __version__
from nodeapi.chain.genesis import DEFAULT_GENESIS
from nodeapi.config_options import FLAGS, MULTI, SINGLE
from nodeapi.plugins.registry import PLUGINS

#: options not written: the data dir's own file does not move the data dir
SKIPPED = frozenset({"data-dir"})
#: flags whose default is decided at start (the witness plugin's development
#: defaults): written with an empty value, which leaves them unset
UNSET_FLAGS = frozenset({"enable-stale-production"})
_RULE = "# " + "=" * 78

HEADER = f"""\
# nodeapi {__version__} configuration of this data dir, read at every start (as
# bitshares-core's witness_node reads its data dir's config.ini).
#
# Written at the first start with every option commented out at its default:
# uncomment a line and change its value to set that option.  Syntax: one
# "key = value" per line, "#" starts a comment anywhere on a line, repeatable
# options take one line per value, flags take true or false.  The command
# line wins over this file; "--config FILE" reads FILE instead of this one.
# bitshares' [log.*] and [logger.*] logging sections are read from here too.
"""


def _comment(text: str) -> str:
    return "\n".join(textwrap.wrap(text, 78, initial_indent="# ", subsequent_indent="# ",
                                   break_on_hyphens=False))


def _rows() -> list:
    """``[(name, default text, help)]`` of every option in catalogue order."""
    rows = [(name, default, doc) for name, default, _c, doc in SINGLE]
    rows += [(name, "" if name in UNSET_FLAGS else "false", doc) for name, doc in FLAGS]
    rows += [(name, "", doc) for name, _c, doc in MULTI]
    return [row for row in rows if row[0] not in SKIPPED]


def config_text() -> str:
    """The whole file (module docstring)."""
    rows = {name: (default, doc) for name, default, doc in _rows()}
    plugin_options = {option.name for plugin in PLUGINS for option in plugin.options}
    blocks = [HEADER]

    def option(name):
        default, doc = rows.pop(name)
        if default == DEFAULT_GENESIS:
            default = ""  # empty: the bundled genesis, wherever it is installed
        blocks.append(f"{_comment(doc)}\n# {name} = {default}".rstrip() + "\n")

    for name in [name for name in rows if name not in plugin_options]:
        option(name)
    for plugin in PLUGINS:
        names = [o.name for o in plugin.options if o.name in rows]
        if names:
            blocks.append(f"{_RULE}\n# {plugin.name} plugin options\n{_RULE}\n")
            for name in names:
                option(name)
    return "\n".join(blocks)


def write_new_config(path: str) -> None:
    """Write :func:`config_text` to ``path`` (mode 0600: an operator's edits
    may add secrets), through a temporary file renamed into place, never
    over an existing file.  OSError as the system gives it."""
    temporary = f"{path}.new"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(config_text())
            f.flush()
            os.fsync(f.fileno())
        os.link(temporary, path)  # fails with EEXIST rather than replacing a file
    finally:
        os.unlink(temporary)
