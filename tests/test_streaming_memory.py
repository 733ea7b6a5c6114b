"""A streamed Parquet file is read row group by row group, in chunks of ``chunk_rows`` rows (issue: the
memory of a streamed file grew with its size).

One pyarrow reader over the whole file (``ParquetFile.iter_batches``, column chunks read whole)
kept every row group it had decoded; the numpy engine now gives each row group a reader of its
own that reads its column chunks through a buffer (:func:`synthdp.reader.table._parquet_frames`).
Here: its chunks are those ``iter_batches`` cut (across row groups, so the sums and the release
are unchanged to the bit), each row group is read by its own reader, only the asked columns
are read, the footer's row count reads no rows, and the seeded release of a file of several
row groups is the in-memory one, bit for bit. The memory itself is measured in
benchmarks/big_files.py (no timings or memory measurements here).
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from synthdp import SmoothSynthesizer
from synthdp.errors import SynthDPError
from synthdp.reader import table as table_module
from synthdp.reader.table import PrivateTable, _open_parquet, _parquet_arrays, _parquet_frames
from synthdp.stats.row_sums import SumRequest

pq = pytest.importorskip("pyarrow.parquet")

N_ROWS = 3000
BOUNDS = {"a": [-3, 3], "b": {"bounds": [0, 8], "type": "integer"}, "c": [-1, 2]}


def sample_frame(n_rows: int = N_ROWS) -> pd.DataFrame:
    rng = np.random.default_rng(21)
    a = rng.normal(0, 1.2, n_rows).round(4)
    return pd.DataFrame({"a": a, "b": rng.integers(0, 9, n_rows), "c": (0.5 * a + rng.uniform(-1, 2, n_rows)).round(4)})


def write_groups(frame: pd.DataFrame, path, sizes: list[int], **options) -> None:
    """``frame`` as a Parquet file with row groups of ``sizes`` rows (uneven, as appended files have)."""
    import pyarrow as pa

    assert sum(sizes) == len(frame)
    table = pa.Table.from_pandas(frame, **options)
    with pq.ParquetWriter(path, table.schema) as writer:
        start = 0
        for size in sizes:
            writer.write_table(table.slice(start, size), row_group_size=size)
            start += size
    assert pq.ParquetFile(path).metadata.num_row_groups == len(sizes)


@pytest.mark.parametrize("sizes", [[1000, 1000, 1000], [700, 50, 1, 1249, 1000], [3000]])
@pytest.mark.parametrize("rows", [13, 400, 1000, 2999, 5000])
def test_the_chunks_are_those_iter_batches_cuts(tmp_path, sizes, rows):
    """Chunks of ``rows`` rows across row groups, the last one shorter: the frames of one reader
    over the file, equal (values, dtypes, index) to a row group's reader's."""
    frame = sample_frame()
    frame.index = pd.Index(np.random.default_rng(3).permutation(N_ROWS), name="id")  # stored as a column
    frame["s"] = np.where(np.arange(N_ROWS) % 7 == 0, None, "level")
    path = tmp_path / "t.parquet"
    write_groups(frame, path, sizes)
    for columns in (None, ["s"], ["c", "a"]):
        with pq.ParquetFile(path) as parquet:
            expected = [batch.to_pandas() for batch in parquet.iter_batches(batch_size=rows, columns=columns)]
        with _open_parquet(path) as parquet:
            chunks = list(_parquet_frames(parquet, rows, columns))
        assert [len(chunk) for chunk in chunks] == [len(chunk) for chunk in expected]
        assert all(len(chunk) == rows for chunk in chunks[:-1]) and sum(map(len, chunks)) == N_ROWS
        for chunk, wanted in zip(chunks, expected):
            pd.testing.assert_frame_equal(chunk, wanted)


@pytest.mark.parametrize("sizes", [[1000, 1000, 1000], [700, 50, 1, 1249, 1000]])
@pytest.mark.parametrize("rows", [13, 400, 2999, 5000])
def test_a_numeric_files_chunks_are_its_frames_values(tmp_path, sizes, rows):
    """A file of numeric columns only is read into float arrays, without a DataFrame: each chunk the
    float values of :func:`_parquet_frames`' chunk, to the bit, column-major (integers, floats, a null)."""
    frame = sample_frame()
    frame["d"] = np.where(np.arange(N_ROWS) % 11 == 0, np.nan, frame["a"].to_numpy() * 3).astype(np.float32)
    frame["e"] = pd.array(np.where(np.arange(N_ROWS) % 13 == 0, None, np.arange(N_ROWS)), dtype="Int64")
    path = tmp_path / "t.parquet"
    write_groups(frame, path, sizes, preserve_index=False)
    names = list(frame.columns)
    with _open_parquet(path) as parquet:
        frames = [chunk.to_numpy(dtype=float, na_value=np.nan) for chunk in _parquet_frames(parquet, rows)]
    with _open_parquet(path) as parquet:
        arrays = list(_parquet_arrays(parquet, rows, names, nullable=["d", "e"]))  # the footer counts their nulls
    assert [len(a) for a in arrays] == [len(f) for f in frames]
    for array, expected in zip(arrays, frames):
        assert array.flags.f_contiguous and array.dtype == np.float64
        assert array.tobytes() == np.asfortranarray(expected).tobytes()


