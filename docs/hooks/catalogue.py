"""mkdocs hook: the metric catalogue, generated from the registry at build time, one
entry per registered metric.

The documentation site's metric page is this module's :func:`catalogue_markdown`,
rendered when the site is built (:func:`on_page_markdown`), so it can never drift
from the code: names, aliases, parameters and defaults come from the declarations, and
each worked example's number is computed by :func:`polars_irmetrics.evaluate` on
:data:`EXAMPLE_RUN` and :data:`EXAMPLE_QRELS` at build time (the other families' by
their own entry points on the examples below).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from polars_irmetrics.door.evaluate import evaluate
from polars_irmetrics.door.jg import evaluate_jg
from polars_irmetrics.door.online import evaluate_online
from polars_irmetrics.door.recsys import beyond_accuracy
from polars_irmetrics.errors import IrmError, MetricParameterError
from polars_irmetrics.metrics.elliot import ELLIOT
from polars_irmetrics.metrics.mad import MAD
from polars_irmetrics.metrics.prediction import BINARY_METRICS, PROBABILITY_METRICS
from polars_irmetrics.metrics.registry import EMPTY_TARGET_ACTIONS, list_metrics, parse_metric
from polars_irmetrics.metrics.spec import AGGREGATES, Metric, Route
from polars_irmetrics.metrics.trec import REAL_CUTOFFS
from polars_irmetrics.offline.prefs import prefs_measures

__all__ = [
    "EXAMPLE_PREDICTIONS",
    "EXAMPLE_PREFS",
    "EXAMPLE_QRELS",
    "EXAMPLE_QRELS_JG",
    "EXAMPLE_RUN",
    "catalogue_markdown",
    "example_name",
    "on_page_markdown",
]

#: Where the metric page (docs/metrics.md) takes the catalogue.
MARKER = "<!-- catalogue -->"

#: The worked example's run: one query, six documents ranked 1..6.
EXAMPLE_RUN = pl.DataFrame(
    {
        "query_id": ["q1"] * 6,
        "doc_id": ["d1", "d2", "d3", "d4", "d5", "d6"],
        "rank": [1, 2, 3, 4, 5, 6],
    }
)
#: Its judgments: graded labels, a judged non-relevant document, an unjudged one (d4),
#: a document in the pool but not judged (label -1) and a relevant one not retrieved.
EXAMPLE_QRELS = pl.DataFrame(
    {
        "query_id": ["q1"] * 6,
        "doc_id": ["d1", "d2", "d3", "d5", "d6", "d9"],
        "relevance": [2, 0, 1, 3, -1, 1],
    }
)

#: The groups of AWRF's worked example.
EXAMPLE_GROUPS = pl.DataFrame({"doc_id": ["d1", "d3", "d2", "d5"], "group": ["a", "a", "b", "b"]})

#: The click metrics' worked example: an impression log of two sessions. In ``s1`` the
#: items at positions 2 and 4 are clicked (12 s and 30 s after the page was shown, dwell
#: 5 s and 40 s; the second converts); ``s2`` is abandoned (no click).
EXAMPLE_LOG = pl.DataFrame(
    {
        "session_id": ["s1"] * 5 + ["s2"] * 3,
        "position": [1, 2, 3, 4, 5, 1, 2, 3],
        "clicked": [False, True, False, True, False, False, False, False],
        "dwell": [None, 5.0, None, 40.0, None, None, None, None],
        "converted": [False, False, False, True, False, False, False, False],
        "timestamp": [100.0, 112.0, 100.0, 130.0, 100.0, 200.0, 200.0, 200.0],
    }
)

#: The beyond-accuracy metrics' worked example: two users' top-3 recommendations, the
#: interaction history popularity and novelty come from, and 2-d item embeddings.
EXAMPLE_RECOMMENDATIONS = pl.DataFrame(
    {
        "user_id": ["u1"] * 3 + ["u2"] * 3,
        "item_id": ["a", "b", "c", "a", "d", "e"],
        "rank": [1, 2, 3, 1, 2, 3],
    }
)
EXAMPLE_HISTORY = pl.DataFrame(
    {
        "user_id": ["u1", "u1", "u2", "u2", "u3", "u3", "u3", "u3", "u3"],
        "item_id": ["a", "b", "a", "f", "a", "c", "d", "e", "f"],
    }
)
EXAMPLE_FEATURES = pl.DataFrame(
    {
        "item_id": ["a", "b", "c", "d", "e", "f"],
        "features": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, 0.5], [0.2, 1.0], [0.5, 0.5]],
        "category_id": ["x", "y", "x", "z", "y", "x"],  # categorical_diversity's
    }
)

#: The preference measures' worked example: two users' preferences on the worked
#: example's query (one sub-group each: a higher level is preferred to a lower one). The
#: run is :data:`EXAMPLE_RUN` scored ``7 - rank``.
EXAMPLE_PREFS = pl.DataFrame(
    {
        "query_id": ["q1"] * 6,
        "jg": ["u1"] * 4 + ["u2"] * 2,
        "jsg": ["s1"] * 6,
        "doc_id": ["d1", "d3", "d2", "d9", "d2", "d1"],
        "rel_level": [2, 1, 0, 1, 1, 0],
    }
)
#: The judgment-group measures' worked example: two users' judgments of the query.
EXAMPLE_QRELS_JG = pl.DataFrame(
    {
        "query_id": ["q1"] * 6,
        "jg": ["u1"] * 3 + ["u2"] * 3,
        "doc_id": ["d1", "d2", "d9", "d1", "d2", "d3"],
        "relevance": [1, 0, 1, 0, 1, 1],
    }
)

#: The prediction metrics' worked example: a click model's predicted probabilities for
#: two users' impressions (``u1`` has both classes, with a tie at 0.4; ``u2`` only clicks).
EXAMPLE_PREDICTIONS = pl.DataFrame(
    {
        "query_id": ["u1"] * 4 + ["u2"] * 2,
        "label": [1, 0, 1, 0, 1, 1],
        "prediction": [0.9, 0.4, 0.4, 0.2, 0.7, 0.3],
    }
)

#: Family headings, by the module a metric's formula is declared in.
#: Neighbour recall's worked example: the exact 5 nearest neighbours of one query
#: (l2, score = -distance) and an approximate index's 5, which missed n2 and n5 and
#: returned x1 (0.0005 past the 5th true distance) and x2.
EXAMPLE_EXACT = pl.DataFrame(
    {
        "query_id": ["q1"] * 5,
        "doc_id": ["n1", "n2", "n3", "n4", "n5"],
        "score": [-0.1, -0.2, -0.3, -0.4, -0.5],
    }
)
EXAMPLE_APPROX = pl.DataFrame(
    {
        "query_id": ["q1"] * 5,
        "doc_id": ["n1", "n3", "n4", "x1", "x2"],
        "score": [-0.1, -0.3, -0.4, -0.5005, -0.6],
    }
)

#: The off-policy examples: three logged rounds (the logger chose ``a`` with 0.5), the
#: evaluation policy and a reward model (see :func:`polars_irmetrics.ope.evaluate.build_ope_plan`);
#: two slates of two slots; one slate for ``cascade_dr``.
EXAMPLE_OPE_LOG = pl.DataFrame(
    {
        "round_id": [1, 2, 3],
        "action": ["a", "a", "b"],
        "reward": [1.0, 0.0, 1.0],
        "pscore": [0.5] * 3,
    }
)
EXAMPLE_OPE_POLICY = pl.DataFrame(
    {
        "round_id": [1, 1, 2, 2, 3, 3],
        "action": ["a", "b"] * 3,
        "prob": [0.9, 0.1, 0.5, 0.5, 0.1, 0.9],
        "q_hat": [0.6, 0.3] * 3,
    }
)
EXAMPLE_SLATE_LOG = pl.DataFrame(
    {
        "round_id": [1, 1, 2, 2],
        "position": [1, 2, 1, 2],
        "action": ["a", "b", "b", "a"],
        "reward": [1.0, 0.0, 1.0, 1.0],
        "pscore": [0.25] * 4,
        "pscore_item_position": [0.5, 0.5, 0.5, 0.5],
        "pscore_cascade": [0.5, 0.25, 0.5, 0.25],
    }
)
EXAMPLE_SLATE_POLICY = EXAMPLE_SLATE_LOG.select(
    "round_id",
    "position",
    pscore=pl.Series([0.5, 0.5, 0.125, 0.125]),
    pscore_item_position=pl.Series([0.6, 0.6, 0.4, 0.4]),
    pscore_cascade=pl.Series([0.6, 0.6, 0.4, 0.4]),
)
#: ``cascade_dr``'s policy and reward model: per (round, position, action), the policy's
#: probability given the logged items above (0 for those) and ``q_hat``.
EXAMPLE_CASCADE = pl.DataFrame(
    {
        "round_id": [1] * 4 + [2] * 4,
        "position": [1, 1, 2, 2] * 2,
        "action": ["a", "b"] * 4,
        "prob": [0.6, 0.4, 0.0, 1.0, 0.4, 0.6, 1.0, 0.0],
        "q_hat": [0.5, 0.2, 0.1, 0.3, 0.5, 0.2, 0.4, 0.1],
    }
)

#: The propensity-scored metrics' worked example: the judged run's documents' propensities
#: (the relevant d1, d3, d5 and the unretrieved d9 need one).
EXAMPLE_PROPENSITIES = pl.DataFrame(
    {"doc_id": ["d1", "d2", "d3", "d5", "d6", "d9"], "propensity": [0.8, 0.5, 0.25, 0.5, 1.0, 0.5]}
)

#: The rank-similarity metrics' worked example: a run that swaps the reference's first two
#: documents and replaces its third (c) by x; d and c are kept, in swapped places.
EXAMPLE_REFERENCE = pl.DataFrame(
    {"query_id": ["q1"] * 5, "doc_id": ["a", "b", "c", "d", "e"], "score": [5.0, 4, 3, 2, 1]}
)
EXAMPLE_AGAINST = pl.DataFrame(
    {"query_id": ["q1"] * 5, "doc_id": ["b", "a", "x", "d", "c"], "score": [5.0, 4, 3, 2, 1]}
)

_FAMILIES = {
    "core": "Core metrics",
    "beyond": "Beyond trec_eval",
    "trec": "The rest of trec_eval",
    "online": "Click metrics (impression logs)",
    "recsys": "Beyond accuracy (recommenders)",
    "neighbors": "Vector search: recall of approximate neighbours",
    "agreement": "Rank similarity: a run against a reference run",
    "preference": "Preference and judgment-group measures",
    "prediction": "Prediction quality (click and rating models)",
    "ope": "Off-policy estimators (logged bandit feedback)",
    "listwise": "Recommender libraries' list metrics (cornac, RePlay)",
    "propensity": "Propensity-scored metrics (extreme classification)",
    "fairness": "Fairness of exposure (expected exposure, AWRF)",
    "mad": "Elliot's MAD: clusters of items and of users",
}

#: An example value for metrics whose "cutoff" is a real-valued parameter.
_REAL_EXAMPLES = {"recall": 0.5, "multiple": 2}


def example_name(metric: Metric) -> str:
    """The canonical name the worked example evaluates: ``@5`` where a cutoff is allowed.

    >>> from polars_irmetrics import get_metric
    >>> example_name(get_metric("ndcg")), example_name(get_metric("iprec"))
    ('ndcg@5', 'iprec(recall=0.5)')
    """
    if metric.name in REAL_CUTOFFS:
        return parse_metric(f"{metric.name}@{_REAL_EXAMPLES[REAL_CUTOFFS[metric.name]]}").name
    if metric.cutoff == "required" or (metric.cutoff == "optional" and metric.level == "query"):
        return f"{metric.name}@5"
    return metric.name


def _alias_spelling(metric: Metric, alias: str) -> str:
    """The alias as written, or with the example's cutoff where it needs one."""
    real = REAL_CUTOFFS.get(metric.name)
    cutoff = str(_REAL_EXAMPLES[real]) if real else "5"
    for spelling in (alias, f"{alias}@{cutoff}"):
        try:
            parse_metric(spelling)
        except IrmError:
            continue
        return spelling
    raise MetricParameterError(f"alias {alias!r} parses neither alone nor with @5")


