"""A run directory belongs to one judge: every row carries the judge's fingerprint, and a
directory without its manifest or with another judge's results is refused."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from jurist.errors import ExitCode, RunDirectoryError
from jurist.judges.judge import BaselineJudge
from jurist.runner import MANIFEST, RESULTS_DB, Item, ResultStore, run_items
from support import ragbench_rows, run_cli, write_jsonl


def _judge(version: str = "1") -> BaselineJudge:
    return BaselineJudge(lambda text: {"length": len(text)}, name="length", version=version)


def _items(count: int) -> list[Item]:
    return [Item(id=f"item-{i}", inputs={"text": "x" * i}) for i in range(count)]


def _run(run_dir: Path, judge: BaselineJudge, count: int = 5):
    return run_items(
        _items(count),
        judge,
        run_dir,
        task="length",
        dataset={"path": "memory", "sha256": "abc", "items": count},
        config={},
        progress=False,
    )


def _fingerprints(run_dir: Path) -> list[str | None]:
    with sqlite3.connect(run_dir / RESULTS_DB) as connection:
        return [row[0] for row in connection.execute("SELECT judge_fingerprint FROM results ORDER BY seq")]


def test_every_row_carries_the_judge_fingerprint(tmp_path):
    judge = _judge()
    _run(tmp_path / "run", judge)
    assert _fingerprints(tmp_path / "run") == [judge.fingerprint()] * 5


def test_results_without_their_manifest_are_refused(tmp_path, capsys):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(4))
    out = tmp_path / "run"
    assert run_cli(["judge", "ragbench", str(data), "--out", str(out), "--no-progress"]) == 0
    (out / MANIFEST).unlink()
    capsys.readouterr()

    code = run_cli(["judge", "ragbench", str(data), "--out", str(out), "--no-progress"])

    assert code == ExitCode.BAD_INPUT
    message = capsys.readouterr().err.strip()
    assert message.count("\n") == 0
    assert "no manifest.json" in message and "move" in message and "another --out" in message
    assert not (out / MANIFEST).exists()  # nothing adopted
    with ResultStore(out / RESULTS_DB) as store:
        assert store.counts() == {"ok": 4}


def test_a_directory_of_another_judge_is_refused(tmp_path):
    _run(tmp_path / "run", _judge("1"))
    with pytest.raises(RunDirectoryError, match="another judge fingerprint"):
        _run(tmp_path / "run", _judge("2"))


def test_rows_of_another_judge_are_refused_even_under_a_matching_manifest(tmp_path):
    judge = _judge()
    _run(tmp_path / "run", judge, count=3)
    with sqlite3.connect(tmp_path / "run" / RESULTS_DB) as connection:
        connection.execute("UPDATE results SET judge_fingerprint = 'f00dfeedf00dfeed' WHERE id = 'item-1'")
    before = (tmp_path / "run" / MANIFEST).read_bytes()
    with pytest.raises(RunDirectoryError, match="another judge \\(fingerprint f00dfeedf00dfeed"):
        _run(tmp_path / "run", judge, count=5)
    assert (tmp_path / "run" / MANIFEST).read_bytes() == before


def test_a_results_file_in_an_older_layout_is_refused_naming_the_version_that_wrote_it(tmp_path):
    judge = _judge()
    run_dir = tmp_path / "run"
    _run(run_dir, judge, count=3)
    manifest = json.loads((run_dir / MANIFEST).read_text())
    manifest["versions"]["jurist"] = "0.0.9"
    (run_dir / MANIFEST).write_text(json.dumps(manifest))
    with sqlite3.connect(run_dir / RESULTS_DB) as connection:  # the first layout had no fingerprints
        connection.execute("ALTER TABLE results DROP COLUMN judge_fingerprint")
    before = (run_dir / RESULTS_DB).read_bytes()

    for attempt in (lambda: _run(run_dir, judge, count=5), lambda: ResultStore(run_dir / RESULTS_DB)):
        with pytest.raises(RunDirectoryError) as info:
            attempt()
        message = str(info.value)
        assert "\n" not in message and str(run_dir / RESULTS_DB) in message
        assert "written by jurist 0.0.9" in message and "no column 'judge_fingerprint'" in message
        assert "new --out directory" in message

    assert (run_dir / RESULTS_DB).read_bytes() == before  # nothing converted, nothing judged
    assert json.loads((run_dir / MANIFEST).read_text())["versions"]["jurist"] == "0.0.9"


def test_an_empty_results_file_without_manifest_is_adopted(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    ResultStore(run_dir / RESULTS_DB).close()  # e.g. left by a run killed at its very start
    summary = _run(run_dir, _judge(), count=2)
    assert summary.ok == 2
