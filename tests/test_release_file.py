"""A model file keeps its release (synthdp.pipeline.release_file), so that copies of it for synthdp.infer are
made from the file in any process: the release read back is the fit's, field by field; the copies are the
fit's under the same seed; a file without its release, or with an edited one, is refused in one line and
nothing is written."""

from __future__ import annotations

import dataclasses
import json
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_model_file import _rewrite

from synthdp import SmoothSynthesizer
from synthdp.cli import main
from synthdp.errors import SynthDPError
from synthdp.pipeline import model as model_file
from synthdp.pipeline.copies import NO_RELEASE

ROOT = Path(__file__).resolve().parents[1]


def _fit(frame: pd.DataFrame, **fit_args) -> SmoothSynthesizer:
    options = fit_args.pop("options", {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the known seed's warning
        return SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=1, **options).fit(frame, **fit_args)


def _pairs() -> SmoothSynthesizer:
    """Four columns, three of them one block: the pairs are released one by one."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=3000)
    frame = pd.DataFrame({"a": x, "b": x + 0.5 * rng.normal(size=3000), "c": rng.normal(size=3000),
                          "d": x + 0.3 * rng.normal(size=3000)})
    return _fit(frame, bounds={"a": [-4, 4], "b": [-5, 5], "c": [-4, 4], "d": [-5, 5]})


def _selected() -> SmoothSynthesizer:
    """The bundled clinic table: few rows for its columns, so the pairs worth measuring are chosen."""
    frame = pd.read_csv(ROOT / "synthdp" / "datasets" / "clinic.csv")
    return _fit(frame, bounds=json.loads((ROOT / "synthdp" / "datasets" / "clinic_bounds.json").read_text()))


def _classes() -> SmoothSynthesizer:
    """Iris with its numeric columns released by level of the species (class_column)."""
    return _fit(pd.read_csv(ROOT / "data" / "iris.csv"), schema=json.loads((ROOT / "configs" / "iris_schema.json").read_text()),
                options={"class_column": "species"})


def _many_levels() -> SmoothSynthesizer:
    """A categorical column of 400 levels: a basis matrix mostly of zeros, held as its non-zero entries."""
    rng = np.random.default_rng(2)
    levels = [f"l{i}" for i in range(400)]
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 2000), "k": rng.choice(levels, 2000)})
    schema = {"columns": {"x": {"type": "continuous", "bounds": [0, 1]}, "k": {"type": "categorical", "levels": levels}}}
    return _fit(frame, schema=schema)


FITS = {"pairs": _pairs, "selected": _selected, "classes": _classes, "many_levels": _many_levels}


@pytest.fixture(scope="module", params=list(FITS))
def saved(request, tmp_path_factory):
    synth = FITS[request.param]()
    path = tmp_path_factory.mktemp("release") / f"{request.param}.synthdp"
    synth.save(path)
    return request.param, synth, path


def _same(ours, theirs, where: str = "release") -> None:
    """Field by field, array by array (dtype, shape and every value), the same."""
    if dataclasses.is_dataclass(ours):
        assert type(theirs) is type(ours), where
        for field in dataclasses.fields(ours):
            _same(getattr(ours, field.name), getattr(theirs, field.name), f"{where}.{field.name}")
    elif isinstance(ours, np.ndarray):
        assert isinstance(theirs, np.ndarray) and theirs.dtype == ours.dtype, where
        np.testing.assert_array_equal(theirs, ours, err_msg=where)
    elif isinstance(ours, (tuple, list)):
        assert type(theirs) is type(ours) and len(theirs) == len(ours), where
        for k, (mine, read) in enumerate(zip(ours, theirs)):
            _same(mine, read, f"{where}[{k}]")
    else:
        assert type(theirs) is type(ours) and (theirs == ours or (ours != ours and theirs != theirs)), where


def test_the_file_holds_the_fits_release_and_configuration(saved):
    name, synth, path = saved
    loaded = model_file.load(path)
    assert loaded.release is None and loaded.release_parts is not None  # made whole only for copies
    release, config = model_file.kept_release(loaded)
    _same(synth.model_.release, release)
    _same(synth.model_.config, config, "config")
    release = synth.model_.release
    assert {"pairs": release.noisy_scores is not None, "selected": release.selected_pairs is not None,
            "classes": release.class_histograms is not None, "many_levels": release.schema is not None}[name]


def test_a_basis_mostly_of_zeros_is_held_as_its_entries(tmp_path):
    """The 400 levels' basis (R x D, int8, nearly all 0) is written as its non-zero entries, not whole."""
    synth, path = _many_levels(), tmp_path / "m.synthdp"
    synth.save(path)
    with zipfile.ZipFile(path) as archive:
        document = json.loads(archive.read("model.json"))
    basis = document["release"]["fields"]["basis_indices"]
    indices = synth.model_.release.basis_indices
    assert set(basis) == {"sparse"} and indices.shape[1] > 400
    rows = document["arrays"][basis["sparse"][1]["array"]]["shape"][0]
    assert rows == np.count_nonzero(indices) < indices.size / 4


def test_copies_from_the_file_are_the_fits_under_the_same_seed(saved):
    _, synth, path = saved
    ours = synth.sample_copies(2, 200, seed=11)
    theirs = SmoothSynthesizer.load(path).sample_copies(2, 200, seed=11)
    for mine, read in zip([*ours.tables, ours.reference], [*theirs.tables, theirs.reference]):
        pd.testing.assert_frame_equal(read, mine)
    assert theirs.measured == ours.measured


def test_a_file_written_under_other_rule_constants_still_makes_its_copies(tmp_path, monkeypatch):
    """A later synthdp may tune a limit that a derived field of the plan follows (MOMENT_NOISE_LIMIT, the default
    pairs' share): a file written before keeps the values its release had, checked within bounds, so its copies
    are made as before (they were refused as 'damaged or was edited' when the fields had to equal this
    synthdp's rules). A crafted value out of bounds is still refused (test_release_file_hostile)."""
    from synthdp.pipeline import plan as plan_rules

    synth, path = _selected(), tmp_path / "m.synthdp"
    synth.save(path)
    ours = synth.sample_copies(2, 100, seed=4)
    stored = synth.model_.release.plan
    monkeypatch.setattr(plan_rules, "MOMENT_NOISE_LIMIT", 10.0 if not stored.moments_within_limit else 1e-9)
    monkeypatch.setitem(plan_rules.COPULA_SHARES, "correlation", 0.5)
    rederived = plan_rules.with_derived(stored)
    assert rederived.moments_within_limit != stored.moments_within_limit  # the rules moved
    assert rederived.pair_noise_at_default != stored.pair_noise_at_default
    theirs = SmoothSynthesizer.load(path).sample_copies(2, 100, seed=4)
    for mine, read in zip([*ours.tables, ours.reference], [*theirs.tables, theirs.reference]):
        pd.testing.assert_frame_equal(read, mine)
    # a mixed table's tilt candidates, a rule's count too
    synth, path = _classes(), tmp_path / "mixed.synthdp"
    synth.save(path)
    ours = synth.sample_copies(2, 60, seed=4)
    stored = synth.model_.release.plan.tilt_candidates
    moments = synth.model_.release.plan.n_basis
    monkeypatch.setattr(plan_rules, "TILT_CANDIDATES_PER_MOMENT", stored // moments + 3)  # more than the file's
    assert plan_rules.mixed_candidate_counts(synth.model_.config, synth.model_.release.plan.n_basis, True)[1] != stored
    theirs = SmoothSynthesizer.load(path).sample_copies(2, 60, seed=4)
    for mine, read in zip([*ours.tables, ours.reference], [*theirs.tables, theirs.reference]):
        pd.testing.assert_frame_equal(read, mine)


def _moments(document: dict) -> str:
    return document["release"]["fields"]["noisy_moments"]["array"]


EDITS = {
    "another kind": (lambda doc, arrays: doc["release"]["fields"]["plan"].update(kind="Popen"), "another kind"),
    "a path for an array": (lambda doc, arrays: doc["release"]["fields"]["noisy_moments"].update(array="../x"),
                            "another kind"),
    "an array of another length": (lambda doc, arrays: arrays.update({_moments(doc): arrays[_moments(doc)][:-1]}),
                                   "moments do not fit"),
    "a moment not finite": (lambda doc, arrays: arrays[_moments(doc)].__setitem__(0, np.nan), "noisy_moments"),
    "a field missing": (lambda doc, arrays: doc["release"]["fields"].pop("moment_noise_l1"), "moment_noise_l1"),
    "a plan's n as text": (lambda doc, arrays: doc["release"]["fields"]["plan"]["fields"].update(n="600"), "its plan"),
    "a huge sparse shape": (lambda doc, arrays: doc["release"]["fields"].update(basis_indices={"sparse": [
        [10**12, 10**12], doc["release"]["fields"]["noisy_moments"], doc["release"]["fields"]["noisy_moments"],
        doc["release"]["fields"]["noisy_moments"]]}), "sparse matrix"),
    "an option refused": (lambda doc, arrays: doc["release"]["config"].update(epsilon=-1), "epsilon"),
    "an older version": (lambda doc, arrays: doc.update(format_version=3), "arrays a model file does not hold"),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edited_release_is_refused_in_one_line(edit, tmp_path):
    path = tmp_path / "m.synthdp"
    _selected().save(path)
    change, says = EDITS[edit]
    edited = _rewrite(path, tmp_path / "edited.synthdp", change)
    with pytest.raises(SynthDPError, match="damaged or was edited") as error:
        SmoothSynthesizer.load(edited).sample_copies(2)  # where the file's structure allows, the rows are drawn
    assert says in str(error.value) and "\n" not in str(error.value)


def test_a_file_without_its_release_samples_rows_but_makes_no_copies(tmp_path, capsys):
    """A file written before the release was kept (version 3 and earlier): its rows as before; copies
    refused in one line, from Python and from the command line, where nothing is written."""
    path = tmp_path / "m.synthdp"
    synth = _selected()
    synth.save(path)

    def older(document, arrays):
        document.pop("release")
        document["format_version"] = 1
        for name in [name for name in arrays if name.startswith("release_")]:
            arrays.pop(name)

    old = _rewrite(path, tmp_path / "old.synthdp", older)
    loaded = SmoothSynthesizer.load(old)
    pd.testing.assert_frame_equal(loaded.sample(300, seed=2), synth.sample(300, seed=2))
    with pytest.raises(SynthDPError, match="does not hold the release") as error:
        loaded.sample_copies(2)
    assert str(error.value) == NO_RELEASE
    for needs in (lambda: loaded.summary(), lambda: loaded.theory_rows):
        with pytest.raises(SynthDPError, match="format version 3 or earlier.* samples rows only") as error:
            needs()
        assert "\n" not in str(error.value)
    out = tmp_path / "out.csv"
    assert main(["sample", str(old), "-n", "100", "-o", str(out), "--copies", "2", "--quiet"]) != 0
    assert "does not hold the release" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.synthdp", "old.synthdp"]  # nothing written


def test_synthdp_sample_writes_copies_that_synthdp_infer_reads(tmp_path, capsys):
    """fit once; later, sample --copies from the model file: the copies, their reference and description
    as generate --copies writes them, the same under the same seed, and intervals from synthdp infer."""
    model = tmp_path / "m.synthdp"
    _selected().save(model)
    first, second = tmp_path / "a" / "out.csv", tmp_path / "b" / "out.csv"
    for out in (first, second):
        out.parent.mkdir()
        assert main(["sample", str(model), "-n", "300", "-o", str(out), "--copies", "3", "--seed", "4"]) == 0
    assert "3 copies and their reference sample beside it" in capsys.readouterr().err
    names = ["out.csv", "out.1.csv", "out.2.csv", "out.3.csv", "out.reference.csv", "out.copies.json"]
    assert sorted(p.name for p in first.parent.iterdir()) == sorted(names)
    for name in names[:-1]:
        assert (first.parent / name).read_bytes() == (second.parent / name).read_bytes(), name
    alone = tmp_path / "alone.csv"  # the rows under --seed are sample's, with copies or without
    assert main(["sample", str(model), "-n", "300", "-o", str(alone), "--seed", "4", "--quiet"]) == 0
    assert alone.read_bytes() == first.read_bytes()
    api = SmoothSynthesizer.load(model).sample_copies(3, 300, seed=4)  # and the copies are Python's
    pd.testing.assert_frame_equal(pd.read_csv(first.parent / "out.2.csv"), api.tables[1], check_dtype=False,
                                  rtol=1e-6)
    described = json.loads((first.parent / "out.copies.json").read_text())
    assert described["count"] == 3 and described["rows"] == 300 and described["budget"].startswith("none")
    assert main(["infer", str(first), "--mean", "bmi"]) == 0
    printed = capsys.readouterr().out
    assert "mean bmi" in printed and "std_error" in printed


@pytest.mark.parametrize(("extra", "says"), [(["--where", "age > 50"], "cannot be combined with --where"),
                                             (["--copies", "1"], "--copies must be an integer from 2"),
                                             (["-n", "1"], "--rows of at least 2")])
def test_sample_copies_refuses_bad_options_before_anything_is_written(extra, says, tmp_path, capsys):
    model = tmp_path / "m.synthdp"
    _selected().save(model)
    out = tmp_path / "out.csv"
    arguments = ["sample", str(model), "-n", "50", "-o", str(out), "--copies", "2", *extra]
    assert main(arguments) != 0
    printed = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert len(printed) == 1 and says in printed[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.synthdp"]


def test_a_loaded_model_saved_again_keeps_its_release(saved, tmp_path):
    """Read, written back and read again: the same release, and the same copies under a seed."""
    _, synth, path = saved
    again = tmp_path / "again.synthdp"
    SmoothSynthesizer.load(path).save(again)
    _same(model_file.kept_release(model_file.load(path))[0], model_file.kept_release(model_file.load(again))[0])
    ours, theirs = (SmoothSynthesizer.load(source).sample_copies(2, 100, seed=3) for source in (path, again))
    for mine, read in zip(ours.tables, theirs.tables):
        pd.testing.assert_frame_equal(read, mine)


def test_a_loaded_model_gives_the_fits_summaries(tmp_path):
    """summary() and marginal_summary() of a model read from its file: the fit's, from the release it holds."""
    for make in (_selected, _classes):
        synth, path = make(), tmp_path / "m.synthdp"
        synth.save(path, overwrite=True)
        loaded = SmoothSynthesizer.load(path)
        if synth.release_.schema is None:
            np.testing.assert_array_equal(loaded.summary().noisy_moments, synth.summary().noisy_moments)
        else:
            ours, theirs = synth.marginal_summary(), loaded.marginal_summary()
            np.testing.assert_array_equal(theirs.noisy_moments, ours.noisy_moments)
        assert loaded.theory_rows == synth.theory_rows


def test_copies_that_run_out_of_memory_say_so_in_one_line(monkeypatch):
    """A refit that asks for more memory than is free is one line naming the copy, not a MemoryError."""
    import synthdp.pipeline.copies as copies_module

    synth = _selected()

    def out_of_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(copies_module.run, "fit", out_of_memory)
    with pytest.raises(SynthDPError, match="copies ran out of memory at copy 1 of 2") as error:
        synth.sample_copies(2, 50, seed=1)
    assert "\n" not in str(error.value)
