"""Make round7_ttest.json: repro_eval's t-test p-values, for tests/test_agreement_round7.py.

Run in a side environment with repro_eval 0.5.0's code and ir_measures / pytrec_eval
(neither installs beside the project's pins):

    python -m venv side && side/bin/pip install repro_eval==0.5.0
    side/bin/python tests/data/agreement/make_round7_ttest.py

Each case's runs are scored per topic as repro_eval's ``util.evaluate_run`` scores them
(ir_measures over pytrec_eval, P@1 and P@3), then passed to repro_eval's
``statistics.ttest`` once per run, paired (``rpd=True``) and unpaired (``rpd=False``),
as ``RpdEvaluator.ttest`` and ``RplEvaluator.ttest`` call it.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import ir_measures
from repro_eval.measure.statistics import ttest
from repro_eval.util import evaluate_run

rng = random.Random(7)
TOPICS = [f"q{i}" for i in range(1, 7)]
POOL = "abcdefgh"
QRELS = [(q, d, rng.randint(0, 1)) for q in TOPICS for d in rng.sample(POOL, 6)]
MEASURES = {"P_1": ir_measures.P @ 1, "P_3": ir_measures.P @ 3}


def run(order: dict[str, str]) -> list[tuple[str, str, float]]:
    """Each topic's documents, best first (distinct scores: no tie to break)."""
    return [(q, d, float(len(docs) - i)) for q, docs in order.items() for i, d in enumerate(docs)]


def shuffled(keep: int = 0, base: dict[str, str] | None = None) -> dict[str, str]:
    """Five documents per topic in a random order (``keep``: ``base``'s first ones kept)."""
    out = {}
    for q in TOPICS:
        head = base[q][:keep] if base else ""
        rest = rng.sample([d for d in (base[q] if base else POOL) if d not in head], 5 - keep)
        out[q] = head + "".join(rest)
    return out


BASE, ADV = shuffled(), shuffled()
# every topic's first document relevant: P@1 is 1 throughout
TOP = {q: next(d for qq, d, r in QRELS if qq == q and r) for q in TOPICS}
CONSTANT = {q: TOP[q] + "".join(rng.sample([d for d in POOL if d != TOP[q]], 4)) for q in TOPICS}
CASES = {
    # the baseline reproduced exactly, the advanced run not
    "baseline_exact": (run(BASE), run(ADV), run(BASE), run(shuffled())),
    # the baseline's first document kept on every topic (P@1 reproduced), the rest not
    "one_metric_exact": (run(BASE), run(ADV), run(shuffled(1, BASE)), run(shuffled())),
    # nothing reproduced
    "none_exact": (run(BASE), run(ADV), run(shuffled()), run(shuffled())),
    # the baseline reproduced exactly with P@1 1 on every topic: its unpaired P@1 test
    # is NaN (constant samples) beside P@3's 1, so not every p-value of the run is NaN
    "constant_exact": (run(CONSTANT), run(ADV), run(CONSTANT), run(ADV)),
}


def scores(rows: list[tuple[str, str, float]]) -> dict[str, dict[str, float]]:
    as_run: dict[str, dict[str, float]] = {}
    for q, d, s in rows:
        as_run.setdefault(q, {})[d] = s
    qrels: dict[str, dict[str, int]] = {}
    for q, d, r in QRELS:
        qrels.setdefault(q, {})[d] = r
    raw = evaluate_run(list(MEASURES.values()), qrels, as_run)
    names = {str(m): name for name, m in MEASURES.items()}
    return {q: {names[m]: v for m, v in values.items()} for q, values in raw.items()}


out: dict[str, object] = {"qrels": QRELS}
for case, (ob, oa, rb, ra) in CASES.items():
    p = {}
    for side, orig, rep in (("baseline", ob, rb), ("advanced", oa, ra)):
        for measure, rpd in (("p_paired", True), ("p_unpaired", False)):
            for metric, value in ttest(scores(orig), scores(rep), rpd=rpd).items():
                p[f"{measure}|{side}|{metric}"] = None if math.isnan(value) else value
    out[case] = {"runs": {"ob": ob, "oa": oa, "rb": rb, "ra": ra}, "p": p}
target = Path(__file__).with_name("round7_ttest.json")
target.write_text(json.dumps(out, separators=(",", ":")) + "\n")
