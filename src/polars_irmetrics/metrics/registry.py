"""The metric registry, one import: the store and request model
(:mod:`polars_irmetrics.metrics.requests`) and the parser of metric strings
(:mod:`polars_irmetrics.metrics.parser`).
"""

from __future__ import annotations

from polars_irmetrics.metrics.parser import (
    MAX_RANGE_CUTOFFS,
    REFUSED,
    expand_metric_names,
    get_metric,
    parse_metric,
    parse_metric_list,
    repeated_metric,
    request,
)
from polars_irmetrics.metrics.requests import (
    DEFAULT_METRICS,
    EMPTY_TARGET_ACTIONS,
    INPUTS,
    MetricRequest,
    averages_over_history,
    check_inputs,
    labels_by_route,
    list_metrics,
    means,
    merges_from_counts,
    merges_from_users,
    split_routes,
    user_mean,
)

__all__ = [
    "DEFAULT_METRICS",
    "EMPTY_TARGET_ACTIONS",
    "INPUTS",
    "MAX_RANGE_CUTOFFS",
    "REFUSED",
    "MetricRequest",
    "averages_over_history",
    "check_inputs",
    "expand_metric_names",
    "get_metric",
    "labels_by_route",
    "list_metrics",
    "means",
    "merges_from_counts",
    "merges_from_users",
    "parse_metric",
    "parse_metric_list",
    "repeated_metric",
    "request",
    "split_routes",
    "user_mean",
]
