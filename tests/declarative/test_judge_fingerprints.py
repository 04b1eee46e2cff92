"""A YAML task's LLM judge is the one the task contract makes of its parts (its program,
postprocess, normalising adapter and weighing), and its fingerprint and finished-verdict
scope are what they were when that judge was made by an override of ``make_judge``: a run
directory made before resumes (its manifest records the fingerprint), and the verdicts kept
before are served. The pinned values were computed with that earlier code; a DSPy upgrade
that changes the program's state changes them too (and then old runs do not resume)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from jurist.judges.config import JudgeConfig
from jurist.judges.judge import LLMJudge
from jurist.tasks import Task, get_task
from jurist.tasks.declarative.weighted import weigh_output

LABEL_TASK = """\
name: support
instructions: Is the answer supported?
inputs: [answer]
output:
  kind: label
  labels: [supported, unsupported, unclear]
  reasoning: false
gold: gold
"""

PINNED_SCOPE = "0e2cec54d8841e9c36c59dd9c33aa98d40e44bc49c464c323e3ea492321f5dca"
"""The sha256 of the judge's finished-verdict scope (equal with and without log-probabilities)."""


@pytest.mark.parametrize(
    ("logprobs", "fingerprint"), [(False, "c84b9ca5f9b4eb5d"), (True, "148f4e8514c6c5f4")]
)
def test_a_yaml_task_judge_keeps_its_fingerprint_and_scope(tmp_path: Path, logprobs: bool, fingerprint: str):
    file = tmp_path / "support.yaml"
    file.write_text(LABEL_TASK, encoding="utf-8")
    task = get_task(str(file))
    assert type(task).make_judge is Task.make_judge  # no judge of its own: the task's parts
    config = JudgeConfig(
        model="openai/pinned", api_base="http://127.0.0.1:9/v1", cache=False, logprobs=logprobs
    )
    judge = task.make_judge(config, task.options())
    assert isinstance(judge, LLMJudge)
    assert judge.fingerprint() == fingerprint
    assert judge.verdict_scope is not None
    assert hashlib.sha256(judge.verdict_scope.encode("utf-8")).hexdigest() == PINNED_SCOPE
    # The task's parts are on the judge: labels read whatever their letter case or spacing,
    # and verdicts weighed by their log-probabilities (used only with `logprobs: true`).
    assert judge.adapter.normalise_labels is True
    assert judge.weigh is not None and judge.weigh.func is weigh_output
