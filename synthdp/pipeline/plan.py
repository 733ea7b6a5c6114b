"""The paper's size parameters and the resolved plan of a run.

Algorithm 1 (epsilon-DP), with n rows, d columns and smoothness K:
    t = ceil(n^{1/(2d+K)}),  N = ceil(n^{K/(2d+K)}),
    m = ceil(n^{1+(K+1)/(2d+K)}),  L = ceil(n^{(d+K)/(2d+K)}).
Section 3.2 ((epsilon, delta)-DP), with l = log(1/delta) (natural log):
    t = ceil(n^{2/(3d+2K)} l^{-1/(3d+2K)}),  N = ceil(n^{2K/(3d+2K)} l^{-K/(3d+2K)}),
    m = ceil(n^{(4d+4K+2)/(3d+2K)} l^{-(2d+2K+1)/(3d+2K)}),
    L = ceil(n^{(2d+2K)/(3d+2K)} l^{-(d+K)/(3d+2K)}).
Appendix A.5's basis size (practical mode), with K in place of sigma^2:
    R = 0.5 n^{d/(2d+K)} (epsilon-DP),  R = 0.5 n^{2d/(3d+2K)} ((epsilon, delta)-DP).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

import numpy as np

from synthdp.config import SynthConfig
from synthdp.domain.schema import Schema
from synthdp.errors import SynthDPError
from synthdp.postprocess.lp import minimum_working_columns
from synthdp.postprocess.pairs import CORRELATION_NOISE_LIMIT, SPIKE_RATIO, denoised_as_matrix
from synthdp.privacy.budget import Budget, StageBudget
from synthdp.privacy.sensitivity import ROWS, Neighbours, histogram_sensitivity, score_products_sensitivity
from synthdp.stats.chebyshev import count_indices_up_to_degree, lowest_degree_indices, pair_product_rows
from synthdp.stats.histograms import MAX_VALUE_CELLS
from synthdp.stats.mixed_basis import basis_count, basis_indices, groups_count
from synthdp.stats.scores import default_clip_norm_sq

MAX_CANDIDATE_VALUES = 200_000_000  # C x d candidate coordinates held at once (1.6 GB)
# The most moments of a release: released, reported and written at about a kilobyte each (summarize --n-basis
# 1000000 peaked at 1.1 GB on 600 rows); 19 000 000 of them, within max_lp_entries, ran out of memory
MAX_MOMENTS = 1_000_000


@dataclass(frozen=True)
class TheoryParameters:
    t: int  # Chebyshev degrees 0..t-1 per axis
    N: int  # grid cells per axis
    m: int  # synthetic rows of the theory
    L: int  # rounding lattice 1/L


def theory_parameters(n: int, d: int, smoothness: int, delta: float) -> TheoryParameters:
    K = smoothness
    if delta == 0:
        base = 2 * d + K
        return TheoryParameters(
            t=_ceil_root(n, 1, base),
            N=_ceil_root(n, K, base),
            m=_ceil_root(n, base + K + 1, base),
            L=_ceil_root(n, d + K, base),
        )
    base = 3 * d + 2 * K
    log_term = -math.log(delta)  # not log(1 / delta): inf below 5.6e-309
    return TheoryParameters(
        t=math.ceil(n ** (2 / base) * log_term ** (-1 / base)),
        N=math.ceil(n ** (2 * K / base) * log_term ** (-K / base)),
        m=math.ceil(n ** ((4 * d + 4 * K + 2) / base) * log_term ** (-(2 * d + 2 * K + 1) / base)),
        L=math.ceil(n ** ((2 * d + 2 * K) / base) * log_term ** (-(d + K) / base)),
    )


def _ceil_root(n: int, power: int, root: int) -> int:
    """ceil(n^(power/root)) exactly: float powers overshoot perfect powers (1e5^(1/5) > 10)."""
    target = n**power
    c = math.ceil(n ** (power / root))
    while c > 1 and (c - 1) ** root >= target:
        c -= 1
    while c**root < target:
        c += 1
    return c


def paper_n_basis(n: int, d: int, smoothness: int, delta: float) -> int:
    """Appendix A.5's R (at least 1)."""
    if delta == 0:
        r = 0.5 * n ** (d / (2 * d + smoothness))
    else:
        r = 0.5 * n ** (2 * d / (3 * d + 2 * smoothness))
    return max(1, round(r))


#: A mixed table's tilt weighs at least this many candidates per released moment (the l1 fit
#: keeps its C): the tilt reweights a sample of the candidate model toward R box constraints,
#: and with C barely above R (adult: 10 000 candidates for 6 844 moments) it stays near the
#: l1 fit's vertex. docs/decisions/tilt-candidates.md.
TILT_CANDIDATES_PER_MOMENT = 3

MAX_AUTO_N_BASIS = 400  # largest automatic R above the 2d floor: the LP's cost grows as about R^2.5


def auto_n_basis(n: int, d: int, smoothness: int, delta: float) -> int:
    """The paper's R, at most MAX_AUTO_N_BASIS, raised to 2d so that every column's T_1 and T_2
    moments are released.

    Smooth queries depend first on each column's mean and second moment: a sum of
    Gaussian kernels (docs/mechanism.md §5) is a product over columns of
    exp(-(x_i - c_i)^2 / (2 sigma^2)), which to first order in 1/sigma^2 follows
    sum_i (x_i - c_i)^2, and its average is fixed by E[x_i] = E[T_1(x_i)] and
    E[x_i^2] = (1 + E[T_2(x_i)]) / 2. :func:`synthdp.stats.chebyshev.lowest_degree_indices` orders the
    d degree-1 moments first and the d squares T_2(x_i) next, so R >= 2d holds both for
    every column. The paper's R is derived for one query class and is often below 2d
    (PKS at epsilon = 1: 26 for d = 20). Measured against a floor of d:
    docs/decisions/auto-n-basis.md.

    The paper's R grows with n without limit (1 492 for 4 million rows of 10 columns; of the
    400 the cap allows there, the 45 pair products go to the correlation release when the pairs
    are released, leaving R = 355 moments, as the 1 447 measured before the cap were 1 492 less
    those 45), and
    the l1 fit's cost grows about as R^2.5 (column generation on that table: 11 s at R = 400,
    23 minutes at 1 447), while at such n each moment's noise is far below the error of the
    synthetic rows themselves. The cap binds only from about 10^5 rows (d = 20) or 3 x 10^5
    (d = 10) on, never on the benchmark tables; what it costs in accuracy where it binds is
    measured in docs/decisions/auto-n-basis-cap.md (experiments/large_n_basis.py). An
    explicit ``n_basis`` is not capped.
    """
    return max(min(paper_n_basis(n, d, smoothness, delta), MAX_AUTO_N_BASIS), 2 * d)


PAIRS_TEST_SHARE = 0.05  # the pairs test's share of the budget (of mu^2), taken from every other stage in proportion


@dataclass(frozen=True)
class PairsTest:
    """A private test that decides whether the pairs are released (:func:`pairs_test_planned`).

    ``share``: the test's share of the budget; the plan's ``budget`` is the one if the pairs are
    released (a block of related columns stands out), ``without_pairs`` the one if they are not.
    Both hold the same ``marginals`` (released before the test) and ``pairs_test`` shares, and
    sum to the same total, so the run spends the same budget either way (the ledger composes the
    Gaussian stages exactly, adaptively chosen ones too).
    """

    share: float
    without_pairs: Budget


