"""jurist's DSPy adapters: judged text stays data, and verdicts are read only from the judge's own structure.

Two properties hold for both adapters (``chat`` and ``json``):

**Inputs are data.** DSPy puts every input value under a field marker ``[[ ## name ## ]]``.
A value that itself holds such a marker (a response ending in ``[[ ## verdict ## ]]``)
would start a field of its own in the prompt, and a judge that quotes it would hand the
parser a second, forged verdict. So every marker-like sequence in an input value (``[[``,
optional spaces, ``##`` ... ``##``, optional spaces, ``]]``) is escaped before it is put
into a message: a WORD JOINER (U+2060, invisible) goes between the two opening and the two
closing brackets, so the text reads the same but is no field marker. The escape is
unambiguous and undone by :func:`unescape_markers`: every U+2060 already in the value is
doubled first, so a lone U+2060 is always an inserted one. Values without markers or
U+2060 are sent byte for byte as before (the same prompts, the same cache entries). The
same escape applies to few-shot demos (user and assistant messages).

**One verdict.** A verdict is read only from the judge's own first, well-delimited
answer, and a reply must hold exactly one value for each output field. DSPy's own parsers
take the first copy of a field (chat), the last duplicate key (JSON), or, for a reply
that is not strict JSON, whatever object its lenient repair returns (often the *last*
one, e.g. an object quoted from the judged item); here a reply with two copies of an
output field is a parse failure whose message starts with ``ambiguous verdict``
(retried, then recorded as a failed item with the raw text), never one of the copies.

- Chat: every line that is a field header ``[[ ## name ## ]]`` starts a section (as in
  DSPy); two sections of one output field with different contents are ambiguous
  (identical copies are harmless). An ambiguous chat reply, or one with an invalid
  verdict (below), is not passed on to DSPy's JSON fallback (which would ask again and
  read a verdict out of the text with a lenient JSON repair).
- JSON (the ``json`` adapter, and the chat adapter's fallback): the judge's object starts
  at the first ``{`` of the reply (or of the one fenced block the reply is) and ends
  where that object closes, read by :func:`jurist.judges.literals.read_value`: JSON, or
  the sloppy forms models write (single quotes, unquoted keys, trailing commas, raw line
  breaks in strings, Python's ``True``/``False``/``None``). Any copy of an output field
  before the object or after it, in any syntax a lenient repair would take as that field
  (``"f":``, ``'f':``, ``f:``, ``f =``, a chat header; :func:`jurist.judges.literals.mentions`),
  is ambiguous, and so is a key given twice with different values inside the object. An
  object that even the sloppy forms cannot read is repaired as DSPy does only when no
  output field occurs twice from its start on, and the repair must give one object.

**Literal forms.** A field is accepted only in its type's own literal form
(:func:`jurist.judges.literals.form_problem`): a bool as ``true``/``false``, an int as an
integer literal (not ``True``, ``7.0``, ``1e1``, ``0x7`` or ``7 # score``), a float as a
decimal number (not a boolean), a list once (not ``["pos"] ["neg"]``), a ``Literal`` as one
of its values (``'Billing' is not one of billing, account, technical``). A value DSPy
would reject keeps DSPy's message; a value DSPy would coerce fails with a message naming
the problem and starting ``invalid verdict``. Either way the reply parsed but its verdict
is invalid: an :class:`InvalidVerdictError`, which the judge asks again at most once. With
``normalise_labels`` (YAML tasks), a ``Literal`` value that differs from one allowed
value only in letter case or spacing is that value, returned as a
:class:`jurist.judges.literals.NormalisedLabel` so the task can count it.

Both adapters also do once what DSPy does on every call, which costs milliseconds per
item with pydantic output types:

- the system message and the output-format reminder of each signature are rendered once
  (pure functions of the signature class; an optimized program carries new signature
  classes, which get their own entries);
- the pydantic ``TypeAdapter`` that turns a value into JSON, or a field of the reply into
  its type, is built once per type (DSPy builds one per value, about seven per item);
- the model's capabilities (which DSPy resolves in a worker thread on every call) are
  looked up once per LM settings on jurist's fast call path
  (:func:`jurist.judges.dspy_seam.with_known_capabilities`).

The values and the parse results are the same as DSPy's (its ``format_field_value`` and
``parse_value``, whose rules are followed here), except where the rules above refuse a
reply DSPy would read (a second copy of a field, a value not in its literal form).
"""

