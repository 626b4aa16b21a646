"""``irm`` and the file readers and writers, round 6: CSV lines with too few fields,
one look-up of a refused line, compressed outputs, ``fuse -k`` and the flags of one
mode, ``ab --split`` weights, unreadable Parquet, BEIR byte-order marks, z-scores that
are plain numbers, and TREC run lines with fields after the run tag."""

from __future__ import annotations

import builtins
import bz2
import gzip
import json
import lzma
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import FileFormatError, InvalidValueError, TrecFormatError
from polars_irmetrics.io.files import (
    sample_interactions_path,
    sample_paths,
    scan_log,
    scan_qrels,
    scan_queries,
    scan_run,
)
from polars_irmetrics.io.output import write_table
from polars_irmetrics.io.zscores import read_trec_zscores

from .helpers import irm_in_process

#: The fix a file that is not UTF-8 is refused with.
_REENCODE = (
    " (text files are read as UTF-8: re-encode it, e.g. iconv -f latin1 -t utf-8, and the "
    "files whose ids it must match alike)"
)


_RUN = "a run: Parquet, a TREC run (query_id Q0 doc_id rank score run_id), CSV, TSV or JSON lines"
_FEWER = "fix or drop the line (a missing value is an empty field, e.g. a,,c)"


def _short(name: str, line: int, fields: int, header: int) -> str:
    plural = "s" if fields > 1 else ""
    return f"{name}, line {line}: {fields} field{plural} where the header has {header}; {_FEWER}"


def _blank(name: str, line: int, header: int) -> str:
    return f"{name}, line {line}: a blank line where the header has {header} fields; drop the line"


@pytest.fixture
def trec(tmp_path: Path) -> Path:
    """Two TREC runs and their judgments: qrels.txt, a.run, b.run."""
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 1\n")
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\nq2 Q0 d1 1 1.0 a\n")
    (tmp_path / "b.run").write_text("q1 Q0 d2 1 2.0 b\nq1 Q0 d1 2 1.0 b\nq2 Q0 d1 1 1.0 b\n")
    return tmp_path


# -- 1. a CSV/TSV line with too few fields (or blank) names the file and the line ------


_SHORT_RUN = "query_id,doc_id,score\nq1,d1,1.0\nq1,d2\nq2,d1,0.5\n"
_BLANK_RUN = "query_id,doc_id,score\nq1,d1,1.0\nq2,d1,0.5\n\n"
_SHORT_QRELS = "query_id,doc_id,relevance\nq1,d1,1\nq2,d1\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["evaluate", "run.csv", "--qrels", "qrels.txt", "-m", "map"],
                     _short("run.csv", 3, 2, 3), id="evaluate-run"),
        pytest.param(["evaluate", "blank.csv", "--qrels", "qrels.txt", "-m", "map"],
                     _blank("blank.csv", 4, 3), id="evaluate-blank-line"),
        pytest.param(["evaluate", "a.run", "--qrels", "qrels.csv", "-m", "map"],
                     _short("qrels.csv", 3, 2, 3), id="evaluate-qrels"),
        pytest.param(["evaluate", "run.tsv", "--qrels", "qrels.txt", "-m", "map"],
                     _short("run.tsv", 3, 1, 3), id="evaluate-tsv"),
        pytest.param(["trec-eval", "qrels.csv", "a.run"], _short("qrels.csv", 3, 2, 3),
                     id="trec-eval"),
        pytest.param(["compare", "--qrels", "qrels.txt", "run.csv", "a.run", "-m", "map"],
                     _short("run.csv", 3, 2, 3), id="compare"),
        pytest.param(["fuse", "run.csv", "a.run", "-o", "fused.run"],
                     _short("run.csv", 3, 2, 3), id="fuse"),
    ],
)  # fmt: skip
def test_a_csv_line_with_too_few_fields_names_file_and_line(
    trec: Path, args: list[str], message: str
) -> None:
    (trec / "run.csv").write_text(_SHORT_RUN)
    (trec / "blank.csv").write_text(_BLANK_RUN)
    (trec / "qrels.csv").write_text(_SHORT_QRELS)
    (trec / "run.tsv").write_text("query_id\tdoc_id\tscore\nq1\td1\t1.0\nq1\n")
    done = irm_in_process(*args, cwd=trec)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"irm: error: {message}\n"
    assert not (trec / "fused.run").exists()


