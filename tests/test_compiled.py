"""The compiled kernels of large tables (synthdp.stats.compiled): the same sums as numpy's up to the
order of additions, through every engine, chosen from the public row count alone, and never
imported for a small table."""

import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

from synthdp import SmoothSynthesizer
from synthdp.stats import compiled, row_sums
from synthdp.stats.chebyshev import ChebyshevBasis, lowest_degree_indices, tensor_indices
from synthdp.stats.histograms import CellLayout
from synthdp.stats.row_sums import SumRequest, cell_sums
from synthdp.stats.scores import ScoreMap, score_products

pytest.importorskip("numba")

BASES = {
    "d=10, R=355 (the large-file benchmark's)": lowest_degree_indices(10, 355),
    "tensor, t=4": tensor_indices(3, 4),
    "uneven factors, unused columns": np.array([[5, 0, 0, 1, 0], [0, 0, 7, 0, 0], [1, 1, 1, 1, 0], [0, 3, 0, 2, 0]]),
    "degree one": np.eye(4, dtype=np.int64),
}


@pytest.mark.parametrize("indices", list(BASES.values()), ids=list(BASES))
@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize("rows", [1, 511, 513, 2000])  # about a block of 512 rows, and several
def test_the_compiled_moments_are_numpys(indices, layout, rows):
    """To 1e-12 of the largest sum: they differ only in the order of the additions (and both
    are within 1e-11 of the cosines' definition, tests/test_basis.py)."""
    rng = np.random.default_rng(rows)
    points = np.asarray(rng.uniform(-1, 1, (rows, indices.shape[1])), order=layout)
    points[0] = np.sign(points[0])  # a corner: every |phi_r| = 1 there
    basis = ChebyshevBasis(indices)
    expected = basis.moments(points)
    got = basis.moments(points, compiled=True)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12 * max(1.0, np.abs(expected).max()))


def test_indicator_coordinates_of_a_mixed_basis():
    """A mixed table's encoded rows: indicators in {-1, 1} whose products are the basis (exact
    in both paths, so equal to the bit), beside a numeric coordinate."""
    rng = np.random.default_rng(3)
    points = np.column_stack([rng.uniform(-1, 1, 3000), rng.choice([-1.0, 1.0], (3000, 3))])
    indices = np.array([[0, 1, 0, 0], [0, 0, 1, 0], [0, 1, 1, 0], [0, 1, 1, 1], [2, 1, 0, 0], [1, 0, 0, 1]])
    basis = ChebyshevBasis(indices)
    np.testing.assert_array_equal(basis.moments(points, compiled=True)[:4], basis.moments(points)[:4])
    np.testing.assert_allclose(basis.moments(points, compiled=True), basis.moments(points), rtol=0, atol=1e-14)


def test_the_kernels_are_chosen_from_the_row_count(monkeypatch):
    assert not compiled.use_compiled(compiled.COMPILED_FROM_ROWS - 1)
    assert compiled.use_compiled(compiled.COMPILED_FROM_ROWS)
    assert compiled.describe(1000).startswith("numpy (below")
    assert compiled.describe(compiled.COMPILED_FROM_ROWS) == "compiled (numba)"
    monkeypatch.setattr(compiled, "available", lambda: False)
    assert not compiled.use_compiled(10**9)
    assert "numba not installed" in compiled.describe(10**9)


@pytest.fixture()
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    x = rng.normal(size=3000)
    return pd.DataFrame({"a": x, "b": x + rng.normal(size=3000), "c": rng.uniform(-2, 2, 3000)})


BOUNDS = {"a": [-4, 4], "b": [-5, 5], "c": [-2, 2]}


def count_kernel_calls(monkeypatch) -> list[int]:
    """Lower the threshold to 1 000 rows and record the rows of each call of the compiled kernels that
    sum the moments (alone, or in one pass with the clip and the cells)."""
    monkeypatch.setattr(compiled, "COMPILED_FROM_ROWS", 1000)
    calls: list[int] = []
    original, one_pass = compiled.moment_sums, compiled.unit_sums
    monkeypatch.setattr(compiled, "moment_sums", lambda points, *args: calls.append(len(points)) or original(points, *args))
    monkeypatch.setattr(compiled, "unit_sums",
                        lambda values, *args: calls.append(len(values)) or one_pass(values, *args))
    return calls


@pytest.mark.parametrize("suffix, engine, chunk_rows",
                         [(".csv", "numpy", 700), (".parquet", "numpy", 700), (".parquet", "dask", None)])