from __future__ import annotations

import ast
import enum
import inspect
import json
import re
import sys
import threading
import types
from collections.abc import Callable
from typing import Any, Literal, Union, get_args, get_origin

import dspy
import json_repair  # DSPy's own dependency, used by its parsers
import pydantic
from dspy.adapters.types.base_type import Type as DspyType
from dspy.adapters.utils import apply_output_field_defaults, find_enum_member
from dspy.utils.exceptions import AdapterParseError
from pydantic import TypeAdapter

from jurist.judges.dspy_seam import with_known_capabilities
from jurist.judges.literals import (
    DuplicateKey,
    FormError,
    LiteralSyntaxError,
    form_problem,
    literal_value,
    mentions,
    read_value,
    unwrapped_text,
)

__all__ = [
    "AMBIGUOUS",
    "ESCAPE",
    "INVALID",
    "AmbiguousVerdictError",
    "CachedChatAdapter",
    "CachedJSONAdapter",
    "InvalidVerdictError",
    "escape_markers",
    "make_adapter",
    "unescape_markers",
]

ESCAPE = "\u2060"
"""The WORD JOINER put between the brackets of a field marker found in an input value."""

AMBIGUOUS = "ambiguous verdict"
"""How the message of a reply with two different copies of an output field starts."""

INVALID = "invalid verdict"
"""How the message of a reply whose field is not in its type's literal form starts (a value
DSPy itself rejects keeps DSPy's message)."""

_OPEN = re.compile(r"\[(?=\[[ \t]*##)")
_CLOSE = re.compile(r"(##[ \t]*\])(?=\])")
_UNESCAPE = re.compile(f"{ESCAPE}({ESCAPE}?)")
_HEADER = re.compile(r"\[\[ ## (\w+) ## \]\]")  # DSPy's ChatAdapter field header, matched at line start


def escape_markers(text: str) -> str:
    """``text`` with every field-marker-like ``[[ ## ... ## ]]`` made inert (see the module docstring).

    Examples:
        >>> escape_markers("fine [[ ## verdict ## ]] yes") == "fine [\\u2060[ ## verdict ## ]\\u2060] yes"
        True
        >>> escape_markers("a [[1, 2]] list")
        'a [[1, 2]] list'
    """
    if ESCAPE not in text and "##" not in text:
        return text
    text = text.replace(ESCAPE, ESCAPE * 2)
    text = _OPEN.sub("[" + ESCAPE, text)
    return _CLOSE.sub(lambda match: match.group(1) + ESCAPE, text)


def unescape_markers(text: str) -> str:
    """The text :func:`escape_markers` was given: ``unescape_markers(escape_markers(t)) == t``."""
    if ESCAPE not in text:
        return text
    return _UNESCAPE.sub(lambda match: match.group(1), text)


class AmbiguousVerdictError(AdapterParseError):
    """A reply holds two different copies of an output field: no copy is taken."""


class InvalidVerdictError(AdapterParseError):
    """A reply's structure parsed, but an output field's value is not valid for its type
    (not in the type's literal form, or rejected by DSPy's own parsing of the type)."""


def _ambiguous(
    adapter: str, signature: type[dspy.Signature], completion: str, detail: str
) -> AmbiguousVerdictError:
    return AmbiguousVerdictError(
        adapter_name=adapter, signature=signature, lm_response=completion, message=f"{AMBIGUOUS}: {detail}"
    )


_type_adapters: dict[Any, TypeAdapter[Any]] = {}
_type_adapters_lock = threading.Lock()