def test_ab_refuses_a_csv_log_line_with_too_few_fields(tmp_path: Path) -> None:
    log = tmp_path / "log.csv"
    pl.read_parquet(sample_interactions_path()).write_csv(log)
    lines = log.read_text().splitlines(keepends=True)
    lines[4] = ",".join(lines[4].split(",")[:5]) + "\n"
    log.write_text("".join(lines))
    done = irm_in_process("ab", "log.csv", "-m", "ctr@10", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"irm: error: {_short('log.csv', 5, 5, 11)}\n"


@pytest.mark.parametrize(
    ("read", "text", "message"),
    [
        pytest.param(scan_run, _SHORT_RUN, _short("{path}", 3, 2, 3), id="scan_run"),
        pytest.param(scan_run, _BLANK_RUN, _blank("{path}", 4, 3), id="scan_run-blank"),
        pytest.param(scan_qrels, _SHORT_QRELS, _short("{path}", 3, 2, 3), id="scan_qrels"),
        pytest.param(scan_queries, "query_id,day\nq1,mon\nq2\n", _short("{path}", 3, 1, 2),
                     id="scan_queries"),
        pytest.param(scan_log, "a,b,c\n1,2,3\n4,5\n", _short("{path}", 3, 2, 3), id="scan_log"),
    ],
)  # fmt: skip
def test_the_readers_refuse_a_csv_line_with_too_few_fields(
    tmp_path: Path, read: Callable[[str], pl.LazyFrame], text: str, message: str
) -> None:
    path = tmp_path / "table.csv"
    path.write_text(text)
    with pytest.raises(FileFormatError, match=f"^{re.escape(message.format(path=path))}$"):
        read(str(path))


def test_every_file_of_a_csv_glob_is_checked(tmp_path: Path) -> None:
    (tmp_path / "day1.csv").write_text("query_id,doc_id,score\nq1,d1,1.0\n")
    (tmp_path / "day2.csv").write_text("query_id,doc_id,score\nq2,d1,1.0\nq2,d2\n")
    with pytest.raises(FileFormatError, match=re.escape(_short(str(tmp_path / "day2.csv"), 3,
                                                               2, 3))):  # fmt: skip
        scan_log(str(tmp_path / "day*.csv"))


def test_empty_trailing_values_and_quoted_separators_still_read(tmp_path: Path) -> None:
    path = tmp_path / "run.csv"
    path.write_text('query_id,doc_id,score,note\nq1,d1,1.0,\nq1,"d,2",0.5,x\n')
    frame = scan_run(str(path)).collect()
    assert frame["doc_id"].to_list() == ["d1", "d,2"]
    assert frame["note"].to_list() == [None, "x"]


# -- 2. one look-up of the line polars refused, in io --------------------------------


def test_one_io_function_names_the_refused_line() -> None:
    import polars_irmetrics.cli.main as cli_main
    from polars_irmetrics.io import files

    assert callable(files.located_error)
    assert not hasattr(cli_main, "_ragged")
    assert not hasattr(cli_main, "_undecodable")


def test_located_error_names_a_line_past_the_first_bytes(tmp_path: Path) -> None:
    from polars_irmetrics.io.files import located_error

    body = "".join(f"q{i},d{i},1.0\n" for i in range(6000))  # past the 64 KiB looked at
    latin = tmp_path / "latin.csv"
    latin.write_bytes(f"query_id,doc_id,score\n{body}".encode() + b"q1,caf\xe9,1.0\n")
    ragged = tmp_path / "ragged.csv"
    ragged.write_text(f"query_id,doc_id,score\n{body}q1,d1,1.0,x\n")
    clean = tmp_path / "clean.csv"
    clean.write_text(f"query_id,doc_id,score\n{body}")
    assert str(located_error(str(latin))) == (
        f"{latin}, line 6002: not valid UTF-8: b'q1,caf\\xe9,1.0'{_REENCODE}"
    )
    assert str(located_error(str(ragged))) == (
        f"{ragged}, line 6002: 4 fields where the header has 3; fix or drop the line (a "
        "separator inside a value needs quotes)"
    )
    assert located_error(str(clean)) is None
    small = tmp_path / "small.txt"
    small.write_bytes(b"q1 Q0 d1 1 2.0 r\nq1 Q0 caf\xe9 2 1.0 r\n")
    assert str(located_error(str(small), "a run")) == (
        f"{small}, line 2: not valid UTF-8: b'q1 Q0 caf\\xe9 2 1.0 r'{_REENCODE}; expected a run"
    )
    assert located_error("https://example.org/run.parquet") is None
    assert located_error(str(tmp_path / "*.nothing")) is None


def test_a_csv_run_not_utf8_past_the_first_bytes_is_named(trec: Path) -> None:
    body = "".join(f"q{i},d{i},1.0\n" for i in range(6000))
    (trec / "run.csv").write_bytes(f"query_id,doc_id,score\n{body}".encode() + b"q1,\xe9,1\n")
    done = irm_in_process("evaluate", "run.csv", "--qrels", "qrels.txt", "-m", "map", cwd=trec)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"irm: error: run.csv, line 6002: not valid UTF-8: b'q1,\\xe9,1'{_REENCODE}; "
        f"expected {_RUN}\n"
    )


