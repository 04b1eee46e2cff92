"""How a panel's run is shown: its Markdown section, its figures, the lines ``jurist judge``
prints, and the review columns of its votes.

Every number comes from the panel's section of the summary (:mod:`jurist.jury.run`); nothing
here computes a statistic. A panel that voted per labelled key (its section has ``labels``)
shows its agreement per label kind.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from jurist.jury.derived_run import SectionViews
from jurist.report.figures import Figure
from jurist.tasks._contract import Task

__all__ = ["PanelViews", "panel_figures", "panel_lines", "section_markdown"]

_STATISTICS = (
    ("pairwise_agreement", "pairwise agreement"),
    ("fleiss_kappa", "Fleiss' κ"),
    ("krippendorff_alpha", "Krippendorff's α"),
    ("mean_item_sd", "mean within-item SD"),
)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _fmt(value: Any) -> str:
    if _missing(value):
        return "n/a"
    if isinstance(value, float):
        return f"{value:.0f}" if value.is_integer() and (value == 0 or abs(value) > 1) else f"{value:.3f}"
    return str(value)


def _interval(value: Any, low: Any, high: Any) -> str:
    if _missing(value):
        return "n/a"
    if _missing(low) or _missing(high):
        return _fmt(value)
    return f"{_fmt(value)} [{_fmt(low)}, {_fmt(high)}]"


def _gold(entry: Mapping[str, Any] | None) -> str:
    if not entry:
        return "n/a"
    return _interval(entry.get("rate"), entry.get("low"), entry.get("high")) + f" (n={entry.get('n')})"


def _agreement(section: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    if section.get("kind") == "jury":
        return "agreement among jurors", section.get("agreement") or {}
    return "self-consistency across repeats", section.get("self_consistency") or {}


def _figure_rows(section: Mapping[str, Any]) -> list[str]:
    """The headline figures shared by members and the panel, one row each, with intervals."""
    columns = [member.get("figures") or {} for member in section.get("members") or []]
    columns.append((section.get("aggregated") or {}).get("figures") or {})
    names: list[str] = []
    for figures in columns:
        names += [name for name in figures if name not in names]
    rows = []
    for name in names:
        if name.endswith(("_low", "_high")):
            continue
        cells = [_interval(f.get(name), f.get(f"{name}_low"), f.get(f"{name}_high")) for f in columns]
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return rows


def section_markdown(section: Mapping[str, Any]) -> str:
    """The Markdown section of a panel: members against the panel, agreement, votes."""
    kind = section.get("kind")
    members = list(section.get("members") or [])
    word = "jurors" if kind == "jury" else "repeats"
    weighted = " (weighted)" if section.get("weights") else ""
    title = (
        f"## jury: {section.get('aggregate')}{weighted} of {len(members)} jurors ({section.get('name')})"
        if kind == "jury"
        else f"## repeats: {len(members)} asks of {section.get('name')}, {section.get('aggregate')}"
    )
    names = [str(member.get("name")) for member in members]
    header = "| | " + " | ".join(names) + f" | {kind} |"
    labels = section.get("labels")
    voted_on = (
        f"Votes per key on the labels {', '.join(f'`{kind}`' for kind in labels)} (the verdict "
        f"`{section.get('verdict')}` follows from them)"
        if isinstance(labels, Mapping)
        else f"Votes on `{section.get('verdict')}`"
    )
    lines = [title, "", f"{voted_on}; each of the {word} is its own run directory.", ""]
    lines += [header, "|---" * (len(names) + 2) + "|"]
    if any(member.get("weight") is not None for member in members):
        lines.append("| weight | " + " | ".join(_fmt(member.get("weight")) for member in members) + " | |")
    lines.append("| model | " + " | ".join(str(member.get("model")) for member in members) + " | |")
    aggregated = section.get("aggregated") or {}
    gold = [_gold(member.get("gold")) for member in members] + [_gold(aggregated.get("gold"))]
    lines.append("| agreement with gold | " + " | ".join(gold) + " |")
    if any(member.get("self_consistency") for member in members):
        cells = []
        for member in members:
            inner = member.get("self_consistency") or {}
            cells.append(
                _interval(
                    inner.get("fleiss_kappa"), inner.get("fleiss_kappa_low"), inner.get("fleiss_kappa_high")
                )
            )
        lines.append("| self-consistency κ | " + " | ".join(cells) + " | |")
    lines += _figure_rows(section)
    if isinstance(labels, Mapping):
        return "\n".join([*lines, *_label_lines(section, labels, word, len(members))]) + "\n"
    heading, figures = _agreement(section)
    scale = figures.get("scale", "nominal")
    votes = section.get("votes") or {}
    unit = str(votes.get("unit") or "item")
    lines += [
        "",
        f"### {heading} ({figures.get('items', 0)} {unit}s with two votes or more; {scale} scale)",
        "",
        "| statistic | value | 95% interval |",
        "|---|---|---|",
    ]
    for key, label in _STATISTICS:
        if key in figures:
            suffix = f" ({scale})" if key == "krippendorff_alpha" else ""
            low, high = figures.get(f"{key}_low"), figures.get(f"{key}_high")
            span = "n/a" if _missing(low) or _missing(high) else f"[{_fmt(low)}, {_fmt(high)}]"
            lines.append(f"| {label}{suffix} | {_fmt(figures.get(key))} | {span} |")
    pairs = section.get("pairs") or []
    if pairs:
        lines += ["", "| pair | items | agreement |", "|---|---|---|"]
        lines += [f"| {p['a']} – {p['b']} | {p['n']} | {_fmt(p['agreement'])} |" for p in pairs]
    tied = (
        f"{votes.get('no_decision', 0)} without a winning verdict, given {votes.get('no_decision_verdict')!r}"
        if votes.get("no_decision_verdict") is not None
        else f"{votes.get('decided_by_order', 0)} decided by {word[:-1]} order (the first {word[:-1]} in "
        "order who voted, or the earliest voter among tied verdicts)"
    )
    lines += [
        "",
        f"Votes on each {unit}: {votes.get('unanimous', 0)} of {votes.get('items', 0)} {unit}s unanimous, "
        f"{votes.get('split', 0)} split, {tied}; "
        f"{votes.get('partial', 0)} with fewer "
        f"than {len(members)} votes (a member failed); {votes.get('no_votes', 0)} without any vote (failed).",
    ]
    return "\n".join(lines) + "\n"


def _label_agreement(section: Mapping[str, Any], entry: Mapping[str, Any]) -> Mapping[str, Any]:
    return entry.get("agreement" if section.get("kind") == "jury" else "self_consistency") or {}


def _label_lines(section: Mapping[str, Any], labels: Mapping[str, Any], word: str, size: int) -> list[str]:
    """The agreement per label kind, each pair's agreement per label kind, and the votes."""
    heading, _ = _agreement(section)
    shown = [(key, label) for key, label in _STATISTICS if key != "mean_item_sd"]
    lines = [
        "",
        f"### {heading}, per label (keys with two votes or more; 95% intervals resample items)",
        "",
        "| label | keys | unanimous | split | decided by order | "
        + " | ".join(label for _, label in shown)
        + " |",
        "|---" * (5 + len(shown)) + "|",
    ]
    for kind, entry in labels.items():
        figures = _label_agreement(section, entry)
        cells = [
            _interval(figures.get(key), figures.get(f"{key}_low"), figures.get(f"{key}_high"))
            for key, _ in shown
        ]
        counts = [entry.get(name, 0) for name in ("keys", "unanimous", "split", "decided_by_order")]
        lines.append(f"| {kind} | " + " | ".join(str(c) for c in counts) + " | " + " | ".join(cells) + " |")
    kinds = list(labels)
    first = labels[kinds[0]].get("pairs") if kinds else None
    if first:
        lines += ["", "| pair | " + " | ".join(kinds) + " |", "|---" * (1 + len(kinds)) + "|"]
        for index, pair in enumerate(first):
            cells = []
            for kind in kinds:
                found = (labels[kind].get("pairs") or [])[index]
                cells.append(f"{_fmt(found['agreement'])} (n={found['n']})")
            lines.append(f"| {pair['a']} – {pair['b']} | " + " | ".join(cells) + " |")
    votes = section.get("votes") or {}
    lines += [
        "",
        f"Votes on each item: {votes.get('unanimous', 0)} of {votes.get('items', 0)} items unanimous on "
        f"every key, {votes.get('split', 0)} with a split key, {votes.get('decided_by_order', 0)} with a "
        f"key decided by {word[:-1]} order (the first {word[:-1]} in order who voted, or the earliest "
        f"voter among tied labels); {votes.get('partial', 0)} with fewer than {size} votes (a member "
        f"failed); {votes.get('no_votes', 0)} without any vote (failed).",
    ]
    return lines


