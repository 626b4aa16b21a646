"""Agreement and comparison statistics, round 19: nulls and untestable results said.

* :func:`~polars_irmetrics.system_agreement` left its correlation null (one result's
  system means all equal; ``tau_ap`` with ``ties='a'`` against tied means in ``a``)
  and Spearman's p-value of two systems null, in silence: an
  :class:`~polars_irmetrics.errors.IrmWarning` now names the cause and the fix.
* ``kendall_tau``, ``tau_ap`` and ``ktu`` per query are null where the run and the
  reference share fewer than two documents (or one side has no ranking of the query),
  and left out of the mean in silence (the ties' nulls were warned of, these not): one
  warning per call now counts them, on every path (a DataFrame, a LazyFrame, buckets=).
"""

from __future__ import annotations

import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import IrmWarning

from .helpers import engine_io


def _said(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, IrmWarning)]


def _systems(values: dict[str, list[float]], column: str = "ndcg") -> pl.DataFrame:
    rows = [(s, f"q{q}", v) for s, vs in values.items() for q, v in enumerate(vs)]
    return pl.DataFrame(rows, schema=["system", "query_id", column], orient="row")


# means: x 0.85, y 0.45, z 0.15 (0.9 and 0.8, 0.5 and 0.4, 0.1 and 0.2)
SPREAD = _systems({"x": [0.9, 0.8], "y": [0.5, 0.4], "z": [0.1, 0.2]})
# x and y tie at 0.85
TIED = _systems({"x": [0.9, 0.8], "y": [0.9, 0.8], "z": [0.1, 0.2]})
# every mean 0.5
FLAT = _systems({"x": [0.5, 0.5], "y": [0.5, 0.5], "z": [0.5, 0.5]})

CONSTANT = (
    "correlation is null: every system's mean {column!r} in {side} is {value} (3 systems), "
    "so {side} orders no system and {method!r} has nothing to correlate; compare results "
    "that separate the systems (another metric, more queries or judgments)"
)
TRUTH_TIED = (
    "correlation is null: systems 'x' and 'y' have the same mean 'ndcg' in a (0.85), and "
    "method='tau_ap' with ties='a' (the default) reads a as the truth, which has no ties; "
    "pass ties='b', which reads ties on both sides"
)

# (a, b, keywords, correlation, p_value, the warning or None)
AGREEMENT: list[tuple[pl.DataFrame, pl.DataFrame, dict[str, Any], Any, Any, str | None]] = [
    *[
        (
            SPREAD,
            FLAT,
            {"method": method},
            None,
            None,
            CONSTANT.format(column="ndcg", side="b", value="0.5", method=method),
        )
        for method in ("kendall", "spearman", "pearson")
    ],
    # tau_ap (ties='a') averages b's ties over their orders: b's means all equal give
    # ircor's tauAP_a, 0, as tau_ap@k gives a run that ties every shared document
    (SPREAD, FLAT, {"method": "tau_ap"}, pytest.approx(0.0, abs=1e-12), None, None),
    (
        SPREAD,
        FLAT,
        {"method": "tau_ap", "ties": "b"},
        None,
        None,
        CONSTANT.format(column="ndcg", side="b", value="0.5", method="tau_ap"),
    ),
    # a's means all equal; logloss is lower-is-better: the mean shown as read, 0.5
    (
        _systems({"x": [0.5, 0.5], "y": [0.5, 0.5], "z": [0.5, 0.5]}, "logloss"),
        SPREAD,
        {"metric": "logloss", "metric_b": "ndcg"},
        None,
        None,
        CONSTANT.format(column="logloss", side="a", value="0.5", method="kendall"),
    ),
    (TIED, SPREAD, {"method": "tau_ap"}, None, None, TRUTH_TIED),
    # ties='b' reads a's tie. C(i), the systems above i on both sides (strictly): x 0,
    # y 0 (x ties it in a), z 2. b's direction: first ranks x 1, y 2, z 3, so
    # 2/2 (0/1 + 2/2) - 1 = 0; a's: x and y both first, z 3: 2/1 (2/2) - 1 = 1;
    # the mean (0 + 1) / 2 = 0.5
    (TIED, SPREAD, {"method": "tau_ap", "ties": "b"}, 0.5, None, None),
    # tau_ap has no p-value at all: null without a warning where the correlation stands.
    # b's x and y tied (group p 1, t 2; a untied): W(1, 2) = (1/4)(1/1) each, 0.5 in
    # all; z: p 3, C 2, S(3, 1) = 1/2: 1; 2/2 (0.5 + 1) - 1 = 0.5
    (SPREAD, TIED, {"method": "tau_ap"}, pytest.approx(0.5), None, None),
]


