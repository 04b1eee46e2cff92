"""No file of a run directory is read or written through a symbolic link, and every file the
viewer serves is redacted.

A run directory may come from an archive or a shared folder: a ``report.html`` that links to
a private file must not be served, a ``labels.jsonl`` that links outside must not be
appended to, a ``results.sqlite`` that links to another database must not be opened.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import warnings
from pathlib import Path

import pytest
from view_support import label_rows, write_run

from jurist.errors import RunDirectoryError
from jurist.runner import MANIFEST, RESULTS_DB, ResultStore
from jurist.view import runs as run_files
from jurist.view.app import create_app
from jurist.view.files import LinkedFileError, read_bytes
from jurist.view.labels import LABELS_FILE, LabelStore
from jurist.view.runs import RUN_FILES, find_runs, resolve_run
from jurist.view.table import ItemTable
from support import run_cli

with warnings.catch_warnings():  # Starlette asks for httpx2, which is not needed here
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

ORIGIN = "http://127.0.0.1:8765"
LOCAL = ("127.0.0.1", 50000)
SECRET = "the-private-file-content"
KEY = "sk-proj-" + "Zx9" * 12
LABEL = {"run": "a", "item": "r0", "label": "neg"}


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    write_run(root / "a", label_rows(["pos", "neg"], ["pos", "pos"]))
    write_run(root / "b", label_rows(["pos", "neg"], ["pos", "pos"]), created="2026-01-06T00:00:00+00:00")
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A private file outside the folder of runs."""
    path = tmp_path / "private" / "notes.txt"
    path.parent.mkdir()
    path.write_text(f"{SECRET}\n{KEY}\n", encoding="utf-8")
    return path


@pytest.fixture
def client(runs: Path) -> TestClient:
    return TestClient(create_app(runs), base_url=ORIGIN, client=LOCAL)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def post_label(client: TestClient, **fields: str) -> object:
    return client.post(
        "/labels", data={**LABEL, **fields}, headers={"Accept": "application/json", "Origin": ORIGIN}
    )


def test_a_linked_report_is_not_served(client, runs, outside):
    os.symlink(outside, runs / "a" / "report.html")
    before = digest(outside)
    served = client.get("/report.html", params={"run": "a"})
    assert served.status_code == 403
    assert SECRET not in served.text and KEY not in served.text
    assert "report.html is a symbolic link" in served.text
    page = client.get("/run", params={"id": "a"})
    assert page.status_code == 403 and SECRET not in page.text
    assert digest(outside) == before
    assert client.get("/run", params={"id": "b"}).status_code == 200  # the other run is served


def test_a_linked_labels_file_is_never_appended_to(client, runs, outside, tmp_path):
    os.symlink(outside, runs / "a" / LABELS_FILE)
    before = digest(outside)
    refused = post_label(client)
    assert refused.status_code == 403
    assert "labels.jsonl is a symbolic link" in refused.json()["error"]
    assert digest(outside) == before
    # A link to a file that does not exist yet is not created through either.
    dangling = tmp_path / "private" / "planted.jsonl"
    os.symlink(dangling, runs / "b" / LABELS_FILE)
    assert post_label(client, run="b").status_code == 403
    assert not dangling.exists()
    # The store itself refuses the link, even when asked directly (no check before it).
    with pytest.raises(LinkedFileError, match="labels.jsonl: is a symbolic link"):
        LabelStore(runs / "a").append("r0", "neg", "ann")
    with pytest.raises(LinkedFileError):
        list(LabelStore(runs / "a").records())
    assert digest(outside) == before
    assert post_label(client, run="a", item="r1").status_code == 403  # still refused, nothing written


@pytest.mark.parametrize("name", RUN_FILES)
def test_a_run_with_any_linked_file_is_not_served(runs, tmp_path, name):
    """Each file the viewer reads or writes: linked to a copy of itself outside the folder."""
    target = tmp_path / "elsewhere" / name
    target.parent.mkdir()
    source = runs / "a" / name
    if source.exists():
        target.write_bytes(source.read_bytes())
        source.unlink()
    else:
        target.write_text("{}", encoding="utf-8")
    os.symlink(target, source)
    before = digest(target)
    client = TestClient(create_app(runs), base_url=ORIGIN, client=LOCAL)
    for path, params in [
        ("/run", {"id": "a"}),
        ("/item", {"run": "a", "id": "r0"}),
        ("/queue", {"run": "a"}),
        ("/report.html", {"run": "a"}),
        ("/compare", {"a": "b", "b": "a"}),
    ]:
        answer = client.get(path, params=params)
        assert answer.status_code == 403, (path, answer.status_code)
        assert f"{name} is a symbolic link" in answer.text
    assert post_label(client).status_code == 403
    assert digest(target) == before
    listed = [record.id for record in find_runs(runs)]
    assert listed == (["b"] if name == "manifest.json" else ["b", "a"])


