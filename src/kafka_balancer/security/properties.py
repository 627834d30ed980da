"""Reading Kafka's ``client.properties`` files: the ``java.util.Properties`` text format.

What ``kafka-reassign-partitions --command-config`` and every other Kafka tool read, so one file serves
both them and us. The rules (as ``Properties.load`` applies them):

* a line whose first non-blank character is ``#`` or ``!`` is a comment; blank lines are skipped;
* a line ending in an odd number of backslashes continues on the next one, whose leading blanks are
  dropped;
* the key ends at the first unescaped ``=``, ``:`` or blank; blanks, then one ``=`` or ``:``, then blanks
  separate it from the value;
* ``\\t \\n \\r \\f``, ``\\uXXXX`` and ``\\`` before any other character (``\\=``, ``\\:``, ``\\ ``,
  ``\\\\``) are escapes; the last of several equal keys wins;
* the file is read as ISO-8859-1, as Java reads a properties stream.

    >>> parse_properties('# admin\\nsecurity.protocol = SASL_SSL\\nsasl.mechanism: SCRAM-SHA-512\\n'
    ...                  'sasl.jaas.config=a.B required \\\\\\n    username="u";\\n')
    {'security.protocol': 'SASL_SSL', 'sasl.mechanism': 'SCRAM-SHA-512', 'sasl.jaas.config': 'a.B required username="u";'}
"""  # noqa: E501

from __future__ import annotations

from collections.abc import Iterator

_BLANKS = " \t\f"
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


class PropertiesSyntaxError(ValueError):
    """A malformed escape (``\\u`` not followed by four hex digits); ``line`` is 1-based."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


def _natural_lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, logical line) for every non-comment, non-blank logical line."""
    lines = _natural_lines(text)
    i = 0
    while i < len(lines):
        start = i
        line = lines[i].lstrip(_BLANKS)
        i += 1
        if not line or line[0] in "#!":
            continue
        parts = []
        while True:
            trailing = len(line) - len(line.rstrip("\\"))
            if trailing % 2 == 1:
                parts.append(line[:-1])
                if i >= len(lines):
                    break
                line = lines[i].lstrip(_BLANKS)
                i += 1
                continue
            parts.append(line)
            break
        yield start + 1, "".join(parts)


def _unescape(raw: str, lineno: int) -> str:
    out: list[str] = []
    i = 0
    while i < len(raw):
        c = raw[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        i += 1
        if i >= len(raw):
            break
        e = raw[i]
        if e == "u":
            hexdigits = raw[i + 1:i + 5]
            if len(hexdigits) != 4 or any(h not in "0123456789abcdefABCDEF" for h in hexdigits):
                raise PropertiesSyntaxError(lineno, "malformed \\uXXXX escape")
            out.append(chr(int(hexdigits, 16)))
            i += 5
            continue
        out.append(_ESCAPES.get(e, e))
        i += 1
    return "".join(out)


def _split_key(line: str) -> tuple[str, str]:
    """Raw (still escaped) key and value of one logical line."""
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c in "=:" or c in _BLANKS:
            break
        i += 1
    key = line[:i]
    rest = line[i:].lstrip(_BLANKS)
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(_BLANKS)
    return key, rest


def parse_properties(text: str) -> dict[str, str]:
    """Key -> value of a properties text (later duplicates win)."""
    out: dict[str, str] = {}
    for lineno, line in _logical_lines(text):
        raw_key, raw_value = _split_key(line)
        out[_unescape(raw_key, lineno)] = _unescape(raw_value, lineno)
    return out


def key_lines(text: str) -> dict[str, int]:
    """Key -> line number where it is (last) set, for error messages."""
    out: dict[str, int] = {}
    for lineno, line in _logical_lines(text):
        raw_key, _ = _split_key(line)
        try:
            out[_unescape(raw_key, lineno)] = lineno
        except PropertiesSyntaxError:
            continue
    return out


def read_properties_bytes(data: bytes) -> str:
    """Decode a properties file as Java does: ISO-8859-1 (every byte is a character)."""
    return data.decode("latin-1")


def format_properties(props: dict[str, str]) -> str:
    """Write ``props`` in the same format (keys and values escaped so :func:`parse_properties` reads them back)."""

    def esc(s: str, is_key: bool) -> str:
        out = []
        for j, ch in enumerate(s):
            if ch == "\\":
                out.append("\\\\")
            elif ch in "\t\n\r\f":
                out.append({"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f"}[ch])
            elif (is_key and ch in "=:#!") or (ch in "#!" and j == 0) or (ch == " " and (is_key or j == 0)):
                out.append("\\" + ch)
            elif ord(ch) > 0x7E or ord(ch) < 0x20:
                out.append(f"\\u{ord(ch):04x}")
            else:
                out.append(ch)
        return "".join(out)

    return "".join(f"{esc(k, True)}={esc(v, False)}\n" for k, v in props.items())
