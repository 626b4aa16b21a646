"""Out-of-core evaluation: queries split into hash buckets on disk, one bucket at a time.

``evaluate(..., buckets=N)`` (or ``buckets="auto"``) runs in two passes when the
result is collected:

1. **Split.** One streaming pass writes the run (and the judgments) to Parquet files
   in a temporary folder, partitioned by a hash of ``query_id``, so all rows of a
   query land in the same bucket on both sides.
2. **Evaluate.** Each bucket is read back and evaluated by the ordinary one-plan
   evaluator, one bucket after the other; the per-query results are concatenated.

Peak memory is that of one bucket (plus the split's write buffers), not of the whole
log, and every row is read twice whatever the number of buckets. The per-query
values are those of the one-plan path bit for bit (the same plan runs on each
query's rows), and so are the means, which :func:`~polars_irmetrics.evaluate`
sums afterwards (from the least, in any order of the queries). So is the refusal of
judged queries a ``by`` group did not retrieve (a key of the run alone): each bucket
refuses its own, so the buckets after the first refusal are evaluated too and their
queries refused at once (:class:`~polars_irmetrics.ground.validate.UnplacedParts`),
and so is the data error raised where the input has several faults: each bucket checks
its own queries, and the error raised is the least of theirs (the check one plan runs
first, at its first query: :func:`~polars_irmetrics.ground.validate.ordered`), not the
first bucket's, so that which error a user sees does not depend on ``buckets=``.

The result is still lazy: the passes run inside ``collect()``, behind
:func:`polars.defer`.

Faults: ``spill_dir`` is checked when the plan is built (it must be an existing folder
this process can write), before any work starts. The temporary folder is removed when
the evaluation ends, raises or is interrupted (Ctrl-C); a SIGTERM (a scheduler's stop, a
timeout) removes it too. The ``irm`` command and the eager (DataFrame) entry points
collect inside :func:`spill_guard`, which installs its handler for its duration and
restores the previous one; a plan returned lazily, to be collected later by the
caller, installs :func:`keep_spill_cleanup`'s handler when it is built (from the main
thread), which stays: it removes the spill folders of the runs in progress, then does
what the handler before it did. Python runs the handler in the main thread only, and
the passes run inside polars' ``collect()``: the eager entry points and the ``irm``
command collect :func:`beside_main`, so that a SIGTERM takes effect at once; a caller's
own ``collect()`` in the main thread holds it off until it returns. An eager call of
small DataFrames alone, collected by the in-memory engine, collects in the main thread
(:func:`collect_guarded`), whose Python steps run the handler at once.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import math
import os
import secrets
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import FrameType
from typing import Literal, TypeVar, cast

import polars as pl

from polars_irmetrics.errors import InvalidValueError, MissingFileError
from polars_irmetrics.ground.progress import track
from polars_irmetrics.ground.validate import INTERNAL, UnplacedParts

__all__ = [
    "ROWS_PER_BUCKET",
    "Buckets",
    "beside_main",
    "bucket_count",
    "check_buckets",
    "check_spill_dir",
    "collect_guarded",
    "eager_engine",
    "evaluate_in_buckets",
    "interrupted",
    "keep_spill_cleanup",
    "read_bucket",
    "refuse_spill_without_buckets",
    "removed_on_stop",
    "sink_buckets",
    "spill_guard",
    "spilling",
    "splits_in_buckets",
]

#: ``buckets="auto"`` aims at this many run rows per bucket: evaluating one takes about
#: 0.4 GiB with 100-document rankings and string ids (benchmarks/results_out_of_core.md).
ROWS_PER_BUCKET = 2_000_000

#: ``"auto-memory"`` (the default of evaluate) is resolved before the plan is built
#: (:mod:`polars_irmetrics.ground.auto`); this module sees only the other values.
Buckets = int | Literal["auto", "auto-memory"] | None

_SEED = 0x1E1A
#: Rows per row group of the bucket files: each open bucket buffers one row group
#: while the split runs, so this bounds the split's memory whatever the bucket count.
_ROW_GROUP = 65_536
_BUCKET = f"{INTERNAL}bucket"
#: The bucket files are written once and read once, then removed: uncompressed (still
#: dictionary-encoded) they take about 1.8x the disk of zstd (polars' default), and
#: the bucketed evaluation 20-27 % less CPU time (10M rows, 5 buckets, medians of two
#: runs: 6.2 -> 4.7 CPU s, against 3.4 s in one plan; lz4: 1.3x the disk, 5.1 s).
_SPILL_COMPRESSION: Literal["uncompressed"] = "uncompressed"

#: Evaluates one bucket: (run, judgments or None, by-groups or None) -> per-query plan.
EvaluatePart = Callable[[pl.LazyFrame, pl.LazyFrame | None, pl.LazyFrame | None], pl.LazyFrame]


def check_buckets(buckets: object, modes: tuple[str, ...] = ("auto", "auto-memory")) -> Buckets:
    """``buckets`` as given, or :class:`InvalidValueError` naming the accepted values
    (a positive integer, one of ``modes``, or ``None``)."""
    if buckets is None or buckets in modes:
        return cast(Buckets, buckets)  # None or one of Buckets' literal modes
    if isinstance(buckets, bool) or not isinstance(buckets, int) or buckets < 1:
        named = ", ".join(repr(mode) for mode in modes)
        raise InvalidValueError(
            f"buckets must be a positive integer, {named} or None, got {buckets!r}"
        )
    return buckets


def refuse_spill_without_buckets(
    spill_dir: str | os.PathLike[str] | None, buckets: Buckets, verb: str
) -> None:
    """Refuse a ``spill_dir`` beside ``buckets=None``, where the one plan (which
    ``verb``: "evaluates", "fuses") writes no bucket: an option that would change
    nothing. ``"auto-memory"`` may split, so it takes one.

    >>> refuse_spill_without_buckets("/tmp", "auto-memory", "fuses")
    >>> refuse_spill_without_buckets("/tmp", None, "fuses")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: spill_dir='/tmp' is the folder of the ...
    """
    if spill_dir is not None and buckets is None:
        raise InvalidValueError(
            f"spill_dir={spill_dir!r} is the folder of the out-of-core buckets, and "
            f"buckets=None {verb} in one plan, which writes none: drop spill_dir=, or pass "
            "buckets=N, 'auto' or 'auto-memory'"
        )


def check_spill_dir(spill_dir: str | os.PathLike[str] | None) -> None:
    """Refuse a ``spill_dir`` that is not an existing folder this process can write.

    Examples
    --------
    >>> from polars_irmetrics.ground.buckets import check_spill_dir
    >>> check_spill_dir("/no/such/folder")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MissingFileError: spill_dir='/no/such/folder' does not exist; ...
    """
    if spill_dir is None:
        return
    if not isinstance(spill_dir, str | os.PathLike):
        raise InvalidValueError(
            f"spill_dir={spill_dir!r} is not a folder's path: pass the path of an existing "
            "folder as a str or pathlib.Path, e.g. spill_dir='/tmp', or spill_dir=None for "
            "the system's temporary folder"
        )
    folder = Path(os.fspath(spill_dir))
    shown = f"spill_dir={os.fspath(spill_dir)!r}"
    if not folder.exists():
        raise MissingFileError(
            f"{shown} does not exist; create the folder first, or pass spill_dir=None for "
            "the system's temporary folder"
        )
    if not folder.is_dir():
        raise InvalidValueError(f"{shown} is a file, not a folder; name a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InvalidValueError(
            f"{shown} is not writable by this process; choose a folder you can write"
        )


#: The paths to remove on a stop (SIGTERM, the interpreter's exit): the spill folders of
#: the out-of-core runs in progress and the temporary files of the outputs being written
#: (:func:`removed_on_stop`).
_LIVE: set[str] = set()
_LIVE_LOCK = threading.Lock()
#: The handler :func:`keep_spill_cleanup` installed, while it is in place.
_KEPT: list[Callable[[int, FrameType | None], None]] = []


def _remove_live() -> None:
    with _LIVE_LOCK:
        paths = list(_LIVE)
    for path in paths:
        if os.path.isdir(path) and not os.path.islink(path):
            for _ in range(3):  # a worker thread may still write a file in it meanwhile
                shutil.rmtree(path, ignore_errors=True)
                if not os.path.exists(path):
                    break
        else:
            with contextlib.suppress(OSError):
                os.unlink(path)


# a worker thread (beside_main's is a daemon) still writing when the interpreter exits
atexit.register(_remove_live)


@contextlib.contextmanager
def removed_on_stop(path: str | os.PathLike[str]) -> Iterator[None]:
    """While active, ``path`` (a temporary file or folder) is removed by a SIGTERM under
    :func:`spill_guard` or :func:`keep_spill_cleanup`, and at the interpreter's exit;
    the caller removes it itself on its own errors and Ctrl-C. The temporary file of
    :func:`~polars_irmetrics.io.output.write_atomic` and the spill folders of the
    out-of-core runs are so registered: a stop leaves neither behind.

    Examples
    --------
    >>> import tempfile
    >>> from polars_irmetrics.ground.buckets import removed_on_stop
    >>> with tempfile.NamedTemporaryFile() as handle, removed_on_stop(handle.name):
    ...     pass
    """
    key = os.fspath(path)
    with _LIVE_LOCK:
        _LIVE.add(key)
    try:
        yield
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(key)


Handler = Callable[[int, FrameType | None], None]


def _cleanup_then(previous: Handler | int) -> Handler:
    """A SIGTERM handler that removes the live spill folders and temporary output files
    (:func:`removed_on_stop`), puts ``previous`` back and does what it did (``SIG_DFL``:
    the process ends, killed by SIGTERM)."""

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        _remove_live()
        _KEPT.clear()
        signal.signal(signal.SIGTERM, previous)
        if callable(previous):
            previous(signum, frame)
        else:  # SIG_DFL: end as the signal would have ended the process
            os.kill(os.getpid(), signal.SIGTERM)

    return on_sigterm


@contextlib.contextmanager
def spill_guard() -> Iterator[None]:
    """While active, a SIGTERM first removes the spill folders of the out-of-core runs
    in progress and the temporary files of the outputs being written, then does what
    the previous handler did (by default: the process ends, killed by SIGTERM).
    Installed only from the main thread (elsewhere a no-op) and only when SIGTERM is not
    ignored; the previous handler is restored on exit.

    Examples
    --------
    >>> import signal
    >>> from polars_irmetrics.ground.buckets import spill_guard
    >>> before = signal.getsignal(signal.SIGTERM)
    >>> with spill_guard():
    ...     signal.getsignal(signal.SIGTERM) is before
    False
    >>> signal.getsignal(signal.SIGTERM) is before
    True
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous == signal.SIG_IGN or previous is None:
        yield
        return

    on_sigterm = _cleanup_then(previous)
    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        if signal.getsignal(signal.SIGTERM) is on_sigterm:
            signal.signal(signal.SIGTERM, previous)


