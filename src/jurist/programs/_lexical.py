"""Content words: the lexical unit the offline baselines compare texts by.

Shared by the RAGBench baseline (sentence support and relevance by word overlap,
:mod:`jurist.programs.ragbench.baseline`) and the claim baseline of ``jurist gate``
(:mod:`jurist.programs.gates`), so that neither task's module imports the other's.
"""

from __future__ import annotations

import re

__all__ = ["content_words"]

_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W_]+")

_STOPWORD_TEXT = """
    a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing done down during each
    either few for from further had has have having he her here hers herself him himself his
    how however i if in into is it its itself just least less may me might more most much must
    my myself neither no nor not now of off on once only or other our ours ourselves out over
    own per same shall she should so some such than that the their theirs them themselves then
    there these they this those through thus to too under until up upon us very via was we were
    what when where whether which while who whom whose why will with within without would yet you
    your yours yourself yourselves based according provided context document documents passage
    title mentioned given information
    """
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def _fold(token: str) -> str:
    """Fold a plural to its singular with two suffix rules; leave other tokens unchanged."""
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


def content_words(text: str) -> frozenset[str]:
    """Return the content words of a text, as the lexical baselines compare them.

    Lowercase; tokens are numbers (``10,009`` and ``3.5`` stay whole) and runs of letters or
    digits; stopwords (including RAG boilerplate such as "context", "passage", "title") and
    single letters are dropped; plurals are folded (``studies -> study``, ``cells -> cell``).

    Args:
        text: Any text.

    Returns:
        The set of content words.

    Examples:
        >>> sorted(content_words("The T-cell counts of 10,009 patients."))
        ['10,009', 'cell', 'count', 'patient']
    """
    words = (_fold(token) for token in _TOKEN.findall(text.lower()) if token not in _STOPWORDS)
    return frozenset(word for word in words if word not in _STOPWORDS and (len(word) > 1 or word.isdigit()))
