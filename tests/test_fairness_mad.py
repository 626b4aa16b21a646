"""Elliot's MAD metrics (issue 42): item_mad and user_mad, ranking and rating kinds.

Expected values come from Elliot's own formula code (commit fc27efe:
``elliot/evaluation/metrics/fairness/MAD/``), vendored in
``tests/fixtures/elliot/make_mad_fixtures.py`` and run in a side environment (Elliot pins
a TensorFlow stack): ``tests/fixtures/elliot/mad.json``. The same vendored functions
(numpy only) are the oracle for the Hypothesis-random inputs. Elliot's recommendations
are the run (users as queries), its test set the judgments, its item clustering file
``groups=`` and its user clustering file ``user_groups=``.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import polars_irmetrics as irm
from polars_irmetrics import (
    ColumnNotFoundError,
    ColumnTypeError,
    DuplicateError,
    InvalidValueError,
    MetricParameterError,
)
from tests.helpers import irm_in_process, property_settings, script

FIXTURES = Path(__file__).parent / "fixtures" / "elliot"
CASES = json.loads((FIXTURES / "mad.json").read_text())["cases"]
TOL = 1e-9
NAMES = ("item_mad", "item_mad(kind='rating')", "user_mad", "user_mad(kind='rating')")

#: the frame kinds met in turn along a peer's fixture cases (a covering design of
#: frame kind x case: every case compared once, both kinds met many times; the eager and
#: lazy paths giving the same values is the point of other tests, not of each case's)
KINDS = ("DataFrame", "LazyFrame")
# random runs often retrieve no relevant document: the door warns, as it should
pytestmark = pytest.mark.filterwarnings("ignore::polars_irmetrics.errors.CoverageWarning")


ELLIOT = script("tests/fixtures/elliot/make_mad_fixtures.py")
Tables = dict[str, pl.DataFrame]


def _tables(case: dict[str, Any], ids: type[pl.DataType] = pl.Int64) -> Tables:
    schema = {"query_id": ids, "doc_id": ids}

    def cast(rows: list[list[Any]], n: int) -> list[list[Any]]:
        return [[str(v) if ids == pl.String else v for v in r[:n]] + r[n:] for r in rows]

    return {
        "run": pl.DataFrame(
            cast(case["reco"], 2), schema={**schema, "score": pl.Float64}, orient="row"
        ),
        "qrels": pl.DataFrame(
            cast(case["test"], 2), schema={**schema, "relevance": pl.Int64}, orient="row"
        ),
        "groups": pl.DataFrame(
            cast(case["item_groups"], 1), schema={"doc_id": ids, "group": pl.Int64}, orient="row"
        ),
        "user_groups": pl.DataFrame(
            cast(case["user_groups"], 1),
            schema={"query_id": ids, "group": pl.Int64},
            orient="row",
        ),
    }


def _same(ours: float | None, theirs: float | None) -> bool:
    """Equal to 1e-9; Elliot's nan (written null in the fixtures) is a null here."""
    if theirs is None or math.isnan(theirs):
        return ours is None
    return ours is not None and math.isclose(ours, theirs, rel_tol=TOL, abs_tol=TOL)


def _ours(frame_kind: str, t: Tables, labels: list[str], **options: Any) -> dict[str, Any]:
    """irm.evaluate on every table eager, or every table lazy (a LazyFrame out)."""
    if frame_kind == "LazyFrame":
        lazy = {name: frame.lazy() for name, frame in t.items()}
        out = irm.evaluate(lazy.pop("run"), labels, **lazy, **options)
        assert isinstance(out, pl.LazyFrame)
        return out.collect().row(0, named=True)
    rest = dict(t)
    got = irm.evaluate(rest.pop("run"), labels, **rest, **options)
    assert isinstance(got, pl.DataFrame)
    return got.row(0, named=True)


@pytest.mark.parametrize(("frame_kind", "case"), [(KINDS[c % 2], c) for c in range(len(CASES))])
def test_equal_to_elliot_fixtures(frame_kind: str, case: int) -> None:
    data = CASES[case]
    wanted = {f"{name}@{v['k']}": v[name] for v in data["values"] for name in NAMES}
    ours = _ours(frame_kind, _tables(data), list(wanted))
    wrong = {k: (ours[k], v) for k, v in wanted.items() if not _same(ours[k], v)}
    assert not wrong


