"""Trust at every joint, round 27: the engines' list-shaped ``reference=`` and
``systems=`` keys of which ``labels=`` holds only some.

1. ``irm.evaluate(run, ["intersection@10"], reference=ref)`` takes a reference given as
   lists (one row per user, its ranking in order), as it takes a list-shaped run. On
   Spark a list-shaped reference (or run) beside a long other side raised Spark's own
   ``AnalysisException`` (the coverage count joined a list of ids to an id), and two
   list-shaped sides warned that the reference holds none of the run's documents (it
   compared whole lists); on Dask every list-shaped side raised pyarrow's
   ``ArrowNotImplementedError`` (``dictionary_encode`` of a list). Each part's plan
   turns a list-shaped side into the long form itself, as one machine does; the
   coverage counts now read a list's documents one by one and its query where the list
   is not empty: the one machine's values (bits), warnings and refusals (the lists'
   order named where a list-shaped reference's scores disagree with it).
2. ``systems=`` of several key columns with ``labels=`` holding only some of them (a
   label per model, shared by the model's variants): each system is scored against the
   labels of its held keys, as alone; a duplicate label of a model and a model's labels
   without any system are refused in words of the labels' own keys.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm

from .helpers import engine_io, lists_refused, predicted

ENGINES = ["spark", "dask"]
NAMES = {"query_id": "user", "doc_id": "item"}

# --- 1. a list-shaped reference= on the engines ------------------------------------------

#: the run in the long form: u1..u5 ranked by score (u5's scores tie), two days
RUN = pl.DataFrame(
    {
        "user": ["u1"] * 4 + ["u2"] * 2 + ["u3"] * 3 + ["u4"] + ["u5"] * 2,
        "item": ["a", "b", "c", "d", "b", "e", "a", "f", "g", "h", "c", "a"],
        "score": [0.9, 0.7, 0.5, 0.1, 0.8, 0.6, 0.9, 0.4, 0.2, 0.3, 0.5, 0.5],
        "day": ["mon"] * 6 + ["tue"] * 6,
    }
)
#: the reference as lists: u3's is empty (no ranking: left out of the long form), u6 is
#: not in the run, u5 is not in the reference
REFERENCE = pl.DataFrame(
    {
        "user": ["u1", "u2", "u3", "u4", "u6"],
        "item": [["b", "a", "x"], ["e"], [], ["h", "i"], ["a"]],
    },
    schema_overrides={"item": pl.List(pl.String)},
)


def _long(frame: pl.DataFrame) -> pl.DataFrame:
    """A list-shaped ranking in the long form, its ranks the lists' positions."""
    rank = pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("user")
    return frame.explode("item").drop_nulls("item").with_columns(rank.alias("rank"))


def _lists(frame: pl.DataFrame, *keys: str) -> pl.DataFrame:
    """The long run as lists, one row per (keys, user), in score order."""
    ordered = frame.sort([*keys, "user", "score"], descending=[False] * (len(keys) + 1) + [True])
    return ordered.group_by([*keys, "user"], maintain_order=True).agg("item", "score")


#: the run of two systems: y ranks each user's documents in the reverse order
SYSTEMS = pl.concat(
    [
        RUN.drop("day").with_columns(pl.lit("x").alias("system")),
        RUN.drop("day").with_columns(
            pl.lit("y").alias("system"), (1 - pl.col("score")).alias("score")
        ),
    ]
)

