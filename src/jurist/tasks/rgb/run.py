"""One RGB set at one setting (RGB's ``evalue.py`` with one ``--noise_rate``/``--passage_num``/
``--correct_rate``).

:func:`run_rgb` prepares every instance as RGB prepares it, has the model under test answer
it through the batch runner (the offline extractive responder for ``model: baseline``),
labels the answers as RGB labels them, and, for the rejection and counterfactual sets, has
the Rej* / ED* judge judge them. It writes RGB's prediction file and a ``scores.json``; its
run directories resume.

The whole suite is :func:`jurist.tasks.rgb.run_rgb_suite`; scoring RGB's own prediction
files is :func:`jurist.tasks.rgb.score_rgb_predictions`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurist.atomic import atomic_write_text, atomic_writer
from jurist.datasets.rgb import (
    RGB_SEED,
    Language,
    RGBDataset,
    RGBKind,
    RGBPrompt,
    load_rgb,
    load_rgb_prompts,
    preparation_sha256,
    prepare_instance,
)
from jurist.errors import ConfigError
from jurist.judges.config import JudgeConfig, load_config
from jurist.judges.judge import Judge
from jurist.metrics.rgb import (
    AnswerCheck,
    accuracy,
    fact_check,
    judged_fact_check,
    judged_rate,
    rejection_rate,
    rgb_labels_improved,
)
from jurist.report.jsonout import dumps
from jurist.runner import Item, JudgeRecipe, iter_run_results, run_items
from jurist.schemas import ItemResult
from jurist.tasks.rgb.judges import (
    PASSAGE_NUM,
    TASK,
    JudgeKind,
    judge_inputs,
    make_rgb_judge,
    make_rgb_responder,
)

# ---------------------------------------------------------------------------------------------
# One set at one setting


def _rate_text(value: float) -> str:
    return format(float(value), "g") if float(value) != int(value) else f"{float(value):.1f}"


@dataclass(frozen=True)
class RGBSetting:
    """One run of RGB's evaluation: a file at a noise rate, passage number and correct rate."""

    dataset: str
    language: Language
    kind: RGBKind
    path: Path
    noise_rate: float
    passage_num: int = PASSAGE_NUM
    correct_rate: float = 0.0
    judge: JudgeKind | None = None
    set: str = "noise"

    @property
    def name(self) -> str:
        """The run directory's name, e.g. ``zh_refine/noise0.2_passage5``."""
        tail = f"noise{_rate_text(self.noise_rate)}_passage{self.passage_num}"
        if self.kind == "fact":
            tail += f"_correct{_rate_text(self.correct_rate)}"
        return f"{self.dataset}/{tail}"


@dataclass
class RGBRun:
    """A finished :func:`run_rgb`: where it wrote, its per-item records and its scores."""

    setting: RGBSetting
    run_dir: Path
    records: list[dict[str, Any]]
    scores: dict[str, Any]
    judge_dir: Path | None = None
    predictions: Path | None = None


def _model_name(config: JudgeConfig) -> str:
    return re.sub(r"[^\w.\-]+", "-", config.model).strip("-") or "model"


def _dataset_items(dataset: RGBDataset, setting: RGBSetting, seed: int) -> list[Item]:
    items = []
    for row in dataset:
        instance = prepare_instance(
            row,
            dataset.kind,
            setting.noise_rate,
            setting.passage_num,
            correct_rate=setting.correct_rate,
            seed=seed,
        )
        items.append(
            Item(
                id=str(row.id),
                inputs={
                    "query": instance.query,
                    "docs": instance.docs,
                    "answer": instance.answer,
                    "language": dataset.language,
                    "noise_rate": setting.noise_rate,
                },
            )
        )
    return items


def _read_results(run_dir: Path) -> dict[str, ItemResult]:
    return {result.id: result for result in iter_run_results(run_dir)}


def _run_judge(
    kind: JudgeKind,
    records: list[dict[str, Any]],
    judge: Judge,
    judge_dir: Path,
    *,
    upstream: str,
    config: JudgeConfig | None,
    retry_failed: bool,
    progress: bool,
    task: str,
) -> dict[str, ItemResult]:
    answered = [record for record in records if record["status"] == "ok"]
    items = [
        Item(id=str(record["id"]), inputs=judge_inputs(kind, record["query"], record["prediction"]))
        for record in answered
    ]
    given = config or JudgeConfig()  # the default config is the keyword judge, as None is
    run_items(
        items,
        judge,
        judge_dir,
        task=task,
        dataset={"upstream": upstream, "sha256": upstream, "items": len(items)},
        config=given.model_dump(mode="json"),
        total=len(items),
        concurrency=given.concurrency,
        retry_failed=retry_failed,
        progress=progress,
        recipe=JudgeRecipe(functools.partial(make_rgb_judge, kind), given),
    )
    return _read_results(judge_dir)


