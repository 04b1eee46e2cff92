"""The whole RGB suite: planning from the files there are, outputs, and resuming a sweep."""

from __future__ import annotations

import json
import sqlite3

import pytest
from rgb_support import DATA_DIR, fact_rows, plain_rows, run_suite

from jurist.errors import ConfigError, RunDirectoryError
from jurist.runner import RESULTS_DB
from jurist.tasks import get_task
from jurist.tasks.rgb import find_rgb_files, plan_rgb_suite


def test_suite_on_the_rgb_slices_with_the_offline_responder(tmp_path):
    suite = run_suite(DATA_DIR, tmp_path / "out")
    summary = suite.summary
    assert summary["model"] == "baseline" and summary["responder"] == "rgb-extractive-baseline"
    skipped = {(entry["set"], entry["language"]) for entry in summary["skipped"]}
    assert skipped == {("noise", "en"), ("rejection", "en"), ("integration", "en")}
    assert "no en_refine.json or en.json found" in summary["skipped"][0]["reason"]
    # zh: 5 noise rates, rejection, 3 integration rates, counterfactual + closed book; en: the last two.
    assert len(suite.runs) == 13 and summary["items"] == 13 * 4 and summary["failed"] == 0
    tables = summary["tables"]
    assert list(tables["noise_robustness"]["zh"]) == ["0", "0.2", "0.4", "0.6", "0.8"]
    assert set(tables["negative_rejection"]["zh"]) == {"rej", "rej_star", "judge"}
    assert list(tables["integration"]["zh"]) == ["0", "0.2", "0.4"]
    assert set(tables["counterfactual"]) == {"en", "zh"}
    assert set(tables["counterfactual"]["en"]) >= {"acc", "acc_doc", "ed", "ed_star", "cr", "cr_star"}
    assert json.loads((tmp_path / "out" / "summary.json").read_text()) == summary
    report = suite.report.read_text()
    for heading in ("## Noise robustness", "## Negative rejection", "## Information integration"):
        assert heading in report
    assert "| model | zh 0 | zh 0.2 | zh 0.4 | zh 0.6 | zh 0.8 |" in report
    assert "| model | en Acc | en Acc_doc | en ED | en ED* | en CR |" in report
    assert "## Skipped" in report and "tiered keyword judge" in report
    assert suite.chart is not None and suite.chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    names = sorted(path.name for run in suite.runs for path in [run.predictions])
    assert "prediction_zh_refine_baseline_temp0.0_noise0.2_passage5_correct0.0.json" in names
    assert "prediction_en_fact_baseline_temp0.0_noise0.0_passage0_correct0.0.json" in names


def test_refine_or_plain_and_every_rgb_file_name(tmp_path, rgb_files):
    data = rgb_files(
        tmp_path / "data",
        en=plain_rows(2),
        en_refine=plain_rows(3),
        en_int=[{**row, "positive": [row["positive"][:1], row["positive"][1:]]} for row in plain_rows(2)],
        zh_fact=fact_rows(2),
    )
    (data / "notes.txt").write_text("not RGB")
    files = find_rgb_files(data)
    assert sorted(files) == ["en", "en_int", "en_refine", "zh_fact"]
    plan = plan_rgb_suite(files, noise_rates=[0.0])
    datasets = {(setting.set, setting.dataset) for setting in plan.settings}
    assert ("noise", "en_refine") in datasets and ("rejection", "en_refine") in datasets
    assert ("integration", "en_int") in datasets and ("counterfactual", "zh_fact") in datasets
    assert {key: value for key, value in plan.skipped[0].items() if key != "reason"} == {
        "set": "noise/rejection",
        "language": "en",
        "file": "en.json",
    }
    plain = plan_rgb_suite(files, noise_rates=[0.0], prefer="plain")
    assert {s.dataset for s in plain.settings if s.set == "noise"} == {"en"}
    suite = run_suite(data, tmp_path / "out", sets=["noise", "integration"], noise_rates=[0.0])
    assert {run.setting.dataset for run in suite.runs} == {"en_refine", "en_int"}
    assert "zh" not in suite.summary["tables"]["noise_robustness"]
    reasons = {(entry["set"], entry["language"]): entry["reason"] for entry in suite.summary["skipped"]}
    assert reasons[("noise", "zh")] == "no zh_refine.json or zh.json found"


