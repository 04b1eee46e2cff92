"""A task's DSPy metric, built from its parts, and a program guard for compilation.

DSPy optimizers call ``metric(example, prediction, trace=None)`` and want a number
(bootstrap and MIPRO); GEPA calls ``metric(gold, pred, trace, pred_name, pred_trace)``
and wants ``dspy.Prediction(score=..., feedback=...)``. :func:`task_metric` builds one
plain function serving both from the task's postprocess and its
:meth:`~jurist.tasks.Task.example_score`.

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
from collections.abc import Callable
from typing import Any

import dspy
from dspy.utils.exceptions import AdapterParseError
from pydantic import BaseModel, ValidationError
from tenacity import Retrying, retry_if_exception, stop_after_attempt

from jurist.judges.lm import metering
from jurist.judges.retry import BackoffWait, is_transient
from jurist.optimization._target import MetricResult, OptimizableTask, Target
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


def failure(error: str) -> MetricResult:
    """The training score of an example the judge failed on: 0, with the reason as feedback."""
    return MetricResult(
        0.0,
        f"The judge's answer could not be used ({error}). Answer in exactly the requested "
        "fields and formats.",
        {"failed": 1.0},
    )


def example_result(
    target: Target, example: dspy.Example, prediction: Any, tally: Tally | None = None
) -> MetricResult:
    """Score one prediction with the task's parts: its postprocess, then its example score.

    A failed judgment (a guarded prediction carrying the error) or an output the task's
    postprocess refuses scores 0 with the reason as feedback (:func:`failure`).
    """
    error = prediction.get(ERROR_FIELD) if isinstance(prediction, dspy.Prediction) else None
    if error:
        return failure(error)
    try:
        output = target.postprocess(prediction, example.inputs().toDict())
    except (ValueError, ValidationError, AttributeError, TypeError) as exc:
        if tally is not None:
            tally.record_unusable("unusable_output")
        return failure(f"unusable output: {exc}")
    return target.score(example, output)


Metric = Callable[..., Any]


def target_metric(target: Target, tally: Tally | None = None, *, feedback: bool = False) -> Metric:
    """The DSPy metric of an optimization target (see :func:`task_metric`)."""

    def metric(
        example: dspy.Example,
        prediction: Any,
        trace: Any = None,
        pred_name: str | None = None,
        pred_trace: Any = None,
    ) -> Any:
        result = example_result(target, example, prediction, tally)
        if feedback:
            return dspy.Prediction(score=result.score, feedback=result.feedback)
        return result.score

    metric.__name__ = f"{target.task}_{target.metric_name}"
    metric.__qualname__ = metric.__name__
    return metric


def task_metric(
    task: OptimizableTask,
    options: dict[str, Any] | BaseModel | None = None,
    *,
    tally: Tally | None = None,
    feedback: bool = False,
) -> Metric:
    """A task's DSPy metric: a plain function built from the task's parts.

    ``metric(example, prediction, trace=None)`` returns the score, a float in [0, 1]: the
    prediction goes through the task's postprocess (:meth:`Task.optimization_program`), and
    the output is scored against the example's gold by :meth:`Task.example_score`. A failed
    judgment or an unusable output scores 0. With ``feedback=True`` (GEPA's contract),
    ``metric(gold, pred, trace, pred_name, pred_trace)`` returns
    ``dspy.Prediction(score=..., feedback=...)``, the feedback being the task's words.
    The function's ``__name__`` is ``{task}_{optimized_metric}``.

    Args:
        task: The task (a :class:`jurist.tasks.Task`).
        options: Its options (a dict or its options model; default: the defaults).
        tally: Where unusable outputs are counted (optimization's own bookkeeping).
        feedback: Return GEPA's score-with-feedback prediction instead of a float.
    """
    return target_metric(Target(task, options), tally, feedback=feedback)
