"""SubEval's table format, run-directory names and the record and score writers."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from jurist.datasets.pairwise.tables import read_record_table
from jurist.tasks._results import write_files
from jurist.tasks.pairwise.report import (
    pretty_table,
    record_files,
    subeval_log,
    subeval_win_table,
    write_pairwise_scores,
)
from jurist.tasks.pairwise.scoring import score_records


def test_pretty_table_like_tabulate() -> None:
    frame = pd.DataFrame({"model": ["a-long-name", "b"], "mean": [384.5, 7.0]})
    assert pretty_table(frame) == "\n".join(
        [
            "+---+-------------+-------+",
            "|   |    model    | mean  |",
            "+---+-------------+-------+",
            "| 0 | a-long-name | 384.5 |",
            "| 1 |      b      |  7.0  |",
            "+---+-------------+-------+",
        ]
    )


def test_subeval_win_table_order_and_missing_groups() -> None:
    rows = []
    for model, rate in (("a", 0.5), ("b", 1.0), ("c", 0.5)):
        rows.append(
            {
                "group_kind": "overall",
                "group": "Overall",
                "model": model,
                "opponent": "ref",
                "win_half_tie_rate": rate,
            }
        )
    rows.append(
        {
            "group_kind": "task",
            "group": "t-general",
            "model": "b",
            "opponent": "ref",
            "win_half_tie_rate": 0.33333,
        }
    )
    wide = subeval_win_table(pd.DataFrame(rows), "ref", "win_half_tie_rate")
    assert list(wide["model"]) == ["b", "c", "a"]
    assert list(wide.index) == [1, 2, 0]
    assert list(wide.columns) == ["model", "Overall-lang", "EN", "t-general"]
    assert wide.loc[1, "t-general"] == 0.3333
    assert wide.loc[0, "t-general"] == 0.0  # no judgement in the group: 0.0, as SubEval writes it


def _records() -> pd.DataFrame:
    rows = []
    for index, (first, second) in {"q1": ("B", "A"), "q2": ("A", "A")}.items():
        rows.append(
            {
                "cmp_index": f"{index};ref;m",
                "answer1": "short",
                "answer2": "a longer answer",
                "A": "ref",
                "B": "m",
                "task": "x-general",
                "judge/v1": f"Choice: {first}\nReason: \n1. because",
            }
        )
        rows.append(
            {
                "cmp_index": f"{index};m;ref",
                "answer1": "a longer answer",
                "answer2": "short",
                "A": "m",
                "B": "ref",
                "task": "x-general",
                "judge/v1": f"Choice: {second}\nReason: \n1. because",
            }
        )
    return pd.DataFrame(rows)


def test_record_table_round_trips_through_every_format(tmp_path: Path) -> None:
    records = _records()
    files = record_files(records, judge="judge/v1", num_options=2)
    write_files(tmp_path, files)
    paths = [tmp_path / name for name in files]
    assert [p.name for p in paths] == [
        "record_judge_v1_2.tsv",
        "record_judge_v1_2.xlsx",
        "record_judge_v1_2.parquet",
    ]
    assert paths[0].read_text(encoding="utf-8").startswith('"cmp_index"\t"answer1"')
    for path in paths:
        table = read_record_table(path)
        assert (table.judge, table.num_options, len(table.frame)) == ("judge/v1", 2, 4)


def test_inconsistent_runs_log_the_consistent_rate(tmp_path: Path) -> None:
    scores = score_records(_records(), n_resamples=0, count=len, length_unit="characters")
    assert scores.reference_model == "ref"
    log = subeval_log(scores)
    assert "2 out of 4 answers are consistent. (A vs. B <-> B vs. A) The consistent rate is 50.00%\n" in log
    assert "Extracted 4 answers from the responses (extraction success rate 100.00%)\n" in log
    written = {p.name for p in write_pairwise_scores(scores, tmp_path)}
    assert {"consistent_cmp.tsv", "inconsistent_cmp.tsv", "summary.md", "win_rates.csv"} <= written
    assert len(pd.read_csv(tmp_path / "inconsistent_cmp.tsv", sep="\t")) == 2
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "position preference: first position wins when inconsistent | 2 / 2 (100.00%)" in summary
    assert "## Response length (characters)" in summary