def _prediction_record(row_id: Any, output: dict[str, Any]) -> dict[str, Any]:
    """RGB's prediction record: id, query, ans, label, prediction, docs, noise_rate, factlabel."""
    return {
        "id": row_id,
        "query": output["query"],
        "ans": output["ans"],
        "label": output["label"],
        "prediction": output["prediction"],
        "docs": output["docs"],
        "noise_rate": output["noise_rate"],
        "factlabel": output["factlabel"],
    }


def prediction_file_name(setting: RGBSetting, config: JudgeConfig) -> str:
    """RGB's name for a prediction file:
    ``prediction_{dataset}_{model}_temp{t}_noise{n}_passage{p}_correct{c}.json``."""
    return (
        f"prediction_{setting.dataset}_{_model_name(config)}_temp{config.temperature}"
        f"_noise{setting.noise_rate}_passage{setting.passage_num}_correct{setting.correct_rate}.json"
    )


def _scores_of(
    records: Sequence[dict[str, Any]], setting: RGBSetting, check: AnswerCheck, judge_name: str | None
) -> dict[str, Any]:
    """The figures of one run from its records (failed items counted, not scored)."""
    ok = [record for record in records if record["status"] == "ok"]
    failed = [record for record in records if record["status"] != "ok"]
    scores: dict[str, Any] = {
        "items": len(records),
        "ok": len(ok),
        "failed": len(failed),
        "failed_ids": [record["id"] for record in failed][:100],
        "failure_kinds": dict(Counter(record.get("error_type") or "error" for record in failed)),
    }
    checks: tuple[AnswerCheck, ...] = ("original", "improved") if check == "improved" else ("original",)
    for name in checks:
        labels = [record["label"] if name == "original" else record["label_improved"] for record in ok]
        factlabels = [
            record["factlabel"] if name == "original" else record["factlabel_improved"] for record in ok
        ]
        acc = accuracy(labels, setting.noise_rate)
        figures: dict[str, Any] = {
            "all_rate": acc.rate,
            "tt": acc.count,
            "nums": acc.total,
            "noise_rate": setting.noise_rate,
            "rejection_share": rejection_rate(labels).rate,
        }
        if setting.kind == "fact":
            fact = fact_check(labels, factlabels)
            figures.update(
                fact_check_rate=fact.fact_check_rate,
                correct_rate=fact.correct_rate,
                fact_tt=fact.fact_tt,
                correct_tt=fact.correct_tt,
                detected_rejections=fact.detected_rejections,
            )
        if name == "original":
            scores.update(figures)
        else:
            scores["improved"] = figures
    if setting.judge is not None:
        judged = [record for record in ok if record.get("judged") is not None]
        flags = [bool(record["judged"]) for record in judged]
        rate = judged_rate(flags)
        judge_scores: dict[str, Any] = {
            "judge": judge_name,
            "kind": setting.judge,
            "rate": rate.rate,
            "count": rate.count,
            "nums": rate.total,
            "failed": sum(1 for record in ok if record.get("judge_status") == "failed"),
        }
        if setting.judge == "error_detection":
            star = judged_fact_check([record["label"] for record in judged], flags)
            judge_scores.update(
                correct_tt=star.correct_tt,
                correct_rate=star.correct_rate,
                detected_rejections=star.detected_rejections,
            )
        scores["judge"] = judge_scores
    return scores


