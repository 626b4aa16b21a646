"""Round 15 of the online, prediction and vector wings: group keys named as a column of
the result.

* ``ab_test(log, ..., by=key)`` with a key named as a column of its result: ``metric``,
  ``arm`` (an arm column named otherwise) or ``units`` was polars' DuplicateError;
  ``p_value``, ``control``, ``mean``, ``warnings``... replaced the key's values with the
  statistic's in silence (every segment's label lost). Such a key is refused, naming it
  and the fix, as ``evaluate`` refuses ``by='num_q'`` for ranking metrics. An arm column
  named ``metric`` or ``units``, or a key named ``n`` or ``order``, met the test's own
  working columns (polars' DuplicateError): those are internal names now.
* ``interleaving_test(log, by=key)``: ``team_a``, ``sessions``, ``wins_a``... were
  polars' DuplicateError, ``p_value``, ``preference`` and ``preferred`` replaced the
  key in silence; refused alike (a key named ``credit_a`` is a plain key now).
* ``evaluate`` / ``evaluate_online`` of click metrics (``by='ctr'``, ``by='num_sessions'``),
  prediction metrics (``by='auc'``, ``systems='num_rows'``, ``by='gauc_one_class'``) and
  neighbour recall (``by='num_q'``) were polars' DuplicateError; refused as the ranking
  metrics' keys are.
* ``ab_test`` of an empty log said the control arm is not in the log (its arms: none)
  and to name it with ``control=``; it says the log has no rows, as
  ``interleaving_test`` does.
* ``ab_test``'s ``alpha``, ``srm_alpha`` and ``split`` shares refused numpy's numbers
  (``np.float32(0.1)``, ``np.int64(3)``); they are read as the Python numbers they equal.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

from .helpers import irm_in_process


def _refused(option: str, key: str, shown: str, table: str) -> str:
    return (
        f"{option}=[{key!r}] names {key!r}, which is also a column of the result ({shown}); "
        f"rename the key first, e.g. {table}.rename({{{key!r}: {key + '_key'!r}}}), and "
        f"pass {option}={key + '_key'!r}"
    )


def _ab_log(**renamed: str) -> pl.DataFrame:
    """Two arms of three users, two sessions each (days d1 and d2) of three impressions."""
    rng = np.random.default_rng(0)
    rows = [
        (arm, f"{arm}{u}", f"{arm}{u}_{s}", p, bool(rng.random() < 0.4), f"d{s + 1}")
        for arm in "AB"
        for u in range(3)
        for s in range(2)
        for p in range(1, 4)
    ]
    schema = ["arm", "user_id", "session_id", "position", "clicked", "day"]
    return pl.DataFrame(rows, schema=schema, orient="row").rename(renamed)


_AB = "'metric', 'arm', 'control', 'method', ..."


@pytest.mark.parametrize(
    ("key", "renamed"),
    [
        ("metric", {}),  # polars' DuplicateError
        ("units", {}),  # polars' DuplicateError
        ("arm", {"arm": "variant"}),  # polars' DuplicateError
        ("p_value", {}),  # the segments' labels replaced by the p-values
        ("control", {}),  # replaced by the control arm's name
        ("warnings", {}),
    ],
)
def test_ab_test_refuses_a_segment_key_named_as_a_result_column(
    key: str, renamed: dict[str, str]
) -> None:
    log = _ab_log(**renamed).with_columns(pl.col("day").alias(key))
    arm = renamed.get("arm", "arm")
    with pytest.raises(InvalidValueError, match=f"^{re.escape(_refused('by', key, _AB, 'log'))}$"):
        irm.ab_test(log, ["ctr", "abandonment"], by=key, arm=arm)


def test_irm_ab_refuses_a_segment_key_named_as_a_result_column(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    _ab_log().rename({"day": "p_value"}).write_csv(path)
    done = irm_in_process("ab", str(path), "-m", "ctr", "--by", "p_value")
    assert (done.returncode, done.stdout) == (2, "")
    message = (
        "--by p_value names 'p_value', which is also a column of the result "
        f"({_AB}); rename the key first, e.g. log.rename({{'p_value': 'p_value_key'}}), "
        "and pass --by p_value_key"
    )
    assert done.stderr == f"irm: error: {path}: {message}\n"


@pytest.mark.parametrize(
    ("renamed", "by"),
    [
        ({"arm": "metric"}, None),  # the arm column beside the metric's name
        ({"arm": "units"}, None),  # beside the units per arm
        ({"day": "n"}, "n"),  # a key beside the moments
        ({"day": "order"}, "order"),  # beside the metrics' order
    ],
)
def test_ab_test_reads_columns_named_as_its_working_columns(
    renamed: dict[str, str], by: str | None
) -> None:
    """The same numbers as under the plain names (polars' DuplicateError before)."""
    arm = renamed.get("arm", "arm")
    reference = irm.ab_test(_ab_log(), ["ctr", "abandonment"], by="day" if by else None)
    out = irm.ab_test(_ab_log(**renamed), ["ctr", "abandonment"], arm=arm, by=by)
    if by:
        reference = reference.rename({"day": by})
    assert out.equals(reference)


def _interleaving_log(key: str) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "session_id": ["s1", "s1", "s2", "s2"],
            "position": [1, 2, 1, 2],
            "team": ["A", "B", "B", "A"],
            "clicked": [1, 0, 1, 0],
            key: ["d"] * 4,
        }
    )


