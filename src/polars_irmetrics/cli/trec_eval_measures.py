"""``irm trec-eval``'s measure table: trec_eval's measures, nicknames and parameters.

What ``-m`` may name in each trec_eval version (``te_trec_measures`` and
``te_trec_measure_nicknames`` in measures.c), how its parameters are read (meas_init.c:
``strtol``/``atof`` readings, cutoffs, gain tables, ``name=value`` pairs) and the
library metric that computes each printed column. :mod:`polars_irmetrics.cli.trec_eval`
runs the command and prints.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from polars_irmetrics.errors import MetricParameterError, UnknownMetricError
from polars_irmetrics.offline.jg import base_metric
from polars_irmetrics.offline.prefs import PREFS_MEASURES

__all__ = ["ALL_TREC", "ALL_TREC_9", "MEASURE_ORDER", "NICKNAMES", "OFFICIAL", "REL_FORMATS"]

Kind = Literal[
    "runid",  # the run's tag, summary only
    "num_q",  # number of queries, summary only
    "count",  # an integer count, summed in the summary
    "single",  # one value, no parameters
    "long_cut",  # one value per integer cutoff: NAME_k
    "double_cut",  # one value per real cutoff: NAME_0.20
    "params",  # one value, parameters appended to the name: NAME_params
]

_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)

#: The judgment formats ``-R`` accepts, and the measures each gives by default.
REL_FORMATS: tuple[str, ...] = ("qrels", "prefs", "qrels_prefs", "qrels_jg")
_DEFAULT_MEASURES: dict[str, str] = {
    "qrels": "official",
    "prefs": "prefs",
    "qrels_prefs": "prefs",
    "qrels_jg": "qrels_jg",
}


@dataclass(frozen=True)
class _Family:
    """One entry of trec_eval's measure table."""

    name: str
    kind: Kind
    supported: bool = False
    long_defaults: tuple[int, ...] = ()
    double_defaults: tuple[float, ...] = ()


