"""A fitted model kept: sample from it later, any number of rows, under conditions, in another process.

What a release fitted (the support points and their weights, the columns' domains or schema, the
privacy unit's public shape) is itself differentially private: sampling from it spends no budget
and reads no data. :class:`SamplingModel` holds exactly that, and the privacy report.

File format (``FORMAT``, ``FORMAT_VERSION`` 4 for a model that holds its release, else 3 for a mixed
table and 1 for a numeric one; versions 1 to 4 are read): a zip archive of

* ``model.json``: ``{"format", "format_version", "synthdp_version", "rows", "columns", "domain",
  "schema", "units", "arrays", "privacy_report"}``; ``domain`` and ``schema`` are the public
  descriptions of the columns (every field, so that decoding is the fit's to the bit), ``arrays``
  the name, shape, dtype and sha256 of each array member; an optional ``"dtypes"`` (a fit on a
  DataFrame with pandas categories, booleans or datetime64 columns: :attr:`SamplingModel.dtypes`), which a
  reader that does not know it ignores, so it needs no new version (a reader of before 2026-11-30 knows
  only "category" and the datetime64 types, and refuses "bool", "boolean" and "category (ordered)" as
  an edited file); and ``"document_sha256"``, the
  sha256 of the rest of the document as canonical JSON (:func:`document_checksum`), which a reader
  that does not know it ignores too (a file without it, written before it, is read, its document
  checked field by field as every file's is);
* one ``.npy`` member per array: ``support_weights`` (float64, (S,), summing to 1); the support
  points, of a numeric table as ``support_points`` (float64, (S, d): unit coordinates), of a
  mixed table (version 3) as ``support_numeric`` (float64, (S, d): the numeric coordinates) and
  ``support_levels`` (int16 or int32, (S, k): each binary or categorical column's level, an index
  into its levels, in the schema's order; :class:`synthdp.domain.encoded.EncodedPoints`); and
  with a privacy unit ``unit_contributions`` (float64, the released contributions histogram);
* from version 4, the release itself, for copies of it (:mod:`synthdp.pipeline.copies`): the
  document's ``"release"`` (its noisy statistics, plan and configuration:
  :mod:`synthdp.pipeline.release_file`) and its arrays, ``release_0.npy``, ``release_1.npy``, ...
  A fit writes it; a model loaded from a file of an earlier version and saved again has none.

Versions 1 and 2 held a mixed table's support as ``support_points`` (float64, (S, D): the
one-hot encoded coordinates), S D numbers where version 3 holds S (d + k): 1.6 GB for 40 000
points of a column of 5 000 levels; version 2 added a categorical column's ``"other": false``.
Both are still read.

No pickle: the document is JSON, the arrays are read with ``numpy.load(allow_pickle=False)``.
A file of another format or version, a truncated or an edited one (an array whose bytes do not
match their sha256, a document that does not match its own, does not parse, lacks a field or
describes columns that cannot be decoded: a name twice, an internal column of a column that is not
there, a unit column's place or bound out of range) is refused with one line.
"""

from __future__ import annotations

import ast
import dataclasses
import datetime as dt
import hashlib
import io
import json
import math
import tokenize
import warnings
import zipfile
import zlib
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from synthdp._version import __version__
from synthdp.checks import is_finite_number, is_int
from synthdp.config import MAX_ROWS_PER_UNIT, SynthConfig
from synthdp.domain.box import ColumnDomain, Domain
from synthdp.domain.dates import EXAMPLES as TIME_EXAMPLES
from synthdp.domain.dates import iso_times
from synthdp.domain.decode import nearest_values
from synthdp.domain.encoded import EncodedPoints
from synthdp.domain.schema import MISSING_LABEL, TEXT_DTYPE, CategoricalColumn, Schema, as_float64
from synthdp.domain.units import contribution_bins, synthetic_units
from synthdp.errors import SynthDPError, absent_file, near_column, warn_user
from synthdp.files import check_new, write_in_place
from synthdp.pipeline.release_file import ARRAY_NAME, release_document, release_from
from synthdp.postprocess.sampling import clean_weights
from synthdp.released import Release, UnitsRelease

FORMAT = "synthdp-model"
FORMAT_VERSION = 4
READ_VERSIONS = (1, 2, 3, 4)
CHUNK_VALUES = 5_000_000  # values (rows x coordinates) drawn at a time: 40 MB of points
MIN_EFFECTIVE_POINTS = 100  # fewer effective support points under a condition: a warning
DATETIME_DTYPES = tuple(f"datetime64[{unit}]" for unit in ("s", "ms", "us", "ns"))  # a naive datetime column's types
OUTPUT_DATETIME = "datetime64[us]"  # what a date or datetime column fitted as one of them comes back as
ORDERED_CATEGORY = "category (ordered)"  # a binary or categorical column fitted as an ordered pandas category
BOOLEAN_DTYPES = ("bool", "boolean")  # a binary column fitted as a numpy or nullable boolean
TRUTH = {"False": False, "True": True, 0: False, 1: True}  # the levels a boolean column decodes to, as booleans
MAX_OUTPUT_VALUES = 500_000_000  # 4 GB of float64 in one in-memory sample
DOCUMENT_CHECKSUM = "document_sha256"  # the document's own checksum (:func:`document_checksum`)


