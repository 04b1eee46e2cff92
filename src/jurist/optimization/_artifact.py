"""Compiled-program artifacts: one versioned JSON file per ``jurist optimize`` run.

An artifact holds the compiled program's state (per predictor: demos, instructions, field
prefixes and descriptions, as DSPy's ``dump_state`` writes them; never an LM, never a
key), the task and program options it was compiled for, the judge config, the hashes of
the data, the versions, and the scores before and after compilation.

Version rule: an artifact loads when its ``format`` is :data:`FORMAT`, its
``format_version`` is at most :data:`FORMAT_VERSION` (older versions are upgraded on
read; there is only version 1 so far), and it was written with the same DSPy minor
version as the one installed (``3.4.x`` reads ``3.4.x``): the program state is DSPy's own
format, which may change between minor versions. Anything else is refused with an
:class:`~jurist.errors.ArtifactError` that says what to do.
"""

from __future__ import annotations

import json
import logging
from importlib import metadata
from pathlib import Path
from typing import Any

import dspy
from pydantic import BaseModel, Field, ValidationError

from jurist.atomic import atomic_write_text
from jurist.errors import ArtifactError
from jurist.judges.config import JudgeConfig, make_config
from jurist.redaction import redact_value
from jurist.safe_load import JSONLimitError, loads_json, quote
from jurist.schemas import Usage

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "Artifact",
    "DataSplit",
    "SplitScore",
    "load_judge_program",
    "load_program",
    "program_state",
    "read_artifact",
    "write_artifact",
]

FORMAT = "jurist.compiled-program"
"""The ``format`` field of every artifact."""
FORMAT_VERSION = 1
"""The artifact format this jurist writes; it reads this version and older ones."""

logger = logging.getLogger("jurist.optimization")


class DataSplit(BaseModel):
    """A data file an artifact was compiled or scored with."""

    path: str
    sha256: str
    examples: int


class SplitScore(BaseModel):
    """The metric of a program over one split.

    Attributes:
        metric: The metric's name (the task's ``optimized_metric``).
        score: Mean score over the examples the judge answered (failed ones are not scored);
            ``None`` when none was answered.
        examples: Examples in the split.
        scored: Examples the judge answered.
        failed: Examples whose judgment failed after every retry.
        usage: LM usage of the evaluation.
    """

    metric: str
    score: float | None
    examples: int
    scored: int
    failed: int
    usage: Usage = Field(default_factory=Usage)


class Artifact(BaseModel):
    """The contents of an artifact file (see the module docstring for the version rule)."""

    format: str = FORMAT
    format_version: int = FORMAT_VERSION
    task: str
    options: dict[str, Any] = Field(default_factory=dict)
    """The program's options (e.g. ``{"num_options": 2}``); it loads only into the same."""
    optimizer: dict[str, Any]
    """``{"name": "bootstrap"|"mipro"|"gepa", "settings": {...}}``."""
    judge_config: dict[str, Any]
    """The judge config it was compiled with (never a key: keys live in the environment)."""
    prompt_config: dict[str, Any] | None = None
    """The config of the LM that proposed instructions (MIPRO, GEPA), if any."""
    data: dict[str, DataSplit | None]
    """``train``, ``dev`` and ``test`` (``None`` when not given)."""
    versions: dict[str, str]
    scores: dict[str, SplitScore]
    """``dev_before``, ``dev_after`` and, with a test split, ``test_before``/``test_after``."""
    compile: dict[str, Any] = Field(default_factory=dict)
    """What compilation did: examples used, failed calls, LM usage, seconds."""
    created_at: str
    program: dict[str, Any]
    """The program state, as ``dspy.Module.dump_state()`` writes it."""

    def config(self) -> JudgeConfig:
        """The judge config the program was compiled with."""
        return make_config(self.judge_config)


def _dspy_minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def _installed_dspy() -> str:
    try:
        return metadata.version("dspy")
    except metadata.PackageNotFoundError:  # pragma: no cover - dspy is a dependency
        return dspy.__version__


def program_state(program: dspy.Module) -> dict[str, Any]:
    """The program's state for an artifact: DSPy's ``dump_state`` without any LM."""
    state = program.dump_state()
    for predictor_state in state.values():
        if isinstance(predictor_state, dict) and "lm" in predictor_state:
            predictor_state["lm"] = None
    return state