def keep_spill_cleanup() -> None:
    """Install, once and from the main thread, a SIGTERM handler that removes the spill
    folders of the out-of-core runs in progress (and the temporary output files being
    written), then does what the handler before it
    did (by default: the process ends, killed by SIGTERM).

    Called when an out-of-core plan is built, so that a LazyFrame collected later,
    outside :func:`spill_guard`, leaves nothing behind on a scheduler's stop. Not
    installed from another thread, when SIGTERM is ignored, or when the handler in place
    is already this one.

    Examples
    --------
    >>> import signal
    >>> keep_spill_cleanup()
    >>> installed = signal.getsignal(signal.SIGTERM)
    >>> installed.__qualname__
    '_cleanup_then.<locals>.on_sigterm'
    >>> keep_spill_cleanup()  # once: the handler in place stays
    >>> signal.getsignal(signal.SIGTERM) is installed
    True
    """
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous == signal.SIG_IGN or previous is None or (_KEPT and previous is _KEPT[0]):
        return

    on_sigterm = _cleanup_then(previous)
    signal.signal(signal.SIGTERM, on_sigterm)
    _KEPT[:] = [on_sigterm]


_T = TypeVar("_T")

#: The engines :func:`eager_engine` picks from.
EagerEngine = Literal["auto", "in-memory"]

