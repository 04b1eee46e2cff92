"""The runs of the RGB suite: which RGB files a data directory holds, and which (set, setting)
runs the suite makes from them (and which sets it skips, with the reason)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

from jurist.datasets.rgb.loader import LANGUAGES, Language, RGBKind, rgb_file_name, rgb_set_of
from jurist.errors import ConfigError, InputError
from jurist.tasks.rgb.judges import INTEGRATION_NOISE_RATES, NOISE_RATES, PASSAGE_NUM, SETS
from jurist.tasks.rgb.run import RGBSetting

SAMPLE = "sample:rgb"
"""The bundled RGB slices, as a ``--data-dir``."""
_SAMPLE_FILE = re.compile(r"^rgb_sample_((?:en|zh)(?:_(?:refine|int|fact))?)\.jsonl$")


@dataclass(frozen=True)
class RGBFile:
    """An RGB file found in a data directory."""

    name: str
    language: Language
    kind: RGBKind
    path: Path


def find_rgb_files(data_dir: str | Path) -> dict[str, RGBFile]:
    """The RGB files of a directory, by RGB's name (``en``, ``zh_refine``, ``en_fact``, ...).

    Files are recognised by RGB's names with any suffix (``en_int.json``, ``en_int.jsonl``);
    ``sample:rgb`` stands for the bundled sample. When two files have the same name, the
    ``.json`` one is taken. A path to one RGB file gives that file alone.

    Raises:
        InputError: The directory does not exist, or a file is not named as RGB names its sets.
    """
    if str(data_dir) == SAMPLE:
        directory = Path(str(resources.files("jurist.datasets").joinpath("samples")))
        found = {}
        for path in sorted(directory.iterdir()):
            match = _SAMPLE_FILE.match(path.name)
            if match:
                language, kind = rgb_set_of(match.group(1))
                found[match.group(1)] = RGBFile(match.group(1), language, kind, path)
        return found
    directory = Path(data_dir)
    if directory.is_file():
        language, kind = rgb_set_of(directory)
        stem = directory.name.split(".", 1)[0]
        return {stem: RGBFile(stem, language, kind, directory)}
    if not directory.is_dir():
        raise InputError("not a directory", path=directory)
    found = {}
    for path in sorted(directory.iterdir(), key=lambda p: (p.suffix != ".json", p.name)):
        if not path.is_file() or path.name.startswith("."):
            continue
        stem = path.name.split(".", 1)[0]
        if stem in found or not re.fullmatch(r"(en|zh)(_(refine|int|fact))?", stem):
            continue
        language, kind = rgb_set_of(path)
        found[stem] = RGBFile(stem, language, kind, path)
    return found


@dataclass(frozen=True)
class RGBPlan:
    """The runs a suite will make, and the sets it skips with the reason."""

    settings: list[RGBSetting]
    skipped: list[dict[str, str]]


def plan_rgb_suite(
    files: dict[str, RGBFile],
    *,
    sets: Sequence[str] = SETS,
    languages: Sequence[str] = LANGUAGES,
    noise_rates: Sequence[float] = NOISE_RATES,
    integration_noise_rates: Sequence[float] = INTEGRATION_NOISE_RATES,
    passage_num: int = PASSAGE_NUM,
    counterfactual_noise_rate: float = 0.0,
    correct_rate: float = 0.0,
    closed_book: bool = True,
    prefer: Literal["refine", "plain"] = "refine",
) -> RGBPlan:
    """Which runs the suite makes from the files there are, and which sets it skips (and why).

    Noise robustness and negative rejection use ``{lang}_refine`` (RGB's corrected release)
    or ``{lang}`` (``prefer`` picks when both exist); integration uses ``{lang}_int``;
    counterfactual robustness uses ``{lang}_fact`` with passages (Acc_doc, ED, CR) and, with
    ``closed_book``, without (the paper's Acc).
    """
    unknown = set(sets) - set(SETS)
    if unknown:
        raise ConfigError(f"unknown RGB set(s) {sorted(unknown)}; sets: {', '.join(SETS)}", field="sets")
    settings: list[RGBSetting] = []
    skipped: list[dict[str, str]] = []
    for language in languages:
        order = ["refine", "plain"] if prefer == "refine" else ["plain", "refine"]
        names = [f"{language}_refine" if kind == "refine" else language for kind in order]
        noise_file = next((files[name] for name in names if name in files), None)
        for name in names:
            if noise_file is not None and name in files and name != noise_file.name:
                skipped.append(
                    {
                        "set": "noise/rejection",
                        "language": language,
                        "file": files[name].path.name,
                        "reason": f"{files[name].path.name} not used: {noise_file.path.name} is "
                        "used for these sets (--prefer chooses)",
                    }
                )
        for set_name, rates in (("noise", noise_rates), ("rejection", (1.0,))):
            if set_name not in sets:
                continue
            if noise_file is None:
                wanted = " or ".join(rgb_file_name(language, kind) for kind in order)  # type: ignore[arg-type]
                skipped.append({"set": set_name, "language": language, "reason": f"no {wanted} found"})
                continue
            for rate in rates:
                settings.append(
                    RGBSetting(
                        dataset=noise_file.name,
                        language=noise_file.language,
                        kind=noise_file.kind,
                        path=noise_file.path,
                        noise_rate=float(rate),
                        passage_num=passage_num,
                        judge="rejection" if set_name == "rejection" else None,
                        set=set_name,
                    )
                )
        if "integration" in sets:
            int_file = files.get(f"{language}_int")
            if int_file is None:
                skipped.append(
                    {"set": "integration", "language": language, "reason": f"no {language}_int.json found"}
                )
            else:
                for rate in integration_noise_rates:
                    settings.append(
                        RGBSetting(
                            dataset=int_file.name,
                            language=int_file.language,
                            kind="int",
                            path=int_file.path,
                            noise_rate=float(rate),
                            passage_num=passage_num,
                            set="integration",
                        )
                    )
        if "counterfactual" in sets:
            fact_file = files.get(f"{language}_fact")
            if fact_file is None:
                skipped.append(
                    {
                        "set": "counterfactual",
                        "language": language,
                        "reason": f"no {language}_fact.json found",
                    }
                )
            else:
                common = {
                    "dataset": fact_file.name,
                    "language": fact_file.language,
                    "kind": "fact",
                    "path": fact_file.path,
                    "noise_rate": float(counterfactual_noise_rate),
                    "correct_rate": float(correct_rate),
                    "set": "counterfactual",
                }
                settings.append(RGBSetting(**common, passage_num=passage_num, judge="error_detection"))  # type: ignore[arg-type]
                if closed_book:
                    settings.append(RGBSetting(**{**common, "set": "closed_book"}, passage_num=0))  # type: ignore[arg-type]
    return RGBPlan(settings=settings, skipped=skipped)


__all__ = ["SAMPLE", "RGBFile", "RGBPlan", "find_rgb_files", "plan_rgb_suite"]
