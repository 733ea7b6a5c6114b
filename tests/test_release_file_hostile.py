"""A crafted model file (every checksum made again, test_model_file._rewrite) whose release sets a size,
a kind or an array the copies would run as they are: before, loading it passed and copies then failed with
a traceback (ValueError, ZeroDivisionError, TypeError, IndexError), asked for tens of gigabytes (10^9
candidates) or ran for minutes (10^6 moments, 10^7 histogram bins); now the file is refused in one line
when read ("damaged or was edited (its release: ...)"), as its plan is not the one its configuration, its
columns and its rows give. And a file's configuration that names a Dask scheduler does not make the
copies connect to it."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_model_file import _rewrite
from test_release_file import _classes, _many_levels, _selected

from synthdp import SmoothSynthesizer
from synthdp.cli import main
from synthdp.errors import SynthDPError


def _fields(document: dict) -> dict:
    return document["release"]["fields"]


def _plan(document: dict) -> dict:
    return _fields(document)["plan"]["fields"]


def _array(document: dict, *path: str) -> str:
    value = _fields(document)
    for name in path:
        value = value[name]
    return value["array"]


def _plan_edit(**values):
    return lambda document, arrays: _plan(document).update(values)


def _array_edit(path: tuple[str, ...], change):
    def edit(document, arrays):
        name = _array(document, *path)
        arrays[name] = change(arrays[name])
    return edit


def _sparse_values(change):
    def edit(document, arrays):
        name = _fields(document)["basis_indices"]["sparse"][3]["array"]
        arrays[name] = change(arrays[name])
    return edit


def _pca() -> SmoothSynthesizer:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SmoothSynthesizer(epsilon=2.0, delta=1e-8, seed=2, candidates="pca").fit(_numeric(), bounds=NUMERIC_BOUNDS)


@pytest.fixture(scope="module")
def fitted(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("hostile")
    paths = {}
    for name, fit in {"selected": _selected, "classes": _classes, "many_levels": _many_levels, "pca": _pca}.items():
        paths[name] = folder / f"{name}.synthdp"
        fit().save(paths[name])
    return paths


# (the fitted file, the edit, what the one line says); what each did before, at copies, in its comment
HOSTILE = {
    "a plan's n of 10^6 rows": ("selected", _plan_edit(n=10**6), "(n)"),  # a population of 2 x 10^7 rows per copy
    "a plan's n of 1": ("selected", _plan_edit(n=1), "(n)"),
    "a plan's d of other columns": ("selected", _plan_edit(d=99), "(d)"),  # ValueError (broadcast)
    "10^9 candidates": ("selected", _plan_edit(n_candidates=10**9), "candidates"),  # MemoryError: 37 GB asked
    "-1 candidates": ("selected", _plan_edit(n_candidates=-1), "candidates"),  # ValueError (negative dimensions)
    "10^9 tilted candidates": ("selected", _plan_edit(tilted_candidates=10**9), "derived"),
    "10^9 tilt candidates of a mixed table": ("classes", _plan_edit(tilt_candidates=10**9, tilted_candidates=10**9),
                                              "candidates"),
    "0 histogram bins": ("selected", _plan_edit(marginal_bins=0), "marginal_bins"),  # ZeroDivisionError
    "10^7 histogram bins": ("selected", _plan_edit(marginal_bins=10**7), "marginal_bins"),  # minutes
    "10^6 moments": ("selected", _plan_edit(n_basis=10**6), "n_basis"),  # minutes
    "10^9 value cells": ("selected", _plan_edit(value_cells=10**9), "derived"),
    "a count of selected pairs as a float": ("selected", _plan_edit(selected_pairs=2.5), "selected_pairs"),  # TypeError
    "10^9 selected pairs": ("selected", _plan_edit(selected_pairs=10**9), "sizes"),  # ValueError (argmax)
    "a theory of huge sizes": ("selected", lambda document, arrays: _plan(document)["theory"]["fields"].update(
        t=10**6, N=10**6, m=10**12, L=10**9), "theory"),
    "a theory as a list": ("selected", _plan_edit(theory=[2, 6, 2916, 44]), "theory"),
    "a mode of no kind": ("selected", _plan_edit(mode="junk"), "mode"),
    "a noise of no kind": ("selected", _plan_edit(noise="junk"), "mode"),
    "a budget's epsilon not a number": ("selected", lambda document, arrays: _plan(document)["budget"]["fields"].update(
        remaining_epsilon={"float": "nan"}), "budget"),
    "a budget's share of -5": ("selected", lambda document, arrays: _plan(document)["budget"]["fields"]["shares"][
        "tuple"][0]["tuple"].__setitem__(1, -5.0), "budget"),
    "a basis of degree 10^6": ("selected", _array_edit(("basis_indices",), lambda x: x + 10**6), "basis"),
    "a basis of floats": ("selected", _array_edit(("basis_indices",), lambda x: x + 0.5), "basis"),
    "a mixed basis of degree 10^6": ("many_levels", _sparse_values(lambda x: x.astype(np.int64) * 0 + 10**6), "sparse matrix"),
    "one moment noise sd for all": ("classes", _array_edit(("moment_noise_sd",), lambda x: np.array(1.0)),
                                    "moments do not fit"),  # IndexError (0-d array) in a mixed table's candidates
    "selected pairs of other columns": ("selected", _array_edit(("selected_pairs", "fields", "pairs"),
                                                                lambda x: x + 100), "selected pairs"),
    "selected pairs' means of another length": ("selected", _array_edit(("selected_pairs", "fields", "noisy_means"),
                                                                        lambda x: x[:-1]), "selected pairs"),
    "histograms of another width": ("selected", _array_edit(("noisy_histograms",), lambda x: x[:, :-1]),
                                    "histograms do not fit"),
    "a cell layout of 10^7 bins": ("selected", lambda document, arrays: _fields(document)["cell_layout"][
        "fields"].update(n_bins=10**7), "cell layout"),
    "class histograms of other columns": ("classes", _array_edit(("class_histograms", "fields", "columns"),
                                                                 lambda x: x + 100), "class histograms"),
    "class histograms of another shape": ("classes", _array_edit(("class_histograms", "fields", "noisy_counts"),
                                                                 lambda x: x[:, :, :-1]), "class histograms"),
    "a class of no column": ("classes", lambda document, arrays: _fields(document)["class_histograms"][
        "fields"].update(column="nope"), "class histograms"),
    "private axes not numbers": ("pca", _array_edit(("pca", "fields", "axes"), lambda x: x * np.nan), "private PCA"),
    "private axes of another count": ("pca", _array_edit(("pca", "fields", "axes"), lambda x: x[:, :1]), "private PCA"),
    "private variances below 0": ("pca", _array_edit(("pca", "fields", "eigenvalues"), lambda x: -x - 1), "private PCA"),
    "a noise sd as text": ("selected", lambda document, arrays: _fields(document).update(histogram_noise_sd="x"),
                           "histogram_noise_sd"),
    "a count as a plan": ("selected", lambda document, arrays: _fields(document).update(
        noisy_rows_clipped=_fields(document)["plan"]), "noisy_rows_clipped"),
}


@pytest.mark.parametrize("edit", list(HOSTILE))
def test_a_crafted_release_is_refused_when_read(edit, fitted, tmp_path):
    """Refused when read, for copies and summaries; the rows, which do not read the release, are still drawn."""
    source, change, says = HOSTILE[edit]
    edited = _rewrite(fitted[source], tmp_path / "edited.synthdp", change)
    model = SmoothSynthesizer.load(edited)
    pd.testing.assert_frame_equal(model.sample(40, seed=2), SmoothSynthesizer.load(fitted[source]).sample(40, seed=2))
    for needs in (lambda: model.sample_copies(2, 40), lambda: model.theory_rows):
        with pytest.raises(SynthDPError, match="damaged or was edited") as error:
            needs()
        message = str(error.value)
        assert "its release:" in message and says in message and "\n" not in message


def test_synthdp_sample_refuses_a_crafted_release_in_one_line_and_writes_nothing(fitted, tmp_path, capsys):
    edited = _rewrite(fitted["selected"], tmp_path / "edited.synthdp", _plan_edit(marginal_bins=0))
    out = tmp_path / "out" / "out.csv"
    out.parent.mkdir()
    assert main(["sample", str(edited), "-n", "50", "-o", str(out), "--copies", "2", "--quiet"]) == 2
    printed = capsys.readouterr().err.strip().splitlines()
    assert len(printed) == 1 and printed[0].startswith("synthdp: error:") and "damaged or was edited" in printed[0]
    assert not list(out.parent.iterdir())


def test_copies_do_not_reach_a_dask_scheduler_the_file_names(fitted, tmp_path):
    """A file's configuration holds how its fit read its input (engine, scheduler, chunk_rows); the copies'
    populations are tables in memory, read by the numpy engine: before, a file naming a scheduler made the
    copies connect to that address (a Dask client, which unpickles what the scheduler sends)."""
    def dask(document, arrays):
        document["release"]["config"].update(engine="dask", scheduler="tcp://192.0.2.1:8786", chunk_rows=1)

    edited = _rewrite(fitted["selected"], tmp_path / "edited.synthdp", dask)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = SmoothSynthesizer.load(edited).sample_copies(2, 60, seed=5)
        ours = SmoothSynthesizer.load(fitted["selected"]).sample_copies(2, 60, seed=5)
    for mine, read in zip(ours.tables, theirs.tables):
        pd.testing.assert_frame_equal(read, mine)


def test_the_files_of_real_fits_are_read_with_their_release(fitted):
    """The checks refuse none of the fits' own files (numeric, by class, many levels held as entries)."""
    for path in fitted.values():
        model = SmoothSynthesizer.load(path)
        assert model.sample_copies(2, 40, seed=1).tables[0].shape[0] == 40


