"""Inputs of the pairwise (SubEval) task: SubEval tables, plain pairs, and judged record tables.

Three formats, each read from XLSX, CSV, TSV, JSONL, JSON, Parquet or a pandas DataFrame:

- **SubEval table**: one row per question with ``question`` (or ``questions``),
  ``index`` (unique), ``evaluating_guidance``, ``task``, ``reference_answer`` (may be
  empty) and one ``answer-{model}`` column per model. :func:`build_comparisons` turns it
  into ordered comparisons, every one in both orders.
- **Pairs**: one row per comparison with ``id``, ``question``, ``response_1``,
  ``response_2``, optional ``reference`` and optional gold ``label`` (which response is
  better). LLMBar's ``input``/``output_1``/``output_2``/``label`` is read as is.
- **Record table**: SubEval's judged output (``record_{judge}_{nopt}.tsv``), one row per
  ordered comparison with ``cmp_index`` ``{index};{model A};{model B}`` and the judge's
  raw answer in a column named after the judge.

A bad row raises :class:`jurist.errors.InputError` naming the file, the line (header =
line 1 for tables; the position for JSON lists and DataFrames) and the field.
"""

from __future__ import annotations

import csv
import io
import itertools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

import pandas as pd

from jurist.datasets.io import cell_text, check_file, is_missing, iter_records, normalise_id, read_text
from jurist.datasets.pairwise.shapes import (
    DetectedShape,
    NoMajority,
    detect_shape,
    generic_label,
    parse_mapping,
    shape_row,
)
from jurist.errors import InputError
from jurist.safe_load import quote

__all__ = [
    "ANSWER_PREFIX",
    "COMPARISON_COLUMNS",
    "RECORD_COLUMNS",
    "RecordTable",
    "build_comparisons",
    "load_pairs",
    "load_subeval_table",
    "normalize_label",
    "read_record_table",
    "subeval_models",
]

ANSWER_PREFIX = "answer-"
COMPARISON_COLUMNS = [
    "cmp_index",
    "question",
    "answer1",
    "answer2",
    "A",
    "B",
    "reference_answer",
    "evaluating_guidance",
    "task",
]
"""SubEval's record columns (before the judge's column), in SubEval's order and spelling."""
RECORD_COLUMNS = COMPARISON_COLUMNS

Source: TypeAlias = str | Path | pd.DataFrame

_GENERIC_STEMS = {"dataset", "data", "test", "train", "dev", "validation", "pairs", "eval"}
_RECORD_FILE = re.compile(r"^record_(?P<judge>.+)_(?P<nopt>[234])$")


def _rows(source: Source) -> tuple[str | None, Iterator[tuple[int, dict[str, Any]]]]:
    """The source's name (a path, or None for a DataFrame) and its ``(line, record)`` rows."""
    if isinstance(source, pd.DataFrame):
        records = source.to_dict(orient="records")
        return None, (
            (number, {str(k): v for k, v in row.items()}) for number, row in enumerate(records, start=1)
        )
    if Path(source).suffix.lower() in (".csv", ".tsv"):
        return str(source), _delimited_rows(Path(source))
    return str(source), iter_records(source)


def _delimited_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """CSV/TSV records numbered by their FIRST physical line (a quoted cell may span lines).

    Blank lines are skipped; the header is line 1.
    """
    check_file(path)
    csv.field_size_limit(1 << 30)
    reader = csv.reader(
        io.StringIO(read_text(path), newline=""), delimiter="\t" if path.suffix.lower() == ".tsv" else ","
    )
    header: list[str] | None = None
    start = 1
    try:
        for cells in reader:
            first, start = start, reader.line_num + 1
            if not cells:
                continue
            if header is None:
                header = cells
                continue
            if len(cells) > len(header):
                raise InputError("row has more cells than the header", path=path, line=first)
            yield first, {key: (cells[i] if i < len(cells) else None) for i, key in enumerate(header)}
    except csv.Error as exc:
        raise InputError(f"not valid CSV/TSV ({exc})", path=path, line=start) from None
    if header is None:
        raise InputError("the file holds no rows", path=path)


def _where(path: str | None) -> str:
    return path if path is not None else "<DataFrame>"


