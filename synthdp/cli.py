"""Command line: ``synthdp generate`` (a synthetic table), ``synthdp summarize`` (a summary),
and ``synthdp evaluate`` (the utility of a synthetic table against the real one).

    synthdp generate INPUT.csv -o OUTPUT.csv --epsilon 1 --bounds BOUNDS.json [--model-out MODEL]
    synthdp fit INPUT.csv -o MODEL --epsilon 1 --bounds BOUNDS.json   (a model file: sample from it later)
    synthdp sample MODEL -n 10000 -o OUTPUT.csv [--where "age >= 60"] [--seed S]
    synthdp summarize INPUT.csv -o SUMMARY.json --epsilon 1 --bounds BOUNDS.json
    synthdp evaluate --real INPUT.csv --synth OUTPUT.csv --bounds BOUNDS.json (or --schema SCHEMA.json)
        [--target COLUMN] [--json] [--html REPORT.html [--privacy-report REPORT.json]]
    synthdp marginal --summary SUMMARY.json --columns sex,race   (or --table T.csv --schema SCHEMA.json)
    synthdp schema INPUT.csv -o SCHEMA.json   (a draft read from the data, NOT private: edit it before a release)

Every flag is also a key of the TOML ``--config`` file (dashes or underscores); flags given
on the command line override the file. Outputs are written to temporary files and renamed
into place only when the whole run succeeded, so a failed run leaves no partial output.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import dataclasses
import functools
import io
import json
import math
import os
import shutil
import sys
import threading
import time
import tomllib
import unicodedata
import warnings
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, get_args, get_type_hints

from synthdp._version import __version__
from synthdp.checks import delta_text
from synthdp.config import GROUPS, CsvFormat, SynthConfig, choices, option_fields
from synthdp.errors import SynthDPError, absent_file, near_column
from synthdp.evaluation.options import DEFAULT_QUERIES, MAX_COPIES, TASKS
from synthdp.files import link_new, read_text_file, synced, temporary_beside
from synthdp.writers import (
    ParquetAppender,
    check_table_output,
    is_parquet,
    table_writer,
    text_levels,
    write_csv_rows,
)

if TYPE_CHECKING:  # imported where used: --help and argument errors answer without pandas or scipy
    import pandas as pd

    from synthdp.evaluation.inference import Copies
    from synthdp.summaries.marginal import MarginalSummary
    from synthdp.summaries.smooth import Summary
    from synthdp.synthesizer import SmoothSynthesizer

DESCRIPTION = """\
synthdp turns a sensitive table (numeric, or mixed with binary, categorical, date and missing
cells) into a differentially private synthetic table that answers smooth queries (kernel
densities, moments, smooth regressions) almost as well as the real data. It releases noisy
Chebyshev moments of the data once, fits a distribution over private candidate points to them
by a linear program, and samples synthetic rows from it.
"""

PRIVACY_EPILOG = """\
privacy:
  By default neighbouring tables differ in one row and the row count n is public (with
  --privacy-unit they differ in one person's rows, and n is released with noise). Column
  bounds must be public knowledge (not read from the data): pass them with --bounds, or let
  --bounds-share spend part of epsilon on DP estimates (reliable only when n is large against
  d/epsilon).
  --bounds-from-data reads them from the data instead, and the report then says the release
  is NOT private.

bounds file (JSON):
  {"age": [0, 120], "income": [0, 500000], "visits": {"bounds": [0, 50], "type": "integer"}}

schema file (JSON), for tables with binary or categorical columns (instead of --bounds):
  {"columns": {"age": {"type": "continuous", "bounds": [17, 90]},
               "hours": {"type": "integer", "bounds": [1, 99]},
               "sex": {"type": "binary", "levels": ["Female", "Male"]},
               "workclass": {"type": "categorical", "levels": ["Private", "State-gov"]}}}
  Levels are public, like bounds. A categorical value outside its levels becomes "other"
  (counted, with noise, in the report). "levels": "discover" asks for DP discovery of a
  categorical column's levels from --levels-share of the budget (needs --delta > 0). The
  release then holds every marginal cell of up to --marginal-degree of those columns;
  summarize writes a marginal summary (see synthdp marginal).
"""

GENERATE_EPILOG = PRIVACY_EPILOG + """
examples:
  synthdp generate data.csv -o synthetic.csv --epsilon 1 --bounds bounds.json --report report.json
  synthdp generate data.csv -o synthetic.csv --config configs/paper_eps_delta.toml --bounds bounds.json
  synthdp generate data.csv -o synthetic.csv --bounds bounds.json --summary-out summary.json
"""

FIT_EPILOG = PRIVACY_EPILOG + """
examples:
  synthdp fit data.csv -o model.synthdp --epsilon 1 --bounds bounds.json --report report.json
  synthdp sample model.synthdp -n 100000 -o rows.csv
  synthdp sample model.synthdp -n 1000 -o older.csv --where "age >= 60" --seed 7
"""

FIT_DESCRIPTION = """\
synthdp fit spends the privacy budget once, as synthdp generate does, and writes the fitted
model instead of rows: the distribution over the support points, the columns' domains or schema,
the decoders and the privacy report. No raw value is in it, and it is safe to load (no pickle).
synthdp sample draws any number of rows from it later, as often as needed, under conditions,
spending nothing more and reading no data. generate --model-out writes it beside the rows.
"""

SAMPLE_DESCRIPTION = """\
synthdp sample draws rows from a model file (synthdp fit, or generate --model-out): any number,
streamed to the CSV chunk by chunk with a progress bar, in memory bounded by a chunk. It spends
no privacy budget and reads no data: the model is the release. --where draws from the fitted
distribution restricted to a condition (an error if it has no mass, a warning when few support
points hold it); --seed makes the draws reproducible (the same rows as
SmoothSynthesizer.load(MODEL).sample(N, condition=..., seed=S)). The output is written to a
temporary file and renamed into place at the end; it may not be the model file.
"""

INFER_DESCRIPTION = """\
synthdp infer reads the copies that synthdp generate --copies M -o OUTPUT.csv wrote and prints,
for each statistic asked for, its estimate, standard error and interval (synthdp.infer: the
parametric bootstrap's rules; docs/inference.md says which and why), and the value on the fitted
distribution before the bias correction (naive). It reads no data and spends no budget: the
copies are post-processing of the one release. For any other statistic, use synthdp.infer in
Python with a function of a DataFrame.

  synthdp infer out.csv --mean age bmi --share visits_per_year=0 --group-mean bmi visits_per_year \\
      --corr age bmi --ols bmi age visits_per_year
"""

SUMMARIZE_DESCRIPTION = """\
synthdp summarize releases only the noisy Chebyshev moments of the data and writes them, with
the bounds, the parameters and the privacy report, as a JSON summary. Smooth queries are then
answered from the summary alone, without sampling, in Python:

  from synthdp import Summary
  Summary.load("summary.json").answer(lambda rows: rows["age"] * rows["income"])

No candidates are needed, so the moments get the budget that generate spends on the
candidates' statistics (marginals and correlations, or private PCA). (generate --summary-out
saves the summary of its own release instead: one budget for both outputs.)
"""

SUMMARIZE_EPILOG = PRIVACY_EPILOG + """
examples:
  synthdp summarize data.csv -o summary.json --epsilon 1 --bounds bounds.json --report report.json
"""

EVALUATE_DESCRIPTION = """\
synthdp evaluate compares a synthetic table with the real one and prints: the number of rows
and of distinct rows of each; the total-variation distance (TV) of each column's distribution
(over the levels of a binary or categorical column, over 16 equal-width bins of a numeric
column's bounds; 0: the same, 1: disjoint) and of each pair of columns' joint distribution,
with SDMetrics' pair similarities (contingency: 1 - TV, for pairs with a categorical column;
correlation: 1 - |r real - r synthetic| / 2, for numeric pairs) and their means (column shapes,
column pair trends); SDMetrics' own QualityReport scores when sdmetrics is installed (pip
install "synthdp[quality]"; on at most 2000 rows of each table). On the numeric columns: the
Kolmogorov-Smirnov distance of each (0: the same distribution of values, 1: disjoint); the
error of the pairwise Pearson correlations (|real - synthetic|, from 0 to 2; a constant
column's correlations count as 0); and the worst-case errors of random smooth queries (sums
of Gaussian kernels, the papers' protocol) for sigma = 2, 4, 6, 8, 10. With --target, the
score of a gradient-boosting model trained on the synthetic rows and tested on held-out real
rows, next to the same model trained on the other real rows (R^2 for a numeric target,
accuracy for a class label). --html also writes all of it as one self-contained page with a
chart of each column (real against synthetic), the two correlation matrices, the smooth-query
error against sigma and, with --privacy-report, the release's privacy report.

This reads the real table: it is evaluation by the data owner, not a release, and what it
prints is NOT differentially private. Do not publish it as part of a release.
"""

EVALUATE_EPILOG = """\
tables:
  Give the release's --bounds (a numeric table) or --schema (its levels define the categorical
  cells, a value outside them counting as "other", and its bounds the numeric bins). Without
  either, the column types are inferred from the real table as SDMetrics' metadata detection
  does (binary columns, few-valued codes and text as categorical, dates), the numeric bounds
  are its min and max, and evaluate says so.

normalisation:
  For the smooth queries and the numeric bins both tables are mapped onto [-1, 1]^d with the
  same per-column bounds: those of --bounds or --schema, and (numeric tables) the real table's
  min and max for the columns --bounds does not list. Values outside are clipped.

examples:
  synthdp evaluate --real data.csv --synth synthetic.csv --bounds bounds.json
  synthdp evaluate --real data.csv --synth synthetic.csv --target outcome --json > utility.json
  synthdp evaluate --real adult.csv --synth synthetic.csv --schema schema.json --target income \\
      --html report.html --privacy-report release_report.json
"""

STANDARD_OUTPUT = "/dev/stdout"  # what an output named "-" is written into
QUIET_HELP = "no progress bar, and no closing line saying what was written, nor notes (warnings and errors still print)"

DEFAULT_MAX_LEVELS = 50  # synthdp.reader.draft.DEFAULT_MAX_LEVELS (not imported here: --help loads no pandas)

BUDGET_DESCRIPTION = """\
Print what a budget file (--budget-file of generate, fit and summarize) says of its table: the
lifetime budget, what its releases spent, what running releases hold, and what remains for the
next release, with every release. It reads only the budget file: no data, no budget, nothing
written. Releases compose by adding their epsilons and deltas; a pending release whose process is
gone is shown as stale (not counted: the next release drops it).
"""

SCHEMA_DESCRIPTION = """\
synthdp schema reads a table and drafts its schema (the --schema file of generate and
summarize) for you to review and edit: each column's type (integer, continuous, binary,
categorical, date or datetime), the data's min and max rounded outward to round numbers as
bounds, the sorted levels of text columns ("levels": "discover" above --max-levels distinct
values), "decimals" for a continuous column written with at most 6 decimals ("values", the
values seen, for one of few distinct values: at most min(n/10, 32)), and "nullable": true for
columns with missing cells.

It reads the data: the draft is NOT private. Its bounds, levels and values are the data's, and the
draft says so in a top-level "draft" entry. Replace them with public knowledge (the ranges
and categories anyone could know without the data), then delete the "draft" entry. A
release with a schema that still has it is reported as NOT differentially private.
"""

SCHEMA_EPILOG = """\
example (draft, edit with public knowledge, release):
  synthdp schema data.csv -o schema.json
  $EDITOR schema.json         # public bounds, levels and values; delete the "draft" entry
  synthdp generate data.csv -o synthetic.csv --schema schema.json --report report.json
