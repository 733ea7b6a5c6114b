"""Summaries: exactness on the released span, the paper's approximation rates and coefficient
bound, the quadrature, file round trips, and the CLI (summarize, generate --summary-out).

Every test is deterministic: releases use fixed seeds and the Sobol' points a fixed
scrambling seed. Where a bound is statistical, its failure probability for a random seed is
stated next to it.
"""

import dataclasses
import json
import warnings
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
from test_cli import BAD_INPUTS, PLANTED, _write, run

from synthdp import SmoothSynthesizer, Summary, SynthDPError
from synthdp.cli import main as main_command
from synthdp.domain.box import Domain
from synthdp.stats.chebyshev import ChebyshevBasis, lowest_degree_indices, tensor_indices
from synthdp.summaries.smooth import _TensorRule, jackson_multipliers

BOUNDS = {"age": {"bounds": [18, 90], "type": "integer"}, "weight": [30, 150], "score": [0, 1]}


def exact_summary(frame: pd.DataFrame, bounds: dict, indices: np.ndarray, **options) -> Summary:
    """A summary of the exact, noise-free moments (no privacy: for testing the evaluator)."""
    domain = Domain.from_bounds(bounds, list(frame.columns))
    moments = ChebyshevBasis(indices).moments(domain.to_unit(frame.to_numpy(dtype=float)))
    return Summary(domain, indices, moments, **options)


def interval_summary(t: int, **options) -> Summary:
    """One variable on [-1, 1] (user units = release units), basis T_1..T_t, zero moments."""
    domain = Domain.from_bounds({"x": [-1, 1]}, ["x"])
    return Summary(domain, np.arange(1, t + 1)[:, None], np.zeros(t), **options)


def sup_error(summary: Summary, f) -> float:
    """max |f - (c0 + sum_r c_r phi_r)| over 2001 points of [-1, 1] (one variable)."""
    c0, c = summary.coefficients(lambda rows: f(rows["x"].to_numpy()))
    x = np.cos(np.linspace(0, np.pi, 2001))[:, None]
    return float(np.abs(c0 + ChebyshevBasis(summary.basis_indices).evaluate(x) @ c - f(x[:, 0])).max())


def gaussian(x):
    return np.exp(-((x - 0.3) ** 2) / 2)


# ---------------------------------------------------------------- exactness


def test_polynomials_in_the_released_span_are_answered_exactly_without_noise(clinic_like):
    frame, bounds = clinic_like
    frame = frame[["weight", "score"]]
    summary = exact_summary(frame, {k: bounds[k] for k in frame}, tensor_indices(2, 4))  # degrees 0..3 per axis
    assert summary.quadrature.startswith("Gauss-Chebyshev")
    in_span = lambda rows: 1 + 2 * rows["weight"] - 3 * rows["weight"] ** 2 * rows["score"] ** 3 + rows["weight"] ** 3
    assert summary.answer(in_span) == pytest.approx(in_span(frame).mean(), rel=1e-12)
    # Degree 4 in one variable is outside the span: the same check then fails, as it should.
    outside = lambda rows: rows["score"] ** 4
    assert abs(summary.answer(outside) - outside(frame).mean()) > 1e-4


def test_the_practical_basis_answers_every_quadratic_exactly(clinic_like):
    frame, bounds = clinic_like
    summary = exact_summary(frame, bounds, lowest_degree_indices(3, 9))  # all 9 monomials of degree 1-2
    quadratic = lambda rows: rows["age"] * rows["weight"] - 40 * rows["score"] ** 2 + rows["weight"] / 3 + 7
    assert summary.answer(quadratic) == pytest.approx(quadratic(frame).mean(), rel=1e-12)


def test_sobol_rule_answers_a_quadratic_within_its_quadrature_error():
    # d = 6 is beyond the product rule at the default 8192 nodes. Measured error over scrambling
    # seeds 0-4: at most 1.5e-4 on answers of about 7; the bound is 1e-3.
    rng = np.random.default_rng(0)
    names = [f"c{i}" for i in range(6)]
    frame = pd.DataFrame(rng.uniform(0, 10, (200, 6)), columns=names)
    summary = exact_summary(frame, {name: [0, 10] for name in names}, lowest_degree_indices(6, 27))
    assert summary.quadrature.startswith("scrambled Sobol'")
    f = lambda rows: 1 + rows["c0"] * rows["c1"] / 10 - (rows["c2"] - 5) ** 2 / 5 + rows["c3"]
    assert abs(summary.answer(f) - f(frame).mean()) < 1e-3


def test_a_linear_query_reads_its_noisy_moment_exactly(clinic_like):
    frame, bounds = clinic_like
    synth = SmoothSynthesizer(epsilon=1.0, seed=0).fit(frame, bounds, synthesize=False)
    summary = synth.summary()
    row = next(i for i, r in enumerate(summary.basis_indices) if list(r) == [0, 1, 0])  # T_1(weight)
    # weight = 90 + 60 x in release units, so its answer is 90 + 60 b_hat: no approximation at all.
    assert summary.answer(lambda rows: rows["weight"]) == pytest.approx(90 + 60 * summary.noisy_moments[row], rel=1e-12)
    # The noise is the release's Laplace noise of scale b: |error| <= 10 b x 60 fails with
    # probability e^-10 (4.5e-5) for a random seed; answering the constant c_0 (ignoring the
    # moments) would miss by |65 - 90| = 25 > 9.
    scale = next(s["noise_scale"] for s in synth.privacy_report()["privacy"]["stages"] if s["stage"] == "moments")
    error = summary.answer(lambda rows: rows["weight"]) - frame["weight"].mean()
    assert 0 < abs(error) <= 10 * scale * 60


# ------------------------------------------------- approximation theory


@pytest.mark.parametrize("smoothness", [2, 4])
def test_jackson_error_decays_at_the_rate_of_theorem_4_1(smoothness):
    # Theorem 4.1: ||g - I_{t,K} g|| <= C / t^(K+1). For a smooth g and even K the damping's own
    # bias, 1 - mu_n ~ (n / t)^(K+2), sets the rate, so the fitted slope of log error against
    # log t must lie in [-(K+2) - 0.3, -(K+1)]. Measured: -3.93 (K = 2), -5.69 (K = 4).
    ts = [128, 256, 512]
    errors = [sup_error(interval_summary(t, damping="jackson", smoothness=smoothness, n_nodes=2048), gaussian)
              for t in ts]
    slope = np.polyfit(np.log(ts), np.log(errors), 1)[0]
    assert -(smoothness + 2) - 0.3 <= slope <= -(smoothness + 1), (slope, errors)


def test_the_truncated_series_converges_geometrically_and_beats_jackson():
    assert sup_error(interval_summary(32), gaussian) < 1e-12
    for t in (8, 16, 32):
        assert sup_error(interval_summary(t), gaussian) < sup_error(interval_summary(t, damping="jackson"), gaussian) / 100


def test_jackson_multipliers():
    assert np.array_equal(jackson_multipliers(3, 4), [1, 0, 0, 0])  # t < ceil((K+3)/2): only the constant
    mu = jackson_multipliers(512, 4)
    assert mu[0] == 1 and abs(mu[1] - 1) < 1e-9 and mu[-1] < 1e-6
    assert np.abs(mu).max() <= 2 ** 5 - 1  # |h| <= 1, so |mu| <= sum_l C(K+1, l) (Lemma 5.2)


