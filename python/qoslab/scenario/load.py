"""Reading a scenario: TOML, then the models, then the cross-references, every problem reported.

Positions come from :func:`qoslab._core.toml_key_spans` (``tomllib`` keeps none).
A problem is located at the offending *value* when the value is wrong, at the *key*
when the key is unknown, and at the enclosing table's header when a key is missing.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from qoslab.errors import InputError, Problem, did_you_mean
from qoslab.scenario.model import NODE_NAME_PATTERN, FieldProblem, Scenario
from qoslab.units import UnitError

PathT = tuple[str | int, ...]

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def format_path(path: PathT) -> str:
    """A key path as a person reads it: ``link[2].ends[1]``, ``node.ws1.address``.

    >>> format_path(("link", 2, "ends", 1))
    'link[2].ends[1]'
    >>> format_path(("sweep", "link[0].rate"))
    'sweep."link[0].rate"'
    """
    text = ""
    for step in path:
        if isinstance(step, int):
            text += f"[{step}]"
        else:
            part = step if _BARE_KEY.match(step) else '"' + step.replace('"', '\\"') + '"'
            text += ("." if text else "") + part
    return text


def show(value: Any) -> str:
    """A value as it would be written in TOML, for 'found:' lines.

    >>> show("ws3"), show(True), show([1, "a"]), show({"x": 1})
    ("'ws3'", 'true', "[1, 'a']", '{ x = 1 }')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {show(v)}" for k, v in value.items()) + " }" if value else "{}"
    if isinstance(value, list):
        return "[" + ", ".join(show(v) for v in value) + "]"
    return repr(value)


def one_of(choices: list[str] | tuple[str, ...]) -> str:
    """'one of 'a', 'b', 'c'' (or the one choice)."""
    quoted = [repr(c) for c in choices]
    if len(quoted) == 1:
        return quoted[0]
    return "one of " + ", ".join(quoted)


_WIDE_INTEGER = re.compile(r"(?<![\w.\"'])[+-]?\d[\d_]{18,}(?![\w.\"'])")
"""A decimal integer of 19 digits or more: possibly past TOML's 64 bits."""


class Spans:
    """Positions of keys and values in one TOML text."""

    def __init__(self, text: str) -> None:
        self._spans: dict[PathT, tuple[Any, Any]] = {}
        try:
            from qoslab._core import toml_key_spans
        except ImportError:  # pragma: no cover - a build without the core
            return
        try:
            self._spans = toml_key_spans(text)
        except Exception:  # a text tomllib reads but toml_edit does not
            # toml_edit refuses integers past 64 bits (TOML 1.0: 'an error must be
            # thrown'), which tomllib reads, and the checks then refuse with their
            # place (a seed of 2^64): positions are found with each such integer
            # read as a string of the same width, so every column stays.
            wide = _WIDE_INTEGER.sub(lambda m: '"' + "0" * (len(m[0]) - 2) + '"', text)
            try:
                self._spans = toml_key_spans(wide) if wide != text else {}
            except Exception:
                self._spans = {}

    def _lookup(self, path: PathT, which: int) -> tuple[int | None, int | None]:
        path = tuple(path)
        while path:
            pair = self._spans.get(path)
            if pair is not None:
                pos = pair[which] or pair[1 - which]
                if pos:
                    return pos[0], pos[1]
            path = path[:-1]
        return None, None

    def value(self, path: PathT) -> tuple[int | None, int | None]:
        """Where the value at ``path`` starts (or its nearest enclosing entry)."""
        return self._lookup(path, 1)

    def key(self, path: PathT) -> tuple[int | None, int | None]:
        """Where the key of ``path`` is written (or its nearest enclosing entry)."""
        return self._lookup(path, 0)


def problem(spans: Spans, path: PathT, message: str, *, at: str = "value", **kw: Any) -> Problem:
    """A Problem at ``path``, positioned at its value (``at='value'``) or its key."""
    line, column = spans.value(path) if at == "value" else spans.key(path)
    return Problem(message, key=format_path(path) or None, line=line, column=column, **kw)


# --------------------------------------------------------------------------- pydantic errors


