"""Round 31: trust at every joint in the prediction, online and vectors wings.

Each test is a tiny adversarial input that gave a number reading as valid (or a
library-foreign error) before this round."""

from __future__ import annotations

import math

import polars as pl
import pytest
from sklearn.metrics import log_loss, roc_auc_score

import polars_irmetrics as irm
from tests.helpers import warned

FRAMES = [pl.DataFrame, pl.LazyFrame]


def _collected(out: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return out.collect() if isinstance(out, pl.LazyFrame) else out


def _one(frame: pl.DataFrame | pl.LazyFrame, expr: pl.Expr) -> float:
    return _collected(frame.select(expr)).item()


# a value irm.evaluate refuses, given to the bare expression: NaN, never a number read
# as valid (the labels and probabilities of the good rows are the same in each case)
BAD_VALUES = [
    # probability 1.5: logloss read it as a clipped probability (0.138)
    ("probability above 1", {"prediction": [1.5, 0.2, 0.8, 0.1]}, irm.logloss, None),
    ("probability below 0", {"prediction": [0.9, -0.2, 0.8, 0.1]}, irm.brier, None),
    # label 2: a negative for auc (0.667 instead of NaN)
    ("label 2", {"label": [2, 0, 1, 0]}, irm.auc, (roc_auc_score, "multi_class")),
    ("label -1", {"label": [1, -1, 1, -1]}, irm.ece, None),
    # a null prediction made auc 0.0 where the other three rows order right
    ("null prediction", {"prediction": [None, 0.2, 0.8, 0.1]}, irm.auc, None),
    ("null label", {"label": [None, 0, 1, 0]}, irm.logloss, (log_loss, "Unknown label type")),
    ("NaN label", {"label": [float("nan"), 0.0, 1.0, 0.0]}, irm.pr_auc, None),
    ("infinite rating", {"prediction": [float("inf"), 0.2, 0.8, 0.1]}, irm.rmse, None),
]


@pytest.mark.parametrize("frame", FRAMES)
@pytest.mark.parametrize(("case", "columns", "metric", "peer"), BAD_VALUES)
def test_prediction_expression_gives_nan_where_evaluate_refuses(
    frame: type, case: str, columns: dict, metric: object, peer: object
) -> None:
    data = {"label": [1, 0, 1, 0], "prediction": [0.9, 0.2, 0.8, 0.1], **columns}
    value = _one(frame(data), metric())  # type: ignore[operator]
    assert math.isnan(value), (case, value)
    name = metric.__name__  # type: ignore[attr-defined]
    with pytest.raises(irm.InvalidValueError, match=r"column '(label|prediction)' has [12] "):
        _collected(irm.evaluate(frame(data), [name], label="label", prediction="prediction"))
    if peer is not None:  # scikit-learn refuses the same rows
        function, said = peer  # type: ignore[misc]
        with pytest.raises(ValueError, match=said):
            function(data["label"], data["prediction"])


def test_prediction_expression_valid_groups_keep_their_values() -> None:
    # one bad group gives NaN, the other its scikit-learn value; a score outside
    # [0, 1] is valid for auc (it reads the order only)
    log = pl.DataFrame(
        {
            "g": ["a"] * 4 + ["b"] * 4,
            "label": [1, 0, 1, 0, 2, 0, 1, 0],
            "prediction": [3.0, 0.5, 0.5, -1.0, 0.9, 0.2, 0.8, 0.1],
        }
    )
    out = log.group_by("g").agg(irm.auc(), irm.brier()).sort("g")
    assert out["auc"][0] == roc_auc_score([1, 0, 1, 0], [3.0, 0.5, 0.5, -1.0])
    assert math.isnan(out["brier"][0])
    assert math.isnan(out["auc"][1])


# faiss' padding of a short list: id -1, distance 3.4028235e38 (a finite score)
PAD = -3.4028234663852886e38
PADDED = (
    "1 row(s) of {table} have doc_id -1 and a score of magnitude 3.4028235e+38 (float32's "
    "largest) or infinite (e.g. query 'q'): faiss' padding of a list shorter than k, no "
    "document; they are left out: {fate}. Drop them first to silence this, e.g. "
    ".filter(pl.col('doc_id') != -1)"
)
RUN_FATE = "each is a neighbour the index did not return, a miss (as a score of -inf)"
TRUTH_FATE = (
    "the query's n < k true neighbours stand for k (the n-th distance for the k-th), as "
    "for a corpus of fewer than k documents; read as documents, their distance was the "
    "k-th true one and every document of the run counted as found"
)


@pytest.mark.parametrize("frame", FRAMES)
def test_faiss_padding_is_left_out_and_said(frame: type) -> None:
    # exact search of a corpus of 2 vectors with k=3: faiss pads the third neighbour;
    # the approximate index found d0 and padded the rest. The true recall@3 is 1 of 2
    # (was 0.667: the padding's 3.4e38 read as the 3rd true distance, the run's own
    # padding within it)
    exact = frame({"query_id": ["q"] * 3, "doc_id": [0, 1, -1], "score": [0.0, -2.0, PAD]})
    approx = frame({"query_id": ["q", "q"], "doc_id": [0, -1], "score": [0.0, PAD]})
    metrics = ["neighbor_recall@3", "neighbor_recall_rel@3"]
    out, said = warned(lambda: irm.evaluate(approx, metrics, neighbors=exact))
    assert out.row(0) == (1, 0.5, 0.5)
    assert said == [
        PADDED.format(table="the run", fate=RUN_FATE),
        PADDED.format(table="neighbors=", fate=TRUTH_FATE),
    ]
    # the same lists without the padding: the same values, nothing said
    clean, quiet = warned(
        lambda: irm.evaluate(
            approx.filter(pl.col("doc_id") != -1), metrics, neighbors=exact.head(2)
        )
    )
    assert clean.row(0) == out.row(0)
    assert quiet == []


def _ab_log(arms: list[str]) -> pl.DataFrame:
    # 8 users, one session of one impression each: clicks 1, 0, 1, 1 in each half
    return pl.DataFrame(
        {
            "user_id": list(range(8)),
            "arm": arms,
            "session_id": list(range(8)),
            "position": [1] * 8,
            "clicked": [1, 0, 1, 1, 1, 0, 0, 1],
        }
    )


@pytest.mark.parametrize("frame", FRAMES)
@pytest.mark.parametrize(
    ("arms", "said"),
    [
        # a treatment spelt two ways: 'b' was compared with control 'A' as a third arm
        (
            ["A"] * 4 + ["B", "B", "b", "b"],
            "column 'arm' of the log holds arms 'B' and 'b', which are one arm once case "
            "is ignored: an arm spelt two ways is compared as two (its units split, one "
            "part tested against the other or against control 'A'); give each arm one "
            "spelling, e.g. pl.col('arm').str.to_lowercase() (and control= in that "
            "spelling), or, if they are two arms, name them apart",
        ),
        # the control spelt two ways: 'A ' was tested against 'A' as a treatment
        (
            ["A", "A", "A ", "A "] + ["B"] * 4,
            "column 'arm' of the log holds arms 'A' and 'A ', which are one arm once the "
            "spaces around the ids are ignored: an arm spelt two ways is compared as two "
            "(its units split, one part tested against the other or against control "
            "'A'); give each arm one spelling, e.g. pl.col('arm').str.strip_chars() (and "
            "control= in that spelling), or, if they are two arms, name them apart",
        ),
    ],
)
def test_ab_arms_spelt_apart_are_refused(frame: type, arms: list[str], said: str) -> None:
    log = frame(_ab_log(arms).to_dict())
    with pytest.raises(irm.InvalidValueError) as error:
        irm.ab_test(log, ["ctr@1"])
    assert str(error.value) == said
    # spelt as one: one comparison, B against A
    fixed = frame(_ab_log(["A"] * 4 + ["B"] * 4).to_dict())
    assert irm.ab_test(fixed, ["ctr@1"])["arm"].to_list() == ["B"]


# a session value irm.click_metric gave for a log evaluate_online refuses
CLICK_LOGS = [
    # a click of 2: counted twice (ctr@3 0.667 of 3 impressions, 2 clicked rows)
    (
        "ctr@3",
        {"clicked": [2, 0, 1]},
        "column 'clicked' of the log has 1 value(s) other than 0 and 1 in session 's'; a "
        "click is a flag: use True/False or 0/1",
    ),
    # a 0-based position: click_mrr inf
    (
        "click_mrr",
        {"position": [0, 1, 2]},
        "column 'position' of the log has 1 position(s) below 1 in session 's'; positions "
        "start at 1 for the top: add 1 to 0-based positions, e.g. pl.col('position') + 1",
    ),
    # a clicked impression without a position: skipped, the mean of the rest (3.0)
    (
        "mean_click_position",
        {"position": [None, 2, 3]},
        "session 's' has 1 click(s) on an impression that was not shown (a null "
        "'position'); a click needs the position it was shown at: fix the join of clicks "
        "to impressions, or drop those rows",
    ),
    # two impressions at one position
    (
        "clicks_per_session",
        {"position": [1, 1, 3]},
        "column 'position' of the log: session 's' shows 1 impression(s) at a position "
        "another impression holds; each position shows one item: keep one row per "
        "position, e.g. .unique(['session_id', 'position']); or, where two users "
        "share the session id 's' (ids that restart for each user), their impressions are one "
        "session here: give each user's sessions ids of their own, e.g. the user id joined "
        "onto the session id",
    ),
    # a negative dwell: a satisfied click rate of 1 click in 2
    (
        "sat_click_rate",
        {"dwell": [-5.0, 0.0, 40.0]},
        "column 'dwell' of the log has 1 negative value(s) in session 's'; a dwell is a "
        "duration in seconds, >= 0: fix or drop them",
    ),
]


@pytest.mark.parametrize("frame", FRAMES)
@pytest.mark.parametrize(("metric", "columns", "said"), CLICK_LOGS)
def test_click_metric_gives_nan_where_evaluate_online_refuses(
    frame: type, metric: str, columns: dict, said: str
) -> None:
    data = {
        "session_id": ["s"] * 3,
        "position": [1, 2, 3],
        "clicked": [1, 0, 1],
        "dwell": [40.0, 0.0, 10.0],
        **columns,
    }
    got = _collected(frame(data).group_by("session_id").agg(irm.click_metric(metric)))
    assert math.isnan(got[metric].item())
    with pytest.raises(irm.IrmError) as error:
        _collected(irm.evaluate_online(frame(data), [metric]))
    assert str(error.value) == said
    # the valid log keeps its value
    valid = {**data, "position": [1, 2, 3], "clicked": [1, 0, 1], "dwell": [40.0, 0.0, 10.0]}
    value = _collected(frame(valid).group_by("session_id").agg(irm.click_metric(metric)))
    assert not math.isnan(value[metric].item())
