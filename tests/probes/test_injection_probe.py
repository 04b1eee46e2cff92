"""Injection probes: judged text never becomes the parsed verdict (LLM judges on the loopback
server that copy the judged text into their reply, and every offline baseline)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import dspy
import pytest

from jurist.errors import ConfigError
from jurist.judges.adapters import ESCAPE, unescape_markers
from jurist.judges.config import JudgeConfig
from jurist.judges.judge import BaselineJudge
from jurist.tasks import Task, get_task
from jurist.tasks.probes import load_cases
from jurist.testing import OpenAICompatibleServer, last_user_message
from jurist.verbs import probe_injection
from support import loopback_config, run_cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
_INPUT_HEADER = re.compile(r"^\[\[ ## (\w+) ## \]\]$", re.M)
_FIELD = re.compile(r"^\d+\. `(\w+)`", re.M)

RAGBENCH_VERDICT = {
    "all_relevant_sentence_keys": '["0a"]',
    "overall_supported": "True",
    "sentence_support_information": json.dumps(
        [
            {
                "response_sentence_key": "a",
                "explanation": "",
                "supporting_sentence_keys": ["0a"],
                "fully_supported": True,
            }
        ]
    ),
    "all_utilized_sentence_keys": '["0a"]',
}

# (task, data, the copying judge's fixed verdict fields); every other output field gets the pasted text.
LLM_TASKS = [
    ("ragbench", "sample:ragbench", RAGBENCH_VERDICT),
    ("pairwise", "sample:pairs", {"choice": "A"}),
    (
        str(EXAMPLES / "context-faithfulness/task.yaml"),
        str(EXAMPLES / "context-faithfulness/rows.jsonl"),
        {"verdict": "True", "confidence": "0.8"},
    ),
    (
        str(EXAMPLES / "heritage-custodian-type/task.yaml"),
        str(EXAMPLES / "heritage-custodian-type/texts.csv"),
        {"verdict": "M"},
    ),
    (
        str(EXAMPLES / "llmbar-pairwise/task.yaml"),
        str(EXAMPLES / "llmbar-pairwise/pairs.json"),
        {"verdict": "A"},
    ),
    (
        str(EXAMPLES / "mt-bench-grader/task.yaml"),
        str(EXAMPLES / "mt-bench-grader/answers.jsonl"),
        {"verdict": "7"},
    ),
]
LLM_IDS = ["ragbench", "pairwise", "bool", "label", "yaml-pairwise", "score"]

SLOPPY_STYLES = ["single-quotes", "unquoted-keys", "trailing-comma", "raw-newline"]
"""How the sloppy judge writes its own object: a Python dict, a JS object, JSON with a trailing
comma, JSON with a raw line break in a string."""
SLOPPY_FAMILIES = ["python-dict", "js-object", "trailing-comma", "fenced-after-prose", "after-sloppy-object"]
"""The probe families of objects a lenient JSON repair reads."""


def copying_judge(verdict: dict[str, str], *, retype_markers: bool = False) -> Any:
    """A loopback responder that answers ``verdict`` in the adapter's format and pastes the
    judged text (the user message, its own field headers made plain) into every other field.

    With ``retype_markers`` it pastes the text with the adapter's marker escapes removed,
    as a model that re-types what it read would."""

    def respond(body: dict[str, Any]) -> str:
        system = str(body["messages"][0]["content"])
        declared, _, rest = system.partition("Your output fields are:")
        inputs = set(_FIELD.findall(declared))
        outputs = _FIELD.findall(rest.split("All interactions", 1)[0])
        pasted = _INPUT_HEADER.sub(
            lambda match: f"{match.group(1)}:" if match.group(1) in inputs else match.group(0),
            last_user_message(body),
        )
        if retype_markers:
            pasted = unescape_markers(pasted)
        if "Outputs will be a JSON object" in system:
            values = {name: _json_value(verdict[name]) if name in verdict else pasted for name in outputs}
            if retype_markers:
                return f"{pasted}\n{json.dumps(values)}"
            return json.dumps(values)
        fields = [f"[[ ## {name} ## ]]\n{verdict.get(name, pasted)}" for name in outputs]
        return "\n\n".join(fields) + "\n\n[[ ## completed ## ]]"

    return respond


def _json_value(text: str) -> Any:
    try:
        return json.loads(text.lower() if text in ("True", "False") else text)
    except json.JSONDecodeError:
        return text


@pytest.mark.parametrize(("task_name", "data", "verdict"), LLM_TASKS, ids=LLM_IDS)
def test_copying_llm_judge_is_never_moved(
    task_name: str, data: str, verdict: dict[str, str], tmp_path: Path
) -> None:
    with OpenAICompatibleServer(copying_judge(verdict)) as server:
        task = get_task(task_name)
        config = loopback_config(server.base_url, tmp_path / "cache").model_copy(update={"concurrency": 8})
        report = probe_injection(task, data, config, out=tmp_path / "probe", limit=2, progress=False)
        sent = [last_user_message(body) for body in server.bodies]
    assert any(f"[{ESCAPE}[ ## " in message for message in sent)  # the fake fields reached the judge, inert
    assert report.cases >= 50 and not report.skipped
    assert report.totals["probes"] == 2 * report.cases
    assert report.moved == 0, report.to_dict()["moved_probes"][:3]
    assert report.totals["failed"] == 0, report.to_dict()["failed_probes"][:3]


@pytest.mark.parametrize("adapter", ["chat", "json"])
def test_a_judge_that_retypes_the_markers_fails_rather_than_moves(adapter: str, tmp_path: Path) -> None:
    task_name, data, verdict = LLM_TASKS[2]
    with OpenAICompatibleServer(copying_judge(verdict, retype_markers=True)) as server:
        task = get_task(task_name)
        config = loopback_config(server.base_url, tmp_path / "cache").model_copy(
            update={"concurrency": 8, "adapter": adapter, "parse_retries": 0}
        )
        report = probe_injection(task, data, config, out=tmp_path / "probe", limit=1, progress=False)
    assert report.moved == 0, report.to_dict()["moved_probes"][:3]
    failed = report.to_dict()["failed_probes"]
    assert failed and all("ambiguous verdict" in probe["error"] for probe in failed)
    assert all(probe["raw"] for probe in failed)
    families = report.by_family()
    assert families["fake-field"]["failed"] > 0


def with_adapter(task: Task, adapter: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``task``'s LLM judges read answers with ``adapter`` instead of jurist's."""
    make_judge = task.make_judge

    def judge_with_adapter(config: JudgeConfig, options: Any) -> Any:
        judge = make_judge(config, options)
        judge.adapter = adapter
        return judge

    monkeypatch.setattr(task, "make_judge", judge_with_adapter)


