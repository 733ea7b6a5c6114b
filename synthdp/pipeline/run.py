"""The fit pipeline: open the table, first pass, plan, release, then post-processing.

:func:`fit` is everything :meth:`synthdp.SmoothSynthesizer.fit` does, in layer order:

1. open the table (:mod:`synthdp.reader.table`, the only module that reads raw rows);
2. the first pass: the row count, and what the bounds need;
3. the plan (:func:`synthdp.pipeline.plan.make_plan`): every size and budget, from public inputs;
4. the release (:func:`release_numeric` or :func:`release_mixed`): exact sums from the reader,
   noise from :mod:`synthdp.privacy.release`, one ledger event per stage;
5. post-processing of the :class:`synthdp.released.Release` only: candidates
   (:mod:`synthdp.postprocess.candidates`), the l1 fit of their weights (:mod:`synthdp.postprocess.lp`).

After step 4 the table is dropped: nothing below it reads the rows.

:class:`StudyOptions` holds the alternatives to the product's choices that the design studies
of the experiments measure (``experiments/design_choices.py``), passed as ``fit(..., study=)``.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from synthdp.checks import is_int
from synthdp.config import MIN_EPSILON, CsvFormat, SynthConfig
from synthdp.domain.box import MISSING_BOUNDS_HELP, ColumnDomain, Domain, parse_bounds
from synthdp.domain.encoded import EncodedPoints
from synthdp.domain.schema import (
    Schema,
    bounds_schema,
    check_numeric_specs,
    check_schema_columns,
    check_schema_names,
    closed_level_columns,
    columns_to_discover,
    columns_without_bounds,
    declared_time_columns,
    is_draft,
    nullable_numeric_columns,
    schema_text_columns,
    with_levels,
)
from synthdp.errors import PrivacyLeakWarning, SynthDPError, TestingSeedWarning, listed, unknown_column, warn_user
from synthdp.pipeline.model import SamplingModel, draw
from synthdp.pipeline.plan import (
    LEVEL_CELLS,
    MOMENT_NOISE_LIMIT,
    SELECTION,
    Plan,
    check_plan_options,
    make_mixed_plan,
    make_plan,
    mixed_plan_basis,
)
from synthdp.pipeline.progress import StageTracker
from synthdp.postprocess.candidates import (
    ORDINAL_LEVELS,
    CandidateOptions,
    make_candidates,
    moments_noise_sd,
    quiet_block_tables,
)
from synthdp.postprocess.class_histograms import (
    class_block,
    conditioned_columns,
    margin_noise_sd,
    released_level_counts,
    short_levels,
)
from synthdp.postprocess.copula import Marginals, level_cell_estimates, rearranged
from synthdp.postprocess.lp import (
    BOX_PHASE_ROWS,
    TILT_NEWTON_ROWS,
    LPSolution,
    blend_with_uniform,
    candidate_columns,
    column_generation_pays,
    column_tilt_weights,
    held_row_range,
    precision_weighted,
    solve_l1_fit,
    solve_l1_fit_columns,
    spread_weights,
    tilt_first,
    tilt_weights,
)
from synthdp.postprocess.pairs import (
    EXTEND_BLOCKS,
    PAIR_FDR,
    PAIR_VARIANCES,
    SPIKE_RATIO,
    block_stands_out,
    marginal_score_map,
    score_offset,
)
from synthdp.postprocess.sampling import clean_weights
from synthdp.postprocess.selected_pairs import independent_sign_products, quadrant_score_map
from synthdp.privacy.budget import StageBudget
from synthdp.privacy.ledger import PrivacyLedger
from synthdp.privacy.noise import (
    NoiseSampler,
    OpenDPNoise,
    SeededNoise,
    expected_l1_norm,
    noise_standard_deviation,
)
from synthdp.privacy.release import (
    CLIPPED_ROWS,
    OTHER_ROWS,
    UNITS_COUNT_WEIGHT,
    release_bounded_means,
    release_class_histograms,
    release_domain,
    release_level_cells,
    release_levels,
    release_marginals,
    release_moments,
    release_pair_selection,
    release_pairs_test,
    release_pca,
    release_row_count,
    release_score_products,
    release_selected_pairs,
    release_units,
)
from synthdp.privacy.sensitivity import ROWS, Neighbours, score_products_sensitivity, units_sensitivity
from synthdp.reader.table import PrivateTable, domain_from_data, stored_parquet_index, table_header
from synthdp.reader.units import UnitBound
from synthdp.released import ClassHistograms, PairsTestResult, Release, SelectedPairs, UnitsRelease
from synthdp.stats import compiled, grid
from synthdp.stats.chebyshev import ChebyshevBasis, lowest_degree_indices, pair_product_rows, tensor_indices
from synthdp.stats.histograms import CellLayout
from synthdp.stats.mixed_basis import apart_cells, apart_columns, groups_count, one_way_cells
from synthdp.stats.row_sums import RowSums, SumRequest, block_levels
from synthdp.stats.scores import ScoreMap, pair_matrix, split_statistic

NOT_PRIVATE_BOUNDS = "bounds were read from the data: the release is NOT differentially private"
DRAFT_SCHEMA = ("the schema still has the \"draft\" entry of synthdp schema: its bounds, levels and values were read "
                "from the data and are not protected, so the release is NOT differentially private (replace them with "
                "public knowledge, then delete the entry)")
SEED_WARNING = "a known seed makes the noise predictable: set one (seed, --seed) for tests and reproducible runs only"
DEFAULT_PCA_COMPONENTS = 5
EXACT_STAGES = ("moments", "marginals", "correlation")
DENSE_SHARE = 0.1  # a mixed table's LP with more non-zeros than this share of W is solved with dense columns
NOT_PRIVATE_EXACT = ("exact values replaced the noisy release of {stages} (a design study's oracle): "
                     "the release is NOT differentially private")


@dataclass(frozen=True)
class StudyOptions:
    """Alternatives to the product's choices, for the design studies of the experiments.

    ``experiments/design_choices.py`` fits each variant with ``fit(config, data, bounds=...,
    study=StudyOptions(...))``. The defaults are the product: ``study=StudyOptions()`` releases
    exactly what ``study=None`` does, draw for draw. Anything else may change the release, and
    ``exact_stages`` makes it NOT differentially private (the ledger's caveats say so). Neither
    :class:`synthdp.SmoothSynthesizer` nor the CLI takes these options.

    Attributes
    ----------
    atom_threshold : float or None
        Noise standard deviations an atom of the copula's histograms must reach to be kept
        (:attr:`synthdp.postprocess.copula.Marginals.atom_threshold`; ``-inf`` keeps every
        atom); None: ``ATOM_THRESHOLD``. Post-processing.
    pair_threshold : float or None
        Noise standard deviations a released score correlation must reach to be kept
        (:func:`synthdp.postprocess.pairs.latent_correlation`); None: ``THRESHOLD``. Post-processing.
    nearest : callable or None
        The final projection onto the correlation matrices; None: ``nearest_correlation``.
        Post-processing.
    join_ratio : float or None
        The correlation ratio from which a categorical column of a mixed table joins the
        copula (:func:`synthdp.postprocess.candidates.ordinal_latent`); None: ``JOIN_RATIO``.
        Post-processing.
    spectral_pairs : bool or None
        Denoise the pairs release as a matrix (True) or pair by pair (False); None: the rule
        of :func:`synthdp.postprocess.candidates.spectral_pairs`. Post-processing.
    pair_variances : {"released", "model"}
        The variances that put the released score products in correlation units: the released
        ones (the product, where the pairs' noise is within the 0.25 limit; the copula's above
        it) or the copula's with one common factor (before). Post-processing.
    ordinal_levels : {"shrunk", "thresholded"}
        A joined categorical column's levels ordered by their posterior means, its latent
        correlations from every level's released deviation (the product), or both from the
        thresholded deviations (before) (:func:`synthdp.postprocess.candidates.ordinal_latent`).
        Post-processing.
    rearrange : bool
        Rearrange a tilted fit's candidates onto its one-way marginals where :func:`rearranges`
        says so (True, the product), or keep the tilt's weights (False). Post-processing.
    column_tilts : bool
        Where a tilted fit is rearranged, take each column's marginal from a tilt of that
        column's rows alone (:func:`synthdp.postprocess.lp.column_tilt_weights`; True) rather
        than from the one tilt of every row (False, the product). Post-processing.
    value_blocks : bool
        Give a mixed table's integer columns of few values their value blocks (True, the
        product: :data:`synthdp.domain.schema.MAX_VALUE_BLOCK`), or not (False, before): a
        schema given as a mapping is built without them, so the release holds no 2-way table
        of their values and fewer groups. Changes the release.
    binned_blocks : bool
        Give integer columns of more values binned value blocks, and every numeric column with a
        block its 2-way tables in place of its means per level (True, the product:
        :data:`synthdp.domain.schema.MAX_BINNED_BLOCK`), or neither (False, before: value blocks
        only, beside their columns' means per level). Changes the release.
    block_gate : bool
        The LP and the tilt leave out the cells of a value block's 2-way table whose dependence
        does not stand out of the noise (True, the product:
        :func:`synthdp.postprocess.candidates.quiet_block_tables`), or fit every table (False,
        before). Post-processing.
    tree_edges : bool
        A mixed table's categorical candidates take a 2-way table as a tree edge only where its
        dependence stands out of its noise (True, the product:
        :data:`synthdp.postprocess.candidates.EDGE_Z`), or every table (False, before).
        Post-processing.
    matrix_scores : bool or (int, float)
        Where the plan denoises the pairs as a matrix (``Plan.pairs_as_matrix``), score the rows
        in finer cells with the smaller norm bound (True, the product:
        :func:`synthdp.postprocess.pairs.marginal_score_map`; a pair (bins, clip share): at
        least that many bins and C^2 = share x d), or as pairs read one by one are (False,
        before). Changes the release.
    matrix_means : bool or float
        Where the plan denoises the pairs as a matrix, release the scores' means beside their
        products and fit the model to covariances (True: c^2 / C^2 =
        :data:`synthdp.stats.scores.MATRIX_MEAN_SHARE`; a number: that share), or the products
        only (False, the product). Not the product: the means remove the block that skewed
        columns' finer scores make without any dependence, but on tables whose skewed columns
        are related that block is aligned with theirs and carries it over the noise's edge
        (docs/decisions/score-means.md). Changes the release.
    block_edges : bool
        Pairs read one by one: read a column's pairs into a block of tied columns from the block
        as a whole, kept only where the column's pooled relation to the block is selected and the
        other members then at the block's reading (True, the product:
        :func:`synthdp.postprocess.pairs.block_edges_pooled`), or every selected pair as released
        and nothing else (False, before). Post-processing.
    extend_blocks : {"laplace", "always", "never"}
        With ``block_edges``: where the columns selected for a block count as its members for the
        columns not selected, which then keep no pair with them either: under Laplace noise
        ("laplace", the product), under either noise ("always"), or nowhere ("never", the rule
        before commit d4409c8 of 2026-11-28) (:func:`synthdp.postprocess.pairs.latent_correlation`).
        Post-processing.
    pair_entropy : bool or (float, float)
        Pairs read one by one: replace the fixed point's latent correlation by the one of largest
        entropy within a box of noise sd around each pair (True, the product: the plan's boxes,
        :func:`synthdp.postprocess.pairs.entropy_boxes`; a pair (kept, others): those boxes
        everywhere; :func:`synthdp.postprocess.pairs.max_entropy_correlation`), or keep it
        (False, before). Post-processing.
    pairs_test : bool
        Where the product releases no pairs (their noise above the pair-by-pair limit) but a
        block of related columns could show, release them, denoised as a matrix, only if a
        private test finds one (True: :func:`synthdp.pipeline.plan.pairs_test_planned`), or release
        none there (False, the product). Not the product: on tables with skewed columns the
        test's statistic stands above its line without any dependence, and the matrix release it
        leads to draws spurious correlations (docs/decisions/pairs-test.md). Changes the release.
    pair_fdr : float or None
        Pairs read one by one: keep a pair only where the Benjamini–Hochberg procedure at this
        false discovery rate also selects it (:data:`synthdp.postprocess.pairs.PAIR_FDR`, the
        product: :func:`synthdp.postprocess.pairs.false_discovery_keep`), or None: every pair
        from ``THRESHOLD`` noise sd (before). Post-processing.
    noise_box : bool
        Mixed tables: the tilt holds a moment whose noise sd is above MOMENT_NOISE_LIMIT within the
        universal threshold of the m such moments (sqrt(2 ln m) noise sd; ln(m) / sqrt(2) under
        Laplace noise) of its released value (True, the product: :func:`tilt_box`), or within
        ``config.tilt`` sd as every other row (False, before). Post-processing.
    tilt_without_pairs : bool
        Copula candidates without a pairs release: tilt the LP's optimum toward them where the
        moments' noise is within ``MOMENT_NOISE_LIMIT`` (True, the product: :func:`tilts`), or
        blend it with the uniform distribution there as where the moments get a tenth of the
        budget (False, before). Post-processing.
    rearrange_blend : bool
        Where the LP's optimum is blended with the uniform distribution and every moment is one
        column's (:func:`rearranges`), rearrange the candidates onto the blend's one-way marginals,
        each of weight 1/N (True, the product), or keep the blend's weights (False, before), whose
        optimum part repeats at most R + 1 candidates. Post-processing.
    moments_sensitivity : callable or None
        ``moments_sensitivity(indices, n) -> (l1, l2)``, the sensitivity the moments' noise is
        calibrated to instead of the derived one
        (:func:`synthdp.privacy.sensitivity.moments_sensitivity`), e.g. the generic 2R/n and
        2 sqrt(R)/n of :func:`synthdp.privacy.sensitivity.bounded_means_sensitivity`. The
        release is differentially private only if it bounds the true sensitivity; the
        per-value Laplace calibration (Laplace noise with delta > 0) ignores it, as it ignores
        the derived one. Numeric tables only.
    laplace_cells : bool
        Under Laplace noise, leave a mixed table's numeric means per level and own moments out of
        its moments where the histograms hold the numeric columns, and give the histograms at
        least a group's noise each (True, the product: :func:`synthdp.pipeline.plan.mixed_numeric_moments`,
        :func:`synthdp.pipeline.plan.mixed_shares`), or hold both as under Gaussian noise (False,
        before). Changes the release.
    quiet_clip : bool
        Lower the pairs' norm bound where their noise is above half the limit, down to d
        (True, the product: :func:`synthdp.pipeline.plan.pairs_clip_norm_sq`), or keep the default
        bound (False, before). Changes the release.
    select_pairs : bool
        Where no pair would stand out of a release of all of them, choose the pairs worth
        measuring privately and measure only those (True, the product:
        :func:`synthdp.pipeline.plan.selected_pair_count`), or release no pairs there (False,
        before). Changes the release.
    blend_noisy_pairs : bool
        With a pairs release and the moments' noise above the limit, blend the LP's optimum with
        the candidates (True, the product: :func:`tilts`) or tilt it (False, before).
    noise_sized_blend : bool
        Where the moments are noise (:attr:`synthdp.pipeline.plan.Plan.noisy_moments`) and
        ``config.blend`` is automatic, the blend's tolerance the moments' noise's expected l1 norm
        (True, the product: :func:`blend_factor`), or DEFAULT_BLEND times it there too (False, before).
    forest_selection : bool
        Choose the selected pairs as a spanning forest grows, each pick among the pairs joining two
        groups of columns not yet joined (True; :func:`synthdp.privacy.release.release_pair_selection`),
        or among all the pairs left (False, the product). Changes the release.
    chosen_pairs : tuple of (int, int) pairs, or None
        The selected pairs given instead of chosen: the release measures these (numeric columns'
        positions) and spends nothing on a choice. For the copies of a release that selected its
        pairs (:mod:`synthdp.pipeline.copies`), which measure the pairs the release chose, public
        once released. None: chosen privately (the product).
    exact_stages : tuple of str
        Stages among ``EXACT_STAGES`` ("moments", "marginals", "correlation") whose released
        values are replaced by the exact ones: the means of the moments, the histograms' cell
        counts, the means of the products of normal scores. Each such stage still draws its noise and
        records its ledger event first, so the other stages see the same draws as without it,
        and the post-processing still assumes the budgeted noise. A stage the plan does not
        release is left alone. NOT private: a diagnosis of where the error comes from.
    """

    atom_threshold: float | None = None
    pair_threshold: float | None = None
    nearest: Callable[[np.ndarray], np.ndarray] | None = None
    moments_sensitivity: Callable[[np.ndarray, int], tuple[float, float]] | None = None
    exact_stages: tuple[str, ...] = ()
    join_ratio: float | None = None
    spectral_pairs: bool | None = None
    rearrange: bool = True
    column_tilts: bool = False
    pair_variances: str = "released"
    ordinal_levels: str = "shrunk"
    value_blocks: bool = True
    binned_blocks: bool = True
    block_gate: bool = True
    tree_edges: bool = True
    matrix_scores: bool | tuple[int, float] = True
    matrix_means: bool | float = False
    block_edges: bool = True
    extend_blocks: str = "laplace"
    pair_entropy: bool | tuple[float, float] = True
    pairs_test: bool = False
    tilt_without_pairs: bool = True
    pair_fdr: float | None = PAIR_FDR
    laplace_cells: bool = True
    quiet_clip: bool = True
    select_pairs: bool = True
    blend_noisy_pairs: bool = True
    noise_sized_blend: bool = True
    forest_selection: bool = False
    chosen_pairs: tuple[tuple[int, int], ...] | None = None
    noise_box: bool = True
    rearrange_blend: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.exact_stages, str) or any(stage not in EXACT_STAGES for stage in self.exact_stages):
            raise SynthDPError(f"exact_stages must be a tuple of stages among {EXACT_STAGES}, "
                               f"got {self.exact_stages!r}")
        if self.pair_variances not in PAIR_VARIANCES:
            raise SynthDPError(f"pair_variances must be one of {PAIR_VARIANCES}, got {self.pair_variances!r}")
        if not isinstance(self.matrix_scores, bool) and not (
                isinstance(self.matrix_scores, tuple) and len(self.matrix_scores) == 2
                and int(self.matrix_scores[0]) >= 1 and float(self.matrix_scores[1]) > 0):
            raise SynthDPError(f"matrix_scores must be True, False or (bins >= 1, clip share > 0), "
                               f"got {self.matrix_scores!r}")
        if not isinstance(self.pair_entropy, bool) and not (
                isinstance(self.pair_entropy, tuple) and len(self.pair_entropy) == 2
                and all(float(box) >= 0 for box in self.pair_entropy)):
            raise SynthDPError(f"pair_entropy must be True, False or (kept box >= 0, free box >= 0), "
                               f"got {self.pair_entropy!r}")
        if self.chosen_pairs is not None and not all(
                isinstance(pair, tuple) and len(pair) == 2 and all(is_int(i) and i >= 0 for i in pair) and pair[0] != pair[1]
                for pair in self.chosen_pairs):
            raise SynthDPError(f"chosen_pairs must be a tuple of pairs (i, j) of two different column positions, "
                               f"got {self.chosen_pairs!r}")
        if self.extend_blocks not in EXTEND_BLOCKS:
            raise SynthDPError(f"extend_blocks must be one of {EXTEND_BLOCKS}, got {self.extend_blocks!r}")
        if self.ordinal_levels not in ORDINAL_LEVELS:
            raise SynthDPError(f"ordinal_levels must be one of {ORDINAL_LEVELS}, got {self.ordinal_levels!r}")

    def candidate_options(self) -> CandidateOptions:
        """The post-processing alternatives the candidate makers read (None: the product's)."""
        product = CandidateOptions()
        return CandidateOptions(
            product.atom_threshold if self.atom_threshold is None else self.atom_threshold,
            product.pair_threshold if self.pair_threshold is None else self.pair_threshold,
            product.nearest if self.nearest is None else self.nearest,
            product.join_ratio if self.join_ratio is None else self.join_ratio,
            self.spectral_pairs,
            self.pair_variances,
            self.ordinal_levels,
            product.edge_z if self.tree_edges else -math.inf,
            self.matrix_scores,
            pair_entropy=self.pair_entropy is not False,
            pair_boxes=(None if isinstance(self.pair_entropy, bool)
                        else (float(self.pair_entropy[0]), float(self.pair_entropy[1]))),
            pair_fdr=self.pair_fdr,
            matrix_means=self.matrix_means,
            block_edges=self.block_edges,
            extend_blocks=self.extend_blocks,
        )


PRODUCT = StudyOptions()  # the product's choices: what study=None means


@dataclass
class FittedModel:
    """What a fit leaves: the release, its ledger, and the fitted distribution over candidates.

    Everything here is public (noisy statistics, sizes, the LP's solution over public candidate
    points), except ``rng``, the generator of public randomness that :func:`sample` draws from.

    Attributes
    ----------
    config : SynthConfig
        The configuration the user gave (before any budget was set aside for level discovery).
    release : Release
    ledger : PrivacyLedger
    lp : LPSolution or None
        None for a summary-only fit (``synthesize=False``).
    support_points : array, shape (S, D), EncodedPoints, or None
        Candidates with positive weight (a mixed table's held as each column's level,
        :class:`~synthdp.domain.encoded.EncodedPoints`; ``numpy.asarray`` gives the array).
    support_weights : array, shape (S,), or None
    blend_share : float
        Share of the uniform distribution over the candidates mixed into the LP's optimum.
    rearranged : bool
        Whether the tilted or blended candidates were rearranged onto their weighted marginals
        (:func:`synthdp.postprocess.copula.rearranged`): the support is then every candidate, at
        weight 1/N.
    noise_sampler : str
        Name of the noise source (for the report).
    engine : dict
        How the rows were read: the engine, the input kind, the chunk size (for the report).
    timings : dict
        Seconds per stage.
    rng : numpy Generator
        Public randomness for sampling rows.
    """

    config: SynthConfig
    release: Release
    ledger: PrivacyLedger
    lp: LPSolution | None
    support_points: np.ndarray | EncodedPoints | None
    support_weights: np.ndarray | None
    blend_share: float
    rearranged: bool
    noise_sampler: str
    engine: dict
    timings: dict[str, float]
    rng: np.random.Generator


# ---------------------------------------------------------------------- fit
def fit(
    config: SynthConfig,
    data: Any,
    bounds: Mapping[str, object] | Domain | None = None,
    bounds_from_data: bool = False,
    synthesize: bool = True,
    schema: Mapping | Schema | None = None,
    progress: bool = False,
    study: StudyOptions | None = None,
    csv_format: CsvFormat | None = None,
    planned: Release | None = None,
    ledger: PrivacyLedger | None = None,
) -> FittedModel:
    """Spend the budget of ``config`` on ``data`` and fit the synthetic distribution.

    The arguments are those of :meth:`synthdp.SmoothSynthesizer.fit`; ``progress`` shows a
    progress bar on stderr; ``study`` holds the alternatives of a design study
    (:class:`StudyOptions`; None is the product); ``csv_format`` says how a CSV input is written.
    ``planned``: a release whose plan (and mixed basis) this fit reuses instead of making its own
    (:func:`synthdp.pipeline.copies.release_copies`: a copy runs the release's mechanism on a
    population of the release's n rows, and ``data`` must be that).
    ``ledger``: an empty ledger of ``config``'s budget to record the stages in (default a new one),
    for a caller that must know, when the fit fails, whether a stage had released anything.
    """
    if ledger is None:
        ledger = PrivacyLedger(config.epsilon, config.delta)
    elif ledger.events or (ledger.epsilon, ledger.delta) != (config.epsilon, config.delta):
        raise SynthDPError("fit needs an empty ledger of the config's budget")
    if schema is not None and (bounds is not None or bounds_from_data):
        raise SynthDPError("give either a schema or bounds, not both")
    if isinstance(schema, Mapping):  # before the table is read: a bad type is not reported as a bad column
        check_schema_columns(schema, given=planned is None)
    if config.privacy_unit is not None:  # the unit column is not synthesized: its bounds or type are not needed
        bounds, schema = without_column(bounds, config.privacy_unit), without_column(schema, config.privacy_unit)
    from_bounds = False
    if isinstance(bounds, Mapping) and (nullable_schema := bounds_schema(bounds)) is not None:
        schema, bounds, from_bounds = nullable_schema, None, True  # nullable columns: the mixed model
    if isinstance(data, pd.DataFrame) and isinstance(data.columns, pd.MultiIndex):
        raise SynthDPError("the DataFrame's columns are a MultiIndex: give each column one name (e.g. df.columns = "
                           "['_'.join(map(str, name)) for name in df.columns])")
    _check_stored_index(data, bounds, schema)
    full_config = config
    draft = is_draft(schema)  # a schema drafted from the data (synthdp schema), not yet edited
    noise, rng = randomness(config)
    unit = None if config.privacy_unit is None or config.max_rows_per_unit is None else UnitBound(
        config.privacy_unit, config.max_rows_per_unit, int(rng.integers(2**63)),  # the key: public randomness
        closed_level_columns(schema) if schema is not None else ())  # checked before the units' count
    if isinstance(schema, Mapping):  # a column it names that the header has not: said before the types it gives
        check_schema_columns(schema, "schema")
        _check_names_against_header(list(schema["columns"]), data, csv_format or CsvFormat(),
                                    "bounds name" if from_bounds else "schema names")
    elif isinstance(bounds, Mapping):  # said before the table is read (a missing cell of a misspelt column)
        _check_names_against_header(list(bounds), data, csv_format or CsvFormat(), "bounds name")
    table = open_table(config, data, schema_text_columns(schema or {}), csv_format or CsvFormat(),
                       nullable_numeric_columns(schema), time_columns=declared_time_columns(bounds, schema), unit=unit)
    if from_bounds and isinstance(schema, Mapping):  # a column the bounds leave out: its bounds are to be estimated
        schema = {**schema, "columns": {**{name: {"type": "continuous"} for name in table.all_names},
                                        **schema["columns"]}}
    neighbours = ROWS if unit is None else Neighbours(unit.max_rows, unit.column)
    basis = check_public_inputs(config, table, bounds, schema, bounds_from_data, synthesize, neighbours, study,
                                makes_plan=planned is None)
    units, public_n = None, None
    if unit is not None:
        units, config = release_unit_counts(config, table, neighbours, ledger, noise)  # config: the budget left
        public_n = max(2, round(units.noisy_rows))
    if schema is not None and not isinstance(schema, Schema) and columns_to_discover(schema):
        schema, config = discover_levels(config, table, schema, ledger, noise, neighbours)  # config: the budget left
    elif config.levels_share > 0:
        warnings.warn("levels_share (--levels-share) acts only where a schema's column says \"levels\": "
                      "\"discover\": ignored in this run", UserWarning, stacklevel=3)
    estimated: tuple[str, ...] = ()
    if isinstance(schema, Mapping) and (unbounded := columns_without_bounds(schema, table.column_names)):
        estimated_epsilon = config.epsilon * config.bounds_share
        schema, config, estimated = estimate_schema_bounds(config, table, schema, unbounded, ledger, noise,
                                                           neighbours, public_n)
    if schema is not None:
        schema = build_schema(schema, table.all_names, config, synthesize, study)  # its columns: checked above
        for column in schema.declared:  # public: the schema's levels (and other_label), not the data's values
            if (marked := column.read_as_missing) is not None:
                warnings.warn(f"column '{column.name}' has the level '{marked}', which a CSV file's reader (pandas "
                              "by default) takes for a missing value: read from a CSV file it is missing (or "
                              "'other'), and so are the synthetic CSV's cells of that level when read back; rename "
                              "the level", UserWarning, stacklevel=3)
        if estimated:
            schema = schema.with_sources(estimated, "DP estimate")
        if config.class_column is not None and synthesize:  # a summary releases no histograms: no class
            class_block(schema, config.class_column)  # before any pass over the rows: a one-line error
        bounds = None if schema.categorical else schema.numeric  # numeric only: a bounds file
    # First pass: the row count, and what the bounds need (histograms, or the data's ranges).
    scan_start = time.perf_counter()
    run_release: Callable[[StageTracker], Release]
    if config.bounds_share > 0 and not estimated and (schema is not None or bounds_from_data or (
            isinstance(bounds, Mapping) and all(name in bounds for name in table.column_names))):
        warnings.warn("bounds_share (--bounds-share) acts only where the bounds or the schema leave a numeric "
                      "column's bounds out: ignored in this run", UserWarning, stacklevel=3)
    if schema is not None and schema.categorical:
        n_rows = table.row_sums(SumRequest()).n_rows if public_n is None else public_n
        if planned is not None:
            plan, indices = planned.plan, planned.basis_indices
        else:
            plan, schema, indices = make_mixed_plan(config, schema, n_rows, synthesize, neighbours,
                                                    block_means=not (study or PRODUCT).binned_blocks,
                                                    laplace_cells=(study or PRODUCT).laplace_cells,
                                                    quiet_clip=(study or PRODUCT).quiet_clip, basis=basis)
        if estimated:  # spent before the plan, on the schema's bounds: its budget shows them as a numeric table's
            plan = replace(plan, budget=replace(plan.budget, bounds=estimated_epsilon))
        if config.class_column is not None and synthesize and not len(conditioned_columns(schema)):
            warnings.warn(f"class_column '{config.class_column}' acts on the numeric columns without a value block "
                          "(an integer column of few values has its 2-way tables with the class already), and this "
                          "table has none: ignored in this run", UserWarning, stacklevel=3)
        run_release = partial(release_mixed, table, schema, indices, plan, config, ledger, noise, study=study)
    else:
        known_columns = known_bounds(config, table, bounds, bounds_from_data)
        missing = () if bounds_from_data else tuple(
            j for j, name in enumerate(table.column_names) if name not in known_columns)
        scan = table.row_sums(SumRequest(histogram_columns=missing, data_range=bounds_from_data))
        if bounds_from_data:
            known_columns = {column.name: column for column in domain_from_data(table.column_names, scan).columns}
        plan = planned.plan if planned is not None else make_plan(
            config, scan.n_rows if public_n is None else public_n, table.d, bounds_are_public=not bounds_from_data,
            estimated_bounds=table.d - len(known_columns), synthesize=synthesize, neighbours=neighbours,
            pairs_test=study is not None and study.pairs_test, quiet_clip=(study or PRODUCT).quiet_clip,
            select_pairs=(study or PRODUCT).select_pairs)
        if estimated:
            plan = replace(plan, budget=replace(plan.budget, bounds=estimated_epsilon))
        run_release = partial(release_numeric, table, scan, known_columns, plan, config, ledger, noise, rng,
                              study=study)
    scan_seconds = time.perf_counter() - scan_start
    if bounds_from_data:
        ledger.add_caveat(NOT_PRIVATE_BOUNDS)
    if draft:
        warnings.warn(DRAFT_SCHEMA, PrivacyLeakWarning, stacklevel=3)
        ledger.add_caveat(DRAFT_SCHEMA)
    if not noise.private:
        ledger.add_caveat(SEED_WARNING)
    if study is not None and study.exact_stages:
        exact = NOT_PRIVATE_EXACT.format(stages=", ".join(study.exact_stages))
        warnings.warn(exact, PrivacyLeakWarning, stacklevel=2)
        ledger.add_caveat(exact)
    pairs = ["correlation"] if plan.releases_pairs else []
    histograms = ["marginals", *pairs] if plan.marginal_bins else []
    stage_names = (["moments"] + {"pca": ["private PCA"], "copula": ["marginals", *pairs],
                                  "mixed": histograms}.get(plan.candidates, [])
                   + (["candidates", "LP fit"] if synthesize else [])
                   + (["LP spread"] if synthesize and full_config.spread > 0 else [])
                   + (["LP tilt"] if synthesize and tilts(full_config, plan, study) else []))
    stages = StageTracker(stage_names, quiet=not progress)
    try:
        released = run_release(stages)  # with level discovery above, the only step that reads the raw rows
        # how the rows were read, with where a streamed file's cells were kept, and the kernels that summed them
        engine = {**table.engine, "kernels": compiled.describe(plan.n)}
        if neighbours.by_unit:  # where the cells were kept follows the private row count: not for the report
            engine.pop("kept_cells", None)
        if units is not None:
            released = replace(released, units=units)
        del table, run_release  # nothing below reads them
        solution, points, weights, blend_share, rearranged = None, None, None, 0.0, False
        if synthesize:
            solution, points, weights, blend_share, rearranged = fit_distribution(released, full_config, rng, stages,
                                                                                  study)
    finally:
        stages.close()
    return FittedModel(full_config, released, ledger, solution, points, weights, blend_share, rearranged, noise.name,
                       engine, {"first pass": scan_seconds, **stages.timings}, rng)


def without_column(entries: Any, name: str) -> Any:
    """A bounds or schema mapping without ``name``'s entry (at the top, or under "columns"); other objects as given."""
    if not isinstance(entries, Mapping):
        return entries
    columns = entries.get("columns")
    if isinstance(columns, Mapping):
        return {**entries, "columns": {key: value for key, value in columns.items() if key != name}}
    return {key: value for key, value in entries.items() if key != name}


def _check_stored_index(data: Any, bounds: Any, schema: Any) -> None:
    """A Parquet file's stored pandas index is not a column (as ``pandas.read_parquet`` reads the
    file): bounds or a schema naming it are refused with the way out, and a release without it
    warns that the synthetic table has no such column (before, it said "unknown column", or nothing)."""
    stored = stored_parquet_index(data)
    if not stored:
        return
    named = set(bounds) if isinstance(bounds, Mapping) else set()
    if isinstance(schema, Mapping) and isinstance(schema.get("columns"), Mapping):
        named |= set(schema["columns"])
    way_out = "write the file with df.reset_index().to_parquet(path) to release it"
    hit = [name for name in stored if name in named]
    if hit:
        raise SynthDPError(f"column '{hit[0]}' is the Parquet file's stored pandas index, which is not a column "
                           f"(pandas.read_parquet reads it as the index): {way_out}, or leave it out")
    warnings.warn(f"the Parquet file's stored pandas index '{stored[0]}' is not a column (pandas.read_parquet reads "
                  f"it as the index), so the synthetic table has none: {way_out}", UserWarning, stacklevel=3)


def _check_names_against_header(given: list[str], data: Any, csv_format: CsvFormat, prefix: str) -> None:
    """The columns a schema or bounds name (``given``) that a DataFrame's columns or a file's header
    (public: no row is read) do not hold, named as :func:`check_schema_names` and
    :func:`synthdp.domain.box.parse_bounds` name them (``prefix``: "schema names", "bounds name"),
    before the table is read with the types they give: a column spelt 'Species' for 'species' was
    read as numeric and refused as "not numeric", a misspelt bounded column with a missing cell as
    "missing values"."""
    if isinstance(data, pd.DataFrame):
        names = [str(name) for name in data.columns]
    elif isinstance(data, (str, Path)) and Path(data).is_file():
        names = table_header(data, "input file", csv_format)
    else:
        return
    unknown = [name for name in given if name not in names]
    if unknown:
        raise unknown_column(prefix, unknown[0], names)


def open_table(config: SynthConfig, data: Any, text_columns: tuple[str, ...] | list[str],
               csv_format: CsvFormat | None = None, nullable: tuple[str, ...] = (),
               time_columns: Mapping[str, str] | None = None, unit: UnitBound | None = None) -> PrivateTable:
    """The table to release, through the configured engine (in memory, streamed or Dask), numeric
    or mixed: ``text_columns`` are a mixed table's binary and categorical columns, ``nullable``
    its numeric columns with missing cells, ``time_columns`` the date and datetime columns {name: kind};
    ``unit`` the privacy unit and its contribution bound."""
    if isinstance(data, PrivateTable):
        if unit is not None and data.contributions is None:
            raise SynthDPError("privacy_unit needs the table itself (a DataFrame or a file), not an opened PrivateTable")
        return data
    return PrivateTable.open(data, config.engine, config.chunk_rows, config.scheduler, csv_format or CsvFormat(),
                             time_columns, text_columns, nullable, unit)


def release_unit_counts(config: SynthConfig, table: PrivateTable, neighbours: Neighbours, ledger: PrivacyLedger,
                        noise: NoiseSampler) -> tuple[UnitsRelease, SynthConfig]:
    """By unit: the units stage (:func:`synthdp.privacy.release.release_units`, Laplace, epsilon
    times ``config.units_share``), and the config holding the budget left for the rest."""
    contributions = table.contributions
    if contributions is None:
        raise SynthDPError("the table was opened without its privacy unit")
    epsilon = config.epsilon * config.units_share
    noisy_rows, noisy_bins = release_units(contributions.n_rows, contributions.histogram(), StageBudget(epsilon, 0.0),
                                           neighbours, ledger, noise)
    units = UnitsRelease(contributions.bound.column, contributions.position, contributions.bound.max_rows,
                         noisy_rows, noisy_bins)
    # the noisy count's sd in rows (public: Laplace of scale (w + 1) / epsilon on w n / K)
    count_sd = math.sqrt(2) * units_sensitivity(UNITS_COUNT_WEIGHT)[0] / epsilon * neighbours.k / UNITS_COUNT_WEIGHT
    if noisy_rows < 2 * count_sd:
        warnings.warn(f"the released row count ({noisy_rows:.0f}; the release takes n = {max(2, round(noisy_rows))}) "
                      f"has noise of sd {count_sd:.0f} rows at this budget ({epsilon:.3g} for the units stage, up to "
                      f"{neighbours.k} rows per unit): n, and every mean it divides, are that uncertain; raise "
                      "units_share (--units-share) or lower max_rows_per_unit (--max-rows-per-unit)",
                      UserWarning, stacklevel=4)
    return units, replace(config, epsilon=config.epsilon - epsilon)


def build_schema(schema: Mapping | Schema, names: Sequence[str], config: SynthConfig, synthesize: bool,
                 study: StudyOptions | None) -> Schema:
    """The schema the release encodes the table's columns ``names`` with: a mapping's built
    (:meth:`Schema.from_dict`), a caller's Schema as given; with value blocks (for the candidates' 2-way
    tables: none at marginal degree 1, none for a summary only, whose marginals are over the table's
    columns, none in a design study without them), the binned ones where the study keeps them."""
    blocks = (study is None or study.value_blocks) and config.marginal_degree >= 2 and synthesize
    binned = study is None or study.binned_blocks
    if isinstance(schema, Schema):  # built by the caller: its value blocks dropped where they would only add noise
        return (schema if binned else schema.without_binned_blocks()) if blocks else schema.without_value_blocks()
    return Schema.from_dict(schema, names, value_blocks=blocks, binned_blocks=binned)


def check_public_inputs(config: SynthConfig, table: PrivateTable, bounds: Mapping[str, object] | Domain | None,
                        schema: Mapping | Schema | None, bounds_from_data: bool, synthesize: bool = True,
                        neighbours: Neighbours = ROWS, study: StudyOptions | None = None,
                        makes_plan: bool = True) -> tuple[Schema, np.ndarray, bool] | None:
    """What the public inputs alone refuse (the schema's or the bounds' columns against the header, a
    schema's numeric columns' bounds, the share a column's levels or bounds to be found need, level
    discovery on a streamed table), checked before any release: the units' count (by unit), level
    discovery and the bounds' estimates come before the steps that found them, and a budget file was
    charged for a run that then failed.

    Where such a release comes before the plan, also what the schema and the plan refuse whatever n:
    the plan's options (:func:`synthdp.pipeline.plan.check_plan_options`), every column as the schema
    is built (:func:`build_schema`: a binary column's levels, a name its missingness or value block
    needs; then the class column, :func:`class_block`), no level standing for those to discover and
    bounds [0, 1] for those to estimate (as a continuous column's: no value block, so no refusal of
    one the estimate might not make); by unit,
    with every level and bound given, a mixed table's basis and its LP's size
    (:func:`synthdp.pipeline.plan.mixed_plan_basis`), returned for the plan to take (``makes_plan``
    False: the fit takes a plan made before, and none is returned)."""
    discover: list[str] = []
    unbounded: list[str] = []
    if isinstance(schema, Schema) and list(schema.names) != table.all_names:
        raise SynthDPError("the schema's columns do not match the table's")
    if isinstance(schema, Mapping):
        check_schema_names(schema, table.all_names)  # a schema of other columns costs nothing
        discover = columns_to_discover(schema)
        if discover:
            _check_levels_share(config, discover)
            table.check_level_counts(discover)  # the schema's columns are the table's (checked above)
        unbounded = columns_without_bounds(schema, table.column_names)
        if unbounded:
            _check_bounds_share(config, unbounded)
        check_numeric_specs(schema, unbounded)
    elif schema is None and (bounds is not None or not bounds_from_data):  # not its warning of bounds from data
        known_bounds(config, table, bounds, bounds_from_data)
    _check_epsilon_left(config, neighbours.by_unit, bool(discover), bool(unbounded))
    if not (neighbours.by_unit or discover or unbounded):
        return None  # the plan comes before the first release, and refuses the rest itself
    if schema is None:
        check_plan_options(config, table.d, synthesize)
        return None
    if isinstance(schema, Mapping):
        schema = {**schema, "columns": {
            name: {**spec, "levels": []} if name in discover else
            {**spec, "type": "continuous", "bounds": [0, 1]} if name in unbounded else spec
            for name, spec in schema["columns"].items()}}
    built = build_schema(schema, table.all_names, config, synthesize, study)
    if config.class_column is not None and synthesize:  # as fit checks it once the schema is built
        class_block(built, config.class_column)
    if not built.categorical:  # released as a numeric table
        check_plan_options(config, built.d_numeric, synthesize)
    elif makes_plan and not discover and not unbounded:  # by unit, every level and bound given
        return mixed_plan_basis(config, built, synthesize, block_means=not (study or PRODUCT).binned_blocks,
                                laplace_cells=(study or PRODUCT).laplace_cells)
    else:
        check_plan_options(config, built.n_coordinates, synthesize, mixed=True)
    return None


def _check_epsilon_left(config: SynthConfig, units: bool, levels: bool, bounds: bool) -> None:
    """The epsilon the units' count, level discovery and the schema's bounds estimates leave the rest
    (as :func:`release_unit_counts`, :func:`discover_levels` and :func:`estimate_schema_bounds` take it,
    their config then checked as a user's) must be at least MIN_EPSILON: refused before the first of them."""
    epsilon = config.epsilon - config.epsilon * config.units_share if units else config.epsilon
    epsilon = epsilon * (1 - config.levels_share) if levels else epsilon
    epsilon = epsilon * (1 - config.bounds_share) if bounds else epsilon
    if epsilon < MIN_EPSILON:
        shares = [name for name, used in (("--units-share", units), ("--levels-share", levels),
                                          ("--bounds-share", bounds)) if used]
        raise SynthDPError(f"epsilon (--epsilon) {config.epsilon:g} leaves {epsilon:.3g} after {', '.join(shares)}, "
                           f"below the least epsilon of a release, {MIN_EPSILON:g}: raise --epsilon")


def _check_levels_share(config: SynthConfig, names: Sequence[str]) -> None:
    if config.levels_share == 0:
        raise SynthDPError(f"column '{names[0]}' asks for DP level discovery: "
                           "set levels_share (CLI: --levels-share S) and delta > 0")
    if config.delta * config.levels_share / len(names) == 0:  # each column's delta, as release_levels takes it
        raise SynthDPError(f"delta (--delta) {config.delta:.3g} times --levels-share over {len(names)} column(s) is 0 "
                           "in floating point: raise --delta")


def _check_bounds_share(config: SynthConfig, names: Sequence[str]) -> None:
    if config.bounds_share == 0:
        raise SynthDPError(f"no bounds for column '{names[0]}': give them (in the bounds or schema file), or spend a "
                           "share of epsilon on DP estimates (bounds_share; CLI: --bounds-share S)")


def discover_levels(config: SynthConfig, table: PrivateTable, schema: Mapping, ledger: PrivacyLedger,
                    noise: NoiseSampler, neighbours: Neighbours = ROWS) -> tuple[dict, SynthConfig]:
    """The schema with DP-discovered levels, and the config holding the budget left for the rest."""
    discover = columns_to_discover(schema)
    names = [name for name in table.all_names if name in discover]  # the table's order, not the schema file's keys'
    _check_levels_share(config, names)
    share = config.levels_share
    counts = {name: table.level_counts(name) for name in names}  # the table's columns (check_public_inputs)
    levels = release_levels(counts, config.epsilon * share, config.delta * share, ledger, noise, neighbours)
    rest = replace(config, epsilon=config.epsilon * (1 - share), delta=config.delta * (1 - share))
    return with_levels(schema, levels), rest


def estimate_schema_bounds(config: SynthConfig, table: PrivateTable, schema: Mapping, names: Sequence[str],
                           ledger: PrivacyLedger, noise: NoiseSampler, neighbours: Neighbours = ROWS,
                           public_n: float | None = None) -> tuple[dict, SynthConfig, tuple[str, ...]]:
    """The schema with DP estimates of the bounds its numeric columns ``names`` leave out, the config
    holding the budget left for the rest, and those names: as a numeric table's missing bounds
    (:func:`synthdp.privacy.release.release_domain`: one Laplace histogram over fixed power-of-two
    bins per column, epsilon * bounds_share split between them; a missing cell is in no bin), in a
    pass of their own before the schema is built, since its value blocks and encoding need them. An
    integer column's estimate is widened to whole numbers."""
    _check_bounds_share(config, names)
    specs = schema["columns"]  # a date or datetime column without bounds has been refused as the table opened
    scan = table.row_sums(SumRequest(histogram_columns=tuple(table.column_names.index(name) for name in names)))
    share = config.bounds_share
    domain = release_domain(list(names), scan, {}, config.epsilon * share, ledger, noise,
                            scan.n_rows if public_n is None else public_n, neighbours)
    columns = dict(specs)
    for column in domain.columns:
        lower, upper = column.lower, column.upper
        if specs[column.name].get("type") == "integer":
            lower, upper = math.floor(lower), math.ceil(upper)
        columns[column.name] = {**specs[column.name], "bounds": [lower, upper]}
    return {**schema, "columns": columns}, replace(config, epsilon=config.epsilon * (1 - share)), tuple(names)


def known_bounds(config: SynthConfig, table: PrivateTable, bounds: Mapping[str, object] | Domain | None,
                 bounds_from_data: bool) -> dict[str, ColumnDomain]:
    """The columns whose bounds the user gave (none when they are to be read from the data)."""
    if bounds_from_data and bounds is not None:
        raise SynthDPError("give either bounds (--bounds) or bounds_from_data (--bounds-from-data), not both")
    if bounds_from_data:
        warnings.warn(NOT_PRIVATE_BOUNDS, PrivacyLeakWarning, stacklevel=4)
        return {}
    if isinstance(bounds, Domain):
        given = {column.name: column for column in bounds.columns}
        return {name: given[name] for name in table.column_names if name in given}
    known = parse_bounds(bounds or {}, table.column_names)
    if len(known) < table.d and config.bounds_share == 0:
        missing = next(name for name in table.column_names if name not in known)
        raise SynthDPError(
            f"no bounds for column '{missing}': {MISSING_BOUNDS_HELP}" if known else f"no bounds given: {MISSING_BOUNDS_HELP}"
        )
    return known


def randomness(config: SynthConfig) -> tuple[NoiseSampler, np.random.Generator]:
    """The noise sampler and the Generator for public randomness (candidates, sampling)."""
    if config.seed is None:
        return OpenDPNoise(), np.random.default_rng()
    warnings.warn(SEED_WARNING, TestingSeedWarning, stacklevel=4)
    noise_rng, public_rng = np.random.default_rng(config.seed).spawn(2)
    return SeededNoise(noise_rng), public_rng


# ------------------------------------------------------------------ release
def release_numeric(
    table: PrivateTable,
    scan: RowSums,
    known_columns: dict[str, ColumnDomain],
    plan: Plan,
    config: SynthConfig,
    ledger: PrivacyLedger,
    noise: NoiseSampler,
    rng: np.random.Generator,
    stages: StageTracker,
    study: StudyOptions | None = None,
) -> Release:
    """Run every private stage of a numeric table once and return the release.

    ``scan`` holds the statistics of the first pass over the table (the row count, and the
    histograms of the columns without bounds); ``known_columns`` holds the bounds the user
    gave (or read from the data); the bounds of the other columns are estimated here with DP.
    The second pass sums what the moments and the private PCA need, with the domain.
    ``study``: a design study's alternatives (:class:`StudyOptions`; None is the product).
    """
    study = PRODUCT if study is None else study
    budget = plan.budget
    domain = release_domain(table.column_names, scan, known_columns, budget.bounds, ledger, noise, plan.n,
                            plan.neighbours)
    with stages.stage("moments"):
        if plan.mode == "exact":
            indices = tensor_indices(plan.d, plan.theory.t)
        else:
            indices = lowest_degree_indices(plan.d, plan.n_basis + plan.skipped_pairs)
            if plan.skipped_pairs and plan.pairs_test is None:  # with a test, dropped once it has passed
                indices = indices[~pair_product_rows(indices)]
        pca_wanted, copula_wanted = plan.candidates == "pca", plan.candidates == "copula"
        layout = CellLayout.for_domain(domain, plan.marginal_bins, plan.value_cells) if copula_wanted else None
        sums = table.row_sums(SumRequest(domain, indices, plan.theory.N if plan.mode == "exact" else None,
                                         column_sums=pca_wanted, second_moment=pca_wanted, cell_layout=layout,
                                         compiled=compiled.use_compiled(plan.n)))
        noisy_rows_clipped = None
        if budget.clip_count > 0:
            noisy_rows_clipped = release_row_count(int(sums["rows_clipped"]), budget.clip_count, "clip_count",
                                                   CLIPPED_ROWS, ledger, noise, plan.neighbours)
        moments = sums["moments"] / plan.n
        if plan.pairs_test is None:
            noisy_moments = release_numeric_moments(moments, indices, plan, ledger, noise, study)
    pca = histograms = noisy_scores = test = selected = None
    histogram_noise_sd = scores_noise_sd = 0.0
    if pca_wanted:
        with stages.stage("private PCA"):
            pca = release_pca(sums["column_sums"], sums["second_moment"], indices, noisy_moments, budget.stage("pca"),
                              plan.n, min(plan.d, config.pca_components or DEFAULT_PCA_COMPONENTS),
                              config.pca_iterations, config.pca_calibration, plan.noise, ledger, noise, rng,
                              plan.neighbours)
    if copula_wanted and layout is not None:
        with stages.stage("marginals"):
            histograms, histogram_noise_sd = release_marginals(sums["cell_counts"], layout, budget.stage("marginals"),
                                                               ledger, noise, plan.neighbours)
            if "marginals" in study.exact_stages:  # the oracle: NOT private (StudyOptions)
                histograms = sums["cell_counts"].copy()
        if plan.pairs_test is not None:
            plan, histograms, histogram_noise_sd, noisy_scores, scores_noise_sd, test = release_tested_pairs(
                table, domain, histograms, histogram_noise_sd, sums["cell_counts"], layout, plan, ledger, noise, rng,
                stages, study)
            if plan.skipped_pairs:  # the test found a block: the pairs release measures the pair products
                keep = ~pair_product_rows(indices)
                indices, moments = indices[keep], moments[keep]
            with stages.stage("moments"):
                noisy_moments = release_numeric_moments(moments, indices, plan, ledger, noise, study)
        elif plan.selects_pairs:
            selected = release_pair_choice(table, domain, histograms, histogram_noise_sd, layout, plan, ledger, noise,
                                           stages, study)
        elif plan.releases_pairs:
            noisy_scores, scores_noise_sd = release_pairs(table, domain, histograms, histogram_noise_sd, layout, plan,
                                                          ledger, noise, stages, study)
    scales = np.full(len(indices), ledger.event("moments").noise_scale)
    moment_noise_l1 = expected_l1_norm(plan.noise, float(scales.sum()), 1)  # the sum of each E|noise|
    moment_noise_sd = noise_standard_deviation(plan.noise, 1.0) * scales
    return Release(domain, plan, indices, noisy_moments, moment_noise_l1, moment_noise_sd, pca, histograms,
                   histogram_noise_sd, noisy_scores, scores_noise_sd, noisy_rows_clipped, cell_layout=layout,
                   pairs_test=test, selected_pairs=selected)


def release_numeric_moments(moments: np.ndarray, indices: np.ndarray, plan: Plan, ledger: PrivacyLedger,
                            noise: NoiseSampler, study: StudyOptions) -> np.ndarray:
    """The moments release of a numeric table (:func:`synthdp.privacy.release.release_moments`) at
    the plan's share, with a design study's sensitivity or exact values."""
    sensitivity = None if study.moments_sensitivity is None else study.moments_sensitivity(indices, plan.n)
    noisy_moments = release_moments(moments, indices, plan.budget.stage("moments"), plan.n, ledger, noise,
                                    skipped_pairs=plan.skipped_pairs, sensitivity=sensitivity,
                                    neighbours=plan.neighbours)
    if "moments" in study.exact_stages:  # the oracle: NOT private (StudyOptions)
        noisy_moments = moments.copy()
    return noisy_moments


def release_pairs(table: PrivateTable, domain: Domain, histograms: np.ndarray, histogram_noise_sd: float,
                  layout: CellLayout, plan: Plan, ledger: PrivacyLedger, noise: NoiseSampler, stages: StageTracker,
                  study: StudyOptions) -> tuple[np.ndarray, float]:
    """The pairs release: noisy means of the products of the rows' normal scores, and their noise sd.

    A third pass over the rows, after the histograms' release, since the scores go through the
    released histograms (:func:`pair_score_map`; adaptive composition: the map is public when
    the pass runs). Sensitivity: :func:`synthdp.privacy.sensitivity.score_products_sensitivity`.
    """
    with stages.stage("correlation"):
        score_map = pair_score_map(histograms, histogram_noise_sd, layout, plan, study)
        pair_sums = table.row_sums(SumRequest(domain, score_map=score_map,
                                                compiled=compiled.use_compiled(plan.n)))["score_products"]
        return release_scores(pair_sums, score_map, plan, ledger, noise, study)


def release_pair_choice(table: PrivateTable, domain: Domain, histograms: np.ndarray, histogram_noise_sd: float,
                        layout: CellLayout, plan: Plan, ledger: PrivacyLedger, noise: NoiseSampler,
                        stages: StageTracker, study: StudyOptions) -> SelectedPairs:
    """The selected pairs' release (``Plan.selected_pairs``): one pass over the rows for the sums of
    sgn(s_i) sgn(s_j) over every pair, the signs of the rows' normal scores through the released
    histograms (:func:`quadrant_score_map`; public when the pass runs), then the choice of the
    pairs worth measuring (:func:`synthdp.privacy.release.release_pair_selection`) and, from the
    same sums, the noisy means of the chosen ones (:func:`synthdp.privacy.release.release_selected_pairs`).
    Adaptive composition: each release's share and input are public when it runs."""
    with stages.stage("correlation"):
        score_map = quadrant_score_map(pair_marginals(histograms, histogram_noise_sd, layout, plan, study))
        sums = table.row_sums(SumRequest(domain, score_map=score_map,
                                                compiled=compiled.use_compiled(plan.n)))["score_products"]
        if study.chosen_pairs is not None:  # given, public (a copy: the release's own choice)
            pairs = np.asarray(study.chosen_pairs, dtype=np.int64).reshape(-1, 2)
        else:
            pairs = release_pair_selection(sums, plan.d, plan.selected_pairs, plan.budget.stage(SELECTION), plan.n,
                                           ledger, noise, plan.neighbours, independent_sign_products(score_map),
                                           forest=study.forest_selection)
        means, noise_sd = release_selected_pairs(sums, plan.d, pairs, plan.budget.stage("correlation"), plan.n, ledger,
                                                 noise, plan.neighbours)
        if "correlation" in study.exact_stages:  # the oracle: NOT private (StudyOptions)
            means = pair_matrix(sums / plan.n, plan.d)[pairs[:, 0], pairs[:, 1]]
        return SelectedPairs(pairs, means, noise_sd)


def release_scores(pair_sums: np.ndarray, score_map: ScoreMap, plan: Plan, ledger: PrivacyLedger,
                   noise: NoiseSampler, study: StudyOptions) -> tuple[np.ndarray, float]:
    """The noisy means of the score products from their sums, and their noise sd."""
    noisy_scores = release_score_products(pair_sums, plan.budget.stage("correlation"), plan.n, plan.d,
                                          score_map.clip_norm_sq, ledger, noise, plan.neighbours,
                                          score_map.mean_weight)
    if "correlation" in study.exact_stages:  # the oracle: NOT private (StudyOptions)
        noisy_scores = pair_sums / plan.n
    return noisy_scores, noise_standard_deviation(plan.noise, ledger.event("correlation").noise_scale)


def release_tested_pairs(table: PrivateTable, domain: Domain, histograms: np.ndarray, histogram_noise_sd: float,
                         cell_counts: np.ndarray, layout: CellLayout, plan: Plan, ledger: PrivacyLedger,
                         noise: NoiseSampler, rng: np.random.Generator, stages: StageTracker, study: StudyOptions
                         ) -> tuple[Plan, np.ndarray, float, np.ndarray | None, float, PairsTestResult]:
    """The pairs test and what follows it (:func:`synthdp.pipeline.plan.pairs_test_planned`).

    After the first part of the histograms: the score products' pass as for :func:`release_pairs`,
    the test's one number (:func:`synthdp.privacy.release.release_pairs_test`, its own share),
    and, where a block stands out (:func:`synthdp.postprocess.pairs.block_stands_out`) once what
    the histograms' noise alone adds is taken off (:func:`synthdp.postprocess.pairs.score_offset`,
    drawn from the public ``rng``), the pairs release from the same sums. Then the histograms'
    second part, if the outcome's split gives them one ("marginals_2"), pooled with the first by
    inverse-variance weights: two Gaussian releases at mu_1 and mu_2 pooled so have the noise sd
    of one at sqrt(mu_1^2 + mu_2^2), the mu they compose to. Returns the plan after the test (:meth:`Plan.after_test`), the
    histograms and their noise sd, the pairs (None if not released) and their noise sd, and the
    test's outcome. Adaptive composition: each release's share is public when it runs, and
    both outcomes spend the same total.
    """
    with stages.stage("correlation"):
        marginals, build = pair_marginals(histograms, histogram_noise_sd, layout, plan, study), pair_score_maker(plan, study)
        score_map = build(marginals)
        pair_sums = table.row_sums(SumRequest(domain, score_map=score_map,
                                                compiled=compiled.use_compiled(plan.n)))["score_products"]
        products, _ = split_statistic(pair_sums, plan.d, score_map.mean_weight)  # the test reads the products
        statistic, statistic_sd = release_pairs_test(products, plan.budget.stage("pairs_test"), plan.n, plan.d,
                                                     score_map.clip_norm_sq, ledger, noise, plan.neighbours)
        offset = score_offset(marginals, score_map, build, rng)  # post-processing of the released histograms
        pairs_sd = plan.budget.stage("correlation").noise_sd(
            *score_products_sensitivity(plan.n, plan.d, score_map.clip_norm_sq, plan.neighbours,
                                        score_map.mean_weight))
        edge = pairs_sd * math.sqrt(plan.d)
        test = PairsTestResult(statistic / edge, SPIKE_RATIO, statistic_sd / edge, offset / edge,
                               block_stands_out(statistic - offset, pairs_sd, plan.d))
        plan = plan.after_test(test.found)
        noisy_scores, scores_noise_sd = None, 0.0
        if test.found:
            noisy_scores, scores_noise_sd = release_scores(pair_sums, score_map, plan, ledger, noise, study)
    if plan.budget.share("marginals_2") > 0:
        with stages.stage("marginals"):
            second, second_sd = release_marginals(cell_counts, layout, plan.budget.stage("marginals_2"), ledger, noise,
                                                  plan.neighbours, stage="marginals_2")
            weight = histogram_noise_sd**-2 / (histogram_noise_sd**-2 + second_sd**-2)
            histograms = weight * histograms + (1 - weight) * second
            histogram_noise_sd = (histogram_noise_sd**-2 + second_sd**-2) ** -0.5
            if "marginals" in study.exact_stages:  # the oracle: NOT private (StudyOptions)
                histograms = cell_counts.copy()
    return plan, histograms, histogram_noise_sd, noisy_scores, scores_noise_sd, test


def pair_score_map(histograms: np.ndarray, histogram_noise_sd: float | np.ndarray, layout: CellLayout, plan: Plan,
                   study: StudyOptions) -> ScoreMap:
    """The public map from unit values to normal scores: the released histograms as the copula
    reads them (:class:`synthdp.postprocess.copula.Marginals`), and the norm bound C^2; finer
    cells and a smaller bound where the plan denoises the pairs as a matrix
    (:func:`synthdp.postprocess.pairs.marginal_score_map`; ``study.matrix_scores``)."""
    return pair_score_maker(plan, study)(pair_marginals(histograms, histogram_noise_sd, layout, plan, study))


def pair_marginals(histograms: np.ndarray, histogram_noise_sd: float | np.ndarray, layout: CellLayout, plan: Plan,
                   study: StudyOptions) -> Marginals:
    """The released histograms as the copula reads them."""
    return Marginals(histograms, plan.n, histogram_noise_sd, study.candidate_options().atom_threshold, layout)


def pair_score_maker(plan: Plan, study: StudyOptions) -> Callable[[Marginals], ScoreMap]:
    """:func:`pair_score_map`'s map of any marginals (the pairs test re-noises them: score_offset)."""
    options = study.candidate_options()
    return lambda marginals: marginal_score_map(marginals, plan.pairs_as_matrix, options.matrix_scores,
                                                options.matrix_means, plan.pairs_clip_norm_sq)


def release_mixed(table: PrivateTable, schema: Schema, indices: np.ndarray, plan: Plan, config: SynthConfig,
                  ledger: PrivacyLedger, noise: NoiseSampler, stages: StageTracker,
                  study: StudyOptions | None = None) -> Release:
    """The release of a mixed table: grouped moments of its encoded rows, and the noisy row counts.

    The moments are those of ``indices`` (:func:`synthdp.stats.mixed_basis.basis_indices` at
    ``config.marginal_degree``, as the plan was made for), released with the grouped sensitivity of
    :func:`synthdp.stats.mixed_basis.basis_groups` (2G/n in l1). The clip-count share of
    epsilon is split evenly between the count of rows with a clipped numeric value and the
    count of rows with an "other" level, for the kinds of columns the table has.

    ``study`` (:class:`StudyOptions`): of its release options only ``exact_stages``'s
    "moments" and ``binned_blocks`` (whether columns with value blocks keep their means per level)
    apply here (no products are released; the grouped sensitivity is not replaced).
    """
    study = PRODUCT if study is None else study
    if study.moments_sensitivity is not None:
        raise SynthDPError("StudyOptions.moments_sensitivity applies to numeric tables only")
    layout = (CellLayout.for_domain(schema.numeric, plan.marginal_bins, plan.value_cells, schema.nullable_numeric)
              if plan.marginal_bins else None)
    with stages.stage("moments"):
        moments, histogram_counts, rows_clipped, rows_other = table.encoded_moments(schema, indices, layout, plan.n,
                                                                                     compiled.use_compiled(plan.n))
        counts = {"clip_count": (rows_clipped, CLIPPED_ROWS) if schema.d_numeric else None,
                  "other_count": (rows_other, OTHER_ROWS) if any(not c.binary and c.other for c in schema.declared)
                  else None}
        wanted = {stage: count for stage, count in counts.items() if count is not None and plan.budget.clip_count > 0}
        noisy = {stage: release_row_count(count, plan.budget.clip_count / len(wanted), stage, released, ledger, noise,
                                          plan.neighbours)
                 for stage, (count, released) in wanted.items()}
        # where the moments are noise, or a column's cells are, those one-way cells are released apart (level_cells_apart)
        apart = apart_cells(schema, indices, plan.apart_levels)
        rest = ~apart
        groups = groups_count(schema, indices, rest)  # of indices[rest], without that copy (R x D)
        tabled = [str(column.values_of) + (" in bins" if column.binned else "") for column in schema.value_blocks
                  if indices[:, schema.block_slice(column.name)].any()]  # none at marginal degree 1
        noisy_moments = np.empty(len(indices))
        noisy_moments[rest] = release_bounded_means(
            moments[rest], "moments", f"{int(rest.sum())} moments of the encoded rows in {groups} sensitivity groups"
            + _apart_note(schema, plan.apart_levels)
            + (f" (with the 2-way tables of the values of {', '.join(tabled)} against the levels"
               + (", in place of their means per level)" if study.binned_blocks else ")") if tabled else "")
            + _numeric_moments_note(plan.numeric_moments),
            plan.budget.stage("moments"), plan.n, ledger, noise, groups=groups, neighbours=plan.neighbours)
        scale = ledger.event("moments").noise_scale
        moment_noise_sd = np.full(len(indices), noise_standard_deviation(plan.noise, scale))
        moment_noise_l1 = expected_l1_norm(plan.noise, scale, int(rest.sum()))
        if apart.any():
            level_columns = sum(bool((indices[:, schema.block_slice(column.name)].any(axis=1) & apart).any())
                                for column in schema.categorical)  # not a copy of the apart rows (R x D)
            noisy_moments[apart] = release_level_cells(moments[apart], level_columns,
                                                       plan.budget.stage(LEVEL_CELLS), plan.n, ledger, noise,
                                                       plan.neighbours)
            cell_scale = ledger.event(LEVEL_CELLS).noise_scale
            moment_noise_sd[apart] = noise_standard_deviation(plan.noise, cell_scale)
            moment_noise_l1 += expected_l1_norm(plan.noise, cell_scale, int(apart.sum()))
        if "moments" in study.exact_stages:  # the oracle: NOT private (StudyOptions)
            noisy_moments = moments.copy()
    histograms, histogram_noise_sd = None, 0.0
    noisy_scores, scores_noise_sd = None, 0.0
    classes = None
    if layout is not None and histogram_counts is not None:
        with stages.stage("marginals"):
            stage = plan.budget.stage("marginals")
            columns = np.zeros(0, dtype=np.int64)
            if config.class_column is not None:  # the numeric columns' histograms by level of the user's class
                columns = conditioned_columns(schema)
            if not len(columns):
                histograms, histogram_noise_sd = release_marginals(histogram_counts, layout, stage, ledger, noise,
                                                                   plan.neighbours)
                if "marginals" in study.exact_stages:  # the oracle: NOT private (StudyOptions)
                    histograms = histogram_counts.copy()
            else:
                name = str(config.class_column)
                block = class_block(schema, name)
                by_level = table.encoded_class_counts(schema, layout, block, compiled.use_compiled(plan.n))
                histograms, tables, histogram_noise_sd = release_class_histograms(
                    histogram_counts, by_level, columns, name, layout, stage, ledger, noise, plan.neighbours,
                    schema.numeric.names)
                cells = one_way_cells(schema, indices)
                counted = released_level_counts(schema, indices, noisy_moments, cells, plan.n)
                # the class's rows per level: its released one-way cells, else (a basis without all of them) the
                # mean over the conditioned columns of their tables' rows, released now; and their noise sd
                if name in counted:
                    level_rows = counted[name]
                    mine = cells & indices[:, schema.block_slice(name)].any(axis=1)
                    level_sd = float(moment_noise_sd[mine].max()) * plan.n
                else:
                    level_rows = np.maximum(tables.sum(axis=2).mean(axis=0), 0.0)
                    level_sd = histogram_noise_sd * math.sqrt(tables.shape[2] / len(columns))
                if "marginals" in study.exact_stages:  # the oracle: NOT private (StudyOptions)
                    histograms, tables = histogram_counts.copy(), by_level[columns].copy()
                    histograms[columns] = tables.sum(axis=1)
                classes = ClassHistograms(name, columns, tables, histogram_noise_sd, level_rows)
                scale = ledger.event("marginals").noise_scale
                short = short_levels(layout, columns, level_rows, expected_l1_norm(plan.noise, scale, 1), level_sd)
                if len(short):  # the schema's levels (public), chosen by their released counts
                    levels = schema.categorical[block].all_levels
                    named = listed([f"'{levels[int(level)]}'" for level in short], 3)
                    warn_user(f"class_column '{name}': level(s) {named} hold fewer rows than half the noise their "
                              "histograms add (at this n and budget, beyond the noise of their released counts), so "
                              "each numeric column's shape loses more than the class can give it; without "
                              "class_column the histograms are one-way", UserWarning)
        if plan.releases_pairs:  # the numeric columns' pairs, as for a numeric table
            with stages.stage("correlation"):
                score_map = pair_score_map(histograms, margin_noise_sd(histogram_noise_sd, classes, schema.d_numeric),
                                           layout, plan, study)
                pair_sums = table.encoded_score_products(schema, score_map, compiled.use_compiled(plan.n))
                noisy_scores = release_score_products(pair_sums, plan.budget.stage("correlation"), plan.n,
                                                      schema.d_numeric, score_map.clip_norm_sq, ledger, noise,
                                                      plan.neighbours, score_map.mean_weight)
                if "correlation" in study.exact_stages:  # the oracle: NOT private (StudyOptions)
                    noisy_scores = pair_sums / plan.n
                scores_noise_sd = noise_standard_deviation(plan.noise, ledger.event("correlation").noise_scale)
    return Release(schema.numeric, plan, indices, noisy_moments, moment_noise_l1, moment_noise_sd, pca=None,
                   noisy_histograms=histograms, histogram_noise_sd=histogram_noise_sd, noisy_scores=noisy_scores,
                   scores_noise_sd=scores_noise_sd, noisy_rows_clipped=noisy.get("clip_count"), schema=schema,
                   noisy_rows_other=noisy.get("other_count"), cell_layout=layout, class_histograms=classes)


def _apart_note(schema: Schema, apart_levels: int) -> str:
    """What the moments stage's description says of the one-way cells released apart
    (:func:`synthdp.stats.mixed_basis.apart_cells`) and of the missing rates the moments hold."""
    if apart_levels == 1:
        return " (the one-way cells of the binary and categorical columns released apart)"
    named = [column.name for column in apart_columns(schema, apart_levels)]
    note = f" (the one-way cells of {', '.join(named)} released apart)" if named else ""
    held = [name for name in schema.nullable if name not in named]
    return note + (f" (with the missing rates of {len(held)} nullable column(s))" if held else "")


def _numeric_moments_note(held: bool) -> str:
    """What the moments stage's description adds where :func:`mixed_numeric_moments` left numeric moments out."""
    if held:
        return ""
    return (" (the numeric columns' own moments and means per level left out: under Laplace noise every group "
            "adds to every moment's noise; the histograms hold their shapes, the pairs release (if any) their pairs)")


# ---------------------------------------------------------- post-processing
def fit_distribution(release: Release, config: SynthConfig, rng: np.random.Generator, stages: StageTracker,
                     study: StudyOptions | None = None
                     ) -> tuple[LPSolution, np.ndarray | EncodedPoints, np.ndarray, float, bool]:
    """Post-processing: candidates, then the l1 fit of their weights to the noisy moments.

    Returns the LP's solution, the candidates with positive weight, their weights, the
    share of the uniform distribution blended in, and whether the candidates were rearranged
    onto their tilted or blended marginals (:func:`rearranges`). ``study``: a design study's alternatives,
    of which the candidate makers read :meth:`StudyOptions.candidate_options` (None: the product).
    """
    from threadpoolctl import threadpool_limits  # a dependency of scikit-learn

    plan = release.plan
    apart = None  # the one-way cells released apart (mixed tables)
    if plan.apart_levels and release.schema is not None:
        apart = apart_cells(release.schema, release.basis_indices, plan.apart_levels)
        # made each column's distribution (as its histogram would be)
        release = replace(release, noisy_moments=level_cell_estimates(
            release.schema, release.basis_indices, release.noisy_moments, apart))
    with stages.stage("candidates"), threadpool_limits(1, user_api="blas"):
        # one BLAS thread: the draws then do not depend on the machine's cores (nor on a limit another
        # step left in place): adult's seeded candidates differed between one thread and two
        options = None if study is None else study.candidate_options()
        candidates = make_candidates(plan.candidates, release, rng, config, options)
        basis = ChebyshevBasis(release.basis_indices)
        target = release.noisy_moments
        sparse = plan.candidates == "mixed"
        moment_sd = None  # a mixed table's moment rows' own noise sd, the LP's first rows
        if sparse:  # sparse W, at most G + d non-zeros per candidate: held whole
            leave_out = None
            if release.schema is not None and release.schema.value_blocks and (study or PRODUCT).block_gate:
                leave_out = quiet_block_tables(release.schema, release.basis_indices, release.noisy_moments,
                                               moments_noise_sd(release), plan.noise)
            design, target, noise_l1, row_sd = mixed_design(release, basis, candidates, leave_out)
            moment_sd = release.moment_noise_sd.copy()
            if apart is not None:  # the candidates' one-way cells
                moment_sd[apart] = 0.0  # keep their box (tilt_box)
            if leave_out is not None:
                moment_sd = moment_sd[~leave_out]
            columns = lambda start, stop: design[:, start:stop]  # noqa: E731
            if (design.nnz > DENSE_SHARE * design.shape[0] * design.shape[1]
                    and design.shape[0] * design.shape[1] <= config.max_lp_entries):
                # mostly numeric moments: dense W (held whole), column generation and a dense tilt are faster
                sparse, dense = False, design.toarray()
                columns = lambda start, stop: dense[:, start:stop]  # noqa: E731
        else:
            candidates = np.asarray(candidates)  # a numeric table's: an array already
            lattice = plan.theory.L if plan.round_to_lattice else None
            columns = candidate_columns(basis, candidates, config.max_lp_entries, lattice)
            target = target if lattice is None else grid.round_to_lattice(target, lattice)
            noise_sd, noise_l1 = release.moment_noise_sd, release.moment_noise_l1
            if plan.pair_moments and release.noisy_histograms is not None:
                columns, target, noise_sd, noise_l1 = with_cell_rows(release, candidates, columns, target, noise_sd,
                                                                     noise_l1)
            # each row in units of its noise (without cell rows a no-op: a numeric release's moments share one noise level)
            columns, target, noise_l1 = precision_weighted(columns, target, noise_sd, noise_l1)
            row_sd = float(np.min(noise_sd))
    # in the precision-weighted rows every row's noise sd is the smallest one; None: no tilt
    tilt_tolerance, box_note = None, ""
    if tilts(config, plan, study):
        tilt_tolerance, box_note = tilt_box(config.tilt * row_sd, len(target), moment_sd, plan.noise, study)
    tilted = None
    if (tilt_tolerance is not None and config.spread == 0 and plan.candidates != "mixed"  # a numeric W: dense
            and BOX_PHASE_ROWS <= len(target) <= TILT_NEWTON_ROWS):
        # large n: first the tilt with the tolerances as its box, the tilt the l1 fit's box phase would
        # lead to wherever a mixture fits within them; the l1 fit only where it ends outside them
        # (docs/decisions/lp-large-n.md)
        with stages.stage("LP tilt"):
            tilted = tilt_first(columns, len(candidates), target, tilt_tolerance)
    if tilted is None:
        with stages.stage("LP fit"):
            # where the box phase would run on a mixed table's W (held whole): each row's range over the LP's
            # candidates, which can prove at once that it finds no fit (lp.box_out_of_reach)
            box_phase = plan.candidates == "mixed" and tilt_tolerance is not None and len(target) >= BOX_PHASE_ROWS
            if sparse:  # on the first C candidates; the tilt weighs all of them (Plan.tilt_candidates)
                if column_generation_pays(len(target), plan.n_candidates):  # a master much smaller than the LP
                    by_column = design[:, : plan.n_candidates].tocsc()
                    reach = held_row_range(by_column) if box_phase else None
                    solution = solve_l1_fit_columns(lambda start, stop: by_column[:, start:stop], plan.n_candidates,
                                                    target, close_enough=tilt_tolerance, row_range=reach)
                else:
                    solution = solve_l1_fit(design[:, : plan.n_candidates], target, method="ipm")
                if plan.n_candidates < design.shape[1]:  # the others at weight 0: the same fit, feasible for the tilt
                    padded = np.concatenate([solution.weights, np.zeros(design.shape[1] - plan.n_candidates)])
                    solution = replace(solution, weights=padded)
            else:  # before a tilt, a fit within its tolerances is all the tilt needs
                reach = held_row_range(columns(0, len(candidates))) if box_phase else None  # the dense W
                solution = solve_l1_fit_columns(columns, len(candidates), target,
                                                max_columns=config.max_lp_entries // len(target),
                                                close_enough=tilt_tolerance, row_range=reach)
    blend_share, blended = 0.0, False  # blended: a blend short of the uniform distribution
    if tilted is not None:
        optimum = solution = tilted
    elif config.spread > 0:
        with stages.stage("LP spread"):  # the plan holds R x C within max_lp_entries
            tolerance = config.spread * noise_l1
            solution = spread_weights(columns(0, len(candidates)), target, solution.objective + tolerance)
    elif tilt_tolerance is not None:
        # keep the copula's released pairs as far as the moments allow (docs/relationships-design.md)
        with stages.stage("LP tilt"):
            # mixed tables: stopped once within its tolerances and no further from uniform than its optimum
            optimum, solution = solution, tilt_weights(columns, len(candidates), target, solution, tilt_tolerance,
                                                       certified_stop=plan.candidates == "mixed")
        # a tilt stopped at its cap outside its box is mixed back into it (the report's lp.status says so)
    elif (kappa := blend_factor(config, plan, study)) > 0 and plan.candidates != "mixed":
        # mixed tables fit thousands of marginal cells: a tolerance summed over all of them
        # lets single cells drift (docs/decisions/blend-not-on-mixed-tables.md)
        tolerance = kappa * noise_l1
        solution, blend_share = blend_with_uniform(columns, len(candidates), target, solution,
                                                   solution.objective + tolerance)
        blended = blend_share < 1.0  # at 1 every candidate has weight 1/N already
    if box_note:
        solution = replace(solution, status=f"{solution.status}; {box_note}")
    weights = clean_weights(solution.weights)
    product = study or PRODUCT
    if (tilt_tolerance is not None or (blended and product.rearrange_blend)) and rearranges(release, product):
        # the copula's ranks, the fit's one-way marginals: the tilt's (docs/relationships-design.md), or
        # the blend's, whose optimum part would repeat its few candidates (docs/decisions/rearranged.md)
        if tilt_tolerance is not None and product.column_tilts:  # each column's marginal tilted on its own rows
            with stages.stage("LP tilt"):
                row_columns = np.argmax(release.basis_indices != 0, axis=1)
                weights = column_tilt_weights(columns, len(candidates), target, optimum, tilt_tolerance, row_columns,
                                              release.plan.d)
        points = rearranged(np.asarray(candidates), weights)
        return solution, points, np.full(len(candidates), 1.0 / len(candidates)), blend_share, True
    keep = weights > 0
    return solution, candidates[keep], weights[keep], blend_share, False


def rearranges(release: Release, study: StudyOptions) -> bool:
    """Whether a tilted or blended fit is rearranged (:func:`synthdp.postprocess.copula.rearranged`):
    copula candidates whose basis's moments are each of one column (as the histogram cells are).
    The rearranged candidates then have the fit's one-way marginals, so the same fit to every row,
    and the copula's ranks, which the tilt's factor per column would weaken and the blend's
    optimum, at most R + 1 candidates repeated, would replace by its own arbitrary dependence
    (``study.rearrange_blend`` False: a blend is never rearranged, as before). A moment on two
    columns (``favour="relationships"``'s pair moments, or those R beyond 2d takes on a small d
    or a large n; mixed tables' cells and means per level) is fitted by the weights themselves,
    which the rearrangement would undo. ``study.rearrange`` False: never (design studies).
    Measured: docs/decisions/rearranged.md.
    """
    return (study.rearrange and release.plan.candidates == "copula"
            and bool(np.all(np.count_nonzero(release.basis_indices, axis=1) <= 1)))


def mixed_design(release: Release, basis: ChebyshevBasis, candidates: np.ndarray | EncodedPoints,
                 leave_out: np.ndarray | None = None) -> tuple[sp.csr_matrix, np.ndarray, float, float]:
    """The sparse LP of a mixed table, each row in units of its noise: W, b_hat, E||noise||_1 and
    the noise sd every row then has (the smallest).

    Rows: the released moments but those ``leave_out`` marks (shape (R,) bool: the cells of value
    blocks' tables whose dependence does not stand out of the noise,
    :func:`synthdp.postprocess.candidates.quiet_block_tables`), then the cells of the numeric columns' released histograms
    (:func:`cell_rows`), when there are histograms, so that the LP's tilt keeps every numeric
    column's one-way shape, as it keeps the categorical columns' cells (without them, the
    tilt toward some 5 000 moments on 10 000 candidates took age's one-way TV on adult from
    .04 to .10). A nullable column's candidates with the missing indicator set count in its
    missing cell. Row r is multiplied by min(sd) / sd_r
    (:func:`synthdp.postprocess.lp.precision_weighted`).
    """
    design, target = basis.sparse_design_matrix(candidates), release.noisy_moments
    noise_sd, noise_l1 = release.moment_noise_sd, release.moment_noise_l1
    if leave_out is not None and leave_out.any():
        keep = ~leave_out
        noise_l1 *= float(noise_sd[keep].sum() / noise_sd.sum())  # E||noise||_1 is proportional to the sd
        design, target, noise_sd = design[keep], target[keep], noise_sd[keep]
    schema = release.schema
    if release.cell_layout is not None and release.noisy_histograms is not None and schema is not None:
        d = schema.d_numeric
        missing = np.zeros((len(candidates), d), dtype=bool)
        for column in schema.categorical:
            if column.indicator_of is not None:  # a binary block of one coordinate: 1 where missing
                missing[:, schema.numeric.names.index(column.indicator_of)] = (
                    candidates[:, schema.block_slice(column.name).start] > 0.5)
        classes = release.class_histograms
        levels = None if classes is None else block_levels(candidates, schema, class_block(schema, classes.column))
        cells, cell_target, cell_sd, cell_l1 = cell_rows(release, candidates[:, :d], missing, levels)
        design = sp.vstack([design, cells], format="csr")
        target, noise_sd = np.concatenate([target, cell_target]), np.concatenate([noise_sd, cell_sd])
        noise_l1 += cell_l1
    weight = noise_sd.min() / noise_sd
    if weight.min() < 1.0:
        noise_l1 = noise_l1 * float(weight @ noise_sd / noise_sd.sum())
        design = sp.diags(weight) @ design
    return sp.csr_matrix(design), target * weight, noise_l1, float(noise_sd.min())


def cell_rows(release: Release, points: np.ndarray, missing: np.ndarray | None = None,
              levels: np.ndarray | None = None) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray, float]:
    """The histograms' cells as LP rows: which cell each candidate is in (sparse, cells x C), the
    targets (noisy count / n), their noise sd (the count's sd / n) and the expected l1 norm of
    that noise. ``points``: the candidates' numeric coordinates; ``missing`` as in
    :meth:`synthdp.stats.histograms.CellLayout.cells`. A column released by level of a class
    (``release.class_histograms``) has a row per level and cell instead, ``levels`` holding each
    candidate's level of the class (without them, its one-way cells, whose noise is sqrt(L) times a
    count's)."""
    histograms = release.noisy_histograms
    if histograms is None:
        raise SynthDPError("the histograms' cells as LP rows need a release with histograms")
    layout = CellLayout.given(release.cell_layout, histograms)
    cells = layout.indicators(points, missing)
    n, kind = release.plan.n, release.plan.noise
    classes = release.class_histograms
    if classes is None:
        cell_sd = release.histogram_noise_sd / n
        noise_l1 = expected_l1_norm(kind, cell_sd / noise_standard_deviation(kind, 1.0), cells.shape[0])
        return cells, layout.flat(histograms) / n, np.full(cells.shape[0], cell_sd), noise_l1
    target = layout.flat(histograms) / n
    sd = layout.flat(np.broadcast_to(margin_noise_sd(release.histogram_noise_sd, classes, layout.d),
                                     histograms.shape)) / n
    if levels is not None:
        offsets = np.concatenate([[0], np.cumsum([layout.column_cells(j) for j in range(layout.d)])])
        one_way = np.ones(len(target), dtype=bool)
        blocks, targets = [cells], [target]
        for k, j in enumerate(classes.columns):
            one_way[offsets[j]:offsets[j + 1]] = False
            column = cells[offsets[j]:offsets[j + 1]]
            for level in range(classes.noisy_counts.shape[1]):
                blocks.append(column @ sp.diags((levels == level).astype(float)))
                targets.append(classes.noisy_counts[k, level, :column.shape[0]] / n)
        blocks[0], targets[0] = cells[one_way], target[one_way]
        extra = sum(len(block) for block in targets[1:])
        cells, target = sp.vstack(blocks, format="csr"), np.concatenate(targets)
        sd = np.concatenate([sd[one_way], np.full(extra, release.histogram_noise_sd / n)])
    noise_l1 = expected_l1_norm(kind, 1.0 / noise_standard_deviation(kind, 1.0), 1) * float(sd.sum())
    return cells, target, sd, noise_l1


