"""docs/DESIGN.rst stays true: its module map names every module of
``nodeapi/`` in the section of its package, and every ``nodeapi/...`` path
it names exists."""

import os
import re

from kit.paths import ROOT

DESIGN = os.path.join(ROOT, "docs", "DESIGN.rst")
PACKAGE = os.path.join(ROOT, "nodeapi")


def _module_map() -> str:
    """The text above "Data flows": the shared contracts and the map."""
    text = open(DESIGN, encoding="utf-8").read()
    return text[:text.index("\nData flows\n")]


def _sections(text: str) -> dict:
    """``{"nodeapi/<path>": text}``: a section starts at a line beginning
    with ``nodeapi/<path>`` (or ``- ``nodeapi/<path>``) in the first column
    and runs to the next line written in the first column."""
    sections, name, lines = {}, None, []
    for line in text.splitlines():
        if line and not line[0].isspace():
            if name is not None:
                sections[name] = sections.get(name, "") + "\n".join(lines)
            m = re.match(r"(?:- )?``(nodeapi/[\w/.]*)``", line)
            name, lines = (m.group(1).rstrip("/") if m else None), [line]
        else:
            lines.append(line)
    if name is not None:
        sections[name] = sections.get(name, "") + "\n".join(lines)
    return sections


def _modules() -> list:
    out = []
    for folder, dirs, files in os.walk(PACKAGE):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for f in files:
            if f.endswith(".py") and f != "__init__.py":
                out.append(os.path.relpath(os.path.join(folder, f), ROOT).replace(os.sep, "/"))
    return sorted(out)


def _named(module: str, sections: dict) -> bool:
    """``module`` (``nodeapi/a/b/c.py``) has a section of its own, is
    named whole in some section, or the
    deepest section of a package holding it names it: ``c.py``, or, in a
    sub-folder the section names (``b/``), ``c`` after that folder."""
    if module in sections:
        return True
    if f"``{module}``" in "".join(sections.values()):  # named whole in another's entry
        return True
    parts = module.split("/")
    for depth in range(len(parts) - 1, 0, -1):
        text = sections.get("/".join(parts[:depth]))
        if text is None:
            continue
        rest = parts[depth:]
        name = rest[-1][:-3]
        if len(rest) == 1:
            return re.search(rf"(?<![\w/]){re.escape(name)}\.py\b", text) is not None
        at = text.find(f"{rest[0]}/")
        return at >= 0 and re.search(rf"\b{re.escape(name)}\b", text[at:]) is not None
    return False


def test_the_module_map_names_every_module():
    sections = _sections(_module_map())
    missing = [m for m in _modules() if not _named(m, sections)]
    assert not missing, f"modules missing from DESIGN.rst's module map: {missing}"


def test_the_paths_the_module_map_names_exist():
    text = _module_map()
    named = set(re.findall(r"\bnodeapi/[\w/]+(?:\.py|/)", text))
    gone = [p for p in sorted(named) if not os.path.exists(os.path.join(ROOT, p))]
    assert not gone, f"DESIGN.rst names paths that do not exist: {gone}"