def _markdown_table(frame: pl.DataFrame) -> str:
    rows = [" | ".join("" if v is None else str(v) for v in row) for row in frame.iter_rows()]
    head = " | ".join(frame.columns)
    return "\n".join([f"| {head} |", "|" + "---|" * frame.width, *(f"| {r} |" for r in rows)])


def _shown(value: float | int | None) -> str:
    if value is None:
        return "—"
    return str(value) if isinstance(value, int) else f"{value:.4f}"


def _family(metric: Metric) -> str:
    return metric.compute.__module__.rsplit(".", 1)[-1]


#: The worked example's table of each route.
_EXAMPLE_TABLES: dict[Route, str] = {
    "offline": "the judged run",
    "online": "the impression log",
    "recsys": "the recommendations",
    "prefs": "the preference judgments",
    "jg": "the judgment groups",
    "prediction": "the predictions",
    "neighbors": "the approximate and exact neighbours",
    "ope": "the logged feedback",
    "reference": "a run against a reference run",
    "propensity": "the judged run with each document's propensity",
    "exposure": "the judged run (one deterministic ranking, rbp's and geometric's default "
    "p=0.5; awrf: groups d1, d3 → a, d2, d5 → b, target a, b 1/2 each)",
}


def _ope_values(metrics: list[Metric]) -> dict[str, float | int | None]:
    names = [m.name for m in metrics if m.route == "ope"]
    slates = [n for n in names if n.startswith("slate_")]
    single = [n for n in names if n not in slates and n != "cascade_dr"]
    values: dict[str, float | int | None] = {}
    policy = EXAMPLE_OPE_POLICY.drop("q_hat")
    model = EXAMPLE_OPE_POLICY.drop("prob")
    if single:
        values |= evaluate(EXAMPLE_OPE_LOG, single, policy=policy, reward_model=model).row(
            0, named=True
        )
    if slates:
        values |= evaluate(EXAMPLE_SLATE_LOG, slates, policy=EXAMPLE_SLATE_POLICY).row(
            0, named=True
        )
    if "cascade_dr" in names:
        values |= evaluate(
            EXAMPLE_SLATE_LOG,
            ["cascade_dr"],
            policy=EXAMPLE_CASCADE.drop("q_hat"),
            reward_model=EXAMPLE_CASCADE.drop("prob"),
        ).row(0, named=True)
    return values


