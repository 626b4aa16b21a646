"""What produced a comparison's result: remembered by :func:`~polars_irmetrics.compare`.

A polars frame carries no metadata, yet a report must name the test, the correction
and alpha behind its markers. :func:`~polars_irmetrics.compare` therefore
*remembers* the options and paired per-query values of each result frame it returns
(keyed by the frame's identity, held weakly: the record goes when the frame does),
and :func:`recall` gives them back for that very frame. A frame equal to one of the
last few results (the same rows and schema: the frame a lazy comparison's ``collect()``
gives, which polars builds anew) is given that result's record, where no other recent
result with other options equals it. A frame derived from it (filtered, sorted, read
back from a file and changed) is a new object with no record: a report of it says that
the test and correction were not recorded, or takes them from ``options=``.
"""

from __future__ import annotations

import weakref
from collections import deque
from dataclasses import dataclass
from typing import Literal

import polars as pl

from polars_irmetrics.comparison.frame import PerQuery
from polars_irmetrics.comparison.options import CompareOptions

__all__ = ["Procedure", "Record", "describe", "recall", "remember"]


#: What produced a recorded frame: :func:`~polars_irmetrics.compare` or
#: :func:`~polars_irmetrics.tukey_hsd` (whose test no :class:`CompareOptions` names).
Procedure = Literal["compare", "tukey_hsd"]


@dataclass(frozen=True)
class Record:
    """The options of a comparison and its paired per-query values; ``procedure``: the
    function that returned the frame (``tukey_hsd`` records its ``alpha``,
    ``confidence`` and ``query_set`` as options)."""

    options: CompareOptions
    values: PerQuery | None
    query_id: str = "query_id"
    procedure: Procedure = "compare"


_RECORDS: dict[int, tuple[weakref.ref[pl.DataFrame], Record]] = {}


#: The last results and their records, kept for a frame equal to one (:func:`recall`).
_RECENT: deque[tuple[pl.DataFrame, Record]] = deque(maxlen=8)


def remember(result: pl.DataFrame, record: Record) -> pl.DataFrame:
    """Remember ``record`` for ``result`` (while it lives, and among the last few
    results by content); returns ``result``."""
    key = id(result)
    _RECORDS[key] = (weakref.ref(result), record)
    weakref.finalize(result, _RECORDS.pop, key, None)
    _RECENT.append((result, record))
    return result


def recall(result: pl.DataFrame) -> Record | None:
    """The record of ``result`` if :func:`~polars_irmetrics.compare` returned it, else None.

    Examples
    --------
    A frame built by hand (or filtered from a result) has no record:

    >>> import polars as pl
    >>> from polars_irmetrics.comparison.record import recall
    >>> recall(pl.DataFrame({"metric": ["map"]})) is None
    True
    """
    entry = _RECORDS.get(id(result))
    if entry is not None and entry[0]() is result:
        return entry[1]
    equal = [
        record
        for frame, record in _RECENT
        if frame.schema == result.schema and frame.height == result.height and frame.equals(result)
    ]
    if not equal or any(record.options != equal[-1].options for record in equal):
        return None  # none, or results of other options with these very rows
    return equal[-1]


_TESTS = {
    "t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "randomization": "randomization (sign-flip) test",
    "bootstrap": "paired bootstrap test",
}
_CORRECTIONS = {
    "bonferroni": "Bonferroni",
    "holm": "Holm",
    "holm-sidak": "Holm-Šidák",
    "fdr_bh": "Benjamini-Hochberg (FDR)",
    "fdr_by": "Benjamini-Yekutieli (FDR)",
}


