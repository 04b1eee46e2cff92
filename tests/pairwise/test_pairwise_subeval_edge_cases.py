"""SubEval runs as published: self-comparisons, empty groups (0.0), SubEval's column names and
row order, first-line error positions.

The expected numbers come from ``subeval_reference`` below: a direct transcription of how
SubEval's published scoring (DevBench ``llm_judge/subeval/subjective``: ``find_inconsistent``,
``calc_win_rate``, ``calculate_winrate_new``) counts, written for these tests from its
description and independent of jurist's metrics code.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pandas as pd
import pytest

from jurist.datasets.pairwise.tables import read_record_table
from jurist.errors import InputError
from jurist.metrics.pairwise.subeval import consistent_rows, win_rates_with_ties
from jurist.tasks.pairwise.report import subeval_log, write_pairwise_scores
from jurist.verbs import score
from support import run_cli

DATA = Path(__file__).parents[1] / "data" / "devbench-subeval"
RUN = DATA / "output" / "DevBench_projects_example_infer_input_2680_record0_gpt-4-1106-preview_2"
RECORD = RUN / "record_gpt-4-1106-preview_2.tsv"
DERIVED = DATA / "derived" / "record_gpt-4-1106-preview_2.tsv"
JUDGE, REF, M = "gpt-4-1106-preview", "gpt-3.5-turbo-1106", "gpt-4-0125-preview"
CONSISTENT = {("A", "B"), ("B", "A"), ("C", "C"), ("D", "D")}


def subeval_reference(path: Path) -> dict[str, object]:
    """SubEval's counts for a record file, computed the plain way SubEval describes them."""
    data = pd.read_csv(path, sep="\t", keep_default_na=False)
    data = data[data[JUDGE] != "EM"].copy()
    found = [re.findall(r"Choice: ([ABCD])", text) for text in data[JUDGE]]
    data["extracted"] = [f[0] if f else None for f in found]
    data = data[data["extracted"].notna()]
    last = dict(zip(data["cmp_index"], data["extracted"], strict=True))  # later rows win
    consistent = []
    for key in data["cmp_index"]:
        index, a, b = key.split(";")
        swapped = f"{index};{b};{a}"
        consistent.append(swapped not in last or (last[key], last[swapped]) in CONSISTENT)
    data["consistent"] = consistent
    # old version: per group, over consistent rows; 0 where a model has nothing
    cons = data[data["consistent"]]
    tasks = sorted({t for t in cons["task"]})
    groups = {"Overall-lang": None, "EN": None, **{t.split("-")[0]: t.split("-")[0] for t in tasks}}
    groups.update({t: t for t in tasks})
    halfdraw: dict[tuple[str, str], float] = {}
    for column, needle in groups.items():
        rows = cons if needle is None else cons[[needle in t for t in cons["task"]]]
        win: dict[str, float] = defaultdict(float)
        total: dict[str, float] = defaultdict(float)
        draw: dict[str, float] = defaultdict(float)
        for a, b, o in zip(rows["A"], rows["B"], rows["extracted"], strict=True):
            for model, other, won in ((a, b, o == "A"), (b, a, o == "B")):
                if other == REF:
                    win[model] += won
                    draw[model] += o in ("C", "D")
                    total[model] += 1
        for model in {*cons["A"], *cons["B"]} - {REF}:
            halfdraw[(column, model)] = (win[model] + draw[model] / 2) / total[model] if total[model] else 0.0
    # new version: inconsistent = tie, aggregated by the metric after the index's last '-'
    cnt: dict[str, float] = defaultdict(float)
    tie: dict[str, float] = defaultdict(float)
    tot: dict[str, float] = defaultdict(float)
    for key, a, b, o, ok in zip(
        data["cmp_index"], data["A"], data["B"], data["extracted"], data["consistent"], strict=True
    ):
        metric = key.split(";")[0].rsplit("-", 1)[1]
        forward, backward = f"{metric};{a};{b}", f"{metric};{b};{a}"
        if ok and o == "A":
            cnt[forward] += 1
        if ok and o == "B":
            cnt[backward] += 1
        if not ok or o == "C":
            tie[forward] += 1
            tie[backward] += 1
        tot[forward] += 1
        tot[backward] += 1
    with_tie = {k: (cnt[k] + tie[k] / 2) / tot[k] if tot[k] else 0 for k in tot if REF in k}
    without_tie = {k: cnt[k] / (tot[k] - tie[k]) if tot[k] - tie[k] else 0 for k in tot if REF in k}
    return {
        "extracted": len(data),
        "consistent": int(data["consistent"].sum()),
        "halfdraw": halfdraw,
        "with_tie": with_tie,
        "without_tie": without_tie,
    }


@pytest.fixture(scope="module", params=[RECORD, DERIVED], ids=["bundled", "derived"])
def scored(request, tmp_path_factory):  # type: ignore[no-untyped-def]
    out = tmp_path_factory.mktemp("out")
    scores = score("pairwise", request.param, options={"resamples": 0, "out": out}).extra["scores"]
    return request.param, scores, out


