"""Make peers.json: repro_eval's and trectools' values on random rankings.

Run in a side environment (neither installs beside the project's pins):

    python -m venv side && side/bin/pip install repro_eval==0.5.0 trectools==0.0.50
    side/bin/python tests/data/agreement/make_peers.py

Rankings are written as rows (query, doc, score); repro_eval reads them as pytrec_eval
dicts in score order (its break_ties orders equal scores by doc id descending, as
trec_eval), trectools' get_correlation as lists of (value, name) sorted as its
sort_systems_by sorts them.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from repro_eval.measure.document_order import KTU, RBO
from trectools import misc

rng = random.Random(20241)
POOL = [f"d{i}" for i in range(60)]


def ranking(n: int) -> list[tuple[str, float]]:
    docs = rng.sample(POOL, n)
    scores = sorted((float(rng.randint(0, 3 * n)) for _ in docs), reverse=True)
    return list(zip(docs, scores, strict=True))


def as_run(rows: dict[str, list[tuple[str, float]]]) -> dict[str, dict[str, float]]:
    return {q: dict(sorted(r, key=lambda x: -x[1])) for q, r in rows.items()}


runs, refs, equal_runs, equal_refs = {}, {}, {}, {}
for i in range(40):
    q = f"q{i}"
    runs[q], refs[q] = ranking(rng.randint(1, 30)), ranking(rng.randint(1, 30))
    n = rng.randint(2, 30)
    equal_runs[q], equal_refs[q] = ranking(n), ranking(n)

out: dict[str, object] = {
    "run": [[q, d, s] for q, r in runs.items() for d, s in r],
    "reference": [[q, d, s] for q, r in refs.items() for d, s in r],
    "equal_run": [[q, d, s] for q, r in equal_runs.items() for d, s in r],
    "equal_reference": [[q, d, s] for q, r in equal_refs.items() for d, s in r],
}
# repro_eval's RBO(orig_run, rep_run, p, depth): the rep run against the orig
rbo = {}
for p, depth in ((0.95, 1000), (0.9, 10), (0.8, 25)):
    values = RBO(as_run(refs), as_run(runs), p=p, depth=depth, pbar=False, per_topic=True)
    rbo[f"rbo_repro_eval(p={p})@{depth}"] = values
out["rbo_repro_eval"] = rbo
ktu = {}
for k in (1000, 10):
    ktu[f"ktu@{k}" if k != 1000 else "ktu"] = KTU(
        as_run(equal_refs), as_run(equal_runs), trim_thresh=k, per_topic=True
    )
out["ktu"] = ktu


# trectools: tau_ap of the run against the reference as the truth, over the same items
def sort_like_trectools(pairs: list[tuple[float, str]]) -> list[tuple[float, str]]:
    return sorted(sorted(pairs, key=lambda x: x[1]), key=lambda x: x[0], reverse=True)


tau_ap = {}
for q in equal_refs:
    docs = [d for d, _ in equal_refs[q]]
    truth = [(float(len(docs) - i), d) for i, d in enumerate(docs)]
    shuffled = docs[:]
    rng.shuffle(shuffled)
    compared = [(float(len(docs) - i), d) for i, d in enumerate(shuffled)]
    tau_ap[q] = {
        "reference": docs,
        "run": shuffled,
        "tau_ap": misc.get_correlation(
            sort_like_trectools(truth), sort_like_trectools(compared), "tau_ap"
        )[0],
    }
out["tau_ap"] = tau_ap

# system orderings: trectools' get_correlation of two lists of (mean, system)
systems = []
for _case in range(12):
    n = rng.randint(3, 12)
    names = [f"s{i}" for i in range(n)]
    a = {s: rng.random() for s in names}
    b = {s: a[s] + rng.gauss(0, 0.2) for s in names}
    row = {"a": a, "b": b}
    for method in ("kendall", "spearman", "tau_ap"):
        value = misc.get_correlation(
            sort_like_trectools([(v, s) for s, v in a.items()]),
            sort_like_trectools([(v, s) for s, v in b.items()]),
            method,
        )[0]
        row[method] = float(value)
    systems.append(row)
out["systems"] = systems

Path(__file__).with_name("peers.json").write_text(json.dumps(out, sort_keys=True) + "\n")

# repro_eval's reproducibility measures (RpdEvaluator's, and RplEvaluator's unpaired
# t-test) on four runs of 25 topics judged by one qrels, scored by pytrec_eval as
# repro_eval does (every run retrieves every judged topic: pytrec_eval skips the others)
import pytrec_eval  # noqa: E402
from repro_eval.measure.effectiveness import RMSE, nRMSE  # noqa: E402
from repro_eval.measure.overall_effects import DRI, ER  # noqa: E402
from repro_eval.measure.statistics import ttest  # noqa: E402

topics = [f"t{i}" for i in range(25)]
qrels = {t: {d: rng.choice([0, 0, 1, 2]) for d in rng.sample(POOL, 20)} for t in topics}
four: dict[str, dict[str, dict[str, float]]] = {}
for run in ("b", "a"):  # an original and its reproduction are equally long (KTU needs it)
    lengths = {t: rng.randint(10, 40) for t in topics}
    for side in ("orig", "rep"):
        four[f"{side}_{run}"] = {t: dict(ranking(lengths[t])) for t in topics}
measures = {"ndcg_cut_10", "P_10", "map"}
scores = {
    name: pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    for name, run in four.items()
}
repro: dict[str, object] = {
    "qrels": [[t, d, r] for t, judged in qrels.items() for d, r in judged.items()],
    "runs": {
        name: [[t, d, s] for t, ranked in run.items() for d, s in ranked.items()]
        for name, run in four.items()
    },
}
values = {}
for run in ("b", "a"):
    label = "baseline" if run == "b" else "advanced"
    o, r = scores[f"orig_{run}"], scores[f"rep_{run}"]
    values[f"rmse|{label}"] = RMSE(o, r)
    values[f"nrmse|{label}"] = nRMSE(o, r)
    values[f"p_paired|{label}"] = ttest(o, r, rpd=True)
    values[f"p_unpaired|{label}"] = ttest(o, r, rpd=False)
    values[f"ktu|{label}"] = KTU(
        as_run({t: list(x.items()) for t, x in four[f"orig_{run}"].items()}),
        as_run({t: list(x.items()) for t, x in four[f"rep_{run}"].items()}),
    )
    values[f"rbo|{label}"] = RBO(
        as_run({t: list(x.items()) for t, x in four[f"orig_{run}"].items()}),
        as_run({t: list(x.items()) for t, x in four[f"rep_{run}"].items()}),
        p=0.95,
        depth=1000,
        pbar=False,
        per_topic=False,
    )
values["er|"] = ER(scores["orig_a"], scores["orig_b"], scores["rep_a"], scores["rep_b"])
values["delta_ri|"] = DRI(scores["orig_a"], scores["orig_b"], scores["rep_a"], scores["rep_b"])
repro["values"] = values
Path(__file__).with_name("peers_repro.json").write_text(json.dumps(repro, sort_keys=True) + "\n")