#: An eager call whose tables are all DataFrames of at most this many rows in all is
#: collected by polars' in-memory engine: on small tables its start is cheaper than the
#: streaming engine's (an evaluation of a few thousand rows in half the time); from about
#: this size on the streaming engine is as fast or faster, and it bounds memory.
IN_MEMORY_ROWS = 1_000_000


def eager_engine(tables: Iterable[pl.DataFrame | pl.LazyFrame | None]) -> EagerEngine:
    """The engine of an eager entry point's collect: ``"in-memory"`` where every table
    given is a DataFrame and they hold at most :data:`IN_MEMORY_ROWS` rows in all, and
    the user has not chosen an engine (``pl.Config.set_engine_affinity`` or
    ``POLARS_ENGINE_AFFINITY``); else polars' own choice (``"auto"``). Every route gives
    the same bits on either engine.

    Examples
    --------
    >>> small = pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"]})
    >>> eager_engine([small, None])
    'in-memory'
    >>> eager_engine([small, small.lazy()])  # a lazy table: maybe a scan of any size
    'auto'
    """
    if os.environ.get("POLARS_ENGINE_AFFINITY", "auto") != "auto":
        return "auto"
    given = [t for t in tables if t is not None]
    frames = [t for t in given if isinstance(t, pl.DataFrame)]
    if len(frames) < len(given) or sum(t.height for t in frames) > IN_MEMORY_ROWS:
        return "auto"
    return "in-memory"


