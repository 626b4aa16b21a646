"""Fitted tables of the trained fusions: :func:`check_fitted` checks one against the
runs, :func:`apply_fitted` joins it onto the long frame inside ``fuse``'s plan
(:func:`~polars_irmetrics.fit_fusion` in :mod:`.train` learns them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

from polars_irmetrics.errors import ColumnNotFoundError, InvalidValueError, MetricParameterError
from polars_irmetrics.fusion.methods import (
    FITTED,
    LEN,
    MIN_LOG_ODDS,
    POS,
    RUN,
    RUNS_OF_QUERY,
    SCORE,
    FusionMethod,
)
from polars_irmetrics.fusion.options import FusionOptions
from polars_irmetrics.ground.spelling import spelling_change, spelling_matches
from polars_irmetrics.ground.validate import check_numeric

__all__ = [
    "BAYES_CUTOFFS",
    "FITTED_SCHEMA",
    "SEGFUSE_BOUNDS",
    "apply_fitted",
    "check_fitted",
    "segment",
]

SEGFUSE_BOUNDS = (0, 5, 15, 35, 75, 155, 315, 635, 1275, 2555, 5115)
BAYES_CUTOFFS = (0, 5, 10, 15, 20, 30, 100, 200, 500, 1000)
_INDEX = "__irmf_index"
FITTED_SCHEMA = pl.Schema(
    {"method": pl.String(), "run": pl.String(), "index": pl.Int64(), "value": pl.Float64()}
)


def segment(pos0: pl.Expr, bounds: Sequence[int]) -> pl.Expr:
    """The segment of a 0-based position: ``k`` with ``bounds[k] <= pos0 < bounds[k+1]``;
    ``len(bounds) - 1`` past the last boundary."""
    return pl.sum_horizontal([(pos0 >= b).cast(pl.Int64) for b in bounds[1:]])


def check_fitted(
    method: FusionMethod,
    fitted: pl.DataFrame | pl.LazyFrame | None,
    names: Sequence[str],
    *,
    system: tuple[str, pl.DataType] | None = None,
) -> pl.LazyFrame:
    """The fitted table for ``method``, checked against the runs (``names``; ``system``:
    one long frame's run column and its dtype, whose text they are); ``RUN`` as the
    index."""
    if fitted is None:
        raise MetricParameterError(
            f"{method.name} is a trained method and needs fitted parameters: fit them on "
            f"judged queries, e.g. fitted = irm.fit_fusion(runs, {method.name!r}, qrels=qrels), "
            f"then fuse(runs, {method.name!r}, fitted=fitted)"
        )
    if not isinstance(fitted, pl.DataFrame | pl.LazyFrame):
        raise InvalidValueError(
            f"fitted must be the DataFrame fit_fusion returned; got {type(fitted).__name__}"
        )
    table = fitted.lazy().collect() if isinstance(fitted, pl.LazyFrame) else fitted
    missing = [c for c in FITTED_SCHEMA.names() if c not in table.columns]
    if missing:
        raise ColumnNotFoundError(
            f"fitted has no column {missing[0]!r}; pass the DataFrame fit_fusion returned "
            "(columns method, run, index, value)"
        )
    methods = set(table["method"].unique().to_list())
    if methods != {method.name}:
        raise MetricParameterError(
            f"fitted holds parameters of {', '.join(sorted(map(str, methods))) or 'no method'}, "
            f"not {method.name}: fit them with fit_fusion(runs, {method.name!r}, qrels=qrels)"
        )
    kind = table.schema["run"]
    # matched to the runs' names by their text: a number 1.0 is no name '1'
    if not (kind == pl.String or isinstance(kind, pl.Categorical | pl.Enum)):
        raise InvalidValueError(
            f"fitted's column 'run' has dtype {kind}; fit_fusion writes each run's name as "
            "text (String), which fuse matches to the runs' names: pass the table it "
            "returned, or cast the column, e.g. fitted.with_columns(pl.col('run')"
            ".cast(pl.String))"
        )
    have = set(table["run"].to_list())
    absent = [n for n in names if n not in have]
    if absent:
        raise MetricParameterError(
            f"fitted has no parameters for run {absent[0]!r}; fit them on the same runs "
            f"(fitted runs: {', '.join(map(repr, sorted(have)))})"
            + _names_apart(absent, sorted(have - set(names)), system)
        )
    mine = table.filter(pl.col("run").is_in(list(names)))
    _check_rows(method, mine)
    return mine.lazy().select(
        pl.col("run")
        .replace_strict({n: i for i, n in enumerate(names)}, return_dtype=pl.Int32)
        .alias(RUN),
        pl.col("index").cast(pl.Int64),
        pl.col("value").cast(pl.Float64),
    )


def _number(text: str) -> float | None:
    """``text`` read as a number (``'1'``, ``'1.0'``), else ``None``."""
    try:
        return float(text)
    except ValueError:
        return None


def _names_apart(
    absent: Sequence[str], spare: Sequence[str], system: tuple[str, pl.DataType] | None
) -> str:
    """Why the runs' names (``absent``: those fitted lacks) miss fitted's (``spare``:
    those the runs lack), where they match once read as numbers (``'1'`` beside
    ``'1.0'``: the system column of one dtype when fitted, another when fused; names are
    matched by their text) or once spelt alike (case, the spaces around them...):
    the clause that says so, with the fix; ``""`` otherwise.

    >>> _names_apart(["1", "2"], ["1.0", "2.0"], ("system", pl.Int64()))
    "; the runs' column 'system' (Int64) names them '1', '2' and fitted's column 'run' \
'1.0', '2.0': the same numbers, but run names are matched by their text, and fitted was \
fit on another dtype of the column: give it one dtype in fit_fusion and in fuse, e.g. \
pl.col('system').cast(pl.Int64) on the runs of both"
    """
    column = "the dict's keys" if system is None else f"the runs' column {system[0]!r}"
    if system is not None:
        column += f" ({system[1]})"
    names = "are" if system is None else "names them"
    numbers = {_number(text) for text in absent}
    if None not in numbers and numbers <= {_number(text) for text in spare}:
        whole = all(float(n).is_integer() for n in numbers if n is not None)
        cast = "pl.Int64" if whole else "pl.Float64"
        fix = (
            f"pl.col({system[0]!r}).cast({cast}) on the runs of both"
            if system is not None
            else f"name the runs as the fitted ones are named ({', '.join(map(repr, spare))})"
        )
        return (
            f"; {column} {names} {', '.join(map(repr, absent))} and fitted's column "
            f"'run' {', '.join(map(repr, spare))}: the same numbers, but run names are "
            "matched by their text, and fitted was fit on another dtype of the column: "
            f"give it one dtype in fit_fusion and in fuse, e.g. {fix}"
        )
    frames = pl.LazyFrame({"run": list(absent)}), pl.LazyFrame({"run": list(spare)})
    pairs = spelling_matches(*frames, "run", within=None).sort("run", "run_right").collect()
    if not pairs.height:
        return ""
    ran, held = pairs.row(0)
    what, fix = spelling_change(ran, held)
    runs = (
        f"pl.col({system[0]!r}){fix} on the runs"
        if system is not None
        else "the same change to the dict's keys"
    )
    return (
        f"; {pairs['run'].n_unique()} name(s) in {column} match one of fitted's only when {what} "
        f"({ran!r} against {held!r}): run names are matched exactly; give the runs and "
        f"fitted the same spelling, e.g. pl.col('run'){fix} on fitted and {runs}"
    )


#: The rows per run of the methods whose table has a fixed size (fit_fusion's).
_ROWS = {"mapfuse": 1, "segfuse": len(SEGFUSE_BOUNDS) - 1, "bayesfuse": len(BAYES_CUTOFFS) - 1}


def _check_rows(method: FusionMethod, table: pl.DataFrame) -> None:
    """Refuse a fitted table (the runs' rows) whose ``index`` is not an integer or
    ``value`` not a number, with a null or non-finite value, or whose indices of a run
    are not ``0, 1, ..., n - 1`` once each (``n`` fixed for segfuse, bayesfuse and
    mapfuse): a row duplicated would duplicate the documents it is joined to, a row
    dropped or an index moved would change the fusion in silence."""
    check_numeric(table.schema, "index", "fitted table", integer=True)
    check_numeric(table.schema, "value", "fitted table", integer=False)
    value = pl.col("value").cast(pl.Float64)
    bad = table.filter(pl.col("index").is_null() | ~value.is_finite().fill_null(False))
    if bad.height:
        row = bad.sort("run", "index", nulls_last=False).row(0, named=True)
        raise InvalidValueError(
            f"fitted holds a null or non-finite row for run {row['run']!r} (index "
            f"{row['index']!r}, value {row['value']!r}); fit_fusion writes a finite value "
            "at every index: pass the table it returned"
        )
    want = _ROWS.get(method.name)
    for run, indices in table.group_by("run").agg(pl.col("index").sort()).sort("run").iter_rows():
        n = len(indices) if want is None else want
        if indices == list(range(n)):
            continue
        shown = ", ".join(map(str, indices[:12])) + (", ..." if len(indices) > 12 else "")
        if want == 1:
            expected = "one row per run, of index 0"
        elif want is not None:
            expected = f"one row per index 0 to {want - 1}, each once"
        else:
            expected = "one row per index 0 to n - 1 without gaps, each once"
        raise InvalidValueError(
            f"fitted holds the indices {shown} for run {run!r}; a {method.name} table has "
            f"{expected} (a row duplicated, dropped or moved would change the fusion): "
            "pass the table fit_fusion returned"
        )


def apply_fitted(
    method: FusionMethod,
    long: pl.LazyFrame,
    fitted: pl.LazyFrame,
    params: Mapping[str, float],
    options: FusionOptions,
) -> pl.LazyFrame:
    """``long`` with ``FITTED``: each row's value from the fitted table (see ``methods``)."""
    name = method.name
    pos0 = pl.col(POS) - 1
    value = pl.col("value")
    if name == "mapfuse":
        joined = long.join(fitted.select(RUN, "value"), on=RUN, how="left")
        return joined.with_columns((value / pl.col(POS).cast(pl.Float64)).alias(FITTED))
    if name == "posfuse":
        joined = long.with_columns(pos0.alias(_INDEX)).join(
            fitted.rename({"index": _INDEX}), on=[RUN, _INDEX], how="left"
        )
        return joined.with_columns(value.fill_null(0.0).alias(FITTED)).drop(_INDEX, "value")
    if name == "probfuse":
        segments = fitted.group_by(RUN).agg(pl.len().cast(pl.Int64).alias("__irmf_nseg"))
        size = (pl.col(LEN) / pl.col("__irmf_nseg")).ceil().cast(pl.Int64)
        with_seg = long.join(segments, on=RUN, how="left").with_columns(
            (pos0 // size).alias(_INDEX)
        )
        joined = with_seg.join(fitted.rename({"index": _INDEX}), on=[RUN, _INDEX], how="left")
        return joined.with_columns(
            (value.fill_null(0.0) / (pl.col(_INDEX) + 1).cast(pl.Float64)).alias(FITTED)
        ).drop(_INDEX, "value", "__irmf_nseg")
    if name == "segfuse":
        with_seg = long.with_columns(segment(pos0, SEGFUSE_BOUNDS).alias(_INDEX))
        joined = with_seg.join(fitted.rename({"index": _INDEX}), on=[RUN, _INDEX], how="left")
        return joined.with_columns(
            (value.fill_null(0.0) * (pl.col(SCORE) + 1.0)).alias(FITTED)
        ).drop(_INDEX, "value")
    if name == "bayesfuse":
        with_seg = long.with_columns(segment(pos0, BAYES_CUTOFFS).alias(_INDEX))
        joined = with_seg.join(fitted.rename({"index": _INDEX}), on=[RUN, _INDEX], how="left")
        return joined.with_columns(
            value.fill_null(MIN_LOG_ODDS).alias(FITTED),
            pl.col(RUN).n_unique().over(options.query_id).cast(pl.Float64).alias(RUNS_OF_QUERY),
        ).drop(_INDEX, "value")
    # slidefuse: the mean of the probabilities at positions p - w .. p + w of the list
    w = int(params["w"])
    cumulative = (
        fitted.sort(RUN, "index")
        .with_columns(pl.col("value").cum_sum().over(RUN).alias("__irmf_cum"))
        .select(RUN, (pl.col("index") + 1).alias(_INDEX), "__irmf_cum")
    )
    zero = (
        fitted.select(RUN)
        .unique()
        .with_columns(pl.lit(0, pl.Int64).alias(_INDEX), pl.lit(0.0).alias("__irmf_cum"))
    )
    prefix = pl.concat([zero, cumulative], how="vertical")
    length = fitted.group_by(RUN).agg(pl.len().cast(pl.Int64).alias("__irmf_len"))
    a = pl.max_horizontal(pos0 - w, pl.lit(0, pl.Int64))
    b = pl.min_horizontal(pos0 + w, pl.col(LEN) - 1)
    ends = long.join(length, on=RUN, how="left").with_columns(
        a.alias("__irmf_a"),
        b.alias("__irmf_b"),
        pl.min_horizontal(b + 1, pl.col("__irmf_len")).alias("__irmf_hi"),
        pl.min_horizontal(a, pl.col("__irmf_len")).alias("__irmf_lo"),
    )
    hi = prefix.rename({_INDEX: "__irmf_hi", "__irmf_cum": "__irmf_chi"})
    lo = prefix.rename({_INDEX: "__irmf_lo", "__irmf_cum": "__irmf_clo"})
    joined = ends.join(hi, on=[RUN, "__irmf_hi"], how="left").join(
        lo, on=[RUN, "__irmf_lo"], how="left"
    )
    width = (pl.col("__irmf_b") - pl.col("__irmf_a") + 1).cast(pl.Float64)
    return joined.with_columns(
        ((pl.col("__irmf_chi") - pl.col("__irmf_clo")) / width).alias(FITTED)
    ).drop(
        "__irmf_a", "__irmf_b", "__irmf_hi", "__irmf_lo", "__irmf_chi", "__irmf_clo", "__irmf_len"
    )
