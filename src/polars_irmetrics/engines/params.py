"""The parameter paragraphs of :func:`polars_irmetrics.engines.spark.evaluate` and
:func:`polars_irmetrics.engines.dask.evaluate` that are the same but for the engine's
name, written once: each docstring holds the line ``%(name)s`` where one goes, filled
at import (:func:`engine_doc`, :func:`polars_irmetrics.ground.docstrings.fill_shared`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from polars_irmetrics.ground.docstrings import fill_shared

__all__ = ["ENGINE_PARAMS", "engine_doc"]

#: The shared paragraphs, ``{engine}`` standing for the engine's name ("Spark", "Dask").
ENGINE_PARAMS: dict[str, str] = {
    "groups": (
        "The exposure measures (``ee_loss``, ``ee_disparity``, ``ee_relevance``, ``awrf``,\n"
        "``awrf_ndcg``, ``rnd``, ``rkl``, ``rrd``): the documents' groups and the target\n"
        "distribution over groups, {engine} DataFrames, as in :func:`polars_irmetrics.evaluate`.\n"
        "They are small (one row per document and group, one per group): collected on\n"
        "the driver and handed whole to every part, while the run (its ``sample`` rankings\n"
        "too) and the judgments are split by query; the means are taken in one task over\n"
        "every query's values, equal to one machine's to the last bit\n"
        "(:mod:`polars_irmetrics.engines._sides`). Beside accuracy metrics or the\n"
        "beyond-accuracy metrics of a recommendation table each route is a call of its\n"
        "own, the values joined as one machine joins them (per query on the query keys;\n"
        "the means with ``num_q_exposure`` after the accuracy metrics' ``num_q``)."
    ),
    "interactions": (
        "The training history. For ``mcc@k`` and ``reco_accuracy@k`` (the size of the\n"
        "catalogue, its distinct items, as in :func:`polars_irmetrics.evaluate`) only\n"
        "those distinct ``doc_id`` values are gathered on the driver and handed to every\n"
        "part. For the means of per-user values that read item popularity or each\n"
        "user's history (``surprisal@k``, ``average_popularity@k``,\n"
        "``long_tail_share@k``, ``serendipity@k``, co-occurrence\n"
        "``intra_list_diversity@k``) its rows (the ``by`` keys it carries, ``query_id``\n"
        "and ``doc_id``) are gathered on the driver and handed whole to every part, so\n"
        "it must fit in memory there; its warning and refusal of null ids are the whole\n"
        "table's, given once. So too for the metrics of the items' counts that read it\n"
        "(``catalog_coverage@k``, ``gini_index@k``, ``novelty@k``: each part's item\n"
        "counts, added up in one task; a call of their own), for RecTools'\n"
        "``serendipity(kind='kotkov')@k`` (a value per user, beside accuracy metrics) and\n"
        "for Elliot's ``pop_rsp@k``, ``pop_reo@k``, ``aclt@k``, ``epc@k``, ``efd@k`` (each\n"
        "part's per-user counts, merged in one task; a call of their own) and RePlay's\n"
        "``novelty(kind='replay')@k`` (each part's users' values, merged in one task with\n"
        "the history's users without recommendations; a call of its own)."
    ),
    "item_features": (
        "The items' categories or feature vectors, read by ``categorical_diversity@k``\n"
        "and ``intra_list_diversity@k`` (as in :func:`polars_irmetrics.evaluate`): a\n"
        "{engine} DataFrame gathered on the driver and handed whole to every part. These\n"
        "and the other metrics of a recommendation table that are the mean of per-user\n"
        "values read from each user's own rows (``sufficient_reco@k``,\n"
        "``unrepeated_reco@k``) run here: each part gives its users' values, and the\n"
        "mean over every user is the one plan's exact mean, to the last bit. A data\n"
        "error of the recommendations is raised by the part that finds it, its count of\n"
        "such rows that part's. The other metrics of the whole table\n"
        "(``catalog_coverage``, ``novelty``...) are refused by name."
    ),
    "reference": (
        "The rank-similarity metrics (``rbo``, ``jaccard@k``, ``kendall_tau@k``,\n"
        "``intersection@k``, ``unexpectedness@k``...): the reference run, a {engine}\n"
        "DataFrame, as in :func:`polars_irmetrics.evaluate`. It is split by query with the\n"
        "run; each part gives its queries' values, and the means are taken in one task\n"
        "over every query's values: the same bits as one machine\n"
        "(:mod:`polars_irmetrics.engines._agreement`). Either side may be list-shaped\n"
        "(``doc_id`` a list: one row per query, its ranking in order), as on one\n"
        "machine: each part's plan puts it in the long form."
    ),
}

_F = TypeVar("_F", bound=Callable[..., Any])


def engine_doc(engine: str) -> Callable[[_F], _F]:
    """A decorator filling a function's ``%(name)s`` lines with :data:`ENGINE_PARAMS`,
    ``{engine}`` read as ``engine``."""
    shared = {name: text.replace("{engine}", engine) for name, text in ENGINE_PARAMS.items()}

    def fill(function: _F) -> _F:
        return fill_shared(function, shared)

    return fill
