"""No import circle among nodeapi's modules: every import statement (late
ones inside functions included) read from the sources, the circles found
as the strongly connected components of the module graph."""

import ast
import os

from kit.paths import ROOT


def _module_graph() -> dict:
    """module name -> the nodeapi modules it imports (a ``from package
    import name`` counts as importing ``package.name`` when that is a
    module)."""
    files = {}
    for folder, _dirs, names in os.walk(os.path.join(ROOT, "nodeapi")):
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                module = os.path.relpath(path[:-3], ROOT).replace(os.sep, ".")
                files[module.removesuffix(".__init__")] = path
    graph = {module: set() for module in files}
    for module, path in files.items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                for alias in node.names:
                    target = f"{node.module}.{alias.name}"
                    if target in files:
                        graph[module].add(target)
                    elif node.module in files:
                        graph[module].add(node.module)
            elif isinstance(node, ast.Import):
                graph[module].update(a.name for a in node.names if a.name in files)
    return graph


def _circles(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan,
    iterative)."""
    index, low, stack, on_stack, circles = {}, {}, [], set(), []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        circles.append(sorted(component))
    return circles


def test_circle_finder_sees_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _circles(graph) == [["a", "b", "c"]]


def test_no_import_circle_in_nodeapi():
    graph = _module_graph()
    assert "nodeapi.protocol.operations.variant" in graph
    assert "nodeapi.protocol.operations.table" in graph["nodeapi.protocol.impacted"]
    assert _circles(graph) == []
