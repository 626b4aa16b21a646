"""Round 19, vectors, the command line and the file readers: a long message keeps its
advice (cut in the middle, not at its end)."""

from __future__ import annotations

from pathlib import Path

from .helpers import irm_in_process


def test_a_long_warning_keeps_its_start_and_its_advice(tmp_path: Path) -> None:
    """Three runs of 96-character names, no two sharing a document id for a query:
    fuse's warning names the pairs by their files (over 600 characters); the command
    cut it at 400, dropping the advice ('... silence this with ...')."""
    names = []
    for i, tag in enumerate("abc"):
        name = f"{tag}_" + "x" * 90 + ".txt"
        (tmp_path / name).write_text(f"q{i} Q0 d1 1 0.5 {tag}\nq{i + 1} Q0 d1 1 0.5 {tag}\n")
        names.append(name)
    done = irm_in_process("fuse", *names, "-o", "out.txt", cwd=tmp_path)
    assert done.returncode == 0
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"irm: warning: runs {names[0]!r} and")
    assert " … " in line
    assert line.endswith(
        "If the runs are meant to be disjoint, the fused run is as documented: silence this "
        "with warnings.filterwarnings('ignore', category=irm.CoverageWarning)."
    )
    assert len(line) <= len("irm: warning: ") + 600
