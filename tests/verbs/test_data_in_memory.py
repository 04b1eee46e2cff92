"""Every verb takes data as a DataFrame or a list of dicts, as it takes the same rows from a file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from pydantic import BaseModel

import jurist
from jurist.datasets.io import iter_records
from jurist.datasets.samples import resolve_input
from jurist.errors import ConfigError, InputError, RowError, RunDirectoryError
from jurist.judges.judge import BaselineJudge, Judge
from jurist.runner import Item
from jurist.tasks import Task, get_task, register_task
from jurist.testing import OpenAICompatibleServer
from jurist.verbs._data import hashed_file, path_or_rows
from support import loopback_config, write_jsonl

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
FAITHFULNESS = EXAMPLES / "context-faithfulness" / "task.yaml"
FAITHFULNESS_ROWS = EXAMPLES / "context-faithfulness" / "rows.jsonl"
VOLATILE = {"latency_s"}  # how long an item took, the one per-item column that differs run to run


def records(path: str | Path, limit: int | None = None) -> list[dict[str, Any]]:
    """The rows of a data file as a task's reader sees them (any format, ``sample:NAME``)."""
    rows = [record for _, record in iter_records(resolve_input(path))]
    return rows[:limit]


def stable(items: pd.DataFrame) -> pd.DataFrame:
    return items[[column for column in items.columns if column not in VOLATILE]].reset_index(drop=True)


def figures(summary: dict[str, Any]) -> dict[str, Any]:
    """A summary without what names the run (its directory, the dataset's path) or times it."""
    return {key: value for key, value in summary.items() if key not in {"run", *VOLATILE}}


@pytest.fixture(scope="module")
def faithfulness(tmp_path_factory) -> dict[str, Any]:
    """The YAML example judged by its baseline from the file, a DataFrame and a list of dicts."""
    root = tmp_path_factory.mktemp("faithfulness")
    rows = records(FAITHFULNESS_ROWS)
    frame = pd.DataFrame(rows)
    return {
        "rows": rows,
        "frame": frame,
        "file": jurist.judge(FAITHFULNESS, FAITHFULNESS_ROWS, out=root / "file", progress=False),
        "frame_run": jurist.judge(FAITHFULNESS, frame, out=root / "frame", progress=False),
        "list_run": jurist.judge(FAITHFULNESS, rows, out=root / "list", progress=False),
        "root": root,
    }


def test_a_yaml_task_judges_a_frame_and_a_list_as_it_judges_the_file(faithfulness):
    file_run = faithfulness["file"]
    for run in (faithfulness["frame_run"], faithfulness["list_run"]):
        pd.testing.assert_frame_equal(stable(run), stable(file_run))
        assert figures(run.summary) == figures(file_run.summary)
        assert run.summary["agreement"] == file_run.summary["agreement"]
    frame_dir = faithfulness["root"] / "frame"
    manifest = json.loads((frame_dir / "manifest.json").read_text())
    assert manifest["dataset"]["path"] == str(frame_dir / "input.jsonl")
    assert manifest["dataset"]["from"] == "DataFrame" and manifest["dataset"]["items"] == len(
        faithfulness["rows"]
    )
    listed = json.loads((faithfulness["root"] / "list" / "manifest.json").read_text())["dataset"]
    assert listed["from"] == "list" and listed["sha256"] == manifest["dataset"]["sha256"]
    assert "from" not in json.loads((faithfulness["root"] / "file" / "manifest.json").read_text())["dataset"]
    kept = records(frame_dir / "input.jsonl")
    assert kept == faithfulness["rows"]  # the run keeps the rows it judged


