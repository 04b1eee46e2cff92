"""A heritage sub-task judged in other processes (``--workers 2``) as in one, recorded under its
own name (so ``jurist view`` finds it and its label), and never resumed from a run of every sub-task."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import jurist
from jurist.errors import RunDirectoryError
from jurist.runner import MANIFEST
from jurist.tasks import run_task
from jurist.tasks.heritage import HeritageClassificationTask
from jurist.testing import OpenAICompatibleServer
from jurist.view.labels import LabelStore, export_gold
from scale_support import exports
from support import loopback_config, prompt_sections


def classifier(body: dict[str, Any]) -> str:
    """The custodian type classifier: an archive when the text says so, else a museum."""
    text = prompt_sections(body).get("text", "").lower()
    primary = "A" if "archief" in text or "archive" in text else "M"
    fields = {"primary_type": primary, "secondary_types": "[]", "rationale": "From the text."}
    body_text = "\n\n".join(f"[[ ## {name} ## ]]\n{value}" for name, value in fields.items())
    return body_text + "\n\n[[ ## completed ## ]]"


def _manifest(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / MANIFEST).read_text(encoding="utf-8"))


def test_a_sub_task_judged_by_two_processes_is_recorded_and_labelled_as_itself(tmp_path, capfd):
    requests = {}
    with OpenAICompatibleServer(classifier) as srv:
        for name, workers in (("one", 1), ("two", 2)):
            srv.reset_count()
            config = loopback_config(srv.base_url, tmp_path / f"cache-{name}")
            jurist.judge(
                "heritage-classification",
                "sample:heritage",
                config,
                out=tmp_path / name,
                progress=False,
                workers=workers,
            )
            requests[name] = srv.requests
    assert requests["two"] == requests["one"] > 0
    assert exports(tmp_path / "two") == exports(tmp_path / "one")
    assert "judged in this one" not in capfd.readouterr().err

    run_dir = tmp_path / "two"
    manifest = _manifest(run_dir)
    assert (manifest["task"], manifest["task_source"]) == ("heritage-classification", "built-in")
    task, options = run_task(run_dir)
    assert isinstance(task, HeritageClassificationTask)
    spec = task.review(options).label
    assert spec is not None and "A" in spec.choices
    # A person's custodian type becomes the gold of that text in the exported gold file.
    LabelStore(run_dir).append("nl-001", "A", "ann", spec=spec)
    with pytest.raises(ValueError, match="one of"):
        LabelStore(run_dir).append("nl-001", "museum", "ann", spec=spec)
    out = tmp_path / "gold.jsonl"
    written, labelled = export_gold(run_dir, out)
    rows = {row["id"]: row for row in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert labelled == 1 and written == len(rows)
    assert rows["nl-001"]["type_classification"]["primary_type"] == "A"


def test_a_sub_task_refuses_a_run_of_every_sub_task(tmp_path):
    # A run of every sub-task is another run: the sub-task refuses it, naming both tasks.
    umbrella = tmp_path / "all"
    jurist.judge("heritage", "sample:heritage", None, out=umbrella, progress=False)
    assert _manifest(umbrella)["task"] == "heritage"
    with pytest.raises(RunDirectoryError, match="another task.*'heritage', now 'heritage-classification'"):
        jurist.judge("heritage-classification", "sample:heritage", None, out=umbrella, progress=False)