@pytest.mark.parametrize("key", ["team_a", "sessions", "wins_a", "ties", "p_value", "preferred"])
@pytest.mark.parametrize("lazy", [False, True])
def test_interleaving_test_refuses_a_segment_key_named_as_a_result_column(
    key: str, lazy: bool
) -> None:
    log = _interleaving_log(key)
    shown = "'team_a', 'team_b', 'sessions', 'no_click', ..."
    with pytest.raises(
        InvalidValueError, match=f"^{re.escape(_refused('by', key, shown, 'log'))}$"
    ):
        irm.interleaving_test(log.lazy() if lazy else log, by=key)


def test_interleaving_test_reads_a_segment_key_named_as_its_working_columns() -> None:
    out = irm.interleaving_test(_interleaving_log("credit_a"), by="credit_a")
    assert out.select("credit_a", "wins_a", "wins_b").rows() == [("d", 1, 1)]


_CLICKS = pl.DataFrame(
    {"session_id": ["a", "a"], "position": [1, 2], "clicked": [1, 0], "day": ["d", "d"]}
)
_PREDICTIONS = pl.DataFrame(
    {"query_id": [1, 1, 2, 2], "y": [0, 1, 1, 0], "p": [0.1, 0.9, 0.8, 0.3], "day": ["d"] * 4}
)


@pytest.mark.parametrize(
    ("key", "per_session", "shown"),
    [
        ("ctr", False, "'num_sessions', 'ctr', 'abandonment'"),
        ("ctr", True, "'ctr', 'abandonment'"),
        ("num_sessions", False, "'num_sessions', 'ctr', 'abandonment'"),
    ],
)
@pytest.mark.parametrize("lazy", [False, True])
def test_evaluate_online_refuses_a_segment_key_named_as_a_result_column(
    key: str, per_session: bool, shown: str, lazy: bool
) -> None:
    log = _CLICKS.rename({"day": key})
    with pytest.raises(
        InvalidValueError, match=f"^{re.escape(_refused('by', key, shown, 'log'))}$"
    ):
        irm.evaluate_online(
            log.lazy() if lazy else log, ["ctr", "abandonment"], by=key, per_session=per_session
        )


def test_evaluate_online_keeps_a_key_named_num_sessions_per_session() -> None:
    """Per session the result has no ``num_sessions`` column: the key is no clash."""
    out = irm.evaluate_online(_CLICKS.rename({"day": "num_sessions"}), ["ctr"], by="num_sessions",
                              per_session=True)  # fmt: skip
    assert out.rows() == [("d", "a", 0.5)]


@pytest.mark.parametrize(
    ("option", "key", "per_query", "shown"),
    [
        ("by", "auc", False, "'num_rows', 'auc', 'gauc', 'gauc_one_class'"),
        ("by", "auc", True, "'num_rows', 'auc', 'gauc'"),
        ("by", "gauc_one_class", False, "'num_rows', 'auc', 'gauc', 'gauc_one_class'"),
        ("systems", "num_rows", False, "'num_rows', 'auc', 'gauc', 'gauc_one_class'"),
    ],
)
def test_evaluate_prediction_refuses_a_group_key_named_as_a_result_column(
    option: str, key: str, per_query: bool, shown: str
) -> None:
    table = _PREDICTIONS.rename({"day": key})
    with pytest.raises(
        InvalidValueError, match=f"^{re.escape(_refused(option, key, shown, 'predictions'))}$"
    ):
        irm.evaluate(
            table, ["auc", "gauc"], label="y", prediction="p", per_query=per_query,
            **{option: key},
        )  # fmt: skip


