"""``optimize`` end to end against the loopback server: bootstrap, MIPROv2 and GEPA, two tasks.

Each run yields an artifact that loads, differs from the uncompiled program (demos or
instructions) and scores the same on reload; ``jurist judge TASK --program`` runs it.
"""

from __future__ import annotations

import json

import pytest
from optimize_helpers import HINT, pairs_rows, read_json

from jurist.cli import main
from jurist.datasets.io import sha256_file
from jurist.optimization import (
    OptimizerSettings,
    evaluate_program,
    load_program,
    optimize,
    read_artifact,
)
from jurist.runner import RESULTS_DB, ResultStore
from jurist.tasks import get_task
from support import ragbench_rows, write_jsonl

SMALL_MIPRO = OptimizerSettings(auto=None, num_candidates=3, num_trials=4, max_demos=2)
SMALL_GEPA = OptimizerSettings(auto=None, max_metric_calls=40, reflection_minibatch_size=3)


def _reloaded_score(task: str, path, config, dev, options=None):
    found = get_task(task)
    validated = found.options(options)
    fresh, _ = found.optimization_program(validated)
    program, artifact = load_program(path, task=task, program=fresh, options=found.program_options(validated))
    examples = found.gold_examples(dev, validated)
    evaluation = evaluate_program(found, program, config, examples, options=validated)
    return program, artifact, evaluation.score.score


def test_bootstrap_ragbench_artifact_loads_differs_and_rescores(
    learning_config, learning_server, ragbench_files, tmp_path
):
    out = tmp_path / "ragbench-judge.json"
    result = optimize(
        get_task("ragbench"), ragbench_files["train"], ragbench_files["dev"], learning_config, out=out
    )

    data = read_json(out)
    assert data["format"] == "jurist.compiled-program" and data["format_version"] == 1
    assert data["task"] == "ragbench" and data["optimizer"]["name"] == "bootstrap"
    assert data["data"]["train"]["sha256"] == sha256_file(ragbench_files["train"])
    assert data["data"]["dev"]["sha256"] == sha256_file(ragbench_files["dev"])
    assert data["data"]["test"] is None
    assert data["versions"]["dspy"].startswith("3.4")
    assert data["judge_config"]["model"] == learning_config.model
    # The uncompiled judge has no demos; the compiled one has bootstrapped demos.
    assert data["program"]["label"]["demos"] and data["program"]["label"]["lm"] is None
    before, after = data["scores"]["dev_before"], data["scores"]["dev_after"]
    assert before["examples"] == after["examples"] == 6 and after["failed"] == 0
    assert data["compile"]["program_calls"] > 0 and data["compile"]["failed_calls"] == 0
    # No secret in the file: keys stay in the environment.
    assert "loopback-test-key" not in out.read_text()

    program, artifact, score = _reloaded_score("ragbench", out, learning_config, ragbench_files["dev"])
    assert score == pytest.approx(artifact.scores["dev_after"].score)
    assert program.dump_state() == result.program.dump_state()

    # `jurist judge ragbench --program ARTIFACT` runs the compiled judge, demos in its prompts.
    fresh = write_jsonl(tmp_path / "fresh.jsonl", ragbench_rows(20)[17:])
    learning_server.reset_count()
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "judge",
                "ragbench",
                str(fresh),
                "--out",
                str(tmp_path / "run"),
                "--program",
                str(out),
                "--no-progress",
            ]
        )
    assert exit_info.value.code == 0 and learning_server.requests == 3
    demo_question = data["program"]["label"]["demos"][0]["question"]
    assert all(demo_question in json.dumps(body["messages"]) for body in learning_server.bodies)
    # The manifest records the config the artifact runs with, not the offline default.
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["config"]["model"] == data["judge_config"]["model"] != "baseline"