def test_worked_example_as_arithmetic(frame_kind: str) -> None:
    # users 1 and 2 have relevant test items (gains: rel 2 -> 2^2 - 1 = 3, rel 1 -> 1);
    # user 3's only test item has relevance 0: left out. Items 10, 11 are cluster 0,
    # 12, 13 cluster 1; user 1 is cluster 0, users 2 and 3 cluster 1.
    labels = [f"{name}@{k}" for name in NAMES for k in (1, 3)]
    got = _ours(frame_kind, _tables(ELLIOT.WORKED), labels)
    # top 3: item 10 (user 1, gain 3) 3; item 11 (users 1, 2, no gain) 0; 12 (user 1)
    # 1; 13 (user 2) 1: cluster 0 (3 + 0) / 2, cluster 1 (1 + 1) / 2
    assert got["item_mad@3"] == abs((3 + 0) / 2 - (1 + 1) / 2)
    # rating: the score of a relevant item: 10: 0.9, 11: 0, 12: 0.7, 13: 0.5
    assert math.isclose(got["item_mad(kind='rating')@3"], abs(0.9 / 2 - 1.2 / 2), rel_tol=1e-12)
    # top 1: items 10 and 11, both cluster 0; cluster 1 has no item: null (Elliot's nan)
    assert got["item_mad@1"] is None
    # nDCG@3: user 1 finds 10 (gain 3) at 1 and 12 (gain 1) at 3 of ideal 3, 1;
    # user 2 finds 13 at 2 of ideal 1, 1 (13 and 14)
    d = [1.0, 1 / math.log2(3), 1 / math.log2(4)]
    user1 = (3 * d[0] + 1 * d[2]) / (3 * d[0] + 1 * d[1])
    user2 = (1 * d[1]) / (1 * d[0] + 1 * d[1])
    assert math.isclose(got["user_mad@3"], abs(user1 - user2), rel_tol=1e-12)
    # top 1: user 1's 10 (nDCG 1); user 2's 11 is not relevant (0)
    assert got["user_mad@1"] == 1.0
    # rating: the mean score of the top 3: (0.9 + 0.8 + 0.7) / 3 and (0.6 + 0.5) / 2
    assert math.isclose(got["user_mad(kind='rating')@3"], 0.8 - 0.55, rel_tol=1e-12)


_ids = st.integers(0, 6)


@st.composite
def _cases(draw: st.DrawFn) -> dict[str, Any]:
    test = draw(st.dictionaries(st.tuples(_ids, _ids), st.sampled_from([0, 1, 2, 3]), max_size=20))
    lists = draw(
        st.dictionaries(_ids, st.lists(_ids, min_size=1, max_size=6, unique=True), min_size=1)
    )
    reco = [
        [u, i, float(len(items) - n) + u / 10]
        for u, items in lists.items()
        for n, i in enumerate(items)
    ]
    n_items, n_users = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    items = draw(st.lists(_ids, min_size=n_items, unique=True))
    users = draw(st.lists(_ids, min_size=n_users, unique=True))
    return {
        "reco": reco,
        "test": [[u, i, r] for (u, i), r in test.items()],
        "item_groups": [[i, n % n_items] for n, i in enumerate(items)],
        "user_groups": [[u, n % n_users] for n, u in enumerate(users)],
    }


@property_settings(30)
@given(case=_cases(), k=st.integers(1, 6), level=st.sampled_from([1, 2]))
def test_equal_to_elliot_on_random_inputs(case: dict[str, Any], k: int, level: int) -> None:
    theirs = ELLIOT.mad_values(case, k, level)
    labels = [f"{name}@{k}" for name in NAMES]
    ours = _ours("DataFrame", _tables(case), labels, relevance_level=level)
    for name in NAMES:
        assert _same(ours[f"{name}@{k}"], theirs[name]), name


