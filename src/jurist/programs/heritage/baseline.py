"""Offline heritage baselines: the same outputs as the LLM programs, from rules alone.

- :class:`RegexGazetteerExtractor`: ISIL codes and Wikidata ids (regex), years, dates and
  centuries (regex, Dutch and English), place names (a small gazetteer), institution
  names (a name-shaped run of words around an institution keyword such as *museum*,
  *archief*, *library*, *vereniging*), overlaps resolved longest-first.
- :class:`KeywordTypeClassifier`: weighted keyword counts per custodian type.
- :class:`FuzzyLinker`: candidates from an ISIL code written next to the mention, an
  exact (normalised) name match, and rapidfuzz ``WRatio`` over the KB's names; NIL when
  the best score is under a threshold.
- :class:`Bm25Retriever`: Okapi BM25 (rank-bm25) over the gold texts.
- :class:`ExtractiveQA`: the context sentence sharing most words with the question.

rapidfuzz and rank-bm25 are the ``heritage`` extra (``pip install 'jurist[heritage]'``);
they are imported when a linker or retriever is built. These are floors for LLM
programs to beat, not judges to trust.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jurist.datasets.heritage.kb import KnowledgeBase
from jurist.errors import JuristError, install_hint
from jurist.metrics.heritage.taxonomy import CUSTODIAN_TYPES, ENTITY_LABELS, CustodianType
from jurist.sentences import split_sentences
from jurist.signatures.heritage import (
    CustodianTypeLabel,
    Entity,
    LinkCandidate,
    QAAnswer,
    RetrievedDocument,
)

__all__ = [
    "ISIL_PATTERN",
    "Bm25Retriever",
    "ExtractiveQA",
    "FuzzyLinker",
    "KeywordTypeClassifier",
    "RegexGazetteerExtractor",
    "normalise_name",
    "require_heritage_extra",
]

ISIL_PATTERN = re.compile(r"\b[A-Z]{2}-[A-Za-z0-9](?:[A-Za-z0-9:/-]{0,14}[A-Za-z0-9])?\b")
"""An ISIL code: a two-letter prefix, a hyphen and up to 16 more characters."""
_WIKIDATA = re.compile(r"\bQ\d{2,}\b")

_NL_ORDINALS = [
    "elfde",
    "twaalfde",
    "dertiende",
    "veertiende",
    "vijftiende",
    "zestiende",
    "zeventiende",
    "achttiende",
    "negentiende",
    "twintigste",
]
_EN_ORDINALS = [
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
    "twentieth",
]
_MONTHS = [
    "januari",
    "februari",
    "maart",
    "april",
    "mei",
    "juni",
    "juli",
    "augustus",
    "september",
    "oktober",
    "november",
    "december",
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_TIME_PATTERNS = [
    re.compile(rf"\b(?:\d{{1,2}} )?(?:{'|'.join(_MONTHS)}) \d{{4}}\b"),
    re.compile(rf"\b(?:{'|'.join(_NL_ORDINALS)})(?: eeuw\b|-eeuwse\b)", re.I),
    re.compile(rf"\b(?:{'|'.join(_EN_ORDINALS)})[ -]century\b", re.I),
    re.compile(r"\b1\d{3}s\b|\b20[0-2]\ds\b"),
    re.compile(r"\b1[0-9]{3}\b|\b20[0-2][0-9]\b"),
]

GAZETTEER: tuple[str, ...] = tuple(
    [
        "Nederland",
        "Netherlands",
        "Holland",
        "Drenthe",
        "Flevoland",
        "Friesland",
        "Fryslân",
        "Gelderland",
        "Groningen",
        "Limburg",
        "Noord-Brabant",
        "Noord-Holland",
        "Overijssel",
        "Utrecht",
        "Zeeland",
        "Zuid-Holland",
        "Amsterdam",
        "Rotterdam",
        "Eindhoven",
        "Tilburg",
        "Almere",
        "Breda",
        "Nijmegen",
        "Apeldoorn",
        "Haarlem",
        "Arnhem",
        "Enschede",
        "Amersfoort",
        "Zaanstad",
        "Zwolle",
        "Zoetermeer",
        "Leiden",
        "Maastricht",
        "Dordrecht",
        "Ede",
        "Alkmaar",
        "Emmen",
        "Delft",
        "Venlo",
        "Deventer",
        "Sittard",
        "Helmond",
        "Oss",
        "Hilversum",
        "Heerlen",
        "Leeuwarden",
        "Assen",
        "Lelystad",
        "Middelburg",
        "Hoorn",
        "Schiedam",
        "Gouda",
        "Vlaardingen",
        "België",
        "Belgium",
        "Brussel",
        "Brussels",
        "Antwerpen",
        "Antwerp",
        "Gent",
        "Ghent",
        "Brugge",
        "Bruges",
        "Luxemburg",
        "Luxembourg",
        "Duitsland",
        "Germany",
        "Berlin",
        "Hamburg",
        "München",
        "Munich",
        "Köln",
        "Cologne",
        "Frankfurt",
        "Nürnberg",
        "Nuremberg",
        "Bonn",
        "Frankrijk",
        "France",
        "Paris",
        "Parijs",
        "Engeland",
        "England",
        "Britain",
        "Scotland",
        "Wales",
        "Ireland",
        "London",
        "Londen",
        "Birmingham",
        "Manchester",
        "Liverpool",
        "Leeds",
        "Sheffield",
        "Bristol",
        "Glasgow",
        "Edinburgh",
        "Cardiff",
        "Belfast",
        "Oxford",
        "Cambridge",
        "York",
        "Europa",
        "Europe",
        "Amerika",
        "America",
        "Washington",
        "Boston",
        "Chicago",
        "Philadelphia",
        "Seattle",
        "California",
        "Texas",
        "Florida",
        "Maryland",
        "Massachusetts",
        "Minnesota",
        "Ohio",
        "Virginia",
        "Japan",
        "Japan",
        "China",
        "Nederlandse",
        "Nederlands",
        "Duitse",
        "Duits",
        "Belgische",
        "Franse",
        "Engelse",
        "Britse",
        "Europese",
        "Amerikaanse",
        "Joodse",
        "Dutch",
        "German",
        "Belgian",
        "French",
        "English",
        "British",
        "European",
        "American",
        "Japanese",
        "Jewish",
    ]
)
"""Generic place names and demonyms (provinces, large cities, countries), not the gold's own."""

