"""SmoothSynthesizer: the estimator face. Fit once (spending the budget), then sample rows or take a summary.

A scikit-learn-style estimator: its parameters are :class:`synthdp.config.SynthConfig`'s fields
(plus ``progress``), stored untouched by ``__init__``, validated in :meth:`~SmoothSynthesizer.fit`;
``get_params``/``set_params`` and ``sklearn.base.clone`` work. The pipeline it runs lives in
:mod:`synthdp.pipeline.run`.
"""

from __future__ import annotations

import inspect
import os
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from synthdp.config import CsvFormat, IdleOptionWarning, SynthConfig, idle_options
from synthdp.domain.box import load_bounds_file
from synthdp.domain.schema import Schema, bounds_schema, load_schema_file
from synthdp.errors import SynthDPError, closest_name, not_fitted
from synthdp.pipeline import model as model_file
from synthdp.pipeline import report as reporting
from synthdp.pipeline import run
from synthdp.pipeline.copies import Copies, release_copies
from synthdp.privacy import lifetime
from synthdp.privacy.ledger import PrivacyLedger
from synthdp.reader.table import is_dask_frame
from synthdp.released import Release
from synthdp.summaries.marginal import MarginalSummary
from synthdp.summaries.smooth import Summary

# every parameter with its default: SynthConfig's fields, then the face's own
_DEFAULTS: dict[str, Any] = {**{f.name: f.default for f in fields(SynthConfig)}, "progress": False}


def _named_as_text(columns: Mapping[Any, object] | None, origin: str) -> Mapping[str, object] | None:
    """``columns`` (bounds or a schema's columns: a mapping by column name) keyed by each name's text,
    as a table's columns are read (a DataFrame's column 7 is '7'): bounds={7: [0, 1]} names that column.
    Anything else as it is (its own check refuses it)."""
    if not isinstance(columns, Mapping) or all(isinstance(name, str) for name in columns):
        return columns  # its keys are text already, or it is no mapping
    named = {str(name): value for name, value in columns.items()}
    if len(named) < len(columns):
        twice = next(str(name) for name in columns if sum(str(other) == str(name) for other in columns) > 1)
        raise SynthDPError(f"column '{twice}' is named twice in {origin} (once as a number)")
    return named


def _did_you_mean(name: str) -> str:
    """" (did you mean 'that'?)" where a parameter is spelled nearly as ``name`` ('favor' for 'favour'); else ""."""
    near = closest_name(name, list(_DEFAULTS), cutoff=0.6)
    return f" (did you mean '{near}'?)" if near is not None else ""


def _is_default(name: str, value: Any) -> bool:
    """Whether the parameter ``name`` holds its default: equal to it as one truth value. A value whose
    comparison is no truth value (``pandas.NA``, an array) or raises is not the default."""
    default = _DEFAULTS[name]
    if value is default:
        return True
    try:
        equal = value == default
    except Exception:  # a value's own __eq__ may raise anything: it is then not the default
        return False
    return isinstance(equal, (bool, np.bool_)) and bool(equal)


def _warn_idle_parameters(params: Mapping[str, Any], config: SynthConfig, mixed: bool) -> None:
    """A warning for each parameter set away from its default that the fit will not use (``pca_share``
    without ``candidates='pca'``), as the command line warns of its flags."""
    changed = [name for name, value in params.items() if name in _DEFAULTS and not _is_default(name, value)]
    for given, _, needs in idle_options(changed, config, mixed):
        names = ", ".join(given)
        warnings.warn(f"{names} act{'s' if len(given) == 1 else ''} only with {needs}: ignored in this fit",
                      IdleOptionWarning, stacklevel=3)


