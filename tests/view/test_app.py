"""The web app over HTTP (Starlette's test client): pages, safety, labels, hostile text."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from view_support import label_rows, write_run

from jurist.view.app import create_app, refusal
from jurist.view.labels import LABELS_FILE

with warnings.catch_warnings():  # Starlette asks for httpx2, which is not needed here
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

ORIGIN = "http://127.0.0.1:8765"
LOCAL = ("127.0.0.1", 50000)
"""The peer address of the test client's requests: this machine (writes need a loopback peer)."""
HOSTILE = '<script>alert("x")</script>'


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    golds = ["pos", "neg", "pos", "neg", "mixed", "pos"]
    write_run(
        root / "a",
        label_rows(["pos", "neg", "neg", "neg", "pos", "pos"], golds),
        summary={"agreement": {"accuracy": 4 / 6}},
        created="2026-01-01T00:00:00+00:00",
    )
    write_run(
        root / "nested" / "b",
        label_rows(["pos", "pos", "pos", "neg", "mixed", "neg"], golds),
        judge="judge-b",
        summary={"agreement": {"accuracy": 4 / 6}},
        created="2026-01-02T00:00:00+00:00",
    )
    hostile = label_rows(["pos", "neg"], ["pos", "pos"])
    hostile[1]["id"] = HOSTILE
    hostile[1]["verdict"] = f"</td>{HOSTILE}"
    write_run(root / "hostile", hostile, judge=f"judge {HOSTILE}", created="2026-01-03T00:00:00+00:00")
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "manifest.json").write_text('{"task": "secret"}')
    return root


@pytest.fixture
def client(runs: Path) -> TestClient:
    return TestClient(create_app(runs), base_url=ORIGIN, client=LOCAL)


def post_label(client: TestClient, **fields: str) -> object:
    return client.post("/labels", data=fields, headers={"Accept": "application/json", "Origin": ORIGIN})


def test_history_lists_every_run_and_filters_by_task(client):
    page = client.get("/")
    assert page.status_code == 200
    for run in ("a", "nested/b", "hostile"):
        assert f'data-run="{run}"' in page.text
    assert "<svg" in page.text and "agreement.accuracy" in page.text
    assert 'data-run="a"' not in client.get("/?task=other").text


def test_run_page_pages_sorts_and_filters_the_items(client):
    page = client.get("/run", params={"id": "a", "limit": "2"})
    assert page.status_code == 200
    assert page.text.count('<tr data-item="') == 2 and "1–2 of 6" in page.text
    last = client.get("/run", params={"id": "a", "limit": "2", "offset": "4"})
    assert 'data-item="r4"' in last.text and 'data-item="r5"' in last.text
    disagree = client.get("/run", params={"id": "a", "show": "disagree"})
    assert [f'data-item="r{i}"' in disagree.text for i in range(6)] == [
        False,
        False,
        True,
        False,
        True,
        False,
    ]
    searched = client.get("/run", params={"id": "a", "q": "R3"})
    assert 'data-item="r3"' in searched.text and searched.text.count('<tr data-item="') == 1
    ordered = client.get("/run", params={"id": "a", "sort": "confidence", "desc": "1"}).text
    assert ordered.index('data-item="r5"') < ordered.index('data-item="r0"')
    assert client.get("/run", params={"id": "a", "sort": "nope"}).status_code == 400


def test_a_running_run_reloads_itself_and_a_finished_one_does_not(client, runs):
    assert 'http-equiv="refresh"' not in client.get("/run", params={"id": "a"}).text
    manifest = json.loads((runs / "a" / "manifest.json").read_text())
    (runs / "a" / "manifest.json").write_text(json.dumps({**manifest, "status": "running"}))
    live = client.get("/run", params={"id": "a"}).text
    assert '<meta http-equiv="refresh" content="5">' in live and "still being judged" in live


def test_item_page_shows_the_recorded_call(client):
    page = client.get("/item", params={"run": "a", "id": "r2"})
    assert page.status_code == 200
    assert "Judge the text." in page.text and "[[ ## verdict ## ]]" in page.text
    assert "12 prompt + 3 completion tokens" in page.text
    assert client.get("/item", params={"run": "a", "id": "missing"}).status_code == 404


def test_compare_shows_the_differing_items(client):
    page = client.get("/compare", params={"a": "a", "b": "nested/b"})
    assert page.status_code == 200
    differing = [i for i in range(6) if f'<tr data-item="r{i}"' in page.text]
    assert differing == [1, 2, 4, 5]
    assert 'data-figure="accuracy"' in page.text and "McNemar exact" in page.text
    only_b = client.get("/compare", params={"a": "a", "b": "nested/b", "outcome": "B"})
    assert [i for i in range(6) if f'<tr data-item="r{i}"' in only_b.text] == [2, 4]


def test_run_ids_that_leave_the_folder_are_not_found(client):
    for bad in ["../secret", "nested/../../secret", "/etc", "a/../../secret", "..", "%2e%2e/secret"]:
        response = client.get("/run", params={"id": bad})
        assert response.status_code == 404, bad
        assert "secret" not in response.text.replace(bad, "")
    assert client.get("/gold.jsonl", params={"run": "../secret"}).status_code == 404
    assert post_label(client, run="../secret", item="r0", label="pos").status_code == 404


