"""Round 18: rank agreement. system_agreement keeps an integer system column's type and
numeric order; RBO and the tie-aware correlations at a cutoff read whole tie groups;
tau_ap's ties are Urbano & Marrero's (no tie broken by document id)."""

from __future__ import annotations

import polars as pl
import pytest

import polars_irmetrics as irm


def _systems(names: list[object]) -> pl.DataFrame:
    # means: 2 -> 0.55, 10 -> 0.25, 3 -> 0.5 (the first name of each list below)
    means = [0.55, 0.25, 0.5]
    return pl.DataFrame(
        {
            "system": [n for n in names for _ in range(2)],
            "query_id": ["q1", "q2"] * 3,
            "ndcg": [v + d for v in means for d in (0.05, -0.05)],
        }
    )


@pytest.mark.parametrize(
    ("names_a", "names_b", "dtype", "pairs"),
    [
        # integers: numeric order 2 < 3 < 10, not the text order '10' < '2' < '3'
        ([2, 10, 3], [2, 10, 3], pl.Int64, [(2, 3), (2, 10), (3, 10)]),
        # (b's systems as text beside a's integers: refused since round 30, ids of two
        # kinds, tests/test_agreement_spelt_round30.py)
        # text stays text, sorted as text
        (["2", "10", "3"], ["2", "10", "3"], pl.String, [("10", "2"), ("10", "3"), ("2", "3")]),
    ],
)
def test_per_pair_keeps_the_system_type_and_order(
    names_a: list[object],
    names_b: list[object],
    dtype: pl.DataType,
    pairs: list[tuple[object, object]],
) -> None:
    out = irm.system_agreement(_systems(names_a), _systems(names_b), per_pair=True)
    assert out.schema["system"] == dtype
    assert out.schema["other"] == dtype
    assert list(zip(out["system"], out["other"], strict=True)) == pairs
    means = {2: 0.55, 10: 0.25, 3: 0.5}
    expected = [means[int(x)] - means[int(y)] for x, y in pairs]  # type: ignore[call-overload]
    assert out["delta_a"].to_list() == pytest.approx(expected, abs=1e-12)
    assert out["delta_b"].to_list() == pytest.approx(expected, abs=1e-12)


def _means(values: dict[object, float]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "system": [s for s in values for _ in range(2)],
            "query_id": ["q1", "q2"] * len(values),
            "ndcg": [v for v in values.values() for _ in range(2)],
        }
    )


@pytest.mark.parametrize(
    ("a", "b", "ties", "expected"),
    [
        # b ties its second and third systems under a's 3 > 2 > 1: tau_AP_a, as tau_ap@k's
        # (0.75: the mean of the two orders, 1.0 and 0.5), whichever names they have;
        # trectools' name tie-break read 2 before 10 (1.0) or, as text, 10 before 2 (0.5)
        ({1: 0.9, 2: 0.5, 10: 0.1}, {1: 0.9, 2: 0.4, 10: 0.4}, "a", 0.75),
        ({1: 0.9, 10: 0.5, 2: 0.1}, {1: 0.9, 10: 0.4, 2: 0.4}, "a", 0.75),
        # a (the truth) ties: no value; tau_AP_b reads it (symmetric: 0.75)
        ({1: 0.9, 2: 0.4, 10: 0.4}, {1: 0.9, 2: 0.5, 10: 0.1}, "a", None),
        ({1: 0.9, 2: 0.4, 10: 0.4}, {1: 0.9, 2: 0.5, 10: 0.1}, "b", 0.75),
        # no ties: Yilmaz's tau_AP, b's order 2, 1, 10 against 1, 2, 10: C = 0, 2:
        # 2/2 (0/1 + 2/2) - 1 = 0.0
        ({1: 0.9, 2: 0.5, 10: 0.1}, {1: 0.5, 2: 0.9, 10: 0.1}, "a", 0.0),
    ],
)
def test_system_tau_ap_reads_equal_means_as_ties(
    a: dict[object, float], b: dict[object, float], ties: str, expected: float | None
) -> None:
    out = irm.system_agreement(_means(a), _means(b), "tau_ap", ties=ties)  # type: ignore[arg-type]
    got = out["correlation"].item()
    if expected is None:
        assert got is None
    else:
        assert got == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"method": "tau_ap", "ties": "w"}, "ties='w' is not a treatment of equal means"),
        ({"method": "kendall", "ties": "b"}, "ties='b' is read by method='tau_ap' only"),
    ],
)
def test_system_ties_is_refused_where_not_read(kwargs: dict[str, str], message: str) -> None:
    frame = _means({1: 0.9, 2: 0.5})
    with pytest.raises(irm.InvalidValueError, match=message):
        irm.system_agreement(frame, frame, **kwargs)  # type: ignore[arg-type]


