"""Fit once, sample when needed: the model file, sampling from it in another process, conditions.

A model file (synthdp.pipeline.model) holds the fitted distribution, the decoders and the privacy
report; loading reads no data and sampling spends no budget. Statistical tests state their
false-failure rate.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from synthdp import SmoothSynthesizer
from synthdp.cli import main
from synthdp.errors import SynthDPError
from synthdp.pipeline import model as model_file

ROOT = Path(__file__).resolve().parents[1]
CLINIC = ROOT / "synthdp" / "datasets" / "clinic.csv"
CLINIC_BOUNDS = ROOT / "synthdp" / "datasets" / "clinic_bounds.json"


def _numeric():
    frame = pd.read_csv(CLINIC)
    return SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=1).fit(frame, bounds=json.loads(CLINIC_BOUNDS.read_text()))


def _mixed(closed: bool = False):
    rng = np.random.default_rng(0)
    n = 800
    sex = rng.choice(["Female", "Male"], n)
    age = np.clip(np.round(rng.normal(50, 15, n)), 18, 90).astype(int)
    income = np.round(np.exp(rng.normal(10, 0.5, n)) + 8000 * (sex == "Male"), 0)
    kind = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    frame = pd.DataFrame({"sex": sex, "age": age, "income": income, "kind": kind})
    schema = {"columns": {"sex": {"type": "binary", "levels": ["Female", "Male"]},
                          "age": {"type": "integer", "bounds": [18, 90]},
                          "income": {"type": "continuous", "bounds": [0, 200000]},
                          "kind": {"type": "categorical", "levels": ["a", "b", "c"], **({"other": False} if closed else {})}}}
    return SmoothSynthesizer(epsilon=2.0, delta=1e-10, seed=2).fit(frame, schema=schema)


def _by_person():
    rng = np.random.default_rng(1)
    people = np.repeat([f"p{i}" for i in range(120)], 5)
    frame = pd.DataFrame({"person": people, "x": rng.uniform(0, 10, len(people)), "y": rng.uniform(0, 1, len(people))})
    return SmoothSynthesizer(epsilon=4.0, delta=1e-10, seed=3, privacy_unit="person", max_rows_per_unit=5).fit(
        frame, bounds={"x": [0, 10], "y": [0, 1]})


MODELS = {"numeric": _numeric, "mixed": _mixed, "person": _by_person}


@pytest.fixture(scope="module", params=list(MODELS))
def fitted(request):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return request.param, MODELS[request.param]()


def test_a_loaded_model_samples_the_fits_rows_under_a_seed(fitted, tmp_path):
    name, synth = fitted
    path = tmp_path / "m.synthdp"
    synth.save(path)
    loaded = SmoothSynthesizer.load(path)
    pd.testing.assert_frame_equal(loaded.sample(700, seed=5), synth.sample(700, seed=5))
    assert loaded.privacy_report()["privacy"] == synth.privacy_report()["privacy"]
    assert loaded.get_params()["epsilon"] == synth.get_params()["epsilon"]
    if name == "numeric":  # the file holds its release: the fit's summary, moment for moment
        np.testing.assert_array_equal(loaded.summary().noisy_moments, synth.summary().noisy_moments)
    # the file holds its release: the fit's copies, under the same seed (synthdp.pipeline.release_file); by
    # unit too, each copy's population with synthetic units
    made, again = synth.sample_copies(2, 100, seed=4), loaded.sample_copies(2, 100, seed=4)
    for ours, theirs in zip([*made.tables, made.reference], [*again.tables, again.reference]):
        pd.testing.assert_frame_equal(theirs, ours)
    assert again.measured == made.measured and again.dependence == made.dependence
    assert loaded.theory_rows == synth.theory_rows
    with pytest.raises(SynthDPError, match="without the data stages' times"):  # it never held them
        loaded.privacy_report(data_timings=True)


def test_a_saved_model_is_the_same_bytes_whenever_it_is_written(fitted, tmp_path, monkeypatch):
    """Each zip member is dated 1980-01-01, not the time of writing: one model saved at two times (the
    clock moved on by a day between them) is the same file, so a seeded model's bytes differ only by
    the timings its report records."""
    import time

    _, synth = fitted
    now = time.time()
    for name, shift in (("a.synthdp", 0.0), ("b.synthdp", 86_400.0)):
        monkeypatch.setattr(time, "time", lambda shift=shift: now + shift)
        synth.save(tmp_path / name)
    monkeypatch.undo()
    assert (tmp_path / "a.synthdp").read_bytes() == (tmp_path / "b.synthdp").read_bytes()
    with zipfile.ZipFile(tmp_path / "a.synthdp") as archive:
        assert {member.date_time for member in archive.infolist()} == {(1980, 1, 1, 0, 0, 0)}


def test_a_model_saved_into_a_missing_folder_is_one_line(fitted, tmp_path):
    _, synth = fitted
    with pytest.raises(SynthDPError, match="its folder does not exist"):
        synth.save(tmp_path / "no" / "such" / "m.synthdp")


def test_save_refuses_a_path_that_exists_unless_told_to_overwrite_it(tmp_path, monkeypatch):
    """save() replaced a file at its path silently. A path that exists (a file, a link to one, a link to
    nothing) is now refused in one line naming it and overwrite=True, and nothing is written; so is a file
    that appears while the model is written (linked into place, never renamed over it); overwrite=True
    replaces the file."""
    synth = _numeric()
    precious = tmp_path / "precious.synthdp"
    precious.write_text("keep me")
    (tmp_path / "link.synthdp").symlink_to(precious)
    (tmp_path / "dangling.synthdp").symlink_to(tmp_path / "nothing")
    before = sorted(tmp_path.iterdir())
    for name in ("precious.synthdp", "link.synthdp", "dangling.synthdp"):
        with pytest.raises(SynthDPError) as error:
            synth.save(tmp_path / name)
        assert str(error.value) == (f"the model file '{tmp_path / name}' exists: pass overwrite=True to replace it, "
                                    "or choose another path (nothing was written)")
    assert precious.read_text() == "keep me" and sorted(tmp_path.iterdir()) == before  # no temporary file left
    import synthdp.files

    temporary_beside = synthdp.files.temporary_beside

    def appear(final, cleanup):  # another's file of that name, made after the check and before the file is in place
        (tmp_path / "late.synthdp").write_text("mine")
        return temporary_beside(final, cleanup)

    monkeypatch.setattr(synthdp.files, "temporary_beside", appear)
    with pytest.raises(SynthDPError, match=r"late\.synthdp' exists: pass overwrite=True"):
        synth.save(tmp_path / "late.synthdp")
    monkeypatch.undo()
    assert (tmp_path / "late.synthdp").read_text() == "mine"
    assert sorted(tmp_path.iterdir()) == sorted([*before, tmp_path / "late.synthdp"])
    with pytest.raises(SynthDPError, match="overwrite must be True or False"):
        synth.save(precious, overwrite="yes")
    synth.save(precious, overwrite=True)
    pd.testing.assert_frame_equal(SmoothSynthesizer.load(precious).sample(20, seed=1), synth.sample(20, seed=1))
    synth.save(tmp_path / "new.synthdp")  # a new path needs no overwrite
    loaded = SmoothSynthesizer.load(tmp_path / "new.synthdp")
    assert loaded.privacy_report()["privacy"] == synth.privacy_report()["privacy"]


def test_save_with_overwrite_through_a_link_replaces_its_target_as_the_command_line_does(tmp_path):
    """--overwrite through a link replaces the link's target and keeps the link (docs/cli.md); save(...,
    overwrite=True), documented as the command line's --overwrite, replaced the link itself with a file
    and left its target as it was. The summaries share the write."""
    synth = _numeric()
    target = tmp_path / "kept" / "model.synthdp"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "current.synthdp"
    link.symlink_to(target)
    synth.save(link, overwrite=True)
    assert link.is_symlink() and link.resolve() == target.resolve()
    pd.testing.assert_frame_equal(SmoothSynthesizer.load(target).sample(5, seed=1), synth.sample(5, seed=1))
    summary, summary_target = synth.summary(), tmp_path / "kept" / "s.json"
    summary_target.write_text("old")
    (tmp_path / "s.json").symlink_to(summary_target)
    summary.save(tmp_path / "s.json", overwrite=True)
    assert (tmp_path / "s.json").is_symlink() and type(summary).load(summary_target).to_dict() == summary.to_dict()
    assert sorted(path.name for path in tmp_path.rglob("*")) == ["current.synthdp", "kept", "model.synthdp",
                                                                 "s.json", "s.json"]

def test_synthdp_fit_writes_its_model_and_replaces_one_only_with_overwrite(tmp_path, capsys):
    """The command line writes the model into a temporary file it made (which exists) and then renames it:
    it passes overwrite=True there; an existing -o is still refused before any work without --overwrite."""
    model = tmp_path / "m.synthdp"
    command = ["fit", str(CLINIC), "-o", str(model), "--bounds", str(CLINIC_BOUNDS), "--seed", "1", "--quiet"]
    assert main(command) == 0, capsys.readouterr().err
    first = model.read_bytes()
    assert main(command) == 2 and "pass --overwrite to replace it" in capsys.readouterr().err
    assert model.read_bytes() == first
    assert main([*command, "--overwrite", "--epsilon", "2"]) == 0, capsys.readouterr().err
    assert model.read_bytes() != first and SmoothSynthesizer.load(model).get_params()["epsilon"] == 2.0


def test_a_column_without_other_level_keeps_it_through_the_file(tmp_path):
    synth = _mixed(closed=True)
    assert synth.release_.schema.column("kind").all_levels == ("a", "b", "c")
    path = tmp_path / "m.synthdp"
    synth.save(path)
    loaded = SmoothSynthesizer.load(path)
    assert loaded.sampling_model_.schema == synth.release_.schema
    rows = loaded.sample(3000, seed=4)
    assert set(rows.kind) <= {"a", "b", "c"}
    pd.testing.assert_frame_equal(rows, synth.sample(3000, seed=4))
    with zipfile.ZipFile(path) as archive:
        document = json.loads(archive.read("model.json"))
    assert any("other" in column for column in document["schema"]["categorical"])


def _rewrite(source: Path, target: Path, edit) -> Path:
    """``source`` with ``edit(document, arrays)`` applied, every checksum made again (a careful editor)."""
    with zipfile.ZipFile(source) as archive:
        document = json.loads(archive.read("model.json"))
        arrays = {name[:-4]: np.load(io.BytesIO(archive.read(name))) for name in archive.namelist()
                  if name.endswith(".npy")}
    edit(document, arrays)
    members, document["arrays"] = model_file.array_members(arrays)
    document[model_file.DOCUMENT_CHECKSUM] = model_file.document_checksum(document)
    with zipfile.ZipFile(target, "w") as archive:
        archive.writestr("model.json", json.dumps(document))
        for member, content in members.items():
            archive.writestr(member, content)
    return target


def _rewritten(path: Path, out: Path, arrays: dict[str, np.ndarray], version: int) -> Path:
    """``path``'s model file with its arrays replaced by ``arrays`` and its version by ``version``,
    every checksum made again: a file as another synthdp would have written it (before version 4, without
    the release and its arrays)."""
    def edit(document: dict, held: dict[str, np.ndarray]) -> None:
        held.clear()
        held.update({name: array for name, array in arrays.items() if version >= 4 or not name.startswith("release_")})
        document["format_version"] = version
        if version < 4:
            document.pop("release", None)

    return _rewrite(path, out, edit)


def _arrays(path: Path) -> dict[str, np.ndarray]:
    with zipfile.ZipFile(path) as archive:
        return {name[:-4]: np.load(io.BytesIO(archive.read(name))) for name in archive.namelist()
                if name.endswith(".npy")}


@pytest.mark.parametrize("closed", [False, True])
def test_a_mixed_model_file_holds_each_columns_level_and_reads_the_dense_files_before_it(closed, tmp_path):
    """A mixed table's support is written per column (version 3: the numeric coordinates and one
    level per column, S (d + k) numbers, not the one-hot S x D array: 1.6 GB for 40 000 points of a
    column of 5 000 levels), from version 4 beside its release; a numeric table's file, version 1 before it,
    too. A file of versions 1 and 2, its support dense, is still read, and samples the same rows."""
    synth = _mixed(closed)
    path = tmp_path / "m.synthdp"
    synth.save(path)
    arrays = _arrays(path)
    with zipfile.ZipFile(path) as archive:
        assert json.loads(archive.read("model.json"))["format_version"] == 4
    assert {name for name in arrays if not name.startswith("release_")} == {"support_numeric", "support_levels",
                                                                          "support_weights"}
    schema = synth.release_.schema
    assert arrays["support_numeric"].shape[1] == schema.d_numeric
    assert arrays["support_levels"].shape[1] == len(schema.categorical) and arrays["support_levels"].dtype == np.int16
    expected = synth.sample(2000, seed=7)
    pd.testing.assert_frame_equal(SmoothSynthesizer.load(path).sample(2000, seed=7), expected)
    dense = np.asarray(synth._sampling_model().points)
    assert dense.shape == (len(arrays["support_weights"]), schema.n_coordinates)
    old = _rewritten(path, tmp_path / "old.synthdp", {"support_points": dense,
                                                      "support_weights": arrays["support_weights"]}, 1 + closed)
    pd.testing.assert_frame_equal(SmoothSynthesizer.load(old).sample(2000, seed=7), expected)
    np.testing.assert_array_equal(np.asarray(model_file.encoded_support(dense, schema)), dense)
    numeric = tmp_path / "numeric.synthdp"
    _numeric().save(numeric)
    with zipfile.ZipFile(numeric) as archive:
        assert json.loads(archive.read("model.json"))["format_version"] == 4
    assert {name for name in _arrays(numeric) if not name.startswith("release_")} == {"support_points",
                                                                                      "support_weights"}


def test_a_mixed_model_files_levels_out_of_their_columns_are_refused(tmp_path):
    """Levels past a column's, negative, of another shape, or numeric coordinates that are not finite:
    the file is damaged (one line), even where every checksum was made again."""
    path = tmp_path / "m.synthdp"
    _mixed().save(path)
    arrays = _arrays(path)
    sizes = [len(column.all_levels) for column in _mixed().release_.schema.categorical]
    past, negative, wide = arrays["support_levels"].copy(), arrays["support_levels"].copy(), arrays["support_levels"]
    past[0, 0] = sizes[0]
    negative[-1, -1] = -1
    infinite = arrays["support_numeric"].copy()
    infinite[0, 0] = np.inf
    for name, edit in {"past": {"support_levels": past}, "negative": {"support_levels": negative},
                       "wide": {"support_levels": np.hstack([wide, wide[:, :1]])},
                       "real": {"support_levels": arrays["support_levels"].astype(float)},
                       "infinite": {"support_numeric": infinite},
                       "dense": {"support_numeric": None, "support_levels": None}}.items():
        edited = {key: value for key, value in {**arrays, **edit}.items() if value is not None}
        if name == "dense":
            edited["support_points"] = np.zeros((len(arrays["support_weights"]), 3))
        damaged = _rewritten(path, tmp_path / f"{name}.synthdp", edited, 3)
        with pytest.raises(SynthDPError, match="damaged") as error:
            SmoothSynthesizer.load(damaged)
        assert "\n" not in str(error.value), name


def test_a_model_files_complex_support_is_refused(tmp_path):
    """Complex numbers (the file edited, every checksum made again) passed the finite check and were read
    with their imaginary parts dropped (numpy's ComplexWarning), in a mixed table's version 3 arrays as in a
    numeric table's: refused as damaged, in one line."""
    for make, points in ((_mixed, "support_numeric"), (_numeric, "support_points")):
        path = tmp_path / f"{points}.synthdp"
        make().save(path)
        arrays = _arrays(path)
        with zipfile.ZipFile(path) as archive:
            version = json.loads(archive.read("model.json"))["format_version"]
        for name in (points, "support_weights"):
            edited = _rewritten(path, tmp_path / "complex.synthdp", {**arrays, name: arrays[name] + 0.5j}, version)
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # no ComplexWarning either
                with pytest.raises(SynthDPError, match="damaged") as error:
                    SmoothSynthesizer.load(edited)
            assert "\n" not in str(error.value), name


def test_conditions_on_a_nullable_coded_column_pass_over_its_missing_cells():
    """Levels [0, 1] of a nullable column decode to Int64 with missing cells: a condition or a given value
    selects the rows it names, a missing cell satisfying none."""
    rng = np.random.default_rng(3)
    flag = pd.array(rng.choice([0, 1], 400), dtype="Int64")
    flag[rng.random(400) < 0.2] = pd.NA
    frame = pd.DataFrame({"x": rng.uniform(0, 10, 400), "flag": flag})
    content = {"columns": {"x": [0, 10], "flag": {"type": "binary", "levels": [0, 1], "nullable": True}}}
    synth = SmoothSynthesizer(epsilon=2.0, delta=1e-6, seed=1).fit(frame, schema=content)
    model = synth._sampling_model()
    kept = model_file.where(model, "flag == 1")
    rows = model_file.draw(kept, 200, np.random.default_rng(0))
    assert (rows.flag == 1).all()
    given = model_file.given(model, pd.DataFrame({"flag": pd.array([1, 0], dtype="Int64")}), np.random.default_rng(0))
    assert given.flag.tolist() == [1, 0]


def test_a_model_loaded_in_a_new_process_samples_the_same_rows(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = _mixed()
    path = tmp_path / "m.synthdp"
    synth.save(path)
    out = tmp_path / "rows.csv"
    code = """
import sys
from synthdp import SmoothSynthesizer
SmoothSynthesizer.load(sys.argv[1]).sample(400, condition="age >= 40", seed=9).to_csv(sys.argv[2], index=False)
"""
    subprocess.run([sys.executable, "-c", code, str(path), str(out)], check=True, cwd=tmp_path)
    here = synth.sample(400, condition="age >= 40", seed=9)
    there = pd.read_csv(out, dtype={"sex": str, "kind": str})
    pd.testing.assert_frame_equal(there, here, check_dtype=False)


def test_the_file_holds_no_raw_value_and_no_pickle(tmp_path):
    """A planted distinctive value of the input is nowhere in the model file (its document or arrays),
    and every array loads with allow_pickle=False."""
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"a": rng.uniform(0, 100, 500), "b": rng.uniform(0, 1, 500)})
    frame.loc[17, "a"] = 61.72839506
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer(epsilon=1.0, seed=1).fit(frame, bounds={"a": [0, 100], "b": [0, 1]})
    path = tmp_path / "m.synthdp"
    synth.save(path)
    with zipfile.ZipFile(path) as archive:
        document = archive.read("model.json").decode()
        assert "61.728" not in document
        for member in archive.namelist():
            if member.endswith(".npy"):
                import io

                array = np.load(io.BytesIO(archive.read(member)), allow_pickle=False)
                assert not np.isclose(array, 61.72839506, rtol=0, atol=1e-6).any()
                assert not np.isclose(array, (61.72839506 / 100) * 2 - 1, rtol=0, atol=1e-9).any()


