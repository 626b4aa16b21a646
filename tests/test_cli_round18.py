"""Round 18 command line: an impression log's bad click value names its line under
``irm evaluate`` (as ``irm ab`` names it), and ``irm ab``'s metric errors name no file
(a metric that is not a click metric is no fault of the log)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import irm_in_process


def _log(clicks: list[str], sep: str = ",") -> str:
    """An impression log with one session per click (header on line 1, so session i's
    row is line i + 2): arm A for even sessions, B for odd."""
    head = sep.join(["arm", "user_id", "session_id", "position", "clicked"])
    rows = [
        sep.join(["AB"[i % 2], f"u{i}", f"s{i}", "1", click]) for i, click in enumerate(clicks)
    ]
    return "\n".join([head, *rows]) + "\n"


_EVALUATE = ["-m", "ctr", "--query-id", "session_id", "--rank", "position"]

# (file name, its text, the message): the click column holds a word on line 4 (header
# line 1, rows 2..): the command printed ab_test's "column 'clicked' of the log has
# dtype String; ..." with the file but no line
_BAD_CLICKS = [
    (
        "log.csv",
        _log(["1", "0", "yes", "1"]),
        "log.csv, line 4: column 'clicked' holds 'yes', not a click, true/false or 1/0; "
        "fix or drop the line",
    ),
    (
        "log.tsv",
        _log(["1", "0", "1", "no"], sep="\t"),
        "log.tsv, line 5: column 'clicked' holds 'no', not a click, true/false or 1/0; "
        "fix or drop the line",
    ),
]


@pytest.mark.parametrize(("name", "text", "message"), _BAD_CLICKS, ids=["csv", "tsv"])
@pytest.mark.parametrize("command", [["evaluate", *_EVALUATE], ["ab", "-m", "ctr"]])
def test_bad_click_names_the_line(
    tmp_path: Path, name: str, text: str, message: str, command: list[str]
) -> None:
    (tmp_path / name).write_text(text)
    done = irm_in_process(command[0], name, *command[1:], cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


def test_bad_click_of_the_second_run_names_its_file(tmp_path: Path) -> None:
    """Two logs evaluated as two systems: the second one's line, under its name."""
    (tmp_path / "a.csv").write_text(_log(["1", "0"]))
    (tmp_path / "b.csv").write_text(_log(["1", "0", "1", "1", "oui"]))
    done = irm_in_process("evaluate", "a.csv", "b.csv", *_EVALUATE, cwd=tmp_path)
    message = "b.csv, line 6: column 'clicked' holds 'oui', not a click, true/false or 1/0"
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"irm: error: {message}; fix or drop the line\n"


def test_glob_of_logs_names_no_line(tmp_path: Path) -> None:
    """A quoted pattern is read as one log: no line of one file is named (a line number
    counted over the files would point at no file's line)."""
    (tmp_path / "a.csv").write_text(_log(["1", "0"]))
    (tmp_path / "b.csv").write_text(_log(["maybe"]))
    done = irm_in_process("ab", "*.csv", "-m", "ctr", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "irm: error: *.csv: column 'clicked' holds 'maybe', not a click, true/false or "
        "1/0; fix or drop the line\n"
    )


def test_good_text_clicks_still_evaluate(tmp_path: Path) -> None:
    """true/false clicks (polars reads them as Booleans) pass: 2 of 4 sessions clicked,
    ctr = (1 + 0 + 1 + 0) / 4 = 0.5."""
    (tmp_path / "log.csv").write_text(_log(["true", "false", "true", "false"]))
    done = irm_in_process("evaluate", "log.csv", *_EVALUATE, "--format", "csv", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == "num_sessions,ctr\n4,0.5\n"


# irm ab's metric errors: the command prefixed them with the log's name, as if the log
# were at fault ("irm: error: log.csv: metric 'ndcg@10' is not a click metric: ...")
_METRIC_ERRORS = [
    (
        ["-m", "ndcg@10"],
        "metric 'ndcg@10' is not a click metric: it reads relevance judgments, which an "
        "impression log does not hold; evaluate it with irm evaluate RUN --qrels QRELS -m "
        "ndcg@10, or choose a click metric such as 'ctr@10' ('irm metrics')",
    ),
    (
        ["-m", "session_ctr", "-m", "session_click_rate"],
        "metrics 'session_ctr' and 'session_click_rate' are one metric, 'session_ctr', "
        "listed twice: ab_test would test it twice and count both tests in the family "
        "that --correction holm adjusts, raising every adjusted p-value; list it once",
    ),
]


@pytest.mark.parametrize(("flags", "message"), _METRIC_ERRORS, ids=["not click", "twice"])
def test_ab_metric_error_names_no_file(tmp_path: Path, flags: list[str], message: str) -> None:
    (tmp_path / "log.csv").write_text(_log(["1", "0", "1", "0"]))
    done = irm_in_process("ab", "log.csv", *flags, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")
    # the same as irm evaluate and irm compare print a metric's error: no file named
    missing = irm_in_process("ab", "absent.csv", *flags, cwd=tmp_path)
    assert missing.stderr == done.stderr


# a metric's suggested call, as the command that does the same: only irm.evaluate(run,
# [...], qrels=...) was written as 'irm evaluate RUN --qrels QRELS -m ...'; the others
# reached the shell user as Python ("evaluate it with irm.evaluate(log, ['ips'],
# policy=...)")
_SUGGESTED = [
    ("ips", "an evaluation policy", "irm evaluate LOG --policy FILE -m ips"),
    (
        "auc",
        "labels and predictions",
        "irm evaluate PREDICTIONS --label COL --prediction COL -m auc",
    ),
    (
        "novelty@10",
        "the interaction history",
        "irm evaluate RUN --interactions FILE -m novelty@10",
    ),
    ("rbo", "a reference run", "irm evaluate RUN --reference FILE -m rbo"),
]


@pytest.mark.parametrize(
    ("metric", "reads", "command"), _SUGGESTED, ids=[c[0] for c in _SUGGESTED]
)
def test_ab_suggests_the_command(tmp_path: Path, metric: str, reads: str, command: str) -> None:
    (tmp_path / "log.csv").write_text(_log(["1", "0"]))
    done = irm_in_process("ab", "log.csv", "-m", metric, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"irm: error: metric {metric!r} is not a click metric: it reads {reads}, which an "
        f"impression log does not hold; evaluate it with {command}, or choose a click "
        "metric such as 'ctr@10' ('irm metrics')\n"
    )
