"""``jurist optimize rgb-rejection`` / ``rgb-error-detection`` end to end on the loopback server.

The gold is the bundled ``sample:rgb-judgments`` (34 answers, both labels), split into even
(train, 17) and odd (dev, 17) lines. The loopback judges (``rgb_support.rgb_reply``) reject
when the answer has "insufficient", "信息不足" or "cannot", and detect an error when it has
"error" or "错误"; on the dev lines that is wrong for 5 rejection labels (en_fact-3-b,
zh_fact-3-b, zh_refine-133-b, zh_refine-282-b, zh_int-20-b) and for 4 error labels
(zh_fact-1-b, zh_fact-2-b, zh_fact-3-b, zh_int-98-b).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rgb_support import fact_rows, plain_rows

from jurist.datasets.samples import sample_path
from jurist.errors import ArtifactError, ConfigError, InputError
from jurist.judges.config import JudgeConfig
from jurist.optimization import evaluate_program, load_program, read_artifact
from jurist.tasks.calibration_rows import JudgeSpec
from jurist.tasks.rgb import make_rgb_judge, rgb_judge_configs
from jurist.verbs import calibrate, optimize
from support import optimized, run_cli


@pytest.fixture
def gold_split(tmp_path: Path) -> dict[str, Path]:
    lines = sample_path("rgb-judgments").read_text(encoding="utf-8").splitlines(keepends=True)
    train, dev = tmp_path / "train.jsonl", tmp_path / "dev.jsonl"
    train.write_text("".join(lines[0::2]), encoding="utf-8")
    dev.write_text("".join(lines[1::2]), encoding="utf-8")
    return {"train": train, "dev": dev}


def _compile(task: str, config: JudgeConfig, gold: dict[str, Path], out: Path):
    return optimize(task, gold["train"], gold["dev"], config, out=out, optimizer="bootstrap")


@pytest.mark.parametrize(
    ("task", "predictor_fields", "dev_score"),
    [
        ("rgb-rejection", {"question", "answer", "reason", "rejects"}, 12 / 17),
        ("rgb-error-detection", {"answer", "reason", "detects_error"}, 13 / 17),
    ],
)
def test_bootstrap_artifact_loads_differs_and_rescores(
    task, predictor_fields, dev_score, rgb_config, rgb_server, gold_split, tmp_path
):
    out = tmp_path / f"{task}.json"
    result = _compile(task, rgb_config, gold_split, out)
    artifact = read_artifact(out)
    assert artifact.task == task and artifact.options == {}
    assert artifact.data["train"].examples == artifact.data["dev"].examples == 17
    # Uncompiled: no demo; compiled: bootstrapped demos, each a right judgment of a train answer.
    assert optimized(task).program().dump_state()["judge"]["demos"] == []
    demos = artifact.program["judge"]["demos"]
    assert 1 <= len(demos) <= 4 and all(set(demo) - {"augmented"} == predictor_fields for demo in demos)
    assert artifact.program["judge"]["lm"] is None and "loopback-test-key" not in out.read_text()
    for name in ("dev_before", "dev_after"):
        score = artifact.scores[name]
        assert (score.metric, score.scored, score.failed) == (optimized(task).task.optimized_metric, 17, 0)
        assert score.score == pytest.approx(dev_score)
    assert artifact.compile["program_calls"] > 0 and artifact.compile["failed_calls"] == 0

    adapter = optimized(task)
    program, _ = load_program(out, task=task, program=adapter.program())
    assert program.dump_state() == result.program.dump_state()
    again = evaluate_program(
        adapter.task, program, rgb_config, adapter.examples(gold_split["dev"]), options=adapter.values
    )
    assert again.score.score == pytest.approx(artifact.scores["dev_after"].score)


def test_optimize_cli_and_both_artifacts_through_rgb_run(
    rgb_config, rgb_server, rgb_files, gold_split, tmp_path, capsys
):
    config_file = tmp_path / "judge.yaml"
    config_file.write_text(json.dumps(rgb_config.model_dump(mode="json")), encoding="utf-8")
    rejection = _compile("rgb-rejection", rgb_config, gold_split, tmp_path / "rej.json")
    detection = tmp_path / "ed.json"
    args = ["optimize", "rgb-error-detection", "--train", str(gold_split["train"])]
    args += ["--dev", str(gold_split["dev"]), "--config", str(config_file), "--out", str(detection)]
    assert run_cli(args) == 0
    printed = capsys.readouterr().out
    assert "rgb-error-detection · bootstrap · openai/loopback-rgb" in printed
    assert "error_detection_accuracy on dev:  before 0.765 (17/17 scored)  after 0.765" in printed

    # `jurist rgb run --judge-program A --judge-program B`: the offline responder answers, and
    # each compiled judge (with the config it was compiled with) judges its set.
    data = rgb_files(tmp_path / "data", en=plain_rows(4), en_fact=fact_rows(3))
    rgb_server.reset_count()
    args = ["rgb", "run", "--data-dir", str(data), "--out", str(tmp_path / "out"), "--languages", "en"]
    args += ["--sets", "rejection,counterfactual", "--no-chart", "--no-progress"]
    args += ["--judge-program", str(rejection.path), "--judge-program", str(detection)]
    assert run_cli(args) == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert summary["judge_programs"] == {
        "rgb-rejection": str(rejection.path),
        "rgb-error-detection": str(detection),
    }
    assert summary["judge_model"] == "Rej*: compiled rej.json; ED*: compiled ed.json"
    judged = {run["setting"]["set"]: run.get("judge") for run in summary["runs"]}
    assert judged["rejection"]["judge"] == judged["counterfactual"]["judge"] == "openai/loopback-rgb"
    assert (judged["rejection"]["nums"], judged["counterfactual"]["nums"]) == (4, 3)
    # 4 rejection + 3 error-detection judgments; the demos of each artifact are in its prompts.
    assert rgb_server.requests == 7
    rej_demo = rejection.artifact.program["judge"]["demos"][0]["answer"]
    ed_demo = read_artifact(detection).program["judge"]["demos"][0]["answer"]
    for body in rgb_server.bodies:
        prompt = json.dumps(body["messages"], ensure_ascii=False)
        assert (rej_demo if "`rejects`" in body["messages"][0]["content"] else ed_demo) in prompt


def test_a_compiled_judge_runs_in_calibrate(rgb_config, rgb_server, gold_split, tmp_path):
    result = _compile("rgb-rejection", rgb_config, gold_split, tmp_path / "rej.json")
    compiled = JudgeConfig(program=result.path)  # the baseline config: the artifact's own config runs
    board = calibrate(
        "rgb-rejection", [gold_split["dev"]], [JudgeSpec("compiled", compiled)], out=tmp_path / "cal"
    )
    row = board.leaderboard.iloc[0]
    assert (row["judge"], row["model"], row["items"], row["failed"]) == ("compiled", rgb_config.model, 17, 0)
    assert row["accuracy"] == pytest.approx(12 / 17)


def test_artifacts_of_another_task_are_refused(rgb_config, rgb_server, gold_split, tmp_path, capsys):
    rejection = _compile("rgb-rejection", rgb_config, gold_split, tmp_path / "rej.json").path
    with pytest.raises(
        ArtifactError, match="compiled for the task 'rgb-rejection', not 'rgb-error-detection'"
    ):
        make_rgb_judge("error_detection", rgb_config.model_copy(update={"program": rejection}))
    with pytest.raises(ArtifactError, match="not 'rgb-error-detection'"):
        calibrate(
            "rgb-error-detection",
            ["sample:rgb-judgments"],
            [JudgeSpec("wrong", JudgeConfig(program=rejection))],
            out=tmp_path / "cal",
        )
    copy = tmp_path / "rej-copy.json"
    copy.write_text(rejection.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(ConfigError, match="two compiled programs for the rgb-rejection judge"):
        rgb_judge_configs(None, [rejection, copy])
    with pytest.raises(InputError, match="compiled program not found"):
        make_rgb_judge("rejection", JudgeConfig(program=tmp_path / "missing.json"))

    # An artifact of another task (here: a pairwise one), or a plain DSPy save, is refused
    # before any answer or judgment is asked for.
    data = json.loads(rejection.read_text(encoding="utf-8"))
    other = tmp_path / "pairwise.json"
    other.write_text(json.dumps({**data, "task": "pairwise"}), encoding="utf-8")
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(data["program"]), encoding="utf-8")
    rgb_server.reset_count()
    for bad, message in (
        (other, "compiled for the task 'pairwise', not an RGB judge (rgb-rejection, rgb-error-detection)"),
        (plain, "not a jurist compiled-program artifact"),
    ):
        out = tmp_path / f"out-{bad.stem}"
        args = ["rgb", "run", "--data-dir", "sample:rgb", "--out", str(out), "--judge-program", str(bad)]
        assert run_cli(args + ["--no-progress"]) == 2
        assert message in capsys.readouterr().err
        assert not out.exists()
    assert rgb_server.requests == 0


def test_train_and_dev_must_not_share_answers(rgb_config, rgb_server, tmp_path):
    with pytest.raises(InputError, match="34 dev example\\(s\\) also occur in the training data"):
        optimize(
            "rgb-rejection", "sample:rgb-judgments", "sample:rgb-judgments", rgb_config, out=tmp_path / "x"
        )
    assert rgb_server.requests == 0


def test_the_example_scores_are_judgment_score(tmp_path):
    rejection, detection = optimized("rgb-rejection"), optimized("rgb-error-detection")
    examples = rejection.examples("sample:rgb-judgments")
    assert len(examples) == len(detection.examples("sample:rgb-judgments")) == 34
    first = examples[0]  # en_fact-0-a: reports factual errors, does not reject
    assert first.inputs().toDict() == {"question": "Super Bowl 2021 location", "answer": first.answer}
    assert detection.examples("sample:rgb-judgments")[0].inputs().toDict() == {"answer": first.answer}
    wrong = rejection.score(first, {"rejects": True, "reason": "It declines."})
    assert (wrong.score, wrong.details) == (0.0, {"correct": 0.0})
    assert wrong.feedback == (
        "wrong: judged that the answer rejects, but it does not. The judge's reason: It declines."
    )
    right = detection.score(detection.examples("sample:rgb-judgments")[0], {"detects_error": True})
    assert (right.score, right.feedback) == (1.0, "right: the answer reports factual errors in the documents")
    with pytest.raises(ValueError, match="rejects must be true or false"):
        rejection.postprocess(type("Prediction", (), {"rejects": "maybe"})(), first.inputs().toDict())
    only_rejects = tmp_path / "gold.jsonl"
    only_rejects.write_text(json.dumps({"id": 1, "question": "Q?", "answer": "A.", "rejects": True}) + "\n")
    with pytest.raises(InputError, match="no row carries a gold 'detects_error' label"):
        detection.examples(only_rejects)


def test_each_program_goes_to_the_judge_it_was_compiled_for(rgb_config, rgb_server, gold_split, tmp_path):
    rejection = _compile("rgb-rejection", rgb_config, gold_split, tmp_path / "rej.json").path
    detection = _compile("rgb-error-detection", rgb_config, gold_split, tmp_path / "ed.json").path
    # `program:` of the judge config counts as one more program; the order does not matter.
    configs = rgb_judge_configs(JudgeConfig(program=detection), [rejection])
    assert configs["rejection"] is not None and configs["rejection"].program == rejection
    assert configs["error_detection"] is not None and configs["error_detection"].program == detection
    # A judge without a program runs as configured: here the LM, uncompiled.
    only = rgb_judge_configs(rgb_config.model_copy(update={"program": rejection}))
    assert only["rejection"] == rgb_config.model_copy(update={"program": rejection})
    assert only["error_detection"] == rgb_config
    assert rgb_judge_configs(None) == {"rejection": None, "error_detection": None}
