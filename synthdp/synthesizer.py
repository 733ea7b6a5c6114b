"""SmoothSynthesizer: fit once (spending the budget), then sample rows or take the summary."""

from __future__ import annotations

import time
import warnings
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Mapping

import numpy as np
import pandas as pd

from synthdp.config import SynthConfig
from synthdp.domain.box import MISSING_BOUNDS_HELP, ColumnDomain, Domain, parse_bounds
from synthdp.domain.decode import decode
from synthdp.domain.schema import (
    Schema,
    columns_to_discover,
    schema_text_columns,
    with_levels,
)
from synthdp.errors import PrivacyLeakWarning, SynthDPError, TestingSeedWarning
from synthdp.pipeline.plan import make_plan
from synthdp.pipeline.progress import StageTracker
from synthdp.pipeline.run import release_mixed_statistics, release_statistics
from synthdp.postprocess.candidates import (
    ellipsoid_candidates,
    gaussian_candidates,
    grid_candidates,
    hypercube_candidates,
    mixed_candidates,
    moment_gaussian,
)
from synthdp.postprocess.copula import copula_candidates, correlation_matrix
from synthdp.postprocess.lp import (
    blend_with_uniform,
    candidate_columns,
    precision_weighted,
    solve_l1_fit,
    solve_l1_fit_columns,
    spread_weights,
)
from synthdp.postprocess.sampling import clean_weights, sample_rows
from synthdp.privacy.ledger import PrivacyLedger
from synthdp.privacy.noise import NoiseSampler, OpenDPNoise, SeededNoise
from synthdp.privacy.release import release_levels
from synthdp.reader.table import PARQUET_SUFFIXES, PrivateTable, domain_from_data
from synthdp.released import Release
from synthdp.stats import grid
from synthdp.stats.chebyshev import ChebyshevBasis
from synthdp.stats.mixed_basis import groups_count
from synthdp.stats.row_sums import SumRequest
from synthdp.summaries.marginal import MarginalSummary
from synthdp.summaries.smooth import Summary
from synthdp.stats.mixed_basis import basis_indices

MAX_OUTPUT_VALUES = 500_000_000  # 4 GB of float64 in one sample() call
NOT_PRIVATE_BOUNDS = "bounds were read from the data: the release is NOT differentially private"
SEED_WARNING = "a known seed makes the noise predictable: use --seed for tests and reproducible runs only"


