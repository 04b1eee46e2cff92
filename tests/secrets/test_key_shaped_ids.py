"""Key-shaped item ids stay distinct and joinable (issue 21, item 11).

The redaction used to turn every key-shaped string into the one ``[REDACTED]``, so the
items ``sk-test-aaaaaaaaaa1`` and ``sk-test-bbbbbbbbbb2`` became one id in every export and
could no longer be joined to their data or labels. Now a key-shaped string becomes
``[REDACTED:<hash>]`` (the same for the same string everywhere), while the configured key,
used as an id, is still written nowhere (not even hashed): ``results.sqlite`` keeps the
data's own ids (the key of resumes and joins) except a configured secret.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pandas as pd

from jurist.redaction import REDACTED, redact, shape_token
from jurist.testing import OpenAICompatibleServer, last_user_message
from support import run_cli, write_jsonl

FIRST = "sk-" + "test-aaaaaaaaaa1"  # two key-shaped ids, built at run time
SECOND = "sk-" + "test-bbbbbbbbbb2"
CONFIGURED = "cfg-" + "key-5e6f7a8b9c0d"  # the judge's API key, also used as an id

TASK = """\
name: toy-sentiment
instructions: Say whether the text is positive or negative.
inputs: [text]
output:
  kind: label
  labels: [pos, neg]
  reasoning: false
gold: gold
"""


def sentiment(body: dict[str, Any]) -> str:
    verdict = "pos" if "good" in last_user_message(body) else "neg"
    return f"[[ ## verdict ## ]]\n{verdict}\n\n[[ ## completed ## ]]"


def _files_holding(root: Path, needle: str, *, skip: tuple[str, ...] = ()) -> list[str]:
    return sorted(
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.is_file() and path.name not in skip and needle.encode() in path.read_bytes()
    )


def test_key_shaped_ids_stay_distinct_and_join_their_labels(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("JURIST_TEST_API_KEY", CONFIGURED)
    ids = [FIRST, SECOND, "plain-3", CONFIGURED]
    texts = ["a good film", "a bad film", "good enough", "dull"]
    data = write_jsonl(
        tmp_path / "data.jsonl",
        [{"id": i, "text": t, "gold": "neg"} for i, t in zip(ids, texts, strict=True)],
    )
    task = tmp_path / "task.yaml"
    task.write_text(TASK, encoding="utf-8")
    run = tmp_path / "runs" / "run"
    shown = [shape_token(FIRST), shape_token(SECOND), "plain-3", REDACTED]
    assert len(set(shown)) == 4 and redact(FIRST) == shown[0] and redact(SECOND) == shown[1]

    with OpenAICompatibleServer(sentiment) as server:
        config = tmp_path / "judge.yaml"
        config.write_text(
            json.dumps(
                {
                    "model": "openai/loopback-judge",
                    "api_base": server.base_url,
                    "api_key_env": "JURIST_TEST_API_KEY",
                    "cache_dir": str(tmp_path / "cache"),
                    "timeout": 5,
                }
            ),
            encoding="utf-8",
        )
        judge = ["judge", str(task), str(data), "--out", str(run), "--config", str(config), "--no-progress"]
        assert run_cli(judge) == 0
        assert server.requests == 4
        assert run_cli(judge) == 0  # resumed: every item, the configured-key id too, is skipped
        assert server.requests == 4

    # Every export shows the two key-shaped ids as two distinct ids, the same ones everywhere.
    results = [json.loads(line) for line in (run / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [row["id"] for row in results] == shown
    assert pd.read_csv(run / "items.csv")["id"].tolist() == shown
    assert pd.read_parquet(run / "items.parquet")["id"].tolist() == shown
    html = (run / "report.html").read_text(encoding="utf-8")
    assert shown[0] in html and shown[1] in html
    # The data's ids are the store's join key; the configured key is written nowhere, not even hashed.
    with sqlite3.connect(run / "results.sqlite") as db:
        assert sorted(row[0] for row in db.execute("SELECT id FROM results")) == sorted(
            [FIRST, SECOND, "plain-3", REDACTED]
        )
    assert _files_holding(tmp_path / "runs", FIRST, skip=("results.sqlite",)) == []
    assert _files_holding(tmp_path / "runs", CONFIGURED) == []
    assert _files_holding(tmp_path / "runs", shape_token(CONFIGURED)) == []

    # Labels set in the viewer under the shown ids join back to the data's rows.
    from jurist.view.review_pages import set_label
    from jurist.view.run_pages import item_page
    from jurist.view.viewer import Viewer

    viewer = Viewer(tmp_path / "runs")
    set_label(viewer, "run", shown[0], "pos", "ann")
    set_label(viewer, "run", shown[1], "pos", "bob")
    page = item_page(viewer, "run", shown[1])
    assert page["detail"] is not None and page["detail"].status == "ok"
    assert [record.label for record in page["label_history"]] == ["pos"]
    gold = tmp_path / "gold.jsonl"
    assert run_cli(["labels", "export", str(run), "--out", str(gold)]) == 0
    rows = {row["text"]: row for row in map(json.loads, gold.read_text(encoding="utf-8").splitlines())}
    assert {text: (row["id"], row["gold"]) for text, row in rows.items()} == {
        "a good film": (shown[0], "pos"),
        "a bad film": (shown[1], "pos"),
        "good enough": ("plain-3", "neg"),
        "dull": (REDACTED, "neg"),
    }
    capsys.readouterr()
    assert run_cli(["labels", "list", str(run)]) == 0
    listed = [line.split("\t")[:2] for line in capsys.readouterr().out.splitlines()]
    assert listed == [[shown[0], '"pos"'], [shown[1], '"pos"']]
