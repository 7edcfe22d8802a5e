"""Structured replies: every reply the product parses has a format here, beside its prompt.

Most are one JSON object of short strings (:func:`object_schema`). Where the provider can, the reply
is decoded under its schema, so it cannot break the format: llama.cpp through a grammar
(:func:`gbnf`), Ollama through ``format``, an OpenAI-compatible server through ``response_format``.
Every string has a bounded length and whitespace is at most one space, so a small model cannot loop.
Where a provider has none of these, the prompt still asks for the JSON object and :func:`read_object`
reads it; a reply that is not the object is read as free text by the format's old reader and
counted as a parse fall-back (``parse_fallbacks`` in the usage).

Self-Ask keeps its own lines ("Follow up: ...", "So the final answer is: ..."): as JSON, the 1.5B
model repeated follow-ups and ended chains early (benchmarks/RESULTS.md). Such a format is
:func:`lines_format`: one line that begins with one of a few texts, decoded under its grammar where
the backend takes a grammar (llama.cpp), else freely (it has no JSON schema).
"""

from __future__ import annotations

import json
import re
from typing import Any

from sunar.usage import count_fallback

Schema = dict[str, Any]


def object_schema(**fields: int | tuple[str, ...]) -> Schema:
    """A JSON object whose every field is required: a string of at most N characters (``field=N``)
    or one of a few words (``field=("a", "b")``), in the given order."""
    properties: dict[str, Any] = {}
    for name, spec in fields.items():
        if isinstance(spec, tuple):
            properties[name] = {"type": "string", "enum": list(spec)}
        else:
            properties[name] = {"type": "string", "minLength": 1, "maxLength": int(spec)}
    return {"type": "object", "properties": properties, "required": list(fields), "additionalProperties": False}


def lines_format(*starts: tuple[str, int]) -> Schema:
    """A one-line text reply that begins with one of ``starts`` (each: the text, and the most
    characters after it). Not a JSON schema: only a backend that takes a grammar uses it."""
    return {"x-lines": [[start, int(most)] for start, most in starts]}


def numbered_format(most_lines: int, most: int) -> Schema:
    """A reply of 1 to ``most_lines`` numbered lines ("1. ...", "2. ..."), each of at most ``most``
    characters after its number. Like :func:`lines_format`, for a backend that takes a grammar."""
    return {"x-numbered": [int(most_lines), int(most)]}


def is_json_schema(schema: Schema | None) -> bool:
    """Whether ``schema`` is a JSON schema (what Ollama's ``format`` and OpenAI's
    ``response_format`` take), not a :func:`lines_format` or :func:`numbered_format`."""
    return bool(schema) and not any(key.startswith("x-") for key in schema)  # type: ignore[union-attr]


def as_reply(**values: str) -> str:
    """A reply in the schema's form, as the worked examples show it (exactly what the grammar allows)."""
    return json.dumps(values, ensure_ascii=False)


def _checked(value: Any, schema: Schema) -> dict[str, str] | None:
    if not isinstance(value, dict):
        return None
    out: dict[str, str] = {}
    for name, spec in schema["properties"].items():
        field = value.get(name)
        if not isinstance(field, str) or ("enum" in spec and field not in spec["enum"]):
            return None
        out[name] = field
    return out


def _salvaged(text: str, schema: Schema) -> dict[str, str] | None:
    """The fields of a cut or damaged object ('{"answer": "Paris' when the tokens ran out)."""
    out = {}
    for name in schema["properties"]:
        m = re.search(rf'"{name}"\s*:\s*"((?:[^"\\]|\\.)*)', text)
        if m is None:
            return None
        try:
            out[name] = json.loads(f'"{m.group(1)}"')
        except ValueError:
            out[name] = m.group(1)
    return _checked(out, schema)


def read_object(text: str, schema: Schema) -> dict[str, str] | None:
    """The reply's JSON object when it has the schema's fields (the first object in the text).
    Anything else counts as a parse fall-back: the fields salvaged from a cut object, or None
    (the caller reads the text its old way)."""
    text = str(text)
    start = text.find("{")
    if start >= 0:
        try:
            value, _ = json.JSONDecoder().raw_decode(text[start:])
        except ValueError:
            value = None
        if (found := _checked(value, schema)) is not None:
            return found
    count_fallback()
    return _salvaged(text, schema)


# --- the schema as a llama.cpp grammar ---------------------------------------------------------

#: One character of a JSON string: no quote, backslash or control character, or an escape.
_CHAR = r'char ::= [^"\\\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})'


def gbnf(schema: Schema) -> str:
    """The GBNF grammar of an :func:`object_schema` (fields in order, each string's length bounded,
    at most one space between tokens), of a :func:`lines_format` (one of its beginnings, then at
    most so many characters of one line) or of a :func:`numbered_format`. Any other schema is refused (llama-cpp-python's own
    converter silently falls back to "any JSON" when a schema does not convert)."""
    if "x-lines" in schema:
        starts = [f"{json.dumps(start)} [^\\n]{{1,{most}}}" for start, most in schema["x-lines"]]
        return "root ::= " + " | ".join(f"({alt})" for alt in starts)
    if "x-numbered" in schema:
        lines, most = schema["x-numbered"]
        nested = ""
        for n in range(int(lines), 1, -1):
            nested = f'("\\n{n}. " line{nested})?'
        return f'root ::= "1. " line{nested}\nline ::= [^\\n]{{1,{int(most)}}}'
    properties = schema.get("properties")
    if schema.get("type") != "object" or not isinstance(properties, dict) or list(properties) != schema.get("required"):
        raise ValueError("only objects whose fields are all required strings have a grammar here")
    rules, pairs = [], []
    for i, (name, spec) in enumerate(properties.items()):
        if "enum" in spec:
            body = " | ".join(json.dumps(json.dumps(word)) for word in spec["enum"])
        elif spec.get("type") == "string" and "maxLength" in spec:
            body = f'"\\"" char{{{int(spec.get("minLength", 0))},{int(spec["maxLength"])}}} "\\""'
        else:
            raise ValueError(f"field {name!r}: only strings with a maxLength, or an enum, have a grammar here")
        rules.append(f"f{i} ::= {body}")
        pairs.append(f'{json.dumps(json.dumps(name))} space ":" space f{i}')
    root = 'root ::= "{" space ' + ' "," space '.join(pairs) + ' space "}"'
    return "\n".join([root, *rules, _CHAR, 'space ::= " "?'])
