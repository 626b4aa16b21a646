"""Round 34 (fix34-h): a comparison's flags and p-values are read as they are only
where they are what irm.compare gives; the no-click warning says what it counts.

* A null ``significant`` was read as "not significant" by the reports and
  ``plot_significance_matrix`` (no marker, no word); a ``p_adjusted`` or ``p_value``
  outside [0, 1] (or NaN) was printed and drawn (``3.000*``, its colour clipped). Both
  are refused, the row named.
* ``ab_test`` counts one session per (arm, unit, session id), ``evaluate_online`` one
  per session id: one log gave "its 8 session(s)" and "its 7 session(s)" in the same
  words. Each now says its keys.
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.comparison.plot import plot_significance_matrix
from polars_irmetrics.comparison.report import render_report
from polars_irmetrics.errors import InvalidValueError
from tests.helpers import warned

RESULT = pl.DataFrame(
    {"metric": ["map"], "system": ["b"], "baseline": ["a"], "mean": [0.6],
     "baseline_mean": [0.5], "delta": [0.1], "p_value": [0.01], "p_adjusted": [0.01],
     "significant": [True], "higher_is_better": [True]}
)  # fmt: skip
_ROW = "on 1 row(s) (first: metric 'map', system 'b', baseline 'a')"
_FIX = "pass the frame irm.compare returned, or drop those rows"


def _null(reader: str) -> str:
    return (
        f"column 'significant' of result is null {_ROW}: {reader} would read it as not "
        f"significant (no marker, no word); {_FIX}"
    )


def _outside(column: str, shown: str, reader: str) -> str:
    return (
        f"column {column!r} of result is {shown} {_ROW}: a p-value is a probability, in "
        f"[0, 1]: no test gives this one, and {reader}'s markers would stand on it; {_FIX}"
    )


#: (id, the edit, null flag or p outside [0, 1], its column and value, the report's format)
_BAD: list[tuple[str, pl.Expr, str, tuple[str, ...], str]] = [
    ("null", pl.lit(None, pl.Boolean).alias("significant"), "null", (), "terminal"),
    ("nulls only", pl.lit(None).alias("significant"), "null", (), "markdown"),
    ("p_adjusted 3", pl.lit(3.0).alias("p_adjusted"), "range", ("p_adjusted", "3.0"), "latex"),
    ("p_value -0.1", pl.lit(-0.1).alias("p_value"), "range", ("p_value", "-0.1"), "terminal"),
    (
        "p_value NaN",
        pl.lit(float("nan")).alias("p_value"),
        "range",
        ("p_value", "nan"),
        "markdown",
    ),
]


@pytest.mark.parametrize(
    ("edit", "kind", "said", "fmt"), [c[1:] for c in _BAD], ids=[c[0] for c in _BAD]
)
def test_the_report_refuses_a_null_flag_or_no_p_value(
    edit: pl.Expr, kind: str, said: tuple[str, ...], fmt: Any
) -> None:
    message = _null("the report") if kind == "null" else _outside(*said, "the report")
    with pytest.raises(InvalidValueError) as caught:
        render_report(RESULT.with_columns(edit), fmt)
    assert str(caught.value) == message


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (pl.lit(None, pl.Boolean).alias("significant"), _null("the matrix")),
        (pl.lit(3.0).alias("p_adjusted"), _outside("p_adjusted", "3.0", "the matrix")),
    ],
    ids=["null", "p_adjusted 3"],
)
def test_the_matrix_refuses_a_null_flag_or_no_p_value(
    edit: pl.Expr, message: str, lazy: bool
) -> None:
    frame = RESULT.with_columns(edit)
    with pytest.raises(InvalidValueError) as caught:
        plot_significance_matrix(frame.lazy() if lazy else frame)
    assert str(caught.value) == message


#: session 's1' under two users of arm A: one session to evaluate_online (a session id),
#: two to ab_test (an arm, unit and session id); no click at all
LOG = pl.DataFrame(
    {"arm": ["A"] * 4 + ["B"] * 4, "user": ["u1", "u2", "u5", "u6", "u3", "u4", "u7", "u8"],
     "session_id": ["s1", "s1", "s2", "s3", "s4", "s5", "s6", "s7"],
     "position": [1, 2, 1, 1, 1, 1, 1, 1], "clicked": [False] * 8}
)  # fmt: skip


def _no_click(count: int, keys: str) -> str:
    return (
        f"column 'clicked' of the impression log has no click: every impression of its "
        f"{count} session(s) (one per {keys}) is unclicked, and is scored so (a click rate "
        "0, every session abandoned, no click position or dwell); a log without a click "
        "most often comes from a join of the clicks onto the impressions that matched "
        "nothing (ids or dtypes that differ): check the join, or ignore this warning if no "
        "one clicked"
    )


@pytest.mark.parametrize("lazy", [False, True])
def test_the_no_click_warning_names_what_a_session_is(lazy: bool) -> None:
    log = LOG.lazy() if lazy else LOG
    got, said = warned(lambda: irm.evaluate_online(log, ["ctr"]))
    assert (got.row(0), said) == ((7, 0.0), [_no_click(7, "'session_id'")])
    _, said = warned(lambda: irm.ab_test(log, ["ctr"], arm="arm", unit="user", control="A"))
    assert said == [_no_click(8, "'arm', 'user' and 'session_id'")]
