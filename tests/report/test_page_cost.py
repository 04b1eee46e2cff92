"""report.html does less work per item and writes the same page: each shortcut it takes gives
what the longer way gave (cells many rows share written once, the table's columns read whole,
the run store's texts read in one scan, each item's data written as it is read, a long
input's start collapsed for its row)."""

from __future__ import annotations

import json
import math
import random
import re
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from report_runs import whole

from jurist.redaction import shape_token
from jurist.report import html
from jurist.report.html import (
    _TEXT_KEY,
    _cell,
    _Column,
    _column_values,
    _loaded_json,
    _row_html,
    _Rows,
    _script_markup,
    render_run_html,
)
from jurist.report.inputs import input_text, snippet
from jurist.runner import store as store_module
from jurist.runner.store import RESULTS_DB, ResultStore, _parsed, _record_of
from jurist.schemas import ItemResult, LMCall, Message

KEY = "sk-proj-abcdefghijklmnop1234567890"
HOSTILE = "\"'><script>alert(1)</script>&amp;"


def write_run(run: Path, count: int) -> pd.DataFrame:
    """A run of ``count`` judged items (calls, replies, inputs of both kinds), and its table."""
    results = [
        ItemResult(
            id=f"case-{n}",
            status="ok" if n % 5 else "failed",
            output={"verdict": n % 2 == 0, "explanation": f"Reason {n}.", "nested": [{"k": [["0a", "x"]]}]},
            raw=[f"reply {n}"],
            calls=[
                LMCall(
                    messages=[
                        Message(role="system", content="Judge."),
                        Message(role="user", content=f"Q{n}"),
                    ],
                    replies=[f"reply {n}"],
                )
            ],
        )
        for n in range(count)
    ]
    inputs = [{"question": f"Q {n}?", "documents": [["0a", "A text."], ["0b", f"{n}"]]} for n in range(count)]
    run.mkdir(parents=True)
    with ResultStore(run / RESULTS_DB, judge_fingerprint="f") as store:
        store.put_many(results, list(range(count)), inputs)
    return pd.DataFrame({"id": [r.id for r in results], "status": [r.status for r in results]})