def test_a_release_through_the_compiled_kernels_is_the_numpy_release(frame, tmp_path, monkeypatch, suffix, engine,
                                                                      chunk_rows):
    """With the threshold lowered to this table's size, every engine sums the moments with the
    compiled kernel: the seeded release is the in-memory numpy one to 1e-12, and the report says
    which kernels ran."""
    pytest.importorskip("pyarrow")
    if engine == "dask":
        pytest.importorskip("dask.dataframe")
    options = {"seed": 6, "epsilon": 8.0, "n_candidates": 300, "correlation_share": 0.3}
    path = tmp_path / f"t{suffix}"
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path, row_group_size=700)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the seed's warning
        expected = SmoothSynthesizer(**options).fit(frame, bounds=BOUNDS)
        calls = count_kernel_calls(monkeypatch)
        synth = SmoothSynthesizer(engine=engine, chunk_rows=chunk_rows, **options).fit(path, bounds=BOUNDS)
    assert calls and sum(calls) == len(frame)  # every row through the kernel
    assert expected.engine_["kernels"].startswith("numpy (below")
    assert synth.engine_["kernels"] == "compiled (numba)"
    for name in ("noisy_moments", "noisy_histograms", "noisy_scores"):
        np.testing.assert_allclose(getattr(synth.release_, name), getattr(expected.release_, name), rtol=0,
                                   atol=1e-12, err_msg=name)


