"""``synthdp generate`` on big Parquet and CSV files against a floor loop that only reads them.

    nice -n 5 python benchmarks/big_files.py                                   # 10^7 x 10, Parquet and CSV
    nice -n 5 python benchmarks/big_files.py --rows 2000000 10000000 --formats parquet csv
    python benchmarks/big_files.py --rows 200000 --out /tmp/big_files.md        # a quick check
    git archive HEAD synthdp | tar -x -C /tmp/base                               # an earlier synthdp ...
    nice -n 5 python benchmarks/big_files.py --baseline /tmp/base                # ... timed beside this one
    nice -n 5 python benchmarks/big_files.py --rows 2000000 10000000 --formats parquet --dask-workers 2 \
        --check-dask --baseline /tmp/base --out benchmarks/results/big_files_dask.md       # the Dask engine
    nice -n -10 python benchmarks/big_files.py --rows 10000000 100000000 --formats parquet csv \
        --check-prefix 1000000 --dir /tmp/bf --keep --commit HEAD \
        --out benchmarks/results/big_files_slope.md      # a commit's synthdp; the cost per row; in memory vs streamed

Does a streamed file's peak memory grow with its row count n? For each N in ``--rows`` it
writes an N x d float64 table (``--cols``, default 10) to ``--dir`` (default: a temporary folder,
deleted afterwards unless ``--keep``), block by block so that making it needs little memory:

* the data: three latent standard-normal factors times fixed loadings, plus noise, clipped
  to [-5, 5] (the kind of table of the issue); a seeded numpy generator, so every run writes
  the same table;
* Parquet: row groups of 10^6 rows (pyarrow's ParquetWriter, one ``write_table`` per group),
  full float64 (8 bytes per value, 0.8 GB at 10^7 x 10);
* CSV: the same rows to 5 decimals (pyarrow's CSV writer);
* public bounds: [-5, 5] for every column (the JSON file of ``--bounds``).

Then, each command in its own process under ``/usr/bin/time -v`` (wall time, peak resident
set; with psutil, the parent also samples the child's anonymous resident memory every 0.1 s):

* floor: Parquet, a loop of ``pyarrow.parquet.ParquetFile.read_row_group(i)`` summing two
  columns; CSV, a loop over ``pandas.read_csv(chunksize=...)`` chunks of synthdp's chunk size
  (2^22 values) summing two columns. Reading the file once is the least any pass can cost. It
  runs before and after synthdp's commands, and the faster counts: whether a file comes from
  the page cache or from disk changes its time several times over (10^8 x 10 Parquet: 4.1 s
  against 13.9 s), and synthdp, run right after a floor, reads what that floor left cached;
* synthdp: ``synthdp generate FILE -o out.csv --epsilon 1 --bounds b.json --rows 1000 --quiet
  --report r.json --data-timings`` (``python -m synthdp.cli``; plus ``--extra``; ``--data-timings`` only
  where the package has it, which puts the stages that read the rows in the report), and its report's stage times
  and how it read the file (its ``engine`` entry: a CSV file up to 256 MB is read in memory
  unless ``--extra "--chunk-rows 419430"`` streams it, in the chunks it would otherwise get);
* before the first timed synthdp command of each package, that command once untimed: numba
  compiles the compiled kernels (synthdp.stats.compiled, from 2 000 000 rows) into its cache
  the first time a package runs them, a one-off of a few seconds that is not a row's cost;
* with ``--baseline SRC``, the same command with the synthdp package of the source tree SRC
  (``PYTHONPATH=SRC``), e.g. the last commit's, to compare before and after a change;
* with ``--commit REV``, "synthdp" is the package of that commit of this repository
  (``git archive REV synthdp`` into a temporary folder, ``PYTHONPATH``), so that edits to the
  working tree during a long run change nothing; without it, the installed synthdp. The results
  name the commit (and say so if the working tree's synthdp/ differs from it);
* with ``--dask-workers W``, the synthdp commands run ``--engine dask`` on a local multi-process
  dask.distributed cluster started for each command: a scheduler and W workers
  (``python -m distributed.cli.dask_scheduler`` / ``dask_worker --no-nanny --nthreads T
  --memory-limit 0``, ``--dask-threads`` T, default 1; each in its own process, with the
  command's PYTHONPATH, in the work folder). Recorded per command: each worker's peak resident
  set (the kernel's VmHWM, read before the cluster stops) and peak anonymous memory (sampled
  every 0.1 s), beside the client process's (the command itself);
* with ``--check-dask`` (and ``--dask-workers``), after the timed commands: the same seeded
  fit (``SmoothSynthesizer(seed=1).fit(FILE, bounds=...)``: epsilon 1, as the command) through
  the numpy engine and through the Dask engine on a fresh cluster, and the largest absolute
  differences of what they release (noisy moments, clipped rows, one-way histograms, pairs'
  products: three passes over the file; the issue asks for 1e-12);
* with ``--check-prefix ROWS``, after the timed commands: the same seeded fit of the file's first
  ROWS rows as a DataFrame in memory (one block) and from a file of those rows (a Parquet file
  written from them; a CSV file of the same bytes), streamed in synthdp's chunks, and the largest
  absolute differences of what they release.

Writes benchmarks/results/big_files.md (``--out`` elsewhere): the command (with its ``nice``), the
date, the synthdp commit, then the table, and with two or more ``--rows`` the cost per row (the
slope of each command's time between the smallest and largest N against the floor's). Timings
vary by about 30 % on this shared 2-core machine: run it with ``nice`` and nothing else heavy;
where the kernel groups processes by session (``/proc/sys/kernel/sched_autogroup_enabled`` is
1), ``nice`` does not order them across sessions (docs/large-tables.md, "On timing runs here"). Not a unit test: timings
and memory belong in benchmarks.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results" / "big_files.md"
REPOSITORY = Path(__file__).resolve().parent.parent
ROW_GROUP = 10**6  # rows per Parquet row group, and per block written
FACTORS = 3
LIMIT = 5.0  # values clipped to [-LIMIT, LIMIT], the public bounds
SEED = 2024
TIME = "/usr/bin/time" if Path("/usr/bin/time").exists() else shutil.which("time")
SAMPLE_SECONDS = 0.1

FLOOR_PARQUET = """
import sys, pyarrow.parquet as pq
total = [0.0, 0.0]
with pq.ParquetFile(sys.argv[1]) as parquet:
    for group in range(parquet.num_row_groups):
        table = parquet.read_row_group(group)
        total[0] += table.column(0).to_numpy().sum()
        total[1] += table.column(1).to_numpy().sum()
        del table
