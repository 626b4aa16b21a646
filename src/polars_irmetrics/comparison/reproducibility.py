"""Did the reproduction reproduce? repro_eval's measures: :func:`reproducibility`.

Breuer et al. (SIGIR 2020, "How to Measure the Reproducibility of System-oriented IR
Experiments"; their ``repro_eval`` 0.5.0): an original experiment (a *baseline* and an
*advanced* run) and its reproduction, compared at three levels:

* **document order**: repro_eval's Kendall's τ Union (``ktu``) and finite RBO
  (``rbo_repro_eval``) of each reproduced run against its original, per topic, averaged;
* **effectiveness per topic**: the root mean square error of each metric between the
  original and reproduced per-topic values (``rmse``), and normalised by the largest
  error possible, ``sqrt(mean(max(o, 1 - o)^2))`` (``nrmse``), which assumes values in
  [0, 1]: a count (``num_ret``) or a metric with a value outside [0, 1] (``dcg``) is
  named in an ``IrmWarning`` (its ``nrmse`` is no share of a largest error);
* **overall effects**: the effect ratio ``ER = mean(rep_a - rep_b) / mean(orig_a -
  orig_b)`` and the delta relative improvement ``delta_ri = RI_orig - RI_rep`` with
  ``RI = (mean_a - mean_b) / mean_b``;
* **significance**: the paired (``p_paired``, :func:`scipy.stats.ttest_rel`) and
  unpaired (``p_unpaired``, :func:`scipy.stats.ttest_ind`) two-sided t-tests of the
  original against the reproduced per-topic values, run by run (as repro_eval's
  ``statistics.ttest``: 1 for every metric of a run whose tests are all NaN and whose
  per-topic values are the original's, topic for topic; any other NaN p-value is kept,
  as theirs, and named in an ``IrmWarning`` with its cause).

Replicability (the reproduction on another collection, ``qrels_reproduced=``): topics
differ, so only ER, ΔRI and the unpaired t-test are defined (repro_eval's
``RplEvaluator``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import polars as pl

from polars_irmetrics.comparison.caller import parsed_as_called
from polars_irmetrics.comparison.frame import schema_groups
from polars_irmetrics.door.evaluate import evaluate
from polars_irmetrics.errors import (
    CoverageWarning,
    InvalidValueError,
    IrmWarning,
    MetricParameterError,
    QuerySetError,
)
from polars_irmetrics.ground.inputs import FrameInput, as_polars
from polars_irmetrics.ground.lazy import LazyModule
from polars_irmetrics.ground.options import READ_BY, plain_number
from polars_irmetrics.metrics.agreement import repro_eval_depths
from polars_irmetrics.metrics.registry import INPUTS, MetricRequest
from polars_irmetrics.metrics.requests import refuse_summaries

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from polars_irmetrics.ground.options import EvalKwargs

scipy_stats = LazyModule("scipy.stats")

__all__ = ["reproducibility"]

_RUN = "__irm_run"
_SIDES = ("baseline", "advanced")
#: repro_eval's ``RBO_P`` and ``RBO_DEPTH`` (``RUN_LENGTH``): ``p=`` and ``cutoff=``'s defaults.
_RBO_P = 0.95
_RBO_DEPTH = 1000


def reproducibility(
    original: Mapping[str, FrameInput],
    reproduced: Mapping[str, FrameInput],
    metrics: str | Iterable[str],
    *,
    qrels: FrameInput,
    qrels_reproduced: FrameInput | None = None,
    p: float = _RBO_P,
    cutoff: int = _RBO_DEPTH,
    **options: Unpack[EvalKwargs],
) -> pl.DataFrame:
    """repro_eval's reproducibility measures, in one tidy frame.

    Parameters
    ----------
    original, reproduced
        ``{"baseline": run, "advanced": run}`` (``"advanced"`` optional: without it
        ER and ΔRI are left out), runs as :func:`~polars_irmetrics.evaluate` reads them.
    metrics
        The metrics of the per-topic comparisons (``["ndcg_cut_10", "P_10", "map"]``).
        Every measure reads their per-topic values, so a metric that summarizes them
        its own way (``agg=``: ``"P(agg='std')@5"``; ir_measures' ``NumRet``, a sum;
        ``gm_map``, a geometric mean) is
        refused, as :func:`~polars_irmetrics.compare` refuses it.
    qrels
        Judgments of the original runs (and of the reproduced ones, unless
        ``qrels_reproduced`` is given).
    qrels_reproduced
        Judgments of another collection: replicability; only ``er``, ``delta_ri`` and
        ``p_unpaired`` are computed.
    p, cutoff
        The RBO's persistence and depth, the latter also the depth KTU trims both runs
        to (repro_eval's ``RBO_P = 0.95``, ``RBO_DEPTH = RUN_LENGTH = 1000``); numpy's
        numbers are read as the Python numbers they equal (``np.int64(10)``). Read by
        the document orders alone, which replicability (``qrels_reproduced=``) does not
        compare: there a value other than the default is refused.
    **options
        :func:`~polars_irmetrics.evaluate`'s options (``query_id=``, ``order=``,
        ``unretrieved=``...), for the per-topic values. repro_eval scores with
        pytrec_eval, which skips a judged topic a run did not retrieve; this library
        scores it 0 (``unretrieved="zero"``): pass ``unretrieved="drop"`` to match
        (where two runs that are paired topic by topic then differ in topics, the call
        is refused: ``QuerySetError``, as repro_eval fails there).
        The document orders (KTU, RBO) read those of them that a rank similarity reads
        (the run's columns, ``order=``, ``unretrieved=``...); an option that only the
        metrics read (``relevance_level=``, ``depth=``, ``judged_only=``) reaches
        them alone, and one that no metric of ``metrics`` reads is refused, as
        :func:`~polars_irmetrics.evaluate` refuses it.

    Returns
    -------
    pl.DataFrame
        ``measure`` (``ktu``, ``rbo``, ``rmse``, ``nrmse``, ``er``, ``delta_ri``,
        ``p_paired``, ``p_unpaired``), ``metric`` (null for ``ktu`` and ``rbo``),
        ``run`` (``baseline`` or ``advanced``; null for ``er`` and ``delta_ri``, which
        read both) and ``value``. A table of it: ``frame.pivot(on="run", index=
        ["measure", "metric"], values="value")``; as a publication table (text,
        Markdown, LaTeX, HTML: measures as rows, metrics as columns, nothing marked
        best): ``irm.report(frame)``.

    Raises
    ------
    InvalidValueError
        ``original`` or ``reproduced`` not a mapping (a list of runs, a run), a key of
        either other than ``baseline`` and ``advanced``, ``baseline`` missing, or the two
        naming different runs; ``p=`` or ``cutoff=`` given with ``qrels_reproduced=``
        (no document order is compared there); and whatever
        :func:`~polars_irmetrics.evaluate` refuses.
    MetricParameterError
        ``p`` not strictly between 0 and 1, ``cutoff`` not a whole number of at least 1
        (named as given, ``p=0``, not as the metrics built from them); a metric with
        ``agg=`` (or a name that implies it, ``NumRet``), which the per-topic values
        would ignore.
    QuerySetError
        A run without a per-topic value (empty, or none of its topics judged); runs that
        repro_eval pairs topic by topic with other topics (a policy such as
        ``unretrieved="drop"`` left a topic out of one): an original and its
        reproduction (``rmse``, ``nrmse``, ``p_paired``), or a baseline and its
        advanced run (``er``).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> qrels = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"],
    ...                       "relevance": [1, 1]})
    >>> run = pl.DataFrame({"query_id": ["q1", "q1", "q2", "q2"],
    ...                     "doc_id": ["a", "b", "a", "b"], "score": [2.0, 1.0, 2.0, 1.0]})
    >>> again = run.with_columns(pl.col("score").reverse().over("query_id"))
    >>> out = irm.reproducibility({"baseline": run}, {"baseline": again}, ["P_1"],
    ...                           qrels=qrels)
    >>> out.filter(pl.col("measure").is_in(["rmse", "ktu"]))
    shape: (2, 4)
    ┌─────────┬────────┬──────────┬───────┐
    │ measure ┆ metric ┆ run      ┆ value │
    │ ---     ┆ ---    ┆ ---      ┆ ---   │
    │ str     ┆ str    ┆ str      ┆ f64   │
    ╞═════════╪════════╪══════════╪═══════╡
    │ ktu     ┆ null   ┆ baseline ┆ -1.0  │
    │ rmse    ┆ P_1    ┆ baseline ┆ 1.0   │
    └─────────┴────────┴──────────┴───────┘
    """
    if "per_query" in options:
        raise InvalidValueError(
            "per_query= is not an option of reproducibility: its measures read every "
            "topic's values already and give one value per measure, metric and run (the "
            "per-topic values of a run: irm.evaluate(run, metrics, qrels=qrels), which "
            "gives them by default)"
        )
    taken = sorted(set(options) & {"systems", "by"})
    if taken:
        raise InvalidValueError(
            f"{taken[0]}= is not an option of reproducibility: it compares one baseline "
            "and one advanced run per side; evaluate each group's runs in a call of its own"
        )
    for name, given in (("original", original), ("reproduced", reproduced)):
        if not isinstance(given, Mapping):
            raise InvalidValueError(
                f"{name}= must map 'baseline' (and optionally 'advanced') to runs, got a "
                f"{type(given).__name__}; e.g. {name}={{'baseline': run_b, 'advanced': run_a}}"
            )
        unknown = sorted(set(given) - set(_SIDES))
        if unknown or "baseline" not in given:
            raise InvalidValueError(
                f"{name}= maps 'baseline' (and optionally 'advanced') to runs, got keys "
                f"{sorted(given)!r}; e.g. {name}={{'baseline': run_b, 'advanced': run_a}}"
            )
    p, cutoff = plain_number(p), plain_number(cutoff)  # np.int64(10) is 10
    _check_depth_options(p, cutoff)
    if qrels_reproduced is not None:
        _refuse_depth_options(p, cutoff)
    if set(original) != set(reproduced):
        raise InvalidValueError(
            f"original= has {sorted(original)!r} and reproduced= {sorted(reproduced)!r}; "
            "reproduce the same runs"
        )
    sides = [side for side in _SIDES if side in original]
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    # every measure reads the per-topic values (their errors, means and tests), which
    # agg= does not change: a metric that summarizes them its own way is refused
    # a fix names this call; a metric of another table is refused before its cutoff
    requests = parsed_as_called(names, "irm.reproducibility", usable=_refuse_other_tables)
    refuse_summaries(requests, calls="irm.reproducibility")
    paired = qrels_reproduced is None
    orig = _per_topic(original, sides, names, qrels, options, ("original", "qrels="))
    rep = _per_topic(
        reproduced,
        sides,
        names,
        qrels if paired else qrels_reproduced,
        options,
        ("reproduced", "qrels=" if paired else "qrels_reproduced="),
    )
    query_id = str(options.get("query_id", "query_id"))
    _check_topics(orig, rep, sides, query_id, paired, options)
    frames: list[pl.DataFrame] = []
    if paired:
        frames.append(_document_order(original, reproduced, sides, p, cutoff, options))
        frames.append(_errors(orig, rep, names, query_id))
        _warn_unbounded(orig, rep, requests)
    if len(sides) == 2:
        frames.append(_effects(orig, rep, names))
    tests = _tests(orig, rep, sides, names, query_id, paired)
    _warn_nan_tests(tests, orig, rep, query_id)
    frames.append(tests)
    return pl.concat(frames, how="vertical")


def _warn_unbounded(
    orig: pl.DataFrame, rep: pl.DataFrame, requests: list[tuple[str, MetricRequest]]
) -> None:
    """An :class:`~polars_irmetrics.errors.IrmWarning` naming the metrics whose ``nrmse``
    means nothing: it divides the RMSE by ``sqrt(mean(max(o, 1 - o)^2))``, the largest
    error a per-topic value ``o`` in [0, 1] allows, and a count (``num_ret``: declared
    ``integer``) or a metric with a per-topic value outside [0, 1] (``dcg``) is not in
    [0, 1]. The values stay (repro_eval's formula); their ``rmse`` is the measure."""
    both = pl.concat([orig, rep], how="vertical_relaxed")
    outside = both.group_by("metric").agg(
        ((pl.col("value") < 0) | (pl.col("value") > 1)).any().alias("out"),
        pl.col("value").min().alias("low"),
        pl.col("value").max().alias("high"),
    )
    found = {row["metric"]: row for row in outside.iter_rows(named=True)}
    said = []
    for label, request in requests:
        row = found.get(label)
        if request.metric.integer:
            said.append(f"{label!r} is a count")
        elif row is not None and row["out"]:
            said.append(f"{label!r} has per-topic values from {row['low']!r} to {row['high']!r}")
    if said:
        warnings.warn(
            "nrmse assumes per-topic values in [0, 1]: it divides the RMSE by "
            "sqrt(mean(max(o, 1 - o)^2)), the largest error such values allow; "
            + "; ".join(said)
            + (", so its nrmse is" if len(said) == 1 else ", so their nrmse are")
            + " no share of a largest error: read the rmse",
            IrmWarning,
            stacklevel=4,  # the user's call: ground.calls' check is a frame
        )


def _warn_nan_tests(
    tests: pl.DataFrame, orig: pl.DataFrame, rep: pl.DataFrame, query_id: str
) -> None:
    """An :class:`~polars_irmetrics.errors.IrmWarning` for each NaN p-value of the
    t-tests, with its cause: the same per-topic values on every topic (the paired t is
    0 / 0), two samples each constant at one value (the unpaired t is 0 / 0), or one
    topic (no spread to estimate). repro_eval gives NaN there too (and 1 only where
    every metric of a run is the original's, topic for topic, as :func:`_tests`
    does)."""
    nan = tests.filter(pl.col("value").is_nan())
    for measure, metric, run, _ in nan.iter_rows():
        values = [
            frame.filter((pl.col(_RUN) == run) & (pl.col("metric") == metric))
            .sort(query_id)["value"]
            .cast(pl.Float64)
            for frame in (orig, rep)
        ]
        if min(len(v) for v in values) < 2:
            why = "a t-test needs two topics or more, and a run has one"
        elif measure == "p_paired" and values[0].equals(values[1]):
            why = (
                "the reproduced per-topic values equal the original's on every topic, so "
                "the paired t statistic is 0 / 0"
            )
        elif all(v.n_unique() == 1 for v in values):
            why = (
                f"the original and reproduced per-topic values are all {values[0][0]!r}, "
                "so the unpaired t statistic is 0 / 0"
            )
        else:
            why = "scipy's t-test gives NaN"
        warnings.warn(
            f"{measure} of {metric!r} (run {run!r}) is NaN: {why} (scipy and repro_eval "
            "give NaN too; nothing tells the reproduction from the original there)",
            IrmWarning,
            stacklevel=4,  # the user's call: ground.calls' check is a frame
        )


def _refuse_other_tables(requests: list[tuple[str, MetricRequest]]) -> None:
    """Refuse a metric that reads a table beside the run and its judgments (a reference
    run, a policy, the interaction history...): reproducibility takes none of them, and
    the door's refusal would tell to pass the table to irm.evaluate, a keyword this
    call does not take.

    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> _refuse_other_tables(parse_metric_list(["ndcg@10", "rbo"]))
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: metric 'rbo' reads a reference run ...
    """
    for label, request in requests:
        for needed in request.reads:
            if needed in INPUTS and needed != "judgments":
                what, keyword = INPUTS[needed]
                raise MetricParameterError(
                    f"metric {label!r} reads {what}, which irm.reproducibility does not "
                    "take (it compares the per-topic values of runs and their judgments): "
                    f"evaluate it with irm.evaluate(run, [{label!r}], {keyword}=...) for "
                    "each run"
                )


def _check_depth_options(p: object, cutoff: object) -> None:
    """``p`` and ``cutoff`` as the caller wrote them (not as the metric names built from
    them, ``rbo_repro_eval(p=...)@...``, which the caller never wrote).

    >>> _check_depth_options(0.95, 1000)
    >>> _check_depth_options(0.95, 0)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: cutoff=0 is not a depth: it must be a whole number >= 1 (of the KTU and RBO of the document orders, repro_eval's RBO_DEPTH), e.g. cutoff=1000
    """  # noqa: E501
    number = isinstance(p, int | float) and not isinstance(p, bool)
    if not (number and 0 < p < 1):  # type: ignore[operator]
        raise MetricParameterError(
            f"p={p!r} is not a persistence: it must be a number strictly between 0 and 1 "
            "(of the RBO of the document orders, repro_eval's RBO_P), e.g. p=0.95"
        )
    if not (isinstance(cutoff, int) and not isinstance(cutoff, bool) and cutoff >= 1):
        raise MetricParameterError(
            f"cutoff={cutoff!r} is not a depth: it must be a whole number >= 1 (of the KTU "
            "and RBO of the document orders, repro_eval's RBO_DEPTH), e.g. cutoff=1000"
        )
    # the RBO's weights of so many depths (10**20: never built) are refused by name
    repro_eval_depths(float(p), cutoff, f"p={p!r} with cutoff={cutoff!r}")  # type: ignore[arg-type]


def _refuse_depth_options(p: float, cutoff: int) -> None:
    """Refuse ``p`` and ``cutoff`` given (not the defaults) to a replicability
    (``qrels_reproduced=``): they set the KTU and RBO of the document orders, which
    runs on another collection's topics do not have.

    >>> _refuse_depth_options(0.95, 1000)
    >>> _refuse_depth_options(0.5, 1000)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: p=0.5 is not read with qrels_reproduced= ...
    """
    given = {name: value for name, value, default in (("p", p, _RBO_P),
             ("cutoff", cutoff, _RBO_DEPTH)) if value != default}  # fmt: skip
    if not given:
        return
    named = " and ".join(f"{name}={value!r}" for name, value in given.items())
    dropped = " and ".join(f"{name}=" for name in given)
    raise InvalidValueError(
        f"{named} {'is' if len(given) == 1 else 'are'} not read with qrels_reproduced= "
        "(replicability: the reproduced runs are judged on another collection, so only "
        "er, delta_ri and p_unpaired are computed, and p= and cutoff= set the KTU and "
        f"RBO of the document orders, which are not compared); drop {dropped} "
        f"({'it' if len(given) == 1 else 'they'} would change nothing), or drop "
        "qrels_reproduced= to compare the document orders on the same collection"
    )


def _parts(runs: Mapping[str, FrameInput], sides: list[str]) -> list[list[str]]:
    """The sides in groups of one schema each (:func:`~.frame.schema_groups`, as a
    comparison's runs): stacking runs of two schemas would cast their columns to a
    supertype (Int64 scores beside Float64 ones ranked as floats)."""
    return schema_groups({side: as_polars(runs[side], side).lazy() for side in sides})


def _together(runs: Mapping[str, FrameInput], sides: list[str]) -> pl.LazyFrame:
    """The ``sides`` of ``runs`` (one schema: :func:`_parts`) as one long frame."""
    return pl.concat(
        [
            as_polars(runs[side], side).lazy().with_columns(pl.lit(side).alias(_RUN))
            for side in sides
        ],
        how="diagonal",
    )


def _per_topic(
    runs: Mapping[str, FrameInput],
    sides: list[str],
    metrics: list[str],
    qrels: FrameInput | None,
    options: Mapping[str, Any],
    words: tuple[str, str] = ("original", "qrels="),
) -> pl.DataFrame:
    """``run, query_id, metric, value``: every run's per-topic values, in one plan per
    schema of the runs (:func:`_parts`), collected together. ``words``: the runs' side
    (``"original"``, ``"reproduced"``) and the keyword of their judgments, in which the
    coverage warnings name a run (:func:`_in_side_words`)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plans = [
            evaluate(
                _together(runs, part),
                metrics,
                qrels=qrels,
                systems=_RUN,
                per_query=True,
                **options,
            )
            for part in _parts(runs, sides)
        ]
        values = pl.concat(plans, how="vertical_relaxed").collect()
    for said in caught:  # in this call's words: which side's run, judged by which table
        text = str(said.message)
        if issubclass(said.category, CoverageWarning):
            text = _in_side_words(text, sides, *words)
        warnings.warn(text, said.category, stacklevel=4)  # a frame: ground.calls
    query_id = str(options.get("query_id", "query_id"))
    return values.unpivot(on=metrics, index=[_RUN, query_id], variable_name="metric")


def _document_order(
    original: Mapping[str, FrameInput],
    reproduced: Mapping[str, FrameInput],
    sides: list[str],
    p: float,
    depth: int,
    options: Mapping[str, Any],
) -> pl.DataFrame:
    names = {f"ktu@{depth}": "ktu", f"rbo_repro_eval(p={p})@{depth}": "rbo"}
    # the options a rank similarity reads (the run's columns, order=, unretrieved=...);
    # the others (relevance_level=, depth=...) are the per-topic metrics' (_per_topic),
    # which refuse one that none of them reads
    read = {
        name: value
        for name, value in options.items()
        if name not in READ_BY or "reference" in READ_BY[name]
    }
    # one plan per schema of the runs of either side (:func:`_parts`)
    parts = [
        part
        for group in _parts(reproduced, sides)
        for part in _parts({side: original[side] for side in group}, group)
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plans = [
            evaluate(
                _together(reproduced, part),
                list(names),
                reference=_together(original, part),
                systems=_RUN,
                **read,
            )
            for part in parts
        ]
        means = pl.concat(plans, how="vertical_relaxed").collect()
    for said in caught:  # in this call's words: the original runs are the reference
        text = str(said.message)
        if issubclass(said.category, CoverageWarning):
            text = _in_reproduction_words(text)
        warnings.warn(text, said.category, stacklevel=4)  # a frame: ground.calls
    return (
        means.unpivot(on=list(names), index=_RUN, variable_name="measure")
        .select(
            pl.col("measure").replace_strict(names),
            pl.lit(None, dtype=pl.String).alias("metric"),
            pl.col(_RUN).alias("run"),
            pl.col("value").cast(pl.Float64),
        )
        .sort("measure", "run", descending=[False, True])
    )


def _errors(
    orig: pl.DataFrame, rep: pl.DataFrame, metrics: list[str], query_id: str
) -> pl.DataFrame:
    """RMSE and normalised RMSE per run and metric, over the original's topics."""
    joined = orig.join(rep, on=[_RUN, query_id, "metric"], how="left", suffix="_rep")
    error = (pl.col("value") - pl.col("value_rep")).pow(2).mean().sqrt()
    largest = pl.max_horizontal(pl.col("value"), 1.0 - pl.col("value")).pow(2).mean().sqrt()
    grouped = joined.group_by(_RUN, "metric").agg(
        error.alias("rmse"), (error / largest).alias("nrmse")
    )
    return _tidy(grouped, ["rmse", "nrmse"], metrics)


def _effects(orig: pl.DataFrame, rep: pl.DataFrame, metrics: list[str]) -> pl.DataFrame:
    """ER and ΔRI per metric, from the four runs' means and mean improvements."""
    rows = []
    for frame, name in ((orig, "orig"), (rep, "rep")):
        wide = frame.group_by("metric").agg(
            pl.col("value").filter(pl.col(_RUN) == "advanced").mean().alias(f"{name}_a"),
            pl.col("value").filter(pl.col(_RUN) == "baseline").mean().alias(f"{name}_b"),
        )
        rows.append(wide)
    both = rows[0].join(rows[1], on="metric")
    improvement_orig = pl.col("orig_a") - pl.col("orig_b")
    improvement_rep = pl.col("rep_a") - pl.col("rep_b")
    ri_orig = improvement_orig / pl.col("orig_b")
    ri_rep = improvement_rep / pl.col("rep_b")
    out = both.select(
        "metric",
        pl.lit(None, dtype=pl.String).alias(_RUN),
        (improvement_rep / improvement_orig).alias("er"),
        (ri_orig - ri_rep).alias("delta_ri"),
    )
    _warn_undefined(both.join(out, on="metric"))
    return _tidy(out, ["er", "delta_ri"], metrics)


def _warn_undefined(effects: pl.DataFrame) -> None:
    """Say where ER or ΔRI is not a number (inf or NaN): the division by an original
    mean improvement of 0 (ER) or by a baseline mean of 0 (ΔRI), which repro_eval
    gives as numpy's inf or nan; the values stay, the cause is named."""
    for row in effects.sort("metric").iter_rows(named=True):
        causes = []
        if row["er"] is not None and not math.isfinite(row["er"]):
            causes.append(
                f"er is {row['er']} (the original advanced run's mean equals its "
                f"baseline's, {row['orig_b']!r}: no improvement to set the reproduced one "
                "against; read the reproduced runs' mean improvement itself)"
            )
        if row["delta_ri"] is not None and not math.isfinite(row["delta_ri"]):
            zero = [
                name
                for side, name in (("orig", "original"), ("rep", "reproduced"))
                if row[f"{side}_b"] == 0
            ]
            which = (
                "the original and the reproduced baselines' means are"
                if len(zero) == 2
                else f"the {zero[0] if zero else 'a'} baseline's mean is"
            )
            causes.append(
                f"delta_ri is {row['delta_ri']} ({which} 0: a relative improvement divides "
                "by it; read the mean improvements themselves)"
            )
        if causes:
            warnings.warn(
                f"metric {row['metric']!r}: " + "; ".join(causes),
                IrmWarning,
                stacklevel=5,  # the user's call: ground.calls' check is a frame
            )


def _tests(
    orig: pl.DataFrame,
    rep: pl.DataFrame,
    sides: list[str],
    metrics: list[str],
    query_id: str,
    paired: bool,
) -> pl.DataFrame:
    """The two-sided t-tests of the original against the reproduced per-topic values,
    run by run as repro_eval's ``statistics.ttest`` (one call per run, every metric a
    column): where every p-value of a run is NaN and its per-topic values are the
    original's (the same topics, the same values of every metric), each is 1."""
    tested: dict[str, list[npt.NDArray[np.float64]]] = {"p_paired": [], "p_unpaired": []}
    if not paired:
        del tested["p_paired"]
    for side in sides:
        (o_topics, o), (r_topics, r) = (_wide(f, side, metrics, query_id) for f in (orig, rep))
        with warnings.catch_warnings():  # a constant or one-topic sample: scipy's NaN
            warnings.simplefilter("ignore")
            if paired:  # the same topics (_check_topics), in one order
                tested["p_paired"].append(_p_values(scipy_stats.ttest_rel(o, r, axis=0)))
            tested["p_unpaired"].append(_p_values(scipy_stats.ttest_ind(o, r, axis=0)))
        same = o_topics.equals(r_topics) and np.array_equal(o, r)
        for values in tested.values():
            if same and np.isnan(values[-1]).all():
                values[-1] = np.ones_like(values[-1])  # repro_eval: identical scores, p = 1
    schema = {"measure": pl.String, "metric": pl.String, "run": pl.String, "value": pl.Float64}
    frames = [
        pl.DataFrame(
            {
                "measure": [measure] * (len(sides) * len(metrics)),
                "metric": metrics * len(sides),
                "run": [side for side in sides for _ in metrics],
                "value": np.concatenate(values),
            },
            schema=schema,
        )
        for measure, values in tested.items()
    ]
    return pl.concat(frames)


def _p_values(result: Any) -> npt.NDArray[np.float64]:
    return np.atleast_1d(np.asarray(result.pvalue, dtype=np.float64))


def _wide(
    frame: pl.DataFrame, side: str, metrics: list[str], query_id: str
) -> tuple[pl.Series, npt.NDArray[np.float64]]:
    """One run's topics (sorted) and its ``topics × metrics`` values."""
    wide = (
        frame.filter(pl.col(_RUN) == side)
        .pivot(on="metric", index=query_id, values="value")
        .sort(query_id)
    )
    return wide[query_id], wide.select(metrics).to_numpy().astype(np.float64)


def _check_topics(
    orig: pl.DataFrame,
    rep: pl.DataFrame,
    sides: list[str],
    query_id: str,
    paired: bool,
    options: Mapping[str, Any],
) -> None:
    """Refuse what repro_eval cannot compare either: a run without a per-topic value (an
    empty run, or none of its topics judged), an original and a reproduced run of other
    topics (``paired``: RMSE and the paired t-test pair them topic by topic), and a
    baseline and an advanced run of other topics (ER's mean improvement pairs them).

    Their topics differ only where a policy leaves a topic out of one of them (a judged
    topic a run did not retrieve, under ``unretrieved='drop'``) or adds one to one
    (``unjudged='zero'``)."""
    judged = {"original": "qrels=", "reproduced": "qrels=" if paired else "qrels_reproduced="}
    for name, frame in (("original", orig), ("reproduced", rep)):
        for side in sides:
            if not frame.filter(pl.col(_RUN) == side).height:
                raise QuerySetError(
                    f"{name}[{side!r}] has no per-topic value: the run is empty, or "
                    f"{judged[name]} judges none of its topics; give the run's rankings "
                    "of the judged topics"
                )
    policy = options.get("unretrieved", "zero")
    why = (
        " (unretrieved='drop' leaves out a judged topic a run did not retrieve)"
        if policy == "drop"
        else ""
    )
    fix = (
        "pass unretrieved='zero' (the default: a judged topic a run did not retrieve "
        "scores 0), or give both runs the same topics"
    )
    pairs = []
    if paired:
        pairs += [
            (("original", orig, side), ("reproduced", rep, side), "rmse, nrmse and p_paired pair")
            for side in sides
        ]
    if len(sides) == 2:
        pairs += [
            ((name, frame, "advanced"), (name, frame, "baseline"), "er pairs")
            for name, frame in (("original", orig), ("reproduced", rep))
        ]
    for left, right, measures in pairs:
        topics = [
            frame.filter(pl.col(_RUN) == side).select(query_id).unique()
            for _, frame, side in (left, right)
        ]
        only = pl.concat(
            [
                topics[0]
                .join(topics[1], on=query_id, how="anti")
                .with_columns(pl.lit(0).alias("__in")),
                topics[1]
                .join(topics[0], on=query_id, how="anti")
                .with_columns(pl.lit(1).alias("__in")),
            ]
        ).sort(query_id, "__in")
        if only.height:
            topic, index = only.row(0)
            has, lacks = (left, right) if index == 0 else (right, left)
            raise QuerySetError(
                f"topic {topic!r} has a value for {has[0]}[{has[2]!r}] and not for "
                f"{lacks[0]}[{lacks[2]!r}]{why}; {measures} the two runs topic by "
                f"topic, as repro_eval does, and a topic one of them lacks has no pair: {fix}"
            )


def _tidy(frame: pl.DataFrame, measures: list[str], metrics: list[str]) -> pl.DataFrame:
    order = {m: i for i, m in enumerate(metrics)}
    return (
        frame.unpivot(on=measures, index=[_RUN, "metric"], variable_name="measure")
        .with_columns(
            pl.col("measure").replace_strict({m: i for i, m in enumerate(measures)}).alias("__m"),
            pl.col("metric").replace_strict(order).alias("__o"),
            (pl.col(_RUN) == "advanced").alias("__r"),
        )
        .sort("__m", "__r", "__o")
        .select(
            pl.col("measure").cast(pl.String),
            pl.col("metric").cast(pl.String),
            pl.col(_RUN).cast(pl.String).alias("run"),
            pl.col("value").cast(pl.Float64),
        )
    )


def _in_side_words(text: str, sides: Sequence[str], side: str, keyword: str) -> str:
    """A coverage warning of one side's per-topic values (the judgments' warning of a run
    of ``systems=`` inside) naming the run as this call does: the original or the
    reproduced run, and the judgments it is read against (``qrels=`` or
    ``qrels_reproduced=``): the two sides' runs share their names, so "system
    'baseline'" named neither the side nor the table whose ids do not line up.

    >>> _in_side_words("system 'baseline' retrieves no judged document", ["baseline"],
    ...                "reproduced", "qrels_reproduced=")
    "the reproduced run 'baseline' (judged by qrels_reproduced=) retrieves no judged document"
    """
    for name in sides:
        text = text.replace(f"system {name!r}", f"the {side} run {name!r} (judged by {keyword})")
    return text


def _in_reproduction_words(text: str) -> str:
    """A warning of the rank similarity of the reproduced runs against the original ones
    (``reference=`` inside), in the words of :func:`reproducibility`'s arguments.

    >>> _in_reproduction_words("reference= holds none of the 3 documents of the run")
    'original= holds none of the 3 documents of the reproduced run'
    >>> _in_reproduction_words("the 2 the reference lacks ... of the run of system 'b'")
    "the 2 the original run lacks ... of the reproduced run 'b'"
    """
    for old, new in (
        ("reference=", "original="),
        ("the reference's", "the original run's"),
        ("the reference", "the original run"),
        ("the run of system ", "the run "),  # one system of several: the run's name
        ("the run", "the reproduced run"),
    ):
        text = text.replace(old, new)
    return text
