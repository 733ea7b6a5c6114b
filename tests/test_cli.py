"""The command line: outputs, config files, and every bad input ending in a one-line error
with a non-zero exit, no output file, and no data value in what is printed."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from synthdp.cli import main
from synthdp.reader.table import EXACT_FLOATS

PLANTED = 98765.4321  # a distinctive private value that must never be printed


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"age": rng.integers(20, 80, 300), "income": rng.uniform(1e4, 9e4, 300),
                          "score": rng.uniform(0, 1, 300)})
    frame.loc[5, "income"] = PLANTED
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    bounds = tmp_path / "bounds.json"
    bounds.write_text(json.dumps({"age": {"bounds": [18, 90], "type": "integer"},
                                  "income": [0, 1e5], "score": [0, 1]}))
    return frame, path, bounds


def run(args, capsys):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_generate_writes_the_table_and_the_report(table, tmp_path, capsys):
    frame, data, bounds = table
    out, report = tmp_path / "out.csv", tmp_path / "report.json"
    code, printed = run(["generate", data, "-o", out, "--epsilon", 1, "--bounds", bounds, "--report", report,
                         "--seed", 1, "--rows", 123], capsys)
    assert code == 0, printed
    synthetic = pd.read_csv(out)
    assert list(synthetic.columns) == list(frame.columns) and len(synthetic) == 123
    assert pd.api.types.is_integer_dtype(synthetic["age"])
    content = json.loads(report.read_text())
    assert content["privacy"]["epsilon_spent"] == pytest.approx(1.0)
    assert content["output"]["rows"] == 123
    assert str(PLANTED) not in printed and str(PLANTED) not in report.read_text()


def test_same_seed_gives_the_same_bytes(table, tmp_path, capsys):
    _, data, bounds = table
    outputs = []
    for name in ("a.csv", "b.csv"):
        run(["generate", data, "-o", tmp_path / name, "--bounds", bounds, "--seed", 7, "--quiet"], capsys)
        outputs.append((tmp_path / name).read_bytes())
    assert outputs[0] == outputs[1]


def test_config_file_sets_options_and_flags_override_it(table, tmp_path, capsys):
    _, data, bounds = table
    config = tmp_path / "run.toml"
    config.write_text('epsilon = 0.5\ndelta = 1e-9\nn-candidates = 300\ncandidates = "hypercube"\n')
    report = tmp_path / "r.json"
    code, printed = run(["generate", data, "-o", tmp_path / "o.csv", "--config", config, "--epsilon", 2,
                         "--bounds", bounds, "--report", report, "--seed", 0, "--quiet"], capsys)
    assert code == 0, printed
    parameters = json.loads(report.read_text())["parameters"]
    assert parameters["config"]["epsilon"] == 2 and parameters["config"]["delta"] == 1e-9
    assert parameters["candidates"] == "hypercube" and parameters["n_candidates"] == 300


@pytest.mark.parametrize(("content", "message"), [
    ('bounds_from_data = "false"', "bounds_from_data must be true or false"),  # a string is truthy: not private
    ('quiet = "no"', "quiet must be true or false"),
    ("bounds = 3", "bounds must be text in quotes"),
    ('lifetime_epsilon = "2"', "lifetime_epsilon must be a number"),
    ("rows = 10.7", "--rows must be an integer"),  # not 10 rows
    ("rows = true", "--rows must be an integer"),  # not 1 row
    ("copies = 2.5", "--copies must be an integer"),
    ("blend = true", "--blend must be a number or 'auto'"),  # not 1
    ('blend = "half"', "--blend must be a number or 'auto'"),
    ("n_basis = 20\nn-basis = 30", "gives 'n_basis' twice"),  # not the last one silently
])
def test_a_config_value_of_the_wrong_type_is_an_error_before_the_fit(table, tmp_path, capsys, content, message):
    """A config file's value has its flag's type: one line naming the key, exit 2, before any data
    is read (no progress on stderr, no output), instead of a truthy string or a fraction taken as
    something else."""
    _, data, bounds = table
    config = tmp_path / "run.toml"
    config.write_text(content + "\n")
    code, printed = run(["generate", data, "-o", tmp_path / "o.csv", "--config", config, "--bounds", bounds], capsys)
    assert code == 2 and printed.strip().splitlines() == [printed.strip()] and message in printed
    assert "stages" not in printed and not (tmp_path / "o.csv").exists()


def test_each_warning_once_and_no_numpy_noise_at_a_tiny_delta(table, tmp_path, capsys):
    """At delta = 1e-300 the noise calibration's root finder meets a flat stretch (its zero
    denominator gave numpy's "invalid value" warning some hundreds of times): none now, and a
    warning raised many times is printed once."""
    _, data, bounds = table
    code, printed = run(["generate", data, "-o", tmp_path / "o.csv", "--bounds", bounds, "--delta", "1e-300",
                         "--seed", 0, "--quiet"], capsys)
    assert code == 0 and "invalid value" not in printed
    assert printed.count("a known seed makes the noise predictable") == 1


@pytest.mark.parametrize(("args", "label"), [
    (["generate", "{data}", "-o", "{out}", "--bounds", "{folder}"], "bounds file"),
    (["generate", "{data}", "-o", "{out}", "--schema", "{folder}"], "schema file"),
    (["generate", "{data}", "-o", "{out}", "--bounds", "{bounds}", "--config", "{folder}"], "config file"),
    (["generate", "{folder}", "-o", "{out}", "--bounds", "{bounds}"], "input file"),
    (["sample", "{folder}", "-n", "5", "-o", "{out}"], "model file"),
    (["marginal", "--summary", "{folder}", "--columns", "age"], "summary file"),
])
def test_a_folder_given_as_an_input_file_is_named_as_such(table, tmp_path, capsys, args, label):
    """Not "cannot write the output" (nothing was being written) nor "does not exist" (it does)."""
    _, data, bounds = table
    folder = tmp_path / "a_folder"
    folder.mkdir()
    values = {"data": data, "out": tmp_path / "o.csv", "folder": folder, "bounds": bounds}
    code, printed = run([arg.format(**values) for arg in args], capsys)
    assert code == 2 and printed.strip() == f"synthdp: error: {label} '{folder}' is a folder, not a file"


def test_rows_is_checked_before_the_fit(table, tmp_path, capsys):
    _, data, bounds = table
    for rows in ("0", "-5", "1.5", "abc"):
        code, printed = run(["generate", data, "-o", tmp_path / "o.csv", "--bounds", bounds, "--rows", rows], capsys)
        assert code == 2 and "--rows must be an integer" in printed and "stages" not in printed, printed


def test_blend_auto_is_the_default_and_a_blend_given_is_used_as_given(table, tmp_path, capsys):
    """--blend auto (the default, None in the config) decides the blend's tolerance at run time
    (pipeline.run.blend_factor: 1 where the moments are noise, as at this n and pure epsilon); a
    number given is the tolerance, where the moments are noise too (before, a value below 1 was
    raised to 1 there). The report's lp.blend is the tolerance used, its config what was given;
    anything but a number or 'auto' is one line naming the flag, before the fit."""
    _, data, bounds = table
    used = {}
    for given in (None, "auto", "0.5", "0"):
        report = tmp_path / f"r{given}.json"
        flags = [] if given is None else ["--blend", given]
        code, printed = run(["generate", data, "-o", tmp_path / f"o{given}.csv", "--bounds", bounds, "--report", report,
                             "--epsilon", 1, "--seed", 0, "--quiet", "--tilt", 0, *flags], capsys)
        assert code == 0, printed
        content = json.loads(report.read_text())
        used[given] = (content["lp"]["blend"], content["parameters"]["config"]["blend"], content["lp"]["uniform_share"])
    assert used[None] == used["auto"] and used[None][:2] == (1.0, None)
    assert used["0.5"][:2] == (0.5, 0.5) and used["0"] == (0.0, 0.0, 0.0)
    assert used["0.5"][2] <= used[None][2]
    code, printed = run(["generate", data, "-o", tmp_path / "o.csv", "--bounds", bounds, "--blend", "half"], capsys)
    assert code == 2 and printed.strip() == "synthdp: error: --blend must be a number or 'auto'" and "stages" not in printed


def test_rows_theory_gives_the_papers_m(table, tmp_path, capsys):
    _, data, bounds = table
    report = tmp_path / "r.json"
    code, _ = run(["generate", data, "-o", tmp_path / "o.csv", "--bounds", bounds, "--rows", "theory",
                   "--report", report, "--seed", 0, "--quiet"], capsys)
    content = json.loads(report.read_text())
    assert code == 0 and content["output"]["rows"] == content["parameters"]["m"]


def _write(tmp_path, frame_or_text, name="bad.csv"):
    path = tmp_path / name
    if isinstance(frame_or_text, str):
        path.write_text(frame_or_text)
    else:
        frame_or_text.to_csv(path, index=False)
    return path


def _frame(**columns):
    base = {"age": [30, 40, 50, 60], "income": [1e4, 2e4, PLANTED, 4e4], "score": [0.1, 0.2, 0.3, 0.4]}
    base.update(columns)
    return pd.DataFrame(base)


BAD_INPUTS = {
    "nan": (_frame(score=[0.1, np.nan, 0.3, 0.4]), [], "score"),
    "inf": (_frame(score=[0.1, np.inf, 0.3, 0.4]), [], "score"),
    "text in a numeric column": (_frame(score=["0.1", "high", "0.3", "0.4"]), [], "score"),
    "empty file": ("", [], "empty"),
    "header only": ("age,income,score\n", [], "no data rows"),
    "single row": ("age,income,score\n30,98765.4321,0.5\n", [], "at least 2 rows"),
    "constant column, bounds from data": (_frame(score=[0.5] * 4), ["--bounds-from-data"], "score"),
    "epsilon zero": (_frame(), ["--epsilon", "0"], "epsilon"),
    "epsilon negative": (_frame(), ["--epsilon", "-1"], "epsilon"),
    "delta one": (_frame(), ["--delta", "1"], "delta"),
    "delta negative": (_frame(), ["--delta", "-0.1"], "delta"),
    "gaussian without delta": (_frame(), ["--noise", "gaussian"], "delta"),
    "rows not a number": (_frame(), ["--rows", "many"], "--rows"),
    "duplicate column names": ("age,age,score\n1,2,0.1\n3,4,0.2\n", [], "age"),
    "missing input": (None, [], "does not exist"),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_is_a_one_line_error_and_leaves_no_output(case, table, tmp_path, capsys):
    content, extra, expected = BAD_INPUTS[case]
    _, _, bounds = table
    data = tmp_path / "absent.csv" if content is None else _write(tmp_path, content)
    out = tmp_path / "out.csv"
    args = ["generate", data, "-o", out, "--report", tmp_path / "r.json", "--seed", 0, "--quiet"]
    args += extra if "--bounds-from-data" in extra else ["--bounds", bounds, *extra]
    code, printed = run(args, capsys)
    assert code != 0
    lines = printed.strip().splitlines()  # one line: no warning before it (--seed's, say), no traceback
    assert len(lines) == 1 and lines[0].startswith("synthdp: error:") and expected in lines[0], printed
    assert "Traceback" not in printed and str(PLANTED) not in printed and "98765" not in printed
    assert not out.exists() and not (tmp_path / "r.json").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


BAD_BOUNDS = {
    "unknown column": ({"age": [0, 100], "income": [0, 1e5], "score": [0, 1], "height": [0, 3]}, "height"),
    "lo equals hi": ({"age": [0, 100], "income": [5, 5], "score": [0, 1]}, "income"),
    "lo above hi": ({"age": [0, 100], "income": [0, 1e5], "score": [1, 0]}, "score"),
    "missing column": ({"age": [0, 100], "income": [0, 1e5]}, "score"),
    "not a pair": ({"age": [0, 100], "income": [0], "score": [0, 1]}, "income"),
    "a schema": ({"columns": {"age": {"type": "integer", "bounds": [0, 100]}}}, "--schema"),
}


@pytest.mark.parametrize("case", list(BAD_BOUNDS))
def test_bad_bounds_file_is_a_one_line_error(case, table, tmp_path, capsys):
    _, data, _ = table
    bounds = tmp_path / "b.json"
    content, column = BAD_BOUNDS[case]
    bounds.write_text(json.dumps(content))
    out = tmp_path / "out.csv"
    code, printed = run(["generate", data, "-o", out, "--bounds", bounds, "--seed", 0, "--quiet"], capsys)
    errors = [line for line in printed.splitlines() if line.startswith("synthdp: error:")]
    assert code != 0 and len(errors) == 1 and (f"'{column}'" in errors[0] or column in errors[0])
    assert not out.exists()


@pytest.mark.parametrize("name", ["columns", "draft"])
def test_a_column_called_columns_is_a_bounds_file_s_column(tmp_path, capsys, name):
    frame = pd.DataFrame({name: np.linspace(0, 1, 50), "b": np.linspace(1, 2, 50)})
    frame.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "b.json").write_text(json.dumps({name: {"bounds": [0, 1]}, "b": [1, 2]}))
    code, _ = run(["generate", tmp_path / "t.csv", "-o", tmp_path / "o.csv", "--bounds", tmp_path / "b.json",
                   "--seed", 0, "--quiet"], capsys)
    assert code == 0


def test_a_constant_column_with_public_bounds_is_fine(tmp_path, capsys):
    data = _write(tmp_path, _frame(score=[0.5] * 4))
    bounds = tmp_path / "b.json"
    bounds.write_text(json.dumps({"age": [0, 100], "income": [0, 1e5], "score": [0, 1]}))
    code, printed = run(["generate", data, "-o", tmp_path / "o.csv", "--bounds", bounds, "--seed", 0,
                         "--n-candidates", 200, "--quiet"], capsys)
    assert code == 0, printed


def test_an_existing_output_survives_a_failed_run(table, tmp_path, capsys):
    _, data, bounds = table
    out = tmp_path / "out.csv"
    out.write_text("previous result\n")
    code, _ = run(["generate", data, "-o", out, "--bounds", bounds, "--epsilon", "-1"], capsys)
    assert code != 0 and out.read_text() == "previous result\n"


def test_help_explains_the_privacy_model():
    result = subprocess.run([sys.executable, "-m", "synthdp.cli", "generate", "--help"],
                            capture_output=True, text=True, check=True)
    text = " ".join(result.stdout.split())
    assert "--bounds-from-data" in text and "NOT differentially private" in text



def test_help_of_fit_schema_and_quiet_says_what_they_do():
    """A review: fit's help showed generate's examples, schema's left out the dates and decimals it drafts,
    and --quiet said only "no progress bar" while it also drops the closing line and the notes."""
    from synthdp.cli import build_parser

    parser = build_parser()
    subcommands = next(action for action in parser._actions if action.dest == "command").choices
    fit_help = " ".join(subcommands["fit"].format_help().split())
    assert "synthdp fit data.csv -o model.synthdp" in fit_help and "synthdp generate data.csv" not in fit_help
    schema_help = " ".join(subcommands["schema"].format_help().split())
    assert "date or datetime" in schema_help and '"decimals"' in schema_help
    for command in ("generate", "fit", "summarize", "sample"):
        assert "no closing line" in " ".join(subcommands[command].format_help().split()), command

def test_python_dash_m_synthdp_is_the_command():
    from synthdp import __version__

    result = subprocess.run([sys.executable, "-m", "synthdp", "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and __version__ in result.stdout
    result = subprocess.run([sys.executable, "-m", "synthdp", "generate"], capture_output=True, text=True)
    assert result.returncode == 2 and result.stderr.startswith("synthdp: error: the following arguments are required")


def test_bounds_share_estimates_missing_bounds_with_dp(tmp_path, capsys):
    rng = np.random.default_rng(1)
    data = _write(tmp_path, pd.DataFrame({"a": rng.normal(100, 15, 20_000), "b": rng.exponential(3, 20_000)}))
    report = tmp_path / "r.json"
    code, printed = run(["generate", data, "-o", tmp_path / "o.csv", "--bounds-share", "0.3", "--report", report,
                         "--seed", 0, "--n-candidates", 500, "--quiet"], capsys)
    assert code == 0, printed
    content = json.loads(report.read_text())
    assert content["bounds"]["source"] == "DP estimate"
    assert [e["stage"] for e in content["privacy"]["stages"]][0] == "bounds"


def test_the_command_line_starts_without_the_heavy_modules():
    """scipy.stats and scipy.optimize cost about half a second at start-up, scikit-learn (which
    opendp.prelude loads) a second; they are imported where they are used. A structural check:
    the time itself is measured in benchmarks/."""
    code = ("import sys, synthdp.cli; from synthdp.privacy.noise import OpenDPNoise; OpenDPNoise(); "
            "print(sorted(m for m in ('scipy.stats', 'scipy.optimize', 'sklearn') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


def test_the_solver_prints_nothing_on_standard_output(tmp_path):
    """HiGHS writes a banner when its first solver object is made; the command line keeps it out."""
    rng = np.random.default_rng(2)
    data = _write(tmp_path, pd.DataFrame({"a": rng.uniform(0, 1, 300), "b": rng.uniform(0, 1, 300)}))
    bounds = tmp_path / "b.json"
    bounds.write_text(json.dumps({"a": [0, 1], "b": [0, 1]}))
    result = subprocess.run([sys.executable, "-m", "synthdp.cli", "generate", data, "-o", tmp_path / "o.csv",
                             "--bounds", bounds, "--seed", "0", "--quiet"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "HiGHS" not in result.stdout + result.stderr


@pytest.mark.parametrize("spelling", ["same", "dotted", "link", "hardlink", "bounds", "report-is-output"])
def test_an_output_that_is_an_input_is_refused_and_nothing_changes(tmp_path, monkeypatch, capsys, spelling):
    """Issue 19: -o naming the input (or the bounds file, or another output) exits non-zero
    with one line naming the option, and every file is left as it was."""
    import os

    rng = np.random.default_rng(5)
    pd.DataFrame({"a": rng.uniform(0, 1, 50), "b": rng.uniform(0, 1, 50)}).to_csv(tmp_path / "w.csv", index=False)
    (tmp_path / "b.json").write_text('{"a": [0, 1], "b": [0, 1]}')
    monkeypatch.chdir(tmp_path)
    output, extra = {"same": ("w.csv", []), "dotted": (f"../{tmp_path.name}/./w.csv", []), "link": ("link.csv", []),
                     "hardlink": ("hard.csv", []), "bounds": ("b.json", []),
                     "report-is-output": ("out.csv", ["--report", "out.csv"])}[spelling]
    if spelling == "link":
        os.symlink("w.csv", "link.csv")
    if spelling == "hardlink":
        os.link("w.csv", "hard.csv")
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    code = main(["generate", "w.csv", "-o", output, "--bounds", "b.json", "--quiet", "--seed", "1", *extra])
    error = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(error) == 1 and error[0].startswith("synthdp: error: --")
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before


@pytest.mark.parametrize("sep, decimal, encoding", [(";", ",", "utf-8"), ("\t", ".", "latin-1"), ("|", ".", "utf-8")])
def test_csv_dialects_are_read_as_declared(tmp_path, sep, decimal, encoding):
    """--sep / --decimal / --encoding give the same seeded release as the plain CSV."""
    rng = np.random.default_rng(8)
    frame = pd.DataFrame({"größe": rng.uniform(0, 1, 200), "b": rng.uniform(0, 5, 200)})
    frame.to_csv(tmp_path / "plain.csv", index=False, encoding=encoding)
    frame.to_csv(tmp_path / "dialect.csv", index=False, sep=sep, decimal=decimal, encoding=encoding)
    (tmp_path / "b.json").write_text('{"größe": [0, 1], "b": [0, 5]}', encoding="utf-8")
    common = ["--bounds", str(tmp_path / "b.json"), "--seed", "3", "--quiet"]
    enc = [] if encoding == "utf-8" else ["--encoding", encoding]
    assert main(["generate", str(tmp_path / "plain.csv"), "-o", str(tmp_path / "p.csv"), *common, *enc]) == 0
    flags = ["--sep", "tab" if sep == "\t" else sep, "--decimal", decimal, *enc]
    assert main(["generate", str(tmp_path / "dialect.csv"), "-o", str(tmp_path / "d.csv"), *common, *flags]) == 0
    assert (tmp_path / "p.csv").read_bytes() == (tmp_path / "d.csv").read_bytes()


def thousands_text(frame: pd.DataFrame, sep: str, decimal: str, thousands: str) -> str:
    """The CSV of ``frame`` with its numbers written with a thousands separator ("1.234,56" with
    ``decimal=","`` and ``thousands="."``), quoted where the separator is the field separator."""
    def cell(value: float) -> str:
        text = f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"
        text = text.translate(str.maketrans({",": thousands, ".": decimal}))
        return f'"{text}"' if sep in text else text
    rows = [sep.join(frame.columns)] + [sep.join(cell(value) for value in row) for row in frame.to_numpy()]
    return "\n".join(rows) + "\n"



@pytest.mark.parametrize("sep, decimal, thousands", [(";", ",", "."), (",", ".", ","), ("\t", ",", " ")])
def test_thousands_separators_are_read_as_declared(tmp_path, sep, decimal, thousands):
    """--thousands (with --sep and --decimal) gives the same seeded release as the plain CSV: "1.234,5"
    as 1234.5, a quoted "1,234.5" in a comma-separated file too; the output is the plain one, byte for byte."""
    rng = np.random.default_rng(8)
    frame = pd.DataFrame({"a": rng.uniform(-5_000, 5_000, 200).round(2), "n": rng.integers(0, 2_000_000, 200)})
    frame.to_csv(tmp_path / "plain.csv", index=False)
    (tmp_path / "separated.csv").write_text(thousands_text(frame, sep, decimal, thousands))
    (tmp_path / "b.json").write_text('{"a": [-5000, 5000], "n": {"bounds": [0, 2000000], "type": "integer"}}')
    common = ["--bounds", str(tmp_path / "b.json"), "--seed", "3", "--quiet"]
    assert main(["generate", str(tmp_path / "plain.csv"), "-o", str(tmp_path / "p.csv"), *common]) == 0
    flags = ["--sep", "tab" if sep == "\t" else sep, "--decimal", decimal, "--thousands", thousands]
    assert main(["generate", str(tmp_path / "separated.csv"), "-o", str(tmp_path / "d.csv"), *common, *flags]) == 0
    assert (tmp_path / "p.csv").read_bytes() == (tmp_path / "d.csv").read_bytes()


@pytest.mark.parametrize("flags", [["--thousands", "."], ["--sep", ";", "--decimal", ",", "--thousands", ","],
                                   ["--thousands", '"'], ["--thousands", ",,"], ["--thousands", ""],
                                   ["--thousands", "0"]],
                         ids=["decimal-mark", "same-as-decimal", "quote", "two-characters", "empty", "digit"])
def test_a_bad_thousands_option_is_one_line_naming_it(tmp_path, capsys, flags):
    (tmp_path / "t.csv").write_text("a,b\n1,2\n3,4\n")
    code = main(["generate", str(tmp_path / "t.csv"), "-o", str(tmp_path / "o.csv"), "--bounds-from-data",
                 "--quiet", *flags])
    error = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(error) == 1 and error[0].startswith("synthdp: error: thousands must be one character")
    assert not (tmp_path / "o.csv").exists()


def test_a_one_column_header_with_a_separator_suggests_sep(tmp_path, capsys):
    (tmp_path / "semi.csv").write_text("a;b\n1;2\n3;4\n")
    (tmp_path / "b.json").write_text('{"a": [0, 5], "b": [0, 5]}')
    code = main(["generate", str(tmp_path / "semi.csv"), "-o", str(tmp_path / "o.csv"),
                 "--bounds", str(tmp_path / "b.json"), "--quiet"])
    error = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(error) == 1 and "--sep ';'" in error[0] and "a;b" not in error[0]
    assert not (tmp_path / "o.csv").exists()


@pytest.mark.parametrize("table, config", [("a;b\n1,5;2\n3;4,25\n2;1\n", 'sep = ";"\ndecimal = ","\n'),
                                           ("a;b\n1.234,5;2\n3;4.000,25\n2;1\n",
                                            'sep = ";"\ndecimal = ","\nthousands = "."\n')],
                         ids=["sep-decimal", "thousands"])
def test_csv_options_come_from_the_config_file_too(tmp_path, table, config):
    (tmp_path / "semi.csv").write_text(table)
    (tmp_path / "b.json").write_text('{"a": [0, 5000], "b": [0, 5000]}')
    (tmp_path / "c.toml").write_text(config)
    assert main(["generate", str(tmp_path / "semi.csv"), "-o", str(tmp_path / "o.csv"), "--config",
                 str(tmp_path / "c.toml"), "--bounds", str(tmp_path / "b.json"), "--quiet", "--seed", "1"]) == 0
    assert list(pd.read_csv(tmp_path / "o.csv").columns) == ["a", "b"]


def test_a_bad_csv_option_is_one_line_naming_it(tmp_path, capsys):
    (tmp_path / "t.csv").write_text("a,b\n1,2\n")
    code = main(["generate", str(tmp_path / "t.csv"), "-o", str(tmp_path / "o.csv"), "--bounds-from-data",
                 "--sep", ";;", "--quiet"])
    assert code == 2 and "sep must be one character" in capsys.readouterr().err


@pytest.mark.parametrize("compress, name", [("gzip", "gzip"), ("bz2", "bzip2")])
def test_a_compressed_csv_is_named_as_compressed(tmp_path, capsys, compress, name):
    import bz2
    import gzip

    text = "a,b\n" + "".join(f"{i},{i % 7}\n" for i in range(200))
    (tmp_path / "t.csv.gz").write_bytes({"gzip": gzip, "bz2": bz2}[compress].compress(text.encode()))
    code = main(["generate", str(tmp_path / "t.csv.gz"), "-o", str(tmp_path / "o.csv"), "--bounds-from-data",
                 "--quiet"])
    error = capsys.readouterr().err
    assert code == 2 and f"is {name}-compressed: decompress it first" in error and len(error.splitlines()) == 1
    assert not (tmp_path / "o.csv").exists()


def test_outputs_get_the_mode_of_ordinary_files(tmp_path):
    import os
    import stat

    rng = np.random.default_rng(2)
    pd.DataFrame({"a": rng.uniform(0, 1, 100)}).to_csv(tmp_path / "t.csv", index=False)
    umask = os.umask(0o022)
    try:
        assert main(["generate", str(tmp_path / "t.csv"), "-o", str(tmp_path / "o.csv"), "--bounds-from-data",
                     "--quiet", "--seed", "1", "--report", str(tmp_path / "r.json")]) == 0
    finally:
        os.umask(umask)
    for name in ("o.csv", "r.json"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644


def test_the_csv_writer_reads_back_as_the_same_table(tmp_path):
    """write_csv (pyarrow's writer where installed) round-trips numbers, text, missing cells and dates."""
    from synthdp.writers import write_csv

    rng = np.random.default_rng(4)
    frame = pd.DataFrame({
        "x": np.concatenate([rng.normal(0, 1e-5, 5), [1e-300, 5e-324, 1 / 3, 1e21, -0.0]]),
        "n": pd.array([1, None, 3, 4, 5, 6, 7, 8, 9, 10], dtype="Int64"),
        "s": ["a", "b,c", None, 'q"x', "other", "e", "f", "g", "h", "(missing)"],
        "d": ["2021-03-04"] * 9 + [None],
        "a,b": np.arange(10.0),
    })
    write_csv(frame, tmp_path / "o.csv")
    back = pd.read_csv(tmp_path / "o.csv", **EXACT_FLOATS)  # correctly rounded with any pandas
    assert list(back.columns) == list(frame.columns)
    np.testing.assert_array_equal(back["x"].to_numpy(), frame["x"].to_numpy())  # exact, bit for bit
    assert back["n"].isna().tolist() == frame["n"].isna().tolist()
    assert back["s"].where(back["s"].notna(), None).tolist() == frame["s"].tolist()
    assert back["d"].isna().sum() == 1 and back["a,b"].tolist() == list(range(10))


def test_a_float_column_of_whole_numbers_reads_back_as_floats(tmp_path):
    from synthdp.writers import write_csv

    frame = pd.DataFrame({"grid": [151.0, 152.0, 149.0], "x": [0.5, 0.25, 1.0]})
    write_csv(frame, tmp_path / "o.csv")
    back = pd.read_csv(tmp_path / "o.csv", **EXACT_FLOATS)  # correctly rounded with any pandas
    assert back.dtypes.to_dict() == frame.dtypes.to_dict() and back.equals(frame)


def test_the_command_line_keeps_chunk_arrays_on_the_heap():
    """glibc's allocator is asked to serve 32 MB chunk arrays from its heap (mallopt accepts both
    parameters) where the C library is glibc; elsewhere nothing is asked."""
    import platform

    from synthdp.cli import keep_chunk_arrays_on_the_heap

    applied = keep_chunk_arrays_on_the_heap()
    assert applied == (sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc")


@pytest.mark.parametrize(("signal_name", "code"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_stopped_command_leaves_no_output_and_says_so(table, tmp_path, capsys, signal_name, code):
    """Ctrl-C or a kill (a scheduler's time limit) while ``sample`` streams rows: the temporary file
    is removed (a kill left a 13 GB hidden file before), nothing is written at -o, and the message
    is the interruption's (Ctrl-C came back through pyarrow's CSV writer as "No space left on
    device"), with the shell's exit status. Waits for the temporary file rather than a fixed time."""
    import signal
    import time

    _, data, bounds = table
    model = tmp_path / "m.synthdp"
    assert main(["fit", str(data), "-o", str(model), "--bounds", str(bounds), "--seed", "0", "--quiet"]) == 0
    out = tmp_path / "rows.csv"
    number = getattr(signal, signal_name)  # not ignored by the command (it keeps a signal its starter ignores)
    process = subprocess.Popen([sys.executable, "-m", "synthdp.cli", "sample", str(model), "-n", "1000000000", "-o",
                                str(out), "--quiet"], stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(number, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob(".rows.csv.*.tmp")) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.poll() is None, "sample ended before it was stopped"
    process.send_signal(number)
    _, err = process.communicate(timeout=120)
    assert process.returncode == code and err.strip() == "synthdp: interrupted; no output written"
    assert not out.exists() and not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob(".*.tmp"))


SCHEMA_MISTAKES = {  # a column spec's mistake -> what the one line says (before any data is read)
    "misspelt key": ({"type": "categorical", "levels": ["a", "b", "c"], "nulable": True},
                     "categorical column 'kind' has \"nulable\", which a categorical column does not take"),
    "bounds on a categorical column": ({"type": "categorical", "levels": ["a", "b", "c"], "bounds": [0, 1]},
                                       "categorical column 'kind' has \"bounds\""),
    "no level": ({"type": "categorical", "levels": []}, "categorical column 'kind' needs at least one level"),
    "unknown type on a text column": ({"type": "cat", "levels": ["a", "b", "c"]}, "column 'kind' has type 'cat'"),
}


@pytest.mark.parametrize("case", list(SCHEMA_MISTAKES))
def test_a_schema_or_bounds_file_says_what_it_does_not_take(tmp_path, capsys, case):
    """Keys a column's type does not take are errors, not ignored (a misspelt "nullable" would
    otherwise be a column without missing cells); an empty list of levels is refused (every value
    would come out "other"); a bad type on a text column is named as such, not as a column that
    is not numeric (the file is checked before the table is read)."""
    spec, message = SCHEMA_MISTAKES[case]
    frame = pd.DataFrame({"x": np.linspace(0, 1, 50), "kind": ["a", "b", "c", "a", "b"] * 10})
    frame.to_csv(tmp_path / "data.csv", index=False)
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"columns": {"x": {"type": "continuous", "bounds": [0, 1]}, "kind": spec}}))
    code, printed = run(["generate", tmp_path / "data.csv", "-o", tmp_path / "o.csv", "--schema", schema], capsys)
    assert code == 2 and printed.strip().splitlines() == [printed.strip()] and message in printed, printed
    bounds = tmp_path / "bounds.json"  # a numeric column's spec in a bounds file: the same rule
    bounds.write_text(json.dumps({"x": {"bounds": [0, 1], "levels": ["a"]}}))
    frame[["x"]].to_csv(tmp_path / "numbers.csv", index=False)
    code, printed = run(["generate", tmp_path / "numbers.csv", "-o", tmp_path / "o.csv", "--bounds", bounds], capsys)
    assert code == 2 and "continuous column 'x' has \"levels\", which a continuous column does not take" in printed
    assert not (tmp_path / "o.csv").exists()


def test_an_option_the_run_does_not_use_is_named_in_a_warning(table, tmp_path, capsys):
    """--pca-share without --candidates pca (or --units-share without --privacy-unit, or
    --marginal-degree on a numeric table) changed nothing and said nothing: each now warns once,
    and the same option where it acts does not."""
    _, data, bounds = table
    base = ["generate", data, "-o", tmp_path / "o.csv", "--bounds", bounds, "--seed", 0, "--quiet", "--overwrite"]
    for extra, flag in ((["--pca-share", 0.5], "--pca-share acts only with --candidates pca"),
                        (["--units-share", 0.2], "--units-share acts only with --privacy-unit"),
                        (["--marginal-degree", 3], "--marginal-degree acts only with --schema")):
        code, printed = run(base + extra, capsys)
        assert code == 0 and printed.count(flag) == 1, printed
        assert "ignored in this fit" not in printed  # the estimator's own warning of it: not a second time
    code, printed = run(base + ["--candidates", "pca", "--pca-share", 0.5], capsys)
    assert code == 0 and "acts only" not in printed


@pytest.mark.parametrize("flag", ["-o", "--report", "--summary-out", "--model-out"])
def test_an_output_that_exists_is_refused_unless_overwrite_is_given(table, tmp_path, capsys, flag):
    """A user's file is never replaced unasked: refused before any work, the file untouched; --overwrite replaces it."""
    _, data, bounds = table
    existing = tmp_path / "mine.txt"
    existing.write_text("precious\n")
    paths = {"-o": tmp_path / "o.csv", "--report": tmp_path / "r.json", "--summary-out": tmp_path / "s.json",
             "--model-out": tmp_path / "m.synthdp", flag: existing}
    args = ["generate", data, "--bounds", bounds, "--quiet", *[a for pair in paths.items() for a in pair]]
    code, printed = run(args, capsys)
    named = {"-o": "--output"}.get(flag, flag)
    assert code == 2 and f"{named} '{existing}' exists: pass --overwrite" in printed and len(printed.splitlines()) == 1
    assert existing.read_text() == "precious\n"
    assert not any(path.exists() for key, path in paths.items() if key != flag)  # nothing else written either
    code, printed = run(args + ["--overwrite"], capsys)
    assert code == 0 and existing.read_bytes() != b"precious\n"


@pytest.mark.parametrize("command", ["sample", "schema", "summarize"])
def test_every_command_that_writes_refuses_an_existing_output(table, tmp_path, capsys, command):
    _, data, bounds = table
    existing = tmp_path / "mine.txt"
    existing.write_text("precious\n")
    if command == "sample":
        model = tmp_path / "m.synthdp"
        assert run(["fit", data, "-o", model, "--bounds", bounds, "--quiet"], capsys)[0] == 0
        args = ["sample", model, "-n", 10, "-o", existing, "--quiet"]
    else:
        args = [command, data, "-o", existing] + (["--bounds", bounds, "--quiet"] if command == "summarize" else [])
    code, printed = run(args, capsys)
    assert code == 2 and "exists: pass --overwrite" in printed and existing.read_text() == "precious\n"
    assert run(args + ["--overwrite"], capsys)[0] == 0 and existing.read_text() != "precious\n"


def test_a_link_keeps_its_place_and_a_stream_is_written_into(table, tmp_path, capsys, monkeypatch):
    """An output through a symbolic link replaces the link's target (the link stays); an output that is not a
    regular file (a named pipe here, /dev/null for --report) is written into, not replaced by a file."""
    import os
    import stat
    import threading

    _, data, bounds = table
    target, link = tmp_path / "target.csv", tmp_path / "link.csv"
    target.write_text("old\n")
    link.symlink_to(target)
    assert run(["generate", data, "-o", link, "--bounds", bounds, "--quiet", "--overwrite"], capsys)[0] == 0
    assert link.is_symlink() and target.read_text().startswith("age,income,score")
    pipe = tmp_path / "rows.pipe"
    os.mkfifo(pipe)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_bytes()))
    reader.start()
    real_access = os.access  # as for a user who may write /dev/null but not into /dev: the folders refuse
    monkeypatch.setattr(os, "access", lambda path, mode: real_access(path, mode) and not (
        mode == os.W_OK and os.path.isdir(path)))
    code, printed = run(["generate", data, "-o", pipe, "--bounds", bounds, "--quiet", "--report", os.devnull], capsys)
    reader.join(timeout=60)
    assert code == 0, printed
    assert stat.S_ISFIFO(pipe.stat().st_mode) and received[0].decode().startswith("age,income,score")
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_input_files_as_spreadsheets_and_shells_make_them(table, tmp_path, capsys):
    """A byte-order mark (streamed or not), an empty column name, a wrong --encoding, standard input and a
    compressed file read with another encoding: a release, or one line naming the file or the column."""
    import gzip
    import os

    frame, data, bounds = table
    bom = tmp_path / "bom.csv"
    bom.write_text(data.read_text(), encoding="utf-8-sig")
    for extra in ([], ["--chunk-rows", 50]):
        code, printed = run(["generate", bom, "-o", tmp_path / f"bom{len(extra)}.csv", "--bounds", bounds, "--quiet",
                             *extra], capsys)
        assert code == 0, printed
    empty = tmp_path / "empty.csv"
    empty.write_text(data.read_text().replace("income", "", 1))
    zipped = tmp_path / "t.csv.gz"
    zipped.write_bytes(gzip.compress(data.read_bytes()))
    pipe = tmp_path / "rows.pipe"  # as /dev/stdin is under a shell's pipe
    os.mkfifo(pipe)
    for args, message in (([empty], "column 2 of input file"), ([data, "--encoding", "utf-16"], "is not utf-16 text"),
                          ([pipe], "is not a regular file"),
                          ([zipped, "--encoding", "latin-1"], "is gzip-compressed")):
        code, printed = run(["generate", *args[:1], "-o", tmp_path / "o.csv", "--bounds", bounds, "--quiet",
                             *args[1:]], capsys)
        assert code == 2 and message in printed and len(printed.splitlines()) == 1, printed
        assert not (tmp_path / "o.csv").exists() and str(PLANTED) not in printed


