"""The item table's rows, built in Python, are the markup the template's loop wrote."""

from __future__ import annotations

import jinja2

from jurist.report.html import _Column, _row_html

# The per-row markup as a Jinja loop, with the report environment's settings (autoescape).
TEMPLATE = (
    "<tr class=\"item status-{{ row.status }}{% if row.agrees == 'false' %} disagrees{% endif %}\" "
    'tabindex="0" aria-expanded="false" data-id="{{ row.id }}" data-status="{{ row.status }}" '
    "data-agrees=\"{{ row.agrees or 'na' }}\">{% for cell in row.cells %}<td"
    '{% if columns[loop.index0].numeric %} class="num"{% endif %}'
    '{% if cell.sort %} data-sort="{{ cell.sort }}"{% endif %}'
    '{% if cell.full %} title="{{ cell.full }}"{% endif %}>{{ cell.text }}</td>{% endfor %}</tr>'
)
HOSTILE = "\"'><script>alert(1)</script>&amp;"


def reference(row: dict, columns: list[_Column]) -> str:
    environment = jinja2.Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True)
    return environment.from_string(TEMPLATE).render(row=row, columns=columns)


def test_rows_escape_every_value_as_the_template_did():
    columns = [_Column("id", "id", False), _Column("score", "score", True), _Column("note", "note", False)]
    rows = [
        {
            "id": HOSTILE,
            "status": "ok",
            "agrees": "false",
            "cells": [
                {"text": HOSTILE, "sort": "", "full": ""},
                {"text": "0.5", "sort": "0.5", "full": ""},
                {"text": "long…", "sort": "", "full": HOSTILE},
            ],
        },
        {
            "id": "r2",
            "status": HOSTILE,
            "agrees": "",
            "cells": [
                {"text": "", "sort": "", "full": ""},
                {"text": "", "sort": "", "full": ""},
                {"text": "x", "sort": "", "full": ""},
            ],
        },
    ]
    for row in rows:
        built = str(_row_html(row, columns))
        assert built == reference(row, columns)
        assert "<script>" not in built


def test_the_report_of_an_older_run_reads_the_judged_text_from_its_data(mt_bench_run, tmp_path):
    import shutil
    import sqlite3

    from support import run_cli

    older = tmp_path / "older"
    shutil.copytree(mt_bench_run, older)
    with sqlite3.connect(older / "results.sqlite") as db:
        db.execute("UPDATE results SET inputs = NULL")
    assert run_cli(["report", str(older), "--html", str(tmp_path / "page.html")]) == 0
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert "question: What is the capital of Australia?" in page
