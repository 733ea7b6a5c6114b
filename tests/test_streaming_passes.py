"""The fast paths of a streamed pass (issue 22) give exactly what the plain ones give.

* cells found by arithmetic (:class:`synthdp.stats.histograms.CellSearch`) are the cells of a
  binary search, edge cases included;
* :func:`clip_to_unit`, block by block and in place, is ``Domain.to_unit(np.clip(...))`` bit for bit;
* the pairs' products from the cells kept by the histograms' pass are those from the rows;
* a row-count-only pass over a CSV file counts the rows pandas reads;
* the read-ahead thread keeps the order of the chunks and the error that stops a pass;
* chunks summed on several threads (:func:`_in_order`) give the one thread's sums bit for bit,
  in order, with the first error in the file's order.

No timings here: they belong in benchmarks/command_speed.py.
"""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pandas as pd
import pytest

from synthdp import SmoothSynthesizer, SynthDPError
from synthdp.domain.box import ColumnDomain, Domain
from synthdp.reader import table as table_module
from synthdp.reader.table import PrivateTable, _count_csv_rows, _in_order, _read_ahead
from synthdp.stats.histograms import (
    CellLayout,
    CellSearch,
    bin_edges,
    cell_indices,
    nearest_value,
    reference_cell_indices,
)
from synthdp.stats.row_sums import SumRequest, cell_sums, chunk_sums, clip_to_unit, reuses_cells
from synthdp.stats.scores import ScoreMap, default_clip_norm_sq, score_products


def tricky_values(rng, edges: np.ndarray, size: int = 5000) -> np.ndarray:
    """Values on, just above and just below the edges, at and beyond -1 and +1, and random ones."""
    return np.concatenate([rng.uniform(-1.3, 1.3, size), edges, np.nextafter(edges, 2), np.nextafter(edges, -2),
                           [-1.0, 1.0, -np.inf, np.inf, 0.0, -0.0], rng.choice(edges, 500) + rng.normal(0, 1e-15, 500)])


@pytest.mark.parametrize("n_bins", [1, 2, 3, 7, 16, 100, 12345])
def test_cells_by_arithmetic_are_those_of_a_binary_search(n_bins):
    rng = np.random.default_rng(n_bins)
    values = tricky_values(rng, bin_edges(n_bins))
    np.testing.assert_array_equal(cell_indices(values, n_bins), reference_cell_indices(values, n_bins))
    with_nan = np.concatenate([values, [np.nan]])
    np.testing.assert_array_equal(cell_indices(with_nan, n_bins), reference_cell_indices(with_nan, n_bins))
    block = rng.uniform(-1, 1, (3000, 4))
    block[::3, 1], block[::5, 2] = -1.0, 1.0
    np.testing.assert_array_equal(cell_indices(block, n_bins), reference_cell_indices(block, n_bins))


def test_value_cells_by_arithmetic_are_the_nearest_values():
    rng = np.random.default_rng(3)
    for lower, upper in [(0.0, 99.0), (-0.5, 20.3), (17.0, 17.9 + 60)]:
        integers = np.arange(np.ceil(lower), np.floor(upper) + 1)
        values = np.clip(2.0 * (integers - lower) / (upper - lower) - 1.0, -1, 1)
        middles = (values[1:] + values[:-1]) / 2
        points = np.concatenate([rng.choice(values, 3000), middles, np.nextafter(middles, 2), np.nextafter(middles, -2),
                                 rng.uniform(-1, 1, 3000), [-1.0, 1.0]])
        search = CellSearch([(None, values)])
        np.testing.assert_array_equal(search.cells(points[:, None])[:, 0], nearest_value(values, points))
    uneven = np.array([-1.0, -0.9, -0.2, 0.7, 0.71, 1.0])  # guesses far off: the binary search takes over
    points = rng.uniform(-1, 1, 4000)
    np.testing.assert_array_equal(CellSearch([(None, uneven)]).cells(points[:, None])[:, 0],
                                  nearest_value(uneven, points))
    np.testing.assert_array_equal(CellSearch([(None, np.array([0.0]))]).cells(points[:, None])[:, 0], 0)


