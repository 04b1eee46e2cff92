"""A verdict served by the finished-verdict cache is recorded without redacting its texts again
(they were redacted when the verdict was written), yet never with a secret configured since;
and what the rest of the code receives is the result it received before."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import yaml

from jurist.judges.cache_context import deferring_cache_writes
from jurist.judges.judge import Judgment
from jurist.judges.verdicts import VerdictCache
from jurist.redaction import REDACTED, shape_token
from jurist.runner import RESULTS_DB, ResultStore
from jurist.runner.tally import Item, judge_one
from jurist.schemas import ItemResult, LMCall, Message, Usage, cached_texts, mark_cached
from jurist.tasks import get_task
from jurist.testing import OpenAICompatibleServer
from support import loopback_config, ragbench_answer, ragbench_rows, run_cli, write_jsonl

LATER_SECRET = "lantern-quartz-7731-harbor"
"""A text that is not a secret when a verdict is cached, and is configured as one later."""

KEY_SHAPED = "sk" + "-served0123456789abcdefXYZ"  # built: the file holds no key-shaped text


def _rows(store_path: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(store_path) as db:
        return db.execute("SELECT * FROM results ORDER BY seq").fetchall()


def _texts(store_path: Path) -> dict[str, str]:
    with sqlite3.connect(store_path) as db:
        return dict(db.execute("SELECT sha256, content FROM messages").fetchall())


def _served(tmp_path: Path, output: dict[str, Any], reply: str, user: str) -> ItemResult:
    """The result the runner makes of a verdict the cache serves (written, then read back, as a
    judge in a batch run does)."""
    cache = VerdictCache(tmp_path / "verdicts.sqlite")
    messages = [Message(role="system", content="Judge the item."), Message(role="user", content=user)]
    cache.write("key", output, [LMCall(messages=messages, replies=[reply])])
    served = cache.read("key")
    assert served is not None

    class Serving:
        async def judge(self, inputs: dict[str, Any]) -> Judgment:
            # What LLMJudge.judge returns for a served verdict.
            judgment = Judgment.model_construct(
                output=served.output, raw=served.raw, usage=served.usage, attempts=1, calls=served.calls
            )
            return mark_cached(judgment, served.texts)

    result = asyncio.run(judge_one(Serving(), Item(id="item-0", inputs={})))  # type: ignore[arg-type]
    assert cached_texts(result) is not None
    return result


def _unmarked(result: ItemResult) -> ItemResult:
    """The same result built anew (no mark): what any code other than the runner builds."""
    return ItemResult(**{name: getattr(result, name) for name in ItemResult.model_fields})


def test_a_served_result_is_stored_as_the_full_redaction_stores_it(tmp_path):
    result = _served(tmp_path, {"verdict": True, "why": "quoted"}, "[[ ## verdict ## ]]\nTrue", "Item text.")
    plain = _unmarked(result)
    assert plain == result and cached_texts(plain) is None
    for name, given in (("served", result), ("plain", plain)):
        with ResultStore(tmp_path / f"{name}.sqlite", judge_fingerprint="f") as store:
            store.put(given, 0, {"question": "Item text."})
    assert _rows(tmp_path / "served.sqlite") == _rows(tmp_path / "plain.sqlite")
    assert _texts(tmp_path / "served.sqlite") == _texts(tmp_path / "plain.sqlite")


QUOTED = 'with "quotes" \\ and a line\nbreak 41'
"""A secret that JSON escapes (quotes, a backslash, a line break)."""


@pytest.mark.parametrize(
    ("secret", "where"),
    [
        (LATER_SECRET, "output"),
        (QUOTED, "output"),
        (LATER_SECRET, "reply"),
        (QUOTED, "reply"),
        (LATER_SECRET, "message"),
    ],
)
def test_a_secret_configured_after_the_verdict_was_cached_is_redacted(tmp_path, monkeypatch, secret, where):
    output = {"why": f"The key {secret} was quoted." if where == "output" else "Nothing quoted."}
    reply = f"answer {secret}" if where == "reply" else "answer"
    user = f"Question about {secret}?" if where == "message" else "Question?"
    result = _served(tmp_path, output, reply, user)
    monkeypatch.setenv("SERVED_TEST_SECRET", secret)
    with ResultStore(tmp_path / "results.sqlite") as store:
        store.put(result)
        detail = store.item_detail("item-0")
    assert detail is not None and detail.output is not None and detail.calls is not None
    shown = {
        "output": detail.output["why"],
        "reply": detail.raw[0],
        "message": detail.calls[0].messages[1].content,
    }[where]
    assert REDACTED in shown and secret not in shown
    stored = b"".join(path.read_bytes() for path in tmp_path.glob("results.sqlite*"))
    for form in (secret, json.dumps(secret)[1:-1]):
        assert form.encode() not in stored


def test_a_result_built_elsewhere_is_redacted_in_full(tmp_path):
    result = _served(tmp_path, {"why": "clean"}, "clean answer", "Clean question?")
    replaced = result.model_copy(update={"output": {"why": f"now {KEY_SHAPED}"}})
    assert cached_texts(replaced) is None  # the mark no longer names what the result holds
    calls = [LMCall(messages=[Message(role="user", content=f"key {KEY_SHAPED}")], replies=[KEY_SHAPED])]
    made = ItemResult(id="item-1", status="ok", output={"why": KEY_SHAPED}, raw=[KEY_SHAPED], calls=calls)
    with ResultStore(tmp_path / "results.sqlite") as store:
        store.put_many([replaced, made])
        details = {item_id: store.item_detail(item_id) for item_id in ("item-0", "item-1")}
    token = shape_token(KEY_SHAPED)
    first, second = details["item-0"], details["item-1"]
    assert first is not None and first.output == {"why": f"now {token}"}
    assert second is not None and second.output == {"why": token} and second.raw == [token]
    assert second.calls is not None and second.calls[0].messages[0].content == f"key {token}"
    stored = b"".join(path.read_bytes() for path in tmp_path.glob("results.sqlite*"))
    assert KEY_SHAPED.encode() not in stored


def test_a_served_result_equals_the_one_served_before(server, llm_config, tmp_path):
    task = get_task("ragbench")
    options = task.options()
    judge = task.make_judge(llm_config, options)
    dataset = task.read(str(write_jsonl(tmp_path / "in.jsonl", ragbench_rows(1))), options)
    (item,) = list(task.items(dataset, options))

    async def judged() -> ItemResult:
        with deferring_cache_writes() as writes:
            result = await judge_one(judge, item)
        for write in writes:  # as the runner's writer makes them
            write()
        return result

    fresh = asyncio.run(judged())
    assert server.requests == 1 and cached_texts(fresh) is None
    served = asyncio.run(judged())
    assert server.requests == 1 and cached_texts(served) is not None
    assert fresh.calls is not None and served.calls is not None
    expected = ItemResult(
        id=item.id,
        status="ok",
        output=fresh.output,
        raw=fresh.raw,
        attempts=1,
        latency_s=served.latency_s,
        usage=Usage(cache_hits=1),
        calls=[
            LMCall(
                messages=[Message(role=found.role, content=found.content) for found in call.messages],
                replies=call.replies,
                cache_hit=True,
            )
            for call in fresh.calls
        ],
    )
    assert served == expected
    assert served.model_dump() == expected.model_dump()
    assert [type(call) for call in served.calls] == [LMCall]
    assert all(type(message) is Message for message in served.calls[0].messages)


def test_jurist_judge_redacts_a_served_verdict_with_a_secret_configured_since(tmp_path, monkeypatch):
    def answer(body: dict[str, Any]) -> str:
        relevant = "The first sentence is relevant."
        return ragbench_answer(body).replace(relevant, f"{relevant} {LATER_SECRET}")

    rows = ragbench_rows(2)
    for row in rows:
        row["question"] = f"{row['question']} ({LATER_SECRET})"
    data = write_jsonl(tmp_path / "in.jsonl", rows)
    with OpenAICompatibleServer(answer) as server:
        config = loopback_config(server.base_url, tmp_path / "cache")
        config_file = tmp_path / "judge.yaml"
        config_file.write_text(yaml.safe_dump(config.model_dump(mode="json")), encoding="utf-8")
        command = ["judge", "ragbench", str(data), "--config", str(config_file), "--no-progress"]
        assert run_cli([*command, "--out", str(tmp_path / "first")]) == 0
        assert LATER_SECRET in (tmp_path / "first" / "results.jsonl").read_text(encoding="utf-8")
        monkeypatch.setenv("SERVED_TEST_TOKEN", LATER_SECRET)
        server.reset_count()
        assert run_cli([*command, "--out", str(tmp_path / "again")]) == 0
        assert server.requests == 0
    with ResultStore(tmp_path / "again" / RESULTS_DB) as store:
        detail = store.item_detail("item-0")
    assert detail is not None and detail.usage.cache_hits == 1 and detail.calls is not None
    assert REDACTED in detail.calls[0].messages[-1].content and REDACTED in detail.raw[0]
    for path in (tmp_path / "again").rglob("*"):
        if path.is_file():
            assert LATER_SECRET.encode() not in path.read_bytes(), path.name
