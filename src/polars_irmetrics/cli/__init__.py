"""The ``irm`` command: ``irm evaluate`` and ``irm trec-eval``."""

from __future__ import annotations

from polars_irmetrics.cli.main import main

__all__ = ["main"]