def panel_figures(section: Mapping[str, Any]) -> list[Figure]:
    """The panel's figures: each member's and the panel's agreement with gold (when the task
    reports one), and the agreement statistics among members, each with its interval."""
    kind = str(section.get("kind"))
    members = list(section.get("members") or [])
    found = []
    aggregated = section.get("aggregated") or {}
    word = "juror" if kind == "jury" else "repeat"
    entries = [(str(m.get("name")), m.get("gold"), word) for m in members]
    entries.append((kind, aggregated.get("gold"), kind))
    bars = [
        {"label": name, "value": gold["rate"], "low": gold["low"], "high": gold["high"], "group": group}
        for name, gold, group in entries
        if gold
    ]
    if bars:
        found.append(
            Figure(
                kind="bars",
                title=f"Agreement with gold: each {word} and the {kind}",
                data={"bars": bars, "ylabel": "agreement with gold", "ylim": [0, 1]},
                caption=(
                    f"Share of answered items whose verdict agrees with gold, with 95% Wilson intervals; "
                    f"the last bar is the {kind}'s {section.get('aggregate')} verdict."
                ),
            )
        )
    labels = section.get("labels")
    if isinstance(labels, Mapping):
        return found + _label_figures(section, labels)
    heading, figures = _agreement(section)
    unit = str((section.get("votes") or {}).get("unit") or "item")
    statistics = [
        {
            "label": label,
            "value": figures.get(key),
            "low": figures.get(f"{key}_low"),
            "high": figures.get(f"{key}_high"),
        }
        for key, label in _STATISTICS
        if key in figures and not _missing(figures.get(key))
    ]
    if statistics:
        found.append(
            Figure(
                kind="bars",
                title=heading[0].upper() + heading[1:],
                data={"bars": statistics, "ylabel": "value"},
                caption=(
                    f"Over {figures.get('items', 0)} {unit}s with two votes or more; 95% bootstrap intervals "
                    f"resampling {unit}s. Krippendorff's α is on the "
                    f"{figures.get('scale', 'nominal')} scale."
                ),
            )
        )
    return found