GAZETTEER_PHRASES: tuple[str, ...] = (
    "Den Haag",
    "The Hague",
    "'s-Hertogenbosch",
    "New York City",
    "New York",
    "Washington, D.C.",
    "Los Angeles",
    "San Francisco",
    "United States",
    "United Kingdom",
    "Verenigde Staten",
)

_INSTITUTION_KEYWORDS: dict[str, tuple[str, ...]] = {
    "GRP.HER.MUS": ("museum", "galerie", "gallery", "oudheidkamer", "hortus", "huis"),
    "GRP.HER.ARC": ("archief", "archive", "archiv", "record office", "historisch centrum", "archieven"),
    "GRP.HER.LIB": ("bibliotheek", "library", "bibliothek", "leeszaal", "mediatheek", "libraries"),
    "GRP.HER.SOC": ("vereniging", "society", "genootschap", "kring", "stichting", "circle", "academie"),
}
_CONNECTORS = {
    "van", "voor", "de", "het", "en", "of", "the", "for", "and", "zu", "für", "der", "des", "&",
}  # fmt: skip
_LEADING_STOP = {
    "het", "de", "the", "een", "a", "in", "since", "sinds", "na", "after", "its", "zijn", "haar",
    "kasteel", "vereniging", "bij", "at", "with", "met", "door", "by", "tot", "to",
}  # fmt: skip
_WORD = re.compile(r"[\w'’&-]+|[^\w\s]")
_LABEL_PRIORITY = {"GRP.HER.MUS": 0, "GRP.HER.ARC": 0, "GRP.HER.LIB": 0, "GRP.HER.SOC": 0, "IDENTIFIER": 1}


