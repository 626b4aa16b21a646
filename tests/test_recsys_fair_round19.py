"""Round 19 of the recommender and fairness metrics: defects found by probing."""

from __future__ import annotations

import warnings

import polars as pl
import pytest
from distributed import Client

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnNotFoundError, InvalidValueError
from polars_irmetrics.ground.debias import debiased

RUN = pl.DataFrame(
    {"query_id": ["u1", "u1", "u2"], "doc_id": ["a", "b", "a"], "score": [2.0, 1.0, 1.0]}
)
TEST = pl.DataFrame({"query_id": ["u1", "u2"], "doc_id": ["a", "b"], "relevance": [1, 1]})
NULL_USER = pl.DataFrame({"query_id": ["u1", None, "u3"], "doc_id": ["a", "b", "c"]})
NO_HISTORY = pl.DataFrame(schema={"query_id": pl.String, "doc_id": pl.String})


@pytest.mark.parametrize(
    ("metrics", "interactions", "message"),
    [
        # Elliot's PopRSP / PopREO of bad interactions are NaN (0 / 0), and their NaN
        # warning used to come before the refusal of the input it came from
        (
            ["pop_rsp@2"],
            NULL_USER,
            "the interactions have 1 row(s) with a null 'query_id' or 'doc_id'",
        ),
        (
            ["pop_reo@2", "ndcg@2"],
            NULL_USER,
            "the interactions have 1 row(s) with a null 'query_id' or 'doc_id'",
        ),
        (["pop_rsp@2"], NO_HISTORY, "the interactions table has no rows"),
        (["pop_reo@2", "aclt@2"], NO_HISTORY, "the interactions table has no rows"),
    ],
)
def test_bad_history_is_refused_before_any_nan_warning(
    metrics: list[str], interactions: pl.DataFrame, message: str
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(InvalidValueError) as raised:
            irm.evaluate(RUN, metrics, qrels=TEST, interactions=interactions)
    assert str(raised.value).startswith(message)
    assert [str(w.message) for w in caught] == []


# ------------------------------------------- debias= counts the interactions alone
# item a judged for 5 users and relevant for u1 alone; b to e relevant for one each
GRADED = pl.DataFrame(
    {
        "query_id": ["u1", "u2", "u3", "u4", "u5", "u1", "u2", "u3", "u4"],
        "doc_id": ["a"] * 5 + ["b", "c", "d", "e"],
        "relevance": [1, 0, 0, 0, 0, 1, 1, 1, 1],
    }
)
FIRSTS = pl.DataFrame(
    {"query_id": ["u1", "u2", "u3", "u4"], "doc_id": ["a", "c", "d", "e"], "rank": [1, 1, 1, 1]}
)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5])
def test_debias_counts_the_relevant_rows_alone(seed: int) -> None:
    # RecTools' interactions are the positives: (u1, a), (u1, b), (u2, c), (u3, d),
    # (u4, e), one user per item, so q1 = q3 = 1, border = int(1 + 1.5 * 0) = 1 and no
    # item is over it: nothing is cut, and u1's P@1 (a at rank 1) is 1 for every seed.
    # Counting the four non-relevant rows of a made it 5 users, over the border, and
    # drew u1's relevant row out for 5 seeds of these 6 (P@1 = 0).
    got = irm.evaluate(FIRSTS, ["P@1"], qrels=GRADED, debias=irm.Debias(1.5, seed), per_query=True)
    plain = irm.evaluate(FIRSTS, ["P@1"], qrels=GRADED, per_query=True)
    assert got.rows() == plain.rows()
    # u5, judged non-relevant only, stays a judged query of P@1 = 0 (0 / 1)
    assert got.rows() == [("u1", 1.0), ("u2", 1.0), ("u3", 1.0), ("u4", 1.0), ("u5", 0.0)]