print(total)
"""

CLUSTER_START_SECONDS = 120  # at most, for the scheduler's file and every worker

# the child scripts' comparison of two releases ``first`` and ``second``: largest differences into ``found``
COMPARE_RELEASES = """
for name in ("noisy_moments", "noisy_rows_clipped", "noisy_histograms", "noisy_scores"):
    a, b = getattr(first, name), getattr(second, name)
    if a is not None and b is not None:
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        found[name] = float(np.max(np.abs(a - b))) if a.shape == b.shape else float("inf")
"""

CHECK_DASK = """
import json, sys, warnings
import numpy as np
from synthdp import SmoothSynthesizer
path, bounds, scheduler = sys.argv[1], json.loads(open(sys.argv[2]).read()), sys.argv[3]
releases = []
for engine in ({}, {"engine": "dask", "scheduler": scheduler}):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        releases.append(SmoothSynthesizer(seed=1, **engine).fit(path, bounds=bounds).release_)
first, second = releases
found = {}
""" + COMPARE_RELEASES + """
found["same domain"] = first.domain == second.domain
print(json.dumps(found))
"""

CHECK_PREFIX = """
import itertools, json, sys, warnings
import numpy as np, pandas as pd
from synthdp import SmoothSynthesizer
path, bounds, rows, prefix = sys.argv[1], json.loads(open(sys.argv[2]).read()), int(sys.argv[3]), sys.argv[4]
if path.endswith(".parquet"):
    import pyarrow as pa, pyarrow.parquet as pq
    batches, taken = [], 0
    for batch in pq.ParquetFile(path).iter_batches(batch_size=min(rows, 2**20)):
        batches.append(batch.slice(0, rows - taken))
        taken += len(batches[-1])
        if taken >= rows:
            break
    table = pa.Table.from_batches(batches)
    pq.write_table(table, prefix, row_group_size=2**18)
    frame = table.to_pandas()
