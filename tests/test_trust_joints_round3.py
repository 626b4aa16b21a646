"""Four joints a probe found scoring in silence or leaking another library's error.

- A rank of 2**63 or more in an Int128 or UInt128 column read as null (a document
  never ranked: ndcg 0); UInt64 alone was checked.
- A pandas object column Arrow cannot convert (numbers beside strings) raised
  pyarrow's ArrowInvalid.
- ``rnd(protected='G2')`` with no group 'G2' in groups= scored NaN.
- A target naming a group groups= never holds gave that group's share to no
  document, without a word.
- Fusion's training cast the judgments' ids to the runs' ('01' matched 1, 1.5 matched 1).
- ``irm trec-eval`` ranked scores in 64 bits, where trec_eval holds them in 32.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnTypeError, CoverageWarning, InvalidValueError

from .conftest import Evaluate
from .helpers import irm_in_process

QRELS = pl.DataFrame({"query_id": ["q1"], "doc_id": ["b"], "relevance": [1]})
HISTORY = pl.DataFrame({"query_id": ["u"], "doc_id": ["a"]})
BIG_RANK = (
    "column 'rank' of the run has 1 rank(s) of 2**63 or more in query 'q1'; a rank counts "
    "positions in one list: renumber them 1, 2, 3, ..., e.g. "
    "pl.col('rank').rank('ordinal').over(query_id)"
)


@pytest.mark.parametrize("dtype", [pl.UInt64, pl.Int128, pl.UInt128])
@pytest.mark.parametrize(
    ("metric", "tables"),
    [("ndcg", {"qrels": QRELS}), ("catalog_coverage", {"interactions": HISTORY})],
)
def test_a_rank_beyond_int64_is_refused_in_every_wide_dtype(
    evaluate: Evaluate, dtype: type[pl.DataType], metric: str, tables: dict[str, pl.DataFrame]
) -> None:
    # 2**63: the least rank an Int64 cannot hold (before: null, so ndcg 0 for Int128)
    ranks = pl.Series("rank", [1, 2**63], dtype=dtype)
    run = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"]}).with_columns(ranks)
    with pytest.raises(InvalidValueError) as info:
        evaluate(run, [metric], **tables)
    assert str(info.value) == BIG_RANK


def test_a_pandas_column_arrow_cannot_convert_is_named() -> None:
    run = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": [1, "b"], "score": [2.0, 1.0]})
    with pytest.raises(ColumnTypeError) as info:
        irm.evaluate(run, ["map"], qrels=QRELS)
    assert str(info.value) == (
        "column 'doc_id' of the run (a pandas DataFrame) holds values Arrow cannot convert "
        "to one type (Could not convert 'b' with type str: tried to convert to int64); "
        "give the column one type first: ids as text, e.g. df['doc_id'].astype(str), "
        "scores and labels as numbers, e.g. df['doc_id'].astype(float)"
    )
    assert not isinstance(info.value.__cause__, ColumnTypeError)  # pyarrow's, chained


RUN = pl.DataFrame({"query_id": ["q"] * 12, "doc_id": list("abcdefghijkl"), "rank": range(1, 13)})
GROUPS = RUN.select("doc_id", group=pl.Series(["g1", "g2"] * 6))


@pytest.mark.parametrize("buckets", [None, 2])
def test_a_protected_group_groups_never_holds_is_refused(
    evaluate: Evaluate, buckets: int | None
) -> None:
    asked = ["rnd(protected='G2')", "rkl"]
    with pytest.raises(InvalidValueError) as info:
        evaluate(RUN, asked, groups=GROUPS, buckets=buckets)
    assert str(info.value) == (
        "protected='G2' names no group of groups= (column 'group' holds 'g1', 'g2'): rnd, "
        "rkl and rrd would find no protected document in any ranking (every value NaN); "
        "name one of its groups, or drop protected= to take each ranking's minority group"
    )
    named = evaluate(RUN, ["rnd(protected='g2')"], groups=GROUPS, buckets=buckets)
    assert named.height == 1


def test_a_target_group_groups_never_holds_is_warned(evaluate: Evaluate) -> None:
    qrels = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "relevance": 1})
    target = pl.DataFrame({"group": ["g1", "G2"], "target": [0.5, 0.5]})
    with pytest.warns(CoverageWarning) as caught:
        evaluate(RUN, ["awrf"], qrels=qrels, groups=GROUPS, target=target)
    assert [str(w.message) for w in caught] == [
        "target= names 1 group(s) that groups= never holds (first: 'G2'): no document can "
        "be in them, so their target share goes to no document and awrf measures the "
        "distance to a target no ranking can meet. Ids that do not line up are the likely "
        "cause: give target= and groups= the same group names (same spelling); a group "
        "with no document at all may be dropped from the target (and the rest renormalised)"
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error", CoverageWarning)
        evaluate(RUN, ["awrf"], qrels=qrels, groups=GROUPS, target=target.with_columns(
            group=pl.Series(["g1", "g2"])))  # fmt: skip


_RUNS = {
    "a": pl.DataFrame({"query_id": ["01", "01", "02"], "doc_id": ["a", "b", "a"],
                       "score": [2.0, 1.0, 1.0]}),
    "b": pl.DataFrame({"query_id": ["01", "01", "02"], "doc_id": ["a", "b", "a"],
                       "score": [1.0, 2.0, 1.0]}),
}  # fmt: skip


@pytest.mark.parametrize(
    ("query_ids", "message"),
    [
        (
            [1, 1, 2],  # before: '01' cast to 1 and matched
            "column 'query_id' holds strings in the runs (String) but integers in the "
            "judgments (Int64); cast one side, e.g. pl.col('query_id').cast(pl.String) on "
            "both",
        ),
        (
            [1.5, 1.5, 2.5],  # before: cast to 1 and 2
            "column 'query_id' in the judgments has dtype Float64; ids must be strings or "
            "integers: cast it, e.g. pl.col('query_id').cast(pl.Int64)",
        ),
    ],
)
def test_fusion_training_refuses_judgments_of_another_id_kind(
    query_ids: list[object], message: str
) -> None:
    qrels = pl.DataFrame({"query_id": query_ids, "doc_id": ["a", "b", "a"], "relevance": 1})
    with pytest.raises(ColumnTypeError) as fitted:
        irm.fit_fusion(_RUNS, qrels=qrels, method="mapfuse")
    with pytest.raises(ColumnTypeError) as tuned:
        irm.optimize_fusion(_RUNS, "map", qrels=qrels, method="wsum")
    assert str(fitted.value) == str(tuned.value) == message


def test_trec_eval_holds_scores_as_each_version_does(tmp_path: Path) -> None:
    # 1.000000001 and 1.0 are one C float (trec_eval 9.0.8's score): a tie, broken by
    # document id descending (b above a), so the relevant a is at rank 2 there
    # (pytrec_eval likewise); trec_eval 10.0 holds doubles: a first (both binaries,
    # built from the usnistgov tags, print 1.0000 and 0.5000)
    import pytrec_eval

    (tmp_path / "run.txt").write_text("q1 Q0 a 1 1.000000001 r\nq1 Q0 b 2 1.0 r\n")
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq1 0 b 0\n")
    args = ("trec-eval", "-m", "recip_rank", "qrels.txt", "run.txt")
    done = irm_in_process(*args, cwd=tmp_path)
    assert done.stdout.split() == ["recip_rank", "all", "1.0000"]
    nine = irm_in_process("trec-eval", "--trec-eval-version", "9", *args[1:], cwd=tmp_path)
    assert nine.stdout.split() == ["recip_rank", "all", "0.5000"]
    scores = {"a": 1.000000001, "b": 1.0}
    theirs = pytrec_eval.RelevanceEvaluator({"q1": {"a": 1, "b": 0}}, {"recip_rank"})
    assert theirs.evaluate({"q1": scores})["q1"]["recip_rank"] == 0.5
    # irm.evaluate ranks the column at its own precision; cast to Float32 for 9.0.8's
    run = pl.DataFrame({"query_id": "q1", "doc_id": list(scores), "score": list(scores.values())})
    qrels = pl.DataFrame({"query_id": "q1", "doc_id": ["a", "b"], "relevance": [1, 0]})
    assert irm.evaluate(run, ["recip_rank"], qrels=qrels).item(0, 1) == 1.0
    float32 = run.with_columns(pl.col("score").cast(pl.Float32))
    assert irm.evaluate(float32, ["recip_rank"], qrels=qrels).item(0, 1) == 0.5


@pytest.mark.parametrize(
    ("metric", "keyword", "clusters", "things"),
    [
        ("user_mad@10", "user_groups", {"query_id": [1, 2, 13, 14]}, "users"),
        ("item_mad@10", "groups", {"doc_id": ["a", "b", "X", "Y"]}, "items"),
    ],
)
def test_a_cluster_the_run_never_reaches_is_warned(
    evaluate: Evaluate, metric: str, keyword: str, clusters: dict[str, list[Any]], things: str
) -> None:
    # half the ids line up (no warning of ids that mostly miss), but cluster 'c2' holds
    # none of the run's: it has no mean, and MAD over every pair of clusters is null
    run = pl.DataFrame({"query_id": [1, 1, 2, 2], "doc_id": ["a", "b", "a", "b"],
                        "rank": [1, 2, 1, 2]})  # fmt: skip
    qrels = pl.DataFrame({"query_id": [1, 2], "doc_id": ["a", "a"], "relevance": [1, 1]})
    table = pl.DataFrame({**clusters, "group": ["c1", "c1", "c2", "c2"]})
    with pytest.warns(CoverageWarning) as caught:
        got = evaluate(run, [metric], qrels=qrels, **{keyword: table})
    assert got[metric].item() is None
    name = metric.split("@")[0]
    assert [str(w.message) for w in caught] == [
        f"{keyword}= has 1 of its 2 clusters holding none of the run's {things} (first: "
        f"'c2'): such a cluster has no mean, so {name}, the mean absolute difference over "
        f"every pair of clusters, is null. Ids that do not line up are the likely cause: "
        f"give {keyword}= and the run the same ids; or drop the clusters the run does not "
        "reach"
    ]


def test_reproducibility_warns_in_its_own_arguments_words() -> None:
    # ktu and rbo compare the reproduced runs with the original ones through reference=,
    # which the caller never passed: the warning names original= and the reproduced run
    original = {"baseline": pl.DataFrame({"query_id": ["q1", "q1", "q2", "q2"],
                                          "doc_id": ["a", "b", "a", "c"],
                                          "score": [2.0, 1.0, 2.0, 1.0]})}  # fmt: skip
    upper = pl.col("doc_id").str.to_uppercase()
    reproduced = {"baseline": original["baseline"].with_columns(upper)}
    qrels = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "a"], "relevance": 1})
    with pytest.warns(CoverageWarning) as caught:
        irm.reproducibility(original, reproduced, ["map"], qrels=qrels)
    texts = [str(w.message) for w in caught]
    assert not any("reference=" in text for text in texts)
    assert any(
        text.startswith(
            "original= holds none of the 3 documents of the reproduced run (column 'doc_id')"
        )
        for text in texts
    )


@pytest.mark.parametrize(
    ("dtype", "advice"),
    [(pl.Categorical(), "pl.String"), (pl.Enum(["no", "yes"]), "pl.String"),
     (pl.Date(), "pl.Float64")],
)  # fmt: skip
def test_a_label_dtype_is_refused_with_a_cast_that_works(dtype: pl.DataType, advice: str) -> None:
    # a Categorical of 'yes'/'no' cannot be cast to Float64 (the advice before)
    values = pl.Series(["yes", "no"]).cast(dtype) if dtype != pl.Date() else pl.Series(
        [0, 1]).cast(pl.Date)  # fmt: skip
    table = pl.DataFrame({"query_id": [1, 1], "prediction": [0.9, 0.1], "label": values})
    with pytest.raises(ColumnTypeError) as info:
        irm.evaluate(table, ["logloss"])
    assert str(info.value) == (
        f"column 'label' has dtype {dtype}; labels must be numbers, booleans or strings: "
        f"cast it, e.g. pl.col('label').cast({advice})"
    )


def test_an_empty_log_gives_every_online_metric_null() -> None:
    # before: ctr (a ratio of sums) null, the means of session values NaN (0/0)
    log = pl.DataFrame(
        {"session_id": [], "position": [], "clicked": []},
        schema={"session_id": pl.String, "position": pl.Int64, "clicked": pl.Int64},
    )
    got = irm.evaluate_online(log, ["ctr@2", "click_mrr", "abandonment", "click_ndcg@2"])
    assert got.rows() == [(0, None, None, None, None)]


def test_a_judgment_group_check_names_the_query_and_the_group() -> None:
    # before: "in query 'q1\x1f1'", the plan's internal key
    run = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"],
                        "score": [1.0, float("nan")]})  # fmt: skip
    qrels_jg = pl.DataFrame({"query_id": ["q1", "q1"], "jg": [1, 2], "doc_id": ["a", "a"],
                             "relevance": [1, 1]})  # fmt: skip
    with pytest.raises(InvalidValueError) as info:
        irm.evaluate(run, ["P_avgjg@1"], qrels_jg=qrels_jg)
    assert str(info.value) == (
        "column 'score' of the run has 1 NaN value(s) in query 'q1 (judgment group 1)'; NaN "
        "cannot be ranked: replace them, e.g. pl.col('score').fill_nan(float('-inf'))"
    )


def test_a_judgment_group_run_of_no_judged_document_counts_queries_not_groups() -> None:
    # before: "0 of 4 judged queries; it lists 4 of the 4", for 2 queries of 2 groups
    # each (the plan's keys are (query, group) pairs)
    run = pl.DataFrame(
        {
            "query_id": ["q1"] * 2 + ["q2"] * 2,
            "doc_id": ["d0", "d1", "d5", "d6"],
            "rank": [1, 2] * 2,
        }
    )
    qrels_jg = pl.DataFrame(
        {
            "query_id": ["q1", "q1", "q2", "q2"],
            "jg": ["1", "2", "1", "2"],
            "doc_id": ["D0", "D1", "D5", "D6"],
            "relevance": [1, 1, 1, 1],
        }
    )
    with pytest.warns(CoverageWarning) as caught:
        values = irm.evaluate_jg(run, ["map_avgjg"], qrels_jg=qrels_jg)
    said = [str(w.message) for w in caught if issubclass(w.category, CoverageWarning)]
    assert len(said) == 1
    assert said[0].startswith(
        "the run retrieves no judged document (0 of 4 judged documents, in 0 of 2 judged "
        "queries; it lists 2 of the 2 judged queries): every judged query scores as a ranking of "
        "no judged document does (0 in ndcg, map, precision, recall and the like), as trec_eval "
        "scores such a run. 4 (query, document) pair(s) of the run match "
        "a judgment only when case is ignored"
    )
    assert values["map_avgjg"].to_list() == [0.0, 0.0]


def test_ids_that_differ_by_surrounding_spaces_get_a_hint() -> None:
    # before: the warning's generic advice only (its hints read case, prefixes and zeros)
    run = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": [" a", "b "], "score": [2.0, 1.0]})
    qrels = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": [1, 1]})
    with pytest.warns(CoverageWarning) as caught:
        irm.evaluate(run, ["map"], qrels=qrels)
    assert str(caught[0].message).endswith(
        "2 (query, document) pair(s) of the run match a judgment only when the spaces around "
        "the ids are ignored (run ' a', judgments 'a'): ids are compared exactly, as "
        "trec_eval compares them; give both the same spelling, e.g. "
        "pl.col('doc_id').str.strip_chars() on the run and the judgments."
    )
