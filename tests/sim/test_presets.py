"""Every preset figure that is held to the tolerance is within 15 % of the review it cites
(ssdpts.simdrive.calibration; the table in docs/simulator.md). Simulated time, deterministic."""
from __future__ import annotations

import pytest

from ssdpts.simdrive import list_presets, load_params
from ssdpts.simdrive.calibration import FIGURES, TOLERANCE, compare


def test_every_preset_cites_seed_figures_in_its_toml():
    for preset in list_presets():
        text = load_params(preset)["source"]
        body = open(text, encoding="utf-8").read()
        assert "shared/seeds/" in body, f"{preset}.toml does not cite a seed"
        assert any(f.preset == preset for f in FIGURES), f"no calibration figures for {preset}"


@pytest.mark.parametrize("preset", sorted({f.preset for f in FIGURES}))
def test_preset_matches_its_review(preset):
    rows = compare(presets={preset})
    for c in rows:
        assert c.figure.tolerance is not None or c.figure.note, f"{c.figure.what}: info row without a note"
        if c.within is False:
            pytest.fail(f"{preset}: {c.figure.what}: simulated {c.simulated:.1f} vs review {c.figure.value:.1f} "
                        f"{c.figure.unit} ({c.deviation:+.1%}, tolerance {TOLERANCE:.0%})")
