"""Paging, filtering, searching and sorting a per-item table without loading it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from view_support import write_table

from jurist.view.table import ItemTable, TableCache

VERDICTS = ("pos", "neg", "mixed")


def rows(count: int) -> list[dict]:
    """Items whose every value follows from the index, so expected pages are computed here."""
    return [
        {
            "id": f"item-{i:05d}",
            "status": "failed" if i % 10 == 9 else "ok",
            "verdict": None if i % 10 == 9 else VERDICTS[i % 3],
            "correct": None if i % 10 == 9 else i % 4 != 0,
            "confidence": None if i % 10 == 9 else (i * 37 % 100) / 100,
            "reasoning": f"reason {i} " + "x" * 40,
        }
        for i in range(count)
    ]


@pytest.fixture
def table(tmp_path: Path) -> ItemTable:
    return ItemTable(write_table(tmp_path / "items.parquet", rows(1000), row_group_size=100))


class CountingReads:
    """Counts the row groups and whole columns a table reads from its file."""

    def __init__(self, table: ItemTable, monkeypatch: pytest.MonkeyPatch) -> None:
        self.groups: list[tuple[int, tuple[str, ...]]] = []
        self.columns: list[tuple[str, ...]] = []
        parquet = table._file
        read_group, read_all = parquet.read_row_group, parquet.read

        def group(index, columns=None, **kwargs):
            self.groups.append((index, tuple(columns or ())))
            return read_group(index, columns=columns, **kwargs)

        def whole(columns=None, **kwargs):
            self.columns.append(tuple(columns or ()))
            return read_all(columns=columns, **kwargs)

        monkeypatch.setattr(parquet, "read_row_group", group)
        monkeypatch.setattr(parquet, "read", whole)


def test_pages_in_file_order_read_only_the_row_groups_of_the_page(table, monkeypatch):
    reads = CountingReads(table, monkeypatch)
    page = table.page(["id", "verdict"], offset=950, limit=25)
    assert [row["id"] for row in page.rows] == [f"item-{i:05d}" for i in range(950, 975)]
    assert page.rows[0] == {"id": "item-00950", "verdict": VERDICTS[950 % 3]}
    assert (page.total, page.row_count, page.next_offset, page.previous_offset) == (1000, 1000, 975, 925)
    assert reads.groups == [(9, ("id", "verdict"))]  # one row group, two columns
    assert reads.columns == []  # no whole column read

    across = table.page(["id"], offset=190, limit=20)
    assert [row["id"] for row in across.rows] == [f"item-{i:05d}" for i in range(190, 210)]
    assert [index for index, _ in reads.groups[1:]] == [1, 2]


def test_an_offset_past_the_end_gives_the_last_page(table):
    page = table.page(["id"], offset=10_000, limit=30)
    assert page.offset == 990 and len(page.rows) == 10 and page.next_offset is None
    assert page.last_offset == 990


def test_filters_read_only_the_columns_they_need(table, monkeypatch):
    reads = CountingReads(table, monkeypatch)
    page = table.page(["id", "verdict", "correct"], where=[("correct", "==", False)], limit=10)
    expected = [i for i in range(1000) if i % 10 != 9 and i % 4 == 0]
    assert page.total == len(expected)
    assert [row["id"] for row in page.rows] == [f"item-{i:05d}" for i in expected[:10]]
    assert all(row["correct"] is False for row in page.rows)
    assert reads.columns == [("correct",)]
    # A second page of the same filter reads no column again.
    table.page(["id"], where=[("correct", "==", False)], offset=10, limit=10)
    assert reads.columns == [("correct",)]


def test_confidence_below_a_threshold_and_missing_cells_never_match(table):
    positions = table.select(where=[("confidence", "<", 0.1)])
    expected = [i for i in range(1000) if i % 10 != 9 and (i * 37 % 100) / 100 < 0.1]
    assert positions.tolist() == expected
    failed = table.select(where=[("status", "==", "failed")])
    assert failed.tolist() == list(range(9, 1000, 10))


def test_search_is_case_insensitive_over_id_and_verdict(table):
    by_id = table.page(["id"], search="ITEM-0012", search_columns=["id", "verdict"], limit=50)
    assert [row["id"] for row in by_id.rows] == [f"item-{i:05d}" for i in range(120, 130)]
    by_verdict = table.select(search="MIX", search_columns=["id", "verdict"])
    assert by_verdict.tolist() == [i for i in range(1000) if i % 10 != 9 and i % 3 == 2]


def test_sorting_is_paged_with_missing_values_last_and_ties_in_file_order(table):
    values = [None if i % 10 == 9 else (i * 37 % 100) / 100 for i in range(1000)]
    known = sorted((v, i) for i, v in enumerate(values) if v is not None)
    ascending = [i for _, i in known] + [i for i, v in enumerate(values) if v is None]
    first = table.page(["id", "confidence"], sort="confidence", limit=100)
    assert first.positions == ascending[:100]
    last = table.page(["id", "confidence"], sort="confidence", offset=900, limit=100)
    assert last.positions == ascending[900:]
    assert all(row["confidence"] is None for row in last.rows[-100:])
    descending = table.page(["confidence"], sort="confidence", descending=True, limit=3)
    assert [row["confidence"] for row in descending.rows] == [0.99] * 3
    # Sorting a filtered selection: the failed items by id, largest first.
    failed = table.page(["id"], where=[("status", "==", "failed")], sort="id", descending=True, limit=2)
    assert [row["id"] for row in failed.rows] == ["item-00999", "item-00989"]


def test_rows_at_scattered_positions_come_back_in_the_order_asked(table):
    found = table.rows(np.array([999, 3, 512, 4]), ["id", "status"])
    assert [row["id"] for row in found] == ["item-00999", "item-00003", "item-00512", "item-00004"]
    assert table.position_of("item-00512") == 512
    assert table.position_of("nope") is None


def test_a_bad_filter_names_the_column(table):
    with pytest.raises(ValueError, match="no column 'missing'"):
        table.select(where=[("missing", "==", 1)])
    with pytest.raises(ValueError, match="column 'verdict'"):
        table.select(where=[("verdict", "<", 0.5)])


def test_one_row_group_still_pages(tmp_path):
    # What a writer that does not set a row group size produces for a small run.
    path = write_table(tmp_path / "one.parquet", rows(300))
    table = ItemTable(path)
    assert table.row_groups == 1
    page = table.page(["id"], offset=250, limit=10)
    assert page.positions == list(range(250, 260))


def test_the_cache_opens_the_file_again_when_it_changes(tmp_path):
    path = write_table(tmp_path / "items.parquet", rows(10))
    cache = TableCache()
    first = cache.get(path)
    assert cache.get(path) is first
    write_table(tmp_path / "new.parquet", rows(20))
    (tmp_path / "new.parquet").replace(path)  # how exports are written: a new file moved in place
    second = cache.get(path)
    assert second is not first and second.row_count == 20
    assert pq.ParquetFile(path).metadata.num_rows == 20
