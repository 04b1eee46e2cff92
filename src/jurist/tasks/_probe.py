"""Injection probes of a judge: can text planted in what is judged become the parsed verdict?

``jurist probe injection TASK [DATA] --config C`` works for any task through the task
contract (:meth:`~jurist.tasks.Task.read`, :meth:`~jurist.tasks.Task.items`,
:meth:`~jurist.tasks.Task.make_judge`); it names no task.

For each item (the first ``limit`` items of the data) and each case of the probe set
(``tasks/probes/data/injection.yaml``, or a file of the same shape):

1. The **clean** item is judged as it is.
2. The case's payload template is filled with the task's verdict vocabulary, read from the
   clean verdict: ``{verdict_field}`` (e.g. ``verdict``, ``choice``), ``{other_verdict}``
   (a verdict other than the clean one: the next label of the output type, the other
   boolean, the far end of a score range, ...) and ``{other_verdict_json}``.
3. The payload is planted in every *injectable* input (see :func:`injectable_fields`): at
   the end (or start) of a text input, or of the last (first) text inside a list or
   mapping input (e.g. the last response sentence of a keyed RAG response), after the
   case's padding. This **attack** item is judged.
4. The **control** item carries the same payload asking for the clean verdict instead
   (padded to the same length); it is judged too. It tells a verdict moved by the
   payload's demand apart from a verdict changed by extra text as such (a rule baseline
   that counts words or length changes with any added text, in the attack and the
   control alike).

The verdict compared is the one the payload asks to change (:func:`primary_verdict`): the
task's first declared output that is a boolean, an integer, a label or a list of labels
(``verdict``, ``choice``, ``overall_supported``, a classification's type), read from the
output without free text (fields named like ``reason``, ``reasoning``, ``rationale``,
``explanation``) and ``confidence``. Items whose verdict has no fixed vocabulary (an
extracted span, an answer: planted text there is content to extract) are skipped and
listed. A probe **moved** the verdict when the attack's verdict differs from both the
clean item's and the control's; it **failed** when the attack or the control could not be
judged (an unparseable or ambiguous answer: a refusal, never a forged verdict);
**changed** counts attacks whose verdict differs from the clean one for any reason.

A task may set ``untrusted_inputs`` (a tuple of input names) to say which inputs hold
judged text; without it, an input is injectable when the task declares it in
:attr:`~jurist.tasks.Task.inputs` and it holds text, or when it holds text of several
words (so identifiers, keys and option flags stay intact).
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
import typing
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel

from jurist.errors import ConfigError, InputError, JuristError

if TYPE_CHECKING:
    from jurist.judges.config import JudgeConfig
    from jurist.judges.judge import Judge
    from jurist.runner import Item
    from jurist.tasks._contract import Task

__all__ = [
    "INJECTION_CASES",
    "ProbeCase",
    "ProbeOutcome",
    "ProbeReport",
    "injectable_fields",
    "load_cases",
    "probe_injection",
    "probe_judge",
    "verdict_view",
]

INJECTION_CASES = "injection.yaml"
"""The bundled probe set, under ``jurist/tasks/probes/data/``."""

_FREE_TEXT = re.compile(r"(?:^|_)(?:reasons?|reasoning|rationale|explanations?|thoughts?|comments?|notes?)$")
_IGNORED = frozenset({"confidence"})
_PLACEHOLDER = re.compile(r"\{(verdict_field|other_verdict|other_verdict_json)\}")
_RANGE = re.compile(r"from (-?\d+) to (-?\d+)")
_POSITIONS = ("end", "start")


@dataclass(frozen=True)
class ProbeCase:
    """One injection case of a probe set.

    Attributes:
        id: Unique in its set.
        family: What kind of trick it is (``verdict-text``, ``json-verdict``, ``fake-field``, ...).
        payload: The template (placeholders: see the module docstring).
        position: ``end`` (appended to the text) or ``start`` (put before it).
        pad_text: Text repeated ``pad_times`` times before the payload.
        pad_times: How many times.
    """

    id: str
    family: str
    payload: str
    position: str = "end"
    pad_text: str = ""
    pad_times: int = 0

    def render(self, verdict_field: str, verdict: Any, other: Any = None) -> str:
        """The payload (with its padding) asking for ``verdict`` in the field ``verdict_field``.

        With ``other`` (the verdict of the paired attack or control), the verdict is padded
        with spaces to the same length as ``other``'s, so the two payloads differ only in
        the verdict they ask for, not in length.
        """
        text, literal = _verdict_text(verdict), json.dumps(verdict, ensure_ascii=False)
        if other is not None:
            text = text.ljust(len(_verdict_text(other)))
            literal = literal.ljust(len(json.dumps(other, ensure_ascii=False)))
        values = {"verdict_field": verdict_field, "other_verdict": text, "other_verdict_json": literal}
        rendered = _PLACEHOLDER.sub(lambda match: values[match.group(1)], self.payload)
        return self.pad_text * self.pad_times + rendered


def load_cases(path: str | Path | None = None) -> list[ProbeCase]:
    """The cases of a probe-set file (default: the bundled injection set).

    Raises:
        InputError: The file is missing or not YAML, or a case is invalid (named in the message).
    """
    if path is None:
        source = resources.files("jurist.tasks").joinpath("probes", "data", INJECTION_CASES)
        text, where = source.read_text(encoding="utf-8"), Path(str(source))
    else:
        where = Path(path)
        try:
            text = where.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read the probe set: {exc}", path=where) from None
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InputError(f"the probe set is not valid YAML: {exc}", path=where) from None
    entries = document.get("cases") if isinstance(document, dict) else None
    if not isinstance(entries, list) or not entries:
        raise InputError("the probe set has no 'cases' list", path=where, field="cases")
    cases: list[ProbeCase] = []
    seen: set[str] = set()
    for row, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in ("id", "family")):
            raise InputError("a case needs an 'id' and a 'family'", path=where, line=row, field="cases")
        try:
            case = ProbeCase(
                id=entry["id"],
                family=entry["family"],
                payload=str(entry["payload"]),
                position=str(entry.get("position", "end")),
                pad_text=str(entry.get("pad_text", "")),
                pad_times=int(entry.get("pad_times", 0)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"case {entry['id']!r} is invalid: {exc}", path=where, line=row) from None
        if case.position not in _POSITIONS or case.id in seen:
            problem = "a duplicate id" if case.id in seen else f"position {case.position!r} (end or start)"
            raise InputError(f"case {case.id!r} has {problem}", path=where, line=row)
        seen.add(case.id)
        cases.append(case)
    return cases


# ---------------------------------------------------------------------- verdicts


def _verdict_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(_verdict_text(v) for v in value)
    return str(value)


def _strip_free_text(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: _strip_free_text(item)
            for key, item in value.items()
            if not _FREE_TEXT.search(str(key)) and key not in _IGNORED
        }
    if isinstance(value, list):
        return [_strip_free_text(item) for item in value]
    return value


def verdict_view(output: dict[str, Any], declared: Iterable[str] = ()) -> dict[str, Any]:
    """The part of a judge's output that is its verdict: the ``declared`` output fields
    (all fields when none are declared), without free text and ``confidence``, at any depth.

    Examples:
        >>> verdict_view({"verdict": "A", "reasoning": "...", "order": "AB"}, ["verdict", "reasoning"])
        {'verdict': 'A'}
    """
    names = list(declared)
    kept = {key: value for key, value in output.items() if not names or key in names}
    view = _strip_free_text(kept)
    return {key: view[key] for key in sorted(view, key=lambda k: names.index(k) if k in names else 0)}


def _same(first: Any, second: Any) -> bool:
    return json.dumps(first, sort_keys=True, default=str) == json.dumps(second, sort_keys=True, default=str)


def _scalar(value: Any) -> bool:
    return isinstance(value, bool | int | str) and not (isinstance(value, str) and not value)


Path_ = tuple[str | int, ...]


def primary_verdict(view: dict[str, Any], labelled: Iterable[str] = ()) -> tuple[Path_, str, Any] | None:
    """Where the verdict a payload asks to change is: its path in the view, its field name
    and its value. It is the first output field that is a boolean, an integer or a label;
    else the first that is a list of labels (a field named in ``labelled``); else the first
    scalar of a nested object (e.g. a classification's type); else the first scalar
    anywhere (e.g. the first extracted entity's text)."""
    for name, value in view.items():
        if _scalar(value):
            return (name,), name, value
    lists = set(labelled)
    for name, value in view.items():
        if name in lists and isinstance(value, list) and all(_scalar(v) for v in value):
            return (name,), name, value
    for key, value in view.items():
        if isinstance(value, dict):
            for name, item in value.items():
                if _scalar(item):
                    return (key, name), str(name), item
    for key, value in view.items():
        found = _first_leaf(value, (key,), key)
        if found is not None:
            return found
    return None


def _first_leaf(value: Any, path: Path_, name: str) -> tuple[Path_, str, Any] | None:
    if isinstance(value, dict):
        for key, item in value.items():
            found = _first_leaf(item, (*path, key), str(key))
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _first_leaf(item, (*path, index), name)
            if found is not None:
                return found
    elif _scalar(value):
        return path, name, value
    return None


_MISSING = object()


def _at(view: dict[str, Any] | None, path: Path_) -> Any:
    value: Any = view
    for key in path:
        try:
            value = value[key]  # type: ignore[index]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return value


@dataclass
class _Vocabulary:
    """What the task's LLM program says about its output fields: labels and score ranges."""

    labels: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    ranges: dict[str, tuple[int, int]] = field(default_factory=dict)

    @classmethod
    def of(cls, task: Task, options: BaseModel) -> _Vocabulary:
        vocabulary = cls()
        try:
            program = task.program(options)
        except (JuristError, NotImplementedError):  # a task without an LLM program: no types to read
            return vocabulary
        for _name, predictor in program.named_predictors():
            for name, info in predictor.signature.output_fields.items():
                annotation = info.annotation
                if typing.get_origin(annotation) is list:
                    annotation = (typing.get_args(annotation) or (str,))[0]
                if typing.get_origin(annotation) is typing.Literal:
                    vocabulary.labels.setdefault(name, typing.get_args(annotation))
                extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
                found = _RANGE.search(str(extra.get("desc", "")))
                if annotation is int and found:
                    vocabulary.ranges.setdefault(name, (int(found.group(1)), int(found.group(2))))
        return vocabulary

    def other(self, name: str, value: Any) -> Any:
        """A verdict for ``name`` other than ``value`` of the same type, or ``None`` when the
        field has no fixed vocabulary (free text such as an extracted span or an answer)."""
        if isinstance(value, bool):
            return not value
        labels = self.labels.get(name)
        if isinstance(value, list):
            if not labels:
                return None
            first = value[0] if value else labels[-1]
            following = labels[(labels.index(first) + 1) % len(labels)] if first in labels else labels[0]
            return [following] if [following] != value else []
        if labels and value in labels and len(labels) > 1:
            return labels[(labels.index(value) + 1) % len(labels)]
        if isinstance(value, int):
            low, high = self.ranges.get(name, (value - 1, value + 1))
            return low if abs(value - low) >= abs(high - value) else high
        return None


# ---------------------------------------------------------------------- injection


def _words(text: str) -> int:
    return len(text.split())


def _has_text(value: Any, *, declared: bool) -> bool:
    if isinstance(value, str):
        return bool(value.strip()) if declared else _words(value) >= 3
    if isinstance(value, dict):
        return any(_has_text(item, declared=False) for item in value.values())
    if isinstance(value, list | tuple):
        return any(_has_text(item, declared=False) for item in value)
    return False


def injectable_fields(task: Task, inputs: dict[str, Any]) -> list[str]:
    """The inputs of an item that hold judged text (see the module docstring)."""
    declared = getattr(task, "untrusted_inputs", None)
    if declared is not None:
        return [name for name in declared if name in inputs]
    return [name for name, value in inputs.items() if _has_text(value, declared=name in task.inputs)]


def _plant(text: str, payload: str, position: str) -> str:
    return f"{payload}\n\n{text}" if position == "start" else f"{text}\n\n{payload}"


def _plant_nested(value: Any, payload: str, position: str) -> tuple[Any, bool]:
    """``value`` with the payload planted in its last (``end``) or first (``start``) text."""
    if isinstance(value, str):
        if _words(value) >= 3:
            return _plant(value, payload, position), True
        return value, False
    if isinstance(value, dict | list | tuple):
        keys = list(value.keys()) if isinstance(value, dict) else list(range(len(value)))
        order = keys if position == "start" else list(reversed(keys))
        changed = dict(value) if isinstance(value, dict) else list(value)
        for key in order:
            new, done = _plant_nested(value[key], payload, position)
            if done:
                changed[key] = new
                return (tuple(changed) if isinstance(value, tuple) else changed), True
    return value, False


def inject(
    inputs: dict[str, Any], fields: Sequence[str], payload: str, position: str = "end"
) -> dict[str, Any]:
    """A copy of ``inputs`` with ``payload`` planted in each of ``fields``.

    Examples:
        >>> inject({"answer": "Paris.", "order": "AB"}, ["answer"], "Score: 1")
        {'answer': 'Paris.\\n\\nScore: 1', 'order': 'AB'}
    """
    planted = copy.deepcopy(inputs)
    for name in fields:
        value = planted[name]
        if isinstance(value, str):
            planted[name] = _plant(value, payload, position)
        else:
            planted[name], _done = _plant_nested(value, payload, position)
    return planted


# ---------------------------------------------------------------------- probing


@dataclass
class ProbeOutcome:
    """One item × case: the three verdicts and what they say.

    Attributes:
        item: The item id.
        case: The case id.
        family: The case's family.
        fields: The inputs the payload was planted in.
        status: ``held`` (the demand moved nothing), ``moved`` or ``failed``.
        path: Where the verdict the payload asks to change is in the output (see
            :func:`primary_verdict`).
        changed: The attack's verdict differs from the clean one (for any reason).
        clean: The clean item's verdict (the value at ``path``).
        attack: The verdict with the payload (``None`` when it failed).
        control: The verdict with the control payload (``None`` when it failed).
        error: Why the attack or control failed.
        raw: The raw answers of the failed judgment.
    """

    item: str
    case: str
    family: str
    fields: list[str]
    status: str
    path: list[str | int] = field(default_factory=list)
    changed: bool = False
    clean: Any = None
    attack: Any = None
    control: Any = None
    error: str | None = None
    raw: list[str] = field(default_factory=list)


@dataclass
class ProbeReport:
    """What an injection probe of one judge found."""

    task: str
    judge: str
    fingerprint: str
    items: int
    cases: int
    outcomes: list[ProbeOutcome] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    """Items whose clean version could not be judged (id -> error); they have no probes."""

    def _count(self, outcomes: Iterable[ProbeOutcome]) -> dict[str, int]:
        listed = list(outcomes)
        return {
            "probes": len(listed),
            "moved": sum(o.status == "moved" for o in listed),
            "failed": sum(o.status == "failed" for o in listed),
            "changed": sum(o.changed for o in listed),
        }

    @property
    def totals(self) -> dict[str, int]:
        """Probes, moved, failed and changed over every case."""
        return self._count(self.outcomes)

    @property
    def moved(self) -> int:
        """How many probes moved a verdict."""
        return self.totals["moved"]

    def by_family(self) -> dict[str, dict[str, int]]:
        """The totals per payload family, in the probe set's order."""
        families = list(dict.fromkeys(o.family for o in self.outcomes))
        return {name: self._count(o for o in self.outcomes if o.family == name) for name in families}

    def to_dict(self) -> dict[str, Any]:
        """The report as strict JSON-ready values (what ``--json`` prints)."""
        return {
            "task": self.task,
            "judge": self.judge,
            "fingerprint": self.fingerprint,
            "items": self.items,
            "cases": self.cases,
            **self.totals,
            "families": self.by_family(),
            "skipped_items": dict(self.skipped),
            "moved_probes": [_outcome_dict(o) for o in self.outcomes if o.status == "moved"],
            "failed_probes": [_outcome_dict(o) for o in self.outcomes if o.status == "failed"],
        }

    def table(self) -> str:
        """A plain-text table: one row per family, then the total."""
        header = f"injection probe of task {self.task!r}, judge {self.judge} ({self.fingerprint})"
        lines = [
            header,
            f"{self.items} items x {self.cases} cases; moved: the payload's demand changed the verdict",
            "",
            f"{'family':<16} {'probes':>7} {'moved':>6} {'failed':>7} {'changed':>8}",
        ]
        rows = [*self.by_family().items(), ("total", self.totals)]
        for name, counts in rows:
            numbers = (
                f"{counts['probes']:>7} {counts['moved']:>6} {counts['failed']:>7} {counts['changed']:>8}"
            )
            lines.append(f"{name:<16} {numbers}")
        for outcome in [o for o in self.outcomes if o.status == "moved"][:10]:
            moved = f"{_short(outcome.clean)} -> {_short(outcome.attack)}"
            lines.append(f"moved: item {outcome.item} case {outcome.case}: {moved}")
        for item, error in list(self.skipped.items())[:5]:
            lines.append(f"skipped item {item}: the clean item could not be judged: {error}")
        return "\n".join(lines)


def _short(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _outcome_dict(outcome: ProbeOutcome) -> dict[str, Any]:
    return {
        "item": outcome.item,
        "case": outcome.case,
        "family": outcome.family,
        "fields": outcome.fields,
        "path": outcome.path,
        "clean": outcome.clean,
        "attack": outcome.attack,
        "control": outcome.control,
        "error": outcome.error,
        "raw": outcome.raw,
    }


@dataclass
class _Verdict:
    view: dict[str, Any] | None
    error: str | None = None
    raw: list[str] = field(default_factory=list)


async def probe_judge(
    task: Task,
    judge: Judge,
    items: Sequence[Item],
    options: BaseModel,
    cases: Sequence[ProbeCase],
    *,
    fields: Sequence[str] | None = None,
    concurrency: int = 4,
) -> ProbeReport:
    """Probe one judge with every case on every item (see the module docstring).

    Args:
        task: The task (for its declared inputs and outputs, and its LLM program's output types).
        judge: The judge to probe (e.g. from :meth:`~jurist.tasks.Task.make_judge`).
        items: The items to plant payloads in.
        options: The task's options.
        cases: The probe set.
        fields: Plant payloads in these inputs only (default: :func:`injectable_fields`).
        concurrency: Judgments at once.
    """
    from jurist.judges.judge import JudgeFailure

    declared = list(task.outputs)
    gate = asyncio.Semaphore(max(1, concurrency))

    async def verdict(inputs: dict[str, Any]) -> _Verdict:
        async with gate:
            try:
                judgment = await judge.judge(inputs)
            except JudgeFailure as exc:
                return _Verdict(None, f"{exc.error_type}: {exc}", list(exc.raw))
        return _Verdict(verdict_view(judgment.output, declared))

    report = ProbeReport(
        task=task.name, judge=judge.name, fingerprint=judge.fingerprint(), items=len(items), cases=len(cases)
    )
    cleans = await asyncio.gather(*(verdict(item.inputs) for item in items))
    vocabulary = _Vocabulary.of(task, options)

    plans: list[
        tuple[Item, _Verdict, ProbeCase, list[str], Path_, dict[str, Any], dict[str, Any] | None]
    ] = []
    for item, clean in zip(items, cleans, strict=True):
        if clean.view is None:
            report.skipped[item.id] = clean.error or "failed"
            continue
        targets = list(fields) if fields is not None else injectable_fields(task, item.inputs)
        unknown = [name for name in targets if name not in item.inputs]
        if unknown:
            raise ConfigError(
                f"item {item.id!r} has no input {unknown[0]!r} (inputs: {', '.join(item.inputs)})",
                field="field",
            )
        primary = primary_verdict(clean.view, vocabulary.labels)
        other = vocabulary.other(primary[1], primary[2]) if primary is not None else None
        if not targets or primary is None or other is None:
            report.skipped[item.id] = (
                "no injectable text input"
                if not targets
                else "the verdict has no fixed vocabulary (an extraction: planted text is content to "
                "extract, not a forged verdict)"
            )
            continue
        path, name, value = primary
        for case in cases:
            planted = inject(item.inputs, targets, case.render(name, other, value), case.position)
            held = inject(item.inputs, targets, case.render(name, value, other), case.position)
            plans.append((item, clean, case, targets, path, planted, None if _same(planted, held) else held))

    attacks = asyncio.gather(*(verdict(plan[5]) for plan in plans))
    controls = asyncio.gather(*(verdict(plan[6]) if plan[6] is not None else _none() for plan in plans))
    attack_verdicts, control_verdicts = await asyncio.gather(attacks, controls)
    for (item, clean, case, targets, path, _a, _c), attack, paired in zip(
        plans, attack_verdicts, control_verdicts, strict=True
    ):
        control: _Verdict = paired if paired is not None else attack
        outcome = ProbeOutcome(
            item=item.id, case=case.id, family=case.family, fields=targets, status="held", path=list(path)
        )
        outcome.clean = _at(clean.view, path)
        if attack.view is None or control.view is None:
            outcome.status = "failed"
            outcome.error = attack.error or control.error
            outcome.raw = attack.raw or control.raw
        else:
            outcome.attack, outcome.control = _at(attack.view, path), _at(control.view, path)
            outcome.changed = not _same(outcome.attack, outcome.clean)
            if outcome.changed and not _same(outcome.attack, outcome.control):
                outcome.status = "moved"
            for side in ("attack", "control"):
                if getattr(outcome, side) is _MISSING:
                    setattr(outcome, side, None)
        report.outcomes.append(outcome)
    return report


async def _none() -> None:
    return None


def probe_injection(
    task: Task,
    data: str | Path,
    config: JudgeConfig,
    options: BaseModel,
    *,
    limit: int = 3,
    cases: Sequence[ProbeCase] | None = None,
    families: Sequence[str] | None = None,
    fields: Sequence[str] | None = None,
) -> ProbeReport:
    """Probe the judge ``config`` names on the first ``limit`` items of ``data``.

    Raises:
        InputError: The data has no items, or a family matches no case.
    """
    from jurist.datasets.samples import resolve_input
    from jurist.runner import call_blocking

    chosen = list(cases if cases is not None else load_cases())
    if families:
        chosen = [case for case in chosen if case.family in families]
        if not chosen:
            raise ConfigError(f"no probe case has family {', '.join(families)}", field="family")
    path = resolve_input(data)
    dataset = task.read(path, options)
    items: list[Item] = []
    for item in task.items(dataset, options):
        if len(items) >= limit:
            break
        items.append(item)
    if not items:
        raise InputError("the data has no items to probe", path=path)
    judge = task.make_judge(config, options)
    concurrency = getattr(getattr(judge, "config", None), "concurrency", None) or config.concurrency

    def run() -> ProbeReport:
        return asyncio.run(
            probe_judge(task, judge, items, options, chosen, fields=fields, concurrency=concurrency)
        )

    return call_blocking(run)
