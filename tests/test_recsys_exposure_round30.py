"""Round 30: options and side-table columns the beyond-accuracy metrics and the exposure
measures do not read are refused, never ignored (DataFrame and LazyFrame alike)."""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import DuplicateError, InvalidValueError

RUN = pl.DataFrame(
    {"query_id": ["u1"] * 3 + ["u2"] * 3, "doc_id": [1, 2, 3, 2, 3, 4], "rank": [1, 2, 3] * 2}
)
QRELS = pl.DataFrame({"query_id": ["u1", "u2"], "doc_id": [1, 3], "relevance": [1, 1]})
GROUPS = pl.DataFrame({"doc_id": [1, 2, 3, 4], "group": ["a", "a", "b", "b"]})
INTERACTIONS = pl.DataFrame({"query_id": ["u1", "u2", "u3", "u3"], "doc_id": [1, 2, 3, 4]})
FEATURES = pl.DataFrame(
    {
        "doc_id": [1, 2, 3, 4],
        "category_id": [1, 1, 2, 2],
        "vec": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, 2.0]],
    }
)

_FEATURES_UNREAD = (
    "features='vec' names the feature vector column of item_features=, and no metric "
    "asked for reads the vectors ('categorical_diversity@3'; categorical_diversity reads "
    "each item's category): drop features= (it would change nothing), or ask for a metric "
    "that reads them (intra_list_diversity@k, serendipity@k)"
)
_RELEVANCE_UNREAD = (
    "relevance='grade' names the judgments' relevance column, and {metrics} read{s} no "
    "judgments (rnd, rkl and rrd read the run and groups= only): drop relevance= (it "
    "would change nothing), or evaluate a metric that reads judgments"
)
_GROUP_COLUMN_UNREAD = (
    "column 'region' of groups= is not read: with a 'group' column each row puts one "
    "document ('doc_id') in the group it names, and no measure reads another column; drop "
    "it, e.g. groups.select('doc_id', 'group'), or for awrf's intersectional groups give "
    "one column per dimension and none named 'group'"
)
_REGIONS = GROUPS.with_columns(region=pl.Series(["x", "y", "x", "y"]))

CASES: dict[str, tuple[list[str], dict[str, Any], str]] = {
    # categorical_diversity reads item_features='s categories, not its vectors
    "features= beside categorical_diversity": (
        ["categorical_diversity@3"],
        {"item_features": FEATURES, "features": "vec"},
        _FEATURES_UNREAD,
    ),
    # rND's family reads no judgments, whose relevance column relevance= names
    "relevance= beside rnd": (
        ["rnd"],
        {"groups": GROUPS, "relevance": "grade"},
        _RELEVANCE_UNREAD.format(metrics="metric 'rnd'", s="s"),
    ),
    "relevance= beside rkl and novelty": (
        ["rkl", "novelty@3"],
        {"groups": GROUPS, "interactions": INTERACTIONS, "relevance": "grade"},
        _RELEVANCE_UNREAD.format(metrics="metrics 'rkl', 'novelty@3'", s=""),
    ),
    # a second group column read as no dimension of awrf's groups, or not at all
    "groups= region beside awrf": (
        ["awrf"],
        {"qrels": QRELS, "groups": _REGIONS},
        _GROUP_COLUMN_UNREAD,
    ),
    "groups= region beside ee_loss": (
        ["ee_loss"],
        {"qrels": QRELS, "groups": _REGIONS},
        _GROUP_COLUMN_UNREAD,
    ),
    "groups= region beside item_mad": (
        ["item_mad@3"],
        {"qrels": QRELS, "groups": _REGIONS},
        _GROUP_COLUMN_UNREAD,
    ),
    # a by= key in groups=: each day's groups would be read as every day's
    "groups= with the by= key beside ee_loss": (
        ["ee_loss"],
        {
            "qrels": QRELS,
            "groups": GROUPS.with_columns(day=pl.lit(1)),
            "by": "day",
            "run": RUN.with_columns(day=pl.lit(1)),
        },
        _GROUP_COLUMN_UNREAD.replace("'region'", "'day'"),
    ),
}