# -- 3. compressed outputs: written compressed, or refused ---------------------------

_UNPACK: dict[str, Callable[[bytes], bytes]] = {
    ".gz": gzip.decompress,
    ".bz2": bz2.decompress,
    ".xz": lzma.decompress,
}


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
@pytest.mark.parametrize(
    ("args", "name", "plain"),
    [
        pytest.param(["evaluate", "a.run", "--qrels", "qrels.txt", "-m", "map"], "means.csv",
                     "means.csv", id="evaluate-csv"),
        pytest.param(["evaluate", "a.run", "--qrels", "qrels.txt", "-m", "map"], "means.md",
                     "means.md", id="evaluate-md"),
        pytest.param(["fuse", "a.run", "b.run"], "fused.run", "fused.run", id="fuse-trec"),
        pytest.param(["fuse", "a.run", "b.run"], "fused.csv", "fused.csv", id="fuse-csv"),
        pytest.param(["trec-eval", "-m", "map", "qrels.txt", "a.run"], "out.txt", "out.txt",
                     id="trec-eval"),
        pytest.param(["compare", "--qrels", "qrels.txt", "a.run", "b.run", "-m", "map"],
                     "table.md", "table.md", id="compare"),
    ],
)  # fmt: skip
def test_a_compressed_name_is_written_compressed(
    trec: Path, args: list[str], name: str, plain: str, suffix: str
) -> None:
    done = irm_in_process(*args, "-o", plain, cwd=trec)
    assert done.returncode == 0, done.stderr
    packed = irm_in_process(*args, "-o", name + suffix.upper(), cwd=trec)
    assert packed.returncode == 0, packed.stderr
    data = (trec / (name + suffix.upper())).read_bytes()
    assert _UNPACK[suffix](data) == (trec / plain).read_bytes()
    assert sorted(p.name for p in trec.iterdir() if p.name.startswith(".")) == []


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_the_library_writers_compress_what_the_readers_read(tmp_path: Path, suffix: str) -> None:
    frame = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [2.0, 1.0]})
    run = tmp_path / f"run.txt{suffix}"
    irm.write_trec_run(frame, run, run_id="r")
    assert _UNPACK[suffix](run.read_bytes()) == b"q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\n"
    assert irm.read_trec_run(run)["doc_id"].to_list() == ["d1", "d2"]
    table = tmp_path / f"run.csv{suffix}"
    write_table(frame, table)
    assert _UNPACK[suffix](table.read_bytes()) == frame.write_csv().encode()
    assert scan_run(str(table)).collect()["doc_id"].to_list() == ["d1", "d2"]


@pytest.mark.parametrize(
    ("args", "name", "message"),
    [
        pytest.param(["evaluate", "a.run", "--qrels", "qrels.txt", "-m", "map"], "means.csv.zst",
                     "means.csv.zst: .zst files are not written; end the name in .gz, .bz2 or .xz "
                     "to compress it (e.g. means.csv.gz), or drop .zst", id="evaluate-zst"),
        pytest.param(["evaluate", "a.run", "--qrels", "qrels.txt", "-m", "map", "--format",
                      "csv"], "means.zip",
                     "means.zip: .zip files are not written; end the name in .gz, .bz2 or .xz to "
                     "compress it (e.g. means.csv.gz), or drop .zip", id="evaluate-format-zip"),
        pytest.param(["evaluate", "a.run", "--qrels", "qrels.txt", "-m", "map"], "means.gz",
                     "means.gz: .gz names a compression, not an output format; put the format's "
                     "suffix before it (e.g. results.csv.gz), or name the format (--format csv)",
                     id="evaluate-gz-alone"),
        pytest.param(["evaluate", "a.run", "--qrels", "qrels.txt", "-m", "map"],
                     "means.parquet.gz",
                     "means.parquet.gz: a parquet file is not written compressed (.gz): it "
                     "compresses its own columns; drop .gz from the name", id="evaluate-parquet"),
        pytest.param(["fuse", "a.run", "b.run"], "fused.run.zst",
                     "fused.run.zst: .zst files are not written; end the name in .gz, .bz2 or .xz "
                     "to compress it (e.g. means.csv.gz), or drop .zst", id="fuse-zst"),
        pytest.param(["fuse", "a.run", "b.run"], "fused.parquet.bz2",
                     "fused.parquet.bz2: a parquet file is not written compressed (.bz2): it "
                     "compresses its own columns; drop .bz2 from the name", id="fuse-parquet"),
        pytest.param(["trec-eval", "qrels.txt", "a.run"], "out.lz4",
                     "out.lz4: .lz4 files are not written; end the name in .gz, .bz2 or .xz to "
                     "compress it (e.g. means.csv.gz), or drop .lz4", id="trec-eval-lz4"),
    ],
)  # fmt: skip
def test_a_compression_that_is_not_written_is_refused(
    trec: Path, args: list[str], name: str, message: str
) -> None:
    done = irm_in_process(*args, "-o", name, cwd=trec)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"irm: error: {message}\n"
    assert not (trec / name).exists()