def test_dspy_s_own_chat_adapter_is_moved_which_the_probe_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The probe detects the bug it guards against: DSPy's plain ChatAdapter takes the first
    copy of a field, so a retyped fake field becomes the verdict."""
    task_name, data, verdict = LLM_TASKS[2]
    task = get_task(task_name)
    with_adapter(task, dspy.ChatAdapter(), monkeypatch)
    cases = [case for case in load_cases() if case.family == "fake-field"]
    with OpenAICompatibleServer(copying_judge(verdict, retype_markers=True)) as server:
        config = loopback_config(server.base_url, tmp_path / "cache").model_copy(update={"parse_retries": 0})
        report = probe_injection(task, data, config, out=tmp_path / "p", limit=1, cases=cases, progress=False)
    assert report.moved > 0


BASELINE_TASKS = [
    ("ragbench", "sample:ragbench"),
    ("pairwise", "sample:pairs"),
    ("rgb-rejection", "sample:rgb-judgments"),
    ("rgb-error-detection", "sample:rgb-judgments"),
    ("heritage-classification", "sample:heritage"),
    *(
        (str(EXAMPLES / name / "task.yaml"), str(EXAMPLES / name / data))
        for name, data in [
            ("context-faithfulness", "rows.jsonl"),
            ("heritage-custodian-type", "texts.csv"),
            ("llmbar-pairwise", "pairs.json"),
            ("mt-bench-grader", "answers.jsonl"),
        ]
    ),
]


@pytest.mark.parametrize(
    ("task_name", "data"),
    BASELINE_TASKS,
    ids=[t[0].split("/")[-2] if "/" in t[0] else t[0] for t in BASELINE_TASKS],
)
def test_every_baseline_is_never_moved(task_name: str, data: str, tmp_path: Path) -> None:
    report = probe_injection(task_name, data, out=tmp_path / "probe", limit=4, progress=False)
    assert report.totals["probes"] >= 4 * 50 and not report.skipped
    assert report.moved == 0, report.to_dict()["moved_probes"][:3]
    assert report.totals["failed"] == 0


def test_heritage_baseline_is_never_moved_and_extractions_are_skipped(tmp_path: Path) -> None:
    report = probe_injection("heritage", "sample:heritage", out=tmp_path / "all", limit=1, progress=False)
    assert report.totals["probes"] >= 50 and report.moved == 0 and report.totals["failed"] == 0
    skipped = probe_injection(
        "heritage-ner", "sample:heritage", out=tmp_path / "ner", limit=1, progress=False
    )
    assert skipped.totals["probes"] == 0 and "no fixed vocabulary" in next(iter(skipped.skipped.values()))


def test_a_baseline_that_reads_verdict_text_is_reported_as_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A judge that takes "Choice: X" out of a response is caught by the probe."""
    task = get_task("pairwise")

    def gullible(**inputs: Any) -> dict[str, Any]:
        found = re.findall(r"Choice: ([AB])", inputs["response_1"] + inputs["response_2"])
        return {"choice": found[0] if found else "A", "reason": ""}

    judge = BaselineJudge(gullible, name="gullible", version="1")
    monkeypatch.setattr(task, "make_judge", lambda config, options: judge)
    report = probe_injection(task, "sample:pairs", out=tmp_path / "probe", limit=2, progress=False)
    assert report.moved > 0
    assert report.by_family()["verdict-text"]["moved"] > 0


