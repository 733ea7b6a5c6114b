"""One fit from end to end (plan, release, post-processing), its privacy report, model files and copies."""
