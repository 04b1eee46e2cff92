"""Reading records from JSONL, JSON, CSV, TSV, Parquet and XLSX files, with precise errors.

Every reader yields ``(line, record)`` pairs, where ``line`` is what a user looks for in
the file: the 1-based line of a JSONL file, the row's line in a CSV/TSV/XLSX file (the
header is line 1), the 1-based position in a JSON list or a Parquet file.

JSON is parsed by :func:`jurist.safe_load.loads_json`: a key given twice in one object and
nesting deeper than 100 levels are errors naming the file and line (Python's ``json`` would
keep the last value, or fail deep inside jurist). A Parquet column of binary values is read as
UTF-8 text (a cell that is not UTF-8 is an error naming its row and column), so an id
written as bytes is the same id as the text. :func:`normalise_id` puts every row id in
Unicode's composed form (NFC).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re
import unicodedata
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jurist.errors import InputError, install_hint
from jurist.safe_load import JSONLimitError, loads_json, raw_decode_json

Record = dict[str, Any]
SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".parquet", ".xlsx")


def sha256_file(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


BOM = b"\xef\xbb\xbf"


def not_utf8(path: str | Path, data: bytes, exc: UnicodeDecodeError, *, offset: int = 0) -> InputError:
    """The error for bytes that are not UTF-8: the file, the line, and the byte offset.

    Args:
        path: The file.
        data: The bytes that failed to decode, read from the file's byte ``offset``.
        exc: The decoding error (``exc.start`` indexes ``data``).
        offset: Where ``data`` starts in the file.
    """
    position = offset + exc.start
    line = data.count(b"\n", 0, exc.start) + 1
    bad = data[exc.start : exc.start + 1].hex()
    return InputError(
        f"not UTF-8 text (byte 0x{bad} at byte offset {position}); save the file as UTF-8",
        path=path,
        line=line,
    )


def read_text(path: str | Path) -> str:
    """A whole text file as UTF-8, a leading byte-order mark dropped, CRLF kept as is.

    Raises:
        InputError: The file is missing, a directory, or not UTF-8 (named with line and byte offset).
    """
    file = Path(path)
    check_file(file)
    data = file.read_bytes()
    skip = len(BOM) if data.startswith(BOM) else 0
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as exc:
        error = not_utf8(file, data[skip:], exc, offset=skip)
        raise error from None


def iter_text_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """Stream ``(line, text)`` from a UTF-8 file (a leading byte-order mark dropped).

    Raises:
        InputError: A line is not UTF-8 (named with its line number and byte offset).
    """
    file = Path(path)
    check_file(file)
    offset = 0
    with open(file, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            skip = len(BOM) if number == 1 and raw.startswith(BOM) else 0
            try:
                text = raw[skip:].decode("utf-8")
            except UnicodeDecodeError as exc:
                error = not_utf8(file, raw[skip:], exc, offset=offset + skip)
                error = InputError(error.reason, path=file, line=number)
                raise error from None
            offset += len(raw)
            yield number, text


def check_file(file: Path) -> None:
    """Raise the :class:`InputError` a user needs when ``file`` is missing or a directory."""
    if file.is_dir():
        raise InputError("is a directory; expected a file", path=file)
    if not file.exists():
        raise InputError("file not found", path=file)


def iter_jsonl_values(path: str | Path) -> Iterator[tuple[int, Any]]:
    """Stream ``(line, value)`` from a JSONL file; blank lines are skipped.

    Raises:
        InputError: A line is not UTF-8 or not valid JSON (named by its number and column).
    """
    for number, line in iter_text_lines(path):
        if not line.strip():
            continue
        try:
            value = loads_json(line)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"not valid JSON ({exc.msg} at column {exc.colno})", path=path, line=number
            ) from None
        except JSONLimitError as exc:
            raise InputError(exc.reason, path=path, line=number) from None
        yield number, value


def _iter_jsonl(path: Path) -> Iterator[tuple[int, Record]]:
    for number, record in iter_jsonl_values(path):
        if not isinstance(record, dict):
            raise InputError("each line must be a JSON object", path=path, line=number)
        yield number, record


def _iter_json(path: Path) -> Iterator[tuple[int, Record]]:
    text = read_text(path)
    if not text.strip():
        return
    try:
        data = loads_json(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc.msg})", path=path, line=exc.lineno) from None
    except JSONLimitError as exc:
        raise InputError(exc.reason, path=path, line=_refused_record(text)) from None
    if isinstance(data, dict):
        # A JSON object holding the list, e.g. {"data": [...]}, is accepted when unambiguous.
        lists = [value for value in data.values() if isinstance(value, list)]
        if len(lists) != 1:
            raise InputError("a JSON file must hold a list of records", path=path)
        data = lists[0]
    if not isinstance(data, list):
        raise InputError("a JSON file must hold a list of records", path=path)
    for number, record in enumerate(data, start=1):
        if not isinstance(record, dict):
            raise InputError(f"record {number} is not a JSON object", path=path, line=number)
        yield number, record


_WS = re.compile(r"[ \t\n\r]*")


def _skip_ws(text: str, pos: int) -> int:
    match = _WS.match(text, pos)
    return match.end() if match is not None else pos


def _refused_record(text: str) -> int | None:
    """The 1-based position of the first record :func:`loads_json` refuses in a JSON list (for
    the error: the checks ran on the whole text), or ``None`` when the text is not a list."""
    pos = _skip_ws(text, 0)
    if not text.startswith("[", pos):
        return None
    pos += 1
    number = 0
    while True:
        pos = _skip_ws(text, pos)
        if text.startswith("]", pos):
            return None
        number += 1
        try:
            _, pos = raw_decode_json(text, pos)
        except JSONLimitError:
            return number
        except json.JSONDecodeError:
            return None
        pos = _skip_ws(text, pos)
        if not text.startswith(",", pos):
            return None
        pos += 1


def _iter_delimited(path: Path, delimiter: str) -> Iterator[tuple[int, Record]]:
    csv.field_size_limit(1 << 30)
    reader = csv.DictReader(io.StringIO(read_text(path), newline=""), delimiter=delimiter)
    try:
        if reader.fieldnames is None:
            return
        for record in reader:
            if None in record:
                raise InputError("row has more cells than the header", path=path, line=reader.line_num)
            yield reader.line_num, {key: value for key, value in record.items() if key is not None}
    except csv.Error as exc:
        raise InputError(f"not valid CSV/TSV ({exc})", path=path, line=reader.line_num or None) from None


def _iter_parquet(path: Path) -> Iterator[tuple[int, Record]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    number = 0
    try:
        batches = pq.ParquetFile(path).iter_batches(batch_size=1024)
        for batch in batches:
            binary = [
                field.name
                for field in batch.schema
                if pa.types.is_binary(field.type)
                or pa.types.is_large_binary(field.type)
                or pa.types.is_fixed_size_binary(field.type)
            ]
            for record in batch.to_pylist():
                number += 1
                for name in binary:
                    record[name] = _binary_text(record[name], path, number, name)
                yield number, record
    except (pa.ArrowException, OSError, ValueError) as exc:
        where = f" after row {number}" if number else ""
        raise InputError(f"not a readable Parquet file{where} ({exc})", path=path) from None


def _binary_text(value: Any, path: Path, row: int, column: str) -> Any:
    """A Parquet binary cell as the UTF-8 text it holds (``None`` stays ``None``).

    Raises:
        InputError: The bytes are not UTF-8 (named with the row and the column).
    """
    if not isinstance(value, bytes):
        return value
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"a binary cell that is not UTF-8 text (byte 0x{value[exc.start : exc.start + 1].hex()} "
            f"at offset {exc.start}); store the column as text",
            path=path,
            line=row,
            field=column,
        ) from None


def _iter_xlsx(path: Path) -> Iterator[tuple[int, Record]]:
    try:
        import openpyxl
    except ImportError:
        raise InputError("reading XLSX needs openpyxl: " + install_hint("xlsx"), path=path) from None
    from openpyxl.utils.exceptions import InvalidFileException

    unreadable = (zipfile.BadZipFile, InvalidFileException, KeyError, ValueError, TypeError, OSError)
    try:
        workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except unreadable as exc:
        reason = str(exc) or type(exc).__name__
        raise InputError(f"not a readable XLSX workbook ({reason})", path=path) from None
    number = 1
    try:
        rows = workbook.active.iter_rows(values_only=True)
        header = next(rows, None)
        if header is None:
            return
        names = [str(name) if name is not None else f"column_{i}" for i, name in enumerate(header)]
        for number, row in enumerate(rows, start=2):
            if all(cell is None for cell in row):
                continue
            yield (
                number,
                {name: ("" if cell is None else cell) for name, cell in zip(names, row, strict=False)},
            )
    except unreadable as exc:
        reason = str(exc) or type(exc).__name__
        raise InputError(f"not a readable XLSX workbook ({reason})", path=path, line=number) from None
    finally:
        workbook.close()


def _at_least_one(path: Path, records: Iterator[tuple[int, Record]]) -> Iterator[tuple[int, Record]]:
    found = False
    for entry in records:
        found = True
        yield entry
    if not found:
        raise InputError("no rows: the file is empty, holds only blank lines, or only a header", path=path)


def iter_records(path: str | Path) -> Iterator[tuple[int, Record]]:
    """Stream ``(line, record)`` pairs from a data file chosen by its suffix.

    UTF-8 with or without a byte-order mark, LF or CRLF line ends. Blank lines are skipped.

    Raises:
        InputError: The file is missing, a directory, of an unknown kind, not UTF-8, corrupt
            (XLSX, Parquet), holds no rows, or a line is not a record.
    """
    file = Path(path)
    check_file(file)
    suffix = file.suffix.lower()
    if suffix == ".jsonl":
        return _at_least_one(file, _iter_jsonl(file))
    if suffix == ".json":
        return _at_least_one(file, _iter_json(file))
    if suffix in (".csv", ".tsv"):
        return _at_least_one(file, _iter_delimited(file, "\t" if suffix == ".tsv" else ","))
    if suffix == ".parquet":
        return _at_least_one(file, _iter_parquet(file))
    if suffix == ".xlsx":
        return _at_least_one(file, _iter_xlsx(file))
    raise InputError(f"unknown file kind {suffix!r}; use one of {', '.join(SUFFIXES)}", path=file)


def decode_list(value: Any, *, path: Path, line: int, field: str) -> list[Any]:
    """A list cell: a real list, or (from CSV/TSV/XLSX) a JSON-encoded list in a string."""
    if isinstance(value, list):
        return value
    if hasattr(value, "tolist"):  # numpy arrays from Parquet
        return list(value.tolist())
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                decoded = loads_json(text)
            except json.JSONDecodeError:
                raise InputError("expected a JSON list", path=path, line=line, field=field) from None
            except JSONLimitError as exc:
                raise InputError(exc.reason, path=path, line=line, field=field) from None
            if isinstance(decoded, list):
                return decoded
    raise InputError(f"expected a list, got {type(value).__name__}", path=path, line=line, field=field)


def normalise_id(value: str) -> str:
    """A row id in Unicode's composed form (NFC): ``café`` typed with one code point for ``é``
    or with ``e`` and a combining accent (NFD) is one id, so a file that holds both spellings
    has a duplicate id (an error), and gold, labels and runs join on what a reader sees."""
    return value if value.isascii() else unicodedata.normalize("NFC", value)


def is_missing(value: Any) -> bool:
    """A cell with no value: ``None``, NaN (pandas' empty cell) or blank text."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def cell_text(value: Any) -> str:
    """A cell as text: missing → ``""``, a whole float (from XLSX) → its integer."""
    if is_missing(value):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
