"""The heritage knowledge base: heritage institutions with Wikidata, ISIL, GND and DBS ids.

A KB file is a TSV with a header, in one of two layouts:

- jurist's own: ``wikidata_id  label  isil  gnd_id  dbs_id``;
- a Wikidata SPARQL export: ``?item  ?itemLabel  ?isil  ?gndId  ?dbsId`` (items as
  ``http://www.wikidata.org/entity/Q...`` URIs; trailing empty cells may be missing).

Rows of the same Wikidata item are merged into one :class:`KbEntry` (an item can have
several ISIL or GND ids). jurist ships a subset (``sample:heritage-kb``); pass a path to
use a full export.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from jurist.datasets.io import read_text, sha256_file
from jurist.errors import InputError

__all__ = ["KB_SAMPLE", "KbEntry", "KnowledgeBase", "load_knowledge_base"]

KB_SAMPLE = "heritage_kb_sample.tsv"
"""The bundled KB subset in ``jurist/datasets/samples`` (see ATTRIBUTION.md there)."""

_WIKIDATA = re.compile(r"Q\d+")
_DBS_LIKE = re.compile(r"^[A-Z]{2}\d{3}$")
_COLUMNS = {
    "wikidata_id": "wikidata_id",
    "?item": "wikidata_id",
    "label": "label",
    "?itemLabel": "label",
    "isil": "isil",
    "?isil": "isil",
    "gnd_id": "gnd_id",
    "?gndId": "gnd_id",
    "dbs_id": "dbs_id",
    "?dbsId": "dbs_id",
}


@dataclass(frozen=True)
class KbEntry:
    """One institution of the knowledge base."""

    kb_id: str
    """The Wikidata id, e.g. ``Q190804``."""
    label: str
    isil: tuple[str, ...] = ()
    gnd: tuple[str, ...] = ()
    dbs: tuple[str, ...] = ()


@dataclass
class KnowledgeBase:
    """Institutions by Wikidata id, with an ISIL index.

    Attributes:
        entries: ``{kb_id: KbEntry}`` in file order.
        path: The file it was read from.
        sha256: The file's hash (recorded with runs that link against it).
    """

    entries: dict[str, KbEntry]
    path: Path | None = None
    sha256: str | None = None
    by_isil: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.by_isil:
            for entry in self.entries.values():
                for code in entry.isil:
                    self.by_isil.setdefault(code.lower(), entry.kb_id)

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, kb_id: object) -> bool:
        return kb_id in self.entries

    def __iter__(self) -> Iterator[KbEntry]:
        return iter(self.entries.values())

    def get(self, kb_id: str) -> KbEntry | None:
        """The entry of a Wikidata id, or ``None``."""
        return self.entries.get(kb_id)

    def find_isil(self, code: str) -> KbEntry | None:
        """The entry holding an ISIL code (case-insensitive), or ``None``."""
        kb_id = self.by_isil.get(code.lower())
        return self.entries[kb_id] if kb_id else None

    def isil_by_wikidata(self) -> dict[str, tuple[str, ...]]:
        """``{kb_id: ISIL codes}``, for :func:`jurist.metrics.heritage.linking.cross_kb_consistency`."""
        return {entry.kb_id: entry.isil for entry in self.entries.values()}


def _add(values: tuple[str, ...], value: str) -> tuple[str, ...]:
    return values if not value or value in values else (*values, value)


def load_knowledge_base(path: str | Path | None = None) -> KnowledgeBase:
    """Read a KB TSV (either layout); ``None`` or ``sample:heritage-kb`` reads the bundled subset.

    Raises:
        InputError: The file is missing, has no ``wikidata_id``/``?item`` and ``label``/
            ``?itemLabel`` columns, or a row has no Wikidata id.
    """
    if path is None or str(path) == "sample:heritage-kb":
        file = Path(str(resources.files("jurist.datasets").joinpath("samples", KB_SAMPLE)))
    else:
        file = Path(path)
    if not file.is_file():
        raise InputError("knowledge base file not found", path=file)
    entries: dict[str, KbEntry] = {}
    with io.StringIO(read_text(file), newline="") as handle:
        reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if header is None:
            raise InputError("empty knowledge base file", path=file)
        names = [_COLUMNS.get(name.strip(), name.strip()) for name in header]
        if "wikidata_id" not in names or "label" not in names:
            raise InputError(
                "a KB file needs columns wikidata_id and label (or ?item and ?itemLabel)", path=file, line=1
            )
        for number, row in enumerate(reader, start=2):
            if not any(cell.strip() for cell in row):
                continue
            cells = dict(zip(names, (cell.strip() for cell in row), strict=False))
            match = _WIKIDATA.search(cells.get("wikidata_id", ""))
            if match is None:
                raise InputError(
                    "no Wikidata id (Q...) in this row", path=file, line=number, field="wikidata_id"
                )
            kb_id = match.group(0)
            gnd, dbs = cells.get("gnd_id", ""), cells.get("dbs_id", "")
            if _DBS_LIKE.match(gnd) and not dbs:  # exports drop empty cells: a lone DBS id shifts left
                gnd, dbs = "", gnd
            label = cells.get("label", "").replace('\\"', '"')
            old = entries.get(kb_id, KbEntry(kb_id=kb_id, label=label))
            entries[kb_id] = KbEntry(
                kb_id=kb_id,
                label=old.label or label,
                isil=_add(old.isil, cells.get("isil", "")),
                gnd=_add(old.gnd, gnd),
                dbs=_add(old.dbs, dbs),
            )
    return KnowledgeBase(entries=entries, path=file, sha256=sha256_file(file))