@dataclass(frozen=True)
class SamplingModel:
    """A fitted distribution over public support points, and how to decode them.

    Attributes
    ----------
    points : array, shape (S, D), or EncodedPoints
        The support points, in unit coordinates (numeric tables) or the schema's encoded ones
        (a fit's mixed table's held as each column's level: :class:`~synthdp.domain.encoded.EncodedPoints`).
    weights : array, shape (S,)
        Their probabilities (non-negative, summing to 1).
    domain : Domain
        The numeric columns' domains (of a mixed table, its schema's numeric part).
    schema : Schema or None
        A mixed table's schema (its levels and encoding); None for a numeric table.
    units : UnitsRelease or None
        With a privacy unit, the unit column's name and place and the released contributions
        histogram, from which synthetic identifiers are drawn.
    rows : int
        The rows a sample has by default (the fit's n).
    report : dict
        The fit's privacy report.
    dtypes : mapping
        The pandas types the fitted DataFrame's columns had where a sample gives them back
        (:func:`input_dtypes`): ``"category"`` (``"category (ordered)"``) for a binary or categorical
        column, ``"bool"`` or ``"boolean"`` for a binary column whose levels are False and True (or 0
        and 1), ``"datetime64[us]"`` for a date or datetime column. Empty for a fit on a file.
    release : Release or None
        The release the distribution was fitted to, and ``config`` the configuration of the fit:
        what copies of the release need (:mod:`synthdp.pipeline.copies`; :func:`kept_release`). A
        model read from a file holds them as the file's document and arrays (``release_parts``),
        checked when read and made whole only for copies: a basis of many levels is not made
        whole to sample rows. None for a file written before they were kept (version 3 and earlier).
    config : SynthConfig or None
    release_parts : tuple or None
        A model file's release document and its arrays (:mod:`synthdp.pipeline.release_file`).
    release_problem : str or None
        Why a model file's release did not pass its checks when read (one line): the model samples
        rows, which do not read the release, and refuses copies and summaries with this line.
    """

    points: np.ndarray | EncodedPoints
    weights: np.ndarray
    domain: Domain
    schema: Schema | None
    units: UnitsRelease | None
    rows: int
    report: dict
    dtypes: Mapping[str, str] = dataclasses.field(default_factory=dict)
    release: Release | None = None
    config: SynthConfig | None = None
    release_parts: tuple[dict, Mapping[str, np.ndarray]] | None = None
    release_problem: str | None = None

    @property
    def names(self) -> list[str]:
        """The sampled table's columns, in order (the unit column in its place)."""
        names = list(self.schema.names) if self.schema is not None else self.domain.names
        if self.units is not None:
            names.insert(min(self.units.position, len(names)), self.units.column)
        return names

    def decode(self, points: np.ndarray | EncodedPoints, mixed_levels: bool = False) -> pd.DataFrame:
        """Points back to the table's columns, units and levels (without the unit column);
        ``mixed_levels`` as :meth:`synthdp.domain.schema.Schema.decode`'s."""
        if self.schema is not None:
            return self.schema.decode(points, mixed_levels)
        return _decode_numeric(np.asarray(points), self.domain)

    def typed(self, frame: pd.DataFrame) -> pd.DataFrame:
        """``frame`` (decoded rows) with the pandas types of :attr:`dtypes`: categories in the
        schema's order of levels ("other" last; levels the schema gives as numbers as those numbers),
        ordered where the fitted column's were, booleans (missing: NA), dates and times as
        datetime64 (missing: NaT)."""
        if not self.dtypes:
            return frame
        columns = {} if self.schema is None else {column.name: column for column in self.schema.categorical}
        frame = frame.copy()
        for name, dtype in self.dtypes.items():
            if name not in frame.columns:
                continue
            if dtype in ("category", ORDERED_CATEGORY) and name in columns:
                column = columns[name]
                values = frame[name]
                if column.numbers is not None and pd.api.types.is_numeric_dtype(values):  # as its levels' text
                    values = values.map(dict(zip(column.numbers, column.levels)))
                categories = [level for level in column.all_levels if level != MISSING_LABEL]
                typed = pd.Categorical(values, categories=categories, ordered=dtype == ORDERED_CATEGORY)
                if column.numbers is not None:  # numbers decode as numbers, or as their text beside "other"
                    typed = typed.rename_categories(dict(zip(column.levels, column.numbers)))
                frame[name] = typed
            elif dtype in BOOLEAN_DTYPES:
                frame[name] = frame[name].map(TRUTH, na_action="ignore").astype(dtype)
            elif dtype.startswith("datetime64"):
                frame[name] = iso_times(frame[name]).astype(dtype)  # the sampler's own ISO text (years 1 to 9999)
        return frame

    def chunk_rows(self) -> int:
        """Rows drawn at a time: CHUNK_VALUES over the points' width (at least 1 000)."""
        return max(1_000, CHUNK_VALUES // max(1, self.points.shape[1]))


def _decode_numeric(points: np.ndarray, domain: Domain) -> pd.DataFrame:
    from synthdp.domain.decode import decode

    return decode(points, domain)


# ---------------------------------------------------------------------- sampling
def draw_chunks(model: SamplingModel, n_rows: int, rng: np.random.Generator) -> Iterator[pd.DataFrame]:
    """``n_rows`` rows from the model, in chunks of :meth:`SamplingModel.chunk_rows` (the last shorter),
    each drawn with ``rng`` in turn: the same rows however they are consumed. With a privacy unit,
    each chunk gets its own synthetic units (no unit spans two chunks; a chunk's identifiers are
    prefixed with its number from the second chunk on). Post-processing only."""
    check_rows(n_rows)
    chunk = model.chunk_rows()
    weights = clean_weights(model.weights)
    for index, start in enumerate(range(0, n_rows, chunk)):
        count = min(chunk, n_rows - start)
        chosen = rng.choice(len(model.points), size=count, p=weights)
        frame = model.typed(model.decode(model.points[chosen]))
        if model.units is not None:  # synthetic identifiers in the unit column's place
            units = synthetic_units(len(frame), model.units.noisy_contributions, model.units.max_rows, rng)
            if index:
                units = f"c{index + 1}-" + units
            frame.insert(min(model.units.position, frame.shape[1]), model.units.column, units.to_numpy())
        yield frame


def check_output_size(rows: int, columns: int, what: str, advice: str) -> None:
    """Refuse ``rows`` x ``columns`` values in memory past MAX_OUTPUT_VALUES, with one line naming
    ``what`` would hold them and the ``advice`` (the options that lower them)."""
    if rows * columns > MAX_OUTPUT_VALUES:
        raise SynthDPError(f"{what}: {rows} rows x {columns} columns is over the output bound of "
                           f"{MAX_OUTPUT_VALUES:.0e} values; {advice}")


def draw(model: SamplingModel, n_rows: int, rng: np.random.Generator) -> pd.DataFrame:
    """``n_rows`` rows in memory (:func:`draw_chunks`, concatenated); at most MAX_OUTPUT_VALUES values."""
    check_rows(n_rows)
    check_output_size(n_rows, len(model.names), "the sample", "sample fewer rows (or in batches), or write them to a "
                      "file with synthdp sample")
    chunks = list(draw_chunks(model, n_rows, rng))
    return chunks[0] if len(chunks) == 1 else pd.concat(chunks, ignore_index=True)


def sampling_rng(seed: Any) -> np.random.Generator:
    """``numpy.random.default_rng(seed)`` for a seed that is an integer >= 0 (numpy's own included);
    anything else is a one-line error (numpy's is a traceback)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise SynthDPError("seed must be an integer >= 0")
    return np.random.default_rng(int(seed))


def check_rows(n_rows: Any) -> None:
    """``n_rows`` is a number of rows to sample: an integer >= 1 (a one-line error otherwise)."""
    if not (is_int(n_rows) and n_rows >= 1):
        raise SynthDPError("the number of rows to sample must be an integer >= 1")


def where(model: SamplingModel, condition: str) -> SamplingModel:
    """The model restricted to the support points whose decoded row satisfies ``condition``, an
    expression over the columns in pandas ``query`` syntax (``"sex == 'Female' and age >= 60"``;
    a name with a space or a dash in backticks), their weights renormalised: the fitted
    distribution conditioned on the event. A condition without mass is an error; one whose mass
    lies on fewer than MIN_EFFECTIVE_POINTS effective support points (1 / sum p^2) a warning, since
    the rows then repeat those few points. The unit column cannot be conditioned on (its
    identifiers are drawn after the rows). Post-processing only.

    The expression is checked before it is evaluated (:func:`condition_expression`): column names,
    constants, comparisons, and/or/not, arithmetic and ``column.isna()`` / ``.notna()`` only; a
    call, an attribute, a subscript or an ``@variable`` is refused, so that a condition cannot run
    code (pandas' own evaluator would call any method it names)."""
    if not isinstance(condition, str) or not condition.strip():
        raise SynthDPError("the condition must be a non-empty expression over the columns")
    support = model.decode(model.points, mixed_levels=True)  # a coded column's levels as numbers, "other" as text
    numeric = {str(name) for name in support.columns if pd.api.types.is_numeric_dtype(support[name])}
    temporal = {column.name: column.temporal for column in model.domain.columns if column.temporal}
    truths = () if model.schema is None else {column.name for column in model.schema.declared
                                              if column.numbers is None and truth_levels(column)}
    booleans = {name for name in truths if model.dtypes.get(name) == "boolean"}  # compared as the sample's
    coded = () if model.schema is None else {column.name for column in model.schema.declared
                                             if column.numbers is not None and truth_levels(column)}
    expression, used = condition_expression(condition, [str(name) for name in support.columns], numeric,
                                            None if model.units is None else model.units.column, temporal, truths,
                                            booleans, coded)
    # pandas evaluates the checked expression as Python writes it back, over the columns it names (as
    # placeholders): what it parses is what was checked
    frame = pd.DataFrame({placeholder: _as_compared(model, support[name], name) for placeholder, name in used.items()},
                         index=support.index)
    try:
        mask = frame.eval(expression, engine="python")
    except Exception as error:  # pandas' errors on a checked expression: they name types and tokens, not data
        ordered = [name for placeholder, name in used.items() if isinstance(frame[placeholder].dtype, pd.CategoricalDtype)]
        if isinstance(error, TypeError) and ordered and "ategor" in str(error):  # compared with none of its levels
            levels = ", ".join(repr(level) for level in _levels(model, ordered[0]))
            raise SynthDPError(f"{CONDITION} compares ordered column '{ordered[0]}' with something other than one of "
                               f"its levels ({levels})") from None
        if isinstance(error, RecursionError):  # pandas' evaluator nests one call per term
            raise SynthDPError(f"{CONDITION} has too many terms for pandas to evaluate: shorten it (a column's "
                               "values with isin([...]) or between(low, high))") from None
        raise SynthDPError(f"{CONDITION} is not an expression over the columns ({type(error).__name__}: "
                           f"{_first_line(error)}); {BACKTICKS}") from None
    if not (isinstance(mask, pd.Series) and pd.api.types.is_bool_dtype(mask)):
        raise SynthDPError("the condition must be true or false for each row (e.g. \"age >= 60\")")
    keep = mask.to_numpy(dtype=bool, na_value=False)  # a missing cell satisfies no comparison
    mass = float(model.weights[keep].sum())
    if not mass > 0:
        text = [name for name in used.values() if name not in numeric and model.schema is not None
                and any(column.name == name for column in model.schema.declared)]
        hint = "".join(f"; '{name}' has the levels False and True: compare it with True or False" if name in truths
                       else f"; '{name}' has text levels ({', '.join(repr(level) for level in _levels(model, name)[:4])}"
                       f"{', ...' if len(_levels(model, name)) > 4 else ''}): compare it with one of its levels, as text"
                       for name in text)  # the schema's public levels: sex == 1 where they are '0.0' and '1.0'
        raise SynthDPError("no row of the fitted distribution satisfies the condition (its probability is 0)" + hint)
    weights = np.where(keep, model.weights, 0.0) / mass
    effective = 1.0 / float(np.sum(weights**2))
    if effective < MIN_EFFECTIVE_POINTS:
        warn_user(f"the condition holds {mass:.3g} of the fitted distribution, on {effective:.0f} effective support "
                  "points: the rows will repeat these few points", UserWarning)
    kept = np.flatnonzero(keep)
    return replace(model, points=model.points[kept], weights=weights[kept])


# ---------------------------------------------------------------------- conditions
CONDITION = "the condition (--where, or condition= in Python)"
BACKTICKS = "names with spaces, dashes or quotes, and Python keywords (class, and, None), go in backticks"
CONDITION_HOLDS = ("a condition holds column names (in backticks where they have spaces, dashes or quotes, or are "
                   "Python keywords), numbers, "
                   "quoted text, True/False/None, comparisons (== != < <= > >=, in and not in a list), "
                   "and/or/not (& | ~), arithmetic (+ - * / // % **), column.isna() or .notna(), "
                   "column.isin([constants]) and column.between(low, high)")
MISSING_TESTS = frozenset({"isna", "notna", "isnull", "notnull"})  # a column's missing cells: no argument, no effect
MAX_CONDITION_CHARS = 10_000
# binary operators (comparisons, and/or/&/|, arithmetic) a condition may hold: pandas' evaluator nests
# a call per term, and where it ran out of stack depended on Python's version (300-400 terms of
# "x > -1 and ..." on 3.11, 400-600 on 3.12 and 3.13) and on the caller's stack; this limit, well
# under all of them, refuses the same conditions everywhere
MAX_CONDITION_OPERATORS = 300
_BINARY_TOKENS = frozenset({"==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "//", "%", "**", "&", "|"})
MAX_LITERAL = 2**63  # a larger whole number is written as a float (1e20): no big-integer arithmetic
MAX_EXPONENT = 100  # of a power (x ** 2), whose base holds no power: no big-integer arithmetic either
_BOOLEAN_OPS = (ast.And, ast.Or)
_UNARY_OPS = (ast.Not, ast.Invert, ast.USub, ast.UAdd)
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
_COMPARISONS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn)
_REFUSED = {"Call": "a function or method call", "Attribute": "attribute access", "Subscript": "a subscript ([...])",
            "Lambda": "a lambda", "ListComp": "a comprehension", "SetComp": "a comprehension",
            "DictComp": "a comprehension", "GeneratorExp": "a comprehension", "IfExp": "a conditional expression",
            "NamedExpr": "an assignment", "JoinedStr": "an f-string", "Starred": "a starred expression",
            "Dict": "a dict", "Set": "a set", "List": "a list outside a comparison",
            "Tuple": "a tuple outside a comparison", "Slice": "a slice", "Await": "await",
            "Yield": "yield", "YieldFrom": "yield", "MatMult": "the operator @", "BitXor": "the operator ^",
            "LShift": "the operator <<", "RShift": "the operator >>", "BitAnd": "the operator &",
            "BitOr": "the operator |", "Is": "the operator is", "IsNot": "the operator is not"}


def condition_expression(condition: str, columns: list[str], numeric: set[str], unit: str | None = None,
                         temporal: Mapping[str, str] | None = None,
                         truths: Collection[str] = (), booleans: Collection[str] = (),
                         coded_truths: Collection[str] = ()) -> tuple[str, dict[str, str]]:
    """``condition`` checked against an allow-list, as a Python expression over placeholders for the
    columns it names, and the columns of the placeholders (in the order named).

    Read as pandas reads a ``query``: a name in backticks (``` `` ``` a backtick in it) is a column, ``&``
    and ``|`` are ``and`` and ``or``. Allowed: column names (of ``columns``), constants (numbers, text,
    True/False/None), comparisons (``in`` and ``not in`` a list or tuple of constants), and/or/not,
    ``~``, unary minus, parentheses, arithmetic between numbers and ``numeric`` columns (a power's
    exponent a number of at most MAX_EXPONENT, its base without a power), and ``column.isna()``,
    ``.notna()``, ``.isnull()``, ``.notnull()``. Anything else (a call, an attribute, a subscript,
    a lambda, a comprehension, a name that is no column, ``@variable``) is a one-line error
    naming what is not allowed (not a data value); ``unit``, the unit column, cannot be named.

    ``temporal``: the date and datetime columns (name -> "date" or "datetime"), whose values are ISO
    text: a text constant compared with one of them (by a comparison, ``in``, ``isin`` or ``between``)
    is read as an ISO date or time and written as the column writes its values, so that the text
    comparison is the comparison of times (``day < '2021-6-1'`` is ``day < '2021-06-01'``, which
    text alone would read otherwise: '2021-10-02' < '2021-6-1'); a number compared with one is an error.
    ``truths``: the binary columns whose levels are the text 'False' and 'True' (a boolean's, which a
    DataFrame's fit gives back as bool): True or False compared with one is read as that text; of them,
    ``booleans`` (a DataFrame's nullable booleans, compared as the pandas booleans the sample holds) the
    other way round, the text 'True' or 'False' as True or False. ``coded_truths``: the binary columns of the
    levels 0 and 1 (numbers). A column standing alone where the condition needs true or false is read as
    pandas reads a bool column there (:func:`_alone_as_truths`)."""
    source = condition
    try:
        if len(condition) > MAX_CONDITION_CHARS:
            raise SynthDPError(f"{CONDITION} is longer than {MAX_CONDITION_CHARS} characters")
        quoted: list[str] = []  # the names in backticks, each read as a placeholder name
        pieces = []
        for is_quoted, text in _split_backticks(condition):
            pieces.append(f" _synthdp_quoted_{len(quoted)} " if is_quoted else text)
            quoted += [text] if is_quoted else []
        source = "".join(pieces)
        tokens = []
        operators, operand_before = 0, False  # a "-" or "+" after an operand is binary, else a sign
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
                pass
            elif token.type == tokenize.OP and token.string in _BINARY_TOKENS or token.string in ("and", "or", "in"):
                operators += operand_before or token.string not in ("-", "+")
                operand_before = False
            else:
                operand_before = token.type in (tokenize.NAME, tokenize.NUMBER, tokenize.STRING) and \
                    token.string not in ("not", "is") or token.string in (")", "]")
            if operators > MAX_CONDITION_OPERATORS:
                raise SynthDPError(f"{CONDITION} has more than {MAX_CONDITION_OPERATORS} operators: shorten it (a "
                                   "column's values with isin([...]) or between(low, high))")
            if token.type == tokenize.OP and token.string == "@":
                raise SynthDPError(f"{CONDITION} may not use a local variable (@name): {CONDITION_HOLDS}")
            if token.type == tokenize.OP and token.string in ("&", "|"):  # pandas' boolean precedence
                tokens.append((tokenize.NAME, "and" if token.string == "&" else "or"))
            else:
                tokens.append((token.type, token.string))
        tree = _parse(tokenize.untokenize(tokens))
        used: dict[str, str] = {}

        def column(name: str) -> tuple[str, str]:
            if name.startswith("_synthdp_quoted_") and name[len("_synthdp_quoted_"):].isdigit() \
                    and int(name[len("_synthdp_quoted_"):]) < len(quoted):
                name = quoted[int(name[len("_synthdp_quoted_"):])]
            if unit is not None and name == unit:
                raise SynthDPError(f"the unit column '{unit}' cannot be conditioned on: its identifiers are drawn "
                                   "after the rows")
            if name not in columns:
                hint = near_column(name, columns) or (" (names with spaces, dashes or quotes, and Python keywords, "
                                                      "go in backticks)")
                raise SynthDPError(f"{CONDITION} names '{name}', which is not a column of the model{hint}")
            placeholder = next((key for key, value in used.items() if value == name), f"_synthdp_column_{len(used)}")
            used[placeholder] = name
            return placeholder, name

        _check_node(tree, column, numeric)
        _times_as_text(tree, {placeholder: (name, temporal[name]) for placeholder, name in used.items()
                              if temporal and name in temporal})
        _truths_as_text(tree, {placeholder for placeholder, name in used.items() if name in truths
                               and name not in booleans})
        _truths_as_text(tree, {placeholder for placeholder, name in used.items() if name in booleans}, as_text=False)
        _alone_as_truths(tree, used, {**{name: 1 for name in coded_truths}, **{name: "True" for name in truths},
                                      **{name: None for name in booleans}})
        return ast.unparse(tree), used
    except SynthDPError:
        raise
    except (RecursionError, MemoryError):  # Python's parser runs out of stack on deep nesting: a MemoryError
        raise SynthDPError(f"{CONDITION} is nested too deeply") from None
    except tokenize.TokenError as error:
        # Python 3.12's tokenizer (the parser's own since) stops at an unclosed string or bracket, or at too
        # deep a nesting, with a TokenError whose text is a tuple; 3.11's went on to the parser's SyntaxError,
        # or stopped at the end ("EOF in multi-line statement"): on every version, the parser's message
        detail = _parser_error(source) or f"TokenError: {_first_line(Exception(error.args[0]))}"
        raise SynthDPError(f"{CONDITION} is not an expression over the columns ({detail}); {BACKTICKS}") from None
    except (SyntaxError, ValueError) as error:
        raise SynthDPError(f"{CONDITION} is not an expression over the columns ({type(error).__name__}: "
                           f"{_first_line(error)}); {BACKTICKS}") from None


def _parse(source: str) -> ast.Expression:
    """``source`` parsed as an expression, without the warning of an invalid escape ('C:\\data' reads as
    Python reads it, the backslash kept): Python 3.11 gave it as a DeprecationWarning, hidden by default,
    3.12 as a SyntaxWarning, which reached stderr ("<unknown>:1: SyntaxWarning: invalid escape sequence")."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.parse(source, mode="eval")


def _parser_error(source: str) -> str | None:
    """The SyntaxError Python's parser gives ``source`` (its first line), or None where it gives none."""
    try:
        _parse(source)
    except SyntaxError as error:
        return f"SyntaxError: {_first_line(error)}"
    except (ValueError, RecursionError, MemoryError):
        return None
    return None


def _as_compared(model: SamplingModel, values: pd.Series, name: str) -> pd.Series:
    """A decoded column as a condition compares it: a column fitted as a nullable boolean, or as an
    ordered pandas category of text levels, in the type the sample gives it (:meth:`SamplingModel.typed`),
    so that a missing cell satisfies no comparison (``flag != True`` leaves it out) and ``grade > 'low'``
    compares by the levels' order, as pandas does on the sample (text would compare alphabetically);
    any other column as decoded (an ordered category of numbers compares its numbers)."""
    dtype = model.dtypes.get(name)
    if model.schema is None or not (dtype == "boolean" or (
            dtype == ORDERED_CATEGORY and model.schema.column(name).numbers is None)):
        return values
    return model.typed(pd.DataFrame({name: values}, index=values.index))[name]


def _levels(model: SamplingModel, name: str) -> tuple[str, ...]:
    """The public levels of the categorical column ``name`` of a mixed model, "other" included, not the
    missing cells' (which a condition asks for with ``isna()``)."""
    assert model.schema is not None
    return tuple(level for level in model.schema.column(name).all_levels if level != MISSING_LABEL)


def _split_backticks(text: str) -> list[tuple[bool, str]]:
    """``text`` in pieces: (True, a name written in backticks, ``` `` ``` read as a backtick) or (False,
    the text between them); a backtick inside quotes is text."""
    pieces: list[tuple[bool, str]] = []
    current: list[str] = []
    quote, at = None, 0
    while at < len(text):
        char = text[at]
        if quote is None and char == "`":
            name, end = [], at + 1
            while end < len(text) and (text[end] != "`" or text[end + 1:end + 2] == "`"):
                name.append(text[end])
                end += 2 if text[end] == "`" else 1
            if end >= len(text):
                raise SyntaxError("a backtick is not closed")
            pieces += [(False, "".join(current)), (True, "".join(name))]
            current, at = [], end + 1
            continue
        if quote is not None and char == "\\":  # an escaped character inside quotes
            current.append(text[at:at + 2])
            at += 2
            continue
        if quote is None and char in "'\"":
            quote = char
        elif char == quote:
            quote = None
        current.append(char)
        at += 1
    pieces.append((False, "".join(current)))
    return pieces


def _refuse(what: str) -> SynthDPError:
    return SynthDPError(f"{CONDITION} may not hold {what}: {CONDITION_HOLDS}")


def _check_node(node: ast.AST, column: Callable[[str], tuple[str, str]], numeric: set[str],
                arithmetic: bool = False) -> None:
    """Check one node of a condition's tree against the allow-list, renaming its columns with ``column``
    (:func:`condition_expression`: a placeholder and the column's name); ``arithmetic``: an operand of +, -, *,
    ... (a number or a numeric column)."""
    def check(child: ast.AST, in_arithmetic: bool = False) -> None:
        _check_node(child, column, numeric, in_arithmetic)

    if isinstance(node, ast.Expression):
        check(node.body)
    elif isinstance(node, ast.BoolOp) and isinstance(node.op, _BOOLEAN_OPS):
        for value in node.values:
            check(value)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, _UNARY_OPS):
        check(node.operand, arithmetic or isinstance(node.op, (ast.USub, ast.UAdd)))
    elif isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC):
        if isinstance(node.op, ast.Pow):
            exponent = node.right.operand if isinstance(node.right, ast.UnaryOp) and isinstance(
                node.right.op, (ast.USub, ast.UAdd)) else node.right
            if not (_is_number(exponent) and abs(exponent.value) <= MAX_EXPONENT):  # type: ignore[attr-defined]
                raise _refuse(f"a power whose exponent is not a number of at most {MAX_EXPONENT}")
            if any(isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Pow) for inner in ast.walk(node.left)):
                raise _refuse("a power of a power")
        check(node.left, True)
        check(node.right, True)
    elif isinstance(node, ast.Compare) and all(isinstance(op, _COMPARISONS) for op in node.ops):
        check(node.left)
        for op, comparator in zip(node.ops, node.comparators):
            if isinstance(comparator, (ast.List, ast.Tuple)):
                if not all(_is_constant(element) for element in comparator.elts):
                    raise _refuse("a list or tuple of anything but constants")
                for element in comparator.elts:
                    check(element)
            elif isinstance(op, (ast.In, ast.NotIn)):
                raise _refuse("'in' or 'not in' anything but a list or tuple of constants")
            else:
                check(comparator)
    elif isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (bool, int, float, str))):
        if isinstance(node.value, str) and arithmetic:
            raise _refuse("arithmetic on text")
        if isinstance(node.value, int) and not isinstance(node.value, bool) and abs(node.value) > MAX_LITERAL:
            raise _refuse("a whole number beyond 2^63 (write it as a float, such as 1e20)")
    elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        node.id, name = column(node.id)
        if arithmetic and name not in numeric:
            raise _refuse(f"arithmetic on column '{name}', which is not numeric")
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
            and node.func.attr in MISSING_TESTS and not node.args and not node.keywords and not arithmetic:
        check(node.func.value)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
            and not node.keywords and not arithmetic and (
                node.func.attr == "isin" and len(node.args) == 1 and isinstance(node.args[0], (ast.List, ast.Tuple))
                and all(_is_constant(element) for element in node.args[0].elts)
                or node.func.attr == "between" and len(node.args) == 2 and all(_is_constant(a) for a in node.args)):
        check(node.func.value)  # column.isin([constants]), column.between(low, high): pandas' own, no code
    else:
        what = type(node.op if isinstance(node, (ast.BoolOp, ast.UnaryOp, ast.BinOp)) else node).__name__
        if isinstance(node, ast.Compare):
            what = next(type(op).__name__ for op in node.ops if not isinstance(op, _COMPARISONS))
        detail = ""
        if isinstance(node, ast.Call):
            function = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            detail = f" ({function}(...))" if function else ""
        elif isinstance(node, ast.Attribute):
            detail = f" (.{node.attr})"
        raise _refuse(_REFUSED.get(what, f"a {what} expression") + detail)


