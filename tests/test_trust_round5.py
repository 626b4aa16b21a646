"""The fifth trust pass: options the chosen statistics or fusion do not read are refused,
bad seeds and paths get the library's own errors, and fusion's tie rule holds for the
candidates a run does not retrieve."""

from __future__ import annotations

import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnTypeError, InvalidValueError


def _predictions(values: list[float]) -> pl.DataFrame:
    """Per-query values through the prediction route: mae of label 0 is the value."""
    return pl.DataFrame(
        {
            "query_id": [f"q{i}" for i in range(len(values))],
            "label": [0.0] * len(values),
            "prediction": values,
        }
    )


RUNS = {
    "a": _predictions([0.1, 0.5, 0.3, 0.9]),
    "b": _predictions([0.2, 0.1, 0.35, 0.4]),
    "c": _predictions([0.3, 0.2, 0.1, 0.5]),
}

SEED = "must be a whole number >= 0 (e.g. seed=0) or None (a fresh random draw each call)"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"test": "bootstrap", "seed": "abc"}, f"seed='abc' {SEED}"),
        ({"test": "bootstrap", "seed": -1}, f"seed=-1 {SEED}"),
        ({"test": "bootstrap", "seed": 1.5}, f"seed=1.5 {SEED}"),
        ({"test": "randomization", "seed": True}, f"seed=True {SEED}"),
        (
            {"test": "t", "n_resamples": 500},
            "n_resamples=500 is read by the resampling statistics (test='randomization' or "
            "'bootstrap', ci='bootstrap'), and test='t' with ci='t' reads none: drop "
            "n_resamples=, or choose one of them",
        ),
        (
            {"test": "wilcoxon", "seed": 5},
            "seed=5 is read by the resampling statistics (test='randomization' or "
            "'bootstrap', ci='bootstrap'), and test='wilcoxon' with ci='t' reads none: drop "
            "seed=, or choose one of them",
        ),
        (
            {"correction": None, "correction_scope": "metric"},
            "correction_scope='metric' says which p-values a correction adjusts together, "
            "and correction=None adjusts none: drop correction_scope=, or choose a "
            "correction (e.g. correction='holm')",
        ),
        (
            {"baseline": "b", "mode": "pairs"},
            "baseline='b' is not read by mode='pairs', which compares every pair of systems "
            "(the earlier of each pair in the baseline column): drop baseline=, or use "
            "mode='baseline'",
        ),
    ],
)
def test_compare_refuses_an_option_it_does_not_read(options: dict[str, Any], message: str) -> None:
    # before: a bad seed reached numpy (TypeError: SeedSequence expects int...), and
    # n_resamples=, seed=, correction_scope= and baseline= were silently ignored
    with pytest.raises(InvalidValueError) as caught:
        irm.compare(RUNS, "mae", **options)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    "options",
    [
        {"test": "bootstrap", "seed": None, "n_resamples": 200},
        {"test": "randomization", "seed": 3, "n_resamples": 200},
        {"test": "t", "ci": "bootstrap", "seed": 3, "n_resamples": 200},
        {"test": "t", "seed": 0, "n_resamples": 10_000},  # the defaults, given explicitly
        {"correction": None},
        {"baseline": "b", "mode": "baseline"},
    ],
)
def test_compare_takes_the_options_it_reads(options: dict[str, Any]) -> None:
    out = irm.compare(RUNS, "mae", **options)
    assert out.height in (2, 3)


def test_system_agreement_refuses_a_bad_seed_too() -> None:
    a = pl.DataFrame({"system": ["x", "y", "z"], "ndcg": [0.1, 0.2, 0.3]})
    with pytest.raises(InvalidValueError, match=r"^seed=-2 must be a whole number >= 0"):
        irm.system_agreement(a, a, metric="ndcg", seed=-2)


NULL_GROUP = (
    "column 'system' has {n} null value(s); every row needs its group (by= and systems= "
    "group the rows by it): drop them, e.g. .drop_nulls('system'), or fill them, e.g. "
    "pl.col('system').fill_null(...)"
)


