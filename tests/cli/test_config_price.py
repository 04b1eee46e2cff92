"""A judge config's ``price:`` prices a model LiteLLM's price table lacks: ``--dry-run`` gives a
cost, ``--max-cost`` is kept, and each call's recorded cost (and the summary's) is its tokens at
that price; the price is no part of the judge's fingerprint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from jurist.errors import ExitCode
from jurist.judges.config import load_config
from jurist.runner import RESULTS_DB, ResultStore
from jurist.testing import OpenAICompatibleServer
from support import loopback_config, ragbench_answer, ragbench_rows, run_cli, write_jsonl

PRICE = {"input_per_million": 0.15, "output_per_million": 0.6}


@pytest.fixture(scope="module")
def server():
    with OpenAICompatibleServer(ragbench_answer) as running:
        yield running


def _config_file(folder: Path, server: OpenAICompatibleServer, name: str, price: dict | None) -> Path:
    """A judge config for the loopback server's model (which the price table lacks)."""
    values = loopback_config(server.base_url, folder / "cache").model_dump(mode="json")
    if price is not None:
        values["price"] = price
    path = folder / name
    path.write_text(yaml.safe_dump(values), encoding="utf-8")
    return path


def _summary(run_dir: Path) -> dict:
    return json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))


def test_dry_run_and_recorded_costs_use_the_config_price(server, tmp_path, capsys):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(4))
    priced = _config_file(tmp_path, server, "priced.yaml", PRICE)
    unpriced = _config_file(tmp_path, server, "unpriced.yaml", None)
    base = ["judge", "ragbench", str(data), "--out", str(tmp_path / "run"), "--no-progress"]

    assert run_cli([*base, "--config", str(unpriced), "--dry-run"]) == 0
    assert "its cost is unknown" in capsys.readouterr().out
    assert run_cli([*base, "--config", str(priced), "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "$0.15 / $0.60 per million prompt / completion tokens (the judge config's price)" in printed
    assert "unknown" not in printed

    assert run_cli([*base, "--config", str(priced)]) == 0
    usage = _summary(tmp_path / "run")["usage"]
    assert usage["calls"] == 4 and usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    by_hand = (usage["prompt_tokens"] * 0.15 + usage["completion_tokens"] * 0.6) / 1e6
    assert usage["cost"] == pytest.approx(by_hand, rel=1e-9)
    with ResultStore(tmp_path / "run" / RESULTS_DB) as store:
        for result in store.iter_results():
            call = result.usage
            by_hand = (call.prompt_tokens * 0.15 + call.completion_tokens * 0.6) / 1e6
            assert call.cost == pytest.approx(by_hand)

    # The price is no part of the judge's fingerprint: the run resumes under the config without it.
    assert load_config(priced).fingerprint() == load_config(unpriced).fingerprint()
    assert run_cli([*base, "--config", str(unpriced)]) == 0


def test_max_cost_is_kept_at_the_config_price(server, tmp_path, capsys):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(16))
    dear = {"input_per_million": 1000.0, "output_per_million": 4000.0}
    config = _config_file(tmp_path, server, "dear.yaml", dear)
    base = ["judge", "ragbench", str(data), "--out", str(tmp_path / "run"), "--config", str(config)]
    assert run_cli([*base, "--no-progress", "--max-cost", "1"]) == ExitCode.COST_LIMIT == 7
    assert "cost limit reached" in capsys.readouterr().err
    with ResultStore(tmp_path / "run" / RESULTS_DB) as store:
        recorded = [result.usage for result in store.iter_results()]
    spent = sum((usage.prompt_tokens * 1000.0 + usage.completion_tokens * 4000.0) / 1e6 for usage in recorded)
    assert spent >= 1 and 0 < len(recorded) < 16
    assert sum(usage.cost or 0.0 for usage in recorded) == pytest.approx(spent)


@pytest.mark.parametrize(
    ("price", "field", "message"),
    [
        ("{input_per_million: -1, output_per_million: 0.6}", "price.input_per_million", "greater than"),
        ("{input_per_million: 0.15}", "price.output_per_million", "Field required"),
        ("{input_per_million: 0.1, output_per_million: 0.6, currency: EUR}", "price.currency", "unknown"),
    ],
)
def test_a_bad_price_names_the_file_line_and_field(tmp_path, capsys, price, field, message):
    config = tmp_path / "judge.yaml"
    config.write_text(f"model: hosted_vllm/qwen2\ntemperature: 0\nprice: {price}\n", encoding="utf-8")
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(1))
    out = str(tmp_path / "run")
    args = ["judge", "ragbench", str(data), "--config", str(config), "--out", out, "--dry-run"]
    assert run_cli(args) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert f"{config}, line 3, field '{field}': " in err and message in err
