"""The documentation: the site builds strictly, the command reference is click's own help, the published results
JSON Schema is a valid schema, and the README stays a front door (its commands run: tests/test_readme.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "docs" / "results.schema.json"

mkdocs = pytest.importorskip("mkdocs", reason="the docs extra is not installed (make docs-deps)")


class _Text(HTMLParser):
    def __init__(self):
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data):
        self.parts.append(data)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """`make docs`'s build into a temporary folder: strict, so a broken link or anchor, or a page left out of
    mkdocs.yml's nav, fails it."""
    out = tmp_path_factory.mktemp("site")
    p = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)], cwd=ROOT,
                       capture_output=True, text=True, timeout=600, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert p.returncode == 0, p.stdout + p.stderr
    return out


def test_the_site_builds_strictly_with_every_page(site):
    pages = {p.stem for p in (ROOT / "docs").glob("*.md")}
    built = {p.stem for p in site.glob("*.html")}
    assert pages <= built, f"pages not built: {sorted(pages - built)}"
    assert (site / "results.schema.json").is_file()


def test_the_command_reference_is_clicks_own_help(site):
    """Every command and every option of it appears on the generated page, read from click itself (not from
    the code that wrote the page): the page cannot fall behind `--help`."""
    from ssdpts.cli import LAZY_COMMANDS

    parser = _Text()
    parser.feed((site / "commands.html").read_text())
    text = " ".join(parser.parts)
    for name, lazy in LAZY_COMMANDS.items():
        command = lazy.load()
        assert f"ssdpts {name}" in text, name
        for param in command.params:
            for opt in getattr(param, "opts", []):
                if opt.startswith("--"):
                    assert opt in text, f"{name} {opt}"


def test_the_results_schema_is_a_valid_json_schema_of_the_current_version():
    jsonschema = pytest.importorskip("jsonschema")
    from ssdpts.export.json import SCHEMA as CURRENT

    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["schema"]["const"] == CURRENT == schema["$id"]


def test_the_readme_is_a_front_door():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / link).exists(), link
