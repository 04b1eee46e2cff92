"""The LLM path through a real HTTP server on 127.0.0.1: the model under test with RGB's
prompt, and the Rej* / ED* DSPy judges, run by the core runner with cache and metering."""

from __future__ import annotations

import asyncio
import json

from rgb_support import FACTUAL_ERRORS_EN, fact_rows, plain_rows, rgb_reply, run_setting, write_rgb

from jurist.datasets.rgb.loader import RGBRow, load_rgb_prompts, prepare_instance
from jurist.judges.judge import LLMJudge
from jurist.programs.rgb.program import RGBResponder, responder_postprocess
from jurist.tasks.rgb import RGBSetting
from jurist.testing import Fault, OpenAICompatibleServer


def _setting(path, *, language="en", kind="plain", noise_rate=0.0, **extra):
    return RGBSetting(
        dataset=path.name.split(".")[0],
        language=language,
        kind=kind,
        path=path,
        noise_rate=noise_rate,
        **extra,
    )


def test_model_under_test_gets_rgbs_exact_messages(rgb_server, rgb_config, tmp_path):
    rows = plain_rows(4)
    path = write_rgb(tmp_path / "data" / "en.json", rows)
    run = run_setting(_setting(path, noise_rate=0.4), tmp_path / "out", rgb_config)
    assert run.scores["ok"] == 4 and rgb_server.requests == 4
    prompt = load_rgb_prompts()["en"]
    sent = {json.loads(json.dumps(body))["messages"][1]["content"]: body for body in rgb_server.bodies}
    for record in rows:
        docs = prepare_instance(RGBRow.model_validate(record), "plain", 0.4, 5).docs
        body = sent[prompt.user_message(record["query"], docs)]
        assert body["messages"][0] == {"role": "system", "content": prompt.system}
        assert len(body["messages"]) == 2
    # The loopback model copies the first passage: a positive holds the answer, a noise one not.
    for record in run.records:
        expected = [1] if "Winner" in record["docs"][0] else [0]
        assert record["label"] == expected and record["raw_prediction"] == record["docs"][0].strip()
    assert run.scores["tt"] == sum(record["label"] == [1] for record in run.records)
    # RGB's prediction file, one line per answered item, in RGB's field names.
    lines = [json.loads(line) for line in run.predictions.read_text(encoding="utf-8").splitlines()]
    assert [line["id"] for line in lines] == [0, 1, 2, 3]
    assert set(lines[0]) == {"id", "query", "ans", "label", "prediction", "docs", "noise_rate", "factlabel"}
    manifest = json.loads((run.run_dir / "manifest.json").read_text())
    assert manifest["usage"]["calls"] == 4 and manifest["dataset"]["noise_rate"] == 0.4

    rgb_server.reset_count()
    again = run_setting(_setting(path, noise_rate=0.4), tmp_path / "out", rgb_config)
    assert rgb_server.requests == 0 and again.scores == run.scores


def test_chinese_prompt_and_space_removal(rgb_server, rgb_config, tmp_path):
    rows = [
        {"id": 1, "query": "谁赢了？", "answer": ["12人"], "positive": ["死亡 12 人。"], "negative": []},
    ]
    path = write_rgb(tmp_path / "data" / "zh.json", rows)
    run = run_setting(_setting(path, language="zh", noise_rate=0.0), tmp_path / "out", rgb_config)
    body = rgb_server.bodies[0]
    assert body["messages"][0]["content"] == load_rgb_prompts()["zh"].system
    assert body["messages"][1]["content"].startswith("文档：\n")
    record = run.records[0]
    assert record["raw_prediction"] == "死亡 12 人。" and record["prediction"] == "死亡12人。"
    assert record["label"] == [1]


def test_closed_book_sends_no_system_message(rgb_server, rgb_config, tmp_path):
    path = write_rgb(tmp_path / "data" / "en_fact.json", fact_rows(2))
    run = run_setting(
        _setting(path, kind="fact", passage_num=0, set="closed_book"),
        tmp_path / "out",
        rgb_config,
    )
    closed = [body for body in rgb_server.bodies if len(body["messages"]) == 1]  # no system message
    assert len(closed) == 2 and all(body["messages"][0]["role"] == "user" for body in closed)
    assert closed[0]["messages"][0]["content"].startswith("Document:\n \n\nQuestion:")
    assert run.scores["all_rate"] == 0.0 and run.scores["nums"] == 2


