"""DSPy's metric contracts around a task adapter, and a program guard for compilation.

DSPy optimizers call ``metric(example, prediction, trace=None)`` and want a number
(bootstrap and MIPRO); GEPA calls ``metric(gold, pred, trace, pred_name, pred_trace)``
and wants ``dspy.Prediction(score=..., feedback=...)``. :class:`JudgeMetric` serves both
from one :class:`~jurist.optimization.TaskAdapter`.

During compilation a judgment that fails (provider error after retries, an answer that
cannot be parsed after the parse retries) must not stop the optimizer: the
:class:`GuardedProgram` retries like :class:`~jurist.judges.judge.LLMJudge` does, then
returns a prediction that carries the error, which the metric scores 0 *for training
only* and counts. Evaluations on dev and test never score a failure: it is counted and
left out (see :func:`jurist.optimization.evaluate_program`).
"""

from __future__ import annotations

import threading
import warnings
from collections import Counter
from typing import Any

import dspy
from dspy.utils.exceptions import AdapterParseError
from pydantic import ValidationError
from tenacity import Retrying, retry_if_exception, stop_after_attempt

from jurist.judges.lm import metering
from jurist.judges.retry import BackoffWait, is_transient
from jurist.optimization._adapter import MetricResult, TaskAdapter
from jurist.schemas import Usage

ERROR_FIELD = "jurist_error"
"""The field of a guarded prediction that holds the error of a failed judgment."""


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else ""


class Tally:
    """Counts of the judgments made while compiling; shared by every copy of a guarded program."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.calls = 0
        self.failed = 0
        self.unusable = 0
        self.errors: Counter[str] = Counter()
        self.usage = Usage()

    def __deepcopy__(self, memo: dict[int, Any]) -> Tally:
        return self  # optimizers copy programs; every copy reports here

    def record(self, usage: Usage, error: str | None = None) -> None:
        with self._lock:
            self.calls += 1
            self.usage = self.usage.add(usage)
            if error is not None:
                self.failed += 1
                self.errors[error] += 1

    def record_unusable(self, error: str) -> None:
        with self._lock:
            self.unusable += 1
            self.errors[error] += 1

    def summary(self) -> dict[str, Any]:
        """JSON-ready counts: program calls, failed calls, unusable answers, errors by kind, usage."""
        with self._lock:
            return {
                "program_calls": self.calls,
                "failed_calls": self.failed,
                "unusable_answers": self.unusable,
                "errors": dict(self.errors),
                "usage": self.usage.model_dump(),
            }


class GuardedProgram(dspy.Module):
    """Wraps a program for compilation: retries, then a failed judgment becomes a prediction.

    Transient provider failures are retried ``num_retries`` times with capped backoff; an
    unparseable answer is asked again ``parse_retries`` times past the cache (a new
    ``rollout_id``). Usage and failures go to ``tally``.
    """

    def __init__(
        self,
        program: dspy.Module,
        tally: Tally,
        *,
        num_retries: int = 6,
        retry_max_wait: float = 30.0,
        parse_retries: int = 2,
    ) -> None:
        super().__init__()
        self.program = program
        self.tally = tally
        self.num_retries = num_retries
        self.retry_max_wait = retry_max_wait
        self.parse_retries = parse_retries

    def _call(self, inputs: dict[str, Any]) -> Any:
        for attempt in Retrying(
            retry=retry_if_exception(is_transient),
            stop=stop_after_attempt(self.num_retries + 1),
            wait=BackoffWait(cap=self.retry_max_wait),
            reraise=True,
        ):
            with attempt:
                return self.program(**inputs)
        raise AssertionError("unreachable: tenacity re-raises the last error")

    def forward(self, **inputs: Any) -> Any:
        error = "no attempt"
        # Answers reach the response cache only once they parsed, as in batch judging: an
        # unparseable answer is never replayed from the cache by a later attempt or run.
        with metering(hold_cache_writes=True) as meter:
            base = dspy.settings.lm
            for parse_attempt in range(self.parse_retries + 1):
                lm = base
                if parse_attempt and base is not None:
                    salt = int(base.kwargs.get("rollout_id") or 0) + parse_attempt
                    with warnings.catch_warnings():
                        warnings.filterwarnings("ignore", message="rollout_id")
                        lm = base.copy(rollout_id=salt)
                try:
                    with dspy.context(lm=lm):
                        prediction = self._call(inputs)
                except AdapterParseError as exc:
                    meter.drop_held()
                    meter.evict_served()
                    error = f"unparseable_output: {_first_line(exc)}"
                    continue
                except Exception as exc:  # provider failure after retries, or a program bug
                    meter.drop_held()
                    error = f"{type(exc).__name__}: {_first_line(exc)}"
                    break
                meter.commit_cache()
                self.tally.record(meter.usage())
                return prediction
        self.tally.record(meter.usage(), error.split(":", 1)[0])
        return dspy.Prediction(**{ERROR_FIELD: error})


class JudgeMetric:
    """A task adapter's score in DSPy's metric contracts.

    ``metric(example, prediction, trace=None)`` returns the score (a float in [0, 1]);
    with ``feedback=True`` (for GEPA), ``metric(gold, pred, trace, pred_name, pred_trace)``
    returns ``dspy.Prediction(score=..., feedback=...)``.
    """

    def __init__(self, adapter: TaskAdapter, tally: Tally | None = None, *, feedback: bool = False) -> None:
        self.adapter = adapter
        self.tally = tally
        self.feedback = feedback
        self.__name__ = f"{adapter.task}_{adapter.metric_name}"

    def result(self, example: dspy.Example, prediction: Any) -> MetricResult:
        """Score one prediction; a failed or unusable one scores 0 with the reason as feedback."""
        error = prediction.get(ERROR_FIELD) if isinstance(prediction, dspy.Prediction) else None
        if error:
            return self.adapter.failure(example, error)
        try:
            output = self.adapter.postprocess(prediction, example.inputs().toDict())
        except (ValueError, ValidationError, AttributeError, TypeError) as exc:
            if self.tally is not None:
                self.tally.record_unusable("unusable_output")
            return self.adapter.failure(example, f"unusable output: {exc}")
        return self.adapter.score(example, output)

    def __call__(
        self,
        example: dspy.Example,
        prediction: Any,
        trace: Any = None,
        pred_name: str | None = None,
        pred_trace: Any = None,
    ) -> Any:
        result = self.result(example, prediction)
        if self.feedback:
            return dspy.Prediction(score=result.score, feedback=result.feedback)
        return result.score
