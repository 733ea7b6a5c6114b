"""Seeded releases keep their results: the released numbers, the report, the synthetic table, and
(in the recording's environment) the files' bytes.

The cases (``tests/golden/cases.py``) run in one child process with the pinned kernels
(``cases.pinned_env``), and each is compared with ``tests/golden/records.json`` by the four tiers
of ``tests/golden/compare.py``; ``tests/golden/README.md`` says why four. The first three hold on
any machine and with any library versions pip resolves; the byte tier applies where the
environment is the recording's (``tests/constraints.txt``'s versions, as ``.ci/run`` installs),
and a warning says when it does not. A change meant to alter a release re-records them on
purpose (``python tests/golden/record.py``) and says so in its commit. Cases whose benchmark table
is missing from ``data/`` are skipped.
"""

from __future__ import annotations

import copy
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "golden"))
from cases import CASES, RECORDS, available, run_case  # noqa: E402
from compare import differences, release_differences, sketch, table_differences  # noqa: E402
from record import run_pinned  # noqa: E402

STORED = json.loads(RECORDS.read_text())
TEST = "test_a_seeded_release_keeps_its_results"


@pytest.fixture(scope="session")
def fresh_runs(request):
    """The selected cases, run once in a child process with the pinned kernels."""
    names = sorted({item.callspec.params["name"] for item in request.session.items
                    if getattr(item, "originalname", None) == TEST and available(item.callspec.params["name"])})
    return run_pinned(names)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_seeded_release_keeps_its_results(name, fresh_runs):
    if not available(name):
        pytest.skip("benchmark table not found in data/")
    same_environment = fresh_runs["environment"] == STORED["environment"]
    if not same_environment:
        warnings.warn("golden: not the recorded environment (tests/constraints.txt, pinned kernels), so the "
                      "byte tier is off; the release, report and table tiers still apply", stacklevel=1)
    found = list(differences(STORED["cases"][name], fresh_runs["cases"][name], bytes_too=same_environment))
    assert not found, "\n".join(found[:20])


# ---------------------------------------------------------------------- the tiers can fail
def _recorded_run(name, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_case(name, tmp_path / name)


@pytest.mark.skipif(not available("ctg_default"), reason="benchmark table not found in data/")
@pytest.mark.parametrize("change", ["one noise draw", "one moment"])
def test_a_changed_released_number_fails_the_release_tier(change, tmp_path, monkeypatch):
    """A deliberate change of one released number far below its noise (one Gaussian draw moved by
    1e-4 of its sd; one moment moved by 1e-6 before the noise) fails the golden comparison on any
    machine, and the unchanged run passes its three machine-independent tiers (here, unpinned)."""
    from synthdp.privacy import noise
    from synthdp.stats import chebyshev

    assert not list(differences(STORED["cases"]["ctg_default"], _recorded_run("ctg_default", tmp_path),
                                bytes_too=False))
    if change == "one noise draw":
        gaussian = noise.SeededNoise.gaussian

        def moved(self, values, sigma):
            noisy = gaussian(self, values, sigma)
            noisy.flat[len(noisy.flat) // 2] += 1e-4 * sigma
            return noisy

        monkeypatch.setattr(noise.SeededNoise, "gaussian", moved)
    else:
        moments = chebyshev.ChebyshevBasis.moments

        def moved(self, *args, **kwargs):
            values = np.array(moments(self, *args, **kwargs), dtype=float)
            values.flat[-1] += 1e-6
            return values

        monkeypatch.setattr(chebyshev.ChebyshevBasis, "moments", moved)
    found = list(differences(STORED["cases"]["ctg_default"], _recorded_run("ctg_default", tmp_path / "changed"),
                             bytes_too=False))
    assert any(line.startswith("release") for line in found), found


def test_the_release_tier_sees_one_entry_and_not_rounding():
    rng = np.random.default_rng(3)
    values = rng.normal(size=500)
    recorded = {"array": sketch(values)}
    rounded = values * (1 + rng.uniform(-4e-16, 4e-16, 500))  # another machine's last bits
    assert not list(release_differences(recorded, {"array": sketch(rounded)}))
    for index in (0, 123, 499):
        changed = values.copy()
        changed[index] += 1e-7
        assert list(release_differences(recorded, {"array": sketch(changed)}))
    assert list(release_differences({"x": 1.0, "s": "a"}, {"x": 1.0 + 1e-6, "s": "a"}))
    assert not list(release_differences({"x": 1.0, "s": "a"}, {"x": 1.0 + 1e-13, "s": "a"}))
    assert list(release_differences({"x": 1.0, "s": "a"}, {"x": 1.0, "s": "b"}))


@pytest.mark.skipif(not available("ctg_default"), reason="benchmark table not found in data/")
def test_the_table_tier_sees_a_broken_table():
    """Two columns' values swapped, one column moved by 0.6 of its sd, the strongest pair's
    correlation lost, or a quarter of the rows dropped each fail the tables tier (the recorded
    statistics against themselves pass)."""
    recorded = STORED["cases"]["ctg_default"]["tables"]["synthetic.csv"]
    assert not list(table_differences(recorded, recorded, "t"))
    columns = recorded["columns_stats"]
    first = recorded["numeric"][0]
    other = max(recorded["numeric"], key=lambda c: abs(columns[c]["mean"] - columns[first]["mean"]) / columns[first]["sd"])
    swapped = copy.deepcopy(recorded)
    swapped["columns_stats"][first], swapped["columns_stats"][other] = columns[other], columns[first]
    shifted = copy.deepcopy(recorded)
    shifted["columns_stats"][first]["mean"] += 0.6 * columns[first]["sd"]
    shifted["columns_stats"][first]["quantiles"] = [q + 0.6 * columns[first]["sd"] for q in columns[first]["quantiles"]]
    unpaired = copy.deepcopy(recorded)
    strongest = int(np.argmax(np.abs(recorded["correlations"])))
    assert abs(recorded["correlations"][strongest]) > 0.6
    unpaired["correlations"][strongest] = 0.0
    fewer = copy.deepcopy(recorded)
    fewer["rows"] = recorded["rows"] * 3 // 4
    for broken in (swapped, shifted, unpaired, fewer):
        assert list(table_differences(recorded, broken, "t"))