def write_artifact(artifact: Artifact, path: str | Path) -> Path:
    """Write an artifact as indented JSON (atomically: a temporary file, then a rename).

    The artifact is redacted first (:func:`jurist.redaction.redact_value`): its demos hold
    model answers, which may quote an API key the provider echoed.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(redact_value(artifact.model_dump(mode="json")), indent=2, ensure_ascii=False)
    atomic_write_text(target, text)
    return target


def read_artifact(path: str | Path) -> Artifact:
    """Read and check an artifact file (format, format version, DSPy version).

    Raises:
        ArtifactError: The file is missing, not JSON, not a jurist artifact (e.g. a plain
            ``program.save()`` file), of a newer format, malformed, or written with
            another DSPy minor version.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ArtifactError(f"{file}: cannot read the compiled program ({exc.strerror})") from None
    try:
        data = loads_json(text)
    except json.JSONDecodeError as exc:
        raise ArtifactError(f"{file}: not a JSON file ({exc.msg} at line {exc.lineno})") from None
    except JSONLimitError as exc:
        raise ArtifactError(f"{file}: {exc.reason}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ArtifactError(
            f"{file}: not a jurist compiled-program artifact (no 'format: {FORMAT}'; a plain DSPy "
            "program.save() file is not enough); make one with `jurist optimize`"
        )
    version = data.get("format_version")
    if not isinstance(version, int) or version < 1:
        raise ArtifactError(f"{file}: format_version must be a positive integer, got {quote(version)}")
    if version > FORMAT_VERSION:
        raise ArtifactError(
            f"{file}: written by a newer jurist (artifact format version {version}; this jurist reads "
            f"up to {FORMAT_VERSION}); upgrade jurist or recompile with this one"
        )
    try:
        artifact = Artifact.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ArtifactError(f"{file}: field '{where}': {first['msg']}") from None
    compiled = artifact.versions.get("dspy", "unknown")
    installed = _installed_dspy()
    if _dspy_minor(compiled) != _dspy_minor(installed):
        raise ArtifactError(
            f"{file}: compiled with DSPy {compiled}, but DSPy {installed} is installed; program "
            f"states are kept only within one DSPy minor version ({_dspy_minor(installed)}.x): "
            "recompile it with `jurist optimize`"
        )
    return artifact


def _check_fits(artifact: Artifact, program: dspy.Module, file: Path) -> None:
    predictors = dict(program.named_predictors())
    saved = set(artifact.program)
    if saved != set(predictors):
        raise ArtifactError(
            f"{file}: its program has the parts {sorted(saved)}, but the {artifact.task} judge has "
            f"{sorted(predictors)}; recompile it with this jurist"
        )
    for name, predictor in predictors.items():
        state = artifact.program[name]
        fields = state.get("signature", {}).get("fields") if isinstance(state, dict) else None
        if not isinstance(fields, list) or len(fields) != len(predictor.signature.fields):
            raise ArtifactError(
                f"{file}: the saved signature of '{name}' does not match the {artifact.task} judge's "
                "fields; recompile it with this jurist"
            )


def load_program(
    path: str | Path,
    *,
    task: str,
    program: dspy.Module,
    options: dict[str, Any] | None = None,
) -> tuple[dspy.Module, Artifact]:
    """Load an artifact's state into ``program`` (an uncompiled program of ``task``).

    Args:
        path: The artifact file.
        task: The task the caller runs; the artifact must have been compiled for it.
        program: A fresh program of the task, built with ``options``; it is updated in place.
        options: The program's options (e.g. ``{"num_options": 2}``); they must equal the
            artifact's.

    Returns:
        The program with the compiled state, and the artifact.

    Raises:
        ArtifactError: See :func:`read_artifact`; or the artifact was compiled for another
            task, other options, or a program of another shape.
    """
    file = Path(path)
    artifact = read_artifact(file)
    if artifact.task != task:
        raise ArtifactError(
            f"{file}: compiled for the task '{artifact.task}', not '{task}'; use it with "
            f"`jurist judge {artifact.task} ... --program`"
        )
    wanted = options or {}
    if artifact.options != wanted:
        given = ", ".join(f"{key}={value}" for key, value in sorted(artifact.options.items())) or "none"
        here = ", ".join(f"{key}={value}" for key, value in sorted(wanted.items())) or "none"
        raise ArtifactError(
            f"{file}: compiled with the options {given}, but this judge runs with {here}; "
            "run it with the same options or recompile"
        )
    _check_fits(artifact, program, file)
    state = json.loads(json.dumps(artifact.program))
    for predictor_state in state.values():
        predictor_state["lm"] = None  # an artifact never chooses the LM; the judge config does
    try:
        program.load_state(state)
    except (KeyError, TypeError, ValueError) as exc:
        raise ArtifactError(f"{file}: the program state does not load ({exc!r}); recompile it") from None
    return program, artifact


def load_judge_program(
    config: JudgeConfig,
    *,
    task: str,
    program: dspy.Module,
    options: dict[str, Any] | None = None,
) -> tuple[dspy.Module, JudgeConfig]:
    """The compiled program ``config.program`` names, and the config to run it with.

    With the baseline config (no model given), the artifact's own judge config is used, so
    ``jurist judge TASK --program ARTIFACT`` runs it as compiled (fields the given config
    sets away from their defaults, such as ``concurrency``, still apply). A config that names
    another model than the one the program was compiled for is used as given, with a
    warning (demos and instructions tuned for one model may not suit another).

    Raises:
        ArtifactError: See :func:`load_program`.
    """
    if config.program is None:
        raise ArtifactError("no compiled program given (config field 'program')")
    program, artifact = load_program(config.program, task=task, program=program, options=options)
    compiled = artifact.config()
    if config.is_baseline:
        # Fields set away from their defaults (e.g. --concurrency) still apply.
        runtime = compiled.model_copy(
            update={**config.model_dump(exclude_defaults=True), **config.undumped()}
        )
    else:
        runtime = config
        if compiled.model != config.model:
            logger.warning(
                "%s was compiled for %s; running it with %s", config.program, compiled.model, config.model
            )
    return program, runtime
