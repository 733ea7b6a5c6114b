"""The privacy report of a fit, and the summaries it can hand out: post-processing only."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from synthdp._version import __version__
from synthdp.domain.units import contribution_bins
from synthdp.errors import SynthDPError
from synthdp.pipeline.plan import COPULA_SHARES, SELECTION, Plan
from synthdp.pipeline.run import FittedModel, blend_factor
from synthdp.postprocess.pairs import CORRELATION_NOISE_LIMIT, PAIR_FDR, THRESHOLD
from synthdp.privacy.ledger import PrivacyLedger
from synthdp.privacy.release import UNITS_COUNT_WEIGHT
from synthdp.released import PairsTestResult, Release
from synthdp.stats.scores import MATRIX_CLIP_SHARE, default_clip_norm_sq
from synthdp.summaries.marginal import MarginalSummary
from synthdp.summaries.smooth import Summary


def describe_output(frame: pd.DataFrame) -> dict:
    """The report's ``output`` entry for a synthetic table: its rows and distinct rows."""
    return {"rows": int(len(frame)), "distinct_rows": int(len(frame.drop_duplicates()))}


# the steps after the release: they read only released values, so their times are public
RELEASED_STAGES = ("candidates", "LP fit", "LP spread", "LP tilt", "sampling")
DATA_TIMINGS = ("the report holds the times of the stages that read the data (data_timings): they depend on the "
                "data, so the report is not differentially private")


def released_timings(timings: dict[str, float]) -> dict[str, float]:
    """The times of the steps after the release (RELEASED_STAGES) in ``timings``: public, as they read only
    released values; the others (the stages that read the rows) are left out."""
    return {stage: seconds for stage, seconds in timings.items() if stage in RELEASED_STAGES}


def privacy_report(model: FittedModel, output: dict | None = None, data_timings: bool = False) -> dict:
    """Everything about the release a user may see: budget per stage, sizes, LP, timings.

    ``output`` describes the synthetic table written with it (:func:`describe_output`), if any.
    The timings are those of the steps after the release (RELEASED_STAGES), which read only
    released values. The stages that read the rows (the first pass, the moments, histograms and
    pairs) take times that depend on the data (a long text value, a row count near a chunk's
    size), so a published report must not carry them: ``data_timings`` True adds them (for
    benchmarks) with a caveat, and the report then says it is not differentially private.
    ``FittedModel.timings`` (``SmoothSynthesizer.timings_``) holds them all in the fitting process;
    a pickled fit does not (:func:`released_timings`), and ``data_timings`` is then refused.
    """
    release, plan, config = model.release, model.release.plan, model.config
    ledger = model.ledger.to_dict()
    if data_timings:
        if not set(model.timings) - set(RELEASED_STAGES):
            raise SynthDPError("this fit holds no data stages' times (a pickled or copied fit leaves them out): "
                               "data_timings needs the fit, in the process that fitted")
        ledger = {**ledger, "differentially_private": False, "caveats": [*ledger["caveats"], DATA_TIMINGS]}
    timings = model.timings if data_timings else released_timings(model.timings)
    return {
        "synthdp_version": __version__,
        "privacy": {**ledger, "noise_sampler": model.noise_sampler,
                    "neighbouring": plan.neighbours.describe(), **privacy_unit(release, model.ledger)},
        "parameters": {**plan.to_dict(), "config": {key: getattr(config, key) for key in config.keys()}},
        **({} if (pairs := pairs_entry(plan, release.scores_noise_sd if release.noisy_scores is not None
                                       else release.selected_pairs.noise_sd if release.selected_pairs is not None
                                       else None, release.pairs_test)) is None else {"pairs": pairs}),
        **({} if release.schema is None else {"schema": {
            **release.schema.to_dict(),
            "rows_other_noisy": release.noisy_rows_other,
            "rows_other_note": "Laplace-noised count of rows with a categorical value outside its levels "
                               "(decoded as other_label)" if release.noisy_rows_other is not None
                               else "not released (no categorical column with an 'other' level, or "
                                    "clip_count_share = 0)",
            **missing_rates(release)}}),
        "bounds": {
            **release.domain.to_dict(),
            "rows_clipped_noisy": release.noisy_rows_clipped,
            "rows_clipped_note": (
                "Laplace-noised count of rows with a value outside the bounds"
                if release.noisy_rows_clipped is not None
                else "not released (bounds read from data, or clip_count_share = 0)"
            ),
        },
        "lp": None if model.lp is None or model.support_weights is None else {
            "status": model.lp.status, "objective": model.lp.objective, "solver": model.lp.solver,
            "spread": config.spread, "blend": blend_factor(config, plan), "tilt": config.tilt,
            "reweighting": reweighting(model.lp.solver),
            "uniform_share": model.blend_share,
            "rearranged": model.rearranged,  # the candidates moved onto the tilt's or blend's one-way marginals
            "support_size": int(len(model.support_weights))},
        "output": output,
        "engine": model.engine,
        # 0.1 ms is the clock's useful resolution; 17-digit floats would also read like data
        "timings_seconds": {stage: round(seconds, 4) for stage, seconds in timings.items()},
    }


