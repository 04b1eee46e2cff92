"""Start-up of the ``jurist`` command: help, the version and ``jurist gate`` load neither DSPy
nor LiteLLM, nor pandas or numpy.

Each case runs ``python -X importtime -m jurist ...`` in a fresh process and reads the modules
it imported from the import-time log (stderr), so the check covers everything the command
loaded, including what its modules import lazily while running. How fast that is is
measured by ``benchmarks/startup.py``, not here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GATES = ROOT / "tests" / "data" / "gates"
HEAVY = {"dspy", "litellm", "pandas", "numpy"}

COMMANDS = [
    [],
    ["judge"],
    ["score"],
    ["prompt"],
    ["calibrate"],
    ["optimize"],
    ["tasks"],
    ["tasks", "show"],
    ["gate"],
    ["rgb"],
    ["rgb", "run"],
    ["probe"],
    ["probe", "injection"],
    ["report"],
    ["show"],
    ["view"],
]


def _run(args: list[str]) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run ``jurist ARGS`` in a fresh interpreter; its result and the top-level packages it imported."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "jurist", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "120"},
    )
    imported = {
        line.rsplit("|", 1)[1].strip().split(".")[0]
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "jurist" in imported, done.stderr[-2000:]
    return done, imported


@pytest.mark.parametrize("command", COMMANDS, ids=lambda command: " ".join(command) or "jurist")
def test_help_loads_no_model_library_and_no_pandas(command: list[str]) -> None:
    done, imported = _run([*command, "--help"])
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Usage:" in done.stdout
    assert imported & HEAVY == set()


def test_version_loads_no_model_library_and_no_pandas() -> None:
    done, imported = _run(["--version"])
    assert done.returncode == 0 and done.stdout.startswith("jurist ")
    assert imported & HEAVY == set()


def test_gate_scores_traces_without_a_model_library_or_pandas(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    done, imported = _run(
        ["gate", str(GATES / "qaset.json"), str(GATES / "trace.sample.jsonl"), "--json", "--out", str(out)]
    )
    assert done.returncode in (0, 1), done.stderr[-2000:]
    assert done.stdout.startswith("gates: ") and out.is_file()
    assert imported & HEAVY == set()


def test_judge_imports_what_it_needs_when_it_runs(tmp_path: Path) -> None:
    # The guard above is not vacuous: a command that judges does load DSPy and pandas.
    done, imported = _run(
        ["judge", "ragbench", "sample:ragbench", "--out", str(tmp_path / "r"), "--no-progress"]
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert {"dspy", "pandas"} <= imported
