"""``optimize``: compile a judge against gold labels and write an artifact; ``evaluate_program``."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import dspy
import pandas as pd
from pydantic import BaseModel

from jurist.datasets.io import sha256_file
from jurist.datasets.samples import resolve_input
from jurist.errors import ConfigError, InputError
from jurist.judges.config import JudgeConfig, load_config
from jurist.judges.judge import JudgeFailure, LLMJudge
from jurist.judges.lm import build_lm
from jurist.optimization._artifact import (
    Artifact,
    DataSplit,
    SplitScore,
    load_program,
    program_state,
    write_artifact,
)
from jurist.optimization._metric import GuardedProgram, Tally
from jurist.optimization._optimizers import OPTIMIZERS, OptimizerSettings, compile_program
from jurist.optimization._target import OptimizableTask, Target
from jurist.report.console import number
from jurist.runner import call_blocking, versions
from jurist.schemas import Usage

__all__ = ["Evaluation", "OptimizeResult", "evaluate_program", "optimize"]


@dataclass
class Evaluation:
    """A program's metric over one split.

    Attributes:
        score: The summary (mean over answered examples; failures counted, not scored).
        items: One row per example: ``example_id``, ``status`` (``ok``/``failed``),
            ``score``, ``feedback``, ``error``, the metric's components, tokens and latency.
    """

    score: SplitScore
    items: pd.DataFrame


async def _evaluate(
    target: Target, judge: LLMJudge, examples: list[dspy.Example], concurrency: int
) -> list[dict[str, Any]]:
    gate = asyncio.Semaphore(concurrency)

    async def one(example: dspy.Example) -> dict[str, Any]:
        row: dict[str, Any] = {"example_id": example.example_id}
        start = time.perf_counter()
        async with gate:
            try:
                judgment = await judge.judge(example.inputs().toDict())
            except JudgeFailure as exc:
                row.update(status="failed", score=None, feedback=None, error=str(exc))
                usage = exc.usage
            else:
                result = target.score(example, judgment.output)
                row.update(status="ok", score=result.score, feedback=result.feedback, error=None)
                row.update(result.details)
                usage = judgment.usage
        row.update(latency_s=time.perf_counter() - start, usage=usage)
        return row

    return list(await asyncio.gather(*(one(example) for example in examples)))


def evaluate_program(
    task: OptimizableTask | Target,
    program: dspy.Module,
    config: JudgeConfig,
    examples: list[dspy.Example],
    *,
    options: dict[str, Any] | BaseModel | None = None,
) -> Evaluation:
    """Run ``program`` on every example with the config's LM (retries, parse retries, cache,
    concurrency as in ``jurist judge``) and score it with the task's
    :meth:`~jurist.tasks.Task.example_score` (after its postprocess).

    A judgment that fails after every retry is counted in ``failed`` and left out of the
    mean: it is never scored as 0 or 1.
    """
    target = task if isinstance(task, Target) else Target(task, options)
    judge = LLMJudge(program, config, target.postprocess)
    rows = call_blocking(lambda: asyncio.run(_evaluate(target, judge, examples, config.concurrency)))
    usage = Usage()
    for row in rows:
        usage = usage.add(row.pop("usage"))
    items = pd.DataFrame(rows)
    scored = items[items["status"] == "ok"] if len(items) else items
    mean = float(scored["score"].mean()) if len(scored) else None
    return Evaluation(
        score=SplitScore(
            metric=target.metric_name,
            score=mean,
            examples=len(examples),
            scored=len(scored),
            failed=len(examples) - len(scored),
            usage=usage,
        ),
        items=items,
    )


@dataclass
class OptimizeResult:
    """A finished ``optimize`` call.

    Attributes:
        path: The artifact file.
        artifact: Its contents (scores, data hashes, program state, ...).
        program: The compiled program.
        evaluations: ``dev_before``, ``dev_after`` (and ``test_before``/``test_after``)
            with their per-example tables.
    """

    path: Path
    artifact: Artifact
    program: dspy.Module
    evaluations: dict[str, Evaluation]

    def score_changes(self) -> list[tuple[str, str, float | None, float | None]]:
        """``(split, metric, before, after)`` for each split scored before and after (dev, test)."""
        scores = self.artifact.scores
        found = []
        for split in ("dev", "test"):
            before, after = scores.get(f"{split}_before"), scores.get(f"{split}_after")
            if before is not None and after is not None:
                found.append((split, after.metric, before.score, after.score))
        return found

    def __repr__(self) -> str:
        changes = " · ".join(
            f"{split} {metric} {number(before)} → {number(after)}"
            for split, metric, before, after in self.score_changes()
        )
        return f"<OptimizeResult {self.artifact.task}: {changes or 'no score'} · {self.path}>"

    def _repr_html_(self) -> str:
        """Jupyter's display: the metric of each split before and after, and the artifact."""
        from html import escape

        rows = "".join(
            f"<tr><td>{escape(split)}</td><td>{escape(metric)}</td><td>{number(before)}</td>"
            f"<td>{number(after)}</td></tr>"
            for split, metric, before, after in self.score_changes()
        )
        return (
            f"<table><caption>optimize · {escape(self.artifact.task)} · {escape(str(self.path))}</caption>"
            "<thead><tr><th>split</th><th>metric</th><th>before</th><th>after</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
        )


