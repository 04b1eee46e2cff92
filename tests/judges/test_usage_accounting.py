"""Usage and cost per item and per run: provider calls, cache hits, tokens, and cost where known."""

from __future__ import annotations

import pytest

from support import ragbench_rows, ragbench_run, write_jsonl


@pytest.mark.parametrize("engine", ["auto", "litellm"])
def test_known_model_is_priced_and_cached_answers_cost_nothing(engine, server, llm_config, tmp_path):
    # A model with a known price, served by the loopback server: tokens come from its usage block.
    config = llm_config.model_copy(update={"model": "openai/gpt-4o-mini", "engine": engine})
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(3))
    run = ragbench_run(data, tmp_path / "run", config)
    usage = run.summary["usage"]
    assert usage["calls"] == 3 and usage["cache_hits"] == 0
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    assert usage["cost"] is not None and usage["cost"] > 0
    assert run.items["cost"].sum() == pytest.approx(usage["cost"])
    assert run.items["prompt_tokens"].sum() == usage["prompt_tokens"]

    cached = ragbench_run(data, tmp_path / "again", config)
    again = cached.summary["usage"]
    assert again["calls"] == 0 and again["cache_hits"] == 3
    assert again["prompt_tokens"] == 0 and not again["cost"]


def test_unknown_model_has_no_cost_but_counts_tokens(server, llm_config, tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(2))
    run = ragbench_run(data, tmp_path / "run", llm_config)
    usage = run.summary["usage"]
    assert usage["calls"] == 2 and usage["prompt_tokens"] > 0
    assert usage["cost"] is None