def same(left: object, right: object) -> bool:
    """Equal values of the same type (NaN equal to NaN)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, list | np.ndarray):
        return list(left) == list(right)  # type: ignore[call-overload]
    if left is None or left is pd.NA or left is pd.NaT or (isinstance(left, float) and math.isnan(left)):
        return left is right or (isinstance(left, float) and math.isnan(right))  # type: ignore[arg-type]
    return bool(left == right)


def test_rows_write_each_cell_as_row_html_does_and_keep_each_distinct_part_once():
    columns = [_Column("id", "id", False), _Column(_TEXT_KEY, "judged text", False)]
    columns += [_Column("score", "score", True), _Column("note", "note", False)]
    scores = [0.0, -0.0, float("nan"), float("nan"), 1, 1.0, True, 2.5, None, np.float64(0.5), 2.5, 2.5]
    notes = ["1", 1, HOSTILE, "", None, "x" * 300, ["a", 1], {"k": HOSTILE}, "1", True, False, "1"]
    rows = _Rows(columns)
    expected = []
    for n, (score, note) in enumerate(zip(scores, notes, strict=True)):
        values = [f"id{n}", f"text {n} " * 40, score, note]
        row = {
            "id": f"id{n}",
            "status": "ok",
            "agrees": "false" if n % 3 else "",
            "cells": [_cell(value, column.numeric) for value, column in zip(values, columns, strict=True)],
        }
        rows.add(row["id"], row["status"], row["agrees"], values)
        expected.append(f"{_row_html(row, columns)}\n")
    assert "".join(rows.parts) == "".join(expected)
    assert rows.count == len(scores)
    assert 'data-sort="0.0"' in "".join(rows.parts) and 'data-sort="-0.0"' in "".join(rows.parts)
    assert set(rows.fresh) == set(rows.parts) - {"</tr>\n"}  # every part is scanned ...
    assert rows.fresh.count('<td class="num" data-sort="2.5">2.500</td>') == 1  # ... a shared cell once
    assert "".join(rows.parts).count('<td class="num" data-sort="2.5">2.500</td>') == 3


def test_a_key_in_a_cell_many_rows_share_is_redacted_in_every_row(tmp_path: Path):
    items = write_run(tmp_path / "run", 6)
    items["note"] = f"token {KEY}"
    page = render_run_html(tmp_path / "run", items=items)
    assert KEY not in page and page.count(shape_token(KEY)) == 6
    assert page == whole(tmp_path / "run", items=items)


def test_the_data_is_written_part_by_part_as_one_call_writes_it():
    detail = {"status": "ok", "output": {"score": float("nan"), "text": "</script>\u2028"}, "raw": ["a & b"]}
    plain = {"status": "ok", "output": {"score": 0.5, "keys": [["0a", "<b>"]]}, "calls": None}
    for details in ({"a": detail, "b": plain}, {"b": plain}, {}):
        messages = {"h1": "one <two>", "h2": "three"}
        one_call = str(_script_markup(_loaded_json({"details": details, "messages": messages, "model": "m"})))
        parts = [html._data_part({key: value}) for key, value in details.items()]
        read = html._Details(items=parts)
        read.messages.update(messages)
        assert html._page_data(read, "m") == one_call
        if details:
            read.items = [html._data_part(details)]
            assert html._page_data(read, "m") == one_call


def test_the_table_is_read_column_by_column_as_its_records_give_it():
    frame = pd.DataFrame(
        {
            "float": [0.5, float("nan"), -0.0],
            "int": [1, 2, 3],
            "bool": [True, False, True],
            "object": [None, np.float64(1.5), ["a"]],
            "text": pd.array(["a", None, "c"], dtype="string"),
            "nullable": pd.array([1, None, 3], dtype="Int64"),
            "boolean": pd.array([True, None, False], dtype="boolean"),
            "when": pd.to_datetime(["2024-01-01", None, "2024-01-03"]),
            "kind": pd.Categorical(["x", "y", "x"]),
        }
    )
    records = frame.to_dict(orient="records")
    values = _column_values(frame, [*frame.columns, "absent"])
    assert set(values) == set(frame.columns)
    for key in frame.columns:
        assert all(same(record[key], value) for record, value in zip(records, values[key], strict=True)), key
    doubled = pd.concat([frame[["int"]], frame[["int"]] * 10], axis=1)  # two columns named "int"
    with pytest.warns(UserWarning):
        assert _column_values(doubled, ["int"]) == {"int": [10, 20, 30]}


def test_the_store_reads_every_row_by_one_scan_and_a_few_rows_by_lookups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    write_run(tmp_path / "run", 12)
    with ResultStore(tmp_path / "run" / RESULTS_DB) as store:
        queries: list[str] = []
        store._db.set_trace_callback(queries.append)
        ids = store.item_ids()
        scanned = list(store.item_records(ids))
        assert not [query for query in queries if " IN (" in query]
        assert not [query for query in queries if "usage" in query]  # not a column a page shows
        queries.clear()
        few = list(store.item_records(ids[:2]))
        assert [query for query in queries if "FROM results WHERE id IN" in query]
        assert [query for query in queries if "FROM messages WHERE sha256 IN" in query]
        assert few == scanned[:2]
        scanned_inputs = store.item_inputs(ids)
        monkeypatch.setattr(store_module, "_LOOKUP_ROWS", 0)  # every text looked up by its hash
        assert list(store.item_records(ids)) == scanned
        assert list(store.item_details(ids)) == list(store.item_details(reversed(ids)))[::-1]
        assert store.item_inputs(ids) == scanned_inputs


def test_a_row_of_other_types_is_read_again_in_full(tmp_path: Path):
    write_run(tmp_path / "run", 3)
    db = tmp_path / "run" / RESULTS_DB
    with sqlite3.connect(db) as connection:  # a latency written as an integer: the model makes it 1.0
        (calls,) = connection.execute("SELECT calls FROM results WHERE id = 'case-1'").fetchone()
        changed = calls[:-2] + ', "latency_s": 1}]'
        connection.execute("UPDATE results SET calls = ? WHERE id = 'case-1'", (changed,))
    with ResultStore(db) as store:
        queries: list[str] = []
        store._db.set_trace_callback(queries.append)
        records = list(store.item_records(["case-0", "case-1", "case-2"]))
        details = list(store.item_details(["case-0", "case-1", "case-2"]))
    assert records == [_record_of(detail) for detail in details]
    assert records[1].calls is not None and type(records[1].calls[0]["latency_s"]) is float
    again = [query for query in queries if "usage" in query and "WHERE id IN" in query]
    assert len(again) == 1 and "('case-1')" in again[0]  # read again in full, alone


@pytest.mark.parametrize(
    "text", ['{"a": [1, 2.5, null]}', " {}", "{} ", "[1]\n", '"caf\\u00e9"', "NaN", "[1] x", "", b"[1]"]
)
def test_stored_json_is_parsed_as_json_loads_parses_it(text: str | bytes):
    try:
        expected = json.loads(text)
    except ValueError as error:
        with pytest.raises(type(error), match=re.escape(str(error))):
            _parsed(text)  # type: ignore[arg-type]
    else:
        assert same(_parsed(text), expected) or _parsed(text) == expected  # type: ignore[arg-type]


def test_input_text_is_the_json_the_encoder_writes():
    values = [
        ["a", "b"],
        [["0a", "A text."], ["0b", HOSTILE]],
        {"k": [1, 2.5, None, True, False], "e": [], "d": {}, "n": {"x": ["y", {"z": "é\u2028"}]}},
        [float("nan"), float("inf"), -0.0, 10**20],
        [(1, 2), "x"],
        {1: ["a"]},
        [Path("p"), ["q"]],
        7,
        None,
    ]
    for value in values:
        nested = isinstance(value, list | dict) and any(
            isinstance(v, list | dict) for v in (value.values() if isinstance(value, dict) else value)
        )
        expected = json.dumps(value, ensure_ascii=False, default=str, indent=1 if nested else None)
        assert input_text(value) == expected, value
    assert input_text("as it is") == "as it is"


def test_a_long_input_collapses_to_the_row_its_whole_text_gives():
    rng = random.Random(3)
    spaces = [" ", "  ", "\n", "\t \n", "\u2028", "\u00a0"]
    for _ in range(300):
        count = rng.randint(0, 80)
        words = ["".join(rng.choice("abcé") for _ in range(rng.randint(1, 12))) for _ in range(count)]
        text = rng.choice(["", " ", "\n"]) + "".join(word + rng.choice(spaces) for word in words)
        fields = {"question": text, "other": text[: rng.randint(0, len(text))]}
        share = max(24, 160 // len(fields))
        expected = []
        for name, value in fields.items():
            collapsed = " ".join(value.split())
            cut = collapsed if len(collapsed) <= share else collapsed[: share - 1] + "…"
            expected.append(f"{name}: {cut}")
        assert snippet(fields) == " · ".join(expected)