def _example_values(metrics: list[Metric]) -> dict[str, float | int | None]:

    offline = [
        example_name(m)
        for m in metrics
        if m.route == "offline" and "interactions" not in m.reads and m.name not in MAD
    ]
    nearest = [example_name(m) for m in metrics if m.route == "neighbors"]
    online = [example_name(m) for m in metrics if m.route == "online"]
    values: dict[str, float | int | None] = evaluate(
        EXAMPLE_RUN, offline, qrels=EXAMPLE_QRELS, per_query=True
    ).row(0, named=True)
    if online:
        values |= evaluate_online(EXAMPLE_LOG, online).row(0, named=True)
    recsys = [example_name(m) for m in metrics if m.route == "recsys"]
    if recsys:
        values |= beyond_accuracy(
            EXAMPLE_RECOMMENDATIONS,
            recsys,
            interactions=EXAMPLE_HISTORY,
            item_features=EXAMPLE_FEATURES,
        ).row(0, named=True)
    if any(m.route == "prefs" for m in metrics):  # every measure at once, trec_eval's names
        scored = EXAMPLE_RUN.with_columns(score=(7 - pl.col("rank")).cast(pl.Float64))
        measured = prefs_measures(scored, EXAMPLE_PREFS).row(0, named=True)
        values |= {name.lower(): v for name, v in measured.items() if name != "query_id"}
    predicted = [example_name(m) for m in metrics if m.route == "prediction"]
    if predicted:
        values |= evaluate(EXAMPLE_PREDICTIONS, predicted).row(0, named=True)
    if nearest:
        values |= evaluate(EXAMPLE_APPROX, nearest, neighbors=EXAMPLE_EXACT).row(0, named=True)
    values |= _ope_values(metrics)
    history = EXAMPLE_HISTORY.rename({"user_id": "query_id", "item_id": "doc_id"})
    catalogued = [  # RecTools' classification metrics: the catalogue from the history
        example_name(m)
        for m in metrics
        if m.route == "offline" and "interactions" in m.reads and m.name not in ELLIOT
    ]
    if catalogued:
        values |= evaluate(
            EXAMPLE_RUN, catalogued, qrels=EXAMPLE_QRELS, interactions=history, per_query=True
        ).row(0, named=True)
    elliot = [example_name(m) for m in metrics if m.name in ELLIOT]  # whole-table values
    if elliot:
        values |= evaluate(EXAMPLE_RUN, elliot, qrels=EXAMPLE_QRELS, interactions=history).row(
            0, named=True
        )
    clustered = [example_name(m) for m in metrics if m.name in MAD]  # whole-table values
    if clustered:  # AWRF's groups as item clusters; q1 alone in its user cluster: no pair
        values |= evaluate(
            EXAMPLE_RUN,
            clustered,
            qrels=EXAMPLE_QRELS,
            groups=EXAMPLE_GROUPS,
            user_groups=pl.DataFrame({"query_id": ["q1", "q2"], "group": ["x", "y"]}),
        ).row(0, named=True)
    similar = [example_name(m) for m in metrics if m.route == "reference"]
    if similar:
        values |= evaluate(
            EXAMPLE_AGAINST, similar, reference=EXAMPLE_REFERENCE, per_query=True
        ).row(0, named=True)
    ps_names = [example_name(m) for m in metrics if m.route == "propensity"]
    if ps_names:
        values |= evaluate(
            EXAMPLE_RUN, ps_names, qrels=EXAMPLE_QRELS, propensities=EXAMPLE_PROPENSITIES
        ).row(0, named=True)
    exposed = [
        example_name(m)
        for m in metrics
        if m.route == "exposure" and "target" not in m.reads and "judgments" in m.reads
    ]
    segregated = [
        example_name(m) for m in metrics if m.route == "exposure" and "judgments" not in m.reads
    ]
    if segregated:  # 20 documents, group w at ranks 2, 3, 4, 12 and 20
        values |= evaluate(
            pl.DataFrame({"query_id": ["q1"] * 20, "doc_id": range(1, 21), "rank": range(1, 21)}),
            segregated,
            groups=pl.DataFrame(
                {
                    "doc_id": range(1, 21),
                    "group": ["w" if d in (2, 3, 4, 12, 20) else "m" for d in range(1, 21)],
                }
            ),
            per_query=True,
        ).row(0, named=True)
    fair = [example_name(m) for m in metrics if "target" in m.reads]
    if fair:  # d1, d3 in group a, d2, d5 in b, the others in none; the target 1/2 each
        values |= evaluate(
            EXAMPLE_RUN,
            fair,
            qrels=EXAMPLE_QRELS,
            groups=EXAMPLE_GROUPS,
            target=pl.DataFrame({"group": ["a", "b"], "target": [0.5, 0.5]}),
            per_query=True,
        ).row(0, named=True)
    if exposed:  # the judged run with the negative label as non-relevant
        values |= evaluate(EXAMPLE_RUN, exposed, qrels=EXAMPLE_QRELS, per_query=True).row(
            0, named=True
        )
    groups = [example_name(m) for m in metrics if m.route == "jg"]
    if groups:
        values |= evaluate_jg(EXAMPLE_RUN, groups, qrels_jg=EXAMPLE_QRELS_JG).row(0, named=True)
    return values