def test_resumed_sweep_only_does_what_is_missing(rgb_server, rgb_config, tmp_path, rgb_files):
    config = rgb_config.model_copy(update={"cache": False})  # count what the runner asks, not the cache
    data = rgb_files(tmp_path / "data", en=plain_rows(4))
    out = tmp_path / "out"
    first = run_suite(data, out, config, sets=["noise"], noise_rates=[0.0, 0.2])
    assert rgb_server.requests == 8 and len(first.runs) == 2

    rgb_server.reset_count()
    second = run_suite(data, out, config, sets=["noise", "rejection"], noise_rates=[0.0, 0.2, 0.4])
    assert rgb_server.requests == 8  # noise 0.4 and noise 1 are new; 0 and 0.2 are resumed
    assert (
        second.summary["tables"]["noise_robustness"]["en"]["0"]
        == first.summary["tables"]["noise_robustness"]["en"]["0"]
    )

    # A sub-run stopped half-way: two of its items were never recorded.
    db = out / "en" / "noise0.2_passage5" / RESULTS_DB
    with sqlite3.connect(db) as connection:
        connection.execute("DELETE FROM results WHERE id IN ('1', '3')")
    rgb_server.reset_count()
    third = run_suite(data, out, config, sets=["noise", "rejection"], noise_rates=[0.0, 0.2, 0.4])
    assert rgb_server.requests == 2
    assert third.summary["tables"] == second.summary["tables"]

    # A run on the first rows of a file resumes on all of them.
    rgb_server.reset_count()
    run_suite(data, tmp_path / "lim", config, sets=["noise"], noise_rates=[0.0], limit=2)
    run_suite(data, tmp_path / "lim", config, sets=["noise"], noise_rates=[0.0])
    assert rgb_server.requests == 4

    # A run directory of another model under test is refused, not mixed.
    with pytest.raises(RunDirectoryError, match="another judge"):
        run_suite(data, out, None, sets=["noise"], noise_rates=[0.0])


def test_improved_check_adds_figures_next_to_rgbs(tmp_path):
    original = run_suite(DATA_DIR, tmp_path / "a", sets=["noise"], noise_rates=[0.0], chart=False)
    improved = run_suite(
        DATA_DIR,
        tmp_path / "b",
        sets=["noise"],
        noise_rates=[0.0],
        answer_check="improved",
        chart=False,
    )
    assert improved.summary["tables"] == original.summary["tables"]
    assert "tables_improved" in improved.summary and "tables_improved" not in original.summary
    assert "improved" in improved.summary["runs"][0]
    assert "## Improved answer check" in improved.report.read_text()


def test_chart_is_written_by_default_and_left_out_on_request(tmp_path):
    suite = run_suite(DATA_DIR, tmp_path / "out", sets=["noise"], noise_rates=[0.0, 0.4])
    assert suite.chart == tmp_path / "out" / "accuracy_vs_noise.png"
    assert suite.chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert suite.summary["chart"] == str(suite.chart)
    assert "![accuracy against noise rate](accuracy_vs_noise.png)" in suite.report.read_text()
    assert not any(note.startswith("chart") for note in suite.notes)
    plain = run_suite(DATA_DIR, tmp_path / "plain", sets=["noise"], noise_rates=[0.0], chart=False)
    assert plain.chart is None and not (tmp_path / "plain" / "accuracy_vs_noise.png").exists()
    assert "accuracy_vs_noise.png" not in plain.report.read_text()


def test_impossible_counterfactual_mix_is_refused_before_any_call(tmp_path):
    with pytest.raises(ConfigError, match="counterfactual"):
        run_suite(DATA_DIR, tmp_path / "out", counterfactual_noise_rate=0.8, correct_rate=0.6)
    assert not (tmp_path / "out").exists()
    with pytest.raises(ConfigError, match="field 'sets.1'.* should be 'noise', 'rejection'"):
        run_suite(DATA_DIR, tmp_path / "out", sets=["noise", "speed"])
    with pytest.raises(ConfigError, match="unknown RGB set"):
        plan_rgb_suite(find_rgb_files(DATA_DIR), sets=["noise", "speed"])


def test_bundled_sample(tmp_path):
    files = find_rgb_files("sample:rgb")
    assert sorted(files) == ["en_fact", "zh_fact", "zh_int", "zh_refine"]
    suite = run_suite("sample:rgb", tmp_path / "out", sets=["counterfactual"], chart=False)
    assert {run.setting.dataset for run in suite.runs} == {"en_fact", "zh_fact"}


def test_an_answer_run_is_scored_by_its_task_s_score_with_the_file_it_answered(tmp_path, monkeypatch):
    """The judging loop hands an answer run's scoring the RGB file it read; scored later on its
    own, the run reads the file its manifest records and gives the same records."""
    from jurist.tasks.rgb import parts

    loads = []
    original = parts.load_rgb

    def counted(path, **kwargs):
        loads.append(str(path))
        return original(path, **kwargs)

    monkeypatch.setattr(parts, "load_rgb", counted)
    options = {"sets": ["counterfactual"], "languages": ["en"], "limit": 2}
    suite = run_suite(DATA_DIR, tmp_path / "out", **options)
    (run,) = [run for run in suite.runs if run.setting.set == "counterfactual"]
    assert len(loads) == len(suite.runs)  # one read per answer run: its scoring read nothing
    recipe = get_task("rgb").plan(DATA_DIR, get_task("rgb").options(options))
    (part,) = [
        part for part in recipe.parts if part.name == run.run_dir.relative_to(tmp_path / "out").as_posix()
    ]
    loads.clear()
    files = {path.name: path.stat().st_mtime_ns for path in run.run_dir.iterdir()}
    scored = part.task.score(run.run_dir, part.options, write=True)
    assert loads == [str(part.data)]
    assert scored.extra["records"] == [
        {key: value for key, value in record.items() if not key.startswith("judge")} for record in run.records
    ]
    assert {path.name: path.stat().st_mtime_ns for path in run.run_dir.iterdir()} == files  # writes nothing