#: case: the run, the reference, the options (NAMES besides)
SHAPES: dict[str, tuple[pl.DataFrame, pl.DataFrame, dict[str, Any]]] = {
    "lists reference": (RUN.drop("day"), REFERENCE, {}),
    "lists run, long reference": (_lists(RUN), _long(REFERENCE), {}),
    "lists both": (_lists(RUN), REFERENCE, {}),
    "lists both, by=": (_lists(RUN, "day"), REFERENCE, {"by": "day", "unretrieved": "drop"}),
    "lists reference, systems=": (SYSTEMS, REFERENCE, {"systems": "system"}),
    "lists both, systems=": (_lists(SYSTEMS, "system"), REFERENCE, {"systems": "system"}),
    "fixed-size lists reference": (
        RUN.drop("day"),
        pl.DataFrame(
            {"user": ["u1", "u2", "u4"], "item": [["b", "a"], ["e", "z"], ["h", "i"]]},
            schema={"user": pl.String, "item": pl.Array(pl.String, 2)},
        ),
        {},
    ),
}
AGREEMENT = [
    "intersection@10",
    "unexpectedness@10",
    "intersection(ref_k=2)@3",
    "rbo@3",
    "jaccard@3",
]


def _said(caught: list[warnings.WarningMessage]) -> list[tuple[str, str]]:
    return [
        (w.category.__name__, str(w.message))
        for w in caught
        if issubclass(w.category, irm.IrmWarning)
    ]


def _one_machine(run: pl.DataFrame, reference: pl.DataFrame, metrics: list[str], **kw: Any) -> Any:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = irm.evaluate(run, metrics, reference=reference, **NAMES, **kw)
    return out, _said(caught)


def _on_engine(
    engine: str,
    request: Any,
    run: pl.DataFrame,
    reference: pl.DataFrame,
    metrics: list[str],
    **kw: Any,
) -> Any:
    evaluate, to_engine, back = engine_io(engine, request)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = back(
            evaluate(
                to_engine(run),
                metrics,
                reference=to_engine(reference),
                partitions=3,
                **NAMES,
                **kw,
            )
        )
    # the coverage counts merge a list's documents with the other side's ids in one
    # dtype (Dask warned of merging two string dtypes)
    assert not [w for w in caught if "data type mismatch" in str(w.message)]
    return out, _said(caught)


@pytest.mark.parametrize("per_query", [False, True], ids=["means", "per query"])
@pytest.mark.parametrize("case", list(SHAPES))
@pytest.mark.parametrize("engine", ENGINES)
def test_list_shaped_reference_gives_one_machines_bits(
    engine: str, case: str, per_query: bool, request: pytest.FixtureRequest
) -> None:
    run, reference, kw = SHAPES[case]
    want, said = _one_machine(run, reference, AGREEMENT, per_query=per_query, **kw)
    got, engine_said = _on_engine(
        engine, request, run, reference, AGREEMENT, per_query=per_query, **kw
    )
    keys = [c for c in ("system", "day", "user") if c in want.columns]
    if keys:  # Dask's per-query rows come in no set order
        got, want = got.sort(keys), want.sort(keys)
    assert got.schema == want.schema
    assert got.rows() == want.rows()
    assert engine_said == said
    # the lists are the long form's rankings: the same values as the long tables give
    long_run = run if "item" not in run.columns or run.schema["item"] == pl.String else None
    if long_run is None:
        long_run = run.explode("item", "score")
    long_reference = reference if reference.schema["item"] == pl.String else _long(reference)
    same, _ = _one_machine(long_run, long_reference, AGREEMENT, per_query=per_query, **kw)
    assert want.rows() == same.rows()


@pytest.mark.parametrize("per_query", [False, True], ids=["means", "per query"])
@pytest.mark.parametrize("case", list(SHAPES))
def test_list_shaped_reference_out_of_core(case: str, per_query: bool) -> None:
    """``buckets=`` splits both sides by query as the engines do: the same bits."""
    run, reference, kw = SHAPES[case]
    want, said = _one_machine(run, reference, AGREEMENT, per_query=per_query, **kw)
    got, bucket_said = _one_machine(
        run, reference, AGREEMENT, per_query=per_query, buckets=3, **kw
    )
    keys = [c for c in ("system", "day", "user") if c in want.columns]
    if keys:
        got, want = got.sort(keys), want.sort(keys)
    assert got.rows() == want.rows()
    assert bucket_said == said