def _prediction_label(metric: Metric) -> str:
    if metric.name in PROBABILITY_METRICS:
        return "binary (`positive_label`, default 1); predictions are probabilities in [0, 1]"
    if metric.name in BINARY_METRICS:
        return "binary (`positive_label`, default 1); predictions are any real scores"
    return "a number (rating); predictions are numbers"


def _code(text: str) -> str:
    return f"`{text}`"


def _better(metric: Metric) -> str:
    """The metric's declared direction, as compare, report and optimize_fusion read it,
    with the parameter values that declare their own (``Param.directions``)."""
    words = {None: "neither", True: "higher", False: "lower"}
    turned = [
        f"{words[direction]} for `{param.name}={value!r}`"
        for param in metric.params
        for value, direction in param.directions.items()
    ]
    if metric.higher_is_better is None and metric.route == "reference":
        # compare does not take a reference run: the orderings are what read it
        found = "neither: system_agreement and plot_swaps order by it only as told"
    elif metric.higher_is_better is None:
        found = "neither: compare counts no wins, report marks nothing"
    else:
        found = words[metric.higher_is_better]
    return found + (f" ({'; '.join(turned)})" if turned else "")


def _entry(metric: Metric, value: float | int | None) -> list[str]:
    lines = [f"### `{metric.name}` {{#{metric.name}}}", "", metric.summary, ""]
    spellings = [example_name(metric), *(_alias_spelling(metric, a.name) for a in metric.aliases)]
    rows = [
        ("Spellings", ", ".join(_code(s) for s in spellings)),
        (
            "Cutoff",
            {"optional": "optional `@k`", "required": "required `@k`", "none": "none"}[
                metric.cutoff
            ],
        ),
    ]
    if metric.params:
        rows.append(
            (
                "Parameters",
                "<br>".join(
                    f"`{p.name}={p.default!r}`"
                    + (f" ({' / '.join(repr(c) for c in p.choices)})" if p.choices else "")
                    + (f": {p.doc}" if p.doc else "")
                    for p in metric.params
                ),
            )
        )
    relevance = (
        "binary: relevant when label ≥ `relevance_level` (or `rel=`)"
        if metric.binary
        else "graded: the labels, relevant when ≥ `relevance_level` (the call's alone)"
        if metric.threshold
        else "graded: the labels themselves"
    )
    if metric.route == "ope":
        rows.append(("Reads", ", ".join(metric.reads)))
        over = (
            "rounds (slates: the sum of a round's slot rewards)"
            if "slate" in metric.name or "cascade" in metric.name
            else "rows"
        )
        rows.append(("Over", f"the log's {over} of each `by` group"))
    elif metric.route == "prediction":
        rows.append(("Label", _prediction_label(metric)))
        rows.append(("Reads", ", ".join(metric.reads)))
        rows.append(("Over", "the rows of each `by` group (each query with `per_query=True`)"))
    elif metric.route == "propensity":
        rows.append(("Relevance", relevance))
        rows.append(("Reads", ", ".join(metric.reads)))
        rows.append(
            (
                "Over queries",
                "a ratio of sums over the judged queries (pyxclib's), not a mean; "
                "`per_query=True` gives each query's share",
            )
        )
    elif metric.route == "exposure" and "judgments" not in metric.reads:
        rows.append(("Relevance", "none: the groups of the ranked documents"))
        rows.append(("Reads", "run (a `sample` column: a stochastic policy), groups="))
        rows.append(("Over queries", "arithmetic mean over the run's queries"))
    elif metric.route == "exposure":
        rows.append(
            (
                "Relevance",
                "binary: relevant when label > 0 (nDCG's gain, the default target's set)"
                if "target" in metric.reads
                else "graded: relevant when label > 0; the grades order the target",
            )
        )
        reads = "groups=, target= (optional)" if "target" in metric.reads else "groups="
        rows.append(("Reads", f"run (a `sample` column: a stochastic policy), judgments, {reads}"))
        rows.append(("Over queries", "arithmetic mean over queries with a relevant document"))
    elif metric.route == "reference":
        rows.append(("Relevance", "none: two rankings (ties from equal scores)"))
        rows.append(("Reads", ", ".join(metric.reads)))
        rows.append(("Over queries", "arithmetic mean (an undefined value left out)"))
    else:
        rows.append(("Relevance", relevance))
        rows.append(("Reads", ", ".join(metric.reads)))
        rows.append(
            (
                "Over queries",
                "geometric mean" if metric.aggregate == "geometric" else "arithmetic mean",
            )
        )
    rows.append(("Better", _better(metric)))
    if metric.matches:
        rows.append(
            ("Matches", "<br>".join(f"{peer}: {how}" for peer, how in metric.matches.items()))
        )
    (head, first), *rest = rows
    lines += [f"| {head} | {first} |", "|---|---|", *(f"| {k} | {v} |" for k, v in rest), ""]
    if metric.latex:
        lines += ["$$", metric.latex, "$$", ""]
    if metric.formula:
        lines += [metric.formula, ""]
    table = _EXAMPLE_TABLES[metric.route]
    if metric.route == "exposure" and "judgments" not in metric.reads:
        table = "a ranking of 20 documents, group w (the minority) at ranks 2, 3, 4, 12, 20"
    if metric.name == "item_mad":
        table = "the judged run, AWRF's groups (d1, d3 → a, d2, d5 → b) as item clusters"
    if metric.name == "user_mad":
        table = "the judged run, q1 alone in user cluster x of x, y (no pair: null)"
    lines += [
        f"Worked example on {table}: `{example_name(metric)}` = **{_shown(value)}**",
        "",
    ]
    return lines


