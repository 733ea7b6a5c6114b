"""Typed configuration of a synthesis run, validated in one place.

The same keys serve the Python API (``SmoothSynthesizer(**keys)``), the CLI flags and the
TOML ``--config`` file (where dashes and underscores are interchangeable).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, fields
from typing import Any, Literal, get_args, get_type_hints

from synthdp.checks import is_finite_number, is_int
from synthdp.errors import SynthDPError

Mode = Literal["practical", "exact"]
CandidateKind = Literal["copula", "pca", "hypercube", "grid", "moments"]
NoiseKind = Literal["gaussian", "laplace"]

MIN_EPSILON, MAX_EPSILON = 1e-6, 1e6
# The largest smoothness order K of a release: the papers' experiments take K = sigma^2, up to 100; past a
# few thousand the theory's exact integer sizes (:func:`synthdp.pipeline.plan.theory_parameters`) take
# seconds, and at 10^7 minutes.
MAX_SMOOTHNESS = 1000
# The largest K of a summary's Jackson damping: its operator is an alternating sum of the binomials
# C(K + 1, l), whose float64 rounding grows as 2^(K + 1) 2^-52: at most 2^-20 (1e-6) up to K = 31 (at
# K = 50 its multipliers were off by .04, at K = 60 by 10, :func:`synthdp.summaries.smooth.jackson_multipliers`).
MAX_JACKSON_SMOOTHNESS = 31
MIN_SHARE = 1e-3  # smallest share of the budget a stage may get
STREAM_CSV_BYTES = 256 * 2**20  # larger CSV files stream even without chunk_rows (synthdp.reader.table)

GENERATE, BOTH = ("generate",), ("generate", "summarize")
MAX_ROWS_PER_UNIT = 100_000
# The most private subspace iterations: each takes a share of the PCA budget (noise grows as sqrt(L) under
# Gaussian noise, as L under Laplace), so past the default 5 they buy noise, and 10**15 of them spun for hours.
MAX_PCA_ITERATIONS = 1_000
# the option groups of the CLI's help, in the order they are shown
GROUPS = ("budget", "privacy unit", "bounds", "method", "large tables", "output")


def _option(default: Any, group: str, help: str, metavar: str | None = None,
            commands: tuple[str, ...] = BOTH, default_text: str | None = None) -> Any:
    """A field of :class:`SynthConfig` with what the CLI shows of it: its help text and group,
    the commands that take it, the metavar, and how its default reads (``default_text``, for
    defaults that are decided at run time)."""
    return field(default=default, metadata={"help": help, "group": group, "metavar": metavar,
                                            "commands": commands, "default_text": default_text})


@dataclass(frozen=True)
class SynthConfig:
    """Parameters of one release.

    Parameters
    ----------
    epsilon, delta : float, default 1.0 and 0.0
        Total privacy budget; delta = 0 is pure epsilon-DP.
    smoothness : int, default 4
        Smoothness order K of the target queries (Gaussian kernels of width s have K ~ s^2).
        Sets the paper's t, N, L, m and the automatic R.
    mode : "practical" or "exact", default "practical"
        "exact" is Algorithm 1 (full grid, full tensor basis, rounding to 1/L); "practical"
        is Section 3.4 (R lowest-degree basis functions, C private candidates).
    candidates : "copula", "pca", "hypercube", "grid", "moments" or None, default None
        Candidate points of the LP. None means "copula" in practical mode and "grid" in
        exact. "copula" draws them from private one-way marginals (noisy histograms, with
        the bounds as atoms) joined by a Gaussian copula with a private correlation matrix;
        "pca" is the paper's private-PCA ellipsoid; "moments" the Gaussian implied by the
        released moments of degree <= 2 (R is then at least d (d + 3) / 2).
    n_candidates : int, default 10_000
        C, the number of candidate points (ignored for "grid").
    n_basis : int or "auto", default "auto"
        R, the number of non-constant basis functions in practical mode; "auto" is the
        paper's R = 0.5 n^{d/(2d+K)} (epsilon-DP) or 0.5 n^{2d/(3d+2K)} ((epsilon, delta)),
        raised to 2d so that every column's mean and second moment (T_1 and T_2) are
        released (:func:`synthdp.pipeline.plan.auto_n_basis`).
    noise : "gaussian", "laplace" or None, default None
        Noise for (epsilon, delta) runs: the analytic Gaussian mechanism, or Laplace with
        advanced composition. None means Gaussian if delta > 0 and Laplace if delta = 0.
    pca_share : float, default 0.3
        Share of the budget spent on private PCA when candidates are "pca".
    marginals_share, correlation_share : float or None
        Shares of the budget spent on the one-way histograms and on the pairwise products
        (the copula's correlations) when candidates are "copula", and on a mixed table's numeric
        columns (:func:`synthdp.pipeline.plan.mixed_shares`). None (default) decides
        from public n, d, R and the budget (:func:`synthdp.pipeline.plan.copula_shares`): 0.3 each
        when the products' noise would be small enough to carry correlations (0.5 for the
        products when at 0.3 their noise would be above half that limit), else no
        products and 0.5 for the histograms; the histograms take all but 0.1 when the
        moments' noise would be too large to add to them. Products released with more noise
        than that (a share set where n is small for d) are denoised as a matrix
        (:func:`synthdp.postprocess.pairs.spectral_denoise`) rather than pair by pair.
    marginal_bins : int or None, default None
        Equal-width bins per column of the one-way histograms (plus the two bounds as
        atoms). None (default) picks 4 to 16 from the public noise level
        (:func:`synthdp.pipeline.plan.auto_marginal_bins`).
    class_column : str or None, default None
        A mixed table's binary or categorical column (a class that separates the numeric columns:
        a species, a diagnosis) whose levels the numeric columns' histograms are released by, so
        that each column's shape follows the class (:mod:`synthdp.postprocess.class_histograms`).
        Each level's row carries the one-way histogram's noise, so a column's overall histogram
        carries sqrt(L) times it. None (default): one-way histograms.
    pca_components, pca_iterations : int or None, and int; default None and 5
        k and L of private subspace iteration; None means min(d, 5) components.
    pca_calibration : "derived" or "paper", default "derived"
        "derived" calibrates the PCA noise to the sensitivity derived in
        :mod:`synthdp.privacy.pca`; "paper" uses Theorem 3.6's constants, raised where needed to the
        derived scale so the run stays private.
    ellipsoid_radius : "paper" or "spread", default "paper"
        Radii sqrt(lambda) (the paper) or sqrt((k + 2) lambda), which gives the candidate
        cloud the variance of the data along each axis.
    clip_count_share : float, default 0.02
        Share of epsilon spent on a noisy count of rows with clipped values (0: not released).
    bounds_share : float, default 0.0
        Share of epsilon spent on DP estimates of the bounds of numeric columns that have no public
        bounds, in the bounds or in the schema (0: missing bounds are an error). See :mod:`synthdp.privacy.dp_bounds` for its cost.
    levels_share : float, default 0.0
        Share of epsilon and of delta spent on DP discovery of the levels of the categorical
        columns whose schema entry says ``"levels": "discover"`` (needs delta > 0; see
        :func:`synthdp.privacy.release.release_levels`). 0: such columns are an error.
    privacy_unit : str or None, default None
        The column that identifies a person (or any unit to protect with all its rows). None:
        every row is its own unit (replace one row; n public). With a column, neighbouring
        tables differ by all rows of one unit, each unit keeps at most ``max_rows_per_unit``
        rows (a random choice that does not look at their values), n becomes a noisy count, and
        the column is replaced in the output by synthetic identifiers (docs/privacy-unit.md).
    max_rows_per_unit : int or None, default None
        K, the most rows one unit contributes (required with ``privacy_unit``): every
        sensitivity grows K-fold, and rows beyond K of a unit are dropped.
    units_share : float, default 0.1
        With a privacy unit: share of epsilon for the noisy row count (after bounding) and the
        noisy histogram of rows per unit (:func:`synthdp.privacy.release.release_units`).
    spread : float, default 0.0
        Tolerance of the mass-spreading second LP (docs/mechanism.md §6), as a multiple of
        the expected l1 norm of the moment noise: among the distributions whose fit is within
        that of the optimum, the one with the smallest largest weight. 0 (default) keeps the
        optimal vertex, which has at most R + 1 distinct rows.
    tilt : float, default 1.0
        Copula candidates (the default) with a pairs release, or without one where the
        moments' noise is within its limit (``MOMENT_NOISE_LIMIT``), and mixed tables (whose
        LP also holds the numeric histograms' cells): after the l1 fit, take the
        distribution over the candidates closest to uniform (in entropy; the uniform
        distribution over them is the copula, with its marginals and pairs) whose every
        moment stays within ``tilt`` noise standard deviations of its released value, or
        within the optimum's own residual where that is larger
        (:func:`synthdp.postprocess.lp.tilt_weights`, :func:`synthdp.pipeline.run.tilts`); a mixed
        table's moments of noise sd above ``MOMENT_NOISE_LIMIT`` within ``tilt`` times the universal
        threshold of their number (:func:`synthdp.pipeline.run.tilt_box`).
        Default 1; 0 uses ``blend`` instead. Not applied with ``spread`` > 0. Measured:
        docs/relationships-design.md.
    favour : "smooth" or "relationships", default "smooth"
        Numeric tables: "smooth" (default) releases the pairs only where a strong one stands
        out of their noise pair by pair, leaves the pair moments x_i x_j to that release and
        fits the moments alone, which keeps the smooth queries most accurate. "relationships"
        there releases every moment of degree <= 2 (pairs included) and adds the histograms'
        cells to the LP's rows, as mixed tables do (more of the strong correlations where the
        table has many rows for its columns); and where the default releases no pairs (few
        rows for many columns) it releases them all the same, at a share of 0.3, denoised as a
        matrix (blocks of related columns survive noise that single pairs do not; the rows
        scored in finer cells and shrunk onto ||s||^2 <= d/2 for it), unless no correlation
        matrix could stand out of that noise. Measured: docs/decisions/favour.md and
        docs/decisions/matrix-scores.md.
    blend : float or None, default None
        Where the tilt does not apply (no pairs release and the moments at a tenth of the
        budget, other candidate kinds, ``tilt`` 0): mix the LP's
        optimal distribution with the uniform distribution over the candidates as far as the
        fit stays within the optimum plus ``blend`` times the expected l1 norm of the moment
        noise (0 keeps the optimal vertex). None chooses it: 0.5, and 1 where the moments are
        noise (:func:`synthdp.pipeline.run.blend_factor`); a value given is used as given.
        Not applied with ``spread`` > 0,
        which spreads the mass by a second LP instead, nor to mixed tables, whose thousands of
        marginal cells share the tolerance and let single cells drift (measured:
        docs/decisions/blend-not-on-mixed-tables.md).
    marginal_degree : int, default 2
        Mixed tables (a schema with binary or categorical columns): the release holds every
        marginal cell of up to this many of those columns (:func:`synthdp.stats.mixed_basis.basis_indices`).
    max_lp_entries : int, default 20_000_000
        Memory bound on the LP matrix entries held at once: W is kept whole up to it, and
        column generation's master LP (R x its candidate columns) must fit it; the spread
        LP needs all of W (R x C) within it.
    seed : int or None, default None
        Makes every random draw reproducible. For testing only: noise drawn from a known
        seed is not private against anyone who knows it.
    engine : "numpy" or "dask", default "numpy"
        How the rows are read and summed (:mod:`synthdp.reader.table`): in process (in
        memory, or streamed in chunks for large CSV and all Parquet files), or by
        dask.dataframe partitions. The release is the same up to floating-point summation order.
    scheduler : str or None, default None
        Address of a dask.distributed scheduler for the Dask engine (None: the current Dask
        client, else local threads).
    chunk_rows : int or None, default None
        Rows per chunk (numpy engine: streams a CSV file) or per Dask partition; None: automatic.
    """

    epsilon: float = _option(1.0, "budget", "total epsilon > 0")
    delta: float = _option(0.0, "budget", "total delta in [0, 1)", default_text="0: pure epsilon-DP")
    smoothness: int = _option(4, "method", f"smoothness order K of the queries, 1 to {MAX_SMOOTHNESS}", metavar="K")
    mode: Mode = _option("practical", "method", "practical (Section 3.4) or exact (Algorithm 1, small d only)")
    candidates: CandidateKind | None = _option(
        None, "method", "candidate points of the LP: copula, from private one-way histograms and correlations; "
        "pca: the paper's private-PCA ellipsoid; moments: Gaussian from the released degree-2 moments; "
        "hypercube or grid: points of the paper's grid", commands=GENERATE, default_text="copula; grid in exact mode")
    n_candidates: int = _option(10_000, "method", "number of candidate points", metavar="C", commands=GENERATE)
    n_basis: int | Literal["auto"] = _option(
        "auto", "method", "number of basis functions R, or 'auto' (the paper's R, at least 2d, at most 400 above that)", metavar="R")
    noise: NoiseKind | None = _option(
        None, "budget", "noise for delta > 0: analytic Gaussian or Laplace with advanced composition "
        "(at delta = 0 it is Laplace)", default_text="gaussian when delta > 0")
    pca_share: float = _option(0.3, "budget", "share of the budget for private PCA", metavar="S", commands=GENERATE)
    marginals_share: float | None = _option(
        None, "budget", "share of the budget for the one-way histograms of the numeric columns (copula "
        "candidates, mixed tables)", metavar="S", commands=GENERATE,
        default_text="0.3 where the pairs are released (a correlation share > 0, given or by default), 0.5 where "
        "they are not; all but 0.1 when the moments' noise would exceed 0.1; "
        "mixed tables 0.2")
    correlation_share: float | None = _option(
        None, "budget", "share for their correlations (pairwise products)", metavar="S", commands=GENERATE,
        default_text="0.3 when n is large enough for the noisy products to carry correlations (0.5 when they are "
        "weak at 0.3), else 0; mixed tables "
        "the smallest of 0.1, 0.2, 0.3 whose noise is at most half that")
    marginal_bins: int | None = _option(
        None, "method", "equal-width bins per column of the copula's histograms, plus the bounds as atoms",
        metavar="B", commands=GENERATE, default_text="4 to 16, fewer when the histogram noise is large")
    class_column: str | None = _option(
        None, "method", "a mixed table's binary or categorical column (a class that separates the numeric columns: "
        "a species, a diagnosis) whose levels the numeric columns' histograms are released by, each level's row "
        "with the one-way histogram's noise (a column's overall shape then carries sqrt(L) times it)",
        metavar="COLUMN", commands=GENERATE, default_text="none: one-way histograms")
    pca_components: int | None = _option(None, "method", "private PCA dimension", metavar="k", commands=GENERATE,
                                         default_text="min(d, 5)")
    pca_iterations: int = _option(5, "method", f"private subspace iterations, 1 to {MAX_PCA_ITERATIONS}", metavar="L",
                                  commands=GENERATE)
    pca_calibration: Literal["derived", "paper"] = _option(
        "derived", "method", "PCA noise: the sensitivity derived in synthdp.privacy.sensitivity, or the paper's "
        "Theorem 3.6 constants, raised to the derived scale where lower", commands=GENERATE)
    ellipsoid_radius: Literal["paper", "spread"] = _option(
        "paper", "method", "PCA ellipsoid radii sqrt(lambda) (paper) or sqrt((k+2) lambda) (spread)", commands=GENERATE)
    clip_count_share: float = _option(
        0.02, "budget", "share of epsilon for a noisy count of clipped rows (0: not released)", metavar="S")
    bounds_share: float = _option(
        0.0, "bounds", "share of epsilon for DP estimates of the bounds of numeric columns missing from --bounds "
        "or whose --schema entry gives none (0: missing bounds are an error)", metavar="S")
    levels_share: float = _option(
        0.0, "bounds", "share of epsilon and delta for DP discovery of the levels of categorical columns whose "
        "schema says \"levels\": \"discover\" (needs --delta > 0)", metavar="S")
    privacy_unit: str | None = _option(
        None, "privacy unit", "column that identifies a person: protect all of a person's rows together (add or "
        "remove one person), not single rows; the column is replaced by synthetic identifiers in the output",
        metavar="COLUMN", default_text="none: each row is its own unit")
    max_rows_per_unit: int | None = _option(
        None, "privacy unit", "K, the most rows kept per person (a random K of a person's rows; needed with "
        "--privacy-unit): noise grows K-fold, rows beyond K are dropped", metavar="K",
        default_text="none; required with --privacy-unit")
    units_share: float = _option(
        0.1, "privacy unit", "share of epsilon for the noisy row count and rows-per-person histogram "
        "(with --privacy-unit)", metavar="S")
    spread: float = _option(
        0.0, "method", "spread the synthetic mass over the fits within KAPPA x the expected l1 norm of the moment "
        "noise of the optimum (0: the optimal vertex, at most R+1 distinct rows)", metavar="KAPPA", commands=GENERATE)
    tilt: float = _option(
        1.0, "method", "copula candidates (with released pairs, or moments whose noise is within its limit) and mixed "
        "tables: the distribution closest to uniform "
        "over the candidates whose every moment (and histogram cell, mixed tables) stays within K noise sd of its "
        "released value (a mixed table's moments of noise sd above 0.1: K times the universal threshold of their "
        "number; keeps the copula's pairs and shapes; 0: use --blend)",
        metavar="K",
        commands=GENERATE)
    favour: Literal["smooth", "relationships"] = _option(
        "smooth", "method", "numeric tables: 'smooth' keeps the budget for the smooth queries' accuracy; "
        "'relationships' keeps more of the correlations between columns: where the pairs are released it also "
        "releases every moment of degree <= 2 and fits the histogram cells in the LP, as mixed tables do, and on "
        "tables with few rows for their columns it releases the pairs all the same, denoised as a matrix (the trade "
        "is measured in docs/relationships.md)", commands=GENERATE)
    blend: float | None = _option(
        None, "method", "where the tilt does not apply: mix the LP's optimum with the uniform distribution over the "
        "candidates while the fit stays within KAPPA x the expected l1 norm of the moment noise of the optimum "
        "(0: the optimal vertex; not applied with --spread, nor to mixed tables)", metavar="KAPPA",
        commands=GENERATE, default_text="auto: 0.5, or 1 where the moments are noise, at a tenth of the budget")
    marginal_degree: int = _option(
        2, "method", "with --schema: release every marginal cell of up to K binary/categorical columns", metavar="K")
    max_lp_entries: int = _option(
        20_000_000, "method", "memory bound on the LP matrix entries held at once", metavar="N", commands=GENERATE)
    seed: int | None = _option(
        None, "output", "seed every random draw; for tests only: not private against anyone who knows it",
        default_text="none: private randomness")
    engine: Literal["numpy", "dask"] = _option(
        "numpy", "large tables", "numpy: in process; dask: dask.dataframe partitions, on local threads or the "
        "--scheduler cluster")
    scheduler: str | None = _option(
        None, "large tables", "dask.distributed scheduler, e.g. tcp://host:8786 (--engine dask)", metavar="ADDRESS",
        default_text="the current Dask client, else local threads")
    chunk_rows: int | None = _option(
        None, "large tables", f"rows per chunk: streams a CSV file in bounded memory (CSV files over "
        f"{STREAM_CSV_BYTES // 2**20} MB and Parquet files always stream); rows per partition with dask",
        metavar="N", default_text="automatic")

    def __post_init__(self) -> None:
        for option in fields(self):  # numpy's scalars (a grid from np.arange, a seed from a Generator) as Python's
            value = getattr(self, option.name)
            if type(value).__module__ == "numpy" and hasattr(value, "item") and getattr(value, "ndim", None) == 0:
                object.__setattr__(self, option.name, value.item())
        _check(is_finite_number(self.epsilon) and self.epsilon > 0, "epsilon must be a finite number > 0")
        _check(MIN_EPSILON <= self.epsilon <= MAX_EPSILON,
               f"epsilon must be between {MIN_EPSILON:g} and {MAX_EPSILON:g} (outside, noise calibration is meaningless)")
        _check(is_finite_number(self.delta) and 0 <= self.delta < 1, "delta must be in [0, 1)")
        _check(is_int(self.smoothness) and 1 <= self.smoothness <= MAX_SMOOTHNESS,
               f"smoothness must be an integer from 1 to {MAX_SMOOTHNESS}")
        _choice("mode", self.mode, choices("mode"))
        _choice("candidates", self.candidates, choices("candidates") + (None,))
        _check(is_int(self.n_candidates) and self.n_candidates >= 1, "n_candidates must be an integer >= 1")
        _check(self.n_basis == "auto" or (is_int(self.n_basis) and self.n_basis >= 1),
               "n_basis must be 'auto' or an integer >= 1")
        _choice("noise", self.noise, choices("noise") + (None,))
        _check(not (self.delta == 0 and self.noise == "gaussian"),
               "Gaussian noise needs delta > 0: set delta (--delta) or noise='laplace' (--noise laplace)")
        _check(is_finite_number(self.pca_share) and MIN_SHARE <= self.pca_share <= 1 - MIN_SHARE,
               f"pca_share must be in [{MIN_SHARE:g}, {1 - MIN_SHARE:g}]")
        for name in ("marginals_share", "correlation_share"):
            share = getattr(self, name)
            _check(share is None or (is_finite_number(share) and (share == 0 or MIN_SHARE <= share <= 1 - MIN_SHARE)),
                   f"{name} must be 0 or in [{MIN_SHARE:g}, {1 - MIN_SHARE:g}]")
        _check(self.marginals_share != 0, "copula candidates need marginals_share > 0")
        _check((self.marginals_share or 0) + (self.correlation_share or 0) <= 1 - MIN_SHARE,
               "marginals_share + correlation_share must leave a share for the moments")
        _check(self.marginal_bins is None or (is_int(self.marginal_bins) and 1 <= self.marginal_bins <= 10_000),
               "marginal_bins must be an integer in [1, 10000]")
        _check(self.pca_components is None or (is_int(self.pca_components) and self.pca_components >= 1),
               "pca_components must be an integer >= 1")
        _check(is_int(self.pca_iterations) and 1 <= self.pca_iterations <= MAX_PCA_ITERATIONS,
               f"pca_iterations must be an integer from 1 to {MAX_PCA_ITERATIONS}")
        _choice("pca_calibration", self.pca_calibration, choices("pca_calibration"))
        _choice("ellipsoid_radius", self.ellipsoid_radius, choices("ellipsoid_radius"))
        _check(is_finite_number(self.clip_count_share) and (self.clip_count_share == 0 or MIN_SHARE <= self.clip_count_share < 0.5),
               f"clip_count_share must be 0 or in [{MIN_SHARE:g}, 0.5)")
        _check(is_finite_number(self.bounds_share) and (self.bounds_share == 0 or MIN_SHARE <= self.bounds_share < 0.5),
               f"bounds_share must be 0 or in [{MIN_SHARE:g}, 0.5)")
        _check(is_finite_number(self.levels_share) and (self.levels_share == 0 or MIN_SHARE <= self.levels_share < 0.5),
               f"levels_share must be 0 or in [{MIN_SHARE:g}, 0.5)")
        _check(self.levels_share == 0 or self.delta > 0,
               "level discovery (levels_share > 0) needs delta > 0: a value seen once must be kept out with probability 1 - delta")
        _check(self.privacy_unit is None or (isinstance(self.privacy_unit, str) and self.privacy_unit != ""),
               "privacy_unit must be a column name")
        _check(self.class_column is None or (isinstance(self.class_column, str) and self.class_column != ""),
               "class_column must be a column name")
        _check(self.class_column is None or self.class_column != self.privacy_unit,
               f"class_column (--class-column) '{self.class_column}' is the privacy unit column (--privacy-unit), "
               "which is not synthesized: name a binary or categorical column of the schema")
        _check(self.max_rows_per_unit is None or (is_int(self.max_rows_per_unit) and 1 <= self.max_rows_per_unit
                                                  <= MAX_ROWS_PER_UNIT),
               f"max_rows_per_unit must be an integer in [1, {MAX_ROWS_PER_UNIT}]")
        _check(self.privacy_unit is None or self.max_rows_per_unit is not None,
               "privacy_unit needs max_rows_per_unit (CLI: --max-rows-per-unit K), the most rows one person "
               "contributes: docs/privacy-unit.md#choosing-k")
        _check(self.privacy_unit is not None or self.max_rows_per_unit is None,
               "max_rows_per_unit needs privacy_unit (CLI: --privacy-unit COLUMN), the column that identifies a person")
        _check(is_finite_number(self.units_share) and MIN_SHARE <= self.units_share < 0.5,
               f"units_share must be in [{MIN_SHARE:g}, 0.5)")
        _check(is_finite_number(self.spread) and 0 <= self.spread <= 10, "spread must be in [0, 10]")
        _check(self.blend is None or (is_finite_number(self.blend) and 0 <= self.blend <= 10),
               "blend must be in [0, 10] (None or, on the command line, auto: automatic)")
        _check(is_finite_number(self.tilt) and 0 <= self.tilt <= 100, "tilt must be in [0, 100]")
        _choice("favour", self.favour, choices("favour"))
        _check(is_int(self.marginal_degree) and self.marginal_degree >= 1, "marginal_degree must be an integer >= 1")
        _check(is_int(self.max_lp_entries) and self.max_lp_entries >= 1, "max_lp_entries must be an integer >= 1")
        _check(self.seed is None or (is_int(self.seed) and self.seed >= 0), "seed must be an integer >= 0")
        _choice("engine", self.engine, choices("engine"))
        _check(self.scheduler is None or (isinstance(self.scheduler, str) and self.engine == "dask"),
               "scheduler needs engine 'dask' and an address such as 'tcp://host:8786'")
        _check(self.chunk_rows is None or (is_int(self.chunk_rows) and self.chunk_rows >= 1),
               "chunk_rows (--chunk-rows) must be an integer >= 1")
        if self.mode == "exact":
            _check(self.candidates in (None, "grid"), "exact mode uses the full grid: leave candidates unset")
            _check(self.n_basis == "auto", "exact mode uses the full t^d basis: leave n_basis unset")

    @property
    def noise_kind(self) -> NoiseKind:
        """The noise actually used: Laplace for pure epsilon-DP, else as configured."""
        if self.delta == 0:
            return "laplace"
        return self.noise or "gaussian"

    @property
    def candidate_kind(self) -> CandidateKind:
        """The candidates the fit uses: ``candidates``, or by default ``"grid"`` in exact mode and ``"copula"`` otherwise."""
        if self.candidates is not None:
            return self.candidates
        return "grid" if self.mode == "exact" else "copula"

    @classmethod
    def keys(cls) -> list[str]:
        """The names of the parameters, in the order of the class's fields."""
        return [f.name for f in fields(cls)]


