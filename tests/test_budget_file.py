"""A table's budget across releases: --budget-file, --lifetime-epsilon, --lifetime-delta.

Every release of a table spends its (epsilon, delta) again; the budget file adds them up (basic
composition) and refuses, before the data is read, a release that would take the table past its
lifetime budget. Concurrent commands and killed ones: synthdp/privacy/lifetime.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from synthdp.cli import main

ROOT = Path(__file__).resolve().parents[1]
CLINIC = str(ROOT / "synthdp" / "datasets" / "clinic.csv")
BOUNDS = str(ROOT / "synthdp" / "datasets" / "clinic_bounds.json")


def _release(tmp_path, budget, name, *extra, command="generate"):
    out = tmp_path / f"{name}.{'synthdp' if command == 'fit' else 'json' if command == 'summarize' else 'csv'}"
    code = main([command, CLINIC, "-o", str(out), "--bounds", BOUNDS, "--budget-file", str(budget), "--quiet",
                 *extra])
    return code, out


def _document(budget):
    return json.loads(Path(budget).read_text())


def test_releases_add_up_and_the_one_past_the_lifetime_budget_is_refused(tmp_path, capsys):
    budget = tmp_path / "clinic.budget.json"
    report = tmp_path / "r.json"
    assert _release(tmp_path, budget, "a", "--epsilon", "0.4", "--lifetime-epsilon", "1")[0] == 0
    code, _ = _release(tmp_path, budget, "b", "--epsilon", "0.3", "--report", str(report), command="summarize")
    assert code == 0
    entry = json.loads(report.read_text())["privacy"]["budget_file"]
    assert entry["spent_before"]["epsilon"] == pytest.approx(0.4) and entry["spent_after"]["epsilon"] == pytest.approx(0.7)
    assert _release(tmp_path, budget, "c", "--epsilon", "0.3", command="fit")[0] == 0  # exactly the rest
    code, out = _release(tmp_path, budget, "d", "--epsilon", "0.01")
    assert code == 2 and not out.exists()
    err = capsys.readouterr().err
    assert "budget would be exceeded" in err and err.count("\n") == 1
    document = _document(budget)
    assert [r["state"] for r in document["releases"]] == ["spent"] * 3
    assert [r["command"] for r in document["releases"]] == ["generate", "summarize", "fit"]
    assert sum(r["epsilon"] for r in document["releases"]) == pytest.approx(1.0)


@pytest.mark.parametrize("lifetime_delta", ["0", "1e-300"])
def test_a_delta_of_1e_300_is_not_spent_past_the_lifetime_delta(tmp_path, capsys, lifetime_delta):
    """The deltas' check had an absolute slack of 1e-300 besides its relative one: a release at delta
    1e-300 was let through on a pure-epsilon lifetime budget (delta 0), and two of them on a lifetime
    delta of 1e-300 (2e-300 spent). The deltas add (basic composition) and must stay within it."""
    budget = tmp_path / "clinic.budget.json"
    lifetime = ["--lifetime-epsilon", "10", "--lifetime-delta", lifetime_delta]
    if lifetime_delta == "1e-300":
        assert _release(tmp_path, budget, "a", "--epsilon", "1", "--delta", "1e-300", *lifetime, command="summarize")[0] == 0
        capsys.readouterr()
    code, out = _release(tmp_path, budget, "b", "--epsilon", "1", "--delta", "1e-300", *lifetime, command="summarize")
    assert code == 2 and not out.exists()
    assert "budget would be exceeded" in capsys.readouterr().err
    if budget.exists():  # a first use refused creates no file
        assert sum(r["delta"] for r in _document(budget)["releases"]) <= float(lifetime_delta)


def test_refused_before_the_data_is_read(tmp_path, capsys):
    """The input does not exist: a refusal that came after reading it would name the file instead."""
    budget = tmp_path / "b.json"
    assert _release(tmp_path, budget, "a", "--epsilon", "1", "--lifetime-epsilon", "1")[0] == 0
    capsys.readouterr()
    assert main(["generate", str(tmp_path / "absent.csv"), "-o", str(tmp_path / "x.csv"), "--bounds", BOUNDS,
                 "--epsilon", "0.5", "--budget-file", str(budget), "--quiet"]) == 2
    assert "budget would be exceeded" in capsys.readouterr().err


def test_the_first_use_declares_the_lifetime_budget_and_later_ones_cannot_change_it(tmp_path, capsys):
    budget = tmp_path / "b.json"
    assert _release(tmp_path, budget, "a", "--epsilon", "0.1")[0] == 2
    assert "--lifetime-epsilon" in capsys.readouterr().err and not budget.exists()
    assert not (tmp_path / "b.json.lock").exists()  # a refused first use leaves nothing beside it
    assert _release(tmp_path, budget, "a", "--lifetime-epsilon", "1", "--lifetime-delta", "5")[0] == 2
    assert "below 1" in capsys.readouterr().err and not budget.exists()
    table_copy = tmp_path / "table.csv"  # a path that is not a budget file: refused, and no lock beside it
    table_copy.write_text(Path(CLINIC).read_text())
    assert _release(tmp_path, table_copy, "a", "--lifetime-epsilon", "1")[0] == 2
    assert "not valid JSON" in capsys.readouterr().err and not (tmp_path / "table.csv.lock").exists()
    assert _release(tmp_path, budget, "b", "--epsilon", "0.1", "--lifetime-epsilon", "1")[0] == 0
    assert _release(tmp_path, budget, "c", "--epsilon", "0.1", "--lifetime-epsilon", "2")[0] == 2
    assert "cannot be changed" in capsys.readouterr().err
    # delta is budgeted too: a lifetime delta of 0 refuses any delta
    assert _release(tmp_path, budget, "d", "--epsilon", "0.1", "--delta", "1e-10")[0] == 2
    assert main(["generate", CLINIC, "-o", str(tmp_path / "e.csv"), "--bounds", BOUNDS, "--lifetime-epsilon", "1",
                 "--quiet"]) == 2  # a lifetime without a file
    assert main(["generate", CLINIC, "-o", str(budget), "--bounds", BOUNDS, "--budget-file", str(budget),
                 "--quiet"]) == 2  # the file is not an output
    assert len(_document(budget)["releases"]) == 1


def test_a_failed_release_is_not_charged(tmp_path):
    budget = tmp_path / "b.json"
    assert _release(tmp_path, budget, "a", "--epsilon", "0.5", "--lifetime-epsilon", "1")[0] == 0
    bad_bounds = tmp_path / "bad.json"
    bad_bounds.write_text(json.dumps({"age": [0, 120]}))  # columns without bounds: the fit fails after the reservation
    code = main(["generate", CLINIC, "-o", str(tmp_path / "x.csv"), "--bounds", str(bad_bounds), "--epsilon", "0.5",
                 "--budget-file", str(budget), "--quiet"])
    assert code == 2 and [r["epsilon"] for r in _document(budget)["releases"]] == [0.5]
    assert _release(tmp_path, budget, "b", "--epsilon", "0.5")[0] == 0  # the rest of the budget is still there


def test_a_first_use_that_failed_before_it_released_declares_no_lifetime_budget(tmp_path, capsys):
    """A first run refused by its own input (a bounds file that misses columns) leaves no budget file, so
    the run that follows it with the mistake mended may declare the lifetime budget it meant."""
    budget = tmp_path / "b.json"
    bad_bounds = tmp_path / "bad.json"
    bad_bounds.write_text(json.dumps({"age": [0, 120]}))  # columns without bounds: the fit fails after the reservation
    code = main(["generate", CLINIC, "-o", str(tmp_path / "x.csv"), "--bounds", str(bad_bounds), "--epsilon", "1",
                 "--budget-file", str(budget), "--lifetime-epsilon", "5", "--quiet"])
    assert code == 2 and not budget.exists() and not (tmp_path / "x.csv").exists()
    capsys.readouterr()
    assert _release(tmp_path, budget, "a", "--epsilon", "1", "--lifetime-epsilon", "3")[0] == 0, capsys.readouterr().err
    assert _document(budget)["lifetime"]["epsilon"] == 3.0 and len(_document(budget)["releases"]) == 1


RUN = """
import sys, threading, time
from synthdp import synthesizer
from synthdp.cli import main
if sys.argv[-1] in ("slow", "held"):  # holds its reservation for a while (or until killed), as a long fit does
    fit = synthesizer.SmoothSynthesizer.fit
    def slow(self, *args, **kwargs):
        if sys.argv[-1] == "held":
            threading.Event().wait()  # never set: the fit is still running when the process is killed
        time.sleep(float(sys.argv[-2]))
        return fit(self, *args, **kwargs)
    synthesizer.SmoothSynthesizer.fit = slow