def catalogue_markdown() -> str:
    """The catalogue as Markdown: the worked example's tables, then one entry per metric.

    Every registered metric (:func:`polars_irmetrics.list_metrics`) has an entry,
    grouped by family, and every spelling shown parses back with
    :func:`polars_irmetrics.parse_metric` (``tests/test_docs.py`` checks both).

    >>> text = catalogue_markdown()
    >>> "### `ndcg` {#ndcg}" in text and "`ndcg@5` = **0.7050**" in text
    True

    The preference example: u1 prefers d1 to d3, d2 and d9 and d3 and d9 to d2, u2
    prefers d2 to d1; the ranking d1, d2, d3 (d9 not retrieved) fulfils d1 > d3,
    d1 > d2 and d1 > d9, 3 of the 6:

    >>> "`prefs_simp` = **0.5000**" in text and "`prefs_num_prefs_poss` = **6**" in text
    True
    """
    metrics = list_metrics()
    values = _example_values(metrics)
    lines = [
        "Every metric below is computed on one worked example when this page is built:",
        "",
        "| doc_id | rank | relevance |",
        "|---|---|---|",
    ]
    labels = dict(zip(EXAMPLE_QRELS["doc_id"], EXAMPLE_QRELS["relevance"], strict=True))
    ranks = dict(zip(EXAMPLE_RUN["doc_id"], EXAMPLE_RUN["rank"], strict=True))
    for doc in sorted(set(labels) | set(ranks)):
        label = labels.get(doc)
        lines.append(
            f"| {doc} | {ranks.get(doc, 'not retrieved')} | "
            f"{'unjudged' if label is None else label} |"
        )
    lines += [
        "",
        "R = 4 relevant documents (d1, d3, d5 and the unretrieved d9 have labels ≥ 1); d2 "
        "is judged non-relevant, d4 is unjudged, and d6 (label −1) is in the pool but not "
        "judged (trec_eval's convention).",
        "",
        "Click metrics are computed on an impression log of two sessions:",
        "",
        _markdown_table(EXAMPLE_LOG),
        "",
        "Beyond-accuracy metrics are computed on two users' recommendations, with "
        "popularity from an interaction history and similarity from item embeddings:",
        "",
        _markdown_table(EXAMPLE_RECOMMENDATIONS),
        "",
        _markdown_table(EXAMPLE_HISTORY),
        "",
        _markdown_table(EXAMPLE_FEATURES),
        "",
        "Preference measures (`irm.evaluate_prefs`) are computed on the run above (score "
        "= 7 − rank) with two users' preference judgments (a higher `rel_level` is "
        "preferred within a sub-group `jsg`), judgment-group measures (`irm.evaluate_jg`) "
        "on the run with two users' judgments:",
        "",
        _markdown_table(EXAMPLE_PREFS),
        "",
        _markdown_table(EXAMPLE_QRELS_JG),
        "",
        "Prediction metrics (`label=`, `prediction=`) are computed on a click model's "
        "predictions for two users' impressions (rating metrics read the same 0/1 labels "
        "as ratings):",
        "",
        _markdown_table(EXAMPLE_PREDICTIONS),
        "",
        "Neighbour recall is computed on an approximate index's five neighbours of a query "
        "against the exact five (score = −distance):",
        "",
        _markdown_table(EXAMPLE_APPROX),
        "",
        _markdown_table(EXAMPLE_EXACT),
        "",
        "Off-policy estimators are computed on three logged rounds (the logging policy's "
        "probability of the logged action in `pscore`), the evaluation policy's `prob` and "
        "a reward model's `q_hat` per round and action; the slate estimators on two slates "
        "of two slots, with the evaluation policy's propensities of the logged slates; "
        "`cascade_dr` on the same slates with the policy's probability of each action at "
        "each slot given the logged items above:",
        "",
        _markdown_table(EXAMPLE_OPE_LOG),
        "",
        _markdown_table(EXAMPLE_OPE_POLICY),
        "",
        _markdown_table(EXAMPLE_SLATE_LOG),
        "",
        _markdown_table(EXAMPLE_SLATE_POLICY),
        "",
        _markdown_table(EXAMPLE_CASCADE),
        "",
        "Besides its own parameters, every metric takes `agg=`, how its per-query values "
        f"become one number ({', '.join(f'`{a!r}`' for a in AGGREGATES)}; `'std'` is "
        "ranx's `return_std`, `'median_low'` torchmetrics' median, `'ci_halfwidth'` "
        "RePlay's `ConfidenceInterval`: the half-width of the normal interval of the mean "
        "at `ci_level=`, 0.95 by default), and every per-query "
        "score of the judgments `empty_target_action=` "
        f"({', '.join(f'`{a!r}`' for a in EMPTY_TARGET_ACTIONS)}: torchmetrics' value of a "
        "query without a relevant document) and `judged_only=True` (ir_measures': the "
        "run's unjudged documents removed first; every metric of one evaluation alike).",
        "",
    ]
    families: dict[str, list[Metric]] = {}
    for metric in metrics:
        families.setdefault(_family(metric), []).append(metric)
    for family, members in families.items():
        lines += [f"## {_FAMILIES.get(family, family.replace('_', ' ').capitalize())}", ""]
        for metric in members:
            lines += _entry(metric, values.get(example_name(metric)))
    return "\n".join(lines)


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    """The page with the catalogue in place of :data:`MARKER` (mkdocs' hook)."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, catalogue_markdown())
