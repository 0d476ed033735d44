"""`ssdpts plan` when a test's round limit is below the steady-state window (issue 20, item 13): the loop ends
at the limit, so the least rounds are min(window, max_rounds) and no range is printed upside down."""

from __future__ import annotations

from types import SimpleNamespace

from ssdpts.commands.plan import _phase_duration
from ssdpts.pts.plan import steady_loop
from ssdpts.settings import SteadySettings
from ssdpts.workload import Workload


def test_seed_000_hir_one_600_minute_round():
    # seed 000 preconditions HIR with one fixed 600-minute round of RND 4K writes (max_rounds = 1, window 5):
    # the plan printed "2d02h00m – 10h00m" (5 rounds at least, 1 at most)
    steady = SteadySettings(window=5, max_rounds=1)
    ctx = SimpleNamespace(settings=SimpleNamespace(steady=steady))
    cells = [Workload(name=f"pc{i}", rw="randwrite", bs=4096, read_pct=0, runtime_s=600.0) for i in range(60)]
    loop = steady_loop(ctx, cells, "preconditioning")
    assert (loop.rounds_min, loop.rounds_max) == (1, 1)
    assert loop.seconds_min == loop.seconds_max == 600 * 60
    assert loop.seconds_at(None) == (600 * 60, 600 * 60)
    assert "1 to 1 rounds" in loop.what
    assert " – " not in _phase_duration(loop, None)     # one duration, not an (inverted) range
    # a limit above the window keeps the range: window .. limit
    wide = steady_loop(SimpleNamespace(settings=SimpleNamespace(steady=SteadySettings(window=5, max_rounds=25))),
                       cells[:1], "rounds")
    assert (wide.rounds_min, wide.rounds_max, wide.seconds_min, wide.seconds_max) == (5, 25, 3000, 15000)
