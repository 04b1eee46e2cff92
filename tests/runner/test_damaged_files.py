"""Damaged files: a damaged response-cache shard is moved aside and rebuilt with a warning and the
run goes on; a damaged results.sqlite is one clear error (exit 2) that says how to recover."""

from __future__ import annotations

import logging
import shutil
import sqlite3
from pathlib import Path

import pytest
from diskcache import FanoutCache

from jurist.errors import ExitCode
from jurist.judges.lm import JuristCache
from jurist.runner import RESULTS_DB
from support import ragbench_rows, ragbench_run, run_cli, write_jsonl


def _damage(path: Path, how: str) -> None:
    if how == "garbage":
        path.write_bytes(b"this is not an SQLite database\n" * 200)
    else:
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 3])


@pytest.mark.parametrize("how", ["garbage", "truncated"])
def test_a_damaged_cache_shard_is_rebuilt_with_a_warning(how, server, llm_config, tmp_path, caplog):
    cache_dir = tmp_path / "cache"
    # A cache as DSPy leaves it (diskcache's FanoutCache, 16 SQLite shards), with enough entries
    # that every shard spans several pages.
    filled = FanoutCache(str(cache_dir), shards=16)
    for index in range(3000):
        filled.set(f"entry-{index}", "x" * 400)
    filled.close()
    shard = sorted(cache_dir.glob("*/cache.db"))[3]
    _damage(shard, how)

    config = llm_config.model_copy(update={"cache_dir": cache_dir})
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(3))
    with caplog.at_level(logging.WARNING, logger="jurist"):
        run = ragbench_run(data, tmp_path / "run", config)

    assert run.summary["ok"] == 3
    warnings = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert any(str(shard) in text and "damaged" in text for text in warnings), warnings
    assert list(shard.parent.glob("cache.db.damaged-*"))  # kept for inspection
    with sqlite3.connect(shard) as connection:  # rebuilt: a working, empty shard
        assert connection.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    # The rebuilt cache serves the next run.
    server.reset_count()
    ragbench_run(data, tmp_path / "again", config)
    assert server.requests == 0


def test_a_read_that_hits_damage_later_is_a_cache_miss(tmp_path, monkeypatch, caplog):
    cache = JuristCache(enable_disk_cache=True, enable_memory_cache=False, disk_cache_dir=str(tmp_path))

    def broken(key: str, *args: object, **kwargs: object) -> None:
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(cache.disk_cache, "get", broken)
    with caplog.at_level(logging.WARNING, logger="jurist"):
        assert cache.get({"model": "x", "messages": []}) is None
        assert cache.get({"model": "y", "messages": []}) is None
    warnings = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warnings) == 1 and "damaged" in warnings[0]  # said once, not for every read


@pytest.mark.parametrize("how", ["garbage", "truncated"])
def test_a_damaged_results_file_is_one_error_with_the_way_to_recover(
    how, server, llm_config, tmp_path, capsys
):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(80))
    out = tmp_path / "run"
    model = [
        "--model",
        llm_config.model,
        "--api-base",
        server.base_url,
        "--cache-dir",
        str(tmp_path / "cache"),
    ]
    judge = ["judge", "ragbench", str(data), "--out", str(out), "--no-progress", *model]
    judge += ["--set", f"api_key_env={llm_config.api_key_env}"]
    assert run_cli(judge) == 0
    db = out / RESULTS_DB
    assert not db.with_name(RESULTS_DB + "-wal").exists()  # checkpointed when the run closed it
    _damage(db, how)
    capsys.readouterr()

    for command in (judge, ["score", "ragbench", str(out)]):
        code = run_cli(command)
        err = capsys.readouterr().err.strip()
        assert code == ExitCode.BAD_INPUT == 2, err
        assert err.count("\n") == 0 and "Traceback" not in err
        assert err.startswith("error: ") and f"{db} is damaged" in err
        # The recovery named is one that works from either command: move the file aside and
        # judge again; never `jurist score`, which meets the same damaged file.
        assert f"mv {db} {db}.damaged" in err and "`jurist judge`" in err and f"--out {out}" in err
        assert "jurist score" not in err

    # The advice works: with the file moved aside, the judge command judges the items again,
    # every answer from the response cache (no provider call), and the run scores.
    shutil.move(db, db.with_name(RESULTS_DB + ".damaged"))
    server.reset_count()
    assert run_cli(judge) == 0
    assert server.requests == 0
    assert run_cli(["score", "ragbench", str(out)]) == 0
