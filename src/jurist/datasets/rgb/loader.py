"""RGB (Chen et al., arXiv 2309.01431): loading its files, validating rows, preparing passages.

RGB ships one JSONL file per language and test set, named ``{language}[_{kind}].json``:

- ``en.json``/``zh.json`` (plain) and ``en_refine.json``/``zh_refine.json`` (the corrected
  release): ``id``, ``query``, ``answer``, ``positive`` and ``negative`` (lists of passages);
- ``en_int.json``/``zh_int.json`` (information integration): ``positive`` is a list of
  *groups*, one per fact the answer combines, each a list of passages;
- ``en_fact.json``/``zh_fact.json`` (counterfactual robustness): ``positive``,
  ``positive_wrong`` (the same passages with ``fakeanswer`` in place of the answer, index
  for index) and ``negative``.

An ``answer`` is a string, or a list whose items are strings (all required) or lists of
strings (variants, any one suffices). The files are JSONL although their suffix is
``.json``; a real JSON list is read too.

:func:`prepare_instance` reproduces RGB's ``processdata``: which passages an instance gets
for a noise rate, a passage number and (counterfactual set) a correct rate, in the same
order, because it draws from a generator seeded like RGB's (seed 2333, re-seeded before
every instance).

:func:`load_rgb_judgments` reads gold labels for the Rej* and ED* judges (not an RGB
file: answers with a gold ``rejects`` and/or ``detects_error`` boolean, see
:class:`RGBJudgmentRow`).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)

from jurist.datasets.io import (
    BOM,
    check_file,
    iter_jsonl_values,
    iter_records,
    normalise_id,
    read_text,
    sha256_file,
)
from jurist.datasets.rgb.protocol import RGB_SEED
from jurist.errors import ConfigError, InputError
from jurist.safe_load import JSONLimitError, load_yaml, loads_json, quote

Language = Literal["en", "zh"]
RGBKind = Literal["plain", "refine", "int", "fact"]
Answer = str | list[str | list[str]]

LANGUAGES: tuple[Language, ...] = ("en", "zh")
KINDS: tuple[RGBKind, ...] = ("plain", "refine", "int", "fact")
_NAME = re.compile(r"^(en|zh)(?:_(refine|int|fact))?$")
INSTRUCTIONS_SAMPLE = "rgb_instruction.yaml"
"""RGB's prompts (``config/instruction.yaml``), bundled in ``jurist/datasets/samples``."""


def rgb_file_name(language: Language, kind: RGBKind) -> str:
    """The file name RGB gives a set, e.g. ``en.json``, ``zh_refine.json``, ``en_fact.json``."""
    return f"{language}.json" if kind == "plain" else f"{language}_{kind}.json"


def rgb_set_of(path: str | Path) -> tuple[Language, RGBKind]:
    """The language and kind of an RGB file, from its name (``zh_int.json`` -> ``zh``, ``int``).

    Raises:
        InputError: The name is not one of RGB's (``en``, ``zh``, with ``_refine``, ``_int``
            or ``_fact``; any suffix).
    """
    stem = Path(path).name.split(".", 1)[0]
    match = _NAME.match(stem)
    if match is None:
        raise InputError(
            "cannot tell the RGB set from the file name; name it as RGB does (en.json, zh.json, "
            "en_refine.json, en_int.json, en_fact.json, zh_... ) or give the language and kind",
            path=path,
        )
    return match.group(1), match.group(2) or "plain"  # type: ignore[return-value]


def _check_answer(value: Any) -> Any:
    if isinstance(value, str):
        if not value.strip():
            raise ValueError("the answer is empty (it would match every prediction)")
        return value
    if not isinstance(value, list) or not value:
        raise ValueError("expected a non-empty string or a non-empty list of strings / lists of variants")
    for part in value:
        variants = part if isinstance(part, list) else [part]
        if not variants:
            raise ValueError("an answer part is an empty list of variants")
        for variant in variants:
            if not isinstance(variant, str):
                raise ValueError(f"answer parts must be strings or lists of strings, got {variant!r}")
            if not variant.strip():
                raise ValueError("an answer variant is empty (it would match every prediction)")
    return value


