"""One self-contained HTML page of a utility report: what ``synthdp evaluate --html`` writes.

The page shows, for a data owner deciding whether to publish a release: each column's
distribution in the real and the synthetic table (a histogram over the bins of a numeric column,
with ISO dates on the axis of a date or datetime column, a bar chart over the levels of a
categorical one), the two correlation matrices of the numeric
columns side by side, the worst-case smooth-query error against the kernel width sigma, the
tables of the text report and, when given, the privacy report of the release.

Everything is inline: the charts are PNG images (matplotlib's Agg renderer) embedded as base64
``data:`` URIs, the style sheet is in the page, and there is no script and no link to any other
resource, so the page opens offline and can be mailed as one file. matplotlib is optional
(``pip install matplotlib``): it is imported only when a page is rendered (with a private config
folder where its own cannot be written: :func:`private_matplotlib_dir`). A chart's legend stands
beside its axes. Names from the user's files are HTML-escaped, isolated in ``<bdi>``, and their
characters that set the text's direction (:data:`BIDI_CONTROLS`) shown as escapes; a column's name
that holds right-to-left letters is isolated in ``<bdi>`` within the reports' sentences too.

The page shows the real table's distributions: like the rest of :mod:`synthdp.evaluation` it
is NOT differentially private, and it says so at its top.
"""

from __future__ import annotations

import atexit
import base64
import html
import io
import math
import os
import re
import shutil
import sys
import tempfile
import unicodedata
import warnings
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from synthdp._version import __version__
from synthdp.domain.dates import EPOCH, SECONDS_PER_DAY
from synthdp.domain.schema import Schema
from synthdp.errors import SynthDPError
from synthdp.evaluation.metrics import INTERVAL_COLUMNS, interval_row
from synthdp.evaluation.mixed import cell_labels, distribution, numeric_schema, pearson

__all__ = ["BIDI_CONTROLS", "DPI", "MAX_LEVELS_SHOWN", "MATPLOTLIB_MISSING", "private_matplotlib_dir", "render_html"]

#: Resolution of every chart: modest, so that a page of 15 columns stays well under a megabyte.
DPI = 90

#: A categorical chart shows at most this many levels (the most frequent ones, in either table).
MAX_LEVELS_SHOWN = 30

#: Worst pairs listed in the page's pair table.
WORST_PAIRS = 10

MATPLOTLIB_MISSING = "the HTML report needs matplotlib (pip install matplotlib)"

EPOCH_TIMESTAMP = pd.Timestamp(EPOCH).as_unit("us")  # day 0 of a date column, second 0 of a datetime column

REAL_COLOUR, SYNTH_COLOUR = "#4c72b0", "#dd8452"

#: The characters that set the direction of the text after them (embeddings, overrides, isolates, marks): in a
#: column name they would reorder the page around it, so the page shows each as its escape (``\u202e``).
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2em auto; max-width: 1200px;
       padding: 0 1em; color: #222; line-height: 1.4; }
