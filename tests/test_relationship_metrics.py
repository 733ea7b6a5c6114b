"""The strong-pair ratio (synthdp.evaluation.metrics.strong_pairs) and its place in the report (issue 18)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthdp.errors import SynthDPError
from synthdp.evaluation.metrics import STRONG_R, format_report, invented_pairs, strong_pairs, utility_report


def correlated(n: int, seed: int) -> pd.DataFrame:
    """x, y = x + small noise (r about .995), z = -x + noise (r about -.7), w independent of all."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return pd.DataFrame({"x": x, "y": x + 0.1 * rng.normal(size=n), "z": -x + rng.normal(size=n),
                         "w": rng.normal(size=n)})


def test_identical_tables_keep_every_strong_pair():
    real = correlated(500, 1)
    result = strong_pairs(real, real.copy())
    # strong pairs: (x, y), (x, z), (y, z); w is independent of the others (|r| < .15 here)
    assert result["pairs"] == 3 and result["threshold"] == STRONG_R
    assert result["ratio"] == pytest.approx(1.0, abs=1e-12)
    assert result["synthetic_mean_abs_r"] == pytest.approx(result["real_mean_abs_r"], abs=1e-12)
    expected = np.mean([abs(np.corrcoef(real[a], real[b])[0, 1]) for a, b in (("x", "y"), ("x", "z"), ("y", "z"))])
    assert result["real_mean_abs_r"] == pytest.approx(expected, rel=1e-9)


def test_column_order_and_sign_do_not_matter():
    real = correlated(500, 2)
    flipped = real[["w", "z", "y", "x"]].assign(z=-real["z"])  # the sign of z's correlations flipped
    assert strong_pairs(real, flipped)["ratio"] == pytest.approx(1.0, abs=1e-12)


def test_independent_synthetic_table_has_ratio_near_zero():
    """Each synthetic column shuffled on its own: true correlation 0, sample |r| about N(0, 1/n).

    With n = 4000 rows, a sample r has standard deviation 1/sqrt(n) = .016; the tolerance, a ratio
    below .1 (a mean |r| below about .08 over the 3 strong pairs, whose real mean |r| is about .8),
    is more than 5 standard deviations away for every pair: a false failure has probability below
    1e-6 for any seed (the seeds here are fixed, so the test is deterministic).
    """
    real = correlated(4000, 3)
    rng = np.random.default_rng(4)
    independent = pd.DataFrame({name: rng.permutation(real[name].to_numpy()) for name in real.columns})
    result = strong_pairs(real, independent)
    assert result["pairs"] == 3
    assert 0 <= result["ratio"] < 0.1


def test_no_strong_pair_gives_none():
    rng = np.random.default_rng(5)
    real = pd.DataFrame({"a": rng.normal(size=2000), "b": rng.normal(size=2000), "k": np.ones(2000)})
    result = strong_pairs(real, real.copy())
    assert result == {"threshold": 0.5, "pairs": 0, "real_mean_abs_r": None, "synthetic_mean_abs_r": None,
                      "ratio": None}
    single = strong_pairs(real[["a"]], real[["a"]])  # one column: no pair at all
    assert single["pairs"] == 0 and single["ratio"] is None


def test_threshold_is_strict_and_checked():
    real = correlated(500, 6)
    assert strong_pairs(real, real, threshold=0.0)["pairs"] == 6  # every pair of 4 columns has some |r| > 0
    exact = abs(float(np.corrcoef(real["x"], real["y"])[0, 1]))
    assert strong_pairs(real[["x", "y"]], real[["x", "y"]], threshold=exact - 1e-9)["pairs"] == 1
    for bad in (-0.1, 1.0, "0.5"):
        with pytest.raises(SynthDPError, match="threshold"):
            strong_pairs(real, real, threshold=bad)


def test_report_and_text_carry_the_strong_pairs():
    real = correlated(300, 7)
    rng = np.random.default_rng(8)
    independent = pd.DataFrame({name: rng.permutation(real[name].to_numpy()) for name in real.columns})
    report = utility_report(real, independent, n_queries=5, sdmetrics=False)
    strong = report["correlation"]["strong_pairs"]
    assert strong == strong_pairs(real, independent)
    text = format_report(report)
    assert f"strong pairs (real |r| > 0.5): 3; mean |r| real {strong['real_mean_abs_r']:.4f}" in text
    line = next(line for line in text.splitlines() if "strong pairs" in line)
    assert line.strip().startswith("strong pairs") and "ratio " in line

    invented = report["correlation"]["invented_pairs"]
    assert invented == invented_pairs(real, independent) and invented["pairs"] == 2  # w with z and with x
    assert "invented pairs (real |r| < 0.1, synthetic |r| > 0.3): 0 of 2; largest synthetic |r| of those pairs " in text

    flat = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300)})
    none = utility_report(flat, flat.copy(), n_queries=5, sdmetrics=False)
    assert none["correlation"]["strong_pairs"]["ratio"] is None
    assert "strong pairs (real |r| > 0.5): none" in format_report(none)