def _split(path: str | Path, examples: list[dspy.Example]) -> DataSplit:
    file = resolve_input(path)
    return DataSplit(path=str(path), sha256=sha256_file(file), examples=len(examples))


def _check_disjoint(train: list[dspy.Example], other: list[dspy.Example], name: str, path: Any) -> None:
    keys = {example.example_key for example in train}
    shared = [example for example in other if example.example_key in keys]
    if shared:
        raise InputError(
            f"{len(shared)} {name} example(s) also occur in the training data (e.g. "
            f"{shared[0].example_id!r}); the {name} split must be held out",
            path=str(path),
        )


def _as_config(config: JudgeConfig | str | Path | None) -> JudgeConfig:
    return config if isinstance(config, JudgeConfig) else load_config(config)


def optimize(
    task: OptimizableTask,
    train: str | Path,
    dev: str | Path,
    config: JudgeConfig | str | Path,
    *,
    out: str | Path,
    options: dict[str, Any] | BaseModel | None = None,
    optimizer: str = "bootstrap",
    test: str | Path | None = None,
    prompt_config: JudgeConfig | str | Path | None = None,
    settings: OptimizerSettings | None = None,
) -> OptimizeResult:
    """Compile a task's LLM judge against gold labels and write a versioned artifact.

    The judge is scored on ``dev`` before and after compilation; ``dev`` is never shown
    to the optimizer (MIPRO and GEPA select candidates on a part of ``train``), and
    ``test``, when given, is only scored for the report. Training examples the judge fails
    on score 0 for the optimizer and are counted in ``artifact.compile``.

    The task's own parts drive it (see :mod:`jurist.optimization._target`): the program
    and postprocess of :meth:`~jurist.tasks.Task.optimization_program`, the examples of
    :meth:`~jurist.tasks.Task.gold_examples`, and the metric :func:`task_metric` derives
    from :meth:`~jurist.tasks.Task.example_score`.

    Args:
        task: The task (a :class:`jurist.tasks.Task`; the verb :func:`jurist.optimize` looks
            it up by name).
        train: Gold examples to compile on (``sample:NAME`` allowed).
        dev: Held-out gold examples to score before and after.
        config: The judge config (a ``JudgeConfig`` or YAML path) naming an LLM; with
            ``program`` set, compilation starts from that artifact.
        out: The artifact file to write.
        options: The task's options (a dict or its options model; default: the defaults).
        optimizer: ``bootstrap``, ``mipro`` or ``gepa``.
        test: Optional held-out gold examples for the final report only.
        prompt_config: Config of the LM that proposes instructions (MIPRO, GEPA);
            default: the judge config at temperature 1.0.
        settings: Budget and knobs (:class:`OptimizerSettings`).

    Raises:
        ConfigError: The task cannot be optimized, the config names the baseline judge, or
            an unknown optimizer.
        InputError: A data file is malformed, has no gold labels, or shares examples with
            the training data.
    """
    if optimizer not in OPTIMIZERS:
        known = ", ".join(OPTIMIZERS)
        raise ConfigError(f"unknown optimizer {optimizer!r}; use one of {known}", field="optimizer")
    judge_config = _as_config(config)
    if judge_config.is_baseline:
        raise ConfigError(
            "optimization needs an LLM judge, but the config names the offline baseline; "
            "set 'model' in the config (e.g. openai/gpt-4o-mini)",
            field="model",
        )
    settings = settings or OptimizerSettings()
    target = Target(task, options)
    train_examples = target.examples(train)
    dev_examples = target.examples(dev)
    _check_disjoint(train_examples, dev_examples, "dev", dev)
    test_examples = None
    if test is not None:
        test_examples = target.examples(test)
        _check_disjoint(train_examples, test_examples, "test", test)

    student = target.make_program()
    if judge_config.program is not None:
        student, _ = load_program(
            judge_config.program, task=target.task, program=student, options=target.options()
        )
        judge_config = judge_config.model_copy(update={"program": None})
    proposer_config = (
        _as_config(prompt_config)
        if prompt_config is not None
        else judge_config.model_copy(update={"temperature": 1.0})
    )

    evaluations = {"dev_before": evaluate_program(target, student, judge_config, dev_examples)}
    if test_examples is not None:
        evaluations["test_before"] = evaluate_program(target, student, judge_config, test_examples)

    tally = Tally()
    guarded = GuardedProgram(
        student.deepcopy(),
        tally,
        num_retries=judge_config.num_retries,
        retry_max_wait=judge_config.retry_max_wait,
        parse_retries=judge_config.parse_retries,
    )
    task_lm = build_lm(judge_config)
    prompt_lm = None if proposer_config.is_baseline else build_lm(proposer_config)
    prompt_adapter = dspy.JSONAdapter() if judge_config.adapter == "json" else dspy.ChatAdapter()
    started = time.perf_counter()

    def run_compile() -> tuple[dspy.Module, dict[str, Any]]:
        with dspy.context(lm=task_lm, adapter=prompt_adapter):
            return compile_program(
                optimizer,
                guarded,
                target,
                train_examples,
                settings=settings,
                tally=tally,
                prompt_lm=prompt_lm,
                task_lm=task_lm,
                num_threads=settings.num_threads or judge_config.concurrency,
            )

    compiled_guard, used = call_blocking(run_compile)
    seconds = time.perf_counter() - started
    compiled = compiled_guard.program if isinstance(compiled_guard, GuardedProgram) else compiled_guard

    evaluations["dev_after"] = evaluate_program(target, compiled, judge_config, dev_examples)
    if test_examples is not None:
        evaluations["test_after"] = evaluate_program(target, compiled, judge_config, test_examples)

    artifact = Artifact(
        task=target.task,
        options=target.options(),
        optimizer={"name": optimizer, "settings": settings.to_dict()},
        judge_config=judge_config.model_dump(mode="json", exclude={"program"}),
        prompt_config=proposer_config.model_dump(mode="json", exclude={"program"})
        if optimizer != "bootstrap"
        else None,
        data={
            "train": _split(train, train_examples),
            "dev": _split(dev, dev_examples),
            "test": _split(test, test_examples) if test is not None and test_examples is not None else None,
        },
        versions=versions(),
        scores={name: evaluation.score for name, evaluation in evaluations.items()},
        compile={**used, **tally.summary(), "seconds": round(seconds, 3)},
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        program=program_state(compiled),
    )
    path = write_artifact(artifact, out)
    return OptimizeResult(path=path, artifact=artifact, program=compiled, evaluations=evaluations)