#: trec_eval's measure table (``te_trec_measures`` in ``measures.c``), in the order
#: trec_eval computes and prints them.
_TABLE: tuple[_Family, ...] = (
    _Family("runid", "runid", supported=True),
    _Family("num_q", "num_q", supported=True),
    _Family("num_ret", "count", supported=True),
    _Family("num_rel", "count", supported=True),
    _Family("num_rel_ret", "count", supported=True),
    _Family("map", "single", supported=True),
    _Family("gm_map", "single", supported=True),
    _Family("Rprec", "single", supported=True),
    _Family("bpref", "single", supported=True),
    _Family("recip_rank", "single", supported=True),
    _Family(
        "iprec_at_recall",
        "double_cut",
        supported=True,
        double_defaults=(0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
    ),
    _Family("P", "long_cut", supported=True, long_defaults=_CUTOFFS),
    _Family("relstring", "params", supported=True),
    _Family("recall", "long_cut", supported=True, long_defaults=_CUTOFFS),
    _Family("infAP", "single", supported=True),
    _Family("gm_bpref", "single", supported=True),
    _Family(
        "Rprec_mult",
        "double_cut",
        supported=True,
        double_defaults=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
    ),
    _Family("utility", "params", supported=True),
    _Family("11pt_avg", "params", supported=True),  # without parameters
    _Family("binG", "single", supported=True),
    _Family("G", "params", supported=True),
    _Family("dcg", "params", supported=True),  # without parameters
    _Family("ideal_dcg", "params", supported=True),  # without parameters
    _Family("ndcg", "params", supported=True),
    _Family("ndcg_rel", "params", supported=True),
    _Family("Rndcg", "params", supported=True),
    _Family("ndcg_cut", "long_cut", supported=True, long_defaults=_CUTOFFS),
    _Family("map_cut", "long_cut", supported=True, long_defaults=_CUTOFFS),
    _Family("relative_P", "long_cut", supported=True, long_defaults=_CUTOFFS),
    _Family("success", "long_cut", supported=True, long_defaults=(1, 5, 10)),
    _Family("set_P", "single", supported=True),
    _Family("set_relative_P", "single", supported=True),
    _Family("set_recall", "single", supported=True),
    _Family("set_map", "single", supported=True),
    _Family("set_F", "params", supported=True),  # any beta >= 0 (default 1)
    _Family("num_nonrel_judged_ret", "count", supported=True),
    _Family("prefs_num_prefs_poss", "count", supported=True),
    _Family("prefs_num_prefs_ful", "count", supported=True),
    _Family("prefs_num_prefs_ful_ret", "count", supported=True),
    _Family("prefs_simp", "single", supported=True),
    _Family("prefs_pair", "single", supported=True),
    _Family("prefs_avgjg", "single", supported=True),
    _Family("prefs_avgjg_Rnonrel", "single", supported=True),
    _Family("prefs_simp_ret", "single", supported=True),
    _Family("prefs_pair_ret", "single", supported=True),
    _Family("prefs_avgjg_ret", "single", supported=True),
    _Family("prefs_avgjg_Rnonrel_ret", "single", supported=True),
    _Family("prefs_simp_imp", "single", supported=True),
    _Family("prefs_pair_imp", "single", supported=True),
    _Family("prefs_avgjg_imp", "single", supported=True),
    _Family("map_avgjg", "single", supported=True),
    _Family("P_avgjg", "long_cut", supported=True, long_defaults=_CUTOFFS),
    _Family(
        "Rprec_mult_avgjg",
        "double_cut",
        supported=True,
        double_defaults=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
    ),
    _Family("yaap", "single"),
    _Family("rbp", "params", supported=True),
    _Family("rbp_resid", "params", supported=True),
    _Family("unj", "long_cut", supported=True, long_defaults=(5, 10, 20)),
)
_BY_NAME: dict[str, _Family] = {f.name: f for f in _TABLE}
#: Measures trec_eval 9.0.8's table lacks (added in 10.0).
_NEW_IN_10 = frozenset({"dcg", "ideal_dcg", "rbp", "rbp_resid", "unj"})

Version = Literal[9, 10]


def _table(version: Version) -> tuple[_Family, ...]:
    """trec_eval's measure table in ``version`` (9.0.8 lacks dcg, ideal_dcg, rbp, unj)."""
    if version == 10:
        return _TABLE
    return tuple(f for f in _TABLE if f.name not in _NEW_IN_10)


#: trec_eval's measure names, in its print order.
MEASURE_ORDER: tuple[str, ...] = tuple(f.name for f in _TABLE)

#: ``-m official`` (trec_eval's default when no ``-m`` is given).
OFFICIAL: tuple[str, ...] = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map",
    "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P",
)  # fmt: skip

#: ``-m all_trec``: every measure trec_eval computes from qrels and a run.
ALL_TREC: tuple[str, ...] = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map",
    "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P", "relstring",
    "recall", "unj", "rbp", "rbp_resid", "infAP", "gm_bpref",
    "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success",
    "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G",
    "set_P", "set_recall", "set_relative_P", "set_map", "set_F",
    "num_nonrel_judged_ret",
)  # fmt: skip

#: ``-m all_trec`` in trec_eval 9.0.8 (without unj, rbp and rbp_resid).
ALL_TREC_9: tuple[str, ...] = tuple(name for name in ALL_TREC if name not in _NEW_IN_10)

#: Every nickname ``-m`` accepts (``te_trec_measure_nicknames`` in ``measures.c``).
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": OFFICIAL,
    "set": (
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
        "set_recall", "set_relative_P", "set_map", "set_F",
    ),
    "all_trec": ALL_TREC,
    "all_prefs": (
        "runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful",
        "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg",
        "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret",
        "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp",
    ),
    "prefs": (
        "runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful",
        "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg",
    ),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}  # fmt: skip

