"""A task's run identity (``Task.run_identity``): what else decides its items, recorded in the
manifest by the judging loop and checked when a run directory is resumed, for any task."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

import jurist
from jurist.errors import RunDirectoryError
from jurist.judges.judge import BaselineJudge, Judge
from jurist.runner import MANIFEST, Item
from jurist.tasks import Task, register_task


class _Options(BaseModel):
    model_config = ConfigDict(extra="forbid")
    field: str = "text"
    threshold: int = 0


class _Rows:
    def __init__(self, path: Path, rows: list[dict[str, Any]]) -> None:
        self.path, self.rows = path, rows

    def describe(self) -> dict[str, Any]:
        return {"path": str(self.path), "sha256": "0" * 64, "items": len(self.rows)}


class _Lengths(Task):
    """Judges the length of one field of each row; which field decides the items."""

    name = "test-field-lengths"
    inputs = {"text": "the chosen field's text"}
    outputs = {"length": "its length"}
    Options = _Options

    def read(self, path: str | Path, options: BaseModel) -> _Rows:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
        return _Rows(Path(path), [json.loads(line) for line in lines if line.strip()])

    def items(self, dataset: _Rows, options: BaseModel) -> list[Item]:
        field = getattr(options, "field")  # noqa: B009
        return [Item(id=str(row["id"]), inputs={"text": row[field]}) for row in dataset.rows]

    def run_identity(self, dataset: _Rows, options: BaseModel) -> dict[str, Any]:
        return {"field": getattr(options, "field")}  # noqa: B009

    def baseline(self, options: BaseModel) -> Judge:
        return BaselineJudge(lambda text: {"length": len(text)}, name="length", version="1")


@pytest.fixture
def rows(tmp_path: Path) -> Path:
    register_task(_Lengths)
    data = tmp_path / "rows.jsonl"
    lines = [{"id": 1, "text": "abc", "title": "a"}, {"id": 2, "text": "de", "title": "bcd"}]
    data.write_text("".join(json.dumps(row) + "\n" for row in lines), encoding="utf-8")
    return data


def test_the_loop_records_the_identity_and_refuses_a_run_directory_with_another(rows: Path, tmp_path: Path):
    out = tmp_path / "run"
    first = jurist.judge("test-field-lengths", rows, out=out, progress=False)
    assert first.set_index("id")["length"].to_dict() == {"1": 3, "2": 2}
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["dataset"]["field"] == "text"
    with pytest.raises(
        RunDirectoryError, match=r"holds a test-field-lengths run with field 'text', now 'title'"
    ):
        jurist.judge("test-field-lengths", rows, out=out, options={"field": "title"}, progress=False)
    # An option outside the identity resumes the run as before.
    again = jurist.judge("test-field-lengths", rows, out=out, options={"threshold": 5}, progress=False)
    assert again.summary["items"] == 2 and again.run_dir == first.run_dir


def test_a_task_without_an_identity_records_none(tmp_path: Path):
    assert Task().run_identity(None, _Options()) == {}
