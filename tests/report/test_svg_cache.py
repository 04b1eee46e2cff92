"""The figure cache: a figure drawn before is served byte for byte as drawn, from the judge's
``cache_dir`` (``figures.sqlite``), and a cache that cannot be used never fails a report."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from test_figure_svg import EXAMPLES

import jurist
from jurist.judges.config import JudgeConfig
from jurist.report import plots, svg_cache
from jurist.report.figures import Figure
from jurist.report.plots import figure_svg
from jurist.report.svg_cache import FIGURES_DB, figure_key, figure_svgs, run_cache_dir

FIGURES = list(EXAMPLES.values())
PREFIXES = [f"fig{index}-" for index in range(1, len(FIGURES) + 1)]


def _not_drawn(monkeypatch: pytest.MonkeyPatch) -> list[Figure]:
    """Make drawing record the figure instead (a served figure is never drawn)."""
    drawn: list[Figure] = []
    real = plots.drawn_svgs

    def record(figures: list[Figure]) -> list[str]:
        drawn.extend(figures)
        return real(figures)

    monkeypatch.setattr(plots, "drawn_svgs", record)
    return drawn


def _entries(cache: Path) -> int:
    with sqlite3.connect(cache / FIGURES_DB) as db:
        return int(db.execute("SELECT COUNT(*) FROM figures").fetchone()[0])


def test_a_served_figure_is_byte_for_byte_a_fresh_drawing(tmp_path, monkeypatch):
    fresh = [figure_svg(figure, id_prefix=prefix) for figure, prefix in zip(FIGURES, PREFIXES, strict=True)]
    assert figure_svgs(FIGURES, PREFIXES, None) == fresh  # no cache: drawn
    assert figure_svgs(FIGURES, PREFIXES, tmp_path / "cache") == fresh  # drawn and stored
    assert _entries(tmp_path / "cache") == len(FIGURES)
    reordered = [figure_svg(figure) for figure in FIGURES[::-1]]
    drawn = _not_drawn(monkeypatch)
    assert figure_svgs(FIGURES, PREFIXES, tmp_path / "cache") == fresh
    # The ids take the page's prefix when served: another page order, the same drawings.
    assert figure_svgs(FIGURES[::-1], [None] * len(FIGURES), tmp_path / "cache") == reordered
    assert drawn == []


def test_another_figure_code_or_library_is_another_entry(tmp_path, monkeypatch):
    figure = EXAMPLES["histogram"]
    series = figure.data["series"]
    changed = [
        Figure(figure.kind, figure.title + ".", figure.data),
        Figure(figure.kind, figure.title, {**figure.data, "xlabel": "points"}),
        Figure(
            figure.kind, figure.title, {**figure.data, "series": [{**series[0], "values": [1, 2, 2, 3, 8]}]}
        ),
        Figure(
            figure.kind, figure.title, {**figure.data, "series": [{**series[0], "values": [1.0, 2, 2, 3, 7]}]}
        ),
        Figure(figure.kind, figure.title, {**figure.data, "series": tuple(series)}),
        Figure("bars", figure.title, figure.data),
    ]
    keys = {figure_key(figure), *(figure_key(other) for other in changed)}
    assert None not in keys and len(keys) == len(changed) + 1
    # The caption is not drawn; the order of a mapping's keys is not read.
    assert figure_key(Figure(figure.kind, figure.title, figure.data, caption="other")) == figure_key(figure)
    assert figure_key(Figure(figure.kind, figure.title, dict(reversed(figure.data.items())))) == figure_key(
        figure
    )

    cache = tmp_path / "cache"
    figure_svgs([figure], [None], cache)
    expected = [figure_svg(other) for other in changed]
    drawn = _not_drawn(monkeypatch)
    assert figure_svgs(changed, [None] * len(changed), cache) == expected
    assert drawn == changed and _entries(cache) == len(changed) + 1

    source = tmp_path / "plots.py"
    source.write_text(Path(plots.__file__).read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    before = figure_key(figure)
    monkeypatch.setattr(plots, "__file__", str(source))
    svg_cache._drawing_state.cache_clear()
    try:
        assert figure_key(figure) not in (None, before)
        svg_cache._drawing_state.cache_clear()
        monkeypatch.setattr(svg_cache, "_version", lambda package: "0.0.1")
        monkeypatch.setattr(plots, "__file__", plots.__spec__.origin)
        assert figure_key(figure) not in (None, before)
    finally:
        svg_cache._drawing_state.cache_clear()


def test_data_the_key_cannot_pin_down_and_secrets_are_never_stored(tmp_path, monkeypatch):
    arrays = Figure("histogram", "Scores", {"series": [{"name": "judge", "values": np.array([1.0, 2.0])}]})
    assert figure_key(arrays) is None
    monkeypatch.setenv("ACME_API_KEY", "acme-secret-value-0123456789")
    secret = Figure("bars", "acme-secret-value-0123456789", {"bars": [{"label": "a", "value": 1.0}]})
    assert figure_key(secret) is not None
    assert figure_svgs([arrays, secret], [None, None], tmp_path / "cache") == [
        figure_svg(arrays),
        figure_svg(secret),
    ]
    assert not (tmp_path / "cache" / FIGURES_DB).exists()


def test_a_damaged_cache_is_drawn_around(tmp_path, monkeypatch, caplog):
    fresh = [figure_svg(figure, id_prefix=prefix) for figure, prefix in zip(FIGURES, PREFIXES, strict=True)]
    cache = tmp_path / "cache"
    figure_svgs(FIGURES, PREFIXES, cache)
    # A damaged entry: another text under a key, a blob that is not compressed text.
    with sqlite3.connect(cache / FIGURES_DB) as db:
        keys = [row[0] for row in db.execute("SELECT key FROM figures ORDER BY rowid")]
        db.execute("UPDATE figures SET svg = ? WHERE key = ?", (b"not zlib", keys[0]))
        db.execute("UPDATE figures SET sha256 = ? WHERE key = ?", ("0" * 64, keys[1]))
    drawn = _not_drawn(monkeypatch)
    assert figure_svgs(FIGURES, PREFIXES, cache) == fresh
    assert drawn == FIGURES[:2]
    drawn.clear()
    assert figure_svgs(FIGURES, PREFIXES, cache) == fresh and drawn == []  # stored again, whole

    # A file that is not a database at all: drawn, logged, never raised, and moved aside
    # so that the drawings start a new file.
    (cache / FIGURES_DB).write_bytes(b"this is not a database" * 100)
    assert figure_svgs(FIGURES, PREFIXES, cache) == fresh
    assert len(drawn) == len(FIGURES)
    assert "figure cache" in caplog.text
    assert (cache / "figures.sqlite.damaged").is_file() and _entries(cache) == len(FIGURES)
    drawn.clear()
    assert figure_svgs(FIGURES, PREFIXES, cache) == fresh and drawn == []
    # A cache folder that cannot be made (a file is in its place): drawn.
    blocked = tmp_path / "file"
    blocked.write_text("x", encoding="utf-8")
    assert figure_svgs(FIGURES[:1], PREFIXES[:1], blocked / "cache") == fresh[:1]


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="permissions bind no superuser")
def test_a_read_only_cache_folder_serves_and_stores_nothing(tmp_path, monkeypatch):
    fresh = [figure_svg(figure, id_prefix=prefix) for figure, prefix in zip(FIGURES, PREFIXES, strict=True)]
    cache, empty = tmp_path / "cache", tmp_path / "empty"
    figure_svgs(FIGURES[:2], PREFIXES[:2], cache)
    empty.mkdir()
    for folder in (cache, empty):
        folder.chmod(0o555)
    (cache / FIGURES_DB).chmod(0o444)
    try:
        drawn = _not_drawn(monkeypatch)
        assert figure_svgs(FIGURES, PREFIXES, cache) == fresh
        assert drawn == FIGURES[2:]
        assert figure_svgs(FIGURES[:1], PREFIXES[:1], empty) == fresh[:1]
        assert list(empty.iterdir()) == []
    finally:
        for folder in (cache, empty):
            folder.chmod(0o755)


def test_the_cache_keeps_the_newest_drawings(tmp_path, monkeypatch):
    monkeypatch.setattr(svg_cache, "KEPT", 3)
    cache = tmp_path / "cache"
    figure_svgs(FIGURES[:2], [None, None], cache)
    figure_svgs(FIGURES[2:5], [None] * 3, cache)
    assert _entries(cache) == 3
    drawn = _not_drawn(monkeypatch)
    figure_svgs(FIGURES[:5], [None] * 5, cache)
    assert drawn == FIGURES[:2]


WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[2])
    from test_figure_svg import EXAMPLES
    from jurist.report.svg_cache import figure_svgs
    figures = list(EXAMPLES.values())
    for _ in range(3):
        svgs = figure_svgs(figures, [None] * len(figures), Path(sys.argv[1]))
    print(len(svgs))
    """
)