def test_evaluate_prediction_keeps_a_key_named_one_class_per_query() -> None:
    table = _PREDICTIONS.rename({"day": "gauc_one_class"})
    out = irm.evaluate(table, ["gauc"], label="y", prediction="p", per_query=True,
                       by="gauc_one_class")  # fmt: skip
    assert out.columns == ["gauc_one_class", "query_id", "num_rows", "gauc"]


@pytest.mark.parametrize(("key", "per_query"), [("num_q", False), ("neighbor_recall@2", True)])
def test_neighbour_recall_refuses_a_segment_key_named_as_a_result_column(
    key: str, per_query: bool
) -> None:
    exact = pl.DataFrame(
        {"query_id": ["q"] * 2, "doc_id": ["d1", "d2"], "score": [-0.1, -0.2], key: ["x"] * 2}
    )
    shown = "'neighbor_recall@2'" if per_query else "'num_q', 'neighbor_recall@2'"
    with pytest.raises(
        InvalidValueError, match=f"^{re.escape(_refused('by', key, shown, 'run'))}$"
    ):
        irm.evaluate(exact, ["neighbor_recall@2"], neighbors=exact, by=key, per_query=per_query)


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("by", [None, "day"])
def test_ab_test_names_an_empty_log(lazy: bool, by: str | None) -> None:
    """An empty log was 'control arm 'A' is not in column 'arm' of the log (its arms:
    none); name the control arm with control=...': a fix that cannot help."""
    log = _ab_log().clear()
    message = (
        "the log has no rows; ab_test needs one row per impression (its 'arm', 'user_id', "
        "'session_id', 'position' and 'clicked'): check the log, or the filter that emptied it"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.ab_test(log.lazy() if lazy else log, ["ctr"], by=by)


@pytest.mark.parametrize(
    ("given", "plain"),
    [
        ({"alpha": np.float32(0.1)}, {"alpha": float(np.float32(0.1))}),
        ({"srm_alpha": np.float32(0.01)}, {"srm_alpha": float(np.float32(0.01))}),
        ({"split": {"A": np.int64(3), "B": np.int64(1)}}, {"split": {"A": 3, "B": 1}}),
        ({"split": {"A": np.float32(0.5), "B": np.float32(0.5)}}, {"split": {"A": 0.5, "B": 0.5}}),
    ],
)
def test_ab_test_reads_numpy_numbers_as_python_numbers(
    given: dict[str, Any], plain: dict[str, Any]
) -> None:
    """``alpha=np.float32(0.1)`` was 'alpha must be a number in (0, 1), e.g. 0.05; got
    np.float32(0.1)', a share np.int64(3) 'must be a positive, finite share' (a split
    built with numpy): the options take numpy's numbers as the library's others do."""
    log = _ab_log()
    assert irm.ab_test(log, ["ctr"], **given).equals(irm.ab_test(log, ["ctr"], **plain))


# ab_test(log, ['session_ctr', 'session_click_rate']) tested one metric twice and
# counted both tests in Holm's family (every adjusted p-value raised in silence), as
# compare with correction_scope='all' did before 9101369; without a correction no
# number changes, so the two spellings are two equal rows.
def test_ab_test_refuses_two_spellings_of_one_metric_under_a_correction() -> None:
    message = (
        "metrics 'session_ctr' and 'session_click_rate' are one metric, 'session_ctr', "
        "listed twice: ab_test would test it twice and count both tests in the family "
        "that correction='holm' adjusts, raising every adjusted p-value; list it once"
    )
    with pytest.raises(irm.MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.ab_test(_ab_log(), ["session_ctr", "abandonment", "session_click_rate"])
    out = irm.ab_test(_ab_log(), ["session_ctr", "session_click_rate"], correction=None)
    assert out["p_value"][0] == out["p_value"][1]
    assert out["p_adjusted"].to_list() == out["p_value"].to_list()
