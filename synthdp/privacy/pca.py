"""Private PCA by private subspace iteration (the paper's Algorithm 2, corrected).

Corrections to the paper (docs/mechanism.md §4): with rows as points the matrix is
d x d, A = S - mu mu^T with S = (1/n) D^T D; the noise G^(l) is d x k; the eigenvalues
come from released quantities only (the column norms of the last noisy iterate W^(L),
since ||A x|| = lambda for an eigenvector x, less the noise's expected energy), not from
x^T A^2 x, which reads A again; and
the centre mu is itself a released, noisy quantity, so mu mu^T X is post-processing.

Sensitivity of one iteration W = A X + noise (X public: it is the previous noisy output)
------------------------------------------------------------------------------------
Replacing row x by x' changes S by (x' x'^T - x x^T)/n and leaves mu mu^T unchanged
(mu is released, public). For a, b in [-1, 1]^d,
    ||a a^T - b b^T||_F^2 = ||a||^4 + ||b||^4 - 2 (a^T b)^2 <= 2 d^2,
so ||Delta S||_F <= sqrt(2) d / n. X has orthonormal columns, so ||X||_2 = 1 and
    ||Delta S X||_F <= ||Delta S||_F ||X||_2 <= sqrt(2) d / n      (L2 sensitivity),
    ||Delta S X||_1 <= sqrt(d k) ||Delta S X||_F <= sqrt(2 k) d^{3/2} / n   (L1).
The bound is attained up to rounding by two orthogonal corners of the cube.

Composition over L iterations (adaptive: X^(l) depends on earlier outputs)
-----------------------------------------------------------------------
Gaussian: L Gaussian releases of L2 sensitivity Delta and equal sigma compose exactly like
one release of sensitivity sqrt(L) Delta (they are sqrt(L) Delta / sigma -GDP), so
sigma = sqrt(L) Delta / mu for the stage's Gaussian-DP parameter mu. Laplace: each iteration gets epsilon / L, so b = L Delta_1 / epsilon.

Theorem 3.6's constants ("paper" calibration) scale the noise by ||X^(l-1)||_inf:
Gaussian sigma = ||X||_inf 5 d sqrt(4 k L log(1/delta)) / (n epsilon),
Laplace b = ||X||_inf 50 d^{3/2} k L / (n epsilon). They are not always above the derived
scale (the Gaussian one falls below it for d > ~25 k), so "paper" uses the larger of the two.
"""

from __future__ import annotations

import math

import numpy as np

from synthdp.privacy.budget import StageBudget
from synthdp.privacy.ledger import PrivacyEvent
from synthdp.privacy.noise import NoiseSampler, laplace_scale
from synthdp.privacy.sensitivity import ROWS, Neighbours, iteration_sensitivity
from synthdp.released import PrivatePCA


def debiased_eigenvalues(last_iterate: np.ndarray, scale: float, noise_kind: str) -> np.ndarray:
    """Eigenvalue estimates from the released last iterate W = A X + E (post-processing).

    For an eigenvector x_s, ||A x_s|| = lambda_s. The noise column adds its energy:
    E ||W_s||^2 = lambda_s^2 + d v, with v the noise variance per entry (sigma^2 for
    Gaussian, 2 b^2 for Laplace). So lambda_s ~ sqrt(max(||W_s||^2 - d v, 0)), capped at d:
    a unit direction's variance of points in [-1, 1]^d is at most E (v^T x)^2 <= d.
    """
    d = last_iterate.shape[0]
    variance = np.square(scale) * (1.0 if noise_kind == "gaussian" else 2.0)
    energy = np.sum(last_iterate**2, axis=0) - d * variance
    return np.minimum(np.sqrt(np.maximum(energy, 0.0)), float(d))