def test_a_layouts_cells_and_counts_are_those_of_the_definitions():
    rng = np.random.default_rng(4)
    values = np.linspace(-1.0, 1.0, 9)
    layout = CellLayout(5, (None, values, None), (False, True, True))
    points = np.column_stack([rng.uniform(-1, 1, 70_000), rng.choice(values, 70_000), rng.uniform(-1, 1, 70_000)])
    points[::7, 0], points[::11, 2] = -1.0, 1.0
    missing = rng.random(points.shape) < 0.1
    expected = np.column_stack([reference_cell_indices(points[:, 0], 5), nearest_value(values, points[:, 1]),
                                reference_cell_indices(points[:, 2], 5)])
    for j in (1, 2):
        expected[missing[:, j], j] = layout.observed_cells(j)
    for given in (points, np.asfortranarray(points)):
        cells = layout.cells(given, missing)
        assert cells.dtype == np.int64 and cells.flags.c_contiguous
        np.testing.assert_array_equal(cells, expected)
    counts = layout.counts(points, missing)
    assert counts.dtype == float and counts.shape == (3, layout.n_cells)
    for j in range(3):
        np.testing.assert_array_equal(counts[j], np.bincount(expected[:, j], minlength=layout.n_cells))


def test_clip_to_unit_is_the_domains_map_bit_for_bit():
    rng = np.random.default_rng(5)
    for d, n in [(1, 0), (1, 10), (3, 70_000), (10, 30_001)]:
        lower = rng.normal(0, 100, d)
        upper = lower + rng.exponential(50, d) + 1e-3
        domain = Domain(tuple(ColumnDomain(f"c{j}", float(lower[j]), float(upper[j]), False) for j in range(d)),
                        source="test")
        values = rng.normal((lower + upper) / 2, (upper - lower) * 0.4, (n, d))
        values[values[:, 0] > upper[0] - 1e-3 * (upper[0] - lower[0]), 0] = upper[0]  # some exactly on a bound
        for given in (values, np.asfortranarray(values)):
            points, clipped = clip_to_unit(given, domain)
            expected = domain.to_unit(np.clip(given, domain.lower, domain.upper))
            assert points.tobytes(order="A") == expected.tobytes(order="A")
            inside = (given >= domain.lower) & (given <= domain.upper)
            assert clipped == int(np.count_nonzero(~inside.all(axis=1)))
            own = given.copy(order="K")
            in_place, clipped_in_place = clip_to_unit(own, domain, out=own)  # a chunk's own copy
            assert in_place is own and in_place.tobytes(order="A") == expected.tobytes(order="A")
            assert clipped_in_place == clipped


@pytest.mark.parametrize("mean_weight", [0.0, 1.5])
def test_pair_products_from_kept_cells_are_those_from_the_rows(mean_weight):
    """The pairs' statistic from the kept cells is the rows', bit for bit; with the scores' means
    (``mean_weight``) too, which follow the products."""
    rng = np.random.default_rng(6)
    domain = Domain.from_bounds({"a": [-3, 3], "b": {"bounds": [0, 8], "type": "integer"}, "c": [0, 1]}, ["a", "b", "c"])
    layout = CellLayout(6, (None, np.linspace(-1.0, 1.0, 9), None), (False,) * 3)
    values = np.column_stack([rng.normal(0, 1.5, 50_000), rng.integers(0, 9, 50_000), rng.uniform(-0.1, 1.1, 50_000)])  # several blocks
    score_map = ScoreMap(rng.dirichlet(np.ones(layout.n_cells), size=3) * layout.exists(), default_clip_norm_sq(3),
                         layout, mean_weight)
    histograms, pairs = SumRequest(domain, cell_layout=layout), SumRequest(domain, score_map=score_map)
    assert reuses_cells(pairs, histograms)
    assert not reuses_cells(SumRequest(domain, score_map=score_map, column_sums=True), histograms)
    assert not reuses_cells(pairs, SumRequest(domain, cell_layout=CellLayout(5, layout.values, layout.missing)))
    kept: list[np.ndarray] = []
    counted = chunk_sums(values, histograms, kept)
    from_cells = cell_sums(kept[0].astype(np.uint8), {"rows": counted["rows"], "rows_clipped": counted["rows_clipped"]},
                           pairs)
    from_rows = chunk_sums(values, pairs)
    assert from_cells.values.keys() == from_rows.values.keys()
    assert from_cells["score_products"].tobytes() == from_rows["score_products"].tobytes()
    points, _ = clip_to_unit(values, domain)
    assert from_cells["score_products"].tobytes() == score_products(points, score_map).tobytes()
    assert len(from_rows["score_products"]) == 6 + (3 if mean_weight else 0)
    if mean_weight:  # the means' part: c times the sums of the clipped scores
        clipped = score_map.clipped_scores(points)
        np.testing.assert_allclose(from_rows["score_products"][6:], mean_weight * clipped.sum(axis=0), rtol=1e-12)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_streamed_release_is_the_same_with_cells_in_memory_on_disk_or_read_again(tmp_path, monkeypatch, suffix):
    """The pairs' pass runs on the histograms' kept cells: in memory; past KEPT_CELLS_BYTES in a
    temporary file (no more passes over the rows); and where that file fails (a full disk), the
    file is read a third time. The seeded release is the same, bit for bit, and the engine entry
    of the report says which it was."""
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(7)
    frame = pd.DataFrame({"a": rng.normal(0, 1.2, 3000).round(4), "b": rng.integers(0, 9, 3000),
                          "c": rng.uniform(-1, 3, 3000).round(4)})
    path = tmp_path / f"t{suffix}"
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path)
    bounds = {"a": [-3, 3], "b": {"bounds": [0, 8], "type": "integer"}, "c": [-1, 2]}
    options = {"seed": 3, "epsilon": 4.0, "delta": 1e-6, "n_candidates": 300, "chunk_rows": 700}
    reads = []
    original = table_module._values_sums  # every chunk of rows, from a DataFrame or (numeric Parquet) an array
    monkeypatch.setattr(table_module, "_values_sums",
                        lambda *args, **options: reads.append(args[3]) or original(*args, **options))
    spills = []
    temporary_file = table_module.tempfile.TemporaryFile

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    def fit(limit, opener):
        reads.clear()
        monkeypatch.setattr(table_module, "KEPT_CELLS_BYTES", limit)
        monkeypatch.setattr(table_module.tempfile, "TemporaryFile", opener)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the seed's warning
            synth = SmoothSynthesizer(**options).fit(path, bounds=bounds)
        return synth.release_, synth.engine_["kept_cells"], len({id(request) for request in reads})

    kept, where, passes = fit(2**28, temporary_file)
    on_disk, where_on_disk, passes_on_disk = fit(0, lambda *a, **k: spills.append(1) or temporary_file(*a, **k))
    read_again, where_read_again, passes_read_again = fit(0, full_disk)
    assert (where, where_on_disk, where_read_again) == ("memory", "temporary file", "not kept")
    assert spills == [1]  # one file, for every chunk
    assert passes_on_disk == passes and passes_read_again == passes + 1  # one more pass over the rows
    assert kept.noisy_scores is not None
    for release in (on_disk, read_again):
        for name in ("noisy_moments", "noisy_histograms", "noisy_scores"):
            assert getattr(kept, name).tobytes() == getattr(release, name).tobytes(), name