h1 { margin-bottom: 0.2em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 2em; }
.warning { background: #fff4e5; border-left: 4px solid #e8a33d; padding: 0.6em 1em; }
.notdp { color: #b00020; font-weight: bold; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f3f3f3; white-space: nowrap; }
.grid { display: flex; flex-wrap: wrap; gap: 1em; }
figure { margin: 0; border: 1px solid #e3e3e3; padding: 0.4em; background: #fff; }
figcaption { font-size: 0.9em; color: #444; text-align: center; }
.legend span { display: inline-block; width: 1em; height: 0.8em; margin: 0 0.3em 0 1em; vertical-align: middle; }
p.note { color: #555; font-size: 0.92em; }
"""


# ------------------------------------------------------------------ matplotlib
def _writable_folder(folder: Path) -> bool:
    """Whether ``folder`` is a folder this process may write, or could be made as one (its nearest
    existing parent is): what matplotlib asks of its config and cache folders."""
    for place in (folder, *folder.parents):
        if place.exists():
            return place.is_dir() and os.access(place, os.W_OK | os.X_OK)
    return False


def private_matplotlib_dir() -> None:
    """Before matplotlib is first imported: where ``MPLCONFIGDIR`` is unset and matplotlib's own config
    or cache folder cannot be written (a read-only or missing HOME), point ``MPLCONFIGDIR`` at a private
    temporary folder (mode 0700, removed at exit). matplotlib would make one itself, but say so on
    stderr, which carries only synthdp's own lines."""
    if os.environ.get("MPLCONFIGDIR") or "matplotlib" in sys.modules:
        return
    try:
        if sys.platform.startswith(("linux", "freebsd")):  # as matplotlib chooses them (XDG)
            folders = [Path(os.environ.get(variable) or Path.home() / default, "matplotlib")
                       for variable, default in (("XDG_CONFIG_HOME", ".config"), ("XDG_CACHE_HOME", ".cache"))]
        elif sys.platform == "win32":
            return  # %LOCALAPPDATA%: left to matplotlib
        else:
            folders = [Path.home() / ".matplotlib"]
        if all(_writable_folder(folder.resolve()) for folder in folders):
            return
    except (RuntimeError, OSError):  # no home folder to be found
        pass
    folder = tempfile.mkdtemp(prefix="synthdp-matplotlib-")  # mode 0700
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    os.environ["MPLCONFIGDIR"] = folder


def _matplotlib():
    """matplotlib's Figure and Agg canvas (no global backend, no pyplot state)."""
    private_matplotlib_dir()
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise SynthDPError(MATPLOTLIB_MISSING) from None
    return Figure, FigureCanvasAgg


def _png(figure, canvas_class) -> str:
    """The figure as a base64 PNG ``data:`` URI."""
    canvas_class(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _column_chart(mpl, name: str, labels: list[str], real: np.ndarray, synth: np.ndarray, numeric: bool,
                  bounds: tuple[float, float] | None, title: str, temporal: str | None = None) -> str:
    figure = _column_figure(mpl, labels, real, synth, numeric, bounds, title, temporal)
    return _png(figure, mpl[1])


#: Width of a column's chart in inches: its legend stands to the right of the axes.
CHART_WIDTH = 4.6


#: Calendar steps for the ticks of a date or datetime axis, finest first: (pandas frequency, days per step).
TIME_STEPS = (("1min", 1 / 1440), ("5min", 5 / 1440), ("15min", 15 / 1440), ("1h", 1 / 24), ("3h", 3 / 24),
              ("6h", 6 / 24), ("12h", 0.5), ("1D", 1), ("2D", 2), ("7D", 7), ("14D", 14), ("1MS", 30.4),
              ("2MS", 60.9), ("3MS", 91.3), ("6MS", 182.6), ("1YS", 365.2), ("2YS", 730.5), ("5YS", 1826),
              ("10YS", 3652), ("20YS", 7305), ("50YS", 18262), ("100YS", 36525), ("200YS", 73049),
              ("500YS", 182621), ("1000YS", 365242), ("2000YS", 730485))
MAX_TIME_TICKS = 5


def time_ticks(lower: float, upper: float, kind: str, most: int = MAX_TIME_TICKS) -> tuple[list[float], list[str]]:
    """Tick positions and ISO labels for a date axis (days since 1970-01-01) or a datetime axis
    (seconds since then) from ``lower`` to ``upper``: calendar-aligned (years, months, days,
    hours, minutes), at most ``most`` of them, labelled ``2021-03-01`` (or ``2021-03-01T06:00`` for
    ticks within a day); the two ends when no calendar step fits."""
    per_day = 1.0 if kind == "date" else float(SECONDS_PER_DAY)
    # at microseconds, not pandas' default nanoseconds: bounds may lie in any year from 1 to 9999
    start, end = (pd.Timestamp(np.datetime64(round(value * SECONDS_PER_DAY / per_day * 10**6), "us"))
                  for value in (lower, upper))
    span = (upper - lower) / per_day
    for frequency, days in TIME_STEPS:
        if (kind == "date" and days < 1) or span / days > 4 * most:
            continue  # a date axis has no ticks within a day; too many ticks are not tried
        stamps = pd.date_range(start.ceil("min"), end, freq=frequency, unit="us")
        if 2 <= len(stamps) <= most:
            break
    else:
        stamps = pd.DatetimeIndex([start.round("s"), end.round("s")])
    positions = [(stamp - EPOCH_TIMESTAMP) / pd.Timedelta(days=1) * per_day for stamp in stamps]
    if kind == "date" or all(stamp == stamp.normalize() for stamp in stamps):
        spec = "date"
    else:
        spec = "minutes" if all(stamp.second == 0 for stamp in stamps) else "seconds"
    # isoformat, not strftime: "%Y" drops the zeros of a year before 1000 on some platforms
    return positions, [stamp.date().isoformat() if spec == "date" else stamp.to_pydatetime().isoformat(timespec=spec)
                       for stamp in stamps]


def _column_figure(mpl, labels: list[str], real: np.ndarray, synth: np.ndarray, numeric: bool,
                   bounds: tuple[float, float] | None, title: str, temporal: str | None = None):
    """The chart of one column (a matplotlib Figure): a histogram over the bins of a numeric column,
    with ISO dates on the axis of a date or datetime column, or bars over the levels."""
    Figure = mpl[0]
    if numeric:
        assert bounds is not None
        figure = Figure(figsize=(CHART_WIDTH, 2.6), layout="constrained")
        axes = figure.subplots()
        edges = np.linspace(bounds[0], bounds[1], len(real) + 1)
        handles = [axes.bar(edges[:-1], real, width=np.diff(edges), align="edge", color=REAL_COLOUR, alpha=0.55,
                            label="real"),
                   axes.stairs(synth, edges, color=SYNTH_COLOUR, linewidth=2, label="synthetic")]
        axes.set_xlim(edges[0], edges[-1])
        if temporal:  # days or seconds since 1970-01-01: drawn as dates, not as day numbers
            ticks, tick_labels = time_ticks(bounds[0], bounds[1], temporal)
            axes.set_xticks(ticks, tick_labels, rotation=30, ha="right")
        else:
            axes.locator_params(axis="x", nbins=5)  # long tick labels (1e-5 steps) must not overlap
        axes.set_ylabel("share of rows")
    else:
        order = np.argsort(-np.maximum(real, synth), kind="stable")
        shown = np.sort(order[:MAX_LEVELS_SHOWN])
        hidden = len(labels) - len(shown)
        positions = np.arange(len(shown))
        figure = Figure(figsize=(CHART_WIDTH, max(2.6, 0.8 + 0.24 * len(shown))), layout="constrained")
        axes = figure.subplots()
        handles = [axes.barh(positions - 0.2, real[shown], height=0.4, color=REAL_COLOUR, label="real"),
                   axes.barh(positions + 0.2, synth[shown], height=0.4, color=SYNTH_COLOUR, label="synthetic")]
        axes.set_yticks(positions, _shorts([labels[k] for k in shown]), fontsize=8)
        axes.invert_yaxis()
        axes.set_xlabel("share of rows" + (f" ({hidden} rarer levels not shown)" if hidden else ""))
    axes.set_title(title, fontsize=10)
    axes.tick_params(labelsize=8)
    # beside the axes, not in them: no bar or step is ever under it (the constrained layout makes room in the figure)
    axes.legend(handles=handles, fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1, 1))
    return figure


def _short(label: str, width: int = 24) -> str:
    """A name for a chart: cut to ``width`` characters in the middle (its start and its end, where names
    of one family differ: "..._visit_1", "..._visit_2"), with "$" kept literal (not mathtext)."""
    if len(label) > width:
        tail = (width - 1) // 3
        label = label[: width - 1 - tail] + "\u2026" + (label[-tail:] if tail else "")
    return label.replace("$", r"\$")


def _shorts(labels: Sequence[str], width: int = 24) -> list[str]:
    """:func:`_short` of each label, told apart where two would read the same ("#2", "#3" after the second)."""
    shown = [_short(label, width) for label in labels]
    seen: dict[str, int] = {}
    for k, text in enumerate(shown):
        seen[text] = seen.get(text, 0) + 1
        if seen[text] > 1:
            shown[k] = f"{text} #{seen[text]}"
    return shown


def _heatmaps(mpl, names: list[str], real: np.ndarray, synth: np.ndarray) -> str:
    Figure, canvas = mpl
    d = len(names)
    size = min(6.0, max(3.2, 0.28 * d + 1.6))
    figure = Figure(figsize=(2 * size + 0.8, size), layout="constrained")
    axes = figure.subplots(1, 2)
    image = None
    for ax, matrix, label in zip(axes, (real, synth), ("real", "synthetic")):
        image = ax.imshow(matrix, vmin=-1, vmax=1, cmap="RdBu_r")
        ax.set_title(f"Pearson correlation, {label} table", fontsize=10)
        if d <= 40:
            font = 8 if d <= 15 else 6
            ax.set_xticks(range(d), _shorts(names, 16), rotation=90, fontsize=font)
            ax.set_yticks(range(d), _shorts(names, 16), fontsize=font)
        else:
            ax.set_xticks([])
            ax.set_yticks([])
    figure.colorbar(image, ax=list(axes), shrink=0.8)
    return _png(figure, canvas)


def _sigma_chart(mpl, queries: Mapping) -> str | None:
    Figure, canvas = mpl
    sigmas = np.asarray(queries["sigmas"], dtype=float)
    figure = Figure(figsize=(6.4, 3.2), layout="constrained")
    axes = figure.subplots()
    drawn = False
    for key, label, style in (("relative", "relative", "o-"), ("absolute_scaled", "absolute / sum(alpha)", "s--")):
        values = np.asarray(queries[key], dtype=float)
        keep = np.isfinite(values) & (values > 0)
        if keep.any():
            axes.plot(sigmas[keep], values[keep], style, label=label)
            drawn = True
    if not drawn:  # every error is 0 (or infinite): nothing to draw on a log scale
        return None
    axes.set_yscale("log")
    axes.set_xlabel("kernel width sigma")
    axes.set_ylabel("worst-case error")
    axes.set_title(f"smooth queries: worst case over {queries['n_queries']} random queries", fontsize=10)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1, 1), frameon=False)  # beside the lines, not on them
    return _png(figure, canvas)


# ------------------------------------------------------------------ HTML pieces
def _text(value: Any) -> str:
    """``value`` escaped for the page (text or an attribute), each of its :data:`BIDI_CONTROLS` shown as its
    escape (``\\u202e``): a name of a file edited by hand cannot turn the text after it around."""
    text = "".join(repr(char)[1:-1] if char in BIDI_CONTROLS else char for char in str(value))
    return html.escape(text, quote=True)


class _Html(str):
    """Text escaped for the page already (:func:`_name`): a table cell holds it as it is."""


def _name(value: Any) -> _Html:
    """A name from the user's files (a column's, a statistic's, a path) in the page: escaped by :func:`_text`
    and isolated in ``<bdi>``, so that right-to-left letters in it do not reorder the text around it."""
    return _Html(f"<bdi>{_text(value)}</bdi>")


def _names(values: Sequence) -> _Html:
    """Names, each by :func:`_name`, joined by commas."""
    return _Html(", ".join(_name(value) for value in values))


def _right_to_left(name: str) -> bool:
    """Whether ``name`` holds a right-to-left letter (Hebrew, Arabic, ...): in a sentence it would reorder
    the words and numbers beside it."""
    return any(unicodedata.bidirectional(char) in ("R", "AL") for char in name)


def _prose(value: Any, names: Collection[str] = ()) -> _Html:
    """A sentence of a report (a stage's description, a caveat, a note) for the page, escaped by :func:`_text`,
    with each of ``names`` (the tables' columns) that holds right-to-left letters isolated in ``<bdi>`` where it
    stands as a word of it: two Hebrew names in "a, b: missing in every row" keep their order (unisolated, the
    browser shows them as "b ,a")."""
    text = str(value)
    isolated = sorted({name for name in names if name and _right_to_left(name)}, key=len, reverse=True)
    if not isolated:
        return _Html(_text(text))
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, isolated)) + r")(?!\w)")
    parts, start = [], 0
    for match in pattern.finditer(text):
        parts += [_text(text[start:match.start()]), _name(match.group())]
        start = match.end()
    return _Html("".join(parts) + _text(text[start:]))


