"""The library's messages as a command's user reads them: the Python keyword arguments
a message suggests (``relevance='label'``) written as the command's flags (``--relevance
label``), and nothing else rewritten.

A keyword is rewritten only where it is one of the command's flags (read from its
argparse parser) and stands in keyword position: not inside a quoted value, not an
argument of a call (``ndcg(gain='exponential')``), not inside a list or a dict, and not
part of a place in the data (``(arm='A', user_id='u1')``, ``group day=1``, ``first:
round_id=10``), whose names are columns and whose values are the data's own. A value
the flag cannot take as written (a Python expression, a list for a flag given once, a
dict for a flag that is no ``NAME=VALUE`` pair) leaves the keyword as it is.
"""

from __future__ import annotations

import argparse
import ast
import re
import shlex

__all__ = ["as_flags", "flags_of"]

#: Python keyword arguments whose flag has another name in some command.
_KEYWORD_DESTS: dict[str, tuple[str, ...]] = {
    "relevance_level": ("level",),
    "depth": ("max_docs",),
    "metric": ("metrics",),
}

#: A quoted value, as Python's repr writes it (not an apostrophe inside a word).
_QUOTED = re.compile(r"(?<!\w)(?:'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\")(?!\w)")
#: A value in a place in the data: quoted, a number or a word (``null``, ``True``), or
#: a date's repr (``datetime.date(2026, 3, 2)``); not ``...``, a value to give.
_DATUM = r"(?:'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[+-]?\w[\w.+:-]*(?:\([^()]*\))?)"
_PAIRS = rf"(?<![\w.-])[A-Za-z_]\w*={_DATUM}(?:, [A-Za-z_]\w*={_DATUM})*"
#: A place in the data: pairs that are all of a parenthesis, or that follow a word
#: naming a place (``in the group day=1``, ``first: round_id=10``, ``for user_id=u1``).
_PLACES = (
    re.compile(rf"(?<=\()({_PAIRS})(?=\))"),
    re.compile(rf"\b(?:group|under|for|in|first:?) ({_PAIRS})"),
)
_KEYWORD = re.compile(r"(?<![\w,.\-=])(?P<name>[A-Za-z_]\w*)=(?!=)")
_WORD = re.compile(r"[+-]?[\w.+\-]+")
_OPENERS = {")": "(", "]": "[", "}": "{"}


def flags_of(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """The flags of a command's ``parser`` by their destination (``--help`` aside)."""
    found: dict[str, argparse.Action] = {}
    for action in parser._actions:
        if action.option_strings and action.dest != "help":
            found.setdefault(action.dest, action)
    return found


def _spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span(m.lastindex or 0) for m in pattern.finditer(text)]


def _inside(position: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= position < end for start, end in spans)


def _opener(text: str, position: int, quoted: list[tuple[int, int]]) -> int | None:
    """The index of the innermost bracket still open at ``position`` (quotes skipped)."""
    stack: list[int] = []
    index = 0
    while index < position:
        for start, end in quoted:
            if start == index:
                index = end
                break
        else:
            char = text[index]
            if char in "([{":
                stack.append(index)
            elif char in ")]}" and stack and text[stack[-1]] == _OPENERS[char]:
                stack.pop()
            index += 1
    return stack[-1] if stack else None


def _closing(text: str, start: int) -> int | None:
    """The index just past the bracket that closes the one at ``start``."""
    depth, quote, index = 0, "", start
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return None


def _value_end(text: str, start: int) -> int:
    """The index just past the value written at ``start`` (``start`` where none is)."""
    if text.startswith("...", start):
        return start + 3
    if start < len(text) and text[start] in "[{(":
        return _closing(text, start) or start
    quoted = _QUOTED.match(text, start)
    if quoted is not None:
        return quoted.end()
    word = _WORD.match(text, start)
    if word is None:
        return start
    end = word.end()
    while end > start and text[end - 1] == ".":  # a sentence's full stop
        end -= 1
    return end


def _shell(value: object) -> str:
    text = str(value)
    return text if re.fullmatch(r"[\w@%+=:,./-]+", text) else shlex.quote(text)


def _literal(text: str) -> object:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return ...


def _switch(action: argparse.Action, value: str, before: str) -> tuple[str, str] | None:
    """A switch's flag for ``name=value`` (with the text kept before it), or None."""
    given = {"": None, "True": True, "False": False}.get(value, ...)
    if given is ...:
        return None
    if isinstance(action, argparse.BooleanOptionalAction):
        negative = [o for o in action.option_strings if o.startswith("--no-")]
        positive = [o for o in action.option_strings if not o.startswith("--no-")]
        if given is None:
            return before, max(action.option_strings, key=len)
        return before, (positive if given else negative)[0]
    option = max(action.option_strings, key=len)
    sets = action.const if isinstance(action.const, bool) else not action.default
    if given is None or given == sets:
        return before, option
    # the value the command has without the switch: "pass strict=False" -> "drop --strict"
    if before.endswith("pass "):
        return before[: -len("pass ")], f"drop {option}"
    if before.endswith("with "):  # "evaluate it with per_query=False" -> "... without"
        return before[: -len("with ")], f"without {option}"
    return before, f"without {option}"