@pytest.mark.parametrize(("a", "b", "keywords", "correlation", "p_value", "expected"), AGREEMENT)
def test_system_agreement_null_is_warned(
    a: pl.DataFrame,
    b: pl.DataFrame,
    keywords: dict[str, Any],
    correlation: Any,
    p_value: Any,
    expected: str | None,
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = irm.system_agreement(a, b, **keywords).row(0, named=True)
    assert out["correlation"] == correlation
    assert out["p_value"] == p_value
    assert _said(caught) == ([] if expected is None else [expected])
    if expected is not None:  # shown at the caller's line, not the library's
        assert caught[0].filename == __file__


def test_spearman_of_two_systems_has_no_p_value_and_says_so() -> None:
    # two systems: rho = 1 (scipy's 0.9999999999999999), and scipy's p-value NaN
    two = SPREAD.filter(pl.col("system") != "z")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = irm.system_agreement(two, two, "spearman").row(0, named=True)
    assert out["correlation"] == pytest.approx(1.0, abs=1e-15)
    assert out["p_value"] is None
    assert _said(caught) == [
        "p_value is null: scipy's spearman test of 2 systems gives no p-value (NaN); the "
        "correlation stands, but a test needs three systems or more"
    ]
    # kendall's and pearson's of two systems have scipy's p-value (1.0): nothing to say
    for method in ("kendall", "pearson"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = irm.system_agreement(two, two, method).row(0, named=True)
        assert (out["correlation"], out["p_value"]) == (pytest.approx(1.0), 1.0)
        assert _said(caught) == []


# q1: the run b > a > c against a > b > c; q2: one shared document (d); q3: the run
# retrieves one document (g), the reference three; q4: the run only (unjudged='drop'
# by default: no row); q5: the reference only (unretrieved='zero': an empty ranking)
RUN = pl.DataFrame(
    {
        "query_id": ["q1"] * 3 + ["q2"] * 3 + ["q3"] + ["q4"] * 2,
        "doc_id": ["b", "a", "c", "d", "x", "y", "g", "a", "b"],
        "score": [3.0, 2.0, 1.0, 3.0, 2.0, 1.0, 1.0, 2.0, 1.0],
    }
)
REFERENCE = pl.DataFrame(
    {
        "query_id": ["q1"] * 3 + ["q2"] * 3 + ["q3"] * 3 + ["q5"] * 2,
        "doc_id": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "a", "b"],
        "score": [3.0, 2.0, 1.0, 3.0, 2.0, 1.0, 3.0, 2.0, 1.0, 2.0, 1.0],
    }
)
FEW = (
    "rank correlations are null where the run and the reference share fewer than two "
    "documents (one pair is the least a correlation reads; none where one side has no "
    "ranking of the query), and those queries are left out of the mean (num_q still "
    "counts them): {said}; compare deeper rankings (a larger @k), and check that the two "
    "sides' doc ids match"
)
ON = "{label!r} on {n} of the 4 queries (first: {first!r})"

# (metrics, keywords, per-query values of q1, q2, q3, q5, the warning or None)
SHARED: list[tuple[list[str], dict[str, Any], dict[str, list[Any]], str | None]] = [
    (
        # q1: pairs (a,b) discordant, (a,c), (b,c) concordant: (2 - 1) / 3; q2, q3, q5
        # null (one, one and no shared document)
        ["kendall_tau"],
        {},
        {"kendall_tau": [1.0 / 3.0, None, None, None]},
        FEW.format(said=ON.format(label="kendall_tau", n=3, first="q2")),
    ),
    (
        # q1: the run b, a, c against the truth a, b, c: C(a) = 0, C(c) = 2:
        # 2/2 (0/1 + 2/2) - 1 = 0; tau_ap(ties='b') beside it: the same (no ties)
        ["tau_ap@3", "tau_ap(ties='b')@3"],
        {},
        {"tau_ap@3": [0.0, None, None, None], "tau_ap(ties='b')@3": [0.0, None, None, None]},
        FEW.format(
            said=ON.format(label="tau_ap@3", n=3, first="q2")
            + "; "
            + ON.format(label="tau_ap(ties='b')@3", n=3, first="q2")
        ),
    ),
    (
        # repro_eval's ktu pairs positions: q1 [1, 0, 2] against [0, 1, 2]: 1/3; q2: the
        # union's positions [0, 4, 5] against [0, 1, 2]: 1; q3: one position, null; q5
        # null
        ["ktu"],
        {},
        {"ktu": [1.0 / 3.0, 1.0, None, None]},
        FEW.format(said=ON.format(label="ktu", n=2, first="q3")),
    ),
    (
        # q5 dropped: q2 and q3 remain (of 3 queries)
        ["kendall_tau"],
        {"unretrieved": "drop"},
        {"kendall_tau": [1.0 / 3.0, None, None]},
        FEW.format(said=ON.format(label="kendall_tau", n=2, first="q2")).replace(
            "of the 4", "of the 3"
        ),
    ),
    # rbo and jaccard read one shared document: no null, nothing to say
    (["jaccard"], {}, {"jaccard": [1.0, 0.2, 1.0 / 3.0, 0.0]}, None),
]


@pytest.mark.parametrize("path", ["frame", "lazy", "buckets"])
@pytest.mark.parametrize(("metrics", "keywords", "values", "expected"), SHARED)
def test_correlations_below_two_shared_documents_are_warned_once(
    path: str,
    metrics: list[str],
    keywords: dict[str, Any],
    values: dict[str, list[Any]],
    expected: str | None,
) -> None:
    given: dict[str, Any] = dict(keywords)
    if path == "buckets":
        given["buckets"] = 2
    queries = ["q1", "q2", "q3", "q5"][: len(next(iter(values.values())))]
    for per_query in (True, False):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = irm.evaluate(
                RUN if path == "frame" else RUN.lazy(),
                metrics,
                reference=REFERENCE if path == "frame" else REFERENCE.lazy(),
                per_query=per_query,
                **given,
            )
            if isinstance(out, pl.LazyFrame):
                out = out.collect()
        said = [m for m in _said(caught) if m.startswith("rank correlations")]
        assert said == ([] if expected is None else [expected]), (path, per_query)
        if per_query:
            got = out.sort("query_id")
            assert got["query_id"].to_list() == queries
            for label, column in values.items():
                assert got[label].to_list() == pytest.approx(column, abs=1e-15)
        else:
            assert out["num_q"].to_list() == [len(queries)]


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_warn_of_too_few_shared_documents_once(
    engine: str, request: pytest.FixtureRequest
) -> None:
    # two parts: the queries are counted over both, one warning per call, as one
    # machine words it
    evaluate, frame, back = engine_io(engine, request)
    metrics, _, _, expected = SHARED[0]
    for per_query in (True, False):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = back(
                evaluate(
                    frame(RUN),
                    metrics,
                    reference=frame(REFERENCE),
                    partitions=2,
                    per_query=per_query,
                )
            )
        said = [m for m in _said(caught) if m.startswith("rank correlations")]
        assert said == [expected], per_query
        if not per_query:
            whole = irm.evaluate(RUN, metrics, reference=REFERENCE)
            assert got.cast(whole.schema).equals(whole)


# ------------------------------------------------------------------ ab_test, no variance
def _same(metric: str, n: int) -> str:
    return (
        f"{metric}: every unit (user_id) of both arms has the same value (standard error 0), "
        f"so the p-value of 1 and the interval [0, 0] rest on {n} and {n} units without "
        "spread, not on evidence of no difference; a comparison without variance cannot be "
        "tested: collect more units before reading it as no effect"
    )


# three users per arm, one session each of two impressions, every user clicking the
# first only: ctr 1/2, session_ctr 1 and abandonment 0 on every unit of both arms
FLAT_LOG = pl.DataFrame(
    {
        "arm": ["A"] * 6 + ["B"] * 6,
        "user_id": [f"{arm}{u}" for arm in "ab" for u in range(3) for _ in range(2)],
        "session_id": [f"s{i // 2}" for i in range(12)],
        "position": [1, 2] * 6,
        "clicked": [True, False] * 6,
    }
)


@pytest.mark.parametrize("lazy", [False, True])
def test_ab_test_of_two_constant_identical_arms_is_named(lazy: bool) -> None:
    metrics = ["ctr", "abandonment", "session_ctr"]
    out = irm.ab_test(FLAT_LOG.lazy() if lazy else FLAT_LOG, metrics)
    assert out["delta"].to_list() == [0.0, 0.0, 0.0]
    assert out["std_error"].to_list() == [0.0, 0.0, 0.0]
    assert out["p_value"].to_list() == [1.0, 1.0, 1.0]
    assert out["warnings"].to_list() == [[_same(m, 3)] for m in metrics]
    # one unit of B clicks both: spread in B's ctr (1 against 1/2), so no note there;
    # abandonment is still 0 and session_ctr (the sessions with a click) 1 on every unit
    spread = FLAT_LOG.with_columns(
        clicked=pl.when(pl.col("user_id") == "b0").then(True).otherwise(pl.col("clicked"))
    )
    out = irm.ab_test(spread, metrics)
    assert out["warnings"].to_list() == [[], [_same("abandonment", 3)], [_same("session_ctr", 3)]]


# ------------------------------------------------- several faults: one error on any path
# With buckets=2 (and 4) q2 hashes to the first bucket, q1 to the second: each bucket
# raised its own first error, so a fault of q2 beat the one plan's choice (its first
# check, at its first query, q1), and which error a user saw depended on buckets=.
NAN = float("nan")
QRELS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "relevance": [1, 1]})
# q1 lists a twice, q2 has a NaN score
DUP_Q1_NAN_Q2 = pl.DataFrame(
    {"query_id": ["q2", "q1", "q1", "q1"], "doc_id": ["b", "a", "a", "b"],
     "score": [NAN, 3.0, 2.0, 1.0]}
)  # fmt: skip
# q1 and q2 both list a document twice
DUP_BOTH = pl.DataFrame(
    {"query_id": ["q2", "q2", "q1", "q1"], "doc_id": ["b", "b", "a", "a"],
     "score": [2.0, 1.0, 2.0, 1.0]}
)  # fmt: skip
# q1 lists a twice (ranks 1, 2); q2 has rank 0
DUP_Q1_RANK0_Q2 = pl.DataFrame(
    {"query_id": ["q2", "q1", "q1"], "doc_id": ["b", "a", "a"], "rank": [0, 1, 2]}
)
REF = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "score": [1.0, 1.0]})
RUN_DUP = (
    "column 'doc_id' of the run: query 'q1' has 1 repeated listing(s) "
    "(each of a document listed before in the query); each "
    "(query, document) pair may appear once (trec_eval refuses such runs too): keep one "
    "row per document, e.g. .unique(['query_id', 'doc_id'])"
)
# (run, metrics, keywords, the error: every family checks duplicates before values and
# ranks, in the ranking metrics' words; the agreement metrics once raised a rank below 1
# before a duplicate, in words of their own)
FAULTS: list[tuple[pl.DataFrame, list[str], dict[str, Any], type[Exception], str]] = [
    (DUP_Q1_NAN_Q2, ["ndcg@10"], {"qrels": QRELS}, irm.DuplicateError, RUN_DUP),
    (DUP_BOTH, ["ndcg@10"], {"qrels": QRELS}, irm.DuplicateError, RUN_DUP),
    (DUP_Q1_RANK0_Q2, ["ndcg@10"], {"qrels": QRELS}, irm.DuplicateError, RUN_DUP),
    (DUP_Q1_NAN_Q2, ["rbo"], {"reference": REF}, irm.DuplicateError, RUN_DUP),
    (DUP_BOTH, ["kendall_tau"], {"reference": REF}, irm.DuplicateError, RUN_DUP),
    (DUP_Q1_RANK0_Q2, ["rbo"], {"reference": REF}, irm.DuplicateError, RUN_DUP),
]


