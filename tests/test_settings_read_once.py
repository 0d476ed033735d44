"""A test's settings are typed once, in `ssdpts.settings`, and handed down as a `RunSettings` record: no module
outside the settings module reads a setting from the raw profile dict (issue 42).

What counts as a raw read, found in the source text (the AST of every module under src/ssdpts), not in
anything the code under test computes:
- a call to `settings_of`, `typed_settings`, `build` or `run_defaults` (the builders of typed settings from a
  profile dict: outside the settings module they mean a stage typing settings again);
- a profile section that holds settings, `"defaults"`, `"tests"`, `"steady_state"` or `"wipc"`, or a
  registered test's name, looked up on a dict: `x["defaults"]`, `x.get("defaults")`, `x.setdefault(...)`,
  `x.pop(...)`.
The profile loader (`ssdpts.profiles`) reads the TOML tables to validate and merge them before any record
exists: it is the file's reader, not a stage, and is exempt with the settings module.
"""

from __future__ import annotations

import ast
from pathlib import Path

from ssdpts.pts.registry import tests as registered_tests

SRC = Path(__file__).resolve().parents[1] / "src" / "ssdpts"
EXEMPT = ("settings.py", "profiles/")           # the settings module and the profile file's reader
BUILDERS = {"settings_of", "typed_settings", "build", "run_defaults"}
SECTIONS = {"defaults", "tests", "steady_state", "wipc"}
LOOKUPS = {"get", "setdefault", "pop"}
# Known raw reads left, each with why (none now; the list may only shrink):
ALLOWED: set[tuple[str, str]] = set()


def _key(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _profile_like(node: ast.AST) -> bool:
    """Whether an expression names a profile dict: `profile`, `prof`, `run["profile"]`, `self.profile`, or a
    lookup on one (`profile.get("tests", {})`)."""
    return "prof" in ast.unparse(node).lower()


def _from_settings(tree: ast.Module) -> set[str]:
    """The builders a module imports from ssdpts.settings (another module's `build` is not one)."""
    return {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
            and (n.module or "").split(".")[-1] == "settings" for a in n.names if a.name in BUILDERS}


def raw_reads(path: Path, section_names: set[str]) -> list[tuple[str, int, str]]:
    """(module, line, what) of every raw settings read in the module at `path`."""
    rel = path.relative_to(SRC).as_posix()
    tree = ast.parse(path.read_text(), str(path))
    imported = _from_settings(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and (f.attr == "settings_of" or f.attr in BUILDERS
                                                 and ast.unparse(f.value).endswith("settings")):
                out.append((rel, node.lineno, f"{f.attr}() called"))
            elif isinstance(f, ast.Name) and f.id in imported:
                out.append((rel, node.lineno, f"{f.id}() called"))
            elif isinstance(f, ast.Attribute) and f.attr in LOOKUPS and node.args \
                    and _key(node.args[0]) in section_names and _profile_like(f.value):
                out.append((rel, node.lineno, f'"{_key(node.args[0])}" looked up'))
        elif isinstance(node, ast.Subscript) and _key(node.slice) in section_names and _profile_like(node.value):
            out.append((rel, node.lineno, f'"{_key(node.slice)}" looked up'))
    return out


def _all_reads() -> list[tuple[str, int, str]]:
    names = SECTIONS | set(registered_tests())
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if not any(rel == e or rel.startswith(e) for e in EXEMPT):
            found += raw_reads(path, names)
    return found


def test_no_module_outside_settings_reads_a_setting_from_the_raw_profile():
    found = [r for r in _all_reads() if (r[0], r[2]) not in ALLOWED]
    assert not found, "raw profile reads outside ssdpts.settings (read them from the RunSettings record):\n" + \
        "\n".join(f"  {m}:{n}: {w}" for m, n, w in found)


def test_the_allow_list_holds_only_reads_that_are_still_there():
    left = {(r[0], r[2]) for r in _all_reads()}
    assert ALLOWED <= left, f"no longer found, remove from ALLOWED: {sorted(ALLOWED - left)}"


def test_the_check_sees_each_kind_of_raw_read(tmp_path):
    """The detector against hand-written source: each form it must catch, and what it must leave alone."""
    src = tmp_path / "m.py"
    src.write_text('from ssdpts.settings import run_defaults\n'
                   'a = spec.settings_of(profile)\nb = run_defaults(p)\nc = profile["defaults"]\n'
                   'd = profile.get("tests", {}).get("iops")\ne = run["profile"]["steady_state"]["window"]\n'
                   'f = run.settings.of("iops")\ng = profile["profile"]["name"]\nh = row["iops"]\n'
                   'i = cache.build(x)\n')
    global SRC
    saved, SRC = SRC, tmp_path
    try:
        got = sorted((n, w) for _, n, w in raw_reads(src, SECTIONS | {"iops"}))
    finally:
        SRC = saved
    assert got == [(2, "settings_of() called"), (3, "run_defaults() called"), (4, '"defaults" looked up'),
                   (5, '"iops" looked up'), (5, '"tests" looked up'), (6, '"steady_state" looked up')]
