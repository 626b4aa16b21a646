"""``irm``, round 7: the library's keyword suggestions written as the command's flags,
and nothing else (places in the data, quoted values, calls, lists and dicts a flag
cannot take); ``irm ab`` prints a failing command's error alone; ``evaluate_online``
refuses nested key columns as ``ab_test`` does."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.cli.keywords import as_flags
from polars_irmetrics.cli.main import _flags, build_parser
from polars_irmetrics.errors import ColumnTypeError

from .helpers import irm_in_process


def _log(arm: str = "arm", segment: str = "day") -> pl.DataFrame:
    """40 users, alternately in arms A and B, two sessions of two impressions each."""
    rows = [
        {
            arm: "A" if user % 2 else "B",
            "user_id": f"u{user}",
            "session_id": f"s{user}_{session}",
            "position": position,
            "clicked": (user + session + position) % 3 == 0,
            segment: "mon" if session else "tue",
        }
        for user in range(40)
        for session in range(2)
        for position in (1, 2)
    ]
    return pl.DataFrame(rows)


def _ab(tmp_path: Path, log: pl.DataFrame, *args: str) -> tuple[int, str]:
    log.write_csv(tmp_path / "log.csv")
    done = irm_in_process("ab", "log.csv", "-m", "ctr", *args, cwd=tmp_path)
    return done.returncode, done.stderr


# -- 1. a keyword with a list or a dict: the flag given once per value, or the text kept
def test_ab_a_list_keyword_is_the_flag_per_value(tmp_path: Path) -> None:
    assert _ab(tmp_path, _log(), "--by", "arm") == (
        2,
        "irm: error: log.csv: --by arm names 'arm', which is already the arm, the unit or "
        "the session; list only segment keys such as 'day'\n",
    )


def test_evaluate_a_list_keyword_is_the_flag_per_value(tmp_path: Path) -> None:
    (tmp_path / "run.csv").write_text("query_id,doc_id,rank\nq1,d1,1\nq1,d2,2\n")
    (tmp_path / "qrels.csv").write_text("query_id,doc_id,relevance\nq1,d1,1\n")
    done = irm_in_process("evaluate", "run.csv", "qrels.csv", "--by", "query_id", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2,
        "irm: error: --by query_id names 'query_id', which is already the query or document "
        "id; list only extra keys such as 'system' or 'day'\n",
    )


def test_a_quoted_value_with_a_space_stays_one_shell_word(tmp_path: Path) -> None:
    (tmp_path / "run.csv").write_text("query_id,doc_id,rank\nq1,d1,1\n")
    (tmp_path / "qrels.csv").write_text("query_id,doc_id,relevance\nq1,d1,1\n")
    done = irm_in_process("evaluate", "run.csv", "qrels.csv", "--rank", "my rank", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("irm: error: --rank 'my rank' names no column of the run (")
    assert done.stderr.count("\n") == 1


# -- 2. a place in the data is the data's own, whatever its column is named -----------
def test_ab_a_segment_named_as_a_flag_is_kept(tmp_path: Path) -> None:
    # (a key named 'control', a column of ab's result too, is refused: 8974579)
    log = _log(segment="split").filter(~((pl.col("arm") == "B") & (pl.col("split") == "tue")))
    status, err = _ab(tmp_path, log, "--by", "split")
    assert status == 2
    assert err.startswith(
        "irm: error: log.csv: 1 segment(s) by 'split' miss an arm of column 'arm': "
        "(split='tue') has no user_id in arm 'B'; each segment"
    )
    assert err.count("\n") == 1


def test_ab_a_session_place_is_kept_and_its_keys_named(tmp_path: Path) -> None:
    log = _log(arm="format")
    log = pl.concat([log, log.head(1)])
    assert _ab(tmp_path, log, "--arm", "format") == (
        2,
        "irm: error: log.csv: column 'position' of the log: session 's0_0' (format='B', "
        "user_id='u0') shows 1 impression(s) at a position another impression holds; each "
        "position shows one item: keep one row per position: drop or merge the repeated "
        "rows\n",
    )


# -- 3. a switch's keyword at its default is the switch dropped, not given ------------
def test_ab_strict_false_is_drop_strict(tmp_path: Path) -> None:
    log = pl.concat([_log(), _log().head(1).with_columns(arm=pl.lit("A"), session_id=pl.lit("x"))])
    assert _ab(tmp_path, log, "--strict") == (
        2,
        "irm: error: log.csv: 1 user_id value(s) appear in more than one arm of column 'arm' "
        "(e.g. 'u0' in 'A' and 'B'); randomization by 'user_id' is broken: fix the "
        "assignment, or drop --strict to leave those units out with a warning\n",
    )
    status, err = _ab(tmp_path, log)
    assert status == 0
    assert err == (
        "irm: warning: log.csv: 1 user_id value(s) appear in more than one arm (e.g. 'u0' in "
        "'A' and 'B'); they are left out of the comparison (--strict raises instead)\n"
    )


# -- 4. irm ab: a failing command prints its error alone ------------------------------
def test_ab_a_failing_command_prints_one_line(tmp_path: Path) -> None:
    _log().write_csv(tmp_path / "log.csv")
    done = irm_in_process("ab", "log.csv", "--by", "arm", cwd=tmp_path)  # default metrics
    assert done.returncode == 2
    assert done.stderr.startswith("irm: error: log.csv: --by arm names 'arm'")
    assert done.stderr.count("\n") == 1
    done = irm_in_process("ab", "log.csv", cwd=tmp_path)  # it succeeds: the warning is shown
    assert done.returncode == 0
    assert done.stderr == (
        "irm: warning: log.csv: sat_click_rate left out: it reads column 'dwell', which the "
        "log lacks (name yours with --dwell COL)\n"
    )


# -- 5. the rewriter, kind by kind ----------------------------------------------------
_EVALUATE = [
    # a place in the data: a parenthesis of pairs, or pairs after a word naming a place
    ("query 'q1' (order='x', seed=3) lists", "query 'q1' (order='x', seed=3) lists"),
    ("share their (first: round_id=10, position=3): keep", None),
    ("5 resamples (group format='x') give", None),
    ("an empty history for user_id=u1, label=2", None),
    ("the run lists it under day='mon', day='tue', and", None),
    # a call's arguments, a quoted value, a Python expression: Python, kept
    ("evaluate it with irm.evaluate(run, ['ndcg@10'], qrels=...), or", None),
    ("column 'rank=x' of the run", None),
    (
        "with queries= (e.g. queries=run.select('query_id').unique())",
        "with --queries (e.g. queries=run.select('query_id').unique())",
    ),
    # suggestions: the flag, its value as the shell reads it
    ("pass systems='day' instead of by=", "pass --systems day instead of --by"),
    ("rank='my rank' names no column", "--rank 'my rank' names no column"),
    ("by=['run', 'rank'] names 'rank'", "--by run --by rank names 'rank'"),
    ("pass check_duplicates=False", "pass --no-duplicate-check"),
    ("pass check_duplicates=True to check", "drop --no-duplicate-check to check"),
    ("progress=False or progress=True", "--no-progress or --progress"),
    ("spill_dir=None is refused", None),  # no flag's value
    ("level=2 and x=3", None),  # no such flag of evaluate
]


@pytest.mark.parametrize(("message", "expected"), _EVALUATE)
def test_evaluate_rewrites_only_its_flags_in_keyword_position(
    message: str, expected: str | None
) -> None:
    flags = _flags(build_parser(), "evaluate")
    assert as_flags(message, flags) == (message if expected is None else expected)


@pytest.mark.parametrize(
    ("command", "message", "expected"),
    [
        ("ab", "split={'A': 0.5, 'B': 0.5}", "--split A=0.5 --split B=0.5"),
        ("ab", "correction=None skips it", "--correction none skips it"),
        ("ab", "(strict=True raises instead) (arm=...)", "(--strict raises instead) (--arm COL)"),
        ("ab", "in session 's1' (arm='A', user_id='u1'); name it with arm='variant'",
         "in session 's1' (arm='A', user_id='u1'); name it with --arm variant"),
        ("ab", "not in the split {'A': 1.0}", None),
        ("fuse", "weights=[0.5, 0.5] or weights={'a': 1}", None),  # --weights is no list
        ("fuse", "ndcg(gain='exponential', k=10) or k=10",
         "ndcg(gain='exponential', k=10) or -k 10"),
        ("fuse", "norm=None changes nothing. Drop norm= here",
         "norm=None changes nothing. Drop --norm here"),
        ("trec-eval", "relevance_level=2, depth=100",
         "--level_for_rel 2, --Max_retrieved_per_topic 100"),
        ("metrics", "pass format='x'", "pass --format x"),
    ],
)  # fmt: skip
def test_each_command_rewrites_its_own_flags(
    command: str, message: str, expected: str | None
) -> None:
    flags = _flags(build_parser(), command)
    assert as_flags(message, flags) == (message if expected is None else expected)


# -- 6. evaluate_online refuses nested key columns, as ab_test does -------------------
_ONLINE = pl.DataFrame(
    {
        "session_id": ["s1", "s1", "s2", "s2"],
        "position": [1, 2, 1, 2],
        "clicked": [True, False, False, True],
        "day": ["mon"] * 4,
    }
)


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize(
    ("column", "nested", "role", "fix"),
    [
        ("session_id", pl.concat_list("session_id"), "the session id",
         "pl.col('session_id').list.first()"),
        ("session_id", pl.struct(pl.col("session_id").alias("id")), "the session id",
         "pl.col('session_id').struct.field('id')"),
        ("session_id", pl.concat_list("session_id").list.to_array(1), "the session id",
         "pl.col('session_id').arr.first()"),
        ("day", pl.concat_list("day"), "a segment key", "pl.col('day').list.first()"),
    ],
)  # fmt: skip
def test_evaluate_online_refuses_a_nested_key(
    column: str, nested: pl.Expr, role: str, fix: str, lazy: bool
) -> None:
    log = _ONLINE.with_columns(nested.alias(column))
    dtype = log.schema[column]
    message = (
        f"column {column!r} of the log has dtype {dtype}; {role} must be one value per row "
        f"(a string or an integer), not a nested value: take one, e.g. {fix}"
    )
    with pytest.raises(ColumnTypeError, match=f"^{re.escape(message)}$"):
        irm.evaluate_online(log.lazy() if lazy else log, ["ctr"], by="day")


def test_evaluate_online_still_takes_flat_keys() -> None:
    out = irm.evaluate_online(_ONLINE.lazy(), ["ctr"], by=["day"])
    assert isinstance(out, pl.LazyFrame)
    assert out.collect()["ctr"].to_list() == [0.5]
