"""Issue 42's measurement: every recommender metric in one plan against ``ndcg@10`` alone.

    python benchmarks/recsys42.py                      # 1M rows, 10,000 users
    python benchmarks/recsys42.py --rows 10M --users 100000 --items 1000000

Random recommendations (``--rows`` rows: ``--users`` users with ``rows / users``
distinct items each, ranked 1..n; items drawn with a power-law popularity from
``--items``, ``numpy.random.default_rng(SEED)``), test interactions (``qrels=``: a
few items per user, some of them in the user's list), a training history
(``interactions=``, the same popularity), groups for every item (``groups=``,
``doc_id -> group``, 5 groups, for the exposure measures; ``target=``, uniform over
them, for awrf) and a category for every item
(``item_features=``, 40 categories), a base model's top 10 per user (``reference=``,
the same draw with another seed) and two clusters of users (``user_groups=``), passed
where :func:`polars_irmetrics.evaluate` takes them.

The wanted metrics (:data:`WANTED`: RecTools', RePlay's, cornac's, Elliot's, the
fairness-of-exposure ones and the beyond-accuracy ones) are parsed against the current
registry: a name that does not parse yet, or that reads a table this script does not
build, is printed as skipped. The rest go into one ``irm.evaluate`` call (one lazy
plan); its time is compared with ``irm.evaluate(run, ['ndcg@10'], qrels=...)`` on the
same tables. Best of ``--repeat``; the table goes to ``--out``. ``--profile`` times
each metric alone (once, with the tables it reads) against ``ndcg@10`` first, to find
the slow ones; ``--floor`` times the passes of the recommendations any plan of these
metrics makes (:func:`floor`), written by hand with no metric computed, against
``ndcg@10``: how near the one plan's time can come to it on this machine; then those
passes with the side tables' (:func:`side_passes`) in the same run. ``--families``
times ``ndcg@10`` with each family of :data:`FAMILIES` (wall and CPU seconds, with the
tables the family reads): what each adds to ``ndcg@10``'s plan.
"""

from __future__ import annotations

import argparse
import inspect
import os
import platform
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

import polars_irmetrics as irm
from polars_irmetrics.errors import IrmError, IrmWarning
from polars_irmetrics.metrics.registry import parse_metric, parse_metric_list, split_routes
from polars_irmetrics.metrics.requests import INPUTS

SEED = 20261128
DEFAULT_OUT = Path(__file__).with_name("results_recsys42.md")

#: The recommender metrics issue 42 names, and the ones the library had before it, by
#: the family (the peer, or the tables read) ``--families`` times each of with ndcg@10.
FAMILIES: dict[str, tuple[str, ...]] = {
    "accuracy over recommendations": (
        "precision@10", "recall@10", "map@10", "mrr@10", "hit_rate@10",
    ),
    "RecTools": (
        "f1_beta@10", "reco_accuracy@10", "mcc@10", "partial_auc@10", "pap@10",
        "covered_users@10", "sufficient_reco@10", "unrepeated_reco@10", "intersection@10",
        "serendipity(kind='kotkov')@10",
    ),
    "RePlay, cornac": (
        "surprisal@10", "unexpectedness@10", "categorical_diversity@10",
        "novelty(kind='replay')@10", "rocauc@10", "ncrr@10",
    ),
    "Elliot": (
        "pop_rsp@10", "pop_reo@10", "aclt@10", "item_mad@10", "user_mad@10", "epc@10", "efd@10",
    ),
    "fairness of exposure (whole rankings: no cutoff)": (
        "ee_loss", "ee_disparity", "ee_relevance", "awrf", "awrf_ndcg", "rnd", "rkl", "rrd",
    ),
    "beyond accuracy (Microsoft Recommenders', popularity bias)": (
        "catalog_coverage@10", "distributional_coverage@10", "gini_index@10", "novelty@10",
        "average_popularity@10", "long_tail_share@10",
    ),
}  # fmt: skip

#: Every metric of :data:`FAMILIES`, in order.
WANTED: tuple[str, ...] = tuple(name for family in FAMILIES.values() for name in family)

#: The tables this script builds, by the keyword :func:`irm.evaluate` takes them with.
BUILT = ("qrels", "interactions", "groups", "target", "item_features", "reference", "user_groups")


def count(text: str) -> int:
    """``10M``, ``1M``, ``500K`` or a plain number."""
    scale = {"K": 1_000, "M": 1_000_000}.get(text[-1:].upper(), 1)
    return int(float(text[:-1] if scale > 1 else text) * scale)


def _popular(rng: np.random.Generator, n: int, items: int) -> np.ndarray:
    """``n`` item ids with a power-law popularity over ``items`` ids."""
    return np.minimum((rng.pareto(1.2, n) * items / 50).astype(np.int64), items - 1)


