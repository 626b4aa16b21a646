"""No silent fusion of runs whose ids do not line up, and no silent training on
judgments the runs never match.

``irm.fuse`` warns (:class:`~polars_irmetrics.errors.CoverageWarning`) of two runs that
share no query, or share queries but no document: their fused run is their lists side
by side. ``fit_fusion`` and ``optimize_fusion`` give the ranking metrics' coverage
warning (:class:`~polars_irmetrics.errors.CoverageWarning`) of a run that retrieves no
judged document, once per run, in the runs' names. Runs that line up are never warned
of.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.cli import main
from polars_irmetrics.errors import (
    CoverageWarning,
    InvalidValueError,
    IrmWarning,
    MissingFileError,
    QuerySetError,
)
from tests.fusion_data import random_qrels, random_runs

DOCS = ["d1", "d2", "d3", "d4"]
SCORES = [4.0, 3.0, 2.0, 1.0]

#: The end of every fusion overlap warning: the cause, and how to keep disjoint runs.
DISJOINT = (
    "If the runs are meant to be disjoint, the fused run is as documented: silence this "
    "with warnings.filterwarnings('ignore', category=irm.CoverageWarning)."
)
#: The advice where no id matches after a change of spelling.
NO_HINT = (
    "Ids that do not line up are the likely cause: check that the runs name the same "
    "queries and documents (same collection, same id spelling)."
)
SIDE_BY_SIDE = (
    "no document of the fused run is scored by both, so it holds their lists side by "
    "side, as a concatenation would."
)


def _run(queries: list[str], docs: list[str] | None = None) -> pl.DataFrame:
    """Two documents per query, ``docs`` in turn (default d1..d4)."""
    docs = docs or DOCS
    return pl.DataFrame(
        {
            "query_id": [q for q in queries for _ in range(2)],
            "doc_id": docs[: 2 * len(queries)],
            "score": SCORES[: 2 * len(queries)],
        }
    )


@pytest.fixture
def no_warning() -> Iterator[None]:
    """Any warning fails the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def _exactly(text: str) -> str:
    return "^" + re.escape(text) + "$"


def _one(caught: pytest.WarningsRecorder, category: type[Warning]) -> str:
    ours = [w for w in caught if issubclass(w.category, category)]
    assert len(ours) == 1, [str(w.message) for w in ours]
    return str(ours[0].message)


# ---------------------------------------------------------------- fuse: no shared query


def test_runs_keyed_by_zero_padded_queries_are_warned_with_the_zeros_hint() -> None:
    a, b = _run(["1", "2"]), _run(["01", "02"])
    expected = (
        "runs 'a' and 'b' share no query (2 queries each): " + SIDE_BY_SIDE + " "
        "Ids that do not line up are the likely cause: 2 query id(s) of run 'b' match an "
        "id of run 'a' only when leading zeros are ignored ('01' against '1'): "
        "ids are compared exactly; give both runs the same spelling, e.g. "
        "pl.col('query_id').str.strip_chars_start('0') on each. " + DISJOINT
    )
    with pytest.warns(CoverageWarning, match=_exactly(expected)):
        fused = irm.fuse({"a": a, "b": b}, "rrf")
    assert fused.height == 8  # the values are as documented: the two lists side by side


def test_runs_with_a_query_prefix_are_warned_with_the_prefix_hint() -> None:
    a, b = _run(["q1", "q2"]), _run(["1", "2"])
    expected = (
        "runs 'a' and 'b' share no query (2 queries each): " + SIDE_BY_SIDE + " "
        "Ids that do not line up are the likely cause: 2 query id(s) of run 'b' match an "
        "id of run 'a' only when a prefix is ignored ('1' against 'q1'): ids are "
        "compared exactly; give both runs the same spelling, e.g. "
        "pl.col('query_id').str.strip_prefix('q') on each. " + DISJOINT
    )
    with pytest.warns(CoverageWarning, match=_exactly(expected)):
        irm.fuse({"a": a, "b": b}, "sum")