def _exact_jackson_multipliers(t: int, smoothness: int) -> list[float]:
    """jackson_multipliers' formula in exact integer arithmetic: h is the r-fold self-convolution of
    an integer triangle, so every mu_n is a ratio of integers (slow: a test's reference only)."""
    import math
    from fractions import Fraction

    order = math.ceil((smoothness + 3) / 2)
    width = t // order + 1
    triangle = [width - abs(j) for j in range(1 - width, width)]
    power = [1]
    for _ in range(order):
        power = [sum(power[i] * triangle[k - i] for i in range(max(0, k - len(triangle) + 1), min(k, len(power) - 1) + 1))
                 for k in range(len(power) + len(triangle) - 1)]
    centre = len(power) // 2

    def h(m: int) -> Fraction:
        return Fraction(power[centre + m], power[centre]) if centre + m < len(power) else Fraction(0)

    return [float(-sum((-1) ** l * math.comb(smoothness + 1, l) * h(n * l) for l in range(1, smoothness + 2)))
            for n in range(t + 1)]


@pytest.mark.parametrize("t, smoothness", [(16, 4), (64, 20), (64, 31), (256, 31)])
def test_jackson_multipliers_are_exact_to_1e_6_up_to_the_largest_smoothness(t, smoothness):
    """Up to MAX_JACKSON_SMOOTHNESS (31) the float64 sum of C(K + 1, l) h(n l) is within 2^(K+1) 2^-52 <=
    2^-20 of the exact value (deterministic; beyond, at K = 50 and t = 512, it was .04 off and at
    K = 60 and t = 16 it gave 11 for 1), and a summary past it is refused."""
    exact = np.array(_exact_jackson_multipliers(t, smoothness))
    assert np.max(np.abs(jackson_multipliers(t, smoothness) - exact)) <= 2.0 ** (smoothness + 1 - 52)
    with pytest.raises(SynthDPError, match="damping='jackson' needs smoothness of at most 31"):
        interval_summary(8, damping="jackson", smoothness=32)
    assert interval_summary(8, smoothness=100).smoothness == 100  # undamped: K only names the queries (K = sigma^2)


@pytest.mark.parametrize("damping", ["none", "jackson"])
def test_coefficients_stay_bounded_as_t_grows(damping):
    """Lemma 4.3: a bound on the coefficients that does not depend on t."""
    domain = Domain.from_bounds({"x": [-1, 1], "y": [-1, 1]}, ["x", "y"])
    f = lambda rows: np.exp(-((rows["x"] - 0.3) ** 2 + (rows["y"] + 0.2) ** 2) / (2 * 0.5**2))  # max |f| = 1
    largest, l1 = [], []
    for t in (4, 8, 16, 32, 64):
        indices = tensor_indices(2, t + 1)
        summary = Summary(domain, indices, np.zeros(len(indices)), damping=damping, n_nodes=(4 * (t + 1)) ** 2)
        _, c = summary.coefficients(f)
        mu = np.abs(jackson_multipliers(t, 4)).max() if damping == "jackson" else 1.0
        support = (indices > 0).sum(axis=1)
        # The proof's bound: |a_r| <= 2^s(r) max|f|, times the multipliers.
        assert (np.abs(c) <= (2.0 * mu) ** support * (1 + 1e-9)).all()
        largest.append(np.abs(c).max())
        l1.append(np.abs(c).sum())
    # Measured: max |c_r| 0.174 at every t (none), 0.395 -> 0.174 (jackson); sum |c_r| 1.36-1.48 (none), 1.48-2.23 (jackson).
    assert max(largest) <= 1.01 * largest[0]
    assert max(l1) <= 2 * l1[0]


# ------------------------------------------------------------- quadrature


def test_the_dct_projections_match_the_basis_on_the_product_nodes():
    rule, indices = _TensorRule(2, 16), tensor_indices(2, 6)
    design = ChebyshevBasis(indices).evaluate(rule.nodes)  # (N, R)
    values = np.sin(rule.nodes.sum(axis=1))[:, None] * [1.0, -2.0]  # a vector-valued f
    assert np.allclose(rule.project(values, indices), design.T @ values / len(rule.nodes), atol=1e-13)
    coefficients = np.random.default_rng(0).normal(size=len(indices))
    assert np.allclose(rule.expand(coefficients, indices), design @ coefficients, atol=1e-12)


@pytest.mark.parametrize("n_nodes", [8192, 40])  # product rule, Sobol'
@pytest.mark.parametrize("damping", ["none", "jackson"])
def test_answer_is_the_constant_plus_coefficients_dot_moments(clinic_like, n_nodes, damping):
    frame, bounds = clinic_like
    indices = tensor_indices(3, 5)
    summary = exact_summary(frame, bounds, indices, n_nodes=n_nodes, damping=damping)
    f = lambda rows: np.exp(-((rows["weight"] - 70) / 30) ** 2) * rows["score"] + rows["age"] / 50
    c0, c = summary.coefficients(f)
    assert summary.answer(f) == pytest.approx(c0 + c @ summary.noisy_moments, rel=1e-10)
    assert summary.node_weights.sum() == pytest.approx(1.0)
    assert summary.answer(f) == pytest.approx(f(summary.nodes).to_numpy() @ summary.node_weights, rel=1e-12)


def test_vector_valued_and_batched_queries_agree_with_single_answers(clinic_like):
    frame, bounds = clinic_like
    summary = exact_summary(frame, bounds, lowest_degree_indices(3, 9))
    queries = [lambda rows, k=k: np.cos(k * rows["score"]) * rows["weight"] for k in range(4)]
    single = [summary.answer(q) for q in queries]
    assert np.allclose(summary.answer_many(queries), single, rtol=1e-12)
    stacked = summary.answer(lambda rows: np.column_stack([q(rows) for q in queries]))
    assert stacked.shape == (4,) and np.allclose(stacked, single, rtol=1e-12)


def test_the_query_sees_named_columns_in_the_original_units(clinic_like):
    frame, bounds = clinic_like
    summary = exact_summary(frame, bounds, lowest_degree_indices(3, 3))
    seen = {}

    def query(rows):
        seen["columns"], seen["low"], seen["high"] = list(rows.columns), rows.min(), rows.max()
        return rows["age"]

    summary.answer(query)
    assert seen["columns"] == ["age", "weight", "score"]
    assert (seen["low"] >= [18, 30, 0]).all() and (seen["high"] <= [90, 150, 1]).all()
    assert seen["high"]["weight"] - seen["low"]["weight"] > 100  # the nodes spread over the box


BAD_QUERIES = {
    "scalar": (lambda rows: 3.0, "one value per row"),
    "wrong length": (lambda rows: rows["age"].to_numpy()[:-1], "one value per row"),
    "three dimensions": (lambda rows: np.zeros((len(rows), 2, 2)), "one value per row"),
    "nan": (lambda rows: np.where(rows["score"] > 0.5, np.nan, 1.0), "missing or infinite"),
    "text": (lambda rows: np.array(["a"] * len(rows)), "numbers"),
    "complex": (lambda rows: rows["age"].to_numpy() * 1j, "real numbers"),  # its real part alone was 0.0
}


@pytest.mark.parametrize("case", list(BAD_QUERIES))
def test_a_malformed_query_result_is_a_clear_error(clinic_like, case):
    frame, bounds = clinic_like
    summary = exact_summary(frame, bounds, lowest_degree_indices(3, 3))
    f, message = BAD_QUERIES[case]
    with pytest.raises(SynthDPError, match=message):
        summary.answer(f)