class RGBRow(BaseModel):
    """One RGB instance of the noise-robustness / negative-rejection sets (plain and refine)."""

    model_config = ConfigDict(extra="ignore")

    id: StrictInt | StrictStr
    query: StrictStr = Field(min_length=1)
    answer: Answer
    positive: list[StrictStr]
    negative: list[StrictStr]

    @field_validator("answer", mode="before")
    @classmethod
    def _answer_shape(cls, value: Any) -> Any:
        return _check_answer(value)

    @field_validator("id")
    @classmethod
    def _id_nfc(cls, value: int | str) -> int | str:
        return normalise_id(value) if isinstance(value, str) else value


class RGBIntRow(RGBRow):
    """An information-integration instance: ``positive`` holds one group of passages per fact."""

    positive: list[list[StrictStr]] = Field(min_length=1)  # type: ignore[assignment]

    @field_validator("positive")
    @classmethod
    def _groups_not_empty(cls, groups: list[list[str]]) -> list[list[str]]:
        for number, group in enumerate(groups):
            if not group:
                raise ValueError(f"group {number} of positive passages is empty")
        return groups


class RGBFactRow(RGBRow):
    """A counterfactual instance: ``positive_wrong[i]`` is ``positive[i]`` with the fake answer."""

    positive_wrong: list[StrictStr]
    fakeanswer: StrictStr | list[Any] | None = None

    @field_validator("positive_wrong")
    @classmethod
    def _aligned(cls, wrong: list[str], info: Any) -> list[str]:
        positive = info.data.get("positive")
        if positive is not None and len(wrong) != len(positive):
            raise ValueError(
                f"has {len(wrong)} passages but positive has {len(positive)}; they must align index for index"
            )
        return wrong


_ROW_MODEL: dict[RGBKind, type[RGBRow]] = {
    "plain": RGBRow,
    "refine": RGBRow,
    "int": RGBIntRow,
    "fact": RGBFactRow,
}


def _iter_json_list(path: Path) -> Iterator[tuple[int, Any]]:
    try:
        data = loads_json(read_text(path))
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc.msg})", path=path, line=exc.lineno) from None
    except JSONLimitError as exc:
        raise InputError(exc.reason, path=path) from None
    if not isinstance(data, list):
        raise InputError("a JSON file must hold a list of records", path=path)
    yield from enumerate(data, start=1)


