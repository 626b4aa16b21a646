"""Propensity-scored metrics (``ps_precision@k``, ``ps_ndcg@k``) and Jain et al.'s
per-label propensities (:func:`label_propensity`), as pyxclib computes them.

:func:`build_propensity_plan` is the lazy plan :func:`polars_irmetrics.evaluate` runs for
the metrics that read ``propensities=`` (:mod:`polars_irmetrics.metrics.propensity`
holds the formulas). The propensities table is one of two layouts:

* keyed by the document column (``doc_id=``), with ``propensity``: each document's
  propensity, pyxclib's per-label ``1 / inv_psp`` (:func:`label_propensity` makes it);
  a relevant document weighs ``1 / propensity`` wherever it is ranked;
* keyed by ``position``, with ``propensity``: the examination propensity of each position
  (the table :func:`~polars_irmetrics.position_bias` returns). The run is then the
  logged ranking and the judgments its clicks: a clicked document at rank ``r`` weighs
  ``1 / p_r`` (the unbiased click metric of Joachims et al. 2017, "Unbiased
  learning-to-rank with biased feedback"), and the ideal ranking sorts the clicked
  documents by that weight.

Plan: the relevant judgments (relevance >= the level) joined with the run's positions
and with their weights, each query's weights ranked (the ideal propensity-scored
ranking), one group-by per query of the numerator ``N_q`` and the ideal ``I_q`` of each
metric, and the ratio ``sum N_q / sum I_q`` (``per_query=True``: ``N_q / mean I_q``).
Every sum is fixed-point (:func:`_exact`), the same bits in any row order, so the plan
divides into parts of whole queries (:class:`PsPlan`): out of core
(:mod:`polars_irmetrics.offline.ps_parts`) and on Spark and Dask
(:mod:`polars_irmetrics.engines._ps`) with the one plan's values.
The checks (the run's and the judgments' as the ranking metrics make them, with their
messages; a propensity that is null, NaN, 0 or less or above 1, or so small that its
weight ``1/p`` is 2**32 or more, which the fixed-point sums cannot add; a position below
1; a key listed twice; a relevant document without a propensity) ride in the same plan
and raise on collect.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from polars_irmetrics.errors import (
    ColumnTypeError,
    DuplicateError,
    InvalidValueError,
    MetricParameterError,
)
from polars_irmetrics.ground.facts import against_value, disagreements
from polars_irmetrics.ground.inputs import FrameInput, as_polars
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import (
    FOUND_DOCS,
    INTERNAL,
    JUDGED_DOCS,
    JUDGMENT_COLUMNS_HINT,
    RUN_COLUMNS_HINT,
    RUN_FLAGS,
    check_id_kinds,
    check_numeric,
    common_id_dtype,
    flag_error,
    id_kind,
    is_text,
    neither_order,
    null_ids_error,
    null_key_error,
    rank_against,
    require_columns,
    sampled_error,
    warn_on_judged,
    with_tally,
)
from polars_irmetrics.metrics._common import divide, exact_level
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.metrics.scope import beyond_fixed, fixed_sum, judgment_flags
from polars_irmetrics.offline.coverage import (
    SPELT,
    judged_docs,
    judged_partly,
    spelt_hint,
    spelt_partly,
    spelt_queries,
    spelt_tally,
)

__all__ = [
    "PsPlan",
    "build_propensity_plan",
    "label_propensity",
    "prepare_propensity",
]

_RANK = f"{INTERNAL}ps_rank"
_W = f"{INTERNAL}ps_w"
_IDEAL = f"{INTERNAL}ps_ideal"
_PROBLEM = f"{INTERNAL}ps_problem"
_KEY = f"{INTERNAL}ps_key"
_VALUE = f"{INTERNAL}ps_value"
_QUERY = f"{INTERNAL}ps_query"
_LEVEL = f"{INTERNAL}ps_level"
_DOC = f"{INTERNAL}ps_doc"
_FIX = (
    "a propensity is a probability in (0, 1]: the chance that a relevant document (or "
    "the position) is observed"
)
# The checks' numbers (``_PROBLEM``), in the order they are raised: the table's own
# first (a 0-based position table is named as such, not by the rank it then lacks),
# then what the judgments read of it; the run's and the judgments' are below 0.
_BAD_VALUE, _HEAVY, _LOW_POSITION, _TWICE, _UNWEIGHTED = 1, 2, 3, 4, 5
#: A row of propensities= with a null key (document or position): refused first.
_NULL_KEY = 0


def label_propensity(
    qrels: FrameInput,
    a: float = 0.55,
    b: float = 1.5,
    *,
    query_id: str = "query_id",
    doc_id: str = "doc_id",
    relevance: str = "relevance",
    relevance_level: float = 1,
) -> pl.DataFrame | pl.LazyFrame:
    """Each document's propensity, Jain et al. 2016's model of a missing label.

    pyxclib's ``compute_inv_propesity(labels, A, B)`` returns the inverse propensity
    ``1 + C (N_d + B)^-A``, ``C = (ln N - 1) (B + 1)^A``, of each label, with ``N`` the
    instances (here: the distinct queries of ``qrels``) and ``N_d`` the instances the
    label is relevant to (the queries that judge the document relevant, relevance >=
    ``relevance_level``); this is its reciprocal.

    Parameters
    ----------
    qrels
        Relevance judgments (usually the training ones): one row per (query, document).
    a, b
        Jain et al.'s ``A`` and ``B``: 0.55 and 1.5 in general, 0.5 and 0.4 for
        Wikipedia, 0.6 and 2.6 for Amazon.
    query_id, doc_id, relevance
        The column names.
    relevance_level
        A judgment of this relevance or more is relevant.

    Returns
    -------
    pl.DataFrame or pl.LazyFrame
        As ``qrels`` (lazy in, lazy out): one row per document of ``qrels``, sorted,
        with ``propensity`` (``1 / inv_propensity``, what ``propensities=`` reads) and
        ``inv_propensity`` (pyxclib's value).

    Raises
    ------
    ColumnNotFoundError, ColumnTypeError
        A missing column, or a non-numeric relevance.
    InvalidValueError
        ``a`` or ``b`` not a finite number (``b`` > -1); a propensity that is undefined
        (NaN: ``b < 0`` beside a document relevant to no query), when it is computed.

    Examples
    --------
    Three queries; ``x`` is relevant to two, ``y`` to one and ``z`` to none (judged 0),
    so ``C = (ln 3 - 1) 2.5^0.55`` and ``z``'s inverse propensity is ``1 + C 1.5^-0.55``.
    With fewer than 3 queries ``ln N < 1``: ``C`` is negative and the propensities
    exceed 1, which the propensity-scored metrics refuse.

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> qrels = pl.DataFrame({
    ...     "query_id": ["q1", "q1", "q2", "q3"],
    ...     "doc_id": ["x", "y", "x", "z"],
    ...     "relevance": [1, 1, 2, 0],
    ... })
    >>> out = irm.label_propensity(qrels)
    >>> out["doc_id"].to_list()
    ['x', 'y', 'z']
    >>> c = (math.log(3) - 1) * 2.5**0.55
    >>> out["inv_propensity"][2] == 1 + c * 1.5**-0.55
    True
    """
    frame = as_polars(qrels, "qrels")
    lazy = frame.lazy()
    schema = lazy.collect_schema()
    require_columns(
        schema,
        [query_id, doc_id, relevance],
        "qrels",
        "name the columns with query_id=, doc_id= and relevance=",
    )
    check_numeric(schema, relevance, "qrels", integer=False)
    for name, value, low in (("a", a, -math.inf), ("b", b, -1.0)):
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value <= low
        ):
            bound = "a finite number" if name == "a" else "a finite number above -1"
            raise InvalidValueError(
                f"{name} must be {bound} (Jain et al.'s {name.upper()}: a=0.55, b=1.5 in "
                f"general), got {value!r}"
            )
    n = pl.col(query_id).n_unique().cast(pl.Float64)
    try:  # (B + 1)^A beyond float64 (a=800 with b=1.5) is inf, never Python's OverflowError
        power = (float(b) + 1.0) ** float(a)
    except OverflowError:
        power = math.inf
    c = (n.log() - 1.0) * power
    freq = (
        lazy.group_by(doc_id)
        .agg(
            (pl.col(relevance) >= exact_level(relevance_level))
            .sum()
            .cast(pl.Float64)
            .alias("freq")
        )
        .join(lazy.select(n.alias("n"), c.alias("c")), how="cross")
    )
    inv = 1.0 + pl.col("c") * (pl.col("freq") + float(b)) ** (-float(a))
    # where the two powers overflow or underflow apart (C inf, or 0 times inf: NaN), the
    # same value as one power of their ratio, C (N_d + B)^-A = (ln N - 1) ((B + 1) /
    # (N_d + B))^A; pyxclib's formula, and its bits, everywhere else
    ratio = (pl.col("n").log() - 1.0) * ((float(b) + 1.0) / (pl.col("freq") + float(b))) ** float(
        a
    )
    inv = pl.when(inv.is_finite()).then(inv).otherwise(1.0 + ratio)
    out = freq.select(doc_id, (1.0 / inv).alias("propensity"), inv.alias("inv_propensity")).sort(
        doc_id
    )
    shown_a, shown_b = a, b

    def refuse_undefined(found: pl.DataFrame) -> pl.DataFrame:
        # a document relevant to no query (N_d = 0) beside b < 0: (N_d + B)^-A of a
        # negative base, NaN (pyxclib's too), which no propensity-weighted metric reads
        undefined = found.filter(pl.col("inv_propensity").is_nan())
        if undefined.height:
            raise InvalidValueError(
                f"label_propensity(a={shown_a!r}, b={shown_b!r}) is undefined (NaN) for "
                f"{undefined.height} document(s) of qrels (first: {undefined[doc_id][0]!r}): "
                "relevant to no query, N_d = 0, they raise N_d + B = B < 0 to the power -A; "
                "give b > 0 (Jain et al.'s B: 1.5 in general), or drop the judgments below "
                f"relevance_level, e.g. qrels.filter(pl.col({relevance!r}) >= {relevance_level!r})"
            )
        return found

    out = out.map_batches(refuse_undefined, schema=out.collect_schema())
    return out.collect() if isinstance(frame, pl.DataFrame) else out


def build_propensity_plan(
    run: pl.LazyFrame,
    requests: list[tuple[str, MetricRequest]],
    qrels: pl.LazyFrame | None,
    propensities: pl.LazyFrame,
    options: EvalOptions,
) -> pl.LazyFrame:
    """The lazy plan of ``ps_precision@k`` and ``ps_ndcg@k`` (module docstring): the
    whole run as one part (:meth:`PsPlan.part`), finished (:meth:`PsPlan.finish`)."""
    plan = prepare_propensity(run, requests, qrels, propensities, options)
    return plan.finish(plan.part(run, plan.qrels), run)


@dataclass(frozen=True)
class PsPlan:
    """The propensity-scored metrics of one evaluation, checked against the schemas
    (:func:`prepare_propensity`), in two steps that a split run shares with the one plan:

    * :meth:`part`: over the rows of whole queries (all of them, a bucket's, an engine
      task's), one row per judged query with the numerator ``N_q`` and the ideal
      ``I_q`` of each metric, and the first row of each check that reads the judgments
      (unraised);
    * :meth:`finish`: over every part's rows, the ratios of exact sums over the queries
      (:func:`_total`: the same bits in any order of the parts and rows), the checks of
      ``propensities=`` and the first failing row of all, raised on collect.
    """

    requests: list[tuple[str, MetricRequest]]
    options: EvalOptions
    #: The judgments, their ids cast to the run's (what each part is split from).
    qrels: pl.LazyFrame
    #: ``propensities=`` as (key, p): read whole by every part.
    table: pl.LazyFrame
    #: The run's columns a part reads (the query, the document, the order column, and
    #: the sample column where the run has it), with their dtypes.
    run_schema: pl.Schema
    by_position: bool
    order: str
    #: The run's ``sample_id=`` column, where it has one: a query under more than one
    #: of its values (sampled rankings) is refused, as the ranking metrics refuse it.
    sample: str | None = None
    #: The score column the ranks are checked against (``order='auto'`` reading the
    #: ranks of a run that has one too), as the ranking metrics check it; or None.
    against: str | None = None

    @property
    def key(self) -> str:
        return "position" if self.by_position else self.options.doc_id

    def part(self, run: pl.LazyFrame, qrels: pl.LazyFrame) -> pl.LazyFrame:
        """One part's rows: per judged query its sums, and the judgments' checks."""
        q, d, position = self.options.query_id, self.options.doc_id, self._position
        run = run.select(pl.col(c).cast(kind) for c, kind in self.run_schema.items())
        qrels = qrels.with_columns(
            pl.col(q).cast(self.run_schema[q]), pl.col(d).cast(self.run_schema[d])
        )
        if self.order == "rank":
            ranked = run.select(q, d, pl.col(position).cast(pl.Int64).alias(_RANK))
        else:  # score descending, ties by doc_id descending as text (trec_eval)
            text = pl.col(d).cast(pl.String).alias(_KEY)
            ranked = (
                run.select(q, d, position, text)
                .sort([q, position, _KEY], descending=[False, True, True], nulls_last=True)
                .select(q, d, (pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(q)).alias(_RANK))
            )
        level = self._levels[0]
        judged = qrels.select(q, d, pl.col(self.options.relevance).cast(pl.Float64).alias("rel"))
        # every judgment with its rank, if retrieved: the relevant ones' sums, and how
        # many judged documents each query's run retrieves (the coverage warning)
        found = judged.join(ranked, on=[q, d], how="left", nulls_equal=False).cache()
        relevant = found.filter(pl.col("rel") >= level)
        on = _RANK if self.by_position else d
        weighted = relevant.join(
            self.table.rename({_KEY: on}), on=on, how="left", nulls_equal=False
        ).with_columns((1.0 / pl.col("p")).alias(_W))
        counts = found.group_by(q).agg(
            pl.len().cast(pl.Int64).alias(JUDGED_DOCS),
            pl.col(_RANK).is_not_null().sum().cast(pl.Int64).alias(FOUND_DOCS),
        )
        sums = _per_query(weighted, judged, self.requests, self.options, q).join(
            counts, on=q, how="left", nulls_equal=False, maintain_order="left"
        )
        problems = _judged_problems(weighted, q, d, level)
        checks = _data_problems(
            run,
            judged,
            q,
            d,
            position,
            self.run_schema[position],
            by_rank=self.order == "rank",
            sample=self.sample,
            against=self.against,
        )
        # the document hint's data (SPELT) is an engine's part's own (spelt): null here
        kind = self.run_schema[d]
        spelt = [
            pl.lit(None, t).alias(c) for c, t in zip(SPELT, (pl.Int64(), kind, kind), strict=True)
        ]
        sums = sums.with_columns(spelt)
        return pl.concat([sums, checks, problems], how="diagonal_relaxed").select(
            pl.col(name).cast(dtype) for name, dtype in self.part_schema.items()
        )

    def spelt(self, rows: pl.DataFrame, run: pl.LazyFrame, qrels: pl.LazyFrame) -> pl.DataFrame:
        """An engine's part's ``rows`` (:meth:`part`, collected, of its ``run`` and
        ``qrels``) with, on each judged query where the run retrieves no judged document
        and its documents match judged ones once their spelling is ignored, the
        document hint's data (:func:`~polars_irmetrics.offline.coverage.spelt_queries`),
        and on each where it retrieves some judged documents but not all and its other
        documents match judged ones so, that hint's
        (:func:`~polars_irmetrics.offline.coverage.spelt_partly`; the two told apart by
        :data:`~polars_irmetrics.ground.validate.FOUND_DOCS`): the finish, which has no
        run, adds them up (:meth:`finish`). Reads the run again only where such a query
        is (the partly hint: its documents that are not their own fold only); the rows as
        they are elsewhere, or where the documents are not text."""
        q, d = self.options.query_id, self.options.doc_id
        kind = self.run_schema[d]
        sums, hits = pl.col(_PROBLEM).is_null(), pl.col(FOUND_DOCS)
        blind = rows.filter(sums & (hits == 0)).select(q)
        partly = rows.filter(sums & (hits > 0) & (hits < pl.col(JUDGED_DOCS))).select(q)
        if not (blind.height or partly.height) or not is_text(kind):
            return rows
        ran = run.select(pl.col(q).cast(self.run_schema[q]), pl.col(d).cast(kind))
        held = qrels.select(pl.col(q).cast(self.run_schema[q]), pl.col(d).cast(kind))
        given = [
            *([spelt_queries(ran, held, blind, q, d)] if blind.height else []),
            *([spelt_partly(ran, held, partly, q, d)] if partly.height else []),
        ]
        spelt = [pl.col(c).cast(t) for c, t in zip(SPELT, (pl.Int64(), kind, kind), strict=True)]
        cases = pl.concat([c.select(q, *spelt) for c in given])
        if not cases.height:
            return rows
        found = rows.drop(SPELT).join(cases, on=q, how="left", maintain_order="left")
        return found.select(self.part_schema.names())

    @property
    def part_schema(self) -> pl.Schema:
        """The columns of :meth:`part` (a bucket's, an engine task's rows)."""
        q, d = self.options.query_id, self.options.doc_id
        sums = {f"{INTERNAL}{s}{i}": pl.Float64() for i in range(len(self.requests)) for s in "ni"}
        return pl.Schema(
            {
                q: self.run_schema[q],
                **sums,
                JUDGED_DOCS: pl.Int64(),
                FOUND_DOCS: pl.Int64(),
                _PROBLEM: pl.Int32(),
                _KEY: pl.String(),
                _QUERY: pl.String(),
                _VALUE: pl.Float64(),
                _LEVEL: pl.Float64(),
                _DOC: self.run_schema[d],
                SPELT[0]: pl.Int64(),
                SPELT[1]: self.run_schema[d],
                SPELT[2]: self.run_schema[d],
            }
        )

    def finish(self, parts: pl.LazyFrame, run: pl.LazyFrame | None = None) -> pl.LazyFrame:
        """The result from every part's rows (:meth:`part`), the checks raised. ``run``:
        the whole run, where the plan warns of the judged queries whose documents are
        spelt apart from the judged ones (read on the warning's path only); an engine
        warns of its tally itself."""
        q = self.options.query_id
        labels = [label for label, _ in self.requests]
        per_query = parts.filter(pl.col(_PROBLEM).is_null()).sort(q)
        if self.options.per_query:
            # each query's N_q over the mean ideal I / Q, both quotients through divide
            # (metrics._common): a column over a scalar is a product by its reciprocal
            # in polars, and which piece is a scalar is the optimiser's choice (a piece
            # written twice is computed once, as a column; a one-row frame joined is
            # broadcast as a scalar), so neither quotient is left to it
            count = pl.len().cast(pl.Float64)
            shares = [
                divide(pl.col(f"{INTERNAL}n{i}"), divide(_total(f"{INTERNAL}i{i}"), count)).alias(
                    label
                )
                for i, label in enumerate(labels)
            ]
            result = per_query.select(q, *shares)
        else:
            ratios = [
                pl.when(_total(f"{INTERNAL}i{i}") > 0)
                .then(_total(f"{INTERNAL}n{i}") / _total(f"{INTERNAL}i{i}"))
                .alias(label)
                for i, label in enumerate(labels)
            ]
            result = per_query.select(pl.len().cast(pl.Int64).alias("num_q"), *ratios)
        schema = result.collect_schema()
        problems = pl.concat(
            [
                _table_problems(self.table, by_position=self.by_position),
                parts.filter(pl.col(_PROBLEM).is_not_null()),
            ],
            how="diagonal_relaxed",
        )
        combined = pl.concat([result, problems], how="diagonal_relaxed")
        d, key, kind = self.options.doc_id, self.key, self.run_schema[self.options.doc_id]
        names = {"doc_id": d, "rank": self._position, "score": self._position, "query_id": q}
        names["against"] = self.against or self._position
        names["relevance"] = self.options.relevance
        names["sample"] = str(self.sample)
        raised = combined.map_batches(
            lambda frame: _raise(frame, schema, q, d, key, kind, names), schema=schema
        )
        # a run that retrieves no judged document: named, as the other metrics name it
        found = pl.col(FOUND_DOCS)
        tally = per_query.select(
            pl.len().cast(pl.Int64).alias("queries"),
            (found > 0).sum().cast(pl.Int64).alias("found_queries"),
            pl.col(JUDGED_DOCS).sum().cast(pl.Int64).alias("docs"),
            found.sum().cast(pl.Int64).alias("found"),
            pl.lit(None, pl.Int64).alias("listed"),
            # an engine's parts' document hints (spelt), added up
            *([] if run is not None else [*spelt_tally(q), *spelt_tally(q, partly=True)]),
        )
        unretrieved = self.options.unretrieved
        # the ranking metrics' check of the judged queries where the run retrieves no
        # judged document, its documents there spelt apart: read only where such a query
        # is (an engine's finish has no run: its parts' data, counted where they ran)
        docs = None if run is None else judged_docs(run.select(q, d), self.qrels, q, d)
        # and those where it retrieves some judged documents but not all, its other
        # documents there spelt apart (not counted by an engine's parts)
        partly = None if run is None else judged_partly(run.select(q, d), self.qrels, q, d)
        parts_said = run is None

        def say(row: Mapping[str, Any]) -> None:
            hint = spelt_hint(row, q, d) if parts_said else docs
            partly_hint = spelt_hint(row, q, d, partly=True) if parts_said else partly
            warn_on_judged(row, unretrieved, docs=hint, partly=partly_hint)

        return with_tally(raised, tally, say)

    @property
    def _position(self) -> str:
        return self.options.rank if self.order == "rank" else self.options.score

    @property
    def _levels(self) -> list[float]:
        return sorted({r.params(self.options.relevance_level).level for _, r in self.requests})


def _total(column: str) -> pl.Expr:
    """Aggregation: the sum of ``column`` over the queries (:func:`_exact`)."""
    return _exact(pl.col(column))


def _exact(value: pl.Expr) -> pl.Expr:
    """Aggregation: the sum of ``value``, the same bits in any row order (fixed point,
    :func:`~polars_irmetrics.metrics.scope.fixed_sum`), so that a run split into parts,
    its rows in any order, gives the one plan's. Each weight ``1/p`` is below 2**32 (a
    smaller propensity is refused, :func:`_table_problems`); a query's total of 2**32
    or more (a great many heavy documents) makes the sum over the queries a float sum,
    in the rows' order."""
    return pl.when(beyond_fixed(value).any()).then(value.sum()).otherwise(fixed_sum(value))


def prepare_propensity(
    run: pl.LazyFrame,
    requests: list[tuple[str, MetricRequest]],
    qrels: pl.LazyFrame | None,
    propensities: pl.LazyFrame,
    options: EvalOptions,
) -> PsPlan:
    """Check the tables' schemas and the options (raising the library's errors) and give
    the two steps of the plan (:class:`PsPlan`)."""
    if options.by_keys:
        raise InvalidValueError(
            "by= and systems= are not available for the propensity-scored metrics "
            "(ps_precision, ps_ndcg): their normalisation sums over every query; evaluate "
            "each group's rows in a call of its own"
        )
    if qrels is None:
        raise MetricParameterError(
            f"metric {requests[0][0]!r} reads relevance judgments (the clicks, with "
            "position propensities): pass qrels=... to irm.evaluate"
        )
    q, d, relevance = options.query_id, options.doc_id, options.relevance
    run_schema, qrels_schema = run.collect_schema(), qrels.collect_schema()
    prop_schema = propensities.collect_schema()
    # the run's and the judgments' columns, as the accuracy metrics check them
    require_columns(run_schema, [q, d], "run", RUN_COLUMNS_HINT)
    order = options.order
    if order == "auto":
        if options.rank not in run_schema and options.score not in run_schema:
            raise neither_order(run_schema, options.rank, options.score, "run")
        order = "rank" if options.rank in run_schema else "score"
    position = options.rank if order == "rank" else options.score
    require_columns(
        run_schema,
        [position],
        "run",
        f"pass rank=... or score=... to name it, or choose order= (now {options.order!r})",
    )
    check_numeric(run_schema, position, "run", integer=order == "rank")
    require_columns(qrels_schema, [q, d, relevance], "judgments", JUDGMENT_COLUMNS_HINT)
    check_numeric(qrels_schema, relevance, "judgments", integer=False)
    for column in (q, d):
        id_kind(run_schema, column, "run")
        id_kind(qrels_schema, column, "judgments")
    check_id_kinds(run_schema, "run", qrels_schema, "judgments", [q, d])
    by_position = "position" in prop_schema
    key = "position" if by_position else d
    if by_position and d in prop_schema:
        raise InvalidValueError(
            f"propensities= has both a 'position' and a {d!r} column: keep 'position' (the "
            f"examination propensity of each rank) or {d!r} (each document's), not both"
        )
    require_columns(
        prop_schema,
        [key, "propensity"],
        "propensities",
        f"propensities= is keyed by {d!r} (each document's propensity, e.g. "
        "irm.label_propensity(train_qrels)) or by 'position' (irm.position_bias(log)), "
        "with the column 'propensity'",
    )
    if q in prop_schema:
        # one propensity per document (pyxclib's per label) or per position: a query
        # column would be read by nothing, and a document under two queries refused as
        # listed twice without a word of why
        each = (
            "a click at a rank by that rank's one examination propensity"
            if by_position
            else "a relevant document by its one propensity (pyxclib's per-label one)"
        )
        raise InvalidValueError(
            f"propensities= has a {q!r} column, which the propensity-scored metrics do "
            f"not read: they weigh {each}, the same in every query, not one per ({q!r}, "
            f"{key!r}); drop the column, with one row per {key!r}, e.g. "
            f"propensities.drop({q!r}).unique()"
        )
    check_numeric(prop_schema, "propensity", "propensities", integer=False)
    if by_position:
        check_numeric(prop_schema, "position", "propensities", integer=True)
    elif id_kind(prop_schema, d, "propensities") != id_kind(run_schema, d, "run"):
        raise ColumnTypeError(
            f"column {d!r} is {prop_schema[d]} in propensities= and {run_schema[d]} in the "
            f"run: cast one, e.g. pl.col({d!r}).cast(pl.String)"
        )
    # one dtype per id in every table (Int32 beside Int64, UInt64 ids beyond Int64,
    # an Enum run beside String judgments): cast to the run's own would overflow or fail
    sides = [run_schema, qrels_schema, *([] if by_position else [prop_schema])]
    ids = {q: common_id_dtype([run_schema[q], qrels_schema[q]])}
    ids[d] = common_id_dtype([schema[d] for schema in sides])
    qrels = qrels.select(pl.col(q).cast(ids[q]), pl.col(d).cast(ids[d]), relevance)
    table = propensities.select(
        pl.col(key).cast(pl.Int64 if by_position else ids[d]).alias(_KEY),
        pl.col("propensity").cast(pl.Float64).alias("p"),
    )
    sample = options.sample_id if options.sample_id in run_schema else None
    read = {q: ids[q], d: ids[d], position: run_schema[position]}
    if sample is not None:
        read.setdefault(sample, run_schema[sample])
    against = rank_against(run_schema, options.order, options.rank, options.score)
    if against is not None:
        read.setdefault(against, run_schema[against])
    return PsPlan(
        requests=requests,
        options=options,
        qrels=qrels,
        table=table,
        run_schema=pl.Schema(read),
        by_position=by_position,
        order=order,
        sample=sample,
        against=against,
    )


def _per_query(
    weighted: pl.LazyFrame,
    judged: pl.LazyFrame,
    requests: list[tuple[str, MetricRequest]],
    options: EvalOptions,
    q: str,
) -> pl.LazyFrame:
    """One row per judged query: the numerator ``N`` and the ideal ``I`` of each metric
    (internal columns ``n0, i0, n1, i1, ...``)."""
    aggs: list[pl.Expr] = []
    rows = weighted
    for i, (_, request) in enumerate(requests):
        params = request.params(options.relevance_level)
        k = params.k if params.k is not None else 0
        # the ideal propensity-scored ranking: the query's relevant weights, sorted
        rel = pl.col("rel") >= exact_level(params.level)
        ideal = f"{_IDEAL}{i}"
        rows = rows.with_columns(
            pl.when(rel)
            .then(pl.col(_W))
            .rank("ordinal", descending=True)
            .over(q)
            .cast(pl.Int64)
            .alias(ideal)
        )
        w = pl.when(rel).then(pl.col(_W)).otherwise(0.0)
        in_run = pl.col(_RANK) <= k
        in_ideal = pl.col(ideal) <= k
        if request.metric.name == "ps_precision":
            numerator = _exact(w.filter(in_run))
            best = _exact(w.filter(in_ideal))
        else:  # ps_ndcg: both over the binary IDCG@k of the query's relevant documents
            at_rank = 1.0 / (pl.col(_RANK).cast(pl.Float64) + 1.0).log(2)
            at_ideal = 1.0 / (pl.col(ideal).cast(pl.Float64) + 1.0).log(2)
            z = _exact(at_ideal.filter(in_ideal))
            numerator = _exact((w * at_rank).filter(in_run)) / z
            best = _exact((w * at_ideal).filter(in_ideal)) / z
        aggs += [
            numerator.fill_nan(0.0).alias(f"{INTERNAL}n{i}"),
            best.fill_nan(0.0).alias(f"{INTERNAL}i{i}"),
        ]
    sums = rows.group_by(q).agg(aggs)
    zero = [pl.col(f"{INTERNAL}{s}{i}").fill_null(0.0) for i in range(len(requests)) for s in "ni"]
    return (
        judged.select(q)
        .unique()
        .join(sums, on=q, how="left", nulls_equal=False)
        .with_columns(zero)
        .sort(q)
    )


def _table_problems(table: pl.LazyFrame, *, by_position: bool) -> pl.LazyFrame:
    """The first bad row of each check of ``propensities=`` (a value out of (0, 1], a
    weight ``1/p`` too large for the fixed-point sums, a position below 1, a key listed
    twice), one row each (``_PROBLEM`` its number)."""
    p = pl.col("p")
    bad_value = table.filter(p.is_null() | p.is_nan() | (p <= 0) | (p > 1)).sort(_KEY)
    # the weight as part() computes it: each sum of weights is a fixed_sum (_exact),
    # whose terms must be below 2**32 (a propensity of 5e-324 weighs inf: NaN values)
    heavy = table.filter((p > 0) & (p <= 1) & beyond_fixed(1.0 / p)).sort(_KEY)
    twice = table.group_by(_KEY).len().filter(pl.col("len") > 1).sort(_KEY)
    first = [
        bad_value.head(1).select(
            pl.lit(_BAD_VALUE, dtype=pl.Int32).alias(_PROBLEM),
            _text(_KEY).alias(_KEY),
            p.alias(_VALUE),
        ),
        heavy.head(1).select(
            pl.lit(_HEAVY, dtype=pl.Int32).alias(_PROBLEM),
            _text(_KEY).alias(_KEY),
            p.alias(_VALUE),
        ),
        twice.head(1).select(
            pl.lit(_TWICE, dtype=pl.Int32).alias(_PROBLEM), _text(_KEY).alias(_KEY)
        ),
    ]
    # a row of no key: refused, as every table's null id (its count in _VALUE)
    first.append(
        table.select(
            pl.lit(_NULL_KEY, dtype=pl.Int32).alias(_PROBLEM),
            pl.lit(None, pl.String).alias(_KEY),
            pl.col(_KEY).null_count().cast(pl.Float64).alias(_VALUE),
        ).filter(pl.col(_VALUE) > 0)
    )
    if by_position:  # positions start at 1, as the run's ranks (a 0-based table)
        low = pl.col(_KEY) < 1
        first.append(
            table.select(
                pl.lit(_LOW_POSITION, dtype=pl.Int32).alias(_PROBLEM),
                pl.col(_KEY).filter(low).min().cast(pl.String).alias(_KEY),
                low.sum().cast(pl.Float64).alias(_VALUE),
            ).filter(pl.col(_VALUE) > 0)
        )
    return pl.concat(first, how="diagonal_relaxed")


def _judged_problems(weighted: pl.LazyFrame, q: str, d: str, level: float) -> pl.LazyFrame:
    """The first relevant document of one part's judgments without a weight, with its
    query and document as typed (``q``, ``_DOC``): :func:`_raise` takes the least over
    the parts."""
    missing = weighted.filter(pl.col(_W).is_null()).sort(q, d)
    return missing.head(1).select(
        pl.lit(_UNWEIGHTED, dtype=pl.Int32).alias(_PROBLEM),
        _text(d).alias(_KEY),
        _text(q).alias(_QUERY),
        pl.col(_RANK).cast(pl.Float64).alias(_VALUE),
        pl.lit(level, dtype=pl.Float64).alias(_LEVEL),
        q,
        pl.col(d).alias(_DOC),
    )


#: The accuracy metrics' checks of the run and the judgments (a query under more than
#: one value of the run's sample column, a null query in either, then
#: :data:`~polars_irmetrics.ground.validate.RUN_FLAGS` by name), in their order and in
#: their words, before this route's own (problems 1 to 5): numbered below 0.
_DATA_CHECKS = (
    "sampled",
    "null query",
    "null judged query",
    *(name for name, *_ in RUN_FLAGS if name not in ("big_rank", "j_dup_rank", "q_big_term")),
)


def _data_problems(
    run: pl.LazyFrame,
    judged: pl.LazyFrame,
    q: str,
    d: str,
    position: str,
    kind: pl.DataType,
    *,
    by_rank: bool,
    sample: str | None = None,
    against: str | None = None,
) -> pl.LazyFrame:
    """One part's run (``q, d`` and its order column ``position`` of dtype ``kind``,
    ranks where ``by_rank``, else scores) and judgments (``q, d, rel``) checked as the
    accuracy metrics check them: one row per query and failed check, the check's number
    (``_PROBLEM``) and count (``_VALUE``). ``sample``: the run's sample column, whose
    distinct values per query (null one of them) are counted where more than one;
    ``against``: a score column the ranks are checked against
    (:func:`~polars_irmetrics.ground.facts.disagreements`)."""
    doc, value, label = pl.col(d), pl.col(position), pl.col("rel")
    listed = doc.drop_nulls()
    twice = listed.len() - listed.n_unique()
    if by_rank:
        ranks = value.drop_nulls()
        ordered = {
            "null_rank": value.null_count(),
            "bad_rank": (value < 1).sum(),
            "dup_rank": ranks.len() - ranks.n_unique(),
        }
        if against is not None:  # order='auto' beside a score column: the two alike
            score = against_value(against, run.collect_schema()[against])
            ordered["two_orders"] = disagreements(position, score)
    else:  # scores
        nan = value.is_nan().sum() if kind.is_float() else pl.lit(0)
        ordered = {"null_score": value.null_count(), "nan_score": nan}
    of_run = {"null_doc": doc.null_count(), "dup_doc": twice, **ordered}
    if sample is not None:  # a query's sampled rankings, read as one: refused first
        of_run = {"sampled": pl.col(sample).n_unique(), **of_run}
    of_judged = judgment_flags(doc, label)
    number = {name: i - len(_DATA_CHECKS) for i, name in enumerate(_DATA_CHECKS)}

    def failed(frame: pl.LazyFrame, counts: Mapping[str, pl.Expr], null: str) -> pl.LazyFrame:
        per_query = frame.group_by(q).agg(
            pl.len().cast(pl.Int64).alias(null),
            *(count.cast(pl.Int64).alias(name) for name, count in counts.items()),
        )
        nulls = pl.when(pl.col(q).is_null()).then(pl.col(null)).otherwise(0)
        fixed = [nulls.alias(null)]
        if "sampled" in counts:  # more than one value in a known query
            many = pl.col(q).is_not_null() & (pl.col("sampled") > 1)
            fixed.append(pl.when(many).then(pl.col("sampled")).otherwise(0).alias("sampled"))
        return (
            per_query.with_columns(fixed)
            .unpivot(on=[null, *counts], index=q, variable_name="__check", value_name="__n")
            .filter(pl.col("__n") > 0)
            .select(
                pl.col("__check").replace_strict(number, return_dtype=pl.Int32).alias(_PROBLEM),
                _text(q).alias(_QUERY),
                pl.col("__n").cast(pl.Float64).alias(_VALUE),
                q,
            )
        )

    return pl.concat(
        [failed(run, of_run, "null query"), failed(judged, of_judged, "null judged query")],
        how="diagonal_relaxed",
    )


def _text(column: str) -> pl.Expr:
    return pl.col(column).cast(pl.String)


def _raise(
    frame: pl.DataFrame,
    schema: pl.Schema,
    q: str,
    d: str,
    key: str,
    kind: pl.DataType,
    names: Mapping[str, str],
) -> pl.DataFrame:
    """Raise the first problem the checks found, else the result without them
    (``names``: the columns :data:`RUN_FLAGS`' messages name, by role)."""
    if _PROBLEM not in frame.columns:
        return frame
    problems = frame.filter(pl.col(_PROBLEM).is_not_null()).sort(
        [_PROBLEM, q, _DOC], nulls_last=True
    )
    if problems.height:
        row = problems.row(0, named=True)
        problem = row[_PROBLEM]
        if isinstance(problem, int) and problem < 0:  # the accuracy metrics' checks
            name = _DATA_CHECKS[problem + len(_DATA_CHECKS)]
            count = row[_VALUE]
            n = int(count) if isinstance(count, float) else count
            if name == "sampled":
                raise sampled_error(names["sample"], repr(row[q]), n)
            if name in ("null query", "null judged query"):
                side = "run" if name == "null query" else "judgments"
                raise null_key_error(q, side)
            raise flag_error(name, names, row[q], n)
        raise _error(row, q, d, key, kind)
    return frame.filter(pl.col(_PROBLEM).is_null()).select(schema.names())


def _shown(value: object, kind: pl.DataType) -> str:
    if value is None or not kind.is_integer():
        return repr(value)
    return str(value)


def _error(row: dict[str, object], q: str, d: str, key: str, kind: pl.DataType) -> Exception:
    problem = row[_PROBLEM]
    key_kind = pl.Int64() if key == "position" else kind
    shown = _shown(row[_KEY], key_kind)
    if problem == _NULL_KEY:
        nulls = int(float(str(row[_VALUE])))
        what = "position" if key == "position" else "document"
        row_is = f"each row gives one {what}'s propensity"
        return null_ids_error("propensities", nulls, [key], row_is)
    if problem == _BAD_VALUE:
        return InvalidValueError(
            f"propensities= has propensity {row[_VALUE]!r} in column 'propensity' for "
            f"{key} {shown}: {_FIX}; drop or mend that row (a position never examined, or "
            "a document never relevant, has no unbiased weight)"
        )
    if problem == _HEAVY:
        return InvalidValueError(
            f"propensities= has propensity {row[_VALUE]!r} in column 'propensity' for "
            f"{key} {shown}: its weight 1/p is 2**32 or more, which the exact sums of the "
            "metrics cannot add (a propensity must be above 2**-32, about 2.3e-10); clip "
            "the propensities, e.g. pl.col('propensity').clip(lower_bound=1e-6), as "
            "inverse-propensity estimators do"
        )
    if problem == _LOW_POSITION:
        count = row[_VALUE]
        n = int(count) if isinstance(count, float) else count
        return InvalidValueError(
            f"column 'position' of the propensities has {n} position(s) below 1 (the "
            f"lowest: {row[_KEY]}); positions start at 1 for the top, as the run's ranks "
            "do: add 1 to 0-based positions, e.g. pl.col('position') + 1"
        )
    if problem == _TWICE:
        return DuplicateError(
            f"propensities= lists {key} {shown} twice: give one propensity per {key}"
        )
    # _UNWEIGHTED: a relevant document without a weight
    doc, query = _shown(row[_KEY], kind), repr(row[_QUERY])
    level = row[_LEVEL]
    level_text = str(int(level)) if isinstance(level, float) and level.is_integer() else level
    relevant = f"document {doc} of query {query} is relevant (relevance >= {level_text})"
    if key == "position" and row[_VALUE] is None:
        return InvalidValueError(
            f"{relevant} and it is not in the run (the logged ranking: a click is on a "
            "shown document): give the run the whole logged ranking, or drop that "
            "judgment"
        )
    if key == "position":
        rank = int(float(str(row[_VALUE])))
        return InvalidValueError(
            f"{relevant} and its rank {rank} has no row in propensities= (column "
            "'position'): give every position of the run a propensity, e.g. "
            "irm.position_bias(log) over the whole log"
        )
    return InvalidValueError(
        f"{relevant} and has no propensity: propensities= (column {d!r}) must list "
        "every relevant document, e.g. irm.label_propensity over judgments that "
        "include them"
    )