def test_the_dask_engine_names_what_it_cannot_read(table, tmp_path, capsys, monkeypatch):
    pytest.importorskip("dask.dataframe")
    pytest.importorskip("pyarrow")
    import synthdp.reader.table as table_module

    frame, data, bounds = table
    labels = tmp_path / "labels.parquet"
    frame.set_axis(range(frame.shape[1]), axis=1).to_parquet(labels)
    numbered = tmp_path / "b.json"
    numbered.write_text(json.dumps({str(i): [0, 1e6] for i in range(frame.shape[1])}))
    code, printed = run(["generate", labels, "-o", tmp_path / "o.csv", "--bounds", numbered, "--quiet",
                         "--engine", "dask"], capsys)
    assert code == 2 and "column labels that are not text" in printed and len(printed.splitlines()) == 1

    def damaged(*args, **kwargs):
        raise OSError("Couldn't deserialize thrift")  # what Arrow raises on a damaged page

    monkeypatch.setattr(table_module, "_partition_sums", damaged)
    code, printed = run(["generate", data, "-o", tmp_path / "o.csv", "--bounds", bounds, "--quiet",
                         "--engine", "dask"], capsys)
    assert code == 2 and "could not be read: it is damaged" in printed and "cannot write" not in printed


def test_smaller_input_messages_name_the_file_and_the_way_out(table, tmp_path, capsys, monkeypatch):
    """A bounds file saved with a byte-order mark reads; a repeated column name names its file; an output
    folder that cannot be written is refused before the fit; a text column with no value is named by the draft."""
    import os

    frame, data, bounds = table
    marked = tmp_path / "marked.json"
    marked.write_text(bounds.read_text(), encoding="utf-8-sig")
    assert run(["generate", data, "-o", tmp_path / "o.csv", "--bounds", marked, "--quiet"], capsys)[0] == 0
    twice = tmp_path / "twice.csv"
    twice.write_text("age,age,score\n1,2,3\n4,5,6\n")
    code, printed = run(["generate", twice, "-o", tmp_path / "t.csv", "--bounds-from-data", "--quiet"], capsys)
    assert code == 2 and f"appears more than once in input file '{twice}'" in printed
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: False if mode == os.W_OK else real_access(path, mode))
    code, printed = run(["generate", data, "-o", tmp_path / "w.csv", "--bounds", bounds, "--quiet"], capsys)
    assert code == 2 and "is not writable" in printed
    monkeypatch.undo()
    pytest.importorskip("pyarrow")
    blank = tmp_path / "blank.parquet"  # a text column of missing cells only
    pd.DataFrame({"a": [1.0, 2.0], "b": pd.Series([None, None], dtype=object)}).to_parquet(blank)
    code, printed = run(["schema", blank, "-o", tmp_path / "s.json"], capsys)
    assert code == 2 and "column 'b' has no values" in printed
    indexed = tmp_path / "indexed.parquet"
    frame.assign(id=[f"p{i}" for i in range(len(frame))]).set_index("id").to_parquet(indexed)
    code, printed = run(["schema", indexed, "-o", tmp_path / "s.json"], capsys)
    assert code == 0 and "stores a pandas index ('id')" in printed
    assert "id" not in json.loads((tmp_path / "s.json").read_text())["columns"]