def test_a_system_only_one_result_holds_is_named() -> None:
    a, b = _systems([2, 10, 3]), _systems([2, 10, 4])
    with pytest.raises(irm.QuerySetError, match="system 3 is in one result and not the other"):
        irm.system_agreement(a, b)


_RUN = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "score": [2.0, 1.0, 1.0]})


@pytest.mark.parametrize("tied", ["b", "c"])
@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        # the run's group (b c) crosses position 2: kept whole, the run's prefix is
        # [a, (b c)] (l = 3) against S = [a, x] (s = 2), x = b or c alike (Corsi &
        # Urbano's rbo.py on these prefixes). ties='a': A_1 = 1, A_2 = (1 + 1/2)/2 =
        # 0.75, depth 3 seen X = 2 plus the extrapolated (3 - 2) A_2 = 0.75 (its L-only
        # document's contribution 1): A_3 = 2.75/3, tail (2 + 1 * 0.75)/3 p^4/(1 - p):
        # (0.1/0.9) (0.9 + 0.75 * 0.81 + 2.75/3 * 0.729 + 2.75/3 * 6.561) = 8.19/9 = 0.91
        ("rbo@2", 0.91),
        # ties='w': A_2 = 2 * 2/(2 + 3) = 0.8, A_3 = 2 (2 + 0.8) / (3 + 3) = 2.8/3,
        # tail (2 + 0.8)/3 p^4/(1 - p): (0.1/0.9)(0.9 + 0.648 + 2.8/3 * (0.729 + 6.561))
        # = (1.548 + 6.804)/9 = 0.928
        ("rbo(ties='w')@2", 0.928),
        # the shared documents a and x, ordered alike on both sides
        ("kendall_tau@2", 1.0),
        ("tau_ap@2", 1.0),
    ],
)
def test_a_tie_group_crossing_the_cutoff_is_kept_whole(
    tied: str, metric: str, expected: float
) -> None:
    # before: the cut kept c (the ids' order, descending as text: c before b), and
    # rbo@2 was 0.55 against [a, b] and 1.0 against [a, c]
    ref = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", tied], "score": [2.0, 1.0]})
    out = irm.evaluate(_RUN, [metric], reference=ref)
    assert out[metric].item() == pytest.approx(expected, abs=1e-12)


def test_the_positional_measures_still_cut_at_k() -> None:
    # jaccard@2 and overlap@2 read the first two positions (ties by id, descending as
    # text: a, c): against [a, c], both shared: jaccard 2/2, overlap 2/2
    ref = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "c"], "score": [2.0, 1.0]})
    out = irm.evaluate(_RUN, ["jaccard@2", "overlap@2", "rbo@2"], reference=ref)
    assert out.row(0) == (1, 1.0, 1.0, pytest.approx(0.91, abs=1e-12))


def _ranked(scores: dict[str, float]) -> pl.DataFrame:
    return pl.DataFrame(
        {"query_id": ["q"] * len(scores), "doc_id": list(scores), "score": list(scores.values())}
    )