def test_write_trec_run_refuses_a_compression_it_does_not_write(tmp_path: Path) -> None:
    frame = pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [1.0]})
    target = tmp_path / "run.txt.zst"
    with pytest.raises(InvalidValueError, match=re.escape(
        f"{target}: .zst files are not written; end the name in .gz, .bz2 or .xz"
    )):  # fmt: skip
        irm.write_trec_run(frame, target)
    assert not target.exists()


# -- 4. irm fuse: -k >= 0 (fuse's range), and the flags of the other mode refused ------------


@pytest.mark.parametrize("k", ["-1", "-0.5", "inf", "nan", "x"])
def test_fuse_refuses_a_k_out_of_range(trec: Path, k: str) -> None:
    done = irm_in_process("fuse", "a.run", "b.run", f"-k={k}", "-o", "f.run", cwd=trec)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"irm fuse: error: argument -k: expected a number >= 0 (rrf's k, e.g. -k 60), got "
        f"{k!r} (see 'irm fuse --help')\n"
    )
    assert not (trec / "f.run").exists()


_WITH_OPTIMIZE = "is not used with --optimize, which searches the parameters and prints the "
_WITH_OPTIMIZE += "best: drop {flag}, or drop --optimize to fuse with it"
_NEEDS_OPTIMIZE = "is only used with --optimize (the judgments and the metric to tune on): add "
_NEEDS_OPTIMIZE += "--optimize, or drop {flag}"


@pytest.mark.parametrize(
    ("extra", "flag", "text"),
    [
        (["--optimize", "--qrels", "qrels.txt", "-k", "5"], "-k", _WITH_OPTIMIZE),
        (["--optimize", "--qrels", "qrels.txt", "--weights", "1,1"], "--weights", _WITH_OPTIMIZE),
        (["--optimize", "--qrels", "qrels.txt", "--param", "phi=0.8"], "--param", _WITH_OPTIMIZE),
        (["--optimize", "--qrels", "qrels.txt", "--depth", "5"], "--depth", _WITH_OPTIMIZE),
        (["--optimize", "--qrels", "qrels.txt", "-o", "f.run"], "-o", _WITH_OPTIMIZE),
        (["--optimize", "--qrels", "qrels.txt", "--run-id", "x"], "--run-id", _WITH_OPTIMIZE),
        (["-o", "f.run", "--qrels", "qrels.txt"], "--qrels", _NEEDS_OPTIMIZE),
        (["-o", "f.run", "--metric", "map"], "--metric", _NEEDS_OPTIMIZE),
        (["-o", "f.run", "--step", "0.1"], "--step", _NEEDS_OPTIMIZE),
        (["-o", "f.run", "--folds", "2"], "--folds", _NEEDS_OPTIMIZE),
    ],
)
def test_fuse_refuses_a_flag_its_mode_does_not_read(
    trec: Path, extra: list[str], flag: str, text: str
) -> None:
    done = irm_in_process("fuse", "a.run", "b.run", *extra, cwd=trec)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"irm: error: {flag} {text.format(flag=flag)}\n"
    assert not (trec / "f.run").exists()


def test_fuse_refuses_a_run_id_for_a_table(trec: Path) -> None:
    done = irm_in_process("fuse", "a.run", "b.run", "-o", "f.csv", "--run-id", "x", cwd=trec)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "irm: error: --run-id names the run of a TREC output; -o f.csv writes a csv table (its "
        "run is not named): drop --run-id, or write a TREC run (e.g. -o fused.run)\n"
    )