def _resolve(data: Any, loc: tuple[Any, ...], missing: bool = False) -> tuple[PathT, Any, bool]:
    """Map a pydantic ``loc`` onto the raw data.

    Drops the steps pydantic adds that are not keys of the input (a discriminated
    union's tag, ``function-after[...]``), and the steps into a scalar that a
    before-validator wrapped into a list. Returns the path, the value there, and
    whether the path exists in the input.
    """
    path: list[str | int] = []
    cur = data
    exists = True
    for i, step in enumerate(loc):
        last = i == len(loc) - 1
        if isinstance(cur, dict) and isinstance(step, str) and step in cur:
            path.append(step)
            cur = cur[step]
        elif isinstance(cur, list) and isinstance(step, int) and 0 <= step < len(cur):
            path.append(step)
            cur = cur[step]
        elif isinstance(cur, dict) and isinstance(step, str) and last and missing:
            path.append(step)  # a missing key: the path names it, the data has none
            exists = False
            cur = None
        elif isinstance(cur, (dict, list)):
            continue  # a union tag or a validator's name
        else:
            break  # into a scalar a validator wrapped
    return tuple(path), cur, exists


def _model_at(path: PathT, data: Any) -> type[BaseModel] | None:
    """The model class that validates the table at ``path`` (to list its keys)."""
    tp: Any = Scenario
    cur = data
    for step in path:
        tp = _unwrap(tp, cur)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            field = tp.model_fields.get(str(step)) or next(
                (f for f in tp.model_fields.values() if f.alias == step), None
            )
            if field is None:
                return None
            tp = field.annotation
        elif get_origin(tp) in (list, dict):
            tp = get_args(tp)[-1]
        else:
            return None
        if isinstance(cur, dict) and _has(cur, step):
            cur = cur[step]
        elif isinstance(cur, list) and isinstance(step, int) and _has(cur, step):
            cur = cur[step]
        else:
            cur = None
    tp = _unwrap(tp, cur)
    return tp if isinstance(tp, type) and issubclass(tp, BaseModel) else None


def _has(container: Any, step: Any) -> bool:
    if isinstance(container, dict):
        return step in container
    return isinstance(step, int) and 0 <= step < len(container)


def _unwrap(tp: Any, data: Any) -> Any:
    """Strip Annotated/Optional; pick a discriminated union's member by the data's tag."""
    from typing import Annotated

    while True:
        origin = get_origin(tp)
        if origin is Annotated:
            tp = get_args(tp)[0]
        elif origin is Union or str(origin) == "types.UnionType" or type(tp).__name__ == "UnionType":
            members = [a for a in get_args(tp) if a is not type(None)]
            models = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]
            if len(members) == 1:
                tp = members[0]
                continue
            if models and isinstance(data, dict):
                for m in models:
                    for name, f in m.model_fields.items():
                        args = get_args(f.annotation)
                        if getattr(get_origin(f.annotation), "__name__", "") == "Literal" or (
                            args and name in ("type", "role", "method", "model")
                        ):
                            if name in data and data[name] in args:
                                return m
                return models[0] if len(models) == 1 else None
            return tp
        else:
            return tp


def _union_tags(path: PathT, discriminator: str) -> list[str]:
    """The tags a discriminated union accepts, for the table at ``path``."""
    from qoslab.scenario import model as m

    union = {"link": m.Link, "tunnel": m.Tunnel, "test": m.Test, "node": m.Node, "loss": m.Loss}
    keys = [step for step in path if isinstance(step, str)]
    which = "loss" if "loss" in keys else (keys[0] if keys else "")
    if which not in union:
        return []
    members = get_args(get_args(union[which])[0])
    tags: list[str] = []
    for member in members:
        field = member.model_fields.get(discriminator)
        if field is not None:
            tags += [str(a) for a in get_args(field.annotation)]
    return tags


def _kinds_with_field(path: PathT, key: str) -> list[str]:
    """The kinds of table (``role = 'bridge'``) that do have ``key``, for a hint."""
    from qoslab.scenario import model as m

    union = {
        "link": (m.Link, "type"),
        "tunnel": (m.Tunnel, "type"),
        "test": (m.Test, "method"),
        "node": (m.Node, "role"),
    }
    if len(path) != 2 or path[0] not in union:
        return []
    tp, disc = union[str(path[0])]
    kinds = []
    for member in get_args(get_args(tp)[0]):
        if any(key in (name, f.alias) for name, f in member.model_fields.items()):
            kinds += [f"{disc} = {a!r}" for a in get_args(member.model_fields[disc].annotation)]
    return kinds


