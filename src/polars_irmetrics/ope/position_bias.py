"""The examination propensity of each position, from click logs: the position-based click
model (PBM) fitted by expectation-maximisation (``method="em"``), or read off swap
interventions (``method="swap"``).

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

Swap interventions (Joachims, Swaminathan & Schnabel 2017, "Unbiased learning-to-rank
with biased feedback", sec. 5; Wang et al. 2018, "Position bias estimation for unbiased
learning to rank in personal search", RandPair): in a random share of the impressions
the result the ranker put at rank 1 is swapped with the one at rank ``k``. Under the PBM
the document at rank ``k`` of a swap-``k`` impression is the ranker's top document, as
relevant on average as the one at rank 1 of an impression without intervention, so the
ratio of their click-through rates is ``p_k / p_1``:

``propensity_k = (clicks at rank k / impressions, over the swap-k impressions) /
(clicks at rank 1 / impressions, over the impressions without intervention)``,

and ``propensity_1 = 1``. The log is reduced by one lazy ``group_by``; nothing iterates.

Intervention harvesting (Agarwal, Zaitsev, Wang, Li, Najork & Joachims 2019, "Estimating
position bias without intrusive interventions", WSDM; Fang, Agarwal & Joachims 2019,
SIGIR): the logs of several rankers ``f_1 .. f_m`` (an A/B test, successive versions)
put the same document of the same query at different ranks, which is an intervention on
its position nobody had to run. The interventional set ``S_{k,k'}`` holds the (query,
document) pairs one ranker showed at rank ``k`` and another at ``k'``. With ``n_i`` the
impressions ranker ``i`` served and ``w(q, d, k) = sum_i n_i [f_i puts d at k for q]``,
the weighted click and no-click rates

``c_k^{k,k'} = sum over (q, d) in S_{k,k'} of clicks(q, d, k) / w(q, d, k)``,
``not_c_k^{k,k'} = sum over (q, d) in S_{k,k'} of (shown - clicks)(q, d, k) / w(q, d, k)``

(``shown``: the log's rows of ``d`` at ``k`` for ``q``, over every ranker) have, under the
PBM, ``E c_k^{k,k'} = p_k R_{k,k'}`` with ``R_{k,k'} = sum over S_{k,k'} of P(q)
rel(q, d)``, the same for ``k`` and ``k'``: ``c_k^{k,k'} / c_k'^{k,k'}`` estimates ``p_k /
p_k'``. The AllPairs extremum estimator fits every pair at once, ``r_{k,k'}`` standing for
the pair's relevance:

``max over p, r of sum_{k != k'} c_k^{k,k'} log(p_k r_{k,k'}) + not_c_k^{k,k'}
log(1 - p_k r_{k,k'})``, with ``0 <= p_k <= 1``, ``0 <= r_{k,k'} = r_{k',k} <= 1``,

and the result is ``p_k / p_1``. The objective is concave in ``(log p, log r)``; it is
solved there by L-BFGS-B (scipy) over the few positions and pairs, with its gradient
(``r <= 1 - 1e-12``, which keeps ``log(1 - p r)`` finite). The log is reduced by one lazy
``group_by`` to its (ranker, query, document) statistics; the weights and the
interventional sets are polars group-bys and a self-join on (query, document).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np
import polars as pl

from polars_irmetrics.errors import ColumnTypeError, DuplicateError, InvalidValueError
from polars_irmetrics.ground.inputs import FrameInput, as_polars
from polars_irmetrics.ground.lazy import LazyModule
from polars_irmetrics.ground.options import plain_number
from polars_irmetrics.ground.validate import check_numeric, require_columns
from polars_irmetrics.metrics.scope import exact_sum

if TYPE_CHECKING:
    from scipy import optimize
else:
    optimize = LazyModule("scipy.optimize")  # imported at the first fit (import time)

__all__ = ["position_bias"]


def _em_options(max_iter: object, tol: object) -> tuple[int, float]:
    """EM's ``max_iter`` (a whole number >= 1) and ``tol`` (a number >= 0), their
    defaults for ``None``, a numpy number as the Python one it equals; checked before
    the log is read (a float ``max_iter`` was ``range``'s TypeError after it).

    >>> _em_options(None, None), _em_options(np.int64(5), 0)
    ((100, 1e-10), (5, 0))
    >>> _em_options(2.5, None)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: max_iter must be a whole number >= 1, got 2.5; ...
    """
    max_iter = 100 if max_iter is None else plain_number(max_iter)
    tol = 1e-10 if tol is None else plain_number(tol)
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1:
        raise InvalidValueError(
            f"max_iter must be a whole number >= 1, got {max_iter!r}; pass the most EM "
            "iterations, e.g. max_iter=100 (the default)"
        )
    if isinstance(tol, bool) or not isinstance(tol, int | float) or not tol >= 0:
        raise InvalidValueError(
            f"tol must be a number >= 0, got {tol!r}; pass the change below which EM "
            "stops, e.g. tol=1e-10 (the default)"
        )
    return max_iter, tol


def position_bias(
    log: FrameInput,
    *,
    method: Literal["em", "swap", "harvest"] = "em",
    query_id: str = "query_id",
    doc_id: str | None = None,
    rank: str = "rank",
    clicked: str = "clicked",
    swap: str | None = None,
    ranker: str | None = None,
    max_iter: int | None = None,
    tol: float | None = None,
) -> pl.DataFrame:
    """The examination propensity of each position, from a click log (PBM by EM, or
    swap interventions).

    Parameters
    ----------
    log
        An impression log: one row per shown document, with its query (or session's
        query) ``query_id``, its position ``rank`` (1 = top) and ``clicked`` (0/1 or a
        boolean); ``method="em"``: the document ``doc_id`` too; ``method="swap"``: each
        row's impression in ``query_id`` and its intervention in ``swap``.
    method
        ``"em"``: the PBM fitted by expectation-maximisation (every log); ``"swap"``:
        from swap interventions (module docstring), a log whose impressions carry them;
        ``"harvest"``: intervention harvesting from the logs of several rankers
        (module docstring), each row naming its ranker in ``ranker``.
    query_id, doc_id, rank, clicked
        The column names (``doc_id``: ``"doc_id"``, read by ``"em"`` and ``"harvest"``).
    swap
        ``method="swap"`` only: the column of each row's intervention (default
        ``"swap"``): ``k`` (an integer >= 2) where the impression's results at ranks 1
        and ``k`` were swapped, null (or 1) where the impression is shown as ranked.
        Every row of an impression carries the same value; an impression has one row per
        rank it shows, rank ``k`` among them (rank 1 without intervention).
    ranker
        ``method="harvest"`` only: the column naming the ranker that produced each row's
        ranking (default ``"ranker"``). Each ranker is a function of the query: it shows
        a given document of a query at one rank (a ranker whose rankings changed is two
        rankers: give each version its own value). A (ranker, query)'s impressions are
        the rows of its most shown document for that query; ``n_i`` sums them.
        Assumed, as in the paper: the rankers' choice of documents is independent of the
        users' clicks given the query (which ranker served a query does not depend on
        it: an A/B split, or versions over a stable query stream), and the PBM.
    max_iter, tol
        ``method="em"`` only: EM stops after ``max_iter`` iterations (a whole number
        >= 1, default 100), or when no parameter moved by more than ``tol`` (a number
        >= 0, default 1e-10); numpy numbers are read as the Python ones they equal.

    Returns
    -------
    pl.DataFrame
        One row per position: ``position``, ``examination`` (the PBM's ``gamma_r``;
        ``"swap"``: null, only ratios are identified), ``propensity`` (``gamma_r /
        gamma_1``: the examination relative to the top, the weight divisor of
        position-debiased estimators and the table ``propensities=`` reads) and
        ``impressions`` (``"swap"``: the impressions the ratio read at that position:
        those without intervention at 1, the swap-``k`` ones at ``k``); sorted by
        position. ``"em"`` lists every rank the log shows, whatever their values (a
        rank no row shows is never read). ``"swap"`` lists 1 and every ``k`` the log
        swapped. ``"harvest"``:
        ``examination`` null (only ratios are identified), ``impressions`` the log's rows
        at that position of the (query, document) pairs it harvested; every position
        of the log, each harvested.

    Raises
    ------
    ColumnNotFoundError, ColumnTypeError
        A missing column, or a non-integer ``rank`` or a ``clicked`` that is neither
        numeric nor boolean.
    InvalidValueError
        A null id (``query_id``; ``doc_id`` for ``"em"`` and ``"harvest"``; ``ranker``
        for ``"harvest"``: it would gather the rows without one into one impression,
        query, document or ranker), whatever the method; a rank below 1 or beyond
        2**63 - 1, a null, or a click that is not 0 or 1; an option the method does not
        read. ``"em"``: a log without rank 1 (the propensities are relative to it), a
        position of the log never clicked (its estimate would tend to 0).
        ``"swap"``: an
        impression without a row at the rank its ratio reads (rank 1 without
        intervention, ``k`` where it swapped 1 and ``k``), a swapped rank never clicked
        in its swap impressions (its estimate would be 0). ``"harvest"``: a ranker that
        shows a document of a query at two ranks, or two documents of a query at one
        rank, a log without rank 1, a position of the log that no interventional set
        reaches from position 1 (named: its propensity is not identified), or one never
        clicked in them (its estimate would be 0).
    DuplicateError
        ``"swap"``: an impression with two rows at one rank.

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

    Swap interventions: four impressions without intervention (2 clicks at rank 1) and
    two that swapped ranks 1 and 3 (1 click at rank 3), so ``p_3 = (1/2) / (2/4)``; a
    click elsewhere does not count:

    >>> swapped = pl.DataFrame({
    ...     "query_id": [1, 1, 2, 3, 4, 5, 5, 6],
    ...     "rank": [1, 2, 1, 1, 1, 1, 3, 3],
    ...     "clicked": [1, 1, 0, 1, 0, 1, 1, 0],
    ...     "swap": [None, None, None, None, None, 3, 3, 3],
    ... })
    >>> irm.position_bias(swapped, method="swap").select("position", "propensity").rows()
    [(1, 1.0), (3, 1.0)]

    Intervention harvesting: ranker ``A`` served query ``q`` three times as ``[a, b]``,
    ranker ``B`` once as ``[b, a]``, and ``A`` served ``z`` once (``n_A = 4``, ``n_B =
    1``). ``a`` at 1 weighs ``1 / w = 1 / 4``, ``b`` at 1 ``1 / 1``: the weighted click
    rates are ``c_1 = 2/4 + 1 = 1.5``, ``not_c_1 = 1/4 + 0 = 0.25``, ``c_2 = 0 + 1/4 =
    0.25``, ``not_c_2 = 1 + 2/4 = 1.5``. With two positions AllPairs fits each rate
    exactly, ``p_1 r = 1.5 / 1.75`` and ``p_2 r = 0.25 / 1.75``, so ``p_2 / p_1 = 1/6``
    (``z`` is in no interventional set):

    >>> harvested = pl.DataFrame({
    ...     "ranker": ["A"] * 6 + ["B"] * 2 + ["A"] * 2,
    ...     "query_id": ["q"] * 8 + ["z"] * 2,
    ...     "doc_id": ["a", "b"] * 3 + ["b", "a"] + ["y", "x"],
    ...     "rank": [1, 2] * 5,
    ...     "clicked": [1, 0, 1, 1, 0, 0, 1, 0, 0, 1],
    ... })
    >>> out = irm.position_bias(harvested, method="harvest")
    >>> out.select("position", "impressions").rows()
    [(1, 4), (2, 4)]
    >>> round(out["propensity"][1] * 6, 6)
    1.0
    """
    if method not in ("em", "swap", "harvest"):
        raise InvalidValueError(
            f"method={method!r} is not a method; choose 'em' (the position-based model "
            "fitted by EM), 'swap' (from swap interventions in the log) or 'harvest' "
            "(intervention harvesting from the logs of several rankers)"
        )
    if ranker is not None and method != "harvest":
        raise InvalidValueError(
            f"ranker={ranker!r} is read by method='harvest' only (the logs of several "
            "rankers); drop ranker=, or pass method='harvest'"
        )
    if method == "swap":
        if doc_id is not None:
            raise InvalidValueError(
                f"doc_id={doc_id!r} is read by method='em' and method='harvest' only: swap "
                "interventions read the impression, its rank, its click and its swap; drop "
                "doc_id="
            )
        for name, value in (("max_iter", max_iter), ("tol", tol)):
            if value is not None:
                raise InvalidValueError(
                    f"{name}={value!r} is read by method='em' only: swap interventions "
                    f"read the impression, its rank, its click and its swap; drop {name}="
                )
        return _swap(log, query_id, rank, clicked, "swap" if swap is None else swap)
    if method == "harvest":
        unread: tuple[tuple[str, object], ...] = (
            ("swap", swap),
            ("max_iter", max_iter),
            ("tol", tol),
        )
        for name, given in unread:
            if given is not None:
                raise InvalidValueError(
                    f"{name}={given!r} is not read by method='harvest': intervention "
                    "harvesting reads the ranker, the query, the document, its rank and its "
                    f"click, and fits its objective to convergence; drop {name}="
                )
        return _harvest(
            log,
            query_id,
            "doc_id" if doc_id is None else doc_id,
            rank,
            clicked,
            "ranker" if ranker is None else ranker,
        )
    if swap is not None:
        raise InvalidValueError(
            f"swap={swap!r} is read by method='swap' only (a log of swap interventions); "
            "drop swap=, or pass method='swap'"
        )
    doc_id = "doc_id" if doc_id is None else doc_id
    max_iter, tol = _em_options(max_iter, tol)
    frame, _ = _read_log(
        log,
        [query_id, doc_id, rank, clicked],
        rank,
        clicked,
        "an impression log has one row per shown document: name the columns with "
        "query_id=, doc_id=, rank= and clicked=",
    )
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
        # the iterations add the statistics in this order (numpy's bincount): one order
        # for any order of the log's rows, so the same bits on every call
        .sort("pair_index", "position")
        .collect()
    )
    pair_ids = {
        query_id: (pl.col("pair").struct.field(query_id), "its query"),
        doc_id: (pl.col("pair").struct.field(doc_id), "its document"),
    }
    _refuse_null_ids(stats, pair_ids, "n")
    _refuse_bad_rows(
        stats.filter(
            (pl.col("bad") > 0) | pl.col("position").is_null() | (pl.col("position") < 1)
        ),
        clicked,
        "at rank {position}, {pair}",
    )
    # the PBM has one examination per rank the log shows, and only those are read: the
    # ranks as indexes of the distinct ranks present (a rank of 10**12 costs one slot)
    shown, slot = np.unique(stats["position"].to_numpy(), return_inverse=True)
    if shown.size and shown[0] != 1:
        raise InvalidValueError(
            f"the log shows no document at rank 1 (its ranks start at {shown[0]}): the "
            "propensities are relative to the top, p_k / p_1; log the whole ranking from "
            "rank 1"
        )
    pair = stats["pair_index"].to_numpy()
    n, clicks = stats["n"].to_numpy(), stats["clicks"].to_numpy()
    # a position never clicked: its examination tends to 0 with the iterations (1e-40
    # after them), as harvesting's and the swaps' estimate there is 0: refused alike
    unclicked = np.bincount(slot, weights=clicks, minlength=shown.size) <= 0
    if unclicked.any():
        named = ", ".join(str(int(k)) for k in shown[unclicked])
        raise InvalidValueError(
            f"position(s) {named} of the log have no click: EM's examination of a position "
            "never clicked tends to 0 with its iterations, a propensity no "
            "propensity-weighted estimator can divide by; log more clicks there, or keep "
            "the ranks above, e.g. log.filter(pl.col('rank') <= K)"
        )
    n_pairs = int(pair.max()) + 1 if stats.height else 0
    per_pair = np.bincount(pair, weights=n, minlength=n_pairs)
    per_position = np.bincount(slot, weights=n, minlength=shown.size)  # each > 0
    alpha = np.full(n_pairs, 0.5)
    gamma = np.full(shown.size, 0.5)
    for _ in range(max_iter):  # EM iterations (each vectorised over every statistic)
        a, g = alpha[pair], gamma[slot]
        no_click = n - clicks
        denominator = 1.0 - a * g
        # an unclicked statistic's posteriors; a statistic that was always clicked has
        # none (its pair or position may have reached alpha = gamma = 1, where the
        # formula reads 0/0): it adds its clicks alone
        unclicked = (no_click > 0) & (denominator > 0)
        zeros = np.zeros_like(denominator)
        attractive = clicks + no_click * np.divide(
            a * (1.0 - g), denominator, out=zeros.copy(), where=unclicked
        )
        examined = clicks + no_click * np.divide(
            g * (1.0 - a), denominator, out=zeros.copy(), where=unclicked
        )
        new_alpha = np.bincount(pair, weights=attractive, minlength=n_pairs) / per_pair
        new_gamma = np.bincount(slot, weights=examined, minlength=shown.size) / per_position
        moved = max(
            float(np.max(np.abs(new_alpha - alpha), initial=0.0)),
            float(np.max(np.abs(new_gamma - gamma), initial=0.0)),
        )
        alpha, gamma = new_alpha, new_gamma
        if moved <= tol:
            break
    return pl.DataFrame(
        {
            "position": shown.astype(np.int64),
            "examination": gamma,
            "propensity": gamma / gamma[0] if shown.size else gamma,  # shown[0] is rank 1
            "impressions": per_position.astype(np.int64),
        }
    )


def _refuse_null_ids(stats: pl.DataFrame, ids: dict[str, tuple[pl.Expr, str]], rows: str) -> None:
    """Raise for the first id column of the log with a null, whatever the method: ``ids``
    maps each column the method groups by (the impression or query, the document, the
    ranker) to its value in ``stats`` (the log's statistics, ``rows`` of the log each)
    and what it names. A null id would gather every row without one into one impression,
    query, document or ranker, read as a real one.

    >>> stats = pl.DataFrame({"query_id": [1, None], "rows": [2, 3]})
    >>> _refuse_null_ids(stats, {"query_id": (pl.col("query_id"), "its impression")}, "rows")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: column 'query_id' of the log has 3 null ...
    """
    nulls = stats.select(
        pl.col(rows).filter(value.is_null()).sum().cast(pl.Int64).alias(column)
        for column, (value, _) in ids.items()
    ).row(0, named=True)
    for column, (_, what) in ids.items():
        if nulls[column]:
            raise InvalidValueError(
                f"column {column!r} of the log has {nulls[column]} null value(s); every row "
                f"names {what}: fill or drop them, e.g. log.drop_nulls({column!r})"
            )


def _refuse_bad_rows(bad: pl.DataFrame, clicked: str, where: str) -> None:
    """Raise for the first of the log's statistics in ``bad`` (a null rank, a rank below 1,
    or a click that is not 0/1), located by ``where`` (a format of its row)."""
    if bad.height:
        example = where.format(**bad.row(0, named=True))
        raise InvalidValueError(
            f"the log has a null rank, a rank below 1, or a {clicked!r} that is neither 0 "
            f"nor 1 (e.g. {example}): clicks are 0/1 and positions start at 1"
        )


#: The largest rank read (the ranks are read as Int64).
_LARGEST_RANK = 2**63 - 1


def _read_log(
    log: FrameInput, columns: list[str], rank: str, clicked: str, hint: str
) -> tuple[pl.LazyFrame, pl.Schema]:
    """The log, lazy, with its schema: ``columns`` present, ``rank`` an integer and
    ``clicked`` numeric or boolean."""
    frame = as_polars(log, "log").lazy()
    schema = frame.collect_schema()
    require_columns(schema, columns, "log", hint)
    check_numeric(schema, rank, "log", integer=True)
    if schema[clicked] != pl.Boolean:
        check_numeric(schema, clicked, "log", integer=False)
    _refuse_beyond_int64(frame, schema, rank, "rank")
    return frame, schema


def _refuse_beyond_int64(frame: pl.LazyFrame, schema: pl.Schema, column: str, what: str) -> None:
    """A ``UInt64`` column of ranks (``rank``, the swapped rank ``swap``) is read as
    Int64: a value beyond 2**63 - 1 is refused, naming it (polars' failed cast before)."""
    if schema[column] != pl.UInt64:
        return
    largest = frame.select(pl.col(column).max()).collect().item()
    if largest is not None and largest > _LARGEST_RANK:
        raise InvalidValueError(
            f"column {column!r} of the log holds {what} {largest}, beyond 2**63 - 1 = "
            f"{_LARGEST_RANK}, the largest rank position_bias reads: a rank counts the "
            "positions from 1 for the top; check the column"
        )


def _swap(log: FrameInput, query_id: str, rank: str, clicked: str, swap: str) -> pl.DataFrame:
    """``position_bias(method="swap")``: the click-through rates of the ranker's top
    document at rank 1 (no intervention) and at each swapped rank ``k``."""
    frame, schema = _read_log(
        log,
        [query_id, rank, clicked, swap],
        rank,
        clicked,
        "a log of swap interventions has one row per shown document: its impression "
        "(query_id=), rank (rank=), click (clicked=) and the impression's swap (swap=: k "
        "where ranks 1 and k were swapped, null where none)",
    )
    if not schema[swap].is_integer() and schema[swap] != pl.Null:
        raise ColumnTypeError(
            f"column {swap!r} in the log has dtype {schema[swap]}; it must be an integer (the "
            f"rank swapped with rank 1, null where none): cast it, e.g. "
            f"pl.col({swap!r}).cast(pl.Int64)"
        )
    _refuse_beyond_int64(frame, schema, swap, "swapped rank")
    c = pl.col(clicked).cast(pl.Float64)
    k = pl.col(swap).cast(pl.Int64)
    control = k.is_null() | (k == 1)
    read = pl.when(control).then(pl.lit(1, pl.Int64)).otherwise(k)  # the rank the ratio reads
    per_impression = (
        frame.group_by(query_id)
        .agg(
            k.first().alias("k"),
            k.n_unique().alias("values"),  # a null counts as a value
            c.filter(control & (pl.col(rank) == 1)).sum().alias("top"),
            c.filter(pl.col(rank) == k).sum().alias("moved"),
            (c.is_null() | ~c.is_in([0.0, 1.0])).sum().alias("bad_click"),
            (pl.col(rank).is_null() | (pl.col(rank) < 1)).sum().alias("bad_rank"),
            (pl.col(rank).count() - pl.col(rank).drop_nulls().n_unique()).alias("dup_rank"),
            (pl.col(rank) == read).any().alias("shown"),
            pl.len().alias("rows"),
        )
        .collect()
    )
    _refuse_null_ids(per_impression, {query_id: (pl.col(query_id), "its impression")}, "rows")
    bad = per_impression.filter(
        (pl.col("values") > 1)
        | (pl.col("bad_click") > 0)
        | (pl.col("bad_rank") > 0)
        | (pl.col("k") < 1)
    ).sort(query_id)
    if bad.height:
        row = bad.row(0, named=True)
        impression = row[query_id]
        if row["values"] > 1:
            why = f"its rows carry different {swap!r} values: one intervention per impression"
        elif row["bad_click"] or row["bad_rank"]:
            why = (
                f"a null rank, a rank below 1, or a {clicked!r} that is neither 0 nor 1: clicks "
                "are 0/1 and positions start at 1"
            )
        else:
            why = f"{swap!r} is {row['k']}: the rank swapped with rank 1 is 2 or more"
        raise InvalidValueError(f"impression {impression!r} of the log: {why}")
    twice = per_impression.filter(pl.col("dup_rank") > 0).sort(query_id)
    if twice.height:
        raise DuplicateError(
            f"column {rank!r} of the log: {twice['dup_rank'].sum()} row(s) at a rank another "
            f"row of their impression holds, e.g. in impression {twice[query_id][0]!r}; each "
            f"rank of an impression shows one document: keep one row per rank, e.g. "
            f".unique([{query_id!r}, {rank!r}])"
        )
    is_control = pl.col("k").is_null() | (pl.col("k") == 1)
    unread = per_impression.filter(~pl.col("shown")).sort(query_id)
    if unread.height:
        row = unread.row(0, named=True)
        if row["k"] is None or row["k"] == 1:
            why = (
                f"it has no intervention ({swap!r} {'null' if row['k'] is None else 1}) and "
                "no row at rank 1, whose click the base rate reads"
            )
        else:
            why = (
                f"{swap!r} is {row['k']} and it has no row at rank {row['k']}, whose click the "
                "ratio reads"
            )
        raise InvalidValueError(
            f"impression {row[query_id]!r} of the log: {why}; {unread.height} impression(s) "
            "do not show the rank they are read at: log every rank an impression shows, or "
            "swap only ranks the impressions show"
        )
    base = per_impression.filter(is_control).select(
        pl.len().alias("n"), pl.col("top").sum().alias("clicks")
    )
    n_control, top_clicks = base.row(0)
    if n_control == 0 or top_clicks == 0:
        raise InvalidValueError(
            f"the log has {n_control} impression(s) without intervention ({swap!r} null) and "
            f"{top_clicks:g} click(s) at their rank 1: p_k / p_1 divides by the top's "
            "click-through rate without intervention; log impressions shown as ranked too"
        )
    base_rate = top_clicks / n_control
    counts = (
        per_impression.filter(~is_control)
        .group_by("k")
        .agg(pl.len().alias("impressions"), pl.col("moved").sum().alias("clicks"))
        .sort("k")
    )
    # a swapped rank never clicked would get the propensity 0, as harvesting's would
    unclicked = counts.filter(pl.col("clicks") <= 0)["k"].to_list()
    if unclicked:
        named = ", ".join(map(str, unclicked))
        raise InvalidValueError(
            f"position(s) {named} have no click at the swapped rank of their swap "
            f"impressions ({swap!r} k, the click at rank k): the estimate of their "
            "propensity would be 0, which no propensity-weighted estimator can divide by; "
            "log more swap impressions there, or drop them, e.g. "
            f"log.filter(~pl.col({swap!r}).is_in([{named}]))"
        )
    swapped = counts.select(
        pl.col("k").alias("position"),
        pl.lit(None, pl.Float64).alias("examination"),
        (pl.col("clicks") / pl.col("impressions") / base_rate).alias("propensity"),
        pl.col("impressions").cast(pl.Int64),
    )
    top = pl.DataFrame(
        {"position": [1], "examination": [None], "propensity": [1.0], "impressions": [n_control]},
        schema=swapped.schema,
    )
    return pl.concat([top, swapped]).sort("position")


#: The bounds of ``log p`` and ``log r`` in the AllPairs fit: ``r <= 1 - 1e-12`` keeps
#: ``log(1 - p r)`` finite where a pair has unclicked impressions.
_LOW, _HIGH_R = -60.0, float(np.log1p(-1e-12))


def _harvest(
    log: FrameInput, query_id: str, doc_id: str, rank: str, clicked: str, ranker: str
) -> pl.DataFrame:
    """``position_bias(method="harvest")``: the interventional sets of several rankers'
    logs, weighted as Agarwal et al. 2019, fitted by their AllPairs estimator."""
    frame, _ = _read_log(
        log,
        [ranker, query_id, doc_id, rank, clicked],
        rank,
        clicked,
        "intervention harvesting reads the logs of several rankers, one row per shown "
        "document: name the columns with ranker=, query_id=, doc_id=, rank= and clicked=",
    )
    c = pl.col(clicked).cast(pl.Float64)
    # one row per (ranker, query, document): its rank, its rows (impressions) and clicks
    per = (
        frame.select(
            pl.col(ranker).alias("ranker"),
            pl.struct(query_id, doc_id).alias("pair"),
            pl.col(rank).cast(pl.Int64).alias("position"),
            c.alias("c"),
        )
        .group_by("ranker", "pair")
        .agg(
            pl.col("position").min(),
            pl.col("position").max().alias("other"),
            pl.len().cast(pl.Float64).alias("shown"),
            pl.col("c").sum().alias("clicks"),
            (pl.col("c").is_null() | ~pl.col("c").is_in([0.0, 1.0])).sum().alias("bad"),
            pl.col("position").null_count().alias("null_rank"),
        )
        .collect()
    )
    harvest_ids = {
        ranker: (pl.col("ranker"), "the ranker that showed it"),
        query_id: (pl.col("pair").struct.field(query_id), "its query"),
        doc_id: (pl.col("pair").struct.field(doc_id), "its document"),
    }
    _refuse_null_ids(per, harvest_ids, "shown")
    _refuse_bad_rows(
        per.filter(
            (pl.col("bad") > 0) | (pl.col("null_rank") > 0) | (pl.col("position") < 1)
        ).sort("position", nulls_last=False),
        clicked,
        "ranker {ranker!r}, {pair}",
    )
    moved = per.filter(pl.col("position") != pl.col("other")).sort("position", "other")
    if moved.height:
        row = moved.row(0, named=True)
        raise InvalidValueError(
            f"ranker {row['ranker']!r} shows {row['pair']} at ranks {row['position']} and "
            f"{row['other']}: intervention harvesting reads each ranker as a function of the "
            f"query (Agarwal et al. 2019); give each version of a ranker its own {ranker!r} "
            "value"
        )
    # a ranker is a function of the query: one document of a query at each of its ranks
    held = (
        per.group_by("ranker", pl.col("pair").struct.field(query_id).alias("query"), "position")
        .agg(pl.col("pair").struct.field(doc_id).sort().alias("docs"))
        .filter(pl.col("docs").list.len() > 1)
        .sort("ranker", "query", "position")
    )
    if held.height:
        row = held.row(0, named=True)
        docs = row["docs"]
        raise InvalidValueError(
            f"ranker {row['ranker']!r} shows {len(docs)} documents of query {row['query']!r} "
            f"at rank {row['position']} (e.g. {docs[0]!r} and {docs[1]!r}): intervention "
            "harvesting reads each ranker as a function of the query (Agarwal et al. 2019); "
            f"give each version of a ranker its own {ranker!r} value"
        )
    # n_i: ranker i's impressions, each (ranker, query) counted by its most shown document
    served = (
        per.group_by("ranker", pl.col("pair").struct.field(query_id).alias("query"))
        .agg(pl.col("shown").max())
        .group_by("ranker")
        .agg(pl.col("shown").sum().alias("n_i"))
    )
    # per (query, document, position): w(q, d, k) = sum of n_i over the rankers there
    cell = (
        per.join(served, on="ranker")
        .group_by("pair", "position")
        .agg(
            pl.col("n_i").sum().alias("w"),
            pl.col("clicks").sum(),
            pl.col("shown").sum(),
        )
        .select(
            "pair",
            "position",
            "shown",
            (pl.col("clicks") / pl.col("w")).alias("c"),
            ((pl.col("shown") - pl.col("clicks")) / pl.col("w")).alias("not_c"),
        )
    )
    # the interventional sets: the same (query, document) at two positions
    pairs = (
        cell.join(cell.select("pair", pl.col("position").alias("other")), on="pair")
        .filter(pl.col("position") != pl.col("other"))
        .group_by("position", "other")
        .agg(exact_sum(pl.col("c")), exact_sum(pl.col("not_c")))  # in any row order
        .sort("position", "other")
    )
    harvested_cells = cell.join(
        cell.group_by("pair").agg(pl.len().alias("positions")), on="pair"
    ).filter(pl.col("positions") > 1)
    shown_at = (
        harvested_cells.group_by("position")
        .agg(pl.col("shown").sum().cast(pl.Int64).alias("impressions"))
        .sort("position")
    )
    everywhere = sorted(per["position"].unique().to_list())
    if not everywhere:
        raise InvalidValueError(
            "the log has no row: intervention harvesting needs the rankings of two rankers or more"
        )
    if everywhere[0] != 1:
        raise InvalidValueError(
            f"the log shows no document at rank 1 (its ranks start at {everywhere[0]}): the "
            "propensities are relative to the top, p_k / p_1; log the whole ranking from "
            "rank 1"
        )
    propensity = _all_pairs(pairs, everywhere, ranker)
    return pl.DataFrame(
        {
            "position": np.array(everywhere, dtype=np.int64),
            "examination": pl.Series([None] * len(everywhere), dtype=pl.Float64),
            "propensity": propensity,
        }
    ).join(shown_at, on="position", how="left")


def _all_pairs(pairs: pl.DataFrame, everywhere: list[int], ranker: str) -> np.ndarray:
    """The AllPairs estimate ``p_k / p_1`` for each position of ``everywhere``, from the
    weighted click and no-click rates of each ordered pair of positions (``pairs``)."""
    position, other = pairs["position"].to_numpy(), pairs["other"].to_numpy()
    index = {k: i for i, k in enumerate(everywhere)}
    k_of = np.array([index[k] for k in position], dtype=np.int64)
    linked = _reached_from_top(everywhere, position, other)
    if not linked.all():
        lost = [k for k, ok in zip(everywhere, linked, strict=True) if not ok]
        raise InvalidValueError(
            f"position(s) {', '.join(map(str, lost))} of the log are in no interventional "
            "set that reaches position 1 (no document of a query shown there by one ranker "
            f"and at a linked position by another, per {ranker!r}): their propensity is not "
            "identified; log more rankers, or keep the ranks you can estimate, e.g. "
            "log.filter(pl.col('rank') <= K)"
        )
    clicks, not_clicks = pairs["c"].to_numpy(), pairs["not_c"].to_numpy()
    unclicked = np.bincount(k_of, weights=clicks, minlength=len(everywhere)) <= 0
    if unclicked.any():
        lost = [k for k, no in zip(everywhere, unclicked, strict=True) if no]
        raise InvalidValueError(
            f"position(s) {', '.join(map(str, lost))} have no click in their interventional "
            "sets: the estimate of their propensity would be 0, which no propensity-weighted "
            "estimator can divide by; log more clicks there, or keep the ranks above, e.g. "
            "log.filter(pl.col('rank') <= K)"
        )
    low, high = np.minimum(position, other), np.maximum(position, other)
    unordered = np.unique(np.stack([low, high], axis=1), axis=0)
    pair_index = {(int(a), int(b)): i for i, (a, b) in enumerate(unordered)}
    u_of = np.array([pair_index[(int(a), int(b))] for a, b in zip(low, high, strict=True)])
    n_k, n_u = len(everywhere), len(unordered)
    rate = clicks / np.maximum(clicks + not_clicks, np.finfo(float).tiny)
    start_r = np.bincount(u_of, weights=rate, minlength=n_u) / np.bincount(u_of, minlength=n_u)
    x0 = np.concatenate(
        [np.zeros(n_k), np.log(np.clip(start_r, 1e-6, 0.5))]  # p = 1, r = the mean rate
    )

    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        z = x[:n_k][k_of] + x[n_k:][u_of]  # log(p_k r_{k,k'})
        theta = np.exp(z)
        log_miss = np.log(-np.expm1(z))  # log(1 - p_k r_{k,k'})
        value = -(clicks @ z + not_clicks @ log_miss)
        dz = -(clicks - not_clicks * theta / -np.expm1(z))
        grad = np.concatenate(
            [
                np.bincount(k_of, weights=dz, minlength=n_k),
                np.bincount(u_of, weights=dz, minlength=n_u),
            ]
        )
        return float(value), grad

    bounds = [(_LOW, 0.0)] * n_k + [(_LOW, _HIGH_R)] * n_u
    fit = optimize.minimize(
        objective,
        x0,
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        options={"maxiter": 10_000, "ftol": 1e-15, "gtol": 1e-12},
    )
    log_p = fit.x[:n_k]
    ratio: np.ndarray = np.exp(log_p - log_p[0])
    return ratio


def _reached_from_top(
    everywhere: list[int], position: np.ndarray, other: np.ndarray
) -> np.ndarray:
    """Which positions of ``everywhere`` an interventional set links to position 1 (and
    so has an identified ratio ``p_k / p_1``), by a walk over the few positions."""
    index = {k: i for i, k in enumerate(everywhere)}
    reached = np.zeros(len(everywhere), dtype=bool)
    if not everywhere or everywhere[0] != 1:
        return reached
    edges = {(index[int(a)], index[int(b)]) for a, b in zip(position, other, strict=True)}
    reached[0] = True
    grown = True
    while grown:  # at most one pass per position
        grown = False
        for a, b in edges:
            if reached[a] and not reached[b]:
                reached[b] = grown = True
    return reached