def test_answer_many_refuses_vector_valued_queries_and_queries_cannot_write_the_nodes(clinic_like):
    frame, bounds = clinic_like
    summary = exact_summary(frame, bounds, lowest_degree_indices(3, 3))
    with pytest.raises(SynthDPError, match="scalar"):
        summary.answer_many([lambda rows: np.ones((len(rows), 2))])
    with pytest.raises(ValueError):
        summary.answer(lambda rows: rows.to_numpy().__setitem__((0, 0), 1.0))


# ------------------------------------------------------------ construction


BAD_SUMMARIES = {
    "wrong width": (np.array([[1, 0]]), [0.1], {}, "shape"),
    "fractional degree": (np.array([[1.5, 0, 0]]), [0.1], {}, "integers"),
    "text moment": (np.array([[1, 0, 0]]), ["high"], {}, "numbers"),
    "constant index": (np.array([[0, 0, 0], [1, 0, 0]]), [0.1, 0.2], {}, "all-zero"),
    "negative degree": (np.array([[-1, 0, 0]]), [0.1], {}, "non-negative"),
    "repeated index": (np.array([[1, 0, 0], [1, 0, 0]]), [0.1, 0.2], {}, "repeat"),
    "moment count": (np.array([[1, 0, 0]]), [0.1, 0.2], {}, "one per multi-index"),
    "nan moment": (np.array([[1, 0, 0]]), [np.nan], {}, "finite"),
    "damping": (np.array([[1, 0, 0]]), [0.1], {"damping": "fejer"}, "damping"),
    "smoothness": (np.array([[1, 0, 0]]), [0.1], {"smoothness": 0}, "smoothness"),
    "nodes": (np.array([[1, 0, 0]]), [0.1], {"n_nodes": 1}, "n_nodes"),
}


@pytest.mark.parametrize("case", list(BAD_SUMMARIES))
def test_an_inconsistent_summary_is_refused(case):
    indices, moments, options, message = BAD_SUMMARIES[case]
    domain = Domain.from_bounds(BOUNDS, list(BOUNDS))
    with pytest.raises(SynthDPError, match=message):
        Summary(domain, indices, moments, **options)


@pytest.mark.parametrize("kind", ["summary", "marginal_summary"])
def test_a_summary_refuses_to_replace_a_file_unless_told_to(clinic_like, tmp_path, kind):
    """Summary.save and MarginalSummary.save never replace a user's file unasked (as --overwrite):
    the file stays as it was and no temporary file is left; overwrite=True replaces it whole."""
    frame, bounds = clinic_like
    if kind == "summary":
        synth = SmoothSynthesizer(epsilon=1.0, seed=3).fit(frame, bounds, synthesize=False)
    else:
        from test_mixed import SCHEMA, mixed_frame

        synth = SmoothSynthesizer(epsilon=1.0, seed=3).fit(mixed_frame(60, 1), schema=SCHEMA, synthesize=False)
    summary = getattr(synth, kind)()
    path = tmp_path / "s.json"
    path.write_text("mine")
    with pytest.raises(SynthDPError, match=r"s\.json' exists: pass overwrite=True to replace it"):
        summary.save(path)
    assert path.read_text() == "mine" and sorted(tmp_path.iterdir()) == [path]
    with pytest.raises(SynthDPError, match="its folder does not exist"):
        summary.save(tmp_path / "absent" / "s.json")
    summary.save(path, overwrite=True)
    assert type(summary).load(path).to_dict() == summary.to_dict() and sorted(tmp_path.iterdir()) == [path]


def test_save_and_load_round_trip(clinic_like, tmp_path):
    frame, bounds = clinic_like
    bounds = {name: spec for name, spec in bounds.items() if name != "score"}  # estimated with DP
    with pytest.warns(UserWarning, match="unreliable"):  # n = 400 is small for private bounds
        synth = SmoothSynthesizer(epsilon=1.0, seed=3, bounds_share=0.1).fit(frame, bounds, synthesize=False)
    summary = synth.summary()
    assert summary.domain.columns[2].source == "DP estimate"
    path = tmp_path / "s.json"
    summary.save(path)
    loaded = Summary.load(path)
    assert np.array_equal(loaded.basis_indices, summary.basis_indices)
    assert np.array_equal(loaded.noisy_moments, summary.noisy_moments)  # floats round-trip exactly
    assert loaded.domain == summary.domain and loaded.smoothness == summary.smoothness
    assert loaded.report == summary.report
    f = lambda rows: rows["age"] * rows["score"]
    assert loaded.answer(f) == summary.answer(f)
    # Evaluation options are not part of the file; they are chosen when loading.
    assert Summary.load(path, damping="jackson").damping == "jackson" and "damping" not in path.read_text()
    assert dataclasses.replace(loaded, n_nodes=64).quadrature.startswith("scrambled Sobol'")


BAD_FILES = {
    "missing": (None, "does not exist"),
    "not json": ("{", "not valid JSON"),
    "not a summary": ('{"rows": 3}', "not a synthdp summary"),
    "future version": ('{"format": "synthdp-summary", "format_version": 99}', "format_version"),
    "missing moments": ("drop noisy_moments", "malformed"),
    "moments do not match": ("short noisy_moments", "one per multi-index"),
}


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_a_bad_summary_file_is_a_clear_error(clinic_like, tmp_path, case):
    frame, bounds = clinic_like
    content, message = BAD_FILES[case]
    path = tmp_path / "s.json"
    if content is not None and content.startswith(("drop", "short")):
        good = SmoothSynthesizer(seed=0).fit(frame, bounds, synthesize=False).summary().to_dict()
        if content.startswith("drop"):
            del good["noisy_moments"]
        else:
            good["noisy_moments"] = good["noisy_moments"][:-1]
        content = json.dumps(good)
    if content is not None:
        path.write_text(content)
    with pytest.raises(SynthDPError, match=message) as raised:
        Summary.load(path)
    assert "s.json" in str(raised.value)


# ------------------------------------------------------ synthesizer: release only


def test_a_summary_only_release_builds_no_candidates_and_gives_the_candidates_budget_to_the_moments(clinic_like):
    frame, bounds = clinic_like
    full = SmoothSynthesizer(epsilon=1.0, seed=0).fit(frame, bounds)
    only = SmoothSynthesizer(epsilon=1.0, seed=0).fit(frame, bounds, synthesize=False)
    report = only.privacy_report()
    assert [s["stage"] for s in report["privacy"]["stages"]] == ["clip_count", "moments"]
    assert report["timings_seconds"] == {} and report["lp"] is None  # both stages read the data: their times are not in it
    assert set(only.timings_) == {"first pass", "moments"}
    budget = report["parameters"]["budget"]
    assert list(budget["stages"]) == ["moments"] and report["parameters"]["candidates"] == "none"
    assert budget["stages"]["moments"]["epsilon"] == pytest.approx(0.98)
    assert report["privacy"]["epsilon_spent"] == pytest.approx(1.0)
    noise = {name: next(s["noise_scale"] for s in r["privacy"]["stages"] if s["stage"] == "moments")
             for name, r in (("full", full.privacy_report()), ("only", report))}
    share = full.privacy_report()["parameters"]["budget"]["stages"]["moments"]["share"]
    assert share < 1 and noise["only"] == pytest.approx(noise["full"] * share)  # Laplace scale ~ 1 / epsilon
    with pytest.raises(SynthDPError, match="synthesize=False"):
        only.sample()
    assert np.array_equal(full.summary().noisy_moments, full.release_.noisy_moments)


