"""Repeats and score juries end to end against loopback servers.

The noisy judge is right with probability p on each request and logs what it said, so the
self-consistency jurist reports is checked against the answers the server actually gave.
"""

from __future__ import annotations

import json
import re
import statistics

import pytest
from jury_simulation import (
    BOOL_TASK,
    SCORE_TASK,
    Grader,
    NoisyJudge,
    claim_rows,
    fleiss_kappa,
    grader_says,
    juror_line,
    pairwise_agreement,
    task_file,
    write_claims,
    write_jury,
)

from jurist import verbs
from jurist.errors import ConfigError
from jurist.metrics.annotators import krippendorff_alpha_interval
from jurist.testing import OpenAICompatibleServer
from support import loopback_config, write_jsonl


def test_repeats_report_the_self_consistency_of_the_answers_given_and_repeat_1_hits_the_cache(tmp_path):
    count, repeats = 60, 3
    noisy = NoisyJudge(0.75)
    with OpenAICompatibleServer(noisy) as server:
        task = task_file(tmp_path, BOOL_TASK, "claims")
        data = write_claims(tmp_path, count)
        config = loopback_config(server.base_url, tmp_path / "cache")
        plain = verbs.judge(task, data, config, out=tmp_path / "plain", progress=False)
        assert server.requests == count

        run = verbs.judge(task, data, config, out=tmp_path / "run", progress=False, repeats=repeats)
        # Repeat 1 has the cache key of the plain run: only repeats 2 and 3 reach the server.
        assert server.requests == count * repeats
    assert all(len(said) == repeats for said in noisy.given.values())
    texts = [row["claim"] for row in claim_rows(count)]
    answers = [noisy.given[text] for text in texts]
    consistency = run.summary["repeats"]["self_consistency"]
    assert consistency["items"] == count
    assert consistency["pairwise_agreement"] == pytest.approx(pairwise_agreement(answers))
    assert consistency["fleiss_kappa"] == pytest.approx(fleiss_kappa(answers))
    assert consistency["fleiss_kappa_low"] <= consistency["fleiss_kappa"] <= consistency["fleiss_kappa_high"]
    first = plain.set_index("id")["verdict"]
    repeat_1 = json.loads((tmp_path / "run" / "repeats" / "1" / "summary.json").read_text())
    assert repeat_1["agreement"]["accuracy"] == pytest.approx(plain.summary["agreement"]["accuracy"])
    verdicts = run.set_index("id")["verdict"]
    for index, said in enumerate(answers):
        assert bool(verdicts[f"c{index}"]) == (sum(said) >= 2)
        assert said[0] == bool(first[f"c{index}"])  # what the plain run was told came first
    assert "## repeats: 3 asks of" in (tmp_path / "run" / "report.md").read_text()


def test_repeats_of_the_offline_baseline_are_refused(tmp_path):
    task = task_file(tmp_path, BOOL_TASK, "claims")
    data = write_claims(tmp_path, 3)
    with pytest.raises(ConfigError, match="deterministic"):
        verbs.judge(task, data, None, out=tmp_path / "run", progress=False, repeats=2)
    assert not (tmp_path / "run").exists()


def test_a_jury_of_repeats_asks_each_juror_k_times(tmp_path):
    count = 24
    judges = {"noisy-a": NoisyJudge(0.8, seed=1), "noisy-b": NoisyJudge(0.7, seed=2)}
    servers = {name: OpenAICompatibleServer(judge).start() for name, judge in judges.items()}
    try:
        task = task_file(tmp_path, BOOL_TASK, "claims")
        data = write_claims(tmp_path, count)
        jury = write_jury(
            tmp_path / "pair.yaml",
            [juror_line(name, server.base_url, tmp_path / "cache") for name, server in servers.items()],
        )
        run = verbs.judge(task, data, jury, out=tmp_path / "run", progress=False, repeats=2)
        assert [server.requests for server in servers.values()] == [count * 2, count * 2]
    finally:
        for server in servers.values():
            server.stop()
    texts = [row["claim"] for row in claim_rows(count)]
    for member in run.summary["jury"]["members"]:
        said = [judges[member["name"]].given[text] for text in texts]
        assert member["self_consistency"]["pairwise_agreement"] == pytest.approx(pairwise_agreement(said))
        assert (tmp_path / "run" / "jurors" / member["name"] / "repeats" / "2" / "results.sqlite").is_file()
        # Each juror's verdict is the majority of its two answers: the first repeat when they split.
        juror = json.loads((tmp_path / "run" / "jurors" / member["name"] / "repeats.json").read_text())
        assert juror["votes"]["decided_by_order"] == sum(a != b for a, b in said)
    assert run.summary["jury"]["agreement"]["items"] == count