def test_score_calibrate_and_prompt_take_a_frame(faithfulness, tmp_path):
    frame, file_run = faithfulness["frame"], faithfulness["file"]
    run_dir = faithfulness["root"] / "file"
    from_file = jurist.score(FAITHFULNESS, run_dir, gold=FAITHFULNESS_ROWS)
    from_frame = jurist.score(FAITHFULNESS, run_dir, gold=frame)
    assert from_frame.summary["agreement"] == from_file.summary["agreement"] == file_run.summary["agreement"]
    assert not list(run_dir.glob("gold-*.jsonl"))  # nothing is written without write=True

    by_file = jurist.calibrate(FAITHFULNESS, [FAITHFULNESS_ROWS], out=tmp_path / "a", n_resamples=50)
    by_frame = jurist.calibrate(FAITHFULNESS, frame, out=tmp_path / "b", n_resamples=50)
    kept = list((tmp_path / "b" / "data").glob("rows-*.jsonl"))
    assert len(kept) == 1 and records(kept[0]) == faithfulness["rows"]
    board_file, board_frame = by_file.leaderboard.iloc[0], by_frame.leaderboard.iloc[0]
    assert board_frame["dataset"] == kept[0].stem
    named = ["dataset", "run_dir", "latency_s"]  # the datasets' names, and how long the runs took
    pd.testing.assert_series_equal(board_frame.drop(named), board_file.drop(named))
    assert by_frame.settings["gold"] == [str(kept[0])]

    planned = jurist.estimate_calibration(FAITHFULNESS, [frame], out=tmp_path / "c")
    assert list(planned.table["dataset"]) == [kept[0].stem] and not (tmp_path / "c").exists()

    config = jurist.JudgeConfig(model="openai/some-judge")
    assert jurist.prompt(FAITHFULNESS, frame, config, row=3) == jurist.prompt(
        FAITHFULNESS, FAITHFULNESS_ROWS, config, row=3
    )


def test_score_that_writes_keeps_the_gold_rows_in_the_run(faithfulness, tmp_path):
    shutil.copytree(faithfulness["root"] / "file", tmp_path / "run")
    scored = jurist.score(FAITHFULNESS, tmp_path / "run", gold=faithfulness["rows"], write=True)
    (kept,) = (tmp_path / "run").glob("gold-*.jsonl")
    assert records(kept) == faithfulness["rows"]
    assert scored.summary["agreement"] == faithfulness["file"].summary["agreement"]


def test_ragbench_judges_rows_of_its_sample_as_it_judges_the_file(tmp_path):
    rows = records("sample:ragbench", limit=4)
    data = write_jsonl(tmp_path / "four.jsonl", rows)
    from_file = jurist.judge("ragbench", data, out=tmp_path / "file", progress=False)
    from_frame = jurist.judge("ragbench", pd.DataFrame(rows), out=tmp_path / "frame", progress=False)
    pd.testing.assert_frame_equal(stable(from_frame), stable(from_file))
    assert figures(from_frame.summary) == figures(from_file.summary)
    assert from_frame.summary["run"]["dataset"]["from"] == "DataFrame"


# ---------------------------------------------------------------------- resume and refusals

CALLS: list[str] = []


class _Counted(Task):
    """A task whose offline judge counts its calls (to see what a resume judges again)."""

    name = "test-counted"
    inputs = {"text": "the text"}
    outputs = {"verdict": "its length"}

    def read(self, path: str | Path, options: BaseModel) -> Any:
        return _Dataset(Path(path), [record for _, record in iter_records(path)])

    def items(self, dataset: Any, options: BaseModel) -> list[Item]:
        return [Item(id=str(row["id"]), inputs={"text": row["text"]}) for row in dataset.rows]

    def baseline(self, options: BaseModel) -> Judge:
        def judge(text: str) -> dict[str, Any]:
            CALLS.append(text)
            return {"verdict": len(text)}

        return BaselineJudge(judge, name="length", version="1")


class _Dataset:
    def __init__(self, path: Path, rows: list[dict[str, Any]]) -> None:
        self.path, self.rows = path, rows

    def describe(self) -> dict[str, Any]:
        from jurist.datasets.io import sha256_file

        return {"path": str(self.path), "sha256": sha256_file(self.path), "items": len(self.rows)}