#: The polars_irmetrics name of each supported trec_eval measure without a cutoff
#: (the long-cutoff families keep their trec_eval names: ``P_10``, ``unj_5``).
_LIBRARY_NAME: dict[str, str] = {
    "num_ret": "num_ret",
    "num_rel": "num_rel",
    "num_rel_ret": "num_rel_ret",
    "map": "map",
    "gm_map": "gm_map",
    "Rprec": "Rprec",
    "bpref": "bpref",
    "recip_rank": "recip_rank",
    "infAP": "infap",
    "gm_bpref": "gm_bpref",
    "utility": "utility",
    "11pt_avg": "11pt_avg",
    "binG": "bin_g",
    "G": "g",
    "dcg": "dcg",
    "ideal_dcg": "idcg",
    "ndcg": "ndcg",
    "ndcg_rel": "ndcg_rel",
    "Rndcg": "rndcg",
    "set_P": "set_P",
    "set_relative_P": "set_relative_P",
    "set_recall": "set_recall",
    "set_map": "set_map",
    "set_F": "set_F",
    "num_nonrel_judged_ret": "num_nonrel_judged_ret",
    "rbp": "trec_rbp",
    "rbp_resid": "trec_rbp_resid",
    "map_avgjg": "map",
    **{name: name for name in PREFS_MEASURES},
}
#: The library metric behind each real-cutoff family, and the parameter it sets.
_DOUBLE_METRIC: dict[str, tuple[str, str]] = {
    "iprec_at_recall": ("iprec", "recall"),
    "Rprec_mult": ("rprec_mult", "multiple"),
    "Rprec_mult_avgjg": ("rprec_mult", "multiple"),
}
#: The measures each ``-R`` format computes (trec_eval's other measures read qrels).
_JG_FAMILIES = frozenset({"map_avgjg", "P_avgjg", "Rprec_mult_avgjg"})
#: Measures that trec_eval prints only in the summary (te_print_single_meas_empty).
_SUMMARY_ONLY = frozenset({"gm_map", "gm_bpref"})
#: Measures whose summary is a geometric mean (te_calc_avg_meas_s_gm).
_GEOMETRIC = frozenset({"gm_map", "gm_bpref"})
#: trec_eval's MIN_GEO_MEAN.
_MIN_GEO_MEAN = 0.00001