def test_a_numeric_file_is_summed_without_a_dataframe_and_its_faults_are_named(tmp_path, monkeypatch):
    """The pass over a numeric file builds no DataFrame and sums what the in-memory table sums; a null
    or an infinite value that the footer's statistics do not show fails that pass with the column's name
    only, as a DataFrame's check would."""
    import pyarrow as pa

    frame = sample_frame()
    path = tmp_path / "t.parquet"
    write_groups(frame, path, [1000, 2000], preserve_index=False)
    monkeypatch.setattr(table_module, "_pieces_frame", lambda *a: (_ for _ in ()).throw(AssertionError("frame")))
    domain = table_module.Domain.from_bounds(BOUNDS, ["a", "b", "c"])
    request = SumRequest(domain, column_sums=True, second_moment=True)
    streamed = PrivateTable.open(path, chunk_rows=700).row_sums(request)
    in_memory = PrivateTable.open(frame).row_sums(request)
    for name in ("rows", "rows_clipped", "column_sums", "second_moment"):
        np.testing.assert_allclose(streamed[name], in_memory[name], rtol=1e-13, atol=0, err_msg=name)
    for column, value in [("c", np.nan), ("a", -np.inf)]:
        bad = frame.copy()
        bad.loc[2500, column] = value
        bad_path = tmp_path / f"bad_{column}.parquet"
        pq.write_table(pa.Table.from_pandas(bad, preserve_index=False), bad_path,
                       write_statistics=False, row_group_size=1000)
        with pytest.raises(SynthDPError, match=f"^column '{column}' has missing or infinite values"):
            PrivateTable.open(bad_path, chunk_rows=700).row_sums(request)


def test_each_row_group_has_a_reader_of_its_own(tmp_path, monkeypatch):
    """The pass reads row group after row group, each through its own reader, and the summing
    function gets chunks of ``chunk_rows`` rows (the last one shorter). The chunks are summed on a
    thread pool, so they reach the summing function in any order: each is placed by where its first
    row stands in the file."""
    sizes = [700, 50, 1, 1249, 1000]
    frame = sample_frame()
    path = tmp_path / "t.parquet"
    write_groups(frame, path, sizes)
    readers = []
    original = pq.ParquetFile.iter_batches

    def iter_batches(self, *args, **options):
        readers.append(options.get("row_groups"))
        return original(self, *args, **options)

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", iter_batches)
    chunks = []  # (the file's row index of the chunk's first row, the chunk's length)
    rows = frame[["a", "b", "c"]].to_numpy(float)
    original_sums = table_module._values_sums

    def values_sums(values, *args, **options):
        first = np.flatnonzero((rows == np.asarray(values[0], float)).all(axis=1))
        chunks.append((int(first[0]), len(values)))
        return original_sums(values, *args, **options)

    monkeypatch.setattr(table_module, "_values_sums", values_sums)
    table = PrivateTable.open(path, chunk_rows=400)
    domain = table_module.Domain.from_bounds(BOUNDS, ["a", "b", "c"])
    assert table.row_sums(SumRequest(domain, column_sums=True)).n_rows == N_ROWS
    assert readers == [[group] for group in range(len(sizes))]
    assert sorted(chunks) == [(400 * i, 400) for i in range(7)] + [(2800, 200)]


