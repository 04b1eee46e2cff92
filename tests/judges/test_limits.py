"""Rate limits (rpm, tpm) and the adaptive in-flight cap, measured at the loopback server."""

from __future__ import annotations

import bisect

import pytest

from jurist.judges.config import JudgeConfig, load_config
from jurist.judges.limits import _InFlightGate, _TokenWindow, limits_for
from jurist.testing import Fault, OpenAICompatibleServer
from support import loopback_config, ragbench_answer, ragbench_rows, ragbench_run, write_jsonl


def _most_in_any_window(arrivals: list[float], seconds: float) -> int:
    """The most arrivals in any half-open window ``[t, t + seconds)`` that starts at an arrival."""
    times = sorted(arrivals)
    return max(bisect.bisect_left(times, t + seconds) - i for i, t in enumerate(times))


def test_rpm_holds_the_request_rate_measured_at_the_server(tmp_path):
    # rpm=600 is 10 requests a second; about 3 s of requests with 8 items in flight.
    with OpenAICompatibleServer(ragbench_answer) as server:
        config = loopback_config(server.base_url, tmp_path / "cache", model="openai/rpm-judge")
        config = config.model_copy(update={"rpm": 600, "concurrency": 8})
        data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(32))
        run = ragbench_run(data, tmp_path / "run", config)
        arrivals = list(server.arrivals)
    assert run.summary["ok"] == 32 and len(arrivals) == 32
    # Requests leave at least 0.1 s apart: any 1-s window holds at most 10 + 1 (the documented burst).
    assert _most_in_any_window(arrivals, 1.0) <= 11
    assert _most_in_any_window(arrivals, 2.0) <= 21


def test_rate_limits_change_no_fingerprint_cache_key_or_dump(tmp_path):
    plain = JudgeConfig(model="openai/x", api_base="http://127.0.0.1:1/v1")
    limited = plain.model_copy(update={"rpm": 60, "tpm": 10_000})
    assert limited.fingerprint() == plain.fingerprint()
    assert limited.model_dump() == plain.model_dump()
    assert "rpm" not in limited.model_dump_json()
    assert limited.undumped() == {"rpm": 60, "tpm": 10_000}
    path = tmp_path / "judge.yaml"
    path.write_text("model: openai/x\nrpm: 120\ntpm: 5000\n", encoding="utf-8")
    assert (load_config(path).rpm, load_config(path).tpm) == (120, 5000)
    with OpenAICompatibleServer(ragbench_answer) as server:
        data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(4))
        config = loopback_config(server.base_url, tmp_path / "cache")
        ragbench_run(data, tmp_path / "a", config.model_copy(update={"rpm": 6000}))
        assert server.requests == 4
        # Without the limit, the same requests are answered from the cache: the key is unchanged.
        again = ragbench_run(data, tmp_path / "b", config)
        assert server.requests == 4 and again.summary["usage"]["cache_hits"] == 4


def test_tpm_reserves_the_prompt_estimate_and_settles_on_reported_tokens(tmp_path):
    with OpenAICompatibleServer(ragbench_answer) as server:
        config = loopback_config(server.base_url, tmp_path / "cache", model="openai/tpm-judge")
        config = config.model_copy(update={"tpm": 1_000_000})
        data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(5))
        ragbench_run(data, tmp_path / "run", config)
        served = server.prompt_tokens + server.completion_tokens
    window = limits_for(config).tokens
    assert window is not None
    # Every reservation was replaced by the prompt + completion tokens the server reported.
    assert window._total == served


def test_token_window_waits_for_the_oldest_tokens_to_leave_the_minute():
    window = _TokenWindow(1000)
    first, wait = window.reserve(600)
    assert first is not None and wait == 0
    second, wait = window.reserve(600)
    assert second is None and 59 < wait <= 60  # only when the first leaves the window
    window.settle(first, 300)  # the provider counted fewer tokens than reserved
    third, wait = window.reserve(600)
    assert third is not None and wait == 0
    alone = _TokenWindow(100)
    big, wait = alone.reserve(5000)  # larger than the limit: sent when the window is empty
    assert big is not None and wait == 0


def test_gate_halves_on_a_429_once_per_epoch_and_grows_back_to_no_cap():
    import asyncio

    async def scenario() -> list[int | None]:
        gate = _InFlightGate(ceiling=8)
        epochs = [await gate.enter() for _ in range(8)]
        caps: list[int | None] = [gate.cap]
        gate.leave(epochs[0], "rate_limited")  # 8 in flight -> at most 4
        caps.append(gate.cap)
        gate.leave(epochs[1], "rate_limited")  # sent before the halving: no second halving
        caps.append(gate.cap)
        for epoch in epochs[2:]:
            gate.leave(epoch, "ok")
        caps.append(gate.cap)  # 6 successes: 4 -> 5 after four of them
        while gate.cap is not None:
            epoch = await gate.enter()
            gate.leave(epoch, "ok")
        caps.append(gate.cap)
        return caps

    assert asyncio.run(scenario()) == [None, 4, 4, 5, None]


def test_in_flight_requests_drop_after_429s_and_recover(tmp_path):
    served = {"answers": 0}

    def responder(body):
        served["answers"] += 1
        if served["answers"] == 24:  # mid-run, the provider starts refusing for a moment
            server.inject(*[Fault.rate_limit(0.05)] * 8)
        return ragbench_answer(body)

    with OpenAICompatibleServer(responder, latency=0.1) as server:
        config = loopback_config(server.base_url, tmp_path / "cache", model="openai/aimd-judge")
        config = config.model_copy(update={"concurrency": 8, "num_retries": 8})
        data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(110))
        run = ragbench_run(data, tmp_path / "run", config)
        seen = list(server.in_flight_at_arrival)
        assert server.statuses[429] == 8
    assert run.summary["ok"] == 110
    before = seen[:24]
    after = seen[32:]
    assert max(before) == 8
    # After the 429s the requests in flight halve: a stretch of arrivals never goes above 4
    # (requests leave in bursts, so at 8 allowed a burst of 6 arrivals reaches 6 in flight; the
    # cap grows back by one per 4 successes, so under load a stretch below 5 is short) ...
    low = [i for i in range(len(after) - 6) if max(after[i : i + 6]) <= 4]
    assert low, after
    # ... and then grow back up to the configured concurrency.
    assert max(after[low[0] + 6 :]) == 8


@pytest.mark.parametrize("field", ["rpm", "tpm"])
def test_a_limit_must_be_positive(field):
    with pytest.raises(ValueError):
        JudgeConfig(**{field: 0})
