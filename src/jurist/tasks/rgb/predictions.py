"""Scoring RGB's own prediction files: the numbers RGB's evaluation gives on them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jurist.datasets.rgb import (
    read_rgb_predictions,
)
from jurist.errors import InputError
from jurist.metrics.rgb import (
    AnswerCheck,
    accuracy,
    fact_check,
    rejection_rate,
    rgb_labels,
    rgb_labels_improved,
)


def _language_of(path: Path) -> str:
    return "zh" if "zh" in path.name else "en"


def score_rgb_predictions(
    paths: Sequence[str | Path],
    *,
    recheck: AnswerCheck | None = None,
    language: str | None = None,
    fact: bool | None = None,
) -> list[dict[str, Any]]:
    """Score RGB prediction files as RGB's ``evalue.py`` does; no model is called.

    For each file: ``all_rate = tt / nums``, ``tt`` and ``nums`` (see
    :func:`~jurist.metrics.rgb.accuracy`) at the file's noise rate, and, for a counterfactual
    file (``_fact`` in its name, as RGB decides), ``fact_check_rate``, ``correct_rate``,
    ``fact_tt`` and ``correct_tt`` (:func:`~jurist.metrics.rgb.fact_check`), from the labels
    stored in the file. ``rejection_share`` (labels ``[-1]``) is added.

    Args:
        paths: RGB prediction files (``prediction_{dataset}_..._noise{n}_...json``).
        recheck: Recompute the labels from each ``prediction`` and ``ans`` instead of using
            the stored ones: ``original`` (RGB's check) or ``improved`` (jurist's).
        language: ``en`` or ``zh`` for ``recheck`` (default: ``zh`` if the name has ``zh``).
        fact: Force the counterfactual figures on (True) or off (False).

    Raises:
        InputError: A file is missing or malformed, or mixes noise rates (RGB scores one
            noise rate per file).
    """
    results = []
    for raw_path in paths:
        path = Path(raw_path)
        records = read_rgb_predictions(path)
        noise_rate = records[0].noise_rate
        for record in records:
            if record.noise_rate != noise_rate:
                raise InputError(
                    f"noise rate {record.noise_rate} differs from the file's first ({noise_rate}); "
                    "RGB scores one noise rate per file",
                    path=path,
                    line=record.line,
                    field="noise_rate",
                )
        lang = language or _language_of(path)
        if recheck is None:
            labels = [record.label for record in records]
            factlabels = [record.factlabel for record in records]
        else:
            checker = rgb_labels if recheck == "original" else rgb_labels_improved
            rechecked = [checker(record.prediction, record.ans, language=lang) for record in records]
            labels = [entry.label for entry in rechecked]
            factlabels = [entry.factlabel for entry in rechecked]
        acc = accuracy(labels, noise_rate)
        scores: dict[str, Any] = {
            "file": str(path),
            "all_rate": acc.rate,
            "noise_rate": noise_rate,
            "tt": acc.count,
            "nums": acc.total,
        }
        if fact if fact is not None else "_fact" in path.name:
            result = fact_check(labels, factlabels)
            scores.update(
                fact_check_rate=result.fact_check_rate,
                correct_rate=result.correct_rate,
                fact_tt=result.fact_tt,
                correct_tt=result.correct_tt,
            )
        scores["rejection_share"] = rejection_rate(labels).rate
        scores["labels"] = "stored" if recheck is None else f"recomputed ({recheck} check, {lang})"
        scores["changed_labels"] = (
            sum(1 for record, label in zip(records, labels, strict=True) if record.label != label)
            if recheck is not None
            else 0
        )
        results.append(scores)
    return results


__all__ = ["score_rgb_predictions"]