@dataclass(frozen=True)
class Plan:
    """Every size and budget of one run, fixed from public inputs before any data is used."""

    mode: str
    n: int
    d: int
    smoothness: int
    theory: TheoryParameters
    n_basis: int  # R, non-constant basis functions measured by the moments release
    n_candidates: int  # C
    candidates: str
    noise: str
    budget: Budget
    round_to_lattice: bool  # exact mode: round b and W to multiples of 1/L
    marginal_bins: int  # bins per column of the copula's histograms (0: no copula)
    skipped_pairs: int = 0  # pair products x_i x_j among the lowest-degree moments, left to the pairs release
    pair_moments: bool = False  # favour="relationships": every moment of degree <= 2, and the cells in the LP
    neighbours: Neighbours = ROWS  # the neighbouring relation (by unit, n is the released noisy count)
    tilt_candidates: int = 0  # candidates the tilt weighs (mixed tables, TILT_CANDIDATES_PER_MOMENT); 0: n_candidates
    pairs_as_matrix: bool = False  # pairs released above CORRELATION_NOISE_LIMIT: denoised as a matrix (pairs_denoising)
    pairs_clip_norm_sq: float = 0.0  # C^2 of the pairs release read pair by pair (pairs_clip_norm_sq); 0: no pairs
    numeric_moments: bool = True  # a mixed table's moments hold its numeric columns' moments and means per level (mixed_numeric_moments)
    pairs_test: PairsTest | None = None  # the pairs released only if a private test finds a block (pairs_test_planned)
    selected_pairs: int = 0  # k pairs chosen privately and measured (selected_pair_count); 0: none selected
    noisy_moments: bool = False  # copula: the moments are noise at any share the histograms leave them (moments_are_noise)
    numeric_columns: int = 0  # a mixed table's continuous and integer columns, which get one-way histograms
    apart_levels: int = 0  # one-way cells released apart: of the columns of at least this many levels; 1 all (level_cells_apart)

    # Read by the stages, never recomputed: set by :func:`with_derived` whenever a plan is made or changed
    tilted_candidates: int = 0  # candidates drawn: the tilt's, of which the l1 fit uses the first n_candidates
    lp_fits_pairs: bool = False  # the LP fits the pairs' product moments beside the pairs release (with_derived)
    moments_within_limit: bool = False  # each moment's noise at most MOMENT_NOISE_LIMIT (with_derived)
    selects_pairs: bool = False  # the pairs worth measuring chosen privately, only they measured (selected_pair_count)
    releases_pairs: bool = False  # copula or mixed candidates with a share for the pairs release
    value_cells: int = 0  # most cells an integer column may count value by value (value_cells_limit)
    pair_noise_at_share: float = 0.0  # copula: the pairs' noise sd on a correlation at their share (pair_noise_sd)
    pair_noise_at_default: float = 0.0  # copula: the same at COPULA_SHARES' 0.3, what the report says they would have

    def after_test(self, found: bool) -> Plan:
        """The plan once the pairs test has run: this one if it found a block of related columns,
        else the one without the pairs (their share back to the histograms and the moments, the
        basis's pair products no longer left to them). Unchanged without a test."""
        if self.pairs_test is None or found:
            return self
        return with_derived(replace(self, budget=self.pairs_test.without_pairs, pairs_as_matrix=False,
                                n_basis=self.n_basis + self.skipped_pairs, skipped_pairs=0))

    def to_dict(self) -> dict:
        out = asdict(self)
        out.pop("neighbours")  # the report states it under "privacy"
        out.pop("pair_moments")  # follows from config.favour and the report's "pairs" entry
        out.pop("pairs_as_matrix")  # the report's "pairs" entry says how they were denoised
        out.pop("pairs_clip_norm_sq")  # the correlation stage's description states the bound
        out.pop("pairs_test")  # the report's "pairs" entry says how the test went
        out.pop("numeric_moments")  # the moments stage's description says what they hold
        if not self.selected_pairs:
            out.pop("selected_pairs")
        if self.candidates != "mixed":
            out.pop("apart_levels")  # a mixed table's only (0: no one-way cells released apart)
        out.pop("noisy_moments")  # follows from the budget's shares
        out.pop("numeric_columns")  # the schema's
        for derived in DERIVED_FIELDS:  # follow from the fields above
            out.pop(derived)
        if self.tilt_candidates <= self.n_candidates:
            out.pop("tilt_candidates")  # the l1 fit's candidates: C
        out.update(out.pop("theory"), budget=self.budget.to_dict())
        out.update(R=self.n_basis, C=self.n_candidates, K=self.smoothness)  # the paper's letters
        return out


DERIVED_FIELDS = ("tilted_candidates", "lp_fits_pairs", "moments_within_limit", "selects_pairs", "releases_pairs",
                  "value_cells", "pair_noise_at_share", "pair_noise_at_default")


def with_derived(plan: Plan) -> Plan:
    """``plan`` with the fields that follow from the others set, so that the stages read them
    instead of entering this module again:

    * ``tilted_candidates``: how many candidates are drawn, the tilt's, of which the l1 fit uses
      the first ``n_candidates``;
    * ``lp_fits_pairs``: whether the LP fits the pairs' product moments beside the pairs
      release: a mixed table's basis (every moment of degree <= 2, unless
      :func:`mixed_numeric_moments` leaves them out) or ``favour="relationships"``; otherwise
      they are left to the pairs release (``skipped_pairs``) and the copula alone carries them;
    * ``moments_within_limit``: whether the noise sd on each of the R moments (that of any R
      functions with values in [-1, 1], the scale of :func:`copula_shares`' rule) is at most
      MOMENT_NOISE_LIMIT: the moments then carry signal worth fitting closely;
    * ``selects_pairs``: whether the pairs worth measuring are chosen privately and only they
      are measured (:func:`selected_pair_count`), rather than all of them;
    * ``releases_pairs``: copula or mixed candidates with a share for the pairs release
      (:mod:`synthdp.stats.scores`);
    * ``value_cells``: :func:`value_cells_limit`;
    * ``pair_noise_at_share`` and ``pair_noise_at_default``: a numeric table's pairs' noise sd on
      a correlation (:func:`pair_noise_sd`, at the default norm bound) at the plan's share for
      them and at COPULA_SHARES' 0.3, for the report's ``pairs`` entry
      (:func:`synthdp.pipeline.report.pairs_entry`); 0 for other kinds.

    Public: the plan's budget and sizes.
    """
    histogram_columns = plan.d if plan.candidates != "mixed" else plan.numeric_columns
    budget = plan.budget

    def pair_noise(share: float) -> float:
        if plan.candidates != "copula" or plan.d < 2:
            return 0.0
        return pair_noise_sd(plan.n, plan.d, budget.remaining_epsilon, budget.delta, budget.composition, share,
                             plan.neighbours)

    return replace(
        plan,
        tilted_candidates=max(plan.n_candidates, plan.tilt_candidates),
        lp_fits_pairs=(plan.candidates == "mixed" and plan.numeric_moments) or plan.pair_moments,
        moments_within_limit=plan.budget.share("moments") > 0 and moments_within_limit(
            plan.budget.stage("moments"), plan.n_basis, plan.n, plan.neighbours),
        selects_pairs=plan.selected_pairs > 0,
        releases_pairs=plan.candidates in ("copula", "mixed") and plan.budget.share("correlation") > 0,
        value_cells=value_cells_limit(plan.n, histogram_columns, plan.marginal_bins, plan.budget, plan.neighbours)
        if plan.budget.share("marginals") > 0 else 0,
        pair_noise_at_share=pair_noise(budget.share("correlation")) if budget.share("correlation") > 0 else 0.0,
        pair_noise_at_default=pair_noise(COPULA_SHARES["correlation"]),
    )