def load_subeval_table(
    source: Source,
    *,
    fill_contents: Sequence[str] = (),
    base_dir: str | Path | None = None,
) -> pd.DataFrame:
    """Read and check a SubEval input table.

    Args:
        source: A file (XLSX, CSV, TSV, JSONL, JSON, Parquet) or a DataFrame.
        fill_contents: Columns whose cells are paths to files whose contents replace them
            (SubEval's ``--fill-contents``). A cell ``"label: path;label: path"`` is
            replaced part by part, keeping the labels. Relative paths are tried against
            ``base_dir`` (default: the input file's folder), then the working directory.
        base_dir: Folder for relative paths in ``fill_contents`` columns.

    Returns:
        A DataFrame with columns ``question``, ``index``, ``evaluating_guidance``,
        ``task``, ``reference_answer`` (text, ``""`` when empty) and the ``answer-{model}``
        columns (text, ``None`` when missing), in file order.

    Raises:
        InputError: A required column is missing, there is no ``answer-{model}`` column,
            an ``index`` is empty or repeated, or a file named in a filled cell is unreadable.
    """
    path, rows = _rows(source)
    if base_dir is None:
        base_dir = Path(path).parent if path is not None else Path.cwd()
    out: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    columns: list[str] | None = None
    for number, row in rows:
        if columns is None:
            columns = list(row)
            _check_subeval_columns(columns, path, fill_contents)
        record = _subeval_row(row, number, path, Path(base_dir), fill_contents)
        if record["index"] in seen:
            raise InputError(
                f"index {record['index']!r} repeats line {seen[record['index']]}; each row needs its own",
                path=_where(path),
                line=number,
                field="index",
            )
        seen[record["index"]] = number
        out.append(record)
    if columns is None:
        raise InputError("the table has no rows", path=_where(path))
    models = [c for c in columns if c.startswith(ANSWER_PREFIX)]
    order = ["question", "index", "evaluating_guidance", "task", "reference_answer", *models]
    frame = pd.DataFrame(out, columns=order)
    frame.attrs["source"] = _where(path)
    return frame


def _check_subeval_columns(columns: list[str], path: str | None, fill_contents: Sequence[str]) -> None:
    for required in ("index",):
        if required not in columns:
            raise InputError(f"missing the column '{required}'", path=_where(path), line=1, field=required)
    if "question" not in columns and "questions" not in columns:
        raise InputError(
            "missing the column 'question' (or 'questions')", path=_where(path), line=1, field="question"
        )
    if not any(c.startswith(ANSWER_PREFIX) and len(c) > len(ANSWER_PREFIX) for c in columns):
        raise InputError(
            "no 'answer-{model}' column: add one column of answers per model",
            path=_where(path),
            line=1,
            field="answer-{model}",
        )
    for column in fill_contents:
        name = "question" if column == "questions" else column
        if name not in columns and not (name == "question" and "questions" in columns):
            raise InputError(
                "a column to fill from files is not in the table", path=_where(path), line=1, field=column
            )


def _subeval_row(
    row: dict[str, Any], number: int, path: str | None, base_dir: Path, fill_contents: Sequence[str]
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "question": cell_text(row.get("question", row.get("questions"))),
        "index": cell_text(row.get("index")),
        "evaluating_guidance": cell_text(row.get("evaluating_guidance")),
        "task": cell_text(row.get("task")),
        "reference_answer": cell_text(row.get("reference_answer")),
    }
    for key, value in row.items():
        if key.startswith(ANSWER_PREFIX):
            record[key] = None if is_missing(value) else cell_text(value)
    for column in fill_contents:
        name = "question" if column == "questions" else column
        if record.get(name):
            record[name] = _fill(record[name], base_dir, path, number, column)
    if not record["index"]:
        raise InputError("empty index", path=_where(path), line=number, field="index")
    return record


def _fill(cell: str, base_dir: Path, path: str | None, line: int, field: str) -> str:
    """Replace a cell that names files by their contents (see :func:`load_subeval_table`)."""
    parts = cell.split(";") if ";" in cell else [cell]
    if len(parts) > 1:
        filled = []
        for part in parts:
            label, sep, target = part.partition(": ")
            if not sep:
                raise InputError(
                    f"cannot read {part!r} as 'label: path' in a cell of several files",
                    path=_where(path),
                    line=line,
                    field=field,
                )
            filled.append(f"{label}: {_read_named_file(target, base_dir, path, line, field)}")
        return ";".join(filled)
    return _read_named_file(cell, base_dir, path, line, field)


