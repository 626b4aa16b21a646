"""``rank=``, ``score=`` and ``sample_id=`` naming no column of the run, on Spark and Dask
(the ``spark`` and ``client`` fixtures of conftest.py): refused as ``irm.evaluate``
refuses them (``ground.options.check_named_columns``, on the run's long form), with the
same exception and message, on every route that reads them and before any task runs,
where the engines ranked by the other order column, read one deterministic ranking or
failed with another message. A name the run (or its list shape) holds is accepted, with
the door's values."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import dask.dataframe as dd
import polars as pl
import pyarrow as pa
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnNotFoundError, InvalidValueError
from tests.test_engines_recsys42 import _engine
from tests.test_engines_recsys_history import covering

# q1 ranks a over b, q2 a alone; the judgments grade b in q1 and a in q2
RUN = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "a"], "score": [2.0, 1.0, 1.0]}
)
RANKED = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "a"], "rank": [1, 2, 1]}
)
BOTH = RANKED.with_columns(score=pl.Series([1.0, 2.0, 1.0]))
SAMPLED = RANKED.with_columns(sample=pl.Series([0, 0, 0]))
# one row per query, the ranking a list (its long form: query_id, doc_id, rank)
LISTS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": [["a", "b"], ["a"]]})
QRELS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["b", "a"], "relevance": [1, 2]})
GROUPS = pl.DataFrame({"doc_id": ["a", "b"], "group": ["g0", "g1"]})
PROPENSITIES = pl.DataFrame({"doc_id": ["a", "b"], "propensity": [0.5, 0.25]})
REFERENCE = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "doc_id": ["b", "a", "a"], "score": [2.0, 1.0, 1.0]}
)
HISTORY = pl.DataFrame({"query_id": ["q1", "q2", "q3"], "doc_id": ["a", "b", "a"]})

_ROLES = {"rank": "ranks (1 = top)", "score": "scores", "sample_id": "sampled rankings' ids"}


def _refusal(keyword: str, value: str, columns: tuple[str, ...]) -> str:
    """The door's refusal of ``keyword=value`` naming no column of a run of ``columns``."""
    held = ", ".join(repr(c) for c in columns)
    return (
        f"{keyword}={value!r} names no column of the run (its columns: {held}); name the "
        f"column of its {_ROLES[keyword]} with {keyword}=..., or drop {keyword}= (without "
        "the column the values would be computed otherwise, in silence)"
    )


_SCORED = ("query_id", "doc_id", "score")
_RANKS = ("query_id", "doc_id", "rank")