def privacy_unit(release: Release, ledger: PrivacyLedger | None = None) -> dict:
    """The report's ``privacy_unit`` entry (nothing without a privacy unit): the unit column,
    K, the noisy counts of the units stage (and, from ``ledger``, the noise on the row count in
    rows: the units stage's scale times K / UNITS_COUNT_WEIGHT, which every later stage's
    sums are divided by), and what the output holds in the unit column."""
    units = release.units
    if units is None:
        return {}
    bins = contribution_bins(units.max_rows)
    event = next((event for event in (ledger.events if ledger is not None else []) if event.stage == "units"), None)
    count_noise = {} if event is None else {
        "rows_noise": "Gaussian" if event.mechanism.startswith("Gaussian") else "Laplace",
        "rows_noise_scale": event.noise_scale * units.max_rows / UNITS_COUNT_WEIGHT}
    return {"privacy_unit": {
        "column": units.column,
        "max_rows_per_unit": units.max_rows,
        "bounding": f"a random choice of at most {units.max_rows} rows per unit, made before any statistic and "
                    "without looking at the rows' values; the number of rows dropped is not released",
        "rows_noisy": units.noisy_rows,
        **count_noise,
        "units_per_contribution_bin_noisy": {f"{low}-{high}" if high > low else str(low): float(count)
                                             for (low, high), count in zip(bins, units.noisy_contributions)},
        "output": "the unit column holds synthetic identifiers (synthetic-1, ..., zero-padded to one width), with "
                  "rows per identifier drawn "
                  "from the noisy histogram above; no real identifier is copied",
    }}


def reweighting(solver: str) -> str:
    """Which step followed the l1 optimum: "tilt", "blend", "spread" or "none" (the optimal vertex)."""
    for step in ("tilt", "blend", "spread"):
        if step in solver:
            return step
    return "none"


def missing_rates(release: Release) -> dict:
    """The report's entries on missing cells: each nullable column's noisy share of missing
    cells, read off the release (the mean of its missingness indicator is one of the moments:
    post-processing, no budget). Empty when no column is nullable."""
    schema = release.schema
    if schema is None or not schema.nullable:
        return {}
    rates = {}
    for column in schema.categorical:
        if column.indicator_of is None and not column.nullable:
            continue
        coordinate = schema.block_slice(column.name).stop - 1  # the "missing" indicator: last in its block
        row = np.flatnonzero((release.basis_indices[:, coordinate] == 1) & (release.basis_indices.sum(axis=1) == 1))
        rates[column.indicator_of or column.name] = float(release.noisy_moments[row[0]])
    return {"missing_rates_noisy": {name: rates[name] for name in schema.nullable},
            "missing_rates_note": "share of missing cells of each nullable column: the mean of its missingness "
                                  "indicator, released with noise in the 'moments' stage"}


NO_NUMERIC_MOMENTS = ("this release holds no moments of the numeric columns (under Laplace noise a mixed table leaves "
                      "them to its histograms and pairs release): sample a table, or fit with synthesize=False (synthdp "
                      "summarize) for a summary")


def smooth_summary(release: Release, report: dict) -> Summary:
    """The release as a :class:`synthdp.Summary` of the numeric columns' moments."""
    indices, moments = release.basis_indices, release.noisy_moments
    nullable: tuple[str, ...] = ()
    if release.schema is not None:  # the moments of the numeric columns alone
        nullable = release.schema.nullable_numeric
        d = release.schema.d_numeric
        if d == 0:
            raise SynthDPError("the table has no numeric column: use marginal_summary() for its marginals")
        numeric = ~indices[:, d:].any(axis=1)
        if not numeric.any():  # synthdp.pipeline.plan.mixed_numeric_moments
            raise SynthDPError(NO_NUMERIC_MOMENTS)
        indices, moments = indices[numeric, :d], moments[numeric]
    return Summary(release.domain, indices, moments, smoothness=release.plan.smoothness, report=report,
                   nullable=nullable)


def marginal_summary(release: Release, report: dict) -> MarginalSummary:
    """The release of a mixed table as a :class:`synthdp.MarginalSummary`."""
    if release.schema is None:
        raise SynthDPError("marginal_summary() needs a fit with a schema that has binary or categorical columns")
    return MarginalSummary(release.schema, release.basis_indices, release.noisy_moments, report)


