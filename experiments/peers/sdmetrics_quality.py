"""SDMetrics' QualityReport of synthetic tables against a real one (runs INSIDE an SDMetrics virtualenv).

The far side of ``experiments/relationships.py``'s SDMetrics columns. sdmetrics needs pandas < 3,
while synthdp's environment has pandas 3, so SDMetrics lives in its own virtualenv (default
``/opt/sdmetrics-venv``; create it with ``python3 -m venv /opt/sdmetrics-venv &&
/opt/sdmetrics-venv/bin/pip install sdmetrics``) and this script, which does NOT import synthdp,
reads the tables from CSV files.

Input: a JSON file of jobs, ``{"jobs": [{"real": "real.csv", "synthetic": "synth.csv",
"sdtypes": {"column": "numerical" | "categorical", ...}}, ...]}``. Categorical columns are read
as strings (no missing-value parsing), numerical ones as floats. The caller chooses the rows
(``relationships.py`` passes at most 2000 sampled rows of each table, as synthdp's own
``sdmetrics_quality``).

Output: a JSON file ``{"sdmetrics": version, "results": [{"overall", "column_shapes",
"column_pair_trends", "seconds"} or {"error": ...}, ...]}``, one result per job in order;
a score SDMetrics does not give (e.g. Column Pair Trends when no pair qualifies) is null.

Usage::

    /opt/sdmetrics-venv/bin/python experiments/peers/sdmetrics_quality.py --jobs jobs.json --out scores.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings


def number(value) -> float | None:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def quality(job: dict) -> dict:
    import pandas as pd
    from sdmetrics.reports import QualityReport

    sdtypes = job["sdtypes"]
    categorical = [name for name, kind in sdtypes.items() if kind == "categorical"]
    tables = {}
    for label in ("real", "synthetic"):
        frame = pd.read_csv(job[label], dtype={name: str for name in categorical}, keep_default_na=False)
        for name, kind in sdtypes.items():
            if kind == "numerical":
                frame[name] = pd.to_numeric(frame[name]).astype(float)
        tables[label] = frame[list(sdtypes)]
    metadata = {"tables": {"table": {"columns": {name: {"sdtype": kind} for name, kind in sdtypes.items()}}}}
    start = time.perf_counter()
    report = QualityReport()
    report.generate({"table": tables["real"]}, {"table": tables["synthetic"]}, metadata, verbose=False)
    properties = report.get_properties()
    scores = dict(zip(properties["Property"], properties["Score"]))
    real_bins = (pair_trends_on_real_bins(tables["real"], tables["synthetic"], metadata) if categorical
                 else number(scores.get("Column Pair Trends")))  # all numeric: no pair is binned
    return {"overall": number(report.get_score()), "column_shapes": number(scores.get("Column Shapes")),
            "column_pair_trends": number(scores.get("Column Pair Trends")),
            "column_pair_trends_real_bins": real_bins,
            "overall_real_bins": (None if real_bins is None or number(scores.get("Column Shapes")) is None
                                  else (number(scores.get("Column Shapes")) + real_bins) / 2),
            "rows": {label: int(len(frame)) for label, frame in tables.items()},
            "seconds": time.perf_counter() - start}


def pair_trends_on_real_bins(real, synthetic, metadata) -> float | None:
    """Column Pair Trends with the synthetic numeric columns cut on the REAL table's bin edges.

    The QualityReport (sdmetrics 0.32) discretizes a numeric column for its contingency
    pairs with ``np.histogram_bin_edges`` of each table separately
    (``ColumnPairTrends._get_processed_data`` is called on the real and the synthetic table
    alone), so a synthetic sample whose range differs from the real sample's (a rare extreme
    value missing, a decoded value past the real maximum) is cut on other edges, and its
    bins no longer line up with the real ones. Here both tables are cut on the real edges,
    values beyond them put in the outer bins: what ``ContingencySimilarity`` itself does
    with ``continuous_column_names`` and what SDMetrics' maintainers describe as the
    intended rule (sdv-dev/SDMetrics pull request 368). Pairs of two numeric columns are
    scored by correlation, without bins: on an all-numeric table the two scores agree.
    """
    import numpy as np
    from sdmetrics.reports.single_table._properties.column_pair_trends import ColumnPairTrends

    edges: dict[str, np.ndarray] = {}

    class RealBins(ColumnPairTrends):
        def _discretize_column(self, column_name, data, bin_edges=None):
            if column_name not in edges:  # the real table comes first (_generate_details)
                edges[column_name] = np.histogram_bin_edges(data.dropna())
            bins = edges[column_name]
            return np.digitize(np.clip(data, bins[0], bins[-1]), bins=bins), bins

    from sdmetrics.reports import QualityReport

    report = QualityReport()  # its thresholds and averaging, with the one property replaced
    report._properties["Column Pair Trends"] = RealBins()
    report.generate({"table": real}, {"table": synthetic}, metadata, verbose=False)
    properties = report.get_properties()
    return number(dict(zip(properties["Property"], properties["Score"])).get("Column Pair Trends"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", required=True, help="JSON file of jobs (see the module docstring)")
    parser.add_argument("--out", required=True, help="JSON file of results")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    import sdmetrics

    with open(args.jobs) as handle:
        jobs = json.load(handle)["jobs"]
    results = []
    for job in jobs:
        try:
            results.append(quality(job))
        except Exception as error:  # one failed job must not lose the others
            results.append({"error": f"{type(error).__name__}: {str(error)[-500:]}"})
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump({"sdmetrics": str(getattr(sdmetrics, "__version__", "unknown")), "results": results}, handle,
                  indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
