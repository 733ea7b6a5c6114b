"""Typed configuration of a synthesis run, validated in one place.

The same keys serve the Python API (``SmoothSynthesizer(**keys)``), the CLI flags and the
TOML ``--config`` file (where dashes and underscores are interchangeable).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Literal

from .errors import SynthDPError

Mode = Literal["practical", "exact"]
CandidateKind = Literal["pca", "hypercube", "grid", "moments"]
NoiseKind = Literal["gaussian", "laplace"]

MIN_EPSILON, MAX_EPSILON = 1e-6, 1e6
MIN_SHARE = 1e-3  # smallest share of the budget a stage may get


@dataclass(frozen=True)
class SynthConfig:
    """Parameters of one release.

    Parameters
    ----------
    epsilon, delta : float
        Total privacy budget; delta = 0 is pure epsilon-DP.
    smoothness : int
        Smoothness order K of the target queries (Gaussian kernels of width s have K ~ s^2).
        Sets the paper's t, N, L, m and the automatic R.
    mode : "practical" or "exact"
        "exact" is Algorithm 1 (full grid, full tensor basis, rounding to 1/L); "practical"
        is Section 3.4 (R lowest-degree basis functions, C private candidates).
    candidates : "pca", "hypercube", "grid", "moments" or None
        Candidate points of the LP. None means "pca" in practical mode and "grid" in exact.
        "moments" draws them from the Gaussian implied by the released moments of degree
        <= 2 (no PCA budget; R is then at least d (d + 3) / 2).
    n_candidates : int
        C, the number of candidate points (ignored for "grid").
    n_basis : int or "auto"
        R, the number of non-constant basis functions in practical mode; "auto" is the
        paper's R = 0.5 n^{d/(2d+K)} (epsilon-DP) or 0.5 n^{2d/(3d+2K)} ((epsilon, delta)),
        raised to d so that every column mean (degree-1 moment) is released.
    noise : "gaussian", "laplace" or None
        Noise for (epsilon, delta) runs: the analytic Gaussian mechanism, or Laplace with
        advanced composition. None means Gaussian if delta > 0 and Laplace if delta = 0.
    pca_share : float
        Share of the budget spent on private PCA when candidates are "pca".
    pca_components, pca_iterations : int or None, int
        k and L of private subspace iteration; None means min(d, 5) components.
    pca_calibration : "derived" or "paper"
        "derived" calibrates the PCA noise to the sensitivity derived in
        :mod:`synthdp.pca`; "paper" uses Theorem 3.6's constants, raised where needed to the
        derived scale so the run stays private.
    ellipsoid_radius : "paper" or "spread"
        Radii sqrt(lambda) (the paper) or sqrt((k + 2) lambda), which gives the candidate
        cloud the variance of the data along each axis.
    clip_count_share : float
        Share of epsilon spent on a noisy count of rows with clipped values (0: not released).
    bounds_share : float
        Share of epsilon spent on DP estimates of the bounds of columns that have no public
        bounds (0: missing bounds are an error). See :mod:`synthdp.bounds` for its cost.
    spread : float
        Tolerance of the mass-spreading second LP (MECHANISM.md section 6), as a multiple of
        the expected l1 norm of the moment noise: among the distributions whose fit is within
        that of the optimum, the one with the smallest largest weight. 0 (default) keeps the
        optimal vertex, which has at most R + 1 distinct rows.
    max_lp_entries : int
        Memory bound on the LP matrix entries held at once: W is kept whole up to it, and
        column generation's master LP (R x its candidate columns) must fit it; the spread
        LP needs all of W (R x C) within it.
    seed : int or None
        Makes every random draw reproducible. For testing only: noise drawn from a known
        seed is not private against anyone who knows it.
    """

    epsilon: float = 1.0
    delta: float = 0.0
    smoothness: int = 4
    mode: Mode = "practical"
    candidates: CandidateKind | None = None
    n_candidates: int = 10_000
    n_basis: int | Literal["auto"] = "auto"
    noise: NoiseKind | None = None
    pca_share: float = 0.3
    pca_components: int | None = None
    pca_iterations: int = 5
    pca_calibration: Literal["derived", "paper"] = "derived"
    ellipsoid_radius: Literal["paper", "spread"] = "paper"
    clip_count_share: float = 0.02
    bounds_share: float = 0.0
    spread: float = 0.0
    max_lp_entries: int = 20_000_000
    seed: int | None = None

    def __post_init__(self) -> None:
        _check(_is_number(self.epsilon) and self.epsilon > 0, "epsilon must be a number > 0")
        _check(MIN_EPSILON <= self.epsilon <= MAX_EPSILON,
               f"epsilon must be between {MIN_EPSILON:g} and {MAX_EPSILON:g} (outside, noise calibration is meaningless)")
        _check(_is_number(self.delta) and 0 <= self.delta < 1, "delta must be in [0, 1)")
        _check(_is_int(self.smoothness) and self.smoothness >= 1, "smoothness must be an integer >= 1")
        _choice("mode", self.mode, ("practical", "exact"))
        _choice("candidates", self.candidates, ("pca", "hypercube", "grid", "moments", None))
        _check(_is_int(self.n_candidates) and self.n_candidates >= 1, "n_candidates must be an integer >= 1")
        _check(self.n_basis == "auto" or (_is_int(self.n_basis) and self.n_basis >= 1),
               "n_basis must be 'auto' or an integer >= 1")
        _choice("noise", self.noise, ("gaussian", "laplace", None))
        _check(not (self.delta == 0 and self.noise == "gaussian"),
               "Gaussian noise needs delta > 0; pass --delta or --noise laplace")
        _check(_is_number(self.pca_share) and MIN_SHARE <= self.pca_share <= 1 - MIN_SHARE,
               f"pca_share must be in [{MIN_SHARE:g}, {1 - MIN_SHARE:g}]")
        _check(self.pca_components is None or (_is_int(self.pca_components) and self.pca_components >= 1),
               "pca_components must be an integer >= 1")
        _check(_is_int(self.pca_iterations) and self.pca_iterations >= 1, "pca_iterations must be an integer >= 1")
        _choice("pca_calibration", self.pca_calibration, ("derived", "paper"))
        _choice("ellipsoid_radius", self.ellipsoid_radius, ("paper", "spread"))
        _check(_is_number(self.clip_count_share) and (self.clip_count_share == 0 or MIN_SHARE <= self.clip_count_share < 0.5),
               f"clip_count_share must be 0 or in [{MIN_SHARE:g}, 0.5)")
        _check(_is_number(self.bounds_share) and (self.bounds_share == 0 or MIN_SHARE <= self.bounds_share < 0.5),
               f"bounds_share must be 0 or in [{MIN_SHARE:g}, 0.5)")
        _check(_is_number(self.spread) and 0 <= self.spread <= 10, "spread must be in [0, 10]")
        _check(_is_int(self.max_lp_entries) and self.max_lp_entries >= 1, "max_lp_entries must be an integer >= 1")
        _check(self.seed is None or (_is_int(self.seed) and self.seed >= 0), "seed must be an integer >= 0")
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
        if self.candidates is not None:
            return self.candidates
        return "grid" if self.mode == "exact" else "pca"

    @classmethod
    def keys(cls) -> list[str]:
        return [f.name for f in fields(cls)]


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise SynthDPError(message)


def _choice(name: str, value: object, allowed: tuple) -> None:
    _check(value in allowed, f"{name} must be one of {[a for a in allowed if a is not None]}")