def test_summary_before_fit_is_an_error():
    with pytest.raises(SynthDPError, match="fit"):
        SmoothSynthesizer().summary()


# --------------------------------------------------------------------- CLI


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"age": rng.integers(20, 80, 300), "weight": rng.uniform(40, 120, 300),
                          "score": rng.uniform(0, 1, 300)})
    frame.loc[5, "weight"] = PLANTED / 1000  # inside the bounds; its digits must never be printed
    data = _write(tmp_path, frame, "data.csv")
    bounds = tmp_path / "bounds.json"
    bounds.write_text(json.dumps(BOUNDS))
    return frame, data, bounds


def test_summarize_writes_a_summary_and_its_report(table, tmp_path, capsys):
    frame, data, bounds = table
    out, report = tmp_path / "summary.json", tmp_path / "report.json"
    code, printed = run(["summarize", data, "-o", out, "--bounds", bounds, "--report", report, "--seed", 4], capsys)
    assert code == 0, printed
    assert "noisy moments" in printed and "98765" not in printed
    summary = Summary.load(out)
    assert summary.domain.names == ["age", "weight", "score"] and summary.n_basis >= 3
    assert summary.report == json.loads(report.read_text())
    assert [s["stage"] for s in summary.report["privacy"]["stages"]] == ["clip_count", "moments"]
    # The same options in Python give the same release.
    python = SmoothSynthesizer(seed=4).fit(frame, BOUNDS, synthesize=False).summary()
    assert np.array_equal(summary.noisy_moments, python.noisy_moments)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_generate_summary_out_saves_the_summary_of_the_same_release(table, tmp_path, capsys):
    frame, data, bounds = table
    out, summary_path, report = tmp_path / "synthetic.csv", tmp_path / "summary.json", tmp_path / "report.json"
    code, printed = run(["generate", data, "-o", out, "--bounds", bounds, "--summary-out", summary_path,
                         "--report", report, "--seed", 9, "--quiet"], capsys)
    assert code == 0, printed
    summary = Summary.load(summary_path)
    refit = SmoothSynthesizer(seed=9).fit(frame, BOUNDS)  # same seed, same noise draws
    assert np.array_equal(summary.noisy_moments, refit.release_.noisy_moments)
    assert np.array_equal(summary.basis_indices, refit.release_.basis_indices)
    assert summary.report == json.loads(report.read_text())  # one release, one ledger, one budget
    assert summary.report["parameters"]["candidates"] == "copula"
    assert out.exists()


SUMMARIZE_BAD_INPUTS = {case: spec for case, spec in BAD_INPUTS.items() if "--rows" not in spec[1]}


@pytest.mark.parametrize("command", ["summarize", "generate"])
@pytest.mark.parametrize("case", list(SUMMARIZE_BAD_INPUTS))
def test_bad_input_leaves_no_summary(tmp_path, capsys, command, case):
    content, extra, expected = SUMMARIZE_BAD_INPUTS[case]
    bounds = tmp_path / "bad_bounds.json"  # the bad tables' columns (test_cli's), not this file's table's
    bounds.write_text(json.dumps({"age": {"bounds": [18, 90], "type": "integer"}, "income": [0, 1e5], "score": [0, 1]}))
    data = tmp_path / "absent.csv" if content is None else _write(tmp_path, content)
    summary = tmp_path / "summary.json"
    args = [command, data, "-o", summary if command == "summarize" else tmp_path / "o.csv",
            "--report", tmp_path / "r.json", "--seed", 0, "--quiet"]
    args += ["--summary-out", summary] if command == "generate" else []
    args += extra if "--bounds-from-data" in extra else ["--bounds", bounds, *extra]
    code, printed = run(args, capsys)
    lines = [line for line in printed.splitlines() if line.startswith("synthdp: error:")]
    assert code != 0 and len(lines) == 1 and expected in lines[0], printed
    assert "Traceback" not in printed and "98765" not in printed
    assert not summary.exists() and not (tmp_path / "r.json").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_missing_summary_folder_fails_before_any_work(table, tmp_path, capsys):
    _, data, bounds = table
    out = tmp_path / "o.csv"
    code, printed = run(["generate", data, "-o", out, "--bounds", bounds, "--summary-out",
                         tmp_path / "nowhere" / "s.json", "--seed", 0, "--quiet"], capsys)
    assert code != 0 and "nowhere" in printed and not out.exists()


def test_both_kinds_of_summary_share_one_file_api(tmp_path, clinic_like):
    """save / load / to_json / from_dict on both kinds, and load_summary dispatching on the format."""
    import json

    from synthdp import MarginalSummary, Summary, load_summary

    frame, bounds = clinic_like
    with pytest.warns(UserWarning):
        smooth = SmoothSynthesizer(epsilon=1.0, seed=1).fit(frame, bounds=bounds, synthesize=False).summary()
    schema = {"columns": {"age": {"type": "integer", "bounds": [18, 90]},
                          "band": {"type": "categorical", "levels": ["low", "high"]}}}
    mixed = frame[["age"]].assign(band=np.where(frame["score"] > 0.3, "high", "low"))
    with pytest.warns(UserWarning):
        marginal = SmoothSynthesizer(epsilon=1.0, seed=1).fit(mixed, schema=schema, synthesize=False).marginal_summary()
    for summary, kind in ((smooth, Summary), (marginal, MarginalSummary)):
        path = tmp_path / f"{kind.__name__}.json"
        summary.save(path)
        assert json.loads(path.read_text())["format"] == kind.FORMAT
        for loaded in (kind.load(path), load_summary(path), kind.from_dict(json.loads(summary.to_json()))):
            assert type(loaded) is kind and loaded.to_json() == summary.to_json()
    with pytest.raises(SynthDPError, match="is not a synthdp marginal summary"):
        MarginalSummary.load(tmp_path / "Summary.json")
    (tmp_path / "other.json").write_text('{"format": "something else"}')
    with pytest.raises(SynthDPError, match="not a synthdp summary"):
        load_summary(tmp_path / "other.json")


# ---------------------------------------------------------------- intervals


def _release_summaries(frame, bounds, runs: int, **options):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the seeded runs' warning
        return [SmoothSynthesizer(epsilon=1.0, seed=1000 + s, **options).fit(frame, bounds, synthesize=False).summary()
                for s in range(runs)]


@pytest.mark.parametrize("options", [{"delta": 1e-6}, {"delta": 0.0}], ids=["gaussian", "laplace"])
def test_answer_intervals_cover_the_tables_value_at_their_level(clinic_like, options):
    """300 releases: the 95 % interval of an in-span query (a mean) and of one outside the span (a
    kernel) must each cover the table's own value in 270-299 of them. For a random seed, the count
    of a 95 % interval is Binomial(300, 0.95) or above (the kernel's approximation term is
    conservative), below 270 with probability 1.3e-4 (the exact binomial tail); 300 would mean a needlessly wide interval
    for the mean (probability 2e-7 at exact coverage)."""
    frame, bounds = clinic_like
    mean_age = lambda rows: rows["age"]
    kernel = lambda rows: np.exp(-(((rows["weight"] - 70) / 15) ** 2))
    truth = np.array([frame["age"].mean(), kernel(frame).mean()])
    covered = np.zeros(2, dtype=int)
    for summary in _release_summaries(frame, bounds, 300, **options):
        interval = summary.answer_interval(lambda rows: np.column_stack([mean_age(rows), kernel(rows)]))
        assert interval["estimate"].to_numpy() == pytest.approx(summary.answer(
            lambda rows: np.column_stack([mean_age(rows), kernel(rows)])), rel=1e-12)
        covered += (interval["lower"].to_numpy() <= truth) & (truth <= interval["upper"].to_numpy())
    assert 270 <= covered[0] < 300, covered
    assert covered[1] >= 270, covered


