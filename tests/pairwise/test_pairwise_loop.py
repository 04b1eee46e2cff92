"""Pairwise runs through the one judging loop: items in two orders, no pipeline of its own, its
run identity checked on resume, and SubEval's record table rebuilt from every run's results."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import jurist
import jurist.tasks.pairwise
from jurist.tasks import get_task
from jurist.tasks.pairwise.scoring import FAIL_MESSAGE
from jurist.testing import OpenAICompatibleServer
from jurist.verbs import judge
from support import prompt_sections, run_cli

DATA = Path(__file__).resolve().parents[1] / "data"
SUBEVAL = DATA / "devbench-subeval" / "examples" / "DevBench_projects_example.xlsx"
LLMBAR = DATA / "llmbar" / "natural_sample.json"
TWO_MODELS = {"reference_model": "gpt-3.5-turbo-1106", "compare": ["gpt-3.5-turbo-1106", "gpt-4-0613"]}


def test_pairwise_has_no_pipeline_of_its_own_and_no_historical_functions():
    assert not hasattr(type(get_task("pairwise")), "judge") and not hasattr(
        type(get_task("pairwise-gold")), "judge"
    )
    for name in ("judge_pairwise", "score_pairwise_records"):
        assert name not in jurist.__all__ and name not in jurist.tasks.pairwise.__all__
        assert not hasattr(jurist.tasks.pairwise, name)


def test_a_run_directory_is_resumed_only_with_the_same_comparisons(tmp_path: Path, capsys):
    out = str(tmp_path / "subeval")
    args = ["judge", "pairwise", str(SUBEVAL), "--out", out, "--no-progress"]
    assert run_cli([*args, "--reference-model", "gpt-3.5-turbo-1106"]) == 0
    capsys.readouterr()
    assert run_cli(args) == 2
    assert (
        "holds a pairwise run with reference model 'gpt-3.5-turbo-1106', now None" in capsys.readouterr().err
    )
    pairs = str(tmp_path / "pairs")
    assert run_cli(["judge", "pairwise", str(LLMBAR), "--out", pairs, "--no-progress"]) == 0
    capsys.readouterr()
    assert (
        run_cli(["judge", "pairwise", str(LLMBAR), "--out", pairs, "--num-options", "3", "--no-progress"])
        == 2
    )
    assert "holds a pairwise run with num options 2, now 3" in capsys.readouterr().err
    # Another scoring option resumes the same run.
    assert (
        run_cli(["judge", "pairwise", str(LLMBAR), "--out", pairs, "--resamples", "20", "--no-progress"]) == 0
    )


class _Flaky:
    """Answers every comparison with the longer response, except ``gpt-4-0613``'s general
    comparisons while ``broken``: those get an answer with no option in it."""

    def __init__(self) -> None:
        self.broken = True

    def __call__(self, body: dict) -> str:
        sections = prompt_sections(body)
        first, second = sections.get("response_1", ""), sections.get("response_2", "")
        if self.broken and "faithful" not in sections.get("evaluating_guidance", ""):
            return "[[ ## choice ## ]]\nZ\n\n[[ ## reason ## ]]\nUnsure.\n\n[[ ## completed ## ]]"
        choice = "A" if len(first) >= len(second) else "B"
        return f"[[ ## choice ## ]]\n{choice}\n\n[[ ## reason ## ]]\nLonger.\n\n[[ ## completed ## ]]"


def test_retrying_failed_comparisons_rebuilds_the_record_table(llm_config, tmp_path: Path):
    answers = _Flaky()
    with OpenAICompatibleServer(answers) as srv:
        config = llm_config.model_copy(update={"api_base": srv.base_url})
        out = tmp_path / "run"
        first = judge("pairwise", SUBEVAL, config, out=out, options=TWO_MODELS, progress=False)
        table = out / "record_openai_loopback-judge_2.tsv"
        texts = pd.read_csv(table, sep="\t")["openai/loopback-judge"]
        assert first.summary["failed"] == (texts == FAIL_MESSAGE).sum() > 0
        answers.broken = False
        again = judge(
            "pairwise", SUBEVAL, config, out=out, options=TWO_MODELS, retry_failed=True, progress=False
        )
    assert again.summary["failed"] == 0
    texts = pd.read_csv(table, sep="\t")["openai/loopback-judge"]
    assert (texts != FAIL_MESSAGE).all() and texts.str.startswith("Choice: ").all()
    assert "Failed to response: 0" in (out / "log.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize(("data", "chosen"), [(LLMBAR, {}), (SUBEVAL, TWO_MODELS)], ids=["pairs", "subeval"])
def test_score_of_a_judged_run_gives_the_judged_figures(data: Path, chosen: dict, tmp_path: Path):
    options = {"resamples": 50, **chosen}
    run = judge("pairwise", data, out=tmp_path / "run", options=options, progress=False)
    rescored = jurist.score("pairwise", tmp_path / "run", options=options)
    drop = ("run", "usage")
    assert {k: v for k, v in rescored.summary.items() if k not in drop} == {
        k: v for k, v in run.summary.items() if k not in drop
    }


def test_pairwise_gold_judges_a_run_directory_with_the_baseline_only(tmp_path: Path, llm_config, capsys):
    out = tmp_path / "gold"
    args = ["judge", "pairwise-gold", str(LLMBAR), "--out", str(out), "--resamples", "0", "--no-progress"]
    assert run_cli(args) == 0
    assert (out / "manifest.json").is_file() and (out / "results.jsonl").is_file()
    judged = pd.read_csv(out / "agreement.csv")
    # The same figures as the pairwise task's run with its default judge, the same baseline.
    pairwise = judge("pairwise", LLMBAR, out=tmp_path / "pairwise", options={"resamples": 0}, progress=False)
    pd.testing.assert_frame_equal(judged, pairwise.scores.extra["agreement"].agreement, check_dtype=False)
    rescored = jurist.score("pairwise-gold", out, options={"resamples": 0})
    assert rescored.summary["agreement"] == json_rows(judged) and rescored.summary["items"] == 24
    capsys.readouterr()
    assert run_cli([*args, "--num-options", "3"]) == 2
    assert "holds a pairwise-gold run with num options 2, now 3" in capsys.readouterr().err
    config = tmp_path / "llm.yaml"
    config.write_text(f"model: {llm_config.model}\n", encoding="utf-8")
    assert (
        run_cli(["judge", "pairwise-gold", str(LLMBAR), "-c", str(config), "--out", str(tmp_path / "x")]) == 2
    )
    assert "judges with the offline baseline only" in capsys.readouterr().err


def json_rows(frame: pd.DataFrame) -> list[dict]:
    """A table's rows as the summary writes them (missing values as ``None``)."""
    return [{k: (None if pd.isna(v) else v) for k, v in row.items()} for row in frame.to_dict("records")]
