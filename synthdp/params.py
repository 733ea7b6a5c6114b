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
from dataclasses import asdict, dataclass

from .basis import count_indices_up_to_degree
from .config import SynthConfig
from .errors import SynthDPError
from .lp import minimum_working_columns

MAX_CANDIDATE_VALUES = 200_000_000  # C x d candidate coordinates held at once (1.6 GB)


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
    log_term = math.log(1 / delta)
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


def auto_n_basis(n: int, d: int, smoothness: int, delta: float) -> int:
    """The paper's R, raised to d so that all degree-1 moments are released.

    The degree-1 moments are the column means (T_1(x) = x). Released with the other
    moments they centre the PCA ellipsoid for free; released on their own (L1 sensitivity
    2d/n) from a small share of the budget they would be mostly noise.
    """
    return max(paper_n_basis(n, d, smoothness, delta), d)


@dataclass(frozen=True)
class Budget:
    """How (epsilon, delta) is split between the stages (basic composition)."""

    bounds: float  # epsilon for DP estimates of missing bounds
    clip_count: float
    pca_epsilon: float
    pca_delta: float
    moments_epsilon: float
    moments_delta: float


@dataclass(frozen=True)
class Plan:
    """Every size and budget of one run, fixed from public inputs before any data is used."""

    mode: str
    n: int
    d: int
    smoothness: int
    theory: TheoryParameters
    n_basis: int  # R, non-constant basis functions
    n_candidates: int  # C
    candidates: str
    noise: str
    budget: Budget
    round_to_lattice: bool  # exact mode: round b and W to multiples of 1/L

    def to_dict(self) -> dict:
        out = asdict(self)
        out.update(out.pop("theory"))
        out.update(R=self.n_basis, C=self.n_candidates, K=self.smoothness)  # the paper's letters
        return out


def make_plan(config: SynthConfig, n: int, d: int, bounds_are_public: bool, estimated_bounds: int = 0,
              synthesize: bool = True) -> Plan:
    """Resolve the configuration for a table of n rows and d columns; refuse impossible ones.

    ``bounds_are_public`` is False when bounds are read from the data (then there is no
    clipping to count); ``estimated_bounds`` is the number of columns whose bounds are
    estimated with DP from ``config.bounds_share`` of epsilon. ``synthesize=False`` plans a
    release that only feeds a summary: no candidates and no LP, hence no private PCA, whose
    share of the budget goes to the moments.
    """
    if n < 2:
        raise SynthDPError("the input needs at least 2 rows")
    theory = theory_parameters(n, d, config.smoothness, config.delta)
    kind = config.candidate_kind if synthesize else "none"
    if config.mode == "exact":
        n_basis = _capped_power(theory.t, d) - 1
        n_candidates = _capped_power(theory.N, d) if synthesize else 0
    else:
        n_basis = auto_n_basis(n, d, config.smoothness, config.delta) if config.n_basis == "auto" else config.n_basis
        if kind == "moments":
            needed = count_indices_up_to_degree(d, 2)
            if config.n_basis != "auto" and n_basis < needed:
                raise SynthDPError(f"moment candidates need all {needed} moments of degree <= 2: raise --n-basis")
            n_basis = max(n_basis, needed)
        n_candidates = {"grid": _capped_power(theory.N, d), "none": 0}.get(kind, config.n_candidates)
    if n_basis < 1:
        raise SynthDPError("the basis has no non-constant function (t = 1): n is too small for exact mode")
    _check_lp_memory(config, n_basis, n_candidates, d, kind)
    if estimated_bounds and not config.bounds_share > 0:
        raise SynthDPError(f"bounds missing for {estimated_bounds} column(s) and bounds_share is 0")
    bounds = config.epsilon * config.bounds_share if estimated_bounds else 0.0
    clip_count = config.epsilon * config.clip_count_share if bounds_are_public else 0.0
    remaining = config.epsilon - bounds - clip_count
    pca_share = config.pca_share if kind == "pca" else 0.0
    budget = Budget(
        bounds=bounds,
        clip_count=clip_count,
        pca_epsilon=remaining * pca_share,
        pca_delta=config.delta * pca_share,
        moments_epsilon=remaining * (1 - pca_share),
        moments_delta=config.delta * (1 - pca_share),
    )
    return Plan(
        mode=config.mode,
        n=n,
        d=d,
        smoothness=config.smoothness,
        theory=theory,
        n_basis=n_basis,
        n_candidates=n_candidates,
        candidates=kind,
        noise=config.noise_kind,
        budget=budget,
        round_to_lattice=config.mode == "exact",
    )


def _check_lp_memory(config: SynthConfig, n_basis: int, n_candidates: int, d: int, kind: str) -> None:
    """Refuse a plan whose LP would not fit the memory bounds.

    Column generation (:func:`synthdp.lp.solve_l1_fit_columns`) holds the C x d candidates,
    one pricing chunk of W (16 MB) and the W columns of its master LP: R x |S| entries,
    which must fit max_lp_entries for at least the first master and one batch (it stops
    with an error if it needs more). The spread LP holds all of W, R x C entries.
    """
    fix = "use --mode practical" if config.mode == "exact" or kind == "grid" else "lower --n-candidates or --n-basis"
    if n_candidates * d > MAX_CANDIDATE_VALUES:
        raise SynthDPError(f"{n_candidates:.3g} candidates x {d} columns is over the bound of "
                           f"{MAX_CANDIDATE_VALUES:.0e} candidate values (8 bytes each); {fix}")
    held = n_candidates if config.spread > 0 else min(n_candidates, minimum_working_columns(n_basis))
    entries = n_basis * max(held, 1)  # a summary-only release still holds R moments
    if entries > config.max_lp_entries:
        what = "the spread LP (--spread) holds all of W" if config.spread > 0 else "the LP holds at least"
        raise SynthDPError(
            f"{what}: {n_basis} x {held} = {entries:.3g} matrix entries, over the memory bound "
            f"max_lp_entries = {config.max_lp_entries:.3g} (8 bytes each); {fix}"
        )


def _capped_power(base: int, exponent: int) -> int:
    """base ** exponent, capped so a huge grid is refused by the memory check, not computed."""
    return base**exponent if exponent * math.log(max(base, 1)) < 200 else 10**90