def test_runs_of_unrelated_queries_are_warned_without_a_hint() -> None:
    a, b = _run(["q1", "q2"]), _run(["alpha", "beta"])
    expected = (
        "runs 'a' and 'b' share no query (2 queries each): "
        + SIDE_BY_SIDE
        + " "
        + NO_HINT
        + " "
        + DISJOINT
    )
    with pytest.warns(CoverageWarning, match=_exactly(expected)):
        irm.fuse({"a": a, "b": b}, "rrf")


def test_integer_query_ids_that_share_nothing_are_warned() -> None:
    a = _run(["1", "2"]).with_columns(pl.col("query_id").cast(pl.Int64))
    b = _run(["3", "4"]).with_columns(pl.col("query_id").cast(pl.Int64))
    expected = (
        "runs 'a' and 'b' share no query (2 queries each): "
        + SIDE_BY_SIDE
        + " "
        + NO_HINT
        + " "
        + DISJOINT
    )
    with pytest.warns(CoverageWarning, match=_exactly(expected)):
        irm.fuse({"a": a, "b": b}, "rrf")


# ------------------------------------------------ fuse: shared queries, no shared document


def test_runs_with_a_document_prefix_are_warned_with_the_prefix_hint() -> None:
    a = _run(["q1", "q2"], ["doc1", "doc2", "doc3", "doc4"])
    b = _run(["q1", "q2"], ["1", "2", "3", "4"])
    expected = (
        "runs 'a' and 'b' share 2 queries but no document (4 documents each, "
        "none in both): " + SIDE_BY_SIDE + " "
        "Ids that do not line up are the likely cause: 4 document id(s) of run 'b' match "
        "an id of run 'a' only when a prefix is ignored ('1' against 'doc1'): "
        "ids are compared exactly; give both runs the same spelling, e.g. "
        "pl.col('doc_id').str.strip_prefix('doc') on each. " + DISJOINT
    )
    with pytest.warns(CoverageWarning, match=_exactly(expected)):
        irm.fuse({"a": a, "b": b}, "rrf")


def test_runs_whose_documents_differ_in_case_and_spaces_are_warned() -> None:
    a = _run(["q1"], ["D1", "D2"])
    b = _run(["q1"], [" d1", " d2"])
    expected = (
        "runs 'a' and 'b' share 1 query but no document (2 documents each, none "
        "in both): " + SIDE_BY_SIDE + " "
        "Ids that do not line up are the likely cause: 2 document id(s) of run 'b' match "
        "an id of run 'a' only when the spaces around the ids and case are ignored (' d1' "
        "against 'D1'): ids are compared exactly; give both runs the same "
        "spelling, e.g. pl.col('doc_id').str.strip_chars().str.to_lowercase() on each. " + DISJOINT
    )
    with pytest.warns(CoverageWarning, match=_exactly(expected)):
        irm.fuse({"a": a, "b": b}, "rrf")


def test_a_lazy_fusion_warns_when_it_is_collected() -> None:
    a, b = _run(["1", "2"]).lazy(), _run(["01", "02"]).lazy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plan = irm.fuse({"a": a, "b": b}, "rrf")  # lazy in, lazy out: nothing read yet
    assert isinstance(plan, pl.LazyFrame)
    with pytest.warns(CoverageWarning, match="^runs 'a' and 'b' share no query"):
        plan.collect()


@pytest.mark.parametrize(
    ("method", "options"),
    [
        ("condorcet", {}),
        ("bordafuse", {}),
        ("sum", {"norm": "borda"}),
        ("wsum", {"norm": "min-max", "weights": [0.5, 0.5]}),
        ("rrf", {"buckets": 2}),
        ("rrf", {"depth": 1}),
    ],
)
def test_every_method_and_route_warns(method: str, options: dict[str, object]) -> None:
    a, b = _run(["q1", "q2"]), _run(["q1", "q2"], ["x1", "x2", "x3", "x4"])
    with pytest.warns(IrmWarning) as caught:
        irm.fuse({"a": a, "b": b}, method, **options)  # type: ignore[arg-type]
    assert _one(caught, IrmWarning).startswith(
        "runs 'a' and 'b' share 2 queries but no document (4 documents each, none in both)"
    )