#: the run's documents the reference never lists (every document of u1 and u2 the
#: reference's lists hold is another's): the coverage of documents warned about
ELSEWHERE = pl.DataFrame(
    {"user": ["u1", "u2"], "item": [["p", "q"], ["r"]]},
    schema_overrides={"item": pl.List(pl.String)},
)
#: the reference lacks most of the run's queries (it holds u1 alone)
FEW = REFERENCE.filter(pl.col("user") == "u1")
WARNED = {
    "documents none held, lists reference": (RUN.drop("day"), ELSEWHERE),
    "documents none held, lists both": (_lists(RUN), ELSEWHERE),
    "documents none held, lists run": (_lists(RUN), _long(ELSEWHERE)),
    "queries mostly lacking, lists reference": (RUN.drop("day"), FEW),
    "queries mostly lacking, lists both": (_lists(RUN), FEW),
}


@pytest.mark.parametrize("case", list(WARNED))
@pytest.mark.parametrize("engine", ENGINES)
def test_list_shaped_reference_warns_as_one_machine(
    engine: str, case: str, request: pytest.FixtureRequest
) -> None:
    run, reference = WARNED[case]
    want, said = _one_machine(run, reference, ["intersection@10"])
    assert said  # a case that can fail: the one machine warns
    assert {kind for kind, _ in said} == {"CoverageWarning"}
    got, engine_said = _on_engine(engine, request, run, reference, ["intersection@10"])
    assert engine_said == said
    assert got.rows() == want.rows()


#: scores that fall along each list, and a reference whose scores rise along u2's
GOOD = pl.DataFrame(
    {"user": ["u1", "u2"], "item": [["a", "b"], ["c", "d"]], "score": [[0.9, 0.1], [0.8, 0.2]]}
)
RISING = GOOD.with_columns(pl.Series("score", [[0.8, 0.2], [0.1, 0.9]]))


#: case: the run, the reference, the error and its message
REFUSED = {
    "two orders in a list-shaped reference": (
        GOOD,
        RISING,
        irm.InvalidValueError,
        lists_refused("reference (reference=)", "'u2'"),
    ),
    "two orders in a list-shaped run": (
        RISING,
        GOOD,
        irm.InvalidValueError,
        lists_refused("run", "'u2'"),
    ),
    "two orders in a list-shaped run, long reference": (
        RISING,
        _long(GOOD.drop("score")),
        irm.InvalidValueError,
        lists_refused("run", "'u2'"),
    ),
    "a null list in the reference": (
        GOOD,
        pl.DataFrame(
            {"user": ["u1", "u2"], "item": [["a"], None]},
            schema_overrides={"item": pl.List(pl.String)},
        ),
        irm.InvalidValueError,
        "column 'item' of the reference (reference=) has a null list in query 'u2'; a "
        "query with no document is an empty list: fill them, e.g. "
        "pl.col('item').fill_null([]), or drop those rows",
    ),
    "score lists of other lengths in the reference": (
        GOOD,
        GOOD.with_columns(pl.Series("score", [[0.9, 0.1], [0.8]])),
        irm.InvalidValueError,
        "column 'score' of the reference (reference=) holds a list of 1 value(s) in query "
        "'u2', where column 'item' holds 2; parallel lists must have the same length, one "
        "value per document",
    ),
    "a query in two rows of the reference": (
        GOOD,
        pl.DataFrame({"user": ["u1", "u2", "u2"], "item": [["a"], ["c"], ["d"]]}),
        irm.DuplicateError,
        "query 'u2' is in 2 rows of the reference (reference=), whose 'item' holds one "
        "list per query, its ranking in order (rank = position in the list): each row's "
        "positions start at 1, so the rows' documents would share ranks; keep one row per "
        "query, e.g. join the lists: .group_by('user', maintain_order=True)"
        ".agg(pl.col('item').explode())",
    ),
    "one rank per row beside the reference's lists": (
        GOOD,
        GOOD.drop("score").with_columns(pl.Series("rank", [1, 2])),
        irm.InvalidValueError,
        "column 'rank' of the reference (reference=) holds one value per row beside the "
        "lists of 'item': a list-shaped reference's ranks are the list positions (1 = "
        "first), or a parallel list of one rank per document in 'rank'; drop the column, "
        "e.g. .drop('rank'), or make it such a list",
    ),
}