def collect_guarded(plan: pl.LazyFrame, engine: EagerEngine = "auto") -> pl.DataFrame:
    """``plan.collect(engine=engine)`` under :func:`spill_guard`: the eager entry points'
    collect (``engine`` from :func:`eager_engine`).

    With ``"auto"`` (a lazy table, maybe a scan of any size, or more than
    :data:`IN_MEMORY_ROWS` rows) it runs beside the main thread (:func:`beside_main`),
    so that a SIGTERM's handler runs at once. With ``"in-memory"`` (DataFrames of at
    most :data:`IN_MEMORY_ROWS` rows in all) it runs in the calling thread: the worker
    thread's start and hand-back cost 1.5 to 4.5 ms of a 10 ms small call (measured on
    a loaded 2-core machine), and such a collect is bounded by the tables in memory
    (milliseconds for a few thousand rows).
    The in-memory engine runs the plan's Python steps (an out-of-core run's passes, the
    warnings' flush) in the calling thread, between which Python runs the signal
    handlers: a SIGTERM there removes the spill folders at once, as beside the main
    thread, and one during polars' own work waits for it, then does so (the run's own
    cleanup has removed its folder by then); a Ctrl-C raises ``KeyboardInterrupt``
    there or once the collect returns, as after any collect in the main thread.
    """
    with spill_guard():
        if engine == "in-memory":
            return plan.collect(engine=engine)
        return beside_main(lambda: plan.collect(engine=engine))


#: How often (seconds) :func:`beside_main`'s main thread wakes to run a pending signal
#: handler.
_WAKE = 0.05


class _Line:
    """What a :func:`beside_main` call's worker and its main thread share: the worker
    wakes the main thread when it has finished or asks whether a Ctrl-C came
    (:func:`interrupted`), which the main thread answers once the signal handlers
    pending have run."""

    def __init__(self) -> None:
        self.finished = threading.Event()
        self.wake = threading.Event()
        self.asked = threading.Event()
        self.answered = threading.Event()
        self.interrupted = False