_LONG_RE = re.compile(r"\s*([+-]?\d+)")
_DOUBLE_RE = re.compile(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")


@dataclass(frozen=True)
class _Column:
    """One printed measure: trec_eval's name and the polars_irmetrics metric behind it."""

    printed: str
    metric: str
    integer: bool
    geometric: bool = False  # summary: geometric mean (gm_map, gm_bpref)
    per_query: bool = True  # printed per query with -q
    summary: bool = True  # printed in the summary
    relstring: int | None = None  # relstring: how many documents it shows (no metric)


@dataclass(frozen=True)
class _Selection:
    """What ``-m`` asks for, resolved against the table."""

    runid: bool
    num_q: bool
    columns: tuple[_Column, ...]
    unsupported: tuple[str, ...]


# --------------------------------------------------------------------------- measures
def _c_long(text: str, measure: str) -> int:
    """``strtol``'s reading of ``text``, refused unless the whole of it is a number."""
    match = _LONG_RE.match(text)
    number = _DOUBLE_RE.match(text)
    whole = match is not None and not text[match.end() :].strip()
    if number is not None and not text[number.end() :].strip() and not whole:
        read = int(match.group(1)) if match else 0  # 5.5, 1e1, .5: numbers, not in digits
        raise MetricParameterError(
            f"measure '{measure}': parameter {text!r} is not an integer written in digits "
            f"(trec_eval's strtol would read {read}); write one, e.g. -m P.5,10"
        )
    _whole(text, match, measure)
    return int(match.group(1)) if match else 0


def _c_double(text: str, measure: str) -> float:
    """``atof``'s reading of ``text``, refused unless the whole of it is a number."""
    match = _DOUBLE_RE.match(text)
    _whole(text, match, measure)
    return float(match.group(1)) if match else 0.0


def _whole(text: str, match: re.Match[str] | None, measure: str) -> None:
    """trec_eval reads a parameter with ``atof``/``strtol``, which stop at the first
    character that is no part of a number and read ``x`` as 0 (``-m ndcg.1=x`` printed
    a gain of 0 for relevance 1, ``-m rbp.p=abc`` an RBP of p = 0): a parameter that is
    not wholly a number is refused here, naming the measure."""
    if match is None or text[match.end() :].strip():
        raise MetricParameterError(
            f"measure '{measure}': parameter {text!r} is not a number (trec_eval would "
            "read its leading digits, or 0 without any); write a number, e.g. -m P.5,10, "
            "-m ndcg.1=1,2=3 or -m rbp.p=0.8"
        )


def _long_cutoffs(family: _Family, params: str | None) -> list[int]:
    if params is None:
        return list(family.long_defaults)
    cutoffs = sorted(_c_long(part, f"{family.name}.{params}") for part in params.split(","))
    if cutoffs[0] <= 0:
        raise MetricParameterError(
            f"measure '{family.name}.{params}': cutoffs must be positive integers, "
            f"e.g. -m {family.name}.5,10"
        )
    for before, after in itertools.pairwise(cutoffs):
        if before == after:
            raise MetricParameterError(
                f"measure '{family.name}.{params}': cutoff {after} is listed twice"
            )
    return cutoffs


def _double_cutoffs(family: _Family, params: str | None) -> list[float]:
    if params is None:
        return list(family.double_defaults)
    values = sorted(_c_double(part, f"{family.name}.{params}") for part in params.split(","))
    for before, after in itertools.pairwise(values):
        if before == after:
            raise MetricParameterError(
                f"measure '{family.name}.{params}': cutoff {after!r} is listed twice"
            )
    return values


def _pairs(family: str, params: str) -> list[tuple[str, float]]:
    """trec_eval's ``name=value`` parameters (get_param_pairs in meas_init.c)."""
    items = params.split(",")
    if any(item.count("=") != 1 for item in items):
        raise MetricParameterError(
            f"measure '{family}.{params}': malformed parameters; write name=value pairs, "
            f"e.g. -m {family}.1=3,2=9"
        )
    where = f"{family}.{params}"
    return [
        (name, _c_double(value, where)) for name, _, value in (i.partition("=") for i in items)
    ]


def _gain_table(pairs: list[tuple[str, float]]) -> dict[int, float] | None:
    """The gains of the labels a trec_eval gain table lists (setup_gains in gain_init.c).

    Names that are not integers are ignored, and the first gain given for a label wins,
    as in trec_eval. ``None`` when a negative label is given a gain: trec_eval would
    apply it to unjudged documents (-1 not in the judgments, -2 judged negative).
    """
    table: dict[int, float] = {}
    for name, value in pairs:
        if not re.fullmatch(r"[+-]?\d+", name):
            continue
        label = int(name)
        if label < 0:
            return None
        table.setdefault(label, value)
    return table


def _persistence(pairs: list[tuple[str, float]]) -> float | None:
    """rbp's ``p=`` (the last one given, as in m_rbp.c), or None outside [0, 1]."""
    p = 0.9
    for name, value in pairs:
        if name == "p":
            p = value
    return p if 0.0 <= p <= 1.0 else None


def _with_params(metric: str, **params: object) -> str:
    shown = ", ".join(f"{key}={value!r}" for key, value in params.items())
    return f"{metric}({shown})" if shown else metric


def _suggest(name: str) -> str:
    trec = re.fullmatch(r"(.+?)[_@](\d+)", name)
    if trec is not None and trec.group(1) in _BY_NAME:
        return f" Did you mean: {trec.group(1)}.{trec.group(2)}?"
    candidates = [*MEASURE_ORDER, *NICKNAMES]
    by_lower = {c.lower(): c for c in candidates}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=4, cutoff=0.6)
    return f" Did you mean: {', '.join(by_lower[c] for c in close)}?" if close else ""