def test_every_number_matches_subevals_counting(scored) -> None:  # type: ignore[no-untyped-def]
    path, scores, out = scored
    expected = subeval_reference(path)
    assert scores.counts.extracted == expected["extracted"]
    assert scores.consistency.consistent_rows == expected["consistent"]
    wide = pd.read_csv(out / "win+halfdraw.csv")
    got = {
        (column, model): value
        for model, row in wide.set_index("model").iterrows()
        for column, value in row.items()
    }
    assert got == pytest.approx(expected["halfdraw"])
    for name, key, column in (
        ("win_rate_with_tie.csv", "with_tie", "WinRateWithTie"),
        ("win_rate_without_tie.csv", "without_tie", "WinRateWithoutTie"),
    ):
        table = pd.read_csv(out / name)
        assert list(table.columns) == ["Metric;Model", column]
        assert dict(zip(table["Metric;Model"], table[column], strict=True)) == pytest.approx(expected[key])
        assert list(table["Metric;Model"]) == sorted(table["Metric;Model"])  # deterministic order


def test_derived_run_with_self_comparisons_and_an_empty_group(tmp_path: Path) -> None:
    # The bundled run plus the reference model against itself (SubEval writes EM: identical
    # answers, not judged) and two general comparisons whose swapped order contradicts the first.
    table = read_record_table(DERIVED)
    assert len(table.frame) == 12 and (table.frame["A"] == table.frame["B"]).sum() == 4
    scores = score("pairwise", DERIVED, options={"resamples": 0}).extra["scores"]
    log = subeval_log(scores)
    assert "Total comparisons: 12. Failed to response: 0" in log
    assert "Total comparisons: 12. Non exact matches:  8" in log
    assert "Extracted 8 answers from the responses (extraction success rate 100.00%)" in log
    assert "4 out of 8 answers are consistent. (A vs. B <-> B vs. A) The consistent rate is 50.00%" in log
    write_pairwise_scores(scores, tmp_path)
    without = pd.read_csv(tmp_path / "win_rate_without_tie.csv")
    # every general judgement is inconsistent: total − tie = 0, which SubEval writes as 0.0
    assert without.set_index("Metric;Model").loc[f"general;{M};{REF}", "WinRateWithoutTie"] == 0.0
    with_tie = pd.read_csv(tmp_path / "win_rate_with_tie.csv").set_index("Metric;Model")
    assert with_tie.loc[f"general;{M};{REF}", "WinRateWithTie"] == 0.5
    inconsistent = pd.read_csv(tmp_path / "inconsistent_cmp.tsv", sep="\t", keep_default_na=False)
    assert list(inconsistent.columns) == [
        "cmp_index",
        "question",
        "answer1",
        "answer2",
        "A",
        "B",
        "reference_answer",
        "evaluating_guidance",
        "task",
        JUDGE,
        "extracted",
    ]
    assert list(inconsistent["extracted"]) == ["B", "B", "B", "B"]
    lengths = pd.read_csv(tmp_path / "length_stats.csv")
    assert list(lengths["model"]) == [REF, M]  # first appearance, as SubEval lists them


def test_a_judged_self_comparison_counts_as_subeval_counts_it() -> None:
    # Both orders share one cmp_index: SubEval's lookup finds the last choice v, and every row
    # of that cmp_index is consistent exactly when (v, v) is, i.e. v is C or D.
    def rows(*choices: str) -> pd.DataFrame:
        return pd.DataFrame(
            [{"index": "q-general", "A": REF, "B": REF, "choice": c, "task": "x-general"} for c in choices]
        )

    assert list(consistent_rows(rows("A", "B"))) == [False, False]
    assert list(consistent_rows(rows("B", "C"))) == [True, True]
    assert list(consistent_rows(rows("D"))) == [True]
    table = win_rates_with_ties(rows("A", "B"), n_resamples=0).set_index(["metric", "model", "opponent"])
    # both directions land on one key: two ties, a total of four
    assert table.loc[("general", REF, REF), ["win", "tie", "total"]].tolist() == [0, 4, 4]
    with pytest.raises(ValueError, match="more than once"):
        consistent_rows(rows("A", "B", "A"))


def test_an_error_in_a_multi_line_record_names_its_first_line(tmp_path: Path) -> None:
    bad = tmp_path / "record_judge_2.tsv"
    bad.write_text(
        "cmp_index\tquestion\tA\tB\tjudge\n"
        'q1;m1;m2\t"one\ntwo"\tm1\tm2\t"Choice: A\nReason: x"\n'
        'q2;m1;m3\t"line 3\nline 4\nline 5"\tm1\tm2\t"Choice: B\nReason: y"\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError) as caught:
        read_record_table(bad)
    assert (caught.value.line, caught.value.field) == (5, "cmp_index")


def test_cli_scores_the_derived_run(tmp_path: Path) -> None:
    assert run_cli(["score", "pairwise", str(DERIVED), "--out", str(tmp_path), "--resamples", "0"]) == 0
    assert "50.00%" in (tmp_path / "log.txt").read_text(encoding="utf-8")