@pytest.mark.parametrize("case", [3, 4, 5])
def test_string_ids_equal_elliot(frame_kind: str, case: int) -> None:
    data = CASES[case]
    wanted = {f"{name}@{v['k']}": v[name] for v in data["values"] for name in NAMES}
    ours = _ours(frame_kind, _tables(data, pl.String), list(wanted))
    assert all(_same(ours[k], v) for k, v in wanted.items())


def test_by_groups_equal_each_group_alone(frame_kind: str) -> None:
    first, second = CASES[1], CASES[2]
    t = _tables(first)
    runs = [
        _tables(case)["run"].with_columns(system=pl.lit(name))
        for name, case in (("a", first), ("b", second))
    ]
    labels = ["item_mad@5", "user_mad(kind='rating')@3", "item_mad(kind='rating')@10"]
    sides = {name: frame for name, frame in t.items() if name != "run"}
    both = irm.evaluate(pl.concat(runs), labels, **sides, systems="system")
    assert isinstance(both, pl.DataFrame)
    for frame in runs:
        system = frame["system"][0]
        alone = _ours(frame_kind, {**t, "run": frame.drop("system")}, labels)
        row = both.filter(pl.col("system") == system).row(0, named=True)
        for label in labels:
            assert _same(row[label], alone[label]), (system, label)


def test_beside_accuracy_and_elliot_metrics(frame_kind: str) -> None:
    t = _tables(CASES[6])
    train = pl.DataFrame({"query_id": [1, 2, 2], "doc_id": [3, 3, 4]})
    labels = ["ndcg@5", "item_mad@5", "aclt@5", "user_mad@5", "recall@5"]
    both = _ours(frame_kind, {**t, "interactions": train}, labels)
    alone = _ours(frame_kind, {"run": t["run"], "qrels": t["qrels"]}, ["ndcg@5", "recall@5"])
    mad = _ours(frame_kind, t, ["item_mad@5", "user_mad@5"])
    assert list(both) == ["num_q", *labels]
    assert {k: both[k] for k in alone} == alone
    assert (both["item_mad@5"], both["user_mad@5"]) == (mad["item_mad@5"], mad["user_mad@5"])


def test_beside_the_exposure_measures_sharing_groups(frame_kind: str) -> None:
    t = _tables(ELLIOT.WORKED)
    labels = ["ee_relevance", "item_mad@3"]
    both = _ours(frame_kind, {k: t[k] for k in ("run", "qrels", "groups")}, labels)
    assert both["item_mad@3"] == 0.5  # the worked example's
    alone = _ours(frame_kind, {k: t[k] for k in ("run", "qrels", "groups")}, ["ee_relevance"])
    assert both["ee_relevance"] == alone["ee_relevance"]


def test_ranks_are_positions_as_everywhere_in_evaluate(frame_kind: str) -> None:
    t = _tables(CASES[7])
    place = pl.col("score").rank("ordinal", descending=True).over("query_id")
    labels = ["item_mad@3", "user_mad@3"]
    scored = _ours(frame_kind, t, labels)
    ranked = _ours(frame_kind, {**t, "run": t["run"].with_columns(place.alias("rank"))}, labels)
    assert all(_same(ranked[label], scored[label]) for label in labels)


def test_a_cluster_table_of_text_groups() -> None:
    t = _tables(ELLIOT.WORKED)
    named = t["groups"].with_columns(pl.col("group").replace_strict({0: "head", 1: "tail"}))
    got = _ours(
        "DataFrame", {"run": t["run"], "qrels": t["qrels"], "groups": named}, ["item_mad@3"]
    )
    assert got["item_mad@3"] == 0.5


@pytest.mark.parametrize(
    ("metric", "table"), [("item_mad@3", "groups"), ("user_mad@3", "user_groups")]
)
def test_a_row_of_a_null_cluster_is_not_there(frame_kind: str, metric: str, table: str) -> None:
    # round 28: refused before, while groups= read the same row as no group for the
    # exposure measures; now as if the row were not there, for every measure
    t = _tables(ELLIOT.WORKED)
    clusters = t[table]
    key = clusters.columns[0]
    extra = pl.DataFrame({key: clusters[key].head(1), "group": [None]}, schema=clusters.schema)
    wanted = {"run", "qrels", table}
    given = {name: t[name] for name in wanted}
    got = _ours(frame_kind, {**given, table: pl.concat([clusters, extra])}, [metric])
    lone = _ours(frame_kind, {**given, table: extra}, [metric])
    assert got[metric] == _ours(frame_kind, given, [metric])[metric]
    # the id of the null row alone: no cluster at all, so nothing to compare (null)
    assert lone[metric] is None


