"""``jurist judge --dry-run`` (``jurist.estimate``): items, cached items, tokens and cost per judge,
with nothing called and nothing written; its estimate checked against what the loopback server
counted when the run was then made (the server counts tokens with the model's tokenizer)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml

from jurist.errors import CostLimitReached
from jurist.testing import OpenAICompatibleServer
from jurist.verbs import estimate, judge
from support import loopback_config, ragbench_answer, ragbench_rows, run_cli, write_jsonl

PRICED = "openai/gpt-4o-mini"


def _files(folder: Path, *, data_only: bool = False) -> dict[str, bytes]:
    """Every file under ``folder`` and its bytes (``data_only``: not SQLite's shared-memory index)."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not (data_only and p.name.endswith("-shm"))
    }


@pytest.fixture
def counting_server():
    with OpenAICompatibleServer(ragbench_answer, tokenizer="model") as server:
        yield server


def test_the_server_counts_tokens_as_a_provider_does(counting_server, tmp_path, monkeypatch):
    import litellm
    import tiktoken

    config = loopback_config(counting_server.base_url, tmp_path / "cache", model=PRICED)
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(1))
    judge("ragbench", data, config, out=tmp_path / "r", progress=False)
    messages = counting_server.bodies[0]["messages"]
    reply = ragbench_answer(counting_server.bodies[0])
    # tiktoken's own o200k_base (gpt-4o-mini's; LiteLLM's bundled copy, no download) with
    # OpenAI's chat framing: 3 tokens per message, its role and content, 3 priming the reply.
    tokenizers = Path(litellm.__file__).parent / "litellm_core_utils" / "tokenizers"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tokenizers))
    encoding = tiktoken.get_encoding("o200k_base")
    framed = 3 + sum(
        3 + len(encoding.encode(m["role"])) + len(encoding.encode(m["content"])) for m in messages
    )
    assert counting_server.prompt_tokens == framed
    assert counting_server.completion_tokens == len(encoding.encode(reply))
    # LiteLLM's counter agrees within 1% (it extrapolates long texts from samples).
    counted = litellm.token_counter(model="gpt-4o-mini", messages=messages)
    assert counting_server.prompt_tokens == pytest.approx(counted, rel=0.01)