def require_heritage_extra(module: str) -> Any:
    """Import an optional heritage dependency, or fail naming the extra to install."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise JuristError(
            f"the heritage baselines need {module.replace('_', '-')}: {install_hint('heritage')}"
        ) from None


@dataclass(frozen=True)
class _Candidate:
    start: int
    end: int
    label: str


def _resolve(candidates: Iterable[_Candidate]) -> list[_Candidate]:
    """Keep non-overlapping spans: institutions first, then longer spans, then earlier ones."""
    ranked = sorted(candidates, key=lambda c: (_LABEL_PRIORITY.get(c.label, 2), -(c.end - c.start), c.start))
    kept: list[_Candidate] = []
    for candidate in ranked:
        if all(candidate.end <= k.start or candidate.start >= k.end for k in kept):
            kept.append(candidate)
    return sorted(kept, key=lambda c: c.start)


def _is_name_word(word: str) -> bool:
    return word[:1].isupper() or word.startswith("'s-")


class RegexGazetteerExtractor:
    """Rule-based entity extraction with configurable labels (others are not produced).

    Args:
        labels: The entity types to produce (default: the seven heritage types).
        gazetteer: Extra place names (added to the built-in list).
    """

    def __init__(self, labels: Sequence[str] = ENTITY_LABELS, gazetteer: Iterable[str] = ()) -> None:
        self.labels = tuple(labels)
        names = sorted({*GAZETTEER, *GAZETTEER_PHRASES, *gazetteer}, key=len, reverse=True)
        self._places = re.compile(r"(?<![\w-])(?:" + "|".join(re.escape(n) for n in names) + r")(?![\w-])")

    def _institutions(self, text: str) -> list[_Candidate]:
        words = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(text)]
        found: list[_Candidate] = []
        for index, (_, _, word) in enumerate(words):
            lowered = word.lower()
            label = next(
                (lab for lab, keys in _INSTITUTION_KEYWORDS.items() for key in keys if key in lowered), None
            )
            if label is None and index + 1 < len(words):
                pair = f"{lowered} {words[index + 1][2].lower()}"
                label = next(
                    (
                        lab
                        for lab, keys in _INSTITUTION_KEYWORDS.items()
                        for key in keys
                        if " " in key and key == pair
                    ),
                    None,
                )
            if label is None:
                continue
            if not _is_name_word(word) and not (index and _is_name_word(words[index - 1][2])):
                continue
            left = index
            while left > 0:
                prev = words[left - 1][2]
                if (
                    _is_name_word(prev)
                    and prev.lower() not in _LEADING_STOP
                    and prev not in ".,;:()"
                    or (
                        prev.lower() in _CONNECTORS
                        and left > 1
                        and _is_name_word(words[left - 2][2])
                        and (words[left - 2][2].lower() not in _LEADING_STOP)
                    )
                ):
                    left -= 1
                else:
                    break
            right = index
            while right + 1 < len(words):
                nxt = words[right + 1][2]
                if _is_name_word(nxt) and nxt not in ".,;:()":
                    right += 1
                elif (
                    nxt.lower() in _CONNECTORS
                    and right + 2 < len(words)
                    and _is_name_word(words[right + 2][2])
                ):
                    right += 2
                else:
                    break
            while left < index and words[left][2].lower() in _LEADING_STOP | _CONNECTORS:
                left += 1
            start, end = words[left][0], words[right][1]
            span = text[start:end].rstrip(".,;:")
            if len(span.split()) == 1 and span.lower() in {
                k for keys in _INSTITUTION_KEYWORDS.values() for k in keys
            }:
                continue
            found.append(_Candidate(start, start + len(span), label))
        return found

    def __call__(self, text: str) -> list[Entity]:
        """The entities of ``text``, non-overlapping, in text order."""
        candidates: list[_Candidate] = []
        if any(label.startswith("GRP.HER.") for label in self.labels):
            candidates += [c for c in self._institutions(text) if c.label in self.labels]
        if "IDENTIFIER" in self.labels:
            candidates += [_Candidate(*m.span(), "IDENTIFIER") for m in ISIL_PATTERN.finditer(text)]
            candidates += [_Candidate(*m.span(), "IDENTIFIER") for m in _WIKIDATA.finditer(text)]
        if "TMP" in self.labels:
            for pattern in _TIME_PATTERNS:
                candidates += [_Candidate(*m.span(), "TMP") for m in pattern.finditer(text)]
        if "TOP" in self.labels:
            candidates += [_Candidate(*m.span(), "TOP") for m in self._places.finditer(text)]
        return [
            Entity(text=text[c.start : c.end], type=c.label, start=c.start, end=c.end)
            for c in _resolve(candidates)
        ]


TYPE_KEYWORDS: dict[CustodianType, tuple[str, ...]] = {
    "G": ("galerie", "gallery", "exposities", "exhibitions"),
    "L": ("bibliotheek", "library", "libraries", "bibliothek", "leeszaal", "boeken", "books", "lending"),
    "A": ("archief", "archive", "archives", "archiv", "record office", "records", "akten", "studiezaal"),
    "M": ("museum", "musea", "museums", "collectie", "tentoonstelling", "visitors", "bezoekers"),
    "O": ("overheid", "government", "provincie", "state", "federal", "national", "nationale"),
    "R": ("instituut", "institute", "onderzoek", "research", "kennisinstituut"),
    "C": ("bedrijf", "company", "bank", "corporate", "firm"),
    "B": ("botanische", "botanical", "zoo", "zoos", "tuin", "garden"),
    "E": ("university", "universiteit", "hogeschool", "studenten", "students", "college"),
    "S": ("vereniging", "society", "genootschap", "kring", "leden", "members", "volunteers"),
    "F": ("kasteel", "castle", "molen", "mill", "monument", "site"),
    "I": ("traditie", "tradition", "intangible", "immaterieel", "folk"),
    "X": (),
    "P": ("particuliere", "private", "familie", "family"),
    "H": ("kerk", "kerken", "church", "churches", "abdij", "klooster", "monastery"),
    "D": ("digitaal", "digital", "data", "datasets", "online", "catalogue"),
    "N": ("stichting", "foundation", "cooperative"),
    "T": ("bakkerij", "bakery", "recepten", "recipes", "culinary", "food"),
    "U": (),
}
"""Keywords counted for each custodian type (Dutch and English, lowercased word prefixes)."""


class KeywordTypeClassifier:
    """Custodian type from keyword counts.

    Each keyword occurrence adds 1 to its type; occurrences inside the first institution
    name of the text add :attr:`name_weight` instead (the name says most: *Museum*,
    *Archief*). The primary type has the highest score (ties: GLAMORCUBESFIXPHDNT order);
    secondary types score at least half of it and at least 2; no keyword at all gives U.
    """

    name_weight = 4.0

    def __call__(self, text: str, entities: Sequence[Entity] = ()) -> CustodianTypeLabel:
        lowered = text.lower()
        words = re.findall(r"\w+", lowered)
        scores = dict.fromkeys(CUSTODIAN_TYPES, 0.0)
        for letter, keywords in TYPE_KEYWORDS.items():
            for keyword in keywords:
                if " " in keyword:
                    scores[letter] += lowered.count(keyword)
                else:
                    scores[letter] += sum(keyword in word for word in words)
        name = next((e.text.lower() for e in entities if e.type.startswith("GRP.HER.")), "")
        for letter, keywords in TYPE_KEYWORDS.items():
            if any(keyword in name for keyword in keywords):
                scores[letter] += self.name_weight
        best = max(CUSTODIAN_TYPES, key=lambda letter: (scores[letter], -CUSTODIAN_TYPES.index(letter)))
        if scores[best] == 0:
            return CustodianTypeLabel(primary_type="U", rationale="no type keyword found")
        secondary = [
            letter
            for letter in CUSTODIAN_TYPES
            if letter != best and scores[letter] >= max(2.0, scores[best] / 2)
        ]
        top = ", ".join(f"{letter}={scores[letter]:g}" for letter in [best, *secondary])
        return CustodianTypeLabel(
            primary_type=best, secondary_types=secondary[:3], rationale=f"keyword scores {top}"
        )


_ARTICLES = {"de", "het", "the", "een", "a", "der", "die", "das"}


def normalise_name(name: str) -> str:
    """A name for matching: no accents, lowercase, punctuation as spaces, no leading article.

    >>> normalise_name("Het Rijksmuseum, Amsterdam")
    'rijksmuseum amsterdam'
    """
    text = unicodedata.normalize("NFKD", name)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower()
    words = re.findall(r"\w+", text)
    while words and words[0] in _ARTICLES and len(words) > 1:
        words = words[1:]
    return " ".join(words)


class FuzzyLinker:
    """Exact and fuzzy name matching against a knowledge base, with ISIL codes as evidence.

    Args:
        kb: The knowledge base.
        top_k: Candidates returned per mention.
        nil_threshold: A mention is NIL when its best candidate scores under this (0-100).
        isil_window: An ISIL code within this many characters after the mention counts as
            naming it (score 100).
    """

    def __init__(
        self, kb: KnowledgeBase, *, top_k: int = 10, nil_threshold: float = 90.0, isil_window: int = 40
    ) -> None:
        self.kb = kb
        self.top_k = top_k
        self.nil_threshold = nil_threshold
        self.isil_window = isil_window
        self._fuzz = require_heritage_extra("rapidfuzz")
        self._ids = [entry.kb_id for entry in kb]
        self._names = [normalise_name(entry.label) for entry in kb]
        self._exact: dict[str, list[str]] = {}
        for kb_id, name in zip(self._ids, self._names, strict=True):
            self._exact.setdefault(name, []).append(kb_id)

    def candidates(self, mention: str, context: str = "", start: int | None = None) -> list[LinkCandidate]:
        """Ranked candidates for a mention (best first), scores 0-100."""
        scores: dict[str, float] = {}
        position = start if start is not None else context.find(mention)
        if position >= 0 and context:
            after = context[position + len(mention) : position + len(mention) + self.isil_window]
            for match in ISIL_PATTERN.finditer(after):
                entry = self.kb.find_isil(match.group())
                if entry is not None:
                    scores[entry.kb_id] = 100.0
        query = normalise_name(mention)
        for kb_id in self._exact.get(query, []):
            scores[kb_id] = max(scores.get(kb_id, 0.0), 100.0)
        process, fuzz = self._fuzz.process, self._fuzz.fuzz
        for _, score, index in process.extract(query, self._names, scorer=fuzz.WRatio, limit=self.top_k):
            kb_id = self._ids[index]
            scores[kb_id] = max(scores.get(kb_id, 0.0), float(score))
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[: self.top_k]
        return [
            LinkCandidate(kb_id=kb_id, label=self.kb.entries[kb_id].label, score=round(score, 2))
            for kb_id, score in ranked
        ]

    def __call__(
        self, mention: str, context: str = "", start: int | None = None
    ) -> tuple[list[LinkCandidate], bool]:
        """``(candidates, nil)``: NIL when no candidate reaches the threshold."""
        found = self.candidates(mention, context, start)
        nil = not found or found[0].score < self.nil_threshold
        return found, nil


_STOPWORDS = set(
    [
        "de",
        "het",
        "een",
        "en",
        "van",
        "in",
        "op",
        "te",
        "is",
        "zijn",
        "was",
        "werd",
        "wordt",
        "met",
        "voor",
        "door",
        "aan",
        "bij",
        "om",
        "uit",
        "naar",
        "als",
        "dat",
        "die",
        "dit",
        "er",
        "of",
        "the",
        "a",
        "an",
        "and",
        "of",
        "in",
        "on",
        "to",
        "is",
        "are",
        "was",
        "were",
        "be",
        "by",
        "for",
        "with",
        "from",
        "at",
        "as",
        "it",
        "its",
        "this",
        "that",
        "which",
        "who",
        "what",
        "when",
        "where",
        "how",
        "does",
        "did",
        "do",
        "has",
        "have",
        "had",
        "wat",
        "wie",
        "waar",
        "wanneer",
        "hoe",
        "welke",
        "welk",
        "heeft",
    ]
)


def _terms(text: str) -> list[str]:
    return [w for w in re.findall(r"\w+", text.lower()) if w not in _STOPWORDS]


class Bm25Retriever:
    """Okapi BM25 over a fixed set of documents (rank-bm25's ``BM25Okapi``).

    Args:
        documents: ``{doc_id: text}``.
        k1: Term-frequency saturation.
        b: Length normalisation.
    """

    source = "bm25"

    def __init__(self, documents: Mapping[str, str], *, k1: float = 1.5, b: float = 0.75) -> None:
        rank_bm25 = require_heritage_extra("rank_bm25")
        self.doc_ids = list(documents)
        corpus = [_terms(documents[doc_id]) or ["_"] for doc_id in self.doc_ids]
        self._bm25 = rank_bm25.BM25Okapi(corpus, k1=k1, b=b)

    def search(self, query: str, k: int = 20) -> list[RetrievedDocument]:
        """The ``k`` best documents with a positive score, best first (ties: by id)."""
        scores = self._bm25.get_scores(_terms(query))
        ranked = sorted(zip(self.doc_ids, scores, strict=True), key=lambda item: (-item[1], item[0]))
        return [
            RetrievedDocument(doc_id=doc_id, score=round(float(score), 6), source=self.source)
            for doc_id, score in ranked[:k]
            if score > 0
        ]


class ExtractiveQA:
    """Answers with the context sentence that shares the most content words with the question.

    Words match on a common prefix of five letters (``opgericht``/``oprichting`` do not,
    ``founded``/``founding`` do); ties go to the earlier sentence. The answer and the only
    supporting fact are that sentence.
    """

    def __call__(self, question: str, context: str, *, id: str = "") -> QAAnswer:  # noqa: A002
        keys = {w[:5] for w in _terms(question)}
        best, best_score = "", -1
        for sentence in split_sentences(context):
            score = len(keys & {w[:5] for w in _terms(sentence)})
            if score > best_score:
                best, best_score = sentence, score
        return QAAnswer(id=id, question=question, answer=best, supporting_facts=[best] if best else [])