def test_debias_keeps_the_non_relevant_rows() -> None:
    # a relevant for u1 to u5, b to e for one user each: users (5, 1, 1, 1, 1), border
    # 1, so a keeps 1 of its 5 rows; f, judged non-relevant by u1 to u3, is no
    # interaction: its 3 rows are kept and not counted (counted, f's 3 users would
    # make the quartiles of (5, 1, 1, 1, 1, 3) 1 and 2.5, the border
    # int(2.5 + 1.5 * 1.5) = 4, and a would keep 4 rows). 1 + 4 + 3 = 8 rows.
    qrels = pl.LazyFrame(
        {
            "query_id": ["u1", "u2", "u3", "u4", "u5", "u1", "u2", "u3", "u4", "u1", "u2", "u3"],
            "doc_id": ["a"] * 5 + ["b", "c", "d", "e"] + ["f"] * 3,
            "relevance": [1] * 9 + [0] * 3,
        }
    )
    kept = debiased(qrels, irm.Debias(), "query_id", "doc_id", pl.col("relevance") >= 1)
    counts = kept.group_by("doc_id").len().sort("doc_id").collect().rows()
    assert counts == [("a", 1), ("b", 1), ("c", 1), ("d", 1), ("e", 1), ("f", 3)]


def test_debias_of_a_judged_table_is_refused() -> None:
    # a judged table (no qrels=) used to take debias= and read the judgments as given
    judged = FIRSTS.join(GRADED, on=["query_id", "doc_id"], how="full", coalesce=True)
    with pytest.raises(InvalidValueError) as raised:
        irm.evaluate(judged, ["P@1"], debias=irm.Debias(1.5, 1))
    assert str(raised.value) == (
        "debias=Debias(iqr_coef=1.5, random_state=1) down-samples the judgments of "
        "qrels=, and without qrels= the table is a judged table, whose rows are the "
        "ranking and the judgments at once: a row drawn out would leave the ranking too, "
        "so it is not read. Pass the judgments as qrels= (e.g. the table's rows with a "
        "relevance) and the ranking as the table, or drop debias="
    )


# ------------------------- the expected exposure's mean over fewer queries than num_q
EXPOSURE_RUN = pl.DataFrame(
    {
        "query_id": [1] * 4 + [2] * 4,
        "doc_id": list("abcd") + list("badc"),
        "rank": [1, 2, 3, 4] * 2,
    }
)
# query 2's one relevant document, b, has no group: the expected exposure leaves query 2
# out, where awrf (NaN there) and rnd score it
SOME_GROUPS = pl.DataFrame({"doc_id": ["a", "c"], "group": ["p", "u"]})
TWO_JUDGED = pl.DataFrame({"query_id": [1, 2], "doc_id": ["a", "b"], "relevance": [1, 1]})
LEFT_OUT = (
    " is null on 1 of the 2 queries (first: query_id=2), which {others} beside score: the "
    "expected-exposure measures score only the queries with a relevant document in "
    "groups= (a query without relevant judgments, or none of whose relevant documents "
    "has a group, is left out), so its mean is over fewer queries than the exposure "
    "measures' count (num_q; num_q_exposure beside the accuracy metrics) says. Evaluate "
    "{label} in a call of its own for the count of the queries it is over (or give "
    "those relevant documents a group)"
)


@pytest.mark.parametrize(
    ("metrics", "label", "others"),
    [
        (["ee_loss", "awrf"], "'ee_loss'", "'awrf'"),
        (["awrf_ndcg", "ee_disparity"], "'ee_disparity'", "'awrf_ndcg'"),
        (["rnd", "ee_relevance"], "'ee_relevance'", "'rnd'"),
    ],
)
def test_expected_exposure_beside_others_says_its_count(
    metrics: list[str], label: str, others: str
) -> None:
    # num_q = 2 (awrf and rnd score both queries), the expected exposure's mean is over
    # query 1 alone: the summary used to give no word of it
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = irm.evaluate(EXPOSURE_RUN, metrics, qrels=TWO_JUDGED, groups=SOME_GROUPS)
    assert got["num_q"].to_list() == [2]
    said = [str(w.message) for w in caught if "expected-exposure" in str(w.message)]
    # and b, query 2's relevant document without a group, named (round 21's warning)
    lost = [m for m in said if m.startswith("groups= gives no group to 1 relevant")]
    assert said == [*lost, label + LEFT_OUT.format(label=label, others=others)]
    assert len(lost) == 1