def with_cell_rows(release: Release, candidates: np.ndarray, columns: Callable[[int, int], np.ndarray],
                   target: np.ndarray, noise_sd: np.ndarray,
                   noise_l1: float) -> tuple[Callable[[int, int], np.ndarray], np.ndarray, np.ndarray, float]:
    """The numeric LP with the histograms' cells (:func:`cell_rows`) as rows below the moments
    (``favour="relationships"``); the cells' indicator matrix is held whole (dense)."""
    cells, cell_target, cell_sd, cell_l1 = cell_rows(release, candidates)
    dense_cells, moments = cells.toarray(), columns

    def stacked(start: int, stop: int) -> np.ndarray:
        return np.vstack([moments(start, stop), dense_cells[:, start:stop]])

    return (stacked, np.concatenate([target, cell_target]), np.concatenate([noise_sd, cell_sd]),
            noise_l1 + cell_l1)


def tilt_box(box: float, rows: int, moment_sd: np.ndarray | None = None, noise: str = "gaussian",
             study: StudyOptions | None = None) -> tuple[np.ndarray, str]:
    """The tilt's box, shape (rows,): each row's largest distance from its released value, in the
    precision-weighted rows (where every row's noise sd is the same): ``box``, ``config.tilt`` times
    that sd; but a mixed table's moments (``moment_sd``: the first rows' own noise sd, 0 for the rows
    to leave as they are) whose noise sd is above MOMENT_NOISE_LIMIT get the universal threshold of
    m >= 2 such values times ``box``: sqrt(2 ln m) for Gaussian noise, ln(m) / sqrt(2) for Laplace
    noise (whose tail is longer: m exp(-sqrt(2) t) = 1 there), and at least ``box``. Also the note
    the LP's status gets ("" where no row is widened).

    Such a moment is mostly noise (the plan then gives the moments a tenth of the budget and
    releases the one-way cells apart, :func:`synthdp.pipeline.plan.mixed_shares`), and a box of one
    sd lets about a third of m pure-noise values pull the tilt away from the candidates, whose
    columns the released one-way tables make independent: the tilt then fits noise, and invents
    dependence (iris at (1, 1e-10): a class's mean petal length 3.6 against a real 1.5, sepal length
    x species r = -0.57 against +0.78). The universal threshold (Donoho and Johnstone 1994) is the
    level m values of pure noise stay within (Gaussian: with probability tending to 1; Laplace: one
    of them expected beyond it), so the tilt leaves the candidates where the moments say nothing
    beyond noise, and follows a moment where it stands out of its noise. The rows the candidates
    were drawn from (the histograms' cells, and the one-way cells released apart: the caller gives
    them sd 0) and the moments of lower noise keep ``box``; so do numeric tables, whose noisy
    moments are blended, not tilted (:func:`tilts`). Measured: docs/decisions/noise-box.md.
    Public: the moments' noise sd follow from the plan's budget and sensitivities.
    """
    tolerance = np.full(rows, box)
    if moment_sd is None or not (study or PRODUCT).noise_box:
        return tolerance, ""
    noisy = np.flatnonzero(moment_sd > MOMENT_NOISE_LIMIT)
    m = len(noisy)
    if m < 2:  # one value: no threshold to speak of (sqrt(2 ln 1) = 0)
        return tolerance, ""
    gaussian = noise == "gaussian"
    factor = max(1.0, math.sqrt(2 * math.log(m)) if gaussian else math.log(m) / math.sqrt(2))
    tolerance[noisy] *= factor
    threshold = f"sqrt(2 ln {m})" if gaussian else f"ln({m}) / sqrt(2)"
    return tolerance, (f"{m} moments of noise sd above {MOMENT_NOISE_LIMIT:g} held within {threshold} = "
                       f"{factor:.2f} x the other rows' box")


