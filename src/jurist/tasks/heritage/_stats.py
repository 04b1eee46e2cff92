"""Small helpers the heritage scorers share."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["mean_present"]


def mean_present(values: Sequence[float | None]) -> float | None:
    """The mean of the values that are not ``None`` (``None`` when there are none)."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None