def test_the_pairs_of_several_runs_are_named() -> None:
    a, b, c = _run(["q1", "q2"]), _run(["q1", "q2"], ["d2", "d9", "d3", "d8"]), _run(["x"])
    expected = (
        "runs 'a' and 'c' share no query (2 and 1 queries); runs 'b' and 'c' share no "
        "query (2 and 1 queries): no document of the fused run is "
        "scored by both runs of such a pair, so it holds their lists side by side, as a "
        "concatenation would. " + NO_HINT + " " + DISJOINT
    )
    with pytest.warns(CoverageWarning, match=_exactly(expected)):
        irm.fuse({"a": a, "b": b, "c": c}, "rrf")


def test_a_long_frame_names_its_systems() -> None:
    long = pl.concat(
        [
            _run(["1", "2"]).with_columns(pl.lit("bm25").alias("system")),
            _run(["01", "02"]).with_columns(pl.lit("dense").alias("system")),
        ]
    )
    with pytest.warns(CoverageWarning, match="^runs 'bm25' and 'dense' share no query "):
        irm.fuse(long, "rrf", system="system")


def test_many_disjoint_runs_give_one_warning_with_a_count() -> None:
    runs = {f"r{i}": _run([f"q{i}"]) for i in range(4)}  # 6 pairs, none sharing a query
    with pytest.warns(IrmWarning) as caught:
        irm.fuse(runs, "rrf")
    text = _one(caught, IrmWarning)
    assert text.startswith(
        "runs 'r0' and 'r1' share no query (1 query each); runs 'r0' and 'r2' share no "
        "query (1 query each); runs 'r0' and 'r3' share no query (1 query each); and 3 "
        "more pairs of runs that share no "
        "document: no document of the fused run"
    )


# ------------------------------------------------------------------ fuse: no false alarm


@pytest.mark.usefixtures("no_warning")
@pytest.mark.parametrize("method", ["rrf", "condorcet", "bordafuse"])
def test_runs_that_line_up_are_not_warned(method: str) -> None:
    runs = random_runs(3, n_runs=3, query_sets=True)  # some queries missing from some runs
    irm.fuse(runs, method)
    irm.fuse({k: v.lazy() for k, v in runs.items()}, method, buckets=2).collect()


@pytest.mark.usefixtures("no_warning")
def test_runs_sharing_one_document_of_one_query_are_not_warned() -> None:
    a = _run(["q1", "q2"])
    b = _run(["q1", "q2"], ["x1", "d2", "x3", "x4"])  # q1/d2 in both
    irm.fuse({"a": a, "b": b}, "rrf")


# ------------------------------------------------------------------------- fit_fusion