def _report_names(report: Mapping, privacy_report: Mapping | None) -> set[str]:
    """The names of columns the reports' sentences may hold: the tables', the privacy unit's, the target's."""
    columns = report.get("columns") or {}
    names = {str(name) for kind in ("numeric", "categorical") for name in columns.get(kind) or ()}
    names |= {str(name) for name in (report.get("missing_cells") or {}).get("share_of_rows") or {}}
    for entry in (report.get("real_privacy_unit_counts"), report.get("model")):
        if isinstance(entry, Mapping):
            names.add(str(entry.get("column", entry.get("target", ""))))
    privacy = privacy_report.get("privacy") if isinstance(privacy_report, Mapping) else None
    unit = privacy.get("privacy_unit") if isinstance(privacy, Mapping) else None
    if isinstance(unit, Mapping) and isinstance(unit.get("column"), str):
        names.add(unit["column"])
    return names


def _number(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(value)
    if isinstance(value, (float, np.floating)):
        number = float(value)
        if not math.isfinite(number):
            return "inf" if number > 0 else ("-inf" if number < 0 else "nan")
        return f"{number:.4f}" if abs(number) >= 1e-4 or number == 0 else f"{number:.3g}"
    return str(value)


def _significant(value: Any) -> str:
    """A number of a privacy report, to 4 significant digits (a sensitivity may be 7e-4)."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        try:
            return f"{float(value):.4g}"
        except OverflowError:  # a report's integer of hundreds of digits (a file edited by hand)
            return "inf" if value > 0 else "-inf"
    return "n/a" if value is None else str(value)


def _table(header: list[str], rows: list[list], numeric_from: int = 1) -> str:
    head = "".join(f"<th>{_text(cell)}</th>" for cell in header)
    body = []
    for row in rows:
        cells = [f'<td class="number">{_text(_number(cell))}</td>' if k >= numeric_from and not isinstance(cell, str)
                 else f"<td>{cell if isinstance(cell, _Html) else _text(cell)}</td>" for k, cell in enumerate(row)]
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _image(uri: str, alt: str, caption: str, column: str | None = None) -> str:
    """A chart in a figure: ``caption`` escaped here unless it is :class:`_Html` already."""
    attribute = f' data-column="{_text(column)}"' if column is not None else ""
    return (f'<figure><img src="{uri}" alt="{_text(alt)}"{attribute}>'
            f"<figcaption>{caption if isinstance(caption, _Html) else _text(caption)}</figcaption></figure>")


def _schema_of(report: Mapping, real: pd.DataFrame, schema: Schema | Mapping | None) -> Schema:
    names = [str(c) for c in real.columns]
    if isinstance(schema, Schema):
        return schema
    if schema is not None:
        return Schema.from_dict(schema, names, "the schema")
    queries = report.get("smooth_queries")
    if not queries:
        raise SynthDPError("the report has no bounds for its numeric columns: pass the schema")
    normalisation = queries["normalisation"]
    return numeric_schema({name: column["bounds"] for name, column in normalisation.items()},
                          {name: column["type"] for name, column in normalisation.items() if column.get("type")})


def _summary_section(report: Mapping, names: Collection[str] = ()) -> str:
    rows = [["rows", report["rows"]["real"], report["rows"]["synthetic"]],
            ["distinct rows", report["distinct_rows"]["real"], report["distinct_rows"]["synthetic"]]]
    parts = [_table(["", "real", "synthetic"], rows)]
    scores = [["columns", f"{len(report['columns']['numeric'])} numeric, "
                          f"{len(report['columns']['categorical'])} binary or categorical", ""]]
    tv, pairs, similarity = report["tv"], report["pairs"], report["similarity"]
    scores.append(["total-variation distance per column", f"mean {_number(tv['mean'])}",
                   _Html(f"worst {_text(_number(tv['max']))} ({_name(tv['worst_column'])})")])
    if pairs["tv"]["pairs"]:
        scores.append(["total-variation distance per pair of columns", f"mean {_number(pairs['tv']['mean'])}",
                       _Html(f"worst {_text(_number(pairs['tv']['worst']))} ({_names(pairs['tv']['worst_pair'])})")])
    scores.append(["column shapes (SDMetrics-style, every row)", _number(similarity["column_shapes"]),
                   "mean of 1 - KS (numeric) and 1 - TV (categorical)"])
    scores.append(["column pair trends (SDMetrics-style, every row)", _number(similarity["column_pair_trends"]),
                   "mean of the pair similarities"])
    sdmetrics = report.get("sdmetrics")
    if isinstance(sdmetrics, Mapping):
        scores.append(["SDMetrics QualityReport, overall", _number(sdmetrics["overall"]),
                       _Html(_text(f"Column Shapes {_number(sdmetrics['column_shapes'])}, Column Pair Trends "
                                   f"{_number(sdmetrics['column_pair_trends'])} (sdmetrics {sdmetrics['version']}, "
                                   f"{sdmetrics['rows']['real']} real and {sdmetrics['rows']['synthetic']} synthetic "
                                   "rows" + (", a random sample)" if sdmetrics["sampled"] else ")"))
                             + (f"; the samples' ranges differ for {_names(sdmetrics['shifted_bins'])}, whose pairs "
                                "with categorical columns SDMetrics then scores on shifted bins"
                                if sdmetrics.get("shifted_bins") else ""))])
    elif isinstance(sdmetrics, str):
        scores.append(["SDMetrics QualityReport", _prose(sdmetrics, names), ""])
    corr = report.get("correlation") or {}
    strong, invented = corr.get("strong_pairs"), corr.get("invented_pairs")
    if strong is not None and strong["pairs"]:
        scores.append([f"strong pairs (real |r| > {strong['threshold']:g})", _number(strong["ratio"]),
                       f"{strong['pairs']} pairs; mean |r| real {_number(strong['real_mean_abs_r'])}, synthetic "
                       f"{_number(strong['synthetic_mean_abs_r'])}"])
    if invented is not None and invented["pairs"]:
        scores.append([f"invented pairs (real |r| < {invented['weak']:g}, synthetic |r| > {invented['shown']:g})",
                       f"{invented['invented']} of {invented['pairs']}",
                       f"largest synthetic |r| of those pairs {_number(invented['largest_abs_r'])}"])
    parts.append(_table(["score", "value", ""], scores, numeric_from=9))
    units = report.get("real_privacy_unit_counts")
    if isinstance(units, Mapping):
        parts.append(f"<p>Privacy unit <code>{_name(units['column'])}</code> (its identifiers are left out of the "
                     "scores):</p>")
        parts.append(_table(["", "units", "rows per unit, mean", "rows per unit, max"],
                            [[side, units[side]["units"], _number(units[side]["rows_per_unit_mean"]),
                              units[side]["rows_per_unit_max"]] for side in ("real", "synthetic")]))
    missing = report.get("missing_cells")
    if isinstance(missing, Mapping) and missing.get("share_of_rows"):
        parts.append("<p>Missing cells, share of rows" + (f" ({_prose(missing['note'], names)})" if missing.get("note")
                                                           else "") + ":</p>")
        parts.append(_table(["column", "real", "synthetic"],
                            [[_name(name), _number(rates["real"]), _number(rates["synthetic"])]
                             for name, rates in missing["share_of_rows"].items()]))
    return "<h2>Summary</h2>" + "".join(parts)


def _columns_section(report: Mapping, real: pd.DataFrame, synth: pd.DataFrame, described: Schema, mpl) -> str:
    tv, ks = report["tv"], report["ks"] or {"per_column": {}}
    bins = tv["bins"]
    bounds = {column.name: (column.lower, column.upper) for column in described.numeric.columns}
    temporal = {column.name: column.temporal for column in described.numeric.columns if column.temporal}
    figures, rows = [], []
    for name in described.names:
        numeric = name in bounds
        p_real = distribution(real, described, name, bins, "real")
        p_synth = distribution(synth, described, name, bins, "synthetic")
        title = f"{_short(name, 32)}: TV {tv['per_column'][name]:.3f}"
        if name in ks["per_column"]:
            title += f", KS {ks['per_column'][name]:.3f}"
        uri = _column_chart(mpl, name, cell_labels(described, name, bins), p_real, p_synth, numeric,
                            bounds.get(name), title, temporal.get(name))
        kind = "histogram" if numeric else "bar chart"
        alt = f"{name}: {kind} of the real and the synthetic table"
        if name in temporal:
            alt += f" ({temporal[name]}s; axis ticks {', '.join(time_ticks(*bounds[name], temporal[name])[1])})"
        figures.append(_image(uri, alt, _name(name), column=name))
        rows.append([_name(name), "numeric" if numeric else "categorical", tv["per_column"][name],
                     ks["per_column"].get(name)])
    legend = (f'<p class="legend"><span style="background:{REAL_COLOUR}"></span>real table'
              f'<span style="background:{SYNTH_COLOUR}"></span>synthetic table</p>')
    note = (f'<p class="note">A numeric column is cut into {bins} equal-width bins of its bounds (values outside fall '
            "in the edge bins); a categorical column shows its levels and \u201cother\u201d (any value outside "
            f"them), at most {MAX_LEVELS_SHOWN} of the most frequent. TV is the total-variation distance of the "
            "two distributions drawn (0: the same, 1: disjoint); KS the Kolmogorov-Smirnov distance of the "
            "numeric values.</p>")
    return ("<h2>Columns: real against synthetic</h2>" + legend + note
            + _table(["column", "type", "TV", "KS"], rows, numeric_from=2)
            + f'<div class="grid">{"".join(figures)}</div>')


def _pairs_section(report: Mapping) -> str:
    pairs = report["pairs"]
    if not pairs["tv"]["pairs"]:
        return ""
    rows = [["2-way total-variation distance", pairs["tv"]["pairs"], pairs["tv"]["mean"], pairs["tv"]["worst"],
             _names(pairs["tv"]["worst_pair"])]]
    for key, label in (("contingency", "contingency similarity, 1 - TV (pairs with a categorical column)"),
                       ("correlation", "correlation similarity, 1 - |r real - r synthetic| / 2 (numeric pairs)")):
        section = pairs[key]
        if section["pairs"]:
            rows.append([label, section["pairs"], section["mean"], section["worst"], _names(section["worst_pair"])])
    worst = sorted(pairs["per_pair"], key=lambda pair: -pair["tv"])[:WORST_PAIRS]
    listed = [[_name(pair["columns"][0]), _name(pair["columns"][1]), pair["tv"], pair["similarity"], pair["metric"]]
              for pair in worst]
    return ("<h2>Pairs of columns</h2>"
            + _table(["score", "pairs", "mean", "worst", "worst pair"], rows)
            + f"<p>The {len(worst)} pairs of largest total-variation distance:</p>"
            + _table(["column", "column", "TV", "similarity", "metric"], listed, numeric_from=2))


def _correlation_section(report: Mapping, real: pd.DataFrame, synth: pd.DataFrame, mpl) -> str:
    numeric = list(report["columns"]["numeric"])
    if len(numeric) < 2:
        return ""
    corr_real, _ = pearson(real[numeric].to_numpy(dtype=float))
    corr_synth, _ = pearson(synth[numeric].to_numpy(dtype=float))
    corr = report["correlation"]
    a, b = corr["worst_pair"]
    text = (f"<p>Pairwise correlation error |r real \u2212 r synthetic| over {corr['pairs']} pairs: max "
            f"{_number(corr['max'])} ({_name(a)}, {_name(b)}), mean {_number(corr['mean'])}. A constant column's "
            "correlations are drawn as 0.</p>")
    uri = _heatmaps(mpl, numeric, corr_real, corr_synth)
    return ("<h2>Correlations of the numeric columns</h2>" + text
            + _image(uri, "correlation matrices of the real and the synthetic table", "real (left), synthetic (right)"))


def _queries_section(report: Mapping, mpl) -> str:
    queries = report["smooth_queries"]
    if queries is None:
        return ""
    rows = [[f"{sigma:g}", a, s, r] for sigma, a, s, r in
            zip(queries["sigmas"], queries["absolute"], queries["absolute_scaled"], queries["relative"])]
    uri = _sigma_chart(mpl, queries)
    chart = _image(uri, "worst-case smooth-query error against sigma", "worst-case error against sigma") if uri else ""
    return ("<h2>Smooth queries</h2>"
            f"<p>Worst case over {queries['n_queries']} random sums of {queries['n_kernels']} Gaussian kernels on the "
            f"numeric columns mapped to [\u22121, 1] (seed {queries['seed']}), for each kernel width sigma: the "
            "papers' protocol.</p>"
            + chart + _table(["sigma", "absolute", "absolute / sum(alpha)", "relative"], rows))


def _model_section(report: Mapping) -> str:
    model = report.get("model")
    if model is None:
        return ""
    test = f"real held out ({model['test_rows']} rows)"
    rows = [[f"synthetic ({model['train_synth_rows']} rows)", test, model["train_synth_test_real"]],
            [f"real ({model['train_real_rows']} rows)", test, model["train_real_test_real"]],
            ["constant prediction", test, model["baseline"]]]
    return (f"<h2>Model: predict {_name(model['target'])}</h2><p>{_text(model['task'])}, {_text(model['metric'])}; "
            f"{_text(model['model'])}</p>" + _table(["train on", "test on", model["metric"]], rows, numeric_from=2))


def _intervals_section(intervals: Mapping | None, mpl) -> str:
    """The copies' intervals against the real table's values (evaluate --copies), with a chart."""
    if intervals is None:
        return ""
    rows = intervals["statistics"]
    parts = [f"<h2>Intervals from the copies</h2><p>{intervals['held']} of {intervals['checked']} "
             f"{intervals['level']:.0%} intervals from {intervals['copies']} copies of the release "
             "(<code>synthdp.infer</code>) hold the real table's value. They are for the population the "
             "real table came from; a statistic the release did not model (a pair it measured nothing of: "
             "<em>pair measured</em> no) is where they miss.</p>"]
    chart = _intervals_chart(mpl, rows)
    if chart is not None:
        parts.append(_image(chart, "intervals against the real values",
                            "each interval scaled to [-1, 1] around its estimate; the dot is the real table's value"))
    parts.append(_table(INTERVAL_COLUMNS, [[_name(cells[0]), *cells[1:]] for cells in map(interval_row, rows)]))
    return "".join(parts)


def _intervals_chart(mpl, rows: list) -> str | None:
    Figure, canvas = mpl
    shown = [row for row in rows if math.isfinite(row["real"]) and row["upper"] > row["lower"]]
    if not shown:
        return None
    half = np.array([(row["upper"] - row["lower"]) / 2 for row in shown])
    centre = np.array([(row["upper"] + row["lower"]) / 2 for row in shown])
    scaled = (np.array([row["real"] for row in shown]) - centre) / half
    figure = Figure(figsize=(7.2, 1.0 + 0.22 * len(shown)), layout="constrained")
    axes = figure.subplots()
    y = np.arange(len(shown))
    axes.hlines(y, -1, 1, color="0.6", lw=3)
    inside = np.abs(scaled) <= 1
    axes.plot(np.clip(scaled[inside], -3, 3), y[inside], "o", color="tab:blue", label="real value, inside")
    axes.plot(np.clip(scaled[~inside], -3, 3), y[~inside], "x", color="tab:red", label="real value, outside")
    axes.set_yticks(y, _shorts([row["statistic"] for row in shown], 32), fontsize=7)
    axes.invert_yaxis()
    axes.set_xlim(-3.2, 3.2)
    axes.set_xlabel("real value in its interval (-1: lower end, 1: upper end; beyond 3 at 3)", fontsize=8)
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return _png(figure, canvas)


def _privacy_section(privacy_report: Mapping | None, names: Collection[str] = ()) -> str:
    if privacy_report is None:
        return ""
    privacy = privacy_report.get("privacy")
    if not isinstance(privacy, Mapping):
        raise SynthDPError("the privacy report has no \"privacy\" section")
    private = privacy.get("differentially_private")
    status = ("differentially private" if private else '<span class="notdp">NOT differentially private</span>'
              if private is not None else "not stated")
    spent = {key: _text(f"{_significant(privacy.get(key + '_spent'))} (budget "
                        f"{_significant(privacy.get(key + '_budget'))})") for key in ("epsilon", "delta")}
    rows = [["status", status],
            ["epsilon spent", spent["epsilon"]],
            ["delta spent", spent["delta"]],
            ["neighbouring tables", _prose(privacy.get("neighbouring", "n/a"), names)],
            ["composition", _prose(privacy.get("composition", "n/a"), names)],
            ["noise", _text(privacy.get("noise_sampler", "n/a"))]]
    lifetime = privacy.get("budget_file")
    if isinstance(lifetime, Mapping):  # the table's budget across releases (generate --budget-file)
        rows += [_lifetime_row(lifetime, key) for key in ("epsilon", "delta")]
        rows.append(["budget file", f"<code>{_name(lifetime.get('path', 'n/a'))}</code>; "
                                    + _text(lifetime.get("composition", "n/a"))
                                    + (f" ({_prose(lifetime['note'], names)})" if lifetime.get("note") else "")])
    overview = ("<table><tbody>" + "".join(f"<tr><th>{_text(k)}</th><td>{v}</td></tr>" for k, v in rows)
                + "</tbody></table>")
    stages = []
    listed, caveats = privacy.get("stages") or [], privacy.get("caveats") or []
    if not (isinstance(listed, list) and isinstance(caveats, list)):
        raise SynthDPError("the privacy report's \"stages\" and \"caveats\" must be lists, as synthdp writes them")
    for stage in listed:
        if isinstance(stage, Mapping):
            norm = stage.get("sensitivity_norm")
            sensitivity = _significant(stage.get("sensitivity")) + (f" ({norm})" if norm else "")
            stages.append([*(_prose(stage.get(key, ""), names) for key in ("stage", "mechanism", "released")), sensitivity,
                           *(_significant(stage.get(key)) for key in ("noise_scale", "epsilon", "delta", "mu"))])
    gaussian = any(isinstance(stage, Mapping) and stage.get("mu") is not None for stage in listed)
    header = ["stage", "mechanism", "released", "sensitivity", "noise scale", "epsilon", "delta", "mu"]
    stage_table = (_table(header if gaussian else header[:-1], [row if gaussian else row[:-1] for row in stages],
                          numeric_from=4) if stages else "<p>The report lists no stages.</p>")
    if gaussian:  # the Gaussian stages' epsilons do not add: the total composes their mu (see composition)
        stage_table += ('<p class="note">A stage with a mu (Gaussian noise) composes through it, as the composition '
                        "above says: its epsilon is what it would cost alone, and the stages' epsilons do not add "
                        "up to the epsilon spent.</p>")
    caveat_list = ("<h3>Caveats</h3><ul>" + "".join(f"<li>{_prose(c, names)}</li>" for c in caveats) + "</ul>"
                   if caveats else "<p>The report lists no caveats.</p>")
    return "<h2>Privacy report of the release</h2>" + overview + "<h3>Stages</h3>" + stage_table + caveat_list


def _lifetime_row(lifetime: Mapping, key: str) -> list[str]:
    """A row of the overview: the budget file's ``key`` (epsilon or delta) spent after this release, of its lifetime."""
    def spent(part: str) -> str:
        value = lifetime.get(part)
        return _significant(value.get(key) if isinstance(value, Mapping) else None)

    return [f"lifetime {key} (budget file)", _text(f"{spent('spent_after')} spent of {spent('lifetime')} "
                                                   f"({spent('spent_before')} before this release, "
                                                   f"{spent('this_release')} by it)")]


# ------------------------------------------------------------------ the page
def render_html(report: Mapping, real: pd.DataFrame, synth: pd.DataFrame, *, schema: Schema | Mapping | None = None,
                privacy_report: Mapping | None = None, title: str = "synthdp: utility of a synthetic table") -> str:
    """The HTML page of a report of :func:`synthdp.evaluation.metrics.utility_report`.

    Parameters
    ----------
    report : mapping
        The report, computed on ``real`` and ``synth`` (with the same ``schema``).
    real, synth : DataFrame
        The two tables: the charts are drawn from them.
    schema : Schema or mapping, optional
        The schema the report was computed with (a mixed table); None for a numeric table,
        whose bins come from the report's normalisation bounds.
    privacy_report : mapping, optional
        The privacy report of the release (``synthdp generate --report``): its budget, its
        stages and its caveats get a section of the page.
    title : str

    Returns
    -------
    str
        One HTML5 document with every image inline and no external resource.
    """
    mpl = _matplotlib()
    described = _schema_of(report, real, schema)
    names = _report_names(report, privacy_report) | set(described.names)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # layout warnings of matplotlib are not the user's business
        sections = {
            "summary": _summary_section(report, names),
            "columns": _columns_section(report, real, synth, described, mpl),
            "pairs": _pairs_section(report),
            "correlations": _correlation_section(report, real, synth, mpl),
            "smooth-queries": _queries_section(report, mpl),
            "model": _model_section(report),
            "intervals": _intervals_section(report.get("intervals"), mpl),
            "privacy": _privacy_section(privacy_report, names),
        }
    body = [f"<h1>{_text(title)}</h1>",
            '<p class="warning"><strong>This page reads the real table: it is NOT differentially private.</strong> '
            "It is for the data owner judging a release; do not publish it with the release.</p>"]
    body += [f'<section id="{name}">{content}</section>' for name, content in sections.items() if content]
    body.append(f'<p class="note">Written by synthdp {_text(__version__)} (synthdp evaluate --html).</p>')
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{_text(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
            + "\n".join(body) + "\n</body>\n</html>\n")
