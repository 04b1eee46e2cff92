"""Finding runs under a folder, their headline figures, and refusing ids that lead outside it."""

from __future__ import annotations

import os

import pytest
from view_support import label_rows, write_run

from jurist.errors import RunDirectoryError
from jurist.view.runs import find_runs, headline_metrics, history_figure, resolve_run


def test_runs_are_found_at_any_depth_newest_first_and_hidden_folders_are_skipped(tmp_path):
    rows = label_rows(["pos", "neg"], ["pos", "pos"])
    write_run(tmp_path / "a", rows, created="2026-01-01T00:00:00+00:00")
    write_run(tmp_path / "deep" / "er" / "b", rows, created="2026-01-03T00:00:00+00:00")
    write_run(tmp_path / ".jurist_cache" / "c", rows)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "manifest.json").write_text('{"name": "not a run"}')
    found = find_runs(tmp_path)
    assert [record.id for record in found] == ["deep/er/b", "a"]
    record = found[1]
    assert (record.task, record.judge, record.model, record.items, record.ok, record.failed) == (
        "toy",
        "judge-a",
        "openai/a",
        2,
        2,
        0,
    )
    assert record.dataset == "data.jsonl"


def test_headlines_are_the_rates_not_counts_bounds_or_bookkeeping():
    summary = {
        "items": 10,
        "ok": 9,
        "kind": "label",
        "verdicts": {"pos": 5, "neg": 4},
        "usage": {"cost": 0.12, "calls": 9},
        "latency_s": {"mean": 0.4},
        "agreement": {"accuracy": 0.8, "accuracy_low": 0.6, "accuracy_high": 0.9, "kappa": 0.55},
        "trace": {"adherence": {"mean": 0.7, "n": 9}},
        "flag": True,
        "nan": float("nan"),
    }
    assert headline_metrics(summary) == {
        "agreement.accuracy": 0.8,
        "agreement.kappa": 0.55,
        "trace.adherence.mean": 0.7,
    }


def test_ids_resolving_outside_the_folder_are_refused(tmp_path):
    root = tmp_path / "runs"
    write_run(root / "a", label_rows(["pos"], ["pos"]))
    write_run(tmp_path / "outside", label_rows(["pos"], ["pos"]))
    assert resolve_run(root, "a") == (root / "a").resolve()
    assert resolve_run(root, "a/") == (root / "a").resolve()
    for bad in ["../outside", "a/../../outside", str(tmp_path / "outside"), "", "..", "a/missing", "a\x00"]:
        with pytest.raises(RunDirectoryError):
            resolve_run(root, bad)
    os.symlink(tmp_path / "outside", root / "link")
    with pytest.raises(RunDirectoryError):
        resolve_run(root, "link")
    assert [record.id for record in find_runs(root)] == ["a"]  # links are not followed


def test_history_figure_has_one_line_per_judge_over_time(tmp_path):
    rows = label_rows(["pos"], ["pos"])
    for name, judge, day, accuracy in [
        ("a1", "judge-a", 1, 0.7),
        ("a2", "judge-a", 4, 0.8),
        ("b1", "judge-b", 2, 0.6),
    ]:
        write_run(
            tmp_path / name,
            rows,
            judge=judge,
            created=f"2026-01-0{day}T00:00:00+00:00",
            summary={"agreement": {"accuracy": accuracy}},
        )
    figure = history_figure(find_runs(tmp_path), "agreement.accuracy")
    assert figure.kind == "lines"
    series = {entry["name"]: (entry["x"], entry["y"]) for entry in figure.data["series"]}
    assert series == {"judge-a": ([0.0, 3.0], [0.7, 0.8]), "judge-b": ([1.0], [0.6])}
    assert figure.data["xlabel"].startswith("days since 2026-01-01")
