"""Edge cases of the command line found by a review: each ends in one line naming the problem,
nothing written, nothing lost (the rule for bad input), or in the outputs whole."""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from synthdp.cli import main

ROOT = Path(__file__).resolve().parents[1]
CLINIC = str(ROOT / "synthdp" / "datasets" / "clinic.csv")
BOUNDS = str(ROOT / "synthdp" / "datasets" / "clinic_bounds.json")


def _one_error(capsys, *parts: str) -> None:
    err = capsys.readouterr().err
    assert err.startswith("synthdp: error: ") and err.count("\n") == 1, err
    for part in parts:
        assert part in err, err


@pytest.mark.parametrize("codec", ["rot13", "hex", "zlib"])
def test_a_codec_that_is_not_a_text_encoding_is_one_line(tmp_path, capsys, codec):
    assert main(["generate", CLINIC, "-o", str(tmp_path / "o.csv"), "--bounds", BOUNDS, "--encoding", codec,
                 "--quiet"]) == 2
    _one_error(capsys, "encoding must be a text encoding")
    assert not (tmp_path / "o.csv").exists()


def test_a_key_given_twice_and_a_boolean_bound_are_refused(tmp_path, capsys):
    twice = tmp_path / "b.json"
    twice.write_text('{"age": [18, 90], "age": [0, 1], "bmi": [15, 50], "systolic_bp": [80, 220], '
                     '"cholesterol": [100, 400], "visits_per_year": [0, 30]}')
    assert main(["generate", CLINIC, "-o", str(tmp_path / "o.csv"), "--bounds", str(twice), "--quiet"]) == 2
    _one_error(capsys, "gives 'age' twice")
    boolean = tmp_path / "c.json"
    boolean.write_text(json.dumps({**json.loads(Path(BOUNDS).read_text()), "age": [True, 90]}))
    assert main(["generate", CLINIC, "-o", str(tmp_path / "o.csv"), "--bounds", str(boolean), "--quiet"]) == 2
    _one_error(capsys, "bounds for column 'age' must be numbers")
    assert not (tmp_path / "o.csv").exists()


def test_an_empty_output_path_or_one_ending_in_a_slash_is_refused_before_the_fit(tmp_path, capsys, monkeypatch):
    from synthdp import synthesizer

    monkeypatch.setattr(synthesizer.SmoothSynthesizer, "fit", lambda *args, **kwargs: pytest.fail("fitted"))
    assert main(["generate", CLINIC, "-o", "", "--bounds", BOUNDS, "--quiet"]) == 2
    _one_error(capsys, "--output is empty")
    assert main(["generate", CLINIC, "-o", str(tmp_path / "x") + "/", "--bounds", BOUNDS, "--quiet"]) == 2
    _one_error(capsys, "ends with a slash")
    assert list(tmp_path.iterdir()) == []


def test_a_budget_file_that_is_a_folder_is_named_so(tmp_path, capsys):
    assert main(["generate", CLINIC, "-o", str(tmp_path / "o.csv"), "--bounds", BOUNDS, "--budget-file", str(tmp_path),
                 "--lifetime-epsilon", "1", "--quiet"]) == 2
    _one_error(capsys, "is a folder")


