"""Large tables: every engine (in memory, streamed CSV and Parquet, Dask) computes the same row
sums, the same seeded release and the same validation errors; a Dask LocalCluster runs them."""

import warnings

import numpy as np
import pandas as pd
import pytest
from test_cli import thousands_text

from synthdp import SmoothSynthesizer, SynthDPError
from synthdp.cli import main
from synthdp.config import CsvFormat
from synthdp.domain.box import Domain
from synthdp.reader.table import PrivateTable
from synthdp.reader.units import UnitBound
from synthdp.stats.histograms import CellLayout
from synthdp.stats.row_sums import SumRequest
from synthdp.stats.scores import ScoreMap, default_clip_norm_sq

pytest.importorskip("dask.dataframe")
pytest.importorskip("pyarrow")

N_ROWS = 1500
CHUNK_ROWS = 400  # several chunks and partitions, the last one short
BOUNDS = {"a": [-3, 3], "b c": {"bounds": [0, 8], "type": "integer"}, "d": [-1, 2]}
SECRET = "987654.321"
# (input file suffix, engine, chunk_rows): every way a table is read.
ENGINES = [(".csv", "numpy", None), (".csv", "numpy", CHUNK_ROWS), (".parquet", "numpy", CHUNK_ROWS),
           (".csv", "dask", CHUNK_ROWS), (".parquet", "dask", None)]
ENGINE_IDS = ["memory", "csv-stream", "parquet-stream", "dask-csv", "dask-parquet"]


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    """Values partly outside BOUNDS (so rows are clipped), a column with a space in its name whose
    values are integers but for the last one (Dask must not fix its type from the first block)."""
    rng = np.random.default_rng(11)
    whole = rng.integers(0, 10, N_ROWS).astype(float)
    whole[-1] = 4.5
    return pd.DataFrame({"a": rng.normal(0, 1.2, N_ROWS).round(4), "b c": whole,
                         "d": rng.uniform(-2, 3, N_ROWS).round(4)})


def write(frame: pd.DataFrame, folder, suffix: str, name: str = "table"):
    path = folder / f"{name}{suffix}"
    if suffix == ".csv":
        frame.to_csv(path, index=False, float_format="%g")
    else:
        frame.to_parquet(path, row_group_size=CHUNK_ROWS)
    return path


def every_request(columns) -> SumRequest:
    domain = Domain.from_bounds(BOUNDS, columns)
    indices = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [2, 0, 0], [1, 0, 1], [0, 3, 1]])
    score_map = ScoreMap(np.random.default_rng(0).dirichlet(np.ones(6), size=3), default_clip_norm_sq(3))
    layout = CellLayout(4, (None, np.linspace(-1.0, 1.0, 7), None), (False,) * 3)  # bins, value cells, bins
    return SumRequest(domain, indices, column_sums=True, second_moment=True, cell_layout=layout, score_map=score_map,
                      histogram_columns=(0, 2), data_range=True)


@pytest.mark.parametrize("suffix, engine, chunk_rows", ENGINES, ids=ENGINE_IDS)
def test_every_engine_computes_the_in_memory_sums(frame, tmp_path, suffix, engine, chunk_rows):
    request = every_request(list(frame.columns))
    expected = PrivateTable(frame).row_sums(request)
    table = PrivateTable.open(write(frame, tmp_path, suffix), engine, chunk_rows)
    sums = table.row_sums(request)
    assert table.engine["engine"] == engine
    assert sums.values.keys() == expected.values.keys()
    assert sums.n_rows == N_ROWS and 0 < sums["rows_clipped"] < N_ROWS
    for name, value in expected.values.items():  # equal up to the order of summation
        np.testing.assert_allclose(sums[name], value, rtol=1e-12, atol=1e-9, err_msg=name)


def test_an_in_memory_table_larger_than_a_chunk_is_summed_block_by_block(frame, monkeypatch):
    """A table of more rows than a streamed chunk holds is summed in blocks of those rows (so a
    pass holds one block's temporaries): the same sums as in one call up to the order of
    summation, and a table of one block is still summed in one call, to the bit."""
    from synthdp.reader import table as table_module

    request = every_request(list(frame.columns))
    whole = PrivateTable(frame).row_sums(request)
    calls = []
    original = table_module._values_sums
    monkeypatch.setattr(table_module, "_values_sums", lambda values, *args: calls.append(len(values))
                        or original(values, *args))
    monkeypatch.setattr(table_module, "CHUNK_VALUES", 3 * CHUNK_ROWS)  # CHUNK_ROWS rows of 3 columns
    blocked = PrivateTable(frame).row_sums(request)
    assert sorted(calls) == sorted([CHUNK_ROWS] * 3 + [N_ROWS - 3 * CHUNK_ROWS])  # summed on a thread pool: any order
    assert blocked.values.keys() == whole.values.keys()
    for name, value in whole.values.items():
        np.testing.assert_allclose(blocked[name], value, rtol=1e-12, atol=1e-9, err_msg=name)
    calls.clear()
    monkeypatch.setattr(table_module, "CHUNK_VALUES", 3 * N_ROWS)
    single = PrivateTable(frame).row_sums(request)
    assert calls == [N_ROWS]
    for name, value in whole.values.items():
        np.testing.assert_array_equal(single[name], value, err_msg=name)


def test_a_dask_dataframe_is_read_by_the_dask_engine(frame):
    import dask.dataframe as dd

    request = every_request(list(frame.columns))
    table = PrivateTable.open(dd.from_pandas(frame, npartitions=4))
    assert table.engine["engine"] == "dask"
    np.testing.assert_allclose(table.row_sums(request)["second_moment"],
                               PrivateTable(frame).row_sums(request)["second_moment"], rtol=1e-12)


