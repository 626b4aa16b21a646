"""Round 11 of the online wing: four inputs that were ignored, counted or refused with
another library's words.

* ``dwell_threshold=`` of ``click_mrr``, ``click_ndcg`` and ``click_precision`` is read
  only with ``signal='satisfied'``; given without it, it changed nothing
  (``click_mrr(dwell_threshold=10)`` was plain ``click_mrr``). It is refused when the
  name is parsed, at every door (``evaluate_online``, ``evaluate``, ``ab_test``,
  ``click_metric``, ``irm evaluate``); the satisfied signal's default (30 s) is kept.
* A ``converted`` value other than 0 and 1 (-5, 2) counted as a conversion
  (``conversion_rate`` 1.0); it is refused as the same value of ``clicked`` is, in
  ``evaluate_online`` and ``ab_test`` alike.
* ``evaluate_online(log, ["ctr"], by=3)`` was Python's TypeError ("'int' object is not
  iterable"); it is ``evaluate``'s refusal of that ``by``.
* ``irm evaluate`` on an impression log without its rank column suggested
  ``--position`` (the slot of an off-policy log, no position of an impression) for
  ``evaluate_online``'s ``position=``; the hint now names that keyword in its call.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnNotFoundError, InvalidValueError, MetricParameterError

from .helpers import irm_in_process


def _log(**columns: list[Any]) -> pl.DataFrame:
    """Two sessions of two impressions: s1 clicks position 2 (dwell 20), s2 position 1
    (dwell 40); arms A and B, one user each."""
    base: dict[str, list[Any]] = {
        "arm": ["A", "A", "B", "B"],
        "user_id": ["u1", "u1", "u2", "u2"],
        "session_id": ["s1", "s1", "s2", "s2"],
        "position": [1, 2, 1, 2],
        "clicked": [0, 1, 1, 0],
        "dwell": [0.0, 20.0, 40.0, 0.0],
    }
    return pl.DataFrame(base | columns)


def _collect(out: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return out.collect() if isinstance(out, pl.LazyFrame) else out


def _only(metric: str, dwell: object) -> str:
    return (
        f"dwell_threshold={dwell!r} applies only with signal='satisfied' (a click counts "
        f"whatever its dwell otherwise); add it, e.g. {metric}(signal='satisfied',"
        f"dwell_threshold={dwell!r}), or drop dwell_threshold"
    )


# ------------------------------------------------------------------ dwell_threshold
IGNORED_DWELL = [
    ("click_mrr(dwell_threshold=10)", "click_mrr", 10),
    ("click_precision(dwell_threshold=99)@2", "click_precision", 99),
    ("click_mrr(signal='click',dwell_threshold=10)", "click_mrr", 10),
    ("click_ndcg(signal='click', dwell_threshold=30)@2", "click_ndcg", 30),
    ("click_rr(dwell_threshold=0.5)", "click_mrr", 0.5),
]


@pytest.mark.parametrize(("name", "metric", "dwell"), IGNORED_DWELL)
@pytest.mark.parametrize("lazy", [False, True])
def test_dwell_threshold_without_the_satisfied_signal_is_refused(
    name: str, metric: str, dwell: object, lazy: bool
) -> None:
    log = _log().lazy() if lazy else _log()
    shown = repr(name)
    message = f"metric {shown}: {_only(metric, dwell)}"
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.evaluate_online(log, [name])
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.evaluate(log, [name], query_id="session_id", rank="position")
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.ab_test(log, [name])
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.click_metric(name)


def test_the_satisfied_signal_keeps_its_threshold_and_its_default() -> None:
    """s1's click has dwell 20, s2's 40: with the default 30 s only s2's is satisfied
    (MRR (0 + 1) / 2); with 10 s both are (1/2 + 1) / 2; an explicit 30 is the default."""
    log = _log()
    values = irm.evaluate_online(
        log,
        [
            "click_mrr",
            "click_mrr(signal='satisfied')",
            "click_mrr(signal='satisfied',dwell_threshold=10)",
            "click_mrr(signal='satisfied',dwell_threshold=30)",
            "click_precision(signal='satisfied', dwell_threshold=10)@2",
        ],
    ).row(0)
    assert values == (2, 0.75, 0.5, 0.75, 0.5, 0.5)


def test_a_negative_dwell_threshold_of_the_satisfied_signal_is_still_refused() -> None:
    name = "click_ndcg(signal='satisfied',dwell_threshold=-1)@2"
    message = (
        f"metric {name!r}: dwell_threshold must be a number of seconds >= 0, got -1, "
        "e.g. sat_click_rate(dwell_threshold=30)"
    )
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.evaluate_online(_log(), [name])


def test_irm_evaluate_refuses_an_ignored_dwell_threshold(tmp_path: Path) -> None:
    _log().write_parquet(tmp_path / "log.parquet")
    name = "click_mrr(dwell_threshold=10)"
    done = irm_in_process(
        "evaluate", "log.parquet", "-m", name, "--query-id", "session_id", "--rank", "position",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == f"irm: error: metric {name!r}: {_only('click_mrr', 10)}\n"


# ------------------------------------------------------------------ converted
BAD_CONVERTED = [
    ("negative", [0, -5, 0, 0]),
    ("two", [2, 0, 0, 0]),
]
CONVERTED_MESSAGE = (
    "column 'converted' of the log has 1 value(s) other than 0 and 1 in session 's1'{where}; "
    "a conversion is a flag: use True/False or 0/1"
)


@pytest.mark.parametrize(("case", "converted"), BAD_CONVERTED, ids=[c for c, _ in BAD_CONVERTED])
@pytest.mark.parametrize("lazy", [False, True])
def test_a_conversion_other_than_0_and_1_is_refused(
    case: str, converted: list[int], lazy: bool
) -> None:
    frame = _log(converted=converted)
    log = frame.lazy() if lazy else frame
    message = CONVERTED_MESSAGE.format(where="")
    for per_session in (False, True):
        with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
            _collect(irm.evaluate_online(log, ["conversion_rate"], per_session=per_session))
    # the check reads the column whatever else is asked beside it
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate_online(frame, ["ctr", "conversion_rate", "click_mrr"])
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(frame, ["conversion_rate"], query_id="session_id", rank="position")
    in_ab = CONVERTED_MESSAGE.format(where=" (arm='A', user_id='u1')")
    with pytest.raises(InvalidValueError, match=f"^{re.escape(in_ab)}$"):
        _collect(irm.ab_test(log, ["conversion_rate"]))


def test_conversions_of_0_and_1_and_booleans_are_counted() -> None:
    ints = _log(converted=[0, 1, 0, 0])
    flags = _log(converted=[False, True, False, False])
    for log in (ints, flags):
        assert irm.evaluate_online(log, ["conversion_rate"])["conversion_rate"].item() == 0.5
    # a conversion column no asked metric reads is not checked (its values are nobody's)
    assert irm.evaluate_online(_log(converted=[0, 7, 0, 0]), ["ctr"])["ctr"].item() == 0.5


# ------------------------------------------------------------------ by=
@pytest.mark.parametrize("by", [3, 2.5, [3], ["arm", 3]], ids=str)
@pytest.mark.parametrize("lazy", [False, True])
def test_a_by_that_is_no_column_name_is_refused_as_evaluate_refuses_it(
    by: Any, lazy: bool
) -> None:
    log = _log().lazy() if lazy else _log()
    message = f"by must be a column name or a list of column names, got {by!r}"
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        _collect(irm.evaluate_online(log, ["ctr"], by=by))
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        _collect(irm.evaluate(log, ["ctr"], query_id="session_id", rank="position", by=by))


# ------------------------------------------------------------------ irm evaluate's hint
HINT = (
    "column 'rank' not found in the log (its columns: 'arm', 'user_id', 'session_id', "
    "'pos', 'clicked', 'dwell'); an impression log's sessions are the queries: name your "
    "columns, e.g. {query_id}, {rank}, {clicked}"
)


def test_the_missing_rank_hint_names_real_flags(tmp_path: Path) -> None:
    log = _log().rename({"position": "pos"})
    log.write_parquet(tmp_path / "log.parquet")
    done = irm_in_process(
        "evaluate", "log.parquet", "-m", "ctr@2", "--query-id", "session_id", cwd=tmp_path
    )
    message = HINT.format(
        query_id="--query-id session_id", rank="--rank position", clicked="--clicked click"
    )
    assert (done.returncode, done.stderr) == (2, f"irm: error: log.parquet: {message}\n")
    assert "--position" not in done.stderr
    python = HINT.format(
        query_id="query_id='session_id'", rank="rank='position'", clicked="clicked='click'"
    ) + (" (irm.evaluate_online(log, metrics, session_id=..., position=...) for the first two)")
    with pytest.raises(ColumnNotFoundError, match=f"^{re.escape(python)}$"):
        irm.evaluate(log, ["ctr@2"], query_id="session_id")