def test_bounds_and_levels_shares_that_act_on_nothing_warn(table, tmp_path, capsys):
    _, data, bounds = table
    code, printed = run(["generate", data, "-o", tmp_path / "o.csv", "--bounds", bounds, "--quiet", "--delta", 1e-6,
                         "--bounds-share", 0.1, "--levels-share", 0.1], capsys)
    assert code == 0 and printed.count("acts only where") == 2
    assert "--bounds-share" in printed and "--levels-share" in printed
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps({name: spec for name, spec in json.loads(bounds.read_text()).items()
                                   if name != "score"}))
    code, printed = run(["generate", data, "-o", tmp_path / "p.csv", "--bounds", partial, "--quiet",
                         "--bounds-share", 0.1], capsys)
    assert code == 0 and "acts only where" not in printed  # the share estimates score's bounds


def test_a_release_that_measured_no_dependence_says_so(tmp_path, capsys):
    rng = np.random.default_rng(0)
    x = rng.normal(0, 1, 150)
    frame = pd.DataFrame({"a": x, "b": x + rng.normal(0, 0.3, 150), "c": rng.uniform(0, 1, 150)})
    frame.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "b.json").write_text(json.dumps({"a": [-4, 4], "b": [-5, 5], "c": [0, 1]}))
    code, printed = run(["generate", tmp_path / "t.csv", "-o", tmp_path / "o.csv", "--bounds", tmp_path / "b.json",
                         "--seed", 1], capsys)
    assert code == 0 and "measured no dependence between columns" in printed
    code, printed = run(["generate", tmp_path / "t.csv", "-o", tmp_path / "p.csv", "--bounds", tmp_path / "b.json",
                         "--seed", 1, "--favour", "relationships"], capsys)
    assert code == 0 and "measured no dependence" not in printed
    # one column (a categorical one: several encoded coordinates): nothing to relate, no note
    pd.DataFrame({"g": rng.choice(list("abcde"), 2000)}).to_csv(tmp_path / "one.csv", index=False)
    (tmp_path / "one.json").write_text(json.dumps({"columns": {"g": {"type": "categorical", "levels": list("abcde")}}}))
    code, printed = run(["generate", tmp_path / "one.csv", "-o", tmp_path / "q.csv", "--schema", tmp_path / "one.json",
                         "--seed", 1], capsys)
    assert code == 0 and "measured no dependence" not in printed