def test_answer_interval_terms(clinic_like):
    frame, bounds = clinic_like
    gaussian_summary, = _release_summaries(frame, bounds, 1, delta=1e-6)
    sigma = next(s for s in gaussian_summary.report["privacy"]["stages"] if s["stage"] == "moments")["noise_scale"]
    interval = gaussian_summary.answer_interval(lambda rows: rows["age"], level=0.9)
    _, c = gaussian_summary.coefficients(lambda rows: rows["age"])
    assert interval["std_error"].iloc[0] == pytest.approx(sigma * np.linalg.norm(c), rel=1e-12)
    assert interval["noise_half_width"].iloc[0] == pytest.approx(NormalDist().inv_cdf(0.95) * sigma * np.linalg.norm(c), rel=1e-9)
    assert interval["approximation_error"].iloc[0] < 1e-9  # a mean is in the released span
    # A query outside the span: its approximation term is at least its misfit at any point of the box.
    outside = lambda rows: ((rows["weight"] - 30) / 120) ** 6
    row = gaussian_summary.answer_interval(outside).iloc[0]
    c0, c = gaussian_summary.coefficients(outside)
    corner = np.ones((1, 3))  # the box's upper corner in [-1, 1] coordinates
    at_corner = outside(pd.DataFrame(gaussian_summary.domain.from_unit(corner), columns=gaussian_summary.domain.names))
    misfit = abs(float(at_corner.iloc[0]) - c0 - ChebyshevBasis(gaussian_summary.basis_indices).evaluate(corner)[0] @ c)
    assert row["approximation_error"] >= misfit * (1 - 1e-9) and misfit > 1e-3


def test_answer_interval_needs_the_release_report(clinic_like):
    frame, bounds = clinic_like
    summary = exact_summary(frame[["weight", "score"]], {k: bounds[k] for k in ("weight", "score")}, tensor_indices(2, 3))
    with pytest.raises(SynthDPError, match="no privacy report with a moments stage"):
        summary.answer_interval(lambda rows: rows["weight"])
    released, = _release_summaries(frame, bounds, 1)
    with pytest.raises(SynthDPError, match="level"):
        released.answer_interval(lambda rows: rows["age"], level=1.0)


def test_intervals_by_unit_cover_the_noisy_row_count_too():
    """A release by privacy unit divides every moment by its noisy row count: the interval takes that noise in.

    40 seeded releases of a column near the top of its bounds (where dividing by a wrong n moves the answer
    most); at least 34 intervals must hold the table's mean. At the nominal 0.95 a false failure has
    probability 0.0034 (binomial: 7 or more misses of 40); without the count's noise 21 to 26 of 40 held."""
    rng = np.random.default_rng(5)
    people = np.repeat([f"p{i}" for i in range(200)], 5)
    frame = pd.DataFrame({"person": people, "x": 99 + rng.uniform(0, 1, 1000), "y": rng.uniform(0, 1, 1000)})
    held = 0
    for seed in range(40):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            summary = SmoothSynthesizer(epsilon=4, delta=1e-8, seed=seed, privacy_unit="person", max_rows_per_unit=5
                                        ).fit(frame, bounds={"x": [0, 100], "y": [0, 1]}, synthesize=False).summary()
        row = summary.answer_interval(lambda rows: rows["x"]).iloc[0]
        held += row["lower"] <= frame["x"].mean() <= row["upper"]
    assert held >= 34
    unit = summary.report["privacy"]["privacy_unit"]
    assert unit["rows_noise"] == "Laplace" and unit["rows_noise_scale"] > 0
    same = summary.answer_interval(lambda rows: rows["x"], level=np.float32(0.95)).iloc[0]  # a numpy level too
    assert same["upper"] == pytest.approx(row["upper"], rel=1e-6)
    edited = Summary.from_dict(json.loads(summary.to_json()))  # a count's mechanism edited away: not read as Laplace
    edited.report["privacy"]["privacy_unit"]["rows_noise"] = "Cauchy"
    with pytest.raises(SynthDPError, match="rows_noise is neither 'Gaussian' nor 'Laplace'"):
        edited.answer_interval(lambda rows: rows["x"])


def test_a_query_s_series_in_another_order_is_answered_value_by_value(clinic_like):
    """A query returning its values in another row order (pd.concat of two selections) answers as the
    same function does on a table, f(table).mean(): each value at its own node."""
    frame, bounds = clinic_like
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        summary = SmoothSynthesizer(epsilon=1e6, seed=1).fit(frame, bounds, synthesize=False).summary()
    shuffled = lambda rows: pd.concat([rows.loc[rows["age"] < 50, "score"], 2 * rows.loc[rows["age"] >= 50, "score"]])
    direct = lambda rows: np.where(rows["age"] < 50, rows["score"], 2 * rows["score"])
    assert summary.answer(shuffled) == pytest.approx(summary.answer(direct), rel=1e-12)
    with pytest.raises(SynthDPError, match="indexed as its input"):
        summary.answer(lambda rows: rows["score"].reset_index(drop=True).iloc[::-1].set_axis(rows.index + 1))


def test_dates_reach_a_query_as_datetimes():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 2000),
                          "visit": pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 730, 2000), unit="D")})
    schema = {"columns": {"x": {"bounds": [0, 1]}, "visit": {"type": "date", "bounds": ["2020-01-01", "2021-12-31"]}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        summary = SmoothSynthesizer(epsilon=1e6, seed=1).fit(frame, schema=schema, synthesize=False).summary()
    assert summary.nodes["visit"].dtype.kind == "M"
    later = lambda rows: (rows["visit"] >= "2021-01-01").astype(float)  # a comparison with a date, as on a table
    assert summary.answer(later) == pytest.approx(later(frame).mean(), abs=0.02)


def test_a_nullable_column_s_summary_warns_and_is_a_smooth_summary(tmp_path):
    """Missing cells count at the centre of the bounds in the moments: every answer says so. A numeric
    table with a nullable column summarizes to a smooth summary (it was a marginal one, of the
    missingness alone), which keeps the columns' names across a save."""
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"a": rng.uniform(0, 10, 3000), "b": rng.uniform(0, 10, 3000)})
    frame.loc[:999, "b"] = np.nan
    frame.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "b.json").write_text(json.dumps({"a": [0, 10], "b": {"bounds": [0, 10], "nullable": True}}))
    assert main_command(["summarize", str(tmp_path / "t.csv"), "-o", str(tmp_path / "s.json"), "--bounds",
                         str(tmp_path / "b.json"), "--epsilon", "1", "--quiet"]) == 0
    summary = Summary.load(tmp_path / "s.json")
    assert summary.nullable == ("b",)
    content = json.loads((tmp_path / "s.json").read_text())
    with pytest.raises(SynthDPError, match="nullable must be a list"):
        Summary.from_dict({**content, "nullable": "b"})  # not the columns "b" one letter at a time
    with pytest.warns(UserWarning, match="'b' have missing cells"):
        summary.answer(lambda rows: rows["a"] * rows["b"])
    with pytest.warns(UserWarning, match="'b' have missing cells"):  # symmetric about the bounds' centre: it reads b
        summary.answer(lambda rows: ((rows["b"] - 5).abs() < 2.5).astype(float))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a query that does not read b: no warning
        summary.answer(lambda rows: rows["a"])


