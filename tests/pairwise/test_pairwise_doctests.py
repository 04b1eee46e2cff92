"""The examples in the pairwise modules' docstrings run, and metrics stay free of DSPy and LiteLLM."""

from __future__ import annotations

import doctest
import importlib
import subprocess
import sys

import pytest

MODULES = [
    "jurist.signatures.pairwise",
    "jurist.datasets.pairwise.tables",
    "jurist.datasets.pairwise.shapes",
    "jurist.metrics.annotators",
    "jurist.metrics.pairwise.subeval",
    "jurist.metrics.pairwise.choice_readings",
    "jurist.metrics.gold_agreement",
    "jurist.programs.pairwise.baseline",
    "jurist.tasks.pairwise.report",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0


def test_metrics_import_neither_dspy_nor_litellm() -> None:
    code = (
        "import sys, jurist.metrics.pairwise.subeval, jurist.metrics.pairwise.choice_readings, "
        "jurist.metrics.pairwise.alpaca_eval, jurist.metrics.gold_agreement; "
        "print(sorted(m for m in ('dspy', 'litellm') if m in sys.modules))"
    )
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "[]"
