"""What a metric reads is declared once, on the metric: whether it reads each user's own
history (:attr:`Metric.histories`, :attr:`Param.histories`, read by
:attr:`MetricRequest.reads_histories`) and which exposure measure family it is
(:data:`~polars_irmetrics.metrics.fairness.EXPECTED_EXPOSURE`, ``AWRF``,
``SEGREGATION``, from the declarations' ``reads``), not a list of names in the code."""

from __future__ import annotations

import dataclasses
import itertools
import re
import warnings

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import CoverageWarning, MetricParameterError
from polars_irmetrics.exposure import coverage, rnd
from polars_irmetrics.metrics import fairness, requests
from polars_irmetrics.metrics.collection import CollectionScope
from polars_irmetrics.metrics.registry import MetricRequest, get_metric, list_metrics, parse_metric
from polars_irmetrics.metrics.spec import Metric

#: The parameters a metric needs given (no default), as a name spells them.
_REQUIRED = {"iprec": ["recall=0.5"]}


def _every_request() -> list[MetricRequest]:
    """Every metric of the registry under every combination of its string parameters'
    choices that parses (with ``@5`` where it takes a cutoff)."""
    out = []
    for metric in list_metrics():
        choices = [p for p in metric.params if p.choices]
        for combo in itertools.product(*(p.choices or () for p in choices)):
            args = ", ".join(
                [
                    *_REQUIRED.get(metric.name, []),
                    *(f"{p.name}={v!r}" for p, v in zip(choices, combo, strict=True)),
                ]
            )
            text = metric.name + (f"({args})" if args else "")
            for suffix in ("@5", ""):
                try:
                    out.append(parse_metric(text + suffix))
                except MetricParameterError:
                    continue
                break
    return out


EVERY = _every_request()


def _declared(request: MetricRequest) -> bool:
    """Whether the declarations say ``request`` reads each user's history."""
    options = dict(request.options)
    by_value = any(options.get(p.name) in p.histories for p in request.metric.params)
    return "interactions" in request.reads and (request.metric.histories or by_value)


def test_every_metric_is_enumerated() -> None:
    assert {r.metric.name for r in EVERY} == {m.name for m in list_metrics()}


@pytest.mark.parametrize("request_", EVERY, ids=[r.name for r in EVERY])
def test_reads_histories_is_the_declaration(request_: MetricRequest) -> None:
    assert request_.reads_histories is _declared(request_)


# the requests of the registry that read each user's history (the behaviour before the
# declarations: a list of names in MetricRequest.reads_histories)
HISTORY_READERS = {
    "novelty(kind='replay')@5",
    "serendipity@5",
    "serendipity(kind='kotkov')@5",
    "serendipity(item_sim_measure='item_cooccurrence_count')@5",
    "pop_rsp@5",
    "pop_reo@5",
}


def test_the_history_readers_are_those_declared() -> None:
    assert {r.name for r in EVERY if r.reads_histories} == HISTORY_READERS


RECSYS = [r for r in EVERY if r.route == "recsys" and r.metric.collection is not None]


@pytest.mark.parametrize("request_", RECSYS, ids=[r.name for r in RECSYS])
def test_a_recommendation_formula_reads_histories_as_declared(request_: MetricRequest) -> None:
    """The formula of a recommendation table's metric asks for each user's history
    (whether the user saw an item, the similarity to the history) exactly where the
    declaration says it reads them: a formula changed without its declaration fails."""
    assert request_.metric.collection is not None
    scope = CollectionScope(item=pl.col("item"))
    request_.metric.collection(scope, request_.params(1.0))
    asks = bool(scope.needs & {"seen", "history", "history_cooc"})
    assert asks is request_.reads_histories


# --------------------------- an invented metric gets the behaviour its declaration says
LISTS = pl.DataFrame(
    {
        "query_id": ["u1"] * 3 + ["u2"] * 3,
        "doc_id": ["a", "b", "c", "b", "c", "a"],
        "rank": [1, 2, 3] * 2,
    }
)
OTHER_USERS = pl.DataFrame({"query_id": ["v1", "v2", "v3"], "doc_id": ["a", "b", "c"]})
_HEAD = "interactions= holds none of the 2 users of the recommendations (column 'query_id'): "
_FIX = (
    ". Ids that do not line up are the likely cause: give interactions= and the "
    "recommendations the same 'query_id' values (same spelling, same collection)."
)
_NEW = "a user without a history finds every item new ({} reads no history for them)"
_ITEMS_ONLY = (
    "no metric asked reads a user's own history ({} reads the items' popularity or the "
    "catalogue alone), so the values do not change, but users that do not line up are a "
    "likely sign that the items do not either"
)