@pytest.mark.parametrize("text", [
    "a,b\n1,2\n3,4\n",
    "a,b\n1,2\n3,4",  # no final line break
    "a,b\n1,2\n\n3,4\n\n",  # blank lines
    "a,b\n1,2\n   \n3,4\n",  # a line of spaces
    "a,b\r\n1,2\r\n3,4\r\n",
    'a,b\n"1\n5",2\n3,4\n',  # a quoted line break
    "a,b\nx,2\ny,4\nz,5\n",  # text in the first column
    "a,b\n,2\n3,\n",  # empty cells
    "a,b\n",  # no rows
    "\ufeffa,b\n1,2\n3,4\n",  # a byte-order mark
    "a,b\n1,2,3\n4,5,6\n",  # a first column without a name: pandas' index
    "\na,b\n1,2\n3,4\n",  # a blank line before the header
    " \na,b\n1,2\n",  # a line of spaces before it
    "a,b\r1,2\r3,4\r",  # carriage returns alone
    "a,b\r\n1,2\r\n3,4\r",  # one at the end
    "a,b\n1,2\n3,4\n\t\n",  # a last line of a tab
    "a;b\n1,5;2\n3;4\n",  # another separator
    "a,b\n" + "".join(f"{i},{i % 3}\n" for i in range(40)),
])
def test_a_count_only_pass_counts_the_rows_pandas_reads(tmp_path, text):
    path = tmp_path / "t.csv"
    path.write_bytes(text.encode())
    expected = len(pd.read_csv(path, sep=";" if ";" in text else ","))
    if ";" in text:
        assert _count_csv_rows(path, ["a", "b"], 2, table_module.CsvFormat(sep=";"), ()) == expected
        return
    assert _count_csv_rows(path, ["a", "b"], 2, table_module.DEFAULT_CSV, ()) == expected
    assert _count_csv_rows(path, ["a", "b"], 2, table_module.DEFAULT_CSV, ("a",)) == expected


def test_a_streamed_csv_counts_rows_then_checks_them_in_the_next_pass(tmp_path):
    """The row count reads one column; the next pass finds the text in another, with the usual message."""
    path = tmp_path / "t.csv"
    path.write_text("a,b\n" + "".join(f"{i},{i % 7}\n" for i in range(600)) + "1,987654.3x\n")
    table = PrivateTable.open(path, chunk_rows=100)
    assert table.row_sums(SumRequest()).n_rows == 601
    with pytest.raises(SynthDPError, match="column 'b' is not numeric") as error:
        table.row_sums(SumRequest(histogram_columns=(0, 1)))
    assert "987654" not in str(error.value)