def pairs_entry(plan: Plan, released_noise_sd: float | None, test: PairsTestResult | None = None) -> dict | None:
    """The report's ``pairs`` entry of a numeric table's copula: whether the pairs were released,
    their noise sd on a correlation (at the default's share of 0.3 when they were not), the
    limit, and what to do about it; with a pairs test (``test``), its released statistic, line
    and outcome. Public: the calibration's numbers and the test's released value only. None for
    other kinds.
    """
    if plan.candidates != "copula" or plan.d < 2:
        return None
    entry = _pairs_entry(plan, released_noise_sd)
    if test is not None:
        entry["test"] = {
            "statistic": test.statistic, "histograms_offset": test.offset, "threshold": test.threshold,
            "noise_sd": test.noise_sd, "found": test.found, "share": plan.pairs_test.share if plan.pairs_test is not None else None,
            "note": ("a private test of whether a block of related columns stands out of the pairs' noise: the "
                     "largest eigenvalue of the normal scores' product matrix above the bulk edge, in units "
                     "of the pairs' noise edge (sd sqrt(d)), released with noise of the sd given here; the pairs "
                     "are released where, less what the histograms' noise alone adds to it (histograms_offset, "
                     f"estimated from the release), it reaches {test.threshold:.3g} (the strongest block's direction then "
                     "comes back with at least half its weight), else their share goes to the histograms and "
                     "moments (docs/relationships.md#pairs-test)")}
    return entry


def _pairs_entry(plan: Plan, released_noise_sd: float | None) -> dict:
    """:func:`pairs_entry` without the test."""
    limit = CORRELATION_NOISE_LIMIT
    if released_noise_sd is not None and plan.selects_pairs:
        pairs = plan.d * (plan.d - 1) // 2
        return {"released": True, "noise_sd": math.pi / 2 * released_noise_sd, "noise_limit": limit,
                "denoised": "selected pairs", "selected": plan.selected_pairs,
                "note": (f"{plan.selected_pairs} of the {pairs} pairs chosen privately (exponential mechanism, stage "
                         f"'{SELECTION}') and measured, each with noise sd {math.pi / 2 * released_noise_sd:.3g} on a "
                         "correlation (at independence), the most pairs within the limit: a pair of all of them "
                         "would have too much noise for any to stand out. A measured pair is kept from "
                         f"{THRESHOLD:g} noise sd where the Benjamini-Hochberg procedure at false discovery rate "
                         f"{PAIR_FDR:g} selects it; the pairs not measured follow the kept ones through the Gaussian "
                         "model of largest entropy (docs/relationships.md#selected-pairs)")}
    if released_noise_sd is not None and plan.budget.share("correlation") > 0:
        if plan.pairs_as_matrix:  # the noise at the default norm bound, the one the limit is for
            nominal = plan.pair_noise_at_share
            return {"released": True, "noise_sd": nominal, "noise_limit": limit, "denoised": "as a matrix",
                    "note": ("released with noise above the limit (the pairs test found a block of related "
                             "columns, or favour='relationships' or a correlation_share set where n is small for "
                             "d): denoised as a matrix, the rows scored in finer cells "
                             f"and shrunk onto ||s||^2 <= {MATRIX_CLIP_SHARE:g} d (noise sd {released_noise_sd:.4g} at that "
                             "bound); caveat: on tables with skewed columns held in few histogram cells, columns that "
                             "have no dependence can come out correlated (docs/relationships.md#where-it-stops)")}
        lowered = 0 < plan.pairs_clip_norm_sq < default_clip_norm_sq(plan.d) - 1e-9
        bound = (f"; each row's scores clipped to squared norm {plan.pairs_clip_norm_sq:.4g}, lowered from the "
                 "default d + 2 sqrt(2d) so that the noise is half the limit (docs/relationships.md#how-synthdp-keeps-the-pairs)"
                 if lowered else "")
        return {"released": True, "noise_sd": released_noise_sd, "noise_limit": limit, "denoised": "pair by pair",
                "note": (f"released{bound}; a score correlation is kept from {THRESHOLD:g} noise sd where the "
                         f"Benjamini-Hochberg procedure at false discovery rate {PAIR_FDR:g} selects it, and a "
                         "column's pairs into a block of strongly related columns where its relation to the "
                         "block as a whole is selected"
                         + (", and, under Laplace noise, its pairs with the columns selected for the block as well"
                            if plan.noise == "laplace" else "") + " (docs/decisions/block-edges.md)")}
    share = COPULA_SHARES["correlation"]
    noise = plan.pair_noise_at_default
    return {"released": False, "noise_sd": noise, "noise_limit": limit, "denoised": None,
            "note": f"not released: at a share of {share} their noise sd on a correlation would be above the "
                    f"limit (no strong pair, |r| > 0.5, stands 2 sd out of it)"
                    + (" and the pairs test found no block of related columns standing out of it" if plan.pairs_test
                       else "") + ", so the synthetic columns are "
                    "drawn independently and the moments carry what dependence they can; favour='relationships' "
                    "(--favour relationships) or correlation_share (--correlation-share) releases them anyway, "
                    "denoised as a matrix (docs/relationships.md#where-it-stops)"
            if noise > limit else "not released (correlation_share = 0)"}