sys.exit(main(sys.argv[1:-2]))
"""


def _spawn(tmp_path, budget, name, epsilon, sleep=0.0, held=False):
    command = [sys.executable, "-c", RUN, "generate", CLINIC, "-o", str(tmp_path / f"{name}.csv"), "--bounds", BOUNDS,
               "--epsilon", str(epsilon), "--budget-file", str(budget), "--lifetime-epsilon", "1", "--quiet",
               str(sleep), "held" if held else "slow" if sleep else "fast"]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def test_concurrent_releases_never_exceed_the_lifetime_budget(tmp_path):
    """Four commands at once, 0.4 each, on a lifetime budget of 1: two pass, two are refused (each
    reserved under the file's lock, with the others' reservations counted), the total is 0.8."""
    budget = tmp_path / "b.json"
    processes = [_spawn(tmp_path, budget, f"p{i}", 0.4, sleep=1.0) for i in range(4)]
    codes = [process.wait(timeout=120) for process in processes]
    assert sorted(codes) == [0, 0, 2, 2]
    document = _document(budget)
    assert [r["state"] for r in document["releases"]] == ["spent", "spent"]
    assert sum(r["epsilon"] for r in document["releases"]) == pytest.approx(0.8)
    assert sum((tmp_path / f"p{i}.csv").exists() for i in range(4)) == 2


def test_a_killed_release_is_not_charged_and_its_reservation_is_not_lost(tmp_path):
    """A command killed during its fit (before it was charged, so nothing of it was renamed into
    place) leaves a pending entry whose process is gone; the next command drops it and finds the
    whole budget. The command's fit waits until it is killed (not a fixed time, which a loaded
    machine could outlast before the test looks), and the test waits for its reservation."""
    budget = tmp_path / "b.json"
    process = _spawn(tmp_path, budget, "killed", 1.0, held=True)
    try:
        deadline = time.monotonic() + 300  # only against a hang: the loop ends when the reservation is written
        while (process.poll() is None and time.monotonic() < deadline
               and not (budget.exists() and _document(budget)["releases"])):
            time.sleep(0.05)
        assert process.poll() is None, process.communicate()[1]  # still in its fit
        assert _document(budget)["releases"][0]["state"] == "pending"
        os.kill(process.pid, signal.SIGKILL)
    finally:  # a failed check above does not leave the held command running
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
    assert not (tmp_path / "killed.csv").exists()
    assert _release(tmp_path, budget, "after", "--epsilon", "1")[0] == 0
    document = _document(budget)
    assert [(r["state"], r["epsilon"]) for r in document["releases"]] == [("spent", 1.0)]


def test_a_link_to_the_budget_file_keeps_one_record(tmp_path, capsys):
    """Releases through a symbolic link and through the file's own name add up in one record: the
    link is followed (it stays a link), and the release past the lifetime budget is refused."""
    budget = tmp_path / "clinic.budget.json"
    link = tmp_path / "link.json"
    assert _release(tmp_path, budget, "a", "--epsilon", "1", "--lifetime-epsilon", "1.5")[0] == 0
    link.symlink_to(budget.name)
    assert _release(tmp_path, link, "b", "--epsilon", "0.4")[0] == 0
    assert link.is_symlink() and len(_document(budget)["releases"]) == 2
    code, out = _release(tmp_path, budget, "c", "--epsilon", "0.4")
    assert code == 2 and not out.exists() and "budget would be exceeded" in capsys.readouterr().err
    assert not (tmp_path / "link.json.lock").exists()


def test_a_budget_file_with_a_second_name_is_refused_before_anything_is_spent(tmp_path, capsys):
    """A hard link is a second name of the file with a lock of its own, and the atomic rewrite gives the
    new record to one name only: releases through the two names would each see the other's spend no more,
    so the table's budget would be kept twice. Refused, through either name, with nothing written."""
    budget = tmp_path / "clinic.budget.json"
    other = tmp_path / "other.json"
    assert _release(tmp_path, budget, "a", "--epsilon", "1", "--lifetime-epsilon", "1.5")[0] == 0
    os.link(budget, other)
    before = budget.read_text()
    for name, path in (("b", other), ("c", budget)):
        code, out = _release(tmp_path, path, name, "--epsilon", "0.4")
        err = capsys.readouterr().err
        assert code == 2 and not out.exists() and err.count("\n") == 1 and "2 names (hard links)" in err
    assert budget.read_text() == other.read_text() == before
    assert main(["budget", str(other)]) == 2 and "hard links" in capsys.readouterr().err
    other.unlink()
    assert _release(tmp_path, budget, "d", "--epsilon", "0.4")[0] == 0  # one name again: it takes releases


