"""The layering stays true: no import cycles in src/ssdpts, function-level imports included.

A lazy import that hides a cycle is still a cycle, so every `import` statement anywhere in a module
counts (only `if TYPE_CHECKING:` blocks are skipped: they never run). Edges go to the most specific
module an import names, plus the package `__init__`s Python runs on the way to it (those of
packages the importing module is not itself inside).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from ssdpts.cli import LAZY_COMMANDS

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT = "ssdpts"
NATIVE = {f"{ROOT}._sim"}     # the Rust simulator: a compiled module, no .py to read


def _modules() -> dict[str, Path]:
    out = {}
    for p in (SRC / ROOT).rglob("*.py"):
        rel = p.relative_to(SRC).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """Every import node, at any depth, outside `if TYPE_CHECKING:` blocks."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def import_graph(unresolved: list[str] | None = None) -> dict[str, set[str]]:
    """Module -> the ssdpts modules it imports; `unresolved` collects imports that name no ssdpts module (a moved
    module's stale import would otherwise drop out of the graph unseen)."""
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        is_pkg = path.name == "__init__.py"
        package = name if is_pkg else name.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - (node.level - 1)]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in mods else mod for a in node.names]
            own = {name.rsplit(".", i)[0] for i in range(name.count(".") + 1)}
            for t in targets:
                if unresolved is not None and (t == ROOT or t.startswith(f"{ROOT}.")) and t not in mods and t not in NATIVE:
                    unresolved.append(f"{name} imports {t}")
                while t and t not in mods and "." in t:
                    t = t.rpartition(".")[0]
                # importing a.b.c runs the package inits a.b and a first (those not already ours)
                chain = {t.rsplit(".", i)[0] for i in range(t.count(".") + 1)} - own
                graph[name].update(m for m in chain if m in mods and m != name)
    # the registry imports every test package by discovery (importlib): those edges are real too
    graph[f"{ROOT}.pts.registry"] |= {m for m in mods if m.count(".") == 2 and m.startswith(f"{ROOT}.pts.")
                                      and (mods[m].name == "__init__.py")}
    # the command line imports its lazy commands' modules by name (cli.LAZY_COMMANDS): those edges are real too
    graph[f"{ROOT}.cli"] |= {c.module for c in LAZY_COMMANDS.values()}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on: set[str] = set()
    stack: list[str] = []
    out = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def test_the_graph_sees_every_module():
    graph = import_graph()
    assert "ssdpts.cli" in graph and "ssdpts.store.db" in graph
    assert any(graph.values())


def test_every_import_names_a_module():
    unresolved: list[str] = []
    import_graph(unresolved)
    assert not unresolved, "imports of no ssdpts module: " + "; ".join(unresolved)