def _marginal_content():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 500), "sex": rng.choice(["F", "M"], 500)})
    schema = {"columns": {"x": {"bounds": [0, 1]}, "sex": {"type": "binary", "levels": ["F", "M"]}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SmoothSynthesizer(epsilon=1, seed=1).fit(frame, schema=schema, synthesize=False).marginal_summary()


def _version_1(content: dict) -> dict:
    """``content`` as version 1 wrote it: every multi-index listed in full."""
    full = [[0] * content["n_coordinates"] for _ in content["basis_terms"]]
    for row, term in zip(full, content["basis_terms"]):
        for coordinate, degree in term:
            row[coordinate] = degree
    rest = {key: value for key, value in content.items() if key not in ("basis_terms", "n_coordinates")}
    return {**rest, "format_version": 1, "basis_indices": full}


def test_a_marginal_summary_lists_each_moments_terms_and_reads_version_1():
    """Version 2 writes each multi-index as its nonzero [coordinate, degree] terms (a column of 5 000
    levels made version 1's file R x D numbers: 72 MB at 2 000 levels); both read back to the same
    summary and the same answers."""
    from synthdp.summaries.marginal import MarginalSummary

    summary = _marginal_content()
    content = json.loads(json.dumps(summary.to_dict()))
    assert content["format_version"] == 2 and "basis_indices" not in content
    assert all(all(degree >= 1 for _, degree in term) for term in content["basis_terms"])
    for given in (content, _version_1(content)):
        loaded = MarginalSummary.from_dict(given)
        assert np.array_equal(np.asarray(loaded.basis_indices), np.asarray(summary.basis_indices))
        pd.testing.assert_series_equal(loaded.marginal(["sex"]), summary.marginal(["sex"]))


def test_an_edited_marginal_summary_is_one_line(tmp_path):
    content = _marginal_content().to_dict()
    from synthdp.summaries.marginal import MarginalSummary

    d_numeric = 1  # x; then sex's indicator
    one_way = next(k for k, term in enumerate(content["basis_terms"]) if term == [[d_numeric, 1]])
    numeric = next(k for k, term in enumerate(content["basis_terms"]) if term[0][0] < d_numeric)

    def drop(c, k=one_way):  # a one-way cell and its moment taken out (it crashed the marginal of its column)
        del c["basis_terms"][k], c["noisy_moments"][k]

    def twice(c):  # a row listed twice, with its moment
        c["basis_terms"].append(c["basis_terms"][one_way]), c["noisy_moments"].append(c["noisy_moments"][one_way])

    def term(k, value):  # the first term of moment k replaced
        return lambda c: c["basis_terms"][k].__setitem__(0, value)

    for edit, message in ((lambda c: c.update(format_version=99), "format_version 99"),
                          (lambda c: c.update(noisy_moments=0.5), "malformed"), (drop, "one-way cell is missing"),
                          (twice, "listed twice"),
                          (lambda c: c.pop("format_version"), "format_version None"),
                          (lambda c: c["noisy_moments"].__setitem__(0, None), "noisy_moments must be finite"),
                          (term(numeric, [0, 1.5]), "pairs of integers"), (term(numeric, [0]), "pairs of integers"),
                          (term(numeric, [-1, 1]), "outside n_coordinates"),
                          (term(numeric, [2, 1]), "outside n_coordinates"), (term(numeric, [0, 0]), "below 1"),
                          (lambda c: c["basis_terms"][numeric].append(c["basis_terms"][numeric][0]), "twice"),
                          (lambda c: c.update(n_coordinates=True), "n_coordinates a count"),
                          (lambda c: c.update(basis_terms={"0": []}), "list of lists"),
                          (term(one_way, [d_numeric, 3]), "degree above 1")):
        edited = json.loads(json.dumps(content))
        edit(edited)
        with pytest.raises(SynthDPError, match=message) as error:
            MarginalSummary.from_dict(edited)
        assert "\n" not in str(error.value)
    version_1 = _version_1(json.loads(json.dumps(content)))
    for edit, message in ((lambda c: c["basis_indices"][0].__setitem__(0, 1.5), "integers >= 0"),
                          (lambda c: c["basis_indices"][0].__setitem__(0, -1), "integers >= 0"),
                          (lambda c: c["basis_indices"][one_way].__setitem__(d_numeric, 3), "degree above 1")):
        edited = json.loads(json.dumps(version_1))
        edit(edited)
        with pytest.raises(SynthDPError, match=message):
            MarginalSummary.from_dict(edited)


def test_a_moment_count_that_does_not_match_names_the_file_s_own_field():
    """A version 2 file whose terms and moments differ in number was said to have "basis_indices"
    that do not match: a field only version 1 holds."""
    from synthdp.summaries.marginal import MarginalSummary

    content = json.loads(json.dumps(_marginal_content().to_dict()))
    for given, field, other in ((content, "basis_terms", "basis_indices"),
                                (_version_1(json.loads(json.dumps(content))), "basis_indices", "basis_terms")):
        given["noisy_moments"].pop()
        with pytest.raises(SynthDPError, match=f"malformed .{field} do not match the schema and the moments") as error:
            MarginalSummary.from_dict(given)
        assert other not in str(error.value)


def test_a_marginal_summary_s_huge_or_empty_terms_are_one_plain_line():
    """A number past 64 bits (a term's degree or coordinate, n_coordinates, a moment) was a traceback
    (OverflowError); an n_coordinates of 2**40 made an (R, 2**40) array (out of memory, or a machine's
    memory taken); an empty term (the constant 1 as a moment) was read and changed every binary
    column's first level; and the helpers' own errors were wrapped in a second "is malformed (...)"."""
    from synthdp.summaries.marginal import MarginalSummary

    content = json.loads(json.dumps(_marginal_content().to_dict()))
    numeric = next(k for k, term in enumerate(content["basis_terms"]) if term[0][0] < 1)

    def term(value):
        return lambda c: c["basis_terms"][numeric].__setitem__(0, value)

    for edit, message in ((term([0, 10**20]), "malformed"), (term([10**20, 1]), "malformed"),
                          (lambda c: c.update(n_coordinates=10**20), "n_coordinates does not match"),
                          (lambda c: c.update(n_coordinates=2**40), "n_coordinates does not match"),
                          (lambda c: c["noisy_moments"].__setitem__(0, 10**400), "malformed"),
                          (lambda c: c["basis_terms"].__setitem__(numeric, []), "has no term"),
                          (lambda c: c.update(basis_terms=None), "list of lists")):
        edited = json.loads(json.dumps(content))
        edit(edited)
        with pytest.raises(SynthDPError, match=message) as error:
            MarginalSummary.from_dict(edited)
        assert "\n" not in str(error.value) and str(error.value).count("malformed") == 1, str(error.value)
    version_1 = _version_1(content)
    for edit, message in ((lambda c: c["basis_indices"][0].__setitem__(0, 1.5), "integers >= 0"),
                          (lambda c: c["basis_indices"][numeric].__setitem__(0, 0), "has no term")):
        edited = json.loads(json.dumps(version_1))
        edit(edited)
        with pytest.raises(SynthDPError, match=message) as error:
            MarginalSummary.from_dict(edited)
        assert str(error.value).count("malformed") == 1, str(error.value)


def test_marginal_of_a_table_holding_other_columns_and_of_internal_columns(tmp_path, capsys):
    """--table reads the schema over its own columns (the table may hold a unit column it leaves
    out); an internal coordinate (a nullable column's missingness) is not a column: one line."""
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"pid": np.arange(300), "x": rng.uniform(0, 1, 300), "sex": rng.choice(["F", "M"], 300)})
    frame.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "s.json").write_text(json.dumps({"columns": {"x": {"bounds": [0, 1], "nullable": True},
                                                             "sex": {"type": "binary", "levels": ["F", "M"]}}}))
    assert main_command(["marginal", "--table", str(tmp_path / "t.csv"), "--schema", str(tmp_path / "s.json"),
                         "--columns", "sex"]) == 0
    shares = capsys.readouterr().out
    assert "F," in shares and "M," in shares
    assert main_command(["marginal", "--table", str(tmp_path / "t.csv"), "--schema", str(tmp_path / "s.json"),
                         "--columns", "x (missing)"]) == 2
    assert "not a column of the table" in capsys.readouterr().err