@pytest.mark.parametrize(
    "options",
    [
        {"systems": "system"},
        {"by": "system"},
        {"by": "system", "buckets": 2},
        {"by": "system", "per_query": True},
    ],
)
def test_a_null_group_of_predictions_is_refused_as_the_ranking_metrics_refuse_it(
    options: dict[str, Any],
) -> None:
    # before: the rows without a system were scored as a system named null (and
    # irm.report of a comparison of them failed on its None name)
    table = pl.DataFrame(
        {
            "query_id": ["q1", "q2", "q1"],
            "label": [0.0, 1.0, 0.0],
            "prediction": [0.1, 0.2, 0.3],
            "system": [None, "x", "y"],
        }
    )
    with pytest.raises(InvalidValueError) as caught:
        irm.evaluate(table, ["mae", "auc"], **options)
    assert str(caught.value) == NULL_GROUP.format(n=1)


def test_compare_refuses_a_long_frame_row_without_a_system() -> None:
    named = RUNS["b"].with_columns(system=pl.lit("b"))
    unnamed = RUNS["a"].with_columns(system=pl.lit(None, pl.String))
    with pytest.raises(InvalidValueError) as caught:
        irm.compare(pl.concat([unnamed, named]), "mae")
    assert str(caught.value) == NULL_GROUP.format(n=4)


def _precision_runs(hits: list[int]) -> pl.DataFrame:
    """Five queries of ten ranked documents, the first ``hits[q]`` relevant."""
    return pl.DataFrame(
        {
            "query_id": [q for q in range(5) for _ in range(10)],
            "doc_id": [r if r < hits[q] else 100 + r for q in range(5) for r in range(10)],
            "rank": [r + 1 for _ in range(5) for r in range(10)],
        }
    )


def test_deltas_equal_but_for_rounding_have_no_effect_size() -> None:
    # b finds one more relevant document than a on every query: every P@10 delta is
    # 1/10, computed as 0.2 - 0.1, 0.3 - 0.2, ... (0.1, 0.09999999999999998,
    # 0.10000000000000003): d_z was about 3.6e15; deltas equal to the bit give NaN
    qrels = pl.DataFrame(
        {
            "query_id": [q for q in range(5) for _ in range(10)],
            "doc_id": [d for _ in range(5) for d in range(10)],
            "relevance": 1,
        }
    )
    runs = {"a": _precision_runs([1, 2, 3, 6, 4]), "b": _precision_runs([2, 3, 4, 7, 5])}
    row = irm.compare(runs, "P@10", qrels=qrels, baseline="a").row(0, named=True)
    assert row["effect_size"] != row["effect_size"]  # NaN
    assert row["ci_low"] == row["ci_high"] == row["delta"]
    # a spread above the rounding is kept: deltas 0.1 (four) and 0.2, mean 0.12,
    # sd = sqrt((4 * 0.02**2 + 0.08**2) / 4) = sqrt(0.002), d_z = 0.12 / sqrt(0.002)
    runs["b"] = _precision_runs([2, 3, 4, 7, 6])
    row = irm.compare(runs, "P@10", qrels=qrels, baseline="a").row(0, named=True)
    assert row["effect_size"] == pytest.approx(0.12 / 0.002**0.5, rel=1e-9)


def test_a_bootstrap_p_below_what_the_queries_allow_is_warned() -> None:
    # two queries, deltas 0.2 and 0.5: the centred deltas' resampled means never reach
    # the observed 0.35, so p was its floor 1 / (1 + 10_000) in silence (the t-test
    # gives 0.26, the exact randomization test 0.5)
    runs = {"a": _predictions([0.1, 0.2]), "b": _predictions([0.3, 0.7])}
    with pytest.warns(irm.errors.IrmWarning) as caught:
        out = irm.compare(runs, "mae", baseline="a", test="bootstrap")
    assert out["p_value"][0] == pytest.approx(1 / 10_001)
    assert str(caught[0].message) == (
        "test='bootstrap' gave 1 p-value(s) below 0.5, the smallest a sign-flip test of 2 "
        "paired queries can give: with so few queries the resampled means cannot reach "
        "the observed one, and the p-value is the resampling floor whatever the evidence; "
        "use test='randomization' (exact for so few queries) or test='t', or compare on "
        "more queries"
    )


