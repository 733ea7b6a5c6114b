"""Evaluation by the data owner: utility metrics, the HTML report, intervals from copies (not private)."""