def test_a_small_table_does_not_import_numba(tmp_path):
    """numba's import (about 0.25 s) is paid only by tables that use it."""
    script = (
        "import sys, warnings, numpy as np, pandas as pd\n"
        "from synthdp import SmoothSynthesizer\n"
        "frame = pd.DataFrame(np.random.default_rng(0).normal(size=(300, 3)), columns=list('abc'))\n"
        "with warnings.catch_warnings():\n"
        "    warnings.simplefilter('ignore')\n"
        "    SmoothSynthesizer(seed=1).fit(frame, bounds={c: [-4, 4] for c in 'abc'}).sample(10)\n"
        "print('numba' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_a_mixed_table_through_the_compiled_kernels(frame, tmp_path, monkeypatch):
    """A mixed table's encoded moments (indicator blocks and their products with the numeric
    columns) streamed through the compiled kernel: the in-memory numpy release to 1e-12."""
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(7)
    mixed = frame.assign(g=rng.choice(["x", "y", "z"], len(frame)), s=rng.choice(["no", "yes"], len(frame)))
    schema = {"columns": {**{name: {"type": "continuous", "bounds": bounds} for name, bounds in BOUNDS.items()},
                          "g": {"type": "categorical", "levels": ["x", "y", "z"]},
                          "s": {"type": "binary", "levels": ["no", "yes"]}}}
    path = tmp_path / "mixed.parquet"
    mixed.to_parquet(path, row_group_size=700)
    options = {"seed": 8, "epsilon": 8.0, "n_candidates": 300}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = SmoothSynthesizer(**options).fit(mixed, schema=schema)
        calls = count_kernel_calls(monkeypatch)
        synth = SmoothSynthesizer(chunk_rows=700, **options).fit(path, schema=schema)
    assert calls and sum(calls) == len(frame)
    assert synth.engine_["kernels"] == "compiled (numba)"
    np.testing.assert_allclose(synth.release_.noisy_moments, expected.release_.noisy_moments, rtol=0, atol=1e-12)


def value_layout() -> CellLayout:
    """Columns in 5 bins and two atoms, one counted value by value (9 values), a nullable binned
    one, and one of a single value."""
    return CellLayout(5, (None, np.linspace(-1.0, 1.0, 9), None, np.array([0.25])), (False, False, True, False))


def awkward_points(rows: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """Uniform values, with the bounds (the atoms), every bin edge and value cell's midpoint, and
    the floats on either side of them."""
    points = rng.uniform(-1, 1, (rows, d))
    special = np.concatenate([[-1.0, 1.0, 0.0, 0.25], np.linspace(-1, 1, 6), np.linspace(-1, 1, 17),
                              (np.linspace(-1, 1, 9)[1:] + np.linspace(-1, 1, 9)[:-1]) / 2])
    special = np.concatenate([special, np.nextafter(special, 2), np.nextafter(special, -2)])
    special = np.clip(special, -1, 1)
    points[: len(special)] = special[:, None]
    return points


@pytest.mark.parametrize("layout", ["C", "F"])
def test_the_compiled_cells_are_numpys_to_the_bit(layout):
    rng = np.random.default_rng(9)
    points = np.asarray(awkward_points(5000, 4, rng), order=layout)
    cells = value_layout()
    np.testing.assert_array_equal(cells.cells_by_column(points, compiled=True), cells.cells_by_column(points))
    points[7, 0] = points[9, 1] = np.nan  # where a NaN goes: the binary search's cell
    np.testing.assert_array_equal(cells.cells_by_column(points, compiled=True), cells.cells_by_column(points))
    missing = rng.random((5000, 4)) < 0.1
    np.testing.assert_array_equal(cells.cells_by_column(points, missing, compiled=True),
                                  cells.cells_by_column(points, missing))


@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize("rows", [1, 255, 257, 3000])  # about a block of 256 rows, and several
@pytest.mark.parametrize("parts", ["moments and cells", "moments", "cells"])
def test_one_compiled_pass_sums_what_the_passes_one_after_another_sum(layout, rows, parts):
    """A chunk's clip, moments and cells in one compiled pass over its values (``compiled.unit_sums``,
    what a large file's moments pass runs): the same rows clipped, cells and counts to the bit as
    numpy's, every kept cell the same (in the type the pass keeps it in), and the same moments to 1e-12
    of the largest (the order of additions). Values inside, on and outside the bounds, and on the
    cells' edges and midpoints."""
    from synthdp.domain.box import Domain

    rng = np.random.default_rng(rows)
    names = ["a", "b", "c", "d"]
    domain = Domain.from_bounds({"a": [-3, 3], "b": [0, 8], "c": [-1.5, 2.25], "d": [10, 14]}, names)
    unit = awkward_points(max(rows, 200), 4, rng)[:rows]
    values = domain.lower + (unit + 1.0) / 2.0 * (domain.upper - domain.lower)
    values[rows // 2 :: 7] *= 3.0  # some rows outside the bounds (clipped)
    values = np.asarray(values, order=layout)
    request = SumRequest(domain, lowest_degree_indices(4, 30) if "moments" in parts else None,
                         cell_layout=value_layout() if "cells" in parts else None, compiled=True)
    assert row_sums._one_compiled_pass(request)
    kept: list[np.ndarray] = []
    got = row_sums.chunk_sums(values.copy(order="K"), request, kept_cells=kept, overwrite=True)
    kept_numpy: list[np.ndarray] = []
    expected = row_sums.chunk_sums(values.copy(order="K"), SumRequest(domain, request.basis_indices,
                                                                      cell_layout=request.cell_layout),
                                   kept_cells=kept_numpy)
    assert set(got.values) == set(expected.values)
    assert int(got["rows_clipped"]) == int(expected["rows_clipped"]) and int(got["rows"]) == rows
    if "cells" in parts:
        np.testing.assert_array_equal(got["cell_counts"], expected["cell_counts"])
        assert len(kept) == len(kept_numpy) == 1
        np.testing.assert_array_equal(kept[0], kept_numpy[0])
        assert kept[0].dtype == request.cell_layout.cell_dtype  # written as the pass keeps them: no copy to convert
    if "moments" in parts:
        np.testing.assert_allclose(got["moments"], expected["moments"], rtol=0,
                                   atol=1e-12 * max(1.0, np.abs(expected["moments"]).max()))
    without_keeping = row_sums.chunk_sums(values.copy(order="K"), request)
    for name in got.values:
        np.testing.assert_array_equal(without_keeping[name], got[name], err_msg=name)


def test_only_moments_and_cells_take_the_one_pass():
    """Any statistic that needs the chunk's points written out (the column sums, the second moment, the
    pairs' products, the exact mode's snap), or the numpy kernels, keeps the passes one after another."""
    from dataclasses import replace

    from synthdp.domain.box import Domain

    domain = Domain.from_bounds({"a": [-1, 1], "b": [-1, 1]}, ["a", "b"])
    request = SumRequest(domain, lowest_degree_indices(2, 5), cell_layout=CellLayout.bins(2, 4), compiled=True)
    assert row_sums._one_compiled_pass(request)
    score_map = ScoreMap(np.full((2, 6), 1 / 6), 2.0)
    for other in (replace(request, column_sums=True), replace(request, second_moment=True),
                  replace(request, score_map=score_map), replace(request, snap_cells=8),
                  replace(request, compiled=False), replace(request, basis_indices=None, cell_layout=None)):
        assert not row_sums._one_compiled_pass(other)


@pytest.mark.parametrize("signs", [False, True])
@pytest.mark.parametrize("mean_weight", [0.0, 0.5])
def test_the_compiled_score_products_are_numpys(signs, mean_weight):
    """From the rows and from kept cells, with and without the norm clip: the sums of
    :func:`score_products` to 1e-12 of their size."""
    rng = np.random.default_rng(10)
    points = awkward_points(3000, 4, rng)
    score_map = ScoreMap(rng.dirichlet(np.ones(9), size=4), 2.0, value_layout(), mean_weight, signs)
    missing = rng.random((3000, 4)) < 0.1
    missing[:, [0, 1, 3]] = False  # only the nullable column has missing cells
    expected = score_products(points, score_map, missing)
    request = SumRequest(score_map=score_map, schema=None, compiled=True)
    cells = score_map.cells.cells_by_column(points, missing)
    counts = {"rows": np.array(3000)}
    from_rows = row_sums._score_products(points, score_map, missing, True)
    for got in (from_rows, cell_sums(cells, counts, request)["score_products"]):
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12 * np.abs(expected).max())


@pytest.mark.parametrize("d", [1, 2, 5, 8, 13])
@pytest.mark.parametrize("rows", [1, compiled.SCORE_BLOCK_ROWS - 1, compiled.SCORE_BLOCK_ROWS + 1, 1000])
def test_the_compiled_score_products_are_numpys_for_any_width(d, rows):
    """The products kernel works four columns by four and block by block of rows: widths that
    are not a multiple of four (its padding), one column, and rows that leave a partial block,
    with the norm clip and the means: the sums of :func:`score_products` to 1e-12 of their size."""
    rng = np.random.default_rng(d * 1000 + rows)
    score_map = ScoreMap(rng.dirichlet(np.ones(6), size=d), 0.5 * d, None, 0.5, False)
    points = rng.uniform(-1, 1, (rows, d))
    expected = score_products(points, score_map)
    got = row_sums._score_products(points, score_map, None, True)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12 * np.abs(expected).max())


@pytest.mark.parametrize("layout", ["C", "F"])
def test_the_compiled_clip_and_counts_are_numpys_to_the_bit(layout):
    """Values inside, on and outside the bounds, and a NaN: the same unit points to the bit, the
    same count of clipped rows; the cells' counts the same integers."""
    from synthdp.domain.box import Domain

    rng = np.random.default_rng(11)
    names = ["a", "b", "c"]
    domain = Domain.from_bounds({"a": [-3, 3], "b": [0, 8], "c": [-1.5, 2.25]}, names)
    values = np.asarray(rng.normal(0, 3, (4000, 3)), order=layout)
    values[:3] = domain.lower
    values[3:6] = domain.upper
    values[6, 1] = np.nan
    values[7] = [-0.0, 0.0, -0.0]
    expected, clipped = row_sums.clip_to_unit(values, domain)
    got, clipped_compiled = row_sums.clip_to_unit(values, domain, compiled=True)
    assert clipped_compiled == clipped > 0
    np.testing.assert_array_equal(got, expected)
    assert got.tobytes() == expected.tobytes()
    in_place = values.copy(order="K")
    row_sums.clip_to_unit(in_place, domain, out=in_place, compiled=True)
    assert in_place.tobytes() == expected.tobytes()
    layout_cells = value_layout()
    cells = layout_cells.cells_by_column(awkward_points(3000, 4, rng))
    np.testing.assert_array_equal(layout_cells.count(cells, compiled=True), layout_cells.count(cells))


def test_a_process_without_numba_sums_with_numpy(frame, monkeypatch):
    """A request for the compiled kernels in a process without numba (a Dask worker, say) sums
    with numpy: the same statistics up to the order of additions, not an import error."""
    from synthdp.domain.box import Domain

    domain = Domain.from_bounds(BOUNDS, list(frame.columns))
    request = SumRequest(domain, lowest_degree_indices(3, 9), cell_layout=CellLayout.bins(3, 8), compiled=True)
    values = frame.to_numpy()
    with_numba = row_sums.chunk_sums(values.copy(), request)
    monkeypatch.setattr(compiled, "available", lambda: False)
    monkeypatch.setattr(compiled, "moment_sums", lambda *args: (_ for _ in ()).throw(AssertionError("compiled")))
    without = row_sums.chunk_sums(values.copy(), request)
    np.testing.assert_allclose(without["moments"], with_numba["moments"], rtol=1e-12)
    np.testing.assert_array_equal(without["cell_counts"], with_numba["cell_counts"])


@pytest.mark.parametrize("compiled", [False, True])
def test_values_near_the_largest_floats_map_onto_the_unit_interval(compiled):
    """Bounds [0, 1e308]: 2 (x - lower) overflowed for x above 0.9e308 (numpy warned, and every such
    value went to +1); divided first, each maps to 2 x / 1e308 - 1, on both paths and in Domain.to_unit."""
    from synthdp.domain.box import Domain

    if compiled:
        pytest.importorskip("numba")
    domain = Domain.from_bounds({"a": [0, 1e308]}, ["a"])
    values = np.array([[0.0], [0.5e308], [0.95e308], [1e308]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow warning fails the test
        points, clipped = row_sums.clip_to_unit(values, domain, compiled=compiled)
        direct = domain.to_unit(values)
    np.testing.assert_allclose(points[:, 0], [-1.0, 0.0, 0.9, 1.0], atol=1e-15)
    np.testing.assert_allclose(direct[:, 0], [-1.0, 0.0, 0.9, 1.0], atol=1e-15)
    assert clipped == 0