def test_the_footers_row_count_reads_no_row(tmp_path, monkeypatch):
    path = tmp_path / "t.parquet"
    write_groups(sample_frame(), path, [1000, 2000])
    table = PrivateTable.open(path, chunk_rows=100)
    monkeypatch.setattr(table_module, "_parquet_frames", lambda *a, **k: (_ for _ in ()).throw(AssertionError("read")))
    monkeypatch.setattr(pq.ParquetFile, "iter_batches", lambda *a, **k: (_ for _ in ()).throw(AssertionError("read")))
    assert table.row_sums(SumRequest()).n_rows == N_ROWS


@pytest.mark.parametrize("options", [{}, {"candidates": "pca"}], ids=["copula-pairs", "pca"])
def test_a_file_of_several_row_groups_gives_the_in_memory_release_bit_for_bit(tmp_path, monkeypatch, options):
    """Streamed in chunks that cross the row groups, with the in-memory table summed in blocks of
    the same rows (CHUNK_VALUES): the seeded release is the same to the bit, the pairs' products
    from the kept cells included."""
    frame = sample_frame()
    path = tmp_path / "t.parquet"
    write_groups(frame, path, [1000, 1000, 1000], preserve_index=False)
    monkeypatch.setattr(table_module, "CHUNK_VALUES", 3 * 700)  # chunks and blocks of 700 rows of 3 columns
    settings = {"seed": 3, "epsilon": 4.0, "delta": 1e-6, "n_candidates": 300, **options}
    releases = []
    for source in (frame, path):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the seed's warning
            synth = SmoothSynthesizer(**settings).fit(source, bounds=BOUNDS)
        releases.append(synth.release_)
    assert synth.engine_ == {"engine": "numpy", "input": "Parquet file, streamed", "chunk_rows": 700,
                             **({"kept_cells": "memory"} if synth.release_.noisy_scores is not None else {}),
                             "kernels": "numpy (below 2,000,000 rows)"}
    names = ["noisy_moments", "noisy_histograms", "noisy_scores"] if not options else ["noisy_moments"]
    for name in names:
        assert getattr(releases[0], name) is not None, name
        assert getattr(releases[0], name).tobytes() == getattr(releases[1], name).tobytes(), name


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_cells_that_will_not_fit_go_to_a_temporary_file_from_the_start(tmp_path, monkeypatch, suffix):
    """The histograms' pass keeps its cells in memory for the pairs' pass when the row count of the
    pass before says they fit in KEPT_CELLS_BYTES (3 columns: one byte per value); else each
    chunk's cells go to a temporary file as they come, so memory holds no more than one chunk's,
    and the pairs' pass still reads no rows."""
    frame = sample_frame()
    path = tmp_path / f"t{suffix}"
    frame.to_csv(path, index=False) if suffix == ".csv" else write_groups(frame, path, [1000, 2000])
    passes, held = [], []
    original, add = table_module._chunk_sums_and_cells, table_module._KeptCells.add
    monkeypatch.setattr(table_module, "_chunk_sums_and_cells", lambda counting, *args: passes.append(counting)
                        or original(counting, *args))
    arrays = table_module._array_sums_and_cells  # a numeric Parquet file's passes
    monkeypatch.setattr(table_module, "_array_sums_and_cells", lambda counting, *args: passes.append(counting)
                        or arrays(counting, *args))

    def spied_add(kept, *args):
        result = add(kept, *args)
        held.append(sum(cells.nbytes for cells, _ in kept._chunks if cells is not None))
        return result

    monkeypatch.setattr(table_module._KeptCells, "add", spied_add)
    settings = {"seed": 3, "epsilon": 4.0, "delta": 1e-6, "n_candidates": 300, "chunk_rows": 700}
    for limit, where, most in [(3 * N_ROWS, "memory", 3 * N_ROWS), (3 * N_ROWS - 1, "temporary file", 0)]:
        monkeypatch.setattr(table_module, "KEPT_CELLS_BYTES", limit)
        passes.clear()
        held.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the seed's warning
            synth = SmoothSynthesizer(**settings).fit(path, bounds=BOUNDS)
        assert synth.release_.noisy_scores is not None
        assert passes == [True]  # one pass reads the rows (the histograms' and moments'), and keeps its cells
        assert synth.engine_["kept_cells"] == where
        assert max(held) == most  # in memory after each chunk: all of them, or none (each written out)