def test_no_import_cycles():
    found = cycles(import_graph())
    assert not found, "import cycles (lazy imports included):\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_command_line_starts_without_plotting_libraries():
    """`ssdpts --help`, list, show and check draw nothing: matplotlib and numpy (most of a second of CPU, half a
    minute in the emulated test-bed guest) are imported where a chart is drawn, not by `import ssdpts.cli`."""
    code = ("import sys, ssdpts.cli; "
            "print(sorted(m for m in ('matplotlib', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_targets_import_no_engine():
    """targets/ sits below the engines: a purge through an engine (a remote host's fio trim job) is handed to
    targets.purge by the layer that holds both (ctx.purger.purge), never imported by targets/."""
    graph = import_graph()
    upward = sorted(f"{m} -> {t}" for m, deps in graph.items() if m.startswith(f"{ROOT}.targets")
                    for t in deps if t.startswith((f"{ROOT}.engines", f"{ROOT}.pts", f"{ROOT}.runner")))
    assert not upward, "targets/ imports a higher layer: " + "; ".join(upward)


# The stages, bottom up: a folder (a package under ssdpts/, or a top-level module) may import its own floor and
# the floors below it, never one above, and no two folders of one floor import each other. Every folder has a
# floor (test_every_folder_has_a_floor). Derived from the graph: under everything the shared leaves (they import
# nothing of ssdpts) and the helpers over them; targets import workload (the job record), the engines import
# targets and capture, the store records what the engines report (and the health snapshots, the platform and
# the options a run stores), steady reads settings; the result records (`results`) and the render kit
# (contexts, plots, tables) sit below the tests, so `pts/*/render.py` import no output stage; the profiles
# validate every test's settings, so they sit over the tests. Above them the output stage, in four floors: the
# typed RunResult read from the store (`runresult`), the verdict over it (`conformance`), then the exporters
# (`export`: text, JSON, tidy) and, over them, the HTML report with its tables (`report`: it writes the JSON
# document beside report.html); then what drives it all. docs/architecture.md draws the same table.
FLOORS: list[tuple[str, ...]] = [
    # the shared leaves: `ssdpts` is the package's own __init__
    ("ssdpts", "errors", "exact", "lazy", "metrics", "records", "deviations", "capabilities", "findings", "owner", "clock",
     "interrupts", "realtime"),
    ("units", "inputs", "hostinfo"),           # sizes and durations, a user's files, the platform record
    ("progress", "livemetrics", "simdrive"),   # progress on the terminal and as OpenMetrics; the simulated drive
    ("workload",),
    ("settings", "runoptions"),                # every setting declared once; what `run` was asked
    ("targets",),
    ("capture", "health"),
    ("engines", "sampling"),                   # sampling: the drive's temperature around a test
    ("store", "doctor"),                       # doctor: the bench checks a run starts with
    ("steady", "plausibility", "runstatus"),   # plausibility: rules over stored cells; runstatus: settles a run
    ("results",),
    ("render",), ("pts",), ("profiles",),
    ("runresult",), ("conformance",), ("export",), ("report",), ("analyze",), ("criteria",), ("runner",),
    ("commands",), ("cli",), ("__main__",),
]


def folder_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """ssdpts.a.b -> a: the folder-level graph (a top-level module is its own folder)."""
    out: dict[str, set[str]] = {}
    for m, deps in graph.items():
        a = m.split(".")[1] if "." in m else m
        out.setdefault(a, set()).update(d.split(".")[1] for d in deps if "." in d and d.split(".")[1] != a)
    return out


def test_folders_form_no_cycle():
    found = cycles(folder_graph(import_graph()))
    assert not found, "folder-level import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_folders_import_only_their_floor_and_below():
    floor = {f: i for i, fl in enumerate(FLOORS) for f in fl}
    folders = folder_graph(import_graph())
    assert set(floor) <= set(folders), "a declared floor names no folder: " + ", ".join(sorted(set(floor) - set(folders)))
    upward = sorted(f"{a} -> {b}" for a, deps in folders.items() for b in deps
                    if a in floor and b in floor and floor[b] > floor[a])
    assert not upward, "a folder imports a higher floor: " + "; ".join(upward)
    inside = sorted(f"{a} -> {b}" for a, deps in folders.items() for b in deps
                    if a in floor and b in floor and a != b and floor[a] == floor[b])
    assert not inside, "folders of one floor import each other: " + "; ".join(inside)


def test_every_folder_has_a_floor():
    """A module or package added at the top of src/ssdpts is checked for upward imports only once it has a floor."""
    floor = {f for fl in FLOORS for f in fl}
    unplaced = sorted(set(folder_graph(import_graph())) - floor)
    assert not unplaced, "on no floor of FLOORS (tests/test_layering.py, docs/architecture.md): " + ", ".join(unplaced)


def test_the_floors_name_each_folder_once():
    named = [f for fl in FLOORS for f in fl]
    assert len(named) == len(set(named)), sorted({f for f in named if named.count(f) > 1})


def test_the_tests_import_no_output_stage_nor_analyses():
    """pts/ renders with the render kit below it; the output stage and `analyze` read the tests, never the reverse."""
    graph = import_graph()
    above = (f"{ROOT}.runresult", f"{ROOT}.conformance", f"{ROOT}.export", f"{ROOT}.report", f"{ROOT}.analyze")
    upward = sorted(f"{m} -> {t}" for m, deps in graph.items() if m.startswith(f"{ROOT}.pts") for t in deps
                    if t.startswith(above))
    assert not upward, "pts/ imports a higher stage: " + "; ".join(upward)