def test_processes_share_one_cache(tmp_path):
    cache = tmp_path / "cache"
    here = str(Path(__file__).parent)
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(cache), here],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for writer in writers:
        out, err = writer.communicate(timeout=120)
        assert writer.returncode == 0 and out.strip() == str(len(FIGURES)), err[-2000:]
        assert "cannot be used" not in err
    assert _entries(cache) == len(FIGURES)
    assert figure_svgs(FIGURES, [None] * len(FIGURES), cache) == [figure_svg(figure) for figure in FIGURES]


def test_a_run_s_recorded_cache_folder(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    assert run_cache_dir(run) is None  # no manifest
    for config, found in (
        ({"cache_dir": str(tmp_path)}, tmp_path),
        ({"cache_dir": str(tmp_path), "cache": False}, None),
        ({"cache_dir": str(tmp_path / "not-there")}, None),
        ({}, None),
    ):
        (run / "manifest.json").write_text(json.dumps({"config": config}), encoding="utf-8")
        assert run_cache_dir(run) == found


def test_reports_and_the_viewer_serve_a_judged_run_s_figures(tmp_path, monkeypatch):
    from jurist.view.viewer import Viewer
    from support import run_cli

    cache = tmp_path / "cache"
    config = JudgeConfig(model="baseline", cache_dir=cache)
    run = jurist.judge(
        "ragbench", "sample:ragbench", config, out=tmp_path / "runs" / "a", progress=False
    ).run_dir
    page = (run / "report.html").read_text(encoding="utf-8")
    assert _entries(cache) >= 4
    drawn = _not_drawn(monkeypatch)
    again = jurist.judge("ragbench", "sample:ragbench", config, out=tmp_path / "runs" / "b", progress=False)
    assert _svgs((again.run_dir / "report.html").read_text(encoding="utf-8")) == _svgs(page)
    assert run_cli(["report", str(run), "--html", str(tmp_path / "again.html")]) == 0
    assert _svgs((tmp_path / "again.html").read_text(encoding="utf-8")) == _svgs(page)
    viewer = Viewer(tmp_path / "runs")
    blocks = viewer.figures(viewer.run("a"))
    assert [block["svg"] for block in blocks] == _svgs(page)
    jurist.score("ragbench", run, write=True)  # the recorded config's cache_dir
    assert _svgs((run / "report.html").read_text(encoding="utf-8")) == _svgs(page)
    assert drawn == []
    # With the cache off, every figure is drawn.
    jurist.judge(
        "ragbench",
        "sample:ragbench",
        config.model_copy(update={"cache": False}),
        out=tmp_path / "c",
        progress=False,
    )
    assert len(drawn) == len(blocks)


def _svgs(page: str) -> list[str]:
    return re.findall(r"<svg .*?</svg>", page, re.S)
