"""Trying a judge on a few rows: ``--limit N`` (the first N) and ``--sample N --seed S`` (a
seeded random sample), the same for one judge, repeats and the Python verb; recorded in the
manifest, resumed only with the same selection, scored on the rows judged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import CLAIMS_TASK, run_cli, true_verdict

import jurist
from jurist.testing import OpenAICompatibleServer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SCORE_TASK = str(EXAMPLES / "support-answers" / "task.yaml")
SCORE_DATA = str(EXAMPLES / "support-answers" / "answers.csv")
PAIR_TASK = str(EXAMPLES / "llmbar-pairwise" / "task.yaml")
PAIR_DATA = str(EXAMPLES / "llmbar-pairwise" / "pairs.json")


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _ids(run: Path) -> list[str]:
    return [json.loads(line)["id"] for line in (run / "results.jsonl").read_text().splitlines()]


def test_limit_judges_the_first_rows_and_scores_their_gold_only(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["judge", SCORE_TASK, SCORE_DATA, "--out", str(out), "--no-progress", "--limit", "4"]
    assert run_cli(args) == 0
    assert capsys.readouterr().out.startswith("4 items: 4 scored, 0 failed")
    assert _ids(out) == ["t01", "t02", "t03", "t04"]
    manifest = _json(out / "manifest.json")
    assert manifest["dataset"]["selection"] == {"limit": 4}
    assert manifest["total"] == 4
    gold = _json(out / "summary.json")["gold"]
    assert (gold["rows"], gold["scored"], gold["not_scored"]) == (4, 4, 0)
    # The same selection resumes (nothing judged again); another is refused, exit 2.
    assert run_cli(args) == 0
    assert "judged now 0 (4 already judged)" in capsys.readouterr().out
    assert run_cli(["judge", SCORE_TASK, SCORE_DATA, "--out", str(out), "--no-progress"]) == 2
    assert "run of --limit 4, now every row" in capsys.readouterr().err


def test_sample_is_seeded_and_keeps_both_orders_of_a_comparison(tmp_path, capsys):
    runs = []
    for name, seed in (("a", "7"), ("b", "7"), ("c", "8")):
        out = tmp_path / name
        args = ["judge", PAIR_TASK, PAIR_DATA, "--out", str(out), "--no-progress", "--sample", "3"]
        assert run_cli([*args, "--seed", seed]) == 0
        runs.append(_ids(out))
    capsys.readouterr()
    assert runs[0] == runs[1] != runs[2]
    for ids in runs:
        pairs = {item.rsplit("|", 1)[0] for item in ids}
        assert len(pairs) == 3 and len(ids) == 6  # three comparisons, both orders of each
    manifest = _json(tmp_path / "a" / "manifest.json")
    assert manifest["dataset"]["selection"] == {"sample": 3, "seed": 7}
    assert _json(tmp_path / "a" / "summary.json")["gold"]["rows"] == 3
    args = ["judge", PAIR_TASK, PAIR_DATA, "--out", str(tmp_path / "a"), "--no-progress", "--sample", "3"]
    assert run_cli(args) == 2  # seed 0 is another sample
    assert "--sample 3 --seed 7, now --sample 3 --seed 0" in capsys.readouterr().err


@pytest.fixture(scope="module")
def server():
    with OpenAICompatibleServer(true_verdict) as started:
        yield started


def test_selection_reaches_repeats_and_dry_run(server, tmp_path, capsys):
    task = tmp_path / "claims.yaml"
    task.write_text(CLAIMS_TASK, encoding="utf-8")
    data = tmp_path / "claims.csv"
    data.write_text("id,claim,gold\n" + "".join(f"c{i},claim {i},true\n" for i in range(6)), encoding="utf-8")
    config = tmp_path / "judge.yaml"
    config.write_text(
        f"model: openai/loopback\napi_base: {server.base_url}\napi_key_env: JURIST_TEST_API_KEY\n"
        f"cache_dir: {tmp_path / 'cache'}\nretry_max_wait: 0.2\n",
        encoding="utf-8",
    )
    out = tmp_path / "panel"
    base = ["judge", str(task), str(data), "-c", str(config), "--out", str(out), "--no-progress"]
    base += ["--limit", "3"]
    assert run_cli([*base, "--repeats", "2", "--dry-run"]) == 0
    assert capsys.readouterr().out.count("0 of 3 item(s) recorded") == 2
    assert run_cli([*base, "--repeats", "2"]) == 0
    capsys.readouterr()
    assert _json(out / "summary.json")["items"] == 3
    for member in ("1", "2"):
        manifest = _json(out / "repeats" / member / "manifest.json")
        assert manifest["dataset"]["selection"] == {"limit": 3}
        assert _ids(out / "repeats" / member) == ["c0", "c1", "c2"]
    assert _json(out / "manifest.json")["dataset"]["selection"] == {"limit": 3}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--limit", "2", "--sample", "2"], "give --limit or --sample, not both"),
        (["--seed", "2"], "--seed draws a --sample"),
        (["--limit", "0"], "--limit"),
    ],
)
def test_bad_selections_are_refused(args, message, tmp_path, capsys):
    out = tmp_path / "run"
    assert run_cli(["judge", SCORE_TASK, SCORE_DATA, "--out", str(out), "--no-progress", *args]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_a_recipe_refuses_a_selection(tmp_path, capsys):
    out = tmp_path / "rgb"
    data = Path(__file__).resolve().parents[1] / "data" / "rgb"
    assert run_cli(["judge", "rgb", str(data), "--out", str(out), "--no-progress", "--limit", "2"]) == 2
    assert "judged as several runs; --limit and --sample cannot select its rows" in capsys.readouterr().err
    assert not out.exists()


def test_python_verb_takes_limit_and_sample(tmp_path):
    judged = jurist.judge(SCORE_TASK, SCORE_DATA, out=tmp_path / "run", limit=2, progress=False)
    assert list(judged["id"]) == ["t01", "t02"]
    sampled = jurist.judge(SCORE_TASK, SCORE_DATA, out=tmp_path / "s", sample=3, seed=1, progress=False)
    assert len(sampled) == 3
    assert sampled.summary["run"]["dataset"]["selection"] == {"sample": 3, "seed": 1}


def test_blank_inputs_are_counted_and_warned_about(tmp_path, capsys):
    data = tmp_path / "answers.csv"
    rows = [("t1", "How?", "Click reset."), ("t2", "Why?", "   "), ("t3", " ", ""), ("t4", "What?", "Yes.")]
    data.write_text(
        "ticket,question,answer,human\n" + "".join(f'{a},"{b}","{c}",3\n' for a, b, c in rows),
        encoding="utf-8",
    )
    out = tmp_path / "run"
    assert run_cli(["judge", SCORE_TASK, str(data), "--out", str(out), "--no-progress"]) == 0
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: 2 items have a blank 'answer'; 1 item has a blank 'question' (judged as given)"
    ]
    assert _json(out / "summary.json")["blank_inputs"] == {"answer": 2, "question": 1}
