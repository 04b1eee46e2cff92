"""Test helpers: loopback responders that answer like a RAGBench judge, and small data files."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurist.testing import last_user_message

_SECTION = re.compile(r"\[\[ ## (\w+) ## \]\]\n(.*?)(?=\n\n\[\[ ## |\n\nRespond with |\Z)", re.S)


def prompt_sections(body: dict[str, Any]) -> dict[str, str]:
    """The input fields of a ChatAdapter prompt, by name."""
    return {name: text for name, text in _SECTION.findall(last_user_message(body))}


def keys(section: str) -> list[str]:
    return [line.split(". ", 1)[0] for line in section.splitlines() if ". " in line]


def ragbench_answer(body: dict[str, Any], *, extra_key: str | None = "9zz") -> str:
    """A valid ChatAdapter answer: every response sentence supported by the first document sentence.

    ``extra_key`` (a key naming no sentence) is added to the relevant keys to exercise dropping.
    """
    sections = prompt_sections(body)
    doc_keys = keys(sections.get("documents", ""))
    response_keys = keys(sections.get("response", ""))
    first = doc_keys[:1]
    support = [
        {
            "response_sentence_key": key,
            "explanation": "copied",
            "supporting_sentence_keys": first,
            "fully_supported": index == 0,
        }
        for index, key in enumerate(response_keys)
    ]
    relevant = first + ([extra_key] if extra_key else [])
    fields = {
        "relevance_explanation": "The first sentence is relevant.",
        "all_relevant_sentence_keys": json.dumps(relevant),
        "overall_supported_explanation": "Only the first sentence is supported.",
        "overall_supported": "False" if len(response_keys) > 1 else "True",
        "sentence_support_information": json.dumps(support),
        "all_utilized_sentence_keys": json.dumps(first),
    }
    return (
        "\n\n".join(f"[[ ## {name} ## ]]\n{value}" for name, value in fields.items())
        + "\n\n[[ ## completed ## ]]"
    )


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def ragbench_rows(count: int) -> list[dict]:
    """Small synthetic RAGBench rows with distinct texts."""
    return [
        {
            "id": f"item-{i}",
            "question": f"What is fact number {i}?",
            "documents": [
                f"Fact {i} is about topic {i}. It was recorded in {1900 + i}.",
                "Unrelated text here.",
            ],
            "response": f"Fact {i} is about topic {i}. It was recorded long ago.",
            "adherence_score": i % 3 != 0,
        }
        for i in range(count)
    ]


def ragbench_run(data: Path | str, out: Path, config: Any, *, retry_failed: bool = False) -> Any:
    """One run of the ``ragbench`` task into ``out`` through the judging loop
    (:func:`jurist.jury.loop.run_judgment`): judged, scored and exported, without the
    HTML views ``jurist.judge`` adds (tests of the runner do not read them, and they take most
    of a small run's time). Returns the :class:`~jurist.tasks._contract.JudgeRun`."""
    from jurist.jury.loop import run_judgment
    from jurist.tasks import get_task

    task = get_task("ragbench")
    return run_judgment(task, data, out, config, task.options(), retry_failed=retry_failed, progress=False)


def run_cli(args: list[str]) -> int:
    """Run ``jurist`` in-process with ``args``; return its exit status."""
    from jurist.cli import main

    try:
        main(args)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def loopback_config(base_url: str, cache_dir: Path, *, model: str = "openai/loopback-judge") -> Any:
    """A judge config for the loopback server: its own cache, the test key, fast retries."""
    from jurist.judges.config import JudgeConfig

    return JudgeConfig(
        model=model,
        api_base=base_url,
        api_key_env="JURIST_TEST_API_KEY",
        cache_dir=cache_dir,
        concurrency=4,
        retry_max_wait=0.2,
        timeout=5,
    )


CLAIMS_TASK = """\
name: claim-checker
instructions: Say whether the claim is true.
inputs: [claim]
output:
  kind: bool
  reasoning: false
gold: gold
"""
"""A YAML task judging one boolean per claim (tests of juries, costs and calibration)."""


def true_verdict(body: dict[str, Any]) -> str:
    """A loopback responder for :data:`CLAIMS_TASK` that says every claim is true."""
    return "[[ ## verdict ## ]]\ntrue\n\n[[ ## completed ## ]]"


@dataclass
class Optimized:
    """A task's optimization parts with its options bound (what ``jurist optimize`` uses)."""

    task: Any
    values: Any

    def program(self) -> Any:
        return self.task.optimization_program(self.values)[0]

    def postprocess(self, prediction: Any, inputs: dict[str, Any]) -> dict[str, Any]:
        return self.task.optimization_program(self.values)[1](prediction, inputs)

    def examples(self, path: str | Path) -> list[Any]:
        return self.task.gold_examples(path, self.values)

    def score(self, example: Any, output: dict[str, Any]) -> Any:
        return self.task.example_score(example, output, self.values)

    def options(self) -> dict[str, Any]:
        return self.task.program_options(self.values)


def optimized(name: str, **options: Any) -> Optimized:
    from jurist.tasks import get_task

    task = get_task(name)
    return Optimized(task, task.options(options))


def write_compiled(task: str, state: dict[str, Any], path: Path, config: Any = None) -> Path:
    """An artifact of ``jurist optimize TASK`` holding the program ``state``, compiled with
    ``config`` (default: a model named ``openai/compiled-for`` on a closed loopback port)."""
    from jurist.judges.config import JudgeConfig
    from jurist.optimization import Artifact, DataSplit, write_artifact
    from jurist.runner import versions

    if config is None:
        config = JudgeConfig(model="openai/compiled-for", api_base="http://127.0.0.1:9/v1", cache=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    artifact = Artifact(
        task=task,
        optimizer={"name": "bootstrap", "settings": {}},
        judge_config=config.model_dump(mode="json", exclude={"program"}),
        data={"train": DataSplit(path="t", sha256="0" * 64, examples=1), "dev": None, "test": None},
        versions=versions(),
        scores={},
        created_at="2026-01-01T00:00:00+00:00",
        program=state,
    )
    return write_artifact(artifact, path)