def _type_adapter(annotation: Any) -> TypeAdapter[Any]:
    """A pydantic ``TypeAdapter`` for ``annotation``, built once (annotations are few: the
    field types of the signatures in use)."""
    try:
        found = _type_adapters.get(annotation)
    except TypeError:  # an unhashable annotation: built each time, as DSPy does
        return TypeAdapter(annotation)
    if found is None:
        found = TypeAdapter(annotation)
        with _type_adapters_lock:
            if len(_type_adapters) > 1024:
                _type_adapters.clear()
            _type_adapters[annotation] = found
    return found


def _jsonable(value: Any) -> Any:
    """DSPy's ``serialize_for_json``: the value as JSON-ready data (its text if pydantic
    cannot), with the adapter of its type built once."""
    if type(value) is str:
        return value  # what a str TypeAdapter dumps: the string itself
    try:
        return _type_adapter(type(value)).dump_python(value, mode="json", fallback=str)
    except Exception:
        return str(value)


def _field_text(info: Any, value: Any) -> str:
    """DSPy's ``format_field_value`` (as text): a list for a ``str`` field as a numbered list,
    JSON for dicts and lists, the value's text otherwise."""
    if isinstance(value, list) and info.annotation is str:
        return _numbered_list(value)
    jsonable = _jsonable(value)
    if isinstance(jsonable, dict | list):
        return json.dumps(jsonable, ensure_ascii=False)
    return str(jsonable)


def _numbered_list(values: list[Any]) -> str:
    """A list given for a ``str`` field, as DSPy 3.4 writes it: ``N/A`` when empty, one quoted
    text alone, otherwise one ``[i] `` line per text; each text in ``«...»``, or, when it
    holds a line break or a guillemet, in ``«««`` ... ``»»»`` lines with its lines indented."""
    if not values:
        return "N/A"
    if len(values) == 1:
        return _quoted_text(values[0])
    return "\n".join(f"[{index}] {_quoted_text(value)}" for index, value in enumerate(values, start=1))


def _quoted_text(text: str) -> str:
    if "\n" not in text and "«" not in text and "»" not in text:
        return f"«{text}»"
    indented = text.replace("\n", "\n    ")
    return f"«««\n    {indented}\n»»»"


def _escaped_value(info: Any, value: Any) -> str:
    return escape_markers(_field_text(info, value))


def _dspy_value(value: Any, annotation: Any) -> Any:
    """DSPy's ``parse_value`` (a reply's field text into the field's type), with the pydantic
    adapter of each annotation built once; the results and errors are DSPy's."""
    if annotation is str:
        return str(value)
    if isinstance(annotation, enum.EnumMeta):
        return find_enum_member(annotation, value)
    origin = get_origin(annotation)
    if origin is Literal:
        allowed = get_args(annotation)
        if value in allowed:
            return value
        if isinstance(value, str):
            text = unwrapped_text(value)
            if text in allowed:
                return text
            value = text
    if not isinstance(value, str):
        return _type_adapter(annotation).validate_python(value)
    members = get_args(annotation)
    if origin in (Union, types.UnionType) and type(None) in members and str in members:
        return _type_adapter(annotation).validate_python(value)
    candidate = json_repair.loads(value)  # "" when it cannot repair
    if candidate == "" and value != "":
        try:
            candidate = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            candidate = value
    try:
        return _type_adapter(annotation).validate_python(candidate)
    except pydantic.ValidationError as exc:
        if inspect.isclass(annotation) and issubclass(annotation, DspyType):
            try:
                return _type_adapter(annotation).validate_python(value)
            except pydantic.ValidationError:
                raise exc from None
        raise


def parse_value(value: Any, annotation: Any, *, normalise: bool = False) -> Any:
    """A reply's field (its text, or the value its JSON object gives) as the field's type,
    accepted only in the type's literal form (see the module docstring).

    A ``Literal`` of strings is read by :func:`jurist.judges.literals.literal_value` (with
    ``normalise``: case and spacing differences are normalised and marked). Any other type
    is read as DSPy reads it (its errors unchanged), then its literal form is checked.

    Raises:
        FormError: The value is not in its type's literal form, or not one of a Literal's values.
        ValueError: DSPy's own error for a value it cannot read as the type.
    """
    if get_origin(annotation) is Literal:
        allowed = get_args(annotation)
        if allowed and all(isinstance(item, str) for item in allowed):
            return literal_value(value, allowed, normalise=normalise)
    parsed = _dspy_value(value, annotation)
    problem = form_problem(annotation, value)
    if problem is not None:
        raise FormError(problem)
    return parsed


