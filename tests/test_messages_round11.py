"""Round 11 messages: BEIR scores and headers, unreadable folders, qrels relevance
beyond Int64, and evaluate_online's keyword in its column errors."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnNotFoundError, FileFormatError

from .helpers import irm_in_process

_EXPECTED_QRELS = "expected BEIR judgments: query-id<TAB>corpus-id<TAB>score (an integer) per line"


def _beir(root: Path, qrels: str) -> Path:
    (root / "qrels").mkdir()
    (root / "corpus.jsonl").write_text(json.dumps({"_id": "d1", "text": "x"}) + "\n")
    (root / "queries.jsonl").write_text(json.dumps({"_id": "1", "text": "x"}) + "\n")
    (root / "qrels" / "test.tsv").write_text(qrels)
    return root


@pytest.mark.parametrize(
    ("qrels", "where"),
    [
        (
            "query-id\tcorpus-id\tscore\n1\td1\t1 \n",
            f"line 2: score '1 ' is not an integer; {_EXPECTED_QRELS}",
        ),
        (
            "query-id\tcorpus-id\tscore\n1\td1\t 2\n1\td1\t2 \n",
            f"line 3: score '2 ' is not an integer; {_EXPECTED_QRELS}",
        ),
        (
            "query-id\tcorpus-id\tscore\n1\td1\t1_0\n",
            f"line 2: score '1_0' is not an integer; {_EXPECTED_QRELS}",
        ),
        (
            "query-id\tcorpus-id\tscore\n1\td1\t99999999999999999999\n",
            "line 2: score '99999999999999999999' is out of the range of a 64-bit integer; "
            f"write a score within it; {_EXPECTED_QRELS}",
        ),
        (
            "query-id\tcorpus-id\tscore\n1\td1\t-9223372036854775809\n",
            "line 2: score '-9223372036854775809' is out of the range of a 64-bit integer; "
            f"write a score within it; {_EXPECTED_QRELS}",
        ),
        (
            "query-id\tcorpus-id\tscore \n1\td1\t1\n",
            "line 1: ('query-id', 'corpus-id', 'score ') is not BEIR's qrels header "
            "'query-id<TAB>corpus-id<TAB>score'",
        ),
        (
            " query-id\tcorpus-id\tscore\n1\td1\t1\n",
            "line 1: (' query-id', 'corpus-id', 'score') is not BEIR's qrels header "
            "'query-id<TAB>corpus-id<TAB>score'",
        ),
    ],
)
def test_beir_qrels_scores_and_header_name_the_line(
    tmp_path: Path, qrels: str, where: str
) -> None:
    root = _beir(tmp_path, qrels)
    message = f"{root / 'qrels' / 'test.tsv'}, {where}"
    with pytest.raises(FileFormatError, match=f"^{re.escape(message)}$"):
        irm.read_beir(root)


@pytest.mark.parametrize(
    ("score", "value"),
    [
        ("+1", 1),
        ("  2", 2),
        ("007", 7),
        ("-9223372036854775808", -(2**63)),
        ("9223372036854775807", 2**63 - 1),
    ],
)
def test_beir_qrels_scores_polars_reads_are_kept(tmp_path: Path, score: str, value: int) -> None:
    root = _beir(tmp_path, f"query-id\tcorpus-id\tscore\r\n1\td1\t{score}\r\n")
    assert irm.read_beir(root).judgments.collect().rows() == [("1", "d1", value)]


# ----------------------------------------------- 2. folders this process may not read

_RUN = "a run: Parquet, a TREC run (query_id Q0 doc_id rank score run_id), CSV, TSV or JSON lines"
_TREC = (
    "a TREC run (query_id Q0 doc_id rank score run_id) or qrels (query_id iteration doc_id "
    "relevance) text file"
)
#: Root reads any folder: its commands run without the capabilities that let it.
_DROP = [
    "--inh-caps=-dac_override,-dac_read_search",
    "--bounding-set=-dac_override,-dac_read_search",
]


def _unprivileged(tmp_path: Path) -> list[str]:
    """The command prefix that runs Python as a user that file permissions bind."""
    prefix = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.fail(
                "root reads any folder, and setpriv (util-linux) is not here to drop that: "
                "install util-linux, or run the tests as another user"
            )
        prefix = [setpriv, *_DROP]
    locked = tmp_path / "probe"
    locked.mkdir()
    locked.chmod(0)
    probe = [*prefix, sys.executable, "-c", f"import os; os.listdir({str(locked)!r})"]
    if subprocess.run(probe, capture_output=True, check=False).returncode == 0:
        pytest.fail(
            "this process reads a folder of mode 000 even without the capabilities that "
            "let root: run the tests as a user that file permissions bind"
        )
    return prefix


def _folders(root: Path) -> None:
    frame = pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [1.0]})
    for folder in ("shut", "listed", "tree/sub"):
        (root / folder).mkdir(parents=True)
        frame.write_parquet(root / folder / "a.parquet")
    frame.write_parquet(root / "tree" / "b.parquet")
    (root / "shut" / "run.txt").write_text("q1 Q0 d1 1 2.0 r\n")
    (root / "shut").chmod(0)
    (root / "listed").chmod(0o444)  # its names listed, none of its files reached
    (root / "tree" / "sub").chmod(0)


def _folder(name: str, what: str) -> str:
    return (
        f"{name}: permission denied, the folder cannot be read; expected {what}: make it "
        "readable by this user (e.g. chmod u+rx) or read a copy that is"
    )


def _path(name: str, what: str) -> str:
    return (
        f"{name}: permission denied, it cannot be read (a folder on its path may not be "
        f"searched); expected {what}: make that folder searchable by this user (e.g. "
        "chmod u+x) or read a copy that is"
    )


_UNREADABLE = [
    ("scan_run('shut')", _folder("shut", _RUN)),
    ("scan_run('listed')", _folder("listed", _RUN)),
    ("scan_run('tree')", _folder("tree/sub", _RUN)),
    ("scan_run('shut/a.parquet')", _path("shut/a.parquet", _RUN)),
    ("scan_run('shut/a.parquet', 'parquet')", _path("shut/a.parquet", _RUN)),
    ("scan_run('listed/a.parquet')", _path("listed/a.parquet", _RUN)),
    ("scan_run('shut/*.parquet')", _path("shut/*.parquet", _RUN)),
    ("irm.read_trec_run('shut/run.txt')", _path("shut/run.txt", _TREC)),
]


@pytest.fixture(scope="module")
def unreadable_from_python(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], str]:
    """Each call of :data:`_UNREADABLE` run in one Python process of an unprivileged user
    (one interpreter start for the eight calls, not eight: about 1 s each): what each
    printed, and the process' standard error."""
    root = tmp_path_factory.mktemp("unreadable")
    prefix = _unprivileged(root)
    _folders(root)
    script = (
        "import contextlib, io, json\n"
        "import polars_irmetrics as irm\n"
        "from polars_irmetrics.io.files import scan_run\n"
        "printed = {}\n"
    )
    for call, _ in _UNREADABLE:
        script += (
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
            "    try:\n"
            f"        {call}\n"
            "    except Exception as error:\n"
            "        print(type(error).__name__, error, sep=': ')\n"
            f"printed[{call!r}] = out.getvalue()\n"
        )
    script += "print(json.dumps(printed))\n"
    done = subprocess.run(
        [*prefix, sys.executable, "-c", script],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


@pytest.mark.parametrize(("call", "message"), _UNREADABLE)
def test_an_unreadable_folder_is_named_from_python(
    unreadable_from_python: tuple[dict[str, str], str], call: str, message: str
) -> None:
    printed, stderr = unreadable_from_python
    assert (printed[call], stderr) == (f"FileFormatError: {message}\n", "")


@pytest.mark.parametrize("source", ["shut", "listed", "tree", "shut/a.parquet", "shut/*.parquet"])
def test_an_unreadable_folder_is_named_by_the_command(tmp_path: Path, source: str) -> None:
    prefix = _unprivileged(tmp_path)
    _folders(tmp_path)
    done = subprocess.run(
        [*prefix, sys.executable, "-m", "polars_irmetrics", "evaluate", source, "--qrels", source],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    message = {call.split("'")[1]: text for call, text in _UNREADABLE}[source]
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"irm: error: {message}\n")


# ------------------------------------ 3. trec-eval: table labels beyond the integers


def _beyond(value: float) -> str:
    return (
        f"column 'relevance' of the judgments holds {value!r}, beyond the range of a 64-bit "
        "integer; trec_eval reads a relevance label as an integer: write a label from "
        "-2**63 to 2**63 - 1 or drop the judgment"
    )


def _not_finite(value: float) -> str:
    return (
        f"column 'relevance' of the judgments holds {value!r}, not a finite number; "
        "trec_eval reads a relevance label as an integer: write a finite label or drop the "
        "judgment"
    )


@pytest.mark.parametrize("suffix", ["parquet", "csv"])
@pytest.mark.parametrize(
    ("label", "message"),
    [
        (1e19, _beyond(1e19)),
        (-1e19, _beyond(-1e19)),
        (9.3e18, _beyond(9.3e18)),
        (float("inf"), _not_finite(float("inf"))),
        (float("nan"), _not_finite(float("nan"))),
    ],
)
def test_trec_eval_names_a_table_label_beyond_int64(
    tmp_path: Path, suffix: str, label: float, message: str
) -> None:
    run = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [2.0, 1.0]})
    run.write_parquet(tmp_path / "run.parquet")
    qrels = run.select("query_id", "doc_id", relevance=pl.Series([1.0, label]))
    path = tmp_path / f"qrels.{suffix}"
    if suffix == "csv":
        qrels.write_csv(path)
    else:
        qrels.write_parquet(path)
    done = irm_in_process("trec-eval", str(path), str(tmp_path / "run.parquet"), "-m", "P.2")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"irm: error: {path}: {message}\n"