#: The worker threads of the :func:`beside_main` calls in progress, with their line.
_LINES: dict[threading.Thread, _Line] = {}


def interrupted() -> bool:
    """Whether this thread runs the work of a :func:`beside_main` call that a Ctrl-C has
    interrupted: the work goes on to its end (a polars ``collect()`` cannot be stopped),
    but :func:`~polars_irmetrics.io.output.write_atomic` then writes nothing, so an
    interrupted run never replaces an existing output. The worker asks the main thread,
    which first runs the signal handlers pending: a Ctrl-C the kernel handed to another
    thread (the worker, a polars thread) is counted, not left to the main thread's next
    wake. Always ``False`` in another thread.

    >>> interrupted()
    False
    """
    line = _LINES.get(threading.current_thread())
    if line is None:
        return False
    line.answered.clear()
    line.asked.set()
    line.wake.set()
    line.answered.wait()
    return line.interrupted


def _run_pending() -> None:
    """Nothing: a call of a Python function, at whose start the main thread runs the
    signal handlers pending (Python runs them between its own steps)."""


def beside_main(work: Callable[[], _T]) -> _T:
    """``work()`` in a thread of its own while the main thread waits for it in Python,
    so that a SIGTERM's handler (:func:`spill_guard`) runs at once: Python runs signal
    handlers in the main thread only, between its own steps, and a polars ``collect()``
    in the main thread (an out-of-core run's passes inside it) would hold it off until
    the collect returns, past a scheduler's grace period. Ctrl-C keeps its meaning: the
    ``KeyboardInterrupt`` is raised once ``work`` returns (its folders removed by its own
    cleanup), as it would be after a collect in the main thread, and from the interrupt
    on the work writes no output (:func:`interrupted`: a temporary file is removed, never
    renamed into place). Called from another thread, ``work()`` runs there. The eager
    entry points' collect of small DataFrames by the in-memory engine does without it
    (:func:`collect_guarded`).

    >>> beside_main(lambda: 6 * 7)
    42
    """
    if threading.current_thread() is not threading.main_thread():
        return work()
    done: list[_T] = []
    failed: list[BaseException] = []
    # line.finished is set by the worker itself when ``work`` has returned (or raised):
    # not ``Thread.is_alive``, which a Ctrl-C inside ``Thread.join`` marks as stopped on
    # Python 3.11 (bpo-45274) while the work still runs, so the interrupt left at once,
    # the spill folder behind, and the interpreter aborted at exit
    line = _Line()

    def run() -> None:
        try:
            done.append(work())
        except BaseException as error:
            failed.append(error)
        finally:
            line.finished.set()
            line.wake.set()

    worker = threading.Thread(target=run, name="polars_irmetrics work", daemon=True)
    _LINES[worker] = line
    worker.start()
    stop: KeyboardInterrupt | None = None
    try:
        while not line.finished.is_set():
            try:
                # a signal the kernel handed to the main thread interrupts the wait, and its
                # handler runs here at once; one handed to another thread (any thread of the
                # process may take it: polars' own, the worker) only marks it pending, which
                # the main thread runs when it next wakes: at most _WAKE seconds later, or at
                # once when the worker asks whether it was interrupted (before an output is
                # renamed into place)
                if not line.asked.is_set():
                    line.wake.wait(_WAKE)
                line.wake.clear()
                _run_pending()
                if line.asked.is_set():  # the handlers pending have run: answer
                    line.answered.set()
                    line.asked.clear()
            except KeyboardInterrupt as error:  # a question asked is answered next round
                stop = error
                line.interrupted = True  # the work's outputs are not written from now on
    finally:
        _LINES.pop(worker, None)
    if stop is not None:
        raise stop
    if failed:
        raise failed[0]
    return done[0]