def tables(rows: int, users: int, items: int) -> dict[str, pl.DataFrame]:
    rng = np.random.default_rng(SEED)
    per_user = max(rows // users, 1)
    draw = rng.permutation(items)[_popular(rng, int(rows * 2.0), items)]
    user = np.repeat(np.arange(users, dtype=np.int64), -(-int(rows * 2.0) // users))
    run = (
        pl.DataFrame({"query_id": user[: len(draw)], "doc_id": draw})
        .unique(["query_id", "doc_id"], keep="first", maintain_order=True)
        .with_columns(rank=pl.int_range(1, pl.len() + 1).over("query_id"))
        .filter(pl.col("rank") <= per_user)
    )
    hits = run.filter(pl.col("rank") <= 30).sample(fraction=0.03, seed=SEED)
    extra = pl.DataFrame(
        {
            "query_id": rng.integers(0, users, users * 3),
            "doc_id": rng.permutation(items)[_popular(rng, users * 3, items)],
        }
    )
    qrels = (
        pl.concat([hits.select("query_id", "doc_id"), extra])
        .unique(["query_id", "doc_id"])
        .with_columns(relevance=pl.lit(1, pl.Int64))
    )
    train = pl.DataFrame(
        {
            "query_id": rng.integers(0, users, users * 20),
            "doc_id": rng.permutation(items)[_popular(rng, users * 20, items)],
        }
    )
    groups = pl.DataFrame(
        {"doc_id": np.arange(items, dtype=np.int64), "group": np.arange(items) % 5}
    )
    features = pl.DataFrame(
        {"doc_id": np.arange(items, dtype=np.int64), "category_id": np.arange(items) % 40}
    )
    target = pl.DataFrame({"group": np.arange(5), "target": [0.2] * 5})
    # a base model's top 10 (intersection, unexpectedness): the same draw, other seed
    other = np.random.default_rng(SEED + 1)
    base = other.permutation(items)[_popular(other, users * 20, items)]
    reference = (
        pl.DataFrame({"query_id": np.repeat(np.arange(users, dtype=np.int64), 20), "doc_id": base})
        .unique(["query_id", "doc_id"], keep="first", maintain_order=True)
        .with_columns(rank=pl.int_range(1, pl.len() + 1).over("query_id"))
        .filter(pl.col("rank") <= 10)
    )
    # Elliot's user clusters (user_mad): two groups of users
    user_groups = pl.DataFrame(
        {"query_id": np.arange(users, dtype=np.int64), "group": np.arange(users) % 2}
    )
    return {
        "run": run,
        "qrels": qrels,
        "interactions": train,
        "groups": groups,
        "target": target,
        "item_features": features,
        "reference": reference,
        "user_groups": user_groups,
    }


def plan_metrics(wanted: tuple[str, ...]) -> tuple[list[str], dict[str, str], set[str]]:
    """The metrics that parse and read only built tables; the skipped with why; the
    keywords the kept ones read."""
    takes = set(inspect.signature(irm.evaluate).parameters)
    kept: list[str] = []
    skipped: dict[str, str] = {}
    keywords: set[str] = {"qrels"}
    for name in wanted:
        try:
            request = parse_metric(name)
        except IrmError as error:
            skipped[name] = f"does not parse in this registry: {error}"
            continue
        metric = request.metric
        needs = {INPUTS[r][1] for r in request.reads if r in INPUTS} - {"qrels"}
        missing = sorted(n for n in needs if n not in BUILT or n not in takes)
        if missing:
            skipped[name] = f"reads {', '.join(m + '=' for m in missing)} (not built here)"
            continue
        try:  # one plan: the metrics that can share a call with ndcg@10
            split_routes(parse_metric_list(["ndcg@10", *kept, name]))
        except IrmError:
            skipped[name] = f"its {metric.route} route cannot share a call with ndcg@10"
            continue
        kept.append(name)
        keywords |= needs
    return kept, skipped, keywords


def _split(text: str) -> tuple[list[str], str]:
    """A results file's generated lines (before its first ``## `` heading) and its
    hand-written sections (from that heading on, after a blank line; empty where it has
    none)."""
    lines = text.splitlines()
    start = next((k for k, line in enumerate(lines) if line.startswith("## ")), len(lines))
    sections = "\n" + "\n".join(lines[start:]) + "\n" if start < len(lines) else ""
    return lines[:start], sections


def best(run: pl.DataFrame, metrics: list[str], repeat: int, **kw: Any) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = irm.evaluate(run.lazy(), metrics, **kw).collect()
        times.append(time.perf_counter() - start)
    return min(times), out


def best_cpu(run: pl.DataFrame, metrics: list[str], repeat: int, **kw: Any) -> tuple[float, float]:
    """Wall and CPU seconds (this process's, every thread), each the best of ``repeat``."""
    wall, cpu = [], []
    for _ in range(repeat):
        start, used = time.perf_counter(), time.process_time()
        irm.evaluate(run.lazy(), metrics, **kw).collect()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - used)
    return min(wall), min(cpu)


def reading(names: list[str], kw: dict[str, Any]) -> dict[str, Any]:
    """The keywords of ``kw`` that ``names`` read (``unseen_items=`` where one of them is
    a recommendation-table metric)."""
    reads = {INPUTS[r][1] for name in names for r in parse_metric(name).reads if r in INPUTS}
    kept = {k: v for k, v in kw.items() if k in reads}
    if "unseen_items" in kw and any(parse_metric(n).metric.route == "recsys" for n in names):
        kept["unseen_items"] = kw["unseen_items"]
    return kept


def side_passes(data: dict[str, pl.DataFrame]) -> list[pl.LazyFrame]:
    """The passes over the side tables any plan of these metrics makes, written by hand
    (no metric computed): the duplicate checks of the judgments, groups=,
    item_features= and user_groups= (a group-by of each by its key), and the
    interactions' distinct (user, item) pairs with their count per item (Elliot's and
    RePlay's popularity: distinct users) and per user (Elliot's users' training pairs),
    and the count of raw interactions per item (RecTools' popularity)."""
    interactions = data["interactions"].lazy()
    pairs = interactions.unique().cache()
    return [
        data["qrels"].lazy().group_by("query_id").agg(pl.len(), pl.col("doc_id").n_unique()),
        pairs.group_by("doc_id").agg(pl.len()),
        pairs.group_by("query_id").agg(pl.len()),
        interactions.group_by("doc_id").agg(pl.len()),
        data["groups"].lazy().group_by("doc_id").agg(pl.len()),
        data["item_features"].lazy().group_by("doc_id").agg(pl.len()),
        data["user_groups"].lazy().group_by("query_id").agg(pl.len()),
    ]


def floor(data: dict[str, pl.DataFrame], repeat: int, sides: bool = False) -> float:
    """Seconds (best of ``repeat``) of the passes over the recommendations that any
    plan of these metrics makes, written by hand and collected together in one
    streaming run: each user's rows, distinct items and ranks counted (every route's
    check of a document listed twice or a rank held twice), the judged rows (the
    accuracy metrics, the expected-exposure measures), every row's group summed per
    (user, group) (awrf's attention, rND's group counts), the distinct items against
    the interactions (the coverage tallies) and the top 10 with each item's
    popularity and category (Elliot's, the recommendation-table metrics); no metric
    is computed from them. A lower bound on the one plan's time, not an estimate.
    ``sides``: with :func:`side_passes` in the same run."""
    run, qrels = data["run"].lazy(), data["qrels"].lazy().filter(pl.col("relevance") > 0)
    weight = 1.0 / pl.max_horizontal(pl.col("rank"), pl.lit(2)).cast(pl.Float64).log(2)
    popularity = data["interactions"].lazy().group_by("doc_id").agg(pl.len().alias("pop"))
    plans = [
        run.group_by("query_id").agg(
            pl.len(),
            pl.col("doc_id").n_unique().alias("docs"),
            pl.col("rank").n_unique().alias("ranks"),
            pl.col("rank").min().alias("low"),
            pl.col("rank").max().alias("high"),
        ),
        run.join(qrels, on=["query_id", "doc_id"])
        .group_by("query_id")
        .agg(pl.len(), weight.sum()),
        run.join(data["groups"].lazy(), on="doc_id")
        .group_by("query_id", "group")
        .agg(pl.len(), weight.sum()),
        run.select("doc_id")
        .unique()
        .join(popularity, on="doc_id", how="left")
        .select(pl.len(), pl.col("pop").count()),
        run.filter(pl.col("rank") <= 10)
        .join(popularity, on="doc_id", how="left")
        .join(data["item_features"].lazy(), on="doc_id", how="left")
        .group_by("query_id")
        .agg(pl.col("pop").sum(), pl.col("category_id").n_unique()),
    ]
    if sides:
        plans += side_passes(data)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        pl.collect_all(plans, engine="streaming")
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", type=count, default=count("1M"))
    parser.add_argument("--users", type=count, default=10_000)
    parser.add_argument("--items", type=count, default=100_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--only", nargs="*", help="measure these metrics instead of WANTED")
    parser.add_argument("--profile", action="store_true", help="time each metric alone")
    parser.add_argument(
        "--families",
        action="store_true",
        help="time ndcg@10 with each family of FAMILIES (wall and CPU), against ndcg@10",
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="time the passes of the run any such plan makes (floor()), against ndcg@10",
    )
    args = parser.parse_args(argv)

    start = time.perf_counter()
    data = tables(args.rows, args.users, args.items)
    run = data["run"]
    print(
        f"tables: run {len(run):,} rows, qrels {len(data['qrels']):,}, interactions "
        f"{len(data['interactions']):,}, groups {len(data['groups']):,} "
        f"({time.perf_counter() - start:.1f} s)"
    )
    kept, skipped, keywords = plan_metrics(tuple(args.only) if args.only else WANTED)
    for name, why in skipped.items():
        print(f"skipped {name}: {why}")
    kw: dict[str, Any] = {k: data[k].lazy() for k in sorted(keywords)}
    if any(parse_metric(name).metric.route == "recsys" for name in kept):
        kw["unseen_items"] = "drop"  # recommended items the training data lacks
    with warnings.catch_warnings():  # warm up (the first call's imports), a tiny run
        warnings.simplefilter("ignore", IrmWarning)
        best(run.head(1000), ["ndcg@10", *kept], 1, **kw)
    t_ndcg, _ = best(run, ["ndcg@10"], args.repeat, qrels=data["qrels"].lazy())
    print(f"ndcg@10 alone: {t_ndcg:.2f} s")
    if args.floor:
        t_floor = floor(data, args.repeat)
        print(f"the run's passes alone (floor): {t_floor:.2f} s, {t_floor / t_ndcg:.2f}x ndcg@10")
        t_sides = floor(data, args.repeat, sides=True)
        print(
            f"the run's and the side tables' passes (floor): {t_sides:.2f} s, "
            f"{t_sides / t_ndcg:.2f}x ndcg@10"
        )
    if args.families:
        wall, cpu = best_cpu(run, ["ndcg@10"], args.repeat, qrels=data["qrels"].lazy())
        print(f"ndcg@10 alone: wall {wall:.2f} s, CPU {cpu:.2f} s")
        for family, members in FAMILIES.items():
            names = ["ndcg@10", *(m for m in members if m in kept)]
            w, c = best_cpu(run, names, args.repeat, **reading(names, kw))
            print(
                f"  ndcg@10 + {family} ({len(names) - 1}): wall {w:.2f} s (+{w - wall:.2f}), "
                f"CPU {c:.2f} s (+{c - cpu:.2f})"
            )
    if args.profile:
        for name in kept:
            reads = {INPUTS[r][1] for r in parse_metric(name).reads if r in INPUTS} & set(kw)
            alone = {k: v for k, v in kw.items() if k in reads or k == "unseen_items"}
            try:
                t_one, _ = best(run, [name], 1, **alone)
            except IrmError:  # a metric that does not read unseen_items=
                alone.pop("unseen_items", None)
                t_one, _ = best(run, [name], 1, **alone)
            print(f"  {name} alone: {t_one:.2f} s, {t_one / t_ndcg:.2f}x ndcg@10")
    t_all, values = best(run, ["ndcg@10", *kept], args.repeat, **kw)
    ratio = t_all / t_ndcg
    print(f"{len(kept) + 1} metrics in one plan: {t_all:.2f} s, {ratio:.2f}x ndcg@10 alone")
    print(values)
    # the rows of other sizes measured before stay in the table
    mine = f"| {len(run):,} | {args.users:,} | {args.items:,} |"
    # the table's rows, not the tables of the sections written by hand below it
    generated, sections = _split(args.out.read_text() if args.out.is_file() else "")
    earlier = [
        line for line in generated if line[:3].strip("| ").isdigit() and not line.startswith(mine)
    ]
    lines = [
        "# Issue 42: the recommender metrics in one plan against ndcg@10 alone",
        "",
        "`python benchmarks/recsys42.py --rows ROWS --users USERS --items ITEMS`, one row "
        f"per size (the last: --repeat {args.repeat}); polars {pl.__version__}, "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, shared with "
        "other busy processes (compare the ratio, not the times). Seconds, best of the "
        "repeats, each a lazy plan collected.",
        "",
        "| rows | users | items | metrics | ndcg@10 alone (s) | all in one plan (s) | ratio |",
        "|---:|---:|---:|---:|---:|---:|---:|",
        *sorted(
            [
                *earlier,
                f"| {len(run):,} | {args.users:,} | {args.items:,} | {len(kept) + 1} | "
                f"{t_ndcg:.2f} | {t_all:.2f} | {ratio:.2f}x |",
            ],
            key=lambda line: int(line.split("|")[1].replace(",", "")),
        ),
        "",
        f"Measured: {', '.join(['ndcg@10', *kept])}.",
        "",
        "Skipped (not in this registry when it ran, or reading a table not built here):",
        "",
        *(f"- {n}: {why}" for n, why in skipped.items()),
    ]
    # the sections written by hand below the generated part (each a "## " heading) stay
    args.out.write_text("\n".join(lines) + "\n" + sections)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
