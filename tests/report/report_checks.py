"""Checks shared by the report tests: valid images, self-contained HTML, CSV reading."""

from __future__ import annotations

import csv
import struct
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path


def png_size(path: Path) -> tuple[int, int]:
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    assert data[12:16] == b"IHDR"
    w, h = struct.unpack(">II", data[16:24])
    assert w > 100 and h > 100, f"{path}: {w}x{h}"
    assert data[-8:-4] == b"IEND", f"{path} is truncated"
    return w, h


def check_svg(path: Path) -> ET.Element:
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg"), f"{path}: root is {root.tag}"
    return root


class _Refs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs: list[tuple[str, str, str]] = []
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        for k in ("src", "href", "srcset", "data", "poster", "action"):
            if a.get(k):
                self.refs.append((tag, k, a[k]))


def check_self_contained(html_path: Path) -> _Refs:
    """No http(s)/protocol-relative references, no external CSS/JS, every relative link exists."""
    text = Path(html_path).read_text(encoding="utf-8")
    p = _Refs()
    p.feed(text)
    for tag, attr, val in p.refs:
        low = val.strip().lower()
        assert not low.startswith(("http:", "https:", "//", "ftp:")), f"external reference {tag} {attr}={val[:80]}"
        if tag == "img":
            assert low.startswith("data:image/png;base64,") or (Path(html_path).parent / val).exists(), val[:80]
        elif attr == "href" and not low.startswith(("#", "data:")):
            assert (Path(html_path).parent / val).exists(), f"broken link {val}"
    for tag, a in p.tags:
        assert not (tag == "script" and a.get("src")), "external script"
        assert not (tag == "link" and "stylesheet" in (a.get("rel") or "")), "external stylesheet"
    for bad in ("@import", "url(http", "url(//"):
        assert bad not in text, bad
    return p


def check_plot_dir(out: Path, run_ids: list[str]) -> int:
    pngs = sorted((out / "plots").glob("*.png"))
    assert pngs, "no plots"
    for png in pngs:
        png_size(png)
        svg = png.with_suffix(".svg")
        assert svg.exists(), f"{svg} missing"
        check_svg(svg)
        text = svg.read_text(encoding="utf-8")
        assert any(r in text for r in run_ids), f"{svg} does not name the generating run"
    return len(pngs)


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))