@contextlib.contextmanager
def _spill_folder(spill_dir: str | Path | None) -> Iterator[Path]:
    """A temporary folder in ``spill_dir``, registered for :func:`spill_guard` and
    removed on exit (success, error or Ctrl-C).

    Its name is registered before the folder is made: a SIGTERM between the two (the
    work runs beside the main thread, whose handler acts at once) found a folder not
    yet registered, which the stop left behind."""
    parent = tempfile.gettempdir() if spill_dir is None else os.fspath(spill_dir)
    for _ in range(100):  # tempfile's own count of names to try
        folder = os.path.join(parent, f"irm-buckets-{secrets.token_hex(4)}")
        with removed_on_stop(folder):
            try:
                os.mkdir(folder, 0o700)
            except FileExistsError:
                continue
            except OSError as error:  # checked when the plan was built: gone or shut since
                where = (
                    "the temporary folder"
                    if spill_dir is None
                    else f"spill_dir={str(spill_dir)!r}"
                )
                raise MissingFileError(
                    f"{where} cannot hold the out-of-core buckets now ({error.strerror}): "
                    "it was checked when the plan was built, and removed or made "
                    "read-only since; give an existing folder this process can write, "
                    "and collect again"
                ) from None
            try:
                yield Path(folder)
            finally:
                shutil.rmtree(folder, ignore_errors=True)
            return
    raise MissingFileError(  # pragma: no cover - 100 names of 2**32 all taken
        f"no free name for a spill folder in {parent!r}: remove its irm-buckets-* folders"
    )


def bucket_count(run: pl.LazyFrame, buckets: int | Literal["auto"]) -> int:
    """The number of buckets: ``buckets`` itself, or one per :data:`ROWS_PER_BUCKET` rows.

    ``"auto"`` counts the run's rows first: free for Parquet (the footers hold the
    counts), one extra pass for any other source.
    """
    if buckets != "auto":
        return buckets
    rows: int = run.select(pl.len()).collect().item()
    return max(1, math.ceil(rows / ROWS_PER_BUCKET))


def splits_in_buckets(buckets: object, spill_dir: object, measures: str) -> bool:
    """Whether ``buckets=`` asks ``measures`` (their name in messages) to go out of core:
    a number or ``"auto"``; ``"auto-memory"`` (the default) and ``None`` keep the one plan.
    A ``spill_dir`` is read by the buckets only, so it is refused without them.

    Examples
    --------
    >>> splits_in_buckets("auto-memory", None, "rbo"), splits_in_buckets(4, None, "rbo")
    (False, True)
    >>> splits_in_buckets(None, "/tmp", "the exposure measures")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: spill_dir='/tmp' is the folder of the ...
    """
    split = buckets is not None and buckets != "auto-memory"
    if spill_dir is not None and not split:
        raise InvalidValueError(
            f"spill_dir={str(spill_dir)!r} is the folder of the out-of-core buckets, and "
            f"{measures} evaluate in one plan unless buckets= is a number or 'auto': pass "
            "buckets=, or drop spill_dir="
        )
    return split


def evaluate_in_buckets(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame | None,
    groups: pl.LazyFrame | None,
    *,
    query_id: str,
    buckets: int | Literal["auto"],
    spill_dir: str | Path | None,
    evaluate_part: EvaluatePart,
    schema: pl.Schema,
    progress: bool | None = None,
    before: Callable[[], None] | None = None,
) -> pl.LazyFrame:
    """Per-query results of ``evaluate_part`` over hash buckets of queries (module doc).

    Nothing runs until the returned LazyFrame is collected; ``spill_dir`` is checked
    now (:func:`check_spill_dir`). The temporary folder is made inside ``spill_dir``
    (default: the system's temporary folder) and removed when the evaluation ends,
    whether it succeeds or raises, and on SIGTERM under :func:`spill_guard`. A bar
    counts the buckets evaluated (``progress``:
    :class:`~polars_irmetrics.ground.progress.Progress`'s ``enabled``). ``before``: a
    check of the whole run, run when the result is collected, before any bucket (one
    whose refusal would otherwise be a bucket's, with a bucket's count and example).
    """
    check_spill_dir(spill_dir)
    keep_spill_cleanup()

    def run_buckets() -> pl.DataFrame:
        if before is not None:
            before()
        with spill_guard(), _spill_folder(spill_dir) as folder:
            return _split_and_evaluate(
                run, qrels, groups, folder, query_id, buckets, evaluate_part, progress
            )

    return pl.defer(run_buckets, schema=schema)


