"""The scoring parts that see the recorded run (:func:`jurist.tasks.recorded_run`), a task's
own files written beside the standard exports and into a folder of its options
(:meth:`Task.export_files`, :meth:`Task.export_to`), a table of units exported as the run's
table (:attr:`Task.unit_table`), and a comparison with another run (:meth:`Task.compared_run`,
:meth:`Task.comparison`), on a Python task scored by the contract's one ``score``."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from pydantic import BaseModel, ConfigDict

import jurist
from jurist.errors import ConfigError, ExitCode
from jurist.judges.judge import BaselineJudge, Judge
from jurist.runner import Item
from jurist.schemas import ItemResult
from jurist.tasks import RecordedRun, Scores, Task, recorded_run, register_task
from jurist.tasks._results import write_files
from support import run_cli


class _Rows:
    def __init__(self, path: str | Path, rows: list[dict[str, Any]]) -> None:
        self.path, self.rows = str(path), rows

    def describe(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": "rows", "items": len(self.rows)}


class _Options(BaseModel):
    model_config = ConfigDict(extra="forbid")
    compare: Path | None = None
    out: Path | None = None


class _Lengths(Task):
    """How long is each text? Its parts read the recorded run, share one count per scoring,
    write a table of their own and compare with another run."""

    name = "test-run-parts"
    Options = _Options

    def read(self, path: str | Path, options: BaseModel) -> _Rows:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
        return _Rows(path, [json.loads(line) for line in lines if line.strip()])

    def items(self, dataset: _Rows, options: BaseModel) -> list[Item]:
        return [Item(id=str(row["id"]), inputs={"text": row["text"]}) for row in dataset.rows]

    def baseline(self, options: BaseModel) -> Judge:
        return BaselineJudge(lambda text: {"length": len(text)}, name="length", version="1")

    def item_row(self, result: ItemResult, options: BaseModel) -> dict[str, Any]:
        recorded_run().shared("seen", list).append(result.id)
        return super().item_row(result, options)

    def summarize(self, items: pd.DataFrame, options: BaseModel, gold: str | Path | None) -> dict[str, Any]:
        run = recorded_run()
        data = run.dataset.get("path")
        return {
            "rows_seen": len(run.shared("seen", list)),
            "data_file": Path(data).name if data else None,
            "mean_length": float(items["length"].mean()),
        }

    def extras(self, items: pd.DataFrame, gold: str | Path | None, options: BaseModel) -> dict[str, Any]:
        return {"lengths": items[["id", "length"]]}

    def export_files(self, scores: Scores, options: BaseModel) -> dict[str, pd.DataFrame | str]:
        lengths = scores.extra["lengths"]
        files: dict[str, pd.DataFrame | str] = {
            f"lengths.{kind}": lengths for kind in ("csv", "tsv", "parquet")
        }
        return {**files, "lengths.xlsx": lengths, "lengths.md": f"{len(lengths)} texts\n"}

    def export_to(self, options: BaseModel) -> Path | None:
        out: Path | None = getattr(options, "out", None)
        return out

    def compared_run(self, options: BaseModel) -> Path | None:
        compare: Path | None = getattr(options, "compare", None)
        return compare

    def comparison(self, scores: Scores, other: Scores, options: BaseModel) -> dict[str, pd.DataFrame]:
        difference = scores.summary["mean_length"] - other.summary["mean_length"]
        return {"difference": pd.DataFrame([{"metric": "mean_length", "a_minus_b": difference}])}

    def report(self, scores: Scores) -> str:
        text = f"# lengths\n\nmean {scores.summary['mean_length']:.2f}\n"
        if "compared" in scores.extra:
            run_a, run_b = scores.extra["compared"]
            text += f"\n## against {Path(run_b).name}: {scores.summary['difference'][0]['a_minus_b']:+.2f}\n"
        return text


def _texts(path: Path, texts: list[str]) -> Path:
    path.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(texts)), "utf-8")
    return path


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    register_task(_Lengths)
    run, other = tmp_path / "run", tmp_path / "other"
    texts = _texts(tmp_path / "texts.jsonl", ["a", "abc", "ab"])
    jurist.judge("test-run-parts", texts, out=run, progress=False)
    jurist.judge("test-run-parts", _texts(tmp_path / "other.jsonl", ["a", "a"]), out=other, progress=False)
    return run, other


def test_the_parts_see_the_recorded_run_of_a_directory_and_of_its_results_file(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    run, _ = runs
    for given in (run, run / "results.jsonl"):
        summary = jurist.score("test-run-parts", given).summary
        # One shared list per scoring: each scoring of the same run counts its rows anew.
        assert summary["rows_seen"] == 3 and summary["data_file"] == "texts.jsonl"
        assert summary["run"]["judge"] == "length"  # the results file reads its folder's manifest
    alone = tmp_path / "alone" / "results.jsonl"
    alone.parent.mkdir()
    shutil.copy(run / "results.jsonl", alone)
    summary = jurist.score("test-run-parts", alone).summary
    assert summary["data_file"] is None and "run" not in summary
    assert RecordedRun.of(alone).manifest == {} and RecordedRun.of(run).dataset["items"] == 3
    with pytest.raises(RuntimeError, match="only known while Task.score scores a run"):
        recorded_run()


def test_a_tasks_own_files_are_written_beside_the_exports_in_the_format_their_names_say(
    runs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, _ = runs
    assert (run / "lengths.csv").read_text(encoding="utf-8") == "id,length\n0,1\n1,3\n2,2\n"
    assert (run / "lengths.tsv").read_text(encoding="utf-8").splitlines()[:2] == [
        '"id"\t"length"',
        '"0"\t"1"',
    ]
    assert pd.read_parquet(run / "lengths.parquet").to_dict("list") == {
        "id": ["0", "1", "2"],
        "length": [1, 3, 2],
    }
    assert pd.read_excel(run / "lengths.xlsx").to_dict("list") == {"id": [0, 1, 2], "length": [1, 3, 2]}
    assert (run / "lengths.md").read_text(encoding="utf-8") == "3 texts\n"
    for name in ("lengths.csv", "lengths.xlsx"):
        (run / name).unlink()
    assert run_cli(["score", "test-run-parts", str(run)]) == 0  # the command writes nothing
    assert not (run / "lengths.csv").exists()
    monkeypatch.setitem(sys.modules, "openpyxl", None)  # as when the xlsx extra is not installed
    jurist.score("test-run-parts", run, write=True)
    assert (run / "lengths.csv").is_file() and not (run / "lengths.xlsx").exists()
    with pytest.raises(ValueError, match="must be a plain file name"):
        write_files(run, {"../lengths.csv": pd.DataFrame()})
    with pytest.raises(ValueError, match="must end in .csv, .tsv, .parquet, .xlsx"):
        write_files(run, {"lengths.json": pd.DataFrame()})


def test_a_tasks_own_files_go_into_the_folder_its_options_name_whenever_it_scores(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    run, other = runs
    before = {path.name: path.stat().st_mtime_ns for path in run.iterdir()}
    out = tmp_path / "tables"
    assert run_cli(["score", "test-run-parts", str(run), "--out", str(out), "--compare", str(other)]) == 0
    assert sorted(path.name for path in out.iterdir()) == [
        "lengths.csv",
        "lengths.md",
        "lengths.parquet",
        "lengths.tsv",
        "lengths.xlsx",
    ]
    # The scored run's files, not the compared run's (two texts); the run directory untouched.
    assert (out / "lengths.md").read_text(encoding="utf-8") == "3 texts\n"
    assert {path.name: path.stat().st_mtime_ns for path in run.iterdir()} == before


class _Pairs(_Lengths):
    """Texts judged one by one, exported two by two: the run's table has a row per unit."""

    name = "test-run-parts-units"
    unit_table = "units"

    def extras(self, items: pd.DataFrame, gold: str | Path | None, options: BaseModel) -> dict[str, Any]:
        ids = items["id"].astype(int)
        units = items.groupby(ids // 2)["length"].sum().rename_axis("unit").reset_index()
        return {**super().extras(items, gold, options), "units": units}


def test_a_table_of_units_is_the_runs_table_while_the_counts_stay_the_items(tmp_path: Path) -> None:
    register_task(_Pairs)
    run = tmp_path / "run"
    jurist.judge(
        "test-run-parts-units", _texts(tmp_path / "t.jsonl", ["a", "abc", "ab"]), out=run, progress=False
    )
    scores = jurist.score("test-run-parts-units", run)
    assert scores.items.to_dict("list") == {"unit": [0, 1], "length": [4, 2]}
    assert (scores.summary["items"], scores.summary["ok"], scores.summary["rows_seen"]) == (3, 3, 3)
    assert pd.read_csv(run / "items.csv").to_dict("list") == {"unit": [0, 1], "length": [4, 2]}
    assert len(pd.read_parquet(run / "items.parquet")) == 2


def test_a_run_is_compared_with_another_after_its_exports(
    runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    run, other = runs
    written = (run / "summary.json").read_text(encoding="utf-8")
    scores = jurist.score("test-run-parts", run, options={"compare": other}, write=True)
    assert scores.summary["difference"] == [{"metric": "mean_length", "a_minus_b": pytest.approx(1.0)}]
    assert scores.extra["compared"] == (str(run), str(other))
    assert list(scores.extra["difference"]["metric"]) == ["mean_length"]
    assert "## against other: +1.00" in scores.report
    assert scores.summary["rows_seen"] == 3  # the other run's scoring shared nothing with this one
    assert json.loads((run / "summary.json").read_text(encoding="utf-8")) == json.loads(written)
    assert "against" not in (run / "report.md").read_text(encoding="utf-8")
    capsys.readouterr()
    assert run_cli(["score", "test-run-parts", str(run), "--compare", str(other), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["difference"][0]["a_minus_b"] == pytest.approx(1.0)
    assert run_cli(["score", "test-run-parts", str(run), "--compare", str(other)]) == 0
    assert "## against other: +1.00" in capsys.readouterr().out


def test_a_task_that_names_a_run_to_compare_with_must_compare(runs: tuple[Path, Path]) -> None:
    class _NoComparison(_Lengths):
        name = "test-run-parts-without-comparison"
        comparison = Task.comparison

    run, other = runs
    with pytest.raises(ConfigError, match="cannot compare two runs"):
        _NoComparison().score(run, _Options(compare=other))
    register_task(_NoComparison)
    args = ["score", "test-run-parts-without-comparison", str(run), "--compare", str(other)]
    assert run_cli(args) == ExitCode.BAD_INPUT