@pytest.mark.parametrize(
    ("run", "ref", "metric", "expected"),
    [
        # the run ties b and c (p = 2, t = 2) under a > b > c: tau_AP_a (ircor's tauAP_a):
        # C(b) = C(c) = 1 (a above), S(2, 2) = (1/1 + 1/2)/2 = 0.75, each member of the
        # group W(2, 2) = (1/(2*2)) (1/2) = 1/8: 2/2 (0.75 + 0.75 + 1/8 + 1/8) - 1 = 0.75
        # (ids breaking the tie gave 0.5 or 1.0: b above c, or c above b)
        ({"a": 2.0, "b": 1.0, "c": 1.0}, {"a": 3.0, "b": 2.0, "c": 1.0}, "tau_ap", 0.75),
        ({"a": 2.0, "b": 1.0, "c": 1.0}, {"a": 3.0, "c": 2.0, "b": 1.0}, "tau_ap", 0.75),
        # tau_AP_b: the run's direction: b and c below a's group, each with a above it
        # on both sides: 2/2 (1/1 + 1/1) - 1 = 1; the reference's: b (p 2) has a above
        # in the run (1/1), c (p 3) has a but not b (tied) above: 1/2: 2/2 (1 + 0.5) - 1
        # = 0.5; the mean: 0.75
        ({"a": 2.0, "b": 1.0, "c": 1.0}, {"a": 3.0, "b": 2.0, "c": 1.0}, "tau_ap(ties='b')", 0.75),
        # a run that ties everything: every order alike, the expected tau_AP is 0
        ({"a": 1.0, "b": 1.0, "c": 1.0}, {"a": 3.0, "b": 2.0, "c": 1.0}, "tau_ap", 0.0),
        # ...which tau_AP_b cannot read (no document below the run's first group)
        ({"a": 1.0, "b": 1.0, "c": 1.0}, {"a": 3.0, "b": 2.0, "c": 1.0}, "tau_ap(ties='b')", None),
        # the truth ties b and c: tau_AP_a has no value (ircor refuses ties in x) ...
        ({"a": 3.0, "b": 2.0, "c": 1.0}, {"a": 2.0, "b": 1.0, "c": 1.0}, "tau_ap", None),
        # ... tau_AP_b is the same as with the roles swapped (symmetric): 0.75
        ({"a": 3.0, "b": 2.0, "c": 1.0}, {"a": 2.0, "b": 1.0, "c": 1.0}, "tau_ap(ties='b')", 0.75),
        # no ties: tau_AP_a is Yilmaz's tau_AP (trectools), the run b, a, c against a, b, c:
        # C(a) = 0, C(c) = 2: 2/2 (0/1 + 2/2) - 1 = 0.0; tau_AP_b the mean of that and
        # the reverse direction (a, b, c against b, a, c: also 0.0)
        ({"b": 3.0, "a": 2.0, "c": 1.0}, {"a": 3.0, "b": 2.0, "c": 1.0}, "tau_ap", 0.0),
        # run a, c, b, d against a, b, c, d: C(c) = 1, C(b) = 1, C(d) = 3:
        # 2/3 (1/1 + 1/2 + 3/3) - 1 = 2/3; reverse the same: tau_AP_b 2/3
        (
            {"a": 4.0, "c": 3.0, "b": 2.0, "d": 1.0},
            {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0},
            "tau_ap(ties='b')",
            2 / 3,
        ),
    ],
)
def test_tau_ap_reads_ties_as_urbano_and_marrero(
    run: dict[str, float], ref: dict[str, float], metric: str, expected: float | None
) -> None:
    out = irm.evaluate(_ranked(run), [metric], reference=_ranked(ref), per_query=True)
    got = out[metric].item()
    if expected is None:
        assert got is None
    else:
        assert got == pytest.approx(expected, abs=1e-12)


def test_tau_ap_refuses_an_unknown_ties() -> None:
    run = _ranked({"a": 2.0, "b": 1.0})
    with pytest.raises(irm.MetricParameterError, match="ties"):
        irm.evaluate(run, ["tau_ap(ties='w')"], reference=run)
