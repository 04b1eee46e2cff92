"""One scoring reads its gold file once (jurist.tasks._read_once)."""

from __future__ import annotations

from pathlib import Path

import pytest

import jurist
from jurist.datasets import ragbench as ragbench_data
from jurist.datasets.samples import resolve_input
from jurist.tasks._read_once import already_read, read_once, reading_once


def test_inside_a_block_each_kind_and_file_is_read_once_and_nested_blocks_share() -> None:
    reads: list[str] = []

    def reader(name: str):
        def read() -> str:
            reads.append(name)
            return name.upper()

        return read

    assert read_once("gold", "a.jsonl", reader("a")) == "A"
    assert read_once("gold", "a.jsonl", reader("a")) == "A"
    assert reads == ["a", "a"]  # outside a block: every time
    reads.clear()
    with reading_once():
        assert read_once("gold", "a.jsonl", reader("a")) == "A"
        with reading_once():
            assert read_once("gold", Path("a.jsonl"), reader("a")) == "A"  # the outer block's
        assert read_once("gold", "b.jsonl", reader("b")) == "B"
        assert read_once("other", "a.jsonl", reader("a2")) == "A2"
    assert reads == ["a", "b", "a2"]
    assert read_once("gold", "a.jsonl", reader("a")) == "A"  # the block's reads are gone
    assert reads == ["a", "b", "a2", "a"]


@pytest.fixture
def ragbench_reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The RAGBench files read from now on, by the task and by its scoring."""
    opened: list[Path] = []
    original = ragbench_data.load_ragbench

    def counted(path, *args, **kwargs):
        opened.append(Path(path))
        return original(path, *args, **kwargs)

    monkeypatch.setattr("jurist.tasks.ragbench.scoring.load_ragbench", counted)
    monkeypatch.setattr("jurist.tasks.ragbench.task.load_ragbench", counted)
    return opened


def test_scoring_a_ragbench_run_reads_its_gold_file_once(tmp_path: Path, ragbench_reads: list[Path]) -> None:
    run = tmp_path / "run"
    jurist.judge("ragbench", "sample:ragbench", out=run)
    ragbench_reads.clear()
    opened = ragbench_reads
    scores = jurist.score("ragbench", run, gold="sample:ragbench")
    assert opened == [Path(resolve_input("sample:ragbench"))]
    # The summary's agreement and the per-item gold columns both come from that one read.
    assert scores.summary["agreement"]["hallucination_auroc"] == pytest.approx(0.711, abs=5e-4)
    assert scores.items["gold_supported"].notna().all()


def test_judging_ragbench_reads_its_data_once_and_scores_it_as_before(
    tmp_path: Path, ragbench_reads: list[Path]
) -> None:
    opened = ragbench_reads
    run = jurist.judge("ragbench", "sample:ragbench", out=tmp_path / "run", progress=False)
    # The loop's read; its scoring (summary, gold columns) is handed that dataset.
    assert opened == [Path(resolve_input("sample:ragbench"))]
    assert run.summary["agreement"]["hallucination_auroc"] == pytest.approx(0.711, abs=5e-4)
    assert run["gold_supported"].notna().all()


def test_already_read_holds_one_value_in_a_block_of_its_own() -> None:
    reads: list[str] = []
    with reading_once():
        assert read_once("dataset", "a.jsonl", lambda: reads.append("outer") or "OUTER") == "OUTER"
        with already_read("dataset", Path("a.jsonl"), "HELD"):
            assert read_once("dataset", "a.jsonl", lambda: "read") == "HELD"
            with reading_once():  # a block inside shares it
                assert read_once("dataset", "a.jsonl", lambda: "read") == "HELD"
            assert read_once("gold", "b.jsonl", lambda: reads.append("b") or "B") == "B"
        assert read_once("dataset", "a.jsonl", lambda: "read") == "OUTER"  # the outer block's again
        assert read_once("gold", "b.jsonl", lambda: reads.append("b") or "B") == "B"
    assert reads == ["outer", "b", "b"]  # what the held block read is not the outer block's