# (id, run, metrics, tables, options, the door's message); what the engines did before,
# on these inputs: "ignored" = computed in silence (the other order column, or one
# deterministic ranking), else another message
REFUSED: list[
    tuple[str, pl.DataFrame, list[str], dict[str, pl.DataFrame], dict[str, Any], str]
] = [
    # ignored: ranked by score
    (
        "rank-offline",
        RUN,
        ["ndcg@10"],
        {"qrels": QRELS},
        {"rank": "r"},
        _refusal("rank", "r", _SCORED),
    ),
    # "column 'r' not found in the run ...; pass rank=... or score=... to name it"
    (
        "rank-offline-order-rank",
        RUN,
        ["ndcg@10"],
        {"qrels": QRELS},
        {"rank": "r", "order": "rank"},
        _refusal("rank", "r", _SCORED),
    ),
    # ignored: ranked by rank
    (
        "score-offline",
        RANKED,
        ["map"],
        {"qrels": QRELS},
        {"score": "s"},
        _refusal("score", "s", _RANKS),
    ),
    (
        "score-offline-both-columns",
        BOTH,
        ["ndcg@10"],
        {"qrels": QRELS},
        {"score": "s"},
        _refusal("score", "s", (*_RANKS, "score")),
    ),
    # ignored: the list shape's positions ranked; the long form's columns are named
    (
        "score-list-run",
        LISTS,
        ["ndcg@10"],
        {"qrels": QRELS},
        {"score": "s"},
        _refusal("score", "s", _RANKS),
    ),
    # ignored: one deterministic ranking per query
    (
        "sample_id-ee_loss",
        SAMPLED,
        ["ee_loss"],
        {"qrels": QRELS},
        {"sample_id": "s"},
        _refusal("sample_id", "s", (*_RANKS, "sample")),
    ),
    (
        "sample_id-rnd",
        RANKED,
        ["rnd"],
        {"groups": GROUPS},
        {"sample_id": "s"},
        _refusal("sample_id", "s", _RANKS),
    ),
    ("rank-rnd", RUN, ["rnd"], {"groups": GROUPS}, {"rank": "r"}, _refusal("rank", "r", _SCORED)),
    # the exposure measures beside ranking metrics (two calls on the engines)
    (
        "sample_id-beside-ndcg",
        SAMPLED,
        ["ndcg@5", "ee_loss"],
        {"qrels": QRELS},
        {"sample_id": "s"},
        _refusal("sample_id", "s", (*_RANKS, "sample")),
    ),
    (
        "rank-beside-ndcg",
        RUN,
        ["ndcg@5", "ee_loss"],
        {"qrels": QRELS},
        {"rank": "r"},
        _refusal("rank", "r", _SCORED),
    ),
    # the rank-similarity route: ignored
    (
        "rank-rbo",
        RUN,
        ["rbo"],
        {"reference": REFERENCE},
        {"rank": "r"},
        _refusal("rank", "r", _SCORED),
    ),
    # "column 's' not found in the reference ..."
    (
        "score-rbo",
        RANKED,
        ["rbo"],
        {"reference": REFERENCE},
        {"score": "s"},
        _refusal("score", "s", _RANKS),
    ),
    # the propensity-scored route: ignored
    (
        "rank-ps",
        RUN,
        ["ps_ndcg@5"],
        {"qrels": QRELS, "propensities": PROPENSITIES},
        {"rank": "r"},
        _refusal("rank", "r", _SCORED),
    ),
    # the items' counts, Elliot's and the history's routes: ignored
    (
        "rank-novelty",
        RUN,
        ["novelty@5"],
        {"interactions": HISTORY},
        {"rank": "r"},
        _refusal("rank", "r", _SCORED),
    ),
    (
        "score-coverage",
        RANKED,
        ["catalog_coverage@5"],
        {"interactions": HISTORY},
        {"score": "s"},
        _refusal("score", "s", _RANKS),
    ),
    (
        "rank-epc",
        RUN,
        ["epc@5"],
        {"qrels": QRELS, "interactions": HISTORY},
        {"rank": "r"},
        _refusal("rank", "r", _SCORED),
    ),
    (
        "rank-surprisal",
        RUN,
        ["surprisal@5"],
        {"interactions": HISTORY},
        {"rank": "r"},
        _refusal("rank", "r", _SCORED),
    ),
    # the click metrics (the log's position): "column 'r' not found in the log ..."
    ("rank-ctr", RUN, ["ctr"], {}, {"rank": "r"}, _refusal("rank", "r", _SCORED)),
]


@pytest.mark.parametrize(
    ("run", "metrics", "tables", "options", "message"),
    [c[1:] for c in REFUSED],
    ids=[c[0] for c in REFUSED],
)
def test_the_door_refuses_a_column_the_run_lacks(
    run: pl.DataFrame,
    metrics: list[str],
    tables: dict[str, pl.DataFrame],
    options: dict[str, Any],
    message: str,
) -> None:
    with pytest.raises(ColumnNotFoundError, match=f"^{re.escape(message)}$"):
        irm.evaluate(run, metrics, **tables, **options)


@pytest.mark.parametrize("engine", ["spark", "dask"])
@pytest.mark.parametrize(
    ("run", "metrics", "tables", "options", "message"),
    [c[1:] for c in REFUSED],
    ids=[c[0] for c in REFUSED],
)
def test_engines_refuse_a_column_the_run_lacks_as_the_door(
    engine: str,
    run: pl.DataFrame,
    metrics: list[str],
    tables: dict[str, pl.DataFrame],
    options: dict[str, Any],
    message: str,
    request: pytest.FixtureRequest,
) -> None:
    evaluate, frame, _ = _engine(engine, request)
    given = {name: frame(table) for name, table in tables.items()}
    with pytest.raises(ColumnNotFoundError, match=f"^{re.escape(message)}$"):
        evaluate(frame(run), metrics, **given, **options)


