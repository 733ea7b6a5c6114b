"""Summaries that answer smooth queries and marginals from a release's moments, without sampling rows."""
