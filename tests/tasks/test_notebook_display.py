"""Python that fits a notebook: results have a short ``repr`` with the headline and an HTML
display for Jupyter, and no interval bound carries float noise."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

import jurist
from jurist.metrics.gold_agreement import bootstrap_ci, wilson_interval, without_noise
from jurist.optimization import OptimizeResult
from jurist.optimization._artifact import Artifact, SplitScore

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TASK = EXAMPLES / "support-answers" / "task.yaml"
DATA = EXAMPLES / "support-answers" / "answers.csv"
HEADLINE = "QWK 0.893 [0.800, 0.946] · MAE 0.438 [0.188, 0.688]"


def test_judge_score_and_calibrate_results_show_their_headline(tmp_path):
    judged = jurist.judge(TASK, DATA, out=tmp_path / "run", progress=False)
    assert repr(judged.scores) == f"<Scores support-answers: 16 items, 16 scored, 0 failed · {HEADLINE}>"
    html = judged._repr_html_()
    assert html.startswith("<table><tr><th") and "<td>QWK</td>" in html and "0.893 [0.800, 0.946]" in html
    scores = jurist.score(TASK, tmp_path / "run", gold=DATA)
    assert repr(scores) == repr(judged.scores) and "MAE" in scores._repr_html_()
    calibration = jurist.calibrate(TASK, [DATA], ["baseline"], out=tmp_path / "cal", progress=False)
    assert repr(calibration) == "<Calibration support-answers: 1 row(s) · baseline QWK 0.893 [0.800, 0.946]>"
    table = calibration._repr_html_()
    assert "<th>exact agreement</th><th>QWK</th>" in table and "<td>0.562 [0.312, 0.812]</td>" in table


def test_optimize_result_shows_the_metric_before_and_after():
    scores = {
        "dev_before": SplitScore(metric="accuracy", score=0.5, examples=4, scored=4, failed=0),
        "dev_after": SplitScore(metric="accuracy", score=0.75, examples=4, scored=4, failed=0),
    }
    artifact = Artifact.model_construct(task="support-answers", scores=scores)
    result = OptimizeResult(path=Path("judge.json"), artifact=artifact, program=None, evaluations={})
    assert repr(result) == "<OptimizeResult support-answers: dev accuracy 0.500 → 0.750 · judge.json>"
    assert "<td>dev</td><td>accuracy</td><td>0.500</td><td>0.750</td>" in result._repr_html_()


def test_interval_bounds_carry_no_float_noise():
    assert without_noise(-2e-17) == 0.0 and math.copysign(1, without_noise(-0.0)) == 1
    assert without_noise(1.0000000000000002) == 1.0
    low, high = wilson_interval(0, 5)
    assert low == 0.0 and math.copysign(1, low) == 1
    # A statistic that is 0 on every resample up to rounding: its bounds are exactly 0.
    cells = np.ones((6, 1))
    assert bootstrap_ci(cells, lambda c: c[..., 0] * 0.1 * 3 - c[..., 0] * 0.3, n_resamples=50) == (0.0, 0.0)