def test_the_report_holds_the_data_stages_times_only_when_asked_and_then_says_so(tmp_path):
    """The stages that read the rows take times that depend on the data: the report, the model
    file and the summary hold only the steps after the release; --data-timings adds them to the
    report file alone, which then says it is not differentially private."""
    from pathlib import Path

    from synthdp import SmoothSynthesizer
    from synthdp.pipeline.report import RELEASED_STAGES

    datasets = Path(__file__).resolve().parents[1] / "synthdp" / "datasets"
    clinic = str(datasets / "clinic.csv")
    common = ["--bounds", str(datasets / "clinic_bounds.json"), "--quiet"]  # no seed: its caveat would say "not DP"
    for flag, name in (([], "plain"), (["--data-timings"], "timed")):
        outputs = {"-o": tmp_path / f"{name}.csv", "--report": tmp_path / f"{name}.json",
                   "--model-out": tmp_path / f"{name}.synthdp", "--summary-out": tmp_path / f"{name}.summary.json"}
        assert main(["generate", clinic, *common, *flag, *[str(v) for pair in outputs.items() for v in pair]]) == 0
        report = json.loads(outputs["--report"].read_text())
        assert (set(report["timings_seconds"]) <= set(RELEASED_STAGES)) == (not flag)
        assert ("moments" in report["timings_seconds"]) == bool(flag)
        assert report["privacy"]["differentially_private"] == (not flag)
        saved = SmoothSynthesizer.load(outputs["--model-out"]).privacy_report()
        summary = json.loads(outputs["--summary-out"].read_text())["privacy_report"]
        for kept in (saved, summary):
            assert set(kept["timings_seconds"]) <= set(RELEASED_STAGES) and kept["privacy"]["differentially_private"]