def test_marginal_of_a_table_whose_schema_leaves_levels_to_discovery(tmp_path, capsys):
    """The schema a release by unit used (a draft gives its unit column of many identifiers
    "levels": "discover"): such a column is left out unless asked for, and asked for it is one line
    that names no option marginal lacks (it named levels_share for a column not asked)."""
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"pid": [f"synthetic-{i:03d}" for i in range(300)], "sex": rng.choice(["F", "M"], 300)})
    frame.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "s.json").write_text(json.dumps({"columns": {"pid": {"type": "categorical", "levels": "discover"},
                                                             "sex": {"type": "binary", "levels": ["F", "M"]}}}))
    assert main_command(["marginal", "--table", str(tmp_path / "t.csv"), "--schema", str(tmp_path / "s.json"),
                         "--columns", "sex"]) == 0
    assert "F," in capsys.readouterr().out
    assert main_command(["marginal", "--table", str(tmp_path / "t.csv"), "--schema", str(tmp_path / "s.json"),
                         "--columns", "pid"]) == 2
    error = capsys.readouterr().err
    assert "'pid'" in error and "levels_share" not in error and error.count("\n") == 1


def test_marginal_refuses_an_existing_output_before_it_reads_anything(tmp_path, capsys):
    """As --overwrite's help says: the output is checked before any work (a large --table was read,
    and its errors came first)."""
    (tmp_path / "s.json").write_text(json.dumps({"columns": {"sex": {"type": "binary", "levels": ["F", "M"]}}}))
    (tmp_path / "out.csv").write_text("kept\n")
    assert main_command(["marginal", "--table", str(tmp_path / "absent.csv"), "--schema", str(tmp_path / "s.json"),
                         "--columns", "sex", "-o", str(tmp_path / "out.csv")]) == 2
    assert "--output" in capsys.readouterr().err and (tmp_path / "out.csv").read_text() == "kept\n"


