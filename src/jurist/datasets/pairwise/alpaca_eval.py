"""AlpacaEval's judged runs as it publishes them, and the data its length-controlled win rate reads.

- An **annotations file** (``results/<model>/<annotator>/annotations.json``): a JSON list of
  records, one per instruction, each with ``instruction``, ``output_1`` (the baseline's
  output), ``generator_1`` (the baseline), ``output_2``, ``generator_2`` (the model) and
  ``preference`` (``1`` baseline better, ``2`` model better, ``0``/``1.5`` a draw, a float in
  ``[1, 2]`` from a weighted annotator, or ``null``/absent when the annotator gave none), and
  usually ``annotator``, ``dataset``, ``price_per_example``, ``time_per_example``,
  ``raw_completion`` (read and ignored). :func:`read_annotations` reads one.
- A **results folder**: such files below one folder, one per model (:func:`annotation_files`).
- ``df_gamed.csv`` of AlpacaEval's data release: the length-gamed baselines' annotations and
  each instruction's difficulty (:func:`read_gamed`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from jurist.datasets.io import iter_records
from jurist.errors import InputError
from jurist.metrics.pairwise.alpaca_eval import GamedAnnotations
from jurist.safe_load import quote

__all__ = [
    "ANNOTATIONS_FILE",
    "REQUIRED",
    "AlpacaAnnotations",
    "GamedData",
    "annotation_files",
    "is_annotations_file",
    "read_annotations",
    "read_gamed",
]

ANNOTATIONS_FILE = "annotations.json"
"""The name of an annotations file in AlpacaEval's ``results/<model>/<annotator>/``."""

REQUIRED = ("instruction", "output_1", "generator_1", "output_2", "generator_2")
"""The text fields every annotation has (``preference`` may be missing: it is then dropped)."""

_GAMED_COLUMNS = ("index", "preference", "std_delta_len", "instruction_difficulty", "not_gamed_baseline")


@dataclass(frozen=True)
class AlpacaAnnotations:
    """One annotations file.

    Attributes:
        path: The file.
        instruction, output_1, generator_1, output_2, generator_2: Per annotation, in file order.
        preference: Per annotation, the preference as a float (NaN where it is missing).
        annotator: Per annotation, its ``annotator`` (``None`` where absent).
    """

    path: Path
    instruction: list[str]
    output_1: list[str]
    generator_1: list[str]
    output_2: list[str]
    generator_2: list[str]
    preference: np.ndarray
    annotator: list[str | None]

    def __len__(self) -> int:
        return len(self.instruction)

    @property
    def models(self) -> list[str]:
        """The compared models (``generator_2``), in order of first appearance."""
        return list(dict.fromkeys(self.generator_2))

    @property
    def baselines(self) -> list[str]:
        """The baselines (``generator_1``), in order of first appearance."""
        return list(dict.fromkeys(self.generator_1))

    @property
    def annotator_name(self) -> str:
        """The annotator: the records' ``annotator`` if they name one, else the folder the file
        is in (``results/<model>/<annotator>/``); several are joined with ``+``."""
        named = [name for name in dict.fromkeys(self.annotator) if name]
        return "+".join(named) if named else self.path.parent.name


def is_annotations_file(path: str | Path) -> bool:
    """Whether ``path`` is a JSON file whose first record has AlpacaEval's ``output_1``,
    ``output_2`` and ``generator_2`` (an annotations file, whatever its name)."""
    file = Path(path)
    if not file.is_file() or file.suffix.lower() != ".json":
        return False
    try:
        first = next(iter_records(file))[1]
    except (InputError, StopIteration):
        return False
    return {"output_1", "output_2", "generator_2"} <= set(first)


def _preference(value: Any, path: Path, line: int) -> float:
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(
            f"record {line}: preference must be a number or null; got {quote(value)}",
            path=path,
            line=line,
            field="preference",
        )
    return float(value)


def read_annotations(path: str | Path) -> AlpacaAnnotations:
    """Read an AlpacaEval annotations file (see the module docstring).

    Raises:
        InputError: Not a JSON list of records, a record without one of :data:`REQUIRED` (or
            not text), or a preference that is neither a number nor null — named by file,
            record and field.
    """
    file = Path(path)
    fields: dict[str, list[str]] = {name: [] for name in REQUIRED}
    preferences: list[float] = []
    annotators: list[str | None] = []
    for line, record in iter_records(file):
        for name in REQUIRED:
            value = record.get(name)
            if not isinstance(value, str):
                missing = "missing" if value is None else f"not text ({quote(value)})"
                raise InputError(
                    f"record {line}: {name} is {missing}; an AlpacaEval annotation has "
                    f"{', '.join(REQUIRED)} and preference",
                    path=file,
                    line=line,
                    field=name,
                )
            fields[name].append(value)
        preferences.append(_preference(record.get("preference"), file, line))
        annotator = record.get("annotator")
        annotators.append(str(annotator) if annotator is not None else None)
    return AlpacaAnnotations(
        path=file,
        preference=np.array(preferences, dtype=np.float64),
        annotator=annotators,
        **fields,
    )


