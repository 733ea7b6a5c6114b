"""No private value in any error, warning, log line or report field but the released statistics.

Each test plants distinctive values in the input table, runs the command line (in process,
capturing stdout, stderr, warnings and every log record; and once as a subprocess), and
searches everything captured for them, both as text (the literal as written in the CSV and
the usual float renderings) and as numbers (every number in the printed text and in the
report, compared with a relative tolerance of 1e-6, so a rounded rendering is caught too).

What the report may legitimately contain that depends on the data (see
SmoothSynthesizer.privacy_report):

* released statistics: ``bounds.rows_clipped_noisy`` (Laplace-noised count) and the bounds
  of columns whose ``source`` is "DP estimate" (the --bounds-share histogram release);
* post-processing of the release: ``lp.objective``, ``lp.support_size``,
  ``output.distinct_rows`` (they are searched anyway: they cannot equal a planted value);
* with --bounds-from-data only (the documented non-private opt-out): the bounds and the
  integer type of every column, which are the data's min and max. The test asserts that the
  report then says the release is not DP, and excludes those bounds and nothing else.

The noisy moments and the PCA axes are not part of the report; the summary file of
``synthdp summarize`` / ``generate --summary-out`` holds the noisy moments (its released
statistics), and is searched except for them. Timings are searched as text
only (they are measurements, so a numeric near-match would be a coincidence, not a leak);
the report rounds them to 0.1 ms, so a chance substring such as "987654" in a 17-digit
timing cannot occur (it once failed CI that way).
"""

from __future__ import annotations

import json
import logging
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthdp.cli import main

# Planted values, written to the CSV exactly as these strings.
PLANTED = {
    "income": "987654.321",  # the column's maximum, far above its public bound (clipped)
    "tiny": "-0.000123457",  # the column's minimum, inside its bounds
    "count": "31415926",  # integer column, far above its bound (clipped)
    "score": "0.6180339887",  # inside its bounds, an ordinary row
}
PLANTED_ROW = 17
BOUNDS = {"income": [0, 100000], "tiny": [-0.01, 0.02], "count": {"bounds": [0, 100], "type": "integer"},
          "score": [0, 1]}
N_ROWS = 300
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def renderings(literal: str) -> set[str]:
    """The literal and the common ways a float prints (str, repr, %g at several precisions,
    scientific), with and without the sign."""
    value = float(literal)
    forms = {literal, str(value), repr(value)}
    for digits in range(4, 12):
        forms |= {f"{value:.{digits}g}", f"{value:.{digits - 1}e}"}
    if abs(value) >= 1:
        forms.add(str(int(value)))
    forms |= {form.lstrip("-") for form in forms}
    return {form for form in forms if len(form.strip("-+.0e")) >= 4}  # distinctive forms only


def private_numbers(frame: pd.DataFrame) -> dict[str, float]:
    """Numbers that would betray the data: the planted values and exact column statistics."""
    numbers = {f"planted {name}": float(text) for name, text in PLANTED.items()}
    for name in frame.columns:
        column = frame[name].astype(float)
        numbers.update({f"mean of {name}": column.mean(), f"std of {name}": column.std(),
                        f"sum of {name}": column.sum(), f"min of {name}": column.min(),
                        f"max of {name}": column.max()})
    return numbers


def find_leaks(text: str, numbers: dict[str, float], textual: bool = True, numeric: bool = True) -> list[str]:
    leaks = []
    if textual:
        for name, literal in PLANTED.items():
            leaks += [f"planted {name} as '{form}'" for form in renderings(literal) if form in text]
    if numeric:
        for token in NUMBER.findall(text):
            value = float(token)
            leaks += [f"{label} ~ {token}" for label, secret in numbers.items()
                      if value != 0 and math.isclose(value, secret, rel_tol=1e-6)]
    return leaks


def report_leaks(report: dict, numbers: dict[str, float]) -> list[str]:
    """Search the report except the released statistics named in the module docstring."""
    report = json.loads(json.dumps(report))  # a copy
    bounds = report.get("bounds", {})
    bounds.pop("rows_clipped_noisy", None)
    for column in bounds.get("columns", {}).values():
        if column.get("source") == "DP estimate":
            column.pop("bounds")
    timings = report.pop("timings_seconds", {})
    return find_leaks(json.dumps(report), numbers) + find_leaks(json.dumps(timings), numbers, numeric=False)


