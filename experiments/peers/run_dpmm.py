"""Run dpmm (SAS's DP marginal models: MST, AIM, PrivBayes) on a table (runs INSIDE the dpmm venv).

This script is the far side of :func:`experiments.baselines.dpmm_peer`. It does not import
synthdp (the dpmm virtualenv, ``/opt/peers-venv-dpmm``, does not have it). Unlike
``run_peer.py`` it gets the raw values, because dpmm discretises numeric columns itself
(DP PrivTree); the caller only renames the columns and codes categorical columns.

Input: a CSV (numeric columns, and categorical columns as integer codes or strings) and a
JSON public domain, ``{"columns": {name: spec}}`` (or just ``{name: spec}``) where a spec is

* ``[lo, hi]`` or ``{"lower": lo, "upper": hi}``: a numeric column with public bounds;
* ``{"categories": [...]}`` (or ``{"levels": [...]}``): a categorical column and its public levels.

Every column needs a spec. Numeric columns are read as float64 (PrivTree splits the public
interval); categorical values are compared as text and must be among the levels (the caller
maps anything else to a level, e.g. synthdp's "other"). Missing values are refused.

Public domain, and what dpmm would otherwise read from the data
---------------------------------------------------------------
dpmm (0.1.9) TAKES public bounds and levels: ``pipeline.fit(df, domain)`` with
``{"lower", "upper"}`` per numeric column (PrivTree then spends its whole share on the tree:
``epsilon / (1 + not has_bounds)``) and ``{"categories"}`` per categorical column. No budget
is spent on bounds, and no bounds or levels are read from the data. Its ``TableBinner.fit``
does however make some data-dependent decisions without budget, which this script removes by
replacing ``TableBinner.fit`` with :class:`PublicTableBinner` (the same code minus these):

* a column with a single distinct value in the data is dropped and its value reproduced
  ("static column": reveals the value and that no row differs);
* a column is numeric only if it has more than one distinct value in the data;
* a column with some missing values gets a NaN indicator, and the gaps are filled with a value
  sampled from the data.

:class:`PublicTableBinner` types columns by the public domain only, keeps every column, and
refuses missing values. For a table with no constant column and no missing value it builds
the same binners as dpmm's own ``TableBinner``. What remains, and is recorded in the info:

* PrivTree's split threshold is ``theta = n / n_bins`` with the exact row count n, and
  ``n_bins="auto"`` (dpmm's default) is ``ceil(max(5, 2 n^(1/3) sigmoid(eps_col)))``, also from
  the exact n; PrivBayes's exponential mechanism calibrates to a sensitivity that is a function
  of the exact n. Harmless when n is public (synthdp's replace-one model); a small leak under
  add/remove (as smartnoise MST's ``known_total``, see README).
* **PrivBayes's structure selection is not DP as calibrated** (dpmm 0.1.9,
  ``dpmm.models.priv_bayes``): its exponential mechanism scores candidate parent sets with a
  *normalised* mutual information I/sqrt(H(X) H(Pi)) in bits, but uses the sensitivity bound of
  the PrivBayes paper for the plain mutual information (in nats, binary attributes):
  (2/n) log((n+1)/2) + (1-1/n) log(1+2/(n-1)), 0.023 for n = 569. One row can move the
  normalised score by up to 1 (e.g. two binary columns with a single row at (1, 1): the score is
  1; remove or replace that row: 0). ``--privbayes-selection sound`` recalibrates the mechanism
  to sensitivity 1 (the score lies in [0, 1]), which is DP but makes the selection nearly
  uniform at small epsilon; the default ``published`` runs dpmm as shipped and says so.

Budget: the same TOTAL (epsilon, delta) as every other peer
-----------------------------------------------------------
dpmm's pipeline takes the model's ``epsilon``/``delta`` and, on top, ``proc_epsilon`` for
PrivTree (default 0.1; split evenly over the numeric columns, pure epsilon-DP, Laplace noise).
Here the total is split: ``eps_proc = proc_share * epsilon`` (``--proc-share``, default 0.1,
dpmm's own 0.1 : 1 ratio taken out of the total) and ``eps_gen = epsilon - eps_proc`` with all
of ``delta``; basic composition of (eps_proc, 0)-DP and (eps_gen, delta)-DP gives (epsilon,
delta). Without numeric columns all of epsilon goes to the model.

* MST and AIM convert (eps_gen, delta) to zCDP with ``rho = cdp_rho(eps_gen, delta)``
  (Canonne-Kamath-Steinke) and spend rho in Gaussian measurements and exponential-mechanism
  selections (epsilon_em^2/8 each).
* PrivBayes spends eps_gen/2 (pure) on the structure (d-1 exponential mechanisms of
  eps_gen/(2d) each) and ``rho = cdp_rho(eps_gen/2, delta)`` on the measured marginals.

Privacy unit (``--unit``)
-------------------------
dpmm's mechanisms are calibrated to add/remove-one neighbours (counts of sensitivity 1).

* ``add-remove`` (default): the budget above is passed as is.
* ``replace-one`` (synthdp's unit): replacing a row is two add/remove steps. Group privacy at
  distance 2: eps-DP becomes 2 eps-DP, rho-zCDP becomes 4 rho-zCDP. So PrivTree gets
  ``eps_proc / 2``; MST/AIM get the epsilon whose ``cdp_rho`` is ``cdp_rho(eps_gen, delta) / 4``
  (computed with dpmm's own ``cdp_eps``, shrunk by 1e-9 and checked with its ``cdp_rho``), so
  their 4 rho under replace-one is exactly the rho of (eps_gen, delta). PrivBayes gets the
  epsilon e' with ``cdp_rho(e'/2, delta) = cdp_rho(eps_gen/2, delta) / 4``; then its pure
  selection part e'/2 <= eps_gen/4 (checked; it holds since the conversion is concave), which
  is at most eps_gen/2 under replace-one. Total (epsilon, delta) under replace-one. This zCDP
  route is tighter than converting the target with the (eps, delta) group-privacy rule
  ((eps/2, delta/(1+e^(eps/2))) under add/remove gives (eps, delta) under replace-one).

Randomness: dpmm draws its noise from OpenDP (not seedable); ``--seed`` seeds dpmm's
RandomState (its selections and sampling) and numpy's global generator. A run is NOT
reproducible.

Usage (normally called by experiments/baselines.py)::

    /opt/peers-venv-dpmm/bin/python experiments/peers/run_dpmm.py --algorithm mst \
        --data data.csv --domain domain.json --epsilon 1 --delta 1e-10 --rows 569 \
        --out synth.csv --info info.json
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import sys
import time
from importlib import metadata

import numpy as np
import pandas as pd

ALGORITHMS = ("mst", "aim", "privbayes")
SHRINK = 1e-9  # relative margin when inverting dpmm's zCDP conversion


def read_domain(path: str) -> tuple[dict, list[str], list[str]]:
    """The public domain in dpmm's format, the numeric columns and the categorical columns."""
    with open(path) as handle:
        content = json.load(handle)
    specs = content.get("columns", content) if isinstance(content, dict) else None
    if not isinstance(specs, dict) or not specs:
        raise SystemExit("--domain must hold {\"columns\": {name: [lo, hi] | {\"categories\": [...]}}}")
    domain, numeric, categorical = {}, [], []
    for name, spec in specs.items():
        if isinstance(spec, (list, tuple)) and len(spec) == 2:
            spec = {"lower": spec[0], "upper": spec[1]}
        if isinstance(spec, dict) and "lower" in spec and "upper" in spec:
            lower, upper = float(spec["lower"]), float(spec["upper"])
            if not (np.isfinite(lower) and np.isfinite(upper) and upper > lower):
                raise SystemExit(f"column '{name}': bounds must be finite with upper > lower")
            domain[name] = {"lower": lower, "upper": upper}
            numeric.append(name)
        elif isinstance(spec, dict) and ("categories" in spec or "levels" in spec):
            levels = [str(level) for level in spec.get("categories", spec.get("levels"))]
            if len(levels) < 1 or len(set(levels)) != len(levels):
                raise SystemExit(f"column '{name}': categories must be a non-empty list without repeats")
            domain[name] = {"categories": levels}
            categorical.append(name)
        else:
            raise SystemExit(f"column '{name}': expected [lo, hi], {{lower, upper}} or {{categories: [...]}}")
    return domain, numeric, categorical


