"""The model of pairs: the copula's latent correlation matrix fitted to the pairs release.

The release (:func:`synthdp.privacy.release.release_score_products`) holds the noisy means
M_ij of s_i s_j, i <= j, where s_j is the normal score of column j's histogram cell
(:mod:`synthdp.stats.scores`) and each row's score vector is shrunk onto ||s||^2 <= C^2. The
copula (:mod:`synthdp.postprocess.copula`) needs the correlation R of its latent normal
scores Z, from which a candidate is x_j = F_j^{-1}(Phi(z_j)). Post-processing only:

1. :func:`model_means` computes, by Monte Carlo on fixed normal draws, the means G(R) the
   copula with latent correlation R would release: the same step scores (a latent z_j
   falls in the cell of its candidate), the same norm clip;
2. in correlation units, M_ij / sqrt(M_ii M_jj) - G_ij(R) / sqrt(G_ii G_jj): the real rows'
   scores need not have the copula's variances (a row in a cell the noisy histogram gave
   little mass scores far out), so each side is scaled by its own; a pair whose released
   score correlation (the difference at R = I) is below ``threshold``
   noise standard deviations, or that the Benjamini–Hochberg procedure at false discovery
   rate PAIR_FDR (0.1) does not select (:func:`false_discovery_keep`), is set to 0: hard
   thresholding keeps the strong pairs at full strength (one global signal-to-noise factor,
   the rule before, halved them and collapsed every pair to 0 when one column had a tiny
   variance) and drops those noise could explain; the false discovery rate keeps the 4.6 % of
   unrelated pairs that noise alone pushes past 2 sd from entering the copula as strong
   correlations where few pairs are related (docs/decisions/pair-fdr.md); and a column's pairs
   into a block of tied columns are read from the block as a whole (:func:`block_edges_pooled`):
   kept only where its pooled relation to the block is selected, the members it has no kept
   pair with then at the block's reading, so that one false pair into a block of near-copies
   does not correlate the column with all of them (docs/decisions/block-edges.md);
3. the kept pairs follow R <- nearest(R + difference), ITERATIONS (13) times: the step scores'
   attenuation and the clip are undone, and each step is projected onto the correlation
   matrices. With exact statistics this reaches the copula's correlation (PKS: strong pairs
   at 1.00 of their normal-score correlation); with noise, the targets no correlation matrix
   attains keep pulling, so the number of steps is a measured choice
   (docs/decisions/pairs-threshold.md);
4. the result is replaced by the correlation matrix of largest entropy (largest determinant)
   within a box around it (:func:`max_entropy_correlation`, :func:`entropy_boxes`): FREE_BOX (1)
   noise sd for the pairs not kept, KEPT_BOX (0.1) for the kept ones where the copula alone
   carries the pairs (0 where the LP also fits their product moments). The projection of
   step 3 leaves the eigenvalues the noise pushed below 0 at the floor: near-exact linear
   relations the data do not have, which a regression fitted to the synthetic rows reads as
   signal (PKS: motor_UPDRS 95 % explained by the voice measures, 17 % in the data). The least
   committal matrix the release allows has none (docs/decisions/pair-entropy.md).

Measured against the alternatives: docs/relationships-design.md and docs/decisions/README.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import linalg, sparse, special
from scipy.sparse import csgraph
from threadpoolctl import threadpool_limits  # a dependency of scikit-learn

from synthdp.postprocess.copula import Marginals, nearest_correlation, symmetric_root
from synthdp.stats.scores import (
    MATRIX_CLIP_SHARE,
    MATRIX_MEAN_SHARE,
    MATRIX_SCORE_BINS,
    ScoreMap,
    default_clip_norm_sq,
    matrix_clip_norm_sq,
    pair_matrix,
    split_statistic,
)

THRESHOLD = 2.0  # noise standard deviations a score correlation must reach to be kept
PAIR_FDR = 0.1  # ... and the false discovery rate at which the kept pairs are selected (false_discovery_keep)
BLOCK_R = 0.5  # released score correlation from which a kept pair ties two columns into a block (block_edges_pooled)
TIE_Z = 4.0  # ... and the noise sd it must stand out by (a false tie at 4 sd: 6e-5 per pair under Gaussian noise)
EXTEND_BLOCKS = ("laplace", "always", "never")  # where the columns selected for a block count as members (latent_correlation)
CORRELATION_NOISE_LIMIT = 0.25  # largest noise sd on a normal-score correlation worth releasing pair by pair
SPIKE_RATIO = math.sqrt(2.0)  # the pairs test's line, in units of the pairs' noise edge sd sqrt(d): block_stands_out
MODEL_DRAWS = 20_000  # normal draws of the Monte Carlo model of the released means (at most)
MODEL_VALUES = 4_000_000  # draws x d held at once
PAIR_VARIANCES = ("released", "model")  # latent_correlation's variances: the product first
VARIANCE_FLOOR = 2.0  # noise sd below which a column's released score variance is floored
SEARCH_CELLS = 32  # cells per column above which model_means searches instead of counting edge by edge
ITERATIONS = 13  # fixed-point steps from the released means to the latent correlation (measured: docs/decisions/pairs-threshold.md)
KEPT_BOX = 0.1  # noise sd a kept pair may move for entropy: adds at most 1 % of its noise variance to its error
FREE_BOX = 1.0  # noise sd a pair not kept may move for entropy: the tilt's tolerance for a moment
ENTROPY_TOLERANCE = 1e-7  # largest projected-gradient step at which max_entropy_correlation stops
ENTROPY_ITERATIONS = 5000  # its iteration cap (each a Cholesky factorisation of a d x d matrix)
ENTROPY_MEMORY = 10  # the values its non-monotone line search compares with


def marginal_score_map(marginals: Marginals, as_matrix: bool = False,
                       matrix_scores: bool | tuple[int, float] = True, matrix_means: bool | float = False,
                       clip_norm_sq: float = 0.0) -> ScoreMap:
    """The map the pairs release scores with: the copula's marginals (the released histograms as
    post-processing reads them) and a public norm bound.

    Pairs read one by one (``as_matrix`` False): the step scores of the histograms' cells and
    the plan's norm bound ``clip_norm_sq`` (:func:`synthdp.pipeline.plan.pairs_clip_norm_sq`; 0:
    :func:`synthdp.stats.scores.default_clip_norm_sq`). Pairs denoised as a matrix (their noise
    above CORRELATION_NOISE_LIMIT, :func:`denoised_as_matrix`; the plan's ``pairs_as_matrix``):
    the cells refined to at least MATRIX_SCORE_BINS bins (:meth:`ScoreMap.refined`) and
    :func:`synthdp.stats.scores.matrix_clip_norm_sq`, both for a larger signal-to-noise ratio
    where the noise is what limits (WDBC at (1, 1e-10): the largest eigenvalue of the score
    products from 0.8-0.9 to 2.2 times the edge of the noise's, above the 1 a block of pairs needs
    to show; measured: docs/decisions/matrix-scores.md). ``matrix_scores`` (design studies):
    False keeps the step scores there too, a pair (bins, clip share) sets those two.
    ``matrix_means`` (design studies; False, the product): also release the scores' means
    beside their products (weight c, c^2 = MATRIX_MEAN_SHARE x C^2 for True, that share for a
    number; :attr:`ScoreMap.mean_weight`), so that the model compares covariances. A skewed
    column's rows crowd into one end of their bins, where the finer scores do not average 0, and
    the products' means alone hold m m^T, a block between skewed columns that no dependence made;
    but where a table's skewed columns are related, that block lies along theirs and lifts it over
    the noise's edge, so removing it loses real blocks too (docs/decisions/score-means.md).
    Public: the release, d and the plan.
    """
    d = marginals.noisy_counts.shape[0]
    if not as_matrix or matrix_scores is False:
        return ScoreMap(marginals.probabilities(), clip_norm_sq or default_clip_norm_sq(d), marginals.layout)
    bins, share = (MATRIX_SCORE_BINS, MATRIX_CLIP_SHARE) if matrix_scores is True else matrix_scores
    clip = matrix_clip_norm_sq(d, share)
    mean_share = MATRIX_MEAN_SHARE if matrix_means is True else float(matrix_means)
    weight = math.sqrt(mean_share * clip) if matrix_means is not False else 0.0
    return ScoreMap(marginals.probabilities(), clip, marginals.layout, weight).refined(bins)


def model_means(correlation: np.ndarray, score_map: ScoreMap, normal_draws: np.ndarray,
                centred: bool = False) -> np.ndarray:
    """E[s s^T] of the clipped scores of the copula with this latent correlation, shape (d, d);
    with ``centred``, their covariance E[s s^T] - E[s] E[s]^T.

    Monte Carlo over ``normal_draws`` (K, d) independent standard normal values: z = L e
    with L L^T = ``correlation``; each z_j falls in the cell c of column j whose probability
    interval holds Phi(z_j) (the cell of the candidate x_j = F_j^{-1}(Phi(z_j)); where the cells
    are counted in z against the edges' normal quantiles, the same cell unless z_j lies within
    rounding of an edge), gets its score s_j(c), and the score vector is shrunk onto
    ||s||^2 <= C^2 as in the release.
    A nullable column's missing cell (the last, score 0) takes the top of the probability
    interval: an approximation, since the candidates' missingness comes from its indicator,
    drawn apart from the copula.
    """
    z = normal_draws @ symmetric_root(correlation)  # (the root is symmetric: L = L^T, L L^T = correlation)
    table = score_map.cell_scores()
    upper = np.cumsum(score_map.probabilities, axis=1)
    # each value's cell: the number of its column's cumulative edges at or below it (searchsorted's
    # "right" count, edge by edge over all columns at once: 2x faster than one search per column),
    # counted in the smallest integer type that holds it (one byte: 4x faster than int64 on CTG)
    if upper.shape[1] <= SEARCH_CELLS:
        # Phi(z) >= p where z >= Phi^{-1}(p): counted in z against the edges' normal quantiles,
        # without Phi over every draw (half of this function's time on CTG)
        edges = special.ndtri(upper)
        cells: np.ndarray = np.zeros(z.shape, dtype=np.uint8 if upper.shape[1] < 255 else np.int64)
        for edge in range(upper.shape[1]):  # (the annotation: numpy 1.26's stubs refuse += of booleans otherwise)
            cells += z >= edges[:, edge]
    else:  # the finer cells of pairs denoised as a matrix: one binary search per column (the same count)
        columns = np.ascontiguousarray(special.ndtr(z).T)
        cells = np.empty(columns.shape, dtype=np.int64)
        for j, values in enumerate(columns):
            cells[j] = np.searchsorted(upper[j], values, side="right")
        cells = np.ascontiguousarray(cells.T)  # rows of draws, as the count gives them (the same sums, bit for bit)
    np.minimum(cells, table.shape[1] - 1, out=cells)
    scores = table[np.arange(z.shape[1]), cells]
    norm_sq = np.einsum("ij,ij->i", scores, scores)
    scores *= np.sqrt(np.minimum(1.0, score_map.clip_norm_sq / np.maximum(norm_sq, 1e-300)))[:, None]
    if centred:
        scores -= scores.mean(axis=0)
    return scores.T @ scores / len(scores)


def denoised_as_matrix(noise_sd: float) -> bool:
    """Whether a pairs release with this noise sd on a correlation is denoised as a matrix
    (:func:`spectral_denoise`) rather than pair by pair.

    Pair by pair, a correlation is kept from THRESHOLD (2) noise sd: with noise sd above
    CORRELATION_NOISE_LIMIT (0.25) that line is above 0.5, where strong correlations start,
    and the pairs kept are few and mostly the noise's (measured: experiments/results/pair_limits.md,
    WDBC and CRM). There the matrix as a whole still holds its few large eigenvalues; below the
    limit the pair-by-pair rule keeps more (CTG and PKS). Public: the noise sd is the calibration's.
    """
    return noise_sd > CORRELATION_NOISE_LIMIT


def spectral_denoise(correlation: np.ndarray, noise_sd: float) -> np.ndarray:
    """A correlation matrix whose off-diagonal entries carry independent noise of sd ``noise_sd``,
    denoised as a whole by eigenvalue shrinkage, then projected onto the correlation matrices.

    Model (a spiked Wigner matrix): the off-diagonal part A = C - I + E, E symmetric with
    independent N(0, sd^2) entries. In units of sd sqrt(d), E's eigenvalues fill [-2, 2]
    (the semicircle law), and a true eigenvalue theta > 1 of C - I shows as mu = theta + 1/theta,
    its eigenvector keeping a share 1 - 1/theta^2 of the true one (Benaych-Georges and Nadakuditi
    2011). So each eigenvalue mu of A beyond the edge 2 gives back theta = (|mu| + sqrt(mu^2 - 4)) / 2
    (with mu's sign), and the estimate of C - I is sum theta (1 - 1/theta^2) v v^T over them, in
    units of sd sqrt(d): the eigenvalue shrinkage that minimises the Frobenius error of a
    rank-one spike; eigenvalues within the edge are noise and dropped. A table whose strong
    pairs form a few blocks of related columns (WDBC's size measures) has a few eigenvalues
    of C - I far above sd sqrt(d), which stand out of noise that no single entry stands out of
    (measured: experiments/results/pair_limits.md). Post-processing of released values.
    """
    d = len(correlation)
    unit = noise_sd * np.sqrt(d)
    if not np.isfinite(unit) or unit <= 0:
        return nearest_correlation(correlation)
    off = correlation - np.diag(np.diag(correlation))
    values, vectors = np.linalg.eigh((off + off.T) / (2 * unit))
    signal = np.zeros((d, d))
    for value, vector in zip(values, vectors.T):
        if abs(value) > 2.0:
            theta = np.sign(value) * (abs(value) + np.sqrt(value**2 - 4.0)) / 2.0
            signal += theta * (1.0 - 1.0 / theta**2) * np.outer(vector, vector)
    estimate = unit * signal
    np.fill_diagonal(estimate, 1.0)
    return nearest_correlation(np.clip(estimate, -1.0, 1.0))


def block_stands_out(statistic: float, noise_sd: float, d: int) -> bool:
    """The pairs test's decision (:func:`synthdp.pipeline.plan.pairs_test_planned`): whether a block of
    related columns stands out of the noise of a pairs release denoised as a matrix.

    ``statistic`` is the released T = lambda_max(S) - kappa tr(S) / d of the matrix S of the means
    of the products of normal scores (:func:`synthdp.privacy.release.release_pairs_test`), less
    what the histograms' noise alone adds to it (:func:`score_offset`); ``noise_sd`` the noise sd
    the pairs release would put on each of those means. It estimates theta, the largest
    eigenvalue of S's off-diagonal part, in the units of S. In :func:`spectral_denoise`'s
    model an eigenvalue theta shows above the noise when theta > sd sqrt(d), and its eigenvector is
    recovered with a share 1 - (sd sqrt(d) / theta)^2 of the true one: at SPIKE_RATIO = sqrt(2)
    times the edge, half. Below that line the release would give back less than half of even the
    strongest block's direction, and its share is better spent on the histograms and moments.
    """
    return bool(statistic >= SPIKE_RATIO * noise_sd * math.sqrt(d))


OFFSET_DRAWS = 20  # re-noised histograms in score_offset's Monte Carlo estimate


def score_offset(marginals: Marginals, score_map: ScoreMap, build: Callable[[Marginals], ScoreMap],
                 rng: np.random.Generator, draws: int = OFFSET_DRAWS) -> float:
    """What the histograms' noise alone adds to the pairs test's statistic: an estimate of E ||m||^2,
    m the mean score vector of the rows under ``score_map`` = ``build(marginals)``.

    The map's cells come from noisy histograms, so under the table's true distribution each
    column's scores do not average 0 but some m_j, and S (the means of s s^T) holds m m^T beside
    the scores' covariance: a rank-one part of up to ||m||^2 in its largest eigenvalue that no
    dependence between the columns made (0.4-0.8 noise edges of a 569 x 30 or 2500 x 30 table of
    independent columns at (1, 1e-10), about 0 with the exact histograms; tests/test_pairs_test.py).
    Estimated by a parametric bootstrap on the release: the released distribution taken for the
    truth, ``draws`` histograms re-noised with the release's noise sd, each one's map's mean score
    under that distribution; times the clip's shrinkage of a typical row (C^2 over its expected
    squared norm, at most 1). Post-processing of the released histograms (public ``rng``)."""
    probabilities, scores = score_map.probabilities, score_map.cell_scores()
    typical = float((probabilities * scores**2).sum())
    shrink = min(1.0, score_map.clip_norm_sq / typical) if typical > 0 else 1.0
    truth = marginals.probabilities() * marginals.n_rows
    total = 0.0
    for _ in range(draws):
        noisy = Marginals(truth + rng.normal(0.0, marginals.noise_sd, truth.shape), marginals.n_rows,
                          marginals.noise_sd, marginals.atom_threshold, marginals.layout)
        means = (probabilities * build(noisy).cell_scores()).sum(axis=1)
        total += float(means @ means)
    return shrink * total / draws


def max_entropy_correlation(center: np.ndarray, box: np.ndarray, tolerance: float = ENTROPY_TOLERANCE,
                            max_iterations: int = ENTROPY_ITERATIONS) -> np.ndarray:
    """The correlation matrix of largest determinant within ``box`` of ``center``'s entries, shape (d, d).

    Maximise log det X over the symmetric X with unit diagonal and |X_ij - center_ij| <= box_ij
    (i < j): among the Gaussian copulas the box allows, the one of largest entropy, the least
    committal, as the LP's tilt is among the distributions its moments' tolerances allow. It
    is the dual of the graphical lasso with a penalty box_ij on each entry of the precision
    matrix (Banerjee, El Ghaoui and d'Aspremont 2008): where a box binds, the precision's entry
    is non-zero; where none binds, the two columns are conditionally independent given the
    others, so the matrix adds no dependence the box does not force. log det is concave and
    the box convex, so the maximum is unique; ``center`` must be positive definite (it is
    feasible, and every step keeps the determinant above its start).

    Solved by a spectral projected gradient method (Birgin, Martinez and Raydan 2000) scaled
    by the diagonal of the Hessian of -log det (A_ii A_jj + A_ij^2, A = X^{-1}: the entries of a
    column the matrix nearly determines are the stiff ones): steps along the scaled gradient
    2 A_ij / h_ij, clipped to the box, Barzilai-Borwein step lengths, a non-monotone Armijo
    backtracking over the last ENTROPY_MEMORY values (Grippo, Lampariello and Lucidi 1986) that
    also rejects a matrix that is not positive definite. It stops when the scaled projected
    step is below ``tolerance`` in every entry, or after ``max_iterations`` (every iterate is
    feasible and positive definite: it then returns the best). Deterministic. Measured on the
    benchmark releases: d = 20 in 140-640 evaluations (0.01-0.06 s), d = 100 in about 700.

    Parameters
    ----------
    center : array, shape (d, d)
        A positive definite correlation matrix.
    box : array, shape (d (d - 1) / 2,)
        How far each entry i < j (``np.triu_indices(d, 1)`` order) may move; 0 fixes it.
    tolerance, max_iterations : float, int
        The stopping rule above.
    """
    d = len(center)
    i, j = np.triu_indices(d, 1)
    x = center[i, j].astype(float)
    low, high = x - box, x + box

    def value(entries: np.ndarray) -> tuple[float, np.ndarray, np.ndarray] | None:
        """-log det X, its gradient and its Hessian's diagonal in the entries i < j; None where X is not
        positive definite."""
        matrix = np.eye(d)
        matrix[i, j] = matrix[j, i] = entries
        try:
            factor = linalg.cholesky(matrix, lower=True, check_finite=False)
        except linalg.LinAlgError:
            return None
        inverse = linalg.cho_solve((factor, True), np.eye(d), check_finite=False)
        curvature = 2.0 * (inverse[i, i] * inverse[j, j] + inverse[i, j] ** 2)
        return -2.0 * float(np.log(np.diag(factor)).sum()), -2.0 * inverse[i, j], curvature

    start = value(x)
    if start is None:
        raise ValueError("max_entropy_correlation needs a positive definite center")
    f, gradient, curvature = start
    best, best_f = x, f
    recent = [f]
    step = 1.0
    for _ in range(max_iterations):
        if np.abs(np.clip(x - gradient / curvature, low, high) - x).max() < tolerance:
            break
        direction = np.clip(x - step * gradient / curvature, low, high) - x
        slope = float(gradient @ direction)
        length, reference = 1.0, max(recent)
        while length > 1e-12:
            trial = x + length * direction
            found = value(trial)
            if found is not None and found[0] <= reference + 1e-4 * length * slope:
                break
            length *= 0.5
        else:  # no decrease along the projected direction: at the optimum to round-off
            break
        f_trial, gradient_trial, curvature_trial = found
        s, y = trial - x, gradient_trial - gradient
        change = float(s @ y)
        step = float(np.clip((s * curvature_trial) @ s / change, 1e-3, 1e3)) if change > 1e-300 else 1.0
        x, f, gradient, curvature = trial, f_trial, gradient_trial, curvature_trial
        recent = (recent + [f])[-ENTROPY_MEMORY:]
        if f < best_f:
            best, best_f = x, f
    result = np.eye(d)
    result[i, j] = result[j, i] = best
    return result


def entropy_boxes(lp_fits_pairs: bool) -> tuple[float, float]:
    """The noise sd a kept pair and a pair not kept may move towards the largest entropy.

    A pair not kept is one noise could explain: it may move FREE_BOX (1) noise sd, the
    tolerance the LP's tilt gives a moment. A kept pair was measured: where the copula alone
    carries the pairs (their product moments left to the pairs release and the candidates
    rearranged onto the tilt's marginals, so the output keeps the copula's dependence) it may
    move KEPT_BOX (0.1) noise sd, at most 1 % more mean squared error, which lets the matrix
    leave the projection's floor inside a block of kept pairs (PKS's voice measures). Where the
    LP also fits the pairs' product moments (mixed tables, ``--favour relationships``), it is
    fixed: the tilt then already moves each pair's moment up to one noise sd towards the
    candidates', and the two together cost strong pairs (pks_sex: strong-pair ratio -.036 with
    the kept box, -.004 without; docs/decisions/pair-entropy.md). Public: the plan.
    """
    return (0.0 if lp_fits_pairs else KEPT_BOX), FREE_BOX


def false_discovery_keep(z: np.ndarray, usable: np.ndarray, threshold: float, fdr: float | None,
                         noise: str = "gaussian") -> np.ndarray:
    """Which pairs' released score correlations are kept, from their values in noise sd ``z``.

    A pair is kept where |z| reaches ``threshold`` and, with ``fdr``, where the
    Benjamini–Hochberg procedure at false discovery rate ``fdr`` over the usable pairs selects
    it: the p-value of |z| under the noise alone (two-sided; ``noise`` "gaussian" or
    "laplace", the calibration's public kind) must be at most fdr k / m, where m is the number
    of usable pairs and k the rank of the largest p-value that passes its own line. On a table
    with many related pairs that line is near ``threshold``; on one with few or none it rises
    toward the Bonferroni line, so the few pairs noise alone pushes past ``threshold`` (4.6 %
    of the independent ones at 2 sd under Gaussian noise, 5.9 % under Laplace) are not drawn as
    strong correlations. Post-processing of the released values and the public noise sd.
    """
    kept = usable & (np.abs(z) >= threshold)
    if fdr is None or not kept.any():
        return kept
    p = noise_p_values(np.abs(z[usable]), noise)
    line = benjamini_hochberg_line(p, fdr)
    if line < 0:
        return np.zeros_like(kept)
    selected = np.zeros_like(kept)
    selected[np.flatnonzero(usable)] = p <= line
    return kept & selected


def noise_p_values(size: np.ndarray, noise: str) -> np.ndarray:
    """Two-sided p-values of values ``size`` noise sd from 0 under the noise alone: Gaussian, or
    Laplace ("laplace", exp(-sqrt(2) |z|): the calibration's public kind)."""
    return np.exp(-math.sqrt(2.0) * size) if noise == "laplace" else special.erfc(size / math.sqrt(2.0))


def benjamini_hochberg_line(p: np.ndarray, fdr: float) -> float:
    """The Benjamini–Hochberg procedure's line at false discovery rate ``fdr`` over the p-values
    ``p``: fdr k / m for the largest rank k whose p-value passes its own line (the hypotheses
    with p at or below it are selected); -1 where none passes."""
    m = len(p)
    passing = np.nonzero(np.sort(p) <= fdr * np.arange(1, m + 1) / m)[0]
    return fdr * (passing[-1] + 1) / m if len(passing) else -1.0


def block_edges_pooled(kept: np.ndarray, values: np.ndarray, noise: np.ndarray, d: int, fdr: float | None,
                       noise_kind: str = "gaussian", extend: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The pairs between a block of columns and a column outside it, read from the block as a whole.

    ``kept``, ``values`` and ``noise``: for the pairs i < j (``np.triu_indices(d, 1)`` order),
    whether each is kept, its released score correlation and that value's noise sd. A kept pair
    whose |value| reaches BLOCK_R and stands TIE_Z noise sd out (under Laplace noise, as far out as
    the same tail probability, 6.3e-5: 6.85 sd) ties its two columns; a block is
    a connected set of three or more tied columns. Its members move together, so a column x outside
    it relates to them through their common factor: r_xk = c w_k, w the leading eigenvector of the
    block's released correlations. Each column x outside a block gets the weighted least-squares
    c = sum_k w_k r_xk / s_xk^2 / sum_k w_k^2 / s_xk^2 over all the block's members (s: the noise
    sd), with z = c sqrt(sum_k w_k^2 / s_xk^2), standard normal where x is related to none of the
    block (the noise of different pairs is independent). The pairs (x, block) are selected by the
    Benjamini-Hochberg procedure at ``fdr`` over those z, for every block and every column outside
    it (p-values under ``noise_kind``, as in :func:`false_discovery_keep`). A selected x keeps its
    kept pairs into the block at their values and gets the others at the block's reading c w_k;
    one not selected keeps none. Read one by one, a single pair that noise (or its selection)
    pushed out would be carried by the copula to every member: one column into a block of 20
    near-copies showed as up to 20 correlations the data do not have; and a column related to a
    whole block by a little, each of its pairs under the threshold, now is so in the copula too.

    With ``extend`` (the product under Laplace noise: :func:`latent_correlation`'s
    ``extend_blocks``), a column not selected for a block keeps no pair with a column selected for
    it either, unless that pair stands out as far as a tie must (TIE_Z noise sd, or its Laplace
    equivalent): a selected column moves with the block in the copula, so one false pair into
    it is carried to every member just the same. The false discovery rate bounds the share of
    such pairs, not their size: under Laplace noise (pure ε) an unrelated pair stands 3.4 noise
    sd out twelve times as often as under Gaussian noise, where that noise is large (released
    correlations of -1.54 and 1.57 at noise sd .45 on a generated 20 000 x 20 table), and those
    showed as 6.5 unrelated correlations above .3 per release there. Under Gaussian noise a
    false pair lies near its line, and ``extend`` cost more real pairs than it removed false ones
    (CTG's strong-pair ratio .851 → .777): there only the tied members' pairs are read from the
    block (docs/decisions/block-edges.md).

    Returns the kept pairs and their values (``values`` where nothing was pooled). Without
    ``fdr`` or without a block, as given. Post-processing of released values and their public
    noise sd (docs/decisions/block-edges.md).
    """
    values = values.copy()
    if fdr is None or not kept.any():
        return kept, values
    i, j = np.triu_indices(d, 1)
    index = np.full((d, d), -1)
    index[i, j] = index[j, i] = np.arange(len(i))
    value, sd = np.eye(d), np.full((d, d), np.inf)
    value[i, j] = value[j, i] = values
    sd[i, j] = sd[j, i] = noise
    tie_z = TIE_Z if noise_kind != "laplace" else -math.log(special.erfc(TIE_Z / math.sqrt(2.0))) / math.sqrt(2.0)
    standing = np.abs(values) >= tie_z * noise  # as far out as a tie must stand
    ties = kept & (np.abs(values) >= BLOCK_R) & standing
    graph = sparse.coo_matrix((np.ones(int(ties.sum())), (i[ties], j[ties])), shape=(d, d))
    _, labels = csgraph.connected_components(graph, directed=False)
    tests = []
    for label in np.unique(labels):
        members = np.flatnonzero(labels == label)
        if len(members) < 3:
            continue
        weights = np.linalg.eigh(value[np.ix_(members, members)])[1][:, -1]
        for x in np.setdiff1d(np.arange(d), members):
            precision = sd[x, members] ** -2.0
            if not np.all(precision > 0):
                continue
            information = float(weights**2 @ precision)
            c = float(weights * precision @ value[x, members]) / information
            tests.append((label, x, members, c * weights, abs(c) * math.sqrt(information)))
    if not tests:
        return kept, values
    p = noise_p_values(np.array([test[4] for test in tests]), noise_kind)
    line = benjamini_hochberg_line(p, fdr)
    pooled = kept.copy()
    selected: dict[int, list[int]] = {}
    for (block, x, members, fitted, _), p_value in zip(tests, p):
        pairs = index[x, members]
        if p_value <= line:  # the members x has no kept pair with take the block's reading
            values[pairs] = np.where(kept[pairs], values[pairs], fitted)
            selected.setdefault(block, []).append(x)
        pooled[pairs] = p_value <= line
    if extend:  # nor pairs with the columns selected for the block, but those that stand out as a tie would
        for (block, x, *_), p_value in zip(tests, p):
            if p_value > line and block in selected:
                pairs = index[x, selected[block]]
                pooled[pairs] &= standing[pairs]
    return pooled, values


def latent_correlation(
    score_map: ScoreMap,
    noisy_means: np.ndarray | None,
    noise_sd: float,
    rng: np.random.Generator,
    *,
    threshold: float = THRESHOLD,
    fdr: float | None = PAIR_FDR,
    noise: str = "gaussian",
    nearest: Callable[[np.ndarray], np.ndarray] = nearest_correlation,
    spectral: bool = False,
    variances: str = "released",
    as_matrix: bool | None = None,
    boxes: tuple[float, float] | None = entropy_boxes(lp_fits_pairs=False),
    block_edges: bool = True,
    extend_blocks: str = "laplace",
) -> np.ndarray:
    """The copula's latent correlation matrix, shape (d, d); the identity without a release.

    Parameters
    ----------
    score_map : ScoreMap
        The map the release computed its scores with: the released histograms as the copula
        reads them, and the norm bound C^2.
    noisy_means : array, shape (d (d + 1) / 2,) or (d (d + 1) / 2 + d,), or None
        The released means of s_i s_j, i <= j, in ``np.triu_indices(d)`` order, followed by
        those of c s_j where the map's ``mean_weight`` c is positive: then the released
        covariances M - m m^T are compared with the model's (:func:`model_means`, centred).
    noise_sd : float
        Standard deviation of each released mean's noise (public: from the calibration).
    rng : numpy Generator
        Public randomness for the Monte Carlo model (:func:`model_means`).
    threshold : float
        Noise standard deviations a score correlation must reach to be kept (THRESHOLD;
        other values for design studies).
    fdr, noise : float or None, str
        With ``fdr``, a pair is kept only where the Benjamini–Hochberg procedure at that false
        discovery rate also selects it, its p-values under ``noise`` ("gaussian" or
        "laplace", the calibration's kind) (:func:`false_discovery_keep`).
    nearest : callable
        The projection onto the correlation matrices after each step.
    spectral : bool
        Denoise the released score correlations as a matrix (:func:`spectral_denoise`) instead
        of pair by pair: every pair then follows the denoised matrix, and ``threshold`` is
        not used. For noise too large for any single strong pair to stand out of it.
    variances : {"released", "model"}
        The variances that put the released means in correlation units: the released means
        of s_i^2 (the product) or the copula's, with one common factor (before; design
        studies). See :func:`released_correlations`. The product uses the released ones only
        where the noise is within CORRELATION_NOISE_LIMIT: above it (a share a user forced on
        a small, wide table) each released variance is as noisy as its value, and the
        copula's are the better estimate (measured: experiments/results/pair_limits.md).
    as_matrix : bool or None
        Whether the release is above that limit (the plan's ``pairs_as_matrix``, decided on the
        noise at the default norm bound, whatever ``score_map``'s); None: ``noise_sd`` above it.
    boxes : (float, float) or None
        Pairs read one by one: the noise sd the kept pairs and the others may move for the
        largest entropy (:func:`max_entropy_correlation`; :func:`entropy_boxes`); None: the
        fixed point's matrix as it is (before; design studies). Not used with ``spectral``.
    block_edges : bool
        Pairs read one by one, with ``fdr`` and the released variances: read a column's pairs into
        a block of tied columns from the block as a whole (:func:`block_edges_pooled`; True, the
        product), or as selected one by one (False, before; design studies).
    extend_blocks : {"laplace", "always", "never"}
        With ``block_edges``: where the columns selected for a block count as members for those
        not selected (:func:`block_edges_pooled`'s ``extend``): under Laplace noise ("laplace",
        the product), under either noise, or nowhere (the rule before commit d4409c8 of
        2026-11-28; design studies).

    The released score correlations M_ij / sqrt(M_ii M_jj) and the model's G_ij(R) /
    sqrt(G_ii(R) G_jj(R)), G(R) = :func:`model_means` (R), are compared in correlation units.
    Pairs whose released score correlation, so measured from R = I, is below ``threshold``
    noise standard deviations get 0; the others follow R <- nearest(R + that difference),
    ITERATIONS times: a fixed point at which the copula's score correlations are the released
    ones, the attenuation of the step scores and the norm clip included.
    """
    if variances not in PAIR_VARIANCES:
        raise ValueError(f"variances must be one of {PAIR_VARIANCES}, got {variances!r}")
    d = score_map.probabilities.shape[0]
    if noisy_means is None or d < 2:
        return np.eye(d)
    products, means = split_statistic(noisy_means, d, score_map.mean_weight)
    released = pair_matrix(products, d)
    if means is not None:  # covariances: unbiased off the diagonal, and on it once the means' noise variance is added back
        released = released - np.outer(means, means) + np.eye(d) * (noise_sd / score_map.mean_weight) ** 2
    draws = rng.standard_normal((max(1000, min(MODEL_DRAWS, MODEL_VALUES // d)), d))
    above_limit = denoised_as_matrix(noise_sd) if as_matrix is None else as_matrix
    if above_limit:  # above the noise limit the released variances are mostly noise
        variances = "model"
    with threadpool_limits(1, user_api="blas"):  # small products: BLAS threads cost more than they save
        return _fixed_point(score_map, released, draws, noise_sd, threshold, nearest, spectral, variances, boxes,
                            fdr, noise, centred=means is not None, block_edges=block_edges,
                            extend_blocks=extend_blocks)


def _fixed_point(score_map: ScoreMap, released: np.ndarray, draws: np.ndarray, noise_sd: float, threshold: float,
                 nearest: Callable[[np.ndarray], np.ndarray], spectral: bool = False,
                 variances: str = "released", boxes: tuple[float, float] | None = None,
                 fdr: float | None = None, noise_kind: str = "gaussian", centred: bool = False,
                 block_edges: bool = False, extend_blocks: str = "laplace") -> np.ndarray:
    d = len(released)
    i, j = np.triu_indices(d, 1)
    correlation = np.eye(d)
    kept = None
    if variances == "released":  # the released score correlations: fixed, the model's change
        target, noise = released_correlations(released, noise_sd)
    for _ in range(ITERATIONS):
        model = model_means(correlation, score_map, draws, centred)
        diagonal = np.diag(model)
        scale = np.sqrt(diagonal[i] * diagonal[j])
        usable = scale > 1e-9
        if variances == "model":  # before: the released means over the model's variances, one common factor
            factor = float(np.clip(diagonal.mean() / max(np.diag(released).mean(), 1e-12), 0.25, 4.0))
            difference = np.divide(factor * released[i, j] - model[i, j], scale, out=np.zeros_like(scale), where=usable)
            noise = np.divide(factor * noise_sd, scale, out=np.full_like(scale, np.inf), where=usable)
        else:
            difference = np.where(usable, target - np.divide(model[i, j], scale, out=np.zeros_like(scale),
                                                              where=usable), 0.0)
        if kept is None:  # at R = I the difference is the released score correlation
            if spectral and usable.any():
                # the fixed point then aims at the denoised correlations
                observed = np.eye(d)
                observed[i, j] = observed[j, i] = difference
                denoised = spectral_denoise(observed, float(np.median(noise[usable])))
                if variances == "model":  # released means that give them at R = I
                    released = released.copy()
                    released[i, j] = (denoised[i, j] * scale + model[i, j]) / factor
                else:
                    target = target + denoised[i, j] - difference
                difference = np.where(usable, denoised[i, j], 0.0)
                kept = usable & (difference != 0)
            else:
                z = np.divide(difference, noise, out=np.zeros_like(difference), where=usable)
                kept = false_discovery_keep(z, usable, threshold, fdr, noise_kind)
                if block_edges and variances == "released":  # the pairs into blocks, from the blocks as a whole
                    extend = extend_blocks == "always" or (extend_blocks == "laplace" and noise_kind == "laplace")
                    kept, pooled = block_edges_pooled(kept, np.where(usable, difference, 0.0), noise, d, fdr,
                                                      noise_kind, extend=extend)
                    target = target + np.where(usable, pooled - difference, 0.0)
                    difference = np.where(usable, pooled, 0.0)
            if not kept.any():
                return np.eye(d)
        step = np.zeros((d, d))
        step[i[kept], j[kept]] = difference[kept]
        correlation = nearest(np.clip(correlation + step + step.T, -1.0, 1.0))
    if boxes is None or spectral or kept is None:
        return correlation
    box = np.minimum(np.where(kept, boxes[0], boxes[1]) * noise, 2.0)  # an unusable pair's noise is inf
    return max_entropy_correlation(correlation, box)


def released_correlations(released: np.ndarray, noise_sd: float) -> tuple[np.ndarray, np.ndarray]:
    """The released score correlations of the pairs i < j and their noise sd, both shape (d (d - 1) / 2,).

    M_ij / sqrt(v_i v_j), v_i the released mean M_ii of s_i^2 floored at VARIANCE_FLOOR (2)
    noise sd: below that a variance is not told from 0, and the floor only shrinks that
    column's correlations. Each side of the fixed point is put in correlation units by its own
    variances: the real rows' scores need not have the copula's (a row in a cell to which the
    noisy histogram gave little mass gets a score far out; a PKS column's released E[s^2] can be
    1.5 where the copula's is 0.93), and dividing the released means by the copula's variances
    (the rule before) misread every correlation with such a column: PKS's strong pairs came out
    at .94 of their latent correlation on average, .84 on a bad draw
    (docs/decisions/pair-variances.md). The noise of M_ij in these units is noise_sd / sqrt(v_i v_j)
    (that of the variances themselves left out: it scales a pair's correlation, it does not
    make one appear).
    """
    d = len(released)
    i, j = np.triu_indices(d, 1)
    variance = np.maximum(np.diag(released), max(VARIANCE_FLOOR * noise_sd, 1e-12))
    scale = np.sqrt(variance[i] * variance[j])
    return released[i, j] / scale, noise_sd / scale
