"""SubEval's choice rule is kept, but never silently: letters that begin a word are listed, and
the strict reading's figures are shown beside whenever the two rules read a record differently."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import jurist.cli.verbs  # noqa: F401  (registers the commands)
from jurist.cli import app
from jurist.errors import ConfigError
from jurist.signatures.pairwise import extract_choice, read_choice
from jurist.tasks.pairwise.gold import agreement_summary, judged_pairs, pairs_agreement
from jurist.tasks.pairwise.report import pairs_agreement_markdown

DATA = Path(__file__).parents[1] / "data"
DEVBENCH = DATA / "devbench-subeval"
RECORD = (
    DEVBENCH
    / "output"
    / "DevBench_projects_example_infer_input_2680_record0_gpt-4-1106-preview_2"
    / "record_gpt-4-1106-preview_2.tsv"
)
BESIDE = "## Strict reading beside SubEval's rule"
LISTED = "## Choices read from a letter that begins a word"


def _record(index: str, first: str, second: str, text: str) -> dict[str, str]:
    return {
        "cmp_index": f"{index};{first};{second}",
        "question": f"Question {index}",
        "answer1": f"The answer of {first}.",
        "answer2": f"The answer of {second}, a little longer.",
        "A": first,
        "B": second,
        "reference_answer": "",
        "evaluating_guidance": "",
        "task": "uml_class-general",
        "judge-x": text,
    }


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), delimiter="\t", quoting=csv.QUOTE_ALL)
        writer.writeheader()
        writer.writerows(rows)
    return path


@pytest.fixture
def misread(tmp_path: Path) -> Path:
    """Four comparisons (4 options) in both orders; three answers phrase their choice in words.

    q1's second order means A (consistent with B) but reads D; q2's means B, reads A; q3's
    first order means C, reads B. q4 is plain and consistent.
    """
    rows = [
        _record("q1", "ref", "model", "Choice: B\nReason: \n1. complete"),
        _record("q1", "model", "ref", "Choice: Definitely A\nReason: \n1. complete"),
        _record("q2", "ref", "model", "Choice: A\nReason: \n1. shorter"),
        _record("q2", "model", "ref", "Choice: After weighing both, B\nReason: \n1. shorter"),
        _record("q3", "ref", "model", "Choice: Both are good, so C\nReason: \n1. both fine"),
        _record("q3", "model", "ref", "Choice: C\nReason: \n1. both fine"),
        _record("q4", "ref", "model", "Choice: B\nReason: \n1. clearer"),
        _record("q4", "model", "ref", "Choice: (A)\nReason: \n1. clearer"),
    ]
    return _write(tmp_path / "record_judge-x_4.tsv", rows)


def _score(*arguments: str) -> dict:
    result = CliRunner().invoke(app, ["score", "pairwise", *arguments, "--json", "--resamples", "0"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _overall(rows: list[dict], model: str, rate: str) -> float:
    (row,) = [r for r in rows if r.get("metric", r.get("group")) == "Overall" and r["model"] == model]
    return float(row[rate])


def test_published_rule_stays_the_default_and_lists_letters_that_begin_a_word(misread: Path) -> None:
    summary = _score(str(misread))
    # SubEval's figures: every answer is extracted (D, A and B among them), so only q4 is consistent.
    assert summary["choice_rule"] == "subeval"
    assert (summary["extracted"], summary["extraction_rate"]) == (7, 7 / 8)  # "(A)" is no A-D letter
    assert summary["consistency_rate"] == 0.0 and summary["row_consistency_rate"] == pytest.approx(1 / 7)
    assert _overall(summary["win_rates_with_ties"], "model", "win_rate_with_tie") == pytest.approx(4 / 7)
    assert summary["letter_in_word"] == 3
    assert [
        (entry["id"], entry["subeval"], entry["strict"], entry["after_choice"])
        for entry in summary["letter_in_word_records"]
    ] == [
        ("q1;model;ref", "D", None, "Definitely A"),
        ("q2;model;ref", "A", None, "After weighing both, B"),
        ("q3;ref;model", "B", None, "Both are good, so C"),
    ]
    assert [entry["line"] for entry in summary["letter_in_word_records"]] == [5, 11, 14]
    # The strict reading: the three are not extracted, "(A)" is; every complete pair is consistent.
    assert summary["readings_differ"] == 4
    strict = summary["other_reading"]
    assert strict["rule"] == "strict"
    assert (strict["extracted"], strict["extraction_rate"]) == (5, 5 / 8)
    assert strict["consistency_rate"] == 1.0 and strict["row_consistency_rate"] == 1.0
    assert _overall(strict["win_rates_with_ties"], "model", "win_rate_with_tie") == pytest.approx(3.5 / 5)
    # Old version: model wins q1 and q4 (twice), ties q3 (both good), loses q2: (3 + 1) / 5.
    assert _overall(strict["win_rates"], "model", "win_both_good_rate") == pytest.approx(4 / 5)


def test_report_shows_the_list_and_the_strict_figures_beside(misread: Path, tmp_path: Path) -> None:
    out = tmp_path / "scores"
    result = CliRunner().invoke(
        app, ["score", "pairwise", str(misread), "--resamples", "0", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    for report in (result.output, (out / "summary.md").read_text(encoding="utf-8")):
        assert "Letters that begin a longer word, read by SubEval's rule: 3." in report
        assert "The two rules read 4 of 8 judged records differently." in report
        assert LISTED in report
        assert '| q1;model;ref | 5 | D | n/a | "Definitely A" |' in report
        assert '| q3;ref;model | 14 | B | n/a | "Both are good, so C" |' in report
        assert BESIDE in report
        assert "| choice extracted | 7 / 8 (87.50%) | 5 / 8 (62.50%) |" in report
        assert "| consistent comparisons | 0 / 3 (0.00%) | 1 / 1 (100.00%) |" in report
        assert "| win rate with ties, overall: model vs ref | 0.571 | 0.700 |" in report
    # SubEval's own log keeps SubEval's rule, line for line.
    log = (out / "log.txt").read_text(encoding="utf-8")
    assert "Extracted 7 answers from the responses (extraction success rate 87.50%)" in log


def test_strict_rule_on_request_with_the_published_figures_beside(misread: Path) -> None:
    summary = _score(str(misread), "--choice-rule", "strict")
    assert summary["choice_rule"] == "strict"
    assert (summary["extracted"], summary["consistency_rate"]) == (5, 1.0)
    assert summary["letter_in_word"] == 3  # still listed: they are what SubEval's rule misreads
    published = summary["other_reading"]
    assert published["rule"] == "subeval" and published["extracted"] == 7
    report = (
        CliRunner()
        .invoke(app, ["score", "pairwise", str(misread), "--resamples", "0", "--choice-rule", "strict"])
        .output
    )
    assert "| choice extracted | 7 / 8 (87.50%) | 5 / 8 (62.50%) |" in report  # SubEval's column first


def test_unknown_choice_rule_is_refused(misread: Path) -> None:
    result = CliRunner().invoke(app, ["score", "pairwise", str(misread), "--choice-rule", "loose"])
    assert isinstance(result.exception, ConfigError)  # exit 2 on the command line
    assert "'subeval' or 'strict'" in str(result.exception)


def test_no_strict_block_when_the_readings_agree(tmp_path: Path) -> None:
    for source in (
        RECORD,  # the bundled DevBench run
        _write(
            tmp_path / "record_judge-x_2.tsv",
            [
                _record("q1", "ref", "model", "Choice: B.\nReason: \n1. Both are fine, B is complete."),
                _record("q1", "model", "ref", "Choice: A\nReason: \nChoice: Definitely A"),
            ],
        ),
    ):
        summary = _score(str(source))
        assert summary["letter_in_word"] == 0 and summary["letter_in_word_records"] == []
        assert summary["readings_differ"] == 0 and summary["other_reading"] is None
        report = CliRunner().invoke(app, ["score", "pairwise", str(source), "--resamples", "0"]).output
        assert "Letters that begin a longer word, read by SubEval's rule: 0." in report
        assert BESIDE not in report and LISTED not in report


def test_judged_run_summary_and_html_report_carry_the_reading(tmp_path: Path) -> None:
    table = DEVBENCH / "examples" / "DevBench_projects_example.xlsx"
    judged = CliRunner().invoke(
        app, ["judge", "pairwise", str(table), "--out", str(tmp_path), "--no-progress", "--resamples", "0"]
    )
    assert judged.exit_code == 0, judged.output
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert summary["choice_rule"] == "subeval" and summary["letter_in_word"] == 0
    assert summary["other_reading"] is None
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "letter_in_word" in html and "Letters that begin a longer word" in html


def test_pairwise_gold_json_carries_the_reading(tmp_path: Path) -> None:
    pairs = DATA / "llmbar" / "natural_sample.json"
    run = tmp_path / "run"
    judged = CliRunner().invoke(
        app, ["judge", "pairwise-gold", str(pairs), "--out", str(run), "--no-progress"]
    )
    assert judged.exit_code == 0, judged.output
    result = CliRunner().invoke(app, ["score", "pairwise-gold", str(run), "--json", "--resamples", "0"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["choice_rule"] == "subeval" and summary["letter_in_word"] == 0
    assert summary["letter_in_word_records"] == [] and summary["other_reading"] is None


def test_pairs_agreement_lists_misreadings_and_the_strict_agreement() -> None:
    pairs = pd.DataFrame(
        {
            "id": ["p1", "p2"],
            "question": ["Q1", "Q2"],
            "response_1": ["r1", "r1"],
            "response_2": ["r2", "r2"],
            "reference": ["", ""],
            "label": ["1", "2"],
            "dataset": ["d", "d"],
        }
    )
    texts = {
        "p1|12": "Choice: A\nReason: x",
        "p1|21": "Choice: Both are worse than 2, so B",  # means B (response 1 wins), reads B anyway
        "p2|12": "Choice: B\nReason: x",
        "p2|21": "Choice: Definitely A\nReason: x",  # means A (response 2 wins), reads D
    }
    result = pairs_agreement(judged_pairs(pairs, texts, 4), num_options=4, n_resamples=0)
    summary = agreement_summary(result)
    assert [entry["id"] for entry in summary["letter_in_word_records"]] == ["p1|21", "p2|21"]
    assert summary["readings_differ"] == 2
    assert summary["agreement"][0]["accuracy"] == 0.5  # p2 read as (B, D): inconsistent, a tie
    strict = summary["other_reading"]
    assert strict["rule"] == "strict" and strict["agreement"][0]["complete"] == 0
    report = pairs_agreement_markdown(result)
    assert BESIDE in report and LISTED in report and '| p2\\|21 | n/a | D | n/a | "Definitely A" |' in report


@pytest.mark.parametrize(
    ("text", "subeval", "strict", "in_word"),
    [
        ("Choice: Definitely A", "D", None, True),
        ("Choice: Both are good, so C", "B", None, True),
        ("Choice: After weighing both, B", "A", None, True),
        ("Choice: A", "A", "A", False),
        ("Choice: (B)", None, "B", False),
        ("Choice: A.", "A", "A", False),
        ("Choice: **C**", None, "C", False),
        ("Choice: A's answer", "A", None, True),
        ("Choice: D1", "D", None, True),
        ("选择：B\n理由：回答二更好", "B", "B", False),
        ("Choice: B\nReason: Response 1 wrote 'Choice: Definitely A'.", "B", "B", False),
        ("Choice: Definitely B\nChoice: B", None, "B", False),  # SubEval's rule: D and B, ambiguous
        ("Reason: both fine.\nChoice: C", "C", "C", False),
    ],
)
def test_both_rules(text: str, subeval: str | None, strict: str | None, in_word: bool) -> None:
    assert extract_choice(text, 4) == subeval
    assert extract_choice(text, 4, rule="strict") == strict
    reading = read_choice(text, 4)
    assert (reading.subeval, reading.strict, reading.letter_in_word) == (subeval, strict, in_word)