def _exploding_spark(request: pytest.FixtureRequest, run: pl.DataFrame) -> Any:
    """``run`` on Spark, each of whose tasks fails: a call that ran one could not
    raise the door's refusal."""
    session = request.getfixturevalue("spark")
    frame = session.createDataFrame(run.to_arrow())

    def explode(batches: Any) -> Any:
        raise RuntimeError("a task ran")
        yield from batches

    return frame.mapInArrow(explode, frame.schema)


def _exploding_dask(request: pytest.FixtureRequest, run: pl.DataFrame) -> Any:
    """``run`` on Dask, each of whose partitions fails when computed."""
    _, frame, _ = _engine("dask", request)
    given = frame(run)

    def explode(part: Any) -> Any:
        raise RuntimeError("a task ran")

    return given.map_partitions(explode, meta=given._meta)


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_refuse_before_any_task(engine: str, request: pytest.FixtureRequest) -> None:
    evaluate, _, _ = _engine(engine, request)
    exploding = _exploding_spark if engine == "spark" else _exploding_dask
    message = _refusal("rank", "r", _SCORED)
    for metrics, tables in (
        (["ndcg@10"], {"qrels": QRELS}),
        (["rbo"], {"reference": REFERENCE}),
        (["ps_ndcg@5"], {"qrels": QRELS, "propensities": PROPENSITIES}),
        (["novelty@5"], {"interactions": HISTORY}),
    ):
        given = {name: exploding(request, table) for name, table in tables.items()}
        with pytest.raises(ColumnNotFoundError, match=f"^{re.escape(message)}$"):
            evaluate(exploding(request, RUN), metrics, **given, rank="r")


_R = RANKED.rename({"rank": "r"})
_S = RUN.rename({"score": "s"})

# (id, run, metrics, tables, options): names the run holds, given (not the defaults),
# evaluated with the door's values; the list shape's positions are the column rank=
# names, and its parallel list of scores the column score= names
ACCEPTED: list[tuple[str, pl.DataFrame, list[str], dict[str, pl.DataFrame], dict[str, Any]]] = [
    ("rank-offline", _R, ["ndcg@10", "map"], {"qrels": QRELS}, {"rank": "r"}),
    ("score-offline", _S, ["ndcg@10", "P@1"], {"qrels": QRELS}, {"score": "s"}),
    ("rank-list-positions", LISTS, ["ndcg@10", "mrr"], {"qrels": QRELS}, {"rank": "pos"}),
    (
        "score-list-parallel",
        LISTS.with_columns(sc=pl.Series([[2.0, 1.0], [1.0]])),  # falling, as the lists rank
        ["ndcg@10", "mrr"],
        {"qrels": QRELS},
        {"score": "sc"},
    ),
    (
        "sample_id-ee_loss",
        SAMPLED.rename({"sample": "smp"}),
        ["ee_loss"],
        {"qrels": QRELS},
        {"sample_id": "smp"},
    ),
    ("score-rbo", _S, ["rbo"], {"reference": REFERENCE.rename({"score": "s"})}, {"score": "s"}),
    ("rank-ps", _R, ["ps_ndcg@5"], {"qrels": QRELS, "propensities": PROPENSITIES}, {"rank": "r"}),
    ("score-novelty", _S, ["novelty@5"], {"interactions": HISTORY}, {"score": "s"}),
]
# a covering design: each engine reads rank= and score= of a long run (Spark rank=, Dask
# score=) and of a run of lists (Spark score=, Dask rank=), and every other route
_ROUTES = ("sample_id-ee_loss", "score-rbo", "rank-ps", "score-novelty")
ACCEPTED_COVER = {
    "spark": ("rank-offline", "score-list-parallel", *_ROUTES),
    "dask": ("score-offline", "rank-list-positions", *_ROUTES),
}


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")
@pytest.mark.parametrize(
    ("engine", "case", "run", "metrics", "tables", "options"),
    covering(ACCEPTED, ACCEPTED_COVER),
)
def test_engines_accept_a_column_the_run_holds_with_the_doors_values(
    engine: str,
    case: str,
    run: pl.DataFrame,
    metrics: list[str],
    tables: dict[str, pl.DataFrame],
    options: dict[str, Any],
    request: pytest.FixtureRequest,
) -> None:
    evaluate, frame, back = _engine(engine, request)
    one = irm.evaluate(run, metrics, **tables, **options)
    assert isinstance(one, pl.DataFrame)
    given = {name: frame(table) for name, table in tables.items()}
    got = back(evaluate(frame(run), metrics, **given, **options))
    assert got.columns == one.columns
    assert got.cast(one.schema).equals(one)
    assert one.height == 1  # the means, computed


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")
def test_dask_reads_lists_of_object_columns_for_the_check(client: Any, tmp_path: Path) -> None:
    # dd.read_parquet's default: the lists are an object column (numpy arrays), told from
    # ids by the first row only where the check would otherwise refuse
    import polars_irmetrics.dask as irm_dask

    LISTS.write_parquet(tmp_path / "run.parquet")
    QRELS.write_parquet(tmp_path / "qrels.parquet")
    run = dd.read_parquet(tmp_path / "run.parquet")
    qrels = dd.read_parquet(tmp_path / "qrels.parquet")
    assert run._meta["doc_id"].dtype == object
    one = irm.evaluate(LISTS, ["ndcg@10"], qrels=QRELS, rank="pos")
    assert isinstance(one, pl.DataFrame)
    got = irm_dask.evaluate(run, ["ndcg@10"], qrels=qrels, rank="pos").compute()
    table = pl.from_arrow(pa.Table.from_pandas(got, preserve_index=False))
    assert isinstance(table, pl.DataFrame)
    assert table.cast(one.schema).equals(one)
    with pytest.raises(
        ColumnNotFoundError, match=f"^{re.escape(_refusal('score', 's', _RANKS))}$"
    ):
        irm_dask.evaluate(run, ["ndcg@10"], qrels=qrels, score="s")


