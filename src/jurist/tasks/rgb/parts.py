"""The parts of the RGB suite: the ordinary runs :meth:`RGBTask.plan` makes it of.

- :class:`RGBAnswers`: the model under test answers one RGB set at one setting (RGB's
  ``evalue.py`` with one ``--noise_rate``/``--passage_num``/``--correct_rate``): every
  instance prepared as RGB prepares it, answered, and labelled as RGB labels the answers.
- :class:`RGBAnswersRejection` / :class:`RGBAnswersErrorDetection`: the Rej* / ED* judge
  judges the answers of an :class:`RGBAnswers` run (its data is that run's directory).

Both are internal tasks (not registered): each instance is named as its run's manifest
records it (``rgb zh_refine/noise1.0_passage5``, ``rgb zh_refine/noise1.0_passage5 rejection
judge``). Each run is scored by the task contract's ``score``, which the judging loop calls as
for every run; what the suite needs of it (the answer records, the verdicts) the run hands on
(:meth:`~jurist.tasks.Task.combine_values`) instead of writing exports: the suite writes each
setting's prediction file and ``scores.json`` once its judge has run
(:mod:`jurist.tasks.rgb.suite`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict

from jurist.datasets.rgb.loader import (
    Language,
    RGBDataset,
    RGBKind,
    load_rgb,
    load_rgb_prompts,
    preparation_sha256,
    prepare_instance,
)
from jurist.errors import ConfigError, InputError
from jurist.judges.config import JudgeConfig
from jurist.judges.judge import BaselineJudge, Judge
from jurist.metrics.rgb import rgb_labels_improved
from jurist.programs.rgb.baseline import ExtractiveResponder
from jurist.programs.rgb.program import RGBResponder, responder_postprocess
from jurist.runner import MANIFEST, Item, iter_run_results
from jurist.tasks._contract import Task
from jurist.tasks._read_once import DATASET, read_once
from jurist.tasks.rgb.judges import JudgeKind, judge_inputs
from jurist.tasks.rgb.judgment_tasks import RGBErrorDetectionTask, RGBJudgmentTask, RGBRejectionTask
from jurist.tasks.rgb.run import RGBSetting

if TYPE_CHECKING:
    import dspy

__all__ = [
    "RGBAnswerOptions",
    "RGBAnswers",
    "RGBAnswersErrorDetection",
    "RGBAnswersRejection",
    "answers_judge",
]


class RGBAnswerOptions(BaseModel):
    """One setting of an RGB set (the options of an :class:`RGBAnswers` run)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    language: Language
    kind: RGBKind
    noise_rate: float
    passage_num: int
    correct_rate: float
    seed: int
    limit: int | None = None
    instructions: Path | None = None


@dataclass(frozen=True)
class _Prepared:
    """An RGB file read for one setting: its rows, and the run identity the manifest records."""

    dataset: RGBDataset
    options: RGBAnswerOptions

    def __iter__(self) -> Iterator[Any]:
        return iter(self.dataset)

    def describe(self) -> dict[str, Any]:
        chosen = self.options
        return {
            **self.dataset.describe(),
            "sha256": preparation_sha256(
                self.dataset, chosen.noise_rate, chosen.passage_num, chosen.correct_rate, chosen.seed
            ),
            "file_sha256": self.dataset.sha256,
            "noise_rate": chosen.noise_rate,
            "passage_num": chosen.passage_num,
            "correct_rate": chosen.correct_rate,
            "seed": chosen.seed,
        }