def test_fuse_still_takes_a_positive_k_and_its_defaults(trec: Path) -> None:
    """Pinned (right before and after): -k 30 changes rrf's scores, the tag is 'fused'."""
    assert irm_in_process("fuse", "a.run", "b.run", "-k", "30", "-o", "k30.run",
                          cwd=trec).returncode == 0  # fmt: skip
    assert irm_in_process("fuse", "a.run", "b.run", "-o", "k60.run", cwd=trec).returncode == 0
    k30 = (trec / "k30.run").read_text().splitlines()
    k60 = (trec / "k60.run").read_text().splitlines()
    assert k30[0].split()[4] == repr(1 / 31 + 1 / 32)
    assert k60[0].split()[4] == repr(1 / 61 + 1 / 62)
    assert all(line.endswith(" fused") for line in k30 + k60)


def test_fuse_takes_k_zero_as_fuse_does(trec: Path) -> None:
    """-k 0 is in fuse's declared range (k >= 0): each term 1 / rank."""
    assert irm_in_process("fuse", "a.run", "b.run", "-k", "0", "-o", "k0.run",
                          cwd=trec).returncode == 0  # fmt: skip
    first = (trec / "k0.run").read_text().splitlines()[0].split()
    assert first[4] == repr(1 / 1 + 1 / 2)


@pytest.mark.parametrize("method", ["rrf", "wsum"])
def test_fuse_optimize_without_norm_runs_for_every_method(trec: Path, method: str) -> None:
    """--optimize without --norm: optimize_fusion's default (min-max where the method
    reads scores, none where it reads positions), never a refused no-op min-max."""
    done = irm_in_process("fuse", "a.run", "b.run", "--optimize", "--qrels", "qrels.txt",
                          "--method", method, cwd=trec)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "best ndcg@10" in done.stdout


# -- 5. irm ab --split: weights, divided by their sum --------------------------------


def _ab_csv(*args: str) -> str:
    done = irm_in_process("ab", "--sample", "-m", "ctr@10", "--format", "csv", *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_ab_split_weights_are_divided_by_their_sum() -> None:
    """Pinned (right before and after, as irm.ab_test documents split= as weights)."""
    even = _ab_csv("--split", "A=0.5", "--split", "B=0.5")
    assert _ab_csv("--split", "A=0.9", "--split", "B=0.9") == even
    assert _ab_csv("--split", "A=9", "--split", "B=1") == _ab_csv(
        "--split", "A=0.9", "--split", "B=0.1"
    )


def test_ab_help_says_the_split_is_weights() -> None:
    done = irm_in_process("ab", "--help")
    assert done.returncode == 0
    assert "divided by their sum" in " ".join(done.stdout.split())


@pytest.mark.parametrize(
    ("split", "message"),
    [
        (["A=0.5", "A=0.2", "B=0.5"],
         "--split 'A=0.2': arm 'A' is given twice (A=0.5 before); give each arm one share"),
        (["A=inf", "B=1"], "--split 'A=inf': the share must be a decimal number > 0, e.g. "
                           "--split A=0.5"),
        (["A=1_0", "B=1"], "--split 'A=1_0': the share must be a decimal number > 0, e.g. "
                           "--split A=0.5"),
        (["A=0", "B=1"], "--split 'A=0': the share must be a decimal number > 0, e.g. "
                         "--split A=0.5"),
    ],
)  # fmt: skip
def test_ab_refuses_a_split_that_would_be_ignored_or_misread(
    split: list[str], message: str
) -> None:
    flags = [item for share in split for item in ("--split", share)]
    done = irm_in_process("ab", "--sample", "-m", "ctr@10", *flags)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"irm: error: {message}\n"


# -- 6. readers: unreadable Parquet, BEIR byte-order marks, plain z-score numbers -----


def _deny(monkeypatch: pytest.MonkeyPatch, denied: str) -> None:
    """Every Python open of ``denied`` fails as a file without read permission does."""
    real_open, real_path_open = builtins.open, Path.open

    def fake_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file) == denied:
            raise PermissionError(13, "Permission denied", denied)
        return real_open(file, *args, **kwargs)

    def fake_path_open(self: Path, *args: Any, **kwargs: Any) -> Any:
        if str(self) == denied:
            raise PermissionError(13, "Permission denied", denied)
        return real_path_open(self, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake_open)
    monkeypatch.setattr(Path, "open", fake_path_open)