def _times_as_text(tree: ast.AST, temporal: Mapping[str, tuple[str, str]]) -> None:
    """Rewrite, in a checked tree, each text constant compared with a date or datetime column (``temporal``:
    placeholder -> the column's name and kind) as the ISO text the column decodes to
    (:func:`condition_expression`); a number compared with one is an error."""
    for named, constants in _compared(tree, temporal):
        column = temporal[named]
        for constant in constants:
            value = constant.value if isinstance(constant, ast.Constant) else 0  # a signed number: not text
            if not (value is None or isinstance(value, str)):
                raise SynthDPError(f"{CONDITION} compares {column[1]} column '{column[0]}' with a number: compare "
                                   f"it with an ISO {column[1]} in quotes, such as '{TIME_EXAMPLES[column[1]]}'")
            if isinstance(constant, ast.Constant) and isinstance(value, str):
                constant.value = _iso_text(value, *column)


def _compared(tree: ast.AST, placeholders: Collection[str]) -> Iterator[tuple[str, list[ast.expr]]]:
    """Each comparison (or ``isin``, ``between``) in a checked tree that names a column of
    ``placeholders``: that column's placeholder and the comparison's constants."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):  # isin([...]), between(a, b)
            operands = [node.func.value, *node.args]
        else:
            continue
        named = next((operand.id for operand in operands
                      if isinstance(operand, ast.Name) and operand.id in placeholders), None)
        if named is not None:
            yield named, [constant for operand in operands for constant in
                          (operand.elts if isinstance(operand, (ast.List, ast.Tuple)) else [operand])
                          if _is_constant(constant)]


def _truths_as_text(tree: ast.AST, truths: Collection[str], as_text: bool = True) -> None:
    """Rewrite, in a checked tree, True or False compared with a column of ``truths`` (placeholders of
    binary columns whose levels are the text 'False' and 'True') as that text; or, not ``as_text``, the
    text 'True' or 'False' compared with one as True or False."""
    for _, constants in _compared(tree, truths):
        for constant in constants:
            if not isinstance(constant, ast.Constant):
                continue
            if as_text and isinstance(constant.value, bool):
                constant.value = str(constant.value)
            elif not as_text and constant.value in ("True", "False"):
                constant.value = constant.value == "True"


def _alone_as_truths(tree: ast.Expression, used: Mapping[str, str], truths: Mapping[str, str | int | None]) -> None:
    """Rewrite, in a checked tree, a column standing alone where the condition needs true or false (the
    whole condition, an operand of and, or, not or ~) as pandas reads a bool column there: a column of
    ``truths`` (its name to the level that is true: 'True' for the text levels 'False' and 'True', 1 for the
    levels 0 and 1; None for a column compared as the pandas booleans the sample holds, left as it is) as
    ``column == level``. Any other column there is an error naming it: pandas would read its values' truth
    or bits, and ``x > 50 and flag`` of text levels kept the rows of either level without a word."""
    def truth(node: ast.expr) -> ast.expr:
        if not (isinstance(node, ast.Name) and node.id in used):
            return node
        name = used[node.id]
        if name not in truths:
            raise SynthDPError(f"{CONDITION} uses column '{name}' alone where it needs true or false: compare it "
                               "with one of its values (column == value)")
        if truths[name] is None:
            return node
        return ast.Compare(left=node, ops=[ast.Eq()], comparators=[ast.Constant(truths[name])])

    tree.body = truth(tree.body)
    for node in ast.walk(tree):
        if isinstance(node, ast.BoolOp):
            node.values = [truth(value) for value in node.values]
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.Invert)):
            node.operand = truth(node.operand)


def _iso_text(text: str, name: str, kind: str) -> str:
    """A condition's text ``text`` compared with the ``kind`` column ``name``, as the ISO text the column's
    values are written in (a date: YYYY-MM-DD, or with its time where it has one, which then orders it
    after the date's midnight; a datetime: YYYY-MM-DDTHH:MM:SS, its fraction of a second after it)."""
    try:
        moment = pd.to_datetime(text.strip(), format="ISO8601")
    except (ValueError, TypeError, OverflowError):  # pandas 2: also a year past 2262 (iso_times reads it)
        moment = iso_times(pd.Series([text.strip()], dtype=object)).iloc[0]
    if pd.isna(moment) or moment.tzinfo is not None:
        raise SynthDPError(f"{CONDITION} compares {kind} column '{name}' with text that is not an ISO {kind} "
                           f"without a time zone, such as '{TIME_EXAMPLES[kind]}'")
    if kind == "date" and moment == moment.normalize():
        return moment.date().isoformat()
    return moment.isoformat()  # YYYY-MM-DDTHH:MM:SS, and its fraction of a second where it has one


def _is_number(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool)


def _is_constant(node: ast.AST) -> bool:
    """A constant of a list after ``in``: a number (signed), text, True/False/None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _is_number(node.operand)
    return isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (bool, int, float, str)))


@dataclass(frozen=True)
class Condition:
    """``num_rows`` rows whose columns take ``column_values`` (the other columns drawn), for
    :meth:`synthdp.SmoothSynthesizer.sample_from_conditions`: SDV's ``sdv.sampling.Condition``,
    whose own objects are taken as well.

    Parameters
    ----------
    column_values : mapping
        Column name to the value every row takes in it.
    num_rows : int, default 1
        Rows to draw under this condition.
    """

    column_values: Mapping[str, Any]
    num_rows: int = 1


def condition_rows(conditions: Any) -> tuple[pd.DataFrame, list[int]]:
    """SDV-style conditions (objects with ``column_values``, a mapping of column to value, and ``num_rows``,
    as :class:`Condition` and ``sdv.sampling.Condition``) as a partial DataFrame of given values, a row
    for each condition (missing cells for the columns it does not give), and each one's count of rows;
    anything else a one-line error."""
    if isinstance(conditions, (str, bytes, Mapping)) or not hasattr(conditions, "__iter__"):
        raise SynthDPError("sample_from_conditions takes a DataFrame of given values or a list of Condition objects")
    rows, counts = [], []
    for index, condition in enumerate(conditions):
        values, count = getattr(condition, "column_values", None), getattr(condition, "num_rows", None)
        if not (isinstance(values, Mapping) and values):
            raise SynthDPError(f"condition {index} is not a Condition with column_values (a mapping of column to value)")
        if not (is_int(count) and count >= 1):
            raise SynthDPError(f"condition {index}'s num_rows must be an integer >= 1")
        rows.append({str(name): value for name, value in values.items()})
        counts.append(int(count))
    if not rows:
        raise SynthDPError("sample_from_conditions was given no conditions")
    return pd.DataFrame(rows, columns=list(dict.fromkeys(name for row in rows for name in row))), counts


def given(model: SamplingModel, known: pd.DataFrame, rng: np.random.Generator,
          counts: Collection[int] | None = None) -> pd.DataFrame:
    """One row for each row of ``known``, with its index (a partial DataFrame of given values, missing cells for
    the columns to draw; ``counts[i]`` rows for its row i where counts are given): drawn from the fitted
    distribution restricted to the support points whose
    decoded values equal the given ones (compared as text, so 1 and "1" are one level), in
    ``known``'s order, with the given values as given (a date or time, read in any ISO spelling, as the column
    writes it), decoded together as :func:`draw` decodes its rows. A continuous column can be given only where
    it declares its decimals (then compared at them); otherwise a value has no mass: give a range
    with :func:`where` instead."""
    if not all(isinstance(name, str) for name in known.columns):  # named as the fit reads a DataFrame's (7 is '7')
        known = known.set_axis([str(name) for name in known.columns], axis=1)
    unknown = [name for name in known.columns if name not in model.names]
    if unknown:
        raise SynthDPError(f"column '{unknown[0]}' of the given values is not a column of the model"
                           f"{near_column(unknown[0], model.names)}")
    if known.columns.duplicated().any():
        raise SynthDPError(f"the given values name column '{known.columns[known.columns.duplicated()][0]}' twice")
    if model.units is not None and model.units.column in known.columns:
        raise SynthDPError(f"the unit column '{model.units.column}' cannot be given: its identifiers are drawn")
    for name in known.columns:
        if known[name].notna().any() and _declared(model, name) is None and _decimals(model, name) == -1:
            raise SynthDPError(f"continuous column '{name}' declares no decimals, so a given value of it has no mass: "
                               "declare its decimals, or give a range with a condition (e.g. \"x >= 1 and x < 2\")")
    support = model.decode(model.points)
    temporal = {column.name: column.temporal for column in model.domain.columns if column.temporal}
    levelled = {} if model.schema is None else {column.name: column for column in model.schema.declared}
    # a binary or categorical column compares level codes (a given 1.0, as a partial frame of whole numbers
    # holds it, is the level "1"), the others text
    text = {name: (pd.Series(levelled[name].level_codes(support[name])) if name in levelled
                   else _comparable_in(model, name, support[name])) for name in known.columns}
    chosen: list[np.ndarray] = []
    pattern = known.notna()
    # each given level's code, column by column in the column's own type (a row of the frame holds its cells as
    # Python scalars: an Arrow float32's 0.1 as 0.10000000149011612, none of the levels); True: the level 1
    given_levels = {}
    for name in known.columns:
        if name in levelled:
            present = pattern[name].to_numpy(dtype=bool)
            given_levels[name] = np.full(len(known), -1, dtype=np.int64)
            given_levels[name][present] = levelled[name].level_codes(known[name][present])
    # a number narrower than float64 (an Arrow float32's 0.1) in its shortest form, column by column as levels are:
    # a row holds it widened (0.10000000149011612), which is not the declared value 0.1
    narrow = {name: as_float64(known[name]) for name in known.columns if name not in levelled
              and pd.api.types.is_float_dtype(known[name]) and known[name].dtype.itemsize < 8}
    repeats = np.ones(len(known), dtype=np.int64) if counts is None else np.asarray(list(counts), dtype=np.int64)
    if counts is not None:  # each condition's rows are drawn at once: bounded as sample's are
        check_output_size(int(repeats.sum()), len(model.names), "the conditions' rows",
                          "ask for fewer num_rows (or in batches)")
    for index in range(len(known)):
        row = known.iloc[index]
        keep = np.ones(len(support), dtype=bool)
        for name in known.columns[pattern.iloc[index].to_numpy()]:
            if name in levelled:
                value = given_levels[name][index]
            elif name in temporal:  # a date or time however it is written in ISO form, as a condition reads one
                value = _given_time(row[name], name, temporal[name])
            else:
                cell = narrow[name].iloc[index] if name in narrow else row[name]
                value = _comparable_in(model, name, pd.Series([cell], dtype=object), given=True).iloc[0]
            keep &= (text[name] == value).fillna(False).to_numpy(dtype=bool)  # a missing cell equals nothing
        mass = float(model.weights[keep].sum())
        if not mass > 0:
            raise SynthDPError(f"given row {index} has no mass under the fitted distribution (no support point has "
                               "those values; give ranges with a condition instead)")
        # one support point, drawn as draw() draws one row of the restricted model (the same random numbers)
        points = np.flatnonzero(keep)
        chosen.append(points[rng.choice(len(points), size=int(repeats[index]), p=clean_weights(model.weights[keep] / mass))])
    # the rows decoded together, untyped (typed once, below), as sample decodes its rows: a coded column beside
    # "other" is one type (each row decoded alone gave numbers beside text)
    result = model.decode(model.points[np.concatenate(chosen).astype(np.int64) if chosen else np.zeros(0, np.int64)])
    known = known.iloc[np.repeat(np.arange(len(known)), repeats)]  # each given row as many times as it is drawn
    pattern = known.notna()
    for name in known.columns:
        if name in levelled or name in temporal or _declared(model, name) is not None:
            continue  # the drawn level, time or declared value is the given one, written as the column writes it
        given_rows = pattern[name].to_numpy()
        if given_rows.any():
            values = np.array(result[name].to_numpy(dtype=object), dtype=object)  # a writable copy
            values[given_rows] = known[name].to_numpy(dtype=object)[given_rows]
            result[name] = pd.Series(values, index=result.index, dtype=object)
    for name in known.columns:  # the given values in the column's own type (an integer column stays int64)
        try:
            result[name] = result[name].astype(support[name].dtype)
        except (TypeError, ValueError):
            pass  # a value as given that the type cannot hold: kept as given
    if model.units is not None:  # the rows' synthetic units, drawn once for all of them (as draw_chunks does)
        units = synthetic_units(len(result), model.units.noisy_contributions, model.units.max_rows, rng).to_numpy() \
            if len(result) else []
        result.insert(min(model.units.position, result.shape[1]), model.units.column,
                      pd.Series(units, index=result.index, dtype=TEXT_DTYPE))
    result.index = known.index  # row for row, as the given values were indexed
    return model.typed(result)


def input_dtypes(data: Any, domain: Domain, schema: Schema | None) -> dict[str, str]:
    """The pandas types of an in-memory DataFrame's columns that a sample gives back (the container's
    types, as its column names: public, not read from the rows): ``"category"`` where a binary or
    categorical column was categorical (``"category (ordered)"`` where ordered), ``"bool"`` or
    ``"boolean"`` where a binary column whose levels are truth values (:func:`truth_levels`) was
    boolean or a category of truth values (:func:`_truth_category`; ``"boolean"`` where it may be
    missing; a nullable one held as ``object`` too, as ``pandas.read_csv`` holds True and False
    beside a missing cell, where it reads the same column without one as bool, and any type but text
    where every cell is missing, as ``float64``: which one pandas picks is the rows', so all come back
    as ``boolean``), ``datetime64[us]`` for every
    date or datetime column, whether it was ISO text or a naive datetime64 of any unit
    (``pandas.read_csv(parse_dates=...)`` picks text or datetime64, and the unit, from the values: a
    time of day in one value of a date column, nanoseconds in one value, would tell of the data).
    Empty for anything else (a file's columns come back as the file's text)."""
    if not isinstance(data, pd.DataFrame):
        return {}
    declared = {} if schema is None else {column.name: column for column in schema.declared}
    temporal = {column.name for column in domain.columns if column.temporal}
    dtypes = {}
    for dtype, name in zip(data.dtypes, map(str, data.columns)):  # names as the release reads them (7 is '7')
        if name in declared and _truth_category(declared[name], dtype):  # as a bool column comes back
            dtypes[name] = "boolean" if declared[name].nullable else "bool"
        elif isinstance(dtype, pd.CategoricalDtype) and name in declared:
            dtypes[name] = ORDERED_CATEGORY if dtype.ordered else "category"
        elif name in declared and truth_levels(declared[name]) and (
                pd.api.types.is_bool_dtype(dtype) or _truth_values_with_gaps(declared[name], dtype)):
            dtypes[name] = "boolean" if declared[name].nullable or str(dtype) == "boolean" else "bool"
        elif name in temporal:  # whatever its type: pandas picks text or datetime64, and its unit, from the values
            dtypes[name] = OUTPUT_DATETIME
    return dtypes


def _truth_category(column: CategoricalColumn, dtype: Any) -> bool:
    """Whether ``dtype``, a pandas category of the truth-valued ``column`` (:func:`truth_levels`), comes
    back from a sample as a bool column does (``bool``, or ``boolean`` where nullable) rather than as a
    category of the text levels "False" and "True" (which compare unequal to True): where its categories
    are truth values (``pd.Categorical([True, False])``). Where the column is nullable, any category of
    the text levels does: its categories are often the rows' (``astype("category")``,
    ``pandas.read_csv(dtype="category")``), none where every cell is missing, so that looking at them
    would tell whether one real cell was there (:func:`_truth_values_with_gaps`); a nullable one of the
    levels 0 and 1 stays a category."""
    if not (isinstance(dtype, pd.CategoricalDtype) and truth_levels(column)):
        return False
    if column.nullable:
        return column.numbers is None
    return pd.api.types.is_bool_dtype(dtype.categories)


def _truth_values_with_gaps(column: CategoricalColumn, dtype: Any) -> bool:
    """Whether ``dtype`` is how pandas may hold a nullable column of the text levels "False" and "True"
    that has a missing cell: ``object`` (bools and NaN), where without one it is ``bool``, and, where
    every cell is missing, whatever type the reader gives a column of nothing (``float64`` from
    ``pandas.read_csv``, ``Int64`` or ``null[pyarrow]`` from its other backends), where one True
    beside them makes it ``object``: anything but a pandas text type (a column read with ``dtype="string"``,
    or with ``dtype=str`` in pandas 3, stays text whatever its cells; ``dtype=str`` in pandas 2 is
    ``object``, which comes back as ``boolean``). Of levels the schema gives as the numbers 0 and 1: ``object`` alone (True and
    False beside a missing cell, where without one it is ``bool``); the numbers themselves pandas reads
    as integers or floats either way (``float64`` is also a column of 0 and 1 with a missing cell: it
    comes back as numbers, as ``int64`` does)."""
    if not column.nullable:
        return False
    if column.numbers is not None:
        return pd.api.types.is_object_dtype(dtype)
    return not _text_dtype(dtype)


def _text_dtype(dtype: Any) -> bool:
    """Whether ``dtype`` is one of pandas' text types (``str``, ``string``, an Arrow string), not ``object``."""
    return pd.api.types.is_string_dtype(dtype) and not pd.api.types.is_object_dtype(dtype)