def _worked(**changes: Any) -> dict[str, Any]:
    return changes


ERRORS: list[tuple[str, dict[str, Any], type[Exception], str]] = [
    (
        "item_mad@3",
        _worked(groups=None),
        MetricParameterError,
        "metric 'item_mad@3' reads the item clusters: pass groups=... (one row per item: "
        "doc_id, group) to irm.evaluate",
    ),
    (
        "user_mad@3",
        _worked(user_groups=None),
        MetricParameterError,
        "metric 'user_mad@3' reads user clusters (one row per user: the query id column and "
        "group): pass user_groups=... to irm.evaluate",
    ),
    (
        "user_mad@3",
        _worked(per_query=True),
        MetricParameterError,
        "metric 'user_mad@3' (Elliot's MAD) compares clusters of the whole recommendation "
        "table: evaluate it with per_query=False",
    ),
    (
        "item_mad@3",
        _worked(groups=pl.DataFrame({"doc_id": ["10"], "group": [0]})),
        ColumnTypeError,
        "column 'doc_id' holds integers in the run (Int64) but strings in groups= (String); "
        "cast one side, e.g. pl.col('doc_id').cast(pl.String) on both",
    ),
    (
        "user_mad@3",
        _worked(user_groups=pl.DataFrame({"query_id": [1.0], "group": [0]})),
        ColumnTypeError,
        "column 'query_id' in the user_groups has dtype Float64; ids must be strings or "
        "integers: cast it, e.g. pl.col('query_id').cast(pl.Int64)",
    ),
    (
        "user_mad@3",
        _worked(user_groups=pl.DataFrame({"query_id": [1], "cluster": [0]})),
        ColumnNotFoundError,
        "column 'group' not found in the user_groups",
    ),
    (
        "item_mad@3",
        _worked(groups=pl.DataFrame({"doc_id": [10, 10, 11], "group": [0, 1, 1]})),
        DuplicateError,
        "groups= gives doc_id '10' more than one group; Elliot's MAD metrics put each id in "
        "one cluster: keep one row per doc_id, e.g. .unique('doc_id')",
    ),
    (
        "item_mad(kind='rating')@3",
        _worked(run=pl.DataFrame({"query_id": [1], "doc_id": [10], "rank": [1]})),
        ColumnNotFoundError,
        "column 'score' not found in the run",
    ),
    (
        "item_mad(kind='score')@3",
        _worked(),
        MetricParameterError,
        "kind",
    ),
    (
        "ndcg@3",
        _worked(user_groups=_tables(ELLIOT.WORKED)["user_groups"]),
        MetricParameterError,
        "user_groups= holds the user clusters Elliot's user_mad@k reads, and no metric asked "
        "for reads them: drop user_groups=, or ask for user_mad@k",
    ),
    (
        "ndcg@3",
        _worked(groups=_tables(ELLIOT.WORKED)["groups"]),
        MetricParameterError,
        "groups= holds the document groups the exposure measures (ee_loss, ee_disparity, "
        "ee_relevance, awrf, awrf_ndcg, rnd, rkl, rrd) and Elliot's item_mad@k read, and no "
        "metric asked for reads them: drop groups=, or ask for one of them",
    ),
    (
        "item_mad",
        _worked(),
        MetricParameterError,
        "metric 'item_mad': item_mad needs a cutoff, e.g. 'item_mad@10'",
    ),
    (
        "item_mad@3",
        _worked(depth=2),
        InvalidValueError,
        "depth=2 is not read by Elliot's MAD metrics ('item_mad@3'): they read each user's "
        "top k of the recommendations as given; drop depth=",
    ),
]


