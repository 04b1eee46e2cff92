"""``judge pairwise`` through the batch runner: both orders, the LLM path, failures, resume."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from jurist.errors import InputError
from jurist.judges.judge import INVALID_ANSWERS
from jurist.runner import RESULTS_DB, ResultStore
from jurist.tasks.pairwise import judge_pairwise
from jurist.testing import OpenAICompatibleServer
from support import prompt_sections

DATA = Path(__file__).resolve().parents[1] / "data"
SUBEVAL = DATA / "devbench-subeval" / "examples" / "DevBench_projects_example.xlsx"
LLMBAR = DATA / "llmbar" / "natural_sample.json"


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
        run = judge_pairwise(_pairs_file(tmp_path), tmp_path / "out", config, progress=False, n_resamples=50)
        bodies = list(srv.bodies)
        # Three pairs, both orders; the unextractable ones are asked again past the cache.
        orders = {(prompt_sections(b)["response_1"], prompt_sections(b)["response_2"]) for b in bodies}
        assert ("Red, the colour of blood.", "Red.") in orders and (
            "Red.",
            "Red, the colour of blood.",
        ) in orders
        judged = run.records.set_index("id")
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
        overall = run.agreement.agreement.iloc[-1]
        assert overall["complete"] == 2 and overall["accuracy"] == 1.0

        srv.reset_count()
        again = judge_pairwise(
            _pairs_file(tmp_path), tmp_path / "out", config, progress=False, n_resamples=50
        )
        assert srv.requests == 0
        assert again.run_dir == run.run_dir


def test_subeval_table_never_shows_model_names_and_writes_records(llm_config, tmp_path):
    with OpenAICompatibleServer(longer_wins) as srv:
        config = llm_config.model_copy(update={"api_base": srv.base_url})
        run = judge_pairwise(
            SUBEVAL,
            tmp_path / "out",
            config,
            reference_model="gpt-3.5-turbo-1106",
            models=["gpt-3.5-turbo-1106", "gpt-4-0613"],
            progress=False,
            n_resamples=50,
            subdirectory=True,  # a run directory named after the run, under out (as calibration uses)
        )
        prompts = " ".join(json.dumps(body["messages"]) for body in srv.bodies)
        assert "gpt-4-0613" not in prompts and "gpt-3.5-turbo-1106" not in prompts
        assert srv.requests == len(run.records)
    assert "__ref-gpt-3.5-turbo-1106__2opt" in run.run_dir.name
    assert (run.run_dir / "record_loopback-judge_2.tsv").exists() or any(run.run_dir.glob("record_*_2.tsv"))
    assert (run.run_dir / "log.txt").is_file()
    assert run.scores is not None and run.scores.counts.comparisons == len(run.records)
    choices = run.records[run.scores.judge].str.extract(r"Choice: ([AB])")[0]
    assert choices.notna().all()


def test_baseline_runs_both_orders_on_llmbar(tmp_path):
    run = judge_pairwise(LLMBAR, tmp_path / "out", None, progress=False, n_resamples=50)
    assert len(run.records) == 12
    assert run.records["choice_12"].notna().all() and run.records["choice_21"].notna().all()
    with ResultStore(run.run_dir / RESULTS_DB) as store:
        assert len(list(store.iter_results())) == 24
    assert isinstance(run.agreement.agreement, pd.DataFrame)


def test_unknown_reference_and_missing_model_column(tmp_path):
    with pytest.raises(InputError, match="unknown reference model"):
        judge_pairwise(SUBEVAL, tmp_path, None, reference_model="gpt-9", progress=False)
    with pytest.raises(InputError) as info:
        judge_pairwise(SUBEVAL, tmp_path, None, models=["gpt-4-0613", "nobody"], progress=False)
    assert info.value.field == "answer-nobody"