def _read_named_file(target: str, base_dir: Path, path: str | None, line: int, field: str) -> str:
    name = Path(target.strip())
    for candidate in [name] if name.is_absolute() else [base_dir / name, Path.cwd() / name]:
        if candidate.is_file():
            try:
                return candidate.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise InputError(
                    f"cannot read {str(candidate)!r}: {exc}", path=_where(path), line=line, field=field
                ) from None
    raise InputError(
        f"the cell names {target!r}, which is not a file", path=_where(path), line=line, field=field
    )


def subeval_models(table: pd.DataFrame) -> list[str]:
    """The models of a SubEval table, from its ``answer-{model}`` columns, in column order."""
    return [c[len(ANSWER_PREFIX) :] for c in table.columns if c.startswith(ANSWER_PREFIX)]


def build_comparisons(
    table: pd.DataFrame,
    *,
    models: Sequence[str] | None = None,
    reference_model: str | None = None,
) -> pd.DataFrame:
    """The ordered comparisons to judge: each model against a reference model, or all pairs.

    With ``reference_model``, every other model of ``models`` is compared with it; without,
    every pair of ``models`` (in their order). Each comparison comes in both orders: first
    ``(reference or earlier model, other model)``, then swapped. The loop runs over models,
    then over questions, as SubEval's ``dual`` mode does. A question where either model
    has no answer is skipped. Questions and answers are stripped of surrounding
    whitespace, as SubEval does.

    Args:
        table: A table from :func:`load_subeval_table`.
        models: The models to compare (default: all of the table's models).
        reference_model: The model every other model is compared with.

    Returns:
        A DataFrame with SubEval's record columns (:data:`COMPARISON_COLUMNS`) plus
        ``index``, ``order`` (1 = original, 2 = swapped) and ``exact_match`` (the two
        answers are identical: SubEval does not judge these).

    Raises:
        InputError: A model has no ``answer-{model}`` column, or the reference model is
            not one of the table's models.
    """
    source = table.attrs.get("source", "<DataFrame>")
    available = subeval_models(table)
    chosen = list(dict.fromkeys(models)) if models is not None else list(available)
    for model in chosen:
        if model not in available:
            raise InputError(
                f"no column 'answer-{model}' for model {model!r}; the table's models are {available}",
                path=source,
                line=1,
                field=f"{ANSWER_PREFIX}{model}",
            )
    if reference_model is not None:
        if reference_model not in available:
            raise InputError(
                f"unknown reference model {reference_model!r}: no column 'answer-{reference_model}'; "
                f"the table's models are {available}",
                path=source,
                field="reference_model",
            )
        pairs = [(reference_model, model) for model in chosen if model != reference_model]
    else:
        pairs = list(itertools.combinations(chosen, 2))
    if not pairs:
        raise InputError("nothing to compare: give at least two models", path=source, field="models")
    questions = table.to_dict(orient="records")
    rows = [
        row for first, second in pairs for values in questions for row in _both_orders(values, first, second)
    ]
    return pd.DataFrame(rows, columns=[*COMPARISON_COLUMNS, "index", "order", "exact_match"])


def _both_orders(values: dict[str, Any], first: str, second: str) -> list[dict[str, Any]]:
    answer_1, answer_2 = values[f"{ANSWER_PREFIX}{first}"], values[f"{ANSWER_PREFIX}{second}"]
    if is_missing(answer_1) or is_missing(answer_2):
        return []
    answer_1, answer_2 = str(answer_1).strip(), str(answer_2).strip()
    same = answer_1 == answer_2
    common = {
        "question": str(values["question"]).strip(),
        "reference_answer": values["reference_answer"],
        "evaluating_guidance": values["evaluating_guidance"],
        "task": values["task"],
        "index": values["index"],
        "exact_match": same,
    }
    return [
        {
            "cmp_index": f"{values['index']};{a};{b}",
            "answer1": x,
            "answer2": y,
            "A": a,
            "B": b,
            "order": order,
            **common,
        }
        for order, (a, b, x, y) in enumerate(
            [(first, second, answer_1, answer_2), (second, first, answer_2, answer_1)], start=1
        )
    ]


def normalize_label(value: Any) -> str | None:
    """A gold preference label as ``"1"``, ``"2"``, ``"tie"``, or ``None`` when missing.

    Accepted: 1/2 (numbers or text), A/B, response_1/response_2, output_1/output_2,
    model_a/model_b, tie, "tie (bothbad)", both.

    Raises:
        ValueError: For any other value.

    Examples:
        >>> normalize_label(2), normalize_label("model_a"), normalize_label("Tie")
        ('2', '1', 'tie')
    """
    return generic_label(value)


