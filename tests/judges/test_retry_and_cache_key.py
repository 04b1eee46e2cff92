"""Retry waits, and cache entries kept apart per server."""

from __future__ import annotations

from types import SimpleNamespace

from tenacity import RetryCallState

from jurist.judges.config import JudgeConfig
from jurist.judges.lm import cache_salt
from jurist.judges.retry import BackoffWait, is_transient, retry_after_seconds
from jurist.testing import OpenAICompatibleServer
from support import ragbench_answer, ragbench_rows, ragbench_run, write_jsonl


class _Hinted(Exception):
    def __init__(self, retry_after: float | None) -> None:
        super().__init__("rate limited")
        self.retry_after = retry_after


def _state(exc: BaseException, attempt: int) -> RetryCallState:
    state = RetryCallState(retry_object=None, fn=None, args=(), kwargs={})  # type: ignore[arg-type]
    state.attempt_number = attempt
    state.outcome = SimpleNamespace(exception=lambda: exc)  # type: ignore[assignment]
    return state


def test_retry_after_is_honoured_up_to_the_cap():
    wait = BackoffWait(base=1.0, cap=5.0)
    assert wait(_state(_Hinted(2.0), 1)) == 2.0
    assert wait(_state(_Hinted(120.0), 1)) == 5.0


def test_backoff_grows_exponentially_with_jitter_and_stops_at_the_cap():
    wait = BackoffWait(base=1.0, cap=5.0)
    for attempt, (low, high) in {1: (0.5, 1.0), 2: (1.0, 2.0), 3: (2.0, 4.0), 6: (5.0, 5.0)}.items():
        value = wait(_state(_Hinted(None), attempt))
        assert low <= value <= high, (attempt, value)


def test_retry_after_is_found_on_a_cause_response():
    inner = Exception("from litellm")
    inner.response = SimpleNamespace(headers={"retry-after": "3"})  # type: ignore[attr-defined]
    outer = RuntimeError("wrapped")
    outer.__cause__ = inner
    assert retry_after_seconds(outer) == 3.0
    assert retry_after_seconds(RuntimeError("no hint")) is None


def test_transient_errors_are_told_from_permanent_ones():
    rate_limited = Exception("429")
    rate_limited.status_code = 429  # type: ignore[attr-defined]
    bad_request = Exception("400")
    bad_request.status_code = 400  # type: ignore[attr-defined]
    assert is_transient(rate_limited)
    assert not is_transient(bad_request)
    assert not is_transient(ValueError("bug"))


def test_two_servers_with_one_model_name_do_not_share_cache_entries(llm_config, tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(3))
    with OpenAICompatibleServer(ragbench_answer) as first, OpenAICompatibleServer(ragbench_answer) as second:
        config_a = llm_config.model_copy(update={"api_base": first.base_url})
        config_b = llm_config.model_copy(update={"api_base": second.base_url})
        assert cache_salt(config_a) != cache_salt(config_b)
        ragbench_run(data, tmp_path / "a", config_a)
        ragbench_run(data, tmp_path / "b", config_b)
        assert first.requests == 3
        assert second.requests == 3  # not answered from the first server's entries


def test_no_api_base_means_no_salt():
    assert cache_salt(JudgeConfig(model="openai/gpt-4o-mini")) == 0