def annotation_files(folder: str | Path) -> list[Path]:
    """The annotations files below ``folder`` (any depth, as in ``results/<model>/<annotator>/``),
    in path order; ``[]`` when it holds none."""
    return [path for path in sorted(Path(folder).rglob(ANNOTATIONS_FILE)) if is_annotations_file(path)]


@dataclass(frozen=True)
class GamedData:
    """``df_gamed.csv``: the gamed baselines' annotations and the instructions' difficulty.

    Attributes:
        path: The file.
        gamed: Its rows as the GLM reads them.
        first_rows: For each instruction ``index``, the row (0-based) where it first occurs.
    """

    path: Path
    gamed: GamedAnnotations
    first_rows: dict[int, int]

    def difficulties(self, n: int, where: Path) -> np.ndarray:
        """The difficulty of the instructions of ``n`` annotations, the ``i``-th annotation being
        instruction ``i`` (alpaca_eval's rule).

        alpaca_eval reads instruction ``i``'s difficulty from the row labelled ``i`` among the
        file's first rows of each instruction, which is that instruction's own row when the
        file lists its first ``n`` rows in instruction order, as the published file does.

        Raises:
            InputError: The file has no difficulty for an instruction, or its rows are in an
                order in which alpaca_eval would read another instruction's difficulty.
        """
        values = self.gamed.instruction_difficulty
        found = np.empty(n, dtype=np.float64)
        for position in range(n):
            first = self.first_rows.get(position)
            if first is None:
                raise InputError(
                    f"no difficulty for instruction {position} (the annotations of {where} have {n})",
                    path=self.path,
                    field="index",
                )
            if first != position:
                raise InputError(
                    f"instruction {position} first occurs on data row {first + 1}, not row "
                    f"{position + 1}: alpaca_eval would read another instruction's difficulty; "
                    "list the first model's rows in instruction order",
                    path=self.path,
                    line=first + 2,
                    field="index",
                )
            found[position] = values[first]
        return found


def _number(value: Any, path: Path, line: int, field: str, *, blank: bool = False) -> float:
    text = "" if value is None else str(value).strip()
    if not text and blank:
        return math.nan
    try:
        return float(text)
    except ValueError:
        raise InputError(f"not a number: {quote(value)}", path=path, line=line, field=field) from None


def _flag(value: Any, path: Path, line: int) -> bool:
    text = "" if value is None else str(value).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise InputError(
        f"must be True or False; got {quote(value)}", path=path, line=line, field="not_gamed_baseline"
    )


def read_gamed(path: str | Path) -> GamedData:
    """Read ``df_gamed.csv`` (columns ``index``, ``preference`` in ``[0, 1]`` or empty,
    ``std_delta_len``, ``instruction_difficulty``, ``not_gamed_baseline``; others, such as
    ``model``, are ignored).

    Raises:
        InputError: Not a CSV file with those columns, or a value that is not a number (a
            flag that is not True/False), named by file, line and column.
    """
    file = Path(path)
    if file.suffix.lower() != ".csv":
        raise InputError("expected alpaca_eval's df_gamed.csv (a CSV file)", path=file)
    columns: dict[str, list[float]] = {name: [] for name in _GAMED_COLUMNS}
    first_rows: dict[int, int] = {}
    for row, (line, record) in enumerate(iter_records(file)):
        for name in _GAMED_COLUMNS:
            if name not in record:
                raise InputError(f"missing the column {name!r}", path=file, field=name)
        index = _number(record["index"], file, line, "index")
        if index != int(index):
            raise InputError(
                f"not a whole number: {quote(record['index'])}", path=file, line=line, field="index"
            )
        first_rows.setdefault(int(index), row)
        columns["index"].append(index)
        columns["preference"].append(_number(record["preference"], file, line, "preference", blank=True))
        for name in ("std_delta_len", "instruction_difficulty"):
            columns[name].append(_number(record[name], file, line, name))
        columns["not_gamed_baseline"].append(float(_flag(record["not_gamed_baseline"], file, line)))
    gamed = GamedAnnotations(
        std_delta_len=np.array(columns["std_delta_len"]),
        instruction_difficulty=np.array(columns["instruction_difficulty"]),
        not_gamed_baseline=np.array(columns["not_gamed_baseline"]) > 0,
        preference=np.array(columns["preference"]),
    )
    return GamedData(path=file, gamed=gamed, first_rows=first_rows)