@pytest.mark.parametrize("command, hint", [("summarize", "lower --n-basis"), ("fit", "lower --n-candidates or --n-basis"),
                                           ("generate", "lower --rows, --n-candidates or --n-basis")])
def test_out_of_memory_names_only_options_the_command_has(table, tmp_path, capsys, monkeypatch, command, hint):
    """A summary of many moments of many columns can run out of memory: the one line names --n-basis, not
    generate's --rows and --n-candidates, which summarize does not take (nor fit --rows)."""
    from synthdp import SmoothSynthesizer

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(SmoothSynthesizer, "fit", exhausted)
    _, data, bounds = table
    code, printed = run([command, data, "-o", tmp_path / "out", "--bounds", bounds], capsys)
    assert code == 2 and printed.strip() == f"synthdp: error: out of memory; {hint}"


@pytest.mark.parametrize("command", ["sample", "infer"])
def test_out_of_memory_in_a_command_without_such_options_names_none(tmp_path, capsys, monkeypatch, command):
    """sample and infer take none of --rows' fellows --n-candidates and --n-basis (nor would a smaller
    streamed sample or fewer statistics be what held the memory): their line advises no option."""
    from synthdp.evaluation import inference
    from synthdp.pipeline import model as model_file

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(model_file, "load", exhausted)
    monkeypatch.setattr(inference, "load_copies", exhausted)
    given = tmp_path / "given"
    given.write_text("")
    argv = ([command, given, "-n", "10", "-o", tmp_path / "out.csv"] if command == "sample"
            else [command, given, "--mean", "x"])
    code, printed = run(argv, capsys)
    assert code == 2 and printed.strip() == "synthdp: error: out of memory"