# ------------------------------------------------------------------------------ inputs
def table_text(rows: dict[int, dict[str, str]] | None = None, columns: list[str] | None = None) -> str:
    """A CSV with the planted row; ``rows`` overrides cells (as strings) of given rows."""
    rng = np.random.default_rng(2024)
    columns = columns or list(PLANTED)
    values = {"income": rng.uniform(1e4, 9e4, N_ROWS).round(2), "tiny": rng.uniform(0.001, 0.01, N_ROWS).round(6),
              "count": rng.integers(0, 90, N_ROWS), "score": rng.uniform(0.05, 0.95, N_ROWS).round(4)}
    lines = [",".join(columns)]
    for i in range(N_ROWS):
        cells = {name: str(values[name][i]) for name in columns}
        if i == PLANTED_ROW:
            cells.update({name: PLANTED[name] for name in columns})
        cells.update((rows or {}).get(i, {}))
        lines.append(",".join(cells[name] for name in columns))
    return "\n".join(lines) + "\n"


def frame_of(text: str) -> pd.DataFrame:
    from io import StringIO

    return pd.read_csv(StringIO(text))


@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "bounds.json").write_text(json.dumps(BOUNDS))
    return tmp_path


def run_in_process(args, capsys, caplog) -> tuple[int, str]:
    """main() with every channel captured: stdout, stderr (where warnings are printed), logs."""
    caplog.set_level(logging.DEBUG)
    code = main([str(a) for a in args])  # main prints every warning it catches to stderr
    captured = capsys.readouterr()
    logs = "\n".join(f"{r.name} {r.levelname} {r.getMessage()}" for r in caplog.records)
    return code, "\n".join([captured.out, captured.err, logs])


def base_args(workdir: Path, data: Path, *extra) -> list:
    return ["generate", data, "-o", workdir / "out.csv", "--report", workdir / "report.json",
            "--seed", 3, "--n-candidates", 300, *extra]


# ------------------------------------------------------------------------------- tests
@pytest.mark.parametrize("extra", [
    [],  # pure epsilon-DP, PCA candidates, progress bar enabled (not --quiet)
    ["--delta", "1e-6", "--quiet"],
    ["--delta", "1e-6", "--noise", "laplace", "--candidates", "hypercube", "--quiet"],
    ["--mode", "exact", "--smoothness", "1", "--quiet"],
    ["--chunk-rows", "10", "--quiet"],
    ["--engine", "dask", "--quiet"],
], ids=["epsilon", "gaussian", "laplace-advanced", "exact", "streamed", "dask"])
def test_successful_run_prints_and_reports_no_private_value(workdir, capsys, caplog, extra):
    text = table_text()
    data = workdir / "data.csv"
    data.write_text(text)
    code, printed = run_in_process(base_args(workdir, data, "--bounds", workdir / "bounds.json", *extra),
                                   capsys, caplog)
    assert code == 0, printed
    numbers = private_numbers(frame_of(text))
    report = json.loads((workdir / "report.json").read_text())
    assert report["privacy"]["differentially_private"] is False  # only because of --seed
    assert all("seed" in caveat for caveat in report["privacy"]["caveats"])
    assert find_leaks(printed, numbers) == []
    assert report_leaks(report, numbers) == []
    # Planted values outside the bounds were clipped: the (noisy) clip count is the only trace.
    assert report["bounds"]["rows_clipped_noisy"] is not None
    # Memorisation check on the synthetic table: no planted value comes back.
    synthetic = pd.read_csv(workdir / "out.csv")
    for name, literal in PLANTED.items():
        assert not np.isclose(synthetic[name].to_numpy(float), float(literal), rtol=1e-6, atol=0).any(), name


