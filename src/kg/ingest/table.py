"""CSV and TSV with a header row. Column names are case-insensitive and take the usual aliases
(``Abstract``, ``summary``, ``Abstract Note`` …, see `kg.ingest.records.ALIASES`)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

from kg.errors import MalformedRecord, MissingColumn, RecordTooLarge
from kg.ingest.records import ABSTRACT_NAMES, MAX_ABSTRACT_CHARS, RawRecord, normalise_key


def guess_delimiter(header_line: str, *, default: str) -> str:
    """Tab if the header has tabs; ';' for a European-Excel CSV whose header has no comma."""
    if "\t" in header_line:
        return "\t"
    if default == "," and ";" in header_line and "," not in header_line:
        return ";"
    return default


def read_table(text: str, *, path: str, delimiter: str) -> Iterator[RawRecord | MalformedRecord]:
    first_line = text.split("\n", 1)[0]
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=guess_delimiter(first_line, default=delimiter), strict=True)
    try:
        header = next(reader, None)
    except csv.Error as error:
        raise MalformedRecord(f"bad CSV header: {error}", path=path, line=1) from None
    if header is None:
        return
    names = [name.strip() for name in header]
    if not any(normalise_key(name) in ABSTRACT_NAMES for name in names):
        raise MissingColumn(
            f"no abstract column (expected one of: {', '.join(ABSTRACT_NAMES)}); the header has: {', '.join(names) or 'nothing'}",
            path=path,
            line=1,
        )
    while True:
        line = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:  # e.g. an unclosed quote: the rest of the file cannot be trusted
            if "field larger than field limit" in str(error):
                limit = csv.field_size_limit()
                message = f"a field has over {limit:,} characters (the limit for an abstract is {MAX_ABSTRACT_CHARS:,})"
                raise RecordTooLarge(message, path=path, line=line) from None
            raise MalformedRecord(f"bad CSV: {error}", path=path, line=line) from None
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(names):
            yield MalformedRecord(
                f"row has {len(row)} fields but the header has {len(names)} (an unquoted delimiter in a value?)", path=path, line=line
            )
            continue
        yield RawRecord(line, dict(zip(names, row, strict=False)))