class SmoothSynthesizer:
    """Differentially private synthetic data for smooth queries (Wang et al., Algorithm 1 / Section 3.4).

    ``fit`` releases noisy Chebyshev moments of the table (and, for PCA candidates, private
    principal axes), spending the whole budget once. It then fits, by an l1 linear program,
    a distribution over candidate points that matches the noisy moments. ``sample`` draws
    rows from that distribution and ``summary`` answers queries from the moments directly;
    neither touches the data or spends budget.

    Parameters are those of :class:`synthdp.config.SynthConfig`; ``progress`` shows a
    progress bar on stderr.

    Examples
    --------
    >>> synth = SmoothSynthesizer(epsilon=1.0).fit(df, bounds={"age": [0, 100], "income": [0, 1e6]})
    >>> synthetic = synth.sample(1000)
    >>> synth.privacy_report()["privacy"]["epsilon_spent"]
    1.0
    """

    def __init__(
        self,
        epsilon: float = 1.0,
        delta: float = 0.0,
        smoothness: int = 4,
        mode: str = "practical",
        candidates: str | None = None,
        n_candidates: int = 10_000,
        n_basis: int | str = "auto",
        noise: str | None = None,
        pca_share: float = 0.3,
        marginals_share: float | None = None,
        correlation_share: float | None = None,
        marginal_bins: int | None = None,
        pca_components: int | None = None,
        pca_iterations: int = 5,
        pca_calibration: str = "derived",
        ellipsoid_radius: str = "paper",
        clip_count_share: float = 0.02,
        bounds_share: float = 0.0,
        levels_share: float = 0.0,
        spread: float = 0.0,
        blend: float = 0.5,
        marginal_degree: int = 2,
        max_lp_entries: int = 20_000_000,
        seed: int | None = None,
        engine: str = "numpy",
        scheduler: str | None = None,
        chunk_rows: int | None = None,
        progress: bool = False,
    ) -> None:
        self.config = SynthConfig(
            epsilon=epsilon, delta=delta, smoothness=smoothness, mode=mode, candidates=candidates,
            n_candidates=n_candidates, n_basis=n_basis, noise=noise, pca_share=pca_share,
            marginals_share=marginals_share, correlation_share=correlation_share, marginal_bins=marginal_bins,
            pca_components=pca_components, pca_iterations=pca_iterations,
            pca_calibration=pca_calibration, ellipsoid_radius=ellipsoid_radius,
            clip_count_share=clip_count_share, bounds_share=bounds_share, levels_share=levels_share, spread=spread,
            blend=blend, marginal_degree=marginal_degree, max_lp_entries=max_lp_entries, seed=seed,
            engine=engine, scheduler=scheduler, chunk_rows=chunk_rows,
        )
        self.progress = progress

    @classmethod
    def from_config(cls, config: SynthConfig, progress: bool = False) -> "SmoothSynthesizer":
        synth = cls.__new__(cls)
        synth.config, synth.progress = config, progress
        return synth

    # ------------------------------------------------------------------ fit
    def fit(
        self,
        data,
        bounds: Mapping[str, object] | None = None,
        bounds_from_data: bool = False,
        synthesize: bool = True,
        schema: Mapping | Schema | None = None,
    ) -> "SmoothSynthesizer":
        """Spend the privacy budget on ``data`` and fit the synthetic distribution.

        Parameters
        ----------
        data : DataFrame, str or Path, dask DataFrame, or PrivateTable
            Numeric table, one row per individual: in memory, the path of a CSV or Parquet
            file (read by the configured engine, streamed when large), or a Dask DataFrame.
        bounds : mapping, optional
            Public bounds ``{column: [lo, hi]}`` (or ``{column: {"bounds": [lo, hi],
            "type": "integer"}}``) for every column. Values outside are clipped.
        bounds_from_data : bool
            Read the bounds from the data instead. The release is then NOT differentially
            private, and the report says so.
        synthesize : bool, default True
            False releases only what :meth:`summary` needs: no candidates, no private PCA,
            no LP, and :meth:`sample` is unavailable. The PCA share of the budget then goes
            to the moments; the report's ``parameters.budget`` shows the split.
        schema : mapping or Schema, optional
            The content of a schema file (:mod:`synthdp.domain.schema`): the type, bounds or levels
            of every column, instead of ``bounds``. Needed for binary and categorical
            columns; with those, the release holds every marginal cell of up to
            ``marginal_degree`` of them (:meth:`marginal_summary` answers marginals from it).
        """
        if schema is not None and (bounds is not None or bounds_from_data):
            raise SynthDPError("give either a schema or bounds, not both")
        config = self.config
        table = self._open(data, schema_text_columns(schema or {}))
        noise, rng = self._randomness()
        ledger = PrivacyLedger(config.epsilon, config.delta)
        if schema is not None and columns_to_discover(schema):
            schema, config = self._discover_levels(table, schema, ledger, noise)  # config: the budget left
        if schema is not None:
            schema = schema if isinstance(schema, Schema) else Schema.from_dict(schema, table.all_names)
            if list(schema.names) != table.all_names:
                raise SynthDPError("the schema's columns do not match the table's")
            bounds = None if schema.categorical else schema.numeric  # numeric only: a bounds file
        # First pass: the row count, and what the bounds need (histograms, or the data's ranges).
        scan_start = time.perf_counter()
        if schema is not None and schema.categorical:
            n_rows = table.row_sums(SumRequest()).n_rows
            indices = basis_indices(schema, config.marginal_degree)
            plan = make_plan(config, n_rows, schema.n_coordinates, bounds_are_public=True,
                             synthesize=synthesize, mixed_basis=(len(indices), groups_count(schema, indices)))
            run_release = partial(release_mixed_statistics, table, schema, plan, config, ledger, noise)
        else:
            known_columns = self._known_columns(table, bounds, bounds_from_data)
            missing = () if bounds_from_data else tuple(
                j for j, name in enumerate(table.column_names) if name not in known_columns)
            scan = table.row_sums(SumRequest(histogram_columns=missing, data_range=bounds_from_data))
            if bounds_from_data:
                known_columns = {column.name: column for column in domain_from_data(table.column_names, scan).columns}
            plan = make_plan(config, scan.n_rows, table.d, bounds_are_public=not bounds_from_data,
                             estimated_bounds=table.d - len(known_columns), synthesize=synthesize)
            run_release = partial(release_statistics, table, scan, known_columns, plan, config, ledger, noise, rng)
        scan_seconds, engine = time.perf_counter() - scan_start, table.engine
        if bounds_from_data:
            ledger.add_caveat(NOT_PRIVATE_BOUNDS)
        if not noise.private:
            ledger.add_caveat(SEED_WARNING)
        stage_names = (["moments"] + {"pca": ["private PCA"], "copula": ["marginals"]}.get(plan.candidates, [])
                       + (["candidates", "LP fit"] if synthesize else [])
                       + (["LP spread"] if synthesize and self.config.spread > 0 else []))
        stages = StageTracker(stage_names, quiet=not self.progress)
        try:
            released = run_release(stages)  # with level discovery above, the only step that reads the raw rows
            del table, run_release  # nothing below reads them
            solution, support = self._fit_distribution(released, rng, stages) if synthesize else (None, (None, None))
        finally:
            stages.close()
        self.release_, self.ledger_, self.lp_ = released, ledger, solution
        self.support_points_, self.support_weights_ = support
        self.noise_sampler_, self.timings_, self.engine_ = noise.name, {"first pass": scan_seconds, **stages.timings}, engine
        self._rng = rng
        self._last_sample: dict | None = None
        return self

    def _open(self, data, text_columns: list[str]) -> PrivateTable:
        """The table to release: numeric tables through any engine, mixed tables in memory."""
        if isinstance(data, PrivateTable):
            return data
        if not text_columns:
            return PrivateTable.open(data, self.config.engine, self.config.chunk_rows, self.config.scheduler)
        if self.config.engine != "numpy" or self.config.chunk_rows is not None:
            raise SynthDPError("tables with binary or categorical columns are read in memory: "
                               "leave engine and chunk_rows at their defaults")
        if isinstance(data, pd.DataFrame):
            return PrivateTable(data, text_columns)
        if isinstance(data, (str, Path)) and Path(data).suffix.lower() not in PARQUET_SUFFIXES:
            return PrivateTable.read_csv(data, text_columns)
        raise SynthDPError("a table with binary or categorical columns must be a DataFrame or a CSV file")

    def _discover_levels(self, table: PrivateTable, schema: Mapping, ledger: PrivacyLedger,
                         noise: NoiseSampler) -> tuple[dict, SynthConfig]:
        """The schema with DP-discovered levels, and the config holding the budget left for the rest."""
        names = columns_to_discover(schema)
        if self.config.levels_share == 0:
            raise SynthDPError(f"column '{names[0]}' asks for DP level discovery: "
                               "set levels_share (CLI: --levels-share S) and delta > 0")
        share = self.config.levels_share
        levels = release_levels(table, [name for name in names if name in table.all_names],
                                self.config.epsilon * share, self.config.delta * share, ledger, noise)
        rest = replace(self.config, epsilon=self.config.epsilon * (1 - share), delta=self.config.delta * (1 - share))
        return with_levels(schema, levels), rest

    def _known_columns(self, table: PrivateTable, bounds, bounds_from_data: bool) -> dict[str, ColumnDomain]:
        """The columns whose bounds the user gave (none when they are to be read from the data)."""
        if bounds_from_data and bounds is not None:
            raise SynthDPError("give either bounds or bounds_from_data, not both")
        if bounds_from_data:
            warnings.warn(NOT_PRIVATE_BOUNDS, PrivacyLeakWarning, stacklevel=3)
            return {}
        if isinstance(bounds, Domain):
            bounds = {column.name: column for column in bounds.columns}
            return {name: bounds[name] for name in table.column_names if name in bounds}
        known = parse_bounds(bounds or {}, table.column_names)
        if len(known) < table.d and self.config.bounds_share == 0:
            missing = next(name for name in table.column_names if name not in known)
            raise SynthDPError(
                f"no bounds for column '{missing}': {MISSING_BOUNDS_HELP}" if known else f"no bounds given: {MISSING_BOUNDS_HELP}"
            )
        return known

    def _randomness(self) -> tuple[NoiseSampler, np.random.Generator]:
        """The noise sampler and the Generator for public randomness (candidates, sampling)."""
        if self.config.seed is None:
            return OpenDPNoise(), np.random.default_rng()
        warnings.warn(SEED_WARNING, TestingSeedWarning, stacklevel=3)
        noise_rng, public_rng = np.random.default_rng(self.config.seed).spawn(2)
        return SeededNoise(noise_rng), public_rng

    def _fit_distribution(self, release: Release, rng: np.random.Generator, stages: StageTracker):
        """Post-processing: candidates, then the l1 fit of their weights to the noisy moments."""
        plan = release.plan
        with stages.stage("candidates"):
            candidates = self._candidates(release, rng)
            basis = ChebyshevBasis(release.basis_indices)
            target = release.noisy_moments
            if plan.candidates == "mixed":  # sparse W, at most G non-zeros per candidate: held whole
                design = basis.sparse_design_matrix(candidates)
                columns = lambda start, stop: design[:, start:stop]  # noqa: E731
            else:
                lattice = plan.theory.L if plan.round_to_lattice else None
                columns = candidate_columns(basis, candidates, self.config.max_lp_entries, lattice)
                target = target if lattice is None else grid.round_to_lattice(target, lattice)
            # unequal noise only where pair moments come from the products release (copula candidates);
            # a mixed table's moments share one noise level, so its sparse design stays unweighted
            columns, target, noise_l1 = precision_weighted(columns, target, release.moment_noise_sd,
                                                           release.moment_noise_l1)
        with stages.stage("LP fit"):
            if plan.candidates == "mixed":
                solution = solve_l1_fit(design, target, method="ipm")
            else:
                solution = solve_l1_fit_columns(columns, len(candidates), target,
                                                max_columns=self.config.max_lp_entries // plan.n_basis)
        self.blend_share_ = 0.0
        if self.config.spread > 0:
            with stages.stage("LP spread"):  # the plan holds R x C within max_lp_entries
                tolerance = self.config.spread * noise_l1
                solution = spread_weights(columns(0, len(candidates)), target, solution.objective + tolerance)
        elif self.config.blend > 0 and plan.candidates != "mixed":
            # mixed tables fit thousands of marginal cells: a tolerance summed over all of them
            # lets single cells drift (measured on adult: worst 2-way error 0.05 -> 0.26 at epsilon 1)
            tolerance = self.config.blend * noise_l1
            solution, self.blend_share_ = blend_with_uniform(columns, len(candidates), target, solution,
                                                             solution.objective + tolerance)
        weights = clean_weights(solution.weights)
        keep = weights > 0
        return solution, (candidates[keep], weights[keep])

    def _candidates(self, release: Release, rng: np.random.Generator) -> np.ndarray:
        plan = release.plan
        if plan.candidates == "grid":
            return grid_candidates(plan.theory.N, plan.d)
        if plan.candidates == "hypercube":
            return hypercube_candidates(plan.theory.N, plan.d, plan.n_candidates, rng)
        if plan.candidates == "copula":
            correlation = correlation_matrix(release.marginals, release.noisy_products, release.products_noise_sd)
            return copula_candidates(release.marginals, correlation, plan.n_candidates, rng)
        if plan.candidates == "mixed":
            return mixed_candidates(release.schema, release.basis_indices, release.noisy_moments, plan.n_candidates, rng)
        if plan.candidates == "moments":
            center, covariance = moment_gaussian(release.basis_indices, release.noisy_moments)
            return gaussian_candidates(center, covariance, plan.n_candidates, rng)
        return ellipsoid_candidates(release.pca, plan.n_candidates, rng, self.config.ellipsoid_radius)

    # --------------------------------------------------------------- sample
    def sample(self, n_rows: int | None = None) -> pd.DataFrame:
        """Draw ``n_rows`` synthetic rows (default: as many as the input had).

        Spends no privacy budget and never reads the data: it samples the fitted distribution.
        """
        self._check_fitted()
        if self.lp_ is None:
            raise SynthDPError("fitted with synthesize=False (summary only): fit again with synthesize=True to sample rows")
        plan = self.release_.plan
        n_rows = plan.n if n_rows is None else n_rows
        if not (isinstance(n_rows, (int, np.integer)) and n_rows >= 1):
            raise SynthDPError("the number of rows to sample must be an integer >= 1")
        if n_rows * plan.d > MAX_OUTPUT_VALUES:
            raise SynthDPError(f"{n_rows} rows x {plan.d} columns is over the output bound of "
                               f"{MAX_OUTPUT_VALUES:.0e} values; sample fewer rows (or in batches)")
        start = time.perf_counter()
        points = sample_rows(self.support_points_, self.support_weights_, int(n_rows), self._rng)
        schema = self.release_.schema
        frame = decode(points, self.release_.domain) if schema is None else schema.decode(points)
        self.timings_["sampling"] = time.perf_counter() - start
        self._last_sample = {"rows": int(n_rows), "distinct_rows": int(len(frame.drop_duplicates()))}
        return frame

    @property
    def theory_rows(self) -> int:
        """The paper's m, the number of synthetic rows its accuracy theorem assumes."""
        self._check_fitted()
        return self.release_.plan.theory.m

    def summary(self) -> Summary:
        """The release as a :class:`synthdp.Summary`, which answers smooth queries without sampling.

        It holds the released moments and the privacy report of this fit; it spends no
        budget and never reads the data.
        """
        self._check_fitted()
        release = self.release_
        indices, moments = release.basis_indices, release.noisy_moments
        if release.schema is not None:  # the moments of the numeric columns alone
            d = release.schema.d_numeric
            if d == 0:
                raise SynthDPError("the table has no numeric column: use marginal_summary() for its marginals")
            numeric = ~indices[:, d:].any(axis=1)
            indices, moments = indices[numeric, :d], moments[numeric]
        return Summary(release.domain, indices, moments, smoothness=release.plan.smoothness,
                       report=self.privacy_report())

    def marginal_summary(self) -> MarginalSummary:
        """The release of a mixed table as a :class:`synthdp.summaries.marginal.MarginalSummary`.

        It answers marginals of the binary and categorical columns from the noisy moments,
        without sampling; no budget, no data access.
        """
        self._check_fitted()
        release = self.release_
        if release.schema is None:
            raise SynthDPError("marginal_summary() needs a fit with a schema that has binary or categorical columns")
        return MarginalSummary(release.schema, release.basis_indices, release.noisy_moments, self.privacy_report())

    # --------------------------------------------------------------- report
    def privacy_report(self) -> dict:
        """Everything about the release a user may see: budget per stage, sizes, LP, timings."""
        from synthdp._version import __version__

        self._check_fitted()
        release, plan = self.release_, self.release_.plan
        return {
            "synthdp_version": __version__,
            "privacy": {**self.ledger_.to_dict(), "noise_sampler": self.noise_sampler_,
                        "neighbouring": "replace one row; n is public"},
            "parameters": {**plan.to_dict(), "config": _config_dict(self.config)},
            **({} if release.schema is None else {"schema": {
                **release.schema.to_dict(),
                "rows_other_noisy": release.noisy_rows_other,
                "rows_other_note": "Laplace-noised count of rows with a categorical value outside its levels "
                                   "(decoded as other_label)" if release.noisy_rows_other is not None
                                   else "not released (no categorical column, or clip_count_share = 0)"}}),
            "bounds": {
                **release.domain.to_dict(),
                "rows_clipped_noisy": release.noisy_rows_clipped,
                "rows_clipped_note": (
                    "Laplace-noised count of rows with a value outside the bounds"
                    if release.noisy_rows_clipped is not None
                    else "not released (bounds read from data, or clip_count_share = 0)"
                ),
            },
            "lp": None if self.lp_ is None else {
                "status": self.lp_.status, "objective": self.lp_.objective, "solver": self.lp_.solver,
                "spread": self.config.spread, "blend": self.config.blend,
                "uniform_share": self.blend_share_,
                "support_size": int(len(self.support_weights_))},
            "output": self._last_sample,
            "engine": self.engine_,
            # 0.1 ms is the clock's useful resolution; 17-digit floats would also read like data
            "timings_seconds": {stage: round(seconds, 4) for stage, seconds in self.timings_.items()},
        }

    def _check_fitted(self) -> None:
        if not hasattr(self, "release_"):
            raise SynthDPError("call fit() before sample(), summary() or privacy_report()")


def _config_dict(config: SynthConfig) -> dict:
    return {key: getattr(config, key) for key in config.keys()}