@pytest.mark.parametrize("metric", ["intersection@10", "unexpectedness@10", "rbo@2"])
@pytest.mark.parametrize("case", list(REFUSED))
@pytest.mark.parametrize("engine", ["one machine", "buckets", *ENGINES])
def test_list_shaped_sides_are_refused_in_one_machines_words(
    engine: str, case: str, metric: str, request: pytest.FixtureRequest
) -> None:
    run, reference, error, message = REFUSED[case]
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        _refused(engine, request, run, reference, metric)


def _refused(
    engine: str, request: Any, run: pl.DataFrame, reference: pl.DataFrame, metric: str
) -> None:
    if engine in ("one machine", "buckets"):
        extra = {"buckets": 2} if engine == "buckets" else {}
        irm.evaluate(run, [metric], reference=reference, **NAMES, **extra)
    else:
        _on_engine(engine, request, run, reference, [metric])


def test_list_shaped_neighbors_are_named_in_their_refusal() -> None:
    """neighbors= given as lists is named as itself, not as the run, in its refusals."""
    run = pl.DataFrame({"user": ["u1", "u2"], "item": ["a", "b"], "score": [0.9, 0.5]})
    exact = pl.DataFrame(
        {"user": ["u1", "u2"], "item": [["a"], None], "score": [[0.1], [0.2]]},
        schema_overrides={"item": pl.List(pl.String)},
    )
    message = (
        "column 'item' of the neighbors (neighbors=) has a null list in query 'u2'; a query "
        "with no document is an empty list: fill them, e.g. pl.col('item').fill_null([]), "
        "or drop those rows"
    )
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(run, ["neighbor_recall@2"], neighbors=exact, **NAMES)


@pytest.mark.parametrize("case", ["lists reference", "lists run, long reference", "lists both"])
def test_dask_object_columns_of_python_lists(case: str, request: pytest.FixtureRequest) -> None:
    """Python lists in ``object`` columns (pandas' own frames, Dask told not to turn
    them into strings): typed as lists from the first row, as the ranking metrics read
    them."""
    import dask
    import dask.dataframe as dd

    request.getfixturevalue("client")
    import polars_irmetrics.dask as irm_dask

    run, reference, _ = SHAPES[case]
    want = irm.evaluate(run, AGREEMENT, reference=reference, **NAMES)
    with dask.config.set({"dataframe.convert-string": False}):
        frames = [dd.from_pandas(frame.to_pandas(), npartitions=2) for frame in (run, reference)]
    got = irm_dask.evaluate(frames[0], AGREEMENT, reference=frames[1], **NAMES).compute()
    assert [tuple(row) for row in got.itertuples(index=False)] == want.rows()


# --- 2. systems= keys of which labels= holds only some ------------------------------------

LABELS = pl.DataFrame(
    {
        "user": [1, 1, 1, 2, 2, 3, 3, 3],
        "item": [10, 11, 12, 10, 13, 11, 12, 14],
        "label": [1, 0, 1, 0, 1, 0, 1, 0],
    }
)
MODELS, VARIANTS = ("m1", "m2"), ("v1", "v2", "v3")
#: every (model, variant) system's predictions of every labelled pair, Monday's and
#: Tuesday's users (rows in no set order)
PREDICTIONS = (
    pl.DataFrame(
        [
            (model, variant, user, item, ((7 * m + 3 * v + 5 * n) % 11) / 10.0)
            for m, model in enumerate(MODELS)
            for v, variant in enumerate(VARIANTS)
            for n, (user, item) in enumerate(LABELS.select("user", "item").iter_rows())
        ],
        schema=["model", "variant", "user", "item", "prediction"],
        orient="row",
    )
    .with_columns(
        pl.when(pl.col("user") == 1).then(pl.lit("mon")).otherwise(pl.lit("tue")).alias("day")
    )
    .sample(fraction=1.0, shuffle=True, seed=11)
)