else:
    with open(path, "rb") as source, open(prefix, "wb") as out:
        out.writelines(itertools.islice(source, rows + 1))  # the header and the first rows, byte for byte
    frame = pd.read_csv(prefix, float_precision="round_trip")
releases = []
for source, options in ((frame, {}), (prefix, {"chunk_rows": 2**22 // frame.shape[1]})):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        releases.append(SmoothSynthesizer(seed=1, **options).fit(source, bounds=bounds))
found = {"streamed as": releases[1].engine_["input"]}
first, second = (synth.release_ for synth in releases)
""" + COMPARE_RELEASES + """
print(json.dumps(found))
"""

FLOOR_CSV = """
import sys, pandas as pd
total = [0.0, 0.0]
with pd.read_csv(sys.argv[1], chunksize=int(sys.argv[2])) as chunks:
    for chunk in chunks:
        total[0] += chunk.iloc[:, 0].sum()
        total[1] += chunk.iloc[:, 1].sum()
print(total)
"""


# --------------------------------------------------------------------------- data
def blocks(rows: int, cols: int, seed: int = SEED):
    """The table's rows, ROW_GROUP at a time: three latent factors plus noise, clipped to [-5, 5]."""
    rng = np.random.default_rng(seed)
    loadings = rng.normal(0.0, 1.0, (FACTORS, cols))
    scales = rng.uniform(0.3, 1.0, cols)
    for start in range(0, rows, ROW_GROUP):
        size = min(ROW_GROUP, rows - start)
        block = rng.standard_normal((size, FACTORS)) @ loadings + rng.normal(0.0, 1.0, (size, cols)) * scales
        yield np.clip(block, -LIMIT, LIMIT, out=block)


def names(cols: int) -> list[str]:
    return [f"x{j}" for j in range(cols)]


def write_parquet(path: Path, rows: int, cols: int) -> None:
    """The table as Parquet, one row group of ROW_GROUP rows per block (float64, no dictionary)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(name, pa.float64()) for name in names(cols)])
    with pq.ParquetWriter(path, schema, use_dictionary=False) as writer:
        for block in blocks(rows, cols):
            writer.write_table(pa.Table.from_arrays([pa.array(block[:, j]) for j in range(cols)], schema=schema),
                               row_group_size=ROW_GROUP)


def write_csv(path: Path, rows: int, cols: int) -> None:
    """The same rows as CSV, 5 decimals."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    schema = pa.schema([(name, pa.float64()) for name in names(cols)])
    with pacsv.CSVWriter(path, schema) as writer:
        for block in blocks(rows, cols):
            rounded = np.round(block, 5)
            writer.write_table(pa.Table.from_arrays([pa.array(rounded[:, j]) for j in range(cols)], schema=schema))


def write_bounds(path: Path, cols: int) -> None:
    path.write_text(json.dumps({name: [-LIMIT, LIMIT] for name in names(cols)}))


# ------------------------------------------------------------------------ measure
def anonymous_mb(pid: int) -> float:
    """The resident anonymous memory (RssAnon) of a process and its children, MB (Linux; NaN if unknown)."""
    try:
        import psutil

        processes = [psutil.Process(pid)]
        processes += processes[0].children(recursive=True)
    except Exception:
        return float("nan")
    total = 0.0
    for process in processes:
        try:
            status = Path(f"/proc/{process.pid}/status").read_text()
        except OSError:
            continue
        found = re.search(r"RssAnon:\s+(\d+) kB", status)
        total += int(found.group(1)) / 1024 if found else 0.0
    return total


def timed(command: list[str], cwd: Path, env: dict | None = None) -> dict:
    """Wall seconds, peak resident MB (``/usr/bin/time -v``) and peak anonymous MB (sampled) of a run."""
    prefix = [TIME, "-v"] if TIME else []
    for flag in ("-o", "--report"):  # the run's own outputs from the run before: synthdp refuses to replace
        if flag in command:          # them (an older baseline has no --overwrite), so they go first
            (cwd / command[command.index(flag) + 1]).unlink(missing_ok=True)
    start = time.perf_counter()
    process = subprocess.Popen(prefix + command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               cwd=cwd, env=env)
    peak_anonymous = [0.0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(SAMPLE_SECONDS):
            value = anonymous_mb(process.pid)
            if value == value:  # not NaN
                peak_anonymous[0] = max(peak_anonymous[0], value)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, stderr = process.communicate()
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"failed ({process.returncode}): {shlex.join(command)}\n{stderr[-3000:]}")
    found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr)
    peak = int(found.group(1)) / 1024 if found else float("nan")
    if not TIME:  # no /usr/bin/time: the children's peak seen by this process (includes earlier children)
        import resource

        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"seconds": seconds, "peak_mb": peak, "anonymous_mb": peak_anonymous[0] or float("nan")}


def process_peaks(pid: int) -> tuple[float, float]:
    """The peak resident set (VmHWM) and the current anonymous memory (RssAnon) of one process, MB."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return float("nan"), float("nan")
    peak = re.search(r"VmHWM:\s+(\d+) kB", status)
    anonymous = re.search(r"RssAnon:\s+(\d+) kB", status)
    return (int(peak.group(1)) / 1024 if peak else float("nan"),
            int(anonymous.group(1)) / 1024 if anonymous else float("nan"))


@contextmanager
def dask_cluster(workers: int, threads: int, workdir: Path, env: dict | None = None):
    """A local multi-process dask.distributed cluster: a scheduler and ``workers`` worker processes
    (no nanny, ``threads`` threads each, no memory limit), each its own process with ``env``.

    Yields ``(address, peaks)``: ``peaks()`` gives, per worker, its peak resident set (VmHWM)
    and the peak anonymous memory sampled every SAMPLE_SECONDS since the cluster started, MB.
    """
    scheduler_file = workdir / "scheduler.json"
    scheduler_file.unlink(missing_ok=True)
    log = (workdir / "cluster.log").open("w")
    python = [sys.executable, "-m"]
    started = [subprocess.Popen(python + ["distributed.cli.dask_scheduler", "--scheduler-file", str(scheduler_file),
                                          "--host", "127.0.0.1", "--port", "0", "--no-dashboard"],
                                cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT)]
    anonymous: dict[int, float] = {}
    done = threading.Event()
    try:
        deadline = time.monotonic() + CLUSTER_START_SECONDS
        while not scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        for number in range(workers):
            started.append(subprocess.Popen(
                python + ["distributed.cli.dask_worker", "--scheduler-file", str(scheduler_file), "--no-nanny",
                          "--nthreads", str(threads), "--memory-limit", "0", "--no-dashboard",
                          "--name", f"worker-{number}"],
                cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT))
        address = json.loads(scheduler_file.read_text())["address"]
        from distributed import Client

        with Client(address, timeout=CLUSTER_START_SECONDS) as client:
            client.wait_for_workers(workers, timeout=CLUSTER_START_SECONDS)
        worker_pids = [process.pid for process in started[1:]]

        def sample() -> None:
            while not done.wait(SAMPLE_SECONDS):
                for pid in worker_pids:
                    value = process_peaks(pid)[1]
                    if value == value:
                        anonymous[pid] = max(anonymous.get(pid, 0.0), value)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()

        def peaks() -> list[tuple[float, float]]:
            return [(process_peaks(pid)[0], anonymous.get(pid, float("nan"))) for pid in worker_pids]

        yield address, peaks
    finally:
        done.set()
        for process in reversed(started):
            process.terminate()
        for process in reversed(started):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()


def floor_command(path: Path, cols: int) -> list[str]:
    if path.suffix == ".parquet":
        return [sys.executable, "-c", FLOOR_PARQUET, str(path)]
    return [sys.executable, "-c", FLOOR_CSV, str(path), str(max(1, 2**22 // cols))]


def synthdp_command(path: Path, bounds: Path, workdir: Path, extra: str) -> list[str]:
    """The measured command (run in ``workdir``, outside the repository: ``python -m`` then imports
    the installed synthdp, or the one of PYTHONPATH)."""
    return [sys.executable, "-m", "synthdp.cli", "generate", str(path), "-o", str(workdir / "out.csv"),
            "--epsilon", "1", "--bounds", str(bounds), "--rows", "1000", "--quiet",
            "--report", str(workdir / "r.json"), *shlex.split(extra)]


DATA_PASS_STAGES = ("first pass", "moments", "marginals", "correlation")  # the stages that read the rows


def data_pass_seconds(report: Path) -> float | None:
    """The report's seconds in the stages that read the rows (DATA_PASS_STAGES), or None without a report."""
    try:
        stages = json.loads(report.read_text(encoding="utf-8")).get("timings_seconds", {})
    except (OSError, ValueError, AttributeError):
        return None
    return float(sum(stages.get(name, 0.0) for name in DATA_PASS_STAGES)) if isinstance(stages, dict) else None


def report_notes(report: Path) -> tuple[str, str, str]:
    """The report's input (how the engine read the file), stage times, as "name s, ...", and the
    LP's status (the tilt's, where it stopped)."""
    try:
        found = json.loads(report.read_text())
    except (OSError, ValueError):
        return "", "", ""
    engine = found.get("engine", {})
    stages = found.get("timings_seconds", {})
    read = str(engine.get("input", "")) if isinstance(engine, dict) else ""
    shown = ", ".join(f"{name} {value:.1f}" for name, value in stages.items() if isinstance(value, (int, float))) \
        if isinstance(stages, dict) else ""
    lp = found.get("lp", {})
    status = str(lp.get("status", "")) if isinstance(lp, dict) else ""
    return read, shown, status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, nargs="+", default=[10**7], help="row counts N (default 10^7)")
    parser.add_argument("--cols", type=int, default=10, help="columns d (default 10)")
    parser.add_argument("--formats", nargs="+", choices=("parquet", "csv"), default=["parquet", "csv"])
    parser.add_argument("--dir", type=Path, default=None, help="where the files are written (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the generated files (and reuse them next time)")
    parser.add_argument("--extra", default="", help="more options for synthdp generate, e.g. '--chunk-rows 100000'")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="also run the synthdp package of this source tree (PYTHONPATH), e.g. the last commit's")
    parser.add_argument("--commit", default=None,
                        help="run the synthdp of this commit (git archive into a temp dir), not the installed one")
    parser.add_argument("--skip-floor", action="store_true", help="run synthdp only")
    parser.add_argument("--dask-workers", type=int, default=0,
                        help="run synthdp with --engine dask on a local cluster of this many worker processes")
    parser.add_argument("--dask-threads", type=int, default=1, help="threads per Dask worker (default 1)")
    parser.add_argument("--check-dask", action="store_true",
                        help="with --dask-workers: compare the seeded release of the numpy and Dask engines")
    parser.add_argument("--check-prefix", type=int, default=0, metavar="ROWS",
                        help="also compare the seeded release of the file's first ROWS rows in memory and streamed")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results file (default benchmarks/results/big_files.md)")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="synthdp_big_", dir=args.dir)) if not args.keep else \
        (args.dir or Path(tempfile.gettempdir()) / "synthdp_big_files")
    workdir.mkdir(parents=True, exist_ok=True)
    bounds = workdir / f"bounds_{args.cols}.json"
    write_bounds(bounds, args.cols)
    source = Path(tempfile.mkdtemp(prefix="synthdp_src_")) if args.commit else None
    env = None
    if source is not None:
        archive = subprocess.run(["git", "-C", str(REPOSITORY), "archive", args.commit, "synthdp"],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
        env = {**os.environ, "PYTHONPATH": str(source)}
    measured = synthdp_version(workdir, env, args.commit)
    load_start = _load()
    print(f"synthdp: {measured}", flush=True)
    rows_out: list[str] = []
    seconds: dict[tuple[str, str], dict[int, float]] = {}  # (format, command) -> rows -> wall seconds
    passes: dict[tuple[str, str], dict[int, float]] = {}  # (format, command) -> rows -> the data pass's seconds
    checks: list[str] = []
    prefixes: list[str] = []
    statuses: list[str] = []
    warmed: set[str] = set()
    floor_runs: list[str] = []
    try:
        for rows in args.rows:
            for kind in args.formats:
                path = workdir / f"big_{rows}x{args.cols}.{kind}"
                if not path.exists():
                    print(f"writing {path} ...", flush=True)
                    temporary = path.with_name(path.name + ".tmp")
                    (write_parquet if kind == "parquet" else write_csv)(temporary, rows, args.cols)
                    temporary.rename(path)
                size = path.stat().st_size / 2**20
                results = {}
                if not args.skip_floor:
                    results["floor"] = timed(floor_command(path, args.cols), workdir)
                notes = {}
                runs = [("synthdp (baseline)", {**os.environ, "PYTHONPATH": str(args.baseline.resolve())})] \
                    if args.baseline is not None else []
                runs.append(("synthdp", env))
                for name, env in runs:
                    if name not in warmed:  # numba compiles the kernels once into its cache: not a row's cost
                        print(f"  warm-up: {name} on {path.name}, untimed", flush=True)
                        run_synthdp(args, path, bounds, workdir, env)
                        warmed.add(name)
                    results[name] = run_synthdp(args, path, bounds, workdir, env)
                    notes[name] = report_notes(workdir / "r.json")
                    data_pass = data_pass_seconds(workdir / "r.json")
                    if data_pass is not None:
                        passes.setdefault((kind, name), {})[rows] = data_pass
                if not args.skip_floor:  # again after synthdp: the faster of the two reads the page cache if either does
                    again = timed(floor_command(path, args.cols), workdir)
                    print(f"  {rows:,} {kind} floor: {results['floor']['seconds']:.1f} s before synthdp, "
                          f"{again['seconds']:.1f} s after", flush=True)
                    floor_runs.append(f"* {rows:,} rows, {kind}: {results['floor']['seconds']:.1f} s before, "
                                      f"{again['seconds']:.1f} s after")
                    if again["seconds"] < results["floor"]["seconds"]:
                        results["floor"] = again
                for name, result in results.items():
                    print(f"  {rows:,} {kind} {name}: {result['seconds']:.1f} s, {result['peak_mb']:.0f} MB peak, "
                          f"{result['anonymous_mb']:.0f} MB anonymous{worker_text(result)}", flush=True)
                floor = results.get("floor")
                for name, result in results.items():
                    seconds.setdefault((kind, name), {})[rows] = result["seconds"]
                    ratio = (f"{result['seconds'] / floor['seconds']:.1f}" if floor else "")
                    read, stages, status = notes.get(name, ("", "", ""))
                    if status:
                        statuses.append(f"* {rows:,} rows, {kind}, {name}: {status}")
                    label = f"{name}: {read}" if read else name
                    rows_out.append(f"| {rows:,} | {kind} | {size:,.0f} | {label} | {result['seconds']:.1f} | {ratio} | "
                                    f"{result['peak_mb']:,.0f} | {result['anonymous_mb']:,.0f} | "
                                    f"{worker_cell(result)} | {stages} |")
                if args.check_dask and args.dask_workers:
                    found = check_dask(args, path, bounds, workdir, env)
                    print(f"  {rows:,} {kind} numpy vs Dask: {found}", flush=True)
                    checks.append(f"* {rows:,} rows, {kind}: " + ", ".join(
                        f"{name} {value:.1e}" if isinstance(value, float) else f"{name}: {value}"
                        for name, value in found.items()))
                if args.check_prefix:
                    found = check_prefix(args.check_prefix, path, bounds, workdir, env)
                    print(f"  {rows:,} {kind} first {args.check_prefix:,} rows, in memory vs streamed: {found}",
                          flush=True)
                    prefixes.append(f"* {rows:,} rows, {kind}, its first {args.check_prefix:,} rows ("
                                    f"{found.pop('streamed as')}): " + ", ".join(
                                        f"{name} {value:.1e}" for name, value in found.items()))
                if not args.keep:
                    path.unlink()
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        if source is not None:
            shutil.rmtree(source, ignore_errors=True)
    command = f"nice -n {os.nice(0)} python benchmarks/big_files.py " + shlex.join(
        ["--rows", *map(str, args.rows), "--cols", str(args.cols), "--formats", *args.formats]
        + (["--extra", args.extra] if args.extra else []) + (["--baseline", str(args.baseline)] if args.baseline else [])
        + (["--dask-workers", str(args.dask_workers), "--dask-threads", str(args.dask_threads)]
           if args.dask_workers else []) + (["--check-dask"] if args.check_dask and args.dask_workers else [])
        + (["--check-prefix", str(args.check_prefix)] if args.check_prefix else [])
        + (["--commit", args.commit] if args.commit else []) + (["--skip-floor"] if args.skip_floor else [])
        + (["--dir", str(args.dir)] if args.dir else []) + (["--keep"] if args.keep else [])
        + (["--out", _shown_path(args.out)] if args.out != RESULTS else []))
    lines = ["# `synthdp generate` on big files against a floor that only reads them", "",
             f"`{command}` on {time.strftime('%Y-%m-%d %H:%M')} ({platform.machine()}, "
             f"{_cpus()} CPUs shared with other jobs, load average {load_start} at the start and {_load()} at the "
             f"end; Python {platform.python_version()}), synthdp {measured}.", "",
             "Data: three latent factors "
             f"plus noise, clipped to ±{LIMIT:g}, float64; Parquet in row groups of {ROW_GROUP:,} rows, CSV to 5 "
             "decimals; bounds [-5, 5] given. Floor: Parquet, `ParquetFile.read_row_group(i)` in a loop; "
             "CSV, `pandas.read_csv(chunksize=2**22 // d)`; each summing two columns. synthdp: `synthdp generate FILE "
             "-o out.csv --epsilon 1 --bounds b.json --rows 1000 --quiet --report r.json`"
             + (f" `{args.extra}`" if args.extra else "") + (f"; baseline: the synthdp of `{args.baseline}`"
                                                              if args.baseline else "") + ". Peak: maximum resident set (`/usr/bin/time -v`); "
             "anonymous: the largest RssAnon sampled every 0.1 s."
             + (f" Dask: `--engine dask --scheduler ADDRESS` on a local cluster started for each command, a "
                f"scheduler and {args.dask_workers} worker processes of {args.dask_threads} thread(s) each (no nanny, "
                "no memory limit); peak and anonymous MB are the client process's (the command); workers: each "
                "worker's peak resident set (VmHWM) / peak sampled RssAnon, MB." if args.dask_workers else ""), "",
             "| rows | format | file MB | command | wall s | / floor | peak MB | anonymous MB | workers MB | stages (s) |",
             "|---:|---|---:|---|---:|---:|---:|---:|---|---|", *rows_out, ""]
    if floor_runs:
        lines += ["The floor ran before and after synthdp's commands; the table and the slopes take the faster "
                  "(a file read from the page cache by one and from disk by the other differs several times over):",
                  "", *floor_runs, ""]
    lines += slope_lines(seconds, passes)
    if statuses:
        lines += ["The LP's status in each report (`lp.status`):", "", *statuses, ""]
    if checks:
        lines += ["The same seeded fit (`SmoothSynthesizer(seed=1).fit(FILE, bounds=...)`, epsilon 1) through the "
                  "numpy engine and the Dask engine (the same cluster set-up): largest absolute differences of the "
                  "released values.", "", *checks, ""]
    if prefixes:
        lines += ["The same seeded fit (`SmoothSynthesizer(seed=1)`, epsilon 1) of a file's first rows as a DataFrame "
                  "in memory (one block) and from a file of those rows, streamed in synthdp's chunks: largest "
                  "absolute differences of the released values.", "", *prefixes, ""]
    text = "\n".join(lines)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    return 0


def slope_lines(seconds: dict[tuple[str, str], dict[int, float]],
                passes: dict[tuple[str, str], dict[int, float]] | None = None) -> list[str]:
    """The cost per row: for each format measured at two or more row counts, the slope between the
    smallest and the largest (seconds per 10^8 rows) of each command's wall time and of its data
    pass (the report's stages that read the rows, DATA_PASS_STAGES), and their ratios to the
    floor's slope in the same run. The data pass's slope is the issue's measure: the wall time's
    also holds the fixed costs (the LP), which need not be the same at both sizes."""
    passes = passes or {}
    lines = []
    for kind in dict.fromkeys(kind for kind, _ in seconds):
        floor = seconds.get((kind, "floor"), {})
        if len(floor) < 2:
            continue
        low, high = min(floor), max(floor)
        floor_slope = (floor[high] - floor[low]) / (high - low) * 1e8
        for (k, name), times in seconds.items():
            if k != kind or name == "floor" or low not in times or high not in times:
                continue
            slope = (times[high] - times[low]) / (high - low) * 1e8
            data = passes.get((k, name), {})
            pass_cells = "| |"
            if low in data and high in data:
                pass_slope = (data[high] - data[low]) / (high - low) * 1e8
                pass_cells = f"| {pass_slope:.1f} | {pass_slope / floor_slope:.1f} |"
            lines.append(f"| {kind} | {name} | {low:,} → {high:,} | {floor_slope:.1f} | {slope:.1f} | "
                         f"{slope / floor_slope:.1f} {pass_cells}")
    if not lines:
        return []
    return ["Cost per row: the slope between the two row counts, in seconds per 10^8 rows, of the floor, of "
            "synthdp's whole command and of its data pass (the report's stages that read the rows: "
            + ", ".join(DATA_PASS_STAGES) + "), in the same run:", "",
            "| format | command | rows | floor | whole command | / floor | data pass | / floor |",
            "|---|---|---|---:|---:|---:|---:|---:|", *lines, ""]


@functools.cache
def _data_timings_flag(pythonpath: str | None) -> str:
    """``--data-timings`` where the package run asks for it to report the stages that read the rows (since
    they were left out of the report by default), else nothing (an older package reports them anyway)."""
    env = None if pythonpath is None else {**os.environ, "PYTHONPATH": pythonpath}
    shown = subprocess.run([sys.executable, "-m", "synthdp.cli", "generate", "--help"], capture_output=True,
                           text=True, env=env, cwd=tempfile.gettempdir())
    return "--data-timings" if "--data-timings" in shown.stdout else ""


def run_synthdp(args, path: Path, bounds: Path, workdir: Path, env: dict | None) -> dict:
    """The measured command, on a fresh local Dask cluster with ``--dask-workers``."""
    flag = _data_timings_flag(None if env is None else env.get("PYTHONPATH"))
    if not args.dask_workers:
        return timed(synthdp_command(path, bounds, workdir, f"{flag} {args.extra}"), workdir, env)
    with dask_cluster(args.dask_workers, args.dask_threads, workdir, env) as (address, peaks):
        extra = f"{flag} {args.extra} --engine dask --scheduler {address}"
        result = timed(synthdp_command(path, bounds, workdir, extra), workdir, env)
        result["workers"] = peaks()
    return result


def check_dask(args, path: Path, bounds: Path, workdir: Path, env: dict | None = None) -> dict:
    """The numpy and Dask engines' seeded releases of ``path``: their largest differences."""
    with dask_cluster(args.dask_workers, args.dask_threads, workdir, env) as (address, _):
        done = subprocess.run([sys.executable, "-c", CHECK_DASK, str(path), str(bounds), address], cwd=workdir,
                              capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"the numpy / Dask check failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def check_prefix(rows: int, path: Path, bounds: Path, workdir: Path, env: dict | None = None) -> dict:
    """The seeded releases of the first ``rows`` rows of ``path`` in memory and streamed: their largest differences."""
    prefix = workdir / f"prefix_{rows}{path.suffix}"
    try:
        done = subprocess.run([sys.executable, "-c", CHECK_PREFIX, str(path), str(bounds), str(rows), str(prefix)],
                              cwd=workdir, capture_output=True, text=True, env=env)
    finally:
        prefix.unlink(missing_ok=True)
    if done.returncode != 0:
        raise SystemExit(f"the in-memory / streamed check failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def synthdp_version(workdir: Path, env: dict | None, commit: str | None) -> str:
    """Which synthdp the commands import: the commit of ``--commit``, else the installed package's
    commit (git), flagged where its synthdp/ differs from that commit."""
    def git(*words: str, where: Path = REPOSITORY) -> str:
        done = subprocess.run(["git", "-C", str(where), *words], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    if commit:
        return f"commit {git('rev-parse', '--short', commit)} (`git archive {commit} synthdp`)"
    found = subprocess.run([sys.executable, "-c", "import synthdp, os; print(os.path.dirname(synthdp.__file__))"],
                           cwd=workdir, env=env, capture_output=True, text=True).stdout.strip()
    if not found:
        return "(not importable)"
    package = Path(found)
    head = git("rev-parse", "--short", "HEAD", where=package)
    if not head:
        return f"from {package} (not in a git repository)"
    changed = git("status", "--porcelain", "--", ".", where=package)
    return f"commit {head}" + (" with uncommitted changes to synthdp/" if changed else "") + f" ({package})"


def _shown_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPOSITORY))
    except ValueError:
        return str(path)


def worker_text(result: dict) -> str:
    return f", workers {worker_cell(result)} MB (peak / anonymous)" if result.get("workers") else ""


def worker_cell(result: dict) -> str:
    return ", ".join(f"{peak:,.0f} / {anonymous:,.0f}" for peak, anonymous in result.get("workers", []))


def _load() -> str:
    """The machine's load average over the last minute (what else ran beside the benchmark)."""
    return f"{os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else "?"


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


if __name__ == "__main__":
    sys.exit(main())
