"""Generated runs and judgments for the comparisons with reference implementations.

Shared by ``test_oracles.py`` (the core trec_eval measures, ranx, ir_measures) and
``test_trec_measures.py`` (the rest of trec_eval's catalogue). Each of them names its
own pools of query ids, scores and all-irrelevant labels (:class:`CasePools`); the rest
is common: string document ids whose text order differs from their numeric order,
graded and negative labels, queries on one side only, conversion to pytrec_eval's
nested dicts and the padding that keeps pytrec_eval from crashing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl
from hypothesis import strategies as st

#: "d1" < "d10" < "d11" < ... < "d2" < "d20" as text, unlike their numbers.
DOC_POOL = [f"d{i}" for i in range(1, 21)]
#: Graded labels with negatives (judged, not relevant; trec_eval's "pooled unjudged").
LABELS = [-2, -1, 0, 0, 1, 1, 2, 3, 4]
#: At most this many documents retrieved, and judged, per query.
MAX_RETRIEVED = 15
MAX_JUDGED = 12

RUN_SCHEMA = {"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64}
QRELS_SCHEMA = {"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int64}

QrelsDict = dict[str, dict[str, int]]
RunDict = dict[str, dict[str, float]]


@dataclass(frozen=True)
class Case:
    """A run (query_id, doc_id, score) and its judgments (query_id, doc_id, relevance)."""

    run: pl.DataFrame
    qrels: pl.DataFrame

    @property
    def run_dict(self) -> RunDict:
        return nested(self.run, "score", float)

    @property
    def qrels_dict(self) -> QrelsDict:
        return nested(self.qrels, "relevance", int)

    @property
    def both(self) -> set[str]:
        return set(self.run["query_id"]) & set(self.qrels["query_id"])

    @property
    def unretrieved(self) -> set[str]:
        return set(self.qrels["query_id"]) - set(self.run["query_id"])

    def __repr__(self) -> str:  # readable falsifying examples
        return f"Case(run={self.run.rows()!r}, qrels={self.qrels.rows()!r})"

    def cases_of(self, queries: Iterable[str]) -> str:
        """The cases of a batch (:func:`case_batches`) that hold ``queries``, each alone
        with its own query ids, for a failure's message."""
        out = []
        for prefix in sorted({q.split(CASE_SEP)[0] + CASE_SEP for q in queries}):
            own = pl.col("query_id").str.starts_with(prefix)
            strip = pl.col("query_id").str.strip_prefix(prefix)
            part = Case(
                run=self.run.filter(own).with_columns(strip),
                qrels=self.qrels.filter(own).with_columns(strip),
            )
            out.append(f"case {prefix[:-1]}: {part!r}")
        return "\n".join(out)

    def failing(self, bad: Iterable[str]) -> str:
        """For a failure's message: the cases of a batch whose queries start the lines of
        ``bad`` (``"c1|q2 ndcg: ..."``), alone; the whole batch where a line names no
        query (a mean over the batch's queries)."""
        firsts = [line.split(" ")[0].rstrip(":") for line in bad]
        if all(CASE_SEP in first for first in firsts):
            return self.cases_of(firsts)
        return repr(self)


@dataclass(frozen=True)
class CasePools:
    """What one test module draws from.

    ``queries``: the query ids (a case has 1 to ``len(queries)`` of them); ``scores``:
    the scores of runs with ties (few, so that ties are frequent); ``not_relevant``: the
    labels of a query judged with no relevant document.
    """

    queries: Sequence[str]
    scores: Sequence[float]
    not_relevant: Sequence[int]


@st.composite
def cases(draw: st.DrawFn, pools: CasePools, *, ties: bool = True, negative: bool = True) -> Case:
    """Queries each in the run, the judgments or both; up to 15 documents each.

    ``ties=False``: distinct scores (a random permutation); ``negative=False``: no
    negative labels (they are dropped from LABELS and ``pools.not_relevant``).
    """
    queries = draw(
        st.lists(
            st.sampled_from(pools.queries), min_size=1, max_size=len(pools.queries), unique=True
        )
    )
    labels = LABELS if negative else [x for x in LABELS if x >= 0]
    no_relevant = pools.not_relevant if negative else [x for x in pools.not_relevant if x >= 0]
    run_rows: list[tuple[str, str, float]] = []
    qrels_rows: list[tuple[str, str, int]] = []
    for q in queries:
        side = draw(st.sampled_from(["both", "both", "both", "run", "qrels"]))
        if side != "qrels":
            docs = draw(
                st.lists(
                    st.sampled_from(DOC_POOL), min_size=1, max_size=MAX_RETRIEVED, unique=True
                )
            )
            if ties:
                scores = draw(
                    st.lists(st.sampled_from(pools.scores), min_size=len(docs), max_size=len(docs))
                )
            else:
                order = draw(st.permutations(range(len(docs))))
                scores = [0.25 * i - 1.0 for i in order]
            run_rows += [(q, d, s) for d, s in zip(docs, scores, strict=True)]
        if side != "run":
            judged = draw(
                st.lists(st.sampled_from(DOC_POOL), min_size=1, max_size=MAX_JUDGED, unique=True)
            )
            pool = draw(st.sampled_from([labels, labels, labels, no_relevant]))
            rels = draw(
                st.lists(st.sampled_from(pool), min_size=len(judged), max_size=len(judged))
            )
            qrels_rows += [(q, d, r) for d, r in zip(judged, rels, strict=True)]
    return Case(
        run=pl.DataFrame(run_rows, schema=RUN_SCHEMA, orient="row"),
        qrels=pl.DataFrame(qrels_rows, schema=QRELS_SCHEMA, orient="row"),
    )


