"""Start-up of the ``jurist`` command: help, the version and ``jurist gate`` load neither DSPy
nor LiteLLM, nor pandas or numpy.

Each case runs ``python -X importtime -m jurist ...`` in a fresh process and reads the modules
it imported from the import-time log (stderr), so the check covers everything the command
loaded, including what its modules import lazily while running. How fast that is is
measured by ``benchmarks/startup.py``, not here.
"""

from __future__ import annotations

import json
import os
import re
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


def _judge_rows(tmp_path: Path, server_url: str, rows: int, out: str) -> tuple[dict, set[str]]:
    """``jurist judge ragbench`` of the first ``rows`` rows into ``out`` with a loopback judge
    (one cache directory for every call); the summary and the packages the command imported."""
    from support import ragbench_rows, write_jsonl

    data = write_jsonl(tmp_path / f"rows-{rows}.jsonl", ragbench_rows(rows))
    config = tmp_path / "judge.yaml"
    config.write_text(
        f"model: openai/loopback-judge\napi_base: {server_url}\napi_key_env: JURIST_TEST_API_KEY\n"
        f"cache_dir: {tmp_path / 'cache'}\n",
        encoding="utf-8",
    )
    done, imported = _run(
        [
            "judge",
            "ragbench",
            str(data),
            "--config",
            str(config),
            "--out",
            str(tmp_path / out),
            "--no-progress",
        ]
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads((tmp_path / out / "summary.json").read_text(encoding="utf-8")), imported


def test_a_run_whose_every_verdict_is_cached_imports_no_model_library(server, tmp_path: Path) -> None:
    fresh, imported = _judge_rows(tmp_path, server.base_url, 2, "fresh")
    assert fresh["usage"]["calls"] == 2 and "dspy" in imported
    cached, imported = _judge_rows(tmp_path, server.base_url, 2, "cached")
    assert cached["usage"]["calls"] == 0 and cached["usage"]["cache_hits"] == 2
    # Its figures are those of the first run: read from the figure cache, not drawn.
    assert imported & {"dspy", "litellm", "IPython", "matplotlib"} == set()
    assert cached["ok"] == 2 and cached["trace"] == fresh["trace"]
    # One item more: its judgment builds the program then, and only it asks the provider.
    grown, imported = _judge_rows(tmp_path, server.base_url, 3, "grown")
    assert grown["usage"]["calls"] == 1 and grown["usage"]["cache_hits"] == 2 and "dspy" in imported
    assert grown["ok"] == 3


def test_a_run_whose_every_figure_was_drawn_before_imports_no_matplotlib(tmp_path: Path) -> None:
    pages = []
    for out in ("first", "again"):
        done, imported = _run(
            [
                "judge",
                "ragbench",
                "sample:ragbench",
                "--cache-dir",
                str(tmp_path / "cache"),
                "--out",
                str(tmp_path / out),
                "--no-progress",
            ]
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert ("matplotlib" in imported) == (out == "first")
        page = (tmp_path / out / "report.html").read_text(encoding="utf-8")
        pages.append(re.findall(r"<svg .*?</svg>", page, re.S))
    assert len(pages[0]) >= 4 and pages[1] == pages[0]
    assert (tmp_path / "cache" / "figures.sqlite").is_file()
