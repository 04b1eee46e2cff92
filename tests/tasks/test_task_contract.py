"""The task contract from the outside: the registry, task options on the command line,
``jurist tasks``, ``jurist prompt``, and verbs refused by tasks that cannot serve them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd
import pytest
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

import jurist
from jurist.cli.task_options import split_task_arguments
from jurist.datasets.samples import resolve_input
from jurist.errors import ConfigError
from jurist.judges.judge import BaselineJudge, Judge
from jurist.runner import Item
from jurist.tasks import Task, get_task, read_once, register_task, task_names
from support import loopback_config, run_cli

BUILTIN = {
    "ragbench",
    "pairwise",
    "pairwise-gold",
    "rgb",
    "rgb-rejection",
    "rgb-error-detection",
    "gates",
    "heritage",
    "heritage-ner",
    "heritage-classification",
    "heritage-linking",
    "heritage-qa",
}


class _Options(BaseModel):
    model_config = ConfigDict(extra="forbid")
    num_options: int = Field(2, description="choices")
    strict: bool = Field(False, description="be strict")
    labels: list[str] = Field(default_factory=lambda: ["a"], description="labels")
    out: str | None = Field(None, description="where", json_schema_extra={"aliases": ["-o"]})


class _Rows:
    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def describe(self) -> dict[str, Any]:
        return {"path": "inline", "sha256": "0" * 64, "items": len(self.rows)}


class _Shouting(Task):
    """A task with only a baseline: judge and score work, optimize and calibrate are refused."""

    name = "test-shouting"
    description = "Is the text written in capitals?"
    inputs = {"text": "the text"}
    outputs = {"verdict": "true when every letter is a capital"}
    metrics = {"share": "share of shouting texts"}
    Options = _Options

    def read(self, path: str | Path, options: BaseModel) -> _Rows:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
        return _Rows([json.loads(line) for line in lines if line.strip()])

    def items(self, dataset: _Rows, options: BaseModel) -> list[Item]:
        return [Item(id=str(row["id"]), inputs={"text": row["text"]}) for row in dataset.rows]

    def baseline(self, options: BaseModel) -> Judge:
        return BaselineJudge(lambda text: {"verdict": text.isupper()}, name="caps", version="1")

    def summarize(self, items: Any, options: BaseModel, gold: Any) -> dict[str, Any]:
        ok = items[items["status"] == "ok"]
        return {"share": float(ok["verdict"].mean()) if len(ok) else None}


@pytest.fixture
def shouting(tmp_path: Path) -> Path:
    register_task(_Shouting)
    data = tmp_path / "texts.jsonl"
    rows = [{"id": 1, "text": "HELLO"}, {"id": 2, "text": "hello"}, {"id": 3, "text": "STOP NOW"}]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return data


def test_registry_lists_every_builtin_task_and_loads_each():
    assert set(task_names()) >= BUILTIN
    for name in BUILTIN:
        task = get_task(name)
        assert task.name == name
        assert {"judge", "score"} <= set(task.verbs)


def test_unknown_task_is_an_error_listing_the_known_ones():
    with pytest.raises(ConfigError, match="no task 'nope'; tasks: .*ragbench"):
        get_task("nope")


def test_a_python_task_registered_with_the_decorator_runs_through_every_verb_it_serves(
    shouting: Path, tmp_path: Path
):
    run = jurist.judge("test-shouting", shouting, out=tmp_path / "run", progress=False)
    assert run.summary["items"] == 3 and run.summary["ok"] == 3
    assert run.summary["share"] == pytest.approx(2 / 3)
    assert (tmp_path / "run" / "summary.json").is_file() and (tmp_path / "run" / "report.md").is_file()
    rescored = jurist.score("test-shouting", tmp_path / "run")
    assert rescored.items.set_index("id")["verdict"].to_dict() == {"1": True, "2": False, "3": True}
    with pytest.raises(ConfigError, match="task 'test-shouting' cannot be optimized"):
        jurist.optimize("test-shouting", shouting, shouting, None, out=tmp_path / "a.json")
    with pytest.raises(ConfigError, match="cannot be calibrated"):
        jurist.calibrate("test-shouting", [shouting], out=tmp_path / "cal")
    assert get_task("test-shouting").verbs == ["judge", "score"]


def test_judge_returns_the_items_table_and_writes_a_stable_run_directory(
    shouting: Path, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    items = jurist.judge("test-shouting", shouting, progress=False)
    assert isinstance(items, pd.DataFrame) and len(items) == 3
    assert (
        items.run_dir == Path("runs/test-shouting") / f"texts-baseline-{jurist.JudgeConfig().fingerprint()}"
    )
    assert items.summary["share"] == pytest.approx(2 / 3) and items.report.startswith("# test-shouting")
    again = jurist.judge("test-shouting", shouting, progress=False)
    assert again.run_dir == items.run_dir and again.summary["items"] == 3
    assert (
        isinstance(items[items["verdict"]], pd.DataFrame) and items[items["verdict"]].run_dir == items.run_dir
    )


class _Counted(_Shouting):
    """Judges only the texts with a letter; its summary and a metric that needs gold both use
    the dataset of the data scored against, asked for through ``read_once``; counts its reads."""

    name = "test-counted"
    metrics = [  # noqa: RUF012 - a task's declared metrics
        jurist.Metric("share", description="share of shouting texts"),
        jurist.Metric("gold_rows", lambda items, gold: float(len(gold.rows)), needs_gold=True),
    ]
    reads: ClassVar[list[str]] = []

    def read(self, path: str | Path, options: BaseModel) -> _Rows:
        self.reads.append(str(path))
        return super().read(path, options)

    def items(self, dataset: _Rows, options: BaseModel) -> list[Item]:
        return [
            item for item in super().items(dataset, options) if any(c.isalpha() for c in item.inputs["text"])
        ]

    def summarize(self, items: Any, options: BaseModel, gold: Any) -> dict[str, Any]:
        summary = super().summarize(items, options, gold)
        if gold is not None:
            dataset = read_once("dataset", gold, lambda: self.read(gold, options))
            summary["rows"] = len(dataset.rows)
        return summary


def test_the_loop_scores_a_judged_run_with_the_dataset_it_read(shouting: Path, tmp_path: Path):
    register_task(_Counted)
    _Counted.reads.clear()
    with shouting.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"id": 4, "text": "1 2 3"}) + "\n")
    run = jurist.judge("test-counted", shouting, out=tmp_path / "run", progress=False)
    assert run.summary["items"] == 3 and run.summary["rows"] == 4 and run.summary["gold_rows"] == 4.0
    assert _Counted.reads == [str(shouting)]  # read once: its scoring is handed what the loop read
    _Counted.reads.clear()
    jurist.judge("test-counted", shouting, out=tmp_path / "run", progress=False)  # resumed
    assert _Counted.reads == [str(shouting)]
    # `jurist score` has no dataset in hand: it reads the gold file, once for the whole scoring.
    _Counted.reads.clear()
    scored = jurist.score("test-counted", tmp_path / "run", gold=shouting)
    assert _Counted.reads == [str(shouting)]
    assert {key: scored.summary[key] for key in ("rows", "gold_rows", "share")} == {
        key: run.summary[key] for key in ("rows", "gold_rows", "share")
    }
    _Counted.reads.clear()
    assert "rows" not in jurist.score("test-counted", tmp_path / "run").summary
    assert _Counted.reads == []
    _Counted.reads.clear()
    out = tmp_path / "cli"
    assert run_cli(["judge", "test-counted", str(shouting), "--out", str(out), "--no-progress"]) == 0
    assert _Counted.reads == [str(shouting)]
    assert json.loads((out / "summary.json").read_text(encoding="utf-8"))["rows"] == 4


def test_task_options_are_read_from_the_command_line_and_validated(shouting: Path):
    task = get_task("test-shouting")
    positional, values = split_task_arguments(
        task, ["data.jsonl", "--num-options", "3", "--strict", "--labels", "x,y", "--labels=z"]
    )
    assert positional == ["data.jsonl"]
    assert task.options(values).model_dump() == {
        "num_options": 3,
        "strict": True,
        "labels": ["x", "y", "z"],
        "out": None,
    }
    assert split_task_arguments(task, ["run", "-o", "tables"]) == (["run"], {"out": "tables"})
    assert split_task_arguments(task, ["--no-strict"])[1] == {"strict": False}
    with pytest.raises(ConfigError, match=r"has no option --bogus \(its options: --num-options"):
        split_task_arguments(task, ["--bogus", "1"])
    with pytest.raises(ConfigError, match="needs a value"):
        split_task_arguments(task, ["--num-options"])
    with pytest.raises(ConfigError, match="num-options"):
        task.options({"num_options": "many"})


def test_cli_judge_and_score_a_registered_task(shouting: Path, tmp_path: Path, capsys):
    out = tmp_path / "run"
    assert run_cli(["judge", "test-shouting", str(shouting), "--out", str(out), "--no-progress"]) == 0
    assert "3 items: 3 scored, 0 failed" in capsys.readouterr().out
    assert run_cli(["score", "test-shouting", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["share"] == pytest.approx(2 / 3)
    assert run_cli(["judge", "test-shouting", str(shouting), "--out", str(out), "--bogus", "1"]) == 2
    assert "has no option --bogus" in capsys.readouterr().err
    assert run_cli(["optimize", "test-shouting", "--train", "x", "--dev", "y", "--out", "a.json"]) == 2
    assert "cannot be optimized" in capsys.readouterr().err


def test_jurist_tasks_lists_and_shows_tasks(capsys):
    assert run_cli(["tasks"]) == 0
    listing = capsys.readouterr().out
    for name in BUILTIN:
        assert f"\n{name}  [" in "\n" + listing, name
    assert run_cli(["tasks", "--json"]) == 0
    described = {entry["name"]: entry for entry in json.loads(capsys.readouterr().out)}
    assert described["ragbench"]["verbs"] == ["judge", "score", "calibrate", "optimize", "prompt"]
    assert "question" in described["ragbench"]["inputs"]
    assert run_cli(["tasks", "show", "ragbench"]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("ragbench  (built-in)")
    assert "hallucination_auroc" in shown and "inputs:" in shown and "options:" in shown
    assert run_cli(["tasks", "show", "nope"]) == 2


def test_prompt_prints_the_messages_without_calling_the_server(server, tmp_path: Path, capsys):
    config = loopback_config(server.base_url, tmp_path / "cache")
    config_file = tmp_path / "judge.yaml"
    config_file.write_text(
        "\n".join(f"{key}: {json.dumps(value)}" for key, value in config.model_dump(mode="json").items())
    )
    assert run_cli(["prompt", "ragbench", "sample:ragbench", "--row", "2", "-c", str(config_file)]) == 0
    printed = capsys.readouterr().out
    assert printed.count("=== item ") == 1
    assert "--- system ---" in printed and "--- user ---" in printed
    assert "[[ ## sentence_support_information ## ]]" in printed  # the output fields it asks for
    lines = resolve_input("sample:ragbench").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    assert rows[2]["question"] in printed
    assert server.requests == 0
    # With no config, the messages are those the uncompiled LLM program would send.
    assert run_cli(["prompt", "ragbench", "sample:ragbench", "--json"]) == 0
    calls = json.loads(capsys.readouterr().out)
    assert [m["role"] for m in calls[0]["messages"]][:2] == ["system", "user"]
    assert rows[0]["question"] in calls[0]["messages"][-1]["content"]


def test_prompt_of_a_task_without_an_llm_program_is_refused(shouting: Path):
    with pytest.raises(ConfigError, match="cannot run an LLM judge"):
        jurist.prompt("test-shouting", shouting)


def test_prompt_needs_no_key_and_makes_no_cache(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.delenv("JURIST_PROMPT_KEY", raising=False)
    config = tmp_path / "judge.yaml"
    cache = tmp_path / "cache"
    config.write_text(f"model: openai/some-model\napi_key_env: JURIST_PROMPT_KEY\ncache_dir: {cache}\n")
    assert run_cli(["prompt", "ragbench", "sample:ragbench", "-c", str(config)]) == 0
    assert "--- user ---" in capsys.readouterr().out
    assert not cache.exists()


class _RowCountOptions(_Options):
    _rows: int | None = PrivateAttr(default=None)


class _Counting(_Shouting):
    """A task whose judge needs something of the data besides its items: the number of rows."""

    name = "test-counting"
    Options = _RowCountOptions

    def judge_options(self, dataset: _Rows, options: BaseModel) -> BaseModel:
        copy = options.model_copy()
        copy._rows = len(dataset.rows)
        return copy

    def baseline(self, options: BaseModel) -> Judge:
        rows = options._rows

        def verdict(text: str) -> dict[str, Any]:
            return {"verdict": text.isupper(), "rows": rows}

        return BaselineJudge(verdict, name="caps-counted", version="1")


def test_the_judge_gets_what_judge_options_takes_from_the_data_and_the_manifest_does_not(
    shouting: Path, tmp_path: Path
):
    register_task(_Counting)
    items = jurist.judge("test-counting", shouting, out=tmp_path / "run", progress=False)
    assert items["rows"].tolist() == [3, 3, 3]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    assert "rows" not in json.dumps(manifest["task_options"])