def _fields_of(model: type[BaseModel]) -> list[str]:
    return [f.alias or name for name, f in model.model_fields.items()]


_TYPE_WORDS = {
    "int": "an integer",
    "float": "a number",
    "string": "a string",
    "bool": "true or false",
    "list": "a list",
    "dict": "a table",
    "model": "a table",
    "tuple": "a list",
}


def _type_word(error_type: str) -> str | None:
    for prefix, word in _TYPE_WORDS.items():
        if error_type.startswith(prefix + "_"):
            return word
    return None


def _toml_type(value: Any) -> str:
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a table",
    }.get(type(value), type(value).__name__)


def _field_doc(model: type[BaseModel] | None, key: str) -> str | None:
    if model is None:
        return None
    for name, f in model.model_fields.items():
        if key in (name, f.alias):
            return f.description
    return None


def pydantic_problems(err: ValidationError, data: dict[str, Any], spans: Spans) -> list[Problem]:
    """Turn a ValidationError into positioned Problems, one per error."""
    return [_problem_of(e, data, spans) for e in err.errors(include_url=False)]


def _holds(table: Any, keys: tuple[str, ...]) -> bool:
    """Whether ``table`` has the key path ``keys``, each key in the table of the one before."""
    for key in keys:
        if not isinstance(table, dict) or key not in table:
            return False
        table = table[key]
    return True


def _problem_of(e: ErrorDetails, data: dict[str, Any], spans: Spans) -> Problem:
    """One pydantic error as a Problem at its key, in the scenario language's words."""
    kind = e["type"]
    path, value, exists = _resolve(data, tuple(e["loc"]), missing=kind == "missing")
    ctx = e.get("ctx") or {}
    inner = ctx.get("error")
    if kind == "extra_forbidden":
        return _unknown_key(path, data, spans)
    if kind == "missing":
        return _missing_key(path, data, spans)
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        return _union_tag_problem(kind, ctx, path, spans)
    if isinstance(inner, UnitError):
        return problem(spans, path, inner.message, expected=inner.expected, found=inner.found, hint=inner.hint)
    if isinstance(inner, FieldProblem):
        # The key as written (a sweep's ``"test[0].payload"``), else a dotted key
        # (``preambles.sta``) naming a key of a sub-table of the table.
        keys = (inner.key,) if _holds(value, (inner.key,)) else tuple(inner.key.split("."))
        where = path + keys if _holds(value, keys) else path
        return problem(spans, where, inner.message, expected=inner.expected, found=inner.found, hint=inner.hint)
    if kind == "literal_error":
        choices = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        found = value if exists else e.get("input")
        return problem(
            spans,
            path,
            "not an accepted value",
            expected=one_of(choices) if choices else str(ctx.get("expected")),
            found=show(found),
            hint=did_you_mean(str(found), choices) if isinstance(found, str) and choices else None,
        )
    if _type_word(kind) and kind != "string_pattern_mismatch":
        found = value if exists else e.get("input")
        return problem(
            spans, path, "wrong type", expected=_type_word(kind), found=f"{show(found)} ({_toml_type(found)})"
        )
    if kind.startswith("ip_v4"):
        what = {
            "ip_v4_interface": "an IPv4 address with prefix length such as '192.168.1.10/24'",
            "ip_v4_network": "an IPv4 prefix such as '192.168.0.0/24' (host bits zero)",
            "ip_v4_address": "an IPv4 address such as '192.168.1.1'",
        }.get(kind, e["msg"])
        return problem(
            spans, path, "not an IPv4 " + kind.removeprefix("ip_v4_"), expected=what, found=show(e.get("input"))
        )
    msg, expected = _constraint_words(kind, e["msg"], ctx)
    return problem(spans, path, msg, expected=expected, found=show(e.get("input")))


