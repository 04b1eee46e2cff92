"""Finished verdicts are read back without the program: what a served verdict records, what
keeps two judgments apart, and that a damaged entry is never trusted.

Each test judges once with a cache directory, then copies only ``verdicts.sqlite`` into a new
cache directory (the response cache stays behind): a re-run that asks the provider nothing
was served by the verdict cache alone."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from jurist.judges.verdicts import VERDICTS_DB
from jurist.runner import RESULTS_DB, ResultStore, run_items
from jurist.tasks import get_task
from jurist.tasks._contract import _verdict_scope
from jurist.testing import OpenAICompatibleServer
from support import ragbench_rows, run_cli, write_jsonl

ITEMS = 3


def _judge(config: Any, data: Path, out: Path, *, scope: str | None = None, instructions: str | None = None):
    """Judge ``data`` into ``out`` with the RAGBench task's judge for ``config``."""
    task = get_task("ragbench")
    options = task.options()
    judge = task.make_judge(config, options)
    if scope is not None:
        judge.verdict_scope = scope
    if instructions is not None:
        for _, predictor in judge.program.named_predictors():
            predictor.signature = predictor.signature.with_instructions(instructions)
    dataset = task.read(str(data), options)
    return run_items(
        task.items(dataset, options),
        judge,
        out,
        task="ragbench",
        dataset=dataset.describe(),
        config=config.model_dump(mode="json"),
        progress=False,
    )


def _verdicts_only(cache: Path, target: Path) -> Path:
    """A new cache directory holding ``cache``'s finished verdicts and no response cache."""
    target.mkdir()
    for path in cache.glob(VERDICTS_DB + "*"):
        shutil.copy(path, target / path.name)
    return target


def _details(run: Path) -> dict[str, Any]:
    with ResultStore(run / RESULTS_DB) as store:
        return {item_id: store.item_detail(item_id) for item_id in store.item_ids()}


def test_a_finished_verdict_is_served_with_its_calls_as_cache_hits(server, llm_config, tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(ITEMS))
    first = _judge(llm_config, data, tmp_path / "first")
    assert server.requests == ITEMS and first.usage.calls == ITEMS

    server.reset_count()
    cache = _verdicts_only(llm_config.cache_dir, tmp_path / "verdicts-only")
    again = _judge(llm_config.model_copy(update={"cache_dir": cache}), data, tmp_path / "again")
    assert server.requests == 0
    assert again.ok == ITEMS and again.failed == 0
    assert again.usage.calls == 0 and again.usage.cache_hits == ITEMS
    assert again.usage.prompt_tokens == 0 and again.usage.cost is None

    before, after = _details(tmp_path / "first"), _details(tmp_path / "again")
    assert list(before) == list(after)
    for item_id, detail in after.items():
        made = before[item_id]
        assert detail.output == made.output and detail.raw == made.raw
        assert detail.usage.cache_hits == 1 and detail.usage.calls == 0 and detail.attempts == 1
        assert len(detail.calls) == len(made.calls) == 1
        served, asked = detail.calls[0], made.calls[0]
        assert served.cache_hit and not asked.cache_hit
        assert served.messages == asked.messages and served.replies == asked.replies
        assert served.prompt_tokens == 0 and served.cost is None


def test_what_changes_a_verdict_is_not_served_the_old_one(server, llm_config, tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(ITEMS))
    _judge(llm_config, data, tmp_path / "first")
    variants = {
        "temperature": {"update": {"temperature": 0.5}},
        "max tokens": {"update": {"max_tokens": 1234}},
        "another task scope (options, version)": {"scope": "another scope"},
        "another program state": {"instructions": "Judge the response sentence by sentence."},
    }
    for number, (name, change) in enumerate(variants.items()):
        cache = _verdicts_only(llm_config.cache_dir, tmp_path / f"cache-{number}")
        config = llm_config.model_copy(update={"cache_dir": cache, **change.get("update", {})})
        server.reset_count()
        run = _judge(
            config,
            data,
            tmp_path / f"run-{number}",
            scope=change.get("scope"),
            instructions=change.get("instructions"),
        )
        assert server.requests == ITEMS, name
        assert run.usage.calls == ITEMS and run.usage.cache_hits == 0, name


