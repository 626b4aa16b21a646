"""Exact k nearest neighbours of query embeddings in a corpus: a run to evaluate.

:func:`knn` scores every (query, document) pair with numpy (a matrix product per
block of the corpus and per block of queries) and keeps a running top ``k`` per query
(``argpartition``): memory is bounded by the blocks, not by the corpus, so a corpus
larger than memory (Parquet files by path, read with pyarrow by
:mod:`polars_irmetrics.vectors.parquet`, or a LazyFrame) is read in blocks, exactly.

Ties: documents whose score ties with the ``k``-th are all kept while the corpus is
read; at the end every query's candidates are ranked by score descending, then
``doc_id`` descending compared as text, as :func:`~polars_irmetrics.evaluate` ranks a
run by score (trec_eval's rule), and the first ``k`` are returned. The run therefore
evaluates the same whether ranked by its ``rank`` or by its ``score``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import polars as pl

from polars_irmetrics.errors import (
    ColumnTypeError,
    DuplicateError,
    FileFormatError,
    InvalidValueError,
    IrmError,
)
from polars_irmetrics.ground.inputs import as_polars, type_name
from polars_irmetrics.ground.validate import INTERNAL, id_kind, require_columns
from polars_irmetrics.vectors.embeddings import (
    Block,
    FloatType,
    Matrix,
    block_of,
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
        run's score (``-score`` is the distance).
    query_id, doc_id, embedding
        Column names: the ids in ``queries`` and ``corpus`` and the embedding column of
        both (``Array[Float32|Float64, d]``, or ``List`` of one length).
    exclude_self
        ``True``: a document whose id equals the query's id is not returned (the corpus
        searched with its own rows as queries).
    block_size
        Corpus rows read and scored at once; with up to 16M score cells at a time
        (queries are split to fit), memory is about ``block_size × d`` floats plus the
        running top ``k`` of every query, whatever the corpus' size.

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
        ``k`` below 1, an unknown ``metric``, a ``block_size`` below 1; a null id or
        embedding, a NaN or infinite value, embeddings of different dimensions (within
        a table or between the two), a zero vector under ``"cosine"``.
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
    _check_options(k, metric, block_size)
    try:
        query = _queries(queries, query_id, embedding)
    except IrmError:
        raise
    except (pl.exceptions.PolarsError, OSError) as error:
        raise _unreadable("queries", error) from error
    dtype: FloatType = np.float32 if query.vectors.dtype == np.float32 else np.float64
    width = query.vectors.shape[1] if query.vectors.ndim == 2 else 0
    q_vectors = _prepared(query.vectors, metric, query.ids, embedding, "queries")
    n_q = len(query.ids)
    best_s = np.full((n_q, 0), -np.inf, dtype=dtype)
    best_id: npt.NDArray[Any] | None = None
    self_pos = pl.DataFrame({doc_id: query.ids, _QPOS: np.arange(n_q)}) if exclude_self else None
    q_step = max(1, CELLS // block_size)
    id_dtype: pl.DataType | None = None
    for block in _reading(_corpus_blocks(corpus, doc_id, embedding, block_size, dtype)):
        if block.vectors.shape[1] != width and n_q:
            raise InvalidValueError(
                f"column {embedding!r}: the queries' embeddings have {width} dimensions and "
                f"the corpus' {block.vectors.shape[1]}; both must come from one model"
            )
        d_vectors = _prepared(block.vectors, metric, block.ids, embedding, "corpus")
        ids = block.ids.to_numpy()
        if best_id is None:
            best_id = ids[:0].reshape(n_q, 0) if n_q else ids[:0].reshape(0, 0)
        if id_dtype is None:
            id_dtype = block.ids.dtype
        parts_s, parts_i = [], []
        floor = _kth_largest(best_s, k)  # a score below it cannot enter the top k
        for start in range(0, n_q, q_step):
            stop = min(n_q, start + q_step)
            block_scores = _scores(q_vectors[start:stop], d_vectors, metric)
            if self_pos is not None:
                _mask_self(block_scores, block.ids, self_pos, start, stop, doc_id)
            top_s, top = _block_top(block_scores, k, floor[start:stop])
            parts_s.append(top_s)
            parts_i.append(ids[top])
        cand_s = _hstack_rows(best_s, parts_s, -np.inf)
        cand_i = _hstack_rows(best_id, parts_i, ids[:1][0] if len(ids) else 0)
        keep = _top_with_ties(cand_s, k)
        best_s = np.take_along_axis(cand_s, keep, axis=1)
        best_id = np.take_along_axis(cand_i, keep, axis=1)
        del block, d_vectors  # freed before the next block is read: one block at a time
    return _as_run(query.ids, best_s, best_id, id_dtype, k, (query_id, doc_id), dtype)


def _check_options(k: object, metric: object, block_size: object) -> None:
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
) -> Iterator[Block]:
    if is_path(corpus) and is_remote(corpus):  # type: ignore[arg-type]
        corpus = pl.scan_parquet(corpus)  # type: ignore[arg-type]
    elif is_path(corpus):  # local Parquet files, read with pyarrow
        files = corpus_files(corpus, doc_id, embedding)  # type: ignore[arg-type]
        _check_schema(files.schema, doc_id, embedding, "corpus")
        ids = files.ids(doc_id)
        _check_corpus_ids(ids.to_frame().lazy(), doc_id)
        yield from parquet_blocks(files, ids, embedding, block_size, dtype)
        return
    if isinstance(corpus, np.ndarray):
        whole = _matrix_block(corpus, "corpus", embedding)
        for start in range(0, whole.vectors.shape[0], block_size):
            stop = start + block_size
            vectors: Matrix = whole.vectors[start:stop].astype(dtype, copy=False)
            yield Block(whole.ids[start:stop], vectors)
        return
    frame = as_polars(corpus, "corpus")
    if not isinstance(frame, pl.DataFrame | pl.LazyFrame):  # pragma: no cover
        raise ColumnTypeError(f"corpus must be a table, got {type_name(corpus)}")
    lazy = frame.lazy()
    _check_schema(lazy.collect_schema(), doc_id, embedding, "corpus")
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


def _reading(blocks: Iterator[Block]) -> Iterator[Block]:
    """The corpus' ``blocks``, with an error of polars reading a LazyFrame (a damaged
    file that it scans) raised as the library's."""
    while True:
        try:
            block = next(blocks)
        except StopIteration:
            return
        except IrmError:
            raise
        except (pl.exceptions.PolarsError, OSError) as error:
            raise _unreadable("corpus", error) from error
        yield block


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


