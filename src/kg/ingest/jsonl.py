"""JSON Lines (one object per line) and JSON (an array of objects, or one object).

An object holding a ``results`` array and a ``meta`` object is a page of an API (OpenAlex's,
say): its results are the records, in a .json file or on a line of JSON Lines (pages saved one
per line). A record holding what JSON has no value for (``NaN``, ``Infinity``, ``1e400``) is
one bad record, named by its line, in an array and in a page alike: the others are read.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator

from kg.errors import MalformedRecord
from kg.ingest.records import RawRecord

_WHITESPACE = " \t\n\r"
_BOM = "\ufeff"


class NotJson(ValueError):
    """What Python's json module reads but JSON has no value for: ``NaN``, ``Infinity``,
    ``-Infinity`` (became ids "nan", "inf", and a year of NaN no year), or a number too large
    for a float (``1e400`` became inf)."""


def _constant(name: str) -> float:
    raise NotJson(f"not valid JSON: {name} is not a JSON value")


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise NotJson(f"not usable JSON: the number {text if len(text) <= 20 else text[:19] + '…'} is too large")
    return value


# Every JSON input is read by this decoder: standard JSON, numbers that fit.
DECODER = json.JSONDecoder(parse_constant=_constant, parse_float=_finite)
# What Python reads (NaN, Infinity, 1e400 too): only to find where values end around a bad record.
_LENIENT = json.JSONDecoder()


def read_json_lines(text: str, *, path: str) -> Iterator[RawRecord | MalformedRecord]:
    """One record per non-blank line; a bad line is yielded as an error so `--skip-invalid` can go on."""
    loads = DECODER.decode
    for number, line in enumerate(text.split("\n"), 1):
        if not line or line.isspace():
            continue
        if line[0] == _BOM:  # files joined with `cat`, each starting with a byte-order mark
            line = line[1:]
        try:
            value = loads(line)
        except json.JSONDecodeError as error:
            yield MalformedRecord(_json_error(error), path=path, line=number)
            continue
        except NotJson as error:
            if _lenient_page(line):  # a page saved on one line: only the bad record goes
                start = len(line) - len(line.lstrip(_WHITESPACE))
                yield from _read_array(line, _results_start(line, start), path=path, nested=True, first_line=number)
            else:
                yield MalformedRecord(str(error), path=path, line=number)
            continue
        except (ValueError, RecursionError) as error:
            yield MalformedRecord(_limit_error(error), path=path, line=number)
            continue
        if is_page(value):
            for result in value["results"]:
                yield RawRecord(number, result) if isinstance(result, dict) else MalformedRecord(f"expected a JSON object, found {_kind(result)}", path=path, line=number)
        elif isinstance(value, dict):
            yield RawRecord(number, value)
        else:
            yield MalformedRecord(f"expected a JSON object, found {_kind(value)}", path=path, line=number)


def is_page(value: object) -> bool:
    """``{"meta": {…}, "results": [...]}``: a page of API results (OpenAlex), not a record."""
    return isinstance(value, dict) and isinstance(value.get("results"), list) and isinstance(value.get("meta"), dict)


def read_json(text: str, *, path: str) -> Iterator[RawRecord | MalformedRecord]:
    """An array of objects, a single object, or (despite the .json name) JSON Lines.

    Records in an array are located by line for messages; a syntax error inside the array
    cannot be skipped (the rest of the array cannot be found reliably), so it is raised.
    """
    start = len(text) - len(text.lstrip(_WHITESPACE))
    if text.startswith("[", start):
        yield from _read_array(text, start, path=path)
        return
    try:
        value = DECODER.decode(text)
    except json.JSONDecodeError as error:
        if error.msg == "Extra data":  # several top-level values: JSON Lines in a .json file
            yield from read_json_lines(text, path=path)
            return
        raise MalformedRecord(_json_error(error), path=path, line=error.lineno) from None
    except NotJson as error:
        if _lenient_page(text):  # a page: only the bad record goes, as in an array
            yield from _read_array(text, _results_start(text, start), path=path, nested=True)
        else:  # one bad record (located by its first line, as the other limits are)
            yield MalformedRecord(str(error), path=path, line=text.count("\n", 0, start) + 1)
        return
    except (ValueError, RecursionError) as error:
        raise MalformedRecord(_limit_error(error), path=path, line=text.count("\n", 0, start) + 1) from None
    if not isinstance(value, dict):
        raise MalformedRecord(f"expected a JSON array or object, found {_kind(value)}", path=path, line=1)
    if is_page(value):
        yield from _read_array(text, _results_start(text, start), path=path, nested=True)
        return
    yield RawRecord(text.count("\n", 0, start) + 1, value)


def _lenient_page(text: str) -> bool:
    """Whether `text`, read as Python reads JSON (NaN and all), is a page (`is_page`)."""
    try:
        return is_page(_LENIENT.decode(text))
    except (ValueError, RecursionError):
        return False


def _results_start(text: str, start: int) -> int:
    """Where the value of the top-level object's (last) "results" key begins; the text is JSON
    (but for what `NotJson` refuses: a NaN in one record, or in the meta, which kg does not read)."""
    decoder = _LENIENT
    position, found = _skip(text, start + 1), -1
    while text[position] != "}":
        key, position = decoder.raw_decode(text, position)
        position = _skip(text, _skip(text, position) + 1)  # past the ':'
        if key == "results":
            found = position  # json.loads keeps the last of repeated keys: so does this
        position = _skip(text, decoder.raw_decode(text, position)[1])
        if text[position] == ",":
            position = _skip(text, position + 1)
    return found


def _read_array(text: str, start: int, *, path: str, nested: bool = False, first_line: int = 1) -> Iterator[RawRecord | MalformedRecord]:
    """The objects of the array at `start`, each located by its line (`text` begins on
    `first_line`); `nested`: the array is a value inside an object already parsed, so nothing
    after it is checked."""
    decoder = DECODER
    position = _skip(text, start + 1)
    line, counted = first_line, 0
    expect_value = True
    while True:
        if position >= len(text):
            raise MalformedRecord("not valid JSON: the array is not closed with ']'", path=path, line=text.count("\n") + 1)
        if text[position] == "]" and (not expect_value or counted == 0):
            break
        value: object
        try:
            value, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError as error:
            raise MalformedRecord(_json_error(error), path=path, line=error.lineno) from None
        except NotJson as error:  # one bad record: read as Python reads it only to find where it ends
            value, end = error, _LENIENT.raw_decode(text, position)[1]
        except (ValueError, RecursionError) as error:
            raise MalformedRecord(_limit_error(error), path=path, line=line + text.count("\n", counted, position)) from None
        line += text.count("\n", counted, position)
        counted = position
        if isinstance(value, NotJson):
            yield MalformedRecord(str(value), path=path, line=line)
        elif isinstance(value, dict):
            yield RawRecord(line, value)
        else:
            yield MalformedRecord(f"expected a JSON object, found {_kind(value)}", path=path, line=line)
        position = _skip(text, end)
        if position < len(text) and text[position] == ",":
            position = _skip(text, position + 1)
            expect_value = True
        else:
            expect_value = False
            if position >= len(text) or text[position] != "]":
                where = text.count("\n", 0, min(position, len(text))) + 1
                raise MalformedRecord("not valid JSON: expected ',' or ']' after an array item", path=path, line=where)
    if nested:
        return
    trailing = _skip(text, position + 1)
    if trailing < len(text):
        raise MalformedRecord("not valid JSON: extra data after the array", path=path, line=text.count("\n", 0, trailing) + 1)


def _json_error(error: json.JSONDecodeError) -> str:
    # json's messages end in "at" ("Unterminated string starting at"); avoid "at at".
    return f"not valid JSON: {error.msg.removesuffix(' at')} at column {error.colno}"


def _limit_error(error: ValueError | RecursionError) -> str:
    """What Python's json module refuses beyond the grammar: nesting deeper than the stack, or an
    integer too long to convert (over 4,300 digits)."""
    if isinstance(error, RecursionError):
        return "not usable JSON: values nested too deeply"
    return "not usable JSON: a number with too many digits"


def _skip(text: str, position: int) -> int:
    while position < len(text) and text[position] in _WHITESPACE:
        position += 1
    return position


def _kind(value: object) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(type(value), "a number")