def test_hostile_text_is_escaped_everywhere(client):
    pages = [
        client.get("/"),
        client.get("/run", params={"id": "hostile"}),
        client.get("/item", params={"run": "hostile", "id": HOSTILE}),
        client.get("/queue", params={"run": "hostile"}),
    ]
    for page in pages:
        assert page.status_code == 200
        assert HOSTILE not in page.text
        assert "&lt;script&gt;" in page.text
        policy = page.headers["content-security-policy"]
        assert (
            "script-src 'self'" in policy
            and "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
        )


def test_labels_are_saved_checked_and_exported(client, runs):
    saved = post_label(client, run="a", item="r2", label="pos", who="ann")
    assert saved.status_code == 200 and saved.json()["who"] == "ann"
    refused = post_label(client, run="a", item="r2", label="great", who="ann")
    assert refused.status_code == 400
    assert refused.json()["error"] == "label must be one of pos, neg, mixed; got 'great'"
    assert post_label(client, run="a", item="nope", label="pos").status_code == 404
    form = client.post(
        "/labels",
        data={"run": "a", "item": "r4", "label": "mixed", "next": "/queue?run=a"},
        headers={"Origin": ORIGIN},
        follow_redirects=False,
    )
    assert form.status_code == 303 and form.headers["location"] == "/queue?run=a"
    elsewhere = client.post(
        "/labels",
        data={"run": "a", "item": "r4", "label": "mixed", "next": "//evil.example/"},
        headers={"Origin": ORIGIN},
        follow_redirects=False,
    )
    assert elsewhere.headers["location"] == "/queue?run=a"
    records = [json.loads(line) for line in (runs / "a" / LABELS_FILE).read_text().splitlines()]
    assert [(r["item"], r["label"]) for r in records] == [("r2", "pos"), ("r4", "mixed"), ("r4", "mixed")]
    queue = client.get("/queue", params={"run": "a", "unlabelled": "1"})
    assert 'data-item="r2"' not in queue.text and 'data-item="r4"' not in queue.text
    queue = client.get("/queue", params={"run": "a"})
    assert 'data-item="r2"' in queue.text and "pos by ann" in queue.text


def test_queue_of_items_two_runs_disagree_on(client):
    page = client.get("/queue", params={"run": "a", "with": "nested/b"})
    assert [i for i in range(6) if f'<tr data-item="r{i}"' in page.text] == [1, 2, 4, 5]
    unsure = client.get("/queue", params={"run": "a", "why": "unsure", "below": "0.6"})
    assert [i for i in range(6) if f'<tr data-item="r{i}"' in unsure.text] == [0, 1, 2]


def test_cross_site_and_rebound_requests_are_refused(runs):
    client = TestClient(create_app(runs), base_url=ORIGIN, client=LOCAL)
    fields = {"run": "a", "item": "r0", "label": "pos"}
    other_site = client.post("/labels", data=fields, headers={"Origin": "http://evil.example"})
    assert other_site.status_code == 403
    other_port = client.post("/labels", data=fields, headers={"Origin": "http://127.0.0.1:9999"})
    assert other_port.status_code == 403
    null_origin = client.post("/labels", data=fields, headers={"Origin": "null"})
    assert null_origin.status_code == 403
    fetch_site = client.post("/labels", data=fields, headers={"Sec-Fetch-Site": "cross-site"})
    assert fetch_site.status_code == 403
    rebound = TestClient(create_app(runs), base_url="http://evil.example:8765", client=LOCAL)
    assert rebound.get("/").status_code == 403
    assert rebound.post("/labels", data=fields).status_code == 403
    assert not (runs / "a" / LABELS_FILE).exists()
    # Listening on another address: pages are readable, labels still only from loopback.
    shared = TestClient(create_app(runs, loopback_only=False), base_url="http://10.0.0.5:8765", client=LOCAL)
    assert shared.get("/").status_code == 200
    assert shared.post("/labels", data=fields, headers={"Origin": "http://10.0.0.5:8765"}).status_code == 403
    same = client.post("/labels", data=fields, headers={"Origin": ORIGIN}, follow_redirects=False)
    assert same.status_code == 303


def test_refusal_rules():
    local = "127.0.0.1"
    assert refusal("GET", {"host": "localhost:1"}, peer=local) is None
    assert refusal("GET", {"host": "[::1]:8765"}, peer="::1") is None
    assert refusal("POST", {"host": "127.0.0.1:5", "origin": "http://127.0.0.1:5"}, peer=local) is None
    # no Origin: not a browser's cross-site post
    assert refusal("POST", {"host": "127.0.0.1:5"}, peer=local) is None
    assert refusal("GET", {"host": "127.0.0.1.evil.example"}, peer=local) is not None
    assert refusal("GET", {}, peer=local) is not None


def test_the_standalone_report_is_sandboxed(client, runs):
    (runs / "a" / "report.html").write_text("<html><script>1</script></html>")
    page = client.get("/report.html", params={"run": "a"})
    assert page.status_code == 200 and page.headers["content-security-policy"].startswith("sandbox")


def test_jurist_help_imports_no_web_server():
    code = (
        "import sys\n"
        "from jurist.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(name for name in ('starlette', 'uvicorn', 'jurist.view') if name in sys.modules))"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert found.stdout.strip().splitlines()[-1] == "[]"
    assert " view " in found.stdout and " labels " in found.stdout


def test_a_missing_extra_is_a_config_error_naming_it(monkeypatch, capsys):
    import importlib.util

    from support import run_cli

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "uvicorn" else real(name, *a)
    )
    assert run_cli(["view", "."]) == 2
    assert 'pip install "jurist[view]"' in capsys.readouterr().err