def test_a_damaged_edited_or_foreign_file_is_one_line(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = _numeric()
    good = tmp_path / "m.synthdp"
    synth.save(good)
    content = good.read_bytes()
    truncated = tmp_path / "truncated.synthdp"
    truncated.write_bytes(content[: len(content) // 2])
    foreign = tmp_path / "foreign.synthdp"
    foreign.write_text("not a model")
    cases = {truncated: "damaged, truncated", foreign: "damaged, truncated", tmp_path / "absent": "does not exist"}
    with zipfile.ZipFile(good) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    edits = {"version": lambda doc: {**doc, "format_version": 99}, "format": lambda doc: {**doc, "format": "other"},
             "weights": None, "arrays": lambda doc: {**doc, "arrays": []}, "arrays-null": lambda doc: {**doc, "arrays": None},
             "report": lambda doc: {**doc, "privacy_report": None}, "rows": lambda doc: {**doc, "rows": 1.5},
             "rows-negative": lambda doc: {**doc, "rows": -5}}
    for name, edit in edits.items():
        edited = tmp_path / f"{name}.synthdp"
        with zipfile.ZipFile(edited, "w") as archive:
            for member, data in members.items():
                if member == "model.json" and edit is not None:
                    data = json.dumps(edit(json.loads(data))).encode()
                if member == "support_weights.npy" and edit is None:
                    data = data[:-8] + np.float64(0.5).tobytes()
                archive.writestr(member, data)
        cases[edited] = {"version": "format version 99", "format": "not a synthdp model",
                         "weights": "does not match its checksum"}.get(name, "damaged")
    flipped = bytearray(content)  # the compressed bytes of an array member, inverted: a zlib error inside
    start = content.index(b"support_points.npy") + 200
    flipped[start:start + 50] = bytes(255 - byte for byte in flipped[start:start + 50])
    (tmp_path / "flipped.synthdp").write_bytes(bytes(flipped))
    cases[tmp_path / "flipped.synthdp"] = "damaged"
    with zipfile.ZipFile(tmp_path / "nested.synthdp", "w") as archive:  # JSON nested past the parser's recursion
        archive.writestr("model.json", "[" * 100_000 + "]" * 100_000)
    cases[tmp_path / "nested.synthdp"] = "damaged, truncated"
    for path, message in cases.items():
        with pytest.raises(SynthDPError, match=message) as error:
            SmoothSynthesizer.load(path)
        assert "\n" not in str(error.value)


def _row_frequencies(frame: pd.DataFrame) -> pd.Series:
    return frame.astype(str).agg("|".join, axis=1).value_counts()


@pytest.mark.parametrize("name, condition", [("numeric", "age >= 60 and bmi < 30"),
                                             ("mixed", "sex == 'Female' and kind != 'a'"),
                                             ("person", "x > 5")])
def test_conditional_rows_follow_the_fitted_distribution_restricted_to_the_condition(name, condition):
    """20 000 rows under the condition, against the model's own distribution restricted to it: every
    row satisfies the condition, and a chi-square test of the rows' frequencies against the
    restricted weights (decoded rows as categories, rare ones pooled so that each expects >= 5) passes
    at p >= 1e-4 (false failure 1e-4 per case, 3e-4 for the three)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = MODELS[name]()
    rows = synth.sample(20_000, condition=condition, seed=11)
    columns = [c for c in rows.columns if c != "person"]
    assert bool(rows[columns].eval(condition).all())
    kept = model_file.where(synth._sampling_model(), condition)
    support = kept.decode(kept.points)
    expected = pd.Series(kept.weights, index=support.astype(str).agg("|".join, axis=1)).groupby(level=0).sum()
    observed = _row_frequencies(rows[columns]).reindex(expected.index, fill_value=0)
    assert observed.sum() == len(rows)  # no row outside the restricted support
    counts = expected * len(rows)
    order = counts.sort_values().index
    pooled_obs, pooled_exp, bucket_obs, bucket_exp = [], [], 0.0, 0.0
    for key in order:
        bucket_obs, bucket_exp = bucket_obs + observed[key], bucket_exp + counts[key]
        if bucket_exp >= 5:
            pooled_obs.append(bucket_obs)
            pooled_exp.append(bucket_exp)
            bucket_obs = bucket_exp = 0.0
    if bucket_exp and pooled_exp:
        pooled_obs[-1] += bucket_obs
        pooled_exp[-1] += bucket_exp
    assert len(pooled_exp) >= 3
    assert stats.chisquare(pooled_obs, pooled_exp).pvalue >= 1e-4


def test_a_condition_without_mass_is_an_error_and_one_with_little_warns():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = _numeric()
    with pytest.raises(SynthDPError, match="no row of the fitted distribution"):
        synth.sample(10, condition="age > 200")
    with pytest.raises(SynthDPError, match="not an expression"):
        synth.sample(10, condition="age >>> 3")
    with pytest.raises(SynthDPError, match="true or false"):
        synth.sample(10, condition="age + 1")
    support = synth._sampling_model().decode(synth._sampling_model().points)
    oldest = int(support["age"].max())
    with pytest.warns(UserWarning, match="effective support points"):
        synth.sample(10, condition=f"age >= {oldest}")


@pytest.mark.parametrize("condition, detail", [
    ("name == 'abc", "(SyntaxError: unterminated string literal (detected at line 1) (<unknown>, line 1));"),
    ("age in [1, 2", "(SyntaxError: '[' was never closed (<unknown>, line 1));"),
    ("(" * 250 + "age > 1" + ")" * 250, "(SyntaxError: too many nested parentheses (<unknown>, line 1));"),
])
def test_an_unclosed_string_or_bracket_is_named_as_the_parser_names_it_on_every_python(condition, detail):
    """Python 3.12's tokenizer stops at an unclosed string or bracket with a TokenError whose text is a
    tuple ("(TokenError: ('unterminated string literal (detected at line 1)', (1, 9)))"); 3.11 gave the
    parser's SyntaxError, or "EOF in multi-line statement" for a bracket: the same message on every version."""
    with pytest.raises(SynthDPError) as refused:
        model_file.condition_expression(condition, ["age", "name"], {"age"})
    assert f"is not an expression over the columns {detail}" in str(refused.value)


def test_an_invalid_escape_in_a_condition_reads_as_python_reads_it_without_a_warning_on_every_python():
    """'x\\q' keeps its backslash; Python 3.12 and 3.13 also printed "<unknown>:1: SyntaxWarning: invalid
    escape sequence '\\q'" to stderr (3.11 gave a DeprecationWarning, hidden by default)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        expression, used = model_file.condition_expression(r"name == 'x\q'", ["age", "name"], {"age"})
    assert [str(warning.message) for warning in caught] == []
    assert expression == r"_synthdp_column_0 == 'x\\q'" and used == {"_synthdp_column_0": "name"}


def test_given_values_are_kept_and_the_rest_is_drawn():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = _mixed()
    known = pd.DataFrame({"sex": ["Male", "Female", "Female"], "kind": ["c", None, "b"]})
    rows = synth.sample_from_conditions(known, seed=1)
    assert rows["sex"].tolist() == ["Male", "Female", "Female"]
    assert rows.loc[0, "kind"] == "c" and rows.loc[2, "kind"] == "b"
    assert rows[["age", "income"]].notna().all().all()
    # the given frame's index and the columns' own types (a pandas user aligns by index)
    indexed = synth.sample_from_conditions(pd.DataFrame({"sex": ["Female", "Male"], "age": [30, 60]},
                                                        index=["a", "b"]), seed=1)
    assert list(indexed.index) == ["a", "b"] and indexed["age"].tolist() == [30, 60]
    assert indexed["age"].dtype == synth.sample(5, seed=1)["age"].dtype == np.int64
    with pytest.raises(SynthDPError, match="continuous column"):
        synth.sample_from_conditions(pd.DataFrame({"income": [12345.0]}))
    with pytest.raises(SynthDPError, match="not a column"):
        synth.sample_from_conditions(pd.DataFrame({"height": [1]}))


def test_sdv_s_conditions_and_num_rows_are_taken_as_sdv_users_write_them():
    """SDV's sample(num_rows=...) and sample_from_conditions([Condition(column_values, num_rows)]) (a
    duck-typed object of SDV's own included) give the rows a DataFrame of the same given values gives,
    in turn and indexed 0, 1, ...; a malformed condition is one line naming it."""
    from types import SimpleNamespace

    from synthdp import Condition

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = _mixed()
    assert synth.sample(num_rows=7, seed=1).equals(synth.sample(7, seed=1))
    with pytest.raises(SynthDPError, match="not both"):
        synth.sample(5, num_rows=5)
    sdv_like = SimpleNamespace(column_values={"sex": "Male", "kind": "c"}, num_rows=40)
    rows = synth.sample_from_conditions([Condition({"sex": "Female"}, num_rows=3), sdv_like], seed=2)
    assert list(rows.index) == list(range(43)) and rows["sex"].tolist() == ["Female"] * 3 + ["Male"] * 40
    assert (rows["kind"].iloc[3:] == "c").all() and rows[["age", "income"]].notna().all().all()
    assert rows.dtypes.equals(synth.sample(5, seed=1).dtypes)
    one_by_one = synth.sample_from_conditions(pd.DataFrame({"sex": ["Female"]}), seed=4)
    assert synth.sample_from_conditions([Condition({"sex": "Female"})], seed=4).equals(one_by_one)
    for bad, message in [([Condition({})], "condition 0 is not a Condition with column_values"),
                         ([Condition({"sex": "Male"}, 0)], "condition 0's num_rows must be an integer >= 1"),
                         ([], "no conditions"), ({"sex": "Male"}, "a DataFrame of given values or a list of Condition")]:
        with pytest.raises(SynthDPError, match=message):
            synth.sample_from_conditions(bad)


def test_a_condition_too_long_for_pandas_and_a_level_that_is_none_say_so():
    """400 terms ran pandas' evaluator out of stack: the error said "not an expression (RecursionError)"
    and pointed to backticks. Where pandas runs out of stack depended on Python's version (400 terms did
    on 3.11, not on 3.12 or 3.13, which stopped between 400 and 600): MAX_CONDITION_OPERATORS now draws
    the line before pandas, the same on every version. 150 comparisons joined by "and" (299 operators;
    a sign is no operator) are evaluated, 151 refused in one line, as are 301 additions. A level that is
    none of a nullable column's listed '(missing)', which no condition compares with (missing cells are
    asked for with isna())."""
    rng = np.random.default_rng(3)
    sex = pd.Series(rng.choice(["F", "M"], 400), dtype=object)
    sex[:20] = None
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 400), "sex": sex})
    schema = {"columns": {"x": {"bounds": [0, 1]}, "sex": {"type": "binary", "levels": ["F", "M"], "nullable": True}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer(epsilon=2.0, seed=1).fit(frame, schema=schema)
    assert len(synth.sample(5, condition=" and ".join(["x > -1"] * 150))) == 5
    for condition in (" and ".join(["x > -1"] * 151), " + ".join(["x"] * 302) + " > 0"):
        with pytest.raises(SynthDPError, match=r"has more than 300 operators: shorten it \(a column's values"):
            synth.sample(5, condition=condition)
    with pytest.raises(SynthDPError, match=r"'sex' has text levels \('F', 'M'\): compare it"):
        synth.sample(5, condition="sex == 'Q'")


def test_a_condition_on_a_nullable_boolean_leaves_its_missing_cells_out_as_pandas_does():
    """On a column fitted as a pandas nullable boolean, ``flag != True`` kept the rows whose flag is
    missing (about half the rows drawn), where ``sample().query`` leaves them out (pandas' NA satisfies no
    comparison); ``flag.isna()`` still asks for them, and 'True' as text still reads as True. The fitted
    distribution holds about a tenth missing cells (seeded): none among 2 000 rows has probability
    below 1e-80."""
    rng = np.random.default_rng(5)
    flag = pd.array(rng.random(600) < 0.4, dtype="boolean")
    flag[:60] = pd.NA
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 600), "flag": flag})
    schema = {"columns": {"x": {"bounds": [0, 1]},
                          "flag": {"type": "binary", "levels": ["False", "True"], "nullable": True}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer(epsilon=2.0, seed=1).fit(frame, schema=schema)
    for condition in ("flag != True", "not (flag == True)", "flag.isin([False])"):
        rows = synth.sample(2000, condition=condition, seed=2)["flag"]
        assert rows.notna().all() and not rows.any(), condition
        assert synth.sample(2000, seed=2).query(condition)["flag"].notna().all()
    assert synth.sample(2000, condition="flag.isna()", seed=2)["flag"].isna().all()
    assert synth.sample(500, condition="flag == 'True'", seed=2)["flag"].all()


def test_chunks_give_the_rows_of_one_draw(monkeypatch):
    """Drawn chunk by chunk (the CLI's stream) or at once, the same rows under a seed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = _numeric()
    model = synth._sampling_model()
    monkeypatch.setattr(model_file, "CHUNK_VALUES", 5 * 1_000)  # 1 000 rows per chunk
    chunks = list(model_file.draw_chunks(model, 3_500, np.random.default_rng(3)))
    assert [len(chunk) for chunk in chunks] == [1000, 1000, 1000, 500]
    pd.testing.assert_frame_equal(pd.concat(chunks, ignore_index=True),
                                  model_file.draw(model, 3_500, np.random.default_rng(3)))


def test_fit_then_sample_from_the_command_line(tmp_path, monkeypatch, capsys):
    model = tmp_path / "clinic.synthdp"
    report = tmp_path / "report.json"
    assert main(["fit", str(CLINIC), "-o", str(model), "--epsilon", "1", "--bounds", str(CLINIC_BOUNDS),
                 "--report", str(report), "--seed", "4", "--quiet"]) == 0
    assert json.loads(report.read_text())["privacy"]["epsilon_spent"] <= 1.0
    monkeypatch.setattr(model_file, "CHUNK_VALUES", 5 * 1_000)  # several chunks through the stream
    out = tmp_path / "rows.csv"
    assert main(["sample", str(model), "-n", "2500", "-o", str(out), "--seed", "8", "--where", "age >= 50",
                 "--quiet"]) == 0
    written = pd.read_csv(out)
    expected = SmoothSynthesizer.load(model).sample(2500, condition="age >= 50", seed=8)
    assert len(written) == 2500 and (written["age"] >= 50).all()
    np.testing.assert_allclose(written.to_numpy(float), expected.to_numpy(float))
    # the output may not be the model, and a failed run writes nothing (the model's bytes are untouched)
    saved = model.read_bytes()
    assert main(["sample", str(model), "-n", "5", "-o", str(model)]) == 2
    assert "is the model file" in capsys.readouterr().err
    missing = tmp_path / "none.csv"
    assert main(["sample", str(model), "-n", "5", "-o", str(missing), "--where", "age > 500"]) == 2
    assert not missing.exists() and model.read_bytes() == saved


def test_generate_writes_the_model_beside_the_rows(tmp_path):
    out, model = tmp_path / "rows.csv", tmp_path / "m.synthdp"
    assert main(["generate", str(CLINIC), "-o", str(out), "--model-out", str(model), "--epsilon", "1",
                 "--bounds", str(CLINIC_BOUNDS), "--seed", "6", "--quiet"]) == 0
    loaded = SmoothSynthesizer.load(model)
    assert list(loaded.sample(10, seed=1).columns) == list(pd.read_csv(out).columns)
    assert main(["generate", str(CLINIC), "-o", str(out), "--model-out", str(out), "--epsilon", "1",
                 "--bounds", str(CLINIC_BOUNDS), "--quiet"]) == 2  # one path for two outputs


def test_an_integer_column_is_given_as_a_number_beside_a_missing_cell():
    """docs/cli.md's form: a partial DataFrame with missing cells for the columns to draw. A NaN
    makes pandas hold an integer column as floats (60.0), which, compared as text with the support's
    "60", had no mass; integers now compare as numbers. A given value of a numeric column that is
    not a number is one line naming the column (not a conversion traceback)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = _numeric()
    support = synth._sampling_model().decode(synth._sampling_model().points)
    age = int(support["age"].mode().iloc[0])  # an age the support holds
    known = pd.DataFrame({"age": [age, np.nan], "visits_per_year": [np.nan, int(support["visits_per_year"].iloc[0])]})
    rows = synth.sample_from_conditions(known, seed=1)
    assert rows.loc[0, "age"] == age and rows.loc[1, "visits_per_year"] == known.loc[1, "visits_per_year"]
    assert rows[["bmi", "systolic_bp", "cholesterol"]].notna().all().all()
    with pytest.raises(SynthDPError, match="a given value of column 'age' is not a number"):
        synth.sample_from_conditions(pd.DataFrame({"age": ["sixty"]}))


def _typed_frame():
    """A DataFrame with pandas categories and naive datetimes (and a missing date), and its schema."""
    rng = np.random.default_rng(4)
    n = 400
    frame = pd.DataFrame({"x": rng.uniform(0, 1, n), "kind": pd.Categorical(rng.choice(["a", "b", "c"], n)),
                          "day": (pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 300, n), unit="D"))
                          .astype("datetime64[ns]"),
                          "at": (pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 10**6, n), unit="s"))
                          .astype("datetime64[us]")})
    frame.loc[3, "day"] = pd.NaT
    schema = {"columns": {"x": {"bounds": [0, 1]}, "kind": {"type": "categorical", "levels": ["a", "b", "c"]},
                          "day": {"type": "date", "bounds": ["2020-01-01", "2020-12-31"], "nullable": True},
                          "at": {"type": "datetime", "bounds": ["2020-01-01T00:00:00", "2020-01-20T00:00:00"]}}}
    return frame, schema


def test_a_dataframe_s_categories_and_datetimes_come_back_as_they_went_in_and_through_the_model_file(tmp_path):
    frame, schema = _typed_frame()
    synth = SmoothSynthesizer(epsilon=1.0, seed=1).fit(frame, schema=schema)
    out = synth.sample(300, seed=5)
    assert out["kind"].dtype == pd.CategoricalDtype(["a", "b", "c", "other"])
    # one unit whatever the input's (pandas can pick it from the values: a value with nanoseconds makes it ns)
    assert out["day"].dtype == np.dtype("datetime64[us]") and out["at"].dtype == np.dtype("datetime64[us]")
    assert out["day"].between(pd.Timestamp("2020-01-01"), pd.Timestamp("2020-12-31")).all()
    assert (out["day"].dt.normalize() == out["day"]).all()  # whole days
    synth.save(tmp_path / "m.synthdp")
    pd.testing.assert_frame_equal(SmoothSynthesizer.load(tmp_path / "m.synthdp").sample(300, seed=5), out)
    given = synth.sample_from_conditions(pd.DataFrame({"day": pd.to_datetime(["2020-03-01", "2020-07-04"]),
                                                       "kind": ["b", None]}), seed=2)
    assert list(given["day"]) == list(pd.to_datetime(["2020-03-01", "2020-07-04"])) and given["kind"].iloc[0] == "b"
    assert given.dtypes.equals(out.dtypes)
    copies = synth.sample_copies(2, 200, seed=3)
    assert all(table.dtypes.equals(out.dtypes) for table in copies.tables) and copies.reference.dtypes.equals(out.dtypes)
    # a file's columns come back as the file's text, as generate writes them
    frame.to_csv(tmp_path / "t.csv", index=False)
    from_file = SmoothSynthesizer(epsilon=1.0, seed=1).fit(tmp_path / "t.csv", schema=schema).sample(5, seed=5)
    assert not isinstance(from_file["kind"].dtype, pd.CategoricalDtype) and from_file["day"].dtype.kind != "M"


def test_a_dataframe_s_booleans_and_ordered_categories_come_back_as_they_went_in(tmp_path):
    """A bool column came back as the text 'True'/'False', a nullable boolean too, an ordered category
    unordered, a category of numbers declared with numeric levels as missing values only (its decoded numbers
    are not its levels' text), and a category column whose name is a number (7, read as '7') as text. Each
    comes back in its pandas type (the container's, public), from sample, sample_copies and the model file."""
    rng = np.random.default_rng(6)
    n = 400
    nullable = pd.array(rng.random(n) < 0.3, dtype="boolean")
    nullable[:20] = pd.NA
    frame = pd.DataFrame({"x": rng.uniform(0, 1, n), "flag": rng.random(n) < 0.4, "maybe": nullable,
                          "coded": rng.random(n) < 0.5,
                          "scale": pd.Categorical(rng.choice(["low", "mid", "high"], n),
                                                  categories=["low", "mid", "high"], ordered=True),
                          "code": pd.Categorical(rng.choice([3, 1, 2], n), categories=[3, 1, 2]),
                          7: pd.Categorical(rng.choice(["p", "q"], n))})
    schema = {"columns": {"x": {"bounds": [0, 1]}, "flag": {"type": "binary", "levels": ["False", "True"]},
                          "maybe": {"type": "binary", "levels": ["False", "True"], "nullable": True},
                          "coded": {"type": "binary", "levels": [0, 1]},
                          "scale": {"type": "categorical", "levels": ["low", "mid", "high"], "other": False},
                          "code": {"type": "categorical", "levels": [3, 1, 2], "other": False},
                          "7": {"type": "binary", "levels": ["p", "q"]}}}
    synth = SmoothSynthesizer(epsilon=1.0, seed=1).fit(frame, schema=schema)
    out = synth.sample(2000, seed=5)
    assert list(out.columns) == ["x", "flag", "maybe", "coded", "scale", "code", "7"]
    assert out["flag"].dtype == np.dtype(bool) and out["coded"].dtype == np.dtype(bool)
    assert out["flag"].any() and not out["flag"].all()
    assert out["maybe"].dtype == pd.BooleanDtype() and out["maybe"].isna().any() and out["maybe"].any()
    assert out["scale"].dtype == pd.CategoricalDtype(["low", "mid", "high"], ordered=True)
    assert out["code"].dtype == pd.CategoricalDtype([3, 1, 2]) and set(out["code"]) == {1, 2, 3}
    assert out["7"].dtype == pd.CategoricalDtype(["p", "q"])
    synth.save(tmp_path / "m.synthdp")
    pd.testing.assert_frame_equal(SmoothSynthesizer.load(tmp_path / "m.synthdp").sample(2000, seed=5), out)
    assert all(table.dtypes.equals(out.dtypes) for table in synth.sample_copies(2, 100, seed=3).tables)
    # with an "other" level a column is no boolean: its levels stay text
    other = SmoothSynthesizer(epsilon=1.0, seed=1).fit(
        frame[["x", "flag"]], schema={"columns": {"x": {"bounds": [0, 1]},
                                                  "flag": {"type": "categorical", "levels": ["False", "True"]}}})
    assert not pd.api.types.is_bool_dtype(other.sample(5, seed=1)["flag"])


def test_a_category_of_booleans_comes_back_as_a_bool_column_does(tmp_path):
    """pd.Categorical([True, False, ...]) is drafted and fitted as binary, as a bool column is, but came back
    as a category of the text levels 'False' and 'True' (== True held nowhere). It now comes back as a bool
    column does: bool, boolean where nullable, whether or not a cell (or every cell) is missing, since its
    categories are the rows' (none where every cell is missing); a category of the text levels stays one."""
    from synthdp.reader.draft import draft_schema

    rng = np.random.default_rng(3)
    n = 400
    flags = rng.random(n) < 0.4
    x = rng.uniform(0, 1, n)
    plain = pd.DataFrame({"x": x, "flag": flags})
    as_category = pd.DataFrame({"x": x, "flag": pd.Categorical(flags)})
    drafted = draft_schema(as_category)[0]["columns"]["flag"]
    assert drafted == draft_schema(plain)[0]["columns"]["flag"] == {"type": "binary", "levels": ["False", "True"]}
    schema = {"columns": {"x": {"bounds": [0, 1]}, "flag": drafted}}
    synth = SmoothSynthesizer(epsilon=1.0, seed=1).fit(as_category, schema=schema)
    out = synth.sample(500, seed=2)
    reference = SmoothSynthesizer(epsilon=1.0, seed=1).fit(plain, schema=schema).sample(500, seed=2)
    pd.testing.assert_frame_equal(out, reference)
    assert out["flag"].dtype == np.dtype(bool) and out["flag"].any() and not out["flag"].all()
    synth.save(tmp_path / "m.synthdp")
    pd.testing.assert_frame_equal(SmoothSynthesizer.load(tmp_path / "m.synthdp").sample(500, seed=2), out)
    nullable = {"columns": {"x": {"bounds": [0, 1]}, "flag": {**drafted, "nullable": True}}}
    for cells in ([None] * n, [True] + [None] * (n - 1), [True, None] * (n // 2)):  # neighbours: one cell apart
        frame = pd.DataFrame({"x": x, "flag": pd.Series(cells, dtype=object).astype("category")})
        assert SmoothSynthesizer(epsilon=1.0, seed=1).fit(frame, schema=nullable).sample(50, seed=2)[
            "flag"].dtype == pd.BooleanDtype()
    text = pd.DataFrame({"x": x, "flag": pd.Categorical(np.where(flags, "True", "False"))})
    back = SmoothSynthesizer(epsilon=1.0, seed=1).fit(text, schema=schema).sample(50, seed=2)["flag"]
    assert back.dtype == pd.CategoricalDtype(["False", "True"])


def test_a_condition_compares_an_ordered_category_by_its_order_as_pandas_does_on_the_sample():
    """``scale > 'low'`` on a column fitted as an ordered category kept 'mid' alone (text: 'high' < 'low');
    now 'mid' and 'high', as ``sample().query`` keeps. Each level holds about a third of the fitted mass
    (seeded): a level missing from 600 conditioned rows has probability below 1e-100 at a third."""
    rng = np.random.default_rng(6)
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 600),
                          "scale": pd.Categorical(rng.choice(["low", "mid", "high"], 600),
                                                  categories=["low", "mid", "high"], ordered=True)})
    schema = {"columns": {"x": {"bounds": [0, 1]},
                          "scale": {"type": "categorical", "levels": ["low", "mid", "high"], "other": False}}}
    with pytest.warns(UserWarning):  # the testing seed's
        synth = SmoothSynthesizer(epsilon=2.0, seed=1).fit(frame, schema=schema)
    assert set(synth.sample(600, condition="scale > 'low'", seed=2)["scale"]) == {"mid", "high"}
    assert set(synth.sample(600, condition="scale.between('low', 'mid')", seed=2)["scale"]) == {"low", "mid"}
    assert set(synth.sample(600, seed=2).query("scale > 'low'")["scale"]) == {"mid", "high"}
    with pytest.raises(SynthDPError, match=r"compares ordered column 'scale' with something other than one of its "
                                           r"levels \('low', 'mid', 'high'\)$"):
        synth.sample(10, condition="scale > 'lowest'")


def _boolean_back_from_both(first: pd.DataFrame, second: pd.DataFrame, schema: dict, folder: Path) -> None:
    """Both neighbouring frames' fits give 'flag' back as boolean, from the fit and from its model file,
    whose dtypes say so alike."""
    types, stored = [], []
    for i, frame in enumerate((first, second)):
        synth = SmoothSynthesizer(epsilon=1.0, seed=1).fit(frame, schema=schema)
        synth.save(folder / f"{i}.synthdp")
        with zipfile.ZipFile(folder / f"{i}.synthdp") as archive:
            stored.append(json.loads(archive.read("model.json")).get("dtypes"))
        types += [synth.sample(50, seed=2)["flag"].dtype,
                  SmoothSynthesizer.load(folder / f"{i}.synthdp").sample(50, seed=2)["flag"].dtype]
    assert stored[0] == stored[1] == {"flag": "boolean"}
    assert types == [pd.BooleanDtype()] * 4


def test_a_nullable_boolean_comes_back_as_one_whether_or_not_a_cell_was_missing(tmp_path):
    """pandas.read_csv reads a column of True and False as bool, but as object where one cell is
    missing: that type comes from the rows, not from the container. A nullable one came back as
    boolean from the first and as the text 'True'/'False' from the second, and the model file's dtypes
    said which, so the release told whether a real cell was missing. Both now come back as boolean."""
    rng = np.random.default_rng(8)
    flags = rng.choice(["True", "False"], 300)
    lines = ["x,flag"] + [f"{x:.4f},{flag}" for x, flag in zip(rng.uniform(0, 1, 300), flags)]
    schema = {"columns": {"x": {"bounds": [0, 1]},
                          "flag": {"type": "binary", "levels": ["False", "True"], "nullable": True}}}
    full = pd.read_csv(io.StringIO("\n".join(lines)))
    lines[18] = lines[18].split(",")[0] + ","  # one row's flag missing: a neighbouring table
    gap = pd.read_csv(io.StringIO("\n".join(lines)))
    assert full["flag"].dtype == np.dtype(bool) and gap["flag"].dtype == np.dtype(object)  # as pandas reads them
    _boolean_back_from_both(full, gap, schema, tmp_path)


def test_a_nullable_boolean_comes_back_as_one_whether_or_not_every_cell_was_missing(tmp_path):
    """pandas.read_csv reads a column whose every cell is missing as float64, and the same column with
    one True as object: the first came back as the text 'True'/'False' and the second as boolean, and
    the model file's dtypes said which, so the release told whether one real cell was there."""
    lines = ["x,flag"] + [f"{i / 200:.4f}," for i in range(200)]
    schema = {"columns": {"x": {"bounds": [0, 1]},
                          "flag": {"type": "binary", "levels": ["False", "True"], "nullable": True}}}
    empty = pd.read_csv(io.StringIO("\n".join(lines)))
    lines[18] = lines[18] + "True"  # one row's flag there: a neighbouring table
    one = pd.read_csv(io.StringIO("\n".join(lines)))
    assert empty["flag"].dtype == np.dtype(float) and one["flag"].dtype == np.dtype(object)  # as pandas reads them
    _boolean_back_from_both(empty, one, schema, tmp_path)
    as_text = pd.read_csv(io.StringIO("\n".join(lines)), dtype={"flag": "string"})  # a text type: text back
    synth = SmoothSynthesizer(epsilon=1.0, seed=1).fit(as_text, schema=schema)
    assert not pd.api.types.is_bool_dtype(synth.sample(5, seed=2)["flag"])


def test_a_nullable_truth_column_of_levels_0_and_1_comes_back_as_one_type_whether_or_not_a_cell_was_missing():
    """The same leak for levels the schema gives as the numbers 0 and 1: pandas.read_csv reads True and
    False as bool, as object beside one missing cell; the first came back as boolean, the second as
    int64, so the sample's type told whether a real cell was missing."""
    rng = np.random.default_rng(8)
    lines = ["x,flag"] + [f"{x:.4f},{flag}" for x, flag in zip(rng.uniform(0, 1, 300),
                                                                rng.choice(["True", "False"], 300))]
    schema = {"columns": {"x": {"bounds": [0, 1]}, "flag": {"type": "binary", "levels": [0, 1], "nullable": True}}}
    full = pd.read_csv(io.StringIO("\n".join(lines)))
    lines[18] = lines[18].split(",")[0] + ","  # one row's flag missing: a neighbouring table
    gap = pd.read_csv(io.StringIO("\n".join(lines)))
    assert full["flag"].dtype == np.dtype(bool) and gap["flag"].dtype == np.dtype(object)  # as pandas reads them
    types = [SmoothSynthesizer(epsilon=1.0, seed=1).fit(frame, schema=schema).sample(50, seed=2)["flag"].dtype
             for frame in (full, gap)]
    assert types == [pd.BooleanDtype()] * 2


def test_the_rows_of_conditions_are_bounded_as_a_sample_s_are(monkeypatch):
    """sample(10**11) is one line over the output bound; a Condition's num_rows of 10**11 tried to
    allocate 745 GiB (MemoryError), and fewer, a few GB, could take the machine's memory."""
    from synthdp import Condition

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = _mixed()
    with pytest.raises(SynthDPError, match="the conditions' rows: .* over the output bound"):
        synth.sample_from_conditions([Condition({"sex": "Female"}, num_rows=10**11)])
    monkeypatch.setattr(model_file, "MAX_OUTPUT_VALUES", 50 * len(synth.sample(1, seed=1).columns))
    assert len(synth.sample_from_conditions([Condition({"sex": "Female"}, num_rows=25)] * 2)) == 50
    with pytest.raises(SynthDPError, match="the conditions' rows: 51 rows"):  # all the conditions' rows
        synth.sample_from_conditions([Condition({"sex": "Female"}, num_rows=25)] * 2 + [Condition({"sex": "Male"})])


def test_synthdp_sample_writes_a_dataframe_fit_s_model_file_as_generate_writes_a_table(tmp_path):
    """synthdp sample wrote a model file saved from a DataFrame's fit in that fit's pandas types: a date as
    "2020-06-23 00:00:00.000000" (not the ISO date of every other output), a boolean as "false" (which the
    schema's levels "False" and "True" do not read back). It writes the file's text (a Parquet file's dates
    as timestamps), the rows Python draws."""
    frame, schema = _typed_frame()
    frame["flag"] = frame["x"] > 0.5
    schema["columns"]["flag"] = {"type": "binary", "levels": ["False", "True"]}
    synth = SmoothSynthesizer(epsilon=1.0, seed=1).fit(frame, schema=schema)
    synth.save(tmp_path / "m.synthdp")
    for suffix in ("csv", "parquet"):
        if suffix == "parquet":
            pytest.importorskip("pyarrow")
        out = tmp_path / f"rows.{suffix}"
        assert main(["sample", str(tmp_path / "m.synthdp"), "-n", "300", "-o", str(out), "--seed", "5", "--quiet"]) == 0
        rows = pd.read_csv(out, dtype=str) if suffix == "csv" else pd.read_parquet(out)
        if suffix == "csv":
            assert rows["day"].dropna().str.fullmatch(r"\d{4}-\d\d-\d\d").all()
            assert rows["at"].str.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d").all()
        else:  # Parquet stores them as timestamps: whole days and whole seconds
            assert str(rows["day"].dtype) == str(rows["at"].dtype) == "datetime64[us]"
            assert (rows["day"].dropna() == rows["day"].dropna().dt.normalize()).all()
            assert (rows["at"] == rows["at"].dt.floor("s")).all()
        assert set(rows["flag"]) == {"False", "True"}, suffix
        typed = synth.sample(300, seed=5)
        assert (pd.to_datetime(rows["day"]) == typed["day"]).sum() == typed["day"].notna().sum()
        assert (rows["flag"] == typed["flag"].astype(str)).all()


def test_a_condition_compares_date_and_datetime_columns_as_times_not_as_text(tmp_path, capsys):
    """A date or datetime column's values are ISO text; a condition's text compared with one is read as an
    ISO time, so that "day < '2020-6-1'" keeps the days before June (as text, '2020-10-02' < '2020-6-1':
    it kept every month from October on, and "day >= '2020-6-1'" had no mass), '2020-01-05 12:00' orders
    with the datetimes that decode with a T, and a number or text that is no ISO time is one line."""
    frame, schema = _typed_frame()
    synth = SmoothSynthesizer(epsilon=1.0, seed=1).fit(frame, schema=schema)
    model = synth._sampling_model()
    support = model.typed(model.decode(model.points))
    cases = {"day < '2020-6-1'": support["day"] < pd.Timestamp("2020-06-01"),
             "'2020-6-1' <= day < '2020-8-1'": support["day"].between(pd.Timestamp("2020-06-01"),
                                                                       pd.Timestamp("2020-07-31")),
             "day.between('2020-2-1', '2020-3-1') or day in ['2020-7-4']":
                 support["day"].between(pd.Timestamp("2020-02-01"), pd.Timestamp("2020-03-01"))
                 | (support["day"] == pd.Timestamp("2020-07-04")),
             "at < '2020-01-05 12:00'": support["at"] < pd.Timestamp("2020-01-05 12:00"),
             "at >= '2020-01-05'": support["at"] >= pd.Timestamp("2020-01-05")}
    for condition, expected in cases.items():
        expected = expected.fillna(False).to_numpy(dtype=bool)
        assert 0 < expected.sum() < len(expected), condition
        kept = model_file.where(model, condition)
        np.testing.assert_array_equal(kept.weights, model.weights[expected] / model.weights[expected].sum(),
                                      err_msg=condition)
    rows = synth.sample(200, condition="day < '2020-6-1'", seed=2)
    assert (rows["day"] < pd.Timestamp("2020-06-01")).all()
    for condition, message in {"day > 5": "with a number", "at in [-1]": "with a number",
                               "day > 'June'": "not an ISO date", "at > '2020-01-05T00:00+02:00'": "not an ISO datetime"}.items():
        with pytest.raises(SynthDPError, match=message):
            model_file.where(model, condition)
    synth.save(tmp_path / "m.synthdp")
    out = tmp_path / "june.csv"
    assert main(["sample", str(tmp_path / "m.synthdp"), "-n", "50", "-o", str(out), "--quiet", "--where",
                 "day >= '2020-6-1' and day < '2020-7-1'"]) == 0
    assert pd.read_csv(out)["day"].str.startswith("2020-06-").all()


@pytest.mark.parametrize("dtypes", [{"kind": "object"}, {"day": "datetime64[ns, UTC]"}, ["category"],
                                    {"x": "datetime64[us]"}, {"day": "category"}, {"kind": "bool"},
                                    {"x": "boolean"}, {"day": "category (ordered)"}])
def test_a_model_file_whose_dtypes_were_edited_is_refused(tmp_path, dtypes):
    frame, schema = _typed_frame()
    SmoothSynthesizer(epsilon=1.0, seed=1).fit(frame, schema=schema).save(tmp_path / "m.synthdp")
    with zipfile.ZipFile(tmp_path / "m.synthdp") as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    document = json.loads(members["model.json"])
    document["dtypes"] = dtypes
    document["document_sha256"] = model_file.document_checksum(document)  # past the checksum: the field's check
    members["model.json"] = json.dumps(document).encode()
    with zipfile.ZipFile(tmp_path / "e.synthdp", "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    with pytest.raises(SynthDPError, match="damaged or was edited .its dtypes"):
        SmoothSynthesizer.load(tmp_path / "e.synthdp")


def test_sampling_seeds_are_checked_in_one_line(tmp_path, capsys):
    synth = _mixed()
    for seed in (-1, 1.5, True, "3"):
        with pytest.raises(SynthDPError, match="seed must be an integer >= 0"):
            synth.sample(3, seed=seed)
    assert len(synth.sample(3, seed=np.int64(3))) == 3
    synth.save(tmp_path / "m.synthdp")
    code = main(["sample", str(tmp_path / "m.synthdp"), "-n", "5", "-o", str(tmp_path / "o.csv"), "--seed", "-1"])
    assert code == 2 and "--seed must be an integer >= 0" in capsys.readouterr().err
    assert not (tmp_path / "o.csv").exists()


def test_given_values_off_a_column_s_grid_or_named_twice_are_refused():
    synth = _mixed()
    for known, message in ((pd.DataFrame({"age": [60.6]}), "'age' is not a whole number"),
                           (pd.DataFrame([[50, 51]], columns=["age", "age"]), "column 'age' twice")):
        with pytest.raises(SynthDPError, match=message):
            synth.sample_from_conditions(known, seed=1)
    assert synth.sample_from_conditions(pd.DataFrame({"age": [60.0]}), seed=1)["age"].iloc[0] == 60


def test_given_rows_by_person_get_units_of_the_bounded_sizes_and_types_do_not_depend_on_the_rows(tmp_path):
    """With a privacy unit, the given rows' units are drawn once for all of them (at most
    max_rows_per_unit rows each, as sample's are); every column's type is sample's, for no rows,
    for rows whose text cells are all missing, and under a condition."""
    synth = _by_person()
    given = synth.sample_from_conditions(pd.DataFrame({"x": [np.nan] * 40}), seed=2)
    assert given["person"].value_counts().max() <= 5 and given["person"].nunique() >= 8
    reference = synth.sample(10, seed=1).dtypes
    assert given.dtypes.equals(reference)
    empty = synth.sample_from_conditions(pd.DataFrame({"x": pd.Series([], dtype=float)}), seed=2)
    assert empty.empty and empty.dtypes.equals(reference)
    with pytest.raises(SynthDPError, match="unit column 'person' cannot be conditioned on"):
        synth.sample(3, condition="person == 'p1'")
    with pytest.raises(SynthDPError, match="it is a folder"):
        synth.save(tmp_path)


def _coded_beside_other() -> SmoothSynthesizer:
    """A fit of a categorical column of numeric levels whose rows also hold a code that is none of them
    (999, "other")."""
    rng = np.random.default_rng(7)
    codes = rng.choice([250, 272, 278, 401, 999], 800, p=[0.3, 0.2, 0.2, 0.2, 0.1])  # 999: not a level, "other"
    frame = pd.DataFrame({"icd": codes, "x": rng.uniform(0, 1, 800)})
    schema = {"columns": {"icd": {"type": "categorical", "levels": [250, 272, 278, 401]}, "x": {"bounds": [0, 1]}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SmoothSynthesizer(epsilon=2.0, seed=1).fit(frame, schema=schema)


def test_given_rows_of_a_coded_column_beside_other_come_back_in_sample_s_type():
    """Each given row was drawn and decoded alone: a coded column decoded to numbers where that row was
    not "other" and to text where it was, so the rows together made an object column of 1 and 'other'.
    The rows are decoded together, as sample decodes its rows: one type, the same values as sample's."""
    synth = _coded_beside_other()
    given = synth.sample_from_conditions(pd.DataFrame({"x": [np.nan] * 60}), seed=2)
    assert (given["icd"].astype(str) == "other").any() and (given["icd"].astype(str) != "other").any()
    assert given["icd"].map(type).nunique() == 1  # not 250 beside 'other'
    assert given.dtypes.equals(synth.sample(4000, seed=2).dtypes)


def test_a_given_date_or_time_is_read_as_one_whatever_its_iso_spelling():
    """A condition reads '2020-3-1' as a date; a given value compared as text had no mass unless written
    as the column writes its values ('2020-03-01'), and text that is no date at all was "no mass" too.
    A given date or time is read as one (a date's time of day dropped, as the input's is), the row
    comes back with the column's own value, and text that is no ISO date or time is one line naming
    the column."""
    frame, schema = _typed_frame()
    synth = SmoothSynthesizer(epsilon=1.0, seed=1).fit(frame, schema=schema)
    model = synth._sampling_model()
    support = model.decode(model.points)
    day = pd.Timestamp(support["day"].dropna().iloc[0])
    at = pd.Timestamp(support["at"].iloc[0])
    expected = synth.sample_from_conditions(pd.DataFrame({"day": [day], "at": [at]}), seed=2)
    for spelling in ([day.strftime("%Y-%m-%d")], [f"{day.year}-{day.month}-{day.day}"],
                     [day.strftime("%Y-%m-%dT00:00:00")], [day + pd.Timedelta(hours=13)]):
        for at_spelling in (at.strftime("%Y-%m-%dT%H:%M:%S"), at.strftime("%Y-%m-%d %H:%M:%S")):
            given = synth.sample_from_conditions(pd.DataFrame({"day": spelling, "at": [at_spelling]}), seed=2)
            pd.testing.assert_frame_equal(given, expected)
    assert expected["day"].iloc[0] == day and expected["at"].iloc[0] == at
    for value, kind in (("not a date", "date column 'day'"), (20200301, "date column 'day'")):
        with pytest.raises(SynthDPError, match=f"a given value of {kind} is not an ISO date") as error:
            synth.sample_from_conditions(pd.DataFrame({"day": [value]}), seed=2)
        assert "\n" not in str(error.value)
    with pytest.raises(SynthDPError, match="datetime column 'at' is not an ISO datetime"):
        synth.sample_from_conditions(pd.DataFrame({"at": ["2020-01-02T03:04:05+02:00"]}), seed=2)


def test_a_nullable_text_column_keeps_its_type_when_every_drawn_cell_is_missing():
    rng = np.random.default_rng(3)
    city = rng.choice(["a", "b"], 800).astype(object)
    city[:300] = None
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 800), "city": city})
    schema = {"columns": {"x": {"bounds": [0, 1]}, "city": {"type": "categorical", "levels": ["a", "b"],
                                                            "nullable": True}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer(epsilon=4.0, seed=1).fit(frame, schema=schema)
        missing = synth.sample(50, condition="city.isna()", seed=1)
    assert missing["city"].isna().all() and missing.dtypes.equals(synth.sample(50, seed=1).dtypes)


def test_given_levels_of_a_partial_frame_match_by_value():
    """A partial frame of whole numbers holds them as floats (1.0 beside a missing cell): a coded
    categorical column's given value is its level by value, written as the column's level."""
    rng = np.random.default_rng(6)
    frame = pd.DataFrame({"grp": rng.integers(1, 4, 600), "k": rng.integers(1, 4, 600), "x": rng.uniform(0, 1, 600)})
    schema = {"columns": {"grp": {"type": "categorical", "levels": ["1", "2", "3"]},
                          "k": {"type": "categorical", "levels": ["1", "2", "3"]}, "x": {"bounds": [0, 1]}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer(epsilon=2.0, seed=1).fit(frame, schema=schema)
    given = synth.sample_from_conditions(pd.DataFrame({"grp": [1, None], "k": [None, 2]}), seed=1)
    assert given["grp"].iloc[0] == "1" and given["k"].iloc[1] == "2"


def test_a_condition_compares_a_coded_column_s_numbers_even_beside_other():
    """A categorical column of numeric levels whose support also holds "other" (text): a condition
    written with the numbers (icd == 401) selects them, as it does where no row is "other"."""
    synth = _coded_beside_other()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert (synth.sample(4000, seed=2)["icd"].astype(str) == "other").any()  # the support holds "other"
        rows = synth.sample(300, condition="icd == 401", seed=3)
    assert len(rows) == 300 and (rows["icd"].astype(str) == "401").all()


# ---------------------------------------------------------------------- conditions that would run code
ATTACKS = {"__import__('os').system('true')": "call", "age.to_csv('/dev/null') != 'x'": "call",
           "abs(age) > 1": "call", "age.values > 1": "attribute access", "age.str.len() > 1": "call",
           "age[0] > 1": "subscript", "age > @limit": "local variable", "(lambda: age)() > 1": "call",
           "[a for a in age] == 1": "comprehension", "nope > 1": "not a column", "age in bmi": "'in'",
           "age.isna(1)": "call", "age ** age > 1": "exponent", "(age ** 2) ** 2 > 1": "power of a power",
           "age.isin(bmi)": "call", "age.between(bmi, 2)": "call", "age.isin([abs(-1)])": "call"}


@pytest.mark.parametrize("condition", list(ATTACKS))
def test_a_condition_that_is_not_a_plain_expression_is_refused_before_it_is_evaluated(condition):
    """A call, an attribute, a subscript, a lambda, a comprehension, @variable, a name that is no
    column: one line naming what is not allowed, before pandas evaluates anything."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = _numeric()
    with pytest.raises(SynthDPError, match=ATTACKS[condition]) as error:
        synth.sample(5, condition=condition, seed=1)
    assert "\n" not in str(error.value) and "condition" in str(error.value)


def test_the_to_csv_attack_through_sample_where_leaves_the_file_alone(tmp_path, capsys):
    """The attack that overwrote a user's file: refused with one line naming --where, the file untouched."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _numeric().save(tmp_path / "m.synthdp")
    precious = tmp_path / "x" / "precious.txt"
    precious.parent.mkdir()
    precious.write_text("keep me")
    out = tmp_path / "out.csv"
    for condition in (f"age.to_csv('{precious}') != 'x'", f"age.to_csv(r'{precious}') != 'x' and age > 0",
                      f"`age`.to_csv('{precious}') != 'x'", f"(age > 0) & age.to_csv('{precious}')"):
        assert main(["sample", str(tmp_path / "m.synthdp"), "-n", "10", "-o", str(out), "--where", condition]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and "--where" in err and "call" in err
        assert precious.read_text() == "keep me" and not out.exists()


def _named_model():
    rng = np.random.default_rng(5)
    n = 900
    country = rng.choice(["Cuba", "Peru", "Chile"], n, p=[0.3, 0.3, 0.4])
    hours = np.clip(np.round(rng.normal(38, 10, n)), 1, 99).astype(int)
    frame = pd.DataFrame({"native-country": country, "hours per week": hours, "x": rng.uniform(0, 1, n)})
    schema = {"columns": {"native-country": {"type": "categorical", "levels": ["Cuba", "Peru", "Chile"]},
                          "hours per week": {"type": "integer", "bounds": [1, 99]}, "x": {"bounds": [0, 1]}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SmoothSynthesizer(epsilon=2.0, seed=4).fit(frame, schema=schema)


def test_plain_conditions_keep_the_points_pandas_selects():
    """Backticks, in and not in a list, ranges, and/or/not, & | ~, arithmetic, isna: the checked
    condition keeps exactly the support points pandas' own evaluation of it keeps."""
    model = _named_model()._sampling_model()
    support = model.decode(model.points, mixed_levels=True)
    for condition in ["`native-country` == 'Cuba'", "`native-country` in ['Cuba', 'Peru']",
                      "`native-country` not in ('Chile',)", "`hours per week` >= 20 and `hours per week` < 40",
                      "20 <= `hours per week` < 40", "x > 0.2 or `native-country` != 'Cuba'",
                      "(x > 0.5) & ~(`hours per week` > 50)", "x > 0.5 & `hours per week` <= 50 | x < 0.1",
                      "not (x * 2 - 1 > 0)", "x ** 2 < 0.25 and -x > -0.9", "`hours per week` % 2 == 0",
                      "`hours per week` == [30, 40]", "x.notna() and `hours per week` > 30.5",
                      "`native-country` == \"Cuba\" and True", "`native-country`.isin(['Cuba', 'Peru'])",
                      "`hours per week`.between(20, 40) and x < 0.9"]:
        kept = model_file.where(model, condition)
        mask = support.eval(condition, engine="python").to_numpy(dtype=bool, na_value=False)
        assert 0 < mask.sum() < len(mask), condition
        np.testing.assert_array_equal(kept.points, model.points[mask], err_msg=condition)


# ---------------------------------------------------------------------- an edited document
@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("saved")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("numeric", "mixed", "person"):
            MODELS[name]().save(folder / f"{name}.synthdp")
    return folder


def _edited(source: Path, target: Path, edit, checksum: str) -> Path:
    """``source`` with its model.json edited; its checksum left ("stale"), made again ("recomputed",
    as a careful editor would) or removed ("dropped", as in a file written before it)."""
    with zipfile.ZipFile(source) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    document = json.loads(members["model.json"])
    edit(document)
    if checksum == "recomputed":
        document["document_sha256"] = model_file.document_checksum(document)
    elif checksum == "dropped":
        document.pop("document_sha256")
    members["model.json"] = json.dumps(document).encode()
    with zipfile.ZipFile(target, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return target


def _twice(document):
    document["domain"]["columns"][1]["name"] = document["domain"]["columns"][0]["name"]
    document["columns"][1] = document["columns"][0]


def _categorical_twice(document):
    schema = document["schema"]
    schema["categorical"][1]["name"] = schema["categorical"][0]["name"]
    schema["names"] = [schema["categorical"][0]["name"] if name == "kind" else name for name in schema["names"]]
    document["columns"] = list(schema["names"])


def _units(**fields):
    return lambda document: document["units"].update(fields)


def _unit_renamed(document):
    document["units"]["column"] = "x"
    document["columns"] = ["x" if name == "person" else name for name in document["columns"]]


DOCUMENT_EDITS = {"column twice": ("numeric", _twice), "categorical twice": ("mixed", _categorical_twice),
                  "indicator of nothing": ("mixed", lambda d: d["schema"]["categorical"][0].update(indicator_of="no")),
                  "values of nothing": ("mixed", lambda d: d["schema"]["categorical"][2].update(values_of="no")),
                  "max_rows 0": ("person", _units(max_rows=0)), "max_rows -3": ("person", _units(max_rows=-3)),
                  "max_rows 1e9": ("person", _units(max_rows=10**9)), "max_rows 1e9 float": ("person", _units(max_rows=1e9)),
                  "position -5": ("person", _units(position=-5)), "unit renamed": ("person", _unit_renamed)}


@pytest.mark.parametrize("checksum", ["stale", "recomputed", "dropped"])
@pytest.mark.parametrize("edit", list(DOCUMENT_EDITS))
def test_an_edited_model_document_is_one_line_from_sample(saved, tmp_path, capsys, edit, checksum):
    """Edits of model.json that gave tracebacks when sampling (AttributeError, pyarrow's ValueError,
    KeyError, ZeroDivisionError, numpy's ValueError): exit code 2 and one line, from the document's
    checksum where it is left stale, and from the check of its fields where it was made again or
    removed."""
    name, change = DOCUMENT_EDITS[edit]
    model = _edited(saved / f"{name}.synthdp", tmp_path / "e.synthdp", change, checksum)
    out = tmp_path / "out.csv"
    assert main(["sample", str(model), "-n", "10", "-o", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("synthdp: error: model file") and "damaged" in err
    if checksum == "stale":
        assert "does not match its checksum" in err
    assert not out.exists()


def test_the_document_checksum_is_written_and_a_file_without_it_still_reads(saved, tmp_path):
    """Every file carries the sha256 of its document; one written before it (no checksum) still reads and samples
    the same rows."""
    path = saved / "person.synthdp"
    with zipfile.ZipFile(path) as archive:
        document = json.loads(archive.read("model.json"))
    assert document["document_sha256"] == model_file.document_checksum(document)
    assert document["format_version"] == 4  # the release's version: the checksum, a field older readers ignore, took none
    older = _edited(path, tmp_path / "older.synthdp", lambda document: None, "dropped")
    pd.testing.assert_frame_equal(SmoothSynthesizer.load(older).sample(50, seed=3),
                                  SmoothSynthesizer.load(path).sample(50, seed=3))


def test_a_condition_without_mass_on_a_text_column_names_its_levels():
    """A column of text levels compared with a number (sex == 1 where the schema's levels are '0.0'
    and '1.0') has probability 0: the error shows the column's public levels."""
    model = _named_model()._sampling_model()
    with pytest.raises(SynthDPError, match=r"'native-country' has text levels \('Cuba', 'Peru', 'Chile'.*compare it "
                                           "with one of its levels, as text"):
        model_file.where(model, "`native-country` == 1")


def test_fit_saves_the_summary_of_its_release_as_generate_does(tmp_path):
    """fit --summary-out: the summary of the same release as the model, no second budget; seeded, the
    same answers as generate --summary-out's (which the same release gives)."""
    for command, out in (("fit", "m.synthdp"), ("generate", "g.csv")):
        assert main([command, str(CLINIC), "-o", str(tmp_path / out), "--bounds", str(CLINIC_BOUNDS), "--seed", "5",
                     "--summary-out", str(tmp_path / f"{command}.json"), "--report", str(tmp_path / f"{command}.r"),
                     "--quiet"]) == 0
    from synthdp import Summary

    fitted, generated = (Summary.load(tmp_path / f"{command}.json") for command in ("fit", "generate"))
    for query in (lambda rows: rows["age"], lambda rows: rows["bmi"] * rows["age"], lambda rows: rows["bmi"] ** 2):
        assert fitted.answer(query) == generated.answer(query)
    spent = [json.loads((tmp_path / f"{command}.r").read_text())["privacy"]["epsilon_spent"] for command in
             ("fit", "generate")]
    assert spent == [1.0, 1.0]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_sample_larger_than_the_disks_free_space_is_refused_after_its_first_chunk(saved, tmp_path, monkeypatch,
                                                                                      capsys, suffix):
    """--rows far past the disk's room streamed until the disk was full; the first chunk's bytes per row
    now size the whole, and a sample the folder cannot hold is one line, nothing written. Room enough:
    the same command writes every row."""
    import shutil

    pytest.importorskip("pyarrow")
    monkeypatch.setattr(model_file, "CHUNK_VALUES", 5 * 1_000)  # several chunks
    out = tmp_path / f"rows{suffix}"
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage._replace(free=20_000))
    assert main(["sample", str(saved / "numeric.synthdp"), "-n", "100000", "-o", str(out), "--quiet"]) == 2
    error = capsys.readouterr().err.strip()
    assert "--rows 100000 would take about" in error and "\n" not in error
    assert not out.exists() and not list(tmp_path.glob(".rows*"))
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage._replace(free=10**9))
    assert main(["sample", str(saved / "numeric.synthdp"), "-n", "3000", "-o", str(out), "--quiet"]) == 0
    assert len(pd.read_parquet(out) if suffix == ".parquet" else pd.read_csv(out)) == 3000


def test_bounds_and_a_schema_name_a_dataframe_s_numbered_column_by_its_number():
    """A DataFrame's column 7 is read as '7': bounds={7: [0, 1]} (or a schema's entry 7) named an 'unknown
    column 7'; it names that column. The same name given as 7 and as '7' is one line."""
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({7: rng.uniform(0, 1, 300), "y": rng.uniform(0, 1, 300)})
    out = SmoothSynthesizer(epsilon=1.0, seed=1).fit(frame, bounds={7: [0, 1], "y": [0, 1]}).sample(10, seed=1)
    assert list(out.columns) == ["7", "y"] and out["7"].between(0, 1).all()
    schema = {"columns": {7: {"bounds": [0, 1]}, "y": {"bounds": [0, 1]}}}
    assert len(SmoothSynthesizer(epsilon=1.0, seed=1).fit(frame, schema=schema).sample(10, seed=1)) == 10
    with pytest.raises(SynthDPError, match=r"^column '7' is named twice in bounds \(once as a number\)$"):
        SmoothSynthesizer(epsilon=1.0, seed=1).fit(frame, bounds={7: [0, 1], "7": [0, 1], "y": [0, 1]})


def test_a_dataframe_s_columns_labelled_true_and_false_are_read_as_columns():
    """Columns labelled True and False (a pivot or value_counts' unstack of a bool column) were picked by a
    list of their labels, which pandas takes as a row mask: a ValueError traceback ("Item wrong length 2
    instead of 300"). They are read by place, named 'True' and 'False' as a numbered column is named."""
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({True: rng.uniform(0, 1, 300), False: rng.uniform(0, 1, 300)})
    out = SmoothSynthesizer(epsilon=1.0, seed=1).fit(frame, bounds={True: [0, 1], False: [0, 1]}).sample(10, seed=1)
    assert list(out.columns) == ["True", "False"] and out.apply(lambda column: column.between(0, 1)).all(axis=None)
    mixed = frame.assign(**{"False": rng.choice(["a", "b"], 300)}).drop(columns=[False])
    schema = {"columns": {True: {"bounds": [0, 1]}, "False": {"type": "binary", "levels": ["a", "b"]}}}
    out = SmoothSynthesizer(epsilon=1.0, seed=1).fit(mixed, schema=schema).sample(10, seed=1)
    assert list(out.columns) == ["True", "False"] and set(out["False"]) <= {"a", "b"}


def test_a_condition_compares_a_boolean_column_with_true_and_false():
    """A bool column (levels 'False' and 'True', given back as bool) took a condition's True as no level
    (no mass: an error); True and False are read as its levels, in comparisons, lists and isin."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 400), "flag": rng.random(400) < 0.4})
    schema = {"columns": {"x": {"bounds": [0, 1]}, "flag": {"type": "binary", "levels": ["False", "True"]}}}
    base = SmoothSynthesizer(epsilon=1.0, seed=1).fit(frame, schema=schema)._sampling_model()
    where = model_file.where
    for condition, text in [("flag == True", "flag == 'True'"), ("flag != True", "flag == 'False'"),
                            ("flag in [False]", "flag == 'False'"), ("flag.isin([True]) and x < 0.5",
                                                                     "flag == 'True' and x < 0.5")]:
        np.testing.assert_array_equal(where(base, condition).weights, where(base, text).weights)
    assert 0 < where(base, "flag == True").weights.size < base.weights.size


def test_a_bool_column_alone_in_a_condition_is_read_as_pandas_reads_it():
    """A bool column standing alone where a condition needs true or false (``x < 0.5 and flag``, ``not flag``,
    ``flag``), as pandas' query takes it on the sample: its text levels were and-ed as text, so that
    ``x < 0.5 and flag`` kept the rows of either level without a word, and ``flag`` alone or ``not flag`` were
    errors. It is ``flag == True``; levels 0 and 1 likewise; any other column alone is a one-line error."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 400), "flag": rng.random(400) < 0.4, "coded": rng.random(400) < 0.5,
                          "kind": rng.choice(["a", "b"], 400)})
    schema = {"columns": {"x": {"bounds": [0, 1]}, "flag": {"type": "binary", "levels": ["False", "True"]},
                          "coded": {"type": "binary", "levels": [0, 1]}, "kind": {"type": "binary", "levels": ["a", "b"]}}}
    base = SmoothSynthesizer(epsilon=1.0, seed=1).fit(frame, schema=schema)._sampling_model()
    where = model_file.where
    for condition, explicit in [("x < 0.5 and flag", "x < 0.5 and flag == True"),
                                ("flag & (x < 0.5)", "flag == True and x < 0.5"), ("flag", "flag == True"),
                                ("not flag", "flag == False"), ("x < 0.5 and ~flag", "x < 0.5 and flag == False"),
                                ("x < 0.5 or flag", "x < 0.5 or flag == True"),
                                ("coded and x < 0.5", "coded == 1 and x < 0.5"), ("not coded", "coded == 0")]:
        np.testing.assert_array_equal(where(base, condition).weights, where(base, explicit).weights, err_msg=condition)
    assert where(base, "x < 0.5 and flag").weights.size < where(base, "x < 0.5").weights.size
    for condition, name in [("x < 0.5 and kind", "kind"), ("x", "x"), ("not kind", "kind")]:
        with pytest.raises(SynthDPError, match=f"^the condition .* uses column '{name}' alone where it needs true"):
            where(base, condition)


def test_float32_numbers_are_their_levels_in_the_fit_and_in_given_values():
    """A float32 column (numpy's, pandas' Float32, Arrow's float) of the levels 0.1, 0.2, 0.3 was read as
    0.10000000149011612, ...: no level, so every cell was an error with "other": false (other without it, a
    column silently all other). Its values are their levels, in the fit and in sample_from_conditions' given
    values (a row of which held an Arrow float's cell as the float64 0.10000000149011612)."""
    rng = np.random.default_rng(5)
    schema = {"columns": {"x": {"bounds": [0, 1]}, "v": {"type": "categorical", "levels": [0.1, 0.2, 0.3],
                                                         "other": False}}}
    for dtype in ("float32", "Float32", "float[pyarrow]"):
        frame = pd.DataFrame({"x": rng.uniform(0, 1, 300), "v": pd.Series(rng.choice([0.1, 0.2, 0.3], 300)).astype(dtype)})
        synth = SmoothSynthesizer(epsilon=1.0, seed=1).fit(frame, schema=schema)
        assert set(synth.sample(300, seed=1)["v"]) <= {0.1, 0.2, 0.3}, dtype
        given = pd.DataFrame({"v": pd.Series([0.1, 0.3]).astype(dtype), "x": [None, None]})
        assert synth.sample_from_conditions(given, seed=2)["v"].tolist() == [0.1, 0.3], dtype


def test_a_given_true_or_false_is_the_level_of_a_bool_column_declared_with_levels_0_and_1():
    """A bool column declared with the levels 0 and 1 comes back as bool, but sample_from_conditions took a
    given True or False (a value of that sample) as no level ("binary column 'b' has a value outside its 2
    levels"). A truth value is the level 1 or 0, as the bool column's values were in the fit."""
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 300), "b": rng.random(300) < 0.5})
    schema = {"columns": {"x": {"bounds": [0, 1]}, "b": {"type": "binary", "levels": [0, 1]}}}
    synth = SmoothSynthesizer(epsilon=1.0, seed=1).fit(frame, schema=schema)
    out = synth.sample_from_conditions(pd.DataFrame({"b": [True, False]}), seed=2)
    assert out["b"].dtype == np.dtype(bool) and out["b"].tolist() == [True, False]
    pd.testing.assert_frame_equal(out, synth.sample_from_conditions(pd.DataFrame({"b": [1, 0]}), seed=2))


def test_a_model_file_that_cannot_be_written_is_one_line_and_leaves_nothing(tmp_path, monkeypatch):
    """A disk that fills while the model file is written (or any OS error of the write) is one
    SynthDPError naming the file, and leaves neither a partial file nor a temporary one."""
    import errno
    import zipfile

    synth = _numeric()

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(zipfile.ZipFile, "writestr", full)
    with pytest.raises(SynthDPError, match=r"cannot write the model file '.*m\.synthdp': No space left on device; "
                       "nothing was written"):
        synth.save(tmp_path / "m.synthdp")
    assert list(tmp_path.iterdir()) == []


def test_a_condition_without_mass_on_a_boolean_column_points_to_true_and_false():
    """A column of levels False and True is compared with True or False (``flag == True``; on one
    fitted as a pandas boolean, ``flag == 'True'`` matches none of the sample's rows). A condition
    without mass on it told the user to compare it "with one of its levels, as text"."""
    rng = np.random.default_rng(5)
    flag = pd.Series(rng.random(200) < 0.5, dtype="boolean")
    flag[:30] = pd.NA
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 200), "flag": flag})
    schema = {"columns": {"x": {"bounds": [0, 1]},
                          "flag": {"type": "binary", "levels": [False, True], "nullable": True}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer(epsilon=2.0, seed=1).fit(frame, schema=schema)
    with pytest.raises(SynthDPError, match="probability is 0") as raised:
        synth.sample(5, condition="flag == True and flag == False")
    assert "'flag' has the levels False and True: compare it with True or False" in str(raised.value)
    assert "as text" not in str(raised.value)
