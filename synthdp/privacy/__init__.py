"""The private side: budget split, sensitivities, noise, the ledger, and the release of every noisy statistic."""