def private_subspace_iteration(
    second_moment: np.ndarray,
    center: np.ndarray,
    n: int,
    k: int,
    iterations: int,
    budget: StageBudget,
    noise_kind: str,
    noise: NoiseSampler,
    rng: np.random.Generator,
    calibration: str = "derived",
    neighbours: Neighbours = ROWS,
) -> tuple[PrivatePCA, PrivacyEvent]:
    """Release the top-k principal axes of a private table.

    Parameters
    ----------
    second_moment : array, shape (d, d)
        S = (1/n) sum_i x_i x_i^T over the private rows, x_i in [-1, 1]^d. Private.
    center : array, shape (d,)
        The already released mean; public.
    n : int
        Number of rows (public).
    k, iterations : int
        Dimension of the subspace and number of iterations L.
    budget : StageBudget
        Budget of this stage: its mu for Gaussian noise, its epsilon for Laplace.
    noise_kind : "gaussian" or "laplace"
    noise : NoiseSampler
    rng : numpy Generator
        Public randomness for the starting subspace.
    calibration : "derived" or "paper"
    neighbours : Neighbours
        The neighbouring relation (by unit: ``n`` is the released noisy count).
    """
    d = second_moment.shape[0]
    covariance = second_moment - np.outer(center, center)
    norm = "l2" if noise_kind == "gaussian" else "l1"
    sensitivity = iteration_sensitivity(d, k, n, norm, neighbours)
    epsilon, delta = budget.epsilon, budget.delta
    if noise_kind == "gaussian":
        # L adaptive Gaussian releases of l2 sensitivity Delta each are sqrt(L) Delta / sigma -GDP
        assert budget.mu is not None  # a Gaussian budget carries its mu
        derived_scale = math.sqrt(iterations) * sensitivity / budget.mu
        # the paper's constants only where asked for, and not where the stage's mu is (0, delta)-DP
        # (a large delta: epsilon 0, which they divide by): the derived scale is then the floor that holds;
        # -log(delta), not log(1 / delta), which is inf below 5.6e-309 (noise inf, a table of NaN)
        paper_factor = (5 * d * math.sqrt(4 * k * iterations * -math.log(delta)) / (n * epsilon)
                        if calibration == "paper" and epsilon > 0 else 0.0)
        mechanism = "Gaussian (analytic), private subspace iteration"
    else:
        derived_scale = laplace_scale(iterations * sensitivity, epsilon)
        paper_factor = 50 * d**1.5 * k * iterations / (n * epsilon)
        mechanism = "Laplace, private subspace iteration"

    basis, _ = np.linalg.qr(rng.standard_normal((d, k)))
    scales = []
    for _ in range(iterations):
        scale = derived_scale
        if calibration == "paper":
            scale = max(derived_scale, paper_factor * float(np.abs(basis).max()))
        product = covariance @ basis
        if noise_kind == "gaussian":
            noisy = noise.gaussian(product, scale)
        else:
            noisy = noise.laplace(product, scale)
        scales.append(scale)
        basis, _ = np.linalg.qr(noisy)
    eigenvalues = debiased_eigenvalues(noisy, scales[-1], noise_kind)
    order = np.argsort(eigenvalues)[::-1]
    pca = PrivatePCA(center=np.clip(center, -1, 1), axes=basis[:, order], eigenvalues=eigenvalues[order])
    event = PrivacyEvent(
        stage="pca",
        mechanism=mechanism + ("" if calibration != "paper" else " (Theorem 3.6 constants, floored at the derived scale)"
                               if paper_factor > 0 else " (the derived scale: Theorem 3.6 divides by the stage's "
                               "epsilon, 0 here)"),
        sensitivity=sensitivity,
        sensitivity_norm=norm + " per iteration",
        noise_scale=max(scales),
        epsilon=epsilon,
        delta=delta if noise_kind == "gaussian" else 0.0,
        released=f"{iterations} noisy iterates of shape {d}x{k}",
        # the L releases compose to sqrt(sum_l (Delta / sigma_l)^2)-GDP: at most the budget's mu, every sigma_l
        # being at least the derived scale (the paper's may be larger, and differ between iterations)
        mu=math.sqrt(sum((sensitivity / scale) ** 2 for scale in scales)) if noise_kind == "gaussian" else None,
    )
    return pca, event