@pytest.mark.parametrize(
    ("metrics", "per_query"),
    [
        (["ee_loss", "awrf"], True),  # the null is in the rows: no count to mislead
        (["ee_loss", "ee_disparity"], False),  # num_q = 1: the queries their means are over
    ],
)
def test_expected_exposure_count_warning_only_where_it_misleads(
    metrics: list[str], per_query: bool
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        irm.evaluate(
            EXPOSURE_RUN, metrics, qrels=TWO_JUDGED, groups=SOME_GROUPS, per_query=per_query
        )
    said = [str(w.message) for w in caught if "expected-exposure" in str(w.message)]
    # b, query 2's relevant document without a group, is named (round 21's warning)
    assert [m for m in said if not m.startswith("groups= gives no group to 1 ")] == []


def test_engine_parts_say_the_expected_exposure_count_as_one_machine() -> None:
    # an engine's parts (Dask's, Spark's) tell the rows where ee_loss is null; the means'
    # task warns with the one plan's text over the whole run's count of queries
    from polars_irmetrics.exposure.rnd import undefined_part, warn_undefined_parts
    from polars_irmetrics.metrics.registry import parse_metric_list

    requests = parse_metric_list(["ee_loss", "awrf"])
    parts = [
        undefined_part(frame, requests, [], "query_id")
        for frame in (
            pl.DataFrame({"query_id": [1], "ee_loss": [0.0], "awrf": [0.8]}),
            pl.DataFrame({"query_id": [2], "ee_loss": [None], "awrf": [float("nan")]}),
        )
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_undefined_parts(parts, requests, [], "query_id", summary=True)
        warn_undefined_parts(parts, requests, [], "query_id", summary=False)
    texts = [str(w.message) for w in caught]
    # query 2's awrf NaN (no grouped document) is said by each call, as one plan says it
    # (tests/test_exposure_round20.py); the left-out count by the means' call alone
    assert [t for t in texts if "is NaN on" not in t] == [
        "'ee_loss'" + LEFT_OUT.format(label="'ee_loss'", others="'awrf'")
    ]
    assert [t[:56] for t in texts if "is NaN on" in t] == [
        "'awrf' is NaN on 1 of the 2 queries (first: query_id=2):"
    ] * 2


# ------------------------------- rnd's documents without a group are its unprotected
TWENTY = pl.DataFrame(
    {"query_id": [1] * 20, "doc_id": [f"d{i}" for i in range(20)], "rank": list(range(1, 21))}
)
PROTECTED = pl.DataFrame({"doc_id": ["d1", "d5", "d7"], "group": ["w"] * 3})
UNPROTECTED = (
    "is unprotected in {labels} (counted in the ranking's N, not in its protected P; with "
    "none grouped no document is protected and the values are NaN)"
)
NOT_LINED_UP = (
    ". Ids that do not line up are the likely cause: give groups= and the run the same "
    "'doc_id' values (same spelling, same collection)."
)
HOLDS = "groups= holds only 3 of the 20 documents of the run (column 'doc_id'): "


@pytest.mark.parametrize(
    ("metrics", "effect"),
    [
        # rND's family: a document groups= lacks is unprotected, counted in N (it used to
        # be said to count in no group, its exposure left out)
        (["rnd", "rkl"], "a document without a group " + UNPROTECTED.format(labels="rnd, rkl")),
        (
            ["rrd(protected='w')"],
            "a document without a group " + UNPROTECTED.format(labels="rrd(protected='w')"),
        ),
        # beside awrf, each measure's reading
        (
            ["awrf", "rnd"],
            "in awrf a document without a group counts in no group, so its exposure and "
            "relevance are left out of every group's (with none grouped, the values are "
            "null or NaN); and it " + UNPROTECTED.format(labels="rnd"),
        ),
    ],
)
def test_groups_warning_names_rnds_unprotected_documents(metrics: list[str], effect: str) -> None:
    judged: dict[str, pl.DataFrame] = {}
    if "awrf" in metrics:  # awrf reads the judgments
        judged["qrels"] = pl.DataFrame({"query_id": [1], "doc_id": ["d1"], "relevance": [1]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        irm.evaluate(TWENTY, metrics, groups=PROTECTED, **judged)
    said = [str(w.message) for w in caught if str(w.message).startswith("groups=")]
    assert said == [HOLDS + effect + NOT_LINED_UP]


def test_engines_groups_warning_names_rnds_unprotected_documents() -> None:
    # Dask's and Spark's warning of groups= against the whole run's documents
    import pyarrow as pa

    from polars_irmetrics.engines._sides import warn_on_group_ids
    from polars_irmetrics.ground.options import EvalOptions

    docs = pa.table({"doc_id": [f"d{i}" for i in range(20)]})
    sides = [("groups", PROTECTED.to_arrow())]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_on_group_ids(docs, sides, ["rnd"], EvalOptions())
    expected = HOLDS + "a document without a group " + UNPROTECTED.format(labels="rnd")
    assert [str(w.message) for w in caught] == [expected + NOT_LINED_UP]


# --------------------- the history's warning names the metrics asked that read it
LISTS = pl.DataFrame(
    {
        "query_id": ["u1"] * 3 + ["u2"] * 3,
        "doc_id": ["a", "b", "c", "b", "c", "a"],
        "rank": [1, 2, 3] * 2,
    }
)
OTHER_USERS = pl.DataFrame({"query_id": ["v1", "v2", "v3"], "doc_id": ["a", "b", "c"]})
FEW_ITEMS = pl.DataFrame({"query_id": ["u1", "u2"], "doc_id": ["a", "z"]})
U1_A = pl.DataFrame({"query_id": ["u1"], "doc_id": ["a"], "relevance": [1]})
USERS_FIX = (
    ". Ids that do not line up are the likely cause: give interactions= and the {run} the "
    "same 'query_id' values (same spelling, same collection)."
)
ITEMS_FIX = (
    ". Ids that do not line up are the likely cause: give interactions= and the {run} the "
    "same 'doc_id' values (same spelling, same collection)."
)
ITEM_ONLY = (
    "no metric asked reads a user's own history ({labels} the items' popularity or the "
    "catalogue alone), so the values do not change, but users that do not line up are a "
    "likely sign that the items do not either"
)


@pytest.mark.parametrize(
    ("metrics", "interactions", "qrels", "expected"),
    [
        # item-only metrics: the users' warning named novelty(kind='replay') and
        # serendipity, which were not asked
        (
            ["catalog_coverage@3"],
            OTHER_USERS,
            None,
            "interactions= holds none of the 2 users of the recommendations (column "
            "'query_id'): "
            + ITEM_ONLY.format(labels="catalog_coverage@3 reads")
            + USERS_FIX.format(run="recommendations"),
        ),
        (
            ["reco_accuracy@3"],
            OTHER_USERS,
            U1_A,
            "interactions= holds none of the 2 users of the run (column 'query_id'): "
            + ITEM_ONLY.format(labels="reco_accuracy@3 reads")
            + USERS_FIX.format(run="run"),
        ),
        (
            ["mcc@3", "arp@3"],
            OTHER_USERS,
            U1_A,
            "interactions= holds none of the 2 users of the recommendations (column "
            "'query_id'): "
            + ITEM_ONLY.format(labels="mcc@3 and arp@3 read")
            + USERS_FIX.format(run="recommendations"),
        ),
        # a metric of each user's history: the one asked is named
        (
            ["novelty(kind='replay')@3"],
            OTHER_USERS,
            None,
            "interactions= holds none of the 2 users of the recommendations (column "
            "'query_id'): a user without a history finds every item new "
            "(novelty(kind='replay')@3 reads no history for them)"
            + USERS_FIX.format(run="recommendations"),
        ),
        # the items' warning named novelty, surprisal, serendipity... for epc alone
        (
            ["epc@3"],
            FEW_ITEMS,
            U1_A,
            "interactions= holds only 1 of the 3 items of the run (column 'doc_id'): an "
            "item the interactions lack has no popularity and no user has seen it, so "
            "epc@3 reads it as never seen, and the catalogue does not hold it"
            + ITEMS_FIX.format(run="run"),
        ),
    ],
)
def test_history_warning_names_the_metrics_asked(
    metrics: list[str],
    interactions: pl.DataFrame,
    qrels: pl.DataFrame | None,
    expected: str,
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        irm.evaluate(LISTS, metrics, qrels=qrels, interactions=interactions)
    said = [str(w.message) for w in caught if str(w.message).startswith("interactions=")]
    assert said == [expected]


# ------------------------------------ the engines' warnings keep one machine's class
def test_a_relayed_warning_keeps_its_class() -> None:
    # a Dask worker's warnings go to the client through warned_to and a Relay (the
    # event distributed.warn logs): each caught warning went as the relay's one class,
    # so an IrmWarning given in a task arrived as a CoverageWarning
    from polars_irmetrics.engines._partition import Relay, warned_to
    from polars_irmetrics.errors import CoverageWarning, IrmWarning

    sent: list[tuple[str, type[Warning]]] = []
    relay = Relay(lambda text, kind: sent.append((text, kind)), CoverageWarning)

    def give() -> None:
        warnings.warn("a NaN", IrmWarning, stacklevel=1)
        warnings.warn("few ids", CoverageWarning, stacklevel=1)

    warned_to(give, relay)
    relay("said as the default")
    assert sent == [
        ("a NaN", IrmWarning),
        ("few ids", CoverageWarning),
        ("said as the default", CoverageWarning),
    ]


def test_dask_pop_rsp_does_not_warn_of_an_empty_run_at_build(client: Client) -> None:
    # Dask's graph of Elliot's metrics is prepared on empty frames of the tables'
    # schemas, whose PopRSP is NaN: 'pop_rsp@2 is NaN' was warned at every
    # irm_dask.evaluate, where the data's value is defined. Users: u1 and u2; the
    # history's popularity a 2, b 1, c 1, d 1 (one machine's value, 0.0909...)
    import dask.dataframe as dd

    import polars_irmetrics.dask as irm_dask

    run = pl.DataFrame(
        {
            "query_id": ["u1", "u1", "u2", "u2"],
            "doc_id": ["a", "c", "a", "d"],
            "score": [2.0, 1.0, 2.0, 1.0],
        }
    )
    qrels = pl.DataFrame({"query_id": ["u1", "u2"], "doc_id": ["a", "d"], "relevance": [1, 1]})
    history = pl.DataFrame(
        {"query_id": ["u1", "u3", "u4", "u5", "u3"], "doc_id": ["b", "a", "a", "c", "d"]}
    )

    def to_dask(frame: pl.DataFrame) -> dd.DataFrame:
        return dd.from_pandas(frame.to_pandas(), npartitions=1)

    one = irm.evaluate(run, ["pop_rsp@2"], qrels=qrels, interactions=history)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = irm_dask.evaluate(
            to_dask(run), ["pop_rsp@2"], qrels=to_dask(qrels), interactions=to_dask(history)
        )
        got = out.compute()
    assert [str(w.message) for w in caught] == []
    assert got["pop_rsp@2"].tolist() == one["pop_rsp@2"].to_list()


# ------------------------------------------ EPC and EFD of no user with a test item
@pytest.mark.parametrize("metric", ["epc@2", "efd@2"])
@pytest.mark.parametrize(
    ("qrels", "level"),
    [
        (TEST, 2),  # every judgment below relevance_level=2
        (TEST.with_columns(query_id=pl.lit("u9")), 1),  # a user the run lacks
    ],
)
def test_epc_of_no_user_with_a_relevant_item_says_why_it_is_null(
    metric: str, qrels: pl.DataFrame, level: int
) -> None:
    # Elliot's EPC and EFD are means over the users of the run with a relevant test
    # item; with none the value is null (pop_reo said its NaN, these said nothing)
    history = pl.DataFrame({"query_id": ["u1", "u3"], "doc_id": ["a", "c"]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = irm.evaluate(RUN, [metric], qrels=qrels, interactions=history, relevance_level=level)
    assert got[metric].to_list() == [None]
    said = [str(w.message) for w in caught if str(w.message).startswith(f"'{metric}'")]
    assert said == [
        f"'{metric}' is null: Elliot's mean over the users of the run with a relevant test "
        f"item (qrels=, relevance >= relevance_level={level}), and no user of the run has "
        "one. Check that the run's users and the judgments' queries line up, and "
        "relevance_level="
    ]


def test_debias_without_judgments_asks_for_them() -> None:
    # a run without relevance and without qrels= is no judged table: the refusal is
    # the usual one (pass qrels=), not debias='s of a judged table
    with pytest.raises(ColumnNotFoundError) as raised:
        irm.evaluate(FIRSTS, ["P@1"], debias=irm.Debias())
    assert str(raised.value).startswith(
        "column 'relevance' not found in the judged table (its columns: 'query_id', "
        "'doc_id', 'rank'); pass qrels="
    )
