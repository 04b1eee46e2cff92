"""Pairwise juries end to end against loopback servers: votes on each juror's verdict per pair
after the swap rule.

Three simulated jurors answer a known choice per pair and order (``pairwise_simulation``): two
that prefer the gold response with probability 0.8 and 0.6 (otherwise at random per order), and
one that always picks the first slot, whose verdict after the swap rule is a tie on every pair.
Every juror's verdict, the jury's, its accuracy and Fleiss' κ are computed here from those
answers and compared with what jurist reports.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from jury_simulation import fleiss_kappa, juror_line, pairwise_agreement, write_jury
from pairwise_simulation import PairJuror, gold_of, juror_verdict, majority, write_pairs

from jurist import verbs
from jurist.runner import RESULTS_DB, ResultStore
from jurist.testing import OpenAICompatibleServer
from support import loopback_config, run_cli

JURORS = (("fair-a", 0.8), ("fair-b", 0.6), ("first", -1.0))
PAIRS = 40


@pytest.fixture(scope="module")
def servers():
    started = {name: OpenAICompatibleServer(PairJuror(name, p)).start() for name, p in JURORS}
    yield started
    for server in started.values():
        server.stop()


@pytest.fixture(scope="module")
def setup(tmp_path_factory, servers):
    folder = tmp_path_factory.mktemp("pairwise-jury")
    data = write_pairs(folder, PAIRS)
    lines = [juror_line(name, servers[name].base_url, folder / "cache") for name, _ in JURORS]
    return folder, data, write_jury(folder / "panel.yaml", lines)


def votes_of(jurors=JURORS, count: int = PAIRS) -> list[list[str]]:
    """Each pair's verdicts after the swap rule, in juror order."""
    return [[juror_verdict(name, p, pair) for name, p in jurors] for pair in range(count)]


def accuracy(verdicts: list[str]) -> float:
    return sum(v == gold_of(i) for i, v in enumerate(verdicts)) / len(verdicts)


def test_a_pairwise_jury_votes_on_each_jurors_verdict_after_the_swap_rule(setup, servers):
    folder, data, jury = setup
    run = verbs.judge("pairwise", data, jury, out=folder / "run", progress=False)
    votes = votes_of()
    expected = [majority(row) for row in votes]
    assert all(row[2] == "tie" for row in votes)  # the first-slot juror: a tie on every pair
    assert {"1", "2", "tie"} <= set(expected)

    # The jury's verdict per pair and its accuracy, by the pairwise task's own scoring.
    table = run.set_index("id")
    assert [table.loc[f"p{i}", "verdict"] for i in range(PAIRS)] == expected
    pooled = run.summary["agreement"][-1]
    assert pooled["pairs"] == pooled["complete"] == PAIRS
    assert pooled["accuracy"] == pytest.approx(accuracy(expected))
    # A tie with two options is an inconsistent pair: the jury's consistency is its decisive share.
    assert pooled["consistency_rate"] == pytest.approx(sum(v != "tie" for v in expected) / PAIRS)
    assert run.summary["items"] == run.summary["ok"] == 2 * PAIRS

    section = run.summary["jury"]
    assert section["votes"]["unit"] == "pair" and section["votes"]["items"] == PAIRS
    no_winner = sum(len(set(row)) == 3 for row in votes)  # 1, 2 and tie: no majority
    assert section["votes"]["no_decision"] == no_winner > 0
    agreement = section["agreement"]
    assert agreement["items"] == PAIRS
    assert agreement["fleiss_kappa"] == pytest.approx(fleiss_kappa(votes))
    assert agreement["pairwise_agreement"] == pytest.approx(pairwise_agreement(votes))
    assert agreement["fleiss_kappa_low"] <= agreement["fleiss_kappa"] <= agreement["fleiss_kappa_high"]
    for index, member in enumerate(section["members"]):
        own = [row[index] for row in votes]
        assert member["gold"]["rate"] == pytest.approx(accuracy(own))
    assert section["aggregated"]["gold"]["rate"] == pytest.approx(accuracy(expected))
    assert json.loads(table.loc["p0", "jury_votes"]) == dict(
        zip(("fair-a", "fair-b", "first"), votes[0], strict=True)
    )
    report = (folder / "run" / "report.md").read_text(encoding="utf-8")
    assert f"{no_winner} without a winning verdict, given 'tie'" in report

    # Run again: every juror resumes, the jury is rebuilt from their runs, and no model is asked.
    before = [server.requests for server in servers.values()]
    again = verbs.judge("pairwise", data, jury, out=folder / "run", progress=False)
    assert [server.requests for server in servers.values()] == before
    assert list(again.set_index("id").loc[[f"p{i}" for i in range(PAIRS)], "verdict"]) == expected