def test_trec_eval_truncates_a_fractional_table_label(tmp_path: Path) -> None:
    run = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [2.0, 1.0]})
    run.write_parquet(tmp_path / "run.parquet")
    qrels = run.select("query_id", "doc_id", relevance=pl.Series([0.5, 3.7]))
    qrels.write_parquet(tmp_path / "qrels.parquet")
    done = irm_in_process(
        "trec-eval", str(tmp_path / "qrels.parquet"), str(tmp_path / "run.parquet"), "-m", "P.2"
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.split() == ["P_2", "all", "0.5000"]


# --------------------------------- 4. evaluate_online names its own keyword, position=


def _no_position(column: str) -> str:
    return (
        f"position={column!r} names no column of the log (its columns: 'session_id', "
        "'doc_id', 'clicked'); name the column of its positions (1 = top) with position=..."
    )


@pytest.mark.parametrize("kind", ["DataFrame", "LazyFrame", "pandas"])
@pytest.mark.parametrize(
    ("options", "message"),
    [({}, _no_position("position")), ({"position": "slot"}, _no_position("slot"))],
)
def test_evaluate_online_names_position_for_a_missing_position_column(
    kind: str, options: dict[str, str], message: str
) -> None:
    log = pl.DataFrame({"session_id": ["s1"], "doc_id": ["d1"], "clicked": [True]})
    given = {"DataFrame": log, "LazyFrame": log.lazy(), "pandas": log.to_pandas()}[kind]
    with pytest.raises(ColumnNotFoundError, match=f"^{re.escape(message)}$"):
        irm.evaluate_online(given, ["ctr"], **options)


def test_evaluate_still_names_rank_for_a_missing_rank_column() -> None:
    log = pl.DataFrame({"session_id": ["s1"], "doc_id": ["d1"], "clicked": [True]})
    message = (
        "rank='position' names no column of the run (its columns: 'session_id', 'doc_id', "
        "'clicked'); name the column of its ranks (1 = top) with rank=..., or drop rank= "
        "(without the column the values would be computed otherwise, in silence)"
    )
    with pytest.raises(ColumnNotFoundError, match=f"^{re.escape(message)}$"):
        irm.evaluate(log, ["ctr"], query_id="session_id", rank="position")
