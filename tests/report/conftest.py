"""Runs the report tests read: the bundled RAGBench sample and the MT-Bench YAML example judged
by their offline baselines, and a YAML yes/no task judged through the loopback server (so
items have prompts and raw replies), one of whose items carries a script-injection attempt.

Each run is made once per test session; the tests only read them (or copy them first).
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from report_runs import BOOL_ROWS, BOOL_TASK, MT_BENCH, LoopbackRun, bool_responder, bool_responder_for  # noqa: E402

import jurist  # noqa: E402
from jurist.testing import OpenAICompatibleServer  # noqa: E402
from support import loopback_config, write_jsonl  # noqa: E402


@pytest.fixture(scope="session")
def offline_env() -> Iterator[None]:
    """The test environment of ``tests/conftest.py`` for session-wide runs: no provider keys,
    LiteLLM's bundled cost map, and the loopback key."""
    with pytest.MonkeyPatch.context() as patch:
        for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL"):
            patch.delenv(name, raising=False)
        patch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        patch.setenv("JURIST_TEST_API_KEY", "loopback-test-key")
        yield


@pytest.fixture(scope="session")
def ragbench_run(tmp_path_factory: pytest.TempPathFactory, offline_env: None) -> Path:
    """The bundled RAGBench sample judged by the offline baseline (60 items)."""
    out = tmp_path_factory.mktemp("ragbench") / "run"
    jurist.judge("ragbench", "sample:ragbench", out=out, progress=False)
    return out


@pytest.fixture(scope="session")
def mt_bench_run(tmp_path_factory: pytest.TempPathFactory, offline_env: None) -> Path:
    """The MT-Bench grader example (a YAML task) judged by its offline rules (16 items)."""
    out = tmp_path_factory.mktemp("mt-bench") / "run"
    jurist.judge(MT_BENCH / "task.yaml", MT_BENCH / "answers.jsonl", out=out, progress=False)
    return out


@pytest.fixture(scope="session")
def loopback_run(tmp_path_factory: pytest.TempPathFactory, offline_env: None) -> Iterator[LoopbackRun]:
    """The yes/no task judged through the loopback server: prompts, replies, one failed item."""
    folder = tmp_path_factory.mktemp("loopback")
    task = folder / "faithfulness.yaml"
    task.write_text(textwrap.dedent(BOOL_TASK), encoding="utf-8")
    rows = [
        {"id": row_id, "question": f"Is claim {row_id} supported?", "response": text, "gold": gold}
        for row_id, text, gold in BOOL_ROWS
    ]
    data = write_jsonl(folder / "rows.jsonl", rows)
    with OpenAICompatibleServer(bool_responder) as server:
        config = loopback_config(server.base_url, folder / "cache").model_copy(update={"parse_retries": 1})
        jurist.judge(task, data, config, out=folder / "run", progress=False)
        bodies = list(server.bodies)
    replies = {row_id: bool_responder_for(text) for row_id, text, _ in BOOL_ROWS}
    yield LoopbackRun(run_dir=folder / "run", bodies=bodies, replies=replies)