def truth_levels(column: CategoricalColumn) -> bool:
    """Whether every level ``column`` decodes to (but a missing cell) is a truth value: ``"False"`` and
    ``"True"``, the levels a boolean is read as, or the numbers 0 and 1; a column with an "other"
    level is not one."""
    if not (column.binary or not column.other):
        return False
    if column.numbers is not None:
        return all(number in (0, 1) for number in column.numbers)
    return all(level in TRUTH for level in column.levels)


def _given_time(value: Any, name: str, kind: str) -> str:
    """A given value of the ``kind`` ("date" or "datetime") column ``name`` (ISO text in any of its
    spellings, a Timestamp, datetime, date or datetime64) as the ISO text the column decodes to (a date's
    time of day dropped, as the input's is); anything else a one-line error naming the column."""
    moment: Any = pd.NaT
    if isinstance(value, str):
        try:
            moment = pd.to_datetime(value.strip(), format="ISO8601")
        except (ValueError, TypeError, OverflowError):  # pandas 2: also a year past 2262 (iso_times reads it)
            moment = iso_times(pd.Series([value.strip()], dtype=object)).iloc[0]
    elif isinstance(value, (dt.date, np.datetime64)):
        moment = pd.Timestamp(value)
    if pd.isna(moment) or moment.tzinfo is not None:
        raise SynthDPError(f"a given value of {kind} column '{name}' is not an ISO {kind} without a time zone, "
                           f"such as '{TIME_EXAMPLES[kind]}'")
    day = moment.date().isoformat()  # (strftime's %Y drops the zeros of a year before 1000: "828-06-08")
    return day if kind == "date" else f"{day}T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}"