# unretrieved='drop' beside the exposure measures: one machine reads the retrieved
# queries' judgments alone there (tests/test_door_round7.py); an engine's two calls
# would score the unretrieved judged query q4 as an empty ranking, so it is refused,
# and 'zero' (the default, given by name) gives the door's values
_MIXED_RUN = pl.DataFrame(
    {
        "query_id": ["q1"] * 3 + ["q2"] * 2,
        "doc_id": ["a", "b", "c", "a", "d"],
        "score": [3.0, 2.0, 1.0, 2.0, 1.0],
    }
)
_MIXED_QRELS = pl.DataFrame(
    {"query_id": ["q1", "q2", "q4"], "doc_id": ["b", "d", "a"], "relevance": [1, 1, 1]}
)
_MIXED_GROUPS = pl.DataFrame({"doc_id": list("abcd"), "group": ["x", "y", "x", "y"]})


@pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")
@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_refuse_drop_beside_the_exposure_measures(
    engine: str, request: pytest.FixtureRequest
) -> None:
    evaluate, to_engine, back = _engine(engine, request)
    metrics = ["P@2", "ee_loss", "ee_relevance"]
    tables = {"qrels": _MIXED_QRELS, "groups": _MIXED_GROUPS}
    message = (
        "unretrieved='drop' beside the exposure measures that read the judgments "
        "('ee_loss', 'ee_relevance') is evaluated on one machine (irm.evaluate), not on "
        "Spark or Dask, whose exposure measures score a judged query the run did not "
        "retrieve as an empty ranking: evaluate 'ee_loss', 'ee_relevance' in a separate "
        "call without unretrieved=, or use irm.evaluate"
    )
    engined = {name: to_engine(table) for name, table in tables.items()}
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        back(evaluate(to_engine(_MIXED_RUN), metrics, **engined, unretrieved="drop"))
    local = irm.evaluate(_MIXED_RUN, metrics, **tables, unretrieved="zero")
    got = back(evaluate(to_engine(_MIXED_RUN), metrics, **engined, unretrieved="zero"))
    assert got.select(local.columns).equals(local)