def test_the_task_scope_holds_options_version_and_the_reading_of_answers():
    class Options(BaseModel):
        threshold: float = 0.5

    task = get_task("ragbench")
    program = task.program(task.options())
    base = _verdict_scope(task, Options(), program)
    assert _verdict_scope(task, Options(), program) == base
    assert _verdict_scope(task, Options(threshold=0.7), program) != base

    class Bumped(type(task)):  # type: ignore[misc]
        version = "another"

    assert _verdict_scope(Bumped(), Options(), program) != base

    class Reads(type(task)):  # type: ignore[misc]
        def postprocess(self, prediction: Any, inputs: dict[str, Any], options: BaseModel) -> dict[str, Any]:
            return {"verdict": "read another way"}

    assert _verdict_scope(Reads(), Options(), program) != base


def test_a_damaged_entry_is_a_miss_and_is_replaced(server, llm_config, tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(ITEMS))
    _judge(llm_config, data, tmp_path / "first")
    cache = _verdicts_only(llm_config.cache_dir, tmp_path / "damaged")
    with sqlite3.connect(cache / VERDICTS_DB) as db:
        rows = db.execute("SELECT key, entry FROM verdicts ORDER BY key").fetchall()
        assert len(rows) == ITEMS
        (first, _), (second, _), (third, entry) = rows
        db.execute("UPDATE verdicts SET entry = 'not json' WHERE key = ?", (first,))
        wrong = '{"layout": 1, "output": "not a mapping", "calls": []}'
        db.execute("UPDATE verdicts SET entry = ? WHERE key = ?", (wrong, second))
        # A message text that no longer matches its hash is not trusted either.
        user = json.loads(entry)["calls"][0]["messages"][-1][1]
        db.execute("UPDATE messages SET content = 'tampered' WHERE sha256 = ?", (user,))
    server.reset_count()
    run = _judge(llm_config.model_copy(update={"cache_dir": cache}), data, tmp_path / "again")
    assert server.requests == ITEMS
    assert run.ok == ITEMS and run.usage.calls == ITEMS
    assert _details(tmp_path / "again")["item-0"].output == _details(tmp_path / "first")["item-0"].output

    # The run replaced the damaged entries: they serve the next run.
    repaired = _verdicts_only(cache, tmp_path / "repaired")
    server.reset_count()
    served = _judge(llm_config.model_copy(update={"cache_dir": repaired}), data, tmp_path / "served")
    assert server.requests == 0 and served.usage.cache_hits == ITEMS


def test_failed_judgments_are_not_kept(llm_config, tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(ITEMS))
    with OpenAICompatibleServer(lambda body: "I refuse to use your format.") as bad:
        config = llm_config.model_copy(update={"api_base": bad.base_url})
        run = _judge(config, data, tmp_path / "run")
    assert run.failed == ITEMS
    with sqlite3.connect(llm_config.cache_dir / VERDICTS_DB) as db:
        assert db.execute("SELECT COUNT(*) FROM verdicts").fetchone() == (0,)


def test_jurist_judge_serves_finished_verdicts_into_a_new_directory(server, llm_config, tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(ITEMS))
    config_file = tmp_path / "judge.yaml"
    config_file.write_text(yaml.safe_dump(llm_config.model_dump(mode="json")), encoding="utf-8")
    command = ["judge", "ragbench", str(data), "--config", str(config_file), "--no-progress"]
    assert run_cli([*command, "--out", str(tmp_path / "first")]) == 0
    cache = _verdicts_only(llm_config.cache_dir, tmp_path / "verdicts-only")
    moved = llm_config.model_copy(update={"cache_dir": cache})
    config_file.write_text(yaml.safe_dump(moved.model_dump(mode="json")), encoding="utf-8")
    server.reset_count()
    assert run_cli([*command, "--out", str(tmp_path / "again")]) == 0
    assert server.requests == 0
    summary = yaml.safe_load((tmp_path / "again" / "summary.json").read_text(encoding="utf-8"))
    assert summary["usage"]["calls"] == 0 and summary["usage"]["cache_hits"] == ITEMS
    first = yaml.safe_load((tmp_path / "first" / "summary.json").read_text(encoding="utf-8"))
    assert summary["trace"] == first["trace"]


def _counting_programs(monkeypatch) -> list[int]:
    """Count the RAGBench programs built from now on (the task builds one per judge it builds)."""
    import jurist.programs.ragbench.program as module

    built: list[int] = []
    original = module.RagbenchJudge

    class Counted(original):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            built.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(module, "RagbenchJudge", Counted)
    return built