def test_dp_estimated_bounds_are_the_only_data_dependent_bounds(workdir, capsys, caplog):
    """--bounds-share: the DP-estimated bounds are released statistics, the rest is searched."""
    text = table_text()
    data = workdir / "data.csv"
    data.write_text(text)
    partial = workdir / "partial.json"
    partial.write_text(json.dumps({k: v for k, v in BOUNDS.items() if k != "income"}))
    code, printed = run_in_process(base_args(workdir, data, "--bounds", partial, "--bounds-share", "0.2",
                                             "--quiet"), capsys, caplog)
    assert code == 0, printed
    report = json.loads((workdir / "report.json").read_text())
    assert report["bounds"]["columns"]["income"]["source"] == "DP estimate"
    numbers = private_numbers(frame_of(text))
    assert find_leaks(printed, numbers) == [] and report_leaks(report, numbers) == []


def test_bounds_from_data_reports_not_dp_and_leaks_only_the_bounds(workdir, capsys, caplog):
    text = table_text()
    data = workdir / "data.csv"
    data.write_text(text)
    code, printed = run_in_process(base_args(workdir, data, "--bounds-from-data", "--quiet"), capsys, caplog)
    assert code == 0, printed
    report = json.loads((workdir / "report.json").read_text())
    privacy = report["privacy"]
    assert privacy["differentially_private"] is False
    assert any("NOT differentially private" in caveat for caveat in privacy["caveats"])
    assert "NOT differentially private" in report["bounds"]["source"]
    columns = report["bounds"]["columns"]
    assert columns["income"]["bounds"][1] == float(PLANTED["income"])  # the documented leak
    assert columns["tiny"]["bounds"][0] == float(PLANTED["tiny"])
    assert "NOT differentially private" in printed  # the warning and the summary line say so
    for column in columns.values():
        assert "NOT differentially private" in column["source"]
        column.pop("bounds")  # exclude exactly the data's min and max
    numbers = private_numbers(frame_of(text))
    assert find_leaks(printed, numbers) == []
    assert report_leaks(report, numbers) == []


def _has_summaries() -> bool:
    from synthdp.cli import build_parser

    try:
        build_parser().parse_args(["summarize", "x.csv", "-o", "y.json"])
    except SystemExit:
        return False
    return True


def summary_leaks(summary: dict, numbers: dict[str, float]) -> list[str]:
    """A summary file: its released statistics are ``noisy_moments`` (and DP-estimated
    bounds); the basis indices and parameters are public; the embedded privacy report is
    searched like a report."""
    summary = json.loads(json.dumps(summary))
    summary.pop("noisy_moments")
    report = summary.pop("privacy_report", {}) or {}
    for column in summary.get("bounds", {}).get("columns", {}).values():
        if column.get("source") == "DP estimate":
            column.pop("bounds")
    return find_leaks(json.dumps(summary), numbers) + report_leaks(report, numbers)


@pytest.mark.skipif(not _has_summaries(), reason="no summarize command in this version")
@pytest.mark.parametrize("command", ["summarize", "generate --summary-out"])
def test_summary_outputs_hold_no_private_value_but_the_noisy_moments(workdir, capsys, caplog, command):
    text = table_text()
    data = workdir / "data.csv"
    data.write_text(text)
    summary = workdir / "summary.json"
    if command == "summarize":
        args = ["summarize", data, "-o", summary, "--report", workdir / "report.json", "--seed", 3]
    else:
        args = base_args(workdir, data, "--summary-out", summary)
    code, printed = run_in_process([*args, "--bounds", workdir / "bounds.json", "--quiet"], capsys, caplog)
    assert code == 0, printed
    numbers = private_numbers(frame_of(text))
    content = json.loads(summary.read_text())
    assert len(content["noisy_moments"]) >= len(PLANTED)
    assert find_leaks(printed, numbers) == []
    assert summary_leaks(content, numbers) == []
    assert report_leaks(json.loads((workdir / "report.json").read_text()), numbers) == []


FAILING = {
    "NaN next to a planted value": ({PLANTED_ROW: {"tiny": "NaN"}}, [], "tiny"),
    "empty cell next to a planted value": ({PLANTED_ROW: {"score": ""}}, [], "score"),
    "inf next to a planted value": ({PLANTED_ROW: {"score": "inf"}}, [], "score"),
    "text next to a planted value": ({PLANTED_ROW: {"tiny": "n/a-987654.321"}}, [], "tiny"),
    "text elsewhere in a planted column": ({3: {"income": "high"}}, [], "income"),
    "ragged row holding planted values": ({PLANTED_ROW: {"score": PLANTED["score"] + ",31415926"}}, [], "well-formed"),
    "bounds missing for a planted column": (None, ["--bounds", "partial"], "income"),
    "planted column constant, bounds from data": ({i: {"income": PLANTED["income"]} for i in range(N_ROWS)},
                                                  ["--bounds-from-data"], "income"),
    "bad epsilon with planted data": (None, ["--epsilon", "-2"], "epsilon"),
    "LP too large with planted data": (None, ["--n-basis", "100000"], "LP"),
}