@pytest.mark.parametrize("path", ["frame", "lazy", "buckets=2", "buckets=3", "buckets=4"])
@pytest.mark.parametrize(("run", "metrics", "keywords", "error", "message"), FAULTS)
def test_the_error_of_several_faults_does_not_depend_on_the_path(
    path: str,
    run: pl.DataFrame,
    metrics: list[str],
    keywords: dict[str, Any],
    error: type[Exception],
    message: str,
) -> None:
    given: dict[str, Any] = dict(keywords)
    if path.startswith("buckets"):
        given["buckets"] = int(path.split("=")[1])
    if path != "frame":
        run = run.lazy()  # type: ignore[assignment]
        given = {k: v.lazy() if isinstance(v, pl.DataFrame) else v for k, v in given.items()}

    def evaluate() -> pl.DataFrame:
        out = irm.evaluate(run, metrics, **given)
        return out.collect() if isinstance(out, pl.LazyFrame) else out

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error) as raised:
            evaluate()
    assert str(raised.value) == message


# --------------------------------------------------- interleaving: no decided session
def _ties_said(ties: int, no_click: int, where: str = "") -> str:
    return (
        f"no session of the log{where} prefers a team: its {ties} clicked "
        f"session{'' if ties == 1 else 's'} {'is a tie' if ties == 1 else 'are all ties'} "
        f"(and {no_click} without a click), so the sign test has no decided session and its "
        "p_value 1 measures nothing (scipy's binomtest refuses 0 trials); preference 0 is "
        "the ties' own: log more sessions"
    )