def test_a_fifo_in_place_of_a_file_is_refused_without_waiting(client, runs):
    os.mkfifo(runs / "a" / "report.html")
    answer = client.get("/report.html", params={"run": "a"})
    assert answer.status_code == 403 and "not a regular file" in answer.text
    with pytest.raises(LinkedFileError, match="not a regular file"):
        read_bytes(runs / "a" / "report.html")


def test_the_readers_refuse_links_themselves(runs, outside, tmp_path):
    """Past the check of the run (a link made after it): the table, store and JSON readers."""
    items = runs / "a" / "items.parquet"
    moved = tmp_path / "items.parquet"
    items.rename(moved)
    os.symlink(moved, items)
    with pytest.raises(LinkedFileError):
        ItemTable(items)
    summary = runs / "a" / "summary.json"
    summary.unlink()
    os.symlink(outside, summary)
    assert run_files.read_json(summary) is None
    # A database outside, reached through a link: refused before a page of it is read, and
    # left exactly as it was (no table created, journal mode unchanged, no -wal/-shm).
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE private (secret TEXT)")
        db.execute("INSERT INTO private VALUES (?)", (SECRET,))
    db.close()
    before = digest(other)
    database = runs / "a" / RESULTS_DB
    database.unlink()
    os.symlink(other, database)
    with pytest.raises(RunDirectoryError, match="is a symbolic link"):
        ResultStore(database, read_only=True)
    assert digest(other) == before
    assert sorted(path.name for path in tmp_path.iterdir() if path.name.startswith("other")) == [
        "other.sqlite"
    ]


def test_the_viewer_opens_the_run_store_read_only(client, runs):
    database = runs / "b" / RESULTS_DB
    before = digest(database)
    with ResultStore(database, read_only=True) as store:
        assert store.item_detail("r1") is not None
    page = client.get("/item", params={"run": "b", "id": "r1"})
    assert page.status_code == 200 and "Judge the text." in page.text
    assert digest(database) == before
    with pytest.raises(RunDirectoryError, match="cannot use"):
        ResultStore(runs / "b" / "missing.sqlite", read_only=True)
    assert not (runs / "b" / "missing.sqlite").exists()


def test_a_run_directory_linked_from_outside_the_folder_is_not_found(runs, tmp_path):
    write_run(tmp_path / "outside-run", label_rows(["pos"], ["pos"]))
    os.symlink(tmp_path / "outside-run", runs / "linked")
    with pytest.raises(RunDirectoryError, match="no run 'linked'"):
        resolve_run(runs, "linked")
    client = TestClient(create_app(runs), base_url=ORIGIN, client=LOCAL)
    assert client.get("/run", params={"id": "linked"}).status_code == 404
    assert post_label(client, run="linked").status_code == 404
    assert not (tmp_path / "outside-run" / LABELS_FILE).exists()


def test_every_served_file_is_redacted(client, runs):
    (runs / "a" / "report.html").write_text(f"<html><p>key {KEY}</p></html>", encoding="utf-8")
    (runs / "a" / "report.md").write_text(f"# Report\n\nkey {KEY}\n", encoding="utf-8")
    report = client.get("/report.html", params={"run": "a"})
    assert report.status_code == 200 and "<p>key [REDACTED" in report.text
    assert KEY not in report.text
    page = client.get("/run", params={"id": "a"})
    assert page.status_code == 200 and KEY not in page.text


def test_jurist_labels_refuses_a_linked_labels_file(runs, outside, capsys):
    os.symlink(outside, runs / "a" / LABELS_FILE)
    assert run_cli(["labels", "list", str(runs / "a")]) == 2
    error = capsys.readouterr().err.strip()
    assert "labels.jsonl: is a symbolic link" in error and len(error.splitlines()) == 1
    assert SECRET not in error


def test_the_viewers_file_names_are_the_runners():
    assert (run_files.RESULTS_DB, run_files.MANIFEST) == (RESULTS_DB, MANIFEST)
