"""Regenerate tests/data/trec_eval/: inputs, and what trec_eval 10.0 and 9.0.8 print.

The inputs are generated here (deterministically): judgments with ties, graded and
negative labels, string ids where ``d9`` sorts after ``d10``, queries on one side only,
run lines with fields after the run tag, scores whose order depends on how trec_eval
holds them (``run_scale.txt``), preference files (total and partial orders,
several users, more non-relevant than relevant documents), judgment groups and a
z-score file. Each case of ``CASES`` is then run with the given trec_eval binaries;
their standard output is stored as ``<case>.v10.out`` and ``<case>.v9.out``, and
``cases.json`` lists the cases (the tests read it and compare ``irm trec-eval``'s
output with these files, byte for byte).

This script runs binaries; it does not build them. Build trec_eval from its public
sources (https://github.com/usnistgov/trec_eval, tags v10.0 and v9.0.8, ``make``) and
pass the two executables::

    python scripts/trec_eval_expected.py --trec-eval-10 /tmp/trec_eval-10.0/trec_eval \\
        --trec-eval-9 /tmp/trec_eval-9.0.8/trec_eval

``--inputs-only`` rewrites the inputs without running anything.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "trec_eval"

#: name -> trec_eval arguments (files relative to the data folder). Every case runs
#: on both versions, except those listed in ``ONLY``.
CASES: dict[str, list[str]] = {
    "official": ["qrels.txt", "run.txt"],
    "all_trec_q": ["-q", "-m", "all_trec", "qrels.txt", "run.txt"],
    "all_trec_qc_missing": ["-q", "-c", "-m", "all_trec", "qrels_missing.txt", "run.txt"],
    "all_trec_qcMl": ["-q", "-c", "-M", "5", "-l", "2", "-m", "all_trec", "qrels.txt", "run.txt"],
    "meas_params": [
        "-q", "-m", "iprec_at_recall..15,.35,.5,.65", "-m", "11pt_avg..1,.5,.9",
        "-m", "Rprec_mult.0.3,1.7", "-m", "P.3,7", "-m", "relstring.15",
        "-m", "ndcg_cut.3,8", "qrels.txt", "run.txt",
    ],
    "prefs": ["-q", "-m", "all_prefs", "-R", "prefs", "prefs.txt", "run.txt"],
    "prefs_cM_missing": [
        "-q", "-c", "-M", "6", "-m", "all_prefs", "-R", "prefs", "prefs_missing.txt", "run.txt",
    ],
    "prefs_random": [
        "-q", "-M", "9", "-m", "all_prefs", "-R", "prefs", "prefs_random.txt", "run.txt",
    ],
    "qrels_prefs": ["-q", "-m", "all_prefs", "-R", "qrels_prefs", "qrels.txt", "run.txt"],
    "qrels_jg": ["-q", "-m", "qrels_jg", "-R", "qrels_jg", "qrels_jg.txt", "run.txt"],
    "qrels_jg_params": [
        "-q", "-m", "P_avgjg.2,6", "-m", "Rprec_mult_avgjg.0.5", "-m", "map_avgjg",
        "-R", "qrels_jg", "qrels_jg.txt", "run.txt",
    ],
    "zscores": ["-q", "-m", "official", "-Z", "zscores.txt", "qrels.txt", "run.txt"],
    "warning_missing": ["-q", "-m", "official", "qrels_missing.txt", "run.txt"],
    "scale": ["-q", "-m", "all_trec", "qrels_scale.txt", "run_scale.txt"],
}  # fmt: skip
#: Cases that only one version can run: trec_eval 10.0 stops (exit 4) on a judged
#: query without results unless -c is given; 9.0.8 skips it.
ONLY: dict[str, int] = {"warning_missing": 9}

_DOCS = [f"d{i}" for i in range(1, 31)]  # d9 > d10 > d1 as text
_QUERIES = ["q1", "q2", "q10", "q9", "301", "q4"]


def _write(name: str, lines: list[str]) -> None:
    (OUT / name).write_text("".join(line + "\n" for line in lines))


def make_inputs() -> None:
    rng = random.Random(20261125)
    OUT.mkdir(parents=True, exist_ok=True)
    qrels: list[str] = []
    for q in _QUERIES:
        labels = [-1, 0, 0, 0, 1, 1, 2, 3] if q != "q4" else [0, 0, -1]  # q4: none relevant
        for d in sorted(rng.sample(_DOCS, rng.randint(6, 18))):
            qrels.append(f"{q} 0 {d} {rng.choice(labels)}")
    _write("qrels.txt", qrels)
    _write("qrels_missing.txt", [*qrels, "q7 0 d1 1", "q7 0 d2 0", "q7 0 d3 2"])
    run: list[str] = []
    for q in [*_QUERIES, "q8"]:  # q8: results, no judgments
        docs = rng.sample(_DOCS, rng.randint(4, 20))
        for rank, d in enumerate(docs, start=1):
            score = rng.choice([0.5, 1.0, 1.25, 2.0, 3.5])  # ties
            tail = " extra words" if rng.random() < 0.2 else ""  # trailing fields
            run.append(f"{q}\tQ0\t{d}\t{rank}\t{score}\tsysA{tail}")
    _write("run.txt", run)
    prefs = _prefs(rng)
    _write("prefs.txt", [line for line in prefs if not line.startswith("q6 ")])
    _write("prefs_missing.txt", prefs)
    _write("prefs_random.txt", _random_prefs(rng))
    jg: list[str] = []
    for q in _QUERIES[:5]:
        for user in ("alice", "bob", "carol")[: rng.randint(1, 3)]:
            for d in sorted(rng.sample(_DOCS, rng.randint(3, 12))):
                jg.append(f"{q} {user} {d} {rng.choice([0, 0, 1, 2])}")
    _write("qrels_jg.txt", jg)
    _write("zscores.txt", _zscores(rng))
    _write_scale()


def _write_scale() -> None:
    """Scores whose order depends on how trec_eval holds them (10.0: a C double, 9.0.8:
    a float): beyond 32-bit precision (1.00000001 and 1.0), beyond float's range (1e-300
    rounds to 0, 1e300 to inf), and integers beyond 2**53 (atof ties them in both)."""
    _write(
        "qrels_scale.txt",
        [
            "s1 0 a 1", "s1 0 b 0", "s1 0 c 2",
            "s2 0 x 0", "s2 0 y 1", "s2 0 z 0",
            "s3 0 d1 1", "s3 0 d2 0", "s3 0 d3 2",
            "s4 0 t1 0", "s4 0 t2 1",
        ],
    )  # fmt: skip
    _write(
        "run_scale.txt",
        [
            "s1 Q0 a 1 1.00000001 sys", "s1 Q0 c 2 1.0 sys", "s1 Q0 b 3 0.5 sys",
            "s2 Q0 x 1 3e-300 sys", "s2 Q0 y 2 2e-300 sys", "s2 Q0 z 3 1e-300 sys",
            "s3 Q0 d1 1 2e300 sys", "s3 Q0 d2 2 1e300 sys", "s3 Q0 d3 3 3e38 sys",
            "s4 Q0 t1 1 1700000000000000001 sys", "s4 Q0 t2 2 1700000000000000000 sys",
        ],
    )  # fmt: skip


def _prefs(rng: random.Random) -> list[str]:
    """Total orders (one sub-group), partial orders (several sub-groups, consistent
    with a hidden order), a group with only non-relevant documents, more
    non-relevant than relevant documents, a line given twice, a query not in the
    run."""
    lines: list[str] = []
    for q in [*_QUERIES[:5], "q6"]:  # q6: not in the run
        for g in range(rng.randint(1, 3)):
            docs = rng.sample(_DOCS, rng.randint(4, 14))
            grade = {d: rng.choice([0, 0, 0, 1, 2, 3]) for d in docs}  # hidden order
            if rng.random() < 0.5:  # one sub-group: a total order by level
                for d in docs:
                    lines.append(f"{q} u{g} s {d} {grade[d]}")
            else:  # several sub-groups, each a subset ranked by the hidden grades
                for s in range(rng.randint(2, 3)):
                    for d in rng.sample(docs, rng.randint(2, len(docs))):
                        lines.append(f"{q} u{g} s{s} {d} {grade[d]}")
    lines += ["q1 zero s d3 0", "q1 zero s d4 0"]  # only non-relevant: no preference
    lines += ["q2 dup s d5 2", "q2 dup s d5 2", "q2 dup s d6 1"]  # a line given twice
    return lines


def _random_prefs(rng: random.Random) -> list[str]:
    """Many users per query, half of them partial orders over 2 to 4 sub-groups."""
    lines: list[str] = []
    for q in _QUERIES:
        for g in range(rng.randint(1, 4)):
            docs = rng.sample(_DOCS, rng.randint(2, 20))
            grade = {d: rng.choice([0, 0, 0, 0, 1, 2, 3, 4]) for d in docs}
            subgroups = 1 if rng.random() < 0.5 else rng.randint(2, 4)
            for s in range(subgroups):
                chosen = docs if subgroups == 1 else rng.sample(docs, rng.randint(1, len(docs)))
                lines += [f"{q} g{g} s{s} {d} {grade[d]}" for d in chosen]
    return lines


_MEASURES = [
    "num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank",
    *(f"iprec_at_recall_{i / 10:.2f}" for i in range(11)),
    *(f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
]  # fmt: skip


def _zscores(rng: random.Random) -> list[str]:
    lines = []
    for q in _QUERIES:
        for m in _MEASURES:
            std = 0.0 if m == "num_rel" else round(rng.uniform(0.05, 3.0), 4)
            lines.append(f"{q} {m} {round(rng.uniform(0, 5), 4)} {std}")
    return lines


def run_case(binary: str, args: list[str]) -> tuple[int, str]:
    done = subprocess.run(
        [binary, *args], cwd=OUT, capture_output=True, text=True, check=False, timeout=120
    )
    return done.returncode, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trec-eval-10", help="trec_eval 10.0 executable")
    parser.add_argument("--trec-eval-9", help="trec_eval 9.0.8 executable")
    parser.add_argument("--inputs-only", action="store_true")
    args = parser.parse_args()
    make_inputs()
    if args.inputs_only:
        return
    if not (args.trec_eval_10 and args.trec_eval_9):
        parser.error("give --trec-eval-10 and --trec-eval-9 (or --inputs-only)")
    listed = {}
    for name, case_args in CASES.items():
        for version, binary in ((10, args.trec_eval_10), (9, args.trec_eval_9)):
            if ONLY.get(name, version) != version:
                continue
            status, out = run_case(str(Path(binary).resolve()), case_args)
            if status != 0:
                raise SystemExit(f"{name}: trec_eval {version} exited with {status}")
            (OUT / f"{name}.v{version}.out").write_text(out)
            listed.setdefault(name, {"args": case_args, "versions": []})["versions"].append(
                version
            )
    (OUT / "cases.json").write_text(json.dumps(listed, indent=1) + "\n")


if __name__ == "__main__":
    main()
