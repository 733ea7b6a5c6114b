"""Options of ``synthdp evaluate`` that the CLI shows before anything heavy is imported."""

#: Values of ``task`` in :func:`synthdp.evaluation.metrics.model_accuracy`.
TASKS = ("auto", "regression", "classification")

#: Default number of random smooth queries in :func:`synthdp.evaluation.metrics.utility_report`
#: (the paper uses 10 000).
DEFAULT_QUERIES = 1000
