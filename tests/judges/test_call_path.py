"""A judge's LM call on one event loop (jurist.judges.dspy_seam) is the call DSPy makes: the same
cache entries both ways, the same price, DSPy's path for what it does not cover, and no worker
thread per item."""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Any

import dspy
import pytest
from dspy.clients import execution as dspy_execution
from dspy.utils.callback import BaseCallback

from jurist.judges import dspy_seam as calls
from jurist.judges.config import JudgeConfig
from jurist.judges.lm import build_lm, cache_salt, metering
from jurist.runner import call_blocking
from jurist.tasks import get_task
from jurist.testing import OpenAICompatibleServer
from support import ragbench_rows, ragbench_run, write_jsonl


def _run(coroutine: Any) -> Any:
    """Run a coroutine to its end, also where a test before left an event loop running."""
    return call_blocking(asyncio.run, coroutine)


def _plain_lm(config: JudgeConfig, **extra: Any) -> dspy.LM:
    """A plain ``dspy.LM`` with the settings jurist gives its LM (DSPy's own call path)."""
    import os

    return dspy.LM(
        config.model,
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        cache=config.cache,
        num_retries=0,
        engine=config.engine,
        timeout=config.timeout,
        api_base=config.api_base,
        api_key=os.environ[str(config.api_key_env)],
        rollout_id=cache_salt(config),
        **extra,
    )


def _ragbench(config: JudgeConfig, tmp_path: Any, count: int) -> tuple[Any, list[dict[str, Any]]]:
    task = get_task("ragbench")
    options = task.options()
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(count))
    items = [item.inputs for item in task.items(task.read(data, options), options)]
    return task.make_judge(config, options), items


@pytest.mark.parametrize("engine", ["auto", "litellm"])
def test_jurist_and_dspy_read_each_others_cache_entries(engine, server, llm_config, tmp_path):
    config = llm_config.model_copy(update={"engine": engine})
    judge, items = _ragbench(config, tmp_path, 2)
    plain = _plain_lm(config)

    # Written by jurist's call path, read by DSPy's: no request, the same prediction.
    judgment = _run(judge.judge(items[0]))
    assert server.requests == 1 and judgment.usage.calls == 1
    with dspy.context(lm=plain, adapter=judge.adapter, trace=None):
        prediction = _run(judge.program.acall(**items[0]))
    assert server.requests == 1
    assert judge.postprocess(prediction, items[0]) == judgment.output

    # Written by DSPy's call path, read by jurist's.
    with dspy.context(lm=plain, adapter=judge.adapter, trace=None):
        _run(judge.program.acall(**items[1]))
    assert server.requests == 2
    again = _run(judge.judge(items[1]))
    assert server.requests == 2
    assert again.usage.cache_hits == 1 and again.usage.calls == 0
    assert again.calls[0].cache_hit and again.calls[0].messages[0].role == "system"


@pytest.mark.parametrize("engine", ["auto", "litellm"])
def test_a_call_has_the_price_dspy_gives_it(engine, tmp_path):
    # A model the price table knows (priced per token) and one it does not (no price).
    with OpenAICompatibleServer("[[ ## answer ## ]]\nyes\n\n[[ ## completed ## ]]") as srv:
        for model in ("openai/gpt-4o-mini", "openai/loopback-judge"):
            config = JudgeConfig(
                model=model,
                api_base=srv.base_url,
                api_key_env="JURIST_TEST_API_KEY",
                engine=engine,
                cache=False,
            )
            lm = build_lm(config)
            messages = [{"role": "user", "content": f"Is {model} priced?"}]
            assert calls.covered(lm, None, messages, {})
            with metering() as meter:
                outputs = _run(lm.acall(messages=messages))
            plain = _plain_lm(config)
            expected = _run(plain.acall(messages=messages))
            assert outputs == expected
            cost = plain.history[-1]["cost"]
            assert meter.call_details[0].cost == cost
            assert (cost is not None and cost > 0) == (model == "openai/gpt-4o-mini")


def test_an_answer_without_tokens_is_priced_as_dspy_prices_it():
    from dspy._vendor.lm15.providers.openai_chat import response_from_openai_chat
    from dspy.clients.call_result import CallResult
    from dspy.lm15 import request_from_openai_chat

    lm = build_lm(JudgeConfig(model="openai/loopback-judge", cache=False))
    question = [{"role": "user", "content": "q"}]
    request = request_from_openai_chat({"model": "loopback-judge", "messages": question})
    reply = {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
    for prompt_tokens, completion_tokens in ((0, 0), (12, 3)):
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
        body = {"id": "x", "object": "chat.completion", "model": "loopback-judge", "choices": [reply]}
        usage["total_tokens"] = prompt_tokens + completion_tokens
        response = response_from_openai_chat({**body, "usage": usage})
        ours, theirs = CallResult.native(response), CallResult.native(response)
        calls._price(lm, ours, response, "openai-chat", request)
        dspy_execution._price_result(lm, theirs, response, "openai-chat", request)
        assert ours.cost == theirs.cost


class _Recorder(BaseCallback):
    def __init__(self) -> None:
        self.starts = 0

    def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        self.starts += 1


def test_a_call_with_callbacks_goes_through_dspy_and_is_metered(server, llm_config, tmp_path):
    judge, items = _ragbench(llm_config, tmp_path, 1)
    recorder = _Recorder()
    with dspy.context(callbacks=[recorder]):
        judgment = _run(judge.judge(items[0]))
    assert recorder.starts == 1  # DSPy's path ran the callback
    assert judgment.usage.calls == 1 and server.requests == 1
    assert judgment.calls[0].messages and judgment.calls[0].replies
    # Its answer reached the same cache: jurist's own path reads it.
    assert _run(judge.judge(items[0])).usage.cache_hits == 1
    assert server.requests == 1


def test_judging_a_batch_hands_no_work_to_a_thread_pool_per_item(server, llm_config, tmp_path, monkeypatch):
    submitted = 0
    original = concurrent.futures.ThreadPoolExecutor.submit

    def counted(self: concurrent.futures.ThreadPoolExecutor, *args: Any, **kwargs: Any) -> Any:
        nonlocal submitted
        submitted += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(concurrent.futures.ThreadPoolExecutor, "submit", counted)
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(16))
    run = ragbench_run(data, tmp_path / "run", llm_config)
    assert run.summary["ok"] == 16 and server.requests == 16
    # The model's capabilities, looked up once, and the run's own thread where an event loop
    # already runs in this one (call_blocking); nothing per item.
    assert submitted <= 2, submitted

    # Answered from the cache, the same.
    submitted = 0
    ragbench_run(data, tmp_path / "again", llm_config)
    assert server.requests == 16 and submitted <= 1, submitted