ENGINES = {"in memory": [], "streamed": ["--chunk-rows", "10"], "dask": ["--engine", "dask", "--chunk-rows", "10"]}


@pytest.mark.parametrize("engine", list(ENGINES))
@pytest.mark.parametrize("case", list(FAILING))
def test_failing_run_prints_no_private_value(workdir, capsys, caplog, case, engine):
    overrides, extra, expected = FAILING[case]
    text = table_text(overrides)
    data = workdir / "data.csv"
    data.write_text(text)
    partial = workdir / "partial.json"
    partial.write_text(json.dumps({k: v for k, v in BOUNDS.items() if k != "income"}))
    if "--bounds" in extra:
        extra = ["--bounds", partial]
    elif "--bounds-from-data" not in extra:
        extra = ["--bounds", workdir / "bounds.json", *extra]
    code, printed = run_in_process(base_args(workdir, data, *extra, *ENGINES[engine], "--quiet"), capsys, caplog)
    assert code != 0
    errors = [line for line in printed.splitlines() if line.startswith("synthdp: error:")]
    assert len(errors) == 1 and expected in errors[0], printed
    numbers = {f"planted {name}": float(literal) for name, literal in PLANTED.items()}
    assert find_leaks(printed, numbers) == [], printed
    assert not (workdir / "out.csv").exists() and not (workdir / "report.json").exists()


def test_subprocess_runs_print_no_private_value(workdir):
    """The installed entry point, as a user runs it: one success and one failure."""
    text = table_text()
    data = workdir / "data.csv"
    data.write_text(text)
    numbers = private_numbers(frame_of(text))
    command = [sys.executable, "-m", "synthdp.cli", *map(str, base_args(workdir, data, "--bounds",
                                                                          workdir / "bounds.json"))]
    success = subprocess.run(command, capture_output=True, text=True)
    assert success.returncode == 0, success.stderr
    assert find_leaks(success.stdout + success.stderr, numbers) == []
    report = json.loads((workdir / "report.json").read_text())
    assert report_leaks(report, numbers) == []

    (workdir / "bad.csv").write_text(table_text({PLANTED_ROW: {"tiny": "NaN"}}))
    command[command.index(str(data))] = str(workdir / "bad.csv")
    command[command.index("-o") + 1] = str(workdir / "bad_out.csv")
    failure = subprocess.run(command, capture_output=True, text=True)
    assert failure.returncode != 0 and "synthdp: error:" in failure.stderr
    assert "Traceback" not in failure.stderr
    assert find_leaks(failure.stdout + failure.stderr, numbers) == []


def test_the_search_finds_a_planted_value_when_it_is_there():
    """The detector itself: every rendering a leak could take is found (so a passing
    leak test means something)."""
    numbers = {f"planted {name}": float(literal) for name, literal in PLANTED.items()}
    for literal in PLANTED.values():
        value = float(literal)
        for text in (f"error: bad value {value}", f"value={value:.6g}", f"[{value!r}]", f"{value:.3e}",
                     json.dumps({"x": value})):
            assert find_leaks(text, numbers), text
    assert find_leaks("synthdp: error: column 'income' is not numeric", numbers) == []