DEFAULT_BLEND = 0.5  # the blend's tolerance (config.blend None), in the moments' noise's expected l1 norms
NOISY_MOMENTS_BLEND = 1.0  # and where the moments are noise (config.blend None)


def blend_factor(config: SynthConfig, plan: Plan, study: StudyOptions | None = None) -> float:
    """The blend's tolerance over the LP's optimum, in expected l1 norms of the moments' noise.

    ``config.blend`` where the user set it (0: no blend), else DEFAULT_BLEND (0.5), and
    NOISY_MOMENTS_BLEND (1) where the moments are noise (:attr:`Plan.noisy_moments`: their noise
    above MOMENT_NOISE_LIMIT even at the share the histograms alone leave them, so they keep only
    NOISY_MOMENTS_SHARE). The table's own moments are the noise's l1 norm from their release,
    NOISY_MOMENTS_BLEND of them in expectation, so a tolerance below it holds the table nearer
    the release than the truth is and keeps part of the optimum's R + 1 points for what is
    noise: at epsilon = 1 (delta = 0) the blend 0.5 kept 3-30 % of the mass on those points on
    yacht, energy and CTG, which moved the one-way margins off the histograms (energy's mean
    one-way TV .29 against .25) and invented correlations (yacht: 1.2-1.6 invented pairs a
    release, none at 1); at 1 the uniform share was 1 in nearly every release measured
    (docs/decisions/noise-sized-blend.md). Public: the plan's budget, n and R.
    """
    if config.blend is not None:
        return float(config.blend)
    if plan.noisy_moments and (study or PRODUCT).noise_sized_blend:
        return NOISY_MOMENTS_BLEND
    return DEFAULT_BLEND