def test_an_equality_on_an_integer_column_gets_an_interval_that_holds_the_table_s_value():
    """age == 40 is 0 at every quadrature node and check point between whole numbers, so its misfit
    showed as 0 and its interval was [0, 0], which never held the table's share (0 of 200 releases);
    the check points rounded to whole numbers, where the rows lie, show the misfit."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"age": rng.integers(18, 91, 400), "x": rng.normal(size=400)})
    bounds = {"age": {"bounds": [18, 90], "type": "integer"}, "x": [-4, 4]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        summary = SmoothSynthesizer(epsilon=1.0, delta=1e-6, seed=0).fit(frame, bounds, synthesize=False).summary()
    for query, truth in ((lambda rows: (rows["age"] == 40).astype(float), (frame["age"] == 40).mean()),
                         (lambda rows: rows["age"].between(30, 39).astype(float), frame["age"].between(30, 39).mean())):
        row = summary.answer_interval(query).iloc[0]
        assert row["approximation_error"] > 0.5 and row["lower"] <= truth <= row["upper"]


def test_a_summary_whose_privacy_report_was_edited_out_of_shape_is_one_line():
    """answer_interval reads the moments' noise from the summary's privacy report: a privacy section
    that is not an object, stages that are not a list, or a noise scale of true (1 to Python) is a
    one-line error, not an AttributeError or a silent scale of 1."""
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 300), "y": rng.uniform(0, 1, 300)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        content = SmoothSynthesizer(epsilon=1.0, seed=0).fit(frame, {"x": [0, 1], "y": [0, 1]},
                                                              synthesize=False).summary().to_dict()
    query = lambda rows: rows["x"]  # noqa: E731
    assert Summary.from_dict(content).answer_interval(query).iloc[0]["std_error"] > 0

    def moments(report):
        return next(stage for stage in report["privacy"]["stages"] if stage["stage"] == "moments")

    for edit in (lambda report: report.update(privacy=["edited"]),
                 lambda report: report["privacy"].update(stages=5),
                 lambda report: moments(report).update(noise_scale=True)):
        edited = json.loads(json.dumps(content))
        edit(edited["privacy_report"])
        with pytest.raises(SynthDPError, match="privacy report"):
            Summary.from_dict(edited).answer_interval(query)


def test_a_summary_rewritten_with_its_keys_sorted_answers_as_before(clinic_like):
    """The columns' order was the order of the keys of the file's "bounds" (or "schema") object, which JSON
    does not keep (jq -S, json.dumps(sort_keys=True), a database's JSON type): rewritten with sorted keys, a
    summary read every moment as another column's (clinic: the mean of systolic_bp 130.6 for 123.0; adult: 0.9996
    Female for 0.33) without a word. "column_order" keeps it; a file without it reads its keys' order, as before."""
    from synthdp.summaries.marginal import MarginalSummary

    frame, bounds = clinic_like
    frame, bounds = frame[["weight", "age", "score"]], {name: bounds[name] for name in ("weight", "age", "score")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        smooth = SmoothSynthesizer(epsilon=1.0, seed=0).fit(frame, bounds, synthesize=False).summary()
    query = lambda rows: np.column_stack([rows["weight"], rows["age"], rows["score"]])  # noqa: E731
    resorted = Summary.from_dict(json.loads(json.dumps(smooth.to_dict(), sort_keys=True)))
    assert resorted.domain.names == ["weight", "age", "score"]
    assert np.array_equal(resorted.answer(query), smooth.answer(query))
    rng = np.random.default_rng(3)
    table = pd.DataFrame({"x": rng.uniform(0, 1, 500), "sex": rng.choice(["F", "M"], 500, p=[0.8, 0.2]),
                          "eyes": rng.choice(["blue", "brown", "green"], 500, p=[0.2, 0.7, 0.1])})
    schema = {"columns": {"x": {"bounds": [0, 1]}, "sex": {"type": "binary", "levels": ["F", "M"]},
                          "eyes": {"type": "categorical", "levels": ["blue", "brown", "green"]}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        marginals = SmoothSynthesizer(epsilon=1, seed=1).fit(table, schema=schema, synthesize=False).marginal_summary()
    resorted = MarginalSummary.from_dict(json.loads(json.dumps(marginals.to_dict(), sort_keys=True)))
    for columns in (["sex"], ["eyes"], ["sex", "eyes"]):
        pd.testing.assert_series_equal(resorted.marginal(columns), marginals.marginal(columns))
    # a file written without "column_order" is read in its keys' order; one that lists other columns is refused
    for summary, kind in ((smooth, Summary), (marginals, MarginalSummary)):
        content = summary.to_dict()
        older = {key: value for key, value in content.items() if key != "column_order"}
        assert list(kind.from_dict(older).to_dict()["column_order"]) == content["column_order"]
        for order in (content["column_order"][:-1], content["column_order"] + ["zzz"],
                      content["column_order"][:1] * len(content["column_order"]), "weight"):
            with pytest.raises(SynthDPError, match="column_order must list each column") as error:
                kind.from_dict({**content, "column_order": order}, "summary file 's.json'")
            assert "\n" not in str(error.value) and "s.json" in str(error.value)


def test_a_marginal_of_a_numeric_column_says_so_and_a_hint_never_names_an_internal_column(tmp_path, capsys):
    """A numeric column of the table was "not a binary or categorical column of the schema (the table has
    'education')", and a misspelt nullable column's hint named its internal missingness column ('x (missing)'),
    which the next try refused."""
    from synthdp.summaries.marginal import MarginalSummary

    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"x": np.where(rng.uniform(size=300) < 0.1, np.nan, rng.uniform(0, 1, 300)),
                          "sex": rng.choice(["F", "M"], 300), "sexes": rng.choice(["a", "b", "c"], 300)})
    schema = {"columns": {"x": {"bounds": [0, 1], "nullable": True}, "sex": {"type": "binary", "levels": ["F", "M"]},
                          "sexes": {"type": "categorical", "levels": ["a", "b", "c"]}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        summary = SmoothSynthesizer(epsilon=1, seed=0).fit(frame, schema=schema, synthesize=False).marginal_summary()
    summary.save(tmp_path / "m.json")
    for columns, expected, unexpected in (("x", "'x' is a numeric column", "(the table has"),
                                          ("x_missing", "not a binary or categorical column", "(missing)"),
                                          ("sexs", "(the table has 'sex", "(missing)")):
        assert main_command(["marginal", "--summary", str(tmp_path / "m.json"), "--columns", columns]) == 2
        error = capsys.readouterr().err.strip()
        assert expected in error and unexpected not in error and "\n" not in error, error
    assert isinstance(summary, MarginalSummary)


def test_a_query_of_a_column_the_summary_does_not_hold_is_one_line(clinic_like):
    """rows["agee"] was a bare KeyError: 'agee' from inside the evaluator; the error names the summary's columns."""
    frame, bounds = clinic_like
    summary = exact_summary(frame, bounds, tensor_indices(3, 2))
    for query in (lambda rows: rows["agee"], lambda rows: rows[["agee", "score"]]):
        with pytest.raises(SynthDPError, match="the summary's columns are 'age', 'weight', 'score'") as error:
            summary.answer(query)
        assert "\n" not in str(error.value)
    assert "(the table has 'age')" in str(pytest.raises(SynthDPError, summary.answer, lambda rows: rows["agee"]).value)


def test_summarize_counts_the_moments_its_summary_holds(tmp_path, capsys):
    """With a nullable column the smooth summary holds the numeric moments only; the message counted the
    release's (its missingness indicator's too): 26 for a file of 20 on clinic."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 300), "y": rng.uniform(0, 1, 300)})
    frame.loc[::7, "y"] = np.nan
    data = _write(tmp_path, frame, "data.csv")
    (tmp_path / "b.json").write_text(json.dumps({"x": [0, 1], "y": {"bounds": [0, 1], "nullable": True}}))
    code, printed = run(["summarize", data, "-o", tmp_path / "s.json", "--bounds", tmp_path / "b.json", "--seed", 0],
                        capsys)
    assert code == 0, printed
    held = len(json.loads((tmp_path / "s.json").read_text())["noisy_moments"])
    assert f"wrote a summary of {held} noisy moments" in printed


def test_a_large_basis_is_answered_in_bounded_memory(monkeypatch):
    """The Sobol' rule and the interval's misfit held the basis at every point at once, (N, R): 6 GB for the
    100 000 moments of summarize --n-basis 100000 (a MemoryError). By blocks of at most 2**22 values."""
    indices = lowest_degree_indices(4, 2500)
    domain = Domain.from_bounds({name: [0, 1] for name in "abcd"}, list("abcd"))
    rng = np.random.default_rng(0)
    summary = Summary(domain, indices, rng.normal(0, 0.01, len(indices)), report={"privacy": {"stages": [
        {"stage": "moments", "mechanism": "Gaussian", "noise_scale": 0.01}]}})
    assert summary.quadrature.startswith("scrambled Sobol'")
    largest = []
    evaluate = ChebyshevBasis.evaluate

    def spy(self, points):
        largest.append(len(points) * self.size)
        return evaluate(self, points)

    monkeypatch.setattr(ChebyshevBasis, "evaluate", spy)
    query = lambda rows: np.exp(-((rows["a"] - 0.3) / 0.2) ** 2) * rows["b"]  # noqa: E731
    answer = summary.answer(query)
    row = summary.answer_interval(query, check_points=256).iloc[0]
    assert max(largest) <= 2**22 and len(largest) > 3
    monkeypatch.setattr(ChebyshevBasis, "evaluate", evaluate)
    design = ChebyshevBasis(indices).evaluate(summary._rule.nodes)  # the whole array, as before
    weights = (1 + (design - design.mean(axis=0)) @ (2.0 ** (indices > 0).sum(axis=1) * summary.noisy_moments))
    assert answer == pytest.approx(query(summary.nodes).to_numpy() @ weights / len(weights), rel=1e-9)
    assert row["estimate"] == pytest.approx(answer, rel=1e-12)


def test_a_wide_summary_writes_a_multi_index_a_line_and_refuses_a_repeated_one():
    """Each list of numbers on one line (2 000 columns: 8 million numbers, one a line took 10 s and
    1.5 GB to write), the same content; the duplicate check without sorting the rows, the same refusal."""
    names = [f"c{i}" for i in range(30)]
    frame = pd.DataFrame(np.random.default_rng(0).uniform(0, 1, (200, 30)), columns=names)
    with pytest.warns(UserWarning):  # the known seed
        summary = SmoothSynthesizer(epsilon=1.0, seed=1).fit(frame, bounds={name: [0, 1] for name in names},
                                                             synthesize=False).summary()
    text = summary.to_json()
    assert json.loads(text) == json.loads(json.dumps(summary.to_dict()))
    lines = {line.strip().rstrip(",") for line in text.splitlines()}
    assert all(json.dumps(index) in lines for index in summary.basis_indices.tolist())
    assert len(lines) < summary.basis_indices.size  # not a number a line
    assert Summary.from_dict(json.loads(text)).to_json() == text
    content = summary.to_dict()
    content["basis_indices"][1] = content["basis_indices"][0]
    with pytest.raises(SynthDPError, match="must not repeat a multi-index"):
        Summary.from_dict(content)