@pytest.fixture
def counted(tmp_path, monkeypatch) -> pd.DataFrame:
    register_task(_Counted)
    CALLS.clear()
    monkeypatch.chdir(tmp_path)
    return pd.DataFrame({"id": ["a", "b", "c"], "text": ["one", "three", "seven"]})


def test_the_same_frame_again_resumes_with_no_new_judgment(counted):
    first = jurist.judge("test-counted", counted, progress=False)
    assert len(CALLS) == 3
    run_dir = first.run_dir
    assert run_dir.name.startswith("rows-") and (run_dir / "input.jsonl").is_file()
    again = jurist.judge("test-counted", counted.copy(), progress=False)  # a copy: the same rows
    assert again.run_dir == run_dir and len(CALLS) == 3
    assert again.set_index("id")["verdict"].to_dict() == {"a": 3, "b": 5, "c": 5}
    as_list = jurist.judge("test-counted", counted.to_dict(orient="records"), out=run_dir, progress=False)
    assert len(as_list) == 3 and len(CALLS) == 3
    other = jurist.judge("test-counted", counted.iloc[:2], progress=False)
    assert other.run_dir != run_dir and len(CALLS) == 5  # other rows, their own run directory


def test_other_rows_into_the_same_directory_are_refused(counted, tmp_path):
    jurist.judge("test-counted", counted, out=tmp_path / "run", progress=False)
    kept = (tmp_path / "run" / "input.jsonl").read_bytes()
    changed = counted.assign(text=["one", "three", "eight"])
    with pytest.raises(RunDirectoryError, match="holds a run of other rows"):
        jurist.judge("test-counted", changed, out=tmp_path / "run", progress=False)
    assert (tmp_path / "run" / "input.jsonl").read_bytes() == kept and len(CALLS) == 3
    data = write_jsonl(tmp_path / "texts.jsonl", counted.to_dict(orient="records"))
    jurist.judge("test-counted", data, out=tmp_path / "from-file", progress=False)
    with pytest.raises(RunDirectoryError, match="holds a run of data read from a file"):
        jurist.judge("test-counted", counted, out=tmp_path / "from-file", progress=False)
    assert not (tmp_path / "from-file" / "input.jsonl").exists()


def _faithful(body: dict[str, Any]) -> str:
    """A loopback judge of the context-faithfulness example: always supported."""
    fields = {"reasoning": "Supported.", "verdict": "true", "confidence": "0.9"}
    return "\n\n".join(f"[[ ## {k} ## ]]\n{v}" for k, v in fields.items()) + "\n\n[[ ## completed ## ]]"