def test_a_tied_vote_gives_a_tie_kept_from_both_jurors_answers(setup, servers):
    folder, data, _ = setup
    duo = [juror_line(name, servers[name].base_url, folder / "cache") for name, _ in JURORS[:2]]
    jury = write_jury(folder / "duo.yaml", duo, aggregate="plurality")
    run = verbs.judge("pairwise", data, jury, out=folder / "duo", progress=False)
    votes = votes_of(JURORS[:2])
    expected = [a if a == b else "tie" for a, b in votes]
    assert list(run.set_index("id").loc[[f"p{i}" for i in range(PAIRS)], "verdict"]) == expected
    assert run.summary["agreement"][-1]["accuracy"] == pytest.approx(accuracy(expected))

    # A pair voted 1 by one juror and 2 by the other keeps one's first order and the other's
    # swapped order: both picked slot A, so the task's swap rule reads a tie.
    split = next(i for i, (a, b) in enumerate(votes) if {a, b} == {"1", "2"})
    with ResultStore(folder / "duo" / RESULTS_DB) as store:
        kept = {r.id: r.output for r in store.iter_results() if r.id.startswith(f"p{split}|")}
    first, second = kept[f"p{split}|12"], kept[f"p{split}|21"]
    assert (first["choice"], second["choice"]) == ("A", "A")
    assert first["jury"]["tie"] and first["jury"]["verdict"] == "tie"
    voted_1 = "fair-a" if votes[split][0] == "1" else "fair-b"
    assert first["jury"]["source"] == voted_1 and second["jury"]["source"] != voted_1
    assert first["jury"]["votes"] == dict(zip(("fair-a", "fair-b"), votes[split], strict=True))


def test_calibrate_gives_rows_for_the_pairwise_jury_and_each_juror_without_asking_again(setup, servers):
    folder, data, jury = setup
    verbs.judge("pairwise", data, jury, out=folder / "run", progress=False)
    solo = folder / "solo.yaml"  # the same judge as juror fair-a, on its own
    solo.write_text(
        f"model: openai/fair-a\napi_base: {servers['fair-a'].base_url}\napi_key_env: JURIST_TEST_API_KEY\n"
        f"cache_dir: {folder / 'cache'}\nconcurrency: 8\nretry_max_wait: 0.2\ntimeout: 5\n",
        encoding="utf-8",
    )
    before = [server.requests for server in servers.values()]
    out = folder / "calibration"
    args = ["calibrate", "pairwise", "--gold", str(data), "-c", str(jury), "-c", str(solo), "--out", str(out)]
    assert run_cli([*args, "--resamples", "50", "--format", "csv"]) == 0
    leaderboard = pd.read_csv(out / "leaderboard.csv").set_index("judge")
    votes = votes_of()
    assert leaderboard.loc["panel", "accuracy"] == pytest.approx(accuracy([majority(row) for row in votes]))
    for index, (name, _) in enumerate(JURORS):
        assert leaderboard.loc[f"panel/{name}", "accuracy"] == pytest.approx(
            accuracy([r[index] for r in votes])
        )
    assert leaderboard.loc["solo", "accuracy"] == leaderboard.loc["panel/fair-a", "accuracy"]
    assert leaderboard.loc["panel", "items"] == PAIRS
    assert leaderboard.loc["panel/first", "consistency"] == 0.0
    # The jurors' answers come from the response cache the jury's run filled.
    assert [server.requests for server in servers.values()] == before


def test_repeats_of_a_pairwise_judge_vote_on_each_repeats_verdict_after_the_swap_rule(tmp_path):
    count = 30
    asks = (("fair-a", 0.8), ("first", -1.0), ("fair-b", 0.6))  # what the judge's 1st, 2nd, 3rd ask says
    juror = PairJuror("judge", 1.0, flips=asks)
    with OpenAICompatibleServer(juror) as server:
        data = write_pairs(tmp_path, count)
        config = loopback_config(server.base_url, tmp_path / "cache")
        run = verbs.judge("pairwise", data, config, out=tmp_path / "x3", progress=False, repeats=3)
        assert server.requests == 3 * 2 * count
    assert all(asked == 3 for asked in juror.asked.values())
    votes = votes_of(asks, count)
    expected = [majority(row) for row in votes]
    assert list(run.set_index("id").loc[[f"p{i}" for i in range(count)], "verdict"]) == expected
    consistency = run.summary["repeats"]["self_consistency"]
    assert consistency["items"] == count
    assert consistency["fleiss_kappa"] == pytest.approx(fleiss_kappa(votes))
    # Each repeat is an ordinary pairwise run of what that ask said: the second always picked
    # slot A, so none of its pairs is consistent.
    second = json.loads((tmp_path / "x3" / "repeats" / "2" / "summary.json").read_text(encoding="utf-8"))
    assert second["agreement"][-1]["consistency_rate"] == 0.0
    assert run.summary["agreement"][-1]["accuracy"] == pytest.approx(accuracy(expected))