def _held_labels(key: str, values: tuple[str, ...]) -> pl.DataFrame:
    """Labels of their own per value of ``key`` (flipped for the second)."""
    return pl.concat(
        [
            LABELS.with_columns(
                pl.lit(value).alias(key), ((pl.col("label") + k) % 2).alias("label")
            )
            for k, value in enumerate(values)
        ]
    ).sample(fraction=1.0, shuffle=True, seed=13)


#: a label per model, shared by its variants; a label per variant, shared by the models
BY_MODEL = _held_labels("model", MODELS)
BY_VARIANT = _held_labels("variant", VARIANTS)
PREDICTED = ["auc", "gauc", "logloss", "rmse"]
LOCAL = ["frame", "lazy", "buckets"]
SYSTEM_KEYS = ["model", "variant"]
#: the result's sort keys (those it holds)
ORDER = (*SYSTEM_KEYS, "day", "user")


def _each_alone(
    route: str,
    request: Any,
    predictions: pl.DataFrame,
    labels: pl.DataFrame,
    held: str,
    **kw: Any,
) -> pl.DataFrame:
    """Each (model, variant) system scored alone against the labels of its ``held`` key."""
    alone = []
    for (model, variant), own in predictions.group_by(SYSTEM_KEYS):
        value = model if held == "model" else variant
        truth = labels.filter(pl.col(held) == value).drop(held)
        out = predicted(
            route, request, own.drop(SYSTEM_KEYS), truth, PREDICTED, ORDER, **NAMES, **kw
        )
        alone.append(
            out.select(pl.lit(model).alias("model"), pl.lit(variant).alias("variant"), pl.all())
        )
    keys = [c for c in ORDER if c in alone[0].columns]
    return pl.concat(alone).sort(keys)


#: case: the predictions, the labels, the systems= key they hold, the options
SHARED: dict[str, tuple[pl.DataFrame, pl.DataFrame, str, dict[str, Any]]] = {
    "a label per model": (PREDICTIONS, BY_MODEL, "model", {}),
    "a label per variant": (PREDICTIONS, BY_VARIANT, "variant", {}),
    "per_query": (PREDICTIONS, BY_MODEL, "model", {"per_query": True}),
    "with by=": (PREDICTIONS, BY_MODEL, "model", {"by": "day"}),
    "unmatched='drop'": (
        PREDICTIONS.filter(~((pl.col("variant") == "v2") & (pl.col("user") == 3))),
        BY_MODEL.filter(~((pl.col("model") == "m2") & (pl.col("item") == 10))),
        "model",
        {"unmatched": "drop"},
    ),
}


@pytest.mark.filterwarnings("ignore::polars_irmetrics.IrmWarning")
@pytest.mark.parametrize("case", list(SHARED))
@pytest.mark.parametrize("route", LOCAL + ENGINES)
def test_labels_holding_some_system_keys_score_each_system_alone(
    route: str, case: str, request: pytest.FixtureRequest
) -> None:
    predictions, labels, held, kw = SHARED[case]
    got = predicted(
        route, request, predictions, labels, PREDICTED, ORDER, systems=SYSTEM_KEYS, **NAMES, **kw
    )
    # On an engine, each system alone is scored on one machine: an engine's bits are one
    # machine's (tests/test_same_bits_every_engine.py), and six engine jobs more per case
    # would hold about 10 s of the suite's time each.
    alone = "frame" if route in ENGINES else route
    want = _each_alone(alone, request, predictions, labels, held, **kw)
    assert got.columns == want.columns
    assert got.rows() == want.rows()
    assert got.select(SYSTEM_KEYS).unique().height == len(MODELS) * len(VARIANTS)