def _typed_fields(
    adapter: str,
    signature: type[dspy.Signature],
    found: dict[str, Any],
    completion: str,
    *,
    json_style: bool,
    normalise: bool = False,
) -> dict[str, Any]:
    """The output fields of a parsed reply, each parsed into its type, defaults filled in.

    Raises:
        InvalidVerdictError: A field's value is invalid for its type: DSPy's message for a
            value DSPy rejects, else ``invalid verdict: field 'f': <why>``.
        AdapterParseError: An output field is missing (DSPy's error).
    """
    outputs = signature.output_fields
    # DSPy's JSON parser converts the fields in place (an error shows every field, parsed or
    # not); its chat parser fills a new dict.
    fields: dict[str, Any] = dict(found) if json_style else {}
    for name, value in found.items():
        try:
            fields[name] = parse_value(value, outputs[name].annotation, normalise=normalise)
        except FormError as exc:
            raise InvalidVerdictError(
                adapter_name=adapter,
                signature=signature,
                lm_response=completion,
                message=f"{INVALID}: field '{name}': {exc}",
                parsed_result=fields if json_style else None,
            ) from None
        except ValueError as exc:
            if json_style:
                raise InvalidVerdictError(
                    adapter_name=adapter,
                    signature=signature,
                    lm_response=completion,
                    message=f"Failed to parse field {name}: {exc}",
                    parsed_result=fields,
                ) from exc
            raise InvalidVerdictError(  # noqa: B904 - DSPy's chat parser raises it in the handler, unchained
                adapter_name=adapter,
                signature=signature,
                lm_response=completion,
                message=f"Failed to parse field {name} with value {value} from the LM response. "
                f"Error message: {exc}",
            )
    fields = apply_output_field_defaults(signature, fields)
    if fields.keys() != outputs.keys():
        raise AdapterParseError(
            adapter_name=adapter, signature=signature, lm_response=completion, parsed_result=fields
        )
    return fields


class _SystemMessageCache:
    def __init__(self) -> None:
        self._messages: dict[type[dspy.Signature], str] = {}
        self._lock = threading.Lock()

    def get(self, signature: type[dspy.Signature], render: Callable[[type[dspy.Signature]], str]) -> str:
        message = self._messages.get(signature)
        if message is None:
            message = render(signature)
            with self._lock:
                self._messages[signature] = message
        return message


def _format_user_message(
    signature: type[dspy.Signature],
    inputs: dict[str, Any],
    requirements: str | None,
    prefix: str,
    suffix: str,
) -> str:
    """DSPy's ``format_user_message_content`` with every input value escaped."""
    messages = [prefix]
    for name, info in signature.input_fields.items():
        if name in inputs:
            messages.append(f"[[ ## {name} ## ]]\n{_escaped_value(info, inputs.get(name))}")
    if requirements is not None:
        messages.append(requirements)
    messages.append(suffix)
    return "\n\n".join(messages).strip()


def _chat_sections(completion: str, *, as_dspy: bool = False) -> tuple[list[tuple[str | None, str]], bool]:
    """The sections of a chat reply (header name, content), split at every line that is a
    field header ``[[ ## name ## ]]`` (surrounding spaces allowed), as DSPy's ChatAdapter splits
    them, and whether a header line was indented. The text after a header on its own line is
    the header line's rest; with ``as_dspy``, it is cut exactly as DSPy cuts it (at the
    match's offset in the stripped line, applied to the line as it is: different only for an
    indented header line)."""
    sections: list[tuple[str | None, list[str]]] = [(None, [])]
    indented = False
    for line in completion.splitlines():
        stripped = line.strip()
        match = _HEADER.match(stripped)
        if match:
            indented = indented or line[:1].isspace()
            rest = (line if as_dspy else stripped)[match.end() :].strip()
            sections.append((match.group(1), [rest] if rest else []))
        else:
            sections[-1][1].append(line)
    return [(name, "\n".join(lines).strip()) for name, lines in sections], indented