def _split_and_evaluate(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame | None,
    groups: pl.LazyFrame | None,
    folder: Path,
    query_id: str,
    buckets: int | Literal["auto"],
    evaluate_part: EvaluatePart,
    progress: bool | None,
) -> pl.DataFrame:
    count = bucket_count(run, buckets)
    key = (pl.col(query_id).hash(seed=_SEED) % count).alias(_BUCKET)
    sides = {"run": run} if qrels is None else {"run": run, "qrels": qrels}
    # One side after the other: two partitioned sinks at once hold twice the buffers.
    for name, frame in sides.items():
        frame.sink_parquet(
            pl.PartitionBy(folder / name, key=key, include_key=False),
            row_group_size=_ROW_GROUP,
            compression=_SPILL_COMPRESSION,
            mkdir=True,
        )
    # The by-groups span buckets, so they are found once, over the whole run.
    all_groups = None if groups is None else groups.collect().lazy()
    schemas = {name: frame.collect_schema() for name, frame in sides.items()}

    def side(name: str, bucket: int) -> pl.LazyFrame:
        part = folder / name / f"{_BUCKET}={bucket}"
        if not part.is_dir():  # no row of this side hashed here
            return pl.LazyFrame(schema=schemas[name])
        found = pl.scan_parquet(_parts_of(part))
        return found.select(pl.col(c).cast(t) for c, t in schemas[name].items())

    parts: list[pl.DataFrame] = []
    # a judged query some by-group did not retrieve, refused by a bucket, is refused once
    # with every bucket's (one plan's count and example), not with the first's alone
    refusals = UnplacedParts()
    for b in track(range(count), "buckets", count, enabled=progress):
        with refusals.part():
            run_part, qrels_part = side("run", b), None if qrels is None else side("qrels", b)
            parts.append(evaluate_part(run_part, qrels_part, all_groups).collect())
    refusals.raise_together()
    return pl.concat(parts, how="vertical")


def sink_buckets(frame: pl.LazyFrame, key: pl.Expr, folder: Path) -> None:
    """Write ``frame`` to Parquet under ``folder``, one folder per value of ``key``
    (``<folder>/__irm_bucket=<value>/``), in one streaming pass, as the split does."""
    frame.sink_parquet(
        pl.PartitionBy(folder, key=key.alias(_BUCKET), include_key=False),
        row_group_size=_ROW_GROUP,
        compression=_SPILL_COMPRESSION,
        mkdir=True,
    )


def read_bucket(folder: Path, bucket: int, schema: pl.Schema) -> pl.LazyFrame:
    """Bucket ``bucket`` of :func:`sink_buckets` (an empty frame of ``schema`` when no
    row went there)."""
    part = folder / f"{_BUCKET}={bucket}"
    if not part.is_dir():
        return pl.LazyFrame(schema=schema)
    return pl.scan_parquet(_parts_of(part)).select(pl.col(c).cast(t) for c, t in schema.items())


def _parts_of(folder: Path) -> str:
    """The pattern of the Parquet files of one bucket's ``folder``, the folder's own
    name escaped: a ``spill_dir`` (or ``TMPDIR``) with ``[`` in its name was read as a
    pattern, which matched none of its files."""
    return glob.escape(str(folder)) + "/*.parquet"


@contextlib.contextmanager
def spilling(spill_dir: str | Path | None) -> Iterator[Path]:
    """A temporary folder in ``spill_dir`` for buckets, removed on exit (success, error,
    Ctrl-C, and SIGTERM under :func:`spill_guard`, which this enters)."""
    with spill_guard(), _spill_folder(spill_dir) as folder:
        yield folder