def _numeric(rows: int = 800) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    x = rng.normal(size=rows)
    return pd.DataFrame({"a": x, "b": x + rng.normal(size=rows), "c": rng.uniform(0, 1, rows).round(2)})


NUMERIC_BOUNDS = {"a": [-4, 4], "b": [-6, 6], "c": [0, 1]}


def _wide(rows: int = 569) -> pd.DataFrame:
    """WDBC's shape (569 x 30): one factor through every column."""
    rng = np.random.default_rng(4)
    factor = rng.normal(size=(rows, 1))
    return pd.DataFrame(np.clip(factor + rng.normal(size=(rows, 30)), -4, 4), columns=[f"v{j}" for j in range(30)])


def _mixed(rows: int = 800) -> pd.DataFrame:
    rng = np.random.default_rng(8)
    return pd.DataFrame({"x": rng.uniform(0, 10, rows), "n": rng.integers(0, 5, rows),
                         "k": rng.choice(["p", "q", "r"], rows), "g": rng.choice(["m", "f"], rows)})


MIXED_SCHEMA = {"columns": {"x": {"type": "continuous", "bounds": [0, 10]}, "n": {"type": "integer", "bounds": [0, 4]},
                            "k": {"type": "categorical", "levels": ["p", "q", "r"]},
                            "g": {"type": "binary", "levels": ["m", "f"]}}}