# s1, s2: both items clicked (ties); s3: none clicked
TIES_LOG = pl.DataFrame(
    {
        "session_id": ["s1", "s1", "s2", "s2", "s3", "s3"],
        "position": [1, 2] * 3,
        "team": ["A", "B", "B", "A", "A", "B"],
        "clicked": [1, 1, 1, 1, 0, 0],
    }
)


@pytest.mark.parametrize("lazy", [False, True])
def test_interleaving_of_ties_only_says_its_p_value_measures_nothing(lazy: bool) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = irm.interleaving_test(TIES_LOG.lazy() if lazy else TIES_LOG)
        if isinstance(out, pl.LazyFrame):
            out = out.collect()
    row = out.row(0, named=True)
    # preference (0 + 2/2) / 2 - 1/2 = 0; no decided session: the sign test's p 1
    assert (row["wins_a"], row["wins_b"], row["ties"], row["no_click"]) == (0, 0, 2, 1)
    assert (row["preference"], row["p_value"], row["preferred"]) == (0.0, 1.0, None)
    assert _said(caught) == [_ties_said(2, 1)]


def test_interleaving_segments_warn_of_ties_apart() -> None:
    # day 1: one tie (s1); day 2: s2 a tie, and s4 a win for A: decided, nothing said
    log = pl.concat(
        [
            TIES_LOG.filter(pl.col("session_id") == "s1").with_columns(day=pl.lit(1, pl.Int64)),
            TIES_LOG.filter(pl.col("session_id") == "s2").with_columns(day=pl.lit(2, pl.Int64)),
            pl.DataFrame(
                {"session_id": ["s4", "s4"], "position": [1, 2], "team": ["A", "B"],
                 "clicked": [1, 0], "day": [2, 2]}
            ),
        ]
    )  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = irm.interleaving_test(log, by="day")
    assert out["p_value"].to_list() == [1.0, 1.0]  # binomtest(1, 1): 1 as well
    assert _said(caught) == [_ties_said(1, 0, " (day=1)")]