#: options that act only beside another: (options, whether the other is there, what it is as a command-line
#: flag, as a parameter)
IDLE_OPTIONS = (
    (("pca_share", "pca_components", "pca_iterations", "pca_calibration", "ellipsoid_radius"),
     lambda config, mixed: config.candidates == "pca", "--candidates pca", "candidates='pca'"),
    (("units_share",), lambda config, mixed: config.privacy_unit is not None, "--privacy-unit", "privacy_unit"),
    (("marginal_degree",), lambda config, mixed: mixed, "--schema (or a nullable column in --bounds)",
     "a schema (or a nullable column in the bounds)"),
    (("n_candidates",), lambda config, mixed: mixed or config.candidate_kind != "grid",
     "candidates other than the full grid (not --candidates grid, nor --mode exact)",
     "candidates other than the full grid (not candidates='grid', nor mode='exact')"),
    (("class_column",), lambda config, mixed: mixed, "--schema", "a schema"),
    (("marginals_share", "correlation_share", "marginal_bins"),
     lambda config, mixed: mixed or config.candidate_kind == "copula",
     "--candidates copula (the default in practical mode) or --schema", "candidates='copula' or a schema"),
    # (favour "smooth", tilt 0 and blend 0 turn a step off: never an option ignored)
    (("favour",), lambda config, mixed: config.favour == "smooth" or (not mixed and config.candidate_kind == "copula"),
     "--candidates copula (the default in practical mode) on a numeric table",
     "candidates='copula' on a numeric table"),
    (("tilt",), lambda config, mixed: config.tilt == 0 or (config.spread == 0 and (mixed or config.candidate_kind ==
                                                                                    "copula")),
     "--candidates copula (the default in practical mode) or --schema, and without --spread",
     "candidates='copula' or a schema, and spread=0"),
    (("blend",), lambda config, mixed: not config.blend or (config.spread == 0 and not mixed),
     "a numeric table without --spread",
     "a numeric table and spread=0"),
)