def test_read_ahead_keeps_the_order_and_the_first_error():
    assert list(_read_ahead_items(range(50))) == list(range(50))

    def failing():
        yield from range(3)
        raise ValueError("unreadable")

    seen = []
    with pytest.raises(ValueError, match="unreadable"), _read_ahead(failing()) as items:
        for item in items:
            seen.append(item)
    assert seen == [0, 1, 2]  # every chunk before the reader's error was handed over first

    with pytest.raises(RuntimeError, match="the caller's"), _read_ahead(iter(range(10**6))) as items:
        for item in items:
            if item == 5:
                raise RuntimeError("the caller's")  # wins over anything the reader does next
    assert not _threads_named("synthdp-read-ahead")  # the reader was stopped and joined


def _threads_named(prefix: str) -> list[threading.Thread]:
    """This module's threads still alive (by name: a count of all the process's threads would also
    see threads other tests left to end on their own schedule)."""
    return [thread for thread in threading.enumerate() if thread.name.startswith(prefix)]


def _read_ahead_items(iterable):
    with _read_ahead(iter(iterable)) as items:
        yield from items


def test_in_order_keeps_the_order_and_the_first_error_in_that_order():
    rng = np.random.default_rng(11)
    delays = rng.uniform(0, 0.004, 40)  # later chunks often finish first

    def slow(index):
        threading.Event().wait(delays[index])
        return index

    assert list(_in_order(slow, range(40), workers=3)) == list(range(40))

    def failing(index):
        if index in (7, 9):
            raise ValueError(f"chunk {index}")
        return slow(index)

    seen = []
    with pytest.raises(ValueError, match="chunk 7"):  # not 9, which may have failed first
        for item in _in_order(failing, range(40), workers=3):
            seen.append(item)
    assert seen == list(range(7))

    def items():  # the reader's own error comes after every chunk read before it
        yield from range(5)
        raise OSError("unreadable")

    seen = []
    with pytest.raises(OSError, match="unreadable"):
        for item in _in_order(slow, items(), workers=3):
            seen.append(item)
    assert seen == list(range(5))

    stopped = _in_order(slow, iter(range(10**6)), workers=3)
    assert [next(stopped) for _ in range(4)] == [0, 1, 2, 3]
    assert _threads_named("synthdp-sum")  # the pool is running
    stopped.close()  # the caller stops: no more chunks start, the pool's threads end
    assert not _threads_named("synthdp-sum")


@pytest.mark.parametrize("source", ["csv", "parquet", "frame"])
def test_chunks_summed_on_two_threads_give_the_same_release_bit_for_bit(tmp_path, monkeypatch, source):
    """Streamed files (chunk_rows) and large in-memory tables (blocks of CHUNK_VALUES values) are
    summed SUM_WORKERS chunks at a time; the sums are added in order, so the seeded release is
    that of one thread, bit for bit (the pairs' kept cells included)."""
    if source == "parquet":
        pytest.importorskip("pyarrow")
    rng = np.random.default_rng(12)
    frame = pd.DataFrame({"a": rng.normal(0, 1.2, 6000).round(4), "b": rng.integers(0, 9, 6000),
                          "c": rng.uniform(-1, 3, 6000).round(4) + 0.3 * rng.normal(0, 1, 6000)})
    data = frame
    if source != "frame":
        data = tmp_path / f"t.{source}"
        frame.to_csv(data, index=False) if source == "csv" else frame.to_parquet(data)
    else:
        monkeypatch.setattr(table_module, "CHUNK_VALUES", 3000)  # blocks of 1000 rows
    bounds = {"a": [-3, 3], "b": {"bounds": [0, 8], "type": "integer"}, "c": [-2, 4]}
    options = {"seed": 3, "epsilon": 4.0, "delta": 1e-6, "n_candidates": 300,
               **({} if source == "frame" else {"chunk_rows": 700})}
    releases = []
    for workers in (1, 2):
        monkeypatch.setattr(table_module, "SUM_WORKERS", workers)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the seed's warning
            releases.append(SmoothSynthesizer(**options).fit(data, bounds=bounds).release_)
    assert releases[0].noisy_scores is not None  # the pairs were released (from the kept cells, for files)
    for name in ("noisy_moments", "noisy_histograms", "noisy_scores"):
        assert getattr(releases[0], name).tobytes() == getattr(releases[1], name).tobytes(), name
