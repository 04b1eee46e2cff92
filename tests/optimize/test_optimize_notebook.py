"""The quickstart notebook runs top to bottom: without a model (optimization cells say they were
skipped) and with the loopback server as the configured model (they run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="notebook tests need nbformat (in the test extra)")
NotebookClient = pytest.importorskip(
    "nbclient", reason="notebook tests need nbclient (in the test extra)"
).NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "quickstart.ipynb"


def _execute(tmp_path: Path) -> list[str]:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    texts = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        parts = []
        for output in cell.get("outputs", []):
            assert output.get("output_type") != "error", "".join(output.get("traceback", []))
            parts.append(output.get("text", "") or json.dumps(output.get("data", {})))
        texts.append("".join(parts))
    return texts


def test_the_notebook_uses_only_the_public_api():
    cells = nbformat.read(NOTEBOOK, as_version=4).cells
    source = "\n".join(cell.source for cell in cells if cell.cell_type == "code")
    imports = [line.split()[1] for line in source.splitlines() if line.startswith(("from ", "import "))]
    stdlib = {"json", "os", "tempfile", "concurrent.futures", "pathlib"}
    assert all(name in stdlib or name == "jurist" or name.startswith("jurist.") for name in imports), imports
    assert not any(part.startswith("_") for name in imports for part in name.split("."))


def test_quickstart_without_a_model_skips_the_optimization_cells(tmp_path, monkeypatch):
    monkeypatch.delenv("JURIST_NOTEBOOK_CONFIG", raising=False)
    monkeypatch.setenv("JURIST_NOTEBOOK_DIR", str(tmp_path / "work"))
    outputs = _execute(tmp_path)
    assert "60 items judged, 0 failed" in outputs[1]
    assert "# Judge calibration: ragbench" in outputs[3]
    skipped = [text for text in outputs if "SKIPPED" in text]
    assert len(skipped) == 3, outputs[-3:]
    assert "JURIST_NOTEBOOK_CONFIG" in skipped[0]


@pytest.mark.slow
def test_quickstart_optimizes_with_the_loopback_model(tmp_path, monkeypatch, learning_config):
    config = tmp_path / "judge.yaml"
    config.write_text(json.dumps(learning_config.model_dump(mode="json")), encoding="utf-8")
    monkeypatch.setenv("JURIST_NOTEBOOK_CONFIG", str(config))
    monkeypatch.setenv("JURIST_NOTEBOOK_DIR", str(tmp_path / "work"))
    outputs = _execute(tmp_path)
    assert not any("SKIPPED" in text for text in outputs), outputs[-3:]
    assert "model reachable: openai/loopback-judge" in outputs[-3]
    assert "dev_after: order_accuracy" in outputs[-2] and "demos in the compiled program: 4" in outputs[-2]
    assert "| pairs-dev | compiled |" in outputs[-1]
    assert (tmp_path / "work" / "pairwise-judge.json").is_file()
