"""The command line's wording, round 10: a keyword a message offers as "with
per_query=False" read "with without --per-query" once turned into flags."""

from __future__ import annotations

from polars_irmetrics.cli.keywords import as_flags
from polars_irmetrics.cli.main import _flags, build_parser


def test_a_switch_offered_with_a_false_value_reads_without() -> None:
    flags = _flags(build_parser(), "evaluate")
    message = (
        "metric 'epc@3' (Elliot's) describes the whole recommendation table against the "
        "training popularity: evaluate it with per_query=False"
    )
    assert as_flags(message, flags) == (
        "metric 'epc@3' (Elliot's) describes the whole recommendation table against the "
        "training popularity: evaluate it without --per-query"
    )
    assert as_flags("or pass per_query=True", flags) == "or pass --per-query"