def test_repeats_of_a_frame_go_where_the_panel_would_put_a_file_of_them(faithfulness, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    frame = faithfulness["frame"].iloc[:3]
    with OpenAICompatibleServer(_faithful) as server:
        config = loopback_config(server.base_url, tmp_path / "cache")
        run = jurist.judge(FAITHFULNESS, frame, config, repeats=2, progress=False)
        calls = server.requests
        again = jurist.judge(FAITHFULNESS, frame, config, repeats=2, progress=False)
        assert server.requests == calls == 6
    assert again.run_dir == run.run_dir and run.run_dir.name.startswith("rows-")
    assert (run.run_dir / "input.jsonl").is_file() and run.summary["items"] == 3
    repeat = json.loads((run.run_dir / "repeats" / "1" / "manifest.json").read_text())["dataset"]
    assert repeat["path"] == str(run.run_dir / "input.jsonl") and repeat["from"] == "DataFrame"


def test_a_cascade_of_a_frame_goes_where_it_would_put_a_file_of_them(faithfulness, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    frame = faithfulness["frame"].iloc[:4]
    with OpenAICompatibleServer(_faithful) as server:
        cascade = tmp_path / "tiers.yaml"
        cascade.write_text(
            "cascade:\n  stages:\n"
            "    - {name: rules, config: baseline, escalate_below: 0.5}\n"
            f"    - {{name: large, model: openai/loopback-judge, api_base: '{server.base_url}',"
            f" api_key_env: JURIST_TEST_API_KEY, cache_dir: '{tmp_path / 'cache'}'}}\n",
            encoding="utf-8",
        )
        run = jurist.judge(FAITHFULNESS, frame, cascade, progress=False)
        stage = json.loads((run.run_dir / "stages" / "rules" / "manifest.json").read_text())["dataset"]
        assert stage["path"] == str(run.run_dir / "input.jsonl") and stage["from"] == "DataFrame"
        again = jurist.judge(FAITHFULNESS, frame.to_dict(orient="records"), cascade, progress=False)
    assert again.run_dir == run.run_dir and run.run_dir.name.startswith("rows-")
    assert (run.run_dir / "input.jsonl").is_file() and run.summary["items"] == again.summary["items"] == 4
    # the manifest tells how the rows were given the last time
    stage = json.loads((run.run_dir / "stages" / "rules" / "manifest.json").read_text())["dataset"]
    assert stage["from"] == "list"


def test_estimate_of_a_frame_writes_nothing_and_sees_what_judge_recorded(counted):
    planned = jurist.estimate("test-counted", counted)
    assert planned.table.iloc[0]["items"] == 3 and not Path("runs").exists()
    jurist.judge("test-counted", counted, progress=False)
    again = jurist.estimate("test-counted", counted)
    assert again.table.iloc[0]["items"] == 3 and again.table.iloc[0]["to_judge"] == 0


def test_a_bad_row_is_named_by_its_position_and_field(faithfulness, tmp_path):
    frame = faithfulness["frame"].copy()
    frame.loc[2, "response"] = None
    with pytest.raises(RowError, match=r"^DataFrame row 2, field 'response': empty input value$"):
        jurist.judge(FAITHFULNESS, frame, out=tmp_path / "run", progress=False)
    rows = [dict(row) for row in faithfulness["rows"]]
    rows[4]["id"] = rows[1]["id"]
    with pytest.raises(RowError, match=r"^list item 4, field 'id': id .* also occurs on item 1$"):
        jurist.judge(FAITHFULNESS, rows, out=tmp_path / "run", progress=False)
    # The refused rows started no run: the good rows may use the directory.
    run = jurist.judge(FAITHFULNESS, faithfulness["frame"], out=tmp_path / "run", progress=False)
    assert run.summary["items"] == len(rows)


def test_empty_data_and_other_types_are_refused(tmp_path):
    with pytest.raises(InputError, match="the DataFrame holds no rows"):
        jurist.judge(
            FAITHFULNESS, pd.DataFrame(columns=["id", "question"]), out=tmp_path / "a", progress=False
        )
    with pytest.raises(InputError, match="the list holds no rows"):
        jurist.prompt(FAITHFULNESS, [])
    with pytest.raises(ConfigError, match=r"a pandas DataFrame or a list of dicts \(got dict\)"):
        jurist.judge(FAITHFULNESS, {"id": 1}, out=tmp_path / "b", progress=False)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_a_task_that_reads_files_by_their_names_refuses_rows(tmp_path):
    with pytest.raises(ConfigError, match=r"task 'rgb' cannot take rows in memory .* it reads RGB's files"):
        jurist.judge("rgb", [{"query": "q"}], out=tmp_path / "rgb", progress=False)


# ---------------------------------------------------------------------- every built-in reader

GATES_GOLD = [
    {"qid": "q1", "q": "Sky?", "answerable": True, "gold_ids": ["d1"], "gold_claim": "The sky is blue."},
    {"qid": "q2", "q": "Z?", "answerable": False, "gold_ids": []},
]
GATES_TRACES = [
    {"qid": "q1", "answer": "The sky is blue. citations: [d1]"},
    {"qid": "q1", "answer": "The sky is green. citations: [d1]"},
    {"qid": "q2", "answer": "not in context"},
]
READERS = {
    "ragbench": ("sample:ragbench", {}),
    "pairwise": ("sample:pairs", {}),
    "pairwise-subeval": ("tests/data/devbench-subeval/examples/DevBench_projects_example.xlsx", {}),
    "pairwise-gold": ("sample:pairs", {}),
    "rgb-rejection": ("sample:rgb-judgments", {}),
    "rgb-error-detection": ("sample:rgb-judgments", {}),
    "gates": (None, {}),
    "heritage": ("sample:heritage", {}),
    "heritage-ner": ("sample:heritage", {}),
    "heritage-classification": ("sample:heritage", {}),
    "heritage-linking": ("sample:heritage", {}),
    "heritage-qa": ("sample:heritage", {}),
    **{
        str(EXAMPLES / name / "task.yaml"): (str(EXAMPLES / name / data), {})
        for name, data in {
            "context-faithfulness": "rows.jsonl",
            "llmbar-pairwise": "pairs.json",
            "heritage-custodian-type": "texts.csv",
            "mt-bench-grader": "answers.jsonl",
        }.items()
    },
}


@pytest.mark.parametrize("name", sorted(READERS))
def test_every_task_reads_rows_in_memory_as_it_reads_the_file(name, tmp_path):
    data, options = READERS[name]
    if name == "gates":
        gold = write_jsonl(tmp_path / "gold.jsonl", GATES_GOLD)
        data, options = str(write_jsonl(tmp_path / "traces.jsonl", GATES_TRACES)), {"gold": str(gold)}
    task = get_task(name.removesuffix("-subeval"))
    chosen = task.options(options)
    path = resolve_input(ROOT / data if data.startswith("tests/") else data)
    source = path_or_rows(records(path), task)
    assert not isinstance(source, str | Path)
    file = hashed_file(source, tmp_path, source.name)

    def items(path: Path) -> list[tuple[str, Any]]:
        dataset = task.read(path, chosen)
        # pairwise-gold compares its pairs' labels without a judge: its pairs are its items
        judged = dataset.items if name == "pairwise-gold" else task.items(dataset, chosen)
        return [(item.id, item.inputs) for item in judged]

    expected = items(path)
    assert expected and items(file) == expected


# ---------------------------------------------------------------------- optimize

GRADER = """\
name: frame-grader
instructions: Rate the answer from 1 to 5.
inputs: [answer]
output:
  kind: score
  range: [1, 5]
  reasoning: false
gold: human
"""


def _grade(body: dict[str, Any]) -> str:
    """A loopback grader: the score is the digit after ``SCORE=`` in the answer."""
    said = json.dumps(body).split("SCORE=", 1)[1][0]
    return f"[[ ## verdict ## ]]\n{said}\n\n[[ ## completed ## ]]"


def test_optimize_takes_frames_and_keeps_them_beside_the_artifact(tmp_path):
    task = tmp_path / "grader.yaml"
    task.write_text(GRADER, encoding="utf-8")

    def rows(pairs: list[tuple[int, int]], start: int) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {"id": f"r{start + i}", "answer": f"Answer {start + i}: SCORE={said}", "human": gold}
                for i, (said, gold) in enumerate(pairs)
            ]
        )

    train, dev = rows([(2, 2), (4, 4), (5, 3)], 0), rows([(3, 3), (2, 4)], 100)
    with OpenAICompatibleServer(_grade) as server:
        config = loopback_config(server.base_url, tmp_path / "cache")
        result = jurist.optimize(task, train, dev, config, out=tmp_path / "a" / "judge.json")
    data = result.artifact.data
    for split, frame in (("train", train), ("dev", dev)):
        kept = Path(data[split].path)
        assert kept.parent == tmp_path / "a" and kept.name.startswith(f"judge.{split}-")
        assert records(kept) == frame.to_dict(orient="records") and data[split].examples == len(frame)
    assert result.artifact.scores["dev_before"].score == pytest.approx((1 + 0.5) / 2)
