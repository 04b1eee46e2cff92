"""Finished figures, read back without importing matplotlib or drawing them again.

Drawing a report's figures costs a run's process about half a second (importing matplotlib,
then drawing), the most of what a small cached run spends after its imports. The figure
cache keeps, beside the finished verdicts in the judge's ``cache_dir`` (``figures.sqlite``),
each figure's drawing (:func:`jurist.report.plots.drawn_svgs`: the SVG before its ids get
the page's prefix); :func:`figure_svgs` serves a figure drawn before from it, and imports
matplotlib only when some figure of the page is not there.

The key (:func:`figure_key`) holds everything that decides the drawing's text:

- the figure's kind, title and data (its caption is not drawn): the data as written, each
  value with its type (a list and a tuple, ``1`` and ``1.0``, are different data), mappings
  by key (a drawer reads a mapping's values by key, never in its order); data holding any
  value but ``dict`` (text keys), ``list``, ``tuple``, ``str``, ``int``, ``float``, ``bool``
  and ``None`` is drawn each time and never stored;
- the source of :mod:`jurist.report.plots` (its drawers, sizes, palette and the matplotlib
  settings it draws with; it draws from matplotlib's defaults, never a matplotlibrc file);
- the versions of matplotlib, NumPy and Python, and the layout of an entry.

A served drawing is byte for byte the one :func:`~jurist.report.plots.drawn_svgs` gives:
each entry is stored with the SHA-256 of its text and checked against it. An entry that
does not read back (damaged, another layout) is a miss and is drawn again; a cache file
that cannot be opened or written (a read-only folder, a folder that cannot be made) is
skipped, and a file that is not a database or is damaged is logged once and moved aside
(``figures.sqlite.damaged``, so the next drawings start a new one): the figures are drawn,
never a failed report. A drawing that holds text redaction would change (a key in a label) is
never stored.

Several processes may read and write one file at once: each lookup is one read, each
batch of new drawings one short write transaction (SQLite's rollback journal, so a reader
needs no write access to the folder); two processes that draw the same figure store the
same text. The file keeps the :data:`KEPT` newest drawings; older ones are deleted as new
ones are written.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import sys
import zlib
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from jurist.report.figures import Figure

__all__ = ["FIGURES_DB", "KEPT", "figure_key", "figure_svgs", "run_cache_dir"]

logger = logging.getLogger(__name__)

FIGURES_DB = "figures.sqlite"
"""The file of a judge's ``cache_dir`` that holds finished figures."""

LAYOUT = 1
"""The layout of a stored entry and of the key; another layout is another key."""

KEPT = 1000
"""Drawings a cache file keeps (the newest written); a few KB each, compressed."""

_TIMEOUT = 10.0
"""Seconds a lookup or a write waits for another process's write before it gives up."""

_SCHEMA = "CREATE TABLE IF NOT EXISTS figures (key TEXT PRIMARY KEY, sha256 TEXT NOT NULL, svg BLOB NOT NULL)"

_warned: set[Path] = set()


class _Uncacheable(Exception):
    """The figure's data holds a value whose drawing the key cannot pin down."""


def _typed(value: Any) -> Any:
    """``value`` as JSON that tells every type apart (see the module)."""
    kind = type(value)
    if value is None or kind is str or kind is bool or kind is int or kind is float:
        return [kind.__name__, value if kind is not float else repr(value)]
    if kind is list or kind is tuple:
        return [kind.__name__, [_typed(item) for item in value]]
    if kind is dict and all(type(name) is str for name in value):
        return ["dict", [[name, _typed(value[name])] for name in sorted(value)]]
    raise _Uncacheable(kind.__name__)


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


@cache
def _drawing_state() -> str | None:
    """What decides a drawing besides the figure: the plotting code and the versions of what
    it draws with; ``None`` when the code's source cannot be read (nothing is cached)."""
    from jurist.report import plots

    try:
        source = Path(plots.__file__).read_bytes()
    except (OSError, TypeError):
        return None
    head = {
        "layout": LAYOUT,
        "plots": hashlib.sha256(source).hexdigest(),
        "matplotlib": _version("matplotlib"),
        "numpy": _version("numpy"),
        "python": list(sys.version_info[:3]),
    }
    return json.dumps(head, sort_keys=True)