def _collected(result: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return result.collect() if isinstance(result, pl.LazyFrame) else result


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize("case", list(CASES))
def test_an_unread_option_or_column_is_refused(case: str, lazy: bool) -> None:
    metrics, given, message = CASES[case]
    given = dict(given)
    table = given.pop("run", RUN)
    run: pl.DataFrame | pl.LazyFrame = table.lazy() if lazy else table
    tables = {k: v.lazy() if lazy and isinstance(v, pl.DataFrame) else v for k, v in given.items()}
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        _collected(irm.evaluate(run, metrics, **tables))


def test_what_is_read_is_still_taken() -> None:
    """The same options and tables where a metric reads them: no refusal."""
    plain = irm.evaluate(RUN, ["categorical_diversity@3"], item_features=FEATURES)
    assert plain.columns == ["categorical_diversity@3"]
    vectors = irm.evaluate(
        RUN,
        ["categorical_diversity@3", "intra_list_diversity@3"],
        item_features=FEATURES,
        features="vec",
    )
    assert vectors["categorical_diversity@3"].equals(plain["categorical_diversity@3"])
    graded = irm.evaluate(
        RUN, ["rnd", "ee_loss"], qrels=QRELS.rename({"relevance": "grade"}), groups=GROUPS,
        relevance="grade",
    )  # fmt: skip
    assert graded["ee_loss"].equals(
        irm.evaluate(RUN, ["ee_loss"], qrels=QRELS, groups=GROUPS)["ee_loss"]
    )
    # awrf's intersectional groups: every column but doc_id a dimension
    cells = irm.evaluate(RUN, ["awrf"], qrels=QRELS, groups=_REGIONS.rename({"group": "genre"}))
    assert cells.columns == ["num_q", "awrf"]


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize("metrics", [["ee_loss"], ["item_mad@3"]], ids=["ee_loss", "item_mad"])
def test_a_document_twice_in_one_group_is_refused_whichever_measure_reads_it(
    metrics: list[str], lazy: bool
) -> None:
    """groups= listing (1, 'a') twice: the exposure measures refused it, Elliot's
    item_mad (which reads the same table) took it; the same refusal for both."""
    doubled = pl.concat([GROUPS, GROUPS.head(1)])
    message = (
        "the groups table (groups=) lists document '1' twice in one group (column 'group'); "
        "one row per (document, group): drop the duplicates, e.g. .unique()"
    )
    run, qrels, groups = (t.lazy() if lazy else t for t in (RUN, QRELS, doubled))
    with pytest.raises(DuplicateError, match=f"^{re.escape(message)}$"):
        _collected(irm.evaluate(run, metrics, qrels=qrels, groups=groups))


#: one query ranking 1, 2, 3 (two samples: 2, 1, 3 too), 1 relevant, in group a
_RANKED = pl.DataFrame(
    {
        "query_id": ["u1"] * 6,
        "sample": [0, 0, 0, 1, 1, 1],
        "doc_id": [1, 2, 3, 2, 1, 3],
        "rank": [1, 2, 3, 1, 2, 3],
    }
)
_SHAPES: dict[str, tuple[pl.DataFrame, dict[str, Any]]] = {
    "one ranking": (_RANKED.filter(pl.col("sample") == 0).drop("sample"), {}),
    "sampled": (_RANKED, {}),
    "by=": (
        _RANKED.filter(pl.col("sample") == 0).drop("sample").with_columns(day=1),
        {"by": "day"},
    ),
}


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize("shape", list(_SHAPES))
def test_ranks_beyond_2_53_keep_their_order_in_the_exposure_measures(
    shape: str, lazy: bool
) -> None:
    """Ranks 2**60 + 1, + 2, + 3 (Int64, distinct) were cast to Float64, where they
    are one value: the ranking was read in the ids' order (doc 3 first; ee_relevance
    0.25 for 1.0), or refused as duplicate ranks (sampled, by=). The exposure measures
    read positions from the order, which those ranks give as 1, 2, 3 do."""
    table, options = _SHAPES[shape]
    qrels = QRELS.filter(pl.col("query_id") == "u1")
    metrics = ["ee_loss", "ee_relevance", "awrf"]
    wide = table.with_columns(pl.col("rank") + 2**60)
    run, shifted, judged, groups = (t.lazy() if lazy else t for t in (table, wide, qrels, GROUPS))
    want = _collected(irm.evaluate(run, metrics, qrels=judged, groups=groups, **options))
    got = _collected(irm.evaluate(shifted, metrics, qrels=judged, groups=groups, **options))
    assert got.equals(want)
    assert want["ee_relevance"].to_list() == [1.0 if shape != "sampled" else 0.75]


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize("shape", ["one ranking", "sampled"])
def test_a_rank_of_2_63_or_more_is_refused_by_the_exposure_measures_too(
    shape: str, lazy: bool
) -> None:
    """A UInt64 rank of 2**63 or more: refused by the ranking and beyond-accuracy
    metrics (a rank counts positions), taken by the exposure measures alone; now the
    same refusal whichever metrics are asked."""
    table, _ = _SHAPES[shape]
    huge = table.with_columns(pl.col("rank").cast(pl.UInt64) + (2**64 - 4))
    message = (
        "column 'rank' of the run has 3 rank(s) of 2**63 or more in query 'u1'; a rank "
        "counts positions in one list: renumber them 1, 2, 3, ..., e.g. "
        "pl.col('rank').rank('ordinal').over(query_id)"
    )
    if shape == "sampled":  # both samples' ranks, counted per query
        message = message.replace("3 rank(s)", "6 rank(s)")
    run, groups = (t.lazy() if lazy else t for t in (huge, GROUPS))
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        _collected(irm.evaluate(run, ["rnd"], groups=groups))


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
def test_score_ties_are_broken_by_the_id_as_text_in_the_exposure_measures_too(
    lazy: bool,
) -> None:
    """Integer ids 8, 9, 10 of one score: the ranking metrics (and Elliot's, the
    recommender metrics) read them 9, 8, 10 (the id descending as text, trec_eval's
    rule); the exposure measures read them 10, 9, 8 (as integers), so one call read
    two rankings. Now the exposure measures read 9, 8, 10 too."""
    tied = pl.DataFrame({"query_id": ["u1"] * 3, "doc_id": [8, 9, 10], "score": [1.0] * 3})
    ranked = pl.DataFrame({"query_id": ["u1"] * 3, "doc_id": [9, 8, 10], "rank": [1, 2, 3]})
    qrels = pl.DataFrame({"query_id": ["u1"], "doc_id": [10], "relevance": [1]})
    groups = pl.DataFrame({"doc_id": [8, 9, 10], "group": ["a", "a", "b"]})
    metrics = ["P@1", "ee_loss", "ee_relevance(browsing='rbp')", "awrf"]
    tables = (tied, ranked, qrels, groups)
    tied, ranked, qrels, groups = (t.lazy() if lazy else t for t in tables)
    got = _collected(irm.evaluate(tied, metrics, qrels=qrels, groups=groups, per_query=True))
    want = _collected(irm.evaluate(ranked, metrics, qrels=qrels, groups=groups, per_query=True))
    assert got.equals(want)
    assert want["ee_relevance(browsing='rbp')"].to_list() == [0.25]  # 10 third: 0.5**2
