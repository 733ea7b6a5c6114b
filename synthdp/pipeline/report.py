"""The privacy report of a fit, and the summaries it can hand out: post-processing only."""

from __future__ import annotations

import numpy as np
import pandas as pd

from synthdp._version import __version__
from synthdp.domain.units import contribution_bins
from synthdp.errors import SynthDPError
from synthdp.pipeline.plan import pairs_entry
from synthdp.pipeline.run import FittedModel
from synthdp.released import Release
from synthdp.summaries.marginal import MarginalSummary
from synthdp.summaries.smooth import Summary


def describe_output(frame: pd.DataFrame) -> dict:
    """The report's ``output`` entry for a synthetic table: its rows and distinct rows."""
    return {"rows": int(len(frame)), "distinct_rows": int(len(frame.drop_duplicates()))}


def privacy_report(model: FittedModel, output: dict | None = None) -> dict:
    """Everything about the release a user may see: budget per stage, sizes, LP, timings.

    ``output`` describes the synthetic table written with it (:func:`describe_output`), if any.
    """
    release, plan, config = model.release, model.release.plan, model.config
    return {
        "synthdp_version": __version__,
        "privacy": {**model.ledger.to_dict(), "noise_sampler": model.noise_sampler,
                    "neighbouring": plan.neighbours.describe(), **privacy_unit(release)},
        "parameters": {**plan.to_dict(), "config": {key: getattr(config, key) for key in config.keys()}},
        **({} if (pairs := pairs_entry(plan, release.scores_noise_sd if release.noisy_scores is not None
                                       else release.selected_pairs.noise_sd if release.selected_pairs is not None
                                       else None, release.pairs_test)) is None else {"pairs": pairs}),
        **({} if release.schema is None else {"schema": {
            **release.schema.to_dict(),
            "rows_other_noisy": release.noisy_rows_other,
            "rows_other_note": "Laplace-noised count of rows with a categorical value outside its levels "
                               "(decoded as other_label)" if release.noisy_rows_other is not None
                               else "not released (no categorical column, or clip_count_share = 0)",
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
            "spread": config.spread, "blend": config.blend, "tilt": config.tilt,
            "reweighting": reweighting(model.lp.solver),
            "uniform_share": model.blend_share,
            "rearranged": model.rearranged,  # the candidates moved onto the tilt's one-way marginals
            "support_size": int(len(model.support_weights))},
        "output": output,
        "engine": model.engine,
        # 0.1 ms is the clock's useful resolution; 17-digit floats would also read like data
        "timings_seconds": {stage: round(seconds, 4) for stage, seconds in model.timings.items()},
    }


def privacy_unit(release: Release) -> dict:
    """The report's ``privacy_unit`` entry (nothing without a privacy unit): the unit column,
    K, the noisy counts of the units stage, and what the output holds in the unit column."""
    units = release.units
    if units is None:
        return {}
    bins = contribution_bins(units.max_rows)
    return {"privacy_unit": {
        "column": units.column,
        "max_rows_per_unit": units.max_rows,
        "bounding": f"a random choice of at most {units.max_rows} rows per unit, made before any statistic and "
                    "without looking at the rows' values; the number of rows dropped is not released",
        "rows_noisy": units.noisy_rows,
        "units_per_contribution_bin_noisy": {f"{low}-{high}" if high > low else str(low): float(count)
                                             for (low, high), count in zip(bins, units.noisy_contributions)},
        "output": "the unit column holds synthetic identifiers (synthetic-1, ...), with rows per identifier drawn "
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


def smooth_summary(model: FittedModel, report: dict) -> Summary:
    """The release as a :class:`synthdp.Summary` of the numeric columns' moments."""
    release = model.release
    indices, moments = release.basis_indices, release.noisy_moments
    if release.schema is not None:  # the moments of the numeric columns alone
        d = release.schema.d_numeric
        if d == 0:
            raise SynthDPError("the table has no numeric column: use marginal_summary() for its marginals")
        numeric = ~indices[:, d:].any(axis=1)
        if not numeric.any():  # synthdp.pipeline.plan.mixed_numeric_moments
            raise SynthDPError("this release holds no moments of the numeric columns (under Laplace noise a mixed "
                               "table leaves them to its histograms and pairs release): sample a table, or fit with "
                               "synthesize=False (synthdp summarize) for a summary")
        indices, moments = indices[numeric, :d], moments[numeric]
    return Summary(release.domain, indices, moments, smoothness=release.plan.smoothness, report=report)


def marginal_summary(model: FittedModel, report: dict) -> MarginalSummary:
    """The release of a mixed table as a :class:`synthdp.MarginalSummary`."""
    release = model.release
    if release.schema is None:
        raise SynthDPError("marginal_summary() needs a fit with a schema that has binary or categorical columns")
    return MarginalSummary(release.schema, release.basis_indices, release.noisy_moments, report)