def figure_key(figure: Figure) -> str | None:
    """The key of ``figure``'s drawing (see the module), or ``None`` when it is never cached."""
    state = _drawing_state()
    if state is None:
        return None
    try:
        drawn = {"kind": _typed(figure.kind), "title": _typed(figure.title), "data": _typed(figure.data)}
    except (_Uncacheable, RecursionError):
        return None
    text = state + "\n" + json.dumps(drawn, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _skip(path: Path, exc: BaseException) -> None:
    if path not in _warned:
        _warned.add(path)
        logger.warning("the figure cache %s cannot be used (%s); drawing the figures", path, exc)


def _set_aside(path: Path) -> None:
    """Move a damaged cache file aside (``figures.sqlite.damaged``): the next drawings start a new one."""
    try:
        path.replace(path.with_name(path.name + ".damaged"))
    except OSError as exc:
        logger.debug("could not move the damaged figure cache %s aside: %s", path, exc)


def _read(path: Path, keys: Sequence[str]) -> dict[str, str]:
    """The drawings stored under ``keys`` that read back whole (a missing file: none)."""
    if not keys or not path.is_file():
        return {}
    found: dict[str, str] = {}
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=_TIMEOUT)
    except sqlite3.Error as exc:
        _skip(path, exc)
        return {}
    try:
        marks = ",".join("?" * len(keys))
        rows = db.execute(
            f"SELECT key, sha256, svg FROM figures WHERE key IN ({marks})", list(keys)
        ).fetchall()
    except sqlite3.Error as exc:
        db.close()
        _skip(path, exc)
        if getattr(exc, "sqlite_errorcode", None) in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
            _set_aside(path)
        return {}
    db.close()
    for key, digest, blob in rows:
        try:
            text = zlib.decompress(blob).decode("utf-8")
        except (zlib.error, TypeError, UnicodeDecodeError):
            continue
        if hashlib.sha256(text.encode("utf-8")).hexdigest() == digest:
            found[key] = text
    return found


def _write(path: Path, drawings: Mapping[str, str]) -> None:
    """Store ``drawings`` by key in one transaction, then keep the :data:`KEPT` newest."""
    if not drawings:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, timeout=_TIMEOUT, isolation_level=None)
    except (OSError, sqlite3.Error) as exc:
        logger.debug("could not store figures in %s: %s", path, exc)
        return
    try:
        db.execute("PRAGMA synchronous=NORMAL")  # a cache: a write lost in a power cut is drawn again
        db.execute(_SCHEMA)
        db.execute("BEGIN IMMEDIATE")
        for key, text in drawings.items():
            data = text.encode("utf-8")
            db.execute(
                "INSERT OR REPLACE INTO figures (key, sha256, svg) VALUES (?, ?, ?)",
                (key, hashlib.sha256(data).hexdigest(), zlib.compress(data, 6)),
            )
        db.execute("DELETE FROM figures WHERE rowid <= (SELECT MAX(rowid) FROM figures) - ?", (KEPT,))
        db.execute("COMMIT")
    except sqlite3.Error as exc:  # e.g. a read-only folder: the figures are drawn each time
        logger.debug("could not store figures in %s: %s", path, exc)
    finally:
        db.close()


def figure_svgs(
    figures: Sequence[Figure], id_prefixes: Sequence[str | None], cache_dir: Path | None
) -> list[str]:
    """Each figure as :func:`jurist.report.plots.figure_svg` gives it with its id prefix,
    served from the figure cache of ``cache_dir`` (``figures.sqlite``) where it holds the
    figure's drawing, drawn (and stored) otherwise.

    Args:
        figures: The figures, in the page's order.
        id_prefixes: Each figure's id prefix (``None``: derived from its content).
        cache_dir: The judge's cache folder (created when a drawing is stored in it and it
            is not there), or ``None``: every figure is drawn, nothing is stored.

    Returns:
        The ``<svg>`` texts, in the order of ``figures``.
    """
    from jurist.redaction import redact
    from jurist.report.plots import scoped_svg

    path = None if cache_dir is None else Path(cache_dir).expanduser() / FIGURES_DB
    keys = [figure_key(figure) if path is not None else None for figure in figures]
    found = _read(path, [key for key in keys if key is not None]) if path is not None else {}
    drawings = {index: found[key] for index, key in enumerate(keys) if key is not None and key in found}
    missing = [index for index in range(len(figures)) if index not in drawings]
    if missing:
        from jurist.report.plots import drawn_svgs

        kept: dict[str, str] = {}
        for index, svg in zip(missing, drawn_svgs([figures[index] for index in missing]), strict=True):
            drawings[index] = svg
            key = keys[index]
            if key is not None and redact(svg) == svg:
                kept[key] = svg
        if path is not None:
            _write(path, kept)
    return [
        scoped_svg(drawings[index], figure, id_prefix=prefix)
        for index, (figure, prefix) in enumerate(zip(figures, id_prefixes, strict=True))
    ]


def run_cache_dir(run_dir: Path) -> Path | None:
    """The cache folder of the judge config a run directory's ``manifest.json`` records (a
    relative one taken from the working directory, as the config's is), when that config
    kept its cache on and the folder is there; otherwise ``None``. What a command that draws
    a recorded run's figures again (``jurist report``, ``jurist view``, ``jurist score
    --write``) uses: it never creates a folder."""
    try:
        manifest = json.loads((Path(run_dir) / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    config = manifest.get("config") if isinstance(manifest, dict) else None
    if not isinstance(config, dict) or config.get("cache") is False:
        return None
    folder = config.get("cache_dir")
    if not isinstance(folder, str) or not folder:
        return None
    found = Path(folder).expanduser()
    return found if found.is_dir() else None
