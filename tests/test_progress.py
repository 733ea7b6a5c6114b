"""The progress bars on stderr: drawn only on a terminal, naming the running stage, counting each
stage once, with one colon after the description."""

import json
import sys

import numpy as np
import pandas as pd
import pytest

import synthdp.pipeline.progress as progress_module
from synthdp.cli import main
from synthdp.pipeline.progress import StageTracker


@pytest.fixture
def no_delay(monkeypatch):
    """The bars' delay of a second and least interval between redraws set to 0, so a short run draws every one."""
    shown = progress_module.tqdm
    monkeypatch.setattr(progress_module, "tqdm", lambda *args, **options: shown(*args, **{**options, "delay": 0, "mininterval": 0}))


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "data.csv"
    pd.DataFrame({"age": rng.integers(20, 80, 300), "score": rng.uniform(0, 1, 300)}).to_csv(path, index=False)
    bounds = tmp_path / "bounds.json"
    bounds.write_text(json.dumps({"age": {"bounds": [18, 90], "type": "integer"}, "score": [0, 1]}))
    return path, bounds


def _frames(err):
    """Each redraw of a bar on stderr (tqdm starts each one with a carriage return)."""
    return [frame.strip() for frame in err.replace("\n", "\r").split("\r") if "stages" in frame]


def test_generate_draws_no_bar_where_stderr_is_not_a_terminal(table, tmp_path, capsys, no_delay):
    """A log file or a pipe kept every redraw of the stage bar (capsys's stderr is not a terminal);
    on a terminal the bar is drawn, and --quiet draws none there either."""
    data, bounds = table
    assert main(["generate", str(data), "-o", str(tmp_path / "a.csv"), "--bounds", str(bounds)]) == 0
    err = capsys.readouterr().err
    assert "stages" not in err and "\r" not in err and err.startswith("synthdp: wrote 300 rows")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys.stderr, "isatty", lambda: True)
        assert main(["generate", str(data), "-o", str(tmp_path / "b.csv"), "--bounds", str(bounds)]) == 0
        assert _frames(capsys.readouterr().err)
        assert main(["generate", str(data), "-o", str(tmp_path / "c.csv"), "--bounds", str(bounds), "--quiet"]) == 0
        assert capsys.readouterr().err == ""


def test_the_stage_bar_names_the_running_stage_and_counts_each_once(capsys, no_delay):
    """The bar read "synthdp [LP fit]: : 4/5" (tqdm's set_description adds the colon the bar format
    has already), "7/? stages" where a stage ran twice (a tilt before and after the LP fit) and,
    during a stage, the name of the one before it."""
    tracker = StageTracker(["moments", "LP tilt", "LP fit"], quiet=False)
    seen = []
    for name in ("moments", "LP tilt", "LP fit", "LP tilt"):
        with tracker.stage(name):
            seen.append(_frames(capsys.readouterr().err))
    tracker.close()
    final = _frames(capsys.readouterr().err)
    everything = [frame for frames in seen for frame in frames] + final
    assert everything and all(": :" not in frame and "?" not in frame for frame in everything)
    assert seen[1][-1].startswith("synthdp [LP tilt]: 1/3") and seen[2][-1].startswith("synthdp [LP fit]: 2/3")
    assert seen[3][-1].startswith("synthdp [LP tilt]: 3/3") and final == []  # (close clears the line)
    assert tracker.timings.keys() == {"moments", "LP tilt", "LP fit"}


def test_sample_draws_no_bar_where_stderr_is_not_a_terminal(table, tmp_path, capsys, monkeypatch):
    """sample's bar of rows, likewise: on a terminal only."""
    import tqdm

    shown = tqdm.tqdm
    monkeypatch.setattr(tqdm, "tqdm", lambda *args, **options: shown(*args, **{**options, "delay": 0, "mininterval": 0}))
    data, bounds = table
    model = tmp_path / "model.synthdp"
    assert main(["fit", str(data), "-o", str(model), "--bounds", str(bounds), "--quiet"]) == 0
    assert main(["sample", str(model), "-n", "2000", "-o", str(tmp_path / "a.csv")]) == 0
    err = capsys.readouterr().err
    assert "sample:" not in err and "\r" not in err and err.startswith("synthdp: wrote 2000 rows")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main(["sample", str(model), "-n", "2000", "-o", str(tmp_path / "b.csv")]) == 0
    assert "sample:" in capsys.readouterr().err