"""

# Options that are not SynthConfig fields.
RUN_KEYS = {"bounds", "schema", "bounds_from_data", "rows", "report", "summary_out", "model_out", "quiet", "sep",
            "encoding", "decimal", "thousands", "budget_file", "lifetime_epsilon", "lifetime_delta", "copies",
            "data_timings"}
# SynthConfig fields that take a number or 'auto' (None in the config: decided at run time; _float_or_auto)
NUMBER_OR_AUTO = {"blend"}
# what a config file's value of each run key must be (the flags' own types; rows and copies: _int_or_word)
RUN_KEY_KINDS = {"bounds_from_data": bool, "quiet": bool, "data_timings": bool, "lifetime_epsilon": float,
                 "lifetime_delta": float,
                 **{key: str for key in ("bounds", "schema", "report", "summary_out", "model_out", "sep", "encoding",
                                         "decimal", "thousands", "budget_file")}}


class _Parser(argparse.ArgumentParser):
    """argparse with the one-line ``synthdp: error: ...`` of every other failure, pointing to the
    help of the command at fault (``synthdp generate --help`` lists generate's options)."""

    def error(self, message: str):
        self.exit(2, f"synthdp: error: {message} (see {self.prog} --help)\n")

    def parse_args(self, args=None, namespace=None):
        # argparse reports a command's unknown options from the top-level parser: report them from the command's
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            commands = next((action.choices for action in self._actions
                             if isinstance(action, argparse._SubParsersAction)), {})
            commands.get(getattr(parsed, "command", None), self).error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="synthdp", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"synthdp {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    gen = commands.add_parser("generate", help="write a differentially private synthetic table (CSV or Parquet)",
                              description=DESCRIPTION, epilog=GENERATE_EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    groups = _add_release_options(gen, "generate", "OUTPUT.csv", "where to write the synthetic table: CSV, or Parquet "
                                  "for a name ending in .parquet or .pq; - for standard output (CSV)")
    out = groups["output"]
    out.add_argument("--rows", metavar="M", help="synthetic rows: a number, or 'theory' for the paper's m (default n)")
    out.add_argument("--summary-out", metavar="SUMMARY.json",
                     help="also write the summary of this same release (see synthdp summarize); no extra budget")
    out.add_argument("--model-out", metavar="MODEL",
                     help="also write the fitted model, to sample more rows later (synthdp sample); no extra budget")
    out.add_argument("--copies", metavar="M",
                     help=f"also write M copies (2 to {MAX_COPIES}) of the release that carry its uncertainty "
                          "(OUTPUT.1.csv ... OUTPUT.M.csv, OUTPUT.reference.csv, and OUTPUT.copies.json, what they "
                          "are), for the intervals of synthdp infer (or synthdp.infer in Python); no extra budget")
    fit_command = commands.add_parser("fit", help="fit a model file to sample from later (spends the budget once)",
                                      description=FIT_DESCRIPTION, epilog=FIT_EPILOG,
                                      formatter_class=argparse.RawDescriptionHelpFormatter)
    fit_groups = _add_release_options(fit_command, "generate", "MODEL", "where to write the model file")
    fit_groups["output"].add_argument("--summary-out", metavar="SUMMARY.json",
                                      help="also write the summary of this same release (see synthdp summarize); no "
                                           "extra budget")
    sample_command = commands.add_parser(
        "sample", help="draw rows from a model file (no budget, no data)", description=SAMPLE_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sample_command.add_argument("model", metavar="MODEL", help="a model file (synthdp fit, or generate --model-out)")
    sample_command.add_argument("-n", "--rows", required=True, metavar="N", help="rows to draw")
    sample_command.add_argument("-o", "--output", required=True, metavar="OUTPUT.csv",
                                help="where to write the rows: CSV, or Parquet for a name ending in .parquet or .pq; "
                                     "- for standard output (CSV)")
    sample_command.add_argument("--where", metavar="EXPR",
                                help="draw from the fitted distribution restricted to this condition, an expression "
                                     "over the columns in pandas query syntax, e.g. \"sex == 'Female' and age >= 60\" "
                                     "(names with spaces, dashes or quotes, or that are Python keywords such as class, in "
                                     "backticks; a date compared as one: day >= '2021-06-01')")
    sample_command.add_argument("--seed", type=int, metavar="S",
                                help="seed of the draws: the same rows as SmoothSynthesizer.load(MODEL).sample(N, "
                                     "seed=S) (public randomness: the model is private either way)")
    sample_command.add_argument("--copies", metavar="M",
                                help=f"also write M copies (2 to {MAX_COPIES}) of the release that carry its "
                                     "uncertainty, of N rows each, as generate --copies writes them (OUTPUT.1.csv ... "
                                     "OUTPUT.M.csv, OUTPUT.reference.csv, OUTPUT.copies.json), for synthdp infer: from "
                                     "a model file that holds its release (written by this synthdp); no budget")
    sample_command.add_argument("--quiet", action="store_true", help=QUIET_HELP)
    summ = commands.add_parser("summarize", help="write a differentially private summary for answering smooth queries",
                               description=SUMMARIZE_DESCRIPTION, epilog=SUMMARIZE_EPILOG,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_release_options(summ, "summarize", "SUMMARY.json", "where to write the summary (JSON)")
    evaluate_command = commands.add_parser(
        "evaluate", help="compare a synthetic table with the real one (reads the real table: not private)",
        description=EVALUATE_DESCRIPTION, epilog=EVALUATE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    evaluate_command.add_argument("--real", required=True, metavar="REAL.csv",
                                  help="the real table (CSV, or Parquet by its suffix)")
    evaluate_command.add_argument("--synth", required=True, metavar="SYNTH.csv",
                                  help="the synthetic table: the same column names, in any order")
    evaluate_domain = evaluate_command.add_mutually_exclusive_group()
    evaluate_domain.add_argument("--bounds", metavar="BOUNDS.json",
                                 help="the release's bounds per column of a numeric table (default: the real min/max, column "
                                      "types inferred from the real table)")
    evaluate_domain.add_argument("--schema", metavar="SCHEMA.json",
                                 help="the release's schema, for a table with binary or categorical columns")
    evaluate_command.add_argument("--target", metavar="COLUMN",
                                  help="also train a model to predict this column (with --schema it may be binary "
                                       "or categorical)")
    evaluate_command.add_argument("--task", choices=TASKS, default="auto",
                                  help="regression (R^2) or classification (accuracy); auto: classification "
                                       "for binary, categorical or text targets and integer ones with at most 10 "
                                       "values (default auto)")
    evaluate_command.add_argument("--queries", type=int, default=DEFAULT_QUERIES, metavar="Q",
                                  help=f"number of random smooth queries (default {DEFAULT_QUERIES}; the papers use 10000)")
    evaluate_command.add_argument("--seed", type=int, default=0, metavar="S",
                                  help="seed of the queries, of the train/test split and of SDMetrics' sample (default 0)")
    evaluate_command.add_argument("--privacy-unit", metavar="COLUMN",
                                  help="the column that identifies a person (a release with --privacy-unit): left "
                                       "out of the scores; people and rows per person compared instead")
    evaluate_command.add_argument("--copies", action="store_true",
                                  help="also check the intervals of the copies that generate --copies wrote beside "
                                       "--synth (SYNTH.1.csv ..., SYNTH.reference.csv): does each numeric column's "
                                       "mean and correlation interval hold the real table's value?")
    evaluate_command.add_argument("--json", action="store_true", help="print JSON instead of text tables")
    evaluate_command.add_argument("--quiet", action="store_true",
                                  help="no notes and no closing line saying what was written (warnings and errors "
                                       "still print)")
    evaluate_command.add_argument("--html", metavar="REPORT.html",
                                  help="also write the report as one self-contained HTML page with charts "
                                       "(needs matplotlib)")
    evaluate_command.add_argument("--privacy-report", metavar="REPORT.json",
                                  help="the release's privacy report (generate --report), shown in the --html page")
    evaluate_command.add_argument("--no-sdmetrics", action="store_true",
                                  help="skip SDMetrics' QualityReport even when sdmetrics is installed")
    _add_csv_options(evaluate_command, "the --real table")
    synth_format = evaluate_command.add_argument_group(
        "CSV format of the synthetic table", "default: as synthdp generate writes it (',', utf-8, '.'), "
        "whatever the --real table's options")
    synth_format.add_argument("--synth-sep", metavar="CHAR", help="field separator of the --synth table: one "
                              "character, or 'tab' (default ',')")
    synth_format.add_argument("--synth-encoding", metavar="NAME", help="text encoding of the --synth table (default utf-8)")
    synth_format.add_argument("--synth-decimal", metavar="CHAR", help="decimal mark of the --synth table (default '.')")
    synth_format.add_argument("--synth-thousands", metavar="CHAR",
                              help="thousands separator of the --synth table's numbers (default none)")
    infer_command = commands.add_parser(
        "infer", help="intervals for common statistics from a release's copies (generate --copies)",
        description=INFER_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    infer_command.add_argument("copies", metavar="OUTPUT.csv",
                               help="the -o of synthdp generate --copies M: reads OUTPUT.1.csv ... OUTPUT.M.csv, "
                                    "OUTPUT.reference.csv and OUTPUT.copies.json")
    infer_command.add_argument("--mean", action="extend", nargs="+", default=[], metavar="COL",
                               help="the mean of each column")
    infer_command.add_argument("--share", action="extend", nargs="+", default=[], metavar="COL=VALUE",
                               help="the share of rows whose COL is VALUE (several at once, as --mean takes)")
    infer_command.add_argument("--group-mean", action="append", nargs=2, default=[], metavar=("COL", "BY"),
                               help="the mean of COL within each value of BY (repeat the flag for more)")
    infer_command.add_argument("--corr", action="append", nargs=2, default=[], metavar=("A", "B"),
                               help="Pearson's correlation of A and B (repeat the flag for more)")
    infer_command.add_argument("--ols", action="append", nargs="+", default=[], metavar="COLUMN",
                               help="least-squares coefficients of the first column on the others and an intercept "
                                    "(--ols Y X1 X2 ...; repeat the flag for another model)")
    infer_command.add_argument("--level", type=float, default=0.95, help="two-sided coverage (default 0.95)")
    infer_command.add_argument("-o", "--output", metavar="RESULT.csv", help="write CSV here instead of printing")
    budget_command = commands.add_parser(
        "budget", help="what a budget file has spent and what remains (reads no data)", description=BUDGET_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    budget_command.add_argument("budget_file", metavar="BUDGET.json", help="a budget file (--budget-file)")
    budget_command.add_argument("--json", action="store_true", help="print JSON instead of text")
    marginal_command = commands.add_parser(
        "marginal", help="a marginal of binary/categorical columns, from a marginal summary or a table",
        description="Print (or write) the fraction of rows in every cell of the marginal over --columns, "
                    "answered from a marginal summary (synthdp summarize --schema; no data access) or "
                    "computed on a table (a synthetic one; on the real table it is NOT private). From a "
                    "summary the fractions are the release's noisy estimates, put into [0, 1] and not "
                    "rescaled: where the noise is large against the rows (a few hundred rows at pure "
                    "epsilon) the cells need not sum to 1 (docs/decisions/marginal-clip.md).")
    marginal_command.add_argument("--columns", required=True, metavar="A,B,...", help="comma-separated columns")
    source = marginal_command.add_mutually_exclusive_group(required=True)
    source.add_argument("--summary", metavar="SUMMARY.json", help="a marginal summary")
    source.add_argument("--table", metavar="TABLE.csv", help="a table, CSV or Parquet (.parquet, .pq) (needs --schema)")
    marginal_command.add_argument("--schema", metavar="SCHEMA.json", help="the table's schema")
    marginal_command.add_argument("-o", "--output", metavar="OUT.csv", help="write CSV here instead of printing")
    _add_csv_options(marginal_command, "the --table")
    schema = commands.add_parser(
        "schema", help="draft a schema from a table (reads the data: the draft is NOT private; edit it with "
                       "public knowledge)",
        description=SCHEMA_DESCRIPTION, epilog=SCHEMA_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    schema.add_argument("input", metavar="INPUT.csv", help="the table (CSV with a header row, or a Parquet file "
                                                          "(.parquet, .pq), read whole)")
    schema.add_argument("-o", "--output", required=True, metavar="SCHEMA.json", help="where to write the draft")
    schema.add_argument("--max-levels", type=int, default=DEFAULT_MAX_LEVELS, metavar="K",
                        help="a text column with more distinct values gets \"levels\": \"discover\" instead of "
                             f"its levels (default {DEFAULT_MAX_LEVELS})")
    _add_csv_options(schema, "the input")
    for command in (gen, fit_command, sample_command, summ, evaluate_command, infer_command, marginal_command, schema):
        command.add_argument("--overwrite", action="store_true",
                             help="replace output files that exist (without it such an output is refused before "
                                  "any work, and nothing is written)")
    return parser


def _add_release_options(command: argparse.ArgumentParser, name: str, output: str, output_help: str) -> dict:
    """The options of a release command: input and outputs, then every :class:`SynthConfig`
    field that ``name`` takes, from the field's own help, group and default; returns the groups."""
    # Defaults are None so that a value from --config is overridden only by an explicit flag.
    command.add_argument("input", metavar="INPUT.csv",
                         help="sensitive table: CSV with a header row, or Parquet (.parquet, .pq); numeric columns "
                              "(text ones with --schema)")
    command.add_argument("-o", "--output", required=True, metavar=output, help=output_help)
    command.add_argument("--report", metavar="REPORT.json",
                         help="where to write the privacy report (JSON; - for standard output)")
    command.add_argument("--config", metavar="FILE.toml", help="TOML file whose keys are any of these options")
    lifetime = command.add_argument_group(
        "the table's budget across releases", "a budget file keeps what the releases of one table spent and refuses, "
        "before reading the data, a release that would take it past the table's lifetime budget")
    lifetime.add_argument("--budget-file", metavar="BUDGET.json",
                          help="the table's budget file: read, checked, charged with this release's epsilon and delta")
    lifetime.add_argument("--lifetime-epsilon", type=float, metavar="E",
                          help="the table's lifetime epsilon: declared by the budget file's first use")
    lifetime.add_argument("--lifetime-delta", type=float, metavar="D",
                          help="the table's lifetime delta (default 0): declared by the budget file's first use")
    _add_csv_options(command, "the input")
    groups = {group: command.add_argument_group("privacy budget" if group == "budget" else group) for group in GROUPS}
    bounds = groups["bounds"]
    bounds.add_argument("--bounds", metavar="BOUNDS.json", help="public bounds per column, {\"col\": [lo, hi]}")
    bounds.add_argument("--schema", metavar="SCHEMA.json",
                        help="types, bounds and levels of every column (for binary and categorical columns)")
    bounds.add_argument("--bounds-from-data", action="store_const", const=True,
                        help="read bounds from the data: the release is then NOT differentially private")
    for field in option_fields():
        meta = field.metadata
        if name not in meta["commands"]:
            continue
        default = meta["default_text"] or field.default
        kind = None if field.name in NUMBER_OR_AUTO else _value_type(field.name)
        options: dict = {"help": f"{meta['help']} (default {default})"}
        if choices(field.name):
            options["choices"] = list(choices(field.name))
        else:
            options["metavar"] = meta["metavar"]
            if kind is not None:
                options["type"] = kind
        groups[meta["group"]].add_argument("--" + field.name.replace("_", "-"), **options)
    groups["output"].add_argument("--quiet", action="store_const", const=True, help=QUIET_HELP)
    groups["output"].add_argument("--data-timings", action="store_const", const=True,
                                  help="also write the times of the stages that read the data into the report (for "
                                       "benchmarks: they depend on the data, so the report then says it is not "
                                       "differentially private; the model file and summary never hold them)")
    return groups


def _add_csv_options(command: argparse.ArgumentParser, what: str) -> None:
    """--sep, --encoding, --decimal and --thousands: how the CSV file(s) read by a command are written."""
    group = command.add_argument_group("CSV format")
    group.add_argument("--sep", metavar="CHAR", help=f"field separator of {what}: one character, or 'tab' (default ',')")
    group.add_argument("--encoding", metavar="NAME", help=f"text encoding of {what}, e.g. latin-1 (default utf-8)")
    group.add_argument("--decimal", metavar="CHAR", help=f"decimal mark of {what}, e.g. ',' (default '.')")
    group.add_argument("--thousands", metavar="CHAR", help=f"thousands separator of the numbers of {what}, e.g. '.' "
                       "with --decimal ',' (default none; as pandas.read_csv's thousands=)")


def _csv_format(sep: str | None, encoding: str | None, decimal: str | None, thousands: str | None = None,
                options: str = "--", path: str | None = None):
    """The CsvFormat of a command's CSV options; an error names the option (``options``: their prefix).
    Given for a Parquet ``path`` (by its suffix), which has no separator, encoding, decimal mark or
    thousands separator of its own to set, the options are checked all the same and a warning says
    they were ignored."""
    given = [f"{options}{name}" for name, value in (("sep", sep), ("encoding", encoding), ("decimal", decimal),
                                                    ("thousands", thousands)) if value is not None]
    if given and path is not None and is_parquet(path):
        warnings.warn(f"{', '.join(given)} ignored: '{path}' is a Parquet file, read by its own types", stacklevel=2)

    try:
        return CsvFormat.from_options(sep, encoding, decimal, thousands)
    except SynthDPError as error:
        if options == "--":
            raise
        raise SynthDPError(f"{options[2:]}{error}") from None


@functools.cache
def _config_hints() -> dict:
    """SynthConfig's resolved type hints, once: resolving them per field cost each command 0.1 s."""
    return get_type_hints(SynthConfig)


def _value_type(name: str) -> type | None:
    """int, float or str for a field of one such type (None aside); None for choices and for
    an integer-or-word field such as n_basis (parsed by :func:`_int_or_word`)."""
    hint = _config_hints()[name]
    parts = [part for part in (get_args(hint) or (hint,)) if part is not type(None)]
    if len(parts) == 1 and parts[0] in (int, float, str):
        return parts[0]
    return None


# glibc's mallopt parameters: allocations from M_MMAP_THRESHOLD bytes are mapped (and unmapped when
# freed) instead of taken from the heap; freed heap memory past M_TRIM_THRESHOLD is returned.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
CHUNK_HEAP_BYTES = 64 * 2**20  # above a streamed chunk's arrays (2**22 values, 32 MB of float64)
HEAP_TRIM_BYTES = 256 * 2**20


def keep_chunk_arrays_on_the_heap() -> bool:
    """Ask glibc's allocator to serve a streamed file's chunk arrays from its heap, and to keep up
    to HEAP_TRIM_BYTES of freed heap, so that the next chunk reuses the last one's memory: by
    default each 32 MB array is mapped and unmapped (glibc maps what is over 32 MB at the most),
    and the kernel's page faults on the fresh pages cost the 10^8 x 10 Parquet command 4.4-12.2 s
    of system time against 2.6 s. For this process only (the command line's: a library call
    leaves the user's process as it is); nothing where the C library is not glibc. Returns
    whether it was applied. Measured: docs/decisions/chunk-heap.md."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, CHUNK_HEAP_BYTES)) and bool(mallopt(M_TRIM_THRESHOLD, HEAP_TRIM_BYTES))


_RENAMING: list = []  # not empty while _write_outputs renames the outputs into place: the signals wait in it
# what _write_outputs has written, for a Ctrl-C's line (emptied by main): "files" once the command's files are in
# place, "streams" once it writes into standard output or another stream (-o -), "all" once every output is
_PLACED: list = []


class _StoppedAfterWriting(KeyboardInterrupt):
    """Ctrl-C or SIGTERM that came while the outputs were renamed into place: raised once they all are."""

    def __init__(self, number: int) -> None:
        super().__init__()
        self.number = number


class _OutputNotWritten(OSError):
    """An output's write that failed (a full disk), with the output's own name as its filename."""


class _Stopped(KeyboardInterrupt):
    """SIGTERM (kill, a scheduler's time limit) or SIGHUP (the terminal closed), raised like Ctrl-C's
    KeyboardInterrupt so that the outputs' temporary files are removed on the way out, as they are for
    Ctrl-C; ``number``: the signal's."""

    def __init__(self, number: int) -> None:
        super().__init__()
        self.number = number


def _interruptible() -> tuple[dict, list]:
    """Handlers for SIGINT, SIGTERM and SIGHUP that note the signal and raise KeyboardInterrupt, and what
    they replace (restored when the command ends: main runs inside other programs too, the tests).
    The note tells the error handlers an interrupted write from a failed one: a library writing
    through C (pyarrow's CSV writer) reports Ctrl-C as an OSError, "No space left on device"."""
    import signal

    received: list = []

    def handler(number, frame):
        received.append(number)
        if _RENAMING:  # the outputs are being renamed into place: finish, rather than leave part of them
            _RENAMING.append(number)
            return
        raise KeyboardInterrupt() if number == signal.SIGINT else _Stopped(number)

    previous = {}
    if threading.current_thread() is threading.main_thread():
        for number in (signal.SIGINT, signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])):
            # a signal ignored by whoever started the command stays ignored, as Python leaves it: a shell's
            # background job ("synthdp generate ... &" in a script) ignores Ctrl-C, which is the script's, and
            # nohup ignores SIGHUP
            if signal.getsignal(number) != signal.SIG_IGN:
                previous[number] = signal.signal(number, handler)
    return previous, received


def main(argv: list[str] | None = None) -> int:
    import signal

    args = build_parser().parse_args(argv)
    _utf8_stdout()
    _utf8_column_arguments(args)
    for option in ("output", "report", "summary_out", "model_out", "html"):
        if getattr(args, option, None) == "-":  # the usual name of standard output (it wrote a file named "-")
            setattr(args, option, STANDARD_OUTPUT)
    keep_chunk_arrays_on_the_heap()
    command = {"generate": generate, "fit": fit_command, "sample": sample_command, "summarize": summarize,
               "evaluate": evaluate, "infer": infer_command, "marginal": marginal_command, "schema": schema_command,
               "budget": budget_command}[args.command]
    previous, received = _interruptible()
    _PLACED.clear()
    try:
        return _run(command, args, received)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _utf8_stdout() -> None:
    """Standard output in UTF-8, as every file the commands write (a report, ``marginal``'s or ``infer``'s
    table, ``-o -``), whatever the locale: a non-ASCII column name or level printed in the C locale with
    Python's UTF-8 mode off (PYTHONUTF8=0) was a traceback, and in a Latin-1 locale ``marginal > m.csv``
    was another file than ``marginal -o m.csv``. Undecodable file names stay their bytes, as in UTF-8 mode.
    An encoding the user asked for (PYTHONIOENCODING) is kept."""
    stream = sys.stdout
    if (isinstance(stream, io.TextIOWrapper) and codecs.lookup(stream.encoding).name != "utf-8"
            and not os.environ.get("PYTHONIOENCODING")):
        stream.reconfigure(encoding="utf-8", errors="surrogateescape")


#: The options whose values name columns (or levels, or hold an expression over them), not files.
COLUMN_OPTIONS = ("target", "privacy_unit", "where", "mean", "share", "group_mean", "corr", "ols", "columns")


def _utf8_column_arguments(args: argparse.Namespace) -> None:
    """The values of :data:`COLUMN_OPTIONS` as UTF-8, as the tables' headers are read: in a locale that cannot
    decode a non-ASCII name (the C locale with Python's UTF-8 mode off, PYTHONUTF8=0), Python keeps each of its
    bytes as a surrogate escape (U+DC80 to U+DCFF), so that a name such as "température" given to --target named
    no column and the error showed the escapes. Only a value holding such an escape is decoded again, where its
    bytes are UTF-8; file names stay as given (they are opened by their bytes)."""
    def decoded(value: object) -> object:
        if isinstance(value, list):
            return [decoded(item) for item in value]
        if isinstance(value, str) and any("\udc80" <= char <= "\udcff" for char in value):
            try:
                return os.fsencode(value).decode("utf-8")
            except UnicodeError:  # not UTF-8 either: as given (the error names it with its escapes)
                return value
        return value

    for option in COLUMN_OPTIONS:
        if hasattr(args, option):
            setattr(args, option, decoded(getattr(args, option)))


def _quiet_stdout() -> None:
    """After a broken pipe: standard output goes to /dev/null, so that the interpreter's last flush of
    what its buffer still holds does not print a traceback of its own."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # standard output is no file (captured, as in the tests)
        pass


def _run(command: Callable[[argparse.Namespace], int], args: argparse.Namespace, received: list) -> int:
    """The command, its warnings once each if it ends, and every failure as one line with its exit status."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                code = command(args)
            except BrokenPipeError:  # the reader of a pipe stopped early (-o /dev/stdout | head): not an error
                _quiet_stdout()
                code = 0
            finally:
                _release_reservation(args)
            # each warning once, and only for a command that ran to its end: a failure is one line
            for message in dict.fromkeys(str(warning.message) for warning in caught):
                print(f"synthdp: warning: {_printable(message)}", file=sys.stderr)
            return code
    except SynthDPError as error:
        # one line whatever names it quotes: a column, option or path of the user's with a newline in it
        print(f"synthdp: error: {_printable(str(error))}{_charged(args)}", file=sys.stderr)
        return 2
    except OSError as error:  # writing an output; strerror names the problem, not the data
        if received:  # a signal that came through a library's C code as an error of its own
            print(f"synthdp: interrupted; no output written{_charged(args)}", file=sys.stderr)
            return 128 + int(received[0])
        named = f" '{error.filename}'" if isinstance(error, _OutputNotWritten) else ""
        # a stream is written after the files are in place (it may block until read): say they were
        written = ("; the file outputs were written (a stream is written last)"
                   if "files" in _PLACED and "all" not in _PLACED else "")
        print(f"synthdp: error: cannot write the output{_printable(named)}: {error.strerror or error}{written}"
              f"{_charged(args)}", file=sys.stderr)
        return 2
    except MemoryError:
        hint = {"evaluate": "--queries", "summarize": "--n-basis", "fit": "--n-candidates or --n-basis",
                "generate": "--rows, --n-candidates or --n-basis"}.get(args.command)  # options the command has
        print(f"synthdp: error: out of memory{f'; lower {hint}' if hint else ''}{_charged(args)}", file=sys.stderr)
        return 2
    except _StoppedAfterWriting as stop:
        with contextlib.suppress(OSError):  # a terminal gone (SIGHUP): the line has nowhere to go
            print(_interrupted(args), file=sys.stderr)
        return 128 + int(stop.number)
    except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM or SIGHUP (_Stopped): the shell's codes, 130, 143, 129
        # an object the interruption left half-made (an older tqdm, 4.68 and before, stopped in its __init__) may fail
        # in its __del__ later: the interpreter would print that as a traceback after the one line below
        sys.unraisablehook = lambda unraisable: None
        with contextlib.suppress(OSError):  # a terminal gone (SIGHUP): the line has nowhere to go
            print(_interrupted(args), file=sys.stderr)
        return 128 + stop.number if isinstance(stop, _Stopped) else 130


def _interrupted(args: argparse.Namespace) -> str:
    """The line of a command stopped by a signal: what of its outputs was written (:data:`_PLACED`)."""
    if "all" in _PLACED:
        return "synthdp: interrupted once every output was written"
    files = "; the files were written" if "files" in _PLACED else ""
    if "streams" in _PLACED:
        return f"synthdp: interrupted while writing standard output or a stream, which may be cut short{files}"
    if files:
        return f"synthdp: interrupted before standard output or a stream was written{files}"
    return f"synthdp: interrupted; no output written{_charged(args)}"


def _release_reservation(args: argparse.Namespace) -> None:
    """A release reserved in a budget file and still pending when the command ends (it failed before
    its fit released anything): dropped, since nothing of it is out. The fit charges it once a stage
    has released; a charged entry is left as it is."""
    reservation = getattr(args, "reservation", None)
    if reservation is not None:
        from synthdp.privacy import lifetime

        args.charged = lifetime.cancel(reservation)


def _charged(args: argparse.Namespace) -> str:
    """For a command that failed or was stopped after its release was charged to a budget file: the words
    that say so (its budget is spent though no output was written), else nothing."""
    reservation = getattr(args, "reservation", None)
    if reservation is None or not getattr(args, "charged", False):
        return ""
    return f" (the release was charged to budget file '{reservation.path}': epsilon {reservation.epsilon:g})"


def generate(args: argparse.Namespace) -> int:
    synth, run = _fit(args, synthesize=True)
    rows = run["rows"]
    n_rows = synth.theory_rows if rows == "theory" else rows  # (a number, or None: read by _fit)
    start = time.perf_counter()
    synthetic = synth.sample(n_rows)
    sampling_seconds = time.perf_counter() - start
    report = synth.privacy_report(synthetic)  # with the budget file's totals where one is kept
    report["timings_seconds"]["sampling"] = round(sampling_seconds, 4)
    outputs: list[tuple[Path, Callable[[Path], object]]] = [(Path(args.output), table_writer(synthetic, args.output))]
    if run["copies"] is not None:
        count = run["copies"]  # (a number: read by _fit)
        copies = synth.sample_copies(count, n_rows, progress=_progress(run["quiet"]))
        written_copies, report["copies"], paths = _copies_outputs(copies, count, args.output, list(synthetic.columns))
        outputs += written_copies
    if run["summary_out"]:
        outputs.append((Path(run["summary_out"]), _text(_summary_json(synth, report))))
    if run["model_out"]:
        outputs.append((Path(run["model_out"]), _model_writer(synth, run["model_out"])))
    written = _with_data_timings(synth, report, run)
    _write_outputs(outputs + _report_output(written, run), overwrite=args.overwrite)
    if not run["quiet"]:
        copies_note = "" if run["copies"] is None else _copies_note(paths)
        print(f"synthdp: wrote {len(synthetic)} rows ({report['output']['distinct_rows']} distinct) to "
              f"{_named(args.output)}"
              + copies_note + (f" and the summary to {run['summary_out']}" if run["summary_out"] else "")
              + _budget_note(written), file=sys.stderr)
        _note_independence(synth)
    return 0


def _checked_copies(copies: object, output: str, rows: object) -> tuple[int, dict[str, str]]:
    """--copies read as a number and checked, with the files it names (for :func:`_check_outputs`), before
    anything is read: a count of 2 to MAX_COPIES, an --output that is a file (the copies are named after it),
    and rows per copy (``rows``: a number, or None or "theory" where the fit decides) of at least 2."""
    from synthdp.evaluation.inference import copy_paths
    from synthdp.pipeline.copies import check_copies_count

    count = _int_or_word(copies, None, "--copies")
    check_copies_count(count, "--copies")  # before their paths are listed: 10**15 of them filled memory
    if _written_into(Path(output)):
        raise SynthDPError("--copies writes files named after --output: give --output a file, not standard output "
                           "or another stream")
    if isinstance(rows, int) and rows < 2:
        raise SynthDPError("--copies needs --rows of at least 2: a statistic's spread over copies of one row "
                           "says nothing")
    *numbered, reference, info = copy_paths(Path(output), count)
    return count, {**{f"copy {k + 1}": str(path) for k, path in enumerate(numbered)},
                   "the copies' reference sample": str(reference), "the copies' description": str(info)}


def _copies_outputs(copies: Copies, count: int, output: str, columns: list[str]
                    ) -> tuple[list[tuple[Path, Callable[[Path], object]]], dict, list[Path]]:
    """The files of ``copies`` beside ``output`` (OUTPUT.1.csv ... OUTPUT.M.csv, OUTPUT.reference.csv, then
    OUTPUT.copies.json, which records the others' digests once they are written), the report's entry
    that describes them, and their paths; the warning of copies that measured no dependence."""
    from synthdp.evaluation.inference import copy_paths, file_sha256

    paths = copy_paths(Path(output), count)
    digests: dict[str, str] = {}  # each file's, once written: OUTPUT.copies.json (written after them) records them

    def hashed(table: pd.DataFrame, final: Path) -> Callable[[Path], object]:
        def write(path: Path) -> None:
            table_writer(table, final)(path)
            digests[final.name] = file_sha256(path)
        return write

    outputs: list[tuple[Path, Callable[[Path], object]]] = [
        (path, hashed(table, path)) for path, table in zip(paths, [*copies.tables, copies.reference])]
    entry = {"count": count, "rows": len(copies.tables[0]), "reference_rows": len(copies.reference),
             "files": [str(path) for path in paths],
             "seconds_per_copy": round(copies.seconds_per_copy, 4),
             "method": "parametric bootstrap of the release: each copy draws a population of n rows "
                       "from the fitted distribution, runs the release's mechanism on it again (fresh "
                       "noise of the same scale), fits and samples it; the last file is a sample of "
                       "20 n rows of the fitted distribution itself (synthdp.infer's reference). That "
                       "distribution and each copy's fit keep every pair the release measured at its "
                       "noisy reading, where the synthetic table keeps only the pairs that stand out "
                       "of their noise",
             "budget": "none: post-processing of this release, no data read",
             "measures_dependence": copies.dependence,
             "measured_pairs": sorted(sorted(pair, key=columns.index) for pair in copies.measured or ())}
    if not copies.dependence and len(columns) >= 2:  # a single column has no pair to measure
        from synthdp.evaluation.inference import NO_DEPENDENCE

        entry["note"] = NO_DEPENDENCE
        warnings.warn(NO_DEPENDENCE, UserWarning, stacklevel=1)  # shown once the command succeeds, as all are
    outputs.append((paths[-1], lambda path: path.write_text(json.dumps({**entry, "sha256": digests}, indent=2)
                                                            + "\n")))
    return outputs, entry, paths


def _copies_note(paths: list[Path]) -> str:
    """Where the copies went, for the command's last line (they are files too)."""
    return (f", {len(paths) - 2} copies and their reference sample beside it ({paths[0].name} ... "
            f"{paths[-3].name}, {paths[-2].name}, {paths[-1].name})")


def _check_summary_output(run: dict, config: SynthConfig, content: dict | None, synthesize: bool) -> None:
    """A --summary-out the release cannot hold, refused before the fit (and before a budget file is
    charged): a table of numeric columns only, some of them nullable (``content``: the schema, or the
    bounds' where they declare a nullable column), is released as a mixed table, whose moments under
    Laplace noise hold none of the numeric columns (they go to the histograms:
    :func:`synthdp.pipeline.plan.mixed_numeric_moments`), and :func:`_summary_json` writes it a summary of
    its numeric moments."""
    if not run["summary_out"] or content is None:
        return
    from synthdp.domain.schema import nullable_numeric_columns, schema_text_columns
    from synthdp.pipeline.plan import mixed_numeric_moments
    from synthdp.pipeline.report import NO_NUMERIC_MOMENTS
    from synthdp.pipeline.run import without_column

    if config.privacy_unit is not None:  # not a column of the release
        content = without_column(content, config.privacy_unit)
    nullable = nullable_numeric_columns(content)
    if nullable and not schema_text_columns(content) and not mixed_numeric_moments(config, len(nullable), synthesize):
        raise SynthDPError(f"--summary-out: {NO_NUMERIC_MOMENTS}")


def _check_sizes(run: dict, source: str, csv_format: CsvFormat) -> None:
    """What would fail only after the fit, checked before it (and before a budget file is charged): an
    output, or the copies' reference sample (20 x the rows per copy), over the output bound, where --rows
    gives the rows: the columns are the input's (``source``: its header or Parquet footer, public), the
    privacy unit's and those whose bounds are estimated or read from the data included."""
    from synthdp.evaluation.inference import REFERENCE_FACTOR
    from synthdp.pipeline.copies import check_copies_size
    from synthdp.pipeline.model import check_output_size

    if run["rows"] in (None, "theory"):
        return
    from synthdp.reader.table import table_header

    rows, columns = run["rows"], len(table_header(source, "input file", csv_format))
    advice = "ask for fewer rows (synthdp sample streams any number to a file)"
    check_output_size(rows, columns, "--rows: the synthetic table", advice)
    if run["copies"] is not None:  # n is not read yet: the reference sample of 20 x the rows per copy at least
        check_copies_size(run["copies"], rows, columns, REFERENCE_FACTOR * rows)


def _with_data_timings(synth: SmoothSynthesizer, report: dict, run: dict) -> dict:
    """The report to write (and to sum up on stderr): ``report``, with the times of the stages that
    read the data and the caveat they bring where --data-timings asks for them and --report writes
    them (the model file and summary keep ``report``)."""
    if not (run["data_timings"] and run["report"]):
        return report
    full = synth.privacy_report(data_timings=True)
    return {**report, "privacy": {**report["privacy"], "differentially_private": False,
                                  "caveats": full["privacy"]["caveats"]},
            "timings_seconds": {**full["timings_seconds"], **report["timings_seconds"]}}


def _note_independence(synth: SmoothSynthesizer) -> None:
    """A note where the release measured no dependence between columns (few rows for the columns
    and budget): its synthetic columns are drawn independently, which only the report said."""
    from synthdp.pipeline.copies import measures_dependence

    release = synth.release_
    columns = len(release.schema.names) if release.schema is not None else release.domain.d  # not coordinates
    if columns < 2 or measures_dependence(release):
        return
    numeric = release.schema is None
    advice = ("; --favour relationships releases the pairs all the same, at a cost in smooth-query accuracy"
              if numeric and synth.config.favour == "smooth" else "")
    print("synthdp: note: at this n, d and budget the release measured no dependence between columns above its "
          f"noise (the report's {'pairs entry and ' if numeric else ''}stages say why): the synthetic columns are "
          f"independent of each other, or related by noise alone{advice}", file=sys.stderr)


def fit_command(args: argparse.Namespace) -> int:
    """Spend the budget once and write the fitted model (and the report): synthdp sample draws from it."""
    synth, run = _fit(args, synthesize=True)
    report = synth.privacy_report()
    written = _with_data_timings(synth, report, run)
    summary = [(Path(run["summary_out"]), _text(_summary_json(synth, report)))] if run["summary_out"] else []
    _write_outputs([(Path(args.output), _model_writer(synth, args.output)), *summary] + _report_output(written, run),
                   overwrite=args.overwrite)
    if not run["quiet"]:
        print(f"synthdp: wrote the model to {_named(args.output)}"
              + (f" and the summary to {run['summary_out']}" if run["summary_out"] else "")
              + f"; sample from it with synthdp sample "
              f"{args.output} -n ROWS -o OUTPUT.csv" + _budget_note(written), file=sys.stderr)
        _note_independence(synth)
    return 0


def sample_command(args: argparse.Namespace) -> int:
    """Draw rows from a model file, streamed to the CSV chunk by chunk: no budget, no data."""
    from synthdp.pipeline import model as model_file

    rows = _int_or_word(args.rows, None, "--rows")
    if rows is None or rows < 1:
        raise SynthDPError("--rows must be an integer >= 1")
    if args.seed is not None and args.seed < 0:
        raise SynthDPError("--seed must be an integer >= 0")
    outputs = {"--output": args.output}
    count = None
    if args.copies is not None:
        if args.where is not None:
            raise SynthDPError("--copies makes copies of the whole release: it cannot be combined with --where")
        count, copy_outputs = _checked_copies(args.copies, args.output, rows)
        outputs.update(copy_outputs)
    _check_outputs(outputs, {"the model file": args.model}, overwrite=args.overwrite)
    parquet = check_table_output(args.output)
    import numpy as np
    from tqdm import tqdm

    # a file's columns as generate writes them (dates as ISO text, levels as written), not in the pandas
    # types a DataFrame's fit gives back in Python (a date as "2020-06-23 00:00:00.000000", a boolean as "true")
    model = dataclasses.replace(model_file.load(args.model), dtypes={})
    if args.where is not None:
        model = model_file.where(model, args.where)
    rng = np.random.default_rng(args.seed)
    written_copies: list[tuple[Path, Callable[[Path], object]]] = []
    if count is not None:  # made before anything is written: a model without its release writes nothing
        from synthdp.pipeline.copies import release_copies

        # their own generator, the one SmoothSynthesizer.load(MODEL).sample_copies(M, N, seed=S) draws from: the rows
        # under --seed stay those of sample(N, seed=S)
        copies_rng = np.random.default_rng() if args.seed is None else model_file.sampling_rng(args.seed)
        copies = release_copies(model, count, rows, copies_rng, progress=_progress(args.quiet))
        written_copies, _, paths = _copies_outputs(copies, count, args.output, model.names)

    def write(path: Path) -> None:
        with ExitStack() as stack:
            bar = stack.enter_context(tqdm(total=rows, unit="rows", disable=not _progress(args.quiet), leave=False, desc="sample",
                                            delay=1.0))  # a sample of a second or less: no bar left in a log
            handle = None if parquet else stack.enter_context(open(path, "wb"))
            appender = ParquetAppender(path, text_levels(model)) if parquet else None
            if appender is not None:
                stack.callback(appender.close)
            for index, frame in enumerate(model_file.draw_chunks(model, rows, rng)):
                if appender is not None:
                    appender.write(frame)
                else:
                    write_csv_rows(frame, handle, header=index == 0)
                if index == 0 and len(frame) < rows:
                    if handle is not None:
                        handle.flush()
                    _check_room(path, len(frame), rows, args.output)
                bar.update(len(frame))

    _write_outputs([(Path(args.output), write), *written_copies], overwrite=args.overwrite)
    if not args.quiet:
        print(f"synthdp: wrote {rows} rows to {_named(args.output)}" + (_copies_note(paths) if count else "")
              + " (no budget spent: drawn from the model)", file=sys.stderr)
    return 0


def _check_room(path: Path, written: int, rows: int, output: str) -> None:
    """After the first chunk of ``written`` rows went to ``path``: refuse, before filling the disk, a
    sample whose size at that chunk's bytes per row is more than the free space of ``path``'s folder."""
    used = path.stat().st_size
    needed = used / max(written, 1) * rows
    free = shutil.disk_usage(path.parent).free + used
    if needed > free:
        raise SynthDPError(f"--rows {rows} would take about {needed / 1e9:.3g} GB, and the folder of '{output}' has "
                           f"{free / 1e9:.3g} GB free: ask for fewer rows or write elsewhere (nothing was written)")


def summarize(args: argparse.Namespace) -> int:
    synth, run = _fit(args, synthesize=False)
    report = synth.privacy_report()
    written = _with_data_timings(synth, report, run)
    summary = _summary(synth, report)
    _write_outputs([(Path(args.output), _text(summary.to_json()))] + _report_output(written, run),
                   overwrite=args.overwrite)
    if not run["quiet"]:  # the summary's moments: a nullable column's smooth summary holds fewer than the release
        print(f"synthdp: wrote a summary of {len(summary.noisy_moments)} noisy moments to {_named(args.output)}"
              + _budget_note(written), file=sys.stderr)
    return 0


def _summary(synth: SmoothSynthesizer, report: dict) -> Summary | MarginalSummary:
    """The summary of a release (with ``report`` embedded): a marginal summary for a table with
    binary or categorical columns, else a smooth-query summary (a numeric table, nullable columns
    included)."""
    schema = synth.release_.schema
    return synth.marginal_summary(report) if schema is not None and schema.declared else synth.summary(report)


def _summary_json(synth: SmoothSynthesizer, report: dict) -> str:
    """:func:`_summary`'s JSON text."""
    return _summary(synth, report).to_json()


def schema_command(args: argparse.Namespace) -> int:
    """Draft a schema from the data (NOT private: marked as a draft) and write it atomically."""
    if args.max_levels < 2:
        raise SynthDPError("--max-levels must be an integer >= 2")
    _check_outputs({"--output": args.output}, {"the input": args.input}, overwrite=args.overwrite)
    import pandas as pd

    from synthdp.reader.draft import draft_schema
    from synthdp.reader.table import read_table_frame, stored_parquet_index

    csv_format = _csv_format(args.sep, args.encoding, args.decimal, args.thousands, path=args.input)
    frame = read_table_frame(args.input, "input file", csv_format)
    if not is_parquet(args.input):
        # pandas reads a CSV's true/false/TRUE/FALSE as truth values, which the draft would write as the levels
        # "True" and "False"; a release reads a binary or categorical column as its text, as written: read so
        truth = [name for name in frame.columns if pd.api.types.is_bool_dtype(frame[name]) or (
            frame[name].dtype == object and pd.api.types.infer_dtype(frame[name], skipna=True) == "boolean")]
        if truth:
            frame = read_table_frame(args.input, "input file", csv_format, as_text=truth)
    content, notes = draft_schema(frame, args.max_levels)
    stored = stored_parquet_index(args.input)
    if stored:
        notes.append(f"the file stores a pandas index ({', '.join(repr(name) for name in stored)}), which is not a "
                     "column of the table and is not in the draft: write the file with df.reset_index().to_parquet("
                     "path) to release it")
    _write_outputs([(Path(args.output), _text(_schema_json(content)))], overwrite=args.overwrite)
    for note in notes:
        print(f"synthdp: note: {note}", file=sys.stderr)
    print(f"synthdp: wrote a draft schema of {len(content['columns'])} columns to {_named(args.output)}; it was read "
          "from the data and is NOT private: replace its bounds, levels and values with public knowledge, then delete its "
          "\"draft\" entry", file=sys.stderr)
    return 0


def _schema_json(content: dict) -> str:
    """A schema as JSON with one line per column, for editing by hand."""
    lines = [f"  {json.dumps(key)}: {json.dumps(value)}" for key, value in content.items() if key != "columns"]
    columns = [f"    {json.dumps(name)}: {json.dumps(spec)}" for name, spec in content["columns"].items()]
    lines.insert(1, '  "columns": {\n' + ",\n".join(columns) + "\n  }")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def _printable(text: str) -> str:
    """Text of a file (a budget file's command, time or table, which a hand can edit) as the terminal shows
    it: a control character (an escape sequence that would clear the screen or retitle the window, a
    newline that would forge a line) written as its escape, ``\\x1b``, the rest as it is."""
    return "".join(repr(char)[1:-1] if unicodedata.category(char) == "Cc" else char for char in text)


def budget_command(args: argparse.Namespace) -> int:
    """A budget file's lifetime budget, spend, reservations and remainder, with its releases (read only)."""
    from synthdp.privacy.lifetime import status

    state = status(args.budget_file)
    if args.json:
        print(json.dumps(state, indent=1))
        return 0

    def pair(entry: dict) -> str:
        return f"epsilon {entry['epsilon']:.6g}, delta {delta_text(entry['delta'])}"

    unit = state["privacy_unit"]
    kept = ("by the next release's unit (rows or a column's)" if not state["unit_declared"]
            else "by row" if unit is None else f"by unit {unit!r}")
    lines = [f"budget file '{state['path']}', kept {kept} "
             f"({state['composition']})",
             f"  lifetime:  {pair(state['lifetime'])}",
             f"  spent:     {pair(state['spent'])} in {state['spent']['releases']} release(s)",
             f"  running:   {pair(state['pending'])} in {state['pending']['releases']} release(s)",
             f"  remaining: {pair(state['remaining'])}"]
    if state["not_private"]:
        lines.append(f"  note: {state['not_private']} release(s) were not differentially private (bounds or levels "
                     "from the data, a seed): what they made public no budget covers")
    if state["releases"]:
        lines += ["", f"  {'started':<25} {'command':<10} {'epsilon':>9} {'delta':>9}  {'state':<8} {'private':<8} table"]
        private = {True: "yes", False: "NO", None: "unknown"}
        lines += [f"  {_printable(entry['started'] or ''):<25} {_printable(entry['command']):<10} "
                  f"{entry['epsilon']:>9.4g} {delta_text(entry['delta']):>9}  {entry['state']:<8} "
                  f"{private[entry['differentially_private']]:<8} {_printable(entry['table'] or '(not recorded)')}"
                  for entry in state["releases"]]
    print("\n".join(lines))
    return 0


def infer_command(args: argparse.Namespace) -> int:
    """Estimates, standard errors and intervals of common statistics from a release's copies."""
    import pandas as pd

    from synthdp.evaluation.inference import (
        REFERENCE_FACTOR,
        common_statistics,
        copies_info_path,
        copy_files,
        infer,
        load_copies,
        share_value_occurs,
    )

    shares = []
    for share in args.share:
        name, equals, value = share.partition("=")
        if not equals or not name:
            raise SynthDPError(f"--share takes COL=VALUE; got '{share}'")
        shares.append((name, value))
    statistic = common_statistics(args.mean, shares, [tuple(g) for g in args.group_mean],
                                  [tuple(c) for c in args.corr], args.ols)
    if args.output:
        _check_outputs({"--output": args.output},
                       {"the synthetic table": args.copies, "the copies' description": str(copies_info_path(args.copies)),
                        **{f"the copy '{path.name}'": str(path) for path in copy_files(args.copies)}},
                       overwrite=args.overwrite)
    copies = load_copies(args.copies)
    for column, by in args.group_mean:  # a continuous column would make a group of nearly every row
        values = pd.to_numeric(copies.reference[by], errors="coerce") if by in copies.reference.columns else None
        if values is not None and values.notna().any() and (values.dropna() % 1 != 0).any():
            raise SynthDPError(f"--group-mean {column} {by}: '{by}' is continuous in the copies (values that are not "
                               "whole numbers), so nearly every row would be a group of its own: group by a column of "
                               f"few values (declare '{by}' an integer, binary or categorical column when you release, "
                               f'e.g. {{"{by}": {{"bounds": [0, 1], "type": "integer"}}}} in --bounds)')
    result = infer(copies, statistic, level=args.level)  # warns where a statistic reads a pair not measured
    for name, value in shares:  # a value no row takes (a typo, a level the schema does not have): say so
        if name in copies.reference.columns and not share_value_occurs(copies.reference[name], value):
            warnings.warn(f"--share {name}={value}: no row of the copies' reference sample ({REFERENCE_FACTOR} n rows of "
                          "the fitted distribution) has that value, so its share is 0 in every copy: check the value",
                          UserWarning, stacklevel=2)
    if args.output:
        _write_outputs([(Path(args.output), _text(result.rename_axis("statistic").reset_index().to_csv(index=False)))],
                       overwrite=args.overwrite)
    else:
        sys.stdout.write(result.to_string(float_format=lambda v: f"{v:.6g}") + "\n")
    return 0


def marginal_command(args: argparse.Namespace) -> int:
    from synthdp.domain.schema import Schema, columns_without_bounds, load_schema_file
    from synthdp.reader.table import read_table_frame
    from synthdp.summaries.marginal import MarginalSummary, marginal

    columns = [name.strip() for name in args.columns.split(",")]
    if args.output:  # before any work, as --overwrite's help says
        _check_outputs({"--output": args.output},
                       {"the table": args.table, "the summary": args.summary, "the schema file": args.schema},
                       overwrite=args.overwrite)
    if args.summary:
        if args.schema:
            raise SynthDPError("--schema goes with --table; a summary holds its own schema")
        answer = MarginalSummary.load(args.summary).marginal(columns)
    else:
        if not args.schema:
            raise SynthDPError("--table needs --schema")
        content = load_schema_file(args.schema)
        csv_format = _csv_format(args.sep, args.encoding, args.decimal, args.thousands, path=args.table)
        frame = read_table_frame(args.table, "table", csv_format)  # CSV, or Parquet as sample writes it
        # the schema over its own columns (the table may hold others: a privacy unit's identifiers); a numeric
        # column's bounds, which a marginal of levels does not use, may be left to --bounds-share
        unbounded = columns_without_bounds(content, list(content["columns"]))
        # a column left to DP discovery ("levels": "discover", as a draft gives a privacy unit's identifiers) has
        # no levels to count: left out unless asked for, and then named with where its levels are
        discover = [name for name, spec in content["columns"].items()
                    if isinstance(spec, dict) and spec.get("levels") == "discover"]
        asked = next((name for name in columns if name in discover), None)
        if asked is not None:
            raise SynthDPError(f"column '{asked}' says \"levels\": \"discover\" in the schema: give its levels there "
                               "to count them (a release lists those it kept in its report's schema.columns)")
        content = {**content, "columns": {name: {**spec, "bounds": [0, 1]} if name in unbounded else spec
                                          for name, spec in content["columns"].items() if name not in discover}}
        schema = Schema.from_dict(content, list(content["columns"]), f"schema file '{args.schema}'",
                                  value_blocks=False)
        answer = marginal(frame, columns, schema)
    text = answer.reset_index().to_csv(index=False)
    if args.output:
        _write_outputs([(Path(args.output), _text(text))], overwrite=args.overwrite)
    else:
        sys.stdout.write(text)
    return 0


def evaluate(args: argparse.Namespace) -> int:
    if args.queries < 1:
        raise SynthDPError("--queries must be an integer >= 1")
    if not 0 <= args.seed < 2**32:
        raise SynthDPError("--seed must be an integer in [0, 2^32)")
    if args.privacy_report and not args.html:
        raise SynthDPError("--privacy-report goes with --html (the page shows it)")
    copy_inputs = {}
    if args.copies:
        from synthdp.evaluation.inference import copy_files

        copy_inputs = {f"the copy '{path.name}'": str(path) for path in copy_files(args.synth)}
    if args.html:
        _check_outputs({"--html": args.html}, {"the real table": args.real, "the synthetic table": args.synth,
                                               "the bounds file": args.bounds, "the schema file": args.schema,
                                               "the privacy report": args.privacy_report, **copy_inputs},
                       overwrite=args.overwrite)
        from synthdp.evaluation.html import private_matplotlib_dir

        private_matplotlib_dir()  # an unwritable HOME: a private config folder, not matplotlib's warning on stderr
        try:
            import matplotlib  # noqa: F401  (optional: only the page needs it)
        except ImportError:
            raise SynthDPError("--html needs matplotlib (pip install matplotlib)") from None
    from synthdp.domain.box import load_bounds_file, read_json_file
    from synthdp.domain.schema import Schema, load_schema_file, schema_text_columns
    from synthdp.evaluation.metrics import format_report, utility_report

    bounds = load_bounds_file(args.bounds) if args.bounds else None
    content = load_schema_file(args.schema) if args.schema else None
    if content is not None:
        from synthdp.evaluation.mixed import check_schema_bounds

        check_schema_bounds(content)
    privacy = read_json_file(args.privacy_report, "privacy report") if args.privacy_report else None
    if isinstance(privacy, dict) and isinstance(privacy.get("privacy_report"), dict):  # a summary file holds one
        privacy = privacy["privacy_report"]
    if privacy is not None and not (isinstance(privacy, dict) and isinstance(privacy.get("privacy"), dict)):
        raise SynthDPError(f"privacy report '{args.privacy_report}' has no \"privacy\" section (write it with "
                           "synthdp generate --report)")
    from synthdp.domain.schema import bounds_schema, declared_time_columns, nullable_numeric_columns

    csv_format = _csv_format(args.sep, args.encoding, args.decimal, args.thousands, path=args.real)
    synth_format = _csv_format(args.synth_sep, args.synth_encoding, args.synth_decimal, args.synth_thousands,
                               "--synth-", path=args.synth)
    inferred = False
    if bounds is None and content is None:  # no types given: inferred from the real table (not private)
        from synthdp.evaluation.column_types import infer_schema, inference_note, needs_schema
        from synthdp.reader.table import read_table_frame

        real_frame = read_table_frame(args.real, "real table", csv_format)
        if real_frame.empty:  # named here: infer_schema's own error does not know the file
            raise SynthDPError(f"real table '{args.real}' has no rows or no columns: nothing to compare")
        # the unit column is left out of the scores: it neither types the table nor counts in the note
        guess = infer_schema(real_frame.drop(columns=[args.privacy_unit], errors="ignore"))
        if needs_schema(guess):  # text, binary, code or date columns, or missing cells: compared as typed
            content, inferred = guess, True
            if not args.quiet:
                print(f"synthdp: note: {inference_note(guess)}", file=sys.stderr)
    # each file: its path, label, format and the prefix of the options its errors name
    files = ((args.real, "real table", csv_format, "--"), (args.synth, "synthetic table", synth_format, "--synth-"))
    text_columns = schema_text_columns(content) if content is not None else ()
    declared = content if content is not None else bounds_schema(bounds or {})  # as the release reads them
    nullable, times = nullable_numeric_columns(declared), declared_time_columns(bounds, content)
    unit = args.privacy_unit
    if unit is not None:  # the unit column is not synthesized: its bounds or schema entry are not needed
        from synthdp.pipeline.run import without_column

        bounds, content = without_column(bounds, unit), without_column(content, unit)
    from synthdp.evaluation.metrics import check_same_columns
    from synthdp.reader.table import table_header

    # each table's columns, from its header or footer, before any cell is read: a table of other columns is
    # named as that, not by its first cell the other's types do not fit
    headers = [table_header(path, label, file_format, options) for path, label, file_format, options in files]
    for (path, label, _, _), names in zip(files, headers):
        if unit is not None and unit not in names:
            raise SynthDPError(f"{label} '{path}' has no column '{unit}' (--privacy-unit){near_column(unit, names)}")
    check_same_columns(*([name for name in names if name != unit] for names in headers))
    if privacy is not None:
        _check_release_columns(privacy, args.privacy_report, [name for name in headers[1] if name != unit])
    as_text = (*text_columns, *(() if unit is None else (unit,)))
    real, synth = (_read_table(path, label, file_format, as_text, nullable, times, options)
                   for path, label, file_format, options in files)
    units = None
    if unit is not None:
        units, real, synth = _unit_counts(unit, real, synth)
    missing = {name: {"real": float(real[name].isna().mean()), "synthetic": float(synth[name].isna().mean())}
               for name in real.columns if name in synth.columns and (real[name].isna().any() or synth[name].isna().any())}
    # a nullable numeric column missing in every row of one table has no rows to compare: its shares above say
    # so, and the other columns are scored without it (kept, no row would be left for any score)
    empty = [name for name in nullable if real[name].isna().all() or synth[name].isna().all()]
    if args.target in empty:
        raise SynthDPError(f"target column '{args.target}' (--target) is missing in every row of the "
                           f"{'real' if real[args.target].isna().all() else 'synthetic'} table: no model can learn it")
    if empty:
        from synthdp.pipeline.run import without_column
    for name in empty:
        real, synth = real.drop(columns=name), synth.drop(columns=name)
        bounds, content = without_column(bounds, name), without_column(content, name)
    declared_nullable = nullable  # as the copies are read: their cells of the columns left out may be missing too
    nullable = tuple(name for name in nullable if name not in empty)
    if empty and not len(real.columns):  # not "the real table has no columns": it has, each left out
        raise SynthDPError(f"{', '.join(empty)}: missing in every row of one table, and no other column to compare")
    origin = "the inferred schema" if inferred else f"schema file '{args.schema}'"
    schema = (Schema.from_dict(content, [str(c) for c in real.columns], origin)
              if content is not None else None)
    whole_real = real  # the copies' statistics read each column's present cells, as the real value must
    if nullable:  # the numeric metrics compare the rows whose nullable numeric cells are present
        real, synth = real.dropna(subset=list(nullable)), synth.dropna(subset=list(nullable))
        if len(real) < 2 or len(synth) < 2:
            side = "real" if len(real) < 2 else "synthetic"
            raise SynthDPError(f"fewer than 2 rows of the {side} table without missing cells in the nullable columns "
                               f"({', '.join(nullable)}): nothing to compare")
    report = utility_report(real, synth, bounds, args.target, task=args.task, n_queries=args.queries, seed=args.seed,
                            schema=schema, sdmetrics=not args.no_sdmetrics)
    if args.copies:
        from synthdp.evaluation.inference import check_against_real, load_copies

        synth_path, label, synth_options, prefix = files[1]  # each copy read as the synthetic table is
        copies = load_copies(args.synth, reader=lambda path: _read_table(str(path), f"the copy '{path.name}' of the "
                                                                         f"{label}", synth_options, as_text,
                                                                         declared_nullable, times, prefix))
        report["intervals"] = check_against_real(whole_real, copies, report["columns"]["numeric"])
    if missing:
        report = {"missing_cells": {"share_of_rows": missing, "note": _missing_note(nullable, empty)}, **report}
    if units is not None:  # exact counts of the real table, not the release's noisy ones
        report = {"real_privacy_unit_counts": units, **report}
    report = {"differentially_private": False, "note": report["note"], **report}  # the label first
    if args.html:
        from synthdp.evaluation.html import render_html

        page = render_html(report, real, synth, schema=schema, privacy_report=privacy)
        _write_outputs([(Path(args.html), lambda path: path.write_text(page, encoding="utf-8"))],
                       overwrite=args.overwrite)
    text = (json.dumps(_finite(report), indent=2, default=_json_default, allow_nan=False) + "\n" if args.json
            else format_report(report))
    if units is not None and not args.json:
        text = f"privacy unit '{unit}': " + "; ".join(
            f"{side} {units[side]['units']} units, rows per unit mean {units[side]['rows_per_unit_mean']:.1f}, "
            f"max {units[side]['rows_per_unit_max']}" for side in ("real", "synthetic")) + "\n" + text
    if missing and not args.json:
        text = "missing cells (share of rows): " + "; ".join(
            f"{name} real {rates['real']:.3f} synthetic {rates['synthetic']:.3f}" for name, rates in missing.items()
        ) + f"\n({_missing_note(nullable, empty)})\n" + text
    if not args.json:
        text = f"NOTE: {report['note']}\n" + text
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader stopped early (e.g. | head): not an error
        _quiet_stdout()
    if args.html and not args.quiet:
        print(f"synthdp: wrote the report page to {_named(args.html)}", file=sys.stderr)
    return 0


def _unit_counts(unit: str, real, synth):
    """People and rows per person in each table (the real ones are the user's own data, as every
    other score here), and both tables without the unit column (which :func:`evaluate` checked
    both headers for)."""
    counts: dict[str, object] = {"column": unit}
    for side, frame in (("real", real), ("synthetic", synth)):
        if frame[unit].isna().any():  # generate refuses them too; value_counts would leave those rows out
            raise SynthDPError(f"the {side} table's privacy unit column '{unit}' has missing values: every row "
                               "needs its unit (--privacy-unit)")
        sizes = frame[unit].astype(str).value_counts()
        counts[side] = {"units": int(len(sizes)), "rows_per_unit_mean": float(sizes.mean()),
                        "rows_per_unit_max": int(sizes.max())}
    return counts, real.drop(columns=[unit]), synth.drop(columns=[unit])


def _read_table(path: str, label: str, csv_format, text_columns=(), nullable=(), time_columns=None, options="--"):
    """A CSV of numeric, finite columns, checked as ``generate`` checks its input (its errors' hints
    name the CSV options with the prefix ``options``); the
    ``text_columns`` (a schema's binary and categorical ones) are kept as they are, the
    ``nullable`` numeric columns may have missing cells, and the ``time_columns`` (name ->
    "date" or "datetime") are read as days or seconds since 1970-01-01, as the release reads them."""
    import pandas as pd

    from synthdp.reader.dates import with_time_values
    from synthdp.reader.table import check_column_names, check_row_count, chunk_values, read_table_frame

    frame = read_table_frame(path, label, csv_format, options=options)
    try:
        names = check_column_names(frame.columns)
        check_row_count(len(frame))
        frame = with_time_values(frame, names, time_columns or {})
        numeric = [name for name in names if name not in text_columns]
        values = chunk_values(frame[numeric], numeric, missing_allowed=nullable)
    except SynthDPError as error:  # the reader's message names the column and what to declare
        raise SynthDPError(f"{label} '{path}': {error}") from None
    columns = dict(zip(numeric, values.T))
    return pd.DataFrame({name: columns[name] if name in columns else frame[name].to_numpy() for name in names},
                        columns=names)


def _finite(value):
    """``value`` with every NaN replaced by None (null, as the report's other undefined numbers) and every
    infinite float by its name ("inf", "-inf"): JSON has no such numbers."""
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if hasattr(value, "tolist"):  # a numpy array or scalar, as _json_default writes it
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else str(value)
    return value


def _fit(args: argparse.Namespace, synthesize: bool) -> tuple[SmoothSynthesizer, dict]:
    """What every command does first: resolve the options, check the output folders, fit."""
    options = _options(args)
    run = {key: options.pop(key, None) for key in RUN_KEYS}
    if "n_basis" in options:
        options["n_basis"] = _int_or_word(options["n_basis"], "auto", "--n-basis")
    for key in NUMBER_OR_AUTO & options.keys():
        options[key] = _float_or_auto(options[key], "--" + key.replace("_", "-"))
    config = SynthConfig(**options)
    outputs = {"--output": args.output, "--report": run["report"], "--summary-out": run["summary_out"],
               "--model-out": run["model_out"]}
    if run["rows"] not in (None, "theory"):  # before the fit, not after it; read once, as a number from here on
        run["rows"] = _int_or_word(run["rows"], "theory", "--rows")
        if run["rows"] < 1:
            raise SynthDPError("--rows must be an integer >= 1 or 'theory'")
    if run["copies"] is not None:
        run["copies"], copy_outputs = _checked_copies(run["copies"], args.output, run["rows"])  # a number from here on
        outputs.update(copy_outputs)
    _check_outputs(outputs, {"the input": args.input, "the bounds file": run["bounds"],
                             "the schema file": run["schema"], "the config file": args.config}, overwrite=args.overwrite)
    if args.command == "generate":  # a Parquet table needs its writer: refused before any budget is spent
        check_table_output(args.output)
    from synthdp.domain.box import load_bounds_file
    from synthdp.domain.schema import load_schema_file
    from synthdp.synthesizer import SmoothSynthesizer

    bounds = load_bounds_file(run["bounds"]) if run["bounds"] else None
    schema = load_schema_file(run["schema"]) if run["schema"] else None
    from synthdp.domain.schema import bounds_schema

    # the schema, or the one the bounds amount to where they declare a nullable column: a mixed table
    declared = schema if schema is not None else bounds_schema(bounds) if bounds else None
    _warn_idle_options(options, config, mixed=declared is not None)
    if run["data_timings"] and not run["report"]:  # the times go into the report alone (_with_data_timings)
        warnings.warn("--data-timings acts only with --report: ignored in this run", UserWarning, stacklevel=1)
    csv_format = _csv_format(run["sep"], run["encoding"], run["decimal"], run["thousands"], path=args.input)
    _check_summary_output(run, config, declared, synthesize)
    _check_sizes(run, args.input, csv_format)
    synth = SmoothSynthesizer.from_config(config, progress=_progress(run["quiet"]))
    if run["budget_file"]:  # before the data is read: refused here if the table's budget would be exceeded
        from synthdp.privacy import lifetime

        budget = Path(os.path.realpath(run["budget_file"]))
        for flag, path in outputs.items():  # the lock: made by reserve
            for name, what in ((budget, "the budget file"), (lifetime.lock_path(budget), "the budget file's lock")):
                if path and _same_file(Path(path), name):
                    raise SynthDPError(f"{flag} '{path}' is {what}: choose another output path (nothing was "
                                       "written)")
        args.reservation = lifetime.reserve(run["budget_file"], args.command, config.epsilon, config.delta,
                                            run["lifetime_epsilon"], run["lifetime_delta"], config.privacy_unit,
                                            table=os.path.realpath(args.input))
    elif run["lifetime_epsilon"] is not None or run["lifetime_delta"] is not None:
        raise SynthDPError("--lifetime-epsilon and --lifetime-delta declare a --budget-file's budget: give the file")
    from synthdp.config import IdleOptionWarning

    with warnings.catch_warnings():  # _warn_idle_options named them as flags already
        warnings.simplefilter("ignore", IdleOptionWarning)
        # the fit charges the reservation once a stage has released (its error may carry a value computed
        # from a noisy statistic), or drops it where the fit fails before any stage did
        synth.fit(args.input, bounds, bool(run["bounds_from_data"]), synthesize=synthesize, schema=schema,
                  csv_format=csv_format, budget_file=getattr(args, "reservation", None))
    return synth, run


def _report_output(report: dict, run: dict) -> list:
    if not run["report"]:
        return []
    return [(Path(run["report"]), _text(json.dumps(report, indent=2, default=_json_default) + "\n"))]


def _text(content: str) -> Callable[[Path], object]:
    # utf-8, as the synthetic table and every file synthdp reads by default: not the locale's (Windows: cp1252)
    return lambda path: path.write_text(content, encoding="utf-8")


def _budget_note(report: dict) -> str:
    privacy = report["privacy"]
    return (f"; epsilon={privacy['epsilon_spent']:.4g}, delta={delta_text(privacy['delta_spent'])}"
            + ("" if privacy["differentially_private"] else " (NOT differentially private: see report)"))


def _model_writer(synth: SmoothSynthesizer, final: str | Path) -> Callable[[Path], None]:
    """The writer of a model file for :func:`_write_outputs`: it writes into the temporary file made for it,
    which exists (the output itself was checked before any work, --overwrite included: :func:`_check_outputs`).
    Its error (a full disk) names ``final``, the model file, not the temporary file."""
    def write(path: Path) -> None:
        try:
            synth.save(path, overwrite=True)
        except SynthDPError as error:
            raise SynthDPError(str(error).replace(f"'{path}'", f"'{final}'")) from None
    return write


def _write_outputs(outputs: list[tuple[Path, Callable[[Path], object]]], overwrite: bool = False) -> None:
    """Write each output to a temporary file beside it, then rename them all into place.

    Nothing is renamed before every output has been written, so a failure leaves no
    partial output (and the temporary files are removed). With a budget file, the release was
    charged there when its fit released (:func:`_fit`), before the first byte is written.
    Without ``overwrite`` (the command's --overwrite) each is linked into place instead, which fails
    where a file of that name appeared while the command ran (another command's output: a rename
    would replace it); the outputs linked before it are then removed, so none is left.
    """
    with ExitStack() as cleanup:
        pending = []
        for final, write in outputs:
            stream = _written_into(final)  # /dev/null, a named pipe, /dev/stdout: written into at the end
            real = final if stream else Path(os.path.realpath(final))  # through a link: its target is replaced
            try:
                temporary = temporary_beside(None if stream else real, cleanup)
                write(temporary)
                if not stream:
                    synced(temporary)  # whole on disk before it is renamed into place
            except OSError as error:  # a full disk, a folder gone: the output's own name, not its temporary file's
                raise _OutputNotWritten(error.errno, error.strerror or type(error).__name__, str(final)) from None
            pending.append((temporary, real, stream))
        _RENAMING.append(True)  # Ctrl-C during the renames lets every file reach its place, not some of them
        placed: list[tuple[Path, os.stat_result]] = []
        try:
            for temporary, real, stream in pending:
                if stream:
                    continue
                if overwrite:
                    os.replace(temporary, real)
                    continue
                made = os.stat(temporary)
                link_new(temporary, real, SynthDPError(
                    f"'{real}' appeared while this command ran (another command's output?): pass --overwrite to "
                    "replace it, or choose another path (nothing was written)"))
                placed.append((real, made))
        except BaseException:
            for real, made in placed:  # this run's own (the file it wrote, linked or renamed there): removed
                with contextlib.suppress(OSError):
                    now = os.lstat(real)
                    if (now.st_dev, now.st_ino) == (made.st_dev, made.st_ino):
                        os.unlink(real)
            raise
        finally:
            deferred = _RENAMING[1:]
            _RENAMING.clear()
        streams = [(temporary, real) for temporary, real, stream in pending if stream]
        # what a Ctrl-C from here on says was written
        _PLACED.extend((["files"] if len(streams) < len(pending) else []) + ([] if streams else ["all"]))
        if deferred:
            raise _StoppedAfterWriting(deferred[0])
        _PLACED.append("streams")
        for temporary, real in streams:  # a pipe may block until read: stays interruptible
            try:
                if _is_standard_output(real):
                    # into the descriptor this process was given, as it was opened: opened again by name
                    # (/proc/self/fd/1) it was truncated, so "-o - >> FILE" emptied FILE and lost what came before
                    with open(temporary, "rb") as source:
                        sys.stdout.flush()
                        shutil.copyfileobj(source, sys.stdout.buffer)
                        sys.stdout.buffer.flush()
                else:
                    with open(temporary, "rb") as source, open(real, "wb") as target:
                        shutil.copyfileobj(source, target)
            except BrokenPipeError:  # its reader stopped early: not an error (_run)
                raise
            except OSError as error:  # a full device: named, and the error says the files were written (_run)
                raise _OutputNotWritten(error.errno, error.strerror or type(error).__name__,
                                        _named(STANDARD_OUTPUT if _is_standard_output(real) else real)) from None
        _PLACED.append("all")


def _progress(quiet: bool) -> bool:
    """Whether a command draws its progress bars: not with ``--quiet``, and only on a terminal (a log file
    or a pipe would keep every redraw of the bar, as pip and apt leave them out there)."""
    stream = sys.stderr
    return not quiet and stream is not None and stream.isatty()


def _named(path: str | Path) -> str:
    """An output as the closing line names it: "standard output" for ``-`` (:data:`STANDARD_OUTPUT`)."""
    return "standard output" if str(path) == STANDARD_OUTPUT else str(path)


def _is_standard_output(path: Path) -> bool:
    """Whether an output path names this process's standard output (``-o -``, ``/dev/stdout``)."""
    return os.path.abspath(path) in (STANDARD_OUTPUT, "/proc/self/fd/1", "/dev/fd/1")


def _check_release_columns(privacy: dict, path: str, names: Sequence[str]) -> None:
    """Refuse a privacy report (``evaluate --privacy-report``) whose release has other columns than the
    synthetic table: the report of another release, whose budget the page would show as this one's."""
    entry = privacy.get("schema") if isinstance(privacy.get("schema"), dict) else privacy.get("bounds")
    columns = entry.get("columns") if isinstance(entry, dict) else None
    if not isinstance(columns, dict):  # a report that does not list its columns: nothing to check
        return
    absent = [name for name in names if name not in columns]
    other = [name for name in columns if name not in names]
    if absent or other:
        differences = ([f"the synthetic table's {', '.join(absent[:3])}{', ...' if len(absent) > 3 else ''} "
                        "not in its release"] if absent else []) + (
                       [f"its {', '.join(other[:3])}{', ...' if len(other) > 3 else ''} not in the synthetic table"]
                       if other else [])
        unit_entry = privacy["privacy"].get("privacy_unit")
        unit = unit_entry.get("column") if isinstance(unit_entry, dict) else None
        hint = (f"give --privacy-unit '{unit}' (the release's privacy unit column)" if unit in absent
                else "give this release's report (generate --report)")
        raise SynthDPError(f"privacy report '{path}' is of a release of other columns ({'; '.join(differences)}): "
                           + hint)


def _missing_note(nullable: Sequence[str], empty: Sequence[str]) -> str:
    """What evaluate's scores compare where nullable columns have missing cells (``empty``: the nullable
    numeric columns missing in every row of one table, left out of the scores)."""
    notes = (["the scores compare the rows whose nullable numeric cells are present"] if nullable else []) + (
        [f"{', '.join(empty)}: missing in every row of one table, so left out of the scores"] if empty else [])
    return "; ".join(notes) or ("a binary or categorical column's missing cells are scored as a cell of their own, "
                                "(missing), where it is nullable, else as its other level")


def _options(args: argparse.Namespace) -> dict:
    """Merge the config file with the explicit flags (flags win)."""
    allowed = set(SynthConfig.keys()) | RUN_KEYS
    options: dict = {}
    if args.config:
        try:
            content = tomllib.loads(read_text_file(args.config, "config file"))  # TOML is UTF-8
        except (FileNotFoundError, IsADirectoryError):
            raise absent_file("config file", args.config) from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError):  # bytes that are no UTF-8; arrays
            # nested thousands deep
            raise SynthDPError(f"config file '{args.config}' is not valid TOML") from None
        for key, value in content.items():
            name = key.replace("-", "_")
            if name not in allowed:
                raise SynthDPError(f"config file '{args.config}' has unknown key '{key}'")
            if name in options:  # n_basis and n-basis: one key, given twice
                raise SynthDPError(f"config file '{args.config}' gives '{name}' twice (dashes and underscores are "
                                   "the same key)")
            _check_config_value(args.config, key, RUN_KEY_KINDS.get(name), value)
            options[name] = value
    for name in allowed:
        value = getattr(args, name, None)
        if value is not None:
            options[name] = value
    return options


def _warn_idle_options(options: dict, config: SynthConfig, mixed: bool) -> None:
    """A warning for each option given (flag or config file) that the run will not use, as a user
    who sets --pca-share without --candidates pca would otherwise not learn that it did nothing.
    ``mixed``: the table is released as a mixed one (a schema, or bounds declaring a nullable column)."""
    from synthdp.config import idle_options

    for given, needs, _ in idle_options(options, config, mixed):
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        warnings.warn(f"{flags} act{'s' if len(given) == 1 else ''} only with {needs}: ignored in this run",
                      UserWarning, stacklevel=2)


def _check_config_value(path: str, key: str, kind: type | None, value: object) -> None:
    """A config file's value of a run key has its flag's type: ``quiet = "false"`` is an error, not
    true (a string is truthy: ``bounds_from_data = "false"`` would read the bounds from the data)."""
    if kind is bool and not isinstance(value, bool):
        raise SynthDPError(f"config file '{path}': {key} must be true or false")
    if kind is str and not isinstance(value, str):
        raise SynthDPError(f"config file '{path}': {key} must be text in quotes")
    if kind is float and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise SynthDPError(f"config file '{path}': {key} must be a number")


def _float_or_auto(value, flag: str) -> float | None:
    """``value`` (a flag's text or a config file's number) as a float, or None for 'auto'; an error
    for anything else (true or false included). The config checks its range."""
    if value == "auto":
        return None
    if not isinstance(value, bool):
        try:
            return float(value)
        except (TypeError, ValueError, OverflowError):
            pass
    raise SynthDPError(f"{flag} must be a number or 'auto'")


def _int_or_word(value, word, flag: str):
    """``value`` as an integer (a flag's text or a config file's integer), or ``word`` itself; an
    error for anything else: a fraction (10.7 is not 10 rows), any float (20.0, refused as the
    config's other integer keys refuse it), true or false."""
    if value is None or value == word:
        return value
    choices = f"an integer or '{word}'" if word else "an integer"
    if isinstance(value, (bool, float)):
        raise SynthDPError(f"{flag} must be {choices}")
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise SynthDPError(f"{flag} must be {choices}") from None


def _check_outputs(outputs: dict[str, str | None], inputs: dict[str, str | None], overwrite: bool = False) -> None:
    """Refuse, before anything is read or written, an output that is a folder, lies in a
    missing folder, is one of the inputs (also through links or another spelling of the
    path), is another output of the same run, or is a file that exists (unless ``overwrite``,
    the command's --overwrite): the user's files are never overwritten unasked. An output that
    exists and is not a regular file (/dev/null, a named pipe, /dev/stdout on a terminal) is
    written into, not replaced (:func:`_write_outputs`)."""
    given = {flag: path for flag, path in outputs.items() if path is not None}
    seen: dict[str, str] = {}
    for flag, path in given.items():
        if not str(path).strip():
            raise SynthDPError(f"{flag} is empty: give the path of a file (nothing was read or written)")
        if str(path).endswith(("/", os.sep)) and not Path(path).is_dir():  # pathlib would drop the slash: 'x/' is x
            raise SynthDPError(f"{flag} '{path}' ends with a slash: give the path of a file, not of a folder")
        _check_writable(Path(path))
        for label, source in inputs.items():
            if source and _same_file(Path(path), Path(source)):
                raise SynthDPError(f"{flag} '{path}' is {label}: choose another output path (nothing was written)")
        if Path(os.path.realpath(path)).is_file() and not overwrite and not _written_into(Path(path)):
            raise SynthDPError(f"{flag} '{path}' exists: pass --overwrite to replace it, or choose another path "
                               "(nothing was written)")
        key = _path_key(path)
        if key in seen:
            raise SynthDPError(f"{flag} '{path}' is also {seen[key]}: give each output its own path")
        seen[key] = flag


def _written_into(path: Path) -> bool:
    """Whether an output path is a stream to write into rather than a file to replace: it exists and
    is not a regular file (/dev/null, a named pipe), or is a process's open file (/dev/stdout: by its
    name too, where a system shows it as the regular file it was redirected to, with no /proc)."""
    if _is_standard_output(path):
        return True
    if not path.exists():
        return False
    if not path.is_file():
        return True
    name = os.path.abspath(path)
    for _ in range(40):  # the links on the way: /dev/stdout -> /proc/self/fd/1 -> the shell's file
        if name.startswith("/proc/"):
            return True
        folder, link = os.path.realpath(os.path.dirname(name)), os.path.basename(name)
        name = os.path.join(folder, link)
        if name.startswith("/proc/") or not os.path.islink(name):
            return name.startswith("/proc/")
        name = os.path.join(folder, os.readlink(name))
    return False


def _path_key(path: str | Path) -> str:
    """A path's real path, its case folded where the system's default file systems ignore case (macOS's
    APFS, Windows's NTFS): there 'out.csv' and 'OUT.csv' are one file, also before either exists."""
    real = os.path.realpath(path)
    return real.casefold() if sys.platform in ("darwin", "win32") else real


def _same_file(first: Path, second: Path) -> bool:
    """Whether two paths name one file: the same real path (:func:`_path_key`), or (both existing) the same inode."""
    if _path_key(first) == _path_key(second):
        return True
    try:
        return first.exists() and second.exists() and os.path.samefile(first, second)
    except OSError:
        return False


def _check_writable(path: Path) -> None:
    if path.is_dir():
        raise SynthDPError(f"output path '{path}' is a folder")
    if not path.parent.is_dir() and str(path.parent) not in ("", "."):  # a file on the way: written into nowhere
        raise SynthDPError(f"output folder '{path.parent}' " + ("is a file, not a folder" if path.parent.exists()
                                                                 else "does not exist"))
    if _written_into(path):  # /dev/null, /dev/stdout, a pipe: written into, whatever its folder allows
        if not os.access(path, os.W_OK):
            raise SynthDPError(f"output '{path}' is not writable")
    elif not os.access(path.parent if str(path.parent) else ".", os.W_OK):  # before the fit, not after it
        raise SynthDPError(f"output folder '{path.parent}' is not writable")


def _json_default(value):
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"cannot serialise {type(value).__name__}")


if __name__ == "__main__":
    sys.exit(main())