def make_plan(config: SynthConfig, n: int, d: int, bounds_are_public: bool, estimated_bounds: int = 0,
              synthesize: bool = True, mixed_basis: tuple[int, int] | None = None, numeric_columns: int = 0,
              neighbours: Neighbours = ROWS, pairs_test: bool = False,
              numeric_moments: bool = True, quiet_clip: bool = True, select_pairs: bool = True,
              level_columns: int = 0, rows_to_count: bool = True, levels: tuple[int, ...] = ()) -> Plan:
    """Resolve the configuration for a table of n rows and d columns; refuse impossible ones.

    ``bounds_are_public`` is False when bounds are read from the data (then there is no
    clipping to count); ``rows_to_count`` False when the table has neither a numeric column to
    clip nor a categorical column with an "other" level (no count: the clip-count share goes to
    the other stages); ``estimated_bounds`` is the number of columns whose bounds are
    estimated with DP from ``config.bounds_share`` of epsilon. ``synthesize=False`` plans a
    release that only feeds a summary: no candidates and no LP, hence no private PCA, whose
    share of the budget goes to the moments. ``mixed_basis`` = (R, G) plans a mixed table
    (:mod:`synthdp.domain.schema`; d counts its encoded coordinates): its basis of R functions in G
    sensitivity groups is fixed by the schema, its candidates are "mixed" (no private PCA)
    and its LP matrix is sparse, with at most G + ``numeric_columns`` non-zeros per candidate; its
    ``numeric_columns`` continuous and integer columns get one-way histograms
    (:func:`mixed_shares`); ``numeric_moments``, whether that basis holds their moments and
    means per level (:func:`mixed_numeric_moments`); ``level_columns``, its binary and categorical
    columns, whose one-way cells :func:`mixed_split` may release apart (those of at least
    ``apart_levels`` levels, of the declared columns' ``levels``).

    By unit (``neighbours``), n is the released noisy count after contribution bounding:
    every noise the rules compare is calibrated to the unit sensitivities, and the paper's
    sizes (t, N, the automatic R), which grow with the number of independent rows, take
    n / K, the rows a table of that noise level would have under replace-one (about the
    number of units when each gives K rows).

    ``pairs_test`` True plans the pairs test where :func:`pairs_test_planned` says so (a design
    study's alternative, not the product: :class:`synthdp.pipeline.run.StudyOptions`).
    ``quiet_clip`` False keeps the default norm bound of the pairs read pair by pair where
    :func:`pairs_clip_norm_sq` would tighten it (a design study's alternative: before).
    ``select_pairs`` False releases no pairs where :func:`copula_shares` would select them (a
    design study's alternative: before).
    """
    if n < 2:
        raise SynthDPError("the input needs at least 2 rows")
    check_plan_options(config, d, synthesize, mixed_basis=mixed_basis, numeric_columns=numeric_columns)
    sample_size = max(2, n // neighbours.k) if neighbours.by_unit else n
    theory = theory_parameters(sample_size, d, config.smoothness, config.delta)
    kind: str = config.candidate_kind if synthesize else "none"
    tilt_candidates = 0
    if mixed_basis is not None:
        kind = "mixed" if synthesize else "none"
        n_basis = mixed_basis[0]
        n_candidates, tilt_candidates = mixed_candidate_counts(config, n_basis, synthesize)
    elif config.mode == "exact":
        n_basis = capped_power(theory.t, d) - 1
        n_candidates = capped_power(theory.N, d) if synthesize else 0
    else:
        n_basis = (auto_n_basis(sample_size, d, config.smoothness, config.delta) if config.n_basis == "auto"
                   else config.n_basis)
        if kind == "moments":  # an n_basis below them refused by check_plan_options
            n_basis = max(n_basis, count_indices_up_to_degree(d, 2))
        n_candidates = {"grid": capped_power(theory.N, d), "none": 0}.get(kind, config.n_candidates)
    if n_basis < 1:
        raise SynthDPError("the basis has no non-constant function (t = 1): n is too small for exact mode")
    if mixed_basis is None:  # a mixed table's LP: checked by check_plan_options
        check_lp_memory(config, n_basis, n_candidates, d, kind)
    if estimated_bounds and not config.bounds_share > 0:
        raise SynthDPError(f"bounds missing for {estimated_bounds} column(s) and bounds_share is 0")
    bounds = config.epsilon * config.bounds_share if estimated_bounds else 0.0
    clip_count = config.epsilon * config.clip_count_share if bounds_are_public and rows_to_count else 0.0
    mixed, apart_levels = mixed_split(
        config, n, numeric_columns, config.epsilon - bounds - clip_count, neighbours,
        mixed_basis[1] if mixed_basis is not None and not numeric_moments else None,
        groups=mixed_basis[1] if mixed_basis is not None else None, level_columns=level_columns,
        levels=levels) if kind == "mixed" else ({}, 0)
    candidate_shares = {
        "pca": {"pca": config.pca_share},
        "copula": copula_shares(config, n, d, n_basis, config.epsilon - bounds - clip_count, neighbours,
                                select=select_pairs and not pairs_test),
        "mixed": mixed,
    }.get(kind, {})
    candidate_shares = {stage: share for stage, share in candidate_shares.items() if share > 0}
    budget = _budget(config, bounds, clip_count, candidate_shares)
    selected = 0
    if SELECTION in candidate_shares:  # few rows for d: the pairs worth measuring, chosen privately
        selected = selected_pair_count(n, d, budget.stage("correlation"), neighbours)
        if selected == 0:  # not even one pair's noise within the limit: no pairs
            candidate_shares = {stage: share for stage, share in copula_shares(
                config, n, d, n_basis, budget.remaining_epsilon, neighbours, select=False).items() if share > 0}
            budget = _budget(config, bounds, clip_count, candidate_shares)
    test = None
    if kind == "copula" and pairs_test and pairs_test_planned(config, n, d, budget.remaining_epsilon, neighbours):
        with_pairs = copula_shares(replace(config, favour="relationships"), n, d, n_basis, budget.remaining_epsilon,
                                   neighbours)
        budget, without = tested_budgets(budget, with_pairs, candidate_shares.get("marginals", 0.0))
        test = PairsTest(PAIRS_TEST_SHARE, without)
    skipped_pairs, pair_moments = 0, False
    if kind == "copula" and budget.share("correlation") > 0 and not selected:
        if config.favour == "relationships" and not denoised_as_matrix(
                pair_noise_sd(n, d, budget.remaining_epsilon, config.delta, _composition(config),
                              budget.share("correlation"), neighbours)):
            # every moment of degree <= 2 as well, as a mixed table's basis holds them: the tilt
            # then fits each pair's product moment (the budget split is the one decided above);
            # not where no single pair stands out of the pairs' noise: each pair moment would not either
            n_basis, pair_moments = max(n_basis, count_indices_up_to_degree(d, 2)), True
            check_lp_memory(config, n_basis, n_candidates, d, kind)
        else:
            # the pairs release measures every pair's dependence: the moments release keeps its
            # budget for the rest (docs/relationships-design.md#how-synthdp-keeps-the-pairs)
            skipped_pairs = int(pair_product_rows(lowest_degree_indices(d, n_basis)).sum())
    return with_derived(Plan(
        mode=config.mode,
        n=n,
        d=d,
        smoothness=config.smoothness,
        theory=theory,
        n_basis=n_basis - skipped_pairs,
        n_candidates=n_candidates,
        tilt_candidates=tilt_candidates,
        candidates=kind,
        noise=config.noise_kind,
        budget=budget,
        round_to_lattice=config.mode == "exact",
        marginal_bins=(config.marginal_bins or auto_marginal_bins(n, numeric_columns if kind == "mixed" else d,
                                                                  budget.stage("marginals"), neighbours))
        if budget.share("marginals") > 0 else 0,
        skipped_pairs=skipped_pairs,
        pair_moments=pair_moments,
        neighbours=neighbours,
        pairs_as_matrix=not selected and pairs_denoising(n, numeric_columns if kind == "mixed" else d, budget,
                                                         neighbours),
        pairs_clip_norm_sq=0.0 if selected else pairs_clip_norm_sq(n, numeric_columns if kind == "mixed" else d,
                                                                   budget, neighbours, quiet_clip),
        pairs_test=test,
        numeric_moments=numeric_moments or kind != "mixed",
        selected_pairs=selected,
        noisy_moments=kind == "copula" and moments_are_noise(config, n, n_basis, budget.remaining_epsilon, neighbours),
        numeric_columns=numeric_columns if kind == "mixed" else 0,
        apart_levels=apart_levels,
    ))


def check_plan_options(config: SynthConfig, d: int, synthesize: bool = True, mixed: bool = False,
                       mixed_basis: tuple[int, int] | None = None, numeric_columns: int = 0) -> None:
    """The refusals of :func:`make_plan` that follow from the options and the table's columns alone,
    whatever n: a mixed table's (``mixed``) mode and candidates and, given its basis's R moments in G
    groups (``mixed_basis``) and its ``numeric_columns`` (each a histogram cell per candidate in the
    LP: :func:`synthdp.pipeline.run.mixed_design`), its LP's size; moment candidates' n_basis; a numeric table's candidate
    values and, where n_basis is given, its LP's size (practical mode, candidates other than the
    grid: neither depends on n). The fit also checks them before its first release
    (:func:`synthdp.pipeline.run.check_public_inputs`), which by unit, or with a schema's level
    discovery or bounds estimation, comes before the plan."""
    if mixed or mixed_basis is not None:
        if config.mode == "exact" or config.candidates is not None:
            raise SynthDPError("tables with binary, categorical or nullable columns use practical mode and their "
                               "own candidates: leave mode and candidates unset")
    else:
        kind = config.candidate_kind if synthesize else "none"
        if synthesize and kind == "moments" and config.n_basis != "auto":
            needed = count_indices_up_to_degree(d, 2)
            if config.n_basis < needed:
                raise SynthDPError(f"moment candidates need all {needed} moments of degree <= 2: raise --n-basis")
        if config.mode != "exact" and kind != "grid":  # make_plan's sizes, as it takes them, before n is known
            n_basis = 0 if config.n_basis == "auto" else config.n_basis  # auto (it follows n): the candidates only
            if kind == "moments":
                n_basis = max(n_basis, count_indices_up_to_degree(d, 2))
            check_lp_memory(config, n_basis, 0 if kind == "none" else config.n_candidates, d, kind)
    if mixed_basis is None:
        return
    n_basis, groups = mixed_basis
    if n_basis > MAX_MOMENTS:  # as a numeric table's (check_lp_memory): a summary has no LP to refuse it
        raise SynthDPError(f"the release would hold {_g(n_basis)} moments, over the bound of {MAX_MOMENTS:.0e} "
                           "moments; lower --marginal-degree, or release fewer columns")
    n_candidates, tilt_candidates = mixed_candidate_counts(config, n_basis, synthesize)
    if synthesize and n_basis > n_candidates:  # e.g. adult at marginal degree 3: R = 98 664
        raise SynthDPError(
            f"the LP would fit {n_basis} moments with {n_candidates} candidates: lower marginal_degree, raise "
            "n_candidates, or release a summary only (synthdp summarize; fit(..., synthesize=False))")
    drawn = max(n_candidates, tilt_candidates)
    per_candidate = groups + numeric_columns  # a moment per group, a histogram cell per numeric column
    if max(per_candidate * max(drawn, 1), n_basis) > config.max_lp_entries:
        # mixed tables: a sparse W whole, at most G + numeric_columns non-zeros per candidate
        # even R candidates (the fewest the LP takes) would not fit: fewer candidates cannot help
        fewest = max(per_candidate, 1) * n_basis
        fix = ("lower --marginal-degree, or release fewer columns" if fewest > config.max_lp_entries
               # the tilt draws TILT_CANDIDATES_PER_MOMENT per moment, whatever --n-candidates
               else "lower --marginal-degree, or set --tilt 0" if tilt_candidates > n_candidates
               else "lower --n-candidates or --marginal-degree")  # not below the R moments: they would not fit
        what = (f"the LP would have {per_candidate} x {drawn} = {_g(per_candidate * drawn)} matrix entries"
                if per_candidate * max(drawn, 1) > config.max_lp_entries else f"the release would hold {n_basis} moments")
        raise SynthDPError(f"{what}, over the memory bound max_lp_entries = {_g(config.max_lp_entries)} (8 bytes "
                           f"each); {fix}")


def mixed_candidate_counts(config: SynthConfig, n_basis: int, synthesize: bool) -> tuple[int, int]:
    """A mixed table's candidates for the l1 fit, and for its tilt (:func:`synthdp.pipeline.run.tilts`; 0 without one)."""
    n_candidates = config.n_candidates if synthesize else 0
    tilts = synthesize and config.spread == 0 and config.tilt > 0
    return n_candidates, max(n_candidates, TILT_CANDIDATES_PER_MOMENT * n_basis) if tilts else 0


def mixed_plan_basis(config: SynthConfig, schema: Schema, synthesize: bool = True, block_means: bool = False,
                     laplace_cells: bool = True) -> tuple[Schema, np.ndarray, bool]:
    """The basis a mixed table's plan fixes, whatever n: the schema it holds (without its binned value
    blocks where their tables would hold more moments than the LP has candidates), the basis's indices
    (:func:`synthdp.stats.mixed_basis.basis_indices`) and whether they hold the numeric columns' own
    moments and means per level (:func:`mixed_numeric_moments`' decision; always, with
    ``laplace_cells`` False: a design study's alternative, before); ``block_means`` asks for the binned
    blocks' means (a design study's alternative). Refused where the LP could not hold it
    (:func:`check_plan_options`). Public: the configuration and the schema."""
    held = mixed_numeric_moments(config, schema.d_numeric, synthesize) or not laplace_cells
    count = basis_count(schema, config.marginal_degree, block_means, held)
    if count > config.n_candidates and any(column.binned for column in schema.value_blocks):
        # the binned blocks' tables would hold more moments than the LP has candidates: without them
        schema = schema.without_binned_blocks()
        count = basis_count(schema, config.marginal_degree, block_means, held)
    # R alone, before the (R, D) indices are built (2 000 columns: millions of moments, gigabytes)
    check_plan_options(config, schema.n_coordinates, synthesize, mixed_basis=(count, 0), numeric_columns=schema.d_numeric)
    indices = basis_indices(schema, config.marginal_degree, block_means, held)
    check_plan_options(config, schema.n_coordinates, synthesize, mixed_basis=(len(indices), groups_count(schema, indices)),
                       numeric_columns=schema.d_numeric)
    return schema, indices, held


def make_mixed_plan(config: SynthConfig, schema: Schema, n: int, synthesize: bool = True,
                    neighbours: Neighbours = ROWS, block_means: bool = False, laplace_cells: bool = True,
                    quiet_clip: bool = True,
                    basis: tuple[Schema, np.ndarray, bool] | None = None) -> tuple[Plan, Schema, np.ndarray]:
    """The plan of a mixed table (binary or categorical columns), with the basis it fixes.

    Returns the plan (:func:`make_plan` with ``mixed_basis``), the schema it holds and the basis's
    indices, of :func:`mixed_plan_basis` (``block_means`` and ``laplace_cells`` as there), or ``basis``, what
    it returned before (the fit's check before its first release, by unit). Public: the
    configuration, the schema and n (or its noisy count).
    """
    schema, indices, held = basis or mixed_plan_basis(config, schema, synthesize, block_means, laplace_cells)
    plan = make_plan(config, n, schema.n_coordinates, bounds_are_public=True, synthesize=synthesize,
                     mixed_basis=(len(indices), groups_count(schema, indices)), numeric_columns=schema.d_numeric,
                     neighbours=neighbours, numeric_moments=held, quiet_clip=quiet_clip,
                     level_columns=len(schema.categorical),
                     levels=tuple(len(column.all_levels) for column in schema.declared),
                     rows_to_count=schema.d_numeric > 0 or any(not c.binary and c.other for c in schema.declared))
    return plan, schema, indices


def _budget(config: SynthConfig, bounds: float, clip_count: float, shares: dict[str, float]) -> Budget:
    """The budget of these candidate shares, the moments taking the rest: Gaussian stages in GDP,
    or, with the pairs' selection (exponential mechanisms), in zCDP (:class:`Budget`)."""
    composition = _composition(config)
    if SELECTION in shares and composition == "gdp":
        composition = "zcdp"
    return Budget(bounds=bounds, clip_count=clip_count, remaining_epsilon=config.epsilon - bounds - clip_count,
                  delta=config.delta, composition=composition,
                  shares=(("moments", 1 - sum(shares.values())), *shares.items()))


SELECTION = "pair selection"  # the stage that chooses the pairs worth measuring
SELECTION_SHARE = 1 / 3  # its part of the pairs' share; the measurement of the chosen pairs takes the rest
# The selected pairs' share, taken from the other stages in proportion: under Gaussian composition
# their noise grows by 1 / sqrt(1 - 0.15), 8 %, which the smooth queries and column shapes follow;
# 0.3, the share of pairs read one by one, cost pima's smooth queries 25 % (docs/decisions/selected-pairs.md)
SELECTED_PAIRS_SHARE = 0.15


def selected_pair_count(n: float, d: int, measurement: StageBudget, neighbours: Neighbours = ROWS) -> int:
    """k, the number of pairs the selection chooses and measures: the most pairs (at most
    d (d - 1) / 2) whose noise, each, is within CORRELATION_NOISE_LIMIT in correlation units at
    ``measurement``'s budget.

    Each measured pair is the mean of sgn(s_i) sgn(s_j) over the rows, q = (2 / pi) arcsin(r) for
    a Gaussian copula with the columns cut at their medians, so near independence a noise sd
    sigma_q on q is pi / 2 sigma_q on r; sigma_q is that of k means of functions in [-1, 1]
    (:meth:`synthdp.privacy.budget.StageBudget.means_noise_sd`), growing with k. The limit is the
    pairs' own (a correlation of 0.5 at two noise sd: :func:`copula_shares`), so the budget buys
    as many pairs as it can measure as well as the pairs read one by one are measured; 0 where
    not even one pair can be (then no pairs). Public: n, d, the budget and the neighbours.
    """
    def within(k: int) -> bool:
        return math.pi / 2 * measurement.means_noise_sd(k, n, neighbours) <= CORRELATION_NOISE_LIMIT

    low, high = 0, d * (d - 1) // 2
    if high == 0 or not within(1):
        return 0
    while low < high:  # the largest k within the limit (the noise grows with k)
        middle = (low + high + 1) // 2
        if within(middle):
            low = middle
        else:
            high = middle - 1
    return low


def pairs_test_planned(config: SynthConfig, n: int, d: int, epsilon: float, neighbours: Neighbours = ROWS) -> bool:
    """Whether a numeric table's pairs are released only if a private test finds a block of
    related columns (:class:`PairsTest`): where the default would release none, since at a share
    of 0.3 their noise on a correlation is above CORRELATION_NOISE_LIMIT, but a block could show
    when they are denoised as a matrix (:func:`synthdp.postprocess.pairs.spectral_denoise`).
    A design study's alternative, not the product (``make_plan(..., pairs_test=True)``,
    ``StudyOptions(pairs_test=True)``): on tables with skewed columns the statistic stands above
    its line without any dependence (the refined scores' means are off under the true
    distribution), and the matrix release then draws spurious correlations
    (docs/decisions/pairs-test.md).

    The test releases T = lambda_max(S) - kappa tr(S) / d of the matrix S of the means of the
    products of normal scores (kappa the Marchenko-Pastur edge) (:func:`synthdp.privacy.release.release_pairs_test`), and the pairs follow
    where T, less what the histograms' noise alone adds to it, stands SPIKE_RATIO times the
    pairs' noise edge sd sqrt(d) above 0
    (:func:`synthdp.postprocess.pairs.block_stands_out`): the strongest block's direction is
    then recovered with at least half its weight. Whether a table's columns come in such blocks
    (WDBC's size measures, CRM's) is private, and releasing the pairs where they do not costs the
    smooth queries for nothing (docs/decisions/pairs-test.md), hence a test rather than a rule.

    Planned with Gaussian noise only (delta > 0): the histograms, released before the test at
    the share both outcomes give them, get the rest of theirs as a second release pooled with
    the first, which under Gaussian DP is exactly one release at the sum of the shares; under
    basic composition that pooling would cost. Not where the user set ``correlation_share``
    or ``favour="relationships"`` (which release the pairs anyway), nor where even d copies of
    one column (T = d - 1 in correlation units) would not reach the test's line. Public n, d
    and budget only.
    """
    if (config.correlation_share is not None or config.favour != "smooth" or _composition(config) != "gdp"
            or d < 2):
        return False
    noise = pair_noise_sd(n, d, epsilon, config.delta, _composition(config), COPULA_SHARES["correlation"], neighbours)
    return noise > CORRELATION_NOISE_LIMIT and d - 1 >= SPIKE_RATIO * noise * math.sqrt(d)


def tested_budgets(without_test: Budget, with_pairs: dict[str, float], marginals: float) -> tuple[Budget, Budget]:
    """The budgets of a run with a pairs test: (with the pairs, without them).

    Every share of the two splits the test chooses between (``with_pairs``: the pairs' and the
    histograms' shares with ``favour="relationships"``; ``without_test``: the default's, no pairs,
    the histograms at ``marginals``) is scaled by 1 - PAIRS_TEST_SHARE to make room for the test.
    The histograms are released before the test at the smaller of their two shares ("marginals")
    and get the rest of theirs after it ("marginals_2"), the moments after it too.
    """
    keep = 1 - PAIRS_TEST_SHARE
    first = min(with_pairs["marginals"], marginals)

    def split(histograms: float, pairs: float) -> Budget:
        shares = {"moments": keep * (1 - histograms - pairs), "marginals": keep * first, "pairs_test": PAIRS_TEST_SHARE,
                  "correlation": keep * pairs, "marginals_2": keep * (histograms - first)}
        return replace(without_test, shares=tuple((stage, share) for stage, share in shares.items() if share > 0))

    return split(with_pairs["marginals"], with_pairs["correlation"]), split(marginals, 0.0)


def pairs_denoising(n: int, d: int, budget: Budget, neighbours: Neighbours = ROWS) -> bool:
    """Whether the pairs release of ``d`` numeric columns is denoised as a matrix: its noise sd on
    a correlation at the default norm bound, at the budget's share for the pairs, is above
    CORRELATION_NOISE_LIMIT (:func:`synthdp.postprocess.pairs.denoised_as_matrix`; only where
    ``favour="relationships"`` or a ``correlation_share`` releases them there). Such a release
    scores the rows in finer cells and with a smaller norm bound
    (:func:`synthdp.postprocess.pairs.marginal_score_map`). False without a pairs release.
    Public n, d and budget only."""
    share = budget.share("correlation")
    return share > 0 and d > 1 and denoised_as_matrix(
        pair_noise_sd(n, d, budget.remaining_epsilon, budget.delta, budget.composition, share, neighbours))


def pairs_clip_norm_sq(n: int, d: int, budget: Budget, neighbours: Neighbours = ROWS, quiet: bool = True) -> float:
    """C^2, the bound on a row's squared score norm, of a pairs release read pair by pair: the
    default bound (:func:`synthdp.stats.scores.default_clip_norm_sq`, d + 2 sqrt(2 d)) lowered just
    enough that the noise on a correlation is CORRELATION_NOISE_LIMIT / 2 (a strong pair of 0.5
    then stands four noise sd out: the margin of the pairs' shares, :func:`copula_shares` and
    :func:`mixed_shares`), and never below d. 0 where the budget releases no pairs; the default
    bound where they are denoised as a matrix (:func:`pairs_denoising`), which scores with its own
    (:func:`synthdp.stats.scores.matrix_clip_norm_sq`).

    Derivation. The release adds noise of sd proportional to C^2 (its sensitivity, sqrt(2) C^2 / n
    in l2, (d / sqrt(2) + 1) C^2 / n in l1: :func:`synthdp.privacy.sensitivity.score_products_sensitivity`)
    to sum_rows min(1, C^2 / ||s||^2) s_i s_j / n, so the signal-to-noise ratio of every entry
    is that of E[min(1 / C^2, 1 / ||s||^2) s_i s_j], which grows as C^2 falls; what a lower bound
    costs is the radial information of the rows it shrinks (the copula's model of the release,
    :func:`synthdp.postprocess.pairs.model_means`, applies the same clip, so it is no bias), and a
    model of the clip that is only as good as the copula is. ||s||^2 is about chi-square with d
    degrees of freedom (more spread where columns are related): the default bound shrinks a few
    per cent of the rows, d about half of them. So the bound moves only where the noise needs it:
    where the default leaves the noise at most the margin, it stays (the pairs already stand out);
    above it, the noise falls in proportion to C^2 down to the margin or to C^2 = d, whichever
    comes first (below d the rows' radial information goes, the regime of
    :func:`synthdp.stats.scores.matrix_clip_norm_sq`, which pairs denoised as a matrix keep).
    ``quiet`` False: the default bound always (before). Public: n, d and the budget.
    Measured: docs/decisions/quiet-clip.md.
    """
    if budget.share("correlation") <= 0 or d < 2:
        return 0.0
    default = default_clip_norm_sq(d)
    noise = pair_noise_sd(n, d, budget.remaining_epsilon, budget.delta, budget.composition,
                          budget.share("correlation"), neighbours)
    margin = CORRELATION_NOISE_LIMIT / 2
    if not quiet or noise <= margin or denoised_as_matrix(noise):
        return default
    return max(float(d), default * margin / noise)  # the noise sd is proportional to C^2


MOMENT_NOISE_LIMIT = 0.1  # largest noise sd on a Chebyshev moment worth half the budget
COPULA_SHARES = {"marginals": 0.3, "correlation": 0.3}
WEAK_PAIRS_SHARE = 0.5  # the pairs' share where 0.3 leaves a strong pair between two and four noise sd
MARGINALS_ONLY_SHARE = 0.5
NOISY_MOMENTS_SHARE = 0.1


def moments_within_limit(stage: StageBudget, n_basis: int, n: float, neighbours: Neighbours = ROWS) -> bool:
    """Whether ``stage`` leaves each of R = ``n_basis`` moments noise of sd at most MOMENT_NOISE_LIMIT,
    at the scale of any R functions with values in [-1, 1] (:meth:`StageBudget.means_noise_sd`):
    the test of :func:`copula_shares` and of :meth:`Plan.moments_within_limit`. Public: the budget,
    n and R."""
    return stage.means_noise_sd(n_basis, n, neighbours) <= MOMENT_NOISE_LIMIT


def moments_are_noise(config: SynthConfig, n: int, n_basis: int, epsilon: float,
                      neighbours: Neighbours = ROWS) -> bool:
    """Whether the R moments' noise is above MOMENT_NOISE_LIMIT even at the share the histograms
    alone leave them (1 - MARGINALS_ONLY_SHARE): where :func:`copula_shares` gives them only
    NOISY_MOMENTS_SHARE, and the LP's optimum is blended, not tilted, toward them
    (:func:`synthdp.pipeline.run.tilts`). Public: n, R and the budget."""
    stage = Budget(0.0, 0.0, epsilon, config.delta, _composition(config),
                   (("moments", 1 - MARGINALS_ONLY_SHARE),)).stage("moments")
    return not moments_within_limit(stage, n_basis, n, neighbours)


def copula_shares(config: SynthConfig, n: int, d: int, n_basis: int, epsilon: float,
                  neighbours: Neighbours = ROWS, select: bool = True) -> dict[str, float]:
    """Budget shares of the copula's histograms and products (of what bounds and clip count leave).

    Shares the user set are kept. Otherwise:

    * the pairs (the means of products of normal scores, :mod:`synthdp.stats.scores`) get
      COPULA_SHARES' 0.3 only if the standard deviation of their noise at that share is at
      most CORRELATION_NOISE_LIMIT (with ``favour="relationships"``, also above it, to be
      denoised as a matrix, wherever :func:`spike_can_show`). The scores have unit variance, so that noise is the
      noise on a correlation: at 0.25 a correlation of 0.5, the usual line for a strong one,
      stands two noise standard deviations above 0, the threshold at which
      :func:`synthdp.postprocess.pairs.latent_correlation` keeps it; noisier pairs would
      keep none (docs/relationships-design.md). Where 0.3 leaves that noise above half the limit
      (a strong pair then stands fewer than four noise sd above 0, the margin a mixed
      table's pairs are given, :func:`mixed_shares`), the pairs get WEAK_PAIRS_SHARE (0.5)
      instead: the pair-by-pair threshold then drops fewer of the strong pairs it should
      keep (CTG at (1, 1e-10): noise 0.237 at 0.3, 0.184 at 0.5; measured:
      docs/decisions/copula-shares.md);
    * the histograms get 0.3 beside the products, else 0.5, unless the R moments' noise
      at the share this leaves them would exceed MOMENT_NOISE_LIMIT: then the moments keep
      only NOISY_MOMENTS_SHARE and the histograms take the rest. Noise of that size swamps
      what the moments add to the histograms (with R = 2d they are just each column's
      mean and second moment, which the histograms estimate too). Measured, with the cell
      the rule does not capture: docs/decisions/copula-shares.md.

    * where the pairs' noise at 0.3 is above the limit, no share or ``favour`` asks for all of
      them, the noise is Gaussian, and the moments are not noise (:func:`moments_are_noise`: the
      rows can afford more than the one-way histograms), the pairs worth measuring are chosen
      privately and only they are measured (``select``; :func:`selected_pair_count`): they take
      SELECTED_PAIRS_SHARE (0.15) from the shares the other stages have without them, in
      proportion (as the pairs test takes its share), SELECTION_SHARE of it for the choice (stage
      SELECTION) and the rest for the measurement ("correlation"). Under Gaussian composition
      the others' noise then grows by 1 / sqrt(0.85), 8 %; under Laplace noise by 1 / 0.85, 18 %,
      for fewer pairs (the measurement's noise grows as k, not sqrt(k)). Where the moments are
      noise, every share taken from the histograms costs the column shapes and the smooth
      queries more than the few pairs it buys give (docs/decisions/selected-pairs.md);

    The decision uses only public n, d, R and the budget. The moments' noise it compares
    with the limit is that of any R functions with values in [-1, 1]
    (:meth:`StageBudget.means_noise_sd`: per value for Laplace noise with delta > 0), the
    scale at which the limit was measured. The release calibrates the moments to their
    derived sensitivity (:func:`synthdp.privacy.sensitivity.moments_sensitivity`), which is
    lower; judged on that lower noise, the rule would give some tables half the budget for
    the moments, which cost them (docs/decisions/copula-shares.md).
    """
    def stage_budget(stage: str, share: float) -> StageBudget:
        return Budget(0.0, 0.0, epsilon, config.delta, _composition(config), ((stage, share),)).stage(stage)

    if config.correlation_share is not None:
        correlation = config.correlation_share
    else:
        share = COPULA_SHARES["correlation"]
        pair_noise = pair_noise_sd(n, d, epsilon, config.delta, _composition(config), share, neighbours)
        released = d > 1 and pair_noise <= CORRELATION_NOISE_LIMIT
        correlation = share if released else 0.0
        if released and pair_noise > CORRELATION_NOISE_LIMIT / 2:
            correlation = WEAK_PAIRS_SHARE
        elif not released and config.favour == "relationships" and spike_can_show(pair_noise, d):
            correlation = share  # released all the same, denoised as a matrix
        elif (not released and config.favour != "relationships" and select and d > 1 and config.marginals_share is None
              and _composition(config) == "gdp" and not moments_are_noise(config, n, n_basis, epsilon, neighbours)):
            # the pairs worth measuring, chosen privately: their share taken from the others in proportion
            others, share = copula_shares(config, n, d, n_basis, epsilon, neighbours, select=False), SELECTED_PAIRS_SHARE
            return {"marginals": others["marginals"] * (1 - share), SELECTION: SELECTION_SHARE * share,
                    "correlation": (1 - SELECTION_SHARE) * share}
    marginals = config.marginals_share
    if marginals is None:
        marginals = COPULA_SHARES["marginals"] if correlation else MARGINALS_ONLY_SHARE
        moments = 1 - marginals - correlation
        if moments > 0 and not moments_within_limit(stage_budget("moments", moments), n_basis, n, neighbours):
            marginals = max(marginals, 1 - NOISY_MOMENTS_SHARE - correlation)
    if marginals + correlation > 0.999:
        raise SynthDPError("marginals_share + correlation_share must leave a share for the moments")
    return {"marginals": marginals, "correlation": correlation}


def spike_can_show(noise_sd: float, d: int) -> bool:
    """Whether any d x d correlation matrix could stand out of pairs released with noise sd
    ``noise_sd`` on each correlation, denoised as a matrix (:func:`synthdp.postprocess.pairs.spectral_denoise`).

    An eigenvalue theta of C - I shows above the noise's semicircle only when theta > noise_sd * sqrt(d),
    and no correlation matrix has one above d - 1 (all d columns one column). Below that line
    the denoised matrix is the identity whatever the table: the pairs' share would be lost.
    Public: the calibration's noise and d.
    """
    return d > 1 and noise_sd * math.sqrt(d) < d - 1


def pair_noise_sd(n: int, d: int, epsilon: float, delta: float, composition: str, share: float,
                  neighbours: Neighbours = ROWS) -> float:
    """The noise sd on a correlation of the pairs release (the means of products of d columns'
    normal scores, default clip) at ``share`` of ``epsilon`` (what bounds and clip count leave)
    and ``delta``: the quantity the budget rules compare with CORRELATION_NOISE_LIMIT. Public
    n, d and budget only."""
    stage = Budget(0.0, 0.0, epsilon, delta, composition, (("correlation", share),)).stage("correlation")
    return stage.noise_sd(*score_products_sensitivity(n, d, default_clip_norm_sq(d), neighbours))


MIXED_MARGINALS_SHARE = 0.2
LEVEL_CELLS = "level cells"  # the stage of a mixed table's one-way categorical cells, where its moments are noise
MIXED_CORRELATION_SHARES = (0.1, 0.2, 0.3)
# The least share the cells keep beside histograms that take an equal noise's share (mixed_shares): 2 000 numeric
# columns beside one binary column would leave them 1 / 2 001, below the least share a stage may have
MIN_CELLS_SHARE = 0.01


def mixed_shares(config: SynthConfig, n: int, numeric_columns: int, epsilon: float,
                 neighbours: Neighbours = ROWS, cell_groups: int | None = None, groups: int | None = None,
                 level_columns: int = 0, levels: tuple[int, ...] = ()) -> dict[str, float]:
    """Budget shares of a mixed table's numeric histograms and pairs (of what bounds and clip count leave):
    :func:`mixed_split`'s."""
    return mixed_split(config, n, numeric_columns, epsilon, neighbours, cell_groups, groups, level_columns, levels)[0]


def mixed_split(config: SynthConfig, n: int, numeric_columns: int, epsilon: float,
                neighbours: Neighbours = ROWS, cell_groups: int | None = None, groups: int | None = None,
                level_columns: int = 0, levels: tuple[int, ...] = ()) -> tuple[dict[str, float], int]:
    """Budget shares of a mixed table's numeric histograms and pairs (of what bounds and clip count
    leave), and the fewest levels of a column whose one-way cells go apart (0: none; 1: every
    column's, the schema's value blocks too; :func:`level_cells_apart`).

    A mixed table's moments hold its binary and categorical columns' one-way and two-way
    cells, the numeric columns' moments of degree <= 2 and their means per level (under Laplace
    noise not always: :func:`mixed_numeric_moments`); its
    continuous and integer columns also get one-way histograms (:class:`CellLayout`), from
    which the candidates draw their values. Their share is the user's ``marginals_share``,
    else MIXED_MARGINALS_SHARE: a histogram's sensitivity is small (one cell per column per
    row), so 0.2 gives its counts less noise than the categorical cells of the moments
    have, while raising the moments' noise by 12 % under Gaussian composition (sd as
    1 / sqrt(share)) and 25 % under basic composition (sd as 1 / share). Adult at
    (1, 1e-10): counts noise 48 against 155 for the categorical cells; at epsilon = 1: 89
    against 469. No numeric column: no histograms (docs/decisions/mixed-shares.md).

    The pairs of numeric columns (the means of products of normal scores, as for numeric
    tables: :func:`copula_shares`) get the user's ``correlation_share``, else the smallest
    of MIXED_CORRELATION_SHARES at which the noise on a correlation is at most half of
    CORRELATION_NOISE_LIMIT (a strong pair of 0.5 then stands four noise sd above 0), else
    0.3 if that share meets the limit itself, else none. The smallest share rather than
    the numeric tables' 0.3: here the moments also hold every categorical cell, which pay
    for what the pairs take.

    ``cell_groups``: the moments' G where they hold only the cells (under Laplace noise:
    :func:`mixed_numeric_moments`), so that the histograms alone carry each numeric column.
    Under basic composition a stage's noise scale is its l1 sensitivity over its epsilon, and
    a histogram costs what a group of cells costs (2/n); the histograms then get at least
    the share that gives every one of their d tables the same noise as each of the G
    groups, (1 - correlation) d / (d + G): on adult (d = 6, G = 75) 0.067, below 0.2, which
    stays; on PKS with its sex column (d = 22, G = 1) 0.96, where 0.2 left each histogram
    five times the noise of independent one-way histograms (docs/decisions/laplace-cells.md);
    at most all but MIN_CELLS_SHARE of it (d = 1 000, G = 1: 0.999, nothing left for the cells).

    ``groups`` (the moments' G), ``level_columns`` (k, the binary and categorical columns, with
    the schema's value blocks) and ``levels`` (the number of levels, with "other" and "missing",
    of each declared binary or categorical column): where the moments' noise at the share left
    to them, that of G groups' means (:meth:`synthdp.privacy.budget.StageBudget.means_noise_sd`),
    is above MOMENT_NOISE_LIMIT, the rule of a numeric table's moments (:func:`copula_shares`)
    applies: noise of that size swamps every cell, the categorical columns' one-way cells among
    them, so the moments keep only NOISY_MOMENTS_SHARE and the one-way tables of every column
    take the rest but the pairs': the numeric histograms ("marginals") and the k columns'
    one-way cells, released apart (stage LEVEL_CELLS,
    :func:`synthdp.privacy.release.release_level_cells`), in proportion to their columns (each
    one-way table then has the same noise, under either composition: a table's sensitivity is
    the same, one cell off and one on). A table of a few hundred rows and a dozen such columns
    (heart_cleveland at (1, 1e-10): G = 112, cells' noise sd 0.47) is there; adult (noise sd
    0.004) is far from it. Not with a ``marginals_share`` set.

    Below that limit, a column of L levels whose cells hold on average less than twice the
    moments' noise sd (1/L < 2 sd: the rule that sets a histogram's bins,
    :func:`auto_marginal_bins`) still has one-way cells that are noise (a class of 10 levels
    with noise sd 0.09 on each cell came out with shares from 0 to 0.31). Only those columns'
    one-way cells go apart (:func:`level_cells_apart`), each with the share it gets where every
    column's do, and so the same noise; the moments keep the rest, and with it every 2-way cell
    (adult at pure epsilon 0.5: its 42 countries, sd 0.022, take 0.044 of the budget, not 0.53
    with the moments left 0.1). Measured: docs/decisions/level-cells.md. Public n, d, G, k, the
    levels and the budget only.
    """
    if numeric_columns == 0 and not level_columns:
        return {}, 0
    marginals = MIXED_MARGINALS_SHARE if config.marginals_share is None else config.marginals_share
    if numeric_columns == 0:
        marginals = 0.0
    correlation = config.correlation_share
    if correlation is None:
        correlation = 0.0
        if numeric_columns > 1:
            def pair_noise(share: float) -> float:
                return pair_noise_sd(n, numeric_columns, epsilon, config.delta, _composition(config), share,
                                     neighbours)

            quiet = [share for share in MIXED_CORRELATION_SHARES if pair_noise(share) <= CORRELATION_NOISE_LIMIT / 2]
            if quiet:
                correlation = quiet[0]
            elif pair_noise(MIXED_CORRELATION_SHARES[-1]) <= CORRELATION_NOISE_LIMIT:
                correlation = MIXED_CORRELATION_SHARES[-1]
    if config.marginals_share is None and cell_groups is not None and numeric_columns:
        equal_noise = (1 - correlation) * numeric_columns / (numeric_columns + cell_groups)
        marginals = max(marginals, min(equal_noise, 1 - correlation - MIN_CELLS_SHARE))
    if marginals + correlation > 0.999:
        raise SynthDPError("marginals_share + correlation_share must leave a share for the moments")
    # (G = k: the moments are the one-way cells and nothing else, already their own release)
    if config.marginals_share is None and groups is not None and groups > level_columns > 0:
        one_way = 1 - NOISY_MOMENTS_SHARE - correlation  # where every column's one-way table goes apart
        tables = numeric_columns + level_columns
        fewest, share = level_cells_apart(config, n, epsilon, neighbours, 1 - marginals - correlation, groups, levels,
                                          one_way / tables)
        if fewest == 1:  # the moments are noise: every column's one-way table apart
            return {"marginals": one_way * numeric_columns / tables, LEVEL_CELLS: one_way * level_columns / tables,
                    "correlation": correlation}, 1
        if fewest:
            return {"marginals": marginals, LEVEL_CELLS: share, "correlation": correlation}, fewest
    if numeric_columns == 0:
        return {}, 0
    return {"marginals": marginals, "correlation": correlation}, 0


def level_cells_apart(config: SynthConfig, n: int, epsilon: float, neighbours: Neighbours, moments_share: float,
                      groups: int, levels: tuple[int, ...], full_share: float) -> tuple[int, float]:
    """Which one-way cells of a mixed table go apart from its moments (:func:`mixed_split`), and
    the share they take from the moments' ``moments_share``: (0, 0) none; (1, 0) every column's
    (the moments' noise, that of ``groups`` groups' means, above MOMENT_NOISE_LIMIT: the shares
    are :func:`mixed_split`'s); (F, s) those of the declared columns with at least F levels
    (``levels``), the m columns whose cells hold on average less than twice the moments' noise
    sd (1/L < 2 sd), at the share s = m ``full_share`` that each one-way table gets where every
    column's go apart: the same noise as there, the moments keeping the rest and the 2-way
    cells with it. Where taking s from the moments would leave them below NOISY_MOMENTS_SHARE,
    or their noise (of G - m groups) above the limit, or would name another column, every
    column's cells go apart: (1, 0). Public: n, the budget, G and the levels."""
    def moments_noise(share: float, count: int) -> float:
        stage = Budget(0.0, 0.0, epsilon, config.delta, _composition(config), (("moments", share),)).stage("moments")
        return stage.means_noise_sd(count, n, neighbours)

    noise = moments_noise(moments_share, groups)
    if noise > MOMENT_NOISE_LIMIT:
        return 1, 0.0
    named = [count for count in levels if 2 * noise * count > 1]
    if not named:
        return 0, 0.0
    share = full_share * len(named)
    left = moments_share - share
    if left < NOISY_MOMENTS_SHARE:
        return 1, 0.0
    after = moments_noise(left, groups - len(named))
    if after > MOMENT_NOISE_LIMIT or any(2 * after * count > 1 for count in levels if count < min(named)):
        return 1, 0.0
    return min(named), share


MARGINAL_BINS_RANGE = (4, 16)


def auto_marginal_bins(n: int, d: int, budget: StageBudget, neighbours: Neighbours = ROWS) -> int:
    """Bins per column for the copula's histograms: fewer when the count noise is large.

    Each cell should hold on average at least twice the standard deviation of its noise, so
    B + 2 cells (the bins and the two atoms) <= n / (2 sd), within MARGINAL_BINS_RANGE.
    Measured: docs/decisions/marginal-bins.md. The noise sd of a count follows from
    the histograms' sensitivity and the public budget.
    """
    noise_sd = budget.noise_sd(*histogram_sensitivity(d, neighbours))
    low, high = MARGINAL_BINS_RANGE
    return int(np.clip(math.floor(n / (2 * noise_sd)) - 2, low, high))


def value_cells_limit(n: int, d: int, marginal_bins: int, budget: Budget, neighbours: Neighbours = ROWS) -> int:
    """The most integer values a column's one-way histogram counts one cell each
    (:meth:`synthdp.stats.histograms.CellLayout.for_domain`): an integer column with k values
    inside its bounds gets one cell per value when k <= MAX_VALUE_CELLS and

        k <= max(B + 2, n / (2 sd)),

    sd the noise of a count of the histograms of ``d`` columns: with at most B + 2 values,
    value cells are the bins' cells made exact; beyond, the rule of :func:`auto_marginal_bins`
    (each cell should hold on average at least twice its noise) with k cells in place of
    B + 2. A spike on one value (40 hours a week, an education level) then stays on its value
    instead of being spread over a bin. Public: n, d, B and the budget."""
    sd = budget.stage("marginals").noise_sd(*histogram_sensitivity(d, neighbours))
    return min(MAX_VALUE_CELLS, max(marginal_bins + 2, math.floor(n / (2 * sd)) if sd > 0 else MAX_VALUE_CELLS))


def mixed_numeric_moments(config: SynthConfig, numeric_columns: int, synthesize: bool = True) -> bool:
    """Whether a mixed table's moments hold its numeric columns' own moments of degree <= 2 and their
    means per level (:func:`synthdp.stats.mixed_basis.basis_indices`' ``numeric_moments``), or only
    the cells.

    Under Gaussian noise both, and in a release that only feeds a summary. Under Laplace noise the
    moments' sensitivity is 2G/n in l1 (:func:`synthdp.stats.mixed_basis.basis_groups`): each of
    the G groups adds its whole share to every moment's noise (under Gaussian noise, which
    grows as sqrt(G), far less), so the moments of a synthesizing release hold only the cells
    of the one-way and 2-way tables, as a numeric table at pure epsilon leaves its columns'
    shapes to the histograms and their pairs to the pairs release:

    * the own moments go where the numeric columns have histograms (every numeric column's
      shape, its mean and variance among them); the pairs release, where the plan makes one,
      holds their pairs, as a numeric table leaves its pair products to it
      (``Plan.skipped_pairs``), and where it makes none the columns are drawn independently,
      as a numeric table's are: these moments would then carry a correlation only where the
      pairs release would have been made;
    * the means per level go: a group each (27 of adult's 129, one per numeric column and
      categorical column), they cost the cells more than they give (adult at epsilon = 1,
      seeds 100-102: .091 -> .083 without them alone, and the joins they feed no better
      even from an exact center).

    The histograms then get at least the share that gives each of them a group's noise
    (:func:`mixed_shares`' ``cell_groups``). adult at epsilon = 1: G 129 -> 75, the mean 2-way
    TV over all pairs .089 -> .073 (12 held-out seeds), below independent one-way histograms
    (.083); other mixed tables in docs/decisions/laplace-cells.md. Public: the configuration
    and the numeric columns.
    """
    # a synthesizing mixed table's numeric columns always have histograms (SynthConfig refuses a share of 0)
    return config.noise_kind != "laplace" or not synthesize or numeric_columns == 0


def _composition(config: SynthConfig) -> str:
    """Gaussian noise composes in Gaussian DP; Laplace releases by basic composition."""
    return "gdp" if config.noise_kind == "gaussian" else "basic"


def check_lp_memory(config: SynthConfig, n_basis: int, n_candidates: int, d: int, kind: str) -> None:
    """Refuse a plan whose LP or moments would not fit the memory bounds.

    Column generation (:func:`synthdp.postprocess.lp.solve_l1_fit_columns`) holds the C x d candidates,
    one pricing chunk of W (16 MB) and the W columns of its master LP: R x |S| entries,
    which must fit max_lp_entries for at least the first master and one batch (it stops
    with an error if it needs more). The spread LP holds all of W, R x C entries. A summary
    (``kind`` "none") has no LP; every release holds at most MAX_MOMENTS moments.
    """
    exact = config.mode == "exact"
    fix = ("use --mode practical" if exact
           else "use --candidates other than grid, or lower --n-basis" if kind == "grid"  # practical: N^d points
           else "lower --n-candidates or --n-basis")
    if kind != "none":
        if n_candidates * d > MAX_CANDIDATE_VALUES:
            fix_candidates = "use --candidates other than grid" if kind == "grid" and not exact else fix
            raise SynthDPError(f"{_g(n_candidates)} candidates x {d} columns is over the bound of "
                               f"{MAX_CANDIDATE_VALUES:.0e} candidate values (8 bytes each); {fix_candidates}")
        held = n_candidates if config.spread > 0 else min(n_candidates, minimum_working_columns(n_basis))
        entries = n_basis * max(held, 1)
        if entries > config.max_lp_entries:
            what = "the spread LP (--spread) holds all of W" if config.spread > 0 else "the LP holds at least"
            raise SynthDPError(
                f"{what}: {_whole(n_basis)} x {_whole(held)} = {_g(entries)} matrix entries, over the memory bound "
                f"max_lp_entries = {_g(config.max_lp_entries)} (8 bytes each); {fix}"
            )
    if n_basis > MAX_MOMENTS:
        raise SynthDPError(f"the release would hold {_g(n_basis)} moments, over the bound of {MAX_MOMENTS:.0e} "
                           f"moments (about a kilobyte each); {'use --mode practical' if exact else 'lower --n-basis'}")


def _g(count: int | float) -> str:
    """A count in an error, to 3 significant digits, as ``:.3g`` writes it; an integer too large for a
    float (a config file's n_candidates of 400 digits) by its number of digits instead of an OverflowError."""
    try:
        return f"{count:.3g}"
    except OverflowError:
        return f"about 1e+{len(str(abs(int(count)))) - 1}"


def _whole(count: int) -> str:
    """A count in an error as its digits, or as :func:`_g` writes it where they would be more than 15."""
    return str(count) if abs(count) < 10**15 else _g(count)


def capped_power(base: int, exponent: int) -> int:
    """base ** exponent, capped so a huge grid is refused by the memory check, not computed."""
    return base**exponent if exponent * math.log(max(base, 1)) < 200 else 10**90