def _decimals(model: SamplingModel, name: str) -> int | None:
    """How a column's values compare: None as text (levels, dates), 0 for an integer column (as
    numbers: 60 and 60.0, which a column with a missing cell holds, are one value), k for k
    decimals; a continuous column without declared decimals cannot be given (-1), unless it
    declares its values (:func:`_declared`)."""
    numeric = {column.name: column for column in model.domain.columns}
    column = numeric.get(name)
    if column is None or column.temporal:
        return None
    if column.integer:
        return 0
    decimals = getattr(column, "decimals", None)
    return -1 if decimals is None else int(decimals)


def _declared(model: SamplingModel, name: str) -> tuple[float, ...] | None:
    """A numeric column's declared values (public metadata), or None."""
    column = {column.name: column for column in model.domain.columns}.get(name)
    return None if column is None else getattr(column, "values", None)


def _comparable_in(model: SamplingModel, name: str, values: pd.Series, given: bool = False) -> pd.Series:
    """:func:`_comparable` for column ``name`` of the model; a column with declared values compares the
    number of the declared value each is (a given value within 1e-12 of one, relative, is that one; any
    other is an error naming the column): 1/3 written with 16 digits is the declared 1/3."""
    declared = _declared(model, name)
    if declared is None:
        return _comparable(values, _decimals(model, name), name, given)
    numbers = pd.to_numeric(values, errors="coerce")
    if (numbers.isna() & values.notna()).any():
        raise SynthDPError(f"a given value of column '{name}' is not a number")
    x = numbers.to_numpy(dtype=float, na_value=np.nan)
    present = ~np.isnan(x)
    nearest = nearest_values(np.where(present, x, declared[0]), declared)
    if given and not np.isclose(nearest, x, rtol=1e-12, atol=0.0)[present].all():
        raise SynthDPError(f"a given value of column '{name}' is not one of its declared values")
    index = pd.Series(np.searchsorted(np.asarray(declared, dtype=float), nearest), index=values.index)
    return index.astype("string").where(present)


