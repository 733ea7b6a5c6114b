"""Files synthdp reads but did not write, as an attacker or a damaged disk hands them over.

A model file, a summary, a budget file, a bounds or schema file, a config file and the copies'
record: each crafted file is refused with one line naming it (a SynthDPError, never a traceback,
never a value of the file), before anything large is allocated. The files are small and made here.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import socket
import zipfile
from pathlib import Path

import numpy as np
import pytest

from synthdp.cli import main
from synthdp.domain.box import Domain, load_bounds_file, read_json_file
from synthdp.errors import SynthDPError
from synthdp.evaluation.inference import _copies_info
from synthdp.pipeline import model as model_file
from synthdp.privacy import lifetime
from synthdp.summaries.base import load_summary

HUGE = 10**400  # an integer JSON (and TOML) may hold, which no float can


# ---------------------------------------------------------------------- model files
def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def _model(path: Path, edit=None, members: dict[str, bytes] | None = None, compress=zipfile.ZIP_DEFLATED) -> Path:
    """A small valid model file of one column (a document and two arrays with their checksums), after
    ``edit(document)``; ``members`` replace (or add) raw members, their checksums recorded as a forger would."""
    arrays = {"support_points": np.array([[-0.5], [0.5]]), "support_weights": np.array([0.5, 0.5])}
    content = {f"{name}.npy": _npy(array) for name, array in arrays.items()}
    document = {"format": model_file.FORMAT, "format_version": 1, "rows": 10, "columns": ["x"],
                "domain": {"source": "public", "columns": [{"name": "x", "lower": 0.0, "upper": 1.0}]},
                "schema": None, "units": None, "privacy_report": {},
                "arrays": {name: {"shape": list(array.shape), "dtype": str(array.dtype)} for name, array in arrays.items()}}
    content.update(members or {})
    if edit is not None:
        edit(document)
    for name, spec in document["arrays"].items():
        if f"{name}.npy" in content:
            spec["sha256"] = hashlib.sha256(content[f"{name}.npy"]).hexdigest()
    document[model_file.DOCUMENT_CHECKSUM] = model_file.document_checksum(document)
    with zipfile.ZipFile(path, "w", compression=compress) as archive:
        archive.writestr("model.json", json.dumps(document))
        for name, data in content.items():
            archive.writestr(name, data)
    return path


def test_the_crafted_model_helper_makes_a_file_that_loads(tmp_path):
    model = model_file.load(_model(tmp_path / "m.synthdp"))
    assert model.names == ["x"] and len(model.weights) == 2


def test_an_npy_header_claiming_a_huge_shape_is_refused_before_numpy_allocates_it(tmp_path):
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (10**6, 10**6)})

    def claim(document):
        document["arrays"]["support_points"]["shape"] = [10**6, 10**6]

    path = _model(tmp_path / "m.synthdp", claim, {"support_points.npy": header.getvalue() + bytes(16)})
    with pytest.raises(SynthDPError, match="m.synthdp.*support_points has another shape"):
        model_file.load(path)  # before: numpy allocated 8 TB (MemoryError, "out of memory" naming no file)


def test_a_member_that_inflates_like_a_zip_bomb_is_refused_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(model_file, "MAX_PLAIN_MEMBER_BYTES", 2**20)  # the bound, scaled down for a fast test
    n = 2**18  # 2 MB of zeros, deflated a thousandfold
    bomb = _npy(np.zeros(n))

    def claim(document):
        document["arrays"]["support_weights"]["shape"] = [n]

    path = _model(tmp_path / "m.synthdp", claim, {"support_weights.npy": bomb})
    with pytest.raises(SynthDPError, match=r"m.synthdp.*'support_weights.npy' would inflate \d+-fold"):
        model_file.load(path)


def test_a_model_file_listing_arrays_of_other_names_is_refused(tmp_path):
    def traverse(document):
        document["arrays"]["../../etc/passwd"] = dict(document["arrays"]["support_weights"])

    path = _model(tmp_path / "m.synthdp", traverse, {"../../etc/passwd.npy": _npy(np.array([0.5, 0.5]))})
    with pytest.raises(SynthDPError, match="m.synthdp.*lists arrays a model file does not hold"):
        model_file.load(path)


@pytest.mark.parametrize("field, value", [("lower", HUGE), ("lower", 5.0), ("decimals", 99)],
                         ids=["lower of 400 digits", "lower above upper", "decimals 99"])
def test_a_model_files_column_its_checks_refuse_is_one_line_naming_the_file(tmp_path, field, value):
    def edit(document):
        document["domain"]["columns"][0][field] = value

    with pytest.raises(SynthDPError, match=r"model file '.*m.synthdp' is damaged or was edited \(.*column 'x'"):
        model_file.load(_model(tmp_path / "m.synthdp", edit))  # before: an OverflowError; no file named


def test_a_model_files_level_numbers_of_hundreds_of_digits_are_refused(tmp_path):
    def edit(document):
        document["schema"] = {"names": ["x"], "numeric": document["domain"], "other_label": "other",
                              "categorical": [{"name": "k", "levels": ["1", "2"], "numbers": [HUGE, 2]}]}

    with pytest.raises(SynthDPError, match="m.synthdp"):
        model_file.load(_model(tmp_path / "m.synthdp", edit))


def test_the_command_line_refuses_a_crafted_model_file_in_one_line(tmp_path, capsys):
    def edit(document):
        document["domain"]["columns"][0]["upper"] = HUGE

    path = _model(tmp_path / "m.synthdp", edit)
    assert main(["sample", str(path), "-n", "3", "-o", str(tmp_path / "out.csv"), "--quiet"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "m.synthdp" in error and "Traceback" not in error


# ---------------------------------------------------------------------- bounds, schema and summary files
def test_a_bound_of_hundreds_of_digits_is_a_one_line_error(tmp_path):
    path = tmp_path / "b.json"
    path.write_text('{"x": [0, 1' + "0" * 400 + "]}")
    with pytest.raises(SynthDPError, match="bounds for column 'x' must be finite numbers"):
        Domain.from_bounds(load_bounds_file(path), ["x"])


@pytest.mark.parametrize("label", ["bounds file", "schema file", "summary file"])
def test_json_nested_thousands_deep_is_a_one_line_error(tmp_path, label):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(SynthDPError, match=f"{label} '.*deep.json' is nested too deeply"):
        read_json_file(path, label)


def test_a_key_given_twice_among_many_is_still_named(tmp_path):
    path = tmp_path / "b.json"
    path.write_text("{" + ", ".join(f'"c{i}": [0, 1]' for i in range(50_000)) + ', "c7": [0, 2]}')
    with pytest.raises(SynthDPError, match="gives 'c7' twice"):
        read_json_file(path, "bounds file")
    path.write_text(json.dumps({f"c{i}": [0, 1] for i in range(50_000)}))
    assert len(read_json_file(path, "bounds file")) == 50_000


def _smooth_summary() -> dict:
    return {"format": "synthdp-summary", "format_version": 1, "column_order": ["x"],
            "bounds": {"source": "public", "columns": {"x": {"bounds": [0.0, 1.0], "type": "continuous"}}},
            "parameters": {"smoothness": 4}, "basis_indices": [[1], [2]], "noisy_moments": [0.1, -0.2]}


@pytest.mark.parametrize("field, index", [("noisy_moments", 0), ("basis_indices", None)], ids=["moment", "index"])
def test_a_summary_number_of_hundreds_of_digits_is_a_one_line_error(tmp_path, field, index):
    content = _smooth_summary()
    if index is None:
        content["basis_indices"][0] = [HUGE]
    else:
        content[field][index] = HUGE
    path = tmp_path / "s.json"
    path.write_text(json.dumps(content))
    with pytest.raises(SynthDPError, match="summary file '.*s.json'"):
        load_summary(path)  # before: OverflowError


def test_a_marginal_summarys_wrong_value_is_not_quoted(tmp_path):
    content = {"format": "synthdp-marginal-summary", "format_version": 2, "column_order": ["k"],
               "schema": {"columns": {"k": {"type": "categorical", "levels": ["a", "b"]}}},
               "n_coordinates": 3, "basis_terms": [[[0, 1]]], "noisy_moments": ["secret-value"]}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(content))
    with pytest.raises(SynthDPError) as error:
        load_summary(path)
    assert "m.json" in str(error.value) and "secret-value" not in str(error.value)


# ---------------------------------------------------------------------- budget files
def _budget(path: Path, edit=None, raw: bytes | None = None) -> Path:
    document = {"format": lifetime.FORMAT, "format_version": lifetime.FORMAT_VERSION,
                "lifetime": {"epsilon": 5.0, "delta": 0.0}, "privacy_unit": None,
                "releases": [{"id": "a", "command": "fit", "epsilon": 1.0, "delta": 0.0, "state": "spent"}]}
    if edit is not None:
        edit(document)
    path.write_bytes(raw if raw is not None else json.dumps(document).encode())
    return path


@pytest.mark.parametrize("name, edit, raw", [
    ("big epsilon", lambda d: d["releases"][0].update(epsilon=HUGE), None),
    ("big lifetime", lambda d: d["lifetime"].update(epsilon=HUGE), None),
    ("not utf-8", None, b"\xff\xfe\x80garbage"),
    ("deep", None, b"[" * 100_000 + b"]" * 100_000),
], ids=["big epsilon", "big lifetime", "not utf-8", "deep"])
def test_a_hand_edited_budget_file_is_a_one_line_error(tmp_path, capsys, name, edit, raw):
    path = _budget(tmp_path / "b.json", edit, raw)
    with pytest.raises(SynthDPError, match="budget file '.*b.json'"):
        lifetime.status(path)
    assert main(["budget", str(path)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "b.json" in error


def test_a_pending_release_of_a_pid_beyond_a_c_long_is_taken_as_running(tmp_path):
    def edit(document):
        document["releases"].append({"id": "b", "command": "fit", "epsilon": 1.0, "delta": 0.0, "state": "pending",
                                     "host": socket.gethostname(), "pid": 10**30,
                                     "pid_namespace": lifetime._pid_namespace()})  # None without /proc (macOS)

    status = lifetime.status(_budget(tmp_path / "b.json", edit))  # before: OverflowError from os.kill
    assert status is not None


# ---------------------------------------------------------------------- the copies' record, config files
@pytest.mark.parametrize("text", [json.dumps({"seconds_per_copy": 0.1, "measures_dependence": True, "count": 10**9}),
                                  '{"seconds_per_copy": 0.1, "measures_dependence": true, "count": 1' + "0" * 400 + "}",
                                  '{"seconds_per_copy": 1' + "0" * 400 + ', "measures_dependence": true}',
                                  "[" * 100_000 + "]" * 100_000],
                         ids=["count 10^9", "count of 400 digits", "seconds of 400 digits", "deep"])
def test_a_crafted_copies_record_is_a_one_line_error(tmp_path, text):
    path = tmp_path / "out.copies.json"
    path.write_text(text)
    with pytest.raises(SynthDPError, match="out.copies.json' is not what synthdp generate --copies writes"):
        _copies_info(path)  # before: a list of 10^9 numbers (out of memory), an OverflowError, a RecursionError


@pytest.mark.parametrize("content, expected", [
    (b'sep = "\xff"\n', "is not valid TOML"),
    (b"epsilon = " + b"[" * 100_000 + b"]" * 100_000 + b"\n", "is not valid TOML"),
    (b"n_candidates = 1" + b"0" * 400 + b"\n", "about 1e\\+400 candidates"),
], ids=["not utf-8", "deep", "n_candidates of 400 digits"])
def test_a_crafted_config_file_is_a_one_line_error(tmp_path, capsys, content, expected):
    config = tmp_path / "c.toml"
    config.write_bytes(content)
    data = Path(__file__).resolve().parents[1] / "synthdp" / "datasets"
    code = main(["summarize" if b"n_candidates" not in content else "fit", str(data / "clinic.csv"),
                 "-o", str(tmp_path / "out"), "--bounds", str(data / "clinic_bounds.json"), "--config", str(config),
                 "--quiet"])
    error = capsys.readouterr().err
    assert code == 2 and error.count("\n") == 1
    assert re.search(expected, error)


def test_a_budget_files_control_characters_are_printed_as_escapes(tmp_path, capsys):
    def edit(document):
        document["releases"][0]["command"] = "fit\x1b[2J\nforged line"

    assert main(["budget", str(_budget(tmp_path / "b.json", edit))]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "forged line" in out and "\\x1b[2J\\nforged line" in out


def test_a_privacy_reports_number_of_hundreds_of_digits_is_shown_not_raised():
    from synthdp.evaluation.html import _privacy_section

    page = _privacy_section({"privacy": {"epsilon_spent": HUGE, "stages": [{"stage": "<b>", "sensitivity": HUGE}]}})
    assert "inf" in page and "<b>" not in page  # before: OverflowError


def test_a_marginal_summary_claiming_more_moments_x_levels_than_a_release_holds_is_refused(tmp_path, monkeypatch):
    """200 000 terms and a million levels, 15 MB of JSON, made an (R, D) array of 200 GB: out of memory,
    naming no file (or, where the system lends it, a machine brought down). Scaled down here."""
    from synthdp.summaries import marginal

    monkeypatch.setattr(marginal, "MAX_INDEX_ENTRIES", 10_000)
    levels = [f"l{i}" for i in range(1_000)]
    terms = [[[k, 1]] for k in range(20)]
    content = {"format": "synthdp-marginal-summary", "format_version": 2, "column_order": ["k"],
               "schema": {"columns": {"k": {"type": "categorical", "levels": levels}}},
               "n_coordinates": 1_001, "basis_terms": terms, "noisy_moments": [0.0] * len(terms)}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(content))
    with pytest.raises(SynthDPError, match=r"m.json' is malformed \(20 moments x 1001 coordinates are more than"):
        load_summary(path)


def test_a_side_file_that_never_ends_is_refused_and_a_pipe_is_still_read(tmp_path, monkeypatch):
    """A bounds file linked to /dev/zero read until memory ran out ("out of memory" after 2.5 GB, naming no
    file; the budget file, the config file and the copies' record alike); a pipe, as ``<(jq ...)`` gives, is read."""
    import threading

    from synthdp import files

    monkeypatch.setattr(files, "MAX_STREAM_BYTES", 2**20)
    endless = tmp_path / "b.json"
    endless.symlink_to("/dev/zero")
    with pytest.raises(SynthDPError, match="bounds file '.*b.json' is not a regular file and holds more than"):
        load_bounds_file(endless)
    with pytest.raises(SynthDPError, match="budget file '.*' is not a regular file"):
        lifetime.status(endless)
    pipe = tmp_path / "pipe.json"
    os.mkfifo(pipe)
    writer = threading.Thread(target=lambda: pipe.write_text('{"x": [0, 1]}'))
    writer.start()
    try:
        assert load_bounds_file(pipe) == {"x": [0, 1]}
    finally:
        writer.join()


def test_a_copy_that_never_ends_is_refused_in_one_line(tmp_path, capsys):
    """A copy of generate --copies linked to /dev/zero was hashed (against the copies' record) without
    end; the copies are files, and anything else is refused before it is read."""
    root = Path(__file__).resolve().parents[1] / "synthdp" / "datasets"
    out = tmp_path / "cp.csv"
    assert main(["generate", str(root / "clinic.csv"), "-o", str(out), "--copies", "2", "--rows", "50", "--epsilon",
                 "1", "--bounds", str(root / "clinic_bounds.json"), "--seed", "0", "--quiet"]) == 0
    (tmp_path / "cp.2.csv").unlink()
    (tmp_path / "cp.2.csv").symlink_to("/dev/zero")
    capsys.readouterr()
    assert main(["infer", str(out), "--mean", "age"]) == 2
    assert capsys.readouterr().err == (f"synthdp: error: copy '{tmp_path / 'cp.2.csv'}' is not a regular file "
                                       "(generate --copies writes files): write the copies again\n")