def _dataset_name(path: str | None) -> str:
    if path is None:
        return "pairs"
    file = Path(path)
    return file.parent.name if file.stem.lower() in _GENERIC_STEMS and file.parent.name else file.stem


PAIR_COLUMNS = ["id", "question", "response_1", "response_2", "reference", "label", "annotations", "dataset"]
"""The columns of :func:`load_pairs`' result."""


def _mapped_rows(
    rows: Iterator[tuple[int, dict[str, Any]]], mapping: Mapping[str, str], where: str
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rename each row's columns by ``mapping`` (target → the file's column)."""
    renames: dict[str, str] | None = None
    for number, row in rows:
        if renames is None:
            renames = {}
            for target, column in mapping.items():
                if column not in row:
                    raise InputError(
                        f"--map {target}={column}: the file has no column {column!r}; its columns are "
                        f"{list(row)}",
                        path=where,
                        line=1,
                        field=column,
                    )
                renames[column] = target
        renamed = {renames.get(key, key): value for key, value in row.items() if key not in renames}
        renamed.update({renames[key]: row[key] for key in renames})
        yield number, renamed


def load_pairs(
    source: Source,
    *,
    dataset: str | None = None,
    mapping: Mapping[str, str] | Sequence[str] | None = None,
    no_majority: NoMajority = "tie",
) -> pd.DataFrame:
    """Read preference pairs in any shape of :mod:`jurist.datasets.pairwise.shapes`.

    The shape is recognised from the columns (LLMBar, AlpacaEval annotations, MT-Bench human
    judgments, Chatbot Arena, Alpaca-style pairs, jurist pairs; several annotators' label
    columns with any of them). Labels are read by the shape's convention.

    Args:
        source: A file or a DataFrame.
        dataset: The dataset's name; default the ``dataset`` column, else the file's stem
            (its folder's name for generic stems such as ``dataset.json``).
        mapping: ``{target: column}`` or ``["target=column", ...]``: read the file's column
            as ``target`` (a column name a shape knows, e.g. ``response_a`` or ``label``).
        no_majority: With several annotators and no majority label: ``"tie"`` (gold is a
            tie) or ``"exclude"`` (no gold label; the pair is judged but not scored).

    Returns:
        A DataFrame with :data:`PAIR_COLUMNS`: ``label`` is ``"1"``, ``"2"``, ``"tie"`` or
        ``None``; ``annotations`` each annotator's label (``None`` without annotators). Its
        ``attrs["shape"]`` names the shape.

    Raises:
        InputError: No shape matches the columns (the message lists them), a mapped column
            is missing, an id repeats, or a cell is not what the shape needs.
        ConfigError: A mapping entry is not ``target=column``.
    """
    path, rows = _rows(source)
    where = _where(path)
    targets = parse_mapping(mapping)
    if targets:
        rows = _mapped_rows(rows, targets, where)
    default_dataset = dataset or _dataset_name(path)
    out = []
    seen: dict[str, int] = {}
    detected: DetectedShape | None = None
    for number, row in rows:
        if detected is None:
            detected = detect_shape(list(row), where)
        record = shape_row(row, detected, number=number, where=where, no_majority=no_majority)
        record["id"] = normalise_id(record["id"]) if record["id"] else str(number)
        record["dataset"] = dataset if dataset is not None else (record["dataset"] or default_dataset)
        if record["id"] in seen:
            raise InputError(
                f"id {quote(record['id'])} repeats line {seen[record['id']]}",
                path=where,
                line=number,
                field=detected.columns.get("id") or "id",
            )
        seen[record["id"]] = number
        out.append(record)
    if detected is None:
        raise InputError("the file has no pairs", path=where)
    frame = pd.DataFrame(out, columns=PAIR_COLUMNS)
    frame.attrs["shape"] = detected.shape.name
    return frame


@dataclass(frozen=True)
class RecordTable:
    """A judged SubEval record table, read but not yet parsed.

    Attributes:
        frame: SubEval's record columns that are present, plus ``index`` (from
            ``cmp_index``), ``line`` (where the row is in the file) and ``judgement``
            (the judge's raw answer, ``""`` when empty).
        judge: The judge's name: the judge column's name.
        num_options: The number of options, from a file name ``record_{judge}_{nopt}.*``,
            else ``None``.
        source: The file's path, or ``"<DataFrame>"``.
    """

    frame: pd.DataFrame
    judge: str
    num_options: int | None
    source: str


def read_record_table(source: Source, *, judge_column: str | None = None) -> RecordTable:
    """Read a SubEval record table (``record_{judge}_{nopt}.tsv``, or XLSX, Parquet, ...).

    Columns are matched case-insensitively to SubEval's (``Cmp_index`` = ``cmp_index``).
    The judge's column is ``judge_column``, or else the one column that is not one of
    SubEval's.

    A self-comparison (the same model as ``A`` and ``B``, as SubEval writes when the
    reference model is among the compared models) is accepted: its two orders share one
    ``cmp_index``, so it may occur twice. Rows are numbered by their first physical line.

    Raises:
        InputError: ``cmp_index``, ``A`` or ``B`` is missing, the judge's column is
            missing or ambiguous, a ``cmp_index`` does not end in ``;{A};{B}``, or a
            comparison occurs more often than its orders.
    """
    path, rows = _rows(source)
    known = {c.lower(): c for c in COMPARISON_COLUMNS}
    ignored = {"extracted", "lang", "index", "order", "exact_match", "line", "unnamed: 0"}
    out = []
    seen: dict[tuple[str, str, str], list[int]] = {}
    names: dict[str, str] | None = None
    judge: str | None = None
    for number, row in rows:
        if names is None:
            names, judge = _record_columns(list(row), known, ignored, judge_column, path)
        record: dict[str, Any] = {names[k]: row[k] for k in names}
        for column in ("cmp_index", "A", "B"):
            record[column] = cell_text(record.get(column))
        suffix = f";{record['A']};{record['B']}"
        if not record["A"] or not record["B"] or not record["cmp_index"].endswith(suffix):
            raise InputError(
                f"cmp_index {record['cmp_index']!r} does not end in ';{{A}};{{B}}' = {suffix!r}",
                path=_where(path),
                line=number,
                field="cmp_index",
            )
        record["index"] = record["cmp_index"][: -len(suffix)]
        key = (record["index"], record["A"], record["B"])
        # A self-comparison (A = B) has one cmp_index for both of its orders: two rows.
        allowed = 2 if record["A"] == record["B"] else 1
        if len(seen.get(key, [])) >= allowed:
            raise InputError(
                f"the comparison {record['cmp_index']!r} repeats line {seen[key][0]}",
                path=_where(path),
                line=number,
                field="cmp_index",
            )
        seen.setdefault(key, []).append(number)
        for column in ("question", "answer1", "answer2", "reference_answer", "evaluating_guidance", "task"):
            if column in record:
                record[column] = cell_text(record[column])
        assert judge is not None
        raw = row[judge]
        record["judgement"] = "" if is_missing(raw) else str(raw)
        record["line"] = number
        out.append(record)
    if names is None or judge is None:
        raise InputError("the record table has no rows", path=_where(path))
    present = [c for c in COMPARISON_COLUMNS if c in set(names.values())]
    frame = pd.DataFrame(out, columns=[*present, "index", "judgement", "line"])
    match = _RECORD_FILE.match(Path(path).stem) if path is not None else None
    num_options = int(match.group("nopt")) if match else None
    return RecordTable(frame=frame, judge=judge, num_options=num_options, source=_where(path))


def _record_columns(
    columns: list[str], known: dict[str, str], ignored: set[str], judge_column: str | None, path: str | None
) -> tuple[dict[str, str], str]:
    names = {c: known[c.lower()] for c in columns if c.lower() in known}
    for required in ("cmp_index", "A", "B"):
        if required not in names.values():
            raise InputError(f"missing the column '{required}'", path=_where(path), line=1, field=required)
    if judge_column is not None:
        if judge_column not in columns:
            raise InputError(
                f"no judge column {judge_column!r}; the columns are {columns}",
                path=_where(path),
                line=1,
                field=judge_column,
            )
        names.pop(judge_column, None)
        return names, judge_column
    others = [c for c in columns if c not in names and c.lower() not in ignored]
    if len(others) != 1:
        found = "none" if not others else ", ".join(repr(c) for c in others)
        raise InputError(
            f"cannot tell which column holds the judge's answers (candidates: {found}); name it",
            path=_where(path),
            line=1,
            field="judge",
        )
    return names, others[0]