def _prepared(vectors: Matrix, metric: str, ids: pl.Series, embedding: str, what: str) -> Matrix:
    """``vectors`` divided by their norms under cosine; unchanged otherwise."""
    if metric != "cosine":
        return vectors
    # the squared norms by einsum: no temporary matrix (np.linalg.norm makes one)
    norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))[:, None]
    zero = norms[:, 0] == 0
    if zero.any():
        at = ids[int(np.argmax(zero))]
        raise InvalidValueError(
            f"column {embedding!r} of the {what} holds a zero vector (id {at!r}), which has "
            "no direction for cosine similarity; drop it, or use metric='dot' or 'l2'"
        )
    prepared: Matrix = vectors / norms
    return prepared


def _scores(queries: Matrix, docs: Matrix, metric: str) -> Matrix:
    product: Matrix = queries @ docs.T
    if metric != "l2":
        return product
    q_sq = np.einsum("ij,ij->i", queries, queries)[:, None]
    d_sq = np.einsum("ij,ij->i", docs, docs)[None, :]
    squared = q_sq - 2 * product + d_sq
    np.maximum(squared, 0, out=squared)
    distance: Matrix = -np.sqrt(squared)
    return distance


def _mask_self(
    scores: Matrix, ids: pl.Series, self_pos: pl.DataFrame, start: int, stop: int, doc_id: str
) -> None:
    """Set the score of each query's own id to -inf (never kept)."""
    if ids.dtype != self_pos.schema[doc_id]:
        raise ColumnTypeError(
            f"exclude_self=True compares query ids with document ids, but they have dtypes "
            f"{self_pos.schema[doc_id]} and {ids.dtype}: cast one of them"
        )
    matches = (
        pl.DataFrame({doc_id: ids, "col": np.arange(len(ids))})
        .join(self_pos, on=doc_id, how="inner")
        .filter(pl.col(_QPOS).is_between(start, stop, closed="left"))
    )
    if matches.height:
        rows = matches.get_column(_QPOS).to_numpy() - start
        scores[rows, matches.get_column("col").to_numpy()] = -np.inf


def _kth_largest(scores: npt.NDArray[Any], k: int) -> npt.NDArray[Any]:
    """Each row's ``k``-th largest score (``-inf`` for a row with fewer columns)."""
    n, width = scores.shape
    if width < k:
        return np.full(n, -np.inf, dtype=scores.dtype)
    kth: npt.NDArray[Any] = np.partition(scores, width - k, axis=1)[:, width - k]
    return kth


def _block_top(
    scores: npt.NDArray[Any], k: int, floor: npt.NDArray[Any]
) -> tuple[npt.NDArray[Any], npt.NDArray[np.intp]]:
    """The scores and column indices of each row's top ``k`` (ties with the ``k``-th
    included) among the scores ``>= floor``; padding entries score ``-inf``.

    Most scores of a block are below both the running ``k``-th best (``floor``) and the
    ``k``-th best of the block's first columns, which bounds the block's own ``k``-th
    best from below: one comparison drops them, and only the few left are partitioned.
    """
    n, width = scores.shape
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
            chosen = _top_with_ties(packed, k)
            return (
                np.take_along_axis(packed, chosen, axis=1),
                np.take_along_axis(columns, chosen, axis=1),
            )
    top = _top_with_ties(scores, k)
    return np.take_along_axis(scores, top, axis=1), top


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


def _top_with_ties(scores: npt.NDArray[Any], k: int) -> npt.NDArray[np.intp]:
    """Column indices of each row's ``k`` best scores and of every score tied with the
    ``k``-th (one width for all rows: the widest row's, the others padded with lower
    scores)."""
    n, width = scores.shape
    if width <= k:
        every: npt.NDArray[np.intp] = np.broadcast_to(np.arange(width), (n, width)).copy()
        return every
    # ascending partition: no negated copy; the last k columns hold the k largest
    part = np.argpartition(scores, width - k, axis=1)
    kth = np.take_along_axis(scores, part[:, width - k : width - k + 1], axis=1)
    need = int((scores >= kth).sum(axis=1).max())
    if need > k:  # scores tied with the k-th: keep them all (the ties are broken by id)
        if need >= width:
            need = width
            part = np.broadcast_to(np.arange(width), (n, width))
        else:
            part = np.argpartition(scores, width - need, axis=1)
    top: npt.NDArray[np.intp] = part[:, width - need :]
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
            "score": scores.reshape(-1),
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