def _takes_none(action: argparse.Action) -> bool:
    """Whether the flag takes ``none`` as a value (a choice)."""
    return "none" in [str(c) for c in action.choices or ()]


def _flag(action: argparse.Action, value: str) -> str | None:
    """``--flag VALUE`` for a keyword's ``value`` as the message writes it, or None
    where the flag cannot take it as written."""
    option = max(action.option_strings, key=len)
    if not value:
        return option
    if value == "...":
        return f"{option} {action.metavar or 'VALUE'}"
    appended = isinstance(action, argparse._AppendAction)
    if value[0] in "[{(":
        given = _literal(value)
        if (
            appended
            and isinstance(given, list | tuple)
            and given
            and all(isinstance(v, str | int | float) for v in given)
        ):
            return " ".join(f"{option} {_shell(v)}" for v in given)
        if appended and isinstance(given, dict) and given and "=" in str(action.metavar):
            return " ".join(f"{option} {_shell(f'{k}={v}')}" for k, v in given.items())
        return None
    if value[0] in "'\"":
        given = _literal(value)
        return f"{option} {_shell(given)}" if isinstance(given, str) else None
    if value in ("True", "False", "None"):
        choice = value.lower()
        choices = [str(c) for c in action.choices or ()]
        return f"{option} {choice}" if choice in choices else None
    return f"{option} {value}"


def as_flags(message: str, flags: dict[str, argparse.Action]) -> str:
    """``message`` with the Python keyword arguments it suggests (``relevance='label'``)
    written as the command's ``flags`` (``--relevance label``), by their destination.

    Examples
    --------
    >>> from polars_irmetrics.cli.main import build_parser, _flags
    >>> flags = _flags(build_parser(), "evaluate")
    >>> as_flags("pass the column names, e.g. relevance='label' or rank=...", flags)
    'pass the column names, e.g. --relevance label or --rank COL'
    >>> print(as_flags("pass check_duplicates=False, or ndcg(gain='exponential')", flags))
    pass --no-duplicate-check, or ndcg(gain='exponential')
    >>> print(as_flags("create the folder, or pass spill_dir=None for the default", flags))
    create the folder, or drop --spill-dir for the default
    >>> print(as_flags("by=['day'] names 'day' in query 'q1' (order='x', rank=2)", flags))
    --by day names 'day' in query 'q1' (order='x', rank=2)
    >>> ab = _flags(build_parser(), "ab")
    >>> print(as_flags("split={'A': 1.0, 'B': 3} (arm='A'); or pass strict=False", ab))
    --split A=1.0 --split B=3 (arm='A'); or drop --strict
    >>> print(as_flags("seed=7 or irm.evaluate(run, qrels=...)", ab))
    seed=7 or irm.evaluate(run, qrels=...)
    >>> print(as_flags("'rbo' reads a reference run: pass reference=... to irm.evaluate", flags))
    'rbo' reads a reference run: pass --reference FILE
    """
    quoted = _spans(_QUOTED, message)
    places = [span for pattern in _PLACES for span in _spans(pattern, message)]
    out: list[str] = []
    done = 0
    for match in _KEYWORD.finditer(message):
        start = match.start()
        if start < done or _inside(start, quoted) or _inside(start, places):
            continue
        name = match.group("name")
        action = flags.get(name)
        for dest in _KEYWORD_DESTS.get(name, ()):
            action = action or flags.get(dest)
        if action is None or not action.option_strings:
            continue
        opener = _opener(message, start, quoted)
        if opener is not None and (
            message[opener] != "(" or (opener and re.match(r"[\w)\]]", message[opener - 1]))
        ):
            continue  # inside a list, a dict or a call: Python, not a flag
        end = _value_end(message, match.end())
        value = message[match.end() : end]
        if value and value[-1:] not in "'\"])}" and message[end : end + 1] in ("(", "["):
            continue  # a Python expression (queries=run.select(...)): no flag's value
        before = message[done:start]
        if action.nargs == 0:
            switched = _switch(action, value, before)
            if switched is None:
                continue
            before, written = switched
        elif (
            value == "None"
            and before.endswith("pass ")
            and action.default is None
            and not _takes_none(action)
        ):
            # the value the command has without the flag: "pass spill_dir=None" ->
            # "drop --spill-dir" (elsewhere, "spill_dir=None is ...", no flag's value)
            before = before[: -len("pass ")]
            written = f"drop {max(action.option_strings, key=len)}"
        else:
            found = _flag(action, value)
            if found is None:
                continue
            written = found
        out.append(before + written)
        done = end
    out.append(message[done:])
    # a flag is given to the command, not to the Python call the library's words name
    # ("pass reference=... to irm.evaluate": "pass --reference FILE")
    return _TO_CALL.sub(r"\1", "".join(out))


#: A flag written for a keyword (with its value's name, or none: "pass
#: --relevance-level to irm.compare instead"), followed by the Python call it was to be
#: given to (after what the table holds, in parentheses: "pass --groups FILE (one row
#: per (document, group)) to irm.evaluate").
_TO_CALL = re.compile(r"(pass --[\w-]+(?: [A-Z]+)?(?: \((?:[^()]|\([^()]*\))*\))?) to irm\.\w+\b")