class SmoothSynthesizer:
    """Differentially private synthetic data for smooth queries (Wang et al., Algorithm 1 / Section 3.4).

    ``fit`` releases noisy Chebyshev moments of the table (and, for the default copula
    candidates, noisy one-way histograms and pairwise products), spending the whole budget
    once. It then fits, by an l1 linear program, a distribution over candidate points that
    matches the noisy moments. ``sample`` draws rows from that distribution and ``summary``
    answers queries from the moments directly; neither touches the data or spends budget.

    Parameters are those of :class:`synthdp.config.SynthConfig` (keyword only, same defaults);
    ``progress`` shows a progress bar on stderr.

    Examples
    --------
    >>> synth = SmoothSynthesizer(epsilon=1.0).fit(df, bounds={"age": [0, 100], "income": [0, 1e6]})
    >>> synthetic = synth.sample(1000)
    >>> synth.privacy_report()["privacy"]["epsilon_spent"]
    1.0
    """

    progress: bool  # the one parameter the face reads itself; the others go to SynthConfig
    sampling_model_: model_file.SamplingModel  # set by load(): a model file's distribution, no fit

    def __init__(self, **params: Any) -> None:
        unknown = sorted(set(params) - set(_DEFAULTS))
        if unknown:
            raise TypeError(f"SmoothSynthesizer() got an unexpected keyword argument '{unknown[0]}'"
                            f"{_did_you_mean(unknown[0])}")
        for name, default in _DEFAULTS.items():
            setattr(self, name, params.get(name, default))

    # the signature scikit-learn (get_params, clone) and help() read: SynthConfig's fields
    __init__.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default) for name, default in _DEFAULTS.items()]
    )

    @classmethod
    def from_config(cls, config: SynthConfig, progress: bool = False) -> SmoothSynthesizer:
        """An estimator with the parameters of a validated ``config``.

        Parameters
        ----------
        config : SynthConfig
            The parameters, each set on the estimator as it is in ``config``.
        progress : bool, default False
            Show a progress bar on stderr while fitting.

        Returns
        -------
        SmoothSynthesizer
            A new, unfitted estimator.
        """
        return cls(**{key: getattr(config, key) for key in config.keys()}, progress=progress)

    # ---------------------------------------------------------- parameters
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The estimator's parameters, as given (scikit-learn's convention).

        Parameters
        ----------
        deep : bool, default True
            Accepted for scikit-learn's ``clone``; no parameter is an estimator, so it changes nothing.

        Returns
        -------
        dict
            Every parameter of :class:`SynthConfig` and ``progress``, by name.
        """
        return {name: getattr(self, name) for name in _DEFAULTS}

    def set_params(self, **params: Any) -> SmoothSynthesizer:
        """Set parameters (validated at the next :meth:`fit`).

        Parameters
        ----------
        **params
            Parameters of :class:`SynthConfig` or ``progress``, by name; an unknown name raises
            ``ValueError`` and sets none of them.

        Returns
        -------
        SmoothSynthesizer
            The estimator itself.
        """
        unknown = next((name for name in params if name not in _DEFAULTS), None)
        if unknown is not None:  # before any is set: a call that fails changes nothing
            raise ValueError(f"invalid parameter '{unknown}' for SmoothSynthesizer{_did_you_mean(unknown)}; "
                             f"valid: {sorted(_DEFAULTS)}")
        for name, value in params.items():
            setattr(self, name, value)
        return self

    def __sklearn_is_fitted__(self) -> bool:
        """Whether there is a fit (or a loaded model file) to sample: ``sklearn.utils.validation.check_is_fitted``."""
        return getattr(self, "model_", None) is not None or getattr(self, "sampling_model_", None) is not None

    def __sklearn_tags__(self) -> Any:
        """scikit-learn's tags (>= 1.6 reads them in ``check_is_fitted``): an estimator with no target that needs a
        fit, as ``BaseEstimator``'s. scikit-learn is imported only where it asks, so it is loaded already."""
        from sklearn.utils import Tags, TargetTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=False))

    @property
    def config(self) -> SynthConfig:
        """The parameters as a validated :class:`SynthConfig` (raises :class:`SynthDPError` if invalid)."""
        return SynthConfig(**{name: getattr(self, name) for name in SynthConfig.keys()})

    def __repr__(self) -> str:
        """The parameters set away from their defaults, each as its ``repr`` (never raises on a value that
        compares ambiguously, such as ``pandas.NA`` or an array: such a value is shown)."""
        changed = {name: value for name, value in self.get_params().items() if not _is_default(name, value)}
        return f"SmoothSynthesizer({', '.join(f'{name}={value!r}' for name, value in changed.items())})"

    def __getstate__(self) -> dict[str, Any]:
        """The state pickle (and joblib, ``copy``) keeps: the attributes, with ``timings_`` holding only the times
        of the steps after the release. The stages that read the rows take times that depend on the data, which
        the fitting process alone may read (``privacy_report(data_timings=True)`` there); a pickled fit samples
        the same rows under a seed."""
        state = dict(vars(self))
        model = state.get("model_")
        if isinstance(model, run.FittedModel):
            public = reporting.released_timings(model.timings)
            state["model_"], state["timings_"] = replace(model, timings=public), public
        return state

    # ------------------------------------------------------------------ fit
    def fit(
        self,
        data: Any,
        bounds: Mapping[str, object] | str | Path | None = None,
        bounds_from_data: bool = False,
        synthesize: bool = True,
        schema: Mapping | Schema | str | Path | None = None,
        csv_format: CsvFormat | None = None,
        budget_file: str | Path | lifetime.Reservation | None = None,
        lifetime_epsilon: float | None = None,
        lifetime_delta: float | None = None,
    ) -> SmoothSynthesizer:
        """Spend the privacy budget on ``data`` and fit the synthetic distribution.

        Parameters
        ----------
        data : DataFrame, str or Path, dask DataFrame, or PrivateTable
            The table, one row per individual (or per row of a ``privacy_unit``): numeric with
            ``bounds``, or with binary, categorical, date and nullable columns as ``schema``
            describes them; in memory, the path of a CSV or Parquet file (read by the configured
            engine, streamed when large), or a Dask DataFrame.
        bounds : mapping, str or Path, optional
            Public bounds ``{column: [lo, hi]}`` (or ``{column: {"bounds": [lo, hi],
            "type": "integer"}}``) for every column, or the path of a bounds JSON file holding
            them. Values outside are clipped.
        bounds_from_data : bool, default False
            Read the bounds from the data instead. The release is then NOT differentially
            private, and the report says so.
        synthesize : bool, default True
            False releases only what :meth:`summary` needs: no candidates, no private PCA,
            no LP, and :meth:`sample` is unavailable. The PCA share of the budget then goes
            to the moments; the report's ``parameters.budget`` shows the split.
        schema : mapping, Schema, str or Path, optional
            A schema file's path or content (:mod:`synthdp.domain.schema`): the type, bounds or
            levels of every column, instead of ``bounds``. Needed for binary and categorical
            columns; with those, the release holds every marginal cell of up to
            ``marginal_degree`` of them (:meth:`marginal_summary` answers marginals from it).
        csv_format : CsvFormat, optional
            Separator, encoding, decimal mark and thousands separator when ``data`` is the
            path of a CSV file (default: ``,``, UTF-8, ``.``, none), e.g.
            ``CsvFormat(sep=";", decimal=",", thousands=".")``.
        budget_file : str or Path, optional
            The table's budget across releases, as the command line's ``--budget-file``
            (:mod:`synthdp.privacy.lifetime`): this release's (epsilon, delta) is reserved before the
            data is read, and the fit is refused, reading nothing, where it would take the table past
            its lifetime budget; it is charged once the fit succeeds (the release is then in this
            process's hands), or fails after a stage released (a warning may have named a noisy
            value), and dropped if it fails before any (with the file, where this fit was its first
            use: a fit that released nothing declares no lifetime budget). The privacy report's ``budget_file``
            entry gives the totals. A :class:`synthdp.privacy.lifetime.Reservation` already made
            (as the command line makes one, naming its command) is charged or dropped the same way.
        lifetime_epsilon, lifetime_delta : float, optional
            The table's lifetime budget, declared at the budget file's first use (as
            ``--lifetime-epsilon`` and ``--lifetime-delta``); a later use may repeat them or leave them out.

        Returns
        -------
        SmoothSynthesizer
            The estimator itself, fitted.
        """
        for name in [name for name in vars(self) if name.endswith("_") and not name.startswith("_")]:
            delattr(self, name)  # a fit that fails leaves no earlier fit (or loaded model) behind to sample from
        config = self.config
        if isinstance(bounds, (str, Path)):  # a bounds file, as the command line takes it
            bounds = load_bounds_file(bounds)
        if isinstance(schema, (str, Path)):
            schema = load_schema_file(schema)
        bounds = _named_as_text(bounds, "bounds")
        if isinstance(schema, dict) and isinstance(schema.get("columns"), Mapping):
            schema = {**schema, "columns": _named_as_text(schema["columns"], "the schema")}
        _warn_idle_parameters(self.get_params(), config, schema is not None
                              or (isinstance(bounds, Mapping) and bounds_schema(bounds) is not None))
        reservation = None
        if isinstance(budget_file, lifetime.Reservation):  # made by the caller (the command line), before the data
            if lifetime_epsilon is not None or lifetime_delta is not None:
                raise SynthDPError("lifetime_epsilon and lifetime_delta go with a budget file's path, not a reservation")
            if (budget_file.epsilon, budget_file.delta, budget_file.privacy_unit) != (
                    float(config.epsilon), float(config.delta), config.privacy_unit):
                raise SynthDPError("the budget reservation was made for another epsilon, delta or privacy unit than "
                                   "this fit's: reserve this fit's")
            reservation = budget_file
        elif budget_file is not None:  # before the data is read: refused here if the table's budget would be exceeded
            reservation = lifetime.reserve(budget_file, "SmoothSynthesizer.fit", config.epsilon, config.delta, lifetime_epsilon,
                                           lifetime_delta, config.privacy_unit,
                                           table=os.path.realpath(data) if isinstance(data, (str, Path)) else None)
        elif lifetime_epsilon is not None or lifetime_delta is not None:
            raise SynthDPError("lifetime_epsilon and lifetime_delta declare a budget file's budget: give budget_file")
        ledger = PrivacyLedger(config.epsilon, config.delta)
        try:
            model = run.fit(config, data, bounds, bounds_from_data, synthesize, schema,
                            progress=bool(self.progress), csv_format=csv_format, ledger=ledger)
        except BaseException:
            if reservation is not None:
                if ledger.events:  # a stage had released: its values may be out (a warning names a noisy count)
                    lifetime.charge(reservation, False if ledger.caveats else None)
                else:
                    lifetime.cancel(reservation)  # nothing of this release is out
            raise
        if reservation is not None:
            lifetime.charge(reservation, not ledger.caveats)
        self.budget_reservation_ = reservation
        self.model_ = model
        self.release_, self.ledger_, self.lp_ = model.release, model.ledger, model.lp
        self.support_weights_ = model.support_weights
        self.blend_share_, self.timings_, self.engine_ = model.blend_share, model.timings, model.engine
        self.noise_sampler_ = model.noise_sampler
        # a Dask DataFrame's column types are its meta's (public, as a DataFrame's): a sample gives them back alike
        typed = (pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in data.dtypes.items()})
                 if is_dask_frame(data) else data)
        self.dtypes_ = model_file.input_dtypes(typed, model.release.domain, model.release.schema)
        return self

    @property
    def support_points_(self) -> np.ndarray:
        """The fitted distribution's support points, shape (S, D), in the release's encoded
        coordinates (``support_weights_`` their weights). A mixed table's are held one level per
        column (:class:`synthdp.domain.encoded.EncodedPoints`, which keeps a column of thousands
        of levels small) and made a dense array here, at each access. A fit with ``synthesize=False``
        (statistics for a summary only) has none: an error says so."""
        needs = "support points need the fit (fit in this process)"
        points = self._model(needs, method="support_points_").support_points
        if points is None:
            raise SynthDPError("this fit released statistics only (synthesize=False): it has no support points; fit "
                               "with synthesize=True to sample")
        return np.asarray(points)

    # --------------------------------------------------------------- sample
    def sample(self, n_rows: int | None = None, *, condition: str | None = None,
               seed: int | None = None, num_rows: int | None = None) -> pd.DataFrame:
        """Draw ``n_rows`` synthetic rows (default: as many as the input had).

        Spends no privacy budget and never reads the data: it samples the fitted distribution.
        The fit is left as it is; successive calls draw new rows from the fit's public random
        generator (with a seed, the sequence of calls is reproducible).

        Parameters
        ----------
        n_rows : int, optional
            Rows to draw (default: the fit's n).
        condition : str, optional
            Rows from the fitted distribution restricted to this event, an expression over the
            columns in pandas ``query`` syntax, e.g. ``"sex == 'Female' and age >= 60"``
            (:func:`synthdp.pipeline.model.where`: an error if it has no mass, a warning if
            few support points hold it).
        seed : int, optional
            Draw from ``numpy.random.default_rng(seed)`` instead of the fit's generator: the same
            rows from this fit and from its model file loaded anywhere (:meth:`save`). Public
            randomness: the rows' privacy does not depend on it. Calls without a seed share the
            fit's generator, which is not thread-safe: from several threads, give each call a seed.
        num_rows : int, optional
            ``n_rows`` by SDV's name (``sample(num_rows=100)``); give one of the two.

        Returns
        -------
        DataFrame
            ``n_rows`` rows, the fitted table's columns in its order and types.
        """
        if num_rows is not None:
            if n_rows is not None:
                raise SynthDPError("give n_rows or num_rows (SDV's name for it), not both")
            n_rows = num_rows
        model = self._sampling_model(method="sample()")
        if condition is not None:
            model = model_file.where(model, condition)
        return model_file.draw(model, model.rows if n_rows is None else n_rows, self._sampling_rng(seed))

    def sample_from_conditions(self, known: pd.DataFrame | Iterable[model_file.Condition], *,
                               seed: int | None = None) -> pd.DataFrame:
        """Rows from the fitted distribution restricted to given values
        (:func:`synthdp.pipeline.model.given`), each column in the type :meth:`sample` gives it.

        Parameters
        ----------
        known : DataFrame or iterable of Condition
            Either a partial DataFrame of given values (missing cells for the columns to
            draw): one row per row of it, indexed as it is, as SDV's ``sample_remaining_columns``; or a
            list of :class:`synthdp.Condition` (``Condition({"sex": "Female"}, num_rows=100)``; SDV's
            own ``Condition`` objects too): each condition's ``num_rows`` rows in turn, indexed 0, 1,
            ..., as SDV's ``sample_from_conditions``. A continuous column can be given only where it
            declares its decimals; give ranges with :meth:`sample`'s ``condition``.
        seed : int, optional
            As :meth:`sample`'s ``seed``.

        Returns
        -------
        DataFrame
            The given values with the other columns drawn, in the fitted table's column order.
        """
        model = self._sampling_model(method="sample_from_conditions()")
        if isinstance(known, pd.DataFrame):
            return model_file.given(model, known, self._sampling_rng(seed))
        rows, counts = model_file.condition_rows(known)
        drawn = model_file.given(model, rows, self._sampling_rng(seed), counts)
        return drawn.reset_index(drop=True)

    def sample_copies(self, copies: int = 20, n_rows: int | None = None, *, seed: int | None = None,
                      progress: bool = False) -> Copies:
        """Copies of this release that carry its uncertainty, for :func:`synthdp.infer`'s intervals.

        Each copy draws a population of the release's n rows from the fitted distribution, runs
        the release's mechanism on it again (its plan, calibration and fresh noise of the same
        scale), fits and samples ``n_rows`` rows (default n): a parametric bootstrap of the whole
        release (:mod:`synthdp.pipeline.copies`). That distribution and each copy's fit keep
        every pair the release measured at its noisy reading (no threshold), so that a weak
        pair's uncertainty is in the copies. Post-processing of the release: no data read, no
        budget spent. Takes about ``copies`` times the release's own fit; the report's timings do
        not change, the result's ``seconds_per_copy`` says how long each took. A model loaded from a
        file (:meth:`load`) makes them too, where the file holds its release (written by this
        synthdp: format version 4): the same copies as the fit's under the same ``seed``.

        Parameters
        ----------
        copies : int, default 20
            Number of copies.
        n_rows : int, optional
            Rows of each copy's table (default: the release's n).
        seed : int, optional
            As :meth:`sample`'s ``seed``: the same copies from the same fit.
        progress : bool, default False
            Show a progress bar on stderr, one step a copy.

        Returns
        -------
        Copies
            The copies' tables and a table sampled from this release (``reference``), for
            :func:`synthdp.infer`.
        """
        loaded = getattr(self, "sampling_model_", None)
        if getattr(self, "model_", None) is None and loaded is not None:
            made = release_copies(loaded, copies, n_rows, self._sampling_rng(seed), progress)  # the file's release
        else:
            made = release_copies(self._model(method="sample_copies()"), copies, n_rows, self._sampling_rng(seed),
                                  progress)
        # the fitted DataFrame's categories and dates, as sample gives them
        typed = self._sampling_model(method="sample_copies()").typed
        return replace(made, tables=[typed(table) for table in made.tables], reference=typed(made.reference))

    def save(self, path: str | Path, *, overwrite: bool = False) -> None:
        """Write the fitted model to ``path``: the fitted distribution, the columns' domains or schema,
        the decoders and the privacy report, no raw value and no pickle (:mod:`synthdp.pipeline.model`);
        :meth:`load` reads it back, in any process, to sample the same rows under a seed.

        Parameters
        ----------
        path : str or Path
            The model file to write, atomically (a temporary file beside it, then put in place).
        overwrite : bool, default False
            Replace a file that exists at ``path``. Without it such a path is refused with an
            error, and nothing is written: a user's file is never replaced unasked (as the
            command line's ``--overwrite``).
        """
        model = self._sampling_model(with_report=True, method="save()")
        model_file.save(model, path, overwrite=overwrite)

    @classmethod
    def load(cls, path: str | Path) -> SmoothSynthesizer:
        """A synthesizer that samples from a model file written by :meth:`save` (or ``synthdp fit``);
        it reads no data, and its parameters are the fit's (fitting it again on data is a new release, which
        replaces the loaded model).

        Parameters
        ----------
        path : str or Path
            The model file.

        Returns
        -------
        SmoothSynthesizer
            An estimator that samples (:meth:`sample`, :meth:`sample_from_conditions`, :meth:`save`,
            :meth:`privacy_report`); the methods that need the release itself raise an error.
        """
        model = model_file.load(path)
        config = model.report.get("parameters", {}).get("config", {})
        synth = cls(**{name: value for name, value in config.items() if name in _DEFAULTS})
        synth.sampling_model_ = model
        return synth

    @property
    def theory_rows(self) -> int:
        """The paper's m, the number of synthetic rows its accuracy theorem assumes."""
        return self._release("theory_rows needs the fit's plan", method="theory_rows").plan.theory.m

    def summary(self, report: dict | None = None) -> Summary:
        """The release as a :class:`synthdp.Summary`, which answers smooth queries without sampling.

        It holds the released moments and the privacy report of this fit (``report``, if
        given, is embedded instead: say, one that describes a sampled table); it spends no
        budget and never reads the data. A model loaded from a file gives it too, where the file
        holds its release (format version 4).

        Parameters
        ----------
        report : dict, optional
            The privacy report to embed (default: :meth:`privacy_report`'s).

        Returns
        -------
        Summary
            The released moments, the evaluator of smooth queries, and the report.
        """
        return reporting.smooth_summary(self._release(method="summary()"),
                                        self.privacy_report() if report is None else report)

    def marginal_summary(self, report: dict | None = None) -> MarginalSummary:
        """The release of a mixed table as a :class:`synthdp.MarginalSummary`.

        It answers marginals of the binary and categorical columns from the noisy moments,
        without sampling; no budget, no data access.

        Parameters
        ----------
        report : dict, optional
            As in :meth:`summary`.

        Returns
        -------
        MarginalSummary
            The schema, the released moments and the report.
        """
        return reporting.marginal_summary(self._release(method="marginal_summary()"),
                                          self.privacy_report() if report is None else report)

    # --------------------------------------------------------------- report
    def privacy_report(self, output: pd.DataFrame | None = None, *, data_timings: bool = False) -> dict:
        """Everything about the release a user may see: budget per stage, sizes, LP, timings.

        A model loaded from a file gives the report it was saved with.

        Parameters
        ----------
        output : DataFrame, optional
            A synthetic table sampled from this fit, described in the report's ``output`` entry
            (its rows and distinct rows); None leaves that entry empty.
        data_timings : bool, default False
            Also the times of the stages that read the data; they depend on the data, so the
            report then says it is not differentially private, and a budget file the fit charged
            records the release as not private (for benchmarks: ``timings_`` holds every stage's
            time in this process without a report; a pickled or copied fit keeps only the times after the
            release). Refused for a model loaded from a file or a pickled fit.

        Returns
        -------
        dict
            Plain JSON types: ``privacy`` (the budget spent, per stage and in total), the
            parameters, sizes, LP and timings.
        """
        if getattr(self, "model_", None) is None and getattr(self, "sampling_model_", None) is not None:
            if data_timings:
                raise SynthDPError("a model file holds the report without the data stages' times: data_timings "
                                   "needs the fit, in the process that fitted")
            report = dict(self.sampling_model_.report)
            return {**report, "output": reporting.describe_output(output)} if output is not None else report
        model = self._model(method="privacy_report()")
        report = reporting.privacy_report(model, None if output is None else reporting.describe_output(output),
                                          data_timings)
        reservation = getattr(self, "budget_reservation_", None)
        if reservation is not None and data_timings:  # a report that is not private: its release is recorded so
            lifetime.mark_not_private(reservation)
        if reservation is not None:  # the table's budget across releases (fit's budget_file)
            report = {**report, "privacy": {**report["privacy"], "budget_file": lifetime.summary(reservation)}}
        return report

    def _model(self, needs: str = "it needs the fit, in the process that fitted", *,
               method: str = "summary()") -> run.FittedModel:
        """This fit's model, for the public ``method`` (``"summary()"``); where there is none, a
        :class:`synthdp.errors.NotFittedError` naming ``method`` (not fitted), or an error naming what
        ``needs`` it (loaded from a model file, which holds the fitted distribution and the release, not
        the fit's ledger, LP or candidates)."""
        model = getattr(self, "model_", None)
        if model is None:
            if getattr(self, "sampling_model_", None) is not None:
                raise SynthDPError(f"a model loaded from a file samples rows only: {needs}")
            raise not_fitted(method)
        return model

    def _release(self, needs: str = "summaries need the release", *, method: str = "summary()") -> Release:
        """This fit's release, or the one a loaded model file holds (made whole from it); where there is
        none, :meth:`_model`'s errors, or for a file written before the release was kept one naming what
        ``needs`` it."""
        loaded = getattr(self, "sampling_model_", None)
        if getattr(self, "model_", None) is None and loaded is not None:
            kept = model_file.kept_release(loaded)
            if kept is None:
                raise SynthDPError(f"a model loaded from a file written before synthdp kept the release (format version "
                                   f"3 or earlier) samples rows only: {needs}; fit again")
            return kept[0]
        return self._model(method=method).release

    def _sampling_model(self, with_report: bool = False, *, method: str = "sample()") -> model_file.SamplingModel:
        """The fitted distribution to sample, for the public ``method``: this fit's, or the loaded model file's."""
        if getattr(self, "model_", None) is None and getattr(self, "sampling_model_", None) is not None:
            return self.sampling_model_
        model = self._model(method=method)
        return replace(run.sampling_model(model, self.privacy_report() if with_report else None),
                       dtypes=getattr(self, "dtypes_", {}))

    def _sampling_rng(self, seed: int | None) -> np.random.Generator:
        if seed is not None:
            return model_file.sampling_rng(seed)
        model = getattr(self, "model_", None)
        return model.rng if model is not None else np.random.default_rng()