def _parse_measure_args(
    values: Sequence[str], version: Version = 10
) -> tuple[list[str], dict[str, str], list[str]]:
    """Marked families, the parameters of each, and notes on parameters given twice."""
    marked: list[str] = []
    params: dict[str, str] = {}
    notes: list[str] = []
    for value in values:
        name, dot, param_text = value.partition(".")
        if dot and not param_text:
            raise MetricParameterError(
                f"measure {value!r}: nothing after the '.'; give parameters "
                f"(e.g. -m {name}.10) or leave the '.' out"
            )
        if name in NICKNAMES:
            if dot:
                raise MetricParameterError(
                    f"measure {value!r}: nickname {name!r} takes no parameters"
                )
            marked.extend(ALL_TREC_9 if version == 9 and name == "all_trec" else NICKNAMES[name])
            continue
        family = _BY_NAME.get(name)
        if family is not None and version == 9 and name in _NEW_IN_10:
            raise UnknownMetricError(
                f"trec_eval measure {name!r} is new in trec_eval 10.0; "
                "drop --trec-eval-version 9 to compute it"
            )
        if family is None:
            raise UnknownMetricError(
                f"unknown trec_eval measure {name!r}.{_suggest(name)} Measures are named as "
                "in trec_eval: -m map, -m P.5,10, -m ndcg_cut.10, -m official, -m all_trec"
            )
        if dot:
            if family.supported and family.kind in ("single", "count", "runid", "num_q"):
                raise MetricParameterError(
                    f"measure {value!r}: {name} takes no parameters"
                    + (f" (did you mean -m map_cut.{param_text}?)" if name == "map" else "")
                )
            if name in params:
                notes.append(
                    f"{name} was given parameters twice; using the first, "
                    f"{name}.{params[name]}, as trec_eval does"
                )
            else:
                params[name] = param_text
        marked.append(name)
    return marked, params, notes


def _select_measures(
    values: Sequence[str] | None, level: int = 1, version: Version = 10, num_docs: int = 0
) -> tuple[_Selection, list[str]]:
    """Resolve ``-m`` values (default ``official``) into printed columns, in table order.

    Returns the selection and notes for standard error (parameters given twice).
    ``level`` is ``-l``, which decides whether Rndcg can be printed; ``version`` the
    trec_eval version followed (its table, all_trec and iprec's rounding);
    ``num_docs`` is ``-N``, the documents in the collection, which utility's fourth
    coefficient (non-relevant documents not retrieved) reads.
    """
    marked, params, notes = _parse_measure_args(list(values) if values else ["official"], version)
    wanted = set(marked)
    columns: list[_Column] = []
    unsupported: list[str] = []
    rounding = "lround" if version == 10 else "truncate"
    for family in _table(version):
        if family.name not in wanted:
            continue
        param = params.get(family.name)
        if family.kind == "long_cut":
            cutoffs = _long_cutoffs(family, param)
            names = [f"{family.name}_{k}" for k in cutoffs]
            if family.supported:
                columns += [_Column(n, base_metric(n), integer=False) for n in names]
            else:
                unsupported += names
        elif family.kind == "double_cut":
            metric, option = _DOUBLE_METRIC[family.name]
            for value in _double_cutoffs(family, param):
                printed = f"{family.name}_{value:3.2f}"
                options: dict[str, object] = {option: value}
                if family.name == "iprec_at_recall" and rounding != "truncate":
                    options["rounding"] = rounding
                columns.append(_Column(printed, _with_params(metric, **options), False))
        elif family.kind in ("runid", "num_q"):
            continue
        elif family.name == "relstring":
            printed = family.name if param is None else f"{family.name}_{param}"
            columns.append(
                _Column(printed, "", False, summary=False, relstring=_relstring_length(param))
            )
        else:
            printed = family.name if param is None else f"{family.name}_{param}"
            metric_name = (
                _library_metric(family, param, level, rounding, num_docs)
                if family.supported
                else None
            )
            if metric_name is None:
                unsupported.append(printed)
            else:
                columns.append(
                    _Column(
                        printed,
                        metric_name,
                        integer=family.kind == "count",
                        geometric=family.name in _GEOMETRIC,
                        per_query=family.name not in _SUMMARY_ONLY,
                    )
                )
    selection = _Selection(
        runid="runid" in wanted,
        num_q="num_q" in wanted,
        columns=tuple(columns),
        unsupported=tuple(unsupported),
    )
    return selection, notes


