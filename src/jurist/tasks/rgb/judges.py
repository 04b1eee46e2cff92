"""RGB's judges: the Rej* / ED* judges' tasks, classes and inputs, and which config (and
compiled program) each of the two runs (:func:`rgb_judge_configs`). The suite's sets, noise
rates and passage number are defined in :mod:`jurist.datasets.rgb.protocol`, exported here
too. The model under test is the suite part :class:`~jurist.tasks.rgb.parts.RGBAnswers`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from jurist.datasets.rgb.protocol import INTEGRATION_NOISE_RATES, NOISE_RATES, PASSAGE_NUM, SETS, SetName
from jurist.errors import ArtifactError, ConfigError, InputError
from jurist.judges.config import JudgeConfig
from jurist.optimization import read_artifact

TASK = "rgb"
JudgeKind = Literal["rejection", "error_detection"]
RGB_JUDGE_TASKS: dict[JudgeKind, str] = {
    "rejection": "rgb-rejection",
    "error_detection": "rgb-error-detection",
}
"""The ``jurist optimize`` / ``jurist calibrate`` task of each RGB judge (Rej*, ED*)."""
RGB_JUDGE_LABELS: dict[JudgeKind, str] = {"rejection": "rejects", "error_detection": "detects_error"}
"""The verdict field of each judge, and the gold label it is compared with."""
RGB_JUDGE_CLASSES: dict[JudgeKind, tuple[str, str]] = {
    "rejection": ("rejects", "answers"),
    "error_detection": ("detects_error", "no_error_reported"),
}
"""The two classes of each judge: (gold/verdict true, gold/verdict false)."""


def judge_inputs(kind: JudgeKind, question: str, answer: str) -> dict[str, Any]:
    """The inputs of a judge: Rej* reads the question and the answer, ED* the answer only (as in RGB)."""
    if kind == "rejection":
        return {"question": question, "answer": answer}
    return {"answer": answer}


def rgb_judge_configs(
    config: JudgeConfig | None, programs: Sequence[str | Path] = ()
) -> dict[JudgeKind, JudgeConfig | None]:
    """The config of each RGB judge, every compiled program given to the judge it was
    compiled for (read from its artifact: ``rgb-rejection`` → Rej*, ``rgb-error-detection``
    → ED*). ``config.program``, when set, counts as one more program. A judge with no
    program runs as ``config`` says (the keyword judge for ``None`` or the baseline).

    Raises:
        ArtifactError: A program is not an artifact, or was compiled for another task.
        ConfigError: Two programs were compiled for the same judge.
    """
    base = config.model_copy(update={"program": None}) if config is not None else None
    paths = [*([config.program] if config is not None and config.program is not None else []), *programs]
    kinds = {task: kind for kind, task in RGB_JUDGE_TASKS.items()}
    chosen: dict[JudgeKind, Path] = {}
    for raw in paths:
        path = Path(raw)
        if not path.is_file():
            raise InputError("compiled program not found", path=path, field="program")
        task = read_artifact(path).task
        if task not in kinds:
            raise ArtifactError(
                f"{path}: compiled for the task '{task}', not an RGB judge "
                f"({', '.join(RGB_JUDGE_TASKS.values())}); use it with `jurist judge {task}`"
            )
        kind = kinds[task]
        if kind in chosen and chosen[kind] != path:
            raise ConfigError(
                f"two compiled programs for the {task} judge: {chosen[kind]} and {path}", field="program"
            )
        chosen[kind] = path
    result: dict[JudgeKind, JudgeConfig | None] = {}
    for kind in RGB_JUDGE_TASKS:
        if kind in chosen:
            result[kind] = (base or JudgeConfig()).model_copy(update={"program": chosen[kind]})
        else:
            result[kind] = base
    return result


__all__ = [
    "INTEGRATION_NOISE_RATES",
    "NOISE_RATES",
    "PASSAGE_NUM",
    "RGB_JUDGE_CLASSES",
    "RGB_JUDGE_LABELS",
    "RGB_JUDGE_TASKS",
    "SETS",
    "TASK",
    "JudgeKind",
    "SetName",
    "judge_inputs",
    "rgb_judge_configs",
]