def _unknown_key(path: PathT, data: dict[str, Any], spans: Spans) -> Problem:
    model = _model_at(path[:-1], data)
    choices = _fields_of(model) if model else []
    if path[:1] == ("sweep",):
        choices = ["mode", "replications"]
    key = str(path[-1])
    hint = did_you_mean(key, choices) if choices else None
    owners = _kinds_with_field(path[:-1], key)
    if owners and not hint:
        hint = f"only tables with {' or '.join(owners)} have {key!r}"
    return problem(
        spans,
        path,
        "unknown key",
        at="key",
        expected=one_of(choices) if choices else None,
        found=repr(key),
        hint=hint,
    )


def _missing_key(path: PathT, data: dict[str, Any], spans: Spans) -> Problem:
    model = _model_at(path[:-1], data)
    doc = _field_doc(model, str(path[-1]))
    found = (
        problem(spans, path[:-1], f"missing required key {str(path[-1])!r}", expected=doc, found="nothing")
        if path[:-1]
        else Problem(
            f"missing required table or key {str(path[-1])!r}",
            key=format_path(path),
            expected=doc,
            found="nothing",
            line=1,
            column=1,
        )
    )
    found.key = format_path(path)
    return found


def _union_tag_problem(kind: str, ctx: dict[str, Any], path: PathT, spans: Spans) -> Problem:
    """A table whose kind key (``type``, ``role``, ``method``) is missing or unknown."""
    disc = str(ctx.get("discriminator", "")).strip("'")
    tags = [t.strip().strip("'") for t in str(ctx.get("expected_tags", "")).split(",") if t.strip()]
    tags = tags or _union_tags(path, disc)
    where = path + (disc,)
    if kind == "union_tag_not_found":
        missing = problem(spans, path, f"missing required key {disc!r}", expected=one_of(tags), found="nothing")
        missing.key = format_path(where)
        return missing
    tag = str(ctx.get("tag", ""))
    return problem(
        spans,
        where,
        f"unknown {disc}",
        expected=one_of(tags),
        found=repr(tag),
        hint=did_you_mean(tag, tags),
    )


def _constraint_words(kind: str, message: str, ctx: dict[str, Any]) -> tuple[str, str | None]:
    """(message, expected) for a value that breaks a field's constraint (a bound, a
    pattern, a length) or any other error pydantic words itself."""
    msg = message.removeprefix("Value error, ")
    expected = None
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        sign = {"greater_than_equal": ">=", "less_than_equal": "<=", "greater_than": ">", "less_than": "<"}[kind]
        expected = f"a number {sign} {ctx[next(iter(ctx))]}"
        msg = "out of range"
    elif kind == "string_pattern_mismatch" and ctx.get("pattern") == NODE_NAME_PATTERN:
        expected = "a node's name: a key of the [node.*] tables (a letter, then letters, digits, '_', '.' or '-')"
        msg = "not a node name"
    elif kind == "string_pattern_mismatch":
        expected = f"text matching {ctx.get('pattern')}"
        msg = "not an accepted form"
    elif kind in ("too_short", "too_long"):
        bound = ctx.get("min_length") if kind == "too_short" else ctx.get("max_length")
        msg = "too few items" if kind == "too_short" else "too many items"
        expected = f"{'at least' if kind == 'too_short' else 'at most'} {bound} item{'s' if bound != 1 else ''}"
    else:
        msg = msg[0].lower() + msg[1:] if msg else kind
    return msg, expected


# --------------------------------------------------------------------------- entry points

_TOML_POS = re.compile(r"^(?P<msg>.*?)\s*\(at line (?P<line>\d+), column (?P<col>\d+)\)$")
_TOML_EOF = re.compile(r"^(?P<msg>.*?)\s*\(at end of document\)$")


def _syntax_problem(err: tomllib.TOMLDecodeError, text: str) -> Problem:
    message = str(err)
    m = _TOML_POS.match(message)
    if m:
        return Problem(
            f"TOML syntax error: {m['msg'][0].lower()}{m['msg'][1:]}", line=int(m["line"]), column=int(m["col"])
        )
    m = _TOML_EOF.match(message)
    if m:
        lines = text.split("\n")
        return Problem(
            f"TOML syntax error: {m['msg'][0].lower()}{m['msg'][1:]}", line=len(lines), column=len(lines[-1]) + 1
        )
    return Problem(f"TOML syntax error: {message}")


