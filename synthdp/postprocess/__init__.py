"""Post-processing of a release: candidate points, the copula, the l1 LP and sampling; it never reads the data."""
