"""Round 31: a number past the exact range of its arithmetic is refused, never wrong.

rND's terms ``|k N - P i| / (i N)`` are whole numbers up to ``N**2``, exact in Float64
only while ``N**2 <= 2**53``; rRD's normaliser adds its dynamic programme's sums in
int64 parts that a ranking of about 900,000 documents could overflow. A ranking longer
than the measure scores exactly is refused, naming the measure, the query, its length,
the limit and the fix.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.exposure.rnd import rrd_normaliser
from polars_irmetrics.metrics import fairness


def _collect(out: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return out.collect() if isinstance(out, pl.LazyFrame) else out


def _too_long(name: str, query: str, length: int, limit: int, why: str) -> str:
    return re.escape(
        f"a ranking of query {query!r} holds {length:,} documents, more than the {limit:,} "
        f"{name} scores exactly ({why}): cut the run, e.g. keep the top {limit:,} of each "
        f"query (a cutoff), or leave {name} out"
    )


_WHY = {
    "rnd": "its terms |k N - P i| / (i N) hold whole numbers up to N**2, exact in Float64 "
    "only up to 2**53",
    "rrd": "its normaliser's dynamic programme adds its sums in 64-bit parts, which a "
    "longer ranking could overflow",
}


def test_the_limits_are_the_exact_ranges() -> None:
    # rnd: N**2 <= 2**53, the next length past it; rrd: every term at most N - 1,
    # weighted 1/log2(i), in units of 2**-32 within int64 (a carry beside)
    rnd, rrd = fairness.SEGREGATION_LENGTH["rnd"], fairness.SEGREGATION_LENGTH["rrd"]
    assert rnd**2 <= 2**53 < (rnd + 1) ** 2
    bound = (rrd - 1) * math.fsum(1 / math.log2(i) for i in range(10, rrd + 1, 10))
    assert bound * 2**32 + 2**33 < 2**63


def test_a_ranking_longer_than_rrd_scores_exactly_is_refused() -> None:
    # 500,001 documents, all but one protected: on main the programme ran (about a
    # minute here) and gave a value; a longer one could overflow its int64 sums
    n = 500_001
    run = pl.DataFrame(
        {
            "query_id": "q",
            "doc_id": pl.int_range(n, eager=True),
            "rank": pl.int_range(1, n + 1, eager=True),
        }
    )
    groups = pl.DataFrame(
        {"doc_id": pl.int_range(n, eager=True), "group": ["b"] + ["a"] * (n - 1)}
    )
    message = _too_long("rrd", "q", n, 500_000, _WHY["rrd"])
    with pytest.raises(InvalidValueError, match=message):
        _collect(irm.evaluate(run, ["rnd", "rrd(protected='a')"], groups=groups))
    with pytest.raises(InvalidValueError, match="at most 500,000 documents exactly"):
        rrd_normaliser(np.array([n]), np.array([n - 1]))


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("name", ["rnd", "rrd"])
def test_each_limit_names_its_measure(
    monkeypatch: pytest.MonkeyPatch, lazy: bool, name: str
) -> None:
    # the limit lowered to 15: query 'r' of 20 documents is refused, 'q' of 12 is not
    monkeypatch.setitem(fairness.SEGREGATION_LENGTH, name, 15)
    run = pl.DataFrame(
        {
            "query_id": ["q"] * 12 + ["r"] * 20,
            "doc_id": [*range(12), *range(20)],
            "rank": [*range(1, 13), *range(1, 21)],
        }
    )
    groups = pl.DataFrame({"doc_id": range(20), "group": ["a", "b"] * 10})
    if lazy:
        run, groups = run.lazy(), groups.lazy()  # type: ignore[assignment]
    with pytest.raises(InvalidValueError, match=_too_long(name, "r", 20, 15, _WHY[name])):
        _collect(irm.evaluate(run, ["rkl", name], groups=groups))
    # rkl forms no such product: no limit
    assert _collect(irm.evaluate(run, ["rkl"], groups=groups)).height == 1


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("dtype", [pl.Int64(), pl.Decimal(20, 0)])
def test_an_integer_timestamp_beyond_2_53_is_refused(lazy: bool, dtype: pl.DataType) -> None:
    # nanoseconds since the epoch as Int64 (or a Decimal of 20 digits), 100 apart: read
    # as seconds in Float64 they merged (time_to_first_click 0.0); as a Datetime they
    # are exact
    log = pl.DataFrame(
        {
            "session_id": ["s", "s", "t", "t"],
            "position": [1, 2, 1, 2],
            "clicked": [False, True, True, False],
            "timestamp": [5, 7, 2**53 + 1, 2**53 + 101],
        }
    ).with_columns(pl.col("timestamp").cast(dtype))
    frame = log.lazy() if lazy else log
    message = re.escape(
        "column 'timestamp' of the log has 2 integer(s) of magnitude 2**53 or more in "
        "session 't'; a numeric timestamp is read as seconds, in Float64, where integers "
        "beyond 2**53 merge with their neighbours (nanoseconds since the epoch?): convert "
        "it to a Datetime, read exactly, e.g. pl.from_epoch(pl.col('timestamp').cast(pl.Int64), "
        "time_unit='ns')"
    )
    with pytest.raises(InvalidValueError, match=message):
        _collect(irm.evaluate_online(frame, ["time_to_first_click"], per_session=True))
    fixed = frame.with_columns(pl.from_epoch(pl.col("timestamp").cast(pl.Int64), time_unit="ns"))
    out = _collect(irm.evaluate_online(fixed, ["time_to_first_click"], per_session=True))
    assert out.sort("session_id")["time_to_first_click"].to_list() == [2e-9, 0.0]


@pytest.mark.parametrize("lazy", [False, True])
def test_a_decimal_float64_rounds_is_refused_by_system_agreement(lazy: bool) -> None:
    # x above y above z on both queries, by 1e-20: as Float64 the three means tied and
    # every correlation came back null; an integer beyond 2**53 was refused already
    values = [Decimal("0.30000000000000000002"), Decimal("0.30000000000000000001"), Decimal("0.3")]
    a = pl.DataFrame(
        {
            "system": ["x", "y", "z"] * 2,
            "query_id": ["q"] * 3 + ["r"] * 3,
            "v": pl.Series(values * 2, dtype=pl.Decimal(30, 20)),
        }
    )
    b = a.with_columns(pl.Series("v", [3.0, 2.0, 1.0] * 2))
    first = a.lazy() if lazy else a
    message = re.escape(
        "a has 'v' 0.30000000000000000002 for system 'x' on query 'q', a decimal that "
        "float64 (the means and tests) rounds: decimals that differ by less than float64's "
        "spacing there would read as equal, their systems as tied; subtract a common "
        "offset, or cast the column to accept the rounding, e.g. pl.col('v').cast(pl.Float64)"
    )
    with pytest.raises(InvalidValueError, match=message):
        irm.system_agreement(first, b, higher_is_better=True, higher_is_better_b=True)
    # a decimal float64 gives back is read as before: the offset subtracted
    shifted = a.with_columns(pl.col("v") - Decimal("0.3"))
    out = irm.system_agreement(
        shifted.lazy() if lazy else shifted, b, higher_is_better=True, higher_is_better_b=True
    )
    assert out["correlation"].to_list() == [1.0]


@pytest.mark.parametrize("lazy", [False, True])
def test_a_decimal_label_is_compared_with_the_level_exactly(lazy: bool) -> None:
    # 'a' (0.99999999999999999999) is below the level 1, 'b' (1) at it: as Float64
    # 'a' read as 1.0 and counted relevant (P@1, AP and bpref 1.0)
    labels = pl.Series([Decimal("0.99999999999999999999"), Decimal("1")], dtype=pl.Decimal(30, 20))
    run = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    qrels = run.select("query_id", "doc_id", labels.alias("relevance"))
    judged = qrels.with_columns(rank=pl.Series([1, 2]))
    if lazy:
        run, qrels, judged = run.lazy(), qrels.lazy(), judged.lazy()  # type: ignore[assignment]
    out = _collect(irm.evaluate(run, ["P@1", "map", "bpref"], qrels=qrels))
    assert out.select("P@1", "map", "bpref").row(0) == (0.0, 0.5, 0.0)
    table = _collect(judged.group_by("query_id").agg(irm.precision(k=1), irm.map()))
    assert table.select("precision@1", "map").row(0) == (0.0, 0.5)