# ------------------------------------------ compare: a nested system column is refused
def _nested(kind: str) -> str:
    return (
        f"column 'system' of the runs has dtype {kind}; each row needs one system name (a "
        "string or an integer): give each row its system's name, e.g. "
        "pl.col('system').list.first() for a list of one name"
    )


RANKED = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "score": [1.0, 1.0]})
JUDGED = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "relevance": [1, 1]})
# (the system of run A, of run B, the dtype named): a list and an array gave polars'
# InvalidOperationError (the cast to text), a struct its text as the system's name
# ("{1}", '{"x","1"}'; a struct with a null field polars' error again), where
# system_agreement refuses all three
NESTED: list[tuple[pl.Expr, pl.Expr, str]] = [
    (pl.lit(["A"]), pl.lit(["B"]), "List(String)"),
    (
        pl.lit([1]).cast(pl.Array(pl.Int64, 1)),
        pl.lit([2]).cast(pl.Array(pl.Int64, 1)),
        "Array(Int64, shape=(1,))",
    ),
    (pl.struct(a=pl.lit(1)), pl.struct(a=pl.lit(2)), "Struct({'a': Int32})"),
    (
        pl.struct(a=pl.lit("x"), b=pl.lit("1")),
        pl.struct(a=pl.lit("y"), b=pl.lit("2")),
        "Struct({'a': String, 'b': String})",
    ),
]


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize(("first", "second", "kind"), NESTED)
def test_compare_refuses_a_nested_system_column(
    first: pl.Expr, second: pl.Expr, kind: str, lazy: bool
) -> None:
    runs = pl.concat([RANKED.with_columns(system=first), RANKED.with_columns(system=second)])
    given = runs.lazy() if lazy else runs
    for call in (irm.compare, irm.tukey_hsd):
        with pytest.raises(irm.ColumnTypeError) as raised:
            call(given, ["ndcg"], qrels=JUDGED)
        assert str(raised.value) == _nested(kind)


def test_partitioned_by_raises_the_one_plans_error_too() -> None:
    # partition 0 holds q2 (a NaN score), partition 1 q1 (a duplicate): each partition
    # raised its own, partition 0's first; the one plan's is q1's duplicate
    run = DUP_Q1_NAN_Q2.with_columns(part=pl.Series([0, 1, 1, 1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(irm.DuplicateError) as raised:
            irm.evaluate(run, ["ndcg@10"], qrels=QRELS, partitioned_by="part")
    assert str(raised.value) == RUN_DUP