class IdleOptionWarning(UserWarning):
    """A parameter set that the fit will not use (:func:`idle_options`); the command line, which
    names the flags instead, leaves the estimator's own warning out."""


def idle_options(given: Any, config: SynthConfig, mixed: bool) -> list[tuple[list[str], str, str]]:
    """The options among ``given`` (names: a flag given, a parameter set) that a run with ``config`` will not
    use, with what they need as a flag and as a parameter. ``mixed``: the table is released as a mixed one."""
    found = []
    for names, active, flag, parameter in IDLE_OPTIONS:
        idle = [name for name in names if name in given]
        if idle and not active(config, mixed):
            found.append((idle, flag, parameter))
    return found


@functools.cache
def choices(name: str) -> tuple[str, ...]:
    """The values a field of :class:`SynthConfig` may take, from its ``Literal`` type (empty if free)."""
    def literals(hint: Any) -> list[str]:
        if isinstance(hint, str):
            return [hint]
        return [value for part in get_args(hint) for value in literals(part)]
    return tuple(value for value in literals(_config_hints()[name]) if value != "auto")


@functools.cache
def _config_hints() -> dict[str, Any]:
    """SynthConfig's resolved type hints, once: get_type_hints resolves every field at each call
    (the parser asks for 33 fields' choices: 24 ms of every command's start-up)."""
    return get_type_hints(SynthConfig)


