"""A failed item is never served from any cache: unparseable answers never enter the response
cache, a cached answer that does not parse is evicted, and ``--retry-failed`` reaches the
provider again and replaces the failure once the answer parses."""

from __future__ import annotations

import asyncio

import dspy
import pytest
import yaml
from dspy.utils.exceptions import AdapterParseError

from jurist.tasks import get_task
from jurist.testing import OpenAICompatibleServer
from support import ragbench_answer, ragbench_rows, ragbench_run, run_cli, write_jsonl

BAD = "I refuse to use your format."


class _Switch:
    """A responder that answers badly until it is switched to good answers."""

    def __init__(self) -> None:
        self.good = False

    def __call__(self, body: dict) -> str:
        return ragbench_answer(body) if self.good else BAD


def test_retry_failed_asks_the_provider_again_and_replaces_the_failure(llm_config, tmp_path):
    answers = _Switch()
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(3))
    with OpenAICompatibleServer(answers) as srv:
        config = llm_config.model_copy(update={"api_base": srv.base_url})
        run = ragbench_run(data, tmp_path / "run", config)
        assert run.summary["failed"] == 3 and run.summary["ok"] == 0
        first_requests = srv.requests
        assert first_requests > 3  # parse retries were asked

        # A plain re-run keeps the recorded failures and calls nobody.
        srv.reset_count()
        again = ragbench_run(data, tmp_path / "run", config)
        assert srv.requests == 0
        assert again.summary["failed"] == 3

        # The bad answers are not in the response cache: a new run directory asks again.
        srv.reset_count()
        fresh = ragbench_run(data, tmp_path / "fresh", config)
        assert srv.requests == first_requests
        assert fresh.summary["usage"]["cache_hits"] == 0

        # The provider answers well now: --retry-failed reaches it and the items are ok.
        answers.good = True
        srv.reset_count()
        config_file = tmp_path / "judge.yaml"
        config_file.write_text(yaml.safe_dump(config.model_dump(mode="json")), encoding="utf-8")
        command = [
            "judge",
            "ragbench",
            str(data),
            "--out",
            str(tmp_path / "run"),
            "--config",
            str(config_file),
        ]
        code = run_cli([*command, "--retry-failed", "--no-progress"])
        assert code == 0
        assert srv.requests == 3
        fixed = ragbench_run(data, tmp_path / "run", config)
        assert fixed.summary["ok"] == 3 and fixed.summary["failed"] == 0

        # Accepted answers are cached: another new directory costs nothing.
        srv.reset_count()
        cached = ragbench_run(data, tmp_path / "cached", config)
        assert srv.requests == 0 and cached.summary["usage"]["cache_hits"] == 3


def test_a_bad_answer_already_in_the_cache_is_evicted_and_asked_again(llm_config, tmp_path):
    # Older versions (and code outside a judge) wrote every answer to the cache.
    answers = _Switch()
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(1))
    task = get_task("ragbench")
    options = task.options()
    with OpenAICompatibleServer(answers) as srv:
        config = llm_config.model_copy(update={"api_base": srv.base_url})
        judge = task.make_judge(config, options)
        inputs = next(iter(task.items(task.read(data, options), options))).inputs
        with dspy.context(lm=judge.lm, adapter=judge.adapter, trace=None), pytest.raises(AdapterParseError):
            asyncio.run(judge.program.acall(**inputs))
        written = srv.requests  # the chat answer and the JSON fallback, both now cached
        assert written == 2

        answers.good = True
        srv.reset_count()
        judgment = asyncio.run(judge.judge(inputs))
        assert srv.requests == 1  # the cached bad answers were not taken for an answer
        assert judgment.usage.cache_hits == 2 and judgment.usage.calls == 1

        srv.reset_count()
        again = asyncio.run(judge.judge(inputs))
        assert srv.requests == 0 and again.output == judgment.output
