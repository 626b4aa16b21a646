"""Click metrics of an impression log: registry, worked examples, the offline formulas
reused (click nDCG = nDCG of the equivalent judged table), segments and bad input."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_irmetrics as irm
from polars_irmetrics.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    DuplicateError,
    InvalidValueError,
    MetricParameterError,
)
from polars_irmetrics.io.files import sample_interactions_path

Frame = pl.DataFrame | pl.LazyFrame
AS_FRAME: list[Callable[[pl.DataFrame], Frame]] = [lambda f: f, lambda f: f.lazy()]

# Three sessions. s1 clicks positions 2 (dwell 40 s, a conversion) and 3 (10 s); s2
# clicks position 1 (5 s); s3 clicks nothing. A clicked row's timestamp is its click.
LOG = pl.DataFrame(
    {
        "session_id": ["s1"] * 4 + ["s2"] * 3 + ["s3"] * 3,
        "position": [1, 2, 3, 4, 1, 2, 3, 1, 2, 3],
        "clicked": [False, True, True, False, True, False, False, False, False, False],
        "dwell": [None, 40.0, 10.0, None, 5.0, None, None, None, None, None],
        "converted": [False, True, False, False, False, False, False, False, False, False],
        "timestamp": [100.0, 105.0, 112.0, 100.0, 203.0, 200.0, 200.0, 300.0, 300.0, 300.0],
    }
)

LOG2 = 1.0 / math.log2(3)  # the discount of position 2
S1_NDCG3 = (LOG2 + 1 / math.log2(4)) / (1 + LOG2)  # clicks at 2 and 3; ideal: 1 and 2

#: metric -> (per-session values of s1, s2, s3; the aggregate), as explicit arithmetic
WORKED: dict[str, tuple[list[float | None], float]] = {
    # a ratio of sums: 3 clicks / 10 impressions, not the mean of 2/4, 1/3, 0
    "ctr": ([2 / 4, 1 / 3, 0.0], 3 / 10),
    "ctr@2": ([1 / 2, 1 / 2, 0.0], (1 + 1 + 0) / (2 + 2 + 2)),
    "session_ctr@1": ([0.0, 1.0, 0.0], 1 / 3),
    "session_ctr": ([1.0, 1.0, 0.0], 2 / 3),
    "clicks_per_session": ([2.0, 1.0, 0.0], (2 + 1 + 0) / 3),
    "clicks_per_session@2": ([1.0, 1.0, 0.0], 2 / 3),
    "abandonment": ([0.0, 0.0, 1.0], 1 / 3),
    "click_mrr": ([1 / 2, 1.0, 0.0], (1 / 2 + 1) / 3),
    "click_mrr@1": ([0.0, 1.0, 0.0], 1 / 3),
    # a rate over the clicks: none for s3, which has none (not 0, the best position)
    "mean_click_position": ([(2 + 3) / 2, 1.0, None], (2 + 3 + 1) / 3),
    # the sessions with a click only: (2.5 + 1) / 2
    "median_click_position": ([2.5, 1.0, None], (2.5 + 1) / 2),
    "time_to_first_click": ([105 - 100, 203 - 200, None], (5 + 3) / 2),
    "sat_click_rate": ([1 / 2, 0.0, None], 1 / 3),
    "sat_click_rate(dwell_threshold=5)": ([1.0, 1.0, None], 3 / 3),
    "conversion_rate": ([1.0, 0.0, 0.0], 1 / 3),
    "click_ndcg@3": ([S1_NDCG3, 1.0, 0.0], (S1_NDCG3 + 1) / 3),
    # satisfied clicks (dwell >= 30): only s1's position 2; the ideal puts it first
    "click_ndcg(signal='satisfied')@3": ([LOG2, 0.0, 0.0], LOG2 / 3),
    "click_precision@2": ([1 / 2, 1 / 2, 0.0], 1 / 3),
    "click_precision": ([2 / 4, 1 / 3, 0.0], (2 / 4 + 1 / 3) / 3),
}


def _collect(frame: Frame) -> pl.DataFrame:
    return frame.collect() if isinstance(frame, pl.LazyFrame) else frame


@pytest.mark.parametrize("as_frame", AS_FRAME)
def test_worked_examples(as_frame: Callable[[pl.DataFrame], Frame]) -> None:
    names = list(WORKED)
    per_session = _collect(irm.evaluate_online(as_frame(LOG), names, per_session=True))
    assert per_session["session_id"].to_list() == ["s1", "s2", "s3"]
    overall = _collect(irm.evaluate_online(as_frame(LOG), names))
    assert overall["num_sessions"].to_list() == [3]
    for name, (sessions, mean) in WORKED.items():
        assert per_session[name].to_list() == pytest.approx(sessions, abs=1e-15), name
        assert overall[name].item() == pytest.approx(mean, abs=1e-15), name


def test_click_metric_expressions_equal_the_session_values() -> None:
    names = list(WORKED)
    per_session = irm.evaluate_online(LOG, names, per_session=True)
    ours = LOG.group_by("session_id").agg(irm.click_metric(n).alias(n) for n in names)
    assert ours.sort("session_id").equals(per_session)
    with pytest.raises(
        MetricParameterError,
        match=re.escape(
            "metric 'ndcg@10' is not a click metric; use its expression function (e.g. "
            "irm.ndcg(k=10)) on a judged table, or a click metric such as 'ctr@10'"
        ),
    ):
        irm.click_metric("ndcg@10")


def test_lazy_in_lazy_out() -> None:
    out = irm.evaluate_online(LOG.lazy(), ["ctr"])
    assert isinstance(out, pl.LazyFrame)
    assert out.collect()["ctr"].item() == 3 / 10


def test_datetime_and_date_timestamps_are_seconds() -> None:
    start = pl.datetime(2026, 3, 2)
    seconds = pl.duration(milliseconds=pl.col("timestamp") * 1000)
    log = LOG.with_columns((start + seconds).alias("timestamp"))
    assert log.schema["timestamp"] == pl.Datetime("us")
    out = irm.evaluate_online(log, ["time_to_first_click"], per_session=True)
    assert out["time_to_first_click"].to_list() == [5.0, 3.0, None]
    days = pl.DataFrame(
        {
            "session_id": ["a", "a"],
            "position": [1, 2],
            "clicked": [False, True],
            "timestamp": pl.Series(["2026-03-01", "2026-03-02"]).str.to_date(),
        }
    )
    out = irm.evaluate_online(days, "time_to_first_click")
    assert out["time_to_first_click"].item() == 86400.0  # one day later


def test_same_bits_on_any_layout_and_engine() -> None:
    log = pl.scan_parquet(sample_interactions_path())
    names = ["ctr@10", "abandonment", "click_ndcg@10", "time_to_first_click",
             "sat_click_rate", "median_click_position"]  # fmt: skip
    reference = irm.evaluate_online(log, names, by="arm").collect()
    streamed = irm.evaluate_online(log, names, by="arm").collect(engine="streaming")
    assert streamed.equals(reference)
    shuffled = log.collect().sample(fraction=1.0, shuffle=True, seed=2)
    assert irm.evaluate_online(shuffled, names, by="arm").equals(reference)


def test_segments_and_column_names() -> None:
    log = pl.concat(
        [
            LOG.with_columns(pl.lit("A").alias("arm")),
            # a session of its own in arm B (one session id is one session: a key
            # holding two values in one session is refused, tests/test_online_keys.py)
            LOG.head(4).with_columns(pl.lit("B").alias("arm"), pl.col("session_id") + "b"),
        ]
    ).rename({"session_id": "qid", "position": "pos", "clicked": "click"})
    out = irm.evaluate_online(
        log, ["ctr", "abandonment"], by="arm", session_id="qid", position="pos", clicked="click"
    )
    assert out.to_dicts() == [
        {"arm": "A", "num_sessions": 3, "ctr": 3 / 10, "abandonment": 1 / 3},
        {"arm": "B", "num_sessions": 1, "ctr": 2 / 4, "abandonment": 0.0},
    ]


def test_integer_clicks_and_conversions() -> None:
    log = LOG.with_columns(pl.col("clicked", "converted").cast(pl.Int8))
    out = irm.evaluate_online(log, ["ctr", "conversion_rate"])
    assert out.row(0) == (3, 3 / 10, 1 / 3)


# ----------------------------------------------------------- the offline formulas reused
@st.composite
def _logs(draw: st.DrawFn) -> pl.DataFrame:
    rows: dict[str, list[Any]] = {"session_id": [], "position": [], "item_id": [], "clicked": []}
    for s in range(draw(st.integers(1, 6))):
        n = draw(st.integers(1, 8))
        positions = draw(st.permutations(list(range(1, n + 3))))[:n]
        for p in positions:
            rows["session_id"].append(f"s{s}")
            rows["position"].append(p)
            rows["item_id"].append(f"i{p}")
            rows["clicked"].append(draw(st.booleans()))
    return pl.DataFrame(rows)


#: click metric -> the offline metric of the equivalent judged table
EQUIVALENT = {
    "click_ndcg@3": "ndcg@3",
    "click_ndcg": "ndcg",
    "click_precision@2": "precision@2",
    "click_precision": "precision",
    "click_mrr": "mrr",
    "click_mrr@2": "mrr@2",
    "session_ctr@3": "hit_rate@3",
    "clicks_per_session": "num_rel_ret",
}


@settings(max_examples=40, deadline=None)
@given(_logs())
def test_click_metrics_equal_evaluate_on_the_judged_table(log: pl.DataFrame) -> None:
    judged = log.select(
        pl.col("session_id").alias("query_id"),
        pl.col("item_id").alias("doc_id"),
        pl.col("position").alias("rank"),
        pl.col("clicked").cast(pl.Int64).alias("relevance"),
    )
    offline = irm.evaluate(judged, list(EQUIVALENT.values()), per_query=True)
    online = irm.evaluate_online(log, list(EQUIVALENT), per_session=True)
    assert online["session_id"].to_list() == offline["query_id"].to_list()
    for click, judged_name in EQUIVALENT.items():
        ours = online[click].to_list()
        theirs = offline[judged_name].cast(pl.Float64).to_list()
        assert ours == pytest.approx(theirs, abs=1e-15), click


# ------------------------------------------------------------------------------ registry
CLICK_METRICS = [
    "ctr", "session_ctr", "clicks_per_session", "abandonment", "click_mrr",
    "mean_click_position", "median_click_position", "time_to_first_click",
    "sat_click_rate", "conversion_rate", "click_ndcg", "click_precision",
]  # fmt: skip


def test_registry_lists_click_metrics_and_names_parse_back() -> None:
    listed = {m.name: m for m in irm.list_metrics()}
    for name in CLICK_METRICS:
        assert listed[name].reads == ("run", "clicks")
    for text in [*WORKED, "CTR@10", "click_through_rate@5", "abandonment_rate", "click_rr@3"]:
        request = irm.parse_metric(text)
        assert irm.parse_metric(request.name) == request, text
    assert irm.parse_metric("satisfied_click_rate(dwell_threshold=10)").name == (
        "sat_click_rate(dwell_threshold=10)"
    )
    assert not irm.get_metric("abandonment").higher_is_better


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("abandonment@10", "metric 'abandonment@10': abandonment takes no cutoff"),
        ("ctr(rel=2)@10", "metric 'ctr(rel=2)@10': ctr reads no relevance judgments"),
        (
            "click_ndcg(signal='dwell')@10",
            "metric \"click_ndcg(signal='dwell')@10\": signal='dwell' is not allowed; "
            "choose one of 'click', 'satisfied'",
        ),
    ],
)
def test_bad_metric_parameters(name: str, message: str) -> None:
    with pytest.raises(MetricParameterError, match="^" + re.escape(message)):
        irm.parse_metric(name)


def test_negative_dwell_threshold() -> None:
    with pytest.raises(
        MetricParameterError,
        match=re.escape(
            "dwell_threshold must be a number of seconds >= 0, got -1, "
            "e.g. sat_click_rate(dwell_threshold=30)"
        ),
    ):
        irm.evaluate_online(LOG, ["sat_click_rate(dwell_threshold=-1)"])


def test_evaluate_refuses_click_metrics_and_online_refuses_judged_ones() -> None:
    judged = pl.DataFrame({"query_id": ["q"], "doc_id": ["d"], "rank": [1], "relevance": [1]})
    with pytest.raises(
        ColumnNotFoundError,
        match=re.escape(
            "column 'clicked' not found in the log (its columns: 'query_id', 'doc_id', 'rank', "
            "'relevance'); an impression log's sessions are the queries: name your columns, "
            "e.g. query_id='session_id', rank='position', clicked='click' "
            "(irm.evaluate_online(log, metrics, session_id=..., position=...) for the first two)"
        ),
    ):
        irm.evaluate(judged, ["ctr@10"])
    with pytest.raises(
        MetricParameterError,
        match=re.escape(
            "metric 'ndcg@10' is not a click metric: it reads relevance judgments, which an "
            "impression log does not hold; evaluate it with irm.evaluate(run, ['ndcg@10'], "
            "qrels=...), or choose a click metric such as 'ctr@10' (irm.list_metrics())"
        ),
    ):
        irm.evaluate_online(LOG, ["ndcg@10"])


# ----------------------------------------------------------------------------- bad input
def _with(column: str, values: list[Any], dtype: pl.DataType | None = None) -> pl.DataFrame:
    return LOG.with_columns(pl.Series(column, values, dtype=dtype))


LOG_COLUMNS = "'session_id', 'position', 'clicked', 'dwell', 'converted', 'timestamp'"
BAD: list[tuple[str, pl.DataFrame, list[str], type[Exception], str]] = [
    (
        "missing clicked",
        LOG.drop("clicked"),
        ["ctr"],
        ColumnNotFoundError,
        "column 'clicked' not found in the log (its columns: 'session_id', 'position', "
        "'dwell', 'converted', 'timestamp'); an impression log's sessions are the queries: "
        "name your columns, e.g. query_id='session_id', rank='position', clicked='click' "
        "(irm.evaluate_online(log, metrics, session_id=..., position=...) for the first two)",
    ),
    (
        "missing dwell",
        LOG.drop("dwell"),
        ["ctr", "sat_click_rate"],
        ColumnNotFoundError,
        "column 'dwell' not found in the log (its columns: 'session_id', 'position', "
        "'clicked', 'converted', 'timestamp'); 'sat_click_rate' reads the dwell: add it, "
        "name yours with dwell=..., or leave the metric out",
    ),
    (
        "click not shown",
        _with("position", [1, 2, None, 4, 1, 2, 3, 1, 2, 3]),
        ["ctr"],
        InvalidValueError,
        "session 's1' has 1 click(s) on an impression that was not shown (a null "
        "'position'); a click needs the position it was shown at: fix the join of clicks "
        "to impressions, or drop those rows",
    ),
    (
        "null position",
        _with("position", [1, 2, 3, 4, 1, 2, 3, 1, 2, None]),
        ["ctr"],
        InvalidValueError,
        "column 'position' of the log has 1 null value(s) in session 's3'; every impression "
        "needs the position it was shown at: fill or drop them",
    ),
    (
        "position 0",
        _with("position", [0, 1, 2, 3, 1, 2, 3, 1, 2, 3]),
        ["ctr"],
        InvalidValueError,
        "column 'position' of the log has 1 position(s) below 1 in session 's1'; positions "
        "start at 1 for the top: add 1 to 0-based positions, e.g. pl.col('position') + 1",
    ),
    (
        "position twice",
        _with("position", [1, 2, 3, 4, 1, 1, 3, 1, 2, 3]),
        ["ctr"],
        DuplicateError,
        "column 'position' of the log: session 's2' shows 1 impression(s) at a position "
        "another impression holds; each position shows one item: keep one row per "
        "position, e.g. .unique(['session_id', 'position']); or, where two users "
        "share the session id 's2' (ids that restart for each user), their impressions are one "
        "session here: give each user's sessions ids of their own, e.g. the user id joined "
        "onto the session id",
    ),
    (
        "negative dwell",
        _with("dwell", [None, -4.0, 10.0, None, 5.0, None, None, None, None, None]),
        ["sat_click_rate"],
        InvalidValueError,
        "column 'dwell' of the log has 1 negative value(s) in session 's1'; a dwell is a "
        "duration in seconds, >= 0: fix or drop them",
    ),
    (
        "click without dwell",
        _with("dwell", [None, 40.0, None, None, 5.0, None, None, None, None, None]),
        ["click_ndcg(signal='satisfied')"],
        InvalidValueError,
        "column 'dwell' of the log has 1 clicked impression(s) without a dwell in session "
        "'s1'; a satisfied click is decided by its dwell: fill them, e.g. with 0",
    ),
    (
        "null click",
        _with("clicked", [False, True, None, False, True, False, False, False, False, False]),
        ["ctr"],
        InvalidValueError,
        "column 'clicked' of the log has 1 null value(s) in session 's1'; every impression "
        "is clicked or not: fill them, e.g. pl.col('clicked').fill_null(False)",
    ),
    (
        "click of 2",
        _with("clicked", [0, 2, 1, 0, 1, 0, 0, 0, 0, 0]),
        ["ctr"],
        InvalidValueError,
        "column 'clicked' of the log has 1 value(s) other than 0 and 1 in session 's1'; a "
        "click is a flag: use True/False or 0/1",
    ),
    (
        "null session",
        _with("session_id", ["s1"] * 4 + ["s2"] * 3 + [None] * 3),
        ["ctr"],
        InvalidValueError,
        "column 'session_id' of the log has null values; every impression needs a "
        "session_id: fill or drop them, e.g. .drop_nulls('session_id')",
    ),
    (
        "float position",
        LOG.with_columns(pl.col("position").cast(pl.Float64)),
        ["ctr"],
        ColumnTypeError,
        "column 'position' of the log has dtype Float64; a position must be an integer "
        "(1 = top): cast it, e.g. pl.col('position').cast(pl.Int64)",
    ),
    (
        "text clicks",
        LOG.with_columns(pl.col("clicked").cast(pl.String)),
        ["ctr"],
        ColumnTypeError,
        "column 'clicked' of the log has dtype String; a click must be Boolean or integers "
        "0/1: cast it, e.g. pl.col('clicked').cast(pl.Boolean)",
    ),
    (
        "text timestamps",
        LOG.with_columns(pl.col("timestamp").cast(pl.String)),
        ["time_to_first_click"],
        ColumnTypeError,
        "column 'timestamp' of the log has dtype String; a timestamp must be a Datetime, a "
        "Date or a number of seconds: cast it, e.g. pl.col('timestamp').str.to_datetime()",
    ),
]


@pytest.mark.parametrize("as_frame", AS_FRAME)
@pytest.mark.parametrize(
    ("case", "log", "metrics", "error", "message"), BAD, ids=[c[0] for c in BAD]
)
def test_bad_input(
    as_frame: Callable[[pl.DataFrame], Frame],
    case: str,
    log: pl.DataFrame,
    metrics: list[str],
    error: type[Exception],
    message: str,
) -> None:
    with pytest.raises(error, match="^" + re.escape(message) + "$"):
        _collect(irm.evaluate_online(as_frame(log), metrics))


def test_unused_columns_are_not_checked() -> None:
    # a negative dwell only matters to a metric that reads the dwell
    log = _with("dwell", [None, -4.0, 10.0, None, 5.0, None, None, None, None, None])
    assert irm.evaluate_online(log, ["ctr"])["ctr"].item() == 3 / 10


def test_bad_options() -> None:
    with pytest.raises(
        InvalidValueError,
        match=re.escape(
            "by=['session_id'] names 'session_id', which is already the query or document "
            "id; list only extra keys such as 'system' or 'day'"
        ),
    ):
        irm.evaluate_online(LOG, ["ctr"], by="session_id")
    with pytest.raises(
        ColumnTypeError,
        match=re.escape(
            "log must be a polars DataFrame or LazyFrame, a pandas DataFrame, a pyarrow "
            "Table or RecordBatch, or a table with the Arrow PyCapsule interface "
            "(__arrow_c_stream__), got dict; convert it to a table"
        ),
    ):
        irm.evaluate_online(LOG.to_dict(as_series=False), ["ctr"])  # type: ignore[call-overload]


#: (by, per_session) of the out-of-core comparisons
BUCKET_CASES: list[tuple[str | list[str] | None, bool]] = [
    (None, False),
    ("arm", False),
    (["arm", "device"], False),
    ("arm", True),
]


@pytest.mark.parametrize("as_frame", AS_FRAME)
@pytest.mark.parametrize(("by", "per_session"), BUCKET_CASES)
def test_buckets_give_the_same_bits_as_one_plan(
    as_frame: Callable[[pl.DataFrame], Frame],
    by: str | list[str] | None,
    per_session: bool,
    tmp_path: Any,
) -> None:
    log = as_frame(pl.read_parquet(sample_interactions_path()))
    names = ["ctr@10", "abandonment", "click_ndcg@10", "time_to_first_click",
             "sat_click_rate", "median_click_position", "click_mrr"]  # fmt: skip

    def run(**options: Any) -> pl.DataFrame:
        out = irm.evaluate_online(log, names, by=by, per_session=per_session, **options)
        if isinstance(log, pl.LazyFrame):
            assert isinstance(out, pl.LazyFrame)  # lazy in, lazy out; nothing ran yet
            return out.collect()
        assert isinstance(out, pl.DataFrame)
        return out

    reference = run()
    assert reference.height > 1 if per_session or by else reference.height == 1
    for buckets in (3, "auto"):
        bucketed = run(buckets=buckets, spill_dir=tmp_path)
        assert bucketed.schema == reference.schema
        assert bucketed.rows() == reference.rows()  # == on floats: the same bits
    assert list(tmp_path.iterdir()) == []  # the spilled buckets are removed


@pytest.mark.parametrize("as_frame", AS_FRAME)
def test_more_buckets_than_sessions(as_frame: Callable[[pl.DataFrame], Frame]) -> None:
    # three sessions in 16 buckets: most buckets are empty and add no row
    names = list(WORKED)
    for per_session in (False, True):
        one = irm.evaluate_online(as_frame(LOG), names, per_session=per_session)
        many = irm.evaluate_online(as_frame(LOG), names, per_session=per_session, buckets=16)
        assert isinstance(many, type(one))  # the kind of the input
        assert many.lazy().collect().rows() == one.lazy().collect().rows()
        assert many.lazy().collect().height == (3 if per_session else 1)


def test_buckets_raise_the_errors_of_one_plan() -> None:
    log = _with("position", [1, 2, 3, 4, 1, 2, 3, 1, 1, 3])
    message = re.escape("session 's3' shows 1 impression(s) at a position another")
    for buckets in (None, 2):
        with pytest.raises(DuplicateError, match=message):
            irm.evaluate_online(log, ["ctr"], buckets=buckets)


@pytest.mark.parametrize("as_frame", AS_FRAME)
@pytest.mark.parametrize(
    ("buckets", "message"),
    [
        (0, "buckets must be a positive integer, 'auto', 'auto-memory' or None, got 0"),
        ("x", "buckets must be a positive integer, 'auto', 'auto-memory' or None, got 'x'"),
        (True, "buckets must be a positive integer, 'auto', 'auto-memory' or None, got True"),
    ],
)
def test_bad_buckets(
    as_frame: Callable[[pl.DataFrame], Frame], buckets: Any, message: str
) -> None:
    """The door's check and message, through either door."""
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate_online(as_frame(LOG), ["ctr"], buckets=buckets)
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(as_frame(LOG), ["P@1"], qrels=LOG, buckets=buckets)