def _unreadable(path: str, what: str) -> str:
    return (
        f"{path}: permission denied, the file cannot be read; expected {what}: make it "
        "readable by this user (e.g. chmod u+r) or read a copy that is"
    )


def test_an_unreadable_parquet_run_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(tmp_path / "run.parquet")
    pl.read_parquet(sample_paths()[0][0]).write_parquet(path)
    _deny(monkeypatch, path)
    with pytest.raises(FileFormatError, match=f"^{re.escape(_unreadable(path, _RUN))}$"):
        scan_run(path)
    qrels = str(sample_paths()[1])
    done = irm_in_process("evaluate", path, "--qrels", qrels, "-m", "map")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"irm: error: {_unreadable(path, _RUN)}\n"


def _beir(root: Path, bom: bytes) -> Path:
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_bytes(
        bom + json.dumps({"_id": "d1", "title": "Cats", "text": "purr"}).encode() + b"\n"
    )
    (root / "queries.jsonl").write_bytes(bom + b'{"_id": "1", "text": "cat"}\n')
    (root / "qrels" / "test.tsv").write_bytes(bom + b"query-id\tcorpus-id\tscore\n1\td1\t1\n")
    return root


def test_beir_files_may_start_with_a_byte_order_mark(tmp_path: Path) -> None:
    plain = irm.read_beir(_beir(tmp_path / "plain", b""))
    marked = irm.read_beir(_beir(tmp_path / "bom", b"\xef\xbb\xbf"))
    for one, other in zip(plain, marked, strict=True):
        assert one.collect().rows() == other.collect().rows()
    assert marked.corpus.collect().rows() == [("d1", "Cats", "purr")]


def test_an_unreadable_beir_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _beir(tmp_path / "beir", b"")
    queries = str(root / "queries.jsonl")
    _deny(monkeypatch, queries)
    what = "the BEIR queries (JSON lines)"
    with pytest.raises(FileFormatError, match=f"^{re.escape(_unreadable(queries, what))}$"):
        irm.read_beir(root)


@pytest.mark.parametrize("token", ["1_0", "\u0661", "\u00a01", "0x10", "1e", "--1", "nan1"])
def test_zscores_refuse_what_is_no_plain_decimal(tmp_path: Path, token: str) -> None:
    path = tmp_path / "z.txt"
    path.write_text(f"301 map 0.1 0.2\n301 P_10 {token} 0.2\n")
    with pytest.raises(TrecFormatError) as info:
        read_trec_zscores(path)
    line = f"301 P_10 {token} 0.2"
    assert str(info.value) == f"{path}, line 2: mean {token!r} is not a number: {line!r}"


def test_zscores_read_decimals_and_atofs_words(tmp_path: Path) -> None:
    """Pinned (right before and after): the numbers trec_eval's atof reads."""
    path = tmp_path / "z.txt"
    path.write_text("1 a 0.25 .5\n2 a -3 1e-4\n3 a +2.5E+1 nan\n4 a -inf INF\n")
    entries = read_trec_zscores(path).entries
    assert [entries[q, "a"][0] for q in "1234"] == [0.25, -3.0, 25.0, float("-inf")]
    assert entries["2", "a"][1] == 1e-4


# -- 7. TREC run lines with fields after the run tag: ignored, as trec_eval 10.0 does ---


def test_a_trec_run_line_with_fields_after_the_tag_is_read_as_trec_eval_reads_it(
    trec: Path,
) -> None:
    """Pinned (right before and after): get_trec_results.c of trec_eval 10.0 says "Any
    field following run_id is ignored"; a line with fewer than six fields is refused."""
    (trec / "long.run").write_text(
        "q1 Q0 d1 1 2.0 a extra\nq1 Q0 d2 2 1.0 a x y z\nq2 Q0 d1 1 1.0 a 7\n"
    )
    assert irm.read_trec_run(trec / "long.run").equals(irm.read_trec_run(trec / "a.run"))
    args = ["evaluate", "--qrels", "qrels.txt", "-m", "map", "--format", "csv"]
    long = irm_in_process(*args, "long.run", cwd=trec)
    assert long.returncode == 0, long.stderr
    assert long.stdout == irm_in_process(*args, "a.run", cwd=trec).stdout
    (trec / "short.run").write_text("q1 Q0 d1 1 2.0\n")
    with pytest.raises(TrecFormatError, match="line 1: expected 6 whitespace-separated fields"):
        irm.read_trec_run(trec / "short.run")
