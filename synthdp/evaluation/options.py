"""Options of ``synthdp evaluate`` (and ``generate --copies``) that the CLI shows before anything heavy is imported."""

#: Values of ``task`` in :func:`synthdp.evaluation.metrics.model_accuracy`.
TASKS = ("auto", "regression", "classification")

#: Default number of random smooth queries in :func:`synthdp.evaluation.metrics.utility_report`
#: (the paper uses 10 000).
DEFAULT_QUERIES = 1000

#: The most copies of one release (``generate --copies``, ``sample_copies``): each is a refit of the
#: release and all are held in memory until written, and intervals from 20 already have t within 5 %
#: of the normal's (docs/inference.md uses 20; a count of 10^15 took 17 GB listing their files).
MAX_COPIES = 1_000
