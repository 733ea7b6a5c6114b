"""Run one peer synthesizer on a table of bin codes (runs INSIDE a peers virtualenv).

This script is the far side of :func:`experiments.baselines.binned_peer`. It does not
import synthdp (the peers' environments do not have it) and only sees bin codes: the
caller bins the real table on equal-width bins of the PUBLIC bounds, writes the codes
(integers 0..bins-1, one column per attribute) to CSV, and decodes the synthetic codes
uniformly within their bins afterwards.

Libraries and algorithms:

* ``smartnoise`` (smartnoise-synth 1.0.8, in ``/opt/peers-venv``): ``MSTSynthesizer`` and
  ``AIMSynthesizer``. Each column gets a ``BinTransformer(bins=B, lower=0, upper=B)`` on
  the codes, which declares the public domain {0..B-1} (no budget is spent on
  preprocessing, and the domain does not depend on which bins are occupied) and maps code
  k to itself; its inverse returns the bin midpoint k + 0.5, which we floor back to k.
* ``opendp`` (OpenDP 0.16 ``dp.mbi``, in ``/opt/peers-venv-opendp``): ``dp.mbi.MST()`` and
  ``dp.mbi.AIM()`` through a polars ``Context`` with ``keys = {column: 0..B-1}`` for every
  column (public domain; OpenDP then requires delta = 0 inside the table release, so the
  release is made under zCDP with the rho that converts to the target (eps, delta)).

Privacy unit (``--unit``):

* ``add-remove`` (default; the peers' native unit and the setting of issue 7's numbers):
  neighbouring tables differ by adding or removing one row. smartnoise-synth MST/AIM
  convert (eps, delta) to a zCDP rho with OpenDP's conversion and calibrate to count
  sensitivity 1. Note smartnoise MST uses the exact row count n as ``known_total``
  (harmless when n is public, as in synthdp's replace-one model).
* ``replace-one`` (synthdp's unit): one row replaced. Replace-one is at most two
  add/remove steps, and rho-zCDP under add/remove gives 4 rho under distance 2 (group
  privacy for zCDP), so for smartnoise we calibrate to rho / 4 (sound, possibly loose);
  for OpenDP we declare ``dp.unit_of(contributions=2)`` and let OpenDP calibrate.
* ``contributions=K`` (synthdp's ``--privacy-unit`` with ``--max-rows-per-unit K``): neighbouring
  tables differ by adding or removing one person's rows, at most K after the caller's bounding
  (a random K rows per person, as synthdp bounds). OpenDP: ``dp.unit_of(contributions=K)``;
  smartnoise: rho / K^2 (zCDP group privacy at distance K; smartnoise MST's exact row count as
  ``known_total`` is then a leak, so experiments use OpenDP for this unit).

Mixed tables (``--sizes``): each column may declare its own public domain size (e.g. a
categorical column's levels, coded 0..L-1, beside numeric columns on ``--bins`` bins); the
smartnoise transformers and OpenDP keys then use that size. Without it every column has
``--bins`` codes (the numeric tables).

Noise: both libraries draw their Gaussian noise from OpenDP's samplers (not seedable);
their selection steps use numpy's global generator, which ``--seed`` seeds. A run is
therefore NOT reproducible; ``--seed`` only fixes the non-noise randomness.

Usage (normally called by experiments/baselines.py)::

    /opt/peers-venv/bin/python experiments/peers/run_peer.py --library smartnoise \
        --algorithm mst --codes codes.csv --bins 16 --epsilon 1 --delta 1e-10 \
        --rows 2126 --out synth_codes.csv --info info.json
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import time
from importlib import metadata

import numpy as np
import pandas as pd


def zcdp_rho(epsilon: float, delta: float) -> float:
    """Largest rho whose zCDP guarantee converts to (epsilon, delta)-DP (OpenDP's conversion).

    The same computation as snsynth.utils.cdp_rho: binary search over the scale of a
    sensitivity-1 Gaussian mechanism whose zCDP -> approx-DP conversion meets the target.
    """
    import opendp.prelude as dp

    features = ["contrib", "floating-point"]
    if tuple(int(p) for p in metadata.version("opendp").split(".")[:2]) >= (0, 16):
        features = ["contrib", "idealized-numerics"]  # the new name of "floating-point"
    dp.enable_features(*features)
    domain, metric = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)

    def make(scale):
        gauss = dp.m.make_gaussian(domain, metric, scale)
        return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(gauss), delta=delta)

    scale = dp.binary_search_param(make, d_in=1.0, d_out=(epsilon, delta))
    return float(dp.m.make_gaussian(domain, metric, scale).map(d_in=1.0))


def column_sizes(args, codes: pd.DataFrame) -> list[int]:
    """The public domain size of each column: ``--sizes`` if given, else ``--bins`` for every column."""
    if getattr(args, "sizes", None) is None:
        return [args.bins] * codes.shape[1]
    sizes = [int(size) for size in args.sizes.split(",")]
    if len(sizes) != codes.shape[1] or min(sizes) < 2:
        raise SystemExit(f"--sizes needs {codes.shape[1]} integers >= 2, one per column")
    return sizes


def unit_distance(unit: str) -> int:
    """Rows in which neighbouring tables differ: 1 (add-remove), 2 (replace-one), K (contributions=K)."""
    if unit.startswith("contributions="):
        return int(unit.split("=", 1)[1])
    return 2 if unit == "replace-one" else 1


def _unit(text: str) -> str:
    if text in ("add-remove", "replace-one") or (text.startswith("contributions=") and text.split("=", 1)[1].isdigit()
                                                  and int(text.split("=", 1)[1]) >= 1):
        return text
    raise argparse.ArgumentTypeError("unit must be add-remove, replace-one or contributions=K")


def run_smartnoise(codes: pd.DataFrame, args) -> tuple[np.ndarray, dict]:
    import snsynth.aim.aim as aim_module
    import snsynth.mst.mst as mst_module
    from snsynth.transform import BinTransformer
    from snsynth.transform.table import TableTransformer

    distance = unit_distance(args.unit)
    if distance > 1:  # group privacy for zCDP: distance k costs k^2 rho
        original = mst_module.cdp_rho
        mst_module.cdp_rho = aim_module.cdp_rho = (
            lambda eps, delta, *a, **k: original(eps, delta, *a, **k) / float(distance**2))
    sizes = column_sizes(args, codes)
    transformer = TableTransformer([BinTransformer(bins=size, lower=0, upper=size) for size in sizes])
    if args.algorithm == "mst":
        synth = mst_module.MSTSynthesizer(epsilon=args.epsilon, delta=args.delta)
    else:
        kwargs = {} if args.aim_rounds is None else {"rounds": args.aim_rounds}
        synth = aim_module.AIMSynthesizer(epsilon=args.epsilon, delta=args.delta, **kwargs)
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):  # AIM prints diagnostics
        synth.fit(codes, transformer=transformer, preprocessor_eps=0.0)
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    rows = synth.sample(args.rows)
    sample_seconds = time.perf_counter() - start
    midpoints = np.asarray(rows, dtype=float).reshape(args.rows, codes.shape[1])
    out = np.clip(np.floor(midpoints), 0, np.asarray(sizes) - 1).astype(int)
    info = {
        "library": "smartnoise-synth " + metadata.version("smartnoise-synth"),
        "opendp": metadata.version("opendp"),
        "mbi": metadata.version("mbi"),
        "rho": float(getattr(synth, "rho", float("nan"))) if args.algorithm == "aim" else None,
        "fit_seconds": fit_seconds,
        "sample_seconds": sample_seconds,
    }
    return out, info


def _shrink_mbi_splits(factor: float = 1e-9) -> None:
    """Work around opendp/opendp#2789: make dp.mbi's internal budget splits slightly smaller."""
    import importlib

    def conservative_prior(x):
        return np.nextafter(x, -np.inf) * (1.0 - factor)

    for name in ("_mst", "_aim", "_table", "_utilities", "_sequential", "_fixed"):
        module = importlib.import_module(f"opendp.extras.mbi.{name}")
        if hasattr(module, "prior"):
            module.prior = conservative_prior


def run_opendp(codes: pd.DataFrame, args) -> tuple[np.ndarray, dict]:
    import opendp.prelude as dp
    import polars as pl

    dp.enable_features("contrib")
    rho = zcdp_rho(args.epsilon, args.delta)
    contributions = unit_distance(args.unit)
    frame = pl.from_pandas(codes.astype("int64"))
    keys = {column: list(range(size)) for column, size in zip(codes.columns, column_sizes(args, codes))}
    algorithm = dp.mbi.MST() if args.algorithm == "mst" else dp.mbi.AIM()
    start = time.perf_counter()
    # OpenDP 0.16's MST and AIM can fail their own budget check by a few ulps (open bug
    # opendp/opendp#2789: "insufficient budget for query: 0.000662...2002 > ...1997"): the
    # selection budget is split into d - 1 shares of prior(d_out / (d - 1)), and their sum,
    # accumulated with upward rounding, exceeds d_out. We make every internal split
    # smaller by a relative 1e-9 (``prior`` in the mbi modules). That only lowers the
    # budget of each step, and OpenDP still checks the composed total against rho, so the
    # release stays within the target (eps, delta).
    _shrink_mbi_splits()
    context = dp.Context.compositor(
        data=frame.lazy(),
        privacy_unit=dp.unit_of(contributions=contributions),
        privacy_loss=dp.loss_of(rho=rho),
        split_evenly_over=1,
    )
    table = context.query().select(list(codes.columns)).contingency_table(keys=keys, algorithm=algorithm).release()
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    # dp.mbi always adds a null category to every keyed column (it cannot know the column
    # has no nulls), and the noisy model gives it some mass. Our tables have no nulls, so we
    # condition on "no null in the row": draw rows in batches and keep complete rows only.
    # That is post-processing of the released model (no privacy cost).
    kept, drawn, null_cells = [], 0, 0
    while sum(len(block) for block in kept) < args.rows:
        if drawn > 200 * args.rows:
            raise RuntimeError("dp.mbi's model puts almost all mass on null values")
        batch = max(args.rows, 2 * (args.rows - sum(len(block) for block in kept)))
        synthetic = table.synthesize(rows=batch, method="sample").to_pandas()[list(codes.columns)]
        drawn += len(synthetic)
        null_cells += int(synthetic.isna().to_numpy().sum())
        kept.append(synthetic.dropna().to_numpy())
    out = np.concatenate(kept)[: args.rows].astype(int)
    sample_seconds = time.perf_counter() - start
    info = {
        "library": "opendp " + metadata.version("opendp") + " dp.mbi",
        "mbi": metadata.version("mbi"),
        "polars": metadata.version("polars"),
        "rho": rho,
        "patch": "mbi budget splits shrunk by 1e-9 (opendp/opendp#2789)",
        "privacy_unit": f"contributions={contributions}",
        "rows_drawn": drawn,
        "null_cell_fraction": null_cells / (drawn * codes.shape[1]),
        "fit_seconds": fit_seconds,
        "sample_seconds": sample_seconds,
    }
    return out, info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", choices=("smartnoise", "opendp"), required=True)
    parser.add_argument("--algorithm", choices=("mst", "aim"), required=True)
    parser.add_argument("--codes", required=True, help="CSV of integer bin codes 0..bins-1")
    parser.add_argument("--bins", type=int, required=True)
    parser.add_argument("--epsilon", type=float, required=True)
    parser.add_argument("--delta", type=float, required=True)
    parser.add_argument("--sizes", default=None,
                        help="comma-separated domain size per column, e.g. the levels of a categorical column "
                             "(default: --bins for every column); codes of column j lie in 0..size_j-1")
    parser.add_argument("--unit", type=_unit, default="add-remove",
                        help="add-remove, replace-one or contributions=K (one person's <= K rows added or removed)")
    parser.add_argument("--rows", type=int, required=True, help="synthetic rows to sample")
    parser.add_argument("--seed", type=int, default=None, help="seeds numpy's global generator only (not the noise)")
    parser.add_argument("--aim-rounds", type=int, default=None, help="AIM rounds (smartnoise default 16 d)")
    parser.add_argument("--out", required=True, help="CSV of synthetic bin codes")
    parser.add_argument("--info", required=True, help="JSON with versions and timings")
    args = parser.parse_args(argv)
    if not (args.delta > 0):
        parser.error("MST/AIM need delta > 0 (they are zCDP mechanisms)")
    if args.seed is not None:
        np.random.seed(args.seed)
    codes = pd.read_csv(args.codes)
    if not ((codes.to_numpy() >= 0).all() and (codes.to_numpy() < np.asarray(column_sizes(args, codes))).all()):
        raise SystemExit("codes must lie in 0..bins-1 (0..size-1 with --sizes)")
    runner = run_smartnoise if args.library == "smartnoise" else run_opendp
    out, info = runner(codes, args)
    pd.DataFrame(out, columns=codes.columns).to_csv(args.out, index=False)
    info.update({"algorithm": args.algorithm, "unit": args.unit, "epsilon": args.epsilon, "delta": args.delta,
                 "bins": args.bins, "sizes": args.sizes, "rows": args.rows, "python": sys.version.split()[0]})
    with open(args.info, "w") as handle:
        json.dump(info, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