def _one_sided(n: int, which: str, system: str, pair: str) -> str:
    side = (
        f"a label but no prediction{system}"
        if which == "label"
        else (f"a prediction{system} but no label")
    )
    return (
        f"{n} (user, item) pair(s) have {side} (e.g. {pair}); pass unmatched='drop' to "
        "evaluate only the pairs on both sides (as Microsoft Recommenders' inner merge does)"
    )


#: case: predictions, labels, error, message, and the words (and system) of the system
#: scored alone against its model's labels, where it is refused so
REFUSED_SYSTEMS: dict[str, tuple[Any, ...]] = {
    "a pair twice in one model's labels": (
        PREDICTIONS,
        pl.concat([BY_MODEL, BY_MODEL.filter((pl.col("model") == "m2") & (pl.col("item") == 14))]),
        irm.DuplicateError,
        "labels= holds a (user, item) pair more than once for one system: 2 row(s) share "
        "one with another label of model='m2', the labels of the system model='m2', "
        "variant='v1' (e.g. (3, 14)); each system's predictions are scored against the "
        "labels of its 'model' (the systems= key(s) labels= holds), one label per pair: "
        "keep one, e.g. labels.unique(['model', 'user', 'item'])",
        None,
    ),
    "a pair one system predicts twice": (
        pl.concat(
            [
                PREDICTIONS,
                PREDICTIONS.filter(
                    (pl.col("model") == "m2")
                    & (pl.col("variant") == "v2")
                    & (pl.col("item") == 13)
                ),
            ]
        ),
        BY_MODEL,
        irm.DuplicateError,
        "2 prediction(s) share a (user, item) pair with another prediction of the same "
        "system (first in the group model='m2', variant='v2') (e.g. (2, 13)); keep one "
        "prediction per system and pair, e.g. .unique(['model', 'variant', 'user', 'item'])",
        None,
    ),
    "a label one system does not predict": (
        PREDICTIONS.filter(
            ~((pl.col("model") == "m2") & (pl.col("variant") == "v3") & (pl.col("user") == 3))
        ),
        BY_MODEL,
        irm.QuerySetError,
        _one_sided(3, "label", " of model='m2', variant='v3'", "(3, 11)"),
        ("m2", "v3", _one_sided(3, "label", "", "(3, 11)")),
    ),
    "a prediction without a label of its model": (
        PREDICTIONS,
        BY_MODEL.filter(~((pl.col("model") == "m2") & (pl.col("item") == 14))),
        irm.QuerySetError,
        _one_sided(1, "prediction", " of model='m2', variant='v1'", "(3, 14)"),
        ("m2", "v1", _one_sided(1, "prediction", "", "(3, 14)")),
    ),
    "a model's labels without a system": (
        PREDICTIONS.filter(pl.col("model") == "m1"),
        BY_MODEL,
        irm.QuerySetError,
        _one_sided(8, "label", " of model='m2'", "(1, 10)"),
        None,
    ),
}


@pytest.mark.parametrize("case", list(REFUSED_SYSTEMS))
@pytest.mark.parametrize("route", LOCAL + ENGINES)
def test_labels_holding_some_system_keys_refuse_by_system(
    route: str, case: str, request: pytest.FixtureRequest
) -> None:
    predictions, labels, error, message, alone = REFUSED_SYSTEMS[case]
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        predicted(
            route, request, predictions, labels, PREDICTED, ORDER, systems=SYSTEM_KEYS, **NAMES
        )
    if alone is not None:  # the count and pair of the system scored alone
        model, variant, words = alone
        own = predictions.filter((pl.col("model") == model) & (pl.col("variant") == variant))
        truth = labels.filter(pl.col("model") == model).drop("model")
        with pytest.raises(error, match=f"^{re.escape(words)}$"):
            predicted(route, request, own.drop(SYSTEM_KEYS), truth, PREDICTED, ORDER, **NAMES)
