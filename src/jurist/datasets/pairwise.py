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

import itertools
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

import pandas as pd

from jurist.datasets.io import iter_records
from jurist.errors import InputError

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
_PAIR_ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "question_id", "pair_id", "index", "idx"),
    "question": ("question", "input", "instruction", "prompt", "questions"),
    "response_1": ("response_1", "output_1", "response_a", "answer_1", "answer1", "answer_a"),
    "response_2": ("response_2", "output_2", "response_b", "answer_2", "answer2", "answer_b"),
    "reference": ("reference", "reference_answer", "ref_answer"),
    "label": ("label", "gold", "gold_label", "winner", "preference"),
    "dataset": ("dataset", "source"),
}
_LABELS = {
    "1": "1",
    "2": "2",
    "a": "1",
    "b": "2",
    "response_1": "1",
    "response_2": "2",
    "output_1": "1",
    "output_2": "2",
    "model_a": "1",
    "model_b": "2",
    "tie": "tie",
    "tie (bothbad)": "tie",
    "both": "tie",
}


def _rows(source: Source) -> tuple[str | None, Iterator[tuple[int, dict[str, Any]]]]:
    """The source's name (a path, or None for a DataFrame) and its ``(line, record)`` rows."""
    if isinstance(source, pd.DataFrame):
        records = source.to_dict(orient="records")
        return None, (
            (number, {str(k): v for k, v in row.items()}) for number, row in enumerate(records, start=1)
        )
    return str(source), iter_records(source)


def _missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def _text(value: Any) -> str:
    """A cell as text: missing → ``""``, a whole float (from XLSX) → its integer."""
    if _missing(value):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


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
        "question": _text(row.get("question", row.get("questions"))),
        "index": _text(row.get("index")),
        "evaluating_guidance": _text(row.get("evaluating_guidance")),
        "task": _text(row.get("task")),
        "reference_answer": _text(row.get("reference_answer")),
    }
    for key, value in row.items():
        if key.startswith(ANSWER_PREFIX):
            record[key] = None if _missing(value) else _text(value)
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
    if _missing(answer_1) or _missing(answer_2):
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
    if _missing(value):
        return None
    key = _text(value).strip().lower()
    if key not in _LABELS:
        raise ValueError(f"unknown preference label {value!r}; use 1, 2 or tie")
    return _LABELS[key]


def _dataset_name(path: str | None) -> str:
    if path is None:
        return "pairs"
    file = Path(path)
    return file.parent.name if file.stem.lower() in _GENERIC_STEMS and file.parent.name else file.stem


def load_pairs(source: Source, *, dataset: str | None = None) -> pd.DataFrame:
    """Read a pairs file: a question, two responses, an optional reference and gold label.

    Column names are matched case-insensitively with aliases (LLMBar's ``input``,
    ``output_1``, ``output_2``; ``response_a``/``response_b``; ``winner``; ...). Labels
    are normalized by :func:`normalize_label`.

    Args:
        source: A file or a DataFrame.
        dataset: The dataset's name; default the ``dataset`` column, else the file's stem
            (its folder's name for generic stems such as ``dataset.json``).

    Returns:
        A DataFrame with columns ``id``, ``question``, ``response_1``, ``response_2``,
        ``reference`` (``""`` when absent), ``label`` (``"1"``, ``"2"``, ``"tie"`` or
        ``None``) and ``dataset``.

    Raises:
        InputError: A required column is missing, an id repeats, a response is empty, or
            a label is not recognised.
    """
    path, rows = _rows(source)
    default_dataset = dataset or _dataset_name(path)
    out = []
    seen: dict[str, int] = {}
    mapping: dict[str, str | None] | None = None
    for number, row in rows:
        if mapping is None:
            mapping = _pair_columns(list(row), path)
        record = _pair_row(row, mapping, number, path, default_dataset if dataset is None else dataset)
        if record["id"] in seen:
            raise InputError(
                f"id {record['id']!r} repeats line {seen[record['id']]}",
                path=_where(path),
                line=number,
                field="id",
            )
        seen[record["id"]] = number
        out.append(record)
    if mapping is None:
        raise InputError("the file has no pairs", path=_where(path))
    return pd.DataFrame(
        out, columns=["id", "question", "response_1", "response_2", "reference", "label", "dataset"]
    )


def _pair_columns(columns: list[str], path: str | None) -> dict[str, str | None]:
    lowered = {c.lower(): c for c in columns}
    mapping: dict[str, str | None] = {}
    for field, aliases in _PAIR_ALIASES.items():
        mapping[field] = next((lowered[a] for a in aliases if a in lowered), None)
    for required in ("question", "response_1", "response_2"):
        if mapping[required] is None:
            names = ", ".join(repr(a) for a in _PAIR_ALIASES[required])
            raise InputError(
                f"missing the column '{required}' (or one of {names})",
                path=_where(path),
                line=1,
                field=required,
            )
    return mapping


def _pair_row(
    row: dict[str, Any], mapping: dict[str, str | None], number: int, path: str | None, dataset: str
) -> dict[str, Any]:
    def get(field: str) -> Any:
        column = mapping[field]
        value = row.get(column) if column is not None else None
        if field != "label" and isinstance(value, dict | list):
            kind = "a JSON object" if isinstance(value, dict) else "a list"
            raise InputError(f"expected text, got {kind}", path=_where(path), line=number, field=column)
        return value

    record: dict[str, Any] = {
        "id": _text(get("id")) or str(number),
        "question": _text(get("question")),
        "response_1": _text(get("response_1")),
        "response_2": _text(get("response_2")),
        "reference": _text(get("reference")),
        "dataset": _text(get("dataset")) or dataset,
    }
    for field in ("response_1", "response_2"):
        if not record[field].strip():
            raise InputError("empty response", path=_where(path), line=number, field=mapping[field])
    try:
        record["label"] = normalize_label(get("label"))
    except ValueError as exc:
        raise InputError(str(exc), path=_where(path), line=number, field=mapping["label"]) from None
    return record


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

    Raises:
        InputError: ``cmp_index``, ``A`` or ``B`` is missing, the judge's column is
            missing or ambiguous, or a ``cmp_index`` does not end in ``;{A};{B}``.
    """
    path, rows = _rows(source)
    known = {c.lower(): c for c in COMPARISON_COLUMNS}
    ignored = {"extracted", "lang", "index", "order", "exact_match", "line", "unnamed: 0"}
    out = []
    seen: dict[tuple[str, str, str], int] = {}
    names: dict[str, str] | None = None
    judge: str | None = None
    for number, row in rows:
        if names is None:
            names, judge = _record_columns(list(row), known, ignored, judge_column, path)
        record: dict[str, Any] = {names[k]: row[k] for k in names}
        for column in ("cmp_index", "A", "B"):
            record[column] = _text(record.get(column))
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
        if record["A"] == record["B"] or key in seen:
            problem = f"repeats line {seen[key]}" if key in seen else "compares a model with itself"
            raise InputError(
                f"the comparison {record['cmp_index']!r} {problem}",
                path=_where(path),
                line=number,
                field="cmp_index",
            )
        seen[key] = number
        for column in ("question", "answer1", "answer2", "reference_answer", "evaluating_guidance", "task"):
            if column in record:
                record[column] = _text(record[column])
        assert judge is not None
        raw = row[judge]
        record["judgement"] = "" if _missing(raw) else str(raw)
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
