"""report.html is redacted part by part, and gives the page that redacting it whole gives.

The page's data is texts the run store redacted when it wrote them, joined with texts the
page composes; only the composed ones, the rows and the frame are scanned, and a configured
secret anywhere in the page, a composed text that would be redacted, or an output key that
names a setting sends the whole page through the redaction as before.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from report_runs import LoopbackRun, whole

from jurist.redaction import REDACTED, finds, names_setting, secret_in, shape_token
from jurist.report.html import render_run_html
from jurist.runner.store import RESULTS_DB, ResultStore, _detail, _record_of
from jurist.schemas import ItemResult, LMCall, Message

KEY = "sk-proj-abcdefghijklmnop1234567890"
SECRET = "a-late-secret-value-42"


def call(user: str, reply: str) -> LMCall:
    return LMCall(
        messages=[Message(role="system", content="Judge the answer."), Message(role="user", content=user)],
        replies=[reply],
        prompt_tokens=10,
        completion_tokens=2,
        cost=0.5,
        latency_s=0.25,
    )


def write_run(run: Path, results: list[ItemResult], inputs: list[dict | None]) -> pd.DataFrame:
    run.mkdir(parents=True)
    with ResultStore(run / RESULTS_DB, judge_fingerprint="f") as store:
        store.put_many(results, list(range(len(results))), inputs)
    return pd.DataFrame({"id": [r.id for r in results], "status": [r.status for r in results]})


def plain_results() -> tuple[list[ItemResult], list[dict | None]]:
    results = [
        ItemResult(
            id=f"case-{n}",
            status="ok",
            output={"verdict": n % 2 == 0, "explanation": f"Reason {n}.", "nested": {"keys": [["0a", "x"]]}},
            raw=[f"reply {n}"],
            calls=[call(f"Question {n}?", f"reply {n}")],
        )
        for n in range(4)
    ]
    results.append(
        ItemResult(
            id="bad", status="failed", error="no verdict", error_type="ParseError", raw=["?"], calls=[]
        )
    )
    inputs = [
        {"question": f"Question {n}?", "documents": [["0a", "A text."], ["0b", f"{n}"]]} for n in range(5)
    ]
    return results, inputs


def test_the_bundled_runs_give_the_page_redacting_it_whole_gives(
    ragbench_run: Path, mt_bench_run: Path, loopback_run: LoopbackRun
):
    for run in (ragbench_run, mt_bench_run, loopback_run.run_dir):
        assert render_run_html(run) == whole(run)


def test_a_run_with_nothing_to_redact_is_not_scanned_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import jurist.redaction as redaction

    results, inputs = plain_results()
    items = write_run(tmp_path / "run", results, inputs)
    scanned: list[int] = []
    original = redaction.redact

    def recording(text: str, **kwargs: object) -> str:
        scanned.append(len(text))
        return original(text, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(redaction, "redact", recording)
    page = render_run_html(tmp_path / "run", items=items)
    monkeypatch.undo()
    assert page == whole(tmp_path / "run", items=items)
    data = page.split('id="jurist-data">')[1].split("</script>")[0]
    assert len(data) > 1000 and 0 < sum(scanned) < len(page) - len(data) + 64  # all but the data


@pytest.mark.parametrize(
    "case",
    [
        "key-shaped id",
        "setting in an output",
        "key in an error type",
        "key in a role",
        "key in an input name",
    ],
)
def test_composed_texts_are_redacted_as_the_whole_page_was(case: str, tmp_path: Path):
    results, inputs = plain_results()
    if case == "key-shaped id":
        results[0] = results[0].model_copy(update={"id": KEY})
    elif case == "setting in an output":
        results[1] = results[1].model_copy(
            update={"output": {"api_key": "abcdefgh12345", "explanation": "x"}}
        )
    elif case == "key in an error type":
        results[4] = results[4].model_copy(update={"error_type": f"Bearer {KEY}"})
    elif case == "key in a role":
        results[2] = results[2].model_copy(
            update={"calls": [LMCall(messages=[Message(role=KEY, content="hi")], replies=["reply 2"])]}
        )
    else:
        inputs[3] = {KEY: "text"}
    items = write_run(tmp_path / "run", results, inputs)
    page = render_run_html(tmp_path / "run", items=items)
    assert page == whole(tmp_path / "run", items=items)
    assert KEY not in page
    if case == "setting in an output":
        assert "abcdefgh12345" not in page
        assert f'"api_key": "{REDACTED}"' in page
    elif case == "key in an error type":
        assert f"Bearer {REDACTED}" in page
    else:
        assert shape_token(KEY) in page


def test_a_secret_configured_after_the_run_was_written_is_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    results, inputs = plain_results()
    results[0] = results[0].model_copy(update={"raw": [f"the key is {SECRET}"]})
    items = write_run(tmp_path / "run", results, inputs)
    assert SECRET in render_run_html(tmp_path / "run", items=items)  # not a secret yet
    monkeypatch.setenv("REPORT_TEST_API_KEY", SECRET)
    page = render_run_html(tmp_path / "run", items=items)
    assert SECRET not in page and REDACTED in page
    assert page == whole(tmp_path / "run", items=items)


def test_the_rows_and_the_frame_are_scanned(tmp_path: Path):
    results, inputs = plain_results()
    items = write_run(tmp_path / "run", results, inputs)
    items["note"] = ["fine", f"token {KEY}", "fine", "fine", "fine"]  # a table given in memory
    page = render_run_html(tmp_path / "run", items=items)
    assert KEY not in page and shape_token(KEY) in page
    assert page == whole(tmp_path / "run", items=items)
    run = tmp_path / KEY  # the run's name is in the page's title and header
    run.mkdir()
    (tmp_path / "run" / RESULTS_DB).rename(run / RESULTS_DB)
    page = render_run_html(run, items=items)
    assert KEY not in page and page == whole(run, items=items)


def test_redaction_checks_for_composed_text(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("REPORT_TEST_TOKEN", SECRET)
    assert secret_in(f"x{SECRET}y") and not secret_in("nothing here")
    assert finds(f"key {KEY}") and finds(f"is {SECRET}") and not finds("plain words")
    for name in ("api_key", "X-API-KEY", "password", "Authorization", "my_client_secret"):
        assert names_setting(name), name
    for name in ("explanation", "all_relevant_sentence_keys", "prompt_tokens", "scores"):
        assert not names_setting(name), name


def test_item_records_are_what_item_details_give(tmp_path: Path, loopback_run: LoopbackRun):
    results, inputs = plain_results()
    write_run(tmp_path / "run", results, inputs)
    for db in (tmp_path / "run" / RESULTS_DB, loopback_run.run_dir / RESULTS_DB):
        with ResultStore(db) as store:
            ids = store.item_ids()
            records = list(store.item_records(ids))
            assert records == [_record_of(detail) for detail in store.item_details(ids)]
            assert [record.id for record in records] == ids


def test_a_row_of_other_types_is_read_through_the_models(tmp_path: Path):
    results, inputs = plain_results()
    write_run(tmp_path / "run", results, inputs)
    db = tmp_path / "run" / RESULTS_DB
    with sqlite3.connect(db) as connection:  # a cost written as an integer: the model makes it 1.0
        (calls,) = connection.execute("SELECT calls FROM results WHERE id = 'case-0'").fetchone()
        connection.execute(
            "UPDATE results SET calls = ? WHERE id = 'case-0'", (calls.replace('"cost": 0.5', '"cost": 1'),)
        )
    with ResultStore(db) as store:
        (record,) = store.item_records(["case-0"])
        (detail,) = store.item_details(["case-0"])
    assert record == _record_of(detail)
    assert record.calls is not None and record.calls[0]["cost"] == 1.0
    assert type(record.calls[0]["cost"]) is float
    assert _detail  # the one reading both share