def test_dry_run_calls_and_writes_nothing_and_is_within_ten_percent_of_the_server(
    counting_server, tmp_path, capsys
):
    config = loopback_config(counting_server.base_url, tmp_path / "cache", model=PRICED)
    config_file = tmp_path / "judge.yaml"
    config_file.write_text(yaml.safe_dump(config.model_dump(mode="json")), encoding="utf-8")
    # Ten rows answered before: their answers are in the cache (and teach the answers' length).
    judge(
        "ragbench",
        write_jsonl(tmp_path / "first.jsonl", ragbench_rows(10)),
        config,
        out=tmp_path / "r0",
        progress=False,
    )
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(40))
    counting_server.reset_count()
    cache_files = _files(tmp_path / "cache", data_only=True)

    args = ["judge", "ragbench", str(data), "--out", str(tmp_path / "run"), "--config", str(config_file)]
    assert run_cli([*args, "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert counting_server.requests == 0
    assert not (tmp_path / "run").exists()
    assert _files(tmp_path / "cache", data_only=True) == cache_files  # read, never written
    assert "nothing was called or written" in printed and "mean of 10 answer(s) cached or recorded" in printed
    assert "o200k_base" in printed and "$0.15 / $0.60 per million" in printed

    plan = estimate("ragbench", data, config, out=tmp_path / "run")
    row = plan.table.iloc[0]
    assert (row["items"], row["recorded"], row["cached"], row["calls"]) == (40, 0, 10, 30)

    run = judge("ragbench", data, config, out=tmp_path / "run", progress=False)
    assert counting_server.requests == 30
    served = counting_server.prompt_tokens + counting_server.completion_tokens
    assert row["prompt_tokens"] == pytest.approx(counting_server.prompt_tokens, rel=0.10)
    assert row["prompt_tokens"] + row["completion_tokens"] == pytest.approx(served, rel=0.10)
    assert plan.cost == pytest.approx(run.summary["usage"]["cost"], rel=0.10)
    assert row["cost_max"] > row["cost"]


def test_a_resumed_run_counts_only_what_is_left_and_reads_the_run_directory_without_writing(
    counting_server, tmp_path
):
    config = loopback_config(counting_server.base_url, tmp_path / "cache", model=PRICED)
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(20))
    with pytest.raises(CostLimitReached):
        judge("ragbench", data, config, out=tmp_path / "run", progress=False, max_cost=0.0008)
    recorded = counting_server.requests
    mean_completion = counting_server.completion_tokens / recorded
    before = _files(tmp_path / "run")
    counting_server.reset_count()

    plan = estimate("ragbench", data, config, out=tmp_path / "run")
    row = plan.table.iloc[0]
    assert counting_server.requests == 0
    assert _files(tmp_path / "run") == before  # not even SQLite's side files
    assert (row["recorded"], row["to_judge"], row["cached"]) == (recorded, 20 - recorded, 0)
    # The answers recorded in the run directory tell how long the rest will be.
    assert row["completion_basis"].startswith(f"mean of {recorded} answer(s) cached or recorded")
    assert row["completion_tokens"] == round(mean_completion * (20 - recorded))


def test_a_model_without_a_price_has_an_unknown_cost_never_zero(counting_server, tmp_path):
    config = loopback_config(counting_server.base_url, tmp_path / "no-cache-yet")
    plan = estimate(
        "ragbench", write_jsonl(tmp_path / "in.jsonl", ragbench_rows(3)), config, out=tmp_path / "run"
    )
    row = plan.table.iloc[0]
    assert row["calls"] == 3 and row["cost"] is None and plan.cost is None
    assert "no price for model 'openai/loopback-judge'" in row["price"]
    assert "unknown" in "\n".join(plan.lines())
    assert not (tmp_path / "no-cache-yet").exists()
    # No answer cached or recorded to learn from: the documented rule (ragbench asks for 6 fields).
    assert row["completion_basis"].startswith("50 per output field (6) + 10")
    assert row["completion_tokens"] == (50 * 6 + 10) * 3
    assert counting_server.requests == 0


def test_a_jury_lists_every_juror_and_a_cascade_bounds_its_later_stages(counting_server, tmp_path):
    task = tmp_path / "claims.yaml"
    task.write_text(
        textwrap.dedent(
            """\
            name: claim-checker
            instructions: Say whether the claim is true.
            inputs: [claim]
            output:
              kind: bool
              confidence: true
            gold: gold
            """
        ),
        encoding="utf-8",
    )
    data = write_jsonl(
        tmp_path / "claims.jsonl", [{"id": f"c{i}", "claim": f"Claim {i}.", "gold": True} for i in range(5)]
    )

    def member(name: str, model: str, **extra: object) -> str:
        fields = {
            "name": name,
            "model": model,
            "api_base": counting_server.base_url,
            "cache_dir": str(tmp_path / "c"),
            **extra,
        }
        return "    - {" + ", ".join(f"{k}: {v}" for k, v in fields.items()) + "}"

    jury = tmp_path / "panel.yaml"
    jury.write_text(
        "jury:\n  aggregate: majority\n  jurors:\n"
        + "\n".join([member("mini", PRICED), member("local", "openai/loopback-judge")])
        + "\n",
        encoding="utf-8",
    )
    plan = estimate(task, data, jury, out=tmp_path / "jury-run")
    assert plan.table["judge"].tolist() == ["mini", "local"]
    assert plan.table["run_dir"].tolist() == [
        str(tmp_path / "jury-run" / "jurors" / n) for n in ("mini", "local")
    ]
    assert plan.table["calls"].tolist() == [5, 5] and plan.cost is None  # one juror has no price
    assert "total" in "\n".join(plan.lines())

    cascade = tmp_path / "tiered.yaml"
    cascade.write_text(
        "cascade:\n  stages:\n"
        + "\n".join([member("small", PRICED, escalate_below=0.9), member("large", "openai/gpt-4o")])
        + "\n",
        encoding="utf-8",
    )
    plan = estimate(task, data, cascade, out=tmp_path / "cascade-run")
    assert plan.table["scope"].tolist() == ["exact", "upper bound"]
    assert plan.table["calls"].tolist() == [5, 5]
    assert "large (upper bound)" in "\n".join(plan.lines())
    assert counting_server.requests == 0
    assert not (tmp_path / "jury-run").exists() and not (tmp_path / "cascade-run").exists()
