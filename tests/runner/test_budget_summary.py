"""Tokens and cost per judge in ``summary.json`` and in what ``jurist judge`` prints: a single
judge, and a jury whose jurors are one priced and one unpriced model on loopback servers."""

from __future__ import annotations

import json
import textwrap

import pytest
import yaml

from jurist.report.usage import usage_lines, usage_text
from jurist.testing import OpenAICompatibleServer
from support import (
    CLAIMS_TASK,
    loopback_config,
    ragbench_answer,
    ragbench_rows,
    run_cli,
    true_verdict,
    write_jsonl,
)


def test_a_single_run_prints_its_tokens_and_cost(tmp_path, capsys):
    with OpenAICompatibleServer(ragbench_answer) as server:
        config = loopback_config(server.base_url, tmp_path / "cache", model="openai/gpt-4o-mini")
        config_file = tmp_path / "judge.yaml"
        config_file.write_text(yaml.safe_dump(config.model_dump(mode="json")), encoding="utf-8")
        data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(4))
        args = ["judge", "ragbench", str(data), "--out", str(tmp_path / "run"), "-c", str(config_file)]
        assert run_cli([*args, "--no-progress"]) == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    usage = summary["usage"]
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0 and usage["cost"] > 0
    printed = capsys.readouterr().out
    assert f"usage: {usage_text(usage)} (4 provider calls, 0 cache hits)" in printed


def test_a_jury_reports_each_jurors_tokens_and_cost_and_the_total(tmp_path, capsys):
    task = tmp_path / "claims.yaml"
    task.write_text(textwrap.dedent(CLAIMS_TASK), encoding="utf-8")
    rows = [{"id": f"c{i}", "claim": f"Claim number {i}.", "gold": True} for i in range(6)]
    data = write_jsonl(tmp_path / "claims.jsonl", rows)
    with OpenAICompatibleServer(true_verdict) as priced, OpenAICompatibleServer(true_verdict) as unpriced:
        jurors = [("mini", "openai/gpt-4o-mini", priced), ("local", "openai/loopback-judge", unpriced)]
        lines = [
            "    - {"
            + f"name: {name}, model: {model}, api_base: '{server.base_url}', "
            + f"api_key_env: JURIST_TEST_API_KEY, cache_dir: '{tmp_path / 'cache'}', retry_max_wait: 0.2"
            + "}"
            for name, model, server in jurors
        ]
        jury = tmp_path / "panel.yaml"
        jury.write_text(
            "jury:\n  aggregate: majority\n  jurors:\n" + "\n".join(lines) + "\n", encoding="utf-8"
        )
        out = tmp_path / "run"
        assert (
            run_cli(
                ["judge", str(task), str(data), "--config", str(jury), "--out", str(out), "--no-progress"]
            )
            == 0
        )
    summary = json.loads((out / "summary.json").read_text())
    members = {member["name"]: member["usage"] for member in summary["jury"]["members"]}
    assert members["mini"]["calls"] == members["local"]["calls"] == 6
    assert members["mini"]["cost"] > 0 and members["local"]["cost"] is None
    total = summary["usage"]
    assert total["prompt_tokens"] == members["mini"]["prompt_tokens"] + members["local"]["prompt_tokens"]
    assert total["cost"] == pytest.approx(members["mini"]["cost"])
    printed = capsys.readouterr().out
    assert f"  juror mini (openai/gpt-4o-mini): {usage_text(members['mini'])}" in printed
    assert (
        "  juror local (openai/loopback-judge): " in printed
        and "cost unknown (no price for the model)" in printed
    )


def test_usage_lines_of_a_cascade_and_of_a_cached_run():
    summary = {
        "usage": {"calls": 3, "cache_hits": 0, "prompt_tokens": 300, "completion_tokens": 30, "cost": 0.5},
        "cascade": {
            "stages": [
                {
                    "name": "small",
                    "model": "m1",
                    "usage": {"prompt_tokens": 200, "completion_tokens": 20, "cost": 0.1},
                },
                {
                    "name": "large",
                    "model": "m2",
                    "usage": {"prompt_tokens": 100, "completion_tokens": 10, "cost": 0.4},
                },
            ]
        },
    }
    assert usage_lines(summary) == [
        "usage: 300 prompt + 30 completion tokens, $0.5000 (3 provider calls, 0 cache hits)",
        "  stage small (m1): 200 prompt + 20 completion tokens, $0.1000",
        "  stage large (m2): 100 prompt + 10 completion tokens, $0.4000",
    ]
    cached = {"calls": 0, "cache_hits": 5, "prompt_tokens": 0, "completion_tokens": 0, "cost": None}
    assert usage_text(cached) == "0 prompt + 0 completion tokens, $0"