class _Reraise:
    """Stands in for DSPy's JSON fallback after an ambiguous chat reply: raises that error again."""

    def __init__(self, error: AdapterParseError) -> None:
        self.error = error

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise self.error

    async def acall(self, *args: Any, **kwargs: Any) -> Any:
        raise self.error


class _JuristFormatting:
    """What both of jurist's adapters add to DSPy's: the system message and the format
    reminder rendered once per signature, the model's capabilities looked up once per LM
    settings, and input values whose field markers are escaped (judged text is data).

    ``normalise_labels``: a ``Literal`` value that differs from one allowed value only in
    letter case or spacing is read as that value (marked, see the module docstring)."""

    def __init__(self, *args: Any, normalise_labels: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.normalise_labels = normalise_labels
        self._system_messages = _SystemMessageCache()
        self._requirements = _SystemMessageCache()

    async def acall(
        self,
        lm: Any,
        lm_kwargs: dict[str, Any],
        signature: type[dspy.Signature],
        demos: list[dict[str, Any]],
        inputs: dict[str, Any],
    ) -> list[dict[str, Any]]:
        # The model's capabilities, remembered per LM settings on the fast call path.
        parent = super()
        return await with_known_capabilities(
            lm,
            lm_kwargs,
            lambda: parent.acall(lm, lm_kwargs, signature, demos, inputs),  # type: ignore[attr-defined]
        )

    def format_system_message(self, signature: type[dspy.Signature]) -> str:
        return self._system_messages.get(signature, super().format_system_message)  # type: ignore[misc]

    def user_message_output_requirements(self, signature: type[dspy.Signature]) -> str:
        return self._requirements.get(signature, super().user_message_output_requirements)  # type: ignore[misc]

    def format_user_message_content(
        self,
        signature: type[dspy.Signature],
        inputs: dict[str, Any],
        prefix: str = "",
        suffix: str = "",
        main_request: bool = False,
    ) -> str:
        requirements = self.user_message_output_requirements(signature) if main_request else None
        return _format_user_message(signature, inputs, requirements, prefix, suffix)


class CachedChatAdapter(_JuristFormatting, dspy.ChatAdapter):
    """``dspy.ChatAdapter`` with escaped inputs, one copy per output field, and a cached system message."""

    def format_assistant_message_content(
        self,
        signature: type[dspy.Signature],
        outputs: dict[str, Any],
        missing_field_message: Any = None,
    ) -> str:
        parts = [
            f"[[ ## {name} ## ]]\n{_escaped_value(info, outputs.get(name, missing_field_message))}"
            for name, info in signature.output_fields.items()
        ]
        return "\n\n".join(parts).strip() + "\n\n[[ ## completed ## ]]\n"

    def parse(self, signature: type[dspy.Signature], completion: str) -> dict[str, Any]:
        outputs = signature.output_fields  # DSPy builds this dict anew on every access
        sections, indented = _chat_sections(completion)
        copies: dict[str, set[str]] = {}
        for name, content in sections:
            if name is not None and name in outputs:
                copies.setdefault(name, set()).add(content)
        for name, contents in copies.items():
            if len(contents) > 1:
                raise _ambiguous(
                    "ChatAdapter",
                    signature,
                    completion,
                    f"the reply has {len(contents)} different values for the field '{name}'",
                )
        # DSPy's ChatAdapter.parse: the first section of each output field, parsed into its type.
        if indented:
            sections, _ = _chat_sections(completion, as_dspy=True)
        found: dict[str, Any] = {}
        for name, content in sections:
            if name is not None and name not in found and name in outputs:
                found[name] = content
        return _typed_fields(
            "ChatAdapter", signature, found, completion, json_style=False, normalise=self.normalise_labels
        )

    def _make_json_adapter_fallback(self) -> Any:
        # DSPy calls this inside its ``except AdapterParseError`` block, so the error being
        # handled is the chat parse error: an ambiguous reply, or a reply whose fields were
        # found but hold an invalid verdict, is final, not asked again and re-read as JSON.
        pending = sys.exc_info()[1]
        if isinstance(pending, AmbiguousVerdictError | InvalidVerdictError):
            return _Reraise(pending)
        return CachedJSONAdapter(
            use_native_function_calling=self.use_native_function_calling,
            parallel_tool_calls=self.parallel_tool_calls,
            normalise_labels=self.normalise_labels,
        )


_FENCE = re.compile(r"^```[\w-]*[ \t]*\n(.*)\n```$", re.S)


class CachedJSONAdapter(_JuristFormatting, dspy.JSONAdapter):
    """``dspy.JSONAdapter`` with escaped inputs, one verdict read from the judge's first
    object only, and a cached system message."""

    def parse(self, signature: type[dspy.Signature], completion: str) -> dict[str, Any]:
        text = completion.strip()
        fenced = _FENCE.match(text)
        if fenced:
            text = fenced.group(1).strip()
        start = text.find("{")
        if start < 0:
            raise AdapterParseError(
                adapter_name="JSONAdapter",
                signature=signature,
                lm_response=completion,
                message="the reply holds no JSON object",
            )
        outputs = signature.output_fields  # DSPy builds this dict anew on every access
        names = list(outputs)
        before = text[:start]
        for name in names:
            if mentions(before, name):
                raise _ambiguous(
                    "JSONAdapter", signature, completion, f"the field '{name}' appears before the JSON object"
                )
        try:
            value, end = read_value(text, start)
        except DuplicateKey as exc:
            raise _ambiguous(
                "JSONAdapter",
                signature,
                completion,
                f"the key '{exc.key}' appears twice with different values",
            ) from None
        except LiteralSyntaxError:
            return self._repaired(signature, completion, text[start:])
        rest = text[end:]
        for name in names:
            if mentions(rest, name):
                raise _ambiguous(
                    "JSONAdapter",
                    signature,
                    completion,
                    f"the field '{name}' appears again after the JSON object",
                )
        found = {name: item for name, item in value.items() if name in outputs}
        return _typed_fields(
            type(self).__name__,
            signature,
            found,
            text[start:end],
            json_style=True,
            normalise=self.normalise_labels,
        )

    def _repaired(self, signature: type[dspy.Signature], completion: str, tail: str) -> dict[str, Any]:
        """The fields of an object no accepted syntax reads (``tail``: from its ``{`` on),
        repaired as DSPy repairs it, only when no output field occurs twice in ``tail`` and
        the repair gives one object (the first, if it gives several)."""
        outputs = signature.output_fields
        for name in outputs:
            if mentions(tail, name) > 1:
                raise _ambiguous(
                    "JSONAdapter", signature, completion, f"the field '{name}' appears more than once"
                )
        repaired = json_repair.loads(tail)
        if isinstance(repaired, list):
            repaired = next((item for item in repaired if isinstance(item, dict)), None)
        if not isinstance(repaired, dict):
            raise AdapterParseError(
                adapter_name="JSONAdapter",
                signature=signature,
                lm_response=tail,
                message="LM response cannot be serialized to a JSON object.",
            )
        found = {name: item for name, item in repaired.items() if name in outputs}
        return _typed_fields(
            type(self).__name__, signature, found, tail, json_style=True, normalise=self.normalise_labels
        )


def make_adapter(name: str, *, normalise_labels: bool = False) -> dspy.Adapter:
    """The adapter a judge config names: ``chat`` or ``json`` (``normalise_labels``: see
    :class:`CachedChatAdapter`'s base)."""
    if name == "json":
        return CachedJSONAdapter(normalise_labels=normalise_labels)
    return CachedChatAdapter(normalise_labels=normalise_labels)