MAX_SCENARIO_BYTES = 4 * 1024 * 1024
"""The largest scenario file read. The largest example is under 10 kB; a 10,000-host
network written out node by node is about 1 MB. Read in one bounded call, so /dev/zero
or a pipe that never ends is refused instead of filling memory."""
MAX_NESTING = 32
"""Deepest nesting of arrays and inline tables (a header counts one). The language's own
deepest value (a sweep's list of lists inside an inline table) is 4 deep; tomllib
recurses once per level and would end in a RecursionError near 1,000."""
MAX_KEY_PARTS = 32
"""Most parts in one dotted key or table header: the language's longest is 4
(``node.a.cpu.profile``); thousands of parts make thousands of nested tables."""


def _shape_problem(text: str) -> Problem | None:
    """The first place where ``text`` is nested deeper, or has a longer dotted key, than
    the bounds above, found by a scan that knows TOML's strings and comments (TOML 1.0
    §Strings, §Comment) and nothing else, so that it runs before the parser.

    >>> print(_shape_problem("a = " + "[" * 40 + "]" * 40).render("x.toml"))
    x.toml:1:37: TOML nested deeper than 32 levels
        expected: at most 32 levels of arrays and inline tables
        found:    more
    >>> _shape_problem("a.b.c = 1") is None
    True
    """
    depth = 0
    line, column = 1, 0
    parts = 1
    in_key = True  # at a line's start, before '=': dots separate key parts
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        column += 1
        if ch == "\n":
            line, column, parts, in_key = line + 1, 0, 1, depth == 0
        elif ch == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif ch in "\"'":
            quote = text[i : i + 3] if text[i : i + 3] in ('"""', "'''") else ch
            j = i + len(quote)
            while True:
                k = text.find(quote, j)
                if k < 0:
                    return None  # unterminated: the parser says where
                if quote[0] == '"' and _escaped(text, k):
                    j = k + 1
                    continue
                break
            skipped = text[i : k + len(quote)]
            newlines = skipped.count("\n")
            if newlines:
                line += newlines
                column = len(skipped) - skipped.rfind("\n") - 1
            else:
                column += len(skipped) - 1
            i = k + len(quote)
            continue
        elif ch in "[{":
            depth += 1
            if depth > MAX_NESTING:
                return Problem(
                    f"TOML nested deeper than {MAX_NESTING} levels",
                    expected=f"at most {MAX_NESTING} levels of arrays and inline tables",
                    found="more",
                    line=line,
                    column=column,
                )
        elif ch in "]}":
            depth = max(0, depth - 1)
        elif ch == "=":
            in_key = False
        elif ch == "," and depth > 0:
            in_key = text[i - 1 : i] != "" and _inline_table_open(text, i)
            parts = 1
        elif ch == "." and (in_key or _in_header(text, i)):
            parts += 1
            if parts > MAX_KEY_PARTS:
                return Problem(
                    f"a dotted key of more than {MAX_KEY_PARTS} parts",
                    expected=f"at most {MAX_KEY_PARTS} parts, such as node.a.cpu",
                    found="more",
                    line=line,
                    column=column,
                )
        i += 1
    return None


def _escaped(text: str, k: int) -> bool:
    """Whether the quote at ``k`` is escaped by an odd run of backslashes."""
    run = 0
    while k - run - 1 >= 0 and text[k - run - 1] == "\\":
        run += 1
    return run % 2 == 1


def _in_header(text: str, i: int) -> bool:
    """Whether position ``i`` is inside a ``[table]`` header (the line starts with '[')."""
    start = text.rfind("\n", 0, i) + 1
    return text[start:i].lstrip().startswith("[") and "=" not in text[start:i]


def _inline_table_open(text: str, i: int) -> bool:
    """Whether the innermost open bracket before ``i`` is an inline table's '{' (after a
    comma in an inline table comes a key; in an array, a value)."""
    depth = 0
    for j in range(i - 1, max(-1, i - 4096), -1):
        c = text[j]
        if c in "]}":
            depth += 1
        elif c in "[{":
            if depth == 0:
                return c == "{"
            depth -= 1
    return False


