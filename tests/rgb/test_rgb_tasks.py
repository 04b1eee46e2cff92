"""The RGB tasks through the generic verbs: ``rgb`` (the suite and RGB's prediction files) and
``rgb-rejection`` / ``rgb-error-detection`` (the Rej* and ED* judges on their own).

The confusion counts of the keyword and loopback judges on ``sample:rgb-judgments`` are
worked out by hand in ``test_rgb_calibrate.py``: keywords Rej* (TP, FN, FP, TN) = (8, 2, 2, 22),
ED* (7, 3, 0, 24); loopback ED* (5, 5, 1, 23).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rgb_support import DATA_DIR

import jurist
from jurist.errors import ConfigError
from jurist.tasks import get_task
from jurist.tasks.rgb import RGBOptions
from jurist.tasks.rgb.predictions import score_rgb_predictions
from jurist.verbs import optimize
from support import run_cli

GOLD = "sample:rgb-judgments"


def _kappa(tp: int, fn: int, fp: int, tn: int) -> float:
    n = tp + fn + fp + tn
    p_o = (tp + tn) / n
    p_e = ((tp + fn) * (tp + fp) + (fp + tn) * (fn + tn)) / n**2
    return (p_o - p_e) / (1 - p_e)


def test_the_three_tasks_and_their_verbs():
    assert get_task("rgb").verbs == ["judge", "score"]
    for name in ("rgb-rejection", "rgb-error-detection"):
        assert get_task(name).verbs == ["judge", "score", "calibrate", "optimize", "prompt", "label"]
    with pytest.raises(ConfigError, match="cannot be optimized; its Rej\\*/ED\\* judges can: rgb-error"):
        optimize("rgb", GOLD, GOLD, None, out="unused.json")


def test_options_mirror_the_flags_of_rgb_run_and_score_rgb():
    task = get_task("rgb")
    options = task.options({"noise_rates": ["0", "0.4"], "sets": ["noise"], "closed_book": False})
    assert isinstance(options, RGBOptions)
    assert (options.noise_rates, options.sets, options.closed_book) == ([0.0, 0.4], ["noise"], False)
    for bad in ({"sets": ["speed"]}, {"noise_rates": ["2"]}, {"languages": ["fr"]}, {"recheck": "fuzzy"}):
        with pytest.raises(ConfigError):
            task.options(bad)
    with pytest.raises(ConfigError, match="unknown option"):
        task.options({"data_dir": "x"})


def test_judge_rgb_prints_what_rgb_run_prints(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    common = ["--noise-rates", "0,0.4", "--no-chart", "--no-progress"]
    assert run_cli(["rgb", "run", "--data-dir", str(DATA_DIR), "--out", str(tmp_path / "a"), *common]) == 0
    old = capsys.readouterr().out
    assert run_cli(["judge", "rgb", str(DATA_DIR), "--out", str(tmp_path / "b"), *common]) == 0
    new = capsys.readouterr().out
    # The same lines, and the HTML report the generic verb writes for every task.
    html = f"html report: {tmp_path / 'b' / 'report.html'}\n"
    assert html in new
    assert new.replace(html, "").replace(str(tmp_path / "b"), "OUT") == old.replace(
        str(tmp_path / "a"), "OUT"
    )
    summary = json.loads((tmp_path / "b" / "summary.json").read_text(encoding="utf-8"))
    assert summary["settings"]["noise_rates"] == [0.0, 0.4] and summary["chart"] is None


def test_judge_rgb_in_python_on_one_file(tmp_path: Path):
    run = jurist.judge(
        "rgb",
        DATA_DIR / "zh_refine.json",
        out=tmp_path / "run",
        options={"sets": ["noise", "rejection"], "noise_rates": [0.0], "chart": False},
        progress=False,
    )
    assert list(run["run"]) == ["zh_refine/noise0.0_passage5", "zh_refine/noise1.0_passage5"]
    assert run.summary["files"] == {"zh_refine": str(DATA_DIR / "zh_refine.json")}
    assert run.set_index("set").loc["rejection", "judge"] == "rgb-rejection-keywords"
    suite = run.extra["suite"]
    assert list(run["all_rate"]) == [r.scores["all_rate"] for r in suite.runs]
    assert get_task("rgb").summary_lines(run)[-1] == f"report: {tmp_path / 'run' / 'report.md'}"


def test_score_rgb_options_reach_the_scorer(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    run = jurist.judge("rgb", DATA_DIR, out=tmp_path / "run", options={"chart": False}, progress=False)
    files = sorted(str(r.predictions) for r in run.extra["suite"].runs)[:2]
    assert run_cli(["score", "rgb", *files, "--recheck", "improved", "--language", "zh", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == score_rgb_predictions(files, recheck="improved", language="zh")
    assert printed[0]["labels"] == "recomputed (improved check, zh)"
    whole = jurist.score("rgb", tmp_path / "run")  # a suite's directory: its prediction files
    assert len(whole.summary) == len(run.extra["suite"].runs)
    assert whole.report.startswith("# RGB scores")


@pytest.mark.parametrize(
    ("task", "label", "confusion"),
    [("rgb-rejection", "rejects", (8, 2, 2, 22)), ("rgb-error-detection", "detects_error", (7, 3, 0, 24))],
)
def test_keyword_judges_on_the_gold_sample(task, label, confusion, tmp_path, capsys):
    tp, fn, fp, tn = confusion
    assert run_cli(["judge", task, GOLD, "--out", str(tmp_path / "run"), "--no-progress"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("34 items: 34 scored, 0 failed")
    assert printed[1] == f"  {label}: {tp + fp}/34 ({(tp + fp) / 34:.3f})"
    assert printed[2] == (
        f"  vs gold (34 labelled): accuracy {(tp + tn) / 34:.3f}, kappa {_kappa(tp, fn, fp, tn):.3f}"
    )
    scores = jurist.score(task, tmp_path / "run", gold=GOLD)
    agreement = scores.summary["agreement"]
    assert agreement["confusion"] == {"tp": tp, "fn": fn, "fp": fp, "tn": tn}
    assert agreement["accuracy"] == pytest.approx((tp + tn) / 34)
    assert agreement["kappa"] == pytest.approx(_kappa(tp, fn, fp, tn))
    assert scores.summary[label] == {"rate": pytest.approx((tp + fp) / 34), "count": tp + fp, "nums": 34}
    assert set(scores.items[label]) == {True, False} and "reason" in scores.items
    assert (tmp_path / "run" / "report.md").is_file() and (tmp_path / "run" / "items.csv").is_file()


def test_the_loopback_judge_and_its_prompt(rgb_config, rgb_server, tmp_path):
    run = jurist.judge("rgb-error-detection", GOLD, rgb_config, out=tmp_path / "run", progress=False)
    assert rgb_server.requests == 34
    assert run.summary["agreement"]["confusion"] == {"tp": 5, "fn": 5, "fp": 1, "tn": 23}
    rgb_server.reset_count()
    again = jurist.judge("rgb-error-detection", GOLD, rgb_config, out=tmp_path / "run", progress=False)
    assert rgb_server.requests == 0 and again.summary["agreement"] == run.summary["agreement"]
    (call,) = jurist.prompt("rgb-rejection", GOLD, row=2)
    user = call["messages"][-1]["content"]
    assert "[[ ## question ## ]]" in user and "[[ ## answer ## ]]" in user
    assert "`rejects`" in call["messages"][0]["content"]


def test_rgb_is_a_recipe_of_ordinary_runs_and_its_historical_functions_are_gone():
    import jurist.tasks.rgb

    task = get_task("rgb")
    assert not hasattr(type(task), "judge")
    recipe = task.plan(DATA_DIR / "zh_refine.json", task.options({"sets": ["rejection"]}))
    assert [part.name for part in recipe.parts] == [
        "zh_refine/noise1.0_passage5",
        "zh_refine/noise1.0_passage5.rejection-judge",
    ]
    assert recipe.parts[1].reads == recipe.parts[0].name and recipe.parts[1].task.name.endswith(
        "rejection judge"
    )
    for name in ("run_rgb_suite", "score_rgb_predictions", "run_rgb", "run_suite"):
        assert name not in jurist.__all__ and name not in jurist.tasks.rgb.__all__
        assert not hasattr(jurist.tasks.rgb, name)