#: Separates a case's number from its own query id in a batch ("c2|q10").
CASE_SEP = "|"


@st.composite
def case_batches(
    draw: st.DrawFn,
    pools: CasePools,
    *,
    ties: bool = True,
    negative: bool = True,
    sizes: Sequence[int] = (1, 4, 4, 4),
) -> Case:
    """A batch of independent :func:`cases` (as many as one of ``sizes``, which shrinks
    to the first) in one run and one judgments table,
    each case's query ids prefixed by its number (``"c0|q1"``, ``"c1|q1"``): one
    evaluation checks them all, where each query's values depend on its own rows only.

    An evaluation of the library on these tiny tables costs the same for one case as
    for four (the plan's building and optimisation, not the rows), so a property test
    that draws batches of 3.25 cases on average needs a third of the examples for as
    many cases; the one-case batches keep the single case (an empty run or empty
    judgments) among them.
    A failure names its queries, whose prefix is the case: :meth:`Case.cases_of` prints
    those cases alone.
    """
    size = draw(st.sampled_from(sizes))
    parts = draw(
        st.lists(cases(pools, ties=ties, negative=negative), min_size=size, max_size=size)
    )

    def tag(i: int) -> pl.Expr:
        return (pl.lit(f"c{i}{CASE_SEP}") + pl.col("query_id")).alias("query_id")

    return Case(
        run=pl.concat([c.run.with_columns(tag(i)) for i, c in enumerate(parts)]),
        qrels=pl.concat([c.qrels.with_columns(tag(i)) for i, c in enumerate(parts)]),
    )


# ------------------------------------------------------------------------ conversion
def nested(frame: pl.DataFrame, value: str, cast: Callable[[Any], Any]) -> dict[str, Any]:
    """``{query_id: {doc_id: cast(value)}}``, as pytrec_eval, ranx and ir_measures read."""
    out: dict[str, dict[str, Any]] = {}
    for q, d, v in frame.select("query_id", "doc_id", value).iter_rows():
        out.setdefault(q, {})[d] = cast(v)
    return out


def to_frames(run: RunDict, qrels: QrelsDict) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The run and judgments frames of nested dicts (the inverse of :func:`nested`)."""
    run_frame = pl.DataFrame(
        [(q, d, s) for q, docs in run.items() for d, s in docs.items()],
        schema=RUN_SCHEMA,
        orient="row",
    )
    qrels_frame = pl.DataFrame(
        [(q, d, r) for q, docs in qrels.items() for d, r in docs.items()],
        schema=QRELS_SCHEMA,
        orient="row",
    )
    return run_frame, qrels_frame


def trec_order(docs: Mapping[str, float]) -> list[str]:
    """trec_eval's ranking: score descending, ties by document id descending (as text)."""
    return [
        d for d, _ in sorted(docs.items(), key=lambda ds: (ds[1], ds[0].encode()), reverse=True)
    ]


#: A judged non-relevant document that no run retrieves (see :func:`padded`).
PAD_DOC = "~pad"


def padded(qrels: QrelsDict) -> QrelsDict:
    """Judgments trec_eval can read without crashing, with the same measure values.

    trec_eval (form_res_rels.c) sizes its per-query ``rel_levels`` array by the largest
    label plus one; when every label of a query is negative that size is zero or
    negative, and the process crashes (segfault with pytrec-eval-terrier 0.5.11 on a
    query judged only ``-2``, with ``bpref`` among the measures; ir_measures, which calls
    pytrec_eval, crashes the same way). Such a query has no relevant and no judged
    non-relevant document, so every measure is 0 for it; one extra judged non-relevant
    document that no run retrieves changes none of the measures compared with it (all
    are 0 when R = 0, and ``num_ret`` ignores judgments).
    """
    return {
        q: docs if max(docs.values()) >= 0 else {**docs, PAD_DOC: 0} for q, docs in qrels.items()
    }
