"""``irm trec-eval``: trec_eval's arguments and output (being written)."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``trec-eval`` subcommand."""
