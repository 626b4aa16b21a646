"""A value has the same bits in any row order and beside any other queries or groups.

polars adds floats in the order its joins and group-bys leave the rows, which changes
from one run to the next, and it divides a column by a constant as a multiplication by
the reciprocal except when the column holds one value. So a float sum in that order, or
a division by a constant, gives a mean that moves in its last bits from run to run, and
a query's (or a ``by`` group's) value that differs when it is evaluated alone. Every
float sum of the plans is a fixed-point sum
(:func:`polars_irmetrics.metrics.scope.exact_sum`) and every division by a constant
divides each value (:func:`polars_irmetrics.metrics._common.divide`); these tests shuffle
every table and evaluate one group or query alone, and compare the bits.

Before (2026-11-29): every beyond-accuracy metric of a recommendation table averaged
over users or rows in the group-by's order (``novelty``, ``intra_list_diversity``,
``serendipity``, ``surprisal``, ``distributional_coverage``, ``long_tail_share``...),
``f1_beta@k`` divided by ``k`` as a constant, and fusion added a document's runs, the
``sum`` and ``zmuv`` normalisations and the trained methods' rates in that order too.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm

USERS, ITEMS = 300, 400


def _tables() -> dict[str, pl.DataFrame]:
    """Recommendations (three segments), a history covering every item and user, test
    interactions, feature vectors and categories."""
    rng = np.random.default_rng(7)
    length = rng.integers(1, 25, USERS)
    user = np.repeat(np.arange(USERS), length)
    run = (
        pl.DataFrame(
            {
                "query_id": [f"u{u:03d}" for u in user],
                "doc_id": [f"i{i}" for i in rng.integers(0, ITEMS, len(user))],
                "score": rng.integers(0, 9, len(user)) / 3.0,
            }
        )
        .unique(["query_id", "doc_id"], keep="first", maintain_order=True)
        .with_columns(seg=pl.col("query_id").str.slice(1).cast(pl.Int64) % 3)
    )
    popular = rng.zipf(1.4, 4000) % ITEMS
    history = pl.DataFrame(
        {
            "query_id": [f"u{u:03d}" for u in [*rng.integers(0, USERS, 4000), *range(USERS)]]
            + [f"u{u:03d}" for u in rng.integers(0, USERS, ITEMS)],
            "doc_id": [f"i{i}" for i in [*popular, *rng.integers(0, ITEMS, USERS)]]
            + [f"i{i}" for i in range(ITEMS)],
        }
    )
    test = (
        history.unique(maintain_order=True)
        .sample(1500, seed=3)
        .join(run.select("query_id", "seg").unique(), on="query_id", how="inner")
        .with_columns(relevance=pl.lit(1))
    )
    items = [f"i{i}" for i in range(ITEMS)]
    vectors = pl.DataFrame({"doc_id": items, "features": rng.normal(size=(ITEMS, 4)).tolist()})
    categories = pl.DataFrame({"doc_id": items, "category_id": rng.integers(0, 7, ITEMS)})
    return {
        "run": run,
        "interactions": history,
        "qrels": test,
        "item_features": vectors,
        "categories": categories,
    }


TABLES = _tables()

#: (id, metrics, the tables they read): every metric of a recommendation table
CASES: list[tuple[str, list[str], tuple[str, ...]]] = [
    (
        "popularity",
        [
            "catalog_coverage@10",
            "distributional_coverage@10",
            "gini_index@10",
            "novelty@10",
            "average_popularity@10",
            "long_tail_share@10",
            "surprisal@10",
            "novelty(kind='replay')@10",
        ],
        ("interactions",),
    ),
    (
        "feature-vectors",
        ["intra_list_diversity@10", "serendipity@10", "intra_list_diversity"],
        ("interactions", "item_features"),
    ),
    (
        "co-occurrence",
        [
            "intra_list_diversity(item_sim_measure='item_cooccurrence_count')@10",
            "serendipity(item_sim_measure='item_cooccurrence_count')@5",
        ],
        ("interactions",),
    ),
    ("categories", ["categorical_diversity@10"], ("categories",)),
    ("kotkov", ["serendipity(kind='kotkov')@10"], ("interactions", "qrels")),
    ("table", ["sufficient_reco(deep=True)@10", "unrepeated_reco@10"], ()),
    (
        "elliot",
        ["pop_rsp@10", "pop_reo@10", "aclt@10", "epc@10", "efd@10", "mcc@10"],
        ("interactions", "qrels"),
    ),
]


def _call(
    run: pl.DataFrame, metrics: list[str], tables: dict[str, pl.DataFrame], **kw: Any
) -> Any:
    given = {("item_features" if k == "categories" else k): v for k, v in tables.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irm.CoverageWarning)
        return irm.evaluate(run, metrics, **given, **kw)


@pytest.mark.parametrize(("metrics", "reads"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_recommendation_table_metrics_are_order_free(
    metrics: list[str], reads: tuple[str, ...]
) -> None:
    tables = {name: TABLES[name] for name in reads}
    whole = _call(TABLES["run"], metrics, tables, by="seg")
    for seed in (1, 2):
        shuffled = {k: v.sample(fraction=1.0, shuffle=True, seed=seed) for k, v in tables.items()}
        run = TABLES["run"].sample(fraction=1.0, shuffle=True, seed=seed)
        assert _call(run, metrics, shuffled, by="seg").equals(whole), seed
    # one segment alone: the same bits as beside the others
    mine = pl.col("seg") == 1
    alone = {k: (v.filter(mine) if k == "qrels" else v) for k, v in tables.items()}
    assert _call(TABLES["run"].filter(mine), metrics, alone, by="seg").equals(whole.filter(mine))


def test_per_user_values_do_not_depend_on_the_other_users() -> None:
    metrics = [
        "intra_list_diversity@10",
        "serendipity@10",
        "surprisal@10",
        "categorical_diversity@10",
        "sufficient_reco(deep=True)@3",
    ]
    tables = {"interactions": TABLES["interactions"], "item_features": TABLES["item_features"]}
    features = TABLES["item_features"].join(TABLES["categories"], on="doc_id")
    tables["item_features"] = features
    run = TABLES["run"].drop("seg")
    whole = _call(run, metrics, tables, per_query=True)
    users = whole["query_id"].to_list()
    for chosen in ([users[4]], [users[11]], users[::7]):
        mine = pl.col("query_id").is_in(chosen)
        assert _call(run.filter(mine), metrics, tables, per_query=True).equals(
            whole.filter(mine)
        ), chosen


def _judged_run() -> tuple[pl.DataFrame, pl.DataFrame]:
    """40 queries of 1 to 20 documents with tied scores, graded judgments of about half
    of them and of some unretrieved documents."""
    rng = np.random.default_rng(11)
    rows, judged = [], []
    for q in range(40):
        docs = rng.choice(60, size=int(rng.integers(1, 21)), replace=False)
        rows += [(f"q{q:02d}", f"d{d}", float(rng.integers(0, 6))) for d in docs]
        extra = rng.choice(60, size=8, replace=False)
        judged += [
            (f"q{q:02d}", f"d{d}", int(rng.integers(0, 4)))
            for d in {*docs[rng.random(len(docs)) < 0.6], *extra}
        ]
    run = pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row")
    qrels = pl.DataFrame(judged, schema=["query_id", "doc_id", "relevance"], orient="row")
    return run, qrels


def test_a_querys_accuracy_values_do_not_depend_on_the_other_queries() -> None:
    # every metric of a run and judgments, each of a few queries alone against its row
    # beside every other query (f1_beta@10 divided tp by k as a constant: 3 / 10 gave
    # 0.30000000000000004 beside other queries and 0.3 alone)
    metrics = [
        f"{m.name}@10" if m.cutoff == "required" else m.name
        for m in irm.list_metrics()
        if set(m.reads) <= {"run", "judgments"}
        and m.level == "query"
        and m.name not in ("iprec", "rprec_mult")
    ] + ["iprec@0.3", "rprec_mult@0.5", "f1_beta(beta=2)@10", "P@10", "ndcg@5"]
    run, qrels = _judged_run()
    whole = _call(run, metrics, {"qrels": qrels}, per_query=True)
    # the queries with 3, 6 or 7 relevant documents in the top 10 (a product by 0.1
    # rounds those differently from a division by 10), and two others
    chosen = whole.filter(pl.col("P@10").is_in([0.3, 0.6, 0.7]))["query_id"].to_list()
    assert len(chosen) >= 3
    for query in [*chosen[:4], *whole["query_id"][:2]]:
        mine = pl.col("query_id") == query
        part = _call(run.filter(mine), metrics, {"qrels": qrels.filter(mine)}, per_query=True)
        assert part.equals(whole.filter(mine)), query


def _runs() -> dict[str, pl.DataFrame]:
    """Three runs over 30 queries, normal scores, overlapping documents."""
    runs = {}
    for name, seed in (("a", 1), ("b", 2), ("c", 3)):
        rng = np.random.default_rng(seed)
        rows = []
        for q in range(30):
            docs = rng.choice(200, size=int(rng.integers(1, 40)), replace=False)
            rows += [(f"q{q:02d}", f"d{d}", float(rng.normal())) for d in docs]
        runs[name] = pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row")
    return runs


RUNS = _runs()
WEIGHTS = {"weights": [0.5, 0.3, 0.2]}
#: (method, its parameters): every fusion method, and each score normalisation
FUSIONS: list[tuple[str, dict[str, Any]]] = [
    *(
        (m, {})
        for m in ("rrf", "isr", "log_isr", "logn_isr", "bordafuse", "condorcet", "sum", "mnz")
    ),
    *((m, {}) for m in ("max", "min", "med", "anz")),
    ("rbc", {"phi": 0.8}),
    ("gmnz", {"gamma": 0.7}),
    *((m, WEIGHTS) for m in ("w_bordafuse", "w_condorcet", "wsum", "wmnz", "mixed")),
    *(("sum", {"norm": n}) for n in ("zmuv", "sum", "max", "min-max", "rank", "borda")),
]


def _shuffled(runs: dict[str, pl.DataFrame], seed: int) -> dict[str, pl.DataFrame]:
    return {k: v.sample(fraction=1.0, shuffle=True, seed=seed) for k, v in runs.items()}


@pytest.mark.parametrize(("method", "params"), FUSIONS, ids=[f"{m}-{p}" for m, p in FUSIONS])
def test_fused_scores_are_order_free(method: str, params: dict[str, Any]) -> None:
    # the contributions of a document's runs were added in the order the group-by met
    # them (rrf, sum and mnz moved in their last bits, which can reorder near ties),
    # and the sum and zmuv normalisations' window sums and means likewise
    whole = irm.fuse(RUNS, method, **params)
    for seed in (1, 2):
        assert irm.fuse(_shuffled(RUNS, seed), method, **params).equals(whole), seed


@pytest.mark.parametrize("method", ["probfuse", "segfuse", "posfuse", "bayesfuse", "mapfuse"])
def test_fitted_fusion_is_order_free(method: str) -> None:
    # the fitted probabilities added the queries' rates in the group-by's order
    every = pl.concat(RUNS.values()).select("query_id", "doc_id").unique(maintain_order=True)
    qrels = every.with_columns(
        relevance=(pl.col("doc_id").str.slice(1).cast(pl.Int64) % 3 == 0).cast(pl.Int64)
    )
    extra = {"n_segments": 5} if method == "probfuse" else {}
    fitted = irm.fit_fusion(RUNS, method, qrels=qrels, **extra)
    whole = irm.fuse(RUNS, method, fitted=fitted)
    for seed in (1, 2):
        shuffled = qrels.sample(fraction=1.0, shuffle=True, seed=seed)
        again = irm.fit_fusion(_shuffled(RUNS, seed), method, qrels=shuffled, **extra)
        assert again.equals(fitted), seed
        assert irm.fuse(_shuffled(RUNS, seed), method, fitted=fitted).equals(whole), seed


def _harvest_log() -> pl.DataFrame:
    """Three rankers over 200 queries of 8 documents (the first in one order, the others
    shuffled), three impressions each, clicks falling with the rank."""
    rng = np.random.default_rng(0)
    rows = []
    for q in range(200):
        docs = [f"d{d}" for d in rng.choice(50, size=8, replace=False)]
        for ranker in ("A", "B", "C"):
            order = docs if ranker == "A" else list(rng.permutation(docs))
            for i, d in enumerate(order):
                rows += [
                    (f"q{q}", d, i + 1, int(rng.random() < 0.5 / (i + 1)), ranker)
                    for _ in range(3)
                ]
    return pl.DataFrame(
        rows, schema=["query_id", "doc_id", "rank", "clicked", "ranker"], orient="row"
    )


@pytest.mark.parametrize("method", ["em", "harvest"])
def test_position_bias_is_order_free(method: str) -> None:
    # EM added each iteration's statistics in the group-by's row order (numpy's
    # bincount), and harvesting its interventional sets' rates likewise: the same log
    # gave other last bits from one call to the next
    if method == "em":
        log = pl.read_parquet(Path(irm.__file__).parent / "data" / "interactions.parquet").select(
            pl.col("session_id").alias("query_id"),
            pl.col("item_id").alias("doc_id"),
            pl.col("position").alias("rank"),
            "clicked",
        )
        extra: dict[str, Any] = {}
    else:
        log, extra = _harvest_log(), {"ranker": "ranker"}
    whole = irm.position_bias(log, method=method, **extra)
    for seed in (1, 2, 3):
        shuffled = log.sample(fraction=1.0, shuffle=True, seed=seed)
        assert irm.position_bias(shuffled, method=method, **extra).equals(whole), seed


def test_a_data_errors_example_does_not_depend_on_the_row_order() -> None:
    # the example of a failed check of a recommendation table was its first bad row in
    # the order the plan's joins left the rows (CI once saw "user 3" for "user 1"); it is
    # now the bad row whose values sort first
    lacking = TABLES["categories"].filter(~pl.col("doc_id").is_in(["i1", "i2", "i3"]))
    messages = set()
    for seed in range(6):
        run = TABLES["run"].sample(fraction=1.0, shuffle=True, seed=seed)
        with pytest.raises(irm.InvalidValueError) as caught:
            _call(run, ["categorical_diversity@10"], {"categories": lacking}, by="seg")
        messages.add(str(caught.value))
    assert len(messages) == 1, messages