def test_rejection_judge_runs_through_the_core_pipeline(rgb_server, rgb_config, tmp_path):
    path = write_rgb(tmp_path / "data" / "en.json", plain_rows(4))
    setting = _setting(path, noise_rate=1.0, judge="rejection", set="rejection")
    run = run_setting(setting, tmp_path / "out", rgb_config, judge_config=rgb_config)
    assert rgb_server.requests == 8  # 4 answers, 4 judgments
    assert all(record["label"] == [-1] and record["judged"] is True for record in run.records)
    assert run.scores["all_rate"] == 1.0
    assert run.scores["judge"] == {
        "judge": "openai/loopback-rgb",
        "kind": "rejection",
        "rate": 1.0,
        "count": 4,
        "nums": 4,
        "failed": 0,
    }
    judged = [body for body in rgb_server.bodies if "`rejects`" in body["messages"][0]["content"]]
    assert len(judged) == 4 and "insufficient information" in judged[0]["messages"][-1]["content"]
    assert (run.judge_dir / "manifest.json").is_file()
    rgb_server.reset_count()
    run_setting(setting, tmp_path / "out", rgb_config, judge_config=rgb_config)
    assert rgb_server.requests == 0


def test_error_detection_judge_and_correction(rgb_server, rgb_config, tmp_path):
    path = write_rgb(tmp_path / "data" / "en_fact.json", fact_rows(3))
    setting = _setting(path, kind="fact", correct_rate=0.4, judge="error_detection", set="counterfactual")
    run = run_setting(setting, tmp_path / "out", rgb_config, judge_config=rgb_config)
    scores = run.scores
    assert scores["fact_tt"] == 3 and scores["fact_check_rate"] == 1.0  # every answer says "factual errors"
    corrected = sum(0 not in record["label"] for record in run.records)
    assert scores["correct_tt"] == corrected and scores["correct_rate"] == corrected / 3
    assert scores["judge"]["rate"] == 1.0 and scores["judge"]["correct_tt"] == corrected
    assert all(record["prediction"].startswith(FACTUAL_ERRORS_EN) for record in run.records)


def test_keyword_judge_is_the_offline_default(rgb_server, rgb_config, tmp_path):
    path = write_rgb(tmp_path / "data" / "en.json", plain_rows(2))
    run = run_setting(
        _setting(path, noise_rate=1.0, judge="rejection", set="rejection"),
        tmp_path / "out",
        rgb_config,
    )
    assert rgb_server.requests == 2  # only the answers; the keyword judge calls nothing
    assert run.scores["judge"]["judge"] == "rgb-rejection-keywords" and run.scores["judge"]["rate"] == 1.0


def test_unparseable_judgment_and_refused_answer_are_failed_not_scored(rgb_config, tmp_path):
    def reply(body):
        if "`rejects`" in (body["messages"][0].get("content") or "") and "contest 1" in json.dumps(body):
            return "no idea what format you want"
        return rgb_reply(body)

    with OpenAICompatibleServer(reply) as server:
        config = rgb_config.model_copy(
            update={"api_base": server.base_url, "concurrency": 1, "parse_retries": 1}
        )
        server.inject(Fault(status=400))  # the first answer is refused by the provider
        path = write_rgb(tmp_path / "data" / "en.json", plain_rows(3))
        setting = _setting(path, noise_rate=1.0, judge="rejection", set="rejection")
        run = run_setting(setting, tmp_path / "out", config, judge_config=config)
    scores = run.scores
    assert (scores["items"], scores["ok"], scores["failed"], scores["nums"]) == (3, 2, 1, 2)
    assert scores["failed_ids"] == [0] and "InvalidRequest" in next(iter(scores["failure_kinds"]))
    assert scores["judge"]["nums"] == 1 and scores["judge"]["failed"] == 1  # contest 1 unparseable
    assert len(run.predictions.read_text().splitlines()) == 2


def test_usage_meter_records_the_responders_calls(rgb_server, rgb_config):
    judge = LLMJudge(RGBResponder(load_rgb_prompts()["en"]), rgb_config, responder_postprocess)
    inputs = {
        "query": "Who won?",
        "docs": ["Winner9 won."],
        "answer": "Winner9",
        "language": "en",
        "noise_rate": 0.0,
    }
    first = asyncio.run(judge.judge(inputs))
    assert first.usage.calls == 1 and first.usage.prompt_tokens > 0 and first.raw == ["Winner9 won."]
    assert first.output["label"] == [1]
    second = asyncio.run(judge.judge(inputs))
    assert second.usage.calls == 0 and second.usage.cache_hits == 1
    assert rgb_server.requests == 1
    # The prompts are part of the judge's fingerprint: other prompts, another run.
    other = LLMJudge(RGBResponder(load_rgb_prompts()["zh"]), rgb_config, responder_postprocess)
    assert other.fingerprint() != judge.fingerprint()
