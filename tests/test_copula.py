"""Copula candidates: cell counts, the marginals' quantile function, the nearest correlation matrix."""

import numpy as np
import pandas as pd
import pytest

from synthdp.postprocess.copula import Marginals, copula_candidates, nearest_correlation
from synthdp.stats.histograms import bin_edges, cell_counts


def test_cell_counts_put_the_bounds_in_atoms_and_each_value_in_one_bin():
    points = np.array([[-1.0, 1.0], [-0.99, 0.0], [0.0, 1.0], [0.5, -1.0], [1.0, 0.999]])
    counts = cell_counts(points, 4)  # bins [-1,-.5) [-.5,0) [0,.5) [.5,1), atoms at -1 and 1
    np.testing.assert_array_equal(counts[0], [1, 1, 0, 1, 1, 1])
    np.testing.assert_array_equal(counts[1], [1, 0, 0, 1, 1, 2])
    assert (counts.sum(axis=1) == len(points)).all()


def test_quantiles_reproduce_atoms_and_uniform_bins():
    marginals = Marginals(np.array([[30.0, 0.0, 40.0, 0.0, 30.0],      # atoms at both ends, one bin
                                    [0.0, 50.0, -5.0, 50.0, 0.0]]), 100)  # a negative count gets 0
    u = np.random.default_rng(0).random((20_000, 2))
    x = marginals.quantiles(u)
    # each share is Binomial(20 000, 0.3) / 20 000, standard error .0032: 0.02 is 6.2 of them, a false failure
    # with probability 6.5e-10 per share (the exact binomial tails), 1.3e-9 for the two
    assert np.mean(x[:, 0] == -1.0) == pytest.approx(0.3, abs=0.02)
    assert np.mean(x[:, 0] == 1.0) == pytest.approx(0.3, abs=0.02)
    middle = x[:, 0][np.abs(x[:, 0]) < 1]
    assert middle.min() >= bin_edges(3)[1] and middle.max() <= bin_edges(3)[2]
    assert ((x[:, 1] < bin_edges(3)[1]) | (x[:, 1] >= bin_edges(3)[2])).all()  # nothing in the middle bin
    assert (np.abs(x) <= 1).all()


def test_probabilities_are_the_projection_onto_counts_adding_up_to_n():
    marginals = Marginals(np.array([[10.0, -20.0, 60.0, 5.0, 45.0], [-3.0, -1.0, -2.0, 0.0, 0.0]]), 100)
    p = marginals.probabilities()
    # threshold 5 (= (60 + 45 + 10 - 100) / 3): cells below it get 0, the others lose 5
    np.testing.assert_allclose(p[0], [0.05, 0.0, 0.55, 0.0, 0.40])
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert (p >= 0).all()


def test_atoms_within_two_noise_sd_of_zero_are_dropped_before_the_projection():
    counts = np.array([[19.0, 30.0, 50.0, 15.0],    # both atoms below 2 sd = 20: dropped
                       [60.0, 20.0, 20.0, 25.0],    # both at least 20: kept (then projected)
                       [19.0, 40.0, 40.0, -5.0]])   # bins are never dropped, whatever their count
    p = Marginals(counts, 100, noise_sd=10.0).probabilities()
    np.testing.assert_allclose(p[0], [0.0, 0.4, 0.6, 0.0])  # threshold (30 + 50 - 100) / 2 = -10
    np.testing.assert_allclose(p[1], Marginals(counts[1:2], 100).probabilities()[0])  # as without the rule
    np.testing.assert_allclose(p[2], [0.0, 0.5, 0.5, 0.0])
    exact = Marginals(counts, 100)  # noise_sd 0: exact counts keep every positive atom
    assert (exact.probabilities()[:2, [0, -1]] > 0).all()


def test_the_release_gives_the_marginals_their_public_noise_sd():
    from synthdp import SmoothSynthesizer

    frame = pd.DataFrame(np.random.default_rng(3).uniform(0, 1, (400, 3)), columns=list("abc"))
    for delta in (0.0, 1e-6):
        synth = SmoothSynthesizer(epsilon=1.0, delta=delta, seed=0).fit(frame, bounds={c: [0, 1] for c in "abc"})
        event, = (e for e in synth.privacy_report()["privacy"]["stages"] if e["stage"] == "marginals")
        # Gaussian: sd = the noise scale; Laplace: sd = sqrt(2) b
        expected = event["noise_scale"] * (1.0 if event["mechanism"] == "Gaussian" else np.sqrt(2))
        assert synth.release_.histogram_noise_sd == pytest.approx(expected, rel=1e-12)


def test_nearest_correlation_repairs_an_indefinite_matrix_and_keeps_a_valid_one():
    indefinite = np.array([[1.0, 0.95, 0.1, 0.0], [0.95, 1.0, 0.9, 0.2], [0.1, 0.9, 1.0, 0.9], [0.0, 0.2, 0.9, 1.0]])
    repaired = nearest_correlation(indefinite)
    np.testing.assert_allclose(np.diag(repaired), 1.0)
    assert np.allclose(repaired, repaired.T) and np.linalg.eigvalsh(repaired).min() >= 0.99e-3
    eigenvalues, vectors = np.linalg.eigh(indefinite)  # one eigenvalue clip, rescaled to unit diagonal
    clipped = (vectors * np.maximum(eigenvalues, 1e-3)) @ vectors.T
    clipped /= np.sqrt(np.outer(np.diag(clipped), np.diag(clipped)))
    assert np.linalg.norm(repaired - indefinite) < 0.97 * np.linalg.norm(clipped - indefinite)  # .427 vs .446
    np.testing.assert_allclose(nearest_correlation(indefinite, iterations=0), clipped)
    valid = np.array([[1.0, 0.5, 0.2], [0.5, 1.0, 0.3], [0.2, 0.3, 1.0]])
    np.testing.assert_allclose(nearest_correlation(valid), valid, atol=1e-9)


def test_candidates_follow_the_correlation():
    marginals = Marginals(np.array([[0.0, 5.0, 5.0, 0.0]] * 2), 10)
    target = np.array([[1.0, 0.8], [0.8, 1.0]])
    points = copula_candidates(marginals, target, 20_000, np.random.default_rng(2))
    assert points.shape == (20_000, 2) and (np.abs(points) <= 1).all()
    # Pearson r of uniforms from a Gaussian copula with rho = 0.8 is (6/pi) arcsin(0.4) = 0.786;
    # its standard error at 20 000 points is about 0.003, so 0.02 is over 6 errors: false failure < 1e-9
    assert np.corrcoef(points.T)[0, 1] == pytest.approx(6 / np.pi * np.arcsin(0.4), abs=0.02)


def test_the_atom_threshold_can_be_replaced_for_design_studies():
    from synthdp.postprocess.copula import ATOM_THRESHOLD

    counts = np.array([[3.0, 40.0, 54.0, 3.0]])  # atoms of 3 rows, below 2 noise sd of 10
    noisy = Marginals(counts, 100, noise_sd=10.0)
    assert noisy.atom_threshold == ATOM_THRESHOLD
    dropped, kept = noisy.probabilities(), Marginals(counts, 100, 10.0, atom_threshold=-np.inf).probabilities()
    assert dropped[0, 0] == dropped[0, -1] == 0 and kept[0, 0] > 0 and kept[0, -1] > 0
    np.testing.assert_array_equal(kept, Marginals(counts, 100).probabilities())  # as exact counts: every atom kept