def loads_scenario(text: str, source: str = "<string>") -> Scenario:
    """Read and validate a scenario from TOML text.

    Parameters
    ----------
    text:
        The TOML text.
    source:
        A name for the text in error messages (a file name).

    Returns
    -------
    Scenario
        The validated scenario.

    Raises
    ------
    InputError
        With every problem found, each with line, column, key path, what was expected
        and what was found.

    Examples
    --------
    >>> sc = loads_scenario('''
    ... [scenario]
    ... name = "two hosts"
    ... [node.a]
    ... role = "host"
    ... [node.b]
    ... role = "host"
    ... [[link]]
    ... type = "ethernet"
    ... rate = "10 Mbps"
    ... ends = ["a", "b"]
    ... ''')
    >>> sc.link[0].rate
    10000000
    >>> loads_scenario('[scenario]\\nname = "x"\\n[[link]]\\ntype = "ethernt"\\n', "demo.toml")
    Traceback (most recent call last):
    ...
    qoslab.errors.InputError: demo.toml:4:8: link[0].type: unknown type
        expected: one of 'ethernet', 'wifi', 'serial', 'atm'
        found:    'ethernt'
        hint:     did you mean 'ethernet'?
    """
    from qoslab.scenario.checks import cross_check

    shape = _shape_problem(text)
    if shape is not None:
        raise InputError(source, [shape]) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise InputError(source, [_syntax_problem(err, text)]) from None
    except RecursionError:  # deeper than the scan above counts (it never should be)
        raise InputError(source, [Problem("TOML nested too deeply to read")]) from None
    spans = Spans(text)
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as err:
        problems = pydantic_problems(err, data, spans)
        raise InputError(source, sorted(problems, key=_order)) from None
    problems = cross_check(scenario, data, spans)
    if problems:
        raise InputError(source, sorted(problems, key=_order))
    scenario._raw = data
    scenario._source = source
    return scenario


def _order(p: Problem) -> tuple[int, int]:
    return (p.line or 0, p.column or 0)


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file.

    Parameters
    ----------
    path:
        A TOML file.

    Raises
    ------
    InputError
        For a missing or unreadable file, text that is not UTF-8 or not TOML, and
        every problem in the scenario (see :func:`loads_scenario`).

    Examples
    --------
    >>> load_scenario("no/such/file.toml")
    Traceback (most recent call last):
    ...
    qoslab.errors.InputError: no/such/file.toml: cannot read the scenario: no such file
    """
    source = str(path)
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_SCENARIO_BYTES + 1)
    except FileNotFoundError:
        raise InputError(source, [Problem("cannot read the scenario: no such file")]) from None
    except IsADirectoryError:
        raise InputError(
            source, [Problem("cannot read the scenario: it is a directory", expected="a TOML file")]
        ) from None
    except OSError as err:
        raise InputError(source, [Problem(f"cannot read the scenario: {err.strerror or err}")]) from None
    if len(raw) > MAX_SCENARIO_BYTES:
        raise InputError(
            source,
            [
                Problem(
                    "the scenario is too large to read",
                    expected=f"at most {MAX_SCENARIO_BYTES // (1024 * 1024)} MiB of TOML",
                    found="more",
                )
            ],
        ) from None
    if b"\0" in raw:
        at = raw.index(b"\0")
        line = raw[:at].count(b"\n") + 1
        raise InputError(
            source,
            [
                Problem(
                    "not a text file",
                    expected="a UTF-8 TOML file",
                    found="a NUL byte",
                    line=line,
                    column=at - (raw.rfind(b"\n", 0, at) + 1) + 1,
                )
            ],
        ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        column = err.start - (raw.rfind(b"\n", 0, err.start) + 1) + 1
        raise InputError(
            source,
            [
                Problem(
                    "not UTF-8 text",
                    expected="a UTF-8 TOML file",
                    found=f"byte 0x{raw[err.start]:02x}",
                    line=line,
                    column=column,
                )
            ],
        ) from None
    return loads_scenario(text, source)
