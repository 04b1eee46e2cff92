"""``judge pairwise`` through the judging loop every task runs: both orders, the LLM path,
failures, resume, the record table rebuilt on each run."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from jurist.errors import InputError
from jurist.judges.judge import INVALID_ANSWERS
from jurist.runner import RESULTS_DB, ResultStore
from jurist.testing import OpenAICompatibleServer
from jurist.verbs import judge
from support import prompt_sections

DATA = Path(__file__).resolve().parents[1] / "data"
SUBEVAL = DATA / "devbench-subeval" / "examples" / "DevBench_projects_example.xlsx"
LLMBAR = DATA / "llmbar" / "natural_sample.json"
QUICK = {"resamples": 50}


def longer_wins(body: dict) -> str:
    """Prefer the longer response (position-independent, so both orders agree); refuse on 'UNSURE'."""
    sections = prompt_sections(body)
    first, second = sections.get("response_1", ""), sections.get("response_2", "")
    if "UNSURE" in first + second:
        return "[[ ## choice ## ]]\nZ\n\n[[ ## reason ## ]]\nI cannot tell.\n\n[[ ## completed ## ]]"
    choice = "A" if len(first) >= len(second) else "B"
    return f"[[ ## choice ## ]]\n{choice}\n\n[[ ## reason ## ]]\n1. It is longer.\n\n[[ ## completed ## ]]"


def _pairs_file(tmp_path: Path) -> Path:
    rows = [
        {
            "id": "p1",
            "question": "Name a colour.",
            "response_1": "Red, the colour of blood.",
            "response_2": "Red.",
            "label": 1,
        },
        {
            "id": "p2",
            "question": "Name a fruit.",
            "response_1": "Pear.",
            "response_2": "An apple, crisp and sweet.",
            "label": 2,
        },
        {
            "id": "p3",
            "question": "Name a tree.",
            "response_1": "UNSURE oak",
            "response_2": "Birch.",
            "label": 1,
        },
    ]
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_pairs_judged_in_both_orders_through_the_loopback_server(llm_config, tmp_path):
    with OpenAICompatibleServer(longer_wins) as srv:
        config = llm_config.model_copy(update={"api_base": srv.base_url})
        run = judge(
            "pairwise", _pairs_file(tmp_path), config, out=tmp_path / "out", options=QUICK, progress=False
        )
        bodies = list(srv.bodies)
        # Three pairs, both orders; the unextractable ones are asked again past the cache.
        orders = {(prompt_sections(b)["response_1"], prompt_sections(b)["response_2"]) for b in bodies}
        assert ("Red, the colour of blood.", "Red.") in orders and (
            "Red.",
            "Red, the colour of blood.",
        ) in orders
        judged = run.set_index("id")
        assert judged.loc["p1", "choice_12"] == "A" and judged.loc["p1", "choice_21"] == "B"
        assert judged.loc["p1", "verdict"] == "1" and judged.loc["p2", "verdict"] == "2"
        # An answer whose choice is not an option is recorded as not extracted, never guessed.
        assert judged.loc["p3", "choice_12"] is None and judged.loc["p3", "choice_21"] is None
        assert judged.loc["p3", "judgement_12"] == "Failed to obtain answer via API."
        with ResultStore(run.run_dir / RESULTS_DB) as store:
            failed = [r for r in store.iter_results() if r.status == "failed"]
        assert {r.id for r in failed} == {"p3|12", "p3|21"}
        # "Z" parsed but is no option: an invalid verdict is asked again once, not parse_retries times.
        assert all(r.attempts == INVALID_ANSWERS == 2 and r.raw for r in failed)
        assert all("'Z' is not one of A, B" in (r.error or "") for r in failed)
        overall = run.summary["agreement"][-1]
        assert overall["complete"] == 2 and overall["accuracy"] == 1.0

        srv.reset_count()
        again = judge(
            "pairwise", _pairs_file(tmp_path), config, out=tmp_path / "out", options=QUICK, progress=False
        )
        assert srv.requests == 0
        assert again.run_dir == run.run_dir


def test_subeval_table_never_shows_model_names_and_writes_records(llm_config, tmp_path):
    with OpenAICompatibleServer(longer_wins) as srv:
        config = llm_config.model_copy(update={"api_base": srv.base_url})
        chosen = {"reference_model": "gpt-3.5-turbo-1106", "compare": ["gpt-3.5-turbo-1106", "gpt-4-0613"]}
        run = judge(
            "pairwise", SUBEVAL, config, out=tmp_path / "out", options={**QUICK, **chosen}, progress=False
        )
        prompts = " ".join(json.dumps(body["messages"]) for body in srv.bodies)
        assert "gpt-4-0613" not in prompts and "gpt-3.5-turbo-1106" not in prompts
        assert srv.requests == len(run)
    assert (run.run_dir / "record_openai_loopback-judge_2.tsv").is_file()
    assert (run.run_dir / "log.txt").is_file()
    assert len(run) == 8  # 2 questions x 2 metrics, both orders
    assert run["choice"].isin(["A", "B"]).all()
    table = pd.read_csv(run.run_dir / "record_openai_loopback-judge_2.tsv", sep="\t")
    assert table["openai/loopback-judge"].str.extract(r"Choice: ([AB])")[0].notna().all()


def test_baseline_runs_both_orders_on_llmbar(tmp_path):
    run = judge("pairwise", LLMBAR, out=tmp_path / "out", options=QUICK, progress=False)
    assert len(run) == 12
    assert run["choice_12"].notna().all() and run["choice_21"].notna().all()
    with ResultStore(run.run_dir / RESULTS_DB) as store:
        assert len(list(store.iter_results())) == 24
    assert pd.read_csv(run.run_dir / "agreement.csv")["pairs"].iloc[-1] == 12


def test_unknown_reference_and_missing_model_column(tmp_path):
    with pytest.raises(InputError, match="unknown reference model"):
        judge("pairwise", SUBEVAL, out=tmp_path, options={"reference_model": "gpt-9"}, progress=False)
    with pytest.raises(InputError) as info:
        judge(
            "pairwise", SUBEVAL, out=tmp_path, options={"compare": ["gpt-4-0613", "nobody"]}, progress=False
        )
    assert info.value.field == "answer-nobody"


def test_a_pairwise_judge_serves_its_finished_verdicts_into_a_new_directory(llm_config, tmp_path):
    """The pairwise judge is the one the task's parts make (program, reading of the answer,
    baseline), like every task's: a re-run into a new directory is served by the finished-verdict
    cache alone (the response cache left behind), with the same verdicts and agreement."""
    from jurist.judges.verdicts import VERDICTS_DB

    with OpenAICompatibleServer(longer_wins) as srv:
        config = llm_config.model_copy(update={"api_base": srv.base_url})
        first = judge(
            "pairwise", _pairs_file(tmp_path), config, out=tmp_path / "first", options=QUICK, progress=False
        )
        assert srv.requests > 0
        verdicts_only = tmp_path / "verdicts-only"
        verdicts_only.mkdir()
        for path in Path(config.cache_dir).glob(VERDICTS_DB + "*"):
            (verdicts_only / path.name).write_bytes(path.read_bytes())
        srv.reset_count()
        again = judge(
            "pairwise",
            _pairs_file(tmp_path),
            config.model_copy(update={"cache_dir": verdicts_only}),
            out=tmp_path / "again",
            options=QUICK,
            progress=False,
        )
        assert srv.requests == 4  # only the failed orders (p3) are asked again: failures are not kept
    columns = ["id", "choice_12", "choice_21", "verdict"]
    assert again[columns].equals(first[columns])
    assert again.summary["agreement"] == first.summary["agreement"]
    with ResultStore(again.run_dir / RESULTS_DB) as store:
        served = {r.id: r.usage for r in store.iter_results() if r.status == "ok"}
    assert set(served) == {"p1|12", "p1|21", "p2|12", "p2|21"}
    assert all(usage.calls == 0 and usage.cache_hits == 1 for usage in served.values())