def _judged(queries: list[str], docs: list[str]) -> pl.DataFrame:
    return pl.DataFrame(
        {"query_id": queries, "doc_id": docs, "relevance": [1] * len(queries)},
        schema={"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int64},
    )


RETRIEVES_NONE = (
    "run {name!r} retrieves no judged document (0 of 2 judged documents, in 0 of 2 judged "
    "queries): every judged query scores as a ranking of no judged document does (0 in ndcg, map,"
    " precision, recall and the like), as trec_eval scores such a run. {advice} {tail}"
)
FIT_TAIL = (
    "fit_fusion learns each run's table from these judgments: such a run's is learnt from no hit."
)
OPTIMIZE_TAIL = (
    "optimize_fusion tunes the fusion on these judgments: no grid point can score such a "
    "run's documents."
)
JUDGED_NO_HINT = (
    "Check that the run and the judgments name the same queries and documents (same "
    "collection, same id spelling)."
)


@pytest.mark.parametrize("method", ["posfuse", "probfuse", "segfuse", "bayesfuse", "mapfuse"])
def test_fit_fusion_warns_of_each_run_that_retrieves_no_judged_document(method: str) -> None:
    runs = {"a": _run(["q1", "q2"]), "b": _run(["q1", "q2"], ["x1", "x2", "x3", "x4"])}
    qrels = _judged(["q1", "q2"], ["x1", "x4"])  # 'b' retrieves both, 'a' none
    extra = {"n_segments": 2} if method == "probfuse" else {}
    expected = RETRIEVES_NONE.format(name="a", advice=JUDGED_NO_HINT, tail=FIT_TAIL)
    with pytest.warns(CoverageWarning) as caught:
        irm.fit_fusion(runs, method, qrels=qrels, **extra)  # type: ignore[arg-type]
    # once, in the run's name: not once per system of an inner evaluation ('system 0')
    assert _one(caught, CoverageWarning) == expected


def test_fit_fusion_names_the_prefix_the_judgments_lack() -> None:
    runs = {"a": _run(["q1", "q2"]), "b": _run(["q1", "q2"])}
    qrels = _judged(["1", "2"], ["d1", "d3"])
    hint = (
        "2 query id(s) of the runs match an id of the judgments only when a prefix is "
        "ignored ('q1' against '1'): ids are compared exactly; give the runs and "
        "the judgments the same spelling, e.g. pl.col('query_id').str.strip_prefix('q') "
        "on each."
    )
    # no run lists a judged query: warned of, then refused (fuse reads a table per run)
    with (
        pytest.warns(CoverageWarning) as caught,
        pytest.raises(QuerySetError, match="runs 'a', 'b' list no judged query"),
    ):
        irm.fit_fusion(runs, "mapfuse", qrels=qrels)
    texts = sorted(str(w.message) for w in caught if w.category is CoverageWarning)
    assert texts == [
        RETRIEVES_NONE.format(name=name, advice=hint, tail=FIT_TAIL) for name in ("a", "b")
    ]


@pytest.mark.usefixtures("no_warning")
@pytest.mark.parametrize("method", ["posfuse", "probfuse", "mapfuse"])
def test_fit_fusion_on_judgments_that_line_up_is_not_warned(method: str) -> None:
    extra = {"n_segments": 3} if method == "probfuse" else {}
    irm.fit_fusion(random_runs(5, n_runs=2), method, qrels=random_qrels(5), **extra)  # type: ignore[arg-type]


@pytest.mark.usefixtures("no_warning")
def test_fit_fusion_on_judgments_of_more_queries_than_the_runs_is_not_warned() -> None:
    # judgments of the training and the test queries: the tables read the training
    # queries (those of each run that have judgments) alone
    irm.fit_fusion(random_runs(5, n_runs=2), "posfuse", qrels=random_qrels(5, n_queries=20))


def test_mapfuse_warns_of_judged_queries_its_map_scores_0() -> None:
    # mapfuse's MAP (ranx's evaluate of the run against the judgments) scores 0 every
    # judged query the run misses: its value shrinks with the judgments of other queries
    runs = random_runs(5, n_runs=2)
    with pytest.warns(CoverageWarning) as caught:
        irm.fit_fusion(runs, "mapfuse", qrels=random_qrels(5, n_queries=20))
    texts = sorted(str(w.message) for w in caught if w.category is CoverageWarning)
    assert len(texts) == 2
    for name, text in zip(("run0", "run1"), texts, strict=True):
        assert re.fullmatch(
            re.escape(f"run {name!r} misses most judged queries (")
            + r"\d+ of 165 judged documents, in \d of 20 judged queries; it lists 6 of the 20 "
            r"judged queries\): the 14 it misses each score as an empty ranking does "
            r"\(unretrieved='zero', as trec_eval -c: 0 in ndcg, map, precision, recall and the "
            r"like\)\. "
            + re.escape(
                JUDGED_NO_HINT + " mapfuse's table is that run's MAP over every judged query, "
                "the missed ones as 0: pass the judgments of the training queries alone."
            ),
            text,
        ), text


def test_fit_and_optimize_warn_once_of_empty_judgments() -> None:
    runs = {"a": _run(["q1"]), "b": _run(["q1"])}
    empty = _judged([], [])
    # warned of, then refused: an empty table, which fuse would refuse as "no method"
    with (
        pytest.warns(CoverageWarning) as caught,
        pytest.raises(QuerySetError, match="runs 'a', 'b' list no judged query"),
    ):
        irm.fit_fusion(runs, "posfuse", qrels=empty)
    assert _one(caught, CoverageWarning) == (
        "no judged query: the judgments are empty, so fit_fusion has nothing to learn from "
        "(its table is empty); check the judgments' file or frame"
    )
    with pytest.warns(CoverageWarning) as caught:
        irm.optimize_fusion(runs, "map", qrels=empty, step=0.5)
    assert _one(caught, CoverageWarning) == (
        "no judged query: the judgments are empty, so optimize_fusion has nothing to tune on "
        "(every grid point scores 0, the best one is arbitrary); check the judgments' file "
        "or frame"
    )


# ------------------------------------------------------------------- optimize_fusion


def test_optimize_fusion_warns_once_per_run_not_per_grid_point() -> None:
    runs = {"a": _run(["q1", "q2"]), "b": _run(["q1", "q2"], ["x1", "x2", "x3", "x4"])}
    qrels = _judged(["q1", "q2"], ["x1", "x4"])
    expected = RETRIEVES_NONE.format(name="a", advice=JUDGED_NO_HINT, tail=OPTIMIZE_TAIL)
    with pytest.warns(CoverageWarning) as caught:
        irm.optimize_fusion(runs, "mrr", qrels=qrels, step=0.25)
    assert _one(caught, CoverageWarning) == expected


def test_optimize_fusion_warns_when_no_run_matches_the_judgments() -> None:
    runs = {"a": _run(["q1", "q2"]), "b": _run(["q1", "q2"])}
    qrels = _judged(["q1", "q2"], ["z1", "z2"])
    with pytest.warns(CoverageWarning) as caught:
        best = irm.optimize_fusion(runs, "ndcg@10", qrels=qrels, method="rrf")
    texts = sorted(str(w.message) for w in caught if w.category is CoverageWarning)
    assert texts == [
        RETRIEVES_NONE.format(name=name, advice=JUDGED_NO_HINT, tail=OPTIMIZE_TAIL)
        for name in ("a", "b")
    ]
    assert best == {"k": 100}  # every point scores 0: the last is kept, as ranx


def test_optimize_fusion_warns_of_fused_runs_that_miss_most_judged_queries() -> None:
    runs = {"a": _run(["q1"]), "b": _run(["q1"], ["d2", "d1"])}
    qrels = _judged(["q1", "q2", "q3"], ["d1", "d5", "d6"])
    expected = (
        "the fused run misses most judged queries (1 of 3 judged documents, in 1 of 3 "
        "judged queries; it lists 1 of the 3 judged queries): the 2 it misses each score as an "
        "empty ranking does (unretrieved='zero', as trec_eval -c: 0 in ndcg, map, precision, "
        "recall and the like). " + JUDGED_NO_HINT + " optimize_fusion "
        "averages every grid point over the judged queries, the missed ones as empty "
        "rankings, the same at every point."
    )
    with pytest.warns(CoverageWarning, match=_exactly(expected)):
        irm.optimize_fusion(runs, "mrr", qrels=qrels, step=0.5)


@pytest.mark.usefixtures("no_warning")
def test_optimize_fusion_with_a_cutoff_below_the_judged_documents_is_not_warned() -> None:
    # every run retrieves the judged documents, at rank 3: the grid's rankings cut at 1
    # hold none, which the inner evaluation took for a run that retrieves none
    docs = ["x", "y", "r1", "x", "y", "r2"]
    a = pl.DataFrame(
        {"query_id": ["q1"] * 3 + ["q2"] * 3, "doc_id": docs, "score": [3.0, 2, 1] * 2}
    )
    b = a.with_columns(pl.Series("doc_id", ["y", "x", "r1", "y", "x", "r2"]))
    qrels = _judged(["q1", "q2"], ["r1", "r2"])
    assert irm.optimize_fusion({"a": a, "b": b}, "ndcg@1", qrels=qrels, step=0.5) == {
        "weights": [1.0, 0.0]
    }


@pytest.mark.usefixtures("no_warning")
def test_optimize_fusion_on_judgments_that_line_up_is_not_warned() -> None:
    irm.optimize_fusion(random_runs(7, n_runs=2), "ndcg@10", qrels=random_qrels(7), step=0.5)


# ------------------------------------------------------------------------------- CLI


def test_irm_fuse_prints_the_warning_and_succeeds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = []
    for name, queries in (("a.run", ["1", "2"]), ("b.run", ["01", "02"])):
        path = tmp_path / name
        _run(queries).with_columns(
            pl.lit("Q0").alias("q0"),
            pl.col("score").rank(descending=True).over("query_id").cast(pl.Int64).alias("rank"),
            pl.lit("x").alias("tag"),
        ).select("query_id", "q0", "doc_id", "rank", "score", "tag").write_csv(
            path, separator=" ", include_header=False
        )
        paths.append(str(path))
    assert main(["fuse", *paths, "-o", str(tmp_path / "fused.run")]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"irm: warning: runs {paths[0]!r} and {paths[1]!r} share no query")


def test_more_runs_than_a_mask_word_holds() -> None:
    # 65 runs: the masks take two Int64 words (62 runs each); every run shares q1/d1
    # but the last, which shares nothing with any
    runs = {f"r{i:02}": _run(["q1"], ["d1", f"x{i}"]) for i in range(64)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        irm.fuse(runs, "rrf")
    runs["r64"] = _run(["q9"])
    with pytest.warns(IrmWarning) as caught:
        irm.fuse(runs, "rrf")
    assert _one(caught, IrmWarning).startswith(
        "runs 'r00' and 'r64' share no query (1 query each); runs 'r01' and 'r64' share "
        "no query (1 query each); runs 'r02' and 'r64' share no query (1 query each); "
        "and 61 more pairs of runs that "
        "share no document:"
    )


@pytest.mark.parametrize(
    "method", ["posfuse", "probfuse", "segfuse", "slidefuse", "bayesfuse", "mapfuse"]
)
def test_fit_fusion_refuses_a_run_it_cannot_fit(method: str) -> None:
    """Run 'b' lists no judged query: its table had no row, and fuse then refused the
    table for these very runs ("fit them on the same runs"): refused here, by cause."""
    runs = {"a": _run(["q1", "q2"]), "b": _run(["q2"], ["d3", "d4"])}
    qrels = _judged(["q1"], ["d1"])
    extra = {"n_segments": 2} if method == "probfuse" else {}
    message = (
        f"run 'b' lists no judged query, so {method}'s table cannot be estimated for it (fuse "
        "reads a table for every run): pass judgments of its queries, or fit and fuse "
        "without it"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)
        with pytest.raises(QuerySetError, match=f"^{re.escape(message)}$"):
            irm.fit_fusion(runs, method, qrels=qrels, **extra)  # type: ignore[arg-type]


def test_optimize_fusion_checks_spill_dir_as_fuse_does() -> None:
    """spill_dir was not read by the one plan and a missing folder passed unseen."""
    runs = {"a": _run(["q1", "q2"]), "b": _run(["q1", "q2"])}
    qrels = _judged(["q1", "q2"], ["d1", "d3"])
    with pytest.raises(InvalidValueError, match="buckets=None searches in one plan"):
        irm.optimize_fusion(runs, "mrr", qrels=qrels, buckets=None, spill_dir="/tmp")
    with pytest.raises(MissingFileError, match="spill_dir='/no/such/folder' does not exist"):
        irm.optimize_fusion(runs, "mrr", qrels=qrels, spill_dir="/no/such/folder")