@pytest.mark.parametrize("options, fit_options", [
    ({"n_candidates": 300}, {"bounds": BOUNDS}),
    ({"bounds_share": 0.2}, {"bounds": {"a": BOUNDS["a"]}, "synthesize": False}),
    ({}, {"bounds_from_data": True, "synthesize": False}),
    ({"mode": "exact"}, {"bounds": BOUNDS, "synthesize": False}),
    ({"candidates": "copula", "correlation_share": 0.3, "epsilon": 8.0, "n_candidates": 300}, {"bounds": BOUNDS}),
], ids=["pca", "dp-bounds", "bounds-from-data", "exact", "copula-pairs"])
def test_seeded_releases_agree_across_engines(frame, tmp_path, options, fit_options):
    """The same seeded noise on sums equal up to rounding: the releases agree to 1e-9."""
    data = frame[["a", "b c"]] if options.get("mode") == "exact" else frame
    if options.get("mode") == "exact":
        fit_options = {**fit_options, "bounds": {name: BOUNDS[name] for name in data.columns}}
    releases = []
    for engine, source in [("numpy", data), ("numpy", write(data, tmp_path, ".csv")),
                           ("dask", write(data, tmp_path, ".parquet"))]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # seeds, bounds from data, unreliable DP bounds: all expected here
            synth = SmoothSynthesizer(seed=5, engine=engine, chunk_rows=CHUNK_ROWS, **options)
            releases.append(synth.fit(source, **fit_options).release_)
    for release in releases[1:]:
        assert release.domain == releases[0].domain
        np.testing.assert_allclose(release.noisy_moments, releases[0].noisy_moments, rtol=0, atol=1e-9)
        assert release.noisy_rows_clipped == pytest.approx(releases[0].noisy_rows_clipped, abs=1e-9)
        if release.pca is not None:
            np.testing.assert_allclose(release.pca.axes, releases[0].pca.axes, rtol=0, atol=1e-7)
        if releases[0].noisy_scores is not None:  # the pairs release: a third pass through the released histograms
            np.testing.assert_allclose(release.noisy_histograms, releases[0].noisy_histograms, rtol=0, atol=1e-9)
            np.testing.assert_allclose(release.noisy_scores, releases[0].noisy_scores, rtol=0, atol=1e-9)


def table_text(frame: pd.DataFrame, row: int | None = None, cells: str | None = None) -> str:
    """The CSV of ``frame``, with data row ``row`` (0-based) replaced by the raw text ``cells``."""
    lines = frame.to_csv(index=False, float_format="%g").splitlines()
    if row is not None:
        lines[row + 1] = cells
    return "\n".join(lines) + "\n"


BAD_TABLES = {  # name: (CSV text from the frame, expected error); faults in the last chunk
    "text": (lambda f: table_text(f, N_ROWS - 5, f"0.5,{SECRET}x,1"), "column 'b c' is not numeric"),
    "missing": (lambda f: table_text(f, N_ROWS - 5, "0.5,,1"), "column 'b c' has missing or infinite values"),
    "infinite": (lambda f: table_text(f, N_ROWS - 5, "0.5,2,-inf"), "column 'd' has missing or infinite values"),
    "ragged": (lambda f: table_text(f, N_ROWS - 5, f"0.5,2,1,{SECRET}"), "is not a well-formed CSV file"),
    "header only": (lambda f: "a,b c,d\n", "the input has no data rows"),
    "one row": (lambda f: f"a,b c,d\n{SECRET},1,1\n", "the input needs at least 2 rows"),
    "empty": (lambda f: "", "is empty"),
}


@pytest.mark.parametrize("suffix, engine, chunk_rows", [e for e in ENGINES if e[0] == ".csv"],
                         ids=[i for e, i in zip(ENGINES, ENGINE_IDS) if e[0] == ".csv"])
@pytest.mark.parametrize("bad", list(BAD_TABLES))
def test_every_engine_rejects_bad_tables_alike_without_printing_a_value(frame, tmp_path, suffix, engine,
                                                                          chunk_rows, bad):
    make_text, expected = BAD_TABLES[bad]
    path = tmp_path / "bad.csv"
    path.write_text(make_text(frame))
    with pytest.raises(SynthDPError, match=expected) as error:
        PrivateTable.open(path, engine, chunk_rows).row_sums(SumRequest(data_range=True))
    assert SECRET not in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize("engine", ["numpy", "dask"])
def test_parquet_columns_that_are_text_or_have_nulls_are_rejected(tmp_path, engine):
    pd.DataFrame({"a": [1.0, 2.0, 3.0], "s": ["x", SECRET, "z"]}).to_parquet(tmp_path / "text.parquet")
    pd.DataFrame({"a": [1.0, None, 3.0]}).to_parquet(tmp_path / "null.parquet")
    (tmp_path / "junk.parquet").write_text(SECRET)
    for name, expected in [("text", "column 's' is not numeric"), ("null", "column 'a' has missing"),
                           ("junk", "is not a well-formed Parquet file")]:
        with pytest.raises(SynthDPError, match=expected) as error:
            PrivateTable.open(tmp_path / f"{name}.parquet", engine).row_sums(SumRequest())
        assert SECRET not in str(error.value)


