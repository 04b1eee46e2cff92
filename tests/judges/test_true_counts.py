"""True counts: the provider calls in the run summary and on each item equal the requests the
server received, with rate limits, server errors, timeouts, parse retries and refusals."""

from __future__ import annotations

import re
import threading

import pytest

from jurist.testing import Fault, OpenAICompatibleServer, last_user_message
from support import ragbench_answer, ragbench_rows, ragbench_run, write_jsonl

_ITEM = re.compile(r"What is fact number (\d+)\?")


def _item_of(body: dict) -> str:
    found = _ITEM.search(last_user_message(body))
    assert found, "every request names its item"
    return f"item-{found.group(1)}"


@pytest.mark.parametrize("engine", ["auto", "litellm"])
def test_summary_calls_equal_the_requests_the_server_received(engine, llm_config, tmp_path):
    # Unparseable replies before a good one (parse retries), on items judged after the faults
    # below are used up: each reply is the chat answer or its JSON fallback.
    garbage = {"item-7": 2, "item-9": 4}
    lock = threading.Lock()

    def responder(body: dict) -> str:
        item = _item_of(body)
        with lock:
            if garbage.get(item, 0) > 0:
                garbage[item] -= 1
                return "no verdict here"
        return ragbench_answer(body)

    with OpenAICompatibleServer(responder) as srv:
        config = llm_config.model_copy(
            update={"api_base": srv.base_url, "engine": engine, "concurrency": 2, "timeout": 0.5}
        )
        data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(10))
        srv.inject(
            Fault.rate_limit(0.01),
            Fault.server_error(),
            Fault.slow(1.0),  # longer than the client's timeout
            Fault(status=400),  # not retried: that item is recorded as failed
            Fault.server_error(),
            Fault.rate_limit(0.01),
        )
        run = ragbench_run(data, tmp_path / "run", config)
        received = srv.requests
        per_item: dict[str, int] = {}
        for body in list(srv.bodies):
            per_item[_item_of(body)] = per_item.get(_item_of(body), 0) + 1

    # One request per item, one more per retried fault (not the 400), one per unparseable reply.
    assert received == 10 + 5 + 6
    assert run.summary["failed"] == 1 and run.summary["ok"] == 9
    assert run.summary["usage"]["calls"] == received
    assert run.summary["usage"]["cache_hits"] == 0
    items = run.items.set_index("id")
    assert items["calls"].to_dict() == per_item
    # Attempts are judge attempts: the first answer plus each parse retry.
    assert items.loc["item-7", "attempts"] == 2 and items.loc["item-9", "attempts"] == 3


def test_only_calls_that_reached_the_provider_are_counted():
    from jurist.judges.lm import metering

    with metering() as meter:
        meter.record_failure(ConnectionRefusedError(111, "Connection refused"))  # never reached it
        meter.record_failure(TimeoutError("read timed out"))  # reached it, answer too late
    assert meter.usage().calls == 1 and meter.failed_calls == 1
