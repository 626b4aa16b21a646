"""Round 17 command line: the --format help of ``irm ab`` and ``irm metrics`` says what
they do with an -o suffix that names no format (refuse it, as ``irm evaluate`` does),
not 'else table'."""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import irm_in_process

_SAID = (
    "output format (default: the one -o FILE's suffix names, .parquet .csv .json .md .tex "
    ".html .txt, another suffix is refused; table on stdout"
)
_REFUSED = (
    "irm: error: out.xyz: the suffix names no output format; use one of .csv, .htm, .html, "
    ".json, .markdown, .md, .parquet, .pq, .tex, .txt, or name the format (--format csv)\n"
)


@pytest.mark.parametrize(
    ("command", "run"),
    [("ab", ["ab", "--sample"]), ("metrics", ["metrics"]), ("evaluate", ["evaluate", "--sample"])],
)
def test_format_help_matches_the_refusal(tmp_path: Path, command: str, run: list[str]) -> None:
    shown = irm_in_process(command, "--help")
    assert shown.returncode == 0
    # argparse wraps the help at the terminal's width: compare the words
    assert _SAID in " ".join(shown.stdout.split())
    assert "else table" not in " ".join(shown.stdout.split())
    done = irm_in_process(*run, "-o", "out.xyz", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", _REFUSED)
    assert not (tmp_path / "out.xyz").exists()