def test_bootstrap_pairwise_through_the_cli_and_judge_with_the_artifact(
    learning_config, learning_server, pairs_files, tmp_path, capsys
):
    config_file = tmp_path / "judge.yaml"
    config_file.write_text(json.dumps(learning_config.model_dump(mode="json")))
    out = tmp_path / "pairwise-judge.json"
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "optimize",
                "pairwise",
                "--train",
                str(pairs_files["train"]),
                "--dev",
                str(pairs_files["dev"]),
                "--test",
                str(pairs_files["test"]),
                "--config",
                str(config_file),
                "--optimizer",
                "bootstrap",
                "--out",
                str(out),
            ]
        )
    assert exit_info.value.code == 0
    # stdout is the summary alone, headline first; the optimizer's own progress is on stderr.
    printed = capsys.readouterr()
    assert printed.out.splitlines()[0] == f"pairwise · bootstrap · {learning_config.model}"
    assert printed.out.splitlines()[-1] == f"artifact: {out}"
    assert "Bootstrapped" not in printed.out and "Bootstrapped" in printed.err
    artifact = read_artifact(out)
    assert artifact.options == {"num_options": 2}
    assert len(artifact.program["choose"]["demos"]) == 4
    assert set(artifact.scores) == {"dev_before", "dev_after", "test_before", "test_after"}
    assert artifact.data["test"] is not None and artifact.data["test"].examples == 8

    _, _, score = _reloaded_score("pairwise", out, learning_config, pairs_files["dev"], {"num_options": 2})
    assert score == pytest.approx(artifact.scores["dev_after"].score)

    # `jurist judge pairwise --program ARTIFACT` with no config runs it with its own config.
    fresh = write_jsonl(tmp_path / "fresh.jsonl", pairs_rows(3, start=300))
    learning_server.reset_count()
    with pytest.raises(SystemExit) as exit_info:
        main(["judge", "pairwise", str(fresh), "--out", str(tmp_path / "runs"), "--program", str(out)])
    assert exit_info.value.code == 0
    assert learning_server.requests == 6
    # The demos reach the prompt: a demo's response text appears in the requests.
    prompts = [json.dumps(body["messages"]) for body in learning_server.bodies]
    demo_text = artifact.program["choose"]["demos"][0]["response_1"]
    assert all(demo_text in prompt for prompt in prompts)
    run_dir = tmp_path / "runs"  # --out is the run directory, as for every task
    with ResultStore(run_dir / RESULTS_DB) as store:
        assert store.counts() == {"ok": 6}


def test_mipro_finds_the_better_instruction(learning_config, pairs_files, tmp_path):
    pytest.importorskip("optuna", reason="MIPROv2 needs optuna (in the test extra)")
    out = tmp_path / "mipro.json"
    result = optimize(
        get_task("pairwise"),
        pairs_files["train"],
        pairs_files["dev"],
        learning_config,
        out=out,
        optimizer="mipro",
        settings=SMALL_MIPRO,
    )
    artifact = result.artifact
    assert artifact.program["choose"]["signature"]["instructions"] == HINT
    assert artifact.scores["dev_before"].score == pytest.approx(0.5)
    assert artifact.scores["dev_after"].score == pytest.approx(1.0)
    # Candidates were selected on a part of train, never on dev.
    assert artifact.compile["train_examples"] + artifact.compile["val_examples"] == 24
    assert artifact.prompt_config is not None and artifact.prompt_config["temperature"] == 1.0
    _, _, score = _reloaded_score("pairwise", out, learning_config, pairs_files["dev"], {"num_options": 2})
    assert score == pytest.approx(1.0)


def test_gepa_reflects_on_the_metric_feedback(learning_config, learning_server, pairs_files, tmp_path):
    out = tmp_path / "gepa.json"
    result = optimize(
        get_task("pairwise"),
        pairs_files["train"],
        pairs_files["dev"],
        learning_config,
        out=out,
        optimizer="gepa",
        settings=SMALL_GEPA,
    )
    assert result.artifact.program["choose"]["signature"]["instructions"] == HINT
    assert result.artifact.scores["dev_after"].score == pytest.approx(1.0)
    reflections = [
        json.dumps(body["messages"])
        for body in learning_server.bodies
        if "examples_with_feedback" in json.dumps(body)
    ]
    assert reflections, "GEPA never asked the reflection LM"
    # The metric's feedback text reached the reflection prompt.
    assert any("according to the gold label Response" in text for text in reflections)
    _, _, score = _reloaded_score("pairwise", out, learning_config, pairs_files["dev"], {"num_options": 2})
    assert score == pytest.approx(1.0)


def test_gepa_on_ragbench_feeds_back_missed_sentence_keys(
    learning_config, learning_server, ragbench_files, tmp_path
):
    result = optimize(
        get_task("ragbench"),
        ragbench_files["train"],
        ragbench_files["dev"],
        learning_config,
        out=tmp_path / "gepa-rb.json",
        optimizer="gepa",
        settings=OptimizerSettings(auto=None, max_metric_calls=12, reflection_minibatch_size=2),
    )
    reflections = [
        json.dumps(body) for body in learning_server.bodies if "examples_with_feedback" in json.dumps(body)
    ]
    assert reflections and any("missed gold keys" in text for text in reflections)
    assert result.artifact.scores["dev_after"].failed == 0