@pytest.mark.parametrize("extra", [[], ["--chunk-rows", "25"]], ids=["in memory", "streamed"])
def test_privacy_unit_run_shows_no_identifier_and_no_private_value(workdir, capsys, caplog, extra):
    """--privacy-unit: no real identifier in the output, the report or anything printed (the
    unit column holds synthetic identifiers), and no planted value; the report's released
    units statistics (the noisy row count and rows-per-person histogram) are left out of the
    numeric search, as the other released statistics are."""
    text = table_text()
    lines = text.splitlines()
    identifiers = [f"PERSON{424200 + i % 37}" for i in range(N_ROWS)]
    lines = [lines[0] + ",person"] + [line + "," + identifier for line, identifier in zip(lines[1:], identifiers)]
    data = workdir / "data.csv"
    data.write_text("\n".join(lines) + "\n")
    code, printed = run_in_process(base_args(workdir, data, "--bounds", workdir / "bounds.json", "--delta", "1e-6",
                                             "--privacy-unit", "person", "--max-rows-per-unit", "5", "--quiet",
                                             *extra), capsys, caplog)
    assert code == 0, printed
    numbers = private_numbers(frame_of(text))
    report = json.loads((workdir / "report.json").read_text())
    unit = report["privacy"].pop("privacy_unit")
    assert unit["column"] == "person" and set(unit) >= {"rows_noisy", "units_per_contribution_bin_noisy"}
    assert find_leaks(printed, numbers) == [] and report_leaks(report, numbers) == []
    written = (workdir / "out.csv").read_text()
    everything = "\n".join([printed, json.dumps(report), json.dumps(unit), written])
    assert not any(str(424200 + i) in everything for i in range(37))
    assert pd.read_csv(workdir / "out.csv")["person"].str.startswith("synthetic-").all()


def test_the_report_describes_a_csv_file_alike_whether_its_size_streamed_it_or_not(tmp_path, monkeypatch):
    """A CSV file over STREAM_CSV_BYTES streams, one under it is read in memory: its size is the values'
    (one longer value crosses the line), and the report said "in memory" or "CSV file, streamed" with its
    chunk rows and where the cells were kept. It now gives the rule alone, the same for both; the release
    is the same (the engines' tests check it to 1e-12) and so are the report's documents."""
    from synthdp.reader import table as table_module

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 400).round(3), "y": rng.uniform(0, 1, 400).round(3)})
    frame.to_csv(tmp_path / "short.csv", index=False)
    frame.loc[5, "x"] = 0.123456789  # a neighbour: one value written longer
    frame.to_csv(tmp_path / "long.csv", index=False)
    limit = (tmp_path / "short.csv").stat().st_size
    assert (tmp_path / "long.csv").stat().st_size > limit
    monkeypatch.setattr(table_module, "STREAM_CSV_BYTES", limit)
    bounds = tmp_path / "bounds.json"
    bounds.write_text(json.dumps({"x": [0, 1], "y": [0, 1]}))
    engines = []
    for name in ("short", "long"):
        assert main(["generate", str(tmp_path / f"{name}.csv"), "-o", str(tmp_path / f"{name}.out.csv"),
                     "--bounds", str(bounds),
                     "--epsilon", "1", "--delta", "1e-10", "--report", str(tmp_path / f"{name}.json"),
                     "--quiet"]) == 0
        engines.append(json.loads((tmp_path / f"{name}.json").read_text())["engine"])
    assert engines[0] == engines[1] and "streamed" in engines[0]["input"] and "kept_cells" not in engines[0]


def test_a_stream_outputs_staged_file_is_readable_by_its_user_only(tmp_path, monkeypatch):
    """An output written into a stream (a named pipe, /dev/stdout) is staged in the system's temporary
    folder, shared with other users, until it is copied into the stream, which may wait for its reader:
    a draft schema holds the data's own levels and bounds. Its staged file is 0600 whatever the umask
    (under 0022 a plain open() made it 0644, readable by every user of the machine)."""
    import os
    import shutil
    import stat

    (tmp_path / "data.csv").write_text("age,city\n33.3456789,ZZSECRET\n40,Paris\n50,Paris\n")
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    staged = []
    copy = shutil.copyfileobj

    def spy(source, target, *args):
        staged.append((stat.S_IMODE(os.fstat(source.fileno()).st_mode), os.path.dirname(source.name)))
        return copy(source, target, *args)

    monkeypatch.setattr(shutil, "copyfileobj", spy)
    umask = os.umask(0o022)
    try:
        assert main(["schema", str(tmp_path / "data.csv"), "-o", os.devnull]) == 0
    finally:
        os.umask(umask)
    assert staged == [(0o600, str(tmp_path))]
    assert not [name for name in os.listdir(tmp_path) if name.startswith(".synthdp-")]  # removed once copied