@pytest.mark.parametrize("engine", ["numpy", "dask"])
def test_cli_streams_and_a_failure_half_way_leaves_no_output(frame, tmp_path, capsys, engine):
    (tmp_path / "bounds.json").write_text(pd.Series(BOUNDS).to_json())
    good, bad = tmp_path / "good.csv", tmp_path / "bad.csv"
    good.write_text(table_text(frame))
    bad.write_text(table_text(frame, N_ROWS - 1, "0.5,,1"))  # the last chunk is at fault
    common = ["--bounds", str(tmp_path / "bounds.json"), "--engine", engine, "--chunk-rows", str(CHUNK_ROWS),
              "--seed", "1", "--quiet", "--n-candidates", "300"]
    assert main(["generate", str(bad), "-o", str(tmp_path / "out.csv"), "--report", str(tmp_path / "r.json")]
                + common) == 2
    assert "column 'b c' has missing or infinite values" in capsys.readouterr().err.strip()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["bad.csv", "bounds.json", "good.csv"]
    assert main(["generate", str(good), "-o", str(tmp_path / "out.csv"), "--report", str(tmp_path / "r.json")]
                + common) == 0
    report = pd.read_json(tmp_path / "r.json", typ="series")
    assert report["engine"]["engine"] == engine and len(pd.read_csv(tmp_path / "out.csv")) == N_ROWS


def test_parquet_input_from_the_cli(frame, tmp_path):
    (tmp_path / "bounds.json").write_text(pd.Series(BOUNDS).to_json())
    source = write(frame, tmp_path, ".parquet")
    assert main(["summarize", str(source), "-o", str(tmp_path / "s.json"), "--bounds", str(tmp_path / "bounds.json"),
                 "--seed", "1", "--quiet"]) == 0
    assert (tmp_path / "s.json").exists()


def test_options_are_checked_when_fitting(frame):
    """scikit-learn's convention: the constructor stores, fit validates (before reading any row)."""
    for options, message in (({"scheduler": "tcp://localhost:8786"}, "scheduler needs engine 'dask'"),
                             ({"chunk_rows": 0}, r"chunk_rows \(--chunk-rows\) must be an integer >= 1"),
                             ({"engine": "spark"}, "engine must be one of")):
        synth = SmoothSynthesizer(**options)
        assert synth.get_params()[next(iter(options))] == next(iter(options.values()))  # stored untouched
        with pytest.raises(SynthDPError, match=message):
            synth.fit(frame, bounds_from_data=True)