def _comparable(values: pd.Series, decimals: int | None, name: str = "", given: bool = False) -> pd.Series:
    """Values as they compare: text, or numbers rounded to ``decimals`` (then written as text); a
    ``given`` value of a numeric column that is not a number, or is off the column's grid (not a
    whole number, more decimals than declared: no support point holds it, and rounding it would
    draw the row of another value), is an error naming the column."""
    if decimals is None:
        return values.astype("string")
    numbers = pd.to_numeric(values, errors="coerce")
    if (numbers.isna() & values.notna()).any():
        raise SynthDPError(f"a given value of column '{name}' is not a number")
    rounded = np.round(numbers.to_numpy(dtype=float, na_value=np.nan), decimals)
    if given and not np.allclose(rounded, numbers.to_numpy(dtype=float, na_value=np.nan), rtol=1e-12,
                                 atol=10.0 ** -(decimals + 9), equal_nan=True):
        raise SynthDPError(f"a given value of column '{name}' is not " + (
            "a whole number (it is an integer column)" if decimals == 0 else f"on its grid of {decimals} decimals"))
    return pd.Series(np.round(numbers.to_numpy(dtype=float, na_value=np.nan), decimals),
                     index=values.index).astype("string")


def _first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [""])[0][:200]


# ---------------------------------------------------------------------- the file
def save(model: SamplingModel, path: str | Path, overwrite: bool = False) -> None:
    """Write ``model`` to ``path`` (:data:`FORMAT`), atomically: a temporary file beside it, then a rename.

    A path that exists (a file, a link, anything but a folder) is refused, before anything is written,
    unless ``overwrite``: the user's files are never replaced unasked. Without ``overwrite`` the
    temporary file is linked into place, which fails where a file of that name appeared meanwhile
    (a rename would replace it); a filesystem without hard links falls back to the rename."""
    path = Path(path)
    check_new(path, overwrite, "model file")  # before the work below
    arrays = {**_support_arrays(model), "support_weights": np.ascontiguousarray(model.weights, dtype=np.float64)}
    if model.units is not None:
        arrays["unit_contributions"] = np.ascontiguousarray(model.units.noisy_contributions, dtype=np.float64)
    released = None
    if model.release_parts is not None:  # read from a file: written back as it was read
        released = model.release_parts[0]
        arrays.update(model.release_parts[1])
    elif model.release is not None and model.config is not None:
        released, release_arrays = release_document(model.release, model.config)
        arrays.update(release_arrays)
    members, manifest = array_members(arrays)
    document = {
        "format": FORMAT, "synthdp_version": __version__, "rows": int(model.rows),
        "format_version": FORMAT_VERSION if released is not None else 3 if model.schema is not None else 1,
        "columns": model.names, "domain": _domain_document(model.domain),
        "schema": None if model.schema is None else _schema_document(model.schema),
        "units": None if model.units is None else {
            "column": model.units.column, "position": int(model.units.position), "max_rows": int(model.units.max_rows),
            "noisy_rows": float(model.units.noisy_rows)},
        "arrays": manifest, "privacy_report": model.report,
        **({"dtypes": dict(model.dtypes)} if model.dtypes else {}),
        **({"release": released} if released is not None else {}),
    }
    document = json.loads(json.dumps(document, default=_json_default))  # as a reader parses it
    document[DOCUMENT_CHECKSUM] = document_checksum(document)

    def write(temporary: Path) -> None:
        with zipfile.ZipFile(temporary, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            # each member dated 1980-01-01 (zip's first date), not the time of writing: a seeded model's
            # bytes then differ only by the timings its privacy report records
            contents: dict[str, str | bytes] = {"model.json": json.dumps(document, indent=1), **members}
            for member, content in contents.items():
                info = zipfile.ZipInfo(member, date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type, info.external_attr = zipfile.ZIP_DEFLATED, 0o644 << 16
                archive.writestr(info, content)

    write_in_place(path, write, overwrite, "model file")


def array_members(arrays: Mapping[str, np.ndarray]) -> tuple[dict[str, bytes], dict[str, dict]]:
    """Each array as the file's ``.npy`` member (no pickle), and the document's ``arrays`` manifest:
    each one's shape, dtype and sha256."""
    members, manifest = {}, {}
    for name, array in arrays.items():
        buffer = io.BytesIO()
        np.save(buffer, array, allow_pickle=False)
        members[f"{name}.npy"] = buffer.getvalue()
        manifest[name] = {"shape": list(array.shape), "dtype": str(array.dtype),
                          "sha256": hashlib.sha256(members[f"{name}.npy"]).hexdigest()}
    return members, manifest


def _support_arrays(model: SamplingModel) -> dict[str, np.ndarray]:
    """The support points as the file holds them (module docstring): a mixed table's as each numeric
    coordinate and each column's level, never the dense one-hot array."""
    if model.schema is None:
        return {"support_points": np.ascontiguousarray(model.points, dtype=np.float64)}
    points = model.points
    if not isinstance(points, EncodedPoints):
        points = encoded_support(np.asarray(points, dtype=np.float64), model.schema)
    widest = max((len(column.all_levels) for column in model.schema.categorical), default=0)
    return {"support_numeric": np.ascontiguousarray(points.numeric, dtype=np.float64),
            "support_levels": np.ascontiguousarray(points.levels, dtype=np.int16 if widest <= 2**15 else np.int32)}


def encoded_support(dense: np.ndarray, schema: Schema) -> EncodedPoints:
    """Dense encoded points (S, D) of ``schema`` per column: each block's level is the coordinate set
    to 1 (a binary column's one coordinate: its second level where set, else its first)."""
    levels = []
    for column in schema.categorical:
        block = dense[:, schema.block_slice(column.name)]
        levels.append((block[:, 0] > 0.5).astype(np.int64) if column.binary else np.argmax(block, axis=1))
    return EncodedPoints.of(schema, dense[:, :schema.d_numeric], levels)


def load(path: str | Path) -> SamplingModel:
    """Read a model file written by :func:`save`; any problem is a one-line :class:`SynthDPError`."""
    path = Path(path)
    if not path.is_file():
        raise absent_file("model file", path)
    try:
        with zipfile.ZipFile(path) as archive:
            document = json.loads(_member(archive, "model.json", path))
            if not isinstance(document, dict) or document.get("format") != FORMAT:
                raise SynthDPError(f"'{path}' is not a synthdp model file")
            if document.get("format_version") not in READ_VERSIONS:
                raise SynthDPError(f"model file '{path}' has format version {document.get('format_version')!r}; this "
                                   f"synthdp ({__version__}) reads versions {READ_VERSIONS[0]} to {READ_VERSIONS[-1]}: "
                                   "fit the model again")
            if DOCUMENT_CHECKSUM in document and document[DOCUMENT_CHECKSUM] != document_checksum(document):
                raise SynthDPError(f"model file '{path}' is damaged or was edited (its document does not match its "
                                   "checksum)")
            if not isinstance(document.get("arrays"), dict):
                raise KeyError("arrays")
            held = {name for name in document["arrays"] if ARRAY_NAME.fullmatch(name)} \
                if document.get("format_version") == 4 and "release" in document else set()
            if not set(document["arrays"]) - held <= ARRAY_NAMES:  # a member of another name is read by no version
                raise SynthDPError(f"model file '{path}' is damaged or was edited (it lists arrays a model file "
                                   "does not hold)")
            arrays = {}
            for name, spec in document["arrays"].items():
                content = _member(archive, f"{name}.npy", path)
                if hashlib.sha256(content).hexdigest() != spec["sha256"]:
                    raise SynthDPError(f"model file '{path}' is damaged or was edited (its {name} does not match "
                                       "its checksum)")
                if not _npy_fits(content, spec):  # before numpy allocates what the header claims
                    raise SynthDPError(f"model file '{path}' is damaged or was edited (its {name} has another shape)")
                array = np.load(io.BytesIO(content), allow_pickle=False)
                if list(array.shape) != spec["shape"] or str(array.dtype) != spec["dtype"]:
                    raise SynthDPError(f"model file '{path}' is damaged or was edited (its {name} has another shape)")
                arrays[name] = array
            return _model(document, arrays, path)
    except SynthDPError:
        raise
    except (zipfile.BadZipFile, zlib.error, KeyError, ValueError, TypeError, AttributeError, EOFError, OSError,
            RecursionError, OverflowError):  # OverflowError: a number of hundreds of digits where a float belongs
        raise SynthDPError(f"model file '{path}' is damaged, truncated or not a synthdp model file") from None
    except MemoryError:  # a release's basis of many levels, made whole (synthdp.pipeline.release_file)
        raise SynthDPError(f"model file '{path}' needs more memory than is free here to be read") from None


#: A member of a model file larger than this when inflated must not inflate more than MAX_INFLATION-fold:
#: a model's arrays and document compress a few times (levels' codes of rare levels: up to a few hundred
#: times, which below this size is let be), where a zip bomb's member inflates about a thousandfold, to
#: gigabytes from a file of megabytes. So a file of B bytes is read in at most max(256 MB, 200 B) per member.
MAX_PLAIN_MEMBER_BYTES = 256 * 2**20
#: The arrays a model file may hold (:func:`save`): no other member is read.
ARRAY_NAMES = frozenset({"support_points", "support_weights", "support_numeric", "support_levels",
                         "unit_contributions"})
MAX_INFLATION = 200


def _member(archive: zipfile.ZipFile, name: str, path: Path) -> bytes:
    """The member ``name`` of a model file, read whole only once its declared size is plausible: zipfile
    never returns more than that size (a stream that inflates further fails its CRC), so this bounds
    the memory a crafted file can make the reader take."""
    info = archive.getinfo(name)  # KeyError where absent: the caller's one line
    if info.file_size > MAX_PLAIN_MEMBER_BYTES and info.file_size > MAX_INFLATION * max(info.compress_size, 1):
        raise SynthDPError(f"model file '{path}' is damaged or was edited (its member '{name}' would inflate "
                           f"{info.file_size // max(info.compress_size, 1)}-fold, to {info.file_size} bytes: not a "
                           "model's)")
    return archive.read(info)


def _npy_fits(content: bytes, spec: Any) -> bool:
    """Whether an ``.npy`` member's header gives the shape and dtype its manifest entry ``spec`` gives,
    holds no Python objects, and is followed by exactly that many bytes: numpy allocates the shape its
    header claims before it reads a byte of data, so a header of a huge shape is refused here first."""
    try:
        stream = io.BytesIO(content)
        version = np.lib.format.read_magic(stream)
        readers = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
        if version not in readers:
            return False
        shape, _, dtype = readers[version](stream, max_header_size=10_000)
        if dtype.hasobject or not (isinstance(spec, dict) and isinstance(spec.get("shape"), list)):
            return False
        if list(shape) != spec["shape"] or str(dtype) != spec["dtype"]:
            return False
        return stream.tell() + math.prod(shape) * dtype.itemsize == len(content)
    except (ValueError, TypeError, SyntaxError, OverflowError, EOFError):
        return False


def document_checksum(document: dict) -> str:
    """The sha256 of ``document`` (without its :data:`DOCUMENT_CHECKSUM`) as canonical JSON: keys sorted,
    no spaces, ASCII; what :func:`save` stores and :func:`load` checks."""
    body = {key: value for key, value in document.items() if key != DOCUMENT_CHECKSUM}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode("ascii")).hexdigest()


def _model(document: dict, arrays: dict[str, np.ndarray], path: Path) -> SamplingModel:
    def damaged(what: str) -> SynthDPError:
        return SynthDPError(f"model file '{path}' is damaged or was edited ({what})")

    try:  # a column's bounds or levels that the checks of a column refuse: one line naming the file
        domain = _domain_from(document["domain"])
        schema = None if document["schema"] is None else _schema_from(document["schema"])
    except SynthDPError as error:
        raise damaged(_first_line(error)) from None
    problem = _columns_problem(domain, schema)
    if problem:
        raise damaged(problem)
    table = list(schema.names) if schema is not None else domain.names  # the columns, without the unit column
    units = None
    if document["units"] is not None:
        spec = document["units"]
        column, position, max_rows, noisy_rows = spec["column"], spec["position"], spec["max_rows"], spec["noisy_rows"]
        contributions = arrays["unit_contributions"]
        if not (isinstance(column, str) and column and column not in table):
            raise damaged("its unit column is not a column of its own")
        if not (is_int(position) and 0 <= position <= len(table)):
            raise damaged("its unit column's position is not a place among its columns")
        if not (is_int(max_rows) and 1 <= max_rows <= MAX_ROWS_PER_UNIT):
            raise damaged(f"its units' max_rows is not a whole number in [1, {MAX_ROWS_PER_UNIT}]")
        if not (is_finite_number(noisy_rows)
                and contributions.shape == (len(contribution_bins(max_rows)),)
                and np.all(np.isfinite(contributions))):
            raise damaged("its units' contributions do not fit their max_rows")
        units = UnitsRelease(column, int(position), int(max_rows), float(noisy_rows), contributions)
    points, weights = _support(arrays, domain, schema, document["format_version"])
    if points is None or weights.shape != (len(points),) or not np.all(weights >= 0) \
            or not math.isclose(weights.sum(), 1.0, rel_tol=1e-6):
        raise SynthDPError(f"model file '{path}' is damaged or was edited (its support does not fit its columns)")
    dtypes = document.get("dtypes", {})
    levelled = {} if schema is None else {column.name: column for column in schema.declared}
    temporal = {column.name for column in domain.columns if column.temporal}
    if not (isinstance(dtypes, dict) and all((value in ("category", ORDERED_CATEGORY) and name in levelled) or (
            value in BOOLEAN_DTYPES and name in levelled and truth_levels(levelled[name])
            and (value == "boolean" or not levelled[name].nullable)) or (
            value in DATETIME_DTYPES and name in temporal) for name, value in dtypes.items())):
        raise SynthDPError(f"model file '{path}' is damaged or was edited (its dtypes are not pandas types it gives)")
    rows, report = document["rows"], document["privacy_report"]
    if not (isinstance(rows, int) and not isinstance(rows, bool) and rows >= 1 and isinstance(report, dict)):
        raise SynthDPError(f"model file '{path}' is damaged or was edited (its rows or its report)")
    parts, problem = None, None
    if "release" in document and document["format_version"] != 4:
        raise damaged(f"a release in a file of format version {document['format_version']}")
    if "release" in document:
        parts = (document["release"], {name: array for name, array in arrays.items() if ARRAY_NAME.fullmatch(name)})
        # checked now, made whole when copies ask for it (kept_release); a release that fails its checks leaves
        # the rows, which do not read it, to be sampled, and refuses copies and summaries (release_problem)
        try:
            release, _ = release_from(*parts, domain, schema, whole=False, rows=rows)
            own = None if release.units is None else release.units.column
            if own != (None if units is None else units.column):
                raise ValueError("its privacy unit is not the model's")
        except (ValueError, SynthDPError) as error:
            parts, problem = None, str(damaged(f"its release: {_first_line(error)}"))
    model = SamplingModel(points, weights, domain, schema, units, rows, report, dtypes, release_parts=parts,
                          release_problem=problem)
    if model.names != list(document["columns"]):
        raise SynthDPError(f"model file '{path}' is damaged or was edited (its columns do not match)")
    return model


def kept_release(model: SamplingModel) -> tuple[Release, SynthConfig] | None:
    """The release ``model`` was fitted to and the fit's configuration, made whole from a model file's
    parts where it was read from one; None where it holds no release (a file of version 3 or earlier); a
    one-line error where the file's release did not pass its checks when read."""
    if model.release is not None and model.config is not None:
        return model.release, model.config
    if model.release_problem is not None:
        raise SynthDPError(f"{model.release_problem}: it samples rows, but makes no copies or summaries")
    if model.release_parts is None:
        return None
    try:  # checked when the file was read
        return release_from(*model.release_parts, model.domain, model.schema, rows=model.rows)
    except MemoryError:
        raise SynthDPError("the model file's release needs more memory than is free here to make copies") from None


def _support(arrays: dict[str, np.ndarray], domain: Domain, schema: Schema | None,
             version: int) -> tuple[np.ndarray | EncodedPoints | None, np.ndarray]:
    """The support points and weights of a file's arrays (None where the points do not fit the columns):
    a mixed table's per column from version 3, dense (S, D) before (module docstring)."""
    weights = arrays["support_weights"]
    if not _real(weights):
        return None, weights
    if schema is None or version < 3:
        points = arrays["support_points"]
        width = schema.n_coordinates if schema is not None else domain.d
        fits = points.ndim == 2 and points.shape[1] == width and _real(points) and bool(np.all(np.isfinite(points)))
        return (points if fits else None), weights
    numeric, levels = arrays["support_numeric"], arrays["support_levels"]
    sizes = np.array([len(column.all_levels) for column in schema.categorical], dtype=np.int64)
    if not (numeric.ndim == 2 and numeric.shape[1] == schema.d_numeric and _real(numeric) and np.all(np.isfinite(numeric))
            and levels.shape == (len(numeric), len(sizes)) and np.issubdtype(levels.dtype, np.integer)
            and np.all((levels >= 0) & (levels < sizes))):
        return None, weights
    return EncodedPoints.of(schema, numeric, list(levels.T)), weights


def _real(array: np.ndarray) -> bool:
    """Whether ``array`` holds real numbers (complex ones were read, their imaginary parts dropped)."""
    return array.dtype.kind in "fiu"


def _columns_problem(domain: Domain, schema: Schema | None) -> str | None:
    """What makes a loaded document's columns undecodable (names twice, an internal column of a
    column that is not there, fields of the wrong type), or None: a model file's document is
    checked whole (an older file has no checksum of it), so that an edit is one line, not a
    traceback when sampling."""
    numeric = domain.names
    if not all(isinstance(column.name, str) and column.name and isinstance(column.integer, bool)
               and isinstance(column.source, str) for column in domain.columns):
        return "a numeric column's name or type is not text or a flag"
    if len(set(numeric)) != len(numeric):
        return "it names a column twice"
    if schema is None:
        return None
    names, categorical = list(schema.names), schema.categorical
    if not all(isinstance(name, str) and name for name in names) or len(set(names)) != len(names):
        return "it names a column twice"
    if schema.numeric != domain:
        return "its domain and its schema's numeric columns differ"
    if not all(isinstance(column.name, str) and column.name and all(isinstance(level, str) for level in column.levels)
               and all(isinstance(flag, bool) for flag in (column.binary, column.nullable, column.other))
               and isinstance(column.other_label, str) for column in categorical):
        return "a binary or categorical column's name, levels or type are not text or flags"
    internal = [column for column in categorical if column.internal]
    declared = [column.name for column in categorical if not column.internal]
    every = numeric + [column.name for column in categorical]
    if len(set(every)) != len(every) or sorted(numeric + declared) != sorted(names) \
            or any(column.name in names for column in internal):
        return "its schema's columns do not match its names (a name twice, or one missing)"
    for column in internal:
        of = column.indicator_of if column.indicator_of is not None else column.values_of
        if column.indicator_of is not None and column.values_of is not None or of not in numeric:
            return f"its internal column '{column.name}' belongs to no numeric column"
        if column.values_of is not None and not (domain.columns[numeric.index(of)].integer and all(
                level.lstrip("-").isdigit() for level in column.levels)):
            return f"its internal column '{column.name}' belongs to no integer column"
    owners = [(column.indicator_of is None, column.indicator_of or column.values_of) for column in internal]
    if len(set(owners)) != len(owners):
        return "a numeric column has two internal columns of one kind"
    for column in categorical:
        numbers = column.numbers
        if numbers is not None and not all(is_finite_number(number) for number in numbers):
            return f"column '{column.name}' gives its levels as numbers that are not finite numbers"
    return None


def _domain_document(domain: Domain) -> dict:
    return {"source": domain.source, "columns": [dataclasses.asdict(column) for column in domain.columns]}


def _domain_from(document: dict) -> Domain:
    fields = {field.name for field in dataclasses.fields(ColumnDomain)}
    return Domain(tuple(ColumnDomain(**{key: value for key, value in column.items() if key in fields})
                        for column in document["columns"]), str(document["source"]))


def _schema_document(schema: Schema) -> dict:
    return {"names": list(schema.names), "numeric": _domain_document(schema.numeric),
            "categorical": [{**{key: value for key, value in dataclasses.asdict(column).items()
                                if key != "other" or value is False},  # only where it is new (version 2)
                             "levels": list(column.levels)} for column in schema.categorical],
            "other_label": schema.other_label}


def _schema_from(document: dict) -> Schema:
    categorical = tuple(CategoricalColumn(**{**column, "levels": tuple(column["levels"])})
                        for column in document["categorical"])
    return Schema(tuple(document["names"]), _domain_from(document["numeric"]), categorical, document["other_label"])


def _json_default(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"cannot serialise {type(value).__name__}")