# fits whose plans the checks must recompute as the fit made them (a false refusal would lose the user's file)
OWN_FITS = {
    "pca candidates": ({"candidates": "pca"}, _numeric, {"bounds": NUMERIC_BOUNDS}),
    "exact mode": ({"mode": "exact"}, lambda: _numeric()[["a", "b"]], {"bounds": {"a": [-4, 4], "b": [-6, 6]}}),
    "Laplace noise (delta 0)": ({"delta": 0.0}, _numeric, {"bounds": NUMERIC_BOUNDS}),
    "favour relationships": ({"favour": "relationships"}, _numeric, {"bounds": NUMERIC_BOUNDS}),
    # every moment of degree <= 2 beside the lowest-degree ones: a basis that is not lowest_degree_indices' rows
    "favour relationships, 30 columns": ({"favour": "relationships"}, _wide, {"bounds": {f"v{j}": [-4, 4]
                                                                                      for j in range(30)}}),
    "the LP spread": ({"spread": 1.0}, _numeric, {"bounds": NUMERIC_BOUNDS}),
    "given bins and candidates": ({"marginal_bins": 9, "n_candidates": 3000}, _numeric, {"bounds": NUMERIC_BOUNDS}),
    "a mixed table": ({}, _mixed, {"schema": MIXED_SCHEMA}),
    "levels discovered": ({"levels_share": 0.1}, _mixed, {"schema": {"columns": {
        **MIXED_SCHEMA["columns"], "k": {"type": "categorical", "levels": "discover"}}}}),
    "bounds estimated": ({"bounds_share": 0.1}, _mixed, {"schema": {"columns": {
        **MIXED_SCHEMA["columns"], "x": {"type": "continuous"}}}}),
}