def read_table(path: str, domain: dict, numeric: list[str], categorical: list[str]) -> pd.DataFrame:
    frame = pd.read_csv(path, dtype={name: str for name in categorical}, keep_default_na=False,
                        na_values={name: [""] for name in numeric})
    missing = [name for name in domain if name not in frame.columns]
    extra = [name for name in frame.columns if name not in domain]
    if missing or extra:
        raise SystemExit(f"the CSV and the domain must have the same columns (missing {missing}, extra {extra})")
    for name in numeric:
        frame[name] = pd.to_numeric(frame[name], errors="raise").astype("float64")
        if not np.isfinite(frame[name].to_numpy()).all():
            raise SystemExit(f"column '{name}' has missing or infinite values (refused: see the docstring)")
    for name in categorical:
        outside = ~frame[name].isin(domain[name]["categories"])
        if outside.any():
            raise SystemExit(f"column '{name}' has values outside its public categories; map them first")
    return frame


def public_table_binner():
    """dpmm's TableBinner whose ``fit`` types columns by the public domain only (see the docstring)."""
    from dpmm.processing import BINNER_DICT
    from dpmm.processing.table_binner import TableBinner
    from sklearn.preprocessing import OrdinalEncoder

    class PublicTableBinner(TableBinner):
        def fit(self, df: pd.DataFrame, public: bool = False) -> None:
            self.dtypes = df.dtypes
            self.binners, self.cat_encoders, self.bin_domain = {}, {}, {}
            self.nan_columns, self.static_columns, self.categories, self.has_nan = {}, {}, {}, {}
            self.col_order = df.columns.tolist()
            if df.isna().to_numpy().any():
                raise ValueError("missing values are refused (dpmm would fill them from the data)")
            self.num_cols = [col for col in df.columns if "lower" in self.domain.get(col, {})]
            self.cat_cols = [col for col in df.columns if col not in self.num_cols]
            epsilon = None if public else self.binner_settings.get("epsilon", None)
            if epsilon is not None and self.num_cols:
                epsilon /= len(self.num_cols)  # as dpmm: the share split evenly over the numeric columns
            for col in self.cat_cols:
                categories = list(self.domain[col]["categories"])  # public, in the given order
                self.bin_domain[col] = len(categories)
                self.categories[col] = categories
                self.cat_encoders[col] = OrdinalEncoder(categories=[categories])
                self.cat_encoders[col].fit(df[col].to_frame())
            for col in self.num_cols:
                settings = dict(self.binner_settings)
                settings["epsilon"] = epsilon
                settings.update(self.domain[col])  # lower, upper: public
                self.binners[col] = BINNER_DICT[self.binner_type](**settings, rnd=self.random_state)
                if self.structural_zeros and col in self.structural_zeros:
                    self.binners[col].set_structural_zeros(self.structural_zeros[col])
                self.binners[col].fit(df[col].to_numpy())
                self.bin_domain[col] = self.binners[col].bin_domain
            self.is_fit = True

    return PublicTableBinner