def test_by_unit_the_report_does_not_say_where_the_cells_were_kept(tmp_path, monkeypatch):
    """Whether the kept cells go to memory or to a temporary file follows the rows the pass counted;
    by unit that count is private (only its noisy release is public), so the engine entry leaves
    ``kept_cells`` out there, on both sides of KEPT_CELLS_BYTES; by row it names it (there the person
    column is a fourth column: 4 n bytes of cells, past both limits, so a temporary file)."""
    frame = sample_frame().assign(person=np.arange(N_ROWS) // 2)
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    settings = {"seed": 3, "epsilon": 4.0, "delta": 1e-6, "n_candidates": 300, "chunk_rows": 700}
    for limit in (3 * N_ROWS, 3 * N_ROWS - 1):  # memory, then the temporary file
        monkeypatch.setattr(table_module, "KEPT_CELLS_BYTES", limit)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the seed's warning
            by_row = SmoothSynthesizer(**settings).fit(tmp_path / "t.csv", bounds={**BOUNDS, "person": [0, N_ROWS]})
            by_unit = SmoothSynthesizer(**settings, privacy_unit="person", max_rows_per_unit=2).fit(path, bounds=BOUNDS)
        assert by_unit.release_.noisy_scores is not None and by_row.engine_["kept_cells"] == "temporary file"
        assert "kept_cells" not in by_unit.engine_ and "kept_cells" not in json.dumps(by_unit.privacy_report())


@pytest.mark.parametrize("mixed", [False, True], ids=["numeric", "mixed"])
def test_a_stored_pandas_index_is_not_a_column(tmp_path, mixed):
    """``df.set_index("id").to_parquet(path)`` stores the index as a column; pandas and the Dask engine
    read it back as the index, and so does the numpy engine: the release is that of the same file
    without the index, with a warning that names the index and the way to release it, and bounds
    naming it are refused with that way out (before, the numpy engine failed with a traceback, or on
    the schema; then "unknown column", or nothing)."""
    frame = sample_frame()[["a", "c"]]
    if mixed:
        frame["g"] = np.where(frame["a"] > 0, "u", "v")
    indexed = frame.set_index(pd.Index(np.random.default_rng(5).permutation(N_ROWS) * 7, name="id"))  # not a range
    with_index, without = tmp_path / "with.parquet", tmp_path / "without.parquet"
    indexed.to_parquet(with_index)
    frame.to_parquet(without, index=False)
    assert "id" in pq.read_schema(with_index).names
    bounds = {"a": [-3, 3], "c": [-1, 2]}
    fit = {"schema": {"columns": {"a": {"type": "continuous", "bounds": bounds["a"]},
                                  "c": {"type": "continuous", "bounds": bounds["c"]},
                                  "g": {"type": "categorical", "levels": ["u", "v"]}}}} if mixed else {"bounds": bounds}
    releases, noted = [], []
    for path in (with_index, without):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            releases.append(SmoothSynthesizer(seed=4, epsilon=2.0, n_candidates=300, chunk_rows=700)
                            .fit(path, **fit).release_)
        noted.append([str(w.message) for w in caught if "stored pandas index" in str(w.message)])
    np.testing.assert_array_equal(releases[0].noisy_moments, releases[1].noisy_moments)
    assert len(noted[0]) == 1 and "'id'" in noted[0][0] and "reset_index()" in noted[0][0] and not noted[1]
    named = {"bounds": {**bounds, "id": [0, 30000]}} if not mixed else {
        "schema": {"columns": {**fit["schema"]["columns"], "id": {"type": "integer", "bounds": [0, 30000]}}}}
    with pytest.raises(SynthDPError, match="column 'id' is the Parquet file's stored pandas index"):
        SmoothSynthesizer(seed=4, n_candidates=300).fit(with_index, **named)