@pytest.mark.parametrize("fit", list(OWN_FITS))
def test_the_files_of_other_fits_are_read_and_make_copies(fit, tmp_path):
    options, frame, fit_args = OWN_FITS[fit]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer(**{"epsilon": 2.0, "delta": 1e-8, "seed": 2, **options}).fit(frame(), **fit_args)
        path = tmp_path / "m.synthdp"
        synth.save(path)
        ours = synth.sample_copies(2, 50, seed=4)
        theirs = SmoothSynthesizer.load(path).sample_copies(2, 50, seed=4)
    for mine, read in zip(ours.tables, theirs.tables):
        pd.testing.assert_frame_equal(read, mine)


def test_a_file_by_privacy_unit_is_read_and_makes_the_fits_copies(tmp_path):
    """A model file by unit samples, and makes the fit's own copies under the same seed, each with the
    unit column's synthetic identifiers."""
    frame = _numeric(900).assign(person=np.repeat(np.arange(300), 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer(epsilon=4.0, delta=1e-10, seed=3, privacy_unit="person",
                                  max_rows_per_unit=5).fit(frame, bounds=NUMERIC_BOUNDS)
    path = tmp_path / "m.synthdp"
    synth.save(path)
    loaded = SmoothSynthesizer.load(path)
    assert len(loaded.sample(30, seed=1)) == 30
    made, again = synth.sample_copies(2, 30, seed=5), loaded.sample_copies(2, 30, seed=5)
    for ours, theirs in zip([*made.tables, made.reference], [*again.tables, again.reference]):
        pd.testing.assert_frame_equal(theirs, ours)
    assert "person" in again.tables[0].columns


def test_an_integer_column_of_10_to_the_12_values_makes_copies_without_its_values_in_memory(fitted, tmp_path):
    """A file's domain (not its release) may give an integer column bounds of 10^12 values; before, each copy's
    histograms (CellLayout.for_domain) made the array of all its values before counting them: 7 TiB asked,
    a MemoryError. Its cells are now bins, as for any integer column of more values than value_cells."""
    def wide(document, arrays):
        document["domain"]["columns"][0].update(lower=0.0, upper=1e12)  # age, an integer column

    edited = _rewrite(fitted["selected"], tmp_path / "edited.synthdp", wide)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        copies = SmoothSynthesizer.load(edited).sample_copies(2, 40, seed=1)
    assert copies.tables[0]["age"].between(0, 1e12).all()
