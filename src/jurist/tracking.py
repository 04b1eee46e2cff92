"""Experiment tracking with MLflow: a judged run, a calibration or a compiled program, logged to
the tracking server the user names (``pip install "jurist[mlflow]"``; docs/mlflow.md).

Everything logged is read back from what the command already wrote (the run directory, the
calibration's directory, the artifact file), so logging happens only after the work is
durable, and can be repeated later from Python::

    import jurist.tracking
    jurist.tracking.log_run("runs/gpt4o", tracking_uri="http://localhost:5000")

One judged run is one MLflow run:

- params: the task, its options (``task_options.NAME``), the judge and its fingerprint, the
  model, engine, temperature, max_tokens and adapter, the compiled program (``program``,
  ``program_sha256``), the dataset (``dataset.path``, ``dataset.sha256``, ``dataset.items``)
  and the versions (``version.jurist``, ``version.dspy``, ``version.litellm``, ...), all
  from the run's ``manifest.json``;
- metrics: every numeric leaf of ``summary.json``, named by its path (``agreement.kappa``;
  intervals are the leaves beside it, ``agreement.kappa_low`` and ``agreement.kappa_high``),
  which include the counts (``items``, ``ok``, ``failed``) and the usage (``usage.calls``,
  ``usage.cache_hits``, ``usage.prompt_tokens``, ``usage.completion_tokens``,
  ``usage.cost``); lists of numbers (a confusion matrix) stay in the artifacts;
- artifacts: ``report.html``, ``report.md``, ``summary.json``, ``figures.json``,
  ``review.json``, ``items.parquet``, ``items.csv`` and ``manifest.json``, those present;
- tags: ``jurist.kind`` (``judge``), ``jurist.run_dir`` and ``jurist.status``.

A calibration is a parent run (its settings, the gate outcome, the leaderboard files) with one
nested run per leaderboard row (that judge's run params and the row's figures). A compiled
program is one run: the optimizer and judge settings, the data hashes, the scores before and
after compilation, and the artifact file.

Secrets never reach MLflow: every name and value goes through :mod:`jurist.redaction`, text
artifacts are uploaded as redacted copies, and a tracking URI's user name and password are
shown nowhere. When jurist imports MLflow, MLflow's usage telemetry is off and so is the
"View run" line MLflow prints on standard output, unless the user set
``MLFLOW_DISABLE_TELEMETRY`` or ``MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT`` themselves.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import socket
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jurist.errors import ConfigError, ExitCode, InputError, JuristError, RunDirectoryError, install_hint
from jurist.judges.config import JudgeConfig, make_config
from jurist.redaction import TEXT_SUFFIXES, redact, redact_file

__all__ = [
    "CALIBRATION_ARTIFACTS",
    "INSTALL_HINT",
    "RUN_ARTIFACTS",
    "LoggedRun",
    "Tracking",
    "TrackingError",
    "log_calibration",
    "log_optimization",
    "log_run",
    "require_mlflow",
    "summary_metrics",
]

INSTALL_HINT = install_hint("mlflow")
"""What to run when MLflow is missing."""

RUN_ARTIFACTS = (
    "report.html",
    "report.md",
    "summary.json",
    "figures.json",
    "review.json",
    "items.parquet",
    "items.csv",
    "manifest.json",
)
"""The files of a run directory logged as artifacts (those present)."""

CALIBRATION_ARTIFACTS = ("leaderboard.md", "leaderboard.csv", "by_label.csv", "calibration.json")
"""The files of a calibration's directory logged as artifacts."""

_PROBE_TIMEOUT_S = 5.0
# MLflow's limits (mlflow.utils.validation): value lengths, key length, entities per batch.
_MAX_PARAM_VALUE = 6000
_MAX_TAG_VALUE = 8000
_MAX_KEY = 250
_METRICS_PER_BATCH = 1000
_PARAMS_TAGS_PER_BATCH = 100
_UNSAFE = re.compile(r"[^\w.\- ]")  # MLflow's portable name characters, less "/" (a path separator)
_STATUS = {"finished": "FINISHED", "interrupted": "KILLED"}


