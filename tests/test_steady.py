"""Steady-state cases computed by hand (SNIA PTS 2.0.2 §2.1.24)."""

import pytest

from conftest import ssdpts
from ssdpts.steady import evaluate, first_steady_round


def test_reached_matches_hand_computation():
    # avg = 11721.6; range = 11802-11650 = 152 <= 2344.32; slope over x=1..5:
    # m = sum((x-3)(y-avg))/10 = (-2*24.4 -1*-31.6 + 0 + 1*-71.6 + 2*-1.6)/10 = -9.2; excursion 4*9.2 = 36.8
    s = evaluate([11746, 11690, 11802, 11650, 11720])
    assert s.reached
    assert s.average == pytest.approx(11721.6)
    assert s.range_measured == pytest.approx(152)
    assert s.range_allowed == pytest.approx(2344.32)
    assert s.slope == pytest.approx(-9.2)
    assert s.slope_excursion_measured == pytest.approx(36.8)
    assert s.slope_excursion_allowed == pytest.approx(1172.16)
    assert s.intercept == pytest.approx(11749.2)
    assert s.window_rounds == [1, 2, 3, 4, 5]


def test_range_fails_slope_passes():
    # avg 100, range 30 > 20; m = (-1*-15 + 0*15)/10 = 1.5 -> excursion 6 <= 10
    s = evaluate([100, 85, 115, 100, 100])
    assert not s.reached
    assert s.range_measured == pytest.approx(30)
    assert s.slope_excursion_measured == pytest.approx(6)
    assert "range" in s.reason and "slope" not in s.reason


def test_slope_fails_range_passes():
    # 92, 96, 100, 104, 108: avg 100, range 16 <= 20, slope 4 -> excursion 16 > 10
    s = evaluate([92, 96, 100, 104, 108])
    assert not s.reached
    assert s.range_measured == pytest.approx(16)
    assert s.slope_excursion_measured == pytest.approx(16)
    assert "slope" in s.reason and "range" not in s.reason


def test_exactly_at_the_bounds():
    # range exactly 20 % of avg, slope 0
    at_range = [90, 110, 100, 100, 100]
    assert evaluate(at_range).reached
    assert not evaluate(at_range, inclusive=False).reached
    # slope excursion exactly 10 %: 95, 97.5, 100, 102.5, 105 -> m = 2.5, excursion 10, range 10
    at_slope = [95, 97.5, 100, 102.5, 105]
    s = evaluate(at_slope)
    assert s.slope_excursion_measured == pytest.approx(10)
    assert s.reached
    assert not evaluate(at_slope, inclusive=False).reached


@pytest.mark.parametrize("scale, first_round", [(1, 1), (0.1, 21), (0.01, 7), (3, 100)])
def test_bounds_are_exact_for_decimal_inputs(scale, first_round):
    # the same windows scaled by decimals that have no exact binary form, at other round numbers:
    # a float least-squares fit lands a few ulps either side of the bound; the exact one lands on it
    rounds = list(range(first_round, first_round + 5))
    at_slope = [float(f"{v * scale:.10g}") for v in (95, 97.5, 100, 102.5, 105)]
    at_range = [float(f"{v * scale:.10g}") for v in (90, 110, 100, 100, 100)]
    for values in (at_slope, at_range):
        assert evaluate(values, rounds=rounds).reached
        assert not evaluate(values, rounds=rounds, inclusive=False).reached


def test_one_symmetric_tolerance_at_the_bound():
    # a value inside the tolerance band around the bound is "at the bound" for both kinds of bound;
    # one clearly outside it is judged the same by both
    inside = [90, 110 + 1e-8, 100, 100, 100]          # range 20.00000001 vs allowed 20.000000002
    assert evaluate(inside).reached and not evaluate(inside, inclusive=False).reached
    below = [90, 109.99, 100, 100, 100]
    assert evaluate(below).reached and evaluate(below, inclusive=False).reached
    above = [90, 110.01, 100, 100, 100]
    assert not evaluate(above).reached and not evaluate(above, inclusive=False).reached


def test_steady_state_uses_no_floating_point_library():
    # the verdict must not depend on the machine's BLAS: the module computes with fractions only
    import ssdpts.steady as steady

    source = open(steady.__file__).read()
    assert "numpy" not in source and "polyfit" not in source


def test_not_reached_with_too_few_rounds():
    s = evaluate([100, 100, 100])
    assert not s.reached and "3 of 5" in s.reason


def test_window_is_the_last_rounds():
    values = [500, 300, 200, 101, 99, 100, 100, 100]
    s = evaluate(values)
    assert s.reached and s.window_rounds == [4, 5, 6, 7, 8]
    # rounds 3..7 = 200, 101, 99, 100, 100: range 101 > 0.2 * 120, so the first steady window ends at 8
    assert first_steady_round(values) == 8


def test_first_steady_round_is_first_qualifying_window():
    values = [300, 200, 100, 100, 100, 100, 100]
    assert first_steady_round(values) == 7  # window 3..7 is the first all-100 window
    assert first_steady_round([100] * 5) == 5
    assert first_steady_round([100, 200] * 5) is None


def test_fit_band_rule():
    # the reviewers' variant: 4 rounds, fitted line within +-10 % of the mean
    s = evaluate([100, 104, 108, 112], window=4, rule="fit-band")
    # avg 106, m = 4, fitted endpoints 100 and 112 -> farthest 6 <= 10.6
    assert s.reached and s.slope_excursion_measured == pytest.approx(6)
    assert not evaluate([80, 100, 120, 140], window=4, rule="fit-band").reached


def test_non_positive_average_is_never_steady():
    assert not evaluate([0, 0, 0, 0, 0]).reached


def test_cli_steady_state_exit_codes():
    ok = ssdpts("steady-state", "11746", "11690", "11802", "11650", "11720")
    assert "REACHED" in ok.stdout and "-9.2 * R + 11749.2" in ok.stdout
    bad = ssdpts("steady-state", "92", "96", "100", "104", "108", check=False)
    assert bad.returncode == 1 and "NOT REACHED" in bad.stdout
    err = ssdpts("steady-state", "1", "2", "--window", "1", check=False)
    assert err.returncode == 2 and "window" in err.stderr
