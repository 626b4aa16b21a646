"""trec_eval's z-score reference file (``trec_eval -Z``): a mean and a standard
deviation for each query and measure.

Each line is ``query_id measure mean stddev`` (whitespace-separated; blank lines and
``#`` comments are skipped), e.g. ``301 map 0.1212 0.1545``. ``irm trec-eval -Z FILE``
then prints ``(value - mean) / stddev`` for each query and measure instead of the value.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from polars_irmetrics.errors import InvalidValueError, TrecFormatError
from polars_irmetrics.io.sources import excerpt
from polars_irmetrics.io.text import decimal, read_fields

__all__ = ["ZScores", "read_trec_zscores"]

_FIELDS = ("query_id", "measure", "mean", "stddev")


@dataclass(frozen=True)
class ZScores:
    """The reference means and standard deviations, keyed by (query id, measure).

    Attributes
    ----------
    path
        The file they were read from (for messages).
    entries
        ``(query_id, measure) -> (mean, stddev, line number)``.
    """

    path: str
    entries: dict[tuple[str, str], tuple[float, float, int]]

    def convert(
        self,
        measure: str,
        query_ids: Sequence[str],
        values: Sequence[object],
        *,
        missing_ok: bool = False,
        undefined: list[str] | None = None,
    ) -> list[float]:
        """Each query's value of ``measure`` as a z-score: ``(value - mean) / stddev``.

        A standard deviation of 0 gives 0 when the value equals the mean, and else
        trec_eval's ``-1000000`` (MISSING_ZSCORE_VALUE), named in ``undefined``. A mean
        or standard deviation of ``nan`` gives ``nan``, as in trec_eval.

        Parameters
        ----------
        measure
            The measure's printed name (``map``, ``P_10``).
        query_ids, values
            The queries and their values, aligned.
        missing_ok
            Give trec_eval's ``-1000000`` for a query or measure not in the file
            instead of raising (trec_eval's gm_map and gm_bpref, which the file never
            lists: their summary, exp of the mean z-score, is then 0).
        undefined
            A list that receives one note per undefined z-score (standard deviation 0,
            value not the mean), for the caller to report.

        Returns
        -------
        list of float
            The z-scores, aligned with ``query_ids``.

        Raises
        ------
        InvalidValueError
            A query and measure the file does not list (trec_eval prints -1000000).

        Examples
        --------
        >>> entries = {("q1", "map"): (0.25, 0.5, 1), ("q2", "map"): (0.5, 0.0, 2)}
        >>> z = ZScores("z.txt", entries)
        >>> z.convert("map", ["q1", "q2"], [0.5, 0.5])
        [0.5, 0.0]
        >>> notes: list[str] = []
        >>> z.convert("map", ["q2"], [0.75], undefined=notes)
        [-1000000.0]
        >>> notes
        ['z.txt, line 2: query q2, measure map: standard deviation 0 and value 0.75 is not ...']
        >>> z.convert("P_10", ["q1"], [0.5])
        Traceback (most recent call last):
        ...
        polars_irmetrics.errors.InvalidValueError: z.txt: no mean and standard deviation
        for query q1, measure P_10; add a line 'q1 P_10 MEAN STDDEV'
        """
        out: list[float] = []
        for qid, raw in zip(query_ids, values, strict=True):
            value = float(raw)  # type: ignore[arg-type]
            entry = self.entries.get((qid, measure))
            if entry is None:
                if missing_ok:
                    out.append(-1000000.0)
                    continue
                raise InvalidValueError(
                    f"{self.path}: no mean and standard deviation for query {qid}, measure "
                    f"{measure}; add a line '{qid} {measure} MEAN STDDEV'"
                )
            mean, stddev, line = entry
            if stddev:
                out.append((value - mean) / stddev)
            elif value == mean:
                out.append(0.0)
            else:
                out.append(-1000000.0)
                if undefined is not None:
                    undefined.append(
                        f"{self.path}, line {line}: query {qid}, measure {measure}: standard "
                        f"deviation 0 and value {value!r} is not the mean {mean!r}"
                    )
        return out


def read_trec_zscores(source: str | os.PathLike[str]) -> ZScores:
    """Read trec_eval's ``-Z`` file: ``query_id measure mean stddev`` per line.

    Parameters
    ----------
    source
        Path of the file.

    Returns
    -------
    ZScores
        The means and standard deviations by (query id, measure).

    Raises
    ------
    TrecFormatError
        A line without exactly 4 fields, a mean or standard deviation that is not a
        plain decimal number (``nan`` and ``inf`` are read, as trec_eval's ``atof``
        reads them; ``1_0`` or Unicode digits are not), a negative standard deviation, or
        a (query, measure) listed twice; the message names the file and the line.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "z.txt"
    ...     _ = path.write_text("301 map 0.1212 0.1545\\n301 P_10 x 0.2\\n")
    ...     read_trec_zscores(path)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.TrecFormatError: ...z.txt, line 2: mean 'x' is not a number:
    '301 P_10 x 0.2'
    """
    path = os.fspath(source)
    frame = read_fields(path, len(_FIELDS), " ".join(_FIELDS))
    rows = frame.select(
        "_ln",
        "_line",
        pl.col("_fields").list.get(0).alias("query_id"),
        pl.col("_fields").list.get(1).alias("measure"),
        pl.col("_fields").list.get(2).alias("mean"),
        pl.col("_fields").list.get(3).alias("stddev"),
    )
    entries: dict[tuple[str, str], tuple[float, float, int]] = {}
    for number, line, qid, measure, mean_text, std_text in rows.iter_rows():
        numbers = []
        for name, text in (("mean", mean_text), ("standard deviation", std_text)):
            value = decimal(text, words=True)  # nan is read, as trec_eval's atof reads it
            if value is None:  # not 1_0 nor Unicode digits, which float() reads
                raise TrecFormatError(
                    f"{path}, line {number}: {name} {excerpt(text)} is not a number: "
                    f"{excerpt(line)}"
                )
            numbers.append(value)
        if numbers[1] < 0:
            raise TrecFormatError(
                f"{path}, line {number}: standard deviation {excerpt(std_text)} is negative: "
                f"{excerpt(line)}"
            )
        if (qid, measure) in entries:
            raise TrecFormatError(
                f"{path}, line {number}: query {qid}, measure {measure} is listed twice "
                f"(first on line {entries[qid, measure][2]})"
            )
        entries[qid, measure] = (numbers[0], numbers[1], number)
    return ZScores(path, entries)