class RGBAnswers(Task):
    """The model under test answers one RGB set at one setting (one part of the suite)."""

    Options: ClassVar[type[BaseModel]] = RGBAnswerOptions
    description = "The model under test answers one RGB set at one setting (a part of the rgb suite)."

    def __init__(self, setting: RGBSetting) -> None:
        self.name = f"rgb {setting.name}"

    def read(self, path: str | Path, options: BaseModel) -> _Prepared:
        chosen = _answer_options(options)
        dataset = load_rgb(path, language=chosen.language, kind=chosen.kind, limit=chosen.limit)
        return _Prepared(dataset, chosen)

    def items(self, dataset: Any, options: BaseModel) -> list[Item]:
        chosen = _answer_options(options)
        items = []
        for row in dataset:
            instance = prepare_instance(
                row,
                dataset.dataset.kind,
                chosen.noise_rate,
                chosen.passage_num,
                correct_rate=chosen.correct_rate,
                seed=chosen.seed,
            )
            items.append(
                Item(
                    id=str(row.id),
                    inputs={
                        "query": instance.query,
                        "docs": instance.docs,
                        "answer": instance.answer,
                        "language": dataset.dataset.language,
                        "noise_rate": chosen.noise_rate,
                    },
                )
            )
        return items

    def program(self, options: BaseModel) -> dspy.Module:
        """The configured LM prompted as RGB prompts it in the setting's language.

        Raises:
            ConfigError: RGB's prompts (``instructions``) have no entry for the language.
        """
        chosen = _answer_options(options)
        prompts = load_rgb_prompts(chosen.instructions)
        if chosen.language not in prompts:
            raise ConfigError(f"the RGB prompts have no entry for language {chosen.language!r}")
        return RGBResponder(prompts[chosen.language])

    def postprocess(self, prediction: Any, inputs: dict[str, Any], options: BaseModel) -> dict[str, Any]:
        """The answer as RGB's record fields (:func:`~jurist.programs.rgb.program.responder_postprocess`)."""
        return responder_postprocess(prediction, inputs)

    def baseline(self, options: BaseModel) -> Judge:
        """The offline model under test: the extractive responder."""
        return BaselineJudge(ExtractiveResponder(), name="rgb-extractive-baseline", version="1")

    def load_program(self, config: JudgeConfig, program: dspy.Module, options: BaseModel) -> JudgeConfig:
        """A responder saved by DSPy (``program.save(path)``, not an artifact of ``jurist
        optimize``) loaded into the program; it runs with ``config``, which must name the model.

        Raises:
            ConfigError: The config names no model (a saved responder carries none).
            InputError: The file is not found.
        """
        if config.is_baseline:
            raise ConfigError(
                "a saved RGB responder runs with the model the config names; name one (--model)",
                field="model",
            )
        if config.program is None or not config.program.is_file():
            raise InputError("compiled program not found", path=config.program, field="program")
        program.load(str(config.program))
        return config

    def _judge_files(self, options: BaseModel) -> list[Path]:
        """The prompts file the options name (it decides the responder's prompt)."""
        instructions = _answer_options(options).instructions
        return [instructions] if instructions is not None else []

    gold_from_run = True

    def combine_values(self, run: Path, gold: str | Path | None, options: BaseModel) -> dict[str, Any]:
        """``records``: the answers as RGB's records (its fields, the improved labels, status),
        in the order of the RGB file ``gold`` (the judging loop's: the file the run answered;
        else the one its manifest records); an item not recorded (an interrupted run) is
        neither scored nor failed. The run writes nothing: the suite writes the prediction
        file and ``scores.json``.

        Raises:
            InputError: No RGB file is given and the one the run answered is gone.
        """
        if gold is None:
            raise InputError("the RGB file this run answered is gone; give it as gold", path=run)
        dataset = read_once(DATASET, gold, lambda: self.read(gold, options))
        chosen = _answer_options(options)
        results = {result.id: result for result in iter_run_results(run)}
        records: list[dict[str, Any]] = []
        for row in dataset:
            result = results.get(str(row.id))
            if result is None:
                continue
            record: dict[str, Any] = {"id": row.id, "status": result.status}
            if result.status == "ok" and result.output is not None:
                record.update(result.output)
                improved = rgb_labels_improved(
                    record["raw_prediction"], record["ans"], language=chosen.language
                )
                record["label_improved"] = improved.label
                record["factlabel_improved"] = improved.factlabel
            else:
                record.update(error=result.error, error_type=result.error_type, raw=result.raw)
            records.append(record)
        return {"records": records}


def _answer_options(options: BaseModel) -> RGBAnswerOptions:
    return (
        options
        if isinstance(options, RGBAnswerOptions)
        else RGBAnswerOptions.model_validate(options.model_dump())
    )


@dataclass(frozen=True)
class _Answered:
    """The answered items of an :class:`RGBAnswers` run, to be judged."""

    path: Path
    answers: list[tuple[str, str, str]]
    upstream: str

    def describe(self) -> dict[str, Any]:
        return {"upstream": self.upstream, "sha256": self.upstream, "items": len(self.answers)}


class _JudgesAnswers(RGBJudgmentTask):
    """The Rej* or ED* judge of the answers of an :class:`RGBAnswers` run (one part of the suite)."""

    def __init__(self, setting: RGBSetting) -> None:
        self.name = f"rgb {setting.name} {self.kind.replace('_', '-')} judge"

    def read(self, path: str | Path, options: BaseModel) -> _Answered:
        """The answered items of the run directory ``path`` (ok ones, in its order), and the
        identity of what was answered: the preparation's hash and the responder's fingerprint."""
        run_dir = Path(path)
        manifest_path = run_dir / MANIFEST
        if not manifest_path.is_file():
            raise InputError("not an RGB answer run (no manifest.json)", path=run_dir)
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        prepared = (manifest.get("dataset") or {}).get("sha256")
        upstream = hashlib.sha256(f"{prepared}|{manifest.get('judge_fingerprint')}".encode()).hexdigest()
        answers = [
            (result.id, str(result.output["query"]), str(result.output["prediction"]))
            for result in iter_run_results(run_dir)
            if result.status == "ok" and result.output is not None
        ]
        return _Answered(path=run_dir, answers=answers, upstream=upstream)

    def items(self, dataset: Any, options: BaseModel) -> list[Item]:
        return [
            Item(id=item_id, inputs=judge_inputs(self.kind, query, prediction))
            for item_id, query, prediction in dataset.answers
        ]

    reads_gold = False
    """The data of this part is the answer run it judges: there is no gold to compare with."""

    def combine_values(self, run: Path, gold: str | Path | None, options: BaseModel) -> dict[str, Any]:
        """``verdicts``: the run's recorded results by item id. The run writes nothing: the
        suite reports them."""
        return {"verdicts": {result.id: result for result in iter_run_results(run)}}


class RGBAnswersRejection(_JudgesAnswers, RGBRejectionTask):
    """Rej*: does each answer of a run reject the question?"""


class RGBAnswersErrorDetection(_JudgesAnswers, RGBErrorDetectionTask):
    """ED*: does each answer of a run report factual errors?"""


def answers_judge(kind: JudgeKind, setting: RGBSetting) -> RGBJudgmentTask:
    """The part that judges the answers of ``setting`` with the Rej* or ED* judge."""
    return RGBAnswersRejection(setting) if kind == "rejection" else RGBAnswersErrorDetection(setting)
