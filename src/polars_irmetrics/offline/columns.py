"""The internal columns of the offline plan (none reaches the user)."""

from __future__ import annotations

from polars_irmetrics.ground.validate import INTERNAL

__all__ = [
    "CHECK",
    "FIRST",
    "GROUP",
    "HIGH",
    "JUDGED",
    "LOW",
    "NUM_RET",
    "RANK",
    "REL",
    "RETRIEVED",
    "SRC",
    "START",
]

RANK = f"{INTERNAL}rank"
REL = f"{INTERNAL}rel"
SRC = f"{INTERNAL}src"
NUM_RET = f"{INTERNAL}num_ret"
JUDGED = f"{INTERNAL}judged"
RETRIEVED = f"{INTERNAL}retrieved"
GROUP = f"{INTERNAL}group"
FIRST = f"{INTERNAL}first"
START = f"{INTERNAL}start"
CHECK = f"{INTERNAL}check"
LOW = f"{INTERNAL}rank_min"
HIGH = f"{INTERNAL}rank_max"