def _popularity(histories: bool) -> Metric:
    return dataclasses.replace(
        get_metric("average_popularity"), name="my_pop", aliases=(), histories=histories
    )


def _novelty(values: tuple[str, ...]) -> Metric:
    novelty = get_metric("novelty")
    kind = novelty.param("kind")
    assert kind is not None
    return dataclasses.replace(
        novelty,
        name="my_novelty",
        aliases=(),
        params=(dataclasses.replace(kind, histories=values),),
    )


# (case, the invented metric, the name asked, whether it reads histories, the warning)
INVENTED: list[tuple[str, Metric, str, bool, str]] = [
    ("declared", _popularity(True), "my_pop@3", True, _NEW.format("my_pop@3")),
    ("not declared", _popularity(False), "my_pop@3", False, _ITEMS_ONLY.format("my_pop@3")),
    # a parameter value declares it: the default kind here, not 'replay'
    (
        "by the default value",
        _novelty(("recommenders",)),
        "my_novelty@3",
        True,
        _NEW.format("my_novelty@3"),
    ),
    (
        "not by another value",
        _novelty(("recommenders",)),
        "my_novelty(kind='replay')@3",
        False,
        _ITEMS_ONLY.format("my_novelty(kind='replay')@3"),
    ),
]


@pytest.mark.parametrize(
    ("metric", "name", "reads", "effect"),
    [case[1:] for case in INVENTED],
    ids=[case[0] for case in INVENTED],
)
def test_an_invented_metric_reads_histories_as_declared(
    monkeypatch: pytest.MonkeyPatch, metric: Metric, name: str, reads: bool, effect: str
) -> None:
    monkeypatch.setitem(requests.BY_NAME, metric.name, (metric, None))
    assert parse_metric(name).reads_histories is reads
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        irm.evaluate(LISTS, [name], interactions=OTHER_USERS)
    said = [str(w.message) for w in caught if issubclass(w.category, CoverageWarning)]
    assert said == [_HEAD + effect + _FIX]


def test_the_warning_text_is_pinned_exactly() -> None:
    """The expected text above is the warning's (a check of the check)."""
    name = "novelty(kind='replay')@3"
    with pytest.warns(CoverageWarning, match=re.escape(_HEAD + _NEW.format(name) + _FIX)):
        irm.evaluate(LISTS, [name], interactions=OTHER_USERS)


# ------------------------------- the exposure measures' families, from their declarations
# (measure, its family: the expected exposure, awrf, the segregation measures)
FAMILIES = [
    ("ee_loss", "expected"),
    ("ee_disparity", "expected"),
    ("ee_relevance", "expected"),
    ("awrf", "awrf"),
    ("awrf_ndcg", "awrf"),
    ("rnd", "segregation"),
    ("rkl", "segregation"),
    ("rrd", "segregation"),
]
SETS = {
    "expected": fairness.EXPECTED_EXPOSURE,
    "awrf": fairness.AWRF,
    "segregation": fairness.SEGREGATION,
}


@pytest.mark.parametrize(("name", "family"), FAMILIES)
def test_an_exposure_measure_is_in_its_family_alone(name: str, family: str) -> None:
    assert [f for f, names in SETS.items() if name in names] == [family]


def test_every_exposure_measure_has_one_family() -> None:
    exposure = {m.name for m in list_metrics() if m.route == "exposure"}
    assert exposure == {name for name, _ in FAMILIES}
    assert sorted(len(names) for names in SETS.values()) == [2, 3, 3]
    assert set().union(*SETS.values()) == exposure


def test_the_wing_reads_the_declared_families() -> None:
    assert coverage.AWRF_MEASURES is fairness.AWRF
    assert rnd.SEGREGATION is fairness.SEGREGATION
    assert rnd.JUDGED == fairness.EXPECTED_EXPOSURE | fairness.AWRF