def _relstring_length(param: str | None) -> int:
    """relstring's N: ``(long)`` of its first parameter (default 10), at least 0."""
    if param is None:
        return 10
    value = _c_double(param.split(",")[0], f"relstring.{param}")
    return int(min(max(value, 0.0), float(2**62)))  # m_relstring.c: len < 0 gives 0


def _library_metric(
    family: _Family, param: str | None, level: int, rounding: str = "lround", num_docs: int = 0
) -> str | None:
    """The library metric that prints as ``family`` with ``param``; None if there is none.

    ``num_docs`` (``-N``) is utility's ``collection``, as m_utility.c reads
    ``epi->num_docs_in_coll`` (0 unless ``-N`` is given)."""
    name = family.name
    base = _LIBRARY_NAME[name]
    if name == "Rndcg" and level < 1:
        return None  # R > 0 with no positive gain: trec_eval prints nan
    if name == "11pt_avg":
        options: dict[str, object] = {}
        if param is not None:  # get_double_params: atof of each, in the order given
            levels = [_c_double(part, f"{name}.{param}") for part in param.split(",")]
            if any(a >= b for a, b in itertools.pairwise(levels)):
                return None  # m_11pt_avg.c assumes increasing levels: skips the others
            options["recalls"] = ",".join(repr(x) for x in levels)
        if rounding != "truncate":
            options["rounding"] = rounding
        return _with_params(base, **options)
    collection = {"collection": num_docs} if num_docs else {}
    if param is None:
        return _with_params(base, **collection) if name == "utility" else base
    if name == "set_F":  # m_set_F.c: (x + 1) P R / (x P + R), x its first parameter
        beta = _c_double(param.split(",")[0], f"{name}.{param}")
        if beta == 1.0:
            return base
        # a negative x can divide by 0 (x P + R = 0): trec_eval prints inf or nan
        return _with_params(base, beta=beta) if 0.0 <= beta < float("inf") else None
    if name == "utility":
        coefficients = [_c_double(part, f"{name}.{param}") for part in param.split(",")]
        if len(coefficients) != 4:
            raise MetricParameterError(
                f"measure 'utility.{param}': utility takes 4 coefficients (relevant "
                "retrieved, non-relevant retrieved, relevant missed, non-relevant missed), "
                "e.g. -m utility.1,-1,0,0"
            )
        keys = ("rel_ret", "nonrel_ret", "rel_missed", "nonrel_missed")
        return _with_params(base, **dict(zip(keys, coefficients, strict=True)), **collection)
    if name in ("rbp", "rbp_resid"):
        pairs = _pairs(name, param)
        p = _persistence(pairs)
        if p is None or (name == "rbp" and _gain_table(pairs) != {}):
            return None  # rbp with gains, or a persistence outside [0, 1]
        return _with_params(base, p=p)
    if name in ("ndcg", "ndcg_rel", "Rndcg", "G"):
        table = _gain_table(_pairs(name, param))
        if table is None:
            return None
        if name == "Rndcg" and any(g <= 0 for label, g in table.items() if label >= level):
            return None  # a relevant label without a positive gain: nan in trec_eval
        if not table:
            return base
        gains = ",".join(f"{label}={gain!r}" for label, gain in table.items())
        return _with_params("trec_ndcg" if name == "ndcg" else base, gains=gains)
    return None  # dcg and ideal_dcg with parameters
