"""The heritage label sets: entity types and the GLAMORCUBESFIXPHDNT custodian types.

Pure constants, shared by the heritage metrics, gold schema, signatures and baselines.
The 19 custodian types are single letters (the letters of GLAMORCUBESFIXPHDNT, in that
order); :data:`TYPE_HIERARCHY` groups them into the seven categories that hierarchical
accuracy scores against.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "CUSTODIAN_TYPES",
    "CUSTODIAN_TYPE_NAMES",
    "ENTITY_LABELS",
    "ENTITY_LABEL_DESCRIPTIONS",
    "TYPE_CATEGORY",
    "TYPE_HIERARCHY",
    "CustodianType",
    "category_of",
]

CustodianType = Literal[
    "G", "L", "A", "M", "O", "R", "C", "U", "B", "E", "S", "F", "I", "X", "P", "H", "D", "N", "T"
]
"""One GLAMORCUBESFIXPHDNT custodian type letter."""

CUSTODIAN_TYPES: tuple[CustodianType, ...] = get_args(CustodianType)
"""The 19 custodian type letters, in GLAMORCUBESFIXPHDNT order."""

CUSTODIAN_TYPE_NAMES: dict[str, str] = {
    "G": "gallery (art exhibition space)",
    "L": "library",
    "A": "archive or record office",
    "M": "museum",
    "O": "official institution (government heritage body)",
    "R": "research centre or documentation institute",
    "C": "corporation (company or business archive)",
    "U": "unknown",
    "B": "botanical garden or zoo (living collections)",
    "E": "education provider (university, school)",
    "S": "collecting society (historical society, heritage association)",
    "F": "features (monuments, historic buildings, sites)",
    "I": "intangible heritage group (traditions, performing heritage)",
    "X": "mixed (several types at once)",
    "P": "personal collection",
    "H": "holy site (church, monastery, religious heritage)",
    "D": "digital platform (online repository, aggregator)",
    "N": "non-profit organisation (NGO, foundation)",
    "T": "taste and smell heritage (culinary heritage)",
}
"""What each custodian type letter stands for (used in prompts and reports)."""

TYPE_HIERARCHY: dict[str, tuple[str, ...]] = {
    "CULTURAL": ("G", "L", "A", "M"),
    "INSTITUTIONAL": ("O", "R", "E"),
    "COMMUNITY": ("S", "I", "N"),
    "SPECIALIZED": ("B", "H", "T", "F"),
    "DIGITAL": ("D",),
    "PRIVATE": ("C", "P"),
    "UNKNOWN": ("U", "X"),
}
"""The seven categories of custodian types (the heritage evaluation framework's grouping)."""

TYPE_CATEGORY: dict[str, str] = {
    letter: category for category, letters in TYPE_HIERARCHY.items() for letter in letters
}
"""Custodian type letter -> its category."""

ENTITY_LABELS: tuple[str, ...] = (
    "GRP.HER.MUS",
    "GRP.HER.ARC",
    "GRP.HER.LIB",
    "GRP.HER.SOC",
    "TOP",
    "TMP",
    "IDENTIFIER",
)
"""The default entity types of heritage entity extraction."""

ENTITY_LABEL_DESCRIPTIONS: dict[str, str] = {
    "GRP.HER.MUS": "a museum or gallery, by its name",
    "GRP.HER.ARC": "an archive or record office, by its name",
    "GRP.HER.LIB": "a library, by its name",
    "GRP.HER.SOC": "a heritage society, historical association or similar group, by its name",
    "TOP": "a place name (city, region, country) or a word derived from one (e.g. 'Dutch')",
    "TMP": "a time expression: a year, a date, a century or a period",
    "IDENTIFIER": "an identifier code such as an ISIL code or a Wikidata id",
}
"""Default descriptions of the entity types, shown to an LLM extractor."""


def category_of(custodian_type: str) -> str:
    """The category of a custodian type letter.

    Raises:
        ValueError: The letter is not one of the 19 GLAMORCUBESFIXPHDNT types.

    >>> category_of("M")
    'CULTURAL'
    """
    try:
        return TYPE_CATEGORY[custodian_type]
    except KeyError:
        raise ValueError(
            f"{custodian_type!r} is not a custodian type; use one of {''.join(CUSTODIAN_TYPES)}"
        ) from None