@pytest.mark.parametrize(("metric", "changes", "error", "message"), ERRORS)
def test_bad_inputs_are_refused(
    frame_kind: str, metric: str, changes: dict[str, Any], error: type[Exception], message: str
) -> None:
    # the worked example's tables that the metric reads, then the changes (None: drop)
    t = _tables(ELLIOT.WORKED)
    wanted = {"run", "qrels", *(["groups"] if "item" in metric else [])}
    wanted |= {"user_groups"} if "user" in metric else set()
    kwargs: dict[str, Any] = {name: t[name] for name in wanted}
    options = {k: v for k, v in changes.items() if k not in t}
    kwargs.update({k: v for k, v in changes.items() if k in t})
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    with pytest.raises(error, match=re.escape(message)):
        _ours(frame_kind, kwargs, [metric], **options)


def test_the_cli_computes_them(tmp_path: Path) -> None:
    t = _tables(ELLIOT.WORKED)
    paths = {name: tmp_path / f"{name}.parquet" for name in t}
    for name, frame in t.items():
        frame.write_parquet(paths[name])
    command = ["evaluate", str(paths["run"])]
    command += ["--qrels", str(paths["qrels"]), "--groups", str(paths["groups"])]
    command += ["--user-groups", str(paths["user_groups"])]
    command += ["-m", "item_mad@3", "-m", "user_mad(kind='rating')@3", "--format", "json"]
    done = irm_in_process(*command)
    assert done.returncode == 0, done.stderr
    row = json.loads(done.stdout)[0]
    assert row["item_mad@3"] == 0.5  # the worked example's
    assert math.isclose(row["user_mad(kind='rating')@3"], 0.25, rel_tol=1e-12)


@pytest.mark.parametrize(
    ("metric", "message"),
    [
        (
            "item_mad@10",
            "metric 'item_mad@10' reads the item clusters: pass groups=... (one row per item: "
            "doc_id, group) to irm.evaluate",
        ),
        (
            "user_mad(kind='rating')@10",
            "metric \"user_mad(kind='rating')@10\" reads user clusters (one row per user: the "
            "query id column and group): pass user_groups=... to irm.evaluate",
        ),
    ],
)
def test_spark_and_dask_refuse_them_on_the_driver(metric: str, message: str) -> None:
    # the engines take no cluster tables: their driver's check (the one-machine plan on
    # empty frames of the schemas, before any job) names the table and irm.evaluate
    import pyarrow as pa

    from polars_irmetrics.engines._partition import prepare
    from polars_irmetrics.ground.options import EvalOptions

    ids = [("query_id", pa.int64()), ("doc_id", pa.int64())]
    run = pa.schema([*ids, ("score", pa.float64())])
    qrels = pa.schema([*ids, ("relevance", pa.int64())])
    with pytest.raises(MetricParameterError, match=re.escape(message)):
        prepare(run, qrels, [metric], EvalOptions())


# cases whose relevant rows (those debias= counts and draws) the draw of seed 3 changes
@pytest.mark.parametrize(("case", "changed"), [(1, "item_mad@5"), (1, "user_mad@5")])
def test_debias_reads_the_judgments_as_the_other_metrics_do(
    frame_kind: str, case: int, changed: str
) -> None:
    # RecTools' DebiasConfig down-samples the popular items' test rows; the MAD metrics
    # read the same down-sampled judgments as the metrics beside them
    from polars_irmetrics.ground.debias import debiased

    t = _tables(CASES[case])
    config = irm.Debias(iqr_coef=0.0, random_state=3)
    labels = ["item_mad@5", "user_mad@5", "ndcg@5"]
    got = _ours(frame_kind, t, labels, debias=config)
    # the relevant rows alone are interactions (relevance_level=1): counted and drawn
    relevant = pl.col("relevance") >= 1
    down = debiased(t["qrels"].lazy(), config, "query_id", "doc_id", relevant).collect()

    def mad_of(tables: Tables) -> dict[str, Any]:
        return _ours(frame_kind, tables, labels[:2])

    mad = mad_of({**t, "qrels": down})
    assert all(_same(got[label], mad[label]) for label in labels[:2])
    assert got[changed] != mad_of(t)[changed]  # it did down-sample