def test_a_bootstrap_on_enough_queries_is_not_warned() -> None:
    low = [0.01 * i for i in range(20)]
    # deltas of some spread (0.5 to 0.52): deltas of one value are warned of (round 29)
    runs = {
        "a": _predictions(low),
        "b": _predictions([v + 0.5 + 0.01 * (i % 3) for i, v in enumerate(low)]),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error", irm.errors.IrmWarning)
        out = irm.compare(runs, "mae", baseline="a", test="bootstrap")
    assert out["p_value"][0] == pytest.approx(1 / 10_001)


@pytest.mark.parametrize(
    ("ranks", "labels", "want"),
    [
        # one relevant document at rank 2: an unknown document above it, 1 - 1/(1 x 1)
        ([2], [1], 0.0),
        # relevant at 1 and 6 of six positions: 4 others above the second, 1 - 4/(2 x 4)
        ([1, 4, 6], [1, 0, 1], 0.5),
        ([1, 5, 9], [1, 0, 1], 1.0 - 7 / (2 * 7)),  # 7 others above the second
        ([1, 2, 3], [1, 0, 1], 0.5),
    ],
)
def test_rocauc_reads_gapped_ranks_as_positions(
    ranks: list[int], labels: list[int], want: float
) -> None:
    # before: rows counted for the list's length and ranks for the documents above:
    # -inf for [2], -1.0 for [1, 4, 6], -2.5 for [1, 5, 9]. Now the judged table equals
    # the run that fills the gaps with unjudged documents
    judged = pl.DataFrame(
        {
            "query_id": "q",
            "doc_id": [f"d{i}" for i in range(len(ranks))],
            "rank": ranks,
            "relevance": labels,
        }
    )
    positions = range(1, max(ranks) + 1)
    filled = {r: f"d{i}" for i, r in enumerate(ranks)}
    run = pl.DataFrame(
        {"query_id": "q", "doc_id": [filled.get(r, f"x{r}") for r in positions], "rank": positions}
    )
    qrels = judged.select("query_id", "doc_id", "relevance")
    names = ["rocauc", "ncrr", "rocauc@3"]
    from_table = irm.evaluate(judged, names).select(names).row(0)
    from_run = irm.evaluate(run, names, qrels=qrels).select(names).row(0)
    assert from_table == from_run
    assert from_table[0] == pytest.approx(want, abs=1e-15)
    assert judged.select(irm.rocauc()).item() == from_table[0]


JUDGED = pl.DataFrame(
    {"query_id": "q", "doc_id": ["a", "b", "c"], "rank": [1, 2, 3], "relevance": [2, 1, 0]}
)


def test_an_expressions_relevance_level_is_in_its_name_as_evaluate_names_it() -> None:
    # before: irm.precision(3, relevance_level=2) was named 'precision@3', the name of
    # another metric (evaluate's precision@3 is 2/3 here, this one 1/3), and selecting
    # both failed on polars' DuplicateError
    got = JUDGED.select(irm.precision(3), irm.precision(3, relevance_level=2))
    want = irm.evaluate(JUDGED, ["precision@3", "precision(rel=2)@3"]).drop("num_q")
    assert got.columns == ["precision@3", "precision(rel=2)@3"]
    assert got.equals(want)
    assert got.row(0) == (2 / 3, 1 / 3)


@pytest.mark.parametrize("level", [float("nan"), "2"])
def test_a_relevance_level_that_is_not_a_number_is_refused_by_the_expressions(
    level: Any,
) -> None:
    # in its own name and class, as irm.evaluate(..., relevance_level=) refuses it (it
    # once named the metric parameter rel=, which the caller never passed)
    with pytest.raises(InvalidValueError) as caught:
        irm.precision(3, relevance_level=level)
    with pytest.raises(InvalidValueError) as evaluated:
        irm.evaluate(JUDGED, ["precision@3"], relevance_level=level)
    assert str(caught.value) == str(evaluated.value)
    assert str(caught.value).startswith("relevance_level")


def test_a_judged_tables_unscored_rows_are_not_listed_for_rectools_metrics() -> None:
    # a judged table ranked by score: rows without a score are judged, not retrieved.
    # RecTools' insufficient users and covered_users read the list's last position and
    # first one: counted from every row before (partial_auc exclude 1/3, not null; a
    # user with nothing retrieved covered), now as the run without those rows gives
    names = [
        "partial_auc(insufficient_handling='exclude')@2",
        "pap(insufficient_handling='exclude')@2",
        "covered_users@2",
    ]
    table = pl.DataFrame(
        {
            "query_id": ["q"] * 3 + ["r"] * 2,
            "doc_id": ["a", "b", "c", "a", "b"],
            "score": [1.5, None, None, None, None],
            "relevance": [1, 1, 1, 1, 0],
        }
    )
    run = table.filter(pl.col("score").is_not_null()).select("query_id", "doc_id", "score")
    qrels = table.select("query_id", "doc_id", "relevance")
    got = irm.evaluate(table, names, per_query=True)
    assert got.equals(irm.evaluate(run, names, qrels=qrels, per_query=True))
    assert got.rows() == [("q", None, None, 1.0), ("r", None, None, 0.0)]


@pytest.mark.parametrize(("ranks", "want"), [([1, 3, None], 0.5), ([1, 2, None], None)])
def test_the_partial_auc_expression_counts_a_skipped_rank_as_evaluate_does(
    ranks: list[int | None], want: float | None
) -> None:
    # c (relevant) is missing; k = 2: ranks 1, 3 leave two non-relevant positions (the
    # skipped 2 and b's 3), enough; ranks 1, 2 leave one, an insufficient user (null).
    # The expression counted rows (one non-relevant) and gave null for both
    judged = pl.DataFrame(
        {"query_id": "q", "doc_id": ["a", "b", "c"], "rank": ranks, "relevance": [1, 0, 1]}
    )
    name = "partial_auc(insufficient_handling='exclude')@2"
    got = judged.select(irm.partial_auc(2, insufficient_handling="exclude")).item()
    assert got == irm.evaluate(judged, [name])[name].item() == want


@pytest.mark.parametrize("ranks", [[1.0, 2.0, 3.0], [1.0, float("nan"), 2.0], [1.5, 2.0, 3.0]])
def test_a_float_rank_column_is_refused_by_the_expressions_as_by_evaluate(
    ranks: list[float],
) -> None:
    # before: the expressions ranked by floats (a NaN rank on a relevant document gave
    # ndcg 0.0 and mrr NaN) where evaluate refuses the dtype
    judged = pl.DataFrame(
        {"query_id": "q", "doc_id": ["a", "b", "c"], "rank": ranks, "relevance": [0, 2, 0]}
    )
    with pytest.raises(ColumnTypeError) as caught:
        judged.select(irm.ndcg(), irm.mrr())
    assert str(caught.value) == (
        "column 'rank' has dtype Float64; the metric reads its ranks (1 = top) from it, "
        "which must be an integer: where every value is a whole number, cast it, e.g. "
        "pl.col('rank').cast(pl.Int64) (a cast drops a fraction: 1.5 becomes 1; check "
        "(pl.col('rank') % 1 == 0).all() first)"
    )
    with pytest.raises(ColumnTypeError, match="must be an integer"):
        irm.evaluate(judged, ["ndcg", "mrr"])