class TrackingError(JuristError):
    """Logging to MLflow failed after the work was done and written: the message names the
    tracking URI, the reason, and where the results are kept."""

    exit_code = ExitCode.TRACKING_FAILED


def _mlflow() -> Any:
    """Import MLflow with its telemetry and stdout links off, unless the user set them."""
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    os.environ.setdefault("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")
    try:
        import mlflow
    except ImportError as exc:
        raise ConfigError(f"logging to MLflow needs MLflow ({exc}): {INSTALL_HINT}", field="mlflow") from None
    return mlflow


def require_mlflow() -> None:
    """Check that MLflow can be imported (before any work is done).

    Raises:
        ConfigError: MLflow is not installed; the message says ``pip install "jurist[mlflow]"``.
    """
    _mlflow()


def public_uri(uri: str) -> str:
    """``uri`` without a user name or password (``http://user:pw@host`` -> ``http://host``)."""
    try:
        parts = urlsplit(uri)
        if parts.username is None and parts.password is None:
            return redact(uri)
        netloc = (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
    except ValueError:
        return redact(uri)
    return redact(parts._replace(netloc=netloc).geturl())


@dataclass(frozen=True)
class LoggedRun:
    """An MLflow run jurist logged.

    Attributes:
        tracking_uri: The tracking URI, without credentials.
        experiment: The experiment's name.
        experiment_id: The experiment's id.
        run_id: The run's id (for a calibration: the parent run).
        children: The nested runs' ids (a calibration's leaderboard rows).
    """

    tracking_uri: str
    experiment: str
    experiment_id: str
    run_id: str
    children: tuple[str, ...] = ()

    @property
    def url(self) -> str | None:
        """The run's page in the MLflow UI, for a tracking server (``None`` for a local store)."""
        if urlsplit(self.tracking_uri).scheme not in ("http", "https"):
            return None
        return f"{self.tracking_uri.rstrip('/')}/#/experiments/{self.experiment_id}/runs/{self.run_id}"

    def describe(self) -> str:
        """One line for the command line: where the run was logged."""
        nested = f" with {len(self.children)} nested run(s)" if self.children else ""
        where = self.url or f"{self.tracking_uri}, run {self.run_id}"
        return f"logged to MLflow experiment {self.experiment!r}{nested}: {where}"


@dataclass(frozen=True)
class Tracking:
    """Where to log: an MLflow tracking URI and experiment.

    Attributes:
        tracking_uri: The tracking URI; ``None``: ``MLFLOW_TRACKING_URI``, else MLflow's default
            (a local store in the working directory).
        experiment: The experiment; ``None``: ``MLFLOW_EXPERIMENT_NAME``, else the task's name.
    """

    tracking_uri: str | None = None
    experiment: str | None = None

    @classmethod
    def from_options(
        cls,
        *,
        enabled: bool | None,
        tracking_uri: str | None = None,
        experiment: str | None = None,
        configs: Sequence[JudgeConfig] = (),
    ) -> Tracking | None:
        """The tracking a command line asks for, or ``None`` when it asks for none.

        Logging is on with ``--mlflow``, ``--mlflow-uri`` or ``--mlflow-experiment``, or when a
        judge config has an ``mlflow:`` key; ``--no-mlflow`` (``enabled=False``) turns it off
        whatever the configs say. For the URI and the experiment alike, the command line comes
        first, then the environment (``MLFLOW_TRACKING_URI``, ``MLFLOW_EXPERIMENT_NAME``), then
        the config's key.

        Raises:
            ConfigError: Logging is asked for but MLflow is not installed (said before any
                work is done), or two judge configs name different MLflow settings.
        """
        if enabled is False:
            return None
        keyed = [config for config in configs if config.mlflow is not None]
        settings = [config.mlflow for config in keyed if config.mlflow is not None]
        if len({(s.tracking_uri, s.experiment) for s in settings}) > 1:
            raise ConfigError(
                "the judge configs name different MLflow settings; give them the same 'mlflow' "
                "key, or keep it in one config",
                path=keyed[1].source,
                field="mlflow",
            )
        if not (enabled or tracking_uri or experiment or settings):
            return None
        require_mlflow()
        chosen = settings[0] if settings else None
        return cls(
            tracking_uri=tracking_uri
            or os.environ.get("MLFLOW_TRACKING_URI")
            or (chosen.tracking_uri if chosen else None),
            experiment=experiment
            or os.environ.get("MLFLOW_EXPERIMENT_NAME")
            or (chosen.experiment if chosen else None),
        )

    def log_run(self, run_dir: str | Path) -> LoggedRun:
        """Log a judged run directory (see :func:`log_run`)."""
        folder = Path(run_dir)
        manifest = _load(folder / "manifest.json", "a run directory's manifest")
        if not isinstance(manifest, dict):
            raise RunDirectoryError(f"{folder / 'manifest.json'}: not a run's manifest; nothing was logged")
        summary = _load(folder / "summary.json", "the run's summary (written when it is scored)")
        kept = (
            f"the results are kept in {folder}; log them later with the same command (nothing is "
            f"judged again) or jurist.tracking.log_run({str(folder)!r})"
        )
        session = _Session(self, kept)
        experiment = self._experiment(str(manifest.get("task")))
        metrics = summary_metrics(summary)
        counts = manifest.get("counts") or {}
        for name, value in (
            ("ok", counts.get("ok")),
            ("failed", counts.get("failed")),
            *((f"usage.{key}", value) for key, value in (manifest.get("usage") or {}).items()),
        ):
            if _is_number(value) and name not in metrics:
                metrics[name] = float(value)
        if "items" not in metrics and "ok" in metrics and "failed" in metrics:
            metrics["items"] = metrics["ok"] + metrics["failed"]
        status = str(manifest.get("status"))
        run_id = session.log(
            experiment,
            name=_run_name(manifest),
            params=run_params(manifest),
            metrics=metrics,
            tags={"jurist.kind": "judge", "jurist.run_dir": str(folder.resolve()), "jurist.status": status},
            files=[folder / name for name in RUN_ARTIFACTS if (folder / name).is_file()],
            status=_STATUS.get(status, "FAILED"),
        )
        return session.logged(experiment, run_id)

    def log_calibration(self, out_dir: str | Path) -> LoggedRun:
        """Log a calibration's directory (see :func:`log_calibration`)."""
        folder = Path(out_dir)
        calibration = _load(folder / "calibration.json", "a calibration's results")
        if not isinstance(calibration, dict):
            raise RunDirectoryError(f"{folder / 'calibration.json'}: not a calibration; nothing was logged")
        kept = (
            f"the calibration is kept in {folder}; log it later with the same command (nothing is "
            f"judged again) or jurist.tracking.log_calibration({str(folder)!r})"
        )
        session = _Session(self, kept)
        task = str(calibration.get("task"))
        experiment = self._experiment(task)
        settings = dict(calibration.get("settings") or {})
        params = {"task": task, "judges": settings.pop("judges", [])}
        params.update((f"gold.{i}", path) for i, path in enumerate(settings.pop("gold", [])))
        params.update(settings)
        params.update(_installed_versions())
        gates = calibration.get("gates") or []
        failed_gates = sum(1 for gate in gates if not gate.get("passed"))
        passed = bool(calibration.get("passed"))
        parent = session.log(
            experiment,
            name=f"calibration of {task}",
            params=params,
            metrics={"passed": float(passed), "gates.checked": len(gates), "gates.failed": failed_gates},
            tags={
                "jurist.kind": "calibration",
                "jurist.out_dir": str(folder.resolve()),
                "jurist.status": "passed" if passed else "gate failed",
            },
            files=[folder / name for name in CALIBRATION_ARTIFACTS if (folder / name).is_file()],
            status="FINISHED",
        )
        children = []
        for row in calibration.get("leaderboard") or []:
            run_dir = _row_run_dir(folder, row.get("run_dir"))
            manifest = _manifest_or_empty(run_dir)
            row_params = {**run_params(manifest), "task": task} if manifest else {"task": task}
            row_params.update(
                {"calibration.judge": row.get("judge"), "calibration.dataset": row.get("dataset")}
            )
            if not manifest:
                row_params["model"] = row.get("model")
            tags = {
                "jurist.kind": "calibration-row",
                "jurist.status": str(manifest.get("status", "finished")),
            }
            if run_dir is not None:
                tags["jurist.run_dir"] = str(run_dir.resolve())
            children.append(
                session.log(
                    experiment,
                    name=f"{row.get('judge')} on {row.get('dataset')}",
                    params=row_params,
                    metrics=summary_metrics({k: v for k, v in row.items() if k != "run_dir"}),
                    tags=tags,
                    files=[],
                    status="FINISHED",
                    parent_id=parent,
                )
            )
        return session.logged(experiment, parent, tuple(children))

    def log_optimization(self, artifact: str | Path) -> LoggedRun:
        """Log a compiled-program artifact and its scores (see :func:`log_optimization`)."""
        path = Path(artifact)
        if not path.is_file():
            raise InputError("not a compiled-program artifact file (from jurist optimize)", path=path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read the artifact ({exc}); nothing was logged", path=path) from None
        if not isinstance(data, dict) or data.get("format") != "jurist.compiled-program":
            raise InputError("not a compiled-program artifact (from jurist optimize)", path=path)
        kept = (
            f"the artifact is kept at {path}; log it later with "
            f"jurist.tracking.log_optimization({str(path)!r})"
        )
        session = _Session(self, kept)
        task = str(data.get("task"))
        experiment = self._experiment(task)
        config = data.get("judge_config") or {}
        optimizer = data.get("optimizer") or {}
        params: dict[str, Any] = {"task": task, "optimizer": optimizer.get("name")}
        params.update((f"optimizer.{k}", v) for k, v in (optimizer.get("settings") or {}).items())
        params.update((name, config.get(name)) for name in ("model", "engine", "temperature", "max_tokens"))
        params["adapter"] = config.get("adapter")
        with contextlib.suppress(JuristError):
            params["judge_fingerprint"] = make_config(config).fingerprint()
        params.update({"program": str(path), "program_sha256": _sha256(path)})
        params.update((f"task_options.{k}", v) for k, v in (data.get("options") or {}).items())
        for split, described in (data.get("data") or {}).items():
            for key, value in (described or {}).items():
                params[f"data.{split}.{key}"] = value
        params.update((f"version.{k}", v) for k, v in (data.get("versions") or {}).items())
        metrics: dict[str, float] = {}
        for split, score in (data.get("scores") or {}).items():
            if _is_number(score.get("score")):
                metrics[split] = float(score["score"])
            metrics.update(summary_metrics({k: v for k, v in score.items() if k != "score"}, prefix=(split,)))
        metrics.update(summary_metrics(data.get("compile") or {}, prefix=("compile",)))
        run_id = session.log(
            experiment,
            name=f"{optimizer.get('name')} · {config.get('model')}",
            params=params,
            metrics=metrics,
            tags={
                "jurist.kind": "optimization",
                "jurist.artifact": str(path.resolve()),
                "jurist.status": "finished",
            },
            files=[path],
            artifact_path="program",
            status="FINISHED",
        )
        return session.logged(experiment, run_id)

    def _experiment(self, task: str) -> str:
        return self.experiment or os.environ.get("MLFLOW_EXPERIMENT_NAME") or task


def log_run(
    run_dir: str | Path, *, tracking_uri: str | None = None, experiment: str | None = None
) -> LoggedRun:
    """Log a judged run directory to MLflow: params from its manifest, metrics from its summary,
    its reports and tables as artifacts (see the module docstring for the names).

    Args:
        run_dir: A run directory written by ``jurist judge`` (or :func:`jurist.judge`).
        tracking_uri: The tracking URI (default ``MLFLOW_TRACKING_URI``, else MLflow's default).
        experiment: The experiment (default ``MLFLOW_EXPERIMENT_NAME``, else the task's name).

    Raises:
        ConfigError: MLflow is not installed.
        RunDirectoryError: ``run_dir`` has no readable ``manifest.json`` or ``summary.json``.
        TrackingError: The tracking server is unreachable or refused a call.
    """
    return Tracking(tracking_uri, experiment).log_run(run_dir)


def log_calibration(
    out_dir: str | Path, *, tracking_uri: str | None = None, experiment: str | None = None
) -> LoggedRun:
    """Log a calibration (the ``--out`` directory of ``jurist calibrate``) to MLflow: a parent
    run with the settings, the gate outcome and the leaderboard files, and one nested run per
    leaderboard row with that judge's run params and the row's figures.

    Raises:
        ConfigError: MLflow is not installed.
        RunDirectoryError: ``out_dir`` has no readable ``calibration.json``.
        TrackingError: The tracking server is unreachable or refused a call.
    """
    return Tracking(tracking_uri, experiment).log_calibration(out_dir)


def log_optimization(
    artifact: str | Path, *, tracking_uri: str | None = None, experiment: str | None = None
) -> LoggedRun:
    """Log a compiled-program artifact (from ``jurist optimize``) to MLflow: the optimizer and
    judge settings, the data hashes, the scores before and after compilation as metrics
    (``dev_before``, ``dev_after``, ...), and the artifact file under ``program/``.

    Raises:
        ConfigError: MLflow is not installed.
        InputError: ``artifact`` is not a compiled-program artifact file.
        TrackingError: The tracking server is unreachable or refused a call.
    """
    return Tracking(tracking_uri, experiment).log_optimization(artifact)


# ---------------------------------------------------------------------- params and metrics


def run_params(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The MLflow params of a judged run, from its manifest (values not yet turned to text)."""
    config = manifest.get("config") or {}
    program = manifest.get("program") or {}
    params: dict[str, Any] = {
        "task": manifest.get("task"),
        "judge": manifest.get("judge"),
        "judge_fingerprint": manifest.get("judge_fingerprint"),
    }
    if manifest.get("task_source"):
        params["task_source"] = manifest["task_source"]
    params.update((f"task_options.{k}", v) for k, v in (manifest.get("task_options") or {}).items())
    params.update((name, config.get(name)) for name in ("model", "engine", "temperature", "max_tokens"))
    params["adapter"] = config.get("adapter")
    params["program"] = program.get("path") or "none"
    if program.get("sha256"):
        params["program_sha256"] = program["sha256"]
    params.update((f"dataset.{k}", v) for k, v in (manifest.get("dataset") or {}).items())
    params.update((f"version.{k}", v) for k, v in (manifest.get("versions") or {}).items())
    return params


def summary_metrics(summary: Any, *, prefix: tuple[str, ...] = ()) -> dict[str, float]:
    """Every numeric leaf of a summary as an MLflow metric, named by its path.

    Keys are joined with ``.`` (``agreement.kappa``); ``@`` becomes ``_at_`` (``hits@1`` ->
    ``hits_at_1``) and any other character MLflow does not allow in a name becomes ``_``.
    Booleans count as 1 or 0; ``None`` is left out; a list of mappings is walked with each
    mapping's position as its key (``agreement.0.kappa``); a list of numbers (a confusion
    matrix, curve points) is left out, as a figure rather than a metric.
    """
    found: dict[str, float] = {}

    def walk(value: Any, path: tuple[str, ...]) -> None:
        if _is_number(value):
            found[_unique(metric_name(path), found)] = float(value)
        elif isinstance(value, Mapping):
            for key, item in value.items():
                walk(item, (*path, str(key)))
        elif isinstance(value, list) and value and all(isinstance(item, Mapping) for item in value):
            for index, item in enumerate(value):
                walk(item, (*path, str(index)))

    walk(summary, prefix)
    return found


def metric_name(path: Sequence[str]) -> str:
    """A valid MLflow name for a key path (see :func:`summary_metrics`), at most 250 characters."""
    text = _UNSAFE.sub("_", ".".join(redact(part) for part in path).replace("@", "_at_")).strip()
    text = text[:_MAX_KEY]
    return text if text not in ("", ".", "..") else "_"


def _unique(name: str, taken: Mapping[str, Any]) -> str:
    if name not in taken:
        return name
    count = 2
    while f"{name[: _MAX_KEY - 4]}_{count}" in taken:
        count += 1
    return f"{name[: _MAX_KEY - 4]}_{count}"


def _named(values: Mapping[str, Any], limit: int) -> dict[str, str]:
    """Params or tags with valid, distinct MLflow names and their values as text."""
    named: dict[str, str] = {}
    for key, value in values.items():
        named[_unique(metric_name([key]), named)] = _text(value, limit)
    return named


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float)


def _text(value: Any, limit: int) -> str:
    """A param or tag value as MLflow stores it: strings as they are, anything else as JSON."""
    text = (
        value
        if isinstance(value, str)
        else json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    )
    text = redact(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _installed_versions() -> dict[str, str]:
    found = {}
    for package in ("jurist", "dspy", "litellm"):
        try:
            found[f"version.{package}"] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[f"version.{package}"] = "not installed"
    return found


def _run_name(manifest: Mapping[str, Any]) -> str:
    dataset = Path(str((manifest.get("dataset") or {}).get("path") or "data")).name
    return f"{manifest.get('judge')} on {dataset}"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _load(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise RunDirectoryError(f"{path}: cannot read {what} ({reason}); nothing was logged") from None


def _row_run_dir(out_dir: Path, recorded: Any) -> Path | None:
    """A leaderboard row's run directory: as recorded, or found again under ``out_dir/runs``
    (the recorded path is relative to where ``calibrate`` was started)."""
    if not recorded:
        return None
    path = Path(str(recorded))
    if (path / "manifest.json").is_file():
        return path
    moved = out_dir / "runs" / path.parent.name / path.name
    return moved if (moved / "manifest.json").is_file() else None


def _manifest_or_empty(run_dir: Path | None) -> dict[str, Any]:
    if run_dir is None:
        return {}
    try:
        data = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


# ---------------------------------------------------------------------- the MLflow client


class _Session:
    """One MLflow client on a checked tracking URI; each failure becomes a :class:`TrackingError`
    that names the URI and says what is kept."""

    def __init__(self, tracking: Tracking, kept: str) -> None:
        mlflow = _mlflow()
        self.kept = kept
        self.uri = tracking.tracking_uri or os.environ.get("MLFLOW_TRACKING_URI") or mlflow.get_tracking_uri()
        self.public = public_uri(self.uri)
        self._experiments: dict[str, str] = {}
        self._check_reachable()
        from mlflow.tracking import MlflowClient

        with self._calls():
            self.client = MlflowClient(tracking_uri=self.uri)

    def error(self, reason: str) -> TrackingError:
        return TrackingError(f"could not log to MLflow at {self.public}: {redact(reason)}; {self.kept}")

    @contextlib.contextmanager
    def _calls(self) -> Iterator[None]:
        try:
            yield
        except JuristError:
            raise
        except Exception as exc:
            message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            raise self.error(str(message).strip().splitlines()[0][:400]) from None

    def _check_reachable(self) -> None:
        """Connect once to a tracking server (5 s), so an unreachable one fails at once rather
        than after MLflow's retries with backoff; a proxy in between is left to MLflow."""
        try:
            parts = urlsplit(self.uri)
            host, port = parts.hostname, parts.port
        except ValueError as exc:
            raise self.error(f"not a valid tracking URI ({exc})") from None
        if parts.scheme not in ("http", "https"):
            return
        if not host:
            raise self.error("the tracking URI names no host")
        if urllib.request.getproxies().get(parts.scheme) and not urllib.request.proxy_bypass(host):
            return
        try:
            with socket.create_connection(
                (host, port or (443 if parts.scheme == "https" else 80)), timeout=_PROBE_TIMEOUT_S
            ):
                pass
        except OSError as exc:
            reason = exc.strerror or str(exc) or type(exc).__name__
            raise self.error(f"the tracking server is unreachable ({reason.lower()})") from None

    def experiment_id(self, name: str) -> str:
        if name in self._experiments:
            return self._experiments[name]
        with self._calls():
            found = self.client.get_experiment_by_name(name)
            if found is None:
                try:
                    identifier = str(self.client.create_experiment(name))
                except Exception:  # made by another process meanwhile: read it back
                    found = self.client.get_experiment_by_name(name)
                    if found is None:
                        raise
                    identifier = str(found.experiment_id)
            elif found.lifecycle_stage == "deleted":
                raise self.error(
                    f"experiment {name!r} is deleted; restore it (mlflow experiments restore) or "
                    "choose another with --mlflow-experiment"
                )
            else:
                identifier = str(found.experiment_id)
        self._experiments[name] = identifier
        return identifier

    def log(
        self,
        experiment: str,
        *,
        name: str,
        params: Mapping[str, Any],
        metrics: Mapping[str, float],
        tags: Mapping[str, str],
        files: Sequence[Path],
        status: str,
        artifact_path: str | None = None,
        parent_id: str | None = None,
    ) -> str:
        """Make one MLflow run with these params, metrics, tags and files; returns its id."""
        from mlflow.entities import Metric, Param

        experiment_id = self.experiment_id(experiment)
        run_tags = _named(tags, _MAX_TAG_VALUE)
        if parent_id is not None:
            run_tags["mlflow.parentRunId"] = parent_id
        with self._calls():
            run = self.client.create_run(experiment_id, tags=run_tags, run_name=_text(name, _MAX_TAG_VALUE))
        run_id = str(run.info.run_id)
        stamp = int(time.time() * 1000)
        param_entities = [Param(k, v) for k, v in _named(params, _MAX_PARAM_VALUE).items()]
        metric_entities = [Metric(name, float(value), stamp, 0) for name, value in metrics.items()]
        try:
            with self._calls():
                for start in range(0, len(param_entities), _PARAMS_TAGS_PER_BATCH):
                    chunk = param_entities[start : start + _PARAMS_TAGS_PER_BATCH]
                    self.client.log_batch(run_id, params=chunk)
                for start in range(0, len(metric_entities), _METRICS_PER_BATCH):
                    self.client.log_batch(run_id, metrics=metric_entities[start : start + _METRICS_PER_BATCH])
                if files:
                    with _redacted_copies(files) as folder:
                        self.client.log_artifacts(run_id, str(folder), artifact_path)
                self.client.set_terminated(run_id, status)
        except TrackingError:
            with contextlib.suppress(Exception):
                self.client.set_terminated(run_id, "FAILED")
            raise
        return run_id

    def logged(self, experiment: str, run_id: str, children: tuple[str, ...] = ()) -> LoggedRun:
        return LoggedRun(self.public, experiment, self._experiments[experiment], run_id, children)


@contextlib.contextmanager
def _redacted_copies(files: Sequence[Path]) -> Iterator[Path]:
    """A temporary folder with a copy of each file, text files redacted (binary tables, such as
    Parquet, are redacted by jurist when they are written)."""
    with tempfile.TemporaryDirectory(prefix="jurist-mlflow-") as tmp:
        folder = Path(tmp)
        for file in files:
            copy = folder / file.name
            shutil.copyfile(file, copy)
            if copy.suffix.lower() in TEXT_SUFFIXES:
                redact_file(copy)
        yield folder
