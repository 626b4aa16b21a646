"""The examination propensity of each position, fitted from click logs: the position-based
click model (PBM) by expectation-maximisation.

The PBM (Craswell et al. 2008; Chuklin, Markov & de Rijke, *Click Models for Web
Search*, 2015, ch. 3; PyClick's ``PBM``) says a shown document is clicked when its
position is examined and the document is attractive, independently:
``P(C = 1) = gamma_r alpha_qd``, with ``gamma_r`` the examination probability of
position ``r`` and ``alpha_qd`` the attractiveness of document ``d`` for query ``q``.
EM, from ``alpha = gamma = 0.5``, repeats:

* ``alpha_qd = sum over the impressions of (q, d) of [c + (1 - c) alpha (1 - gamma) /
  (1 - alpha gamma)] / N_qd``;
* ``gamma_r = sum over the impressions at r of [c + (1 - c) gamma (1 - alpha) /
  (1 - alpha gamma)] / N_r``;

both from the previous iteration's values (the posterior of attractiveness and of
examination given a click or not), until no value moves by more than ``tol`` or after
``max_iter`` iterations. The log is reduced once to its sufficient statistics (clicks
and impressions per query, document and position, one lazy ``group_by``); the iterations
run on those arrays, vectorised (no loop over queries).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.ground.inputs import FrameInput, as_polars
from polars_irmetrics.ground.validate import check_numeric, require_columns

__all__ = ["position_bias"]


def position_bias(
    log: FrameInput,
    *,
    query_id: str = "query_id",
    doc_id: str = "doc_id",
    rank: str = "rank",
    clicked: str = "clicked",
    max_iter: int = 100,
    tol: float = 1e-10,
) -> pl.DataFrame:
    """The examination propensity of each position, from a click log (PBM by EM).

    Parameters
    ----------
    log
        An impression log: one row per shown document, with its query (or session's
        query) ``query_id``, the document ``doc_id``, its position ``rank`` (1 = top) and
        ``clicked`` (0/1 or a boolean).
    query_id, doc_id, rank, clicked
        The column names.
    max_iter, tol
        EM stops after ``max_iter`` iterations, or when no parameter moved by more than
        ``tol``.

    Returns
    -------
    pl.DataFrame
        One row per position: ``position``, ``examination`` (the PBM's ``gamma_r``),
        ``propensity`` (``gamma_r / gamma_1``: the examination relative to the top, the
        weight divisor of position-debiased estimators) and ``impressions``; sorted by
        position.

    Raises
    ------
    ColumnNotFoundError, ColumnTypeError
        A missing column, or a non-integer ``rank`` or a ``clicked`` that is neither
        numeric nor boolean.
    InvalidValueError
        A rank below 1, a null, or a click that is not 0 or 1.

    Examples
    --------
    One query, two documents each shown once at each position; ``a`` is clicked at
    position 1 only, ``b`` at both. EM gives both documents the same attractiveness
    history, so position 2's examination ends below position 1's:

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> log = pl.DataFrame({
    ...     "query_id": ["q"] * 4, "doc_id": ["a", "b", "b", "a"],
    ...     "rank": [1, 2, 1, 2], "clicked": [1, 1, 1, 0],
    ... })
    >>> out = irm.position_bias(log, max_iter=1)
    >>> out.select("position", "examination", "impressions").rows()
    [(1, 1.0, 2), (2, 0.6666666666666666, 2)]

    One iteration by hand from 0.5 everywhere: an unclicked impression's examination
    posterior is ``0.5 (1 - 0.5) / (1 - 0.25) = 1/3``, so ``gamma_2 = (1 + 1/3) / 2``.
    """
    frame = as_polars(log, "log").lazy()
    schema = frame.collect_schema()
    require_columns(
        schema,
        [query_id, doc_id, rank, clicked],
        "log",
        "an impression log has one row per shown document: name the columns with "
        "query_id=, doc_id=, rank= and clicked=",
    )
    check_numeric(schema, rank, "log", integer=True)
    if schema[clicked] != pl.Boolean:
        check_numeric(schema, clicked, "log", integer=False)
    for name, value, low in (("max_iter", max_iter, 1), ("tol", tol, 0)):
        if isinstance(value, bool) or not isinstance(value, int | float) or value < low:
            raise InvalidValueError(f"{name} must be a number >= {low}, got {value!r}")
    c = pl.col(clicked).cast(pl.Float64)
    stats = (
        frame.select(
            pl.struct(query_id, doc_id).alias("pair"),
            pl.col(rank).cast(pl.Int64).alias("position"),
            c.alias("c"),
        )
        .group_by("pair", "position")
        .agg(
            pl.len().cast(pl.Float64).alias("n"),
            pl.col("c").sum().alias("clicks"),
            (pl.col("c").is_null() | ~pl.col("c").is_in([0.0, 1.0])).sum().alias("bad"),
        )
        .with_columns(pl.col("pair").rank("dense").cast(pl.Int64).alias("pair_index") - 1)
        .collect()
    )
    bad = stats.filter(
        (pl.col("bad") > 0) | pl.col("position").is_null() | (pl.col("position") < 1)
    )
    if bad.height:
        row = bad.row(0, named=True)
        raise InvalidValueError(
            f"the log has a null rank, a rank below 1, or a {clicked!r} that is neither 0 "
            f"nor 1 (e.g. at rank {row['position']}, {row['pair']}): clicks are 0/1 and "
            "positions start at 1"
        )
    positions = stats["position"].to_numpy()
    pair = stats["pair_index"].to_numpy()
    n, clicks = stats["n"].to_numpy(), stats["clicks"].to_numpy()
    top = int(positions.max()) if stats.height else 0
    n_pairs = int(pair.max()) + 1 if stats.height else 0
    per_pair = np.bincount(pair, weights=n, minlength=n_pairs)
    per_position = np.bincount(positions, weights=n, minlength=top + 1)
    alpha = np.full(n_pairs, 0.5)
    gamma = np.full(top + 1, 0.5)
    for _ in range(max_iter):  # EM iterations (each vectorised over every statistic)
        a, g = alpha[pair], gamma[positions]
        no_click = n - clicks
        denominator = 1.0 - a * g
        attractive = clicks + no_click * a * (1.0 - g) / denominator
        examined = clicks + no_click * g * (1.0 - a) / denominator
        new_alpha = np.bincount(pair, weights=attractive, minlength=n_pairs) / per_pair
        with np.errstate(invalid="ignore", divide="ignore"):
            new_gamma = np.bincount(positions, weights=examined, minlength=top + 1) / per_position
        new_gamma = np.where(per_position > 0, new_gamma, np.nan)
        moved = max(
            float(np.max(np.abs(new_alpha - alpha), initial=0.0)),
            float(np.nanmax(np.abs(new_gamma - gamma), initial=0.0)),
        )
        alpha, gamma = new_alpha, new_gamma
        if moved <= tol:
            break
    shown = np.nonzero(per_position > 0)[0]
    return pl.DataFrame(
        {
            "position": shown.astype(np.int64),
            "examination": gamma[shown],
            "propensity": gamma[shown] / gamma[1] if top >= 1 and per_position[1] > 0 else np.nan,
            "impressions": per_position[shown].astype(np.int64),
        }
    )