def test_a_dask_partition_is_summed_in_blocks_of_a_streamed_chunk(frame, monkeypatch):
    """A Dask partition is validated and summed block by block (so a worker holds one block's
    temporaries, not the partition's), the blocks' sums added in order: the whole partition's sums
    up to the order of summation; a partition of one block is still summed in one call, to the bit."""
    from synthdp.reader import table as table_module

    names = list(frame.columns)
    request = every_request(names)
    whole = table_module._frame_sums(frame, names, request)
    calls = []
    original = table_module._frame_sums
    monkeypatch.setattr(table_module, "_frame_sums", lambda part, *args: calls.append(len(part)) or original(part, *args))
    blocked = table_module._partition_sums(frame, CHUNK_ROWS, names, request)
    assert calls == [CHUNK_ROWS] * 3 + [N_ROWS - 3 * CHUNK_ROWS]
    assert blocked.values.keys() == whole.values.keys() and blocked.n_rows == N_ROWS
    for name, value in whole.values.items():
        np.testing.assert_allclose(blocked[name], value, rtol=1e-12, atol=1e-12, err_msg=name)
    calls.clear()
    single = table_module._partition_sums(frame, N_ROWS, names, request)
    assert calls == [N_ROWS]
    for name, value in whole.values.items():
        np.testing.assert_array_equal(single[name], value, err_msg=name)


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_the_dask_engine_in_small_blocks_gives_the_numpy_release(frame, tmp_path, monkeypatch, suffix):
    """With blocks far smaller than its partitions, the Dask engine's sums are the in-memory ones
    and its seeded release (moments, histograms, pairs: three passes) the numpy engine's, to 1e-12."""
    from synthdp.reader import table as table_module

    path = write(frame, tmp_path, suffix)
    request = every_request(list(frame.columns))
    expected = PrivateTable(frame).row_sums(request)
    options = {"candidates": "copula", "correlation_share": 0.3, "epsilon": 8.0, "n_candidates": 300, "seed": 5}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = SmoothSynthesizer(**options).fit(frame, bounds=BOUNDS).release_
    blocks = []
    original = table_module._frame_sums
    monkeypatch.setattr(table_module, "_frame_sums",
                        lambda part, *args, **kwargs: blocks.append(len(part)) or original(part, *args, **kwargs))
    monkeypatch.setattr(table_module, "CHUNK_VALUES", 3 * 100)  # blocks of 100 rows of the 3 columns
    table = PrivateTable.open(path, "dask", CHUNK_ROWS if suffix == ".csv" else None)
    sums = table.row_sums(request)
    assert blocks and max(blocks) <= 100 and sum(blocks) == N_ROWS
    for name, value in expected.values.items():
        np.testing.assert_allclose(sums[name], value, rtol=1e-12, atol=1e-12, err_msg=name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        release = SmoothSynthesizer(engine="dask", **options).fit(path, bounds=BOUNDS).release_
    assert release.noisy_scores is not None and release.noisy_histograms is not None
    assert release.domain == reference.domain
    for name in ("noisy_moments", "noisy_histograms", "noisy_scores", "noisy_rows_clipped"):
        np.testing.assert_allclose(getattr(release, name), getattr(reference, name), rtol=0, atol=1e-12, err_msg=name)


def test_the_dask_engine_makes_a_partition_of_each_large_parquet_row_group(frame, tmp_path, monkeypatch):
    """Parquet row groups larger than DASK_BLOCK_BYTES are partitions of their own (dask's default
    put 256 MiB of them together), with the in-memory sums."""
    from synthdp.reader import table as table_module

    path = write(frame, tmp_path, ".parquet")  # row groups of CHUNK_ROWS rows
    request = every_request(list(frame.columns))
    expected = PrivateTable(frame).row_sums(request)
    parts = []
    original = table_module._partition_sums
    monkeypatch.setattr(table_module, "_partition_sums", lambda part, *args: parts.append(len(part)) or original(part, *args))
    monkeypatch.setattr(table_module, "DASK_BLOCK_BYTES", 1000)  # bytes: less than a row group
    sums = PrivateTable.open(path, "dask").row_sums(request)
    assert sorted(parts) == sorted([CHUNK_ROWS] * 3 + [N_ROWS - 3 * CHUNK_ROWS])
    for name, value in expected.values.items():
        np.testing.assert_allclose(sums[name], value, rtol=1e-12, atol=1e-12, err_msg=name)


def test_dask_engine_on_a_local_cluster(frame, tmp_path):
    """The CI test of dask.distributed: one in-process worker, a few seconds."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        synth = SmoothSynthesizer(seed=2, engine="dask", scheduler=cluster.scheduler_address, chunk_rows=CHUNK_ROWS)
        synth.fit(write(frame, tmp_path, ".csv"), bounds=BOUNDS, synthesize=False)
    reference = SmoothSynthesizer(seed=2).fit(frame, bounds=BOUNDS, synthesize=False)
    assert synth.privacy_report()["engine"]["scheduler"] == cluster.scheduler_address
    np.testing.assert_allclose(synth.release_.noisy_moments, reference.release_.noisy_moments, rtol=0, atol=1e-9)


def test_an_unreachable_scheduler_is_a_one_line_error(frame, monkeypatch):
    monkeypatch.setattr("synthdp.reader.table.SCHEDULER_TIMEOUT", "0.5s")
    synth = SmoothSynthesizer(engine="dask", scheduler="tcp://127.0.0.1:9")
    with pytest.raises(SynthDPError, match="cannot connect to the Dask scheduler"):
        synth.fit(frame, bounds=BOUNDS)


def test_a_missing_optional_package_is_a_one_line_error(frame, tmp_path, monkeypatch):
    def no_module(name):
        raise ImportError(name)

    parquet = write(frame, tmp_path, ".parquet")
    monkeypatch.setattr("synthdp.reader.table.importlib.import_module", no_module)
    with pytest.raises(SynthDPError, match=r"the Dask engine needs the optional package 'dask': pip install"):
        SmoothSynthesizer(engine="dask").fit(frame, bounds=BOUNDS)
    with pytest.raises(SynthDPError, match="Parquet input needs the optional package 'pyarrow'"):
        SmoothSynthesizer().fit(parquet, bounds=BOUNDS)


@pytest.mark.parametrize("engine", ["numpy", "dask"])
def test_a_parquet_row_count_comes_from_the_footer(tmp_path, monkeypatch, engine):
    """The first pass with public bounds only counts rows: the Parquet footer holds the count, so
    no batch (no Dask partition) is parsed for it; values are still checked by the pass that sums them."""
    pq = pytest.importorskip("pyarrow.parquet")
    if engine == "dask":
        pytest.importorskip("dask.dataframe")
    from synthdp.reader import table as table_module
    from synthdp.reader.table import PrivateTable
    from synthdp.stats.row_sums import SumRequest

    frame = pd.DataFrame({"a": np.arange(1000.0) / 1000, "b": np.ones(1000)})
    frame.loc[500, "b"] = np.inf  # not a null: only the pass that sums the values sees it
    frame.to_parquet(tmp_path / "t.parquet", index=False)
    table = PrivateTable.open(tmp_path / "t.parquet", engine=engine, chunk_rows=100)
    original, partition_sums = pq.ParquetFile.iter_batches, table_module._partition_sums

    def parsed(*args, **kwargs):
        raise AssertionError("parsed")

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", parsed)
    monkeypatch.setattr(table_module, "_partition_sums", parsed)
    assert table.row_sums(SumRequest()).n_rows == 1000
    monkeypatch.setattr(pq.ParquetFile, "iter_batches", original)
    monkeypatch.setattr(table_module, "_partition_sums", partition_sums)
    with pytest.raises(SynthDPError, match="'b'"):
        SmoothSynthesizer(seed=1, engine=engine).fit(tmp_path / "t.parquet", bounds={"a": [0, 1], "b": [0, 2]})


MIXED_SCHEMA = {"columns": {
    "a": [-3, 3],
    "b c": {"type": "integer", "bounds": [0, 8], "nullable": True},
    "g": {"type": "categorical", "levels": ["x", "y"]},
    "s": {"type": "binary", "levels": ["no", "yes"]},
    "k": {"type": "integer", "bounds": [1, 5]},  # a value block (MAX_VALUE_BLOCK)
    "h": {"type": "integer", "bounds": [18, 80]},  # a binned value block (MAX_BINNED_BLOCK)
}}


@pytest.mark.parametrize("suffix, engine, chunk_rows", ENGINES, ids=ENGINE_IDS)
def test_a_mixed_table_streams_with_the_in_memory_release(tmp_path, suffix, engine, chunk_rows):
    """A mixed table (a nullable integer column counted value by value, a categorical column with
    values outside its levels, a binary column, an integer column of five values with its value block
and values outside its bounds, an integer column of 63 values with its binned block) through every engine: the seeded release (moments,
    histograms, pairs, the clipped and "other" counts) is the in-memory one up to summation order."""
    rng = np.random.default_rng(12)
    whole = rng.integers(0, 9, N_ROWS).astype(float)
    whole[rng.random(N_ROWS) < 0.1] = np.nan
    x = rng.normal(0, 1.2, N_ROWS).round(4)
    frame = pd.DataFrame({"a": x, "b c": np.where(np.isnan(whole), np.nan, np.clip(np.round(4 + 2 * x), 0, 8)),
                          "g": rng.choice(["x", "y", "z"], N_ROWS), "s": rng.choice(["no", "yes"], N_ROWS),
                          "k": rng.integers(0, 7, N_ROWS), "h": rng.integers(15, 84, N_ROWS)})
    options = {"seed": 5, "epsilon": 8.0, "delta": 1e-6, "n_candidates": 300, "correlation_share": 0.3}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the seed's warning
        in_memory = SmoothSynthesizer(**options).fit(frame, schema=MIXED_SCHEMA)
        synth = SmoothSynthesizer(engine=engine, chunk_rows=chunk_rows, **options).fit(
            write(frame, tmp_path, suffix), schema=MIXED_SCHEMA)
    expected, release = in_memory.release_, synth.release_
    assert synth.engine_["engine"] == engine and release.noisy_scores is not None
    assert [column.binned for column in release.schema.value_blocks] == [False, True]
    assert release.cell_layout.values[1] is not None and release.cell_layout.missing == (False, True, False, False)
    for name in ("noisy_moments", "noisy_histograms", "noisy_scores", "noisy_rows_clipped", "noisy_rows_other"):
        np.testing.assert_allclose(getattr(release, name), getattr(expected, name), rtol=1e-9, atol=1e-9, err_msg=name)
    assert set(synth.sample(200)["g"]) <= {"x", "y", "other"}
    # the synthetic rows too: the candidates' normal draws go through the symmetric root of their
    # correlation, continuous in it (an eigenvector factor is not where eigenvalues repeat: a last-bit
    # difference of the summation order then drew other candidates)
    rows, expected_rows = synth.sample(300, seed=3), in_memory.sample(300, seed=3)
    pd.testing.assert_frame_equal(rows, expected_rows, rtol=1e-9, atol=1e-9)


def test_level_discovery_on_a_streamed_table_stops_with_a_clear_error(tmp_path):
    frame = pd.DataFrame({"a": np.linspace(-1, 1, 50), "g": ["x", "y"] * 25})
    schema = {"columns": {"a": [-3, 3], "g": {"type": "categorical", "levels": "discover"}}}
    with pytest.raises(SynthDPError, match="discovery of levels reads the table in memory"):
        SmoothSynthesizer(delta=1e-6, levels_share=0.1, chunk_rows=20).fit(write(frame, tmp_path, ".csv"), schema=schema)


def _release_moments(data, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SmoothSynthesizer(epsilon=1.0, delta=1e-6, seed=1, **options).fit(
            data, bounds={"x": [0, 1], "y": [0, 10]}, synthesize=False).release_.noisy_moments


def test_the_dask_engine_keeps_the_rows_per_person_of_merged_parquet_row_groups(tmp_path, monkeypatch):
    """A one-column read of a Parquet file puts small row groups together into fewer partitions than
    the whole file's: the rows per person are counted on the partitions the sums read, so the Dask
    engine keeps the numpy engine's rows (it dropped whole partitions, silently)."""
    from synthdp.reader import table as table_module

    rng = np.random.default_rng(8)
    frame = pd.DataFrame({"pid": np.repeat([f"p{i}" for i in range(400)], 3), "x": rng.uniform(0, 1, 1200),
                          "y": rng.uniform(0, 10, 1200)})
    frame.to_parquet(tmp_path / "t.parquet", row_group_size=300)  # 4 groups of 300 rows
    monkeypatch.setattr(table_module, "DASK_BLOCK_BYTES", 5000)  # one group of 3 columns is more, of one column less
    unit = {"privacy_unit": "pid", "max_rows_per_unit": 2}
    np.testing.assert_allclose(_release_moments(tmp_path / "t.parquet", engine="dask", **unit),
                               _release_moments(tmp_path / "t.parquet", **unit), rtol=0, atol=1e-12)


def test_the_dask_engine_reads_what_the_numpy_engine_reads(tmp_path):
    """A Parquet file storing a named index (it is not a column), numbers and dates stored as pandas
    categories, and a DataFrame in another row order with a privacy unit (not sorted by its index):
    the same release on both engines."""
    rng = np.random.default_rng(9)
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 900), "y": rng.integers(0, 11, 900).astype(float)})
    named = frame.rename_axis("row")
    named.to_parquet(tmp_path / "named.parquet")
    frame.assign(y=frame["y"].astype("category")).to_parquet(tmp_path / "category.parquet")
    for name in ("named", "category"):
        np.testing.assert_allclose(_release_moments(tmp_path / f"{name}.parquet", engine="dask"),
                                   _release_moments(tmp_path / f"{name}.parquet"), rtol=0, atol=1e-12, err_msg=name)
    shuffled = frame.assign(pid=np.repeat([f"p{i}" for i in range(300)], 3)).sample(frac=1, random_state=2)
    unit = {"privacy_unit": "pid", "max_rows_per_unit": 2, "chunk_rows": 200}
    np.testing.assert_allclose(_release_moments(shuffled, engine="dask", **unit), _release_moments(shuffled, **unit),
                               rtol=0, atol=1e-12)
    dated = pd.DataFrame({"x": frame["x"], "visit": (pd.Timestamp("2020-01-01") + pd.to_timedelta(
        rng.integers(0, 300, 900), unit="D")).strftime("%Y-%m-%d").astype("category")})
    dated.to_parquet(tmp_path / "dated.parquet")
    bounds = {"x": [0, 1], "visit": {"type": "date", "bounds": ["2020-01-01", "2020-12-31"]}}
    for engine in ("numpy", "dask"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            SmoothSynthesizer(epsilon=1.0, seed=1, engine=engine).fit(tmp_path / "dated.parquet", bounds=bounds,
                                                                      synthesize=False)


@pytest.mark.parametrize("quoted", [True, False], ids=["quoted-line-breaks", "no-quote"])
def test_a_dask_csv_error_names_quoted_line_breaks_as_a_cause_where_the_file_has_a_quote(tmp_path, capsys, quoted):
    """Quoted: blocks of 64 KiB at least, about 10 here, and half the file's line breaks quoted, so
    that block boundaries fall in them: the error names them as the cause. Without a quote no value
    can hold a line break: a missing cell is named as that alone."""
    if quoted:
        rows = ["x,g"] + [f'{i / 100000:.5f},"a\nb"' for i in range(60000)]
        domain = ["--schema", '{"columns": {"x": [0, 1], "g": {"type": "categorical", "levels": ["a"]}}}']
    else:
        rows = ["x,y"] + [f"{i / 1000:.3f},{'' if i == 500 else 0.5}" for i in range(1000)]
        domain = ["--bounds", '{"x": [0, 1], "y": [0, 1]}']
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "d.json").write_text(domain[1])
    code = main(["generate", str(tmp_path / "t.csv"), "-o", str(tmp_path / "o.csv"), domain[0],
                 str(tmp_path / "d.json"), "--engine", "dask", "--chunk-rows", "300", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and not (tmp_path / "o.csv").exists()
    assert ("line break" in err) == quoted
    assert quoted or "column 'y' has missing" in err


def test_the_dask_engine_reads_a_stored_index_as_pandas_does_and_refuses_lines_ending_in_cr(tmp_path, capsys):
    """A Parquet file written from a DataFrame with a named index stores it as a column that pandas
    reads back as the index: the Dask engine leaves it out too (it asked for its bounds); a CSV
    whose lines end in a carriage return alone, which Dask cannot cut into blocks (each block read
    the whole file again: three times the rows), is one line."""

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"k": np.arange(3000), "a": rng.normal(size=3000), "b": rng.normal(size=3000)})
    frame.set_index("k").to_parquet(tmp_path / "idx.parquet")
    (tmp_path / "ab.json").write_text('{"a": [-5, 5], "b": [-5, 5]}')
    outputs = []
    for engine in ("numpy", "dask"):
        out = tmp_path / f"{engine}.csv"
        assert main(["generate", str(tmp_path / "idx.parquet"), "--bounds", str(tmp_path / "ab.json"), "-o", str(out),
                     "--seed", "1", "--engine", engine, "--quiet"]) == 0
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    frame[["a", "b"]].to_csv(tmp_path / "cr.csv", index=False, lineterminator="\r")
    capsys.readouterr()
    assert main(["generate", str(tmp_path / "cr.csv"), "--bounds", str(tmp_path / "ab.json"), "-o",
                 str(tmp_path / "cr_out.csv"), "--seed", "1", "--engine", "dask", "--chunk-rows", "1000", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "carriage return alone" in err and err.count("\n") == 1 and not (tmp_path / "cr_out.csv").exists()


# The first two: an ulp off through Arrow's own cast of a decimal to a float.
DECIMALS = ["1824344105835.598", "-898936017745.367", "0.100", "2.250", "-3.001", "17.000"]


def test_a_parquet_decimal_column_is_numeric_and_read_alike_by_every_engine(tmp_path):
    """A Parquet DECIMAL column (money, as a database exports it) is a numeric column in every engine,
    each value read as the float64 nearest to it (``float(Decimal)``), whether the engine holds it as
    Arrow decimals (streamed, Dask) or Python Decimals (pandas): the streamed engine refused it, Dask
    took it in a pass after a footer check that refused it (or, by unit, with no footer check)."""
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    values = [decimal.Decimal(DECIMALS[i % len(DECIMALS)]) for i in range(60)]
    path = tmp_path / "money.parquet"
    pq.write_table(pa.table({"pid": [f"p{i % 20}" for i in range(60)], "amount": pa.array(values, pa.decimal128(18, 3)),
                             "x": np.linspace(0.0, 1.0, 60)}), path, row_group_size=25)
    numbers = pd.read_parquet(path, columns=["amount", "x"])  # Python Decimals
    numbers.to_parquet(tmp_path / "numbers.parquet", row_group_size=25)
    unit = UnitBound("pid", 3, 5)  # every row kept: the same values as without a unit
    tables = {"memory, Decimals": PrivateTable(numbers),
              "memory, Arrow": PrivateTable(numbers.astype({"amount": pd.ArrowDtype(pa.decimal128(18, 3))})),
              "streamed arrays": PrivateTable.open(tmp_path / "numbers.parquet", chunk_rows=7),
              "streamed frames": PrivateTable.open(path, chunk_rows=7, unit=unit),
              "dask": PrivateTable.open(tmp_path / "numbers.parquet", "dask"),
              "dask by unit": PrivateTable.open(path, "dask", unit=unit),
              "dask, a DataFrame of Decimals": PrivateTable.open(numbers, "dask", 20)}
    floats = [float(value) for value in values]
    for name, table in tables.items():
        assert table.row_sums(SumRequest()).n_rows == 60, name  # a streamed file's first pass checks the footer
        sums = table.row_sums(SumRequest(data_range=True))
        assert sums["minimum"][0] == min(floats) and sums["maximum"][0] == max(floats), name
        assert not sums["integer"][0], name


def test_a_dataframe_of_decimals_needs_no_pyarrow(monkeypatch):
    """A DataFrame of Python Decimals (pd.read_sql of a NUMERIC column) in an install without the
    scale extra: its reading imported pyarrow, a ModuleNotFoundError; it is read as float(Decimal)."""
    import decimal
    import sys

    from synthdp.reader.numbers import decimal_floats

    values = [decimal.Decimal(DECIMALS[i % len(DECIMALS)]) for i in range(60)]
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow: ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.compute", None)
    np.testing.assert_array_equal(decimal_floats(pd.Series([*values[:6], None], dtype=object)),
                                  [*(float(value) for value in values[:6]), np.nan])
    sums = PrivateTable(pd.DataFrame({"amount": values, "x": np.linspace(0.0, 1.0, 60)})).row_sums(
        SumRequest(data_range=True))
    assert sums["minimum"][0] == min(map(float, values)) and sums["maximum"][0] == max(map(float, values))


def test_integers_past_64_bits_in_a_csv_are_read_alike_by_every_engine_and_chunking(tmp_path):
    """pandas reads a column as text (or Python ints) where a chunk of it holds an integer past 2^64,
    or one past 2^63 beside a negative number, a fraction or a missing cell, and as numbers in a chunk
    without: a file was refused or read depending on its chunks, and Dask, which types a column from
    the first rows, refused a later block of it. Every engine now reads each number as the float64
    nearest to it as written (as it reads a column of floats); text is still refused, by name."""
    n = 12_000  # Dask's blocks are 64 KiB at least: two of them
    cells = [str(i % 97) for i in range(n)]
    cells[3], cells[4] = str(2**63 + 12_345), "-1"  # together in every chunking, and in Dask's sample
    cells[5_000], cells[5_001] = str(2**63 + 999), "2.5"
    cells[7_000] = str(2**64 + 2**40 + 7)
    cells[11_000], cells[11_001] = str(2**63 + 2**20), ""  # beside a missing cell, in Dask's second block
    engines = (("numpy", None), ("numpy", 3_000), ("numpy", 5_001), ("numpy", 11_001), ("dask", 2_000), ("dask", None))

    def write(name: str, column: list[str]):
        (tmp_path / name).write_text("a,b\n" + "".join(f"{cell},{i % 5}\n" for i, cell in enumerate(column)))
        return tmp_path / name

    full = write("full.csv", [cell or "7" for cell in cells])
    for engine, chunk_rows in engines:  # the nearest floats: the data's range, exactly
        sums = PrivateTable.open(full, engine, chunk_rows).row_sums(SumRequest(data_range=True))
        assert (sums["minimum"][0], sums["maximum"][0]) == (-1.0, float(2**64 + 2**40 + 7)), (engine, chunk_rows)
    releases = []
    for engine, chunk_rows in engines:  # a missing cell beside a number past 2^63: the same release
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            releases.append(SmoothSynthesizer(epsilon=1.0, seed=1, engine=engine, chunk_rows=chunk_rows).fit(
                write("missing.csv", cells), bounds={"a": {"bounds": [-1, 2e19], "nullable": True}, "b": [0, 4]},
                synthesize=False).release_.noisy_moments)
    for release in releases[1:]:
        np.testing.assert_allclose(release, releases[0], rtol=1e-12, atol=1e-12)
    cells[9_000] = f"{SECRET}x"
    for engine, chunk_rows in engines[:2] + engines[4:5]:
        with pytest.raises(SynthDPError, match="column 'a' is not numeric") as error:
            PrivateTable.open(write("text.csv", cells), engine, chunk_rows, nullable=("a",)).row_sums(
                SumRequest(data_range=True))
        assert SECRET not in str(error.value) and "\n" not in str(error.value)



def test_a_text_column_is_refused_in_the_same_words_by_every_engine(tmp_path, capsys):
    """The Parquet footer's check, the streamed chunks' and Dask's give the one message, with what to declare."""
    frame = pd.DataFrame({"x": np.linspace(0, 1, 600), "kind": ["a", "b", "c"] * 200})
    frame.to_csv(tmp_path / "t.csv", index=False)
    frame.to_parquet(tmp_path / "t.parquet")
    (tmp_path / "b.json").write_text('{"x": [0, 1], "kind": [0, 1]}')
    messages = set()
    for suffix, engine in ((".csv", "numpy"), (".parquet", "numpy"), (".csv", "dask"), (".parquet", "dask")):
        code = main(["generate", str(tmp_path / f"t{suffix}"), "-o", str(tmp_path / "o.csv"), "--bounds",
                     str(tmp_path / "b.json"), "--engine", engine, "--chunk-rows", "200", "--quiet"])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1
        messages.add(err.split(": ", 2)[-1].split("; if a quoted")[0].strip())
    assert len(messages) == 1 and "column 'kind' is not numeric (it holds text" in messages.pop()


@pytest.mark.parametrize("engine", ["numpy", "dask"])
def test_a_column_of_complex_numbers_is_refused_not_read_as_its_real_parts(engine):
    """A DataFrame's complex128 column passed as numbers: its values were read as floats, numpy dropping the
    imaginary parts with a warning that the fit's callers do not see, and the release was of the real parts.
    It is a one-line error naming the column, in every engine, with no value in it."""
    x = np.linspace(0, 1, 300)
    frame = pd.DataFrame({"x": x, "z": x + 1j * np.linspace(0.123456, 0.9, 300)})
    with pytest.raises(SynthDPError, match=r"^column 'z' holds complex numbers") as error:
        SmoothSynthesizer(epsilon=1.0, seed=1, engine=engine).fit(frame, bounds={"x": [0, 1], "z": [0, 1]})
    assert "0.123" not in str(error.value) and "\n" not in str(error.value)


def test_a_dask_dataframe_samples_back_with_the_column_types_a_pandas_one_does():
    """A nullable boolean and a categorical column fitted from a Dask DataFrame came back as text (its
    column types were not read: a sample gave "False"/"True" strings); they now come back as from the
    same pandas DataFrame (boolean, category), from the Dask frame's own dtypes (public metadata)."""
    dd = pytest.importorskip("dask.dataframe")
    frame = pd.DataFrame({"x": np.linspace(-3, 3, 300), "b": pd.array([True, False, None] * 100, dtype="boolean"),
                          "c": pd.Categorical(["u", "v", "w"] * 100)})
    schema = {"columns": {"x": {"type": "continuous", "bounds": [-4, 4]},
                          "b": {"type": "binary", "levels": ["False", "True"], "nullable": True},
                          "c": {"type": "categorical", "levels": ["u", "v", "w"]}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        samples = [SmoothSynthesizer(epsilon=1.0, seed=1).fit(data, schema=schema).sample(20, seed=2)
                   for data in (frame, dd.from_pandas(frame, npartitions=2))]
    assert samples[0].dtypes.to_dict() == samples[1].dtypes.to_dict()
    assert str(samples[1]["b"].dtype) == "boolean" and str(samples[1]["c"].dtype) == "category"


THOUSANDS = {"european": (";", ",", "."), "american-quoted": (",", ".", ","), "swiss": (",", ".", "'"),
             "space": ("\t", ",", " ")}


@pytest.mark.parametrize("dialect", THOUSANDS)
def test_a_csv_with_thousands_separators_gives_the_plain_release_in_every_engine(tmp_path, dialect):
    """Numbers written "1.234.567,89" (or quoted "1,234,567.89" in a comma-separated file) read with
    the thousands separator give each engine the seeded release of the same table written plainly."""
    sep, decimal, thousands = THOUSANDS[dialect]
    rng = np.random.default_rng(12)
    frame = pd.DataFrame({"a": rng.normal(0, 5_000, N_ROWS).round(2), "n": rng.integers(0, 3_000_000, N_ROWS),
                          "b": rng.uniform(-2, 3, N_ROWS).round(2)})
    plain = tmp_path / "plain.csv"
    frame.to_csv(plain, index=False)
    separated = tmp_path / "separated.csv"
    separated.write_text(thousands_text(frame, sep, decimal, thousands))
    assert thousands in separated.read_text().splitlines()[1]  # a cell of the first row holds one
    csv_format = CsvFormat(sep=sep, decimal=decimal, thousands=thousands)
    bounds = {"a": [-20_000, 20_000], "n": {"bounds": [0, 3_000_000], "type": "integer"}, "b": [-2, 3]}
    releases = []
    for engine, chunk_rows in (("numpy", None), ("numpy", CHUNK_ROWS), ("dask", CHUNK_ROWS)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a seed: expected here
            fitted = [SmoothSynthesizer(seed=5, engine=engine, chunk_rows=chunk_rows, n_candidates=300).fit(
                path, bounds=bounds, synthesize=False, csv_format=fmt).release_
                for path, fmt in ((plain, None), (separated, csv_format))]
        np.testing.assert_array_equal(fitted[1].noisy_moments, fitted[0].noisy_moments)  # the very same floats
        releases.append(fitted[1])
    for release in releases[1:]:
        np.testing.assert_allclose(release.noisy_moments, releases[0].noisy_moments, rtol=0, atol=1e-9)


@pytest.mark.parametrize("dialect", ["european", "american-quoted"])
def test_integers_past_64_bits_with_thousands_separators_are_read_alike_by_every_engine(tmp_path, dialect):
    """pandas leaves a column with a number past 2^64 as its text, separators and all: each engine
    then reads it as the float64 nearest to the number, as it does without separators."""
    sep, decimal, thousands = THOUSANDS[dialect]
    big = 2**64 + 2**40 + 7
    written = f"{big:,}".replace(",", thousands)
    written = f'"{written}"' if sep in written else written
    lines = [f"a{sep}b"] + [f"{i % 97}{sep}{i % 5}" for i in range(6_000)]
    lines[3_001] = f"{written}{sep}1"
    (tmp_path / "big.csv").write_text("\n".join(lines) + "\n")
    csv_format = CsvFormat(sep=sep, decimal=decimal, thousands=thousands)
    for engine, chunk_rows in (("numpy", None), ("numpy", 1_000), ("dask", 1_000)):
        sums = PrivateTable.open(tmp_path / "big.csv", engine, chunk_rows, csv_format=csv_format).row_sums(
            SumRequest(data_range=True))
        assert (sums["minimum"][0], sums["maximum"][0]) == (0.0, float(big)), (engine, chunk_rows)
