"""One RGB setting judged with ``--workers 2``: the model under test and the Rej* judge answer
in other processes (each an ordinary run of the suite's recipe), with the same records,
prediction file and scores as one process."""

from __future__ import annotations

from rgb_support import plain_rows, run_setting, write_rgb

from jurist.tasks.rgb import RGBSetting
from scale_support import recorded_results


def test_two_processes_answer_and_judge_one_setting_as_one_does(rgb_server, rgb_config, tmp_path, capfd):
    rows = plain_rows(8)
    path = write_rgb(tmp_path / "data" / "en.json", rows)
    setting = RGBSetting(
        dataset="en",
        language="en",
        kind="plain",
        path=path,
        noise_rate=1.0,
        judge="rejection",
        set="rejection",
    )
    runs, requests = {}, {}
    for name, workers in (("one", 1), ("two", 2)):
        rgb_server.reset_count()
        config = rgb_config.model_copy(update={"cache_dir": tmp_path / f"cache-{name}"})
        runs[name] = run_setting(setting, tmp_path / name, config, judge_config=config, workers=workers)
        requests[name] = rgb_server.requests
    one, two = runs["one"], runs["two"]
    assert requests["two"] == requests["one"] == 16  # 8 answers, 8 judgments
    assert two.scores == one.scores and two.scores["judge"]["count"] >= 1
    assert [r["judged"] for r in two.records] == [r["judged"] for r in one.records]
    assert two.predictions.read_text(encoding="utf-8") == one.predictions.read_text(encoding="utf-8")
    assert recorded_results(two.run_dir) == recorded_results(one.run_dir)
    assert recorded_results(two.judge_dir) == recorded_results(one.judge_dir)
    assert "judged in this one" not in capfd.readouterr().err