def grade_rows(count: int) -> list[dict]:
    return [{"id": f"g{i}", "answer": f"Answer number {i}.", "grade": 1 + i % 5} for i in range(count)]


def test_a_score_jury_takes_the_mean_or_the_median_of_its_graders(tmp_path):
    count = 30
    names = ("grader-a", "grader-b", "grader-c")
    servers = {name: OpenAICompatibleServer(Grader(name)).start() for name in names}
    try:
        task = task_file(tmp_path, SCORE_TASK, "grader")
        rows = grade_rows(count)
        data = write_jsonl(tmp_path / "grades.jsonl", rows)
        lines = [juror_line(name, server.base_url, tmp_path / "cache") for name, server in servers.items()]
        mean_jury = write_jury(tmp_path / "mean.yaml", lines, aggregate="mean")
        median_jury = write_jury(tmp_path / "median.yaml", lines, aggregate="median")
        means = verbs.judge(task, data, mean_jury, out=tmp_path / "mean", progress=False)
        for server in servers.values():
            server.reset_count()
        medians = verbs.judge(task, data, median_jury, out=tmp_path / "median", progress=False)
        # The same jurors in another jury: every answer comes from the shared response cache.
        assert [server.requests for server in servers.values()] == [0, 0, 0]
    finally:
        for server in servers.values():
            server.stop()
    scores = [[grader_says(name, row["answer"]) for name in names] for row in rows]
    gold = [row["grade"] for row in rows]
    mean_verdicts = means.set_index("id")["verdict"]
    median_verdicts = medians.set_index("id")["verdict"]
    for index, said in enumerate(scores):
        assert mean_verdicts[f"g{index}"] == pytest.approx(statistics.mean(said))
        assert median_verdicts[f"g{index}"] == statistics.median(said)
    mae = statistics.mean(abs(statistics.mean(s) - g) for s, g in zip(scores, gold, strict=True))
    assert means.summary["agreement"]["mae"] == pytest.approx(mae)
    agreement = means.summary["jury"]["agreement"]
    assert agreement["scale"] == "interval"
    assert agreement["krippendorff_alpha"] == pytest.approx(krippendorff_alpha_interval(scores))
    assert agreement["mean_item_sd"] == pytest.approx(statistics.mean(statistics.stdev(s) for s in scores))
    assert agreement["fleiss_kappa"] == pytest.approx(fleiss_kappa(scores))
    assert "Krippendorff's α (interval)" in (tmp_path / "mean" / "report.md").read_text()


def test_a_repeated_panel_run_reads_its_figures_from_the_figure_cache(tmp_path, monkeypatch):
    from jurist.report import plots

    with OpenAICompatibleServer(NoisyJudge(1.0)) as server:
        task = task_file(tmp_path, BOOL_TASK, "claims")
        data = write_claims(tmp_path, 6)
        config = loopback_config(server.base_url, tmp_path / "cache")
        verbs.judge(task, data, config, out=tmp_path / "first", progress=False, repeats=2)
        assert (tmp_path / "cache" / "figures.sqlite").is_file()
        drawn: list[object] = []
        real = plots.drawn_svgs
        monkeypatch.setattr(plots, "drawn_svgs", lambda figures: drawn.extend(figures) or real(figures))
        verbs.judge(task, data, config, out=tmp_path / "again", progress=False, repeats=2)
    assert drawn == []
    pages = [(tmp_path / out / "report.html").read_text(encoding="utf-8") for out in ("first", "again")]
    svgs = [re.findall(r"<svg .*?</svg>", page, re.S) for page in pages]
    assert svgs[0] and svgs[1] == svgs[0]
