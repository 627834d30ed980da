"""Corruptions of JSON documents for the schema fuzz tests (``test_schema_*.py``).

A document is plain JSON data; a *path* is the tuple of keys and indexes that reaches a value in it. Each
corruption returns the corrupted document (or bytes) and the name the error must mention (the field's
key, or the file), so a test can assert both that the input is refused and that the message says where.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import orjson
from hypothesis import strategies as st

Path = tuple[str | int, ...]

# one value of every JSON type; a swap picks one of another type than the value it replaces
SAMPLES: tuple[Any, ...] = ("x", True, None, [], {}, 1.5, 7)


def json_type(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int | float):
        return "number"
    return type(v).__name__


def leaves(doc: Any, path: Path = ()) -> list[tuple[Path, Any]]:
    """Every scalar (and empty container) with its path."""
    if isinstance(doc, dict) and doc:
        return [x for k, v in doc.items() for x in leaves(v, (*path, k))]
    if isinstance(doc, list) and doc:
        return [x for i, v in enumerate(doc) for x in leaves(v, (*path, i))]
    return [(path, doc)]


def keyed(doc: Any, path: Path = ()) -> list[Path]:
    """Paths of every value that sits under an object key (candidates for deletion)."""
    out: list[Path] = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.append((*path, k))
            out += keyed(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += keyed(v, (*path, i))
    return out


def objects(doc: Any, path: Path = ()) -> list[Path]:
    out: list[Path] = [path] if isinstance(doc, dict) else []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += objects(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += objects(v, (*path, i))
    return out


def get(doc: Any, path: Path) -> Any:
    for k in path:
        doc = doc[k]
    return doc


def replaced(doc: Any, path: Path, value: Any) -> Any:
    out = copy.deepcopy(doc)
    if not path:
        return value
    get(out, path[:-1])[path[-1]] = value
    return out


def deleted(doc: Any, path: Path) -> Any:
    out = copy.deepcopy(doc)
    del get(out, path[:-1])[path[-1]]
    return out


def name_of(path: Path) -> str:
    """The last key on the path: the field an error must name."""
    return next((str(k) for k in reversed(path) if isinstance(k, str)), "")


@st.composite
def type_swap(draw: st.DrawFn, doc: Any, strict: Callable[[Path, Any], bool]) -> tuple[Any, str]:
    """Replace a leaf ``strict`` says must keep its type with a value of another JSON type."""
    cands = [(p, v) for p, v in leaves(doc) if p and strict(p, v)]
    path, old = draw(st.sampled_from(cands))
    new = draw(st.sampled_from([s for s in SAMPLES if json_type(s) != json_type(old)]))
    return replaced(doc, path, new), name_of(path)


@st.composite
def drop_key(draw: st.DrawFn, doc: Any, required: Callable[[Path], bool]) -> tuple[Any, str]:
    """Delete a key ``required`` says the document must have."""
    path = draw(st.sampled_from([p for p in keyed(doc) if required(p)]))
    return deleted(doc, path), name_of(path)


@st.composite
def extra_key(draw: st.DrawFn, doc: Any) -> Any:
    """Add an unknown key to some object (the formats allow extensions)."""
    path = draw(st.sampled_from(objects(doc)))
    key = draw(st.sampled_from(["x_extra", "comment", "_meta", "generated_by"]))
    if key in get(doc, path):
        return doc
    value = draw(st.sampled_from(SAMPLES))
    out = copy.deepcopy(doc)
    get(out, path)[key] = value
    return out


def dumps(doc: Any) -> bytes:
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2)


@st.composite
def truncated(draw: st.DrawFn, data: bytes) -> bytes:
    """A proper prefix of the document that is not the document itself (trailing blanks do not count)."""
    body = data.rstrip()
    cut = draw(st.integers(0, len(body) - 1))
    return body[:cut]


@st.composite
def bad_encoding(draw: st.DrawFn, data: bytes) -> tuple[bytes, str]:
    """The document in an encoding the readers refuse, and what the error says."""
    text = data.decode("utf-8")
    kind = draw(st.sampled_from(["utf16", "utf16-bom", "utf32", "nul", "latin1"]))
    if kind == "utf16":
        return text.encode("utf-16-le"), "UTF-16"
    if kind == "utf16-bom":
        return text.encode("utf-16"), "UTF-16"
    if kind == "utf32":
        return text.encode("utf-32"), "UTF-32"
    if kind == "nul":
        at = draw(st.integers(0, len(data)))
        return data[:at] + b"\x00" + data[at:], "NUL"
    # latin-1 bytes that are not UTF-8: a non-ASCII character placed in a string
    i = data.index(b'"') + 1
    return data[:i] + "é".encode("latin-1") + data[i:], "not UTF-8"


@st.composite
def corrupt_document(draw: st.DrawFn, doc: Any, *, strict: Callable[[Path, Any], bool],
                     required: Callable[[Path], bool], out_of_range: Callable[[Any], Any], file_name: str,
                     kinds: tuple[str, ...] = ("type", "missing", "range", "truncated", "encoding"),
                     ) -> tuple[bytes, str]:
    """One corruption of a JSON document, as bytes, with the name its error must carry: a value of another
    type, a required key missing, a value out of range (the kind's own ``out_of_range`` strategy), the file
    cut short (the file is named), or text that is not UTF-8. ``kinds`` may repeat a kind to weight it."""
    kind = draw(st.sampled_from(kinds))
    if kind == "type":
        bad, name = draw(type_swap(doc, strict))
        return dumps(bad), name
    if kind == "missing":
        bad, name = draw(drop_key(doc, required))
        return dumps(bad), name
    if kind == "range":
        bad, name = draw(out_of_range(doc))
        return dumps(bad), name
    if kind == "truncated":
        return draw(truncated(dumps(doc))), file_name
    return draw(bad_encoding(dumps(doc)))