def test_a_judge_whose_card_is_kept_builds_its_program_only_for_an_item_not_served(
    server, llm_config, tmp_path, monkeypatch
):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(ITEMS))
    task = get_task("ragbench")
    first = task.make_judge(llm_config, task.options())
    fingerprint = first.fingerprint()
    _judge(llm_config, data, tmp_path / "first")  # keeps the verdicts and the judge's card
    built = _counting_programs(monkeypatch)

    server.reset_count()
    judge = task.make_judge(llm_config, task.options())
    assert judge.fingerprint() == fingerprint and built == []
    again = _judge(llm_config, data, tmp_path / "again")
    assert again.usage.calls == 0 and again.usage.cache_hits == ITEMS and built == []

    more = write_jsonl(tmp_path / "more.jsonl", ragbench_rows(ITEMS + 1))
    grown = _judge(llm_config, more, tmp_path / "grown")
    assert grown.ok == ITEMS + 1 and grown.usage.calls == 1 and server.requests == 1
    assert built == [1]  # built once, for the item no verdict was kept for


def test_another_config_or_a_changed_file_is_another_card(server, llm_config, tmp_path, monkeypatch):
    from jurist.judges.verdicts import card_key

    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(ITEMS))
    _judge(llm_config, data, tmp_path / "first")
    built = _counting_programs(monkeypatch)
    task = get_task("ragbench")
    task.make_judge(llm_config.model_copy(update={"temperature": 0.5}), task.options())
    assert built == [1]

    file = tmp_path / "task.yaml"
    file.write_text("name: a\n", encoding="utf-8")
    before = card_key({"task": "a"}, [file])
    assert card_key({"task": "a"}, [file]) == before
    file.write_text("name: b\n", encoding="utf-8")
    assert card_key({"task": "a"}, [file]) != before
    assert card_key({"task": "b"}, [file]) != card_key({"task": "a"}, [file])


def test_a_card_that_does_not_match_the_judge_built_is_refused(server, llm_config, tmp_path):
    from jurist.judges.verdicts import JudgeCard, verdict_cache

    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(ITEMS))
    _judge(llm_config, data, tmp_path / "first")
    task = get_task("ragbench")
    judge = task.make_judge(llm_config, task.options())
    assert judge._card_key is not None and judge._card is not None
    verdict_cache(llm_config.cache_dir).write_card(judge._card_key, JudgeCard("0" * 16, judge._card.prefix))
    stale = task.make_judge(llm_config, task.options())
    assert stale.fingerprint() == "0" * 16
    with pytest.raises(RuntimeError, match="does not match the judge built now"):
        stale.program  # noqa: B018


def _open_files() -> int:
    return len(list(Path("/proc/self/fd").iterdir()))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts the open files in /proc")
def test_a_process_that_uses_many_cache_directories_keeps_few_files_open(tmp_path):
    """A long-lived process (a notebook, a test run) judging with cache directory after cache
    directory: each batch of writes opens only the caches it writes to, and the process keeps
    only the most recently used caches open."""
    import gc
    import threading

    from jurist.judges.verdicts import _OPEN_CACHES, verdict_cache, writing_verdicts_together
    from jurist.schemas import LMCall, Message

    calls = [LMCall(messages=[Message(role="user", content="Is it so?")], replies=["yes"])]
    open_after: dict[int, int] = {}
    for number in range(4 * _OPEN_CACHES):
        (tmp_path / f"cache-{number}").mkdir()
        cache = verdict_cache(tmp_path / f"cache-{number}")
        assert cache.read(f"key-{number}") is None

        def write_batch(cache=cache, number=number) -> None:  # a run's writer thread
            with writing_verdicts_together():
                cache.write(f"key-{number}", {"verdict": "yes"}, calls)

        writer = threading.Thread(target=write_batch)
        writer.start()
        writer.join()
        assert verdict_cache(tmp_path / f"cache-{number}").read(f"key-{number}").output == {"verdict": "yes"}
        if (number + 1) % _OPEN_CACHES == 0:
            gc.collect()
            open_after[number + 1] = _open_files()
    # The open files stop growing once the process has used more directories than it keeps open
    # (each open cache: its database and, in WAL mode, its journal and shared memory).
    steady = open_after[2 * _OPEN_CACHES]
    assert open_after[3 * _OPEN_CACHES] <= steady and open_after[4 * _OPEN_CACHES] <= steady
    assert steady - open_after[_OPEN_CACHES] <= 3 * 8
    # A cache that was closed reads its verdicts back when asked for again.
    assert verdict_cache(tmp_path / "cache-0").read("key-0").output == {"verdict": "yes"}
