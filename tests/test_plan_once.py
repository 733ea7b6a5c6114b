"""The plan is made once, from public quantities, and then only read.

A configuration followed through a fit (and its sampling and copies) enters
``synthdp/pipeline/plan.py`` once: one call of :func:`synthdp.pipeline.plan.make_plan` (by way of
:func:`synthdp.pipeline.plan.make_mixed_plan` for a mixed table). By unit, the units' count is released
before the plan, so the fit checks what the plan would refuse whatever n before it, once
(:func:`synthdp.pipeline.plan.check_plan_options`, or a mixed table's basis,
:func:`synthdp.pipeline.plan.mixed_plan_basis`, which the plan then takes as it is). Every later stage reads the
plan's fields (``releases_pairs``, ``moments_within_limit``, ``value_cells``, ...) instead of
calling back into the plan's module; the privacy report writes the plan out with
:meth:`synthdp.pipeline.plan.Plan.to_dict` and nothing else. The tracer counts calls into that module's code from code
outside it, for every kind of run a user can make.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import synthdp.pipeline.plan as plan_module
from synthdp import SmoothSynthesizer
from synthdp.pipeline.plan import DERIVED_FIELDS, make_plan

DATA = Path(__file__).resolve().parents[1] / "data"


def _entries(action) -> Counter:
    """Calls into plan.py from outside it while ``action`` runs: (function, caller's function)."""
    entries: Counter = Counter()
    here = plan_module.__file__

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename == here:
            caller = frame.f_back
            if caller is not None and caller.f_code.co_filename != here:
                entries[(frame.f_code.co_name, caller.f_code.co_name)] += 1

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        action()
    finally:
        sys.setprofile(previous)
    return entries


def _table(rows: int = 400, seed: int = 0) -> tuple[pd.DataFrame, dict]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=rows)
    frame = pd.DataFrame({"a": x, "b": x + 0.5 * rng.normal(size=rows), "c": rng.integers(0, 5, rows).astype(float)})
    return frame, {"a": [-4, 4], "b": [-5, 5], "c": {"bounds": [0, 4], "type": "integer"}}


@pytest.mark.parametrize("options", [
    {"epsilon": 1.0, "delta": 1e-10},  # Gaussian noise
    {"epsilon": 1.0, "delta": 0.0},  # pure epsilon
    {"epsilon": 8.0, "delta": 1e-6},  # the pairs read one by one
])
def test_numeric_fit_sample_summary_enter_the_plan_once(options):
    frame, bounds = _table()
    synth = SmoothSynthesizer(**options, seed=1)

    def run():
        synth.fit(frame, bounds=bounds)
        synth.sample(50)
        synth.summary()

    with pytest.warns(Warning):  # the testing seed's warning
        entries = _entries(run)
    # the summary's privacy report writes the plan out (Plan.to_dict): a read, not a decision
    assert entries == Counter({("make_plan", "fit"): 1, ("to_dict", "privacy_report"): 1})


def test_selected_pairs_dp_bounds_and_copies_enter_the_plan_once():
    pima = pd.read_csv(DATA / "pima.csv")
    bounds = {column: [float(pima[column].min()), float(pima[column].max())] for column in pima}
    selected = SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=2)
    with pytest.warns(Warning):
        entries = _entries(lambda: (selected.fit(pima, bounds=bounds), selected.sample_copies(2, 50)))
    assert selected.release_.plan.selects_pairs  # pima at (1, 1e-10) selects its pairs
    assert entries == Counter({("make_plan", "fit"): 1})

    frame, _ = _table()
    estimated = SmoothSynthesizer(epsilon=2.0, delta=1e-8, bounds_share=0.1, seed=3)
    with pytest.warns(Warning):  # b and c: DP bounds; the copies reuse the release's plan, bounds' share included
        entries = _entries(lambda: (estimated.fit(frame, bounds={"a": [-4, 4]}), estimated.sample_copies(2, 50)))
    assert entries == Counter({("make_plan", "fit"): 1})
    assert estimated.release_.plan.budget.bounds > 0


def test_mixed_and_by_unit_enter_the_plan_once():
    rng = np.random.default_rng(4)
    rows = 300
    frame = pd.DataFrame({"age": rng.integers(20, 80, rows).astype(float), "income": rng.normal(50, 10, rows),
                          "group": rng.choice(["x", "y", "z"], rows), "flag": rng.choice(["0", "1"], rows)})
    schema = {"columns": {
        "age": {"type": "integer", "bounds": [18, 90]}, "income": {"type": "continuous", "bounds": [0, 100]},
        "group": {"type": "categorical", "levels": ["x", "y", "z"]}, "flag": {"type": "binary", "levels": ["0", "1"]}}}
    for options in ({"epsilon": 1.0, "delta": 1e-10}, {"epsilon": 1.0, "delta": 0.0}):
        synth = SmoothSynthesizer(**options, seed=5)
        with pytest.warns(Warning):
            entries = _entries(lambda synth=synth: (synth.fit(frame, schema=schema), synth.sample(40)))
        assert entries == Counter({("make_mixed_plan", "fit"): 1}), options

    # by unit: what the plan refuses whatever n, checked before the units' count, once; a mixed table's basis made once
    frame["person"] = np.repeat(np.arange(150), 2)
    mixed_by_unit = SmoothSynthesizer(epsilon=1.0, delta=1e-10, privacy_unit="person", max_rows_per_unit=2, seed=5)
    with pytest.warns(Warning):
        entries = _entries(lambda: (mixed_by_unit.fit(frame, schema=schema), mixed_by_unit.sample(40)))
    assert entries == Counter({("mixed_plan_basis", "check_public_inputs"): 1, ("make_mixed_plan", "fit"): 1})

    frame, bounds = _table(600)
    frame["person"] = np.repeat(np.arange(300), 2)
    by_unit = SmoothSynthesizer(epsilon=1.0, delta=1e-10, privacy_unit="person", max_rows_per_unit=2, seed=6)
    with pytest.warns(Warning):
        entries = _entries(lambda: (by_unit.fit(frame, bounds=bounds), by_unit.sample(40)))
    assert entries == Counter({("check_plan_options", "check_public_inputs"): 1, ("make_plan", "fit"): 1})


def test_derived_fields_follow_the_plan_and_stay_out_of_its_dict():
    from synthdp.config import SynthConfig

    config = SynthConfig(epsilon=1.0, delta=1e-10)
    plan = make_plan(config, 5000, 10, bounds_are_public=True)
    assert plan.tilted_candidates == max(plan.n_candidates, plan.tilt_candidates)
    assert plan.releases_pairs == (plan.budget.share("correlation") > 0)
    assert plan.selects_pairs == (plan.selected_pairs > 0)
    assert plan.value_cells >= plan.marginal_bins + 2
    assert not set(DERIVED_FIELDS) & set(plan.to_dict())