def _label_figures(section: Mapping[str, Any], labels: Mapping[str, Any]) -> list[Figure]:
    """One figure: each agreement statistic per label kind, with its interval."""
    heading, _ = _agreement(section)
    bars = []
    for kind, entry in labels.items():
        figures = _label_agreement(section, entry)
        bars += [
            {
                "label": f"{kind}: {label}",
                "value": figures.get(key),
                "low": figures.get(f"{key}_low"),
                "high": figures.get(f"{key}_high"),
                "group": kind,
            }
            for key, label in _STATISTICS
            if key in figures and not _missing(figures.get(key))
        ]
    if not bars:
        return []
    return [
        Figure(
            kind="bars",
            title=heading[0].upper() + heading[1:] + ", per label",
            data={"bars": bars, "ylabel": "value"},
            caption=(
                "Over every labelled key with two votes or more (a document sentence's relevant label, "
                "say); 95% bootstrap intervals resampling items, each with all its keys."
            ),
        )
    ]


def panel_lines(summary: Any) -> list[str]:
    """What ``jurist judge`` prints about a panel's run, after the task's own lines (none when
    the run is not a panel's)."""
    if not isinstance(summary, Mapping):
        return []
    section = summary.get("jury") or summary.get("repeats")
    if not isinstance(section, Mapping) or "members" not in section:
        return []
    heading, figures = _agreement(section)
    members = list(section.get("members") or [])
    labels = section.get("labels")
    if isinstance(labels, Mapping):
        lines = [
            f"{section.get('kind')} of {len(members)} ({section.get('aggregate')}): {heading}, per label:"
        ]
        for kind, entry in labels.items():
            found = _label_agreement(section, entry)
            stats = ", ".join(
                f"{label} {_interval(found.get(key), found.get(f'{key}_low'), found.get(f'{key}_high'))}"
                for key, label in _STATISTICS
                if key in found
            )
            lines.append(f"  {kind} ({entry.get('keys', 0)} keys): {stats}")
        return lines + _gold_line(section, members)
    stats = ", ".join(
        f"{label} {_interval(figures.get(key), figures.get(f'{key}_low'), figures.get(f'{key}_high'))}"
        for key, label in _STATISTICS
        if key in figures
    )
    lines = [f"{section.get('kind')} of {len(members)} ({section.get('aggregate')}): {heading}: {stats}"]
    return lines + _gold_line(section, members)


def _gold_line(section: Mapping[str, Any], members: list[Any]) -> list[str]:
    gold = [(str(m.get("name")), m.get("gold")) for m in members]
    gold.append((str(section.get("kind")), (section.get("aggregated") or {}).get("gold")))
    if not any(entry for _, entry in gold):
        return []
    return [
        "agreement with gold: "
        + ", ".join(f"{name} {_fmt(entry['rate']) if entry else 'n/a'}" for name, entry in gold)
    ]


class PanelViews(SectionViews):
    """A task as a panel's run shows it: the task's review with the vote columns added, and
    the task's figures followed by the panel's (:func:`panel_figures`)."""

    def __init__(self, task: Task, section: Mapping[str, Any]) -> None:
        kind = section.get("kind")
        super().__init__(task, section, (f"{kind}_votes", f"{kind}_voters", f"{kind}_tie"), panel_figures)
