"""Exact k nearest neighbours of query embeddings in a corpus: a run to evaluate.

:func:`knn` scores every (query, document) pair with numpy (a matrix product per
block of the corpus and per block of queries) and keeps a running top ``k`` per query
(``argpartition``): memory is bounded by the blocks, not by the corpus, so a corpus
larger than memory (Parquet files by path, read with pyarrow by
:mod:`polars_irmetrics.vectors.parquet`, or a LazyFrame) is read in blocks, exactly.

Ties: exactly ``k`` documents per query are kept while the corpus is read, whatever the
ties (memory stays bounded by the blocks even when thousands of documents tie, e.g.
one-hot vectors under ``"dot"``): among documents tied with the ``k``-th score, those
whose ``doc_id`` is greater compared as text are kept, as
:func:`~polars_irmetrics.evaluate` ranks a run by score (score descending, then doc id
descending as text: trec_eval's rule); the run is sorted the same way. The run therefore
evaluates the same whether ranked by its ``rank`` or by its ``score``.

Precision (each score is the metric of the vectors as given, computed so that the
magnitude of the vectors does not matter). Under ``"cosine"`` and ``"l2"`` the matrix
product only pre-selects: every document whose score could be among a query's top
``k`` (the product's error bounded per query, a margin of candidates kept around the
``k``-th) has its score recomputed directly from the vectors as given, in float64,
rounded once to the output dtype, and the top ``k`` is taken from those. A vector and
an identical one (a query found in the corpus, two identical documents) therefore score
exactly 0.0 under ``"l2"`` and 1.0 under ``"cosine"``, identical documents tie, and
near-duplicates keep their order:

* ``"cosine"``: ``1 - |u - v|² / 2`` for the unit vectors ``u``, ``v`` (each vector
  scaled by a power of two, then divided by its norm: no square overflows or
  underflows, 3e19 in float32 and 1e-300 in float64 are fine), clipped to ``[-1, 1]``;
  exact to about float64's epsilon, absolute, and the cosine distance ``1 - score`` to
  about epsilon times ``|u - v|`` (a near-duplicate's too), then rounded to the
  output dtype. The product alone put
  a vector and itself at 0.9999999999999997 (float32: 0.99999988).
* ``"l2"``: ``sqrt(sum((q - c)²))`` in float64 (a float32 difference is exact; a
  float64 one rounded once), scaled by a power of two where a square could overflow or
  underflow: exact to about float64's epsilon of the distance itself, whatever the
  offset or magnitude of the vectors. The product (``|q|² - 2 q·c + |c|²`` on vectors
  centred on the queries' mean, in float64 where a float32 row would cancel near its
  ``k``-th distance) put a vector and itself at up to 0.35 from itself (float32, values
  of spread 37 around 5, 384 dimensions).
* ``"dot"``: exact to about ``epsilon × d × max|q| × max|c|``, absolute; where a product
  could overflow or underflow the dtype, the vectors are scaled by powers of two and the
  scores computed in float64. A score beyond the output dtype (3.4e38 for float32
  queries, 1.8e308 for float64) is refused with :class:`InvalidValueError`. A score
  below its smallest normal number (1.2e-38, 2.2e-308) is returned rounded to the
  output dtype (a subnormal number or 0), and ranked as returned: within the precision
  above while ``max|q| × max|c|`` is at least that number. Below it, a rounding that
  loses a bit could tie distinct scores (or round them to 0) and rank them wrongly: the
  call is refused with :class:`InvalidValueError` (float32: cast to Float64, where no
  product of float32 values underflows; float64: scale both sides up by a power of
  two). Products that are exact there (0, a subnormal number) are returned.

A ``"l2"`` distance beyond the output dtype is refused, as a ``"dot"`` score.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import polars as pl

from polars_irmetrics.errors import (
    ColumnTypeError,
    CoverageWarning,
    DuplicateError,
    FileFormatError,
    InvalidValueError,
    IrmError,
    IrmWarning,
)
from polars_irmetrics.ground.inputs import as_polars, type_name
from polars_irmetrics.ground.options import check_column_name, shared_column_error
from polars_irmetrics.ground.validate import (
    INTERNAL,
    common_id_dtype,
    id_kind,
    kind_of,
    require_columns,
)
from polars_irmetrics.vectors.embeddings import (
    Block,
    FloatType,
    Matrix,
    block_of,
    cast_checked,
    embedding_dtype,
)
from polars_irmetrics.vectors.parquet import (
    PathSource,
    corpus_files,
    is_path,
    is_remote,
    parquet_blocks,
)

__all__ = ["KnnMetric", "knn"]

KnnMetric = Literal["cosine", "dot", "l2"]
METRICS: tuple[str, ...] = ("cosine", "dot", "l2")
#: Score-matrix cells computed at once (queries × corpus rows): 16M, 64 MiB in float32.
CELLS = 1 << 24
_QPOS = f"{INTERNAL}qpos"

Table = pl.DataFrame | pl.LazyFrame | np.ndarray


def knn(
    queries: Table,
    corpus: Table | PathSource,
    *,
    k: int = 100,
    metric: KnnMetric = "cosine",
    query_id: str = "query_id",
    doc_id: str = "doc_id",
    embedding: str = "embedding",
    exclude_self: bool = False,
    block_size: int = 65_536,
) -> pl.DataFrame:
    """The exact ``k`` nearest documents of each query: a run (query_id, doc_id, score, rank).

    Parameters
    ----------
    queries
        One row per query: ``query_id`` and ``embedding``. A polars DataFrame or
        LazyFrame (collected whole: the queries are held in memory), a pandas or
        pyarrow table, or a numpy matrix ``n × d`` (float32 or float64) whose rows are
        queries ``0..n-1``.
    corpus
        One row per document: ``doc_id`` and ``embedding``, as ``queries``; or Parquet
        files by name. A path (``str`` or ``os.PathLike``: a file, a glob such as
        ``"corpus/*.parquet"`` or a folder, whose files are taken in name order), or a
        list of them, is read with pyarrow in blocks of ``block_size`` rows: the fastest
        way to search a corpus larger than memory (pyarrow decodes an embedding column
        two to three times faster than polars, and its values become the block's matrix
        without a copy); a URL is read by ``pl.scan_parquet``. A LazyFrame (e.g.
        ``pl.scan_parquet(...)``) is read in blocks too, one slice of the LazyFrame
        each (a Parquet scan reads only the row groups of the block; collect a LazyFrame
        over a costly computation first). Either way a corpus larger than memory is
        searched exactly, with the same result and errors as in memory.
    k
        How many documents per query (fewer when the corpus is smaller).
    metric
        ``"cosine"`` (default): cosine similarity (each vector divided by its norm; a
        zero vector is an error). ``"dot"``: inner product. ``"l2"``: Euclidean
        distance, returned as ``score = -distance`` so that higher is better, as every
        run's score (``-score`` is the distance). Each is computed whatever the
        magnitude of the vectors, to the precision the module's *Precision* states
        (``l2`` on vectors centred on the queries' mean: a large common offset does not
        cancel).
    query_id, doc_id, embedding
        Column names: the ids in ``queries`` and ``corpus`` and the embedding column of
        both (``Array[Float32|Float64, d]``, or ``List`` of one length).
    exclude_self
        ``True``: a document whose id equals the query's id is not returned (the corpus
        searched with its own rows as queries); ``False``: every document. Any other
        value (``"no"``, ``1``, ``None``) is refused, not read as a truth value.
    block_size
        Corpus rows read at once, scored in whole tiles of 4,096 (the rows beyond a
        block's last whole tile wait for the next block); with up to 16M score cells
        at a time (queries are split to fit), memory is about ``(block_size + 4096) ×
        d`` floats plus the running top ``k`` of every query (exactly ``k``: ties with
        the ``k``-th are broken by id as they are read), whatever the corpus' size and
        its ties. The scores have the same bits whatever the block size (each is
        computed by a product of one shape, 256 queries by 4,096 documents, in
        float64; float32 scores are its value rounded once).
        Queries split over several calls get the same bits too (``"cosine"`` and
        ``"l2"`` scores are recomputed pair by pair from the vectors as given: see the
        module's *Precision*).

    Returns
    -------
    pl.DataFrame
        A DataFrame whatever the input kind, as the numpy kernel has computed it
        (``.lazy()`` it to compose plans): ``query_id`` and ``doc_id`` of the inputs'
        dtypes (``Int64`` row numbers for numpy matrices), ``score`` (``Float32`` when
        the queries' embeddings are float32, which is then the precision of the
        computation, else ``Float64``) and ``rank`` (``Int64``, 1 = best), sorted by
        query (in the queries' order) and rank.

    Raises
    ------
    InvalidValueError
        ``k`` below 1, an unknown ``metric``, a ``block_size`` below 1, an
        ``exclude_self`` that is not ``True`` or ``False``; a ``query_id`` or ``doc_id``
        named ``"score"`` or ``"rank"`` (the run's own columns); a null id or embedding, a
        NaN or infinite value, embeddings of different dimensions (within a table or
        between the two) or of 0 dimensions, a zero vector under ``"cosine"``; a
        returned score beyond the output dtype's range (``"dot"`` or ``"l2"`` on huge
        vectors: cast float32 embeddings to Float64, or scale float64 ones down), or
        ``"dot"`` scores below its smallest normal number that would lose their order
        (tiny vectors: cast float32 embeddings to Float64, or scale float64 ones up); a
        float64 corpus that does not fit float32 queries (the corpus is scored in the
        queries' dtype): a value beyond float32's range, or a nonzero vector whose
        values all round to 0 in float32 (cast the queries to Float64).
    DuplicateError
        An id twice in ``queries`` or in ``corpus``.
    ColumnNotFoundError, ColumnTypeError
        A missing column; an embedding that is not float32 or float64; ids of
        different kinds with ``exclude_self``.
    MissingFileError, FileFormatError
        A corpus path that names no file (or a glob or folder without files); a file
        that is not Parquet, is truncated or damaged, or whose id or embedding column
        has another dtype than the first file's; a LazyFrame of the queries or the
        corpus that polars cannot read (a damaged file it scans).

    Warns
    -----
    IrmWarning
        ``queries`` or ``corpus`` holds no row: the run returned is empty (no query
        has a neighbour), as a filter that kept nothing or an empty file gives it.
    CoverageWarning
        ``exclude_self=True`` where no query id is an id of the corpus: nothing is left
        out (ids spelt apart, ``'q1'`` beside ``'1'``, would leave each query its own
        nearest neighbour in silence).

    See Also
    --------
    polars_irmetrics.evaluate : evaluate the run against judgments, or against an
        exact run with ``neighbor_recall@k``.
    polars_irmetrics.cosine_similarity : the cosine of two embedding columns, row by row.

    Examples
    --------
    Two documents tie for the first query (both at cosine 1): the one whose id is
    greater as text comes first, as ``evaluate`` ranks ties.

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> queries = pl.DataFrame({"query_id": ["q1", "q2"], "embedding": [[1.0, 0.0], [0.0, 1.0]]})
    >>> corpus = pl.DataFrame({
    ...     "doc_id": ["a", "b", "c"],
    ...     "embedding": [[2.0, 0.0], [1.0, 1.0], [3.0, 0.0]],
    ... })
    >>> irm.knn(queries, corpus, k=2)
    shape: (4, 4)
    ┌──────────┬────────┬──────────┬──────┐
    │ query_id ┆ doc_id ┆ score    ┆ rank │
    │ ---      ┆ ---    ┆ ---      ┆ ---  │
    │ str      ┆ str    ┆ f64      ┆ i64  │
    ╞══════════╪════════╪══════════╪══════╡
    │ q1       ┆ c      ┆ 1.0      ┆ 1    │
    │ q1       ┆ a      ┆ 1.0      ┆ 2    │
    │ q2       ┆ b      ┆ 0.707107 ┆ 1    │
    │ q2       ┆ c      ┆ 0.0      ┆ 2    │
    └──────────┴────────┴──────────┴──────┘

    Under ``"l2"`` the score is the negative distance:

    >>> irm.knn(queries, corpus, k=1, metric="l2")["score"].to_list()
    [-1.0, -1.0]

    A large common offset does not cancel under ``"l2"``, even in float32 (the two
    documents are 0.01 and 0.02 away from the query, 100 away from the origin):

    >>> import numpy as np
    >>> far = np.array([[100.0, 100.0]], dtype=np.float32)
    >>> near = np.array([[100.0, 100.02], [100.0, 100.01]], dtype=np.float32)
    >>> run = irm.knn(far, near, k=2, metric="l2")
    >>> run["doc_id"].to_list(), [round(score, 4) for score in run["score"]]
    ([1, 0], [-0.01, -0.02])

    A query found in the corpus is at distance exactly 0.0 from itself under ``"l2"``
    (cosine exactly 1.0), and an identical copy of it ties there, ranked by id as text
    (``"3"`` before ``"12"``): the scores of the top ``k`` are recomputed from the
    vectors, where the matrix product alone put these self-matches up to 0.35 away (its
    expansion ``|q|² - 2 q·c + |c|²`` cancels) and their cosines at 0.99999988:

    >>> vectors = np.random.default_rng(0).standard_normal((20, 384)) * 37 + 5
    >>> vectors = vectors.astype(np.float32)
    >>> vectors[12] = vectors[3]
    >>> run = irm.knn(vectors[:8], vectors, k=2, metric="l2")
    >>> run.filter(pl.col("rank") == 1)["score"].to_list()
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    >>> run.filter(pl.col("query_id") == 3).rows()
    [(3, 3, 0.0, 1), (3, 12, 0.0, 2)]
    >>> irm.knn(vectors[:8], vectors, k=1)["score"].to_list()
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]

    A corpus in Parquet files is passed by its path, and read in blocks; the run is
    the in-memory call's:

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "corpus.parquet"
    >>> corpus.write_parquet(path)
    >>> irm.knn(queries, path, k=2, block_size=2).equals(irm.knn(queries, corpus, k=2))
    True
    >>> irm.knn(queries, path.with_name("missing.parquet"))
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MissingFileError: .../missing.parquet: no such file or folder; ...
    """
    k, block_size = _whole(k), _whole(block_size)  # a numpy integer is an integer
    _check_options(k, metric, block_size, exclude_self)
    for name, value in (("query_id", query_id), ("doc_id", doc_id), ("embedding", embedding)):
        check_column_name(name, value)
    if query_id == doc_id:  # the run's two id columns
        raise shared_column_error("query_id", "doc_id", query_id)
    for name, value, table in (("query_id", query_id, "queries"), ("doc_id", doc_id, "corpus")):
        if value in ("score", "rank"):  # the run's two other columns
            raise InvalidValueError(
                f"{name}={value!r} names the column {value!r}, which is also a column of "
                f"the run knn returns (its {value}s); rename the ids first, e.g. "
                f"{table}.rename({{{value!r}: {value + '_id'!r}}}), and pass "
                f"{name}={value + '_id'!r}"
            )
    try:
        query = _queries(queries, query_id, embedding)
    except IrmError:
        raise
    except (pl.exceptions.PolarsError, OSError) as error:
        raise _unreadable("queries", error) from error
    dtype: FloatType = np.float32 if query.vectors.dtype == np.float32 else np.float64
    width = query.vectors.shape[1] if query.vectors.ndim == 2 else 0
    scorer = _Scorer(query.vectors, metric, query.ids, embedding)
    n_q = len(query.ids)
    best_s = np.full((n_q, 0), -np.inf, dtype=np.float64)
    best_id: npt.NDArray[Any] | None = None
    self_pos = pl.DataFrame({doc_id: query.ids, _QPOS: np.arange(n_q)}) if exclude_self else None
    opened = _corpus_blocks(corpus, doc_id, embedding, block_size, dtype)
    id_dtype = _reading_first(opened)
    if self_pos is not None and n_q:  # before any block is read (or scored)
        common = _check_self_ids(
            self_pos.schema[doc_id],
            id_dtype,
            query_id,
            doc_id,
            matrix=isinstance(queries, np.ndarray),
        )
        self_pos = self_pos.with_columns(pl.col(doc_id).cast(common))

    left_out = 0  # (query, document) pairs of one id that exclude_self left out
    first_doc: object = None  # the corpus' first id, named where none is a query's

    def score(block: Block) -> None:
        """Merge ``block``'s best documents of every query into the running top ``k``."""
        nonlocal best_s, best_id, left_out
        ids = block.ids.to_numpy()
        docs = scorer.corpus(block.vectors, block.ids, embedding)
        block_rank = _LazyRank(ids)
        parts_s, parts_i = [], []
        floor = _kth_largest(best_s, k)  # a score below it cannot enter the top k
        q_step = max(1, CELLS // max(len(ids), 1))
        for start in range(0, n_q, q_step):
            stop = min(n_q, start + q_step)
            block_scores = scorer.scores(docs, start, stop, floor[start:stop], k)
            if self_pos is not None:
                left_out += _mask_self(block_scores, block.ids, self_pos, start, stop, doc_id)
            if metric == "dot":
                top_s, top = _block_top(block_scores, k, floor[start:stop], block_rank)
            else:  # the candidates' scores recomputed from the vectors, then the top k
                packed, columns = scorer.refine(block_scores, docs, start, floor[start:stop], k)
                chosen = _top_k(packed, k, _ranks_in(block_rank, columns))
                top_s = np.take_along_axis(packed, chosen, axis=1)
                top = np.take_along_axis(columns, chosen, axis=1)
            parts_s.append(top_s.astype(np.float64, copy=False))
            parts_i.append(ids[top])
        cand_s = _hstack_rows(best_s, parts_s, -np.inf)
        kept = ids[:0].reshape(n_q, 0) if best_id is None else best_id
        cand_i = _hstack_rows(kept, parts_i, ids[:1][0] if len(ids) else 0)
        keep = _top_k(cand_s, k, _ranks_of(cand_i))
        best_s = np.take_along_axis(cand_s, keep, axis=1)
        best_id = np.take_along_axis(cand_i, keep, axis=1)

    # scored in whole tiles of TILE documents (:func:`_product`): the rows read beyond
    # the last whole tile wait for the next block (and the corpus' last ones are scored
    # at the end), so every product has one shape whatever block_size
    tiles = _Tiles()
    for block in _reading(opened):
        if block.vectors.shape[1] != width and n_q:
            raise InvalidValueError(
                f"column {embedding!r}: the queries' embeddings have {width} dimensions and "
                f"the corpus' {block.vectors.shape[1]}; both must come from one model"
            )
        if first_doc is None and len(block.ids):
            first_doc = block.ids[0]
        if best_id is None:
            first = block.ids.to_numpy()[:0]
            best_id = first.reshape(n_q, 0) if n_q else first.reshape(0, 0)
        if not n_q:  # the corpus is still read: its errors are raised
            continue
        ready = tiles.add(block)
        del block  # freed before the next block is read: one block at a time
        for whole in ready:
            score(whole)
        del ready
    rest = tiles.rest()
    if rest is not None:
        score(rest)
    _warn_empty(n_q, best_id is None)
    if self_pos is not None and n_q and first_doc is not None and not left_out:
        _warn_no_self(n_q, query.ids[0], first_doc, query_id, doc_id)
    scorer.check_range(best_s)
    return _as_run(query.ids, best_s, best_id, id_dtype, k, (query_id, doc_id), dtype)


def _warn_empty(queries: int, no_corpus: bool) -> None:
    """An :class:`~polars_irmetrics.errors.IrmWarning` where the queries or the corpus
    (``no_corpus``: not one block read) hold no row: the run returned is empty, every
    query without a neighbour, which an evaluation of it would score 0 or leave out."""
    empty = [name for name, none in (("queries", not queries), ("corpus", no_corpus)) if none]
    if not empty:
        return
    held = " and ".join(f"{name}=" for name in empty)
    warnings.warn(
        f"{held} {'hold' if len(empty) > 1 else 'holds'} no row, so knn returns an empty "
        "run (no query has a neighbour): a filter that kept nothing, or an empty file?",
        IrmWarning,
        stacklevel=4,  # the user's call: ground.calls' check is a frame
    )


def _warn_no_self(queries: int, query: object, doc: object, query_id: str, doc_id: str) -> None:
    """A :class:`~polars_irmetrics.errors.CoverageWarning` where ``exclude_self=True``
    left nothing out: no query id is an id of the corpus, so the option changed nothing,
    and a query that is a row of the corpus under another spelling of its id is its own
    nearest neighbour (a self-search's recall read as perfect, in silence)."""
    warnings.warn(
        f"exclude_self=True leaves out each query's own id, and the corpus holds none of "
        f"the {queries} query id(s) (column {query_id!r} of the queries, column {doc_id!r} "
        f"of the corpus; e.g. query {query!r}, document {doc!r}): nothing is left out, so a "
        "query that is a row of the corpus under another id finds itself first. Ids that "
        "do not line up are the likely cause: give the queries and the corpus the same ids "
        "(same spelling, same collection), or pass exclude_self=False where the queries "
        "are not rows of the corpus",
        CoverageWarning,
        stacklevel=4,  # the user's call: ground.calls' check is a frame
    )


def _whole(value: Any) -> Any:
    """A numpy integer (``np.int64(2)``) as the Python int it equals; anything else as
    it is (refused by :func:`_check_options` where it is no positive integer)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool | int):
        return int(value)
    return value


def _check_options(k: object, metric: object, block_size: object, exclude_self: object) -> None:
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise InvalidValueError(f"k={k!r} is not a positive integer; ask for k >= 1 neighbours")
    if metric not in METRICS:
        raise InvalidValueError(
            f"metric={metric!r} is not known; choose one of 'cosine', 'dot', 'l2'"
        )
    if not isinstance(block_size, int) or isinstance(block_size, bool) or block_size < 1:
        raise InvalidValueError(
            f"block_size={block_size!r} is not a positive integer; pass the number of corpus "
            "rows to score at once, e.g. 65536"
        )
    if not isinstance(exclude_self, bool):  # "no" or 0 is not read as a truth value
        raise InvalidValueError(
            f"exclude_self={exclude_self!r} is not True or False; pass exclude_self=True to "
            "leave out each query's own id (a corpus searched with its own rows), or False"
        )


def _queries(queries: Table, query_id: str, embedding: str) -> Block:
    if isinstance(queries, np.ndarray):
        return _matrix_block(queries, "queries", embedding)
    frame = as_polars(queries, "queries")
    lazy = frame.lazy()
    _check_schema(lazy.collect_schema(), query_id, embedding, "queries")
    collected = lazy.select(query_id, embedding).collect()
    dtype = embedding_dtype(collected.schema, embedding, "queries")
    _check_ids(collected.get_column(query_id), query_id, "queries")
    return block_of(collected, query_id, embedding, "queries", dtype)


def _matrix_block(matrix: np.ndarray, what: str, embedding: str) -> Block:
    if matrix.ndim != 2 or matrix.dtype not in (np.float32, np.float64):
        raise ColumnTypeError(
            f"the {what} matrix has shape {matrix.shape} and dtype {matrix.dtype}; a numpy "
            "matrix of embeddings must be 2-dimensional (rows × dimensions) float32 or "
            "float64: e.g. matrix.astype(np.float32)"
        )
    if matrix.shape[0] and not matrix.shape[1]:
        raise InvalidValueError(
            f"the {what} matrix has shape {matrix.shape}: its embeddings have 0 dimensions, "
            "from which no score can be computed; pass the model's vectors as a matrix of "
            "rows × dimensions (at least one)"
        )
    ids = pl.Series("id", np.arange(matrix.shape[0], dtype=np.int64))
    from_ = "query" if what == "queries" else "corpus"
    check = matrix if matrix.flags.c_contiguous else np.ascontiguousarray(matrix)
    finite = np.isfinite(check).all(axis=1)
    if not finite.all():
        raise InvalidValueError(
            f"the {what} matrix has a NaN or infinite value in row {int(np.argmin(finite))} "
            f"({from_} id); embeddings must be finite: fix or drop that row"
        )
    del embedding
    return Block(ids, check)


def _check_schema(schema: pl.Schema, id_column: str, embedding: str, what: str) -> None:
    require_columns(
        schema,
        (id_column, embedding),
        what,
        f"name the columns with {'query_id' if what == 'queries' else 'doc_id'}= and embedding=",
    )
    id_kind(schema, id_column, what)
    embedding_dtype(schema, embedding, what)


def _check_ids(ids: pl.Series, column: str, what: str) -> None:
    if ids.null_count():
        raise InvalidValueError(
            f"column {column!r} of the {what} has {ids.null_count()} null value(s); every "
            f"row needs an id: drop them, e.g. .drop_nulls({column!r})"
        )
    duplicated = ids.filter(ids.is_duplicated())
    if len(duplicated):
        raise DuplicateError(
            f"column {column!r} of the {what}: id {duplicated[0]!r} appears more than once; "
            f"each id may appear once: keep one row per id, e.g. .unique({column!r})"
        )


def _corpus_blocks(
    corpus: Table | PathSource, doc_id: str, embedding: str, block_size: int, dtype: FloatType
) -> Iterator[Block | pl.DataType]:
    """The corpus' id dtype (once its schema is read), then its blocks."""
    if is_path(corpus) and is_remote(corpus):  # type: ignore[arg-type]
        corpus = pl.scan_parquet(corpus)  # type: ignore[arg-type]
    elif is_path(corpus):  # local Parquet files, read with pyarrow
        files = corpus_files(corpus, doc_id, embedding)  # type: ignore[arg-type]
        _check_schema(files.schema, doc_id, embedding, "corpus")
        ids = files.ids(doc_id)
        _check_corpus_ids(ids.to_frame().lazy(), doc_id)
        yield files.schema[doc_id]
        yield from parquet_blocks(files, ids, embedding, block_size, dtype)
        return
    if isinstance(corpus, np.ndarray):
        whole = _matrix_block(corpus, "corpus", embedding)
        yield pl.Int64()
        for start in range(0, whole.vectors.shape[0], block_size):
            stop = start + block_size
            vectors = cast_checked(
                whole.vectors[start:stop], dtype, "the corpus matrix", lambda at: f"row {at}"
            )
            yield Block(whole.ids[start:stop], vectors)
        return
    frame = as_polars(corpus, "corpus")
    if not isinstance(frame, pl.DataFrame | pl.LazyFrame):  # pragma: no cover
        raise ColumnTypeError(f"corpus must be a table, got {type_name(corpus)}")
    lazy = frame.lazy()
    schema = lazy.collect_schema()
    _check_schema(schema, doc_id, embedding, "corpus")
    yield schema[doc_id]
    ids_only = lazy.select(doc_id)
    _check_corpus_ids(ids_only, doc_id)
    columns = lazy.select(doc_id, embedding)
    if isinstance(frame, pl.DataFrame):
        pieces: Iterator[pl.DataFrame] = frame.select(doc_id, embedding).iter_slices(block_size)
    else:  # one slice per block: a scan of Parquet reads only that block's row groups
        total = columns.select(pl.len()).collect().item()
        pieces = (
            columns.slice(offset, block_size).collect() for offset in range(0, total, block_size)
        )
    for piece in pieces:
        if piece.height:
            yield block_of(piece, doc_id, embedding, "corpus", dtype)
        del piece  # not held while the next block is read


def _reading(blocks: Iterator[Block | pl.DataType]) -> Iterator[Block]:
    """The corpus' ``blocks``, with an error of polars reading a LazyFrame (a damaged
    file that it scans) raised as the library's."""
    while True:
        block = _next(blocks)
        if block is None:
            return
        if isinstance(block, Block):
            yield block


def _reading_first(blocks: Iterator[Block | pl.DataType]) -> pl.DataType:
    """The corpus' id dtype: the first item of :func:`_corpus_blocks`."""
    first = _next(blocks)
    if not isinstance(first, pl.DataType):  # pragma: no cover - always yielded first
        raise IrmError("the corpus' id dtype was not read")
    return first


def _next(blocks: Iterator[Block | pl.DataType]) -> Block | pl.DataType | None:
    try:
        return next(blocks)
    except StopIteration:
        return None
    except IrmError:
        raise
    except (pl.exceptions.PolarsError, OSError) as error:
        raise _unreadable("corpus", error) from error


def _unreadable(what: str, error: Exception) -> FileFormatError:
    """A LazyFrame of ``what`` that polars could not read: its reason, and the fix."""
    reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return FileFormatError(
        f"the {what} could not be read ({type(error).__name__}: {reason}); if it scans "
        "Parquet files, one may be damaged: pass the files' path instead of a LazyFrame "
        "(e.g. irm.knn(queries, 'corpus/*.parquet')) to have the file and column named"
    )


def _check_corpus_ids(ids: pl.LazyFrame, doc_id: str) -> None:
    """Null or duplicate ids of the corpus, read from its id column only (one pass)."""
    counts = (
        ids.group_by(doc_id)
        .agg(pl.len().alias("n"))
        .filter((pl.col("n") > 1) | pl.col(doc_id).is_null())
        .sort(doc_id, nulls_last=False)
        .head(1)
        .collect()
    )
    if counts.height:
        value = counts.get_column(doc_id)[0]
        if value is None:
            raise InvalidValueError(
                f"column {doc_id!r} of the corpus has null value(s); every row needs an id: "
                f"drop them, e.g. .drop_nulls({doc_id!r})"
            )
        raise DuplicateError(
            f"column {doc_id!r} of the corpus: id {value!r} appears more than once; each "
            f"id may appear once: keep one row per id, e.g. .unique({doc_id!r})"
        )


class _Scorer:
    """The scores of the queries against each corpus block, computed where precision
    holds (see the module's *Precision*): cosine from vectors pre-scaled by their largest
    magnitude before their norms (no overflow or underflow in the squares); ``dot`` and
    ``l2`` from vectors scaled by a power of two (exact) where a square or a product could
    overflow or underflow, ``l2`` from vectors centred on the first block's mean (the
    squared-norm expansion then does not cancel), in float64 for a float32 block whose
    rows would still cancel near their ``k``-th distance."""

    def __init__(self, queries: Matrix, metric: str, ids: pl.Series, embedding: str) -> None:
        self.metric = metric
        self.embedding = embedding
        self.dtype: FloatType = np.float32 if queries.dtype == np.float32 else np.float64
        self.raw = queries
        self.info = np.finfo(self.dtype)
        self.dim = queries.shape[1] if queries.ndim == 2 and queries.shape[0] else 1
        self.centred = False  # l2: centred on the queries' centre at the first block
        self.centre: Matrix = np.zeros(self.dim, dtype=self.dtype)
        self.q_exp = _exponent(queries)
        self.queries: Matrix = (
            _normalised(queries, ids, embedding, "queries") if metric == "cosine" else queries
        )
        self.q_sq: Matrix = np.zeros(0, dtype=self.dtype)
        self.c_max = 0.0  # the largest magnitude of the corpus read so far (dot, l2)
        self.lost = False  # dot: a score rounded below the smallest normal lost a bit
        # l2: the bound of the product's squared distances (per row of the last call,
        # in units of 2**(2 * power)), read by refine
        self.slack: npt.NDArray[np.float64] = np.zeros(0)
        self.power = 0
        self.units: Matrix | None = None  # cosine: the queries' unit vectors in float64

    def corpus(self, docs: Matrix, ids: pl.Series, embedding: str) -> _Docs:
        """A corpus block made ready for :meth:`scores`."""
        if self.metric == "cosine":
            return _Docs(_normalised(docs, ids, embedding, "corpus"), 0, docs)
        if self.metric == "dot":
            top = _magnitude(docs)
            self.c_max = max(self.c_max, top)
            return _Docs(docs, _exponent_of(top), docs)
        if not self.centred:  # l2: one centre for every block, from the queries
            self.centred = True
            self.centre = _centre(self.raw)
            with np.errstate(over="ignore", invalid="ignore"):
                self.queries = self.raw - self.centre
            if np.isfinite(self.queries).all():
                pass
            elif self.dtype == np.float32:  # beyond float32: float64 from here
                self.queries = self.raw.astype(np.float64) - self.centre
            else:  # near float64's largest values: not centred
                self.centre = np.zeros_like(self.centre)
                self.queries = self.raw
            self.q_exp = _exponent(self.queries)
            self.q_sq = np.einsum("ij,ij->i", self.queries, self.queries)
        self.c_max = max(self.c_max, _magnitude(docs))
        with np.errstate(over="ignore", invalid="ignore"):
            centred = docs - self.centre
        if self.queries.dtype != self.dtype or (
            self.dtype == np.float32 and not np.isfinite(centred).all()
        ):
            centred = docs.astype(np.float64) - self.centre
        if not np.isfinite(centred).all():  # float64 values beyond the range when centred
            self._out_of_range(np.float64)
        return _Docs(centred, _exponent(centred), docs)

    def scores(
        self, docs: _Docs, start: int, stop: int, floor: npt.NDArray[Any], k: int
    ) -> npt.NDArray[Any]:
        """The scores of queries ``start:stop`` against the block ``docs``."""
        queries = self.queries[start:stop]
        if self.metric == "cosine":
            product: npt.NDArray[Any] = _product(queries, docs.vectors)
            # a cosine is within [-1, 1]: beyond is rounding (a vector and itself gave
            # 1.0000000000000004), clipped before the top k is taken, so that the run
            # ranks as it reports (a clipped tie is broken by id) and neighbour recall
            # reads 1 - score as a distance of at least 0
            np.clip(product, -1, 1, out=product)
            return product
        if self.metric == "dot":
            return self._dot(queries, docs)
        return self._l2(queries, docs, start, stop, floor, k)

    def refine(
        self, scores: npt.NDArray[Any], docs: _Docs, start: int, floor: npt.NDArray[Any], k: int
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.intp]]:
        """The candidates of each row of ``scores`` (queries ``start:``) for the top ``k``,
        their scores recomputed from the vectors (:meth:`_exact`): packed to the left
        (``-inf`` beyond a row's candidates), with their columns.

        ``scores`` (the matrix product) are within a slack of the recomputed ones
        (:meth:`_lower`); every document whose recomputed score could reach both the
        running ``k``-th (``floor``, recomputed) and the block's ``k``-th is a
        candidate, so that the top ``k`` of the candidates' recomputed scores is the top
        ``k`` of all. The block's ``k``-th is first bounded by that of its first
        columns (one comparison drops most scores), then taken among those left.
        """
        n, width = scores.shape
        head = min(width, max(8 * k, 2048))
        lower = self._lower(_kth_largest(scores[:, :head], k), floor)
        mask = (scores >= _at_most(lower, scores.dtype)[:, None]) & (scores > -np.inf)
        rows, cols = _sparse_nonzero(mask)
        fast = scores[rows, cols]
        if len(rows):  # the block's own k-th among the candidates: fewer to recompute
            packed = _packed(rows, fast, n, -np.inf)
            lower = self._lower(_kth_largest(packed, k).astype(np.float64), floor)
            keep = fast >= _at_most(lower, scores.dtype)[rows]
            rows, cols = rows[keep], cols[keep]
        exact = self._exact(rows + start, cols, docs)
        return _packed(rows, exact, n, -np.inf), _packed(rows, cols, n, 0)

    def _lower(self, kth: npt.NDArray[Any], floor: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
        """The lowest product score of each row whose recomputed score could be among
        its top ``k``, given the recomputed running ``k``-th (``floor``) and the
        product's ``k``-th of the block (``kth``, or a bound of it from below)."""
        kth = kth.astype(np.float64)
        if self.metric == "cosine":  # the products are within slack of 1 - |u - v|² / 2
            slack = (self.dim + 8) * (2 * float(self.info.eps) + 4 * _EPS64)
            lower: npt.NDArray[np.float64] = np.maximum(floor - slack, kth - 2 * slack)
            return lower
        # l2, in squared distances (units of 2**(2 * power)): a recomputed distance e and
        # the product's f satisfy |e² - f²| <= slack, so a document whose recomputed
        # distance is within min(running k-th, block's k-th) has f² below
        # min(floor², kth² + slack) + slack
        slack, power = self.slack, self.power
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            near = np.ldexp(-floor, -power) ** 2
            block = np.ldexp(-kth, -power) ** 2 + slack
            reach = np.sqrt(np.minimum(near, block) + slack)
            lower = -np.ldexp(reach, power)
        return np.where(np.isnan(lower), -np.inf, lower)

    def _units(self) -> Matrix:
        """The queries as given divided by their lengths in float64 (:func:`_unit`),
        computed once; a document is divided by the same function, so that a document
        equal to a query gives the same vector, bit for bit."""
        if self.units is None:
            self.units = _unit(self.raw.astype(np.float64))
        return self.units

    def _exact(self, rows: npt.NDArray[Any], cols: npt.NDArray[Any], docs: _Docs) -> Matrix:
        """The scores of the pairs (query ``rows``, document ``cols`` of ``docs``)
        computed directly from the vectors as given, in float64 (a float32 vector
        widened exactly), rounded once to the output dtype: ``l2``, ``-sqrt(sum((q -
        c)²))`` (0 for identical vectors, exactly); ``cosine``, ``1 - |u - v|² / 2`` for
        the unit vectors ``u``, ``v`` (1 for identical vectors, exactly). The pairs are
        taken in chunks of about :data:`CELLS` values."""
        out = np.empty(len(rows), dtype=np.float64)
        step = max(1, CELLS // (4 * self.dim))
        for first in range(0, len(rows), step):
            at = slice(first, first + step)
            c = docs.raw[cols[at]].astype(np.float64)
            if self.metric == "cosine":
                diff = self._units()[rows[at]] - _unit(c)
                score = 1 - np.einsum("ij,ij->i", diff, diff) / 2
                np.clip(score, -1, 1, out=score)
            else:
                with np.errstate(over="ignore", invalid="ignore"):
                    diff = self.raw[rows[at]] - c
                score = -_length(diff)
            out[at] = score
        if self.dtype == np.float32:  # rounded once to float32; beyond its range kept
            with np.errstate(over="ignore"):
                rounded = out.astype(np.float32).astype(np.float64)
            out = np.where(np.isfinite(rounded), rounded, out)
        return out

    def _risky(self, exponent: int, wide: bool) -> bool:
        """Whether values of magnitude below ``2**exponent`` could overflow or underflow
        the computation dtype (float64 when ``wide``)."""
        info = np.finfo(np.float64) if wide else self.info
        top = exponent + 2 + int(np.ceil(np.log2(self.dim)))
        return bool(top >= info.maxexp or exponent < info.minexp // 2 + info.nmant)

    def _dot(self, queries: Matrix, docs: _Docs) -> npt.NDArray[Any]:
        exponent = self.q_exp + docs.exp
        if not self._risky(exponent, False):
            product: npt.NDArray[Any] = _product(queries, docs.vectors)
            return product
        # scaled by powers of two (exact), the product back in float64
        scaled = _product(np.ldexp(queries, -self.q_exp), np.ldexp(docs.vectors, -docs.exp))
        with np.errstate(over="ignore", under="ignore"):
            wide: npt.NDArray[Any] = np.ldexp(scaled.astype(np.float64), exponent)
        self._refuse_inf(wide, docs)
        self._round_below_normal(wide, scaled, exponent)
        return wide

    def _round_below_normal(
        self, wide: npt.NDArray[Any], scaled: npt.NDArray[Any], exponent: int
    ) -> None:
        """Round the scores of ``wide`` (``scaled × 2**exponent``) below the output
        dtype's smallest normal number as the run returns them (float32 queries: to
        float32), so that they are ranked as returned; note whether a rounding lost a
        bit (:meth:`check_range` refuses that where it exceeds the stated precision).
        They are found on ``scaled`` (half the bytes in float32), before any rounding."""
        power = int(self.info.minexp) - exponent  # |scaled| below 2**power: below normal
        if power >= int(np.finfo(scaled.dtype).maxexp):
            small = np.ones(scaled.shape, dtype=bool)  # every product
        else:
            limit = scaled.dtype.type(2.0**power)
            small = (scaled < limit) & (scaled > -limit)
        if not small.any():
            return
        values = wide[small]
        with np.errstate(under="ignore"):
            if self.dtype == np.float32:  # the float64 value is exact: round it
                rounded = values.astype(np.float32).astype(np.float64)
                wide[small] = rounded
                lost = rounded != values
            else:  # ldexp rounded it: exact if it scales back to the product
                lost = np.ldexp(values, -exponent) != scaled[small]
        self.lost = self.lost or bool(lost.any())

    def _l2(
        self,
        queries: Matrix,
        docs: _Docs,
        start: int,
        stop: int,
        floor: npt.NDArray[Any],
        k: int,
    ) -> npt.NDArray[Any]:
        # the larger power of two of the two sides', a side of zero vectors (one query,
        # centred on itself) left out: its 0 is no magnitude (it hid 1e-200 vectors'
        # underflowing squares)
        sides = ((self.q_exp, queries), (docs.exp, docs.vectors))
        exponents = [exp for exp, vectors in sides if _magnitude(vectors) > 0]
        exponent = max(exponents) if exponents else 0
        wide = queries.dtype == np.float64 and self.dtype == np.float32
        if self._risky(2 * exponent, wide):
            scaled = self._l2_scaled(queries, docs.vectors, exponent)
            self._refuse_inf(scaled, docs)
            return scaled
        d_sq = np.einsum("ij,ij->i", docs.vectors, docs.vectors)
        self._set_slack(self.q_sq[start:stop], d_sq, 0, np.result_type(queries, docs.vectors))
        squared = self.q_sq[start:stop, None] - 2 * _product(queries, docs.vectors) + d_sq[None, :]
        if squared.dtype == np.float32 and squared.size:
            # rows whose squared norms dwarf the k-th squared distance would cancel in
            # float32 near it: those rows in float64
            reach = (np.sqrt(self.q_sq[start:stop]) + np.sqrt(d_sq.max())).astype(np.float64)
            reference = -floor  # the running k-th distance; else the block's
            unknown = np.flatnonzero(~np.isfinite(reference))
            if unknown.size:  # its nearest bounds it from below: the k-th only if needed
                rows = squared if unknown.size == len(squared) else squared[unknown]
                nearest = np.maximum(rows.min(axis=1), 0).astype(np.float64)
                reference[unknown] = np.sqrt(nearest)
                close = unknown[reach[unknown] ** 2 > _CANCEL * nearest]
                if close.size:
                    kth = np.maximum(-_kth_largest(-squared[close], k), 0)
                    reference[close] = np.where(np.isfinite(kth), np.sqrt(kth), np.inf)
            cancel = np.flatnonzero(reach**2 > _CANCEL * reference**2)
            if cancel.size:
                squared = squared.astype(np.float64)
                self.slack[cancel] *= _EPS64 / float(self.info.eps)
                squared[cancel] = _squared_l2(
                    self.raw[start:stop][cancel].astype(np.float64) - self.centre,
                    docs.raw.astype(np.float64) - self.centre,
                )
        np.maximum(squared, 0, out=squared)
        distance: npt.NDArray[Any] = -np.sqrt(squared)
        return distance

    def _set_slack(
        self, q_sq: npt.NDArray[Any], d_sq: npt.NDArray[Any], power: int, dtype: np.dtype[Any]
    ) -> None:
        """``l2``: the bound on the difference of the squared distances of the product
        and of :meth:`_exact`, per query row, in units of ``2**(2 * power)``: the
        expansion computed in ``dtype`` rounds by at most about ``(d + 4) × epsilon ×
        reach²`` (``reach = |q| + max |c|``, centred), taken twice."""
        with np.errstate(over="ignore"):
            top = np.sqrt(float(d_sq.max())) if d_sq.size else 0.0
            reach = np.sqrt(q_sq.astype(np.float64)) + top
            eps = float(np.finfo(dtype).eps)
            self.slack = 2 * (self.dim + 8) * eps * reach**2
        self.power = power

    def _l2_scaled(self, queries: Matrix, docs: Matrix, exponent: int) -> npt.NDArray[Any]:
        q = np.ldexp(queries, -exponent)
        d = np.ldexp(docs, -exponent)
        self._set_slack(
            np.einsum("ij,ij->i", q, q),
            np.einsum("ij,ij->i", d, d),
            exponent,
            np.result_type(q, d),
        )
        squared = _squared_l2(q, d)
        with np.errstate(over="ignore"):
            distance: npt.NDArray[Any] = -np.ldexp(np.sqrt(squared.astype(np.float64)), exponent)
        return distance

    def _refuse_inf(self, scores: npt.NDArray[Any], docs: _Docs) -> None:
        del docs
        if np.isinf(scores).any():
            self._out_of_range(np.float64)

    def _out_of_range(self, dtype: FloatType) -> None:
        q_max, corpus_max = _magnitude(self.raw), self.c_max
        name = "float32" if dtype == np.float32 else "float64"
        fix = (
            "cast both embedding columns to Float64 (the run's scores are then Float64)"
            if dtype == np.float32
            else "scale both sides' embeddings down by one factor (dot scores scale by its "
            "square, l2 distances by it)"
        )
        raise InvalidValueError(
            f"the {self.metric} scores of the queries (largest |value| {q_max:.3g} in "
            f"column {self.embedding!r}) against the corpus (largest {corpus_max:.3g}) "
            f"exceed {name}'s range ({np.finfo(dtype).max:.3g}) and cannot be returned: {fix}"
        )

    def check_range(self, best: npt.NDArray[Any]) -> None:
        """Refuse kept scores beyond the output dtype (float32 queries: Float32 scores),
        and ``dot`` scores rounded below the smallest normal number beyond the stated
        precision (:meth:`_below_normal`)."""
        finite = best[np.isfinite(best)]
        if self.dtype == np.float32 and finite.size and np.abs(finite).max() > self.info.max:
            self._out_of_range(np.float32)
        if self.lost and self._below_normal():
            self._underflow()

    def _below_normal(self) -> bool:
        """Whether ``max|q| × max|c|`` is below the output dtype's smallest normal
        number: the rounding of a product to it (half its smallest subnormal) then
        exceeds the stated precision (epsilon × max|q| × max|c|), so that distinct
        scores can round to one value, or to 0, and rank in a wrong order. Otherwise a
        product rounded there is within that precision of 0, as any cancellation."""
        q_max, c_max = _magnitude(self.raw), self.c_max
        if not q_max or not c_max:  # every product is 0, exactly
            return False
        (q_mant, q_exp), (c_mant, c_exp) = math.frexp(q_max), math.frexp(c_max)
        return math.log2(q_mant * c_mant) + q_exp + c_exp < int(self.info.minexp)

    def _underflow(self) -> None:
        q_max, corpus_max = _magnitude(self.raw), self.c_max
        if self.dtype == np.float32:  # float32 products are normal in float64
            fix = "cast both embedding columns to Float64 (the run's scores are then Float64)"
        else:  # a power of two that brings max|q| × max|c| near 1
            power = -(_exponent_of(q_max) + _exponent_of(corpus_max)) // 2
            fix = (
                "scale both sides' embeddings up by one power of two, e.g. multiply both "
                f"by 2.0**{power} (the dot scores scale by its square, exactly; the "
                "neighbours stay the same)"
            )
        name = "float32" if self.dtype == np.float32 else "float64"
        raise InvalidValueError(
            f"the dot scores of the queries (largest |value| {q_max:.3g} in column "
            f"{self.embedding!r}) against the corpus (largest {corpus_max:.3g}) fall below "
            f"{name}'s smallest normal number ({self.info.smallest_normal:.3g}), where "
            "distinct scores round to one value (or to 0) and would be ranked in a wrong "
            f"order, and cannot be returned: {fix}"
        )


@dataclass(frozen=True)
class _Docs:
    """A corpus block as :class:`_Scorer` scores it: the vectors it multiplies, their
    power-of-two magnitude and the block as read."""

    vectors: Matrix
    exp: int
    raw: Matrix


#: ``l2`` in float32 goes to float64 for a row whose (|q| + max |c|)² (centred) is more
#: than this times its k-th squared distance: float32's rounding of the expansion (about
#: 4 × 2**-24 of that reach) stays below 2**-14 (6e-5) of the k-th squared distance.
_CANCEL = 256.0


#: float64's machine epsilon.
_EPS64 = float(np.finfo(np.float64).eps)


def _length(vectors: Matrix) -> npt.NDArray[np.float64]:
    """Each row's Euclidean length in float64 (0 for a zero row, exactly); a row whose
    squares could overflow or underflow is scaled by a power of two first (exact)."""
    length: npt.NDArray[np.float64] = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
    redo = np.flatnonzero(~(length >= 2.0**-450) | ~np.isfinite(length))
    if redo.size:
        rows = vectors[redo]
        power = np.frexp(np.abs(rows).max(axis=1))[1]
        scaled = np.ldexp(rows, -power[:, None])
        length[redo] = np.ldexp(np.sqrt(np.einsum("ij,ij->i", scaled, scaled)), power)
    return length


def _unit(vectors: Matrix) -> Matrix:
    """Each row divided by its length (float64; no row is zero under ``cosine``)."""
    top = np.abs(vectors).max(axis=1)
    scaled = np.ldexp(vectors, -np.frexp(top)[1][:, None])
    unit: Matrix = scaled / np.sqrt(np.einsum("ij,ij->i", scaled, scaled))[:, None]
    return unit


def _centre(queries: Matrix) -> Matrix:
    """The queries' mean rounded to a sixteenth of their largest spread (a power of two):
    centred on it, ``l2``'s expansion ``|q|² - 2 q·c + |c|²`` does not cancel for a
    common offset, and vectors of small integers stay exact. One query: itself."""
    wide = queries.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):  # near float64's largest values
        mean = wide.mean(axis=0)
        spread = float(wide.std(axis=0).max())
    if spread > 0 and np.isfinite(spread) and np.isfinite(mean).all():
        step = 2.0 ** (np.floor(np.log2(spread)) - 4)
        mean = np.round(mean / step) * step
    else:
        mean = wide[0]
    return np.asarray(mean, dtype=queries.dtype)


def _magnitude(vectors: Matrix) -> float:
    """The largest magnitude of ``vectors`` (0 when empty)."""
    return float(np.abs(vectors).max()) if vectors.size else 0.0


def _exponent(vectors: Matrix) -> int:
    """The power of two above the largest magnitude of ``vectors`` (0 when empty or 0)."""
    return _exponent_of(_magnitude(vectors))


def _exponent_of(top: float) -> int:
    """The power of two above ``top`` (0 for 0)."""
    return int(np.frexp(top)[1]) if top > 0 else 0


class _Tiles:
    """The corpus' blocks re-cut into whole tiles of :data:`TILE` rows: :meth:`add`
    returns the blocks of whole tiles it can make (the rows held from before with the
    new block's first ones, then the rest of the new block's whole tiles, a view of
    it), :meth:`rest` the rows left at the end. A block of a multiple of ``TILE`` rows
    (the default block_size) passes through as it is; the fewer than ``TILE`` rows
    beyond a block's last whole tile are copied and held, so no more than one block
    and one tile are held at a time."""

    def __init__(self) -> None:
        self.held: list[Block] = []
        self.count = 0

    def add(self, block: Block) -> list[Block]:
        size, start, ready = len(block.ids), 0, []
        if self.count:  # the held rows completed by the block's first ones
            need = TILE - self.count
            if size < need:
                self.held.append(_rows(block, 0, size, copy=True))
                self.count += size
                return []
            ready.append(_joined([*self.held, _rows(block, 0, need)]))
            self.held, self.count, start = [], 0, need
        whole = (size - start) // TILE * TILE
        if whole:
            ready.append(block if whole == size else _rows(block, start, start + whole))
        if start + whole < size:
            self.held = [_rows(block, start + whole, size, copy=True)]
            self.count = size - start - whole
        return ready

    def rest(self) -> Block | None:
        return _joined(self.held) if self.count else None


def _joined(blocks: list[Block]) -> Block:
    if len(blocks) == 1:
        return blocks[0]
    return Block(pl.concat([b.ids for b in blocks]), np.concatenate([b.vectors for b in blocks]))


def _rows(block: Block, start: int, stop: int, *, copy: bool = False) -> Block:
    vectors = block.vectors[start:stop]
    return Block(block.ids.slice(start, stop - start), vectors.copy() if copy else vectors)


#: The documents of one product: :func:`_product` multiplies the queries by the corpus in
#: tiles of this many documents.
TILE = 4096


#: The queries of one product: every product :func:`_product` makes has ``QTILE`` rows
#: (the last ones zero-padded), as it has :data:`TILE` columns.
QTILE = 256


def _product(queries: Matrix, docs: Matrix) -> npt.NDArray[Any]:
    """``queries @ docs.T``, each score with the same bits however the corpus and the
    queries were split into blocks.

    BLAS picks its kernels, and with them the order of each score's sums, by the shape
    of the product, and on some processors by a row's place in it: a block of 7
    documents, one query (the matrix-vector kernel), or 9 queries against 2 (OpenBLAS'
    AVX-512 kernels, threaded) changed scores in their last bit, and OpenBLAS' float32
    kernel sums the rows of a 16-row group in two orders. Here every product has one
    shape, ``QTILE`` queries by ``TILE`` documents (the last tiles zero-padded), and is
    made in float64, whose kernel gives a row the same bits wherever it is in the tile;
    float32 vectors' scores are that product rounded once to float32 (each product of
    two float32 numbers is exact in float64). The price: a call of few queries computes
    a whole tile of ``QTILE`` (one query costs what 256 do), and float32 vectors are
    multiplied at float64's speed.

    >>> rng = np.random.default_rng(0)
    >>> q, d = rng.standard_normal((3, 96), np.float32), rng.standard_normal((70, 96), np.float32)
    >>> whole = _product(q, d)
    >>> bool((np.hstack([_product(q, d[:7]), _product(q, d[7:])]) == whole).all())
    True
    >>> bool((np.vstack([_product(q[:1], d), _product(q[1:], d)]) == whole).all())
    True
    """
    rows, count = queries.shape[0], docs.shape[0]
    dtype = np.result_type(queries.dtype, docs.dtype)
    out = np.empty((rows, count), dtype=dtype)
    if not rows or not count:
        return out
    width = docs.shape[1]
    # the queries once in float64, zero-padded to whole tiles of QTILE rows (views below)
    padded = np.zeros((-(-rows // QTILE) * QTILE, width), dtype=np.float64)
    padded[:rows] = queries
    tile = np.zeros((TILE, width), dtype=np.float64)
    product = np.empty((QTILE, TILE), dtype=np.float64)
    for first in range(0, count, TILE):
        size = min(TILE, count - first)
        tile[:size] = docs[first : first + size]
        tile[size:] = 0.0
        for top in range(0, rows, QTILE):
            height = min(QTILE, rows - top)
            np.matmul(padded[top : top + QTILE], tile.T, out=product)
            out[top : top + height, first : first + size] = product[:height, :size]
    return out


def _squared_l2(queries: Matrix, docs: Matrix) -> npt.NDArray[Any]:
    q_sq = np.einsum("ij,ij->i", queries, queries)[:, None]
    d_sq = np.einsum("ij,ij->i", docs, docs)[None, :]
    squared: npt.NDArray[Any] = q_sq - 2 * _product(queries, docs) + d_sq
    np.maximum(squared, 0, out=squared)
    return squared


def _normalised(vectors: Matrix, ids: pl.Series, embedding: str, what: str) -> Matrix:
    """``vectors`` divided by their norms, each first divided by its largest magnitude
    (the squares then neither overflow nor underflow); a zero vector is refused."""
    if not vectors.size:
        return vectors
    top = np.abs(vectors).max(axis=1)
    zero = top == 0
    if zero.any():
        at = ids[int(np.argmax(zero))]
        raise InvalidValueError(
            f"column {embedding!r} of the {what} holds a zero vector (id {at!r}), which has "
            "no direction for cosine similarity; drop it, or use metric='dot' or 'l2'"
        )
    scaled: Matrix = vectors / top[:, None]
    # the squared norms by einsum: no temporary matrix (np.linalg.norm makes one)
    scaled /= np.sqrt(np.einsum("ij,ij->i", scaled, scaled))[:, None]
    return scaled


class _LazyRank:
    """Each column's place in the text order of a block's ids, computed on first use
    (only a tie at the ``k``-th score needs it)."""

    def __init__(self, ids: npt.NDArray[Any]) -> None:
        self.ids = ids
        self.rank: npt.NDArray[np.int64] | None = None

    def __call__(self) -> npt.NDArray[np.int64]:
        if self.rank is None:
            self.rank = _text_rank(self.ids)
        return self.rank


def _ranks_in(
    rank: _LazyRank, columns: npt.NDArray[np.intp]
) -> Callable[[npt.NDArray[np.intp]], npt.NDArray[Any]]:
    """The text places of the block's ``columns`` of the rows asked for."""
    return lambda rows: rank()[columns[rows]]


def _ranks_of(ids: npt.NDArray[Any]) -> Callable[[npt.NDArray[np.intp]], npt.NDArray[Any]]:
    """The text places of the candidates ``ids`` of the rows asked for."""
    return lambda rows: _text_rank(ids[rows])


def _text_rank(ids: npt.NDArray[Any]) -> npt.NDArray[np.int64]:
    """Each id's place among ``ids`` compared as text (as ``evaluate`` breaks ties), in
    the shape of ``ids``; equal ids share a place."""
    flat = pl.Series(ids.reshape(-1))
    text = flat if flat.dtype == pl.String else flat.cast(pl.String)
    rank: npt.NDArray[np.int64] = text.rank("dense").to_numpy().astype(np.int64)
    return rank.reshape(ids.shape)


def _check_self_ids(
    queries: pl.DataType, corpus: pl.DataType, query_id: str, doc_id: str, *, matrix: bool
) -> pl.DataType:
    """exclude_self's ids: of one kind on both sides (integers of any width, or text);
    the dtype both are compared in. Refused otherwise, with the cast of the integer side
    to text (an integer id and a text one are never equal: nothing would be left out);
    queries given as a numpy matrix (``matrix``: ids 0..n-1, no column to cast) are
    given as a table with the corpus' ids instead."""
    if kind_of(queries) is None or kind_of(queries) != kind_of(corpus):
        if matrix:
            raise ColumnTypeError(
                f"exclude_self=True compares query ids with document ids, but the queries "
                f"are a numpy matrix, whose ids are its rows 0, 1, ... ({queries}), and the "
                f"corpus' ids are {corpus}: pass the queries as a table with a {query_id!r} "
                "column (the corpus' ids of those rows) beside their embeddings"
            )
        cast = (
            f"pl.col({doc_id!r}).cast(pl.String) on the corpus"
            if kind_of(corpus) == "integer"
            else f"pl.col({query_id!r}).cast(pl.String) on the queries"
        )
        raise ColumnTypeError(
            f"exclude_self=True compares query ids with document ids, but they have dtypes "
            f"{queries} and {corpus}: cast one of them, e.g. {cast}"
        )
    return common_id_dtype([queries, corpus])


def _mask_self(
    scores: Matrix, ids: pl.Series, self_pos: pl.DataFrame, start: int, stop: int, doc_id: str
) -> int:
    """Set the score of each query's own id to -inf (never kept), and return how many
    were set; the ids' dtypes are checked once, before any block is read
    (:func:`_check_self_ids`)."""
    matches = (
        pl.DataFrame({doc_id: ids.cast(self_pos.schema[doc_id]), "col": np.arange(len(ids))})
        .join(self_pos, on=doc_id, how="inner")
        .filter(pl.col(_QPOS).is_between(start, stop, closed="left"))
    )
    if matches.height:
        rows = matches.get_column(_QPOS).to_numpy() - start
        scores[rows, matches.get_column("col").to_numpy()] = -np.inf
    return matches.height


def _kth_largest(scores: npt.NDArray[Any], k: int) -> npt.NDArray[Any]:
    """Each row's ``k``-th largest score (``-inf`` for a row with fewer columns)."""
    n, width = scores.shape
    if width < k:
        return np.full(n, -np.inf, dtype=scores.dtype)
    kth: npt.NDArray[Any] = np.partition(scores, width - k, axis=1)[:, width - k]
    return kth


def _block_top(
    scores: npt.NDArray[Any], k: int, floor: npt.NDArray[Any], rank: _LazyRank
) -> tuple[npt.NDArray[Any], npt.NDArray[np.intp]]:
    """The scores and column indices of each row's top ``k`` (ties at the ``k``-th
    broken by id as text, descending: ``rank``) among the scores ``>= floor``; padding
    entries score ``-inf``.

    Most scores of a block are below both the running ``k``-th best (``floor``) and the
    ``k``-th best of the block's first columns, which bounds the block's own ``k``-th
    best from below: one comparison drops them, and only the few left are partitioned.
    """
    n, width = scores.shape
    floor = _at_most(floor, scores.dtype)
    if width > k:
        head = min(width, max(8 * k, 2048))
        if head < width:
            floor = np.maximum(floor, _kth_largest(scores[:, :head], k))
        mask = scores >= floor[:, None]
        counts = mask.sum(axis=1)
        most = int(counts.max()) if n else 0
        if most * 4 <= width:
            rows, cols = _sparse_nonzero(mask)
            starts = np.cumsum(counts) - counts
            place = np.arange(len(rows)) - starts[rows]
            packed = np.full((n, most), -np.inf, dtype=scores.dtype)
            packed[rows, place] = scores[rows, cols]
            columns = np.zeros((n, most), dtype=np.intp)
            columns[rows, place] = cols
            chosen = _top_k(packed, k, lambda tied: rank()[columns[tied]])
            return (
                np.take_along_axis(packed, chosen, axis=1),
                np.take_along_axis(columns, chosen, axis=1),
            )
    top = _top_k(scores, k, lambda tied: np.broadcast_to(rank(), (len(tied), width)))
    return np.take_along_axis(scores, top, axis=1), top


def _packed(rows: npt.NDArray[Any], values: npt.NDArray[Any], n: int, fill: object) -> Any:
    """``values`` of the sorted ``rows`` packed to the left of an ``n``-row matrix, as
    wide as the most values of a row (``fill`` beyond a row's values)."""
    counts = np.bincount(rows, minlength=n)
    most = int(counts.max()) if n and len(rows) else 0
    place = np.arange(len(rows)) - (np.cumsum(counts) - counts)[rows]
    packed = np.full((n, most), fill, dtype=values.dtype)
    packed[rows, place] = values
    return packed


def _at_most(floor: npt.NDArray[Any], dtype: np.dtype[Any]) -> npt.NDArray[Any]:
    """``floor`` in ``dtype``, rounded down (a score equal to the float64 floor passes)."""
    if floor.dtype == dtype:
        return floor
    low = floor.astype(dtype)
    return np.where(low > floor, np.nextafter(low, dtype.type(-np.inf)), low)


def _sparse_nonzero(
    mask: npt.NDArray[np.bool_],
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """``np.nonzero`` of a sparse C-contiguous 2-d mask, in row-major order: the mask is
    read 8 bytes at a time and only the nonzero words are looked into."""
    width = mask.shape[1]
    flat = mask.reshape(-1)
    if flat.size % 8:
        found = np.flatnonzero(flat)
    else:
        words = np.flatnonzero(flat.view(np.uint64))
        candidates = (words[:, None] * 8 + np.arange(8)).reshape(-1)
        found = candidates[flat[candidates]]
    rows, cols = np.divmod(found, width)
    return rows, cols


def _top_k(
    scores: npt.NDArray[Any],
    k: int,
    ranks_of: Callable[[npt.NDArray[np.intp]], npt.NDArray[Any]],
) -> npt.NDArray[np.intp]:
    """Column indices of each row's ``k`` best scores (all columns when there are no more
    than ``k``), exactly ``k`` whatever the ties: among the scores tied with the ``k``-th,
    those whose id is greater as text (``ranks_of(rows)``: the text places of those rows'
    columns) are kept, as :func:`~polars_irmetrics.evaluate` ranks ties."""
    n, width = scores.shape
    if width <= k:
        every: npt.NDArray[np.intp] = np.broadcast_to(np.arange(width), (n, width)).copy()
        return every
    # ascending partition: no negated copy; the last k columns hold the k largest
    part = np.argpartition(scores, width - k, axis=1)
    kth = np.take_along_axis(scores, part[:, width - k : width - k + 1], axis=1)
    top: npt.NDArray[np.intp] = part[:, width - k :]
    tied = np.flatnonzero((scores >= kth).sum(axis=1) > k)
    if tied.size:  # more than k at or above the k-th: the tied ones by id as text
        sub, at = scores[tied], kth[tied]
        key = np.where(sub > at, np.iinfo(np.int64).max, np.where(sub == at, ranks_of(tied), -1))
        top[tied] = np.argpartition(key, width - k, axis=1)[:, width - k :]
    return top


def _hstack_rows(
    first: npt.NDArray[Any], parts: list[npt.NDArray[Any]], fill: object
) -> npt.NDArray[Any]:
    """``first`` beside the row blocks ``parts`` stacked (each ``parts`` block is a slice
    of rows; they may differ in width: narrower ones are padded with ``fill``)."""
    width = max((p.shape[1] for p in parts), default=0)
    padded = [
        p
        if p.shape[1] == width
        else np.concatenate([p, np.full((p.shape[0], width - p.shape[1]), fill, p.dtype)], 1)
        for p in parts
    ]
    new = np.concatenate(padded, axis=0) if padded else np.empty((first.shape[0], 0), first.dtype)
    return np.concatenate([first, new.astype(first.dtype, copy=False)], axis=1)


def _as_run(
    query_ids: pl.Series,
    scores: npt.NDArray[Any],
    doc_ids: npt.NDArray[Any] | None,
    id_dtype: pl.DataType | None,
    k: int,
    names: tuple[str, str],
    dtype: FloatType,
) -> pl.DataFrame:
    query_id, doc_id = names
    n_q, width = scores.shape
    score_type = pl.Float32 if dtype == np.float32 else pl.Float64
    flat: npt.NDArray[Any] | list[object] = (
        [] if doc_ids is None or width == 0 else doc_ids.reshape(-1)
    )
    frame = pl.DataFrame(
        {
            _QPOS: np.repeat(np.arange(n_q, dtype=np.int64), width),
            doc_id: pl.Series(flat, dtype=id_dtype or pl.Int64),
            # + 0.0 turns -0.0 (l2's -sqrt(0) for an identical vector, a dot product's
            # -1 * 0) into 0.0, which prints 0.0 and is the same key in a join or group
            "score": scores.reshape(-1) + 0.0,
        },
        schema_overrides={"score": score_type},
    )
    doc = pl.col(doc_id)
    text = doc if frame.schema[doc_id] == pl.String else doc.cast(pl.String)
    ranked = (
        frame.filter(pl.col("score") > -np.inf)
        .sort([_QPOS, "score", text], descending=[False, True, True])
        .with_columns(pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(_QPOS).alias("rank"))
        .filter(pl.col("rank") <= k)
    )
    queries = query_ids.rename(query_id).to_frame().with_row_index(_QPOS)
    queries = queries.with_columns(pl.col(_QPOS).cast(pl.Int64))
    return ranked.join(queries, on=_QPOS, how="left").select(query_id, doc_id, "score", "rank")