def run_rgb(
    setting: RGBSetting,
    out_dir: str | Path,
    config: JudgeConfig | str | Path | None = None,
    *,
    judge_config: JudgeConfig | None = None,
    prompts: dict[str, RGBPrompt] | None = None,
    seed: int = RGB_SEED,
    limit: int | None = None,
    answer_check: AnswerCheck = "original",
    retry_failed: bool = False,
    progress: bool = True,
    dataset: RGBDataset | None = None,
) -> RGBRun:
    """Run one RGB set at one setting into ``out_dir / setting.name`` (resumed if it exists).

    Args:
        setting: The file, language, kind, noise rate, passage number, correct rate and
            which judge (if any) scores the answers.
        out_dir: The suite's output directory; the run goes to ``out_dir/<setting.name>``
            and its judge run next to it (``...<name>.<judge>-judge``).
        config: The model under test: a ``JudgeConfig``, a YAML path, or ``None`` for the
            offline extractive responder.
        judge_config: The Rej* / ED* judge's LM; ``None`` uses the keyword judges.
        prompts: RGB's prompts by language (default: the bundled copy of RGB's).
        seed: The seed re-set before every instance (RGB: 2333).
        limit: Only the first ``limit`` rows of the file.
        answer_check: ``original`` (RGB's) or ``improved`` (adds jurist's figures next to RGB's).
        retry_failed: Answer (and judge) items recorded as failed again.
        progress: Show progress bars on stderr.
        dataset: The loaded file, when the caller has it already.

    Returns:
        The run: per-item records (RGB's fields, status, judge verdict) and scores.
    """
    responder_config = config if isinstance(config, JudgeConfig) else load_config(config)
    if dataset is None:
        dataset = load_rgb(setting.path, language=setting.language, kind=setting.kind, limit=limit)
    prompt = None
    if not responder_config.is_baseline:
        prompts = prompts if prompts is not None else load_rgb_prompts()
        if setting.language not in prompts:
            raise ConfigError(f"the RGB prompts have no entry for language {setting.language!r}")
        prompt = prompts[setting.language]
    responder = make_rgb_responder(responder_config, prompt)
    run_dir = Path(out_dir) / setting.name
    prep_sha = preparation_sha256(
        dataset, setting.noise_rate, setting.passage_num, setting.correct_rate, seed
    )
    run_items(
        _dataset_items(dataset, setting, seed),
        responder,
        run_dir,
        task=f"{TASK} {setting.name}",
        dataset={
            **dataset.describe(),
            "sha256": prep_sha,
            "file_sha256": dataset.sha256,
            "noise_rate": setting.noise_rate,
            "passage_num": setting.passage_num,
            "correct_rate": setting.correct_rate,
            "seed": seed,
        },
        config=responder_config.model_dump(mode="json"),
        total=len(dataset),
        concurrency=responder_config.concurrency,
        retry_failed=retry_failed,
        progress=progress,
        # Other processes (--workers, Ray) rebuild the same responder from this.
        recipe=JudgeRecipe(functools.partial(make_rgb_responder, prompt=prompt), responder_config),
    )
    results = _read_results(run_dir)
    records: list[dict[str, Any]] = []
    for row in dataset:
        result = results.get(str(row.id))
        if result is None:  # not recorded (e.g. an interrupted run): neither scored nor failed
            continue
        record: dict[str, Any] = {"id": row.id, "status": result.status}
        if result.status == "ok" and result.output is not None:
            record.update(result.output)
            improved = rgb_labels_improved(record["raw_prediction"], record["ans"], language=setting.language)
            record["label_improved"] = improved.label
            record["factlabel_improved"] = improved.factlabel
        else:
            record.update(error=result.error, error_type=result.error_type, raw=result.raw)
        records.append(record)
    judge_dir = None
    judge_name = None
    if setting.judge is not None:
        judge = make_rgb_judge(setting.judge, judge_config)
        judge_name = judge.name
        judge_dir = run_dir.parent / f"{run_dir.name}.{setting.judge.replace('_', '-')}-judge"
        upstream = hashlib.sha256(f"{prep_sha}|{responder.fingerprint()}".encode()).hexdigest()
        verdicts = _run_judge(
            setting.judge,
            records,
            judge,
            judge_dir,
            upstream=upstream,
            config=judge_config,
            retry_failed=retry_failed,
            progress=progress,
            task=f"{TASK} {setting.name} {setting.judge.replace('_', '-')} judge",
        )
        key = "rejects" if setting.judge == "rejection" else "detects_error"
        for record in records:
            verdict = verdicts.get(str(record["id"]))
            if record["status"] != "ok" or verdict is None:
                continue
            record["judge_status"] = verdict.status
            if verdict.status == "ok" and verdict.output is not None:
                record["judged"] = bool(verdict.output[key])
                record["judge_reason"] = verdict.output.get("reason", "")
    scores = _scores_of(records, setting, answer_check, judge_name)
    scores["responder"] = responder.name
    scores["setting"] = {
        "set": setting.set,
        "dataset": setting.dataset,
        "language": setting.language,
        "noise_rate": setting.noise_rate,
        "passage_num": setting.passage_num,
        "correct_passage_rate": setting.correct_rate,
        "seed": seed,
        "answer_check": answer_check,
    }
    predictions = run_dir / prediction_file_name(setting, responder_config)
    with atomic_writer(predictions) as handle:
        for record in records:
            if record["status"] == "ok":
                handle.write(json.dumps(_prediction_record(record["id"], record), ensure_ascii=False) + "\n")
    atomic_write_text(run_dir / "scores.json", dumps(scores, ensure_ascii=False))
    return RGBRun(
        setting=setting,
        run_dir=run_dir,
        records=records,
        scores=scores,
        judge_dir=judge_dir,
        predictions=predictions,
    )


__all__ = ["RGBRun", "RGBSetting", "prediction_file_name", "run_rgb"]