def test_a_command_that_fails_after_its_charge_says_its_budget_was_spent(tmp_path, capsys, monkeypatch):
    """A write that fails after the fit (a full disk) leaves the release charged, as it must (its fit
    released): the one line says so, where a failure before the fit, which charges nothing, does not."""
    import errno

    import pandas as pd

    from synthdp import writers

    budget, bad = tmp_path / "clinic.budget.json", tmp_path / "bad.csv"
    table = pd.read_csv(CLINIC).astype({"age": object})
    table.loc[3, "age"] = "unknown"  # read after the reservation: the run fails before its fit releases
    table.to_csv(bad, index=False)
    code = main(["generate", str(bad), "-o", str(tmp_path / "bad.out.csv"), "--bounds", BOUNDS, "--budget-file",
                 str(budget), "--epsilon", "0.4", "--lifetime-epsilon", "2", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "'age'" in err and "charged" not in err and not budget.exists()  # nothing declared

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(writers, "write_csv", full)
    code, out = _release(tmp_path, budget, "full", "--epsilon", "0.4", "--lifetime-epsilon", "2")
    err = capsys.readouterr().err
    assert code == 2 and not out.exists() and err.count("\n") == 1
    assert f"No space left on device (the release was charged to budget file '{budget}': epsilon 0.4)" in err
    assert [release["state"] for release in _document(budget)["releases"]] == ["spent"]


def test_a_command_out_of_memory_after_its_charge_says_its_budget_was_spent(tmp_path, capsys, monkeypatch):
    """Out of memory after the fit released (the LP, the sample, its write) leaves the release charged as
    any other failure there does: its one line says so too."""
    from synthdp import writers

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(writers, "write_csv", exhausted)
    budget = tmp_path / "clinic.budget.json"
    code, out = _release(tmp_path, budget, "oom", "--epsilon", "0.4", "--lifetime-epsilon", "2")
    err = capsys.readouterr().err
    assert code == 2 and not out.exists() and err.count("\n") == 1
    assert err.startswith("synthdp: error: out of memory; lower --rows")
    assert err.rstrip().endswith(f"(the release was charged to budget file '{budget}': epsilon 0.4)")
    assert [release["state"] for release in _document(budget)["releases"]] == ["spent"]


def test_each_release_records_its_table_and_another_table_is_warned_of(tmp_path, capsys):
    """The budget file records the file each release read (its real path; None for a DataFrame), and
    synthdp budget lists it: a release of another table file is made (the same table may have moved)
    and warned of, since a budget file keeps one table's budget."""
    import shutil
    import warnings

    import pandas as pd

    from synthdp import SmoothSynthesizer

    budget, moved = tmp_path / "clinic.budget.json", tmp_path / "moved.csv"
    shutil.copy(CLINIC, moved)
    assert _release(tmp_path, budget, "a", "--epsilon", "0.5", "--lifetime-epsilon", "3")[0] == 0
    assert "another table" not in capsys.readouterr().err
    code = main(["generate", str(moved), "-o", str(tmp_path / "b.csv"), "--bounds", BOUNDS, "--budget-file",
                 str(budget), "--epsilon", "0.5", "--quiet"])
    err = capsys.readouterr().err
    assert code == 0 and err.count("\n") == 1
    assert f"holds releases of another table file ({Path(CLINIC).resolve()})" in err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        SmoothSynthesizer(epsilon=0.5).fit(pd.read_csv(CLINIC), BOUNDS, budget_file=budget)
    assert [release["table"] for release in _document(budget)["releases"]] == [
        str(Path(CLINIC).resolve()), str(moved.resolve()), None]
    assert main(["budget", str(budget)]) == 0
    listed = capsys.readouterr().out
    assert str(moved.resolve()) in listed and "(not recorded)" in listed


def test_the_python_api_keeps_the_same_budget_file(tmp_path, capsys):
    """SmoothSynthesizer.fit(budget_file=...): reserved before the data is read (a fit past the lifetime
    budget reads nothing: the input here does not exist, and the refusal comes first), charged on
    success, dropped on failure; the report gives the totals; the command line adds to the same file."""
    import warnings

    import pandas as pd

    from synthdp import SmoothSynthesizer, SynthDPError

    budget = tmp_path / "t.budget.json"
    bounds = json.loads(Path(BOUNDS).read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer(epsilon=0.5).fit(pd.read_csv(CLINIC), bounds, budget_file=budget,
                                                   lifetime_epsilon=1.0)
    entry = synth.privacy_report()["privacy"]["budget_file"]
    assert entry["spent_after"]["epsilon"] == pytest.approx(0.5) and _document(budget)["releases"][0]["state"] == "spent"
    with pytest.raises(SynthDPError):  # fails after its reservation: nothing out, so nothing charged
        SmoothSynthesizer(epsilon=0.3).fit(pd.read_csv(CLINIC), {"age": [0, 1]}, budget_file=budget)
    assert len(_document(budget)["releases"]) == 1
    with pytest.raises(SynthDPError, match="budget would be exceeded"):
        SmoothSynthesizer(epsilon=0.6).fit(tmp_path / "absent.csv", bounds, budget_file=budget)
    with pytest.raises(SynthDPError, match="give budget_file"):
        SmoothSynthesizer(epsilon=0.1).fit(pd.read_csv(CLINIC), bounds, lifetime_epsilon=2.0)
    assert _release(tmp_path, budget, "cli", "--epsilon", "0.5")[0] == 0
    assert sum(r["epsilon"] for r in _document(budget)["releases"]) == pytest.approx(1.0)


def _failing_plan(monkeypatch):
    """The mixed plan, the step after the units stage, made to fail (a discovery without its share,
    which these tests used, is refused before any release now)."""
    from synthdp import SynthDPError
    from synthdp.pipeline import run

    def failing(*args, **kwargs):
        raise SynthDPError("the plan failed on the released levels")

    monkeypatch.setattr(run, "make_mixed_plan", failing)


def test_a_python_fit_that_fails_after_a_stage_released_is_charged(tmp_path, monkeypatch):
    """By unit, the units stage releases a noisy row count (which a warning may name) before a later
    step fails: something of the release is out, so its reservation is charged, not dropped, or
    repeated failing fits would average the count."""
    import warnings

    import numpy as np
    import pandas as pd

    from synthdp import SmoothSynthesizer, SynthDPError

    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"person": np.repeat(np.arange(100), 2), "x": rng.uniform(0, 1, 200),
                          "c": rng.choice(["a", "b"], 200)})
    schema = {"columns": {"x": {"type": "continuous", "bounds": [0, 1]},
                          "c": {"type": "categorical", "levels": ["a", "b"]}}}
    budget = tmp_path / "t.budget.json"
    _failing_plan(monkeypatch)
    with warnings.catch_warnings(), pytest.raises(SynthDPError, match="the plan failed"):
        warnings.simplefilter("ignore")
        SmoothSynthesizer(epsilon=0.3, delta=1e-6, privacy_unit="person", max_rows_per_unit=2).fit(
            frame, schema=schema, budget_file=budget, lifetime_epsilon=1.0, lifetime_delta=1e-5)
    releases = _document(budget)["releases"]
    assert [r["state"] for r in releases] == ["spent"] and releases[0]["epsilon"] == pytest.approx(0.3)
    with pytest.raises(SynthDPError):  # failing before any stage (bounds for no column): nothing out, nothing charged
        SmoothSynthesizer(epsilon=0.3).fit(frame[["x"]], {"y": [0, 1]}, budget_file=budget)
    assert len(_document(budget)["releases"]) == 1


def _units_table(tmp_path):
    """A table of 100 people with two rows each, its schema, and one whose levels the release discovers."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(5)
    table = tmp_path / "units.csv"
    pd.DataFrame({"person": np.repeat(np.arange(100), 2), "x": rng.uniform(0, 1, 200),
                  "c": rng.choice(["a", "b"], 200)}).to_csv(table, index=False)
    declared = tmp_path / "units_declared.json"
    declared.write_text(json.dumps({"columns": {"x": {"type": "continuous", "bounds": [0, 1]},
                                                "c": {"type": "categorical", "levels": ["a", "b"]}}}))
    schema = tmp_path / "units_schema.json"
    schema.write_text(json.dumps({"columns": {"x": {"type": "continuous", "bounds": [0, 1]},
                                              "c": {"type": "categorical", "levels": "discover"}}}))
    return table, declared, schema


def test_a_command_that_fails_after_a_stage_released_is_charged(tmp_path, capsys, monkeypatch):
    """As the Python fit: by unit, the units stage releases a noisy row count before a later step
    fails; the one-line error may carry what the plan made of that count, so the release is charged,
    not dropped (repeated failing commands would average it). A discovery without its share is
    refused before any release: nothing charged."""
    table, declared, schema = _units_table(tmp_path)
    budget = tmp_path / "b.json"
    code = main(["generate", str(table), "-o", str(tmp_path / "x.csv"), "--schema", str(schema), "--epsilon", "0.3",
                 "--delta", "1e-6", "--privacy-unit", "person", "--max-rows-per-unit", "2", "--budget-file",
                 str(budget), "--lifetime-epsilon", "1", "--lifetime-delta", "1e-5", "--quiet"])
    assert code == 2 and "levels" in capsys.readouterr().err and not budget.exists()  # nothing declared
    schema = declared
    _failing_plan(monkeypatch)
    code = main(["generate", str(table), "-o", str(tmp_path / "x.csv"), "--schema", str(schema), "--epsilon", "0.3",
                 "--delta", "1e-6", "--privacy-unit", "person", "--max-rows-per-unit", "2", "--budget-file",
                 str(budget), "--lifetime-epsilon", "1", "--lifetime-delta", "1e-5", "--quiet"])
    assert code == 2 and "the plan failed" in capsys.readouterr().err and not (tmp_path / "x.csv").exists()
    releases = _document(budget)["releases"]
    assert [(r["state"], r["epsilon"], r["differentially_private"]) for r in releases] == [("spent", 0.3, None)]


def test_a_release_is_charged_before_its_first_output_byte(tmp_path, monkeypatch):
    """A run stopped while it writes (killed, out of disk) has its release in the temporary files:
    it is charged before any of them is written, so none can be taken uncharged."""
    from synthdp.privacy import lifetime

    seen = []
    charge = lifetime.charge

    def watched(reservation, *args, **kwargs):
        seen.append(sorted(path.name for path in tmp_path.iterdir() if path.suffix in (".csv", ".tmp")))
        return charge(reservation, *args, **kwargs)

    monkeypatch.setattr(lifetime, "charge", watched)
    budget = tmp_path / "b.json"
    code, out = _release(tmp_path, budget, "a", "--epsilon", "0.5", "--lifetime-epsilon", "1")
    assert code == 0 and out.exists() and seen == [[]]
    assert _document(budget)["releases"][0]["differentially_private"] is True


def test_a_file_keeps_one_neighbouring_relation_and_counts_releases_that_were_not_private(tmp_path, capsys):
    """A file kept by unit refuses a release by row (its epsilon by unit is up to K times larger)
    and by another unit column; a file kept by row refuses a release by unit (its epsilon by row may
    be twice its own). A release with --seed is recorded as not private, and the next report's
    budget_file entry counts it. A file whose only release was dropped takes the next one's unit."""
    table, declared, _ = _units_table(tmp_path)
    by_unit, by_row = tmp_path / "unit.json", tmp_path / "row.json"
    unit_flags = ["--privacy-unit", "person", "--max-rows-per-unit", "2"]

    def release(budget, name, *extra):
        return main(["generate", str(table), "-o", str(tmp_path / f"{name}.csv"), "--schema", str(declared), "--epsilon",
                     "0.2", "--budget-file", str(budget), "--lifetime-epsilon", "1", "--quiet", *extra])

    assert release(by_unit, "u1", *unit_flags) == 0 and _document(by_unit)["privacy_unit"] == "person"
    capsys.readouterr()
    assert release(by_unit, "u2") == 2 and not (tmp_path / "u2.csv").exists()
    err = capsys.readouterr().err
    assert "keeps the table's budget by unit 'person'" in err and "a release by row" in err and err.count("\n") == 1
    assert release(by_unit, "u3", "--privacy-unit", "x", "--max-rows-per-unit", "2") == 2
    assert "by unit 'x'" in capsys.readouterr().err
    assert release(by_unit, "u4", *unit_flags) == 0 and len(_document(by_unit)["releases"]) == 2
    with_person = tmp_path / "rows_schema.json"  # by row, the person column is a column of the table
    with_person.write_text(json.dumps({"columns": {"person": {"type": "integer", "bounds": [0, 99]},
                                                   **json.loads(declared.read_text())["columns"]}}))
    assert release(by_row, "r1", "--schema", str(with_person), "--seed", "1") == 0
    assert _document(by_row)["privacy_unit"] is None
    capsys.readouterr()
    assert release(by_row, "r2", *unit_flags) == 2
    assert "keeps the table's budget by row, and a release by unit 'person'" in capsys.readouterr().err
    report = tmp_path / "r2.json"
    assert release(by_row, "r2", "--schema", str(with_person), "--report", str(report)) == 0
    entry = json.loads(report.read_text())["privacy"]["budget_file"]
    assert entry["earlier_releases_not_private"] == 1 and "not differentially private" in entry["note"]
    assert [r["differentially_private"] for r in _document(by_row)["releases"]] == [False, True]
    fresh = tmp_path / "fresh.json"  # a first release by row that fails before any stage: the unit is not kept
    assert release(fresh, "f1", "--schema", str(tmp_path / "absent.json")) == 2
    assert release(fresh, "f2", *unit_flags) == 0 and _document(fresh)["privacy_unit"] == "person"


def test_a_reservation_made_by_the_caller_is_for_one_fit_of_its_own_budget(tmp_path):
    """SmoothSynthesizer.fit(budget_file=reservation) (as the command line hands its own): refused
    for another epsilon, delta or unit than the fit's, and charged once only (three fits on one
    reservation spent three times what the file recorded)."""
    import warnings

    import pandas as pd

    from synthdp import SmoothSynthesizer, SynthDPError
    from synthdp.privacy import lifetime

    frame, bounds = pd.read_csv(CLINIC), json.loads(Path(BOUNDS).read_text())
    reservation = lifetime.reserve(tmp_path / "b.json", "test", 0.1, 0.0, lifetime_epsilon=1.0)
    with pytest.raises(SynthDPError, match="another epsilon"):
        SmoothSynthesizer(epsilon=0.9).fit(frame, bounds, budget_file=reservation)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        SmoothSynthesizer(epsilon=0.1).fit(frame, bounds, budget_file=reservation)
        with pytest.raises(SynthDPError, match="charged already"):
            SmoothSynthesizer(epsilon=0.1).fit(frame, bounds, budget_file=reservation)
    assert [(r["state"], r["epsilon"]) for r in _document(tmp_path / "b.json")["releases"]] == [("spent", 0.1)]


def test_a_pending_entry_of_another_pid_namespace_is_kept(tmp_path):
    """A process id means something only in its PID namespace: a pending entry from a container with
    this host's name, whose process this one cannot see, is kept (it was dropped as dead, and its
    run, still going, lost its reservation); one of this namespace whose process is gone is dropped."""
    import socket

    from synthdp.privacy import lifetime

    budget = tmp_path / "b.json"
    assert _release(tmp_path, budget, "a", "--epsilon", "0.2", "--lifetime-epsilon", "1")[0] == 0
    document = _document(budget)
    gone = 2**22 + 12345  # above Linux's largest pid: no such process
    base = {"command": "generate", "epsilon": 0.3, "delta": 0.0, "state": "pending", "started": "", "finished": None,
            "host": socket.gethostname(), "pid": gone}
    document["releases"] += [{**base, "id": "other", "pid_namespace": "pid:[1]"},
                             {**base, "id": "here", "pid_namespace": lifetime._pid_namespace()}]
    budget.write_text(json.dumps(document))
    assert _release(tmp_path, budget, "b", "--epsilon", "0.2")[0] == 0
    kept = [r["id"] for r in _document(budget)["releases"]]
    assert len(kept) == 3 and "other" in kept and "here" not in kept


def test_what_would_fail_after_the_fit_is_refused_before_the_budget_is_charged(tmp_path, capsys):
    """An output or a copies' reference sample over the output bound fails whatever the data:
    refused before the reservation, so the budget is not spent."""
    table, declared, _ = _units_table(tmp_path)
    budget = tmp_path / "b.json"
    base = ["generate", str(table), "-o", str(tmp_path / "o.csv"), "--schema", str(declared), "--budget-file",
            str(budget), "--lifetime-epsilon", "1", "--quiet"]
    assert main([*base, "--rows", "300000000"]) == 2 and "--rows: " in capsys.readouterr().err  # x 2 columns
    assert main([*base, "--rows", "20000000", "--copies", "2"]) == 2
    assert "the copies' reference sample" in capsys.readouterr().err
    assert not budget.exists() or _document(budget)["releases"] == []


def _public_inputs(tmp_path):
    """Tables of 100 people with two rows each (numeric: x, y; mixed: x, c), one with a missing cell,
    and the bounds and schema files the refusals below start from."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(7)
    frame = pd.DataFrame({"person": np.repeat(np.arange(100), 2), "x": rng.uniform(0, 1, 200),
                          "y": rng.uniform(0, 1, 200), "c": rng.choice(["a", "b"], 200)})
    frame[["person", "x", "y"]].to_csv(tmp_path / "numeric.csv", index=False)
    frame[["person", "x", "c"]].to_csv(tmp_path / "mixed.csv", index=False)
    frame[["x", "c"]].to_csv(tmp_path / "mixed_rows.csv", index=False)
    frame[["x", "y"]].to_csv(tmp_path / "numeric_rows.csv", index=False)
    holes = frame[["x", "y"]].copy()
    holes.loc[::9, "x"] = np.nan
    holes.to_csv(tmp_path / "holes.csv", index=False)
    files = {"bounds": {"x": [0, 1], "y": [0, 1]}, "x_only": {"x": [0, 1]},
             "nullable": {"x": {"bounds": [0, 1], "nullable": True}, "y": [0, 1]},
             "schema": {"columns": {"x": [0, 1], "c": {"type": "categorical", "levels": ["a", "b"]}}},
             "discover": {"columns": {"x": [0, 1], "c": {"type": "categorical", "levels": "discover"}}},
             "unbounded_x": {"columns": {"x": {"type": "continuous"}, "y": [0, 1]}},
             "unbounded_three": {"columns": {"x": {"type": "continuous"},
                                             "c": {"type": "binary", "levels": ["a", "b", "z"]}}}}
    for name, content in files.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(content))
    return tmp_path


UNIT = ["--privacy-unit", "person", "--max-rows-per-unit", "2"]
DISCOVERY = ["--levels-share", "0.1", "--delta", "1e-6"]
PUBLIC_REFUSALS = [  # (command, input, options, what the one line says)
    # by unit, the units' noisy count came first: the plan's options after it
    ("generate", "numeric.csv", ["--bounds", "bounds.json", "--candidates", "moments", "--n-basis", "2", *UNIT],
     "raise --n-basis"),
    ("generate", "mixed.csv", ["--schema", "schema.json", "--mode", "exact", *UNIT], "practical mode"),
    ("fit", "mixed.csv", ["--schema", "schema.json", "--max-lp-entries", "100", *UNIT], "max_lp_entries"),
    # a numeric table's LP and candidates, their sizes given (neither follows n)
    ("generate", "numeric.csv", ["--bounds", "bounds.json", "--n-basis", "100000", *UNIT], "max_lp_entries"),
    ("summarize", "numeric.csv", ["--bounds", "bounds.json", "--n-basis", "30000000", *UNIT], "moments, over the bound"),
    ("generate", "numeric.csv", ["--bounds", "bounds.json", "--n-candidates", "200000000", *UNIT],
     "candidate values"),
    # by row, a schema's level discovery or bounds estimation came first
    ("generate", "mixed_rows.csv", ["--schema", "unbounded_three.json", "--bounds-share", "0.1"], "exactly 2 levels"),
    ("generate", "mixed_rows.csv", ["--schema", "discover.json", *DISCOVERY, "--mode", "exact"], "practical mode"),
    ("fit", "numeric_rows.csv", ["--schema", "unbounded_x.json", "--bounds-share", "0.1", "--n-basis", "100000"],
     "max_lp_entries"),
    # after the fit: a summary the release does not hold, an output over the bound by the header's columns
    ("generate", "holes.csv", ["--bounds", "nullable.json", "--summary-out", "s.json"], "--summary-out: "),
    ("fit", "holes.csv", ["--bounds", "nullable.json", "--summary-out", "s.json"], "--summary-out: "),
    ("generate", "numeric.csv", ["--bounds", "x_only.json", "--bounds-share", "0.1", "--rows", "200000000"],
     "x 3 columns"),
    ("generate", "numeric.csv", ["--bounds-from-data", "--rows", "200000000"], "x 3 columns"),
    ("generate", "mixed.csv", ["--schema", "schema.json", "--rows", "200000000", *UNIT], "x 3 columns"),
]


@pytest.mark.parametrize("command, table, options, message", PUBLIC_REFUSALS)
def test_what_public_inputs_refuse_is_refused_before_the_first_release_too(tmp_path, capsys, command, table, options,
                                                                       message):
    """An error that follows from the options, the bounds or schema file and the table's header alone
    is raised before any stage released (by unit the units' count, a schema's level discovery or bounds
    estimation come before the plan; a summary or the synthetic table come after the fit): the budget
    file is not charged, and nothing is written."""
    folder = _public_inputs(tmp_path)
    budget, out = folder / "b.json", folder / "out"
    out.mkdir()
    options = [str(folder / option) if option.endswith(".json") and option != "s.json" else
               str(out / option) if option == "s.json" else option for option in options]
    output = out / {"fit": "m.synthdp", "summarize": "s2.json"}.get(command, "x.csv")
    code = main([command, str(folder / table), "-o", str(output), *options, "--budget-file", str(budget),
                 "--lifetime-epsilon", "10", "--lifetime-delta", "1e-3", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and message in err, err
    assert not budget.exists() or _document(budget)["releases"] == []
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("flag", ["-o", "--report", "--summary-out", "--model-out", "--budget-file"])
def test_an_output_in_a_folder_that_is_a_file_is_refused_before_the_budget_is_charged(tmp_path, capsys, flag):
    """A path through a regular file ('notes.txt/x.csv') passed the output checks (its 'folder' exists
    and is writable): the release was charged, then writing failed with "Not a directory"."""
    budget, blocker = tmp_path / "b.json", tmp_path / "notes.txt"
    blocker.write_text("mine\n")
    paths = {"-o": tmp_path / "x.csv", "--budget-file": budget, flag: blocker / "out.json"}
    code = main(["generate", CLINIC, "--bounds", BOUNDS, "--quiet", "--lifetime-epsilon", "1",
                 *(str(part) for item in paths.items() for part in item)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and f"folder '{blocker}' is a file" in err, err
    assert not budget.exists() or _document(budget)["releases"] == []
    assert sorted(path.name for path in tmp_path.iterdir()) in (["notes.txt"], ["b.json", "b.json.lock", "notes.txt"])
    assert blocker.read_text() == "mine\n"

def test_the_budget_command_shows_what_remains_exactly_as_a_release_counts_it(tmp_path, capsys):
    """``synthdp budget`` adds the charged releases and the live reservations (a pending entry of this
    process), leaves out a stale one (a process that has ended), and the remainder it prints is what
    the next release may take: that much is reserved, a little more is refused. It writes nothing."""
    from synthdp.privacy import lifetime

    budget = tmp_path / "b.json"
    assert _release(tmp_path, budget, "a", "--epsilon", "0.5", "--lifetime-epsilon", "2",
                    "--lifetime-delta", "1e-6", "--delta", "1e-8")[0] == 0
    live = lifetime.reserve(budget, "fit", 0.25, 0.0)  # this process: alive
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    document = _document(budget)
    document["releases"].append({**document["releases"][-1], "id": "gone", "pid": int(ended.stdout), "epsilon": 0.75})
    budget.write_text(json.dumps(document))
    before = budget.read_bytes()
    capsys.readouterr()
    assert main(["budget", str(budget), "--json"]) == 0
    state = json.loads(capsys.readouterr().out)
    assert state == json.loads(json.dumps(lifetime.status(budget)))
    assert [r["state"] for r in state["releases"]] == ["spent", "pending", "stale"] and state["stale"] == 1
    assert state["spent"]["epsilon"] == pytest.approx(0.5) and state["pending"]["epsilon"] == pytest.approx(0.25)
    assert state["remaining"]["epsilon"] == pytest.approx(1.25)
    assert state["remaining"]["delta"] == pytest.approx(1e-6 - 1e-8)
    assert main(["budget", str(budget)]) == 0
    text = capsys.readouterr().out
    assert "remaining: epsilon 1.25, delta 9.9e-07" in text and "stale" in text
    assert budget.read_bytes() == before  # read only
    with pytest.raises(Exception, match="budget would be exceeded"):
        lifetime.reserve(budget, "generate", state["remaining"]["epsilon"] + 0.01, 0.0)
    lifetime.reserve(budget, "generate", state["remaining"]["epsilon"], 0.0)
    lifetime.cancel(live)


def test_the_budget_command_refuses_a_missing_or_foreign_file_in_one_line(tmp_path, capsys):
    assert main(["budget", str(tmp_path / "none.json")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    other = tmp_path / "other.json"
    other.write_text('{"secret": 123456.789}')
    assert main(["budget", str(other)]) == 2
    err = capsys.readouterr().err
    assert "not a synthdp budget file" in err and "123456" not in err and err.count("\n") == 1


def test_the_budget_command_says_the_next_release_declares_the_unit_where_only_stale_entries_name_one(tmp_path,
                                                                                                   capsys):
    """A file whose only entry by a unit is stale (its process ended) takes the next release's unit, as
    reserve() drops the stale entry: the command does not say it is kept by that unit."""
    from synthdp.privacy import lifetime

    budget = tmp_path / "b.json"
    lifetime.reserve(budget, "fit", 0.25, 0.0, lifetime_epsilon=1.0, privacy_unit="person")
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    document = _document(budget)
    document["releases"][0]["pid"] = int(ended.stdout)
    budget.write_text(json.dumps(document))
    state = lifetime.status(budget)
    assert state["privacy_unit"] is None and state["unit_declared"] is False
    assert main(["budget", str(budget)]) == 0
    assert "by unit 'person'" not in capsys.readouterr().out
    lifetime.reserve(budget, "generate", 0.5, 0.0)  # by row: accepted, as the status says
    assert lifetime.status(budget)["privacy_unit"] is None and lifetime.status(budget)["unit_declared"] is True


@pytest.mark.parametrize("edit", [
    lambda d: d["releases"][0].update(epsilon=float("nan")),  # every comparison with NaN fails: nothing refused
    lambda d: d["lifetime"].update(epsilon=float("nan")),
    lambda d: d["releases"][0].update(epsilon=-5.0),  # budget given back
    lambda d: d["lifetime"].update(epsilon=float("inf")),
    lambda d: d["lifetime"].update(epsilon="2"),
    lambda d: d["releases"][0].update(delta=True),
    lambda d: d["lifetime"].update(delta=2.0),
    lambda d: d["releases"][0].update(state="done"),  # neither pending nor spent: dropped as if stale
    lambda d: d.update(releases={}),
    lambda d: d["releases"][0].update(differentially_private="no"),  # the budget command's table: a traceback
    lambda d: d["releases"][0].update(started=[1]),
])
def test_an_edited_budget_file_whose_numbers_or_states_do_not_hold_is_refused_before_the_data_is_read(tmp_path, capsys,
                                                                                                       edit):
    """A budget file whose epsilons, deltas or states are not what synthdp writes (a NaN, a negative
    epsilon, text, a flag, an unknown state) is refused in one line, by the budget command and by a
    release, before the data is read: a NaN spent epsilon made every release pass the lifetime check
    (fit --epsilon 100 in a lifetime of 2), a negative one gave budget back."""
    budget = tmp_path / "b.json"
    assert _release(tmp_path, budget, "a", "--epsilon", "0.5", "--lifetime-epsilon", "2")[0] == 0
    document = _document(budget)
    edit(document)
    budget.write_text(json.dumps(document))
    capsys.readouterr()
    assert main(["budget", str(budget)]) == 2
    err = capsys.readouterr().err
    assert "damaged or edited" in err and err.count("\n") == 1
    code, out = _release(tmp_path, budget, "b", "--epsilon", "100", command="fit")
    assert code == 2 and not out.exists()
    err = capsys.readouterr().err
    assert "damaged or edited" in err and err.count("\n") == 1


def test_a_rewrite_keeps_the_budget_files_mode_and_a_failed_one_leaves_nothing_beside_it(tmp_path, capsys,
                                                                                        monkeypatch):
    """Every update replaced the file by a mkstemp file, mode 0600: a budget file a group shares
    (0664) became its last writer's alone, and the others' releases were refused as if it were not
    valid JSON. A write that failed (disk full) left its temporary file beside the budget file, and
    the one line blamed "the output"."""
    from synthdp.privacy import lifetime

    budget = tmp_path / "b.json"
    umask = os.umask(0o022)
    try:
        assert _release(tmp_path, budget, "a", "--epsilon", "0.2", "--lifetime-epsilon", "1")[0] == 0
    finally:
        os.umask(umask)
    assert budget.stat().st_mode & 0o777 == 0o644  # as a plain open() makes it
    budget.chmod(0o664)
    assert _release(tmp_path, budget, "b", "--epsilon", "0.2")[0] == 0
    assert budget.stat().st_mode & 0o777 == 0o664
    before = budget.read_bytes()

    def full(descriptor):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(lifetime.os, "fsync", full)
    capsys.readouterr()
    code, out = _release(tmp_path, budget, "c", "--epsilon", "0.2")
    err = capsys.readouterr().err
    assert code == 2 and not out.exists() and err.count("\n") == 1
    assert f"cannot write budget file '{budget}': No space left on device" in err, err
    assert budget.read_bytes() == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a.csv", "b.csv", "b.json", "b.json.lock"]
    monkeypatch.undo()

    def unreadable(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_text", unreadable)
    assert main(["budget", str(budget)]) == 2
    err = capsys.readouterr().err
    assert f"budget file '{budget}' cannot be read: Permission denied" in err and err.count("\n") == 1


def test_a_report_with_the_data_timings_is_recorded_as_a_release_that_was_not_private(tmp_path):
    """--data-timings with --report writes the times of the stages that read the data, and the report
    says it is NOT differentially private; the budget file recorded the release as private all the
    same, and the next release's budget_file entry counted no earlier release that was not. In Python,
    privacy_report(data_timings=True) records it too."""
    from synthdp import SmoothSynthesizer

    budget, report = tmp_path / "b.json", tmp_path / "r.json"
    assert _release(tmp_path, budget, "a", "--epsilon", "0.2", "--lifetime-epsilon", "1", "--report", str(report),
                    "--data-timings")[0] == 0
    assert json.loads(report.read_text())["privacy"]["differentially_private"] is False
    assert _release(tmp_path, budget, "b", "--epsilon", "0.2")[0] == 0  # without them: private
    assert [r["differentially_private"] for r in _document(budget)["releases"]] == [False, True]
    synth = SmoothSynthesizer(epsilon=0.2, progress=False).fit(CLINIC, BOUNDS, budget_file=budget)
    assert synth.privacy_report()["privacy"]["budget_file"]["earlier_releases_not_private"] == 1
    assert _document(budget)["releases"][-1]["differentially_private"] is True
    synth.privacy_report(data_timings=True)
    assert [r["differentially_private"] for r in _document(budget)["releases"]] == [False, True, False]


def test_every_update_of_the_budget_file_is_synced_with_its_folder(tmp_path, monkeypatch):
    """The file was synced but not the rename: after a power cut the folder could still name the file
    before the charge, while the release's outputs (written after it) were there."""
    import stat

    from synthdp.privacy import lifetime

    synced, real = [], os.fsync

    def fsync(descriptor):
        synced.append(stat.S_ISDIR(os.fstat(descriptor).st_mode))
        real(descriptor)

    monkeypatch.setattr(lifetime.os, "fsync", fsync)
    reservation = lifetime.reserve(tmp_path / "b.json", "generate", 0.1, 0.0, 1.0)
    lifetime.charge(reservation, True)
    assert synced == [False, True, False, True]  # the file, then its folder, at each update


def test_a_budget_file_whose_lock_cannot_be_made_is_refused_in_one_line_naming_it(tmp_path, capsys, monkeypatch):
    """A budget file in a read-only folder: the lock could not be made, and the one line said "cannot
    write the output", naming neither the budget file nor its lock."""
    import builtins

    budget = tmp_path / "b.json"
    real = builtins.open

    def read_only(file, *args, **kwargs):
        if str(file).endswith(".lock"):
            raise OSError(30, "Read-only file system")
        return real(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", read_only)
    code, out = _release(tmp_path, budget, "a", "--epsilon", "0.2", "--lifetime-epsilon", "1")
    err = capsys.readouterr().err
    assert code == 2 and not out.exists() and err.count("\n") == 1
    assert f"cannot lock budget file '{budget}'" in err and "Read-only file system" in err, err


def test_a_rewrite_keeps_the_budget_files_group_and_never_changes_the_umask(tmp_path, monkeypatch):
    """A rename leaves the file its writer's, in the writer's group: 0664 kept, a file its group shares
    still became another group's, which the first group could no longer write. The mode of a new file
    was found by setting the umask to 0 and back, which every thread of the process shares (one creating
    a file meanwhile made it world-writable)."""
    from synthdp.privacy import lifetime

    budget = tmp_path / "b.json"
    reservation = lifetime.reserve(budget, "generate", 0.1, 0.0, 1.0)
    if os.geteuid() == 0:  # a group the writer is not in: only root can give the file one
        group = os.stat(budget).st_gid + 4242
        os.chown(budget, -1, group)
        lifetime.charge(reservation, True)
        assert os.stat(budget).st_gid == group
    changed = []
    monkeypatch.setattr(lifetime.os, "umask", lambda mask: changed.append(mask) or 0o022)
    lifetime.reserve(tmp_path / "new.json", "generate", 0.1, 0.0, 1.0)
    assert changed == []


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
def test_an_output_at_the_budget_files_lock_is_refused_before_the_budget_is_spent(tmp_path, capsys, overwrite):
    """An output named as the budget file's lock (``PATH.lock``, which the first release creates) is refused
    before the reservation, as the budget file itself is: it failed once every output was written, the
    release charged (or, with --overwrite, replaced the lock that concurrent commands wait on)."""
    budget = tmp_path / "b.json"
    code, out = _release(tmp_path, budget, "a", "--epsilon", "0.5", "--lifetime-epsilon", "1", "--report",
                         str(tmp_path / "b.json.lock"), *overwrite)
    assert code == 2 and not out.exists() and not budget.exists()
    err = capsys.readouterr().err
    assert "--report" in err and "is the budget file's lock" in err and err.count("\n") == 1


def test_a_delta_just_below_one_is_never_printed_as_one(tmp_path, capsys):
    """A delta of 1 promises nothing, and is refused; one just below it (0.9999) is a valid, if weak,
    promise: the command's last line and the budget file's status printed it as "1" (3 significant
    digits). They print the digits that tell it from 1, and the usual 3 digits elsewhere."""
    budget = tmp_path / "b.json"
    code, _ = _release(tmp_path, budget, "a", "--epsilon", "1", "--delta", "0.9999", "--lifetime-epsilon", "2",
                       "--lifetime-delta", "0.99995")
    assert code == 0
    capsys.readouterr()
    main(["budget", str(budget)])
    status = capsys.readouterr().out
    assert "delta 0.99995\n" in status and "delta 0.9999 in 1 release" in status and "delta 1\n" not in status
    main(["generate", CLINIC, "-o", str(tmp_path / "c.csv"), "--bounds", BOUNDS, "--epsilon", "1", "--delta", "0.9999"])
    assert capsys.readouterr().err.strip().endswith("epsilon=1, delta=0.9999")
    assert _release(tmp_path, budget, "past", "--epsilon", "0.5", "--delta", "0.0001")[0] == 2  # past its delta
    assert "delta 0.9999 + 0.0001 of 0.99995 (budget file" in capsys.readouterr().err


def test_a_system_without_flock_refuses_the_budget_file_in_one_line(tmp_path, capsys, monkeypatch):
    # Windows has no fcntl: without the lock two commands could both pass the check, so the option is refused
    monkeypatch.setitem(sys.modules, "fcntl", None)
    budget = tmp_path / "clinic.budget.json"
    code, out = _release(tmp_path, budget, "a", "--lifetime-epsilon", "2")
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and "--budget-file" in err and "Windows" in err, err
    assert sorted(path.name for path in tmp_path.iterdir()) == []  # no output, no budget file, no lock


def test_an_output_named_as_the_budget_file_in_another_case_is_refused_where_files_ignore_case(
        tmp_path, capsys, monkeypatch):
    """On macOS's default file system B.csv is the budget file b.csv, before its first use creates it: the
    synthetic table would replace the table's record (--overwrite). Refused before anything is reserved."""
    monkeypatch.setattr(sys, "platform", "darwin")
    code = main(["generate", CLINIC, "-o", str(tmp_path / "B.csv"), "--bounds", BOUNDS, "--budget-file",
                 str(tmp_path / "b.csv"), "--lifetime-epsilon", "2", "--overwrite", "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "is the budget file" in err and len(err.splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == []


def test_every_epsilon_and_delta_of_the_budget_json_is_a_float(tmp_path, capsys):
    """``synthdp budget --json`` printed the total of no entry (nothing pending, or nothing spent) as the
    integer 0, and an entry edited by hand to an integer as one, beside floats; every epsilon and delta is
    a float, as is the report's ``spent_before`` of a file's first release. The counts stay integers."""
    from synthdp.privacy import lifetime

    budget = tmp_path / "b.json"
    first = lifetime.reserve(budget, "generate", 0.5, 0.0, lifetime_epsilon=2.0)
    assert all(type(value) is float for value in lifetime.summary(first)["spent_before"].values())
    lifetime.charge(first, True)
    document = _document(budget)
    document["releases"].append({**document["releases"][0], "id": "edited", "epsilon": 1, "delta": 0})
    budget.write_text(json.dumps(document))
    capsys.readouterr()
    assert main(["budget", str(budget), "--json"]) == 0
    state = json.loads(capsys.readouterr().out)
    budgets, counts = [], []

    def collect(node):
        if isinstance(node, dict):
            budgets.extend(value for key, value in node.items() if key in ("epsilon", "delta"))
            counts.extend(value for key, value in node.items() if key in ("releases", "stale", "not_private")
                          and not isinstance(value, list))
            for value in node.values():
                collect(value)
        elif isinstance(node, list):
            for value in node:
                collect(value)

    collect(state)
    assert len(budgets) == 2 * (4 + 2)  # lifetime, spent, pending, remaining and the two releases
    assert all(type(value) is float for value in budgets), budgets
    assert state["pending"] == {"epsilon": 0.0, "delta": 0.0, "releases": 0} and state["spent"]["epsilon"] == 1.5
    assert len(counts) == 4 and all(type(value) is int for value in counts)