def option_fields() -> list:
    """SynthConfig's fields with their CLI metadata (help, group, metavar, commands, default_text)."""
    return list(fields(SynthConfig))


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise SynthDPError(message)


def _choice(name: str, value: object, allowed: tuple) -> None:
    _check(value in allowed, f"{name} must be one of {[a for a in allowed if a is not None]}")


@dataclass(frozen=True)
class CsvFormat:
    """How a CSV file is laid out: the field separator, the text encoding, the decimal mark and the
    thousands separator.

    The CLI's ``--sep``, ``--encoding``, ``--decimal`` and ``--thousands`` (and the same TOML keys);
    in Python, ``SmoothSynthesizer.fit(path, csv_format=CsvFormat(sep=";", decimal=",", thousands="."))``.
    Used for the input table only; synthetic CSV files are written with the defaults (no thousands
    separator).

    ``thousands`` is :func:`pandas.read_csv`'s: it is dropped wherever it follows a digit of a
    number's integer part, so "1.234,5" (with ``decimal=","``) and "1.23.4" both read as numbers,
    1234.5 and 1234; a cell that starts with it is text. It may be the separator only in quoted
    cells, as ``"1,234.5"`` in a comma-separated file.

    Parameters
    ----------
    sep : str, default ","
        The field separator, one character (not a line break or a double quote).
    encoding : str, default "utf-8"
        A text encoding Python knows, such as ``"latin-1"``.
    decimal : str, default "."
        The decimal mark, one character other than ``sep``.
    thousands : str, optional
        The thousands separator, one character other than ``decimal`` (not a digit, a double
        quote or a line break); None (default) reads no thousands separator.
    """

    sep: str = ","
    encoding: str = "utf-8"
    decimal: str = "."
    thousands: str | None = None

    def __post_init__(self) -> None:
        import codecs

        _check(isinstance(self.sep, str) and len(self.sep) == 1 and self.sep not in "\r\n\"",
               "sep must be one character, such as ',' ';' '|' or a tab ('\\t')")
        _check(isinstance(self.decimal, str) and len(self.decimal) == 1 and self.decimal != self.sep,
               "decimal must be one character other than sep, such as '.' or ','")
        # not a letter or a sign either: with "e" a number 1e5 would read as 15, without a word
        _check(self.thousands is None or (isinstance(self.thousands, str) and len(self.thousands) == 1
                                          and self.thousands != self.decimal and not self.thousands.isalnum()
                                          and self.thousands not in "\r\n\"+-"),
               "thousands must be one character other than decimal, a digit, a letter, a sign, a double quote or a "
               "line break, such as ',', '.', an apostrophe or a space")
        try:
            codecs.lookup(self.encoding)
            "".encode(self.encoding).decode(self.encoding)  # rot13, hex or zlib: codecs, not text encodings
        except (LookupError, TypeError):
            raise SynthDPError("encoding must be a text encoding Python knows, such as 'utf-8' or 'latin-1'") from None

    @classmethod
    def from_options(cls, sep: str | None = None, encoding: str | None = None, decimal: str | None = None,
                     thousands: str | None = None) -> CsvFormat:
        """The format with the options given, as the command line takes them.

        Parameters
        ----------
        sep, encoding, decimal, thousands : str, optional
            As in the class; None takes the default. ``sep`` may also be the word ``tab`` or the
            two characters ``\\t``, for a tab.

        Returns
        -------
        CsvFormat
        """
        if sep in ("tab", "\\t"):
            sep = "\t"
        values = {key: value for key, value in (("sep", sep), ("encoding", encoding), ("decimal", decimal),
                                                ("thousands", thousands)) if value is not None}
        return cls(**values)