def _iter_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Records with their line numbers: JSONL (RGB's ``.json`` files), or a JSON list."""
    for line, record in _iter_any_lines(path):
        if not isinstance(record, dict):
            raise InputError("each line must be a JSON object", path=path, line=line)
        yield line, record


def _iter_any_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """JSON values with their line numbers, from a JSONL file or a JSON list."""
    check_file(path)
    with open(path, "rb") as handle:
        head = handle.read(4096).removeprefix(BOM).lstrip()
    if head.startswith(b"["):
        yield from _iter_json_list(path)
        return
    yield from iter_jsonl_values(path)


def _field_path(loc: tuple[Any, ...]) -> str | None:
    """``('positive', 0, 2)`` -> ``positive[0][2]``; pydantic's union tags (``str``) are left out."""
    if not loc:
        return None
    text = str(loc[0])
    for part in loc[1:]:
        if isinstance(part, int):
            text += f"[{part}]"
    return text


def parse_rgb_row(record: dict[str, Any], kind: RGBKind, *, path: Path, line: int) -> RGBRow:
    """Validate one record as a row of ``kind``.

    Raises:
        InputError: A field is missing or of the wrong type; names the file, line and field.
    """
    try:
        return _ROW_MODEL[kind].model_validate(record)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = _field_path(first["loc"])
        message = "missing" if first["type"] == "missing" else first["msg"].removeprefix("Value error, ")
        raise InputError(message, path=path, line=line, field=field or None) from None


@dataclass(frozen=True)
class RGBDataset:
    """A validated RGB file: its rows, set, and hash (rows are kept; RGB files are small)."""

    path: Path
    language: Language
    kind: RGBKind
    sha256: str
    rows: tuple[RGBRow, ...]

    @property
    def name(self) -> str:
        """RGB's name of the set, e.g. ``zh_refine``."""
        return rgb_file_name(self.language, self.kind).removesuffix(".json")

    def __iter__(self) -> Iterator[RGBRow]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def describe(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "sha256": self.sha256,
            "items": len(self.rows),
            "name": self.name,
            "language": self.language,
            "kind": self.kind,
        }


def _first_use(seen: dict[str, int], row_id: Any, file: Path, line: int) -> None:
    """Record that ``row_id`` is used on ``line``; an id used on an earlier line is an error."""
    key = str(row_id)
    if key in seen:
        raise InputError(
            f"id {quote(row_id)} already used on line {seen[key]}", path=file, line=line, field="id"
        )
    seen[key] = line


def load_rgb(
    path: str | Path,
    *,
    language: Language | None = None,
    kind: RGBKind | None = None,
    limit: int | None = None,
) -> RGBDataset:
    """Read and validate an RGB file.

    Args:
        path: An RGB JSONL file (``en.json``, ``zh_refine.json``, ``en_int.json``, ...).
        language: ``en`` or ``zh``; by default from the file name.
        kind: ``plain``, ``refine``, ``int`` or ``fact``; by default from the file name.
        limit: Keep only the first ``limit`` rows (every row is still validated).

    Raises:
        InputError: The file is missing, a line is not JSON, a row misses a field or has a
            wrong type, or an id repeats; the message names the file, the line and the field.
    """
    file = Path(path)
    if not file.is_file():
        raise InputError("file not found", path=file)
    if language is None or kind is None:
        named_language, named_kind = rgb_set_of(file)
        language = language or named_language
        kind = kind or named_kind
    rows: list[RGBRow] = []
    seen: dict[str, int] = {}
    for line, record in _iter_lines(file):
        row = parse_rgb_row(record, kind, path=file, line=line)
        _first_use(seen, row.id, file, line)
        rows.append(row)
    if not rows:
        raise InputError("the file holds no RGB rows", path=file)
    if limit is not None:
        rows = rows[:limit]
    return RGBDataset(path=file, language=language, kind=kind, sha256=sha256_file(file), rows=tuple(rows))


@dataclass(frozen=True)
class PreparedInstance:
    """What the model under test sees for one instance, and the gold answer."""

    id: int | str
    query: str
    answer: Answer
    docs: list[str]


def check_preparation(kind: RGBKind, noise_rate: float, passage_num: int, correct_rate: float = 0.0) -> None:
    """Refuse settings :func:`prepare_instance` cannot follow.

    Raises:
        ValueError: A rate is outside [0, 1], the passage number is negative, or (fact) the
            rates leave a negative number of counterfactual passages.
    """
    if not 0.0 <= noise_rate <= 1.0:
        raise ValueError(f"noise rate must be in [0, 1], got {noise_rate}")
    if passage_num < 0:
        raise ValueError(f"passage number must be >= 0, got {passage_num}")
    if not 0.0 <= correct_rate <= 1.0:
        raise ValueError(f"correct rate must be in [0, 1], got {correct_rate}")
    if kind == "fact" and passage_num > 0:
        wrong = passage_num - math.ceil(passage_num * noise_rate) - math.ceil(passage_num * correct_rate)
        if wrong < 0:
            raise ValueError(
                f"noise rate {noise_rate} and correct rate {correct_rate} leave {wrong} counterfactual "
                f"passages of {passage_num}; lower one of them"
            )


def _integration_docs(positive: Sequence[Sequence[str]], pos_num: int, rng: random.Random) -> list[str]:
    groups = [list(group) for group in positive]
    for group in groups:
        rng.shuffle(group)
    docs = [group[0] for group in groups]  # one passage per fact, even past pos_num
    depth = 1
    longest = max(len(group) for group in groups)
    while len(docs) < pos_num and depth < longest:
        for group in groups:
            if len(group) > depth:
                docs.append(group[depth])
                if len(docs) == pos_num:
                    break
        depth += 1
    return docs


def _counterfactual_docs(
    row: RGBFactRow, passage_num: int, neg_num: int, correct_rate: float, rng: random.Random
) -> list[str]:
    correct_num = math.ceil(passage_num * correct_rate)
    wrong_num = passage_num - neg_num - correct_num
    indexes = list(range(len(row.positive)))
    chosen = rng.sample(indexes, min(len(indexes), wrong_num))
    docs = [row.positive_wrong[i] for i in chosen]
    rest = [i for i in indexes if i not in chosen]
    if correct_num > 0 and rest:
        docs += [row.positive[i] for i in rng.sample(rest, min(len(rest), correct_num))]
    if neg_num > 0:
        docs += row.negative[:neg_num]
    return docs


def _mixed_docs(row: RGBRow, passage_num: int, noise_rate: float, neg_num: int) -> list[str]:
    pos_num = passage_num - neg_num
    if noise_rate == 1:
        neg_num, pos_num = passage_num, 0
    elif neg_num > len(row.negative):  # too few negatives: fill with positives
        neg_num = len(row.negative)
        pos_num = passage_num - neg_num
    elif pos_num > len(row.positive):  # too few positives: fill with negatives
        pos_num = len(row.positive)
        neg_num = passage_num - pos_num
    return list(row.positive[:pos_num]) + list(row.negative[:neg_num])


def prepare_instance(
    row: RGBRow,
    kind: RGBKind,
    noise_rate: float,
    passage_num: int,
    *,
    correct_rate: float = 0.0,
    seed: int = RGB_SEED,
) -> PreparedInstance:
    """The passages RGB's ``processdata`` gives one instance, in RGB's order.

    ``neg_num = ceil(passage_num * noise_rate)`` noise passages and ``pos_num = passage_num -
    neg_num`` others, then one shuffle, all drawn from ``random.Random(seed)``:

    - plain/refine: the first ``pos_num`` positives and the first ``neg_num`` negatives; at
      noise rate 1 only negatives (``passage_num`` of them, or all there are); when the
      negatives are too few they are all taken and positives fill the rest, else when the
      positives are too few they are all taken and negatives fill the rest.
    - int: each group is shuffled and its first passage taken (one per fact, even when that
      is more than ``pos_num``); while fewer than ``pos_num``, the groups' second passages,
      then third, ... are added in group order; then the first ``passage_num - len(docs)``
      negatives.
    - fact: ``correct_num = ceil(passage_num * correct_rate)``; ``passage_num - neg_num -
      correct_num`` indexes are sampled and their ``positive_wrong`` passages taken, then
      ``correct_num`` of the remaining indexes are sampled and their ``positive`` passages
      taken, then the first ``neg_num`` negatives.
    - ``passage_num == 0``: no passages (closed book; nothing is drawn).

    Args:
        row: A validated row of ``kind``.
        kind: The set the row belongs to.
        noise_rate: Share of noise passages, in [0, 1].
        passage_num: Passages per instance (RGB uses 5).
        correct_rate: Counterfactual set only: share of correct passages.
        seed: The generator's seed, the same for every instance (RGB: 2333).

    Raises:
        ValueError: A rate is outside [0, 1], the passage number is negative, or (fact) the
            rates leave a negative number of counterfactual passages.
    """
    check_preparation(kind, noise_rate, passage_num, correct_rate)
    if passage_num == 0:
        return PreparedInstance(id=row.id, query=row.query, answer=row.answer, docs=[])
    rng = random.Random(seed)
    neg_num = math.ceil(passage_num * noise_rate)
    if kind == "int":
        if not isinstance(row, RGBIntRow):
            raise TypeError("an integration instance needs an RGBIntRow")
        docs = _integration_docs(row.positive, passage_num - neg_num, rng)
        missing = passage_num - len(docs)
        if missing > 0:
            docs += row.negative[:missing]
    elif kind == "fact":
        if not isinstance(row, RGBFactRow):
            raise TypeError("a counterfactual instance needs an RGBFactRow")
        docs = _counterfactual_docs(row, passage_num, neg_num, correct_rate, rng)
    else:
        docs = _mixed_docs(row, passage_num, noise_rate, neg_num)
    rng.shuffle(docs)
    return PreparedInstance(id=row.id, query=row.query, answer=row.answer, docs=docs)


def preparation_sha256(
    dataset: RGBDataset, noise_rate: float, passage_num: int, correct_rate: float, seed: int
) -> str:
    """A hash of the file and the preparation settings: what decides every instance's inputs.

    The number of rows used (``limit``) is left out: a run on the first rows of a file can be
    resumed on more of them.
    """
    settings = json.dumps(
        {
            "file": dataset.sha256,
            "noise_rate": noise_rate,
            "passage_num": passage_num,
            "correct_rate": correct_rate if dataset.kind == "fact" else None,
            "seed": seed,
        },
        sort_keys=True,
    )
    return hashlib.sha256(settings.encode()).hexdigest()


@dataclass(frozen=True)
class RGBPrompt:
    """RGB's prompt for one language: the system message and the user instruction template.

    The template has the placeholders ``{DOCS}`` (the passages joined by newlines) and
    ``{QUERY}``.
    """

    system: str
    instruction: str

    def user_message(self, query: str, docs: Sequence[str]) -> str:
        """The instruction filled as RGB fills it (passages joined by ``\\n``)."""
        return self.instruction.format(QUERY=query, DOCS="\n".join(docs))


def load_rgb_prompts(path: str | Path | None = None) -> dict[str, RGBPrompt]:
    """RGB's prompts per language, from a YAML file shaped like RGB's ``config/instruction.yaml``.

    Args:
        path: The YAML file (``{en: {system, instruction}, zh: {...}}``); ``None`` reads the
            bundled copy of RGB's prompts.

    Raises:
        ConfigError: The file is missing, not YAML, or a language lacks ``system`` or an
            ``instruction`` with ``{QUERY}`` and ``{DOCS}``.
    """
    if path is None:
        source: Path | str = "jurist/datasets/samples/" + INSTRUCTIONS_SAMPLE
        text = resources.files("jurist.datasets").joinpath("samples", INSTRUCTIONS_SAMPLE).read_text("utf-8")
    else:
        source = Path(path)
        try:
            text = source.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read the RGB prompts: {exc.strerror}", path=source) from None
    try:
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or exc
        raise ConfigError(
            f"not valid YAML: {problem}", path=source, line=mark.line + 1 if mark is not None else None
        ) from None
    if not isinstance(data, dict):
        raise ConfigError("expected a mapping of language -> {system, instruction}", path=source)
    prompts: dict[str, RGBPrompt] = {}
    for language, entry in data.items():
        if not isinstance(entry, dict):
            raise ConfigError("expected {system, instruction}", path=source, field=str(language))
        system, instruction = entry.get("system"), entry.get("instruction")
        if not isinstance(system, str):
            raise ConfigError("missing or not text", path=source, field=f"{language}.system")
        if not isinstance(instruction, str) or "{QUERY}" not in instruction or "{DOCS}" not in instruction:
            raise ConfigError(
                "the instruction must be text with {QUERY} and {DOCS}",
                path=source,
                field=f"{language}.instruction",
            )
        try:
            instruction.format(QUERY="", DOCS="")
        except (KeyError, IndexError, ValueError) as exc:
            raise ConfigError(
                f"the instruction has a placeholder other than {{QUERY}} and {{DOCS}}: {exc}",
                path=source,
                field=f"{language}.instruction",
            ) from None
        prompts[str(language)] = RGBPrompt(system=system, instruction=instruction)
    return prompts


PREDICTION_FIELDS = ("id", "query", "ans", "label", "prediction", "noise_rate", "factlabel")
"""The fields of a line of RGB's prediction files (``docs`` is optional here)."""

JUDGED_FIELD = "evaluation"
"""The field RGB's ChatGPT-based scripts (``reject_evalue.py``, ``fact_evalue.py``) add to each
line of a prediction file: the text ChatGPT answered."""

Duplicates = Literal["error", "first"]
"""What a prediction file with an id used twice means: an error, or the first line counts."""

_CJK_IDEOGRAPH = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]")


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a CJK ideograph (Chinese characters).

    >>> has_cjk("香港第六届立法会"), has_cjk("Super Bowl 2021")
    (True, False)
    """
    return _CJK_IDEOGRAPH.search(text) is not None


def script_language(texts: Sequence[str]) -> Language:
    """The language of a set of RGB questions, from their script: ``zh`` when at least half
    of the texts hold a CJK ideograph, else ``en``.

    RGB has two languages and writes every Chinese question in Chinese characters, while an
    English question rarely holds one; a majority keeps a stray name in Chinese characters
    from turning an English file Chinese.

    >>> script_language(["2018年中国城镇新增就业了多少人", "2020赛季中超冠军是谁"])
    'zh'
    >>> script_language(["Who wrote 三体?", "Who acquired Instagram?", "Super Bowl 2021 location"])
    'en'
    """
    chinese = sum(has_cjk(text) for text in texts)
    return "zh" if texts and 2 * chinese >= len(texts) else "en"


@dataclass(frozen=True)
class RGBPrediction:
    """One line of an RGB prediction file, as RGB's ``evalue.py`` writes it.

    ``evaluation`` is ChatGPT's judgment that RGB's ``reject_evalue.py`` / ``fact_evalue.py``
    add (``None`` in a file they did not judge); ``language`` is an optional ``en``/``zh``
    field of the line (RGB does not write one).
    """

    line: int
    id: Any
    query: str
    ans: Any
    label: list[int]
    prediction: str
    noise_rate: float
    factlabel: int
    docs: list[str] | None = None
    evaluation: str | None = None
    language: Language | None = None


def _prediction(record: Any, path: Path, line: int) -> RGBPrediction:
    if not isinstance(record, dict):
        raise InputError("each line must be a JSON object", path=path, line=line)
    for name in PREDICTION_FIELDS:
        if name not in record:
            raise InputError("missing", path=path, line=line, field=name)
    label = record["label"]
    if (
        not isinstance(label, list)
        or not label
        or any(isinstance(v, bool) or v not in (-1, 0, 1) for v in label)
    ):
        raise InputError(
            f"expected a non-empty list of -1, 0 and 1, got {label!r}", path=path, line=line, field="label"
        )
    if not isinstance(record["prediction"], str):
        raise InputError("expected text", path=path, line=line, field="prediction")
    if not isinstance(record["query"], str):
        raise InputError("expected text", path=path, line=line, field="query")
    noise = record["noise_rate"]
    if isinstance(noise, bool) or not isinstance(noise, int | float) or not 0 <= noise <= 1:
        raise InputError(
            f"expected a number in [0, 1], got {noise!r}", path=path, line=line, field="noise_rate"
        )
    factlabel = record["factlabel"]
    if isinstance(factlabel, bool) or factlabel not in (0, 1):
        raise InputError(f"expected 0 or 1, got {factlabel!r}", path=path, line=line, field="factlabel")
    docs = record.get("docs")
    if docs is not None and not isinstance(docs, list):
        raise InputError("expected a list of passages", path=path, line=line, field="docs")
    evaluation = record.get(JUDGED_FIELD)
    if evaluation is not None and not isinstance(evaluation, str):
        raise InputError("expected text (ChatGPT's judgment)", path=path, line=line, field=JUDGED_FIELD)
    language = record.get("language")
    if language is not None and language not in LANGUAGES:
        raise InputError(
            f"expected one of {', '.join(LANGUAGES)}, got {language!r}",
            path=path,
            line=line,
            field="language",
        )
    return RGBPrediction(
        line=line,
        id=normalise_id(record["id"]) if isinstance(record["id"], str) else record["id"],
        query=record["query"],
        ans=record["ans"],
        label=list(label),
        prediction=record["prediction"],
        noise_rate=float(noise),
        factlabel=int(factlabel),
        docs=docs,
        evaluation=evaluation,
        language=language,
    )


@dataclass(frozen=True)
class DuplicateId:
    """A line whose id an earlier line of the same file already used."""

    id: Any
    line: int
    first_line: int
    same_prediction: bool


@dataclass(frozen=True)
class RGBPredictionFile:
    """A read RGB prediction file: its lines (each id once) and the repeated lines left out.

    Attributes:
        path: The file.
        records: The lines that count, in file order.
        duplicates: Lines left out because their id was used on an earlier line (only with
            ``duplicates="first"``; by default a repeated id is an error).
        judged: Whether the lines carry ChatGPT's ``evaluation`` (RGB's ``*_chatgpt.json``).
    """

    path: Path
    records: list[RGBPrediction]
    duplicates: list[DuplicateId]

    @property
    def judged(self) -> bool:
        return self.records[0].evaluation is not None

    def warnings(self) -> list[str]:
        """One line per left-out duplicate, naming both lines."""
        return [
            f"{self.path.name}: id {entry.id!r} on line {entry.line} repeats line {entry.first_line} "
            f"({'same' if entry.same_prediction else 'a different'} prediction); counted once, "
            f"line {entry.first_line}"
            for entry in self.duplicates
        ]


def read_rgb_prediction_file(path: str | Path, *, duplicates: Duplicates = "error") -> RGBPredictionFile:
    """Read an RGB prediction file, plain (``evalue.py``) or judged by ChatGPT
    (``reject_evalue.py`` / ``fact_evalue.py``, with an ``evaluation`` on every line).

    Args:
        path: One JSON object per line (or a JSON list of them).
        duplicates: ``error`` (default): an id used twice is an error naming both lines;
            ``first``: the first line with the id counts and the later ones are left out
            (listed in :attr:`RGBPredictionFile.duplicates`).

    Raises:
        InputError: The file is missing or empty, a line is not a JSON object, a field is
            missing or of the wrong type, an id repeats (``duplicates="error"``), or some lines
            carry an ``evaluation`` and others do not; names the file, the line and the field.
    """
    if duplicates not in ("error", "first"):
        raise ValueError(f"duplicates must be 'error' or 'first', got {duplicates!r}")
    file = Path(path)
    if not file.is_file():
        raise InputError("file not found", path=file)
    records: list[RGBPrediction] = []
    left_out: list[DuplicateId] = []
    seen: dict[str, RGBPrediction] = {}
    for line, raw in _iter_any_lines(file):
        record = _prediction(raw, file, line)
        if records and (record.evaluation is None) != (records[0].evaluation is None):
            has = "has" if record.evaluation is not None else "has no"
            first = "has" if records[0].evaluation is not None else "has no"
            raise InputError(
                f"{has} ChatGPT '{JUDGED_FIELD}' while line {records[0].line} {first} one; a judged file "
                "(RGB's reject_evalue.py / fact_evalue.py output) has one on every line",
                path=file,
                line=line,
                field=JUDGED_FIELD,
            )
        key = str(record.id)
        earlier = seen.get(key)
        if earlier is not None:
            if duplicates == "error":
                raise InputError(
                    f"id {quote(record.id)} already used on line {earlier.line} (the duplicates option "
                    "'first' counts the first line only)",
                    path=file,
                    line=line,
                    field="id",
                )
            left_out.append(
                DuplicateId(
                    id=record.id,
                    line=line,
                    first_line=earlier.line,
                    same_prediction=earlier.prediction == record.prediction,
                )
            )
            continue
        seen[key] = record
        records.append(record)
    if not records:
        raise InputError("the file holds no predictions", path=file)
    return RGBPredictionFile(path=file, records=records, duplicates=left_out)


def read_rgb_predictions(path: str | Path, *, duplicates: Duplicates = "error") -> list[RGBPrediction]:
    """The lines of an RGB prediction file (one JSON object per line), validated.

    Each line needs ``id``, ``query``, ``ans``, ``label`` (a non-empty list of -1, 0 and 1),
    ``prediction`` (text), ``noise_rate`` (a number in [0, 1]) and ``factlabel`` (0 or 1);
    ``docs`` may be left out; ``evaluation`` (ChatGPT's judgment, text) and ``language``
    (``en``/``zh``) are read when present. See :func:`read_rgb_prediction_file`.

    Raises:
        InputError: The file is missing or empty, a line is not a JSON object, a field is
            missing or of the wrong type, or an id repeats (with ``duplicates="error"``); the
            message names the file, the line and the field.
    """
    return read_rgb_prediction_file(path, duplicates=duplicates).records


# ---------------------------------------------------------------------------------------------
# Gold labels of the Rej* / ED* judges

JUDGMENT_LABELS = ("rejects", "detects_error")
"""The gold label fields of :class:`RGBJudgmentRow`: Rej* (``rejects``) and ED* (``detects_error``)."""


class RGBJudgmentRow(BaseModel):
    """One answer with gold labels for the Rej* and/or ED* judge (a row of a gold file).

    A row may carry one label or both; a judge is trained and calibrated on the rows that
    carry its label. Labels follow the judges' definitions (:mod:`jurist.signatures.rgb`).

    Attributes:
        id: Unique in the file.
        question: The question the answer was written for; the Rej* judge reads it, so a
            row with a ``rejects`` label needs it.
        answer: The answer (the model's response) to judge.
        rejects: Gold Rej* label: the answer says the documents do not address the question
            (declines, says the information is insufficient or missing), even if it then
            answers from general knowledge. ``None``: not labelled.
        detects_error: Gold ED* label: the answer says the documents contain factual errors
            (wrong, inaccurate or contradictory information). ``None``: not labelled.
        language: ``en`` or ``zh`` (information only).
        source: Where the question comes from, e.g. ``rgb:en_fact#0`` (information only).
    """

    model_config = ConfigDict(extra="ignore")

    id: StrictInt | StrictStr
    question: StrictStr = ""
    answer: StrictStr = Field(min_length=1)
    rejects: bool | None = None
    detects_error: bool | None = None
    language: Language | None = None
    source: StrictStr | None = None

    @field_validator("rejects", "detects_error", "language", "source", mode="before")
    @classmethod
    def _blank_is_missing(cls, value: Any) -> Any:
        """An empty cell (CSV, TSV, XLSX) means "not labelled"."""
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("id")
    @classmethod
    def _id_nfc(cls, value: int | str) -> int | str:
        return normalise_id(value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _question_for_rejection(self) -> RGBJudgmentRow:
        if self.rejects is not None and not self.question.strip():
            raise ValueError("a row with a 'rejects' label needs its 'question' (the Rej* judge reads it)")
        return self

    def label(self, name: str) -> bool | None:
        """The gold label ``rejects`` or ``detects_error`` (``None`` when not labelled)."""
        if name not in JUDGMENT_LABELS:
            raise ValueError(f"unknown RGB judgment label {name!r}; labels: {', '.join(JUDGMENT_LABELS)}")
        value: bool | None = getattr(self, name)
        return value


def load_rgb_judgments(path: str | Path) -> list[RGBJudgmentRow]:
    """Read a gold file of the Rej*/ED* judges (JSONL, JSON list, CSV, TSV, Parquet or XLSX).

    Each row: ``id``, ``question``, ``answer``, and ``rejects`` and/or ``detects_error``
    (booleans; in tables ``true``/``false``, an empty cell for "not labelled"); optional
    ``language`` and ``source``; other fields are ignored.

    Raises:
        InputError: The file is missing or empty, a row misses a field or has a wrong type,
            a ``rejects`` row has no question, or an id repeats; names the file, line and field.
    """
    file = Path(path)
    rows: list[RGBJudgmentRow] = []
    seen: dict[str, int] = {}
    for line, record in iter_records(file):
        try:
            row = RGBJudgmentRow.model_validate(record)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = _field_path(first["loc"]) or ("question" if first["type"] == "value_error" else None)
            message = "missing" if first["type"] == "missing" else first["msg"].removeprefix("Value error, ")
            raise InputError(message, path=file, line=line, field=field) from None
        _first_use(seen, row.id, file, line)
        rows.append(row)
    if not rows:
        raise InputError("the file holds no rows", path=file)
    return rows