def describe(
    result: pl.DataFrame, options: CompareOptions | None, procedure: Procedure = "compare"
) -> str:
    """One sentence naming the test, correction and alpha (and, for a one-sided test,
    what its alternative tests in each metric's direction), the queries and baseline.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.comparison.options import CompareOptions
    >>> from polars_irmetrics.comparison.record import describe
    >>> result = pl.DataFrame({"metric": ["map", "P@5"], "system": ["b", "b"],
    ...                        "baseline": ["a", "a"], "n": [50, 50]})
    >>> options = CompareOptions(baseline="a", test="randomization", n_resamples=1000, seed=1)
    >>> describe(result, options)
    'Two-sided randomization (sign-flip) test (1000 resamples, seed 1), Holm correction over 2
    comparisons (all metrics together), significant at adjusted p ≤ 0.05; 50 queries; baseline:
    a.'
    >>> describe(result, None)
    'Test, correction and alpha not recorded (pass options=CompareOptions(...)); 50 queries;
    baseline: a.'

    ``alternative=`` is the sign of the delta: for a lower-is-better metric ``"greater"``
    tests that the system is worse, and the sentence says so.

    >>> errors = pl.DataFrame({"metric": ["logloss"], "system": ["b"], "baseline": ["a"],
    ...                        "n": [50], "higher_is_better": [False]})
    >>> describe(errors, CompareOptions(baseline="a", alternative="greater"))
    "One-sided paired t-test (alternative='greater': the system's mean above the baseline's,
    worse for this lower-is-better metric), Holm correction over 1 comparison (all metrics
    together), significant at adjusted p ≤ 0.05; 50 queries; baseline: a."
    """
    parts: list[str] = []
    if procedure == "tukey_hsd":
        alpha = 0.05 if options is None else options.alpha
        parts.append(
            "Tukey's HSD test (p-values adjusted over every pair of systems of each metric "
            f"by the studentized range; no further correction), significant at p ≤ {alpha:g}"
        )
    elif options is None:
        parts.append("Test, correction and alpha not recorded (pass options=CompareOptions(...))")
    else:
        sided = "Two-sided" if options.alternative == "two-sided" else "One-sided"
        test = f"{sided} {_TESTS[options.test]}"
        details: list[str] = []
        if options.test in ("randomization", "bootstrap"):
            details.append(_resamples(result, options))
        if options.alternative != "two-sided":
            details.append(_one_sided(result, options.alternative, options.test))
        if details:
            test += f" ({'; '.join(details)})"
        count = result.height
        if options.correction_scope == "metric" and "metric" in result.columns:
            count //= max(1, result.get_column("metric").n_unique())
        scope = (
            "all metrics together"
            if options.correction_scope == "all"
            else "each metric on its own"
        )
        if options.correction is None:
            correction = "no correction for multiple testing"
            threshold = f"significant at p ≤ {options.alpha:g}"
        else:
            name = _CORRECTIONS.get(options.correction, options.correction)
            plural = "" if count == 1 else "s"
            correction = f"{name} correction over {count} comparison{plural} ({scope})"
            threshold = f"significant at adjusted p ≤ {options.alpha:g}"
        parts.append(f"{test}, {correction}, {threshold}")
    if "n" in result.columns and result.height:
        counts = sorted(set(result.get_column("n").to_list()))
        parts.append(f"{'/'.join(str(c) for c in counts)} queries")
    if "baseline" in result.columns and result.height:
        baselines = result.get_column("baseline").unique(maintain_order=True).to_list()
        pairs = procedure == "tukey_hsd" or (options is not None and options.pairs)
        if not pairs and len(baselines) == 1:
            parts.append(f"baseline: {baselines[0]}")
        else:
            parts.append("every pair of systems compared")
    return "; ".join(parts) + "."


def _resamples(result: pl.DataFrame, options: CompareOptions) -> str:
    """What a resampling test drew: its resamples and seed; for the randomization test,
    exact where every sign vector of a comparison's ``n`` queries was enumerated
    (``2**n <= n_resamples``: no draw, the seed unread).

    Examples
    --------
    >>> from polars_irmetrics.comparison.options import CompareOptions
    >>> options = CompareOptions(test="randomization")
    >>> _resamples(pl.DataFrame({"n": [8]}), options)
    'exact: all 2**n sign vectors enumerated, no resample drawn'
    >>> _resamples(pl.DataFrame({"n": [8, 20]}), options)
    'exact where 2**n ≤ 10000 (all sign vectors enumerated), else 10000 resamples, seed 0'
    """
    seed = "" if options.seed is None else f", seed {options.seed}"
    drawn = f"{options.n_resamples} resamples{seed}"
    if options.test != "randomization" or "n" not in result.columns or not result.height:
        return drawn
    exact = [n < 63 and 2**n <= options.n_resamples for n in result.get_column("n").to_list()]
    interval = ""
    if options.interval == "bootstrap":
        interval = f"; the bootstrap interval from {drawn}"
    if all(exact):
        return f"exact: all 2**n sign vectors enumerated, no resample drawn{interval}"
    if any(exact):
        return (
            f"exact where 2**n ≤ {options.n_resamples} (all sign vectors enumerated), else {drawn}"
        )
    return drawn


def _one_sided(result: pl.DataFrame, alternative: str, test: str = "t") -> str:
    """What a one-sided ``alternative`` tests: the sign of the delta (for Wilcoxon, of
    its signed ranks, which may disagree with the mean's), and whether that is better
    or worse in each metric's declared direction (the result's ``higher_is_better``,
    where it has the column)."""
    above = alternative == "greater"
    what = "values" if test == "wilcoxon" else "mean"
    text = f"alternative={alternative!r}: the system's {what} {'above' if above else 'below'} "
    text += "the baseline's" + (" by the signed ranks" if test == "wilcoxon" else "")
    if not {"metric", "higher_is_better"} <= set(result.columns):
        return text
    directions: dict[str, bool | None] = dict(
        result.select("metric", "higher_is_better").unique(maintain_order=True).iter_rows()
    )
    against = "lower-is-better " if above else "higher-is-better "
    groups = [
        ("better", "", [m for m, up in directions.items() if up is above]),
        ("worse", against, [m for m, up in directions.items() if up is (not above)]),
        (
            "neither better nor worse",
            "undirected ",
            [m for m, up in directions.items() if up is None],
        ),
    ]
    said = [(word, kind, metrics) for word, kind, metrics in groups if metrics]
    if len(said) == 1:
        word, kind, metrics = said[0]
        which = "this" if len(metrics) == 1 else "every"
        return f"{text}, {word} for {which} {kind}metric"
    return text + ", " + "; ".join(f"{w} for {k}{', '.join(ms)}" for w, k, ms in said)
