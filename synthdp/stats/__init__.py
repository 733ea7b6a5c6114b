"""Sums over rows without noise (Chebyshev moments, histograms, grids, scores): what the release adds noise to."""