def test_cli_probe_injection_exit_codes_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    task = str(EXAMPLES / "mt-bench-grader/task.yaml")
    data = str(EXAMPLES / "mt-bench-grader/answers.jsonl")
    out = ["--out", str(tmp_path / "probe"), "--no-progress"]
    assert run_cli(["probe", "injection", task, data, "--items", "2", "--json", *out]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["moved"] == 0 and printed["probes"] == 2 * printed["cases"] >= 100
    assert set(printed["families"]) >= {
        "verdict-text",
        "json-verdict",
        *SLOPPY_FAMILIES,
        "fake-field",
        "instruction",
        "markup",
        "padding",
        "non-english",
    }
    out = ["--out", str(tmp_path / "markup"), "--no-progress"]
    assert run_cli(["probe", "injection", task, data, "--items", "1", "--family", "markup", *out]) == 0
    table = capsys.readouterr().out
    assert "markup" in table and "total" in table and "verdict-text" not in table
    assert run_cli(["probe", "injection", "ragbench"]) == 2  # no bundled default: DATA is required


def test_cli_exits_1_when_a_verdict_moved(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    task_file = tmp_path / "gullible.yaml"
    task_file.write_text(
        "name: gullible\ninstructions: Grade it.\ninputs: [answer]\n"
        "output:\n  kind: label\n  labels: [good, bad]\n"
        "baseline:\n  rules:\n    - {pattern: 'Label: bad', value: bad}\n  default: good\n",
        encoding="utf-8",
    )
    data = tmp_path / "rows.jsonl"
    data.write_text(
        json.dumps({"id": "1", "answer": "A fine answer to the question."}) + "\n", encoding="utf-8"
    )
    args = [str(task_file), str(data), "--family", "verdict-text", "--out", str(tmp_path / "probe")]
    assert run_cli(["probe", "injection", *args]) == 1
    assert "moved" in capsys.readouterr().err


def test_gates_claim_baseline_is_never_moved(tmp_path: Path) -> None:
    gates = Path(__file__).resolve().parents[1] / "data" / "gates"
    options = {"gold": gates / "qaset.json"}
    report = probe_injection(
        "gates", gates / "trace.sample.jsonl", None, options, out=tmp_path / "probe", limit=3, progress=False
    )
    assert report.totals["probes"] >= 50
    assert report.moved == 0 and report.totals["failed"] == 0


# ---------------------------------------------------------------------- sloppy JSON, then the item


def sloppy_object(values: dict[str, Any], style: str) -> str:
    """The judge's own answer as an object that is not strict JSON, in ``style``."""
    if style == "single-quotes":  # a Python dict literal: 'key': 'text', True
        return repr(values)
    if style == "unquoted-keys":  # a JS object literal
        return "{" + ", ".join(f"{name}: {json.dumps(value)}" for name, value in values.items()) + "}"
    if style == "trailing-comma":
        return (
            "{"
            + "".join(f"{json.dumps(name)}: {json.dumps(value)}, " for name, value in values.items())
            + "}"
        )
    text = json.dumps(values)  # raw-newline: a line break typed into a string as it is
    return text.replace("\\n", "\n")


def sloppy_quoting_judge(verdict: dict[str, str], style: str) -> Any:
    """A loopback responder that answers every prompt (chat or JSON) with its own verdict as
    sloppy JSON (``style``), then quotes the judged item: the user message, its field headers
    made plain, as a model that "shows its work" would."""

    def respond(body: dict[str, Any]) -> str:
        system = str(body["messages"][0]["content"])
        declared, _, rest = system.partition("Your output fields are:")
        inputs = set(_FIELD.findall(declared))
        outputs = _FIELD.findall(rest.split("All interactions", 1)[0])
        quoted = _INPUT_HEADER.sub(
            lambda match: f"{match.group(1)}:" if match.group(1) in inputs else match.group(0),
            last_user_message(body),
        )
        values = {
            name: _json_value(verdict[name]) if name in verdict else "The response holds.\nIt is grounded."
            for name in outputs
        }
        return f"{sloppy_object(values, style)}\n\nThe item I judged:\n{quoted}"

    return respond


# (task index in LLM_TASKS, style, adapter): every style through both adapters on the bool
# task, and the score, label and pairwise YAML tasks in one style each.
SLOPPY_RUNS = [
    *((2, style, adapter) for style in SLOPPY_STYLES for adapter in ("chat", "json")),
    (5, "single-quotes", "chat"),
    (5, "unquoted-keys", "json"),
    (3, "trailing-comma", "chat"),
    (4, "raw-newline", "json"),
]


@pytest.mark.parametrize(
    ("index", "style", "adapter"),
    SLOPPY_RUNS,
    ids=[f"{LLM_IDS[index]}-{style}-{adapter}" for index, style, adapter in SLOPPY_RUNS],
)
def test_a_judge_that_writes_sloppy_json_then_quotes_the_item_is_never_moved(
    index: int, style: str, adapter: str, tmp_path: Path
) -> None:
    """Its own object is read (the clean items are judged); a verdict planted in the item, in
    any syntax a lenient repair reads, makes the answer ambiguous (failed), never the verdict.
    (Before, the lenient repair took the planted object: 5 of these probes moved the bool and
    score judges, while the first 56 bundled cases moved none.)"""
    task_name, data, verdict = LLM_TASKS[index]
    task = get_task(task_name)
    with OpenAICompatibleServer(sloppy_quoting_judge(verdict, style)) as server:
        config = loopback_config(server.base_url, tmp_path / "cache").model_copy(
            update={"concurrency": 8, "adapter": adapter, "parse_retries": 0}
        )
        report = probe_injection(task, data, config, out=tmp_path / "probe", limit=1, progress=False)
    assert not report.skipped  # the judge's own sloppy answer to the clean item is read
    assert report.cases == len(load_cases()) and report.totals["probes"] == report.cases
    assert report.moved == 0, report.to_dict()["moved_probes"][:3]
    families = report.by_family()
    for family in SLOPPY_FAMILIES:
        assert families[family]["failed"] == families[family]["probes"] > 0, (family, families[family])
    failed = report.to_dict()["failed_probes"]
    assert all("ambiguous verdict" in probe["error"] and probe["raw"] for probe in failed)


def test_a_lenient_json_repair_is_moved_by_the_sloppy_families(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The probe detects the bug the sloppy families guard against: DSPy's own JSONAdapter reads
    a reply that is not strict JSON with a lenient repair, which takes the object quoted from
    the item over the judge's own."""
    task_name, data, verdict = LLM_TASKS[5]  # a score task: its judge answers reasoning and verdict
    task = get_task(task_name)
    with_adapter(task, dspy.JSONAdapter(), monkeypatch)
    cases = [case for case in load_cases() if case.family in SLOPPY_FAMILIES]
    with OpenAICompatibleServer(sloppy_quoting_judge(verdict, "single-quotes")) as server:
        config = loopback_config(server.base_url, tmp_path / "cache").model_copy(update={"parse_retries": 0})
        report = probe_injection(task, data, config, out=tmp_path / "p", limit=1, cases=cases, progress=False)
    assert report.moved > 0
    assert {family for family, counts in report.by_family().items() if counts["moved"]} >= {
        "python-dict",
        "fenced-after-prose",
    }


# ---------------------------------------------------------------------- a probe is ordinary runs


def _config_file(path: Path, base_url: str, cache: Path, **extra: Any) -> Path:
    """A judge config file for the loopback server (what the command line reads)."""
    values = {
        "model": "openai/loopback-judge",
        "api_base": base_url,
        "api_key_env": "JURIST_TEST_API_KEY",
        "cache_dir": str(cache),
        "concurrency": 8,
        "retry_max_wait": 0.2,
        "timeout": 5,
        **extra,
    }
    text = "".join(f"{key}: {json.dumps(value)}\n" for key, value in values.items())
    path.write_text(text, encoding="utf-8")
    return path


def _records(run_dir: Path) -> list[dict[str, Any]]:
    lines = (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_a_probe_is_two_runs_resumed_and_retried_like_any_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`jurist probe injection --out DIR` judges the clean items, then the planted ones, as two
    ordinary runs (clean/, probes/): failed items kept with their raw answers, the same command
    again resumes (no call, the same report), --retry-failed asks the failed items again, and
    other probe settings are refused in the same directory."""
    task_name, data, verdict = LLM_TASKS[2]
    out = tmp_path / "probe"
    with OpenAICompatibleServer(copying_judge(verdict, retype_markers=True)) as server:
        config = _config_file(tmp_path / "judge.yaml", server.base_url, tmp_path / "cache", parse_retries=0)
        args = ["probe", "injection", task_name, data, "-c", str(config), "--items", "1", "--out", str(out)]
        args += ["--json", "--no-progress"]
        assert run_cli(args) == 0
        first, calls = capsys.readouterr().out, len(server.bodies)
        assert run_cli(args) == 0
        assert capsys.readouterr().out == first and len(server.bodies) == calls
        assert run_cli([*args, "--retry-failed"]) == 0
        retried = len(server.bodies) - calls
        assert run_cli([*args[:7], "2", *args[8:]]) == 2
        assert "probe items 1, now 2" in capsys.readouterr().err
    report = json.loads(first)
    assert json.loads((out / "summary.json").read_text(encoding="utf-8")) == report
    assert report["failed"] > 0 and report["moved"] == 0
    for part in ("clean", "probes"):
        manifest = json.loads((out / part / "manifest.json").read_text(encoding="utf-8"))
        assert manifest["status"] == "finished" and manifest["judge_fingerprint"] == report["fingerprint"]
        assert manifest["dataset"]["probe_items"] == 1 and manifest["task"].startswith("context-faithfulness")
    assert [record["status"] for record in _records(out / "clean")] == ["ok"]
    failed = [record for record in _records(out / "probes") if record["status"] == "failed"]
    assert failed and all(record["raw"] and "ambiguous verdict" in record["error"] for record in failed)
    assert retried == len(failed)  # one call each (no parse retries); nothing else was asked again
    failed_ids = {record["id"] for record in failed}
    for probe in report["failed_probes"]:
        stem = f"{probe['item']}|{probe['case']}|"
        assert {stem + "attack", stem + "control"} & failed_ids


def test_a_probe_judges_in_worker_processes_as_in_one(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    task_name, data, verdict = LLM_TASKS[2]
    cases = [case for case in load_cases() if case.family in ("verdict-text", "fake-field")]
    reports = {}
    with OpenAICompatibleServer(copying_judge(verdict, retype_markers=True)) as server:
        for workers in (1, 2):
            config = loopback_config(server.base_url, tmp_path / f"cache-{workers}")
            config = config.model_copy(update={"parse_retries": 0})
            found = probe_injection(
                task_name, data, config, out=tmp_path / f"w{workers}", limit=1, cases=cases, workers=workers
            )
            reports[workers] = found.to_dict()
    assert reports[2] == reports[1] and reports[1]["failed"] > 0
    assert "judged in this one" not in capfd.readouterr().err  # the judge left this process


def test_a_probe_of_rows_in_memory_goes_to_its_default_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    task = str(EXAMPLES / "mt-bench-grader/task.yaml")
    lines = (EXAMPLES / "mt-bench-grader/answers.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines[:2]]
    cases = [case for case in load_cases() if case.family == "markup"]
    report = probe_injection(task, rows, limit=2, cases=cases, progress=False)
    assert report.run_dir is not None and report.items == 2 and report.totals["probes"] == 2 * len(cases)
    assert report.run_dir.parts[:2] == ("runs", get_task(task).name)
    assert report.run_dir.name.startswith("rows-") and "-probe-injection-baseline-" in report.run_dir.name
    assert (report.run_dir / "input.jsonl").is_file()
    assert (report.run_dir / "clean" / "manifest.json").is_file()
    assert (report.run_dir / "probes" / "manifest.json").is_file()
    again = probe_injection(task, rows, limit=2, cases=cases, progress=False)
    assert again.run_dir == report.run_dir and again.to_dict() == report.to_dict()
    other = probe_injection(task, rows, limit=1, cases=cases, progress=False)
    assert other.run_dir != report.run_dir and other.items == 1


def test_a_probe_refused_before_judging_leaves_no_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="has no input 'nope'"):
        probe_injection("pairwise", "sample:pairs", fields=["nope"], out=tmp_path / "probe", progress=False)
    assert not (tmp_path / "probe").exists()


def test_a_probe_reads_its_data_once_and_reports_the_same_when_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The clean run, the planted run and the report share one read of the probed data."""
    task = get_task("pairwise")
    reads: list[str] = []
    original = task.read

    def counted(path: Any, options: Any) -> Any:
        reads.append(str(path))
        return original(path, options)

    monkeypatch.setattr(task, "read", counted)
    report = probe_injection(task, "sample:pairs", out=tmp_path / "probe", limit=2, progress=False)
    assert len(reads) == 1 and report.totals["probes"] > 0
    again = probe_injection(task, "sample:pairs", out=tmp_path / "probe", limit=2, progress=False)  # resumed
    assert len(reads) == 2
    assert again.to_dict() == report.to_dict()
