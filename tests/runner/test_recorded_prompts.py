"""Every judgment is inspectable: the run store keeps the messages each LM call sent.

The judges run through the loopback server; what the store recorded is compared with the
request bodies the server received.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from jurist.errors import RunDirectoryError
from jurist.judges.judge import program_identity
from jurist.runner import RESULTS_DB, ResultStore, versions
from jurist.schemas import ItemResult, LMCall, Message, rationale_of
from jurist.testing import Fault, OpenAICompatibleServer
from support import loopback_config, ragbench_answer, ragbench_rows, ragbench_run, write_jsonl

TEST_KEY = "loopback-test-key"  # the value conftest sets for JURIST_TEST_API_KEY


def _details(run_dir: Path) -> dict:
    with ResultStore(run_dir / RESULTS_DB) as store:
        return {item_id: store.item_detail(item_id) for item_id in store.item_ids()}


def _as_pairs(messages: list) -> list[tuple[str, str]]:
    return [(m.role, m.content) if isinstance(m, Message) else (m["role"], m["content"]) for m in messages]


def test_recorded_messages_are_what_the_server_received(server, llm_config, tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(4))
    run = ragbench_run(data, tmp_path / "run", llm_config)
    assert run.summary["ok"] == 4

    received = sorted(_as_pairs(body["messages"]) for body in server.bodies)
    details = _details(tmp_path / "run")
    recorded = sorted(_as_pairs(call.messages) for detail in details.values() for call in detail.calls)
    assert len(received) == 4 and recorded == received
    for detail in details.values():
        (call,) = detail.calls
        assert [message.role for message in call.messages] == ["system", "user"]
        assert call.replies == detail.raw and not call.cache_hit and call.error is None
        assert call.prompt_tokens > 0 and call.completion_tokens > 0
        assert call.latency_s is not None and 0 < call.latency_s <= detail.latency_s
        assert call.attempt == 1 and detail.attempts == 1
        assert detail.rationale == rationale_of(detail.output) and "relevant" in detail.rationale
        assert detail.judge_fingerprint and detail.program is None


def test_shared_messages_are_stored_once(server, llm_config, tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(2))
    ragbench_run(data, tmp_path / "run", llm_config)

    with sqlite3.connect(tmp_path / "run" / RESULTS_DB) as db:
        stored = dict(db.execute("SELECT sha256, LENGTH(content) FROM messages").fetchall())
        rows = [json.loads(calls) for (calls,) in db.execute("SELECT calls FROM results ORDER BY seq")]
        inputs = [json.loads(found) for (found,) in db.execute("SELECT inputs FROM results ORDER BY seq")]
    system_hashes = {call["messages"][0][1] for calls in rows for call in calls}
    user_hashes = {call["messages"][1][1] for calls in rows for call in calls}
    assert len(system_hashes) == 1 and len(user_hashes) == 2
    # The table holds one system message shared by both items, one user message each, and
    # the texts of the items' inputs, nothing else.
    input_hashes = {digest for found in inputs for _, digest in found.values()}
    assert set(stored) == system_hashes | user_hashes | input_hashes
    size = sum(stored[digest] for digest in system_hashes | user_hashes)
    system = next(iter(system_hashes))
    texts = {m.content for d in _details(tmp_path / "run").values() for m in d.calls[0].messages}
    assert system in {hashlib.sha256(text.encode()).hexdigest() for text in texts}
    assert size == sum(len(text) for text in texts)


def test_a_rejudge_into_a_new_directory_records_cache_hits_per_call(server, llm_config, tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(3))
    ragbench_run(data, tmp_path / "first", llm_config)
    server.reset_count()
    ragbench_run(data, tmp_path / "second", llm_config)
    assert server.requests == 0

    first, second = _details(tmp_path / "first"), _details(tmp_path / "second")
    assert all(not call.cache_hit for detail in first.values() for call in detail.calls)
    for item_id, detail in second.items():
        (call,) = detail.calls
        assert call.cache_hit and call.prompt_tokens == 0 and call.cost is None
        assert detail.usage.cache_hits == 1 and detail.usage.calls == 0
        # The cached answer was asked with the very same messages.
        assert _as_pairs(call.messages) == _as_pairs(first[item_id].calls[0].messages)
        assert call.replies == first[item_id].calls[0].replies


def test_failed_items_keep_every_attempt_with_its_messages_and_raw(tmp_path):
    with OpenAICompatibleServer("no fields here, just words") as server:
        config = loopback_config(server.base_url, tmp_path / "cache").model_copy(update={"parse_retries": 1})
        data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(1))
        run = ragbench_run(data, tmp_path / "run", config)
        assert run.summary["failed"] == 1
        bodies = [_as_pairs(body["messages"]) for body in server.bodies]

    (detail,) = _details(tmp_path / "run").values()
    assert detail.status == "failed" and detail.error_type == "unparseable_output" and detail.output is None
    # Each attempt asks once with the chat format and once more with DSPy's JSON fallback.
    assert detail.attempts == 2 and len(bodies) == 4
    assert [call.attempt for call in detail.calls] == [1, 1, 2, 2]
    assert [_as_pairs(call.messages) for call in detail.calls] == bodies
    assert [reply for call in detail.calls for reply in call.replies] == detail.raw
    assert detail.raw == ["no fields here, just words"] * 4


def test_a_call_that_failed_at_the_provider_is_kept_with_its_error(server, llm_config, tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(1))
    server.inject(Fault.server_error())
    run = ragbench_run(data, tmp_path / "run", llm_config.model_copy(update={"concurrency": 1}))
    assert run.summary["ok"] == 1 and server.requests == 2

    (detail,) = _details(tmp_path / "run").values()
    failed, answered = detail.calls
    assert failed.error and "500" in failed.error and not failed.replies
    assert _as_pairs(failed.messages) == _as_pairs(answered.messages)
    assert answered.error is None and answered.replies == detail.raw
    assert detail.usage.calls == 2


def test_a_key_in_the_prompt_or_the_reply_is_redacted_in_the_messages_table(tmp_path):
    leaked = f"my api_key={TEST_KEY} and {TEST_KEY}"

    def answer(body: dict) -> str:
        return ragbench_answer(body).replace("The first sentence is relevant.", f"Echo: {TEST_KEY}.")

    rows = ragbench_rows(2)
    rows[0]["question"] = f"What is fact 0? {leaked}"
    with OpenAICompatibleServer(answer) as server:
        config = loopback_config(server.base_url, tmp_path / "cache")
        data = write_jsonl(tmp_path / "in.jsonl", rows)
        ragbench_run(data, tmp_path / "run", config)
        assert any(TEST_KEY in json.dumps(body) for body in server.bodies)  # it was really sent

    stored = (tmp_path / "run" / RESULTS_DB).read_bytes()
    for suffix in ("-wal",):
        wal = tmp_path / "run" / (RESULTS_DB + suffix)
        if wal.exists():
            stored += wal.read_bytes()
    assert TEST_KEY.encode() not in stored
    with sqlite3.connect(tmp_path / "run" / RESULTS_DB) as db:
        texts = [content for (content,) in db.execute("SELECT content FROM messages")]
    assert any("[REDACTED]" in text for text in texts)
    details = _details(tmp_path / "run")
    assert "[REDACTED]" in details["item-0"].calls[0].messages[1].content
    assert all(TEST_KEY not in reply for d in details.values() for c in d.calls for reply in c.replies)


def test_baseline_judges_record_no_calls(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(2))
    from jurist.judges.config import JudgeConfig

    ragbench_run(data, tmp_path / "run", JudgeConfig())
    details = _details(tmp_path / "run")
    assert all(detail.calls == [] for detail in details.values())
    with sqlite3.connect(tmp_path / "run" / RESULTS_DB) as db:
        # No prompt: the table holds only the texts of the judged inputs, which every item records.
        inputs = [json.loads(found) for (found,) in db.execute("SELECT inputs FROM results")]
        stored = {row[0] for row in db.execute("SELECT sha256 FROM messages")}
    assert stored == {digest for found in inputs for _, digest in found.values()}
    assert all(detail.inputs and detail.inputs["question"] for detail in details.values())


def test_a_results_file_from_before_recorded_prompts_is_refused_not_converted(server, llm_config, tmp_path):
    run_dir = tmp_path / "run"
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(2))
    ragbench_run(data, run_dir, llm_config)
    with sqlite3.connect(run_dir / RESULTS_DB) as db:  # the layout before calls were recorded
        db.execute("ALTER TABLE results DROP COLUMN calls")
        db.execute("ALTER TABLE results DROP COLUMN program")
        db.execute("DROP TABLE messages")
        db.execute("DELETE FROM results WHERE id = 'item-1'")
    before = (run_dir / RESULTS_DB).read_bytes()
    written = f"written by jurist {versions()['jurist']} in an older layout \\(no column 'calls'\\)"

    with pytest.raises(RunDirectoryError, match=written):
        ResultStore(run_dir / RESULTS_DB, read_only=True)
    with pytest.raises(RunDirectoryError, match=written):
        ragbench_run(data, run_dir, llm_config)

    assert (run_dir / RESULTS_DB).read_bytes() == before and server.requests == 2


def test_a_store_without_its_messages_table_is_refused(tmp_path):
    db = tmp_path / RESULTS_DB
    ResultStore(db, judge_fingerprint="f").close()
    with sqlite3.connect(db) as connection:
        connection.execute("DROP TABLE messages")
    for read_only in (False, True):
        with pytest.raises(RunDirectoryError, match="older layout \\(no table 'messages'\\)"):
            ResultStore(db, read_only=read_only)


def test_program_identity_is_stored_with_every_row(tmp_path):
    artifact = tmp_path / "compiled.json"
    artifact.write_text('{"format": "jurist.compiled-program"}', encoding="utf-8")
    config = loopback_config("http://127.0.0.1:9/v1", tmp_path / "cache").model_copy(
        update={"program": artifact}
    )

    class Judged:
        pass

    judged = Judged()
    judged.config = config  # type: ignore[attr-defined]
    identity = program_identity(judged)  # type: ignore[arg-type]
    assert identity == {"path": str(artifact), "sha256": hashlib.sha256(artifact.read_bytes()).hexdigest()}
    assert program_identity(Judged()) is None  # type: ignore[arg-type]

    with ResultStore(tmp_path / RESULTS_DB, judge_fingerprint="f" * 16, program=identity) as store:
        store.put(
            ItemResult(
                id="a",
                status="ok",
                output={"verdict": "yes", "reasoning": "because"},
                raw=["yes"],
                calls=[LMCall(messages=[Message(role="user", content="q")], replies=["yes"])],
            )
        )
        detail = store.item_detail("a")
    assert detail is not None and detail.program == identity and detail.rationale == "because"
    assert detail.calls == [LMCall(messages=[Message(role="user", content="q")], replies=["yes"])]


def test_item_details_reads_many_items_in_a_few_queries_each_as_recorded(tmp_path):
    system = Message(role="system", content="You judge support answers.")
    results, inputs = [], []
    for i in range(1203):  # more than two chunks of ids
        user = Message(role="user", content=f"[[ ## answer ## ]]\nanswer {i}")
        reply = f"[[ ## verdict ## ]]\nyes {i}"
        call = LMCall(messages=[system, user], replies=[reply], prompt_tokens=10 + i, latency_s=0.5)
        results.append(
            ItemResult(id=f"item-{i}", status="ok", output={"verdict": "yes"}, raw=[reply], calls=[call])
        )
        inputs.append({"answer": f"answer {i}", "documents": [f"doc {i}", "shared"]})
    db = tmp_path / RESULTS_DB
    with ResultStore(db, judge_fingerprint="f") as store:
        store.put_many(results, list(range(len(results))), inputs)
    wanted = [f"item-{i}" for i in (1202, 0, 7, 7, 600)] + ["not-recorded"]
    wanted += [f"item-{i}" for i in range(900)]
    statements: list[str] = []
    with ResultStore(db) as store:
        store._db.set_trace_callback(statements.append)
        details = list(store.item_details(wanted))
    assert len(statements) <= 12  # a few queries per chunk of 500 ids, not three per item
    assert [detail.id for detail in details] == list(dict.fromkeys(wanted[:5] + wanted[6:]))
    for detail in details:
        i = int(detail.id.split("-")[1])
        assert detail.inputs == inputs[i]
        assert detail.output == {"verdict": "yes"} and detail.raw == results[i].raw
        (call,) = detail.calls
        assert call.messages == results[i].calls[0].messages
        assert call.replies == results[i].raw and call.prompt_tokens == 10 + i and call.latency_s == 0.5
