"""Values no metric can trust, refused by name (round 3 of the probe): a text
``positive_label`` that none of the labels is, a NaN or infinite dwell or timestamp of
an impression log, and a propensity whose weight ``1/p`` the exact sums cannot add or a
``position`` below 1 in ``propensities=``."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

Frame = pl.DataFrame | pl.LazyFrame
AS_FRAME: list[Callable[[pl.DataFrame], Frame]] = [lambda f: f, lambda f: f.lazy()]
AS_FRAME_IDS = ["DataFrame", "LazyFrame"]


def _collect(out: Any) -> pl.DataFrame:
    frame = out.collect() if isinstance(out, pl.LazyFrame) else out
    assert isinstance(frame, pl.DataFrame)
    return frame


def _exactly(message: str) -> str:
    return "^" + re.escape(message) + "$"


# --- prediction metrics: a text positive_label that no label is -------------------------

ONE = pl.DataFrame(
    {
        "query_id": [1, 1, 2, 2],
        "doc_id": list("abac"),
        "prediction": [0.9, 0.1, 0.8, 0.3],
        "label": ["yes", "no", "yes", "no"],
    }
)

YES_NOT_FOUND = (
    "column 'label' holds two labels ('no', 'yes'){where}, and neither is "
    "positive_label='Yes'; {metrics} read(s) it as a binary label, so it is refused for "
    "them: declare the positive one of them with positive_label= (a text label matches "
    "exactly: case and spaces count)"
)


@pytest.mark.parametrize("as_frame", AS_FRAME, ids=AS_FRAME_IDS)
def test_text_positive_label_no_label_is_refused(
    as_frame: Callable[[pl.DataFrame], Frame],
) -> None:
    message = YES_NOT_FOUND.format(where="", metrics="auc, brier, gauc, logloss")
    with pytest.raises(InvalidValueError, match=_exactly(message)):
        _collect(
            irm.evaluate(as_frame(ONE), ["auc", "logloss", "brier", "gauc"], positive_label="Yes")
        )


@pytest.mark.parametrize("metric", ["auc", "pr_auc", "logloss", "ne", "brier", "ece"])
def test_text_positive_label_no_label_is_refused_for_each_binary_metric(metric: str) -> None:
    name = irm.parse_metric(metric).name
    message = YES_NOT_FOUND.format(where="", metrics=name)
    with pytest.raises(InvalidValueError, match=_exactly(message)):
        irm.evaluate(ONE, [metric], positive_label="Yes")


def test_text_positive_label_no_label_is_refused_whatever_the_grouping() -> None:
    # the labels are checked over the whole table (round 11): no group is named
    table = ONE.with_columns(pl.Series("day", ["mon", "mon", "tue", "tue"]))
    message = YES_NOT_FOUND.format(where="", metrics="logloss")
    with pytest.raises(InvalidValueError, match=_exactly(message)):
        irm.evaluate(table, ["logloss"], positive_label="Yes", by="day")
    with pytest.raises(InvalidValueError, match=_exactly(message)):
        irm.evaluate(table, ["logloss"], positive_label="Yes", per_query=True)


def test_text_positive_label_no_label_is_refused_with_two_tables() -> None:
    predictions = ONE.drop("label")
    labels = ONE.select("query_id", "doc_id", "label")
    message = YES_NOT_FOUND.format(where="", metrics="logloss")
    with pytest.raises(InvalidValueError, match=_exactly(message)):
        irm.evaluate(predictions, ["logloss"], labels=labels, positive_label="Yes")


def test_text_label_with_a_space_names_it() -> None:
    table = ONE.with_columns(pl.Series("label", ["yes ", "no", "yes ", "no"]))
    with pytest.raises(
        InvalidValueError,
        match=re.escape("column 'label' holds two labels ('no', 'yes '), and neither is "),
    ):
        irm.evaluate(table, ["logloss"], positive_label="yes")


def test_text_positive_label_found_still_evaluates() -> None:
    out = irm.evaluate(ONE, ["logloss", "brier"], positive_label="yes")
    expected = -(math.log(0.9) + math.log(0.9) + math.log(0.8) + math.log(0.7)) / 4
    assert out["logloss"].item() == pytest.approx(expected, rel=1e-15)
    assert out["brier"].item() == pytest.approx((0.01 + 0.01 + 0.04 + 0.09) / 4, rel=1e-15)


def test_text_label_of_one_kind_is_all_negative() -> None:
    # one label only, not the positive one: every row negative (as a 0/1 label of
    # zeros), which is no sign of a wrong positive_label
    negatives = ONE.with_columns(pl.lit("no").alias("label"))
    out = irm.evaluate(negatives, ["logloss"], positive_label="yes")
    expected = -(math.log(0.1) + math.log(0.9) + math.log(0.2) + math.log(0.7)) / 4
    assert out["logloss"].item() == pytest.approx(expected, rel=1e-15)


def test_expression_positive_label_found_in_no_label_gives_nan_and_says_so() -> None:
    # an expression cannot raise inside a plan: two text labels, neither of which is
    # positive_label ('Yes' for 'yes'), give NaN (evaluate refuses them), as its
    # docstring says; a group of one label only is a group of negatives
    assert math.isnan(ONE.select(irm.logloss(positive_label="Yes")).item())
    negatives = ONE.with_columns(pl.lit("no").alias("label"))
    value = negatives.select(irm.logloss(positive_label="yes")).item()
    expected = -(math.log(0.1) + math.log(0.9) + math.log(0.2) + math.log(0.7)) / 4
    assert value == pytest.approx(expected, rel=1e-15)
    for function in (irm.auc, irm.pr_auc, irm.gauc, irm.logloss, irm.ne, irm.brier):
        assert "gives NaN" in " ".join((function.__doc__ or "").split())
    for function in (irm.calibration, irm.ece):
        assert "gives NaN" in " ".join((function.__doc__ or "").split())


# --- online metrics: NaN or infinite dwell and timestamps --------------------------------

LOG = pl.DataFrame(
    {
        "session_id": ["s1"] * 3 + ["s2"] * 2,
        "position": [1, 2, 3, 1, 2],
        "clicked": [True, True, False, False, True],
        "dwell": [40.0, 3.0, None, None, 10.0],
        "timestamp": [101.0, 105.0, 100.0, 200.0, 203.0],
    }
)


def _with(column: str, values: list[Any]) -> pl.DataFrame:
    return LOG.with_columns(pl.Series(column, values, dtype=LOG[column].dtype))


NAN, INF = math.nan, math.inf

BAD_LOGS = [
    (
        "NaN dwell of a click",
        _with("dwell", [NAN, 3.0, None, None, 10.0]),
        ["sat_click_rate(dwell_threshold=2)"],
        "column 'dwell' of the log has 1 clicked impression(s) with a NaN dwell in session "
        "'s1'; a satisfied click is decided by its dwell: fill them, e.g. "
        "pl.col('dwell').fill_nan(0.0)",
    ),
    (
        "NaN dwell, click_ndcg",
        _with("dwell", [40.0, 3.0, None, None, NAN]),
        ["click_ndcg(signal='satisfied')"],
        "column 'dwell' of the log has 1 clicked impression(s) with a NaN dwell in session "
        "'s2'; a satisfied click is decided by its dwell: fill them, e.g. "
        "pl.col('dwell').fill_nan(0.0)",
    ),
    (
        "infinite dwell",
        _with("dwell", [INF, 3.0, None, None, 10.0]),
        ["sat_click_rate"],
        "column 'dwell' of the log has 1 infinite value(s) in session 's1'; a dwell is a "
        "duration in seconds, finite: fix or drop them",
    ),
    (
        "infinite dwell, not clicked",
        _with("dwell", [40.0, 3.0, INF, None, 10.0]),
        ["sat_click_rate"],
        "column 'dwell' of the log has 1 infinite value(s) in session 's1'; a dwell is a "
        "duration in seconds, finite: fix or drop them",
    ),
    (
        "minus infinite dwell",
        _with("dwell", [-INF, 3.0, None, None, 10.0]),
        ["sat_click_rate"],
        "column 'dwell' of the log has 1 negative value(s) in session 's1'; a dwell is a "
        "duration in seconds, >= 0: fix or drop them",
    ),
    (
        "NaN timestamp",
        _with("timestamp", [101.0, NAN, 100.0, 200.0, 203.0]),
        ["time_to_first_click"],
        "column 'timestamp' of the log has 1 NaN or infinite value(s) in session 's1'; every "
        "impression needs its time for time_to_first_click: fix or drop them, e.g. "
        ".filter(pl.col('timestamp').is_finite())",
    ),
    (
        "NaN timestamp, not clicked",
        _with("timestamp", [101.0, 105.0, 100.0, NAN, 203.0]),
        ["time_to_first_click"],
        "column 'timestamp' of the log has 1 NaN or infinite value(s) in session 's2'; every "
        "impression needs its time for time_to_first_click: fix or drop them, e.g. "
        ".filter(pl.col('timestamp').is_finite())",
    ),
    (
        "infinite timestamps",
        _with("timestamp", [INF, 105.0, -INF, 200.0, 203.0]),
        ["time_to_first_click"],
        "column 'timestamp' of the log has 2 NaN or infinite value(s) in session 's1'; every "
        "impression needs its time for time_to_first_click: fix or drop them, e.g. "
        ".filter(pl.col('timestamp').is_finite())",
    ),
]


@pytest.mark.parametrize("as_frame", AS_FRAME, ids=AS_FRAME_IDS)
@pytest.mark.parametrize(
    ("case", "log", "metrics", "message"), BAD_LOGS, ids=[c[0] for c in BAD_LOGS]
)
def test_nonfinite_log_values_are_refused(
    as_frame: Callable[[pl.DataFrame], Frame],
    case: str,
    log: pl.DataFrame,
    metrics: list[str],
    message: str,
) -> None:
    with pytest.raises(InvalidValueError, match=_exactly(message)):
        _collect(irm.evaluate_online(as_frame(log), metrics))


def test_nonfinite_log_values_are_refused_in_an_ab_test() -> None:
    log = _with("dwell", [NAN, 3.0, None, None, 10.0]).with_columns(
        pl.Series("arm", ["A", "A", "A", "B", "B"])
    )
    with pytest.raises(InvalidValueError, match=re.escape("with a NaN dwell in session")):
        _collect(irm.ab_test(log, ["sat_click_rate"], arm="arm", unit="session_id"))


def test_nan_dwell_of_an_unclicked_impression_is_read_as_null() -> None:
    # a NaN where no click is (pandas' missing value) decides nothing, as a null there
    nan = _with("dwell", [40.0, 3.0, NAN, NAN, 10.0])
    metrics = ["sat_click_rate(dwell_threshold=5)", "click_ndcg(signal='satisfied')"]
    assert irm.evaluate_online(nan, metrics).rows() == irm.evaluate_online(LOG, metrics).rows()
    assert irm.evaluate_online(nan, metrics)["sat_click_rate(dwell_threshold=5)"].item() == 2 / 3


def test_nonfinite_values_of_an_unread_column_are_not_checked() -> None:
    log = _with("dwell", [NAN, INF, None, None, NAN]).with_columns(
        pl.Series("timestamp", [NAN, INF, NAN, NAN, -INF])
    )
    assert irm.evaluate_online(log, ["ctr"])["ctr"].item() == 3 / 5


# --- propensity-scored metrics: weights the sums cannot add, positions below 1 -----------


def _worked() -> tuple[pl.DataFrame, pl.DataFrame]:
    run = pl.DataFrame(
        {
            "query_id": ["q1", "q1", "q1", "q2"],
            "doc_id": ["a", "b", "c", "a"],
            "rank": [1, 2, 3, 1],
        }
    )
    qrels = pl.DataFrame(
        {"query_id": ["q1", "q1", "q2"], "doc_id": ["b", "c", "a"], "relevance": [1, 1, 1]}
    )
    return run, qrels


TINY = (
    "propensities= has propensity {value!r} in column 'propensity' for {key}: its "
    "weight 1/p is 2**32 or more, which the exact sums of the metrics cannot add (a "
    "propensity must be above 2**-32, about 2.3e-10); clip the propensities, e.g. "
    "pl.col('propensity').clip(lower_bound=1e-6), as inverse-propensity estimators do"
)


@pytest.mark.parametrize("as_frame", AS_FRAME, ids=AS_FRAME_IDS)
@pytest.mark.parametrize("value", [5e-324, 1e-300, 2.0**-32, 1e-10])
def test_propensity_whose_weight_is_too_large_is_refused(
    as_frame: Callable[[pl.DataFrame], Frame], value: float
) -> None:
    run, qrels = _worked()
    props = pl.DataFrame({"doc_id": ["a", "b", "c"], "propensity": [0.5, value, 1.0]})
    message = TINY.format(value=value, key="doc_id 'b'")
    with pytest.raises(InvalidValueError, match=_exactly(message)):
        _collect(
            irm.evaluate(
                as_frame(run),
                ["ps_precision@2", "ps_ndcg@2"],
                qrels=qrels,
                propensities=as_frame(props),
            )
        )


def test_position_propensity_whose_weight_is_too_large_is_refused() -> None:
    run, qrels = _worked()
    positions = pl.DataFrame({"position": [1, 2, 3], "propensity": [1.0, 5e-324, 0.25]})
    message = TINY.format(value=5e-324, key="position 2")
    with pytest.raises(InvalidValueError, match=_exactly(message)):
        irm.evaluate(run, ["ps_ndcg@2"], qrels=qrels, propensities=positions)


def test_propensity_just_above_the_bound_gives_finite_values() -> None:
    run, qrels = _worked()
    props = pl.DataFrame({"doc_id": ["a", "b", "c"], "propensity": [0.5, 2.0**-31, 1.0]})
    out = irm.evaluate(run, ["ps_precision@2", "ps_ndcg@2"], qrels=qrels, propensities=props)
    # P@2: q1 retrieves b (2**31) at 2, q2 a (2) at 1; ideal q1 {b, c} = 2**31 + 1, q2 2
    assert out["ps_precision@2"].item() == (2.0**31 + 2) / (2.0**31 + 1 + 2)
    assert all(math.isfinite(v) for v in out.row(0)[1:])


def test_out_of_core_refuses_the_same_propensity(tmp_path: Any) -> None:
    run, qrels = _worked()
    props = pl.DataFrame({"doc_id": ["a", "b", "c"], "propensity": [0.5, 5e-324, 1.0]})
    message = TINY.format(value=5e-324, key="doc_id 'b'")
    with pytest.raises(InvalidValueError, match=_exactly(message)):
        irm.evaluate(
            run,
            ["ps_ndcg@2"],
            qrels=qrels,
            propensities=props,
            buckets=2,
            spill_dir=str(tmp_path),
        )


BELOW_ONE = (
    "column 'position' of the propensities has {n} position(s) below 1 (the lowest: "
    "{first}); positions start at 1 for the top, as the run's ranks do: add 1 to 0-based "
    "positions, e.g. pl.col('position') + 1"
)


@pytest.mark.parametrize("as_frame", AS_FRAME, ids=AS_FRAME_IDS)
@pytest.mark.parametrize(
    ("positions", "n", "first"),
    [([0, 1, 2, 3], 1, 0), ([1, 2, 3, -1, 0], 2, -1)],
    ids=["zero", "negative"],
)
def test_position_below_one_is_refused(
    as_frame: Callable[[pl.DataFrame], Frame], positions: list[int], n: int, first: int
) -> None:
    run, qrels = _worked()
    table = pl.DataFrame({"position": positions, "propensity": [1.0] * len(positions)})
    message = BELOW_ONE.format(n=n, first=first)
    with pytest.raises(InvalidValueError, match=_exactly(message)):
        _collect(
            irm.evaluate(
                as_frame(run), ["ps_precision@2"], qrels=qrels, propensities=as_frame(table)
            )
        )


def test_zero_based_positions_are_named_before_the_rank_they_lack() -> None:
    # 0-based positions lack the run's last rank too: the 0 is the cause, named first
    run, qrels = _worked()
    table = pl.DataFrame({"position": [0, 1, 2], "propensity": [1.0, 0.5, 0.25]})
    message = BELOW_ONE.format(n=1, first=0)
    with pytest.raises(InvalidValueError, match=_exactly(message)):
        irm.evaluate(run, ["ps_precision@2"], qrels=qrels, propensities=table)