def tilts(config: SynthConfig, plan: Plan, study: StudyOptions | None = None) -> bool:
    """Whether the LP's optimum is tilted toward the candidates (:func:`synthdp.postprocess.lp.tilt_weights`)
    rather than blended with the uniform distribution (``config.blend``).

    * Mixed tables (whose LP also holds the numeric histograms' cells, :func:`mixed_design`),
      and copula candidates with a pairs release where the moments are not noise
      (:func:`synthdp.pipeline.plan.moments_are_noise`): the candidates then carry the measured
      dependence between columns, which the optimum's R + 1 points would replace by their own
      (on three columns, two independent, the blended optimum showed correlations up to 0.6
      between them). With a pairs release where the moments are noise (a small table, its
      pairs selected or denoised as a matrix, the moments at NOISY_MOMENTS_SHARE) the blend, as
      without pairs (below): a tilt within one sd of such moments fits their noise; on WDBC at
      (1, 1e-10) with the pairs, smooth-query error 20-45 % above the blend's
      (docs/decisions/selected-pairs.md).
    * Copula candidates without a pairs release, where the moments keep their share
      (:meth:`Plan.moments_within_limit`): the copula's columns are then independent, and the
      tilt keeps them so except where the moments, fitted within ``config.tilt`` noise sd,
      say otherwise. The blend there kept part of the optimum's sparse support, whose
      dependence is the LP's vertex, not the data's: |r| up to .46 between generated
      independent columns, .28 on PKS at epsilon = 1 (.07 and .03 with the tilt).
    * Elsewhere (the moments at a tenth of the budget, their noise above the limit) the blend
      stays: at epsilon = 1 on CRM and WDBC a one-sd tilt fitted their noise and lost column
      shapes (.71 and .68 against .77); with noise that size the blend's tolerance, at least the
      noise's expected l1 norm there (:func:`blend_factor`), takes the table to the candidates.

    Public: the plan's budget, n and R. ``study``: a design study's alternatives
    (``tilt_without_pairs`` False: the blend wherever no pairs are released, as before).
    Measured: docs/decisions/tilt-without-pairs.md.
    """
    if config.spread != 0 or config.tilt <= 0:
        return False
    if plan.candidates == "mixed":
        return True
    if plan.releases_pairs and (not plan.noisy_moments or not (study or PRODUCT).blend_noisy_pairs):
        return True
    return plan.candidates == "copula" and (study or PRODUCT).tilt_without_pairs and plan.moments_within_limit


def sampling_model(model: FittedModel, report: dict | None = None) -> SamplingModel:
    """What sampling needs of a fit (:class:`synthdp.pipeline.model.SamplingModel`): its support and
    weights, the decoders, the privacy unit's public shape, the default rows, ``report`` (the
    privacy report, for a model file), and the release and configuration, for copies of it from a
    model file. Public: nothing here reads the data."""
    if model.lp is None or model.support_points is None or model.support_weights is None:
        raise SynthDPError("fitted with synthesize=False (summary only): fit again with synthesize=True to sample rows")
    release = model.release
    return SamplingModel(model.support_points, model.support_weights, release.domain, release.schema, release.units,
                         release.plan.n, report or {}, release=release, config=model.config)


def sample(model: FittedModel, n_rows: int | None = None, rng: np.random.Generator | None = None) -> pd.DataFrame:
    """Draw ``n_rows`` synthetic rows (default: as many as the input had) from the fitted distribution.

    Post-processing only: reads the support and its weights, draws from ``rng`` (default the fit's
    public generator, ``model.rng``) through :func:`synthdp.pipeline.model.draw`.
    """
    kept = sampling_model(model)
    return draw(kept, kept.rows if n_rows is None else n_rows, model.rng if rng is None else rng)