def test_a_parquet_column_of_nested_values_is_refused_by_name(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    path = tmp_path / "nested.parquet"
    pd.DataFrame({"x": [1.5, 2.5, 3.5] * 20, "lst": [[1, 2], [3], [4, 5]] * 20}).to_parquet(path)
    assert main(["schema", str(path), "-o", str(tmp_path / "d.json")]) == 2
    _one_error(capsys, "column 'lst' holds nested values")
    assert main(["generate", str(path), "-o", str(tmp_path / "o.csv"), "--bounds-from-data", "--quiet"]) == 2
    _one_error(capsys, "column 'lst' holds nested values")


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    """Copies of two releases of the bundled table (2 copies each), in one folder."""
    folder = tmp_path_factory.mktemp("copies")
    for name, epsilon in (("a", "1"), ("c", "0.05")):
        assert main(["generate", CLINIC, "-o", str(folder / f"{name}.csv"), "--bounds", BOUNDS, "--epsilon", epsilon,
                     "--copies", "2", "--rows", "60", "--seed", "3", "--quiet"]) == 0
    return folder


@pytest.mark.parametrize("stem", ["a", "b"])
def test_a_copy_of_another_release_is_refused(copies, tmp_path, capsys, stem):
    """A copy of another release (same columns and rows) is refused, by the digests a.copies.json
    records. Copies moved to another name as a set (``stem`` b): the digests are by the old names,
    which no file has now, and every copy passed unchecked (another release's, or an edited one);
    they are checked by their place in the record's list of files."""
    for name in ("a.csv", "a.1.csv", "a.2.csv", "a.reference.csv", "a.copies.json"):
        shutil.copy(copies / name, tmp_path / name.replace("a.", f"{stem}.", 1))
    assert main(["infer", str(tmp_path / f"{stem}.csv"), "--mean", "age"]) == 0
    capsys.readouterr()
    shutil.copy(copies / "c.2.csv", tmp_path / f"{stem}.2.csv")  # same columns and rows, another release
    assert main(["infer", str(tmp_path / f"{stem}.csv"), "--mean", "age"]) == 2
    _one_error(capsys, f"{stem}.2.csv", "is not what this release's generate --copies wrote")


def test_copies_are_told_from_a_sibling_release_s_and_unreadable_ones_named(copies, tmp_path, capsys):
    for name in ("a.csv", "a.1.csv", "a.2.csv", "a.reference.csv", "a.copies.json"):
        shutil.copy(copies / name, tmp_path / name)
    for name in ("a.1.csv", "a.2.csv", "a.reference.csv"):  # the copies of a release written to a.5.csv
        shutil.copy(copies / name, tmp_path / name.replace("a.", "a.5.", 1))
    # a digit Python's isdigit takes and int() does not, named by its UTF-8 bytes (where Python's file names are
    # ASCII, in the C locale with UTF-8 mode off, "a.².csv" cannot be spelt: the name is then read as undecodable)
    with open(os.fsencode(tmp_path) + "/a.².csv".encode(), "wb") as other:
        other.write(b"age\n1\n")
    assert main(["infer", str(tmp_path / "a.csv"), "--mean", "age"]) == 0
    capsys.readouterr()
    (tmp_path / "a.2.csv").unlink()
    (tmp_path / "a.2.csv").symlink_to(tmp_path / "gone.csv")
    assert main(["infer", str(tmp_path / "a.csv"), "--mean", "age"]) == 2
    _one_error(capsys, "copy", "a.2.csv", "cannot be read")
    (tmp_path / "a.copies.json").unlink()
    (tmp_path / "a.copies.json").mkdir()
    assert main(["infer", str(tmp_path / "a.csv"), "--mean", "age"]) == 2
    _one_error(capsys, "a.copies.json", "is not what synthdp generate --copies writes")


def test_a_malformed_privacy_report_on_the_page_is_one_line(copies, tmp_path, capsys):
    report = tmp_path / "r.json"
    for bad in ({"privacy": {"caveats": 5}}, {"privacy": {"stages": 5}}):
        report.write_text(json.dumps(bad))
        assert main(["evaluate", "--real", CLINIC, "--synth", str(copies / "a.csv"), "--bounds", BOUNDS, "--queries",
                     "10", "--no-sdmetrics", "--html", str(tmp_path / "p.html"), "--privacy-report", str(report)]) == 2
        _one_error(capsys, "must be lists")
        assert not (tmp_path / "p.html").exists()


def test_ctrl_c_while_the_outputs_are_renamed_leaves_them_all(tmp_path, capsys, monkeypatch):
    """An interrupt that lands between two renames waits for the last: every output in place (not
    two of five, with the others removed and a message that none was written), and then says so."""
    import os
    import signal

    from synthdp import cli

    link = os.link  # each output is linked into place (no --overwrite: a rename would replace a file made meanwhile)
    calls = []

    def interrupted(source, target):
        calls.append(target)
        link(source, target)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(cli.os, "link", interrupted)
    out = tmp_path / "o.csv"
    assert main(["generate", CLINIC, "-o", str(out), "--bounds", BOUNDS, "--copies", "2", "--rows", "40", "--seed",
                 "1", "--quiet"]) == 130
    assert capsys.readouterr().err == "synthdp: interrupted once every output was written\n"
    written = {path.name for path in tmp_path.iterdir()}
    assert written == {"o.csv", "o.1.csv", "o.2.csv", "o.reference.csv", "o.copies.json"} and len(calls) == 5


@pytest.mark.parametrize("hard_links", [True, False])
def test_an_output_that_appears_while_the_command_runs_is_not_replaced(tmp_path, capsys, monkeypatch, hard_links):
    """Another command's file that appears at one of the outputs' paths after the check (two commands
    writing one -o) is kept without --overwrite: one line naming it, and none of this run's outputs
    left (those put in place before it are removed), nor a temporary file; with --overwrite it is
    replaced. The same on a filesystem without hard links (checked, then renamed)."""
    import errno

    from synthdp import cli, writers

    if not hard_links:
        def no_links(source, target):
            raise OSError(errno.EPERM, "Operation not permitted")

        monkeypatch.setattr(cli.os, "link", no_links)

    write_csv = writers.write_csv
    theirs = tmp_path / "o.2.csv"  # a copy's path: o.csv and o.1.csv are put in place before it

    def racing(frame, path):
        write_csv(frame, path)
        if not theirs.exists():
            theirs.write_text("another command's rows\n")

    monkeypatch.setattr(writers, "write_csv", racing)
    argv = ["generate", CLINIC, "-o", str(tmp_path / "o.csv"), "--bounds", BOUNDS, "--copies", "2", "--rows", "40",
            "--seed", "1", "--report", str(tmp_path / "r.json"), "--quiet"]
    assert main(argv) == 2
    _one_error(capsys, str(theirs), "--overwrite", "nothing was written")
    assert [path.name for path in tmp_path.iterdir()] == ["o.2.csv"]
    assert theirs.read_text() == "another command's rows\n"
    theirs.unlink()
    assert main([*argv, "--overwrite"]) == 0
    capsys.readouterr()
    assert theirs.read_text() != "another command's rows\n" and not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize("output", ["table", "model"])
def test_a_full_disk_names_the_output_not_its_temporary_file(tmp_path, capsys, monkeypatch, output):
    """A write that fails (no space left) is one line naming the output the user gave (the model
    file's named its hidden temporary file), and leaves no output and no temporary file."""
    import errno
    import zipfile

    from synthdp import writers

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(*((writers, "write_csv", full) if output == "table" else (zipfile.ZipFile, "writestr", full)))
    final = tmp_path / ("o.csv" if output == "table" else "m.synthdp")
    assert main(["generate", CLINIC, "-o", str(tmp_path / "o.csv"), "--bounds", BOUNDS, "--model-out",
                 str(tmp_path / "m.synthdp"), "--rows", "40", "--seed", "1", "--quiet"]) == 2
    _one_error(capsys, f"'{final}'", "No space left on device")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("when, line", [
    ("copying", "synthdp: interrupted while writing standard output or a stream, which may be cut short; the files "
                "were written"),
    ("renaming", "synthdp: interrupted before standard output or a stream was written; the files were written")])
def test_ctrl_c_beside_a_stream_output_says_which_outputs_were_written(tmp_path, capsys, monkeypatch, when, line):
    """-o - with --report r.json: a Ctrl-C while the table is copied into standard output (which the reader
    then holds part of), or while the report is renamed into place (the stream not begun), said "every output
    was written". The report is in place either way."""
    import os
    import signal

    from synthdp import cli

    if when == "copying":
        def interrupted(source, target, *args):
            raise KeyboardInterrupt
        monkeypatch.setattr(cli.shutil, "copyfileobj", interrupted)
    else:
        link = os.link

        def interrupted(source, target):  # the signal waits until the renames are done
            link(source, target)
            os.kill(os.getpid(), signal.SIGINT)
        monkeypatch.setattr(cli.os, "link", interrupted)
    report = tmp_path / "r.json"
    assert main(["generate", CLINIC, "-o", "-", "--report", str(report), "--bounds", BOUNDS, "--rows", "40",
                 "--seed", "1", "--quiet"]) == 130
    captured = capsys.readouterr()
    assert captured.err.splitlines()[-1] == line and report.exists() and captured.out == ""


def test_a_terminal_gone_while_the_outputs_are_renamed_ends_with_sighup_s_code(tmp_path, capsys, monkeypatch):
    """SIGHUP (the terminal closed) while the outputs are renamed into place waits for the renames; its
    line then went to a terminal that is gone, and the write's OSError escaped main as a traceback."""
    import errno
    import os
    import signal
    import sys

    from synthdp import cli

    class Gone:
        def write(self, text):
            raise OSError(errno.EIO, os.strerror(errno.EIO))

        def flush(self):
            raise OSError(errno.EIO, os.strerror(errno.EIO))

    link = os.link

    def hung_up(source, target):
        link(source, target)
        monkeypatch.setattr(sys, "stderr", Gone())
        os.kill(os.getpid(), signal.SIGHUP)
    monkeypatch.setattr(cli.os, "link", hung_up)
    out = tmp_path / "o.csv"
    assert main(["generate", CLINIC, "-o", str(out), "--bounds", BOUNDS, "--rows", "40", "--seed", "1",
                 "--quiet"]) == 129
    assert out.exists()


def test_a_write_error_without_an_errno_names_the_output_and_its_kind(tmp_path, capsys, monkeypatch):
    """An OSError with no errno and no text (a library's own): the line named the output and then
    "[Errno None] None"; it names the error's kind, and no text the error carried."""
    from synthdp import writers

    def failing(*args, **kwargs):
        raise OSError("a library's message")

    monkeypatch.setattr(writers, "write_csv", failing)
    out = tmp_path / "o.csv"
    assert main(["generate", CLINIC, "-o", str(out), "--bounds", BOUNDS, "--rows", "40", "--seed", "1",
                 "--quiet"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"synthdp: error: cannot write the output '{out}': OSError"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("failure", ["EIO", "EINVAL"])
def test_each_output_is_synced_before_it_is_put_in_place(tmp_path, capsys, monkeypatch, failure):
    """Every output is flushed to disk (fsync) before its rename: after a power loss a renamed file could
    be empty. A sync that fails (EIO) fails the write, naming the output, nothing left; a filesystem that
    cannot sync (EINVAL) is written as before."""
    import errno
    import os

    synced, opened, os_open = [], {}, os.open

    def open_(path, flags, *args, **kwargs):  # the names of descriptors, where no /proc tells them (macOS)
        descriptor = os_open(path, flags, *args, **kwargs)
        opened[descriptor] = str(path)
        return descriptor

    def fsync(descriptor):
        synced.append(opened.get(descriptor, ""))
        raise OSError(getattr(errno, failure), os.strerror(getattr(errno, failure)))

    monkeypatch.setattr(os, "open", open_)
    monkeypatch.setattr(os, "fsync", fsync)
    out, report = tmp_path / "o.csv", tmp_path / "r.json"
    code = main(["generate", CLINIC, "-o", str(out), "--bounds", BOUNDS, "--report", str(report), "--rows", "40",
                 "--seed", "1", "--quiet"])
    if failure == "EIO":
        assert code == 2 and list(tmp_path.iterdir()) == []
        _one_error(capsys, f"'{out}'", os.strerror(errno.EIO))
    else:
        assert code == 0 and sorted(path.name for path in tmp_path.iterdir()) == ["o.csv", "r.json"]
        assert [Path(name).name.startswith((".o.csv.", ".r.json.")) for name in synced] == [True, True]


@pytest.mark.parametrize(("name", "code"), [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)])
def test_a_signal_while_writing_stops_with_the_shells_status(tmp_path, capsys, monkeypatch, name, code):
    """Ctrl-C, a kill or the terminal closing (SIGHUP, which killed the command outright and left its
    temporary files, a sample's of any size) while an output is written: one line, the shell's status
    (128 + the signal's number), no output and no temporary file."""
    import os
    import signal

    from synthdp import writers

    def signalled(frame, path):
        path.write_text("part of a table")
        os.kill(os.getpid(), getattr(signal, name))  # delivered at once (the main thread)

    monkeypatch.setattr(writers, "write_csv", signalled)
    assert main(["generate", CLINIC, "-o", str(tmp_path / "o.csv"), "--bounds", BOUNDS, "--rows", "40", "--seed",
                 "1", "--report", str(tmp_path / "r.json"), "--quiet"]) == code
    assert capsys.readouterr().err == "synthdp: interrupted; no output written\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_its_starter_ignores_stays_ignored(tmp_path, capsys, monkeypatch, name):
    """A command started with SIGINT ignored (a background job of a script, "synthdp generate ... &",
    which Ctrl-C at the terminal must not stop), SIGTERM or SIGHUP ignored (nohup) runs to its end, as
    Python leaves an ignored signal ignored, and the signal is ignored again once it ends."""
    import os
    import signal

    from synthdp import writers

    number = getattr(signal, name)
    write_csv = writers.write_csv

    def signalled(frame, path):
        os.kill(os.getpid(), number)  # delivered at once (the main thread): ignored, or it interrupts this write
        write_csv(frame, path)

    monkeypatch.setattr(writers, "write_csv", signalled)
    previous = signal.signal(number, signal.SIG_IGN)
    try:
        code = main(["generate", CLINIC, "-o", str(tmp_path / "o.csv"), "--bounds", BOUNDS, "--rows", "40", "--seed",
                     "1", "--quiet"])
        assert signal.getsignal(number) == signal.SIG_IGN
    finally:
        signal.signal(number, previous)
    assert code == 0, capsys.readouterr().err
    assert [path.name for path in tmp_path.iterdir()] == ["o.csv"]


def test_ctrl_c_after_the_outputs_were_written_does_not_say_none_was(tmp_path, capsys, monkeypatch):
    """Ctrl-C once every output is in place (while the closing lines print) says so, as one that lands
    during the renames does: "no output written" sent users looking for a table that was there."""
    from synthdp import cli

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_note_independence", interrupted)
    out = tmp_path / "o.csv"
    assert main(["generate", CLINIC, "-o", str(out), "--bounds", BOUNDS, "--rows", "40", "--seed", "1"]) == 130
    assert capsys.readouterr().err.splitlines()[-1] == "synthdp: interrupted once every output was written"
    assert [path.name for path in tmp_path.iterdir()] == ["o.csv"]
    monkeypatch.setattr(cli.SynthConfig, "__init__", interrupted)  # the next command, stopped before its fit
    assert main(["generate", CLINIC, "-o", str(tmp_path / "p.csv"), "--bounds", BOUNDS, "--quiet"]) == 130
    assert capsys.readouterr().err == "synthdp: interrupted; no output written\n"


def test_copies_whose_reference_sample_is_over_the_output_bound_say_which_rows(capsys):
    """The reference sample is 20 times a copy's rows: over the output bound, the error names the
    rows per copy (it named a count of rows nobody asked for), before any copy is made."""
    import warnings

    from synthdp import SmoothSynthesizer, SynthDPError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer(epsilon=1.0, seed=1).fit(pd.read_csv(CLINIC), json.loads(Path(BOUNDS).read_text()))
    with pytest.raises(SynthDPError, match=r"copies' reference sample .* fewer rows per copy"):
        synth.sample_copies(2, 30_000_000)


@pytest.mark.parametrize("argv, message, command", [
    (["fit", CLINIC, "-o", "m.synthdp", "--bounds", BOUNDS, "--rows", "5"], "unrecognized arguments: --rows 5", "fit"),
    (["generate", CLINIC, "-o", "o.csv", "--epsilon", "abc"], "argument --epsilon: invalid float value", "generate"),
    (["sample", "m.synthdp", "-o", "o.csv"], "the following arguments are required: -n/--rows", "sample"),
    (["frob"], "invalid choice: 'frob'", None),
])
def test_a_usage_error_points_to_the_help_of_its_command(tmp_path, monkeypatch, capsys, argv, message, command):
    """A mistyped option of a command points to that command's help, which lists its options
    (docs/cli.md: synthdp COMMAND --help), not to synthdp --help, which lists only the commands."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    _one_error(capsys, message, f"(see synthdp{' ' + command if command else ''} --help)")
    assert list(tmp_path.iterdir()) == []


def test_a_key_an_integer_column_does_not_take_reads_as_english(tmp_path, capsys):
    bounds = tmp_path / "b.json"
    bounds.write_text(json.dumps({**json.loads(Path(BOUNDS).read_text()),
                                  "age": {"bounds": [18, 90], "type": "integer", "nulable": True}}))
    assert main(["generate", CLINIC, "-o", str(tmp_path / "o.csv"), "--bounds", str(bounds), "--quiet"]) == 2
    _one_error(capsys, "integer column 'age' has \"nulable\", which an integer column does not take")


def test_csv_options_given_for_a_parquet_input_are_named_as_ignored(tmp_path, capsys):
    """A Parquet file has no separator, encoding or decimal mark to set: the options are named in a
    warning, the release runs; the same options on a CSV input say nothing of the kind."""
    pytest.importorskip("pyarrow")
    parquet = tmp_path / "clinic.parquet"
    pd.read_csv(CLINIC).to_parquet(parquet)
    out = tmp_path / "out.csv"
    assert main(["generate", str(parquet), "-o", str(out), "--bounds", BOUNDS, "--sep", ";", "--decimal", ",",
                 "--quiet"]) == 0
    err = capsys.readouterr().err
    assert out.exists() and "--sep, --decimal ignored" in err and "Parquet" in err
    assert main(["generate", str(parquet), "-o", str(tmp_path / "t.csv"), "--bounds", BOUNDS, "--thousands", "'",
                 "--quiet"]) == 0
    assert "--thousands ignored" in capsys.readouterr().err
    assert main(["generate", CLINIC, "-o", str(tmp_path / "csv.csv"), "--bounds", BOUNDS, "--encoding", "utf-8",
                 "--quiet"]) == 0
    assert "ignored" not in capsys.readouterr().err


def test_a_copy_of_other_columns_is_named(copies, tmp_path, capsys):
    """Without out.copies.json (copies written before it), a copy of other columns was read and the
    statistic failed on it with 'column ... is not in the table', naming no file."""
    for name in ("a.csv", "a.1.csv", "a.2.csv", "a.reference.csv"):
        shutil.copy(copies / name, tmp_path / name)
    frame = pd.read_csv(tmp_path / "a.2.csv")
    frame.drop(columns=["bmi"]).to_csv(tmp_path / "a.2.csv", index=False)
    assert main(["infer", str(tmp_path / "a.csv"), "--mean", "age", "bmi"]) == 2
    _one_error(capsys, "a.2.csv", "other columns than")


def test_a_csv_file_the_dask_engine_cannot_sample_is_one_line(tmp_path, capsys):
    """A quote left open: Dask's reader says so in a ValueError of its own (a traceback) while it samples the
    file's start; it is one line naming the file, with the Dask engine's hint about quoted line breaks."""
    pytest.importorskip("dask.dataframe")
    table = tmp_path / "t.csv"
    table.write_text("x,y\n1,2\n3,\"open\n" + "".join(f"{i},{i % 7}\n" for i in range(50)))
    assert main(["generate", str(table), "-o", str(tmp_path / "o.csv"), "--bounds-from-data", "--engine", "dask",
                 "--quiet"]) == 2
    _one_error(capsys, "not a well-formed CSV file", "quoted value")
    assert not (tmp_path / "o.csv").exists()


def test_marginal_reads_a_parquet_table_as_sample_writes_it(tmp_path, capsys):
    """synthdp sample writes Parquet by the suffix; marginal --table read every table as CSV and called the
    Parquet file "not utf-8 text". It reads it as every other command does, to the same marginal as the CSV."""
    pytest.importorskip("pyarrow")
    schema = ROOT / "configs" / "iris_schema.json"
    frame = pd.read_csv(ROOT / "data" / "iris.csv")
    frame.to_parquet(tmp_path / "t.parquet", index=False)
    answers = []
    for table in (str(ROOT / "data" / "iris.csv"), str(tmp_path / "t.parquet")):
        assert main(["marginal", "--table", table, "--schema", str(schema), "--columns", "species"]) == 0
        answers.append(capsys.readouterr().out)
    assert answers[0] == answers[1] and "Iris-setosa" in answers[1]


def test_a_reader_that_stops_early_is_not_an_error(tmp_path, capsys):
    """docs/cli.md: `synthdp generate ... -o /dev/stdout | head`. A reader that closes the pipe before the
    end (head) made the command fail with "cannot write the output: Broken pipe", status 2, once the rows
    were more than the pipe holds; it ends as evaluate's printed report does there: quietly, status 0."""
    import os
    import threading

    pipe = tmp_path / "rows.pipe"  # what /dev/stdout is under `| head`
    os.mkfifo(pipe)
    received: list[bytes] = []

    def head() -> None:
        with open(pipe, "rb") as reader:
            received.append(reader.read(100))

    thread = threading.Thread(target=head)
    thread.start()
    code = main(["generate", CLINIC, "-o", str(pipe), "--bounds", BOUNDS, "--rows", "100000", "--quiet"])
    thread.join(timeout=60)
    err = capsys.readouterr().err
    assert code == 0 and "error" not in err, err
    assert received[0].startswith(b"age,bmi")


@pytest.mark.parametrize(("name", "hint"), [("agee", " (the table has 'age')"), ("zzz", ""),
                                            ("Age", " (the table has 'age')"), ("AGE", " (the table has 'age')")])
def test_an_unknown_column_in_the_bounds_or_schema_names_the_nearest_column(tmp_path, capsys, name, hint):
    """A misspelt column (bounds or schema) is one line naming it and, where a column of the header is
    spelt nearly alike, that one (the header's names are public); no hint for a name like none of them."""
    bounds = json.loads(Path(BOUNDS).read_text())
    bounds[name] = bounds.pop("age")
    (tmp_path / "b.json").write_text(json.dumps(bounds))
    assert main(["generate", CLINIC, "-o", str(tmp_path / "o.csv"), "--bounds", str(tmp_path / "b.json"),
                 "--quiet"]) == 2
    _one_error(capsys, f"bounds name unknown column '{name}'{hint}\n")
    schema = {"columns": {key: {"bounds": value} for key, value in bounds.items()}}
    (tmp_path / "s.json").write_text(json.dumps(schema))
    assert main(["generate", CLINIC, "-o", str(tmp_path / "o.csv"), "--schema", str(tmp_path / "s.json"),
                 "--quiet"]) == 2
    _one_error(capsys, f"names unknown column '{name}'{hint}\n")
    assert not (tmp_path / "o.csv").exists()


def test_a_column_named_in_other_case_is_pointed_to_wherever_a_user_names_one(tmp_path, capsys):
    """--target, marginal --columns, a privacy unit, a condition, given values and a statistic's
    column each name the header's column spelt alike but for case (the header's names are public)."""
    from synthdp import SmoothSynthesizer
    from synthdp.errors import SynthDPError
    from synthdp.evaluation.inference import common_statistics

    table = pd.read_csv(CLINIC)
    assert main(["evaluate", "--real", CLINIC, "--synth", CLINIC, "--target", "Age"]) == 2
    _one_error(capsys, "target column 'Age' is not a column of the tables (the table has 'age')\n")
    frame = pd.DataFrame({"sex": ["f", "m"] * 20, "smoker": ["y", "n", "n", "y"] * 10})
    frame.to_csv(tmp_path / "t.csv", index=False)
    schema = {"columns": {"sex": {"type": "binary", "levels": ["f", "m"]},
                          "smoker": {"type": "binary", "levels": ["n", "y"]}}}
    (tmp_path / "s.json").write_text(json.dumps(schema))
    assert main(["marginal", "--table", str(tmp_path / "t.csv"), "--schema", str(tmp_path / "s.json"),
                 "--columns", "Sex"]) == 2
    _one_error(capsys, "'Sex' is not a binary or categorical column of the schema (the table has 'sex')\n")
    people = table.assign(person=range(len(table)))
    people.to_csv(tmp_path / "p.csv", index=False)
    assert main(["generate", str(tmp_path / "p.csv"), "-o", str(tmp_path / "o.csv"), "--bounds", BOUNDS,
                 "--privacy-unit", "Person", "--max-rows-per-unit", "1", "--quiet"]) == 2
    _one_error(capsys, "'Person' is not a column of the input (the table has 'person')\n")
    assert not (tmp_path / "o.csv").exists()
    with pytest.warns(UserWarning):  # the testing seed's warning
        model = SmoothSynthesizer(epsilon=1.0, seed=0).fit(table, bounds=json.loads(Path(BOUNDS).read_text()))
    with pytest.raises(SynthDPError, match=r"names 'Age', which is not a column of the model \(the table has 'age'\)$"):
        model.sample(10, condition="Age > 50")
    with pytest.raises(SynthDPError, match=r"not a column of the model \(the table has 'bmi'\)$"):
        model.sample_from_conditions(pd.DataFrame({"BMI": [30.0]}))
    with pytest.raises(SynthDPError, match=r"is not in the table \(the table has 'age'\)$"):
        common_statistics(means=["AGE"])(table)


def test_a_schema_column_spelt_otherwise_is_named_before_the_table_is_read_by_its_types(tmp_path, capsys):
    """'Species' for 'species' left the header's 'species' without an entry, so the table was read with it
    as numeric and refused as "not numeric"; the schema's unknown name is said first, with the nearest."""
    from synthdp import SmoothSynthesizer
    from synthdp.errors import SynthDPError

    frame = pd.DataFrame({"x": [0.1, 0.5, 0.9, 0.3] * 10, "species": ["a", "b"] * 20})
    frame.to_csv(tmp_path / "t.csv", index=False)
    schema = {"columns": {"x": {"bounds": [0, 1]}, "Species": {"type": "binary", "levels": ["a", "b"]}}}
    (tmp_path / "s.json").write_text(json.dumps(schema))
    assert main(["generate", str(tmp_path / "t.csv"), "-o", str(tmp_path / "o.csv"), "--schema", str(tmp_path / "s.json"),
                 "--quiet"]) == 2
    _one_error(capsys, "schema names unknown column 'Species' (the table has 'species')\n")
    with pytest.raises(SynthDPError, match=r"^schema names unknown column 'Species' \(the table has 'species'\)$"):
        SmoothSynthesizer(epsilon=1.0).fit(frame, schema=schema)
    nullable = {"X": {"bounds": [0, 1], "nullable": True}}  # a bounds file's: named as the bounds' name
    with pytest.raises(SynthDPError, match=r"^bounds name unknown column 'X' \(the table has 'x'\)$"):
        SmoothSynthesizer(epsilon=1.0).fit(frame[["x"]], bounds=nullable)
    gap = frame[["x"]].assign(y=0.5)
    gap.loc[3, "x"] = None  # was refused as "column 'x' has missing or infinite values"
    with pytest.raises(SynthDPError, match=r"^bounds name unknown column 'X' \(the table has 'x'\)$"):
        SmoothSynthesizer(epsilon=1.0).fit(gap, bounds={"X": [0, 1], "y": [0, 1]})


def test_a_count_of_copies_past_the_limit_is_one_line_before_any_file_is_listed(tmp_path, capsys, monkeypatch):
    """--copies 99999999999999999999 was taken: listing its files ran the process out of memory
    (killed, no message); a count past MAX_COPIES is refused before the paths are built or the data read."""
    from synthdp.evaluation import inference
    from synthdp.evaluation.options import MAX_COPIES

    def listed(output, count):
        raise AssertionError(f"the paths of {count} copies were built")

    monkeypatch.setattr(inference, "copy_paths", listed)
    for count in ("99999999999999999999", str(MAX_COPIES + 1)):
        assert main(["generate", CLINIC, "-o", str(tmp_path / "o.csv"), "--bounds", BOUNDS, "--copies", count,
                     "--quiet"]) == 2
        _one_error(capsys, "--copies must be an integer from 2 to")
    assert list(tmp_path.iterdir()) == []


def test_copies_held_in_memory_past_the_output_bound_are_refused_before_the_first_refit(monkeypatch):
    """Every copy is held in memory until written: sample_copies refuses what cannot fit before it
    refits, as the reference sample's check does, and past MAX_COPIES."""
    import warnings

    from synthdp import SmoothSynthesizer, SynthDPError
    from synthdp.evaluation.options import MAX_COPIES
    from synthdp.pipeline import run

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer(epsilon=1.0, seed=1).fit(pd.read_csv(CLINIC), json.loads(Path(BOUNDS).read_text()))

    def refit(*args, **kwargs):
        raise AssertionError("a copy was refitted")

    monkeypatch.setattr(run, "fit", refit)
    with pytest.raises(SynthDPError, match=r"1000 copies of 200000 rows, held in memory .* fewer copies"):
        synth.sample_copies(1000, 200_000)  # 10^9 values of 5 columns: past the bound of 5 x 10^8
    with pytest.raises(SynthDPError, match=f"from 2 to {MAX_COPIES}"):
        synth.sample_copies(MAX_COPIES + 1)


def test_copies_with_rows_past_the_output_bound_are_refused_before_the_fit(tmp_path, capsys, monkeypatch):
    from synthdp import synthesizer

    def fitted(*args, **kwargs):
        raise AssertionError("the release was fitted")

    monkeypatch.setattr(synthesizer.SmoothSynthesizer, "fit", fitted)
    assert main(["generate", CLINIC, "-o", str(tmp_path / "o.csv"), "--bounds", BOUNDS, "--copies", "1000",
                 "--rows", "200000", "--quiet"]) == 2
    _one_error(capsys, "1000 copies of 200000 rows, held in memory until written")
    assert list(tmp_path.iterdir()) == []


def test_the_closing_line_names_the_copies_written(tmp_path, capsys):
    """generate --copies wrote M + 3 files and its closing line named only the synthetic table."""
    assert main(["generate", CLINIC, "-o", str(tmp_path / "o.csv"), "--bounds", BOUNDS, "--copies", "2", "--rows",
                 "40", "--seed", "1"]) == 0
    closing = capsys.readouterr().err.splitlines()[0]
    assert closing.startswith("synthdp: wrote 40 rows") and (
        "2 copies and their reference sample beside it (o.1.csv ... o.2.csv, o.reference.csv, o.copies.json)" in closing)


def test_a_column_asked_for_twice_in_a_marginal_is_named(capsys):
    """--columns species,species said 'a marginal needs one or more distinct columns', naming nothing."""
    assert main(["marginal", "--table", str(ROOT / "data" / "iris.csv"), "--schema",
                 str(ROOT / "configs" / "iris_schema.json"), "--columns", "species, species"]) == 2
    _one_error(capsys, "column 'species' is asked for twice")


@pytest.mark.parametrize("engine", [[], ["--chunk-rows", "7"], ["--engine", "dask"]])
def test_a_separator_at_the_end_of_every_data_line_is_refused(tmp_path, capsys, engine):
    """A header "x,y" over lines "1.5,20.5,": pandas took the first field of each line as the index, so x
    silently held y's values and y was all missing (a nullable y ran through, columns shifted)."""
    if engine[1:] == ["dask"]:
        pytest.importorskip("dask.dataframe")
    table = tmp_path / "t.csv"
    table.write_text("x,y\n" + "".join(f"{i % 9 + 0.5},{i % 13 + 20.5},\n" for i in range(40)))
    bounds = tmp_path / "b.json"
    bounds.write_text(json.dumps({"x": [0, 10], "y": {"bounds": [0, 40], "nullable": True}}))
    assert main(["generate", str(table), "-o", str(tmp_path / "o.csv"), "--bounds", str(bounds), "--quiet",
                 *engine]) == 2
    _one_error(capsys, "first data row", "more fields than its header", "end of every line")
    assert not (tmp_path / "o.csv").exists()
    assert main(["schema", str(table), "-o", str(tmp_path / "s.json")]) == 2
    _one_error(capsys, "more fields than its header")


def test_a_long_field_in_the_first_data_row_is_read_as_pandas_reads_it(tmp_path):
    """The check of the first data row's fields used the csv module, whose fields stop at 128 KB: a
    well-formed file with a long text in its first row was called "not a well-formed CSV file"."""
    from synthdp.reader.table import read_csv_frame

    table = tmp_path / "t.csv"
    table.write_text("x,note\n1," + "a" * 200_000 + "\n2,b\n")
    frame = read_csv_frame(table)
    assert frame.shape == (2, 2) and len(frame["note"].iloc[0]) == 200_000

@pytest.mark.parametrize("engine", ["numpy", "dask"])
def test_a_parquet_binary_column_is_read_as_its_text(tmp_path, capsys, engine):
    """A Parquet BINARY column (bytes per cell) was read as the bytes' repr, b'x': the draft listed
    "b'x'" as a level, and a release with the levels x, y mapped every cell to other (the Dask DataFrame
    from the same frame, whose strings Dask decodes, read them as x and y)."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    if engine == "dask":
        pytest.importorskip("dask.dataframe")
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"x": [float(i % 10) for i in range(60)],
                             "k": pa.array([b"x" if i % 3 else b"y" for i in range(60)], type=pa.binary())}), path)
    assert main(["schema", str(path), "-o", str(tmp_path / "s.json")]) == 0
    assert json.loads((tmp_path / "s.json").read_text())["columns"]["k"]["levels"] == ["x", "y"]
    schema = tmp_path / "schema.json"  # "other": false: a cell that is neither x nor y is an error
    schema.write_text(json.dumps({"columns": {"x": {"type": "continuous", "bounds": [0, 10]},
                                              "k": {"type": "categorical", "levels": ["x", "y"], "other": False}}}))
    capsys.readouterr()
    assert main(["generate", str(path), "-o", str(tmp_path / "o.csv"), "--schema", str(schema), "--engine", engine,
                 "--seed", "1", "--quiet"]) == 0, capsys.readouterr().err
    assert set(pd.read_csv(tmp_path / "o.csv")["k"]) <= {"x", "y"}


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_the_draft_refuses_times_with_a_time_zone(tmp_path, capsys, suffix):
    """A Parquet timestamp with a time zone (or ISO text with offsets) was drafted as a categorical column,
    each time a level, where every release refuses such a column: the draft refuses it too, by name."""
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    frame = pd.DataFrame({"x": [float(i) for i in range(60)],
                          "t": pd.date_range("2021-01-01", periods=60, freq="h", tz="Europe/Berlin")})
    path = tmp_path / f"t{suffix}"
    if suffix == ".parquet":
        frame.to_parquet(path, index=False)
    else:
        frame.assign(t=frame["t"].map(lambda time: time.isoformat())).to_csv(path, index=False)
    assert main(["schema", str(path), "-o", str(tmp_path / "s.json")]) == 2
    _one_error(capsys, "column 't' holds times with a time-zone offset")
    assert not (tmp_path / "s.json").exists()


@pytest.mark.parametrize("engine", ["numpy", "dask"])
def test_a_parquet_column_of_nulls_is_read_as_a_csv_column_of_empty_cells(tmp_path, capsys, engine):
    """A column every cell of which is missing, declared nullable: from a CSV file it is read as NaN, but
    the same column in a Parquet file (Arrow's null type, as pandas writes a column of None) was called
    "not numeric (it holds text...)". Both now give the same seeded release."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    if engine == "dask":
        pytest.importorskip("dask.dataframe")
    x = [float(i % 10) for i in range(60)]
    pq.write_table(pa.table({"x": x, "c": pa.nulls(60)}), tmp_path / "t.parquet")
    pd.DataFrame({"x": x, "c": [None] * 60}).to_csv(tmp_path / "t.csv", index=False)
    bounds = tmp_path / "b.json"
    bounds.write_text(json.dumps({"x": [0, 10], "c": {"bounds": [0, 5], "nullable": True}}))
    for name in ("t.parquet", "t.csv"):
        assert main(["generate", str(tmp_path / name), "-o", str(tmp_path / f"{name}.out.csv"), "--bounds",
                     str(bounds), "--engine", engine, "--seed", "1", "--quiet"]) == 0, capsys.readouterr().err
    assert (tmp_path / "t.parquet.out.csv").read_text() == (tmp_path / "t.csv.out.csv").read_text()
    strict = tmp_path / "strict.json"  # not declared nullable: the missing cells are an error, as in a CSV file
    strict.write_text(json.dumps({"x": [0, 10], "c": [0, 5]}))
    capsys.readouterr()
    assert main(["generate", str(tmp_path / "t.parquet"), "-o", str(tmp_path / "o.csv"), "--bounds", str(strict),
                 "--engine", engine, "--quiet"]) == 2
    _one_error(capsys, "column 'c' has missing")


def test_the_dask_engine_does_not_pass_on_pandas_deprecations_of_its_own_parquet_reader(tmp_path, capsys):
    """A Parquet file with a stored pandas index, read by the Dask engine: Dask's reader calls
    reset_index(inplace=True), which pandas 3.1 deprecates, and the warning was printed as synthdp's own."""
    pytest.importorskip("pyarrow")
    pytest.importorskip("dask.dataframe")
    frame = pd.DataFrame({"x": [float(i % 10) for i in range(60)], "y": [float(i % 7) for i in range(60)]},
                         index=pd.Index([(7 * i) % 61 for i in range(60)], name="id"))
    frame.to_parquet(tmp_path / "t.parquet")
    assert main(["generate", str(tmp_path / "t.parquet"), "-o", str(tmp_path / "o.csv"), "--bounds-from-data",
                 "--engine", "dask", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "stored pandas index 'id'" in err and "inplace" not in err, err


def test_an_output_named_dash_is_standard_output(tmp_path):
    """-o - writes the table to standard output, as command-line tools do (it wrote a file named "-"), the
    closing line still on stderr, and so does --report -; --copies, which names files after the output, is
    refused with it."""
    import subprocess
    import sys

    command = [sys.executable, "-m", "synthdp", "generate", CLINIC, "-o", "-", "--bounds", BOUNDS, "--rows", "4",
               "--seed", "1"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "age,bmi,systolic_bp,cholesterol,visits_per_year"
    assert len(done.stdout.splitlines()) == 5 and "wrote 4 rows" in done.stderr and list(tmp_path.iterdir()) == []
    report = subprocess.run([*command[:6], "table.csv", *command[7:], "--report", "-"], cwd=tmp_path,
                            capture_output=True, text=True, check=False)  # any output option takes -
    assert report.returncode == 0 and json.loads(report.stdout)["privacy"]["epsilon_spent"] == 1.0
    (tmp_path / "table.csv").unlink()
    refused = subprocess.run(command + ["--copies", "3"], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert refused.returncode == 2 and refused.stdout == "" and list(tmp_path.iterdir()) == []
    assert refused.stderr.strip().splitlines()[-1] == ("synthdp: error: --copies writes files named after --output: "
                                                       "give --output a file, not standard output or another stream")


def test_an_output_named_dash_appends_where_standard_output_appends(tmp_path):
    """-o - reopened /dev/stdout by name, which truncates the file standard output goes to: with
    ">> log.csv" the rows replaced what the file held, and a line the shell wrote before them was lost.
    They now go through the descriptor as it was given."""
    import subprocess
    import sys

    log = tmp_path / "log.csv"
    log.write_text("kept line\n")
    command = [sys.executable, "-m", "synthdp", "generate", CLINIC, "-o", "-", "--bounds", BOUNDS, "--rows", "3",
               "--seed", "1", "--quiet"]
    with open(log, "ab") as appended:
        done = subprocess.run(command, cwd=tmp_path, stdout=appended, stderr=subprocess.PIPE, text=True, check=False)
    assert done.returncode == 0, done.stderr
    lines = log.read_text().splitlines()
    assert lines[:2] == ["kept line", "age,bmi,systolic_bp,cholesterol,visits_per_year"] and len(lines) == 5


def test_the_closing_line_names_standard_output_as_such(tmp_path, capsys, monkeypatch):
    """The closing line of -o - says "standard output", not the /dev/stdout the option became."""
    import synthdp.cli as cli

    monkeypatch.setattr(cli, "_write_outputs", lambda outputs, overwrite: None)  # the table itself is not the point here
    assert main(["generate", CLINIC, "-o", "-", "--bounds", BOUNDS, "--rows", "4", "--seed", "1"]) == 0
    assert "distinct) to standard output; epsilon=" in capsys.readouterr().err


@pytest.mark.parametrize("key, flag", [("n_basis", "--n-basis"), ("rows", "--rows"), ("copies", "--copies")])
def test_a_config_file_s_integer_written_as_a_float_is_refused_as_for_every_integer_key(tmp_path, capsys, key, flag):
    """n_basis = 20.0 was taken as 20 where n_candidates = 100.0 was refused: every integer key now
    refuses a float alike, in one line naming its flag, before any work."""
    config = tmp_path / "run.toml"
    config.write_text(f"{key} = 20.0\n")
    assert main(["generate", CLINIC, "-o", str(tmp_path / "o.csv"), "--bounds", BOUNDS, "--config", str(config),
                 "--quiet"]) == 2
    _one_error(capsys, f"{flag} must be an integer")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["run.toml"]


def test_marginal_reads_a_table_with_thousands_separators(tmp_path, capsys):
    """marginal --table with --thousands: levels 1000 and 2000 written "1.000" and "2.000" are counted
    as those levels (without it, each cell is the number 1.0 or 2.0, and every row is 'other')."""
    (tmp_path / "t.csv").write_text("k;c\n1.000;a\n2.000;b\n1.000;a\n2.000;b\n1.000;b\n")
    (tmp_path / "s.json").write_text(json.dumps({"columns": {"k": {"type": "categorical", "levels": [1000, 2000]},
                                                             "c": {"type": "categorical", "levels": ["a", "b"]}}}))
    assert main(["marginal", "--table", str(tmp_path / "t.csv"), "--schema", str(tmp_path / "s.json"),
                 "--columns", "k", "--sep", ";", "--decimal", ",", "--thousands", "."]) == 0
    counted = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert dict(zip(counted["k"], counted["fraction"])) == {"1000": 0.6, "2000": 0.4, "other": 0.0}


def test_a_marginal_written_to_a_file_is_utf8_whatever_the_locale(tmp_path, monkeypatch):
    """-o OUT.csv is utf-8, as the synthetic table and every file synthdp reads by default: Windows's
    locale encoding (cp1252, here stood in for by Path.write_text's default) would write 'Zürich' as
    bytes no utf-8 reader takes, and a level outside it (東京) would stop the command with a traceback."""
    write_text = Path.write_text

    def windows_default(self, data, encoding=None, errors=None, newline=None):
        return write_text(self, data, encoding=encoding or "cp1252", errors=errors, newline=newline)

    monkeypatch.setattr(Path, "write_text", windows_default)
    (tmp_path / "t.csv").write_bytes("city\nZürich\n東京\nZürich\n".encode())
    (tmp_path / "s.json").write_text(json.dumps({"columns": {"city": {"type": "categorical",
                                                                      "levels": ["Zürich", "東京"]}}}))
    assert main(["marginal", "--table", str(tmp_path / "t.csv"), "--schema", str(tmp_path / "s.json"),
                 "--columns", "city", "-o", str(tmp_path / "m.csv")]) == 0
    counted = pd.read_csv(tmp_path / "m.csv", encoding="utf-8")
    assert dict(zip(counted["city"], counted["fraction"])) == pytest.approx({"Zürich": 2 / 3, "東京": 1 / 3,
                                                                             "other": 0.0})


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_two_outputs_whose_names_differ_in_case_alone_are_refused_where_files_ignore_case(tmp_path, capsys,
                                                                                          monkeypatch, platform):
    """On macOS's and Windows's default file systems out.csv and OUT.csv are one file: with --overwrite the
    report would replace the synthetic table (without it, the second fails after the fit): refused first."""
    import sys

    monkeypatch.setattr(sys, "platform", platform)
    assert main(["generate", CLINIC, "-o", str(tmp_path / "out.csv"), "--bounds", BOUNDS, "--quiet",
                 "--report", str(tmp_path / "OUT.csv"), "--overwrite"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "give each output its own path" in err, err
    assert list(tmp_path.iterdir()) == []


def test_outputs_are_synced_through_a_descriptor_windows_can_sync(tmp_path, monkeypatch):
    """Windows's fsync (_commit) fails on a descriptor opened read-only (EBADF), where POSIX's succeeds:
    there every output would fail to be written."""
    import errno
    import fcntl
    import os
    import types

    import synthdp.files

    fsync = os.fsync

    def windows_fsync(descriptor):
        if fcntl.fcntl(descriptor, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDONLY:
            raise OSError(errno.EBADF, os.strerror(errno.EBADF))
        fsync(descriptor)

    monkeypatch.setattr(synthdp.files, "sys", types.SimpleNamespace(platform="win32"), raising=False)
    monkeypatch.setattr(os, "fsync", windows_fsync)
    out, report = tmp_path / "o.csv", tmp_path / "r.json"
    assert main(["generate", CLINIC, "-o", str(out), "--bounds", BOUNDS, "--report", str(report), "--rows", "40",
                 "--seed", "1", "--quiet"]) == 0
    assert len(pd.read_csv(out)) == 40 and json.loads(report.read_text())["privacy"]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("command", ["generate", "evaluate"])
def test_a_column_name_with_a_newline_is_refused_before_an_error_names_it(tmp_path, capsys, suffix, command):
    """A header name holding a newline was printed inside the bounds' "unknown column ... (the table has
    'b<newline>mi')" hint and evaluate's "no column" error: two lines. The header is checked first, naming
    the file and the column's position."""
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    frame = pd.DataFrame({"age": [30.0, 40.0, 50.0], "b\nmi": [20.0, 25.0, 30.0]})
    data = tmp_path / f"data{suffix}"
    frame.to_csv(data, index=False) if suffix == ".csv" else frame.to_parquet(data, index=False)
    bounds = tmp_path / "b.json"
    bounds.write_text(json.dumps({"age": [0, 100], "bmi": [10, 50]}))
    out = tmp_path / "o.csv"
    other = tmp_path / "other.csv"
    pd.DataFrame({"age": [31.0, 41.0], "bmi": [21.0, 26.0]}).to_csv(other, index=False)
    argv = (["generate", str(data), "-o", str(out), "--bounds", str(bounds), "--quiet"] if command == "generate"
            else ["evaluate", "--real", str(other), "--synth", str(data), "--quiet"])
    assert main(argv) == 2
    _one_error(capsys, f"'{data}': the name of column 2 contains a control character")
    assert not out.exists()


def test_an_error_quoting_a_name_with_a_newline_stays_one_line(tmp_path, capsys):
    """A name the user gave (a bounds file's key, --target, a path) with a newline in it was quoted as it is,
    and the error ran over two lines: every error is printed with its control characters escaped."""
    bounds = tmp_path / "b.json"
    bounds.write_text(json.dumps({"a\ng": [0, 1], **json.loads(Path(BOUNDS).read_text())}))
    out = tmp_path / "o.csv"
    assert main(["generate", CLINIC, "-o", str(out), "--bounds", str(bounds), "--quiet"]) == 2
    _one_error(capsys, "bounds name unknown column 'a\\ng'")
    assert main(["evaluate", "--real", CLINIC, "--synth", CLINIC, "--target", "a\nb", "--quiet"]) == 2
    _one_error(capsys, "target column 'a\\nb'")
    assert main(["generate", str(tmp_path / "a\nb.csv"), "-o", str(out), "--bounds", BOUNDS, "--quiet"]) == 2
    _one_error(capsys, "a\\nb.csv' does not exist")
    assert not out.exists()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_stream_output_that_fails_after_the_files_are_written_says_so(tmp_path, capsys):
    """A stream (here --report /dev/full) is written after the files are in place: its failure said "cannot
    write the output: No space left on device", naming nothing, while the table it left said otherwise."""
    out = tmp_path / "o.csv"
    assert main(["generate", CLINIC, "-o", str(out), "--report", "/dev/full", "--bounds", BOUNDS, "--rows", "40",
                 "--seed", "1", "--quiet"]) == 2
    _one_error(capsys, "cannot write the output '/dev/full': No space left on device; the file outputs were written")
    assert out.exists() and not list(tmp_path.glob(".*.tmp"))
