"""The ranking metrics' coverage warning where fusion learns from judgments.

:func:`~polars_irmetrics.fit_fusion` and :func:`~polars_irmetrics.optimize_fusion`
read the runs beside judgments: a run that retrieves no judged document gives a fitted
table of no hit, or adds nothing any grid point can score (every point 0 where no run
retrieves one, the best one arbitrary). :func:`judged_counts` counts, in one small
aggregation collected with the fit or the grid, each run's judged documents and
queries (and the runs' together): the counts of
:func:`~polars_irmetrics.ground.validate.judged_tally`, per run and of the runs
together; :func:`warn_on_training` gives the ranking metrics' warning
(:func:`~polars_irmetrics.ground.validate.warn_on_counts`), once per run, in the runs'
names, with the hints of :func:`~polars_irmetrics.ground.spelling.spelling_hint`. The
evaluations inside (``mapfuse``'s MAP, the grid) warn of nothing themselves
(:func:`quiet`): their systems are the runs' indexes and the grid's points, and a grid
cut at a metric's cutoff holds judged documents the runs do retrieve further down.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from collections.abc import Callable, Iterator, Sequence

import polars as pl

from polars_irmetrics.errors import CoverageWarning
from polars_irmetrics.fusion.methods import RUN
from polars_irmetrics.ground.spelling import Sides, spelling_hint
from polars_irmetrics.ground.validate import (
    TALLY,
    DocsHint,
    Hint,
    coverage_unsaid,
    is_text,
    judged_tally,
    warn_from_plan,
    warn_on_counts,
)
from polars_irmetrics.offline.coverage import judged_docs, judged_partly

__all__ = [
    "judged_counts",
    "judged_hints",
    "quiet",
    "spelt_docs",
    "spelt_partly",
    "warn_on_training",
]

#: The run's name in the counts (null on the row of the runs together).
NAME = "run"

_SIDES = Sides("the runs", "the judgments", "the runs and the judgments")


def judged_counts(
    runs: pl.LazyFrame, judged: pl.LazyFrame, names: Sequence[str], query_id: str, doc_id: str
) -> pl.LazyFrame:
    """One row per run (``NAME``, in the runs' order) and one for the runs together
    (``NAME`` null), with the :data:`~polars_irmetrics.ground.validate.TALLY` counts:
    the judged queries and documents (the same on every row), those the run retrieves
    (a judged document counted once per query), and the judged queries it lists.
    ``runs``: the long frame (``RUN``, the ids); ``judged``: the judgments, ids in the
    runs' dtypes.

    Examples
    --------
    >>> runs = pl.LazyFrame({RUN: [0, 0, 1], "q": ["1", "1", "1"], "d": ["a", "b", "x"]},
    ...                     schema_overrides={RUN: pl.Int32})
    >>> qrels = pl.LazyFrame({"q": ["1", "2"], "d": ["a", "z"]})
    >>> judged_counts(runs, qrels, ["a", "b"], "q", "d").collect().rows()
    [('a', 2, 1, 2, 1, 1), ('b', 2, 0, 2, 0, 1), (None, 2, 1, 2, 1, 1)]
    """
    q, d = query_id, doc_id
    per_run = judged_tally(runs, judged, q, d, by=RUN, listed=True)
    together = judged_tally(runs, judged, q, d, listed=True)
    named = pl.LazyFrame(
        {RUN: range(len(names)), NAME: list(names)}, schema={RUN: pl.Int32, NAME: pl.String}
    )
    # every run named, in the runs' order (one without a row of the tally counts 0)
    counted = pl.concat(
        [
            named.join(per_run, on=RUN, how="left", maintain_order="left").drop(RUN),
            together.select(pl.lit(None, pl.String).alias(NAME), *TALLY),
        ],
        how="diagonal_relaxed",
    )
    totals = together.select("queries", "docs")  # the judgments': the same on every row
    counted = counted.drop("queries", "docs").join(totals, how="cross", maintain_order="left")
    return counted.select(NAME, *(pl.col(c).fill_null(0).cast(pl.Int64) for c in TALLY))


def judged_hints(
    runs: pl.LazyFrame, judged: pl.LazyFrame, query_id: str, doc_id: str
) -> tuple[Hint, ...]:
    """The warning's hints (:func:`~polars_irmetrics.ground.spelling.spelling_hint`):
    the runs' query ids that match a judged one once case, spaces, a prefix or leading
    zeros are ignored, and their documents that match a judged one of the same query
    so; text ids only, each computed once, on the warning's path only."""
    schema = runs.collect_schema()
    hints: list[Hint] = []
    if is_text(schema[query_id]):

        @functools.cache
        def queries() -> str | None:
            return spelling_hint(
                runs.select(query_id),
                judged.select(query_id),
                query_id,
                within=None,
                noun="query",
                sides=_SIDES,
            )

        hints.append(queries)
    if is_text(schema[doc_id]):

        @functools.cache
        def documents() -> str | None:
            return spelling_hint(
                runs.select(query_id, doc_id),
                judged.select(query_id, doc_id),
                doc_id,
                within=query_id,
                noun="document",
                sides=_SIDES,
            )

        hints.append(documents)
    return tuple(hints)


def spelt_docs(
    runs: pl.LazyFrame, judged: pl.LazyFrame, names: Sequence[str], query_id: str, doc_id: str
) -> DocsHint | None:
    """The ranking metrics' document hint of the judged queries where a run retrieves no
    judged document (:func:`~polars_irmetrics.offline.coverage.judged_docs`), per run
    (``RUN``), keyed by its name (``names``, in the runs' order): its documents there
    that match a judged one of the same query once their spelling is ignored. Read only
    where a run retrieves a judged document in fewer judged queries than there are;
    ``None`` where the documents are not text."""
    return _by_name(judged_docs(runs, judged, query_id, doc_id, systems=[RUN]), names)


def spelt_partly(
    runs: pl.LazyFrame, judged: pl.LazyFrame, names: Sequence[str], query_id: str, doc_id: str
) -> DocsHint | None:
    """The ranking metrics' document hint of the judged queries where a run retrieves
    some judged documents but not all
    (:func:`~polars_irmetrics.offline.coverage.judged_partly`), per run (``RUN``),
    keyed by its name (``names``, in the runs' order): its other documents there that no
    judgment of the query names and that match a judged one once the spaces around
    them, case and separators are ignored. ``None`` where the documents are not text."""
    return _by_name(judged_partly(runs, judged, query_id, doc_id, systems=[RUN]), names)


def _by_name(hint: DocsHint | None, names: Sequence[str]) -> DocsHint | None:
    """``hint`` keyed by each run's name (``names``, in the runs' order), not its
    number (``RUN``)."""
    if hint is None:
        return None
    read = hint

    def named() -> dict[tuple[str], tuple[int, str]]:
        return {(names[key[0]],): text for key, text in read().items()}

    return named


#: What empty judgments mean to each caller.
_NOTHING = {
    "fit_fusion": "fit_fusion has nothing to learn from (its table is empty)",
    "optimize_fusion": "optimize_fusion has nothing to tune on (every grid point scores "
    "0, the best one is arbitrary)",
}

#: What a run that retrieves no judged document means to each caller.
_NO_HIT = {
    "fit_fusion": "fit_fusion learns each run's table from these judgments: such a run's "
    "is learnt from no hit.",
    "optimize_fusion": "optimize_fusion tunes the fusion on these judgments: no grid point "
    "can score such a run's documents.",
}

#: What a judged query where a run retrieves no judged document means to each caller,
#: its documents there spelt apart from the judged ones.
_SPELT = {
    "fit_fusion": "fit_fusion learns each run's table from these judgments: such a query "
    "of that run's is learnt as one of no hit.",
    "optimize_fusion": "optimize_fusion tunes the fusion on these judgments: no grid point "
    "can score that run's documents in such a query.",
}

#: What a run's documents spelt apart from judged ones, in judged queries where it
#: retrieves other judged documents, mean to each caller.
_PARTLY = {
    "fit_fusion": "fit_fusion learns each run's table from these judgments: such "
    "documents of that run's are learnt as unjudged ones.",
    "optimize_fusion": "optimize_fusion tunes the fusion on these judgments: no grid point "
    "can score such documents of that run's.",
}

#: What judged queries the runs miss mean to each caller that scores them 0.
_MISSED = {
    "fit_fusion": "mapfuse's table is that run's MAP over every judged query, the missed "
    "ones as 0: pass the judgments of the training queries alone.",
    "optimize_fusion": "optimize_fusion averages every grid point over the judged queries, "
    "the missed ones as empty rankings, the same at every point.",
}


def warn_on_training(
    counts: pl.DataFrame,
    *,
    caller: str,
    missed: bool,
    hints: Sequence[Hint] = (),
    docs: DocsHint | None = None,
    partly: DocsHint | None = None,
) -> None:
    """The coverage warnings of :func:`judged_counts`' rows for ``caller``
    (``"fit_fusion"`` or ``"optimize_fusion"``): in the ranking metrics' words
    (:func:`~polars_irmetrics.ground.validate.warn_on_counts`), once per run that
    retrieves no judged document, named as a run (once, in the caller's words, for
    judgments with no query);
    with ``missed`` (the caller scores the judged queries the runs miss as empty
    rankings: ``mapfuse`` per run, the grid for the runs together), once per run
    (``mapfuse``) or once for the runs together (the grid) that list fewer than half of
    the judged queries. ``docs``: once per run that retrieves a judged document, but
    none in some judged query where its documents match judged ones once their spelling
    is ignored (:func:`spelt_docs`; read only where such a query may be). ``partly``:
    once per run that retrieves a judged document, where in judged queries where it
    retrieves some judged documents but not all its other documents match judged ones
    once the spaces around them, case and separators are ignored
    (:func:`spelt_partly`); said once here, the evaluations inside read no hint
    (:func:`quiet`).
    """
    runs = counts.filter(pl.col(NAME).is_not_null())
    together = counts.filter(pl.col(NAME).is_null()).drop(NAME)

    if not together.item(0, "queries"):
        warn_from_plan(
            f"no judged query: the judgments are empty, so {_NOTHING[caller]}; check the "
            "judgments' file or frame"
        )
        return
    no_listed = pl.lit(None, pl.Int64).alias("listed")
    warn_on_counts(
        runs.with_columns(no_listed),
        systems=[NAME],
        unretrieved="zero",
        hints=hints,
        emit=_renamed("system ", "run ", _NO_HIT[caller]),
    )
    found = runs.filter(pl.col("found") > 0)  # those that retrieve none are warned of
    if docs is not None and found.height:  # the ranking metrics' check of such queries
        warn_on_counts(
            found.with_columns(no_listed),
            systems=[NAME],
            unretrieved="zero",
            emit=_renamed("system ", "run ", _SPELT[caller]),
            docs=docs,
        )
    if partly is not None and found.height:  # and where it retrieves some, not all
        warn_on_counts(
            found.with_columns(no_listed),
            systems=[NAME],
            unretrieved="zero",
            emit=_renamed("system ", "run ", _PARTLY[caller]),
            partly=partly,
        )
    if not missed:
        return
    if caller == "fit_fusion" and found.height:  # mapfuse: each MAP over every judged query
        warn_on_counts(
            found,
            systems=[NAME],
            unretrieved="zero",
            hints=hints,
            emit=_renamed("system ", "run ", _MISSED[caller]),
        )
    elif together.item(0, "found"):  # the grid: the runs fused
        warn_on_counts(
            together,
            systems=(),
            unretrieved="zero",
            hints=hints,
            emit=_renamed("the run ", "the fused run ", _MISSED[caller]),
        )


def _renamed(old: str, new: str, tail: str) -> Callable[[str], None]:
    """Give a warning's text with its subject ``old`` (the ranking metrics' ``system``,
    ``the run``) named ``new``, and ``tail`` after it."""

    def emit(text: str) -> None:
        if text.startswith(old):
            text = new + text[len(old) :]
        warn_from_plan(f"{text} {tail}")

    return emit


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """The coverage warnings of the evaluations inside a fit or a grid left unsaid
    (module doc): :func:`warn_on_training` says them, of the runs. Their hints are not
    read either (:func:`~polars_irmetrics.ground.validate.coverage_unsaid`): a hint
    reads the run again, and a grid's run is a plan whose overlap count rows would be
    handed on twice."""
    with warnings.catch_warnings(), coverage_unsaid():
        warnings.simplefilter("ignore", CoverageWarning)
        yield
