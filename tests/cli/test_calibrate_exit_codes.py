"""``jurist calibrate`` follows the exit-code table as ``jurist judge`` does: 3 when a judge failed
on items (never 0), 5 when the provider refused every call, 1 when a gate failed."""

from __future__ import annotations

from pathlib import Path

from jurist.errors import ExitCode
from jurist.testing import Fault, OpenAICompatibleServer
from support import ragbench_answer, ragbench_rows, run_cli, write_jsonl


def _config(path: Path, base_url: str, cache: Path) -> Path:
    path.write_text(
        "model: openai/loopback-judge\n"
        f"api_base: {base_url}\n"
        f"cache_dir: {cache}\n"
        "api_key_env: JURIST_TEST_API_KEY\n"
        "parse_retries: 0\n"
        "retry_max_wait: 0.1\n",
        encoding="utf-8",
    )
    return path


def _calibrate(gold: Path, config: Path, out: Path, *extra: str) -> int:
    args = ["calibrate", "ragbench", "--gold", str(gold), "--config", str(config), "--out", str(out)]
    return run_cli([*args, "--resamples", "0", *extra])


def test_calibrate_exits_3_when_a_judge_failed_on_every_item(tmp_path, capsys):
    gold = write_jsonl(tmp_path / "gold.jsonl", ragbench_rows(4))
    with OpenAICompatibleServer("I will not answer in your format.") as srv:
        config = _config(tmp_path / "sloppy.yaml", srv.base_url, tmp_path / "cache")
        assert _calibrate(gold, config, tmp_path / "cal") == ExitCode.FAILED_ITEMS
        err = capsys.readouterr().err
        assert "failed judgments (counted, never scored" in err and "sloppy on gold: 4 of 4" in err
        # Resumed from its runs (nothing asked again), it is still not a success.
        srv.reset_count()
        assert _calibrate(gold, config, tmp_path / "cal") == ExitCode.FAILED_ITEMS
        assert srv.requests == 0
        capsys.readouterr()
        # A failed-rate gate makes failed judgments the gate's to judge: 1 over it, 0 within it.
        assert _calibrate(gold, config, tmp_path / "cal", "--max-failed-rate", "0.5") == ExitCode.GATE_FAILED
        assert "gate failed: max_failed_rate" in capsys.readouterr().err
        assert _calibrate(gold, config, tmp_path / "cal", "--max-failed-rate", "1") == ExitCode.OK


def test_calibrate_exits_3_when_a_judge_failed_on_some_items(tmp_path, capsys):
    gold = write_jsonl(tmp_path / "gold.jsonl", ragbench_rows(4))

    def one_bad(body: dict) -> str:
        return "no verdict here" if "fact number 2" in str(body) else ragbench_answer(body)

    with OpenAICompatibleServer(one_bad) as srv:
        config = _config(tmp_path / "judge.yaml", srv.base_url, tmp_path / "cache")
        assert _calibrate(gold, config, tmp_path / "cal") == ExitCode.FAILED_ITEMS
    assert "judge on gold: 1 of 4" in capsys.readouterr().err


def test_calibrate_exits_5_when_the_provider_refuses_every_call(tmp_path, capsys):
    gold = write_jsonl(tmp_path / "gold.jsonl", ragbench_rows(4))
    with OpenAICompatibleServer(ragbench_answer) as srv:
        srv.fail_always(Fault.unauthorized())
        config = _config(tmp_path / "judge.yaml", srv.base_url, tmp_path / "cache")
        assert _calibrate(gold, config, tmp_path / "cal") == ExitCode.FATAL_PROVIDER
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and err.count("\n") == 0 and "judge.yaml" in err