def sound_privbayes_selection() -> None:
    """Recalibrate dpmm PrivBayes's exponential mechanism to sensitivity 1 (its score is in [0, 1])."""
    from dpmm.models import priv_bayes

    def compute_delta(self, data):
        return 1.0 / (self.epsilon / len(data.domain.attrs))  # sensitivity / per-node epsilon

    priv_bayes.ExponentialMechanism.compute_delta = compute_delta


def budget(args, has_numeric: bool) -> dict:
    """Split the total (epsilon, delta) and convert it to the unit; what dpmm is given."""
    from dpmm.models.base.mechanisms.cdp2adp import cdp_eps, cdp_rho

    share = args.proc_share if has_numeric else 0.0
    eps_proc = share * args.epsilon
    eps_gen = args.epsilon - eps_proc
    # The zCDP rho dpmm derives from the epsilon it is given: MST/AIM cdp_rho(e, delta), PrivBayes cdp_rho(e/2, delta).
    half = 2.0 if args.algorithm == "privbayes" else 1.0
    rho_target = cdp_rho(eps_gen / half, args.delta)
    if args.unit == "replace-one":
        proc_passed = eps_proc / 2.0
        rho_target /= 4.0
        gen_passed = half * cdp_eps(rho_target * (1.0 - SHRINK), args.delta)
        if args.algorithm == "privbayes" and not gen_passed / 2.0 <= eps_gen / 4.0:
            raise RuntimeError("PrivBayes's selection share would exceed eps_gen/4 under replace-one")
    else:
        proc_passed, gen_passed = eps_proc, eps_gen
    rho_passed = cdp_rho(gen_passed / half, args.delta)
    if args.unit == "replace-one" and not rho_passed <= rho_target:
        raise RuntimeError(f"inverting cdp_rho failed: {rho_passed} > {rho_target}")
    return {
        "total": {"epsilon": args.epsilon, "delta": args.delta, "unit": args.unit},
        "proc_share": share,
        "eps_proc_total": eps_proc,
        "eps_gen_total": eps_gen,
        "proc_epsilon_passed": proc_passed if has_numeric else None,
        "epsilon_passed": gen_passed,
        "delta_passed": args.delta,
        "rho_passed": rho_passed,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--algorithm", choices=ALGORITHMS, required=True)
    parser.add_argument("--data", required=True, help="CSV of the real table (raw numeric values, categorical levels)")
    parser.add_argument("--domain", required=True, help="JSON public domain: bounds per numeric column, "
                                                        "categories per categorical column")
    parser.add_argument("--epsilon", type=float, required=True, help="TOTAL epsilon (discretisation included)")
    parser.add_argument("--delta", type=float, required=True, help="TOTAL delta (> 0)")
    parser.add_argument("--unit", choices=("add-remove", "replace-one"), default="add-remove")
    parser.add_argument("--rows", type=int, required=True, help="synthetic rows to sample")
    parser.add_argument("--seed", type=int, default=None, help="seeds dpmm's RandomState (not the OpenDP noise)")
    parser.add_argument("--proc-share", type=float, default=0.1,
                        help="share of the total epsilon for PrivTree's discretisation (default 0.1)")
    parser.add_argument("--bins", default="auto", help="PrivTree's bins per numeric column: auto (dpmm's) or N")
    parser.add_argument("--privbayes-selection", choices=("published", "sound"), default="published",
                        help="published: dpmm as shipped (mis-calibrated, see docstring); sound: sensitivity 1")
    parser.add_argument("--aim-rounds", type=int, default=None, help="AIM rounds (dpmm's default 16 d)")
    parser.add_argument("--n-jobs", type=int, default=1, help="dpmm's worker processes (default 1)")
    parser.add_argument("--out", required=True, help="CSV of synthetic rows")
    parser.add_argument("--info", required=True, help="JSON with versions, budget, timings and notes")
    args = parser.parse_args(argv)
    if not args.epsilon > 0 or not 0 < args.delta < 1:
        parser.error("need epsilon > 0 and 0 < delta < 1 (dpmm's models are zCDP mechanisms)")
    if not 0 < args.proc_share < 1:
        parser.error("--proc-share must lie in (0, 1)")
    bins = args.bins if args.bins == "auto" else int(args.bins)
    if bins != "auto" and bins < 2:
        parser.error("--bins must be auto or an integer >= 2")

    logging.getLogger("dpmm").setLevel(logging.ERROR)
    from dpmm.pipelines import AIMPipeline, MSTPipeline, PrivBayesPipeline

    domain, numeric, categorical = read_domain(args.domain)
    frame = read_table(args.data, domain, numeric, categorical)
    if args.seed is not None:
        np.random.seed(args.seed)
    given = budget(args, bool(numeric))
    notes = []
    if args.algorithm == "privbayes":
        if args.privbayes_selection == "sound":
            sound_privbayes_selection()
            notes.append("PrivBayes selection recalibrated to sensitivity 1 (sound; --privbayes-selection sound)")
        else:
            notes.append("PrivBayes selection as shipped: NOT DP as calibrated (normalised MI scored with the "
                         "plain-MI sensitivity bound); see run_dpmm.py")
            notes.append("PrivBayes's exponential mechanism uses the exact n in its sensitivity")
    if numeric:
        notes.append("PrivTree threshold theta = n / n_bins uses the exact n" +
                     ("; n_bins='auto' is computed from the exact n" if bins == "auto" else ""))

    pipeline_class = {"mst": MSTPipeline, "aim": AIMPipeline, "privbayes": PrivBayesPipeline}[args.algorithm]
    gen_kwargs = {"rounds": args.aim_rounds} if args.algorithm == "aim" and args.aim_rounds is not None else {}
    pipeline = pipeline_class(epsilon=given["epsilon_passed"], delta=given["delta_passed"],
                              binner_type="priv-tree", proc_epsilon=given["proc_epsilon_passed"] or 0.0,
                              n_bins=bins, n_jobs=args.n_jobs, gen_kwargs=gen_kwargs)
    pipeline.proc = public_table_binner()(binner_type=pipeline.proc.binner_type,
                                          binner_settings=dict(pipeline.proc.binner_settings))
    rho_model = float(pipeline.gen.generator.rho)
    if not rho_model <= given["rho_passed"] * (1 + 1e-12):
        raise RuntimeError(f"dpmm derived rho {rho_model} > {given['rho_passed']}")

    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        pipeline.fit(frame, domain=domain, random_state=args.seed)
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    synthetic = pipeline.generate(n_records=args.rows, random_state=args.seed)
    sample_seconds = time.perf_counter() - start
    synthetic = synthetic[list(frame.columns)]
    synthetic.to_csv(args.out, index=False)

    proc = pipeline.proc
    spent = {col: eps for col, eps in proc.spent_epsilon.items()} if numeric else {}
    if numeric and not sum(spent.values()) <= given["proc_epsilon_passed"] * (1 + 1e-12):
        raise RuntimeError(f"PrivTree spent {sum(spent.values())} > {given['proc_epsilon_passed']}")
    info = {
        "library": "dpmm " + metadata.version("dpmm"),
        "opendp": metadata.version("opendp"),
        "numpy": metadata.version("numpy"),
        "pandas": metadata.version("pandas"),
        "python": sys.version.split()[0],
        "algorithm": args.algorithm,
        "unit": args.unit,
        "epsilon": args.epsilon,
        "delta": args.delta,
        "budget": {**given, "rho_model": rho_model, "privtree_epsilon_spent": sum(spent.values()) if spent else 0.0},
        "bins": {col: int(n) for col, n in proc.n_bins.items()} if numeric else {},
        "bins_setting": args.bins,
        "privbayes_selection": args.privbayes_selection if args.algorithm == "privbayes" else None,
        "domain_source": "public (--domain); no bounds or levels read from the data, no budget spent on them",
        "rows": args.rows,
        "seed": args.seed,
        "fit_seconds": fit_seconds,
        "sample_seconds": sample_seconds,
        "notes": notes,
    }
    with open(args.info, "w") as handle:
        json.dump(info, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
