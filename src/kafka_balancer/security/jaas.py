"""The ``sasl.jaas.config`` value, as Kafka writes it::

    org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="s3cr3t";

One login module: its class, a control flag (``required``, ``requisite``, ``sufficient`` or ``optional``),
then ``key=value`` options (value quoted with ``"``, where ``\\"`` and ``\\\\`` are escapes, or a bare word),
then ``;``.

    >>> m = parse_jaas('org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="p\\\\"q";')
    >>> m.module, m.flag, m.options["username"], m.options["password"]
    ('org.apache.kafka.common.security.plain.PlainLoginModule', 'required', 'a', 'p"q')
"""  # noqa: E501

from __future__ import annotations

from dataclasses import dataclass, field

PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
FLAGS = ("required", "requisite", "sufficient", "optional")


class JaasSyntaxError(ValueError):
    """``sasl.jaas.config`` does not parse; the message never contains the value (it holds a password)."""


@dataclass(frozen=True)
class JaasModule:
    module: str
    flag: str
    options: dict[str, str] = field(repr=False)

    def __repr__(self) -> str:  # options hold the password
        return f"JaasModule({self.module!r}, {self.flag!r}, options=<{len(self.options)} redacted>)"


def _tokens(text: str) -> list[tuple[str, str]]:
    """(kind, text): kind is 'word', 'quoted' or the punctuation itself ('=', ';')."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise JaasSyntaxError("unterminated /* comment")
            i = j + 2
        elif c in "=;":
            out.append((c, c))
            i += 1
        elif c == '"':
            buf = []
            i += 1
            while True:
                if i >= n:
                    raise JaasSyntaxError("a quoted value is not closed (missing \")")
                ch = text[i]
                if ch == "\\" and i + 1 < n:
                    buf.append(text[i + 1])
                    i += 2
                    continue
                if ch == '"':
                    i += 1
                    break
                buf.append(ch)
                i += 1
            out.append(("quoted", "".join(buf)))
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in '=;"':
                j += 1
            out.append(("word", text[i:j]))
            i = j
    return out


def parse_jaas(text: str) -> JaasModule:
    """The single login module in ``text``; :class:`JaasSyntaxError` (without the value) otherwise."""
    toks = _tokens(text)
    if not toks:
        raise JaasSyntaxError("it is empty")
    if toks[0][0] != "word":
        raise JaasSyntaxError("it must start with the login module class, e.g. " + SCRAM_MODULE)
    module = toks[0][1]
    if len(toks) < 2 or toks[1][0] != "word" or toks[1][1].lower() not in FLAGS:
        raise JaasSyntaxError(f"the login module must be followed by a control flag ({', '.join(FLAGS)})")
    flag = toks[1][1].lower()
    options: dict[str, str] = {}
    i = 2
    while i < len(toks) and toks[i][0] != ";":
        if i + 2 >= len(toks) or toks[i][0] != "word" or toks[i + 1][0] != "=" or toks[i + 2][0] not in (
            "word", "quoted"
        ):
            raise JaasSyntaxError("options must be key=\"value\" pairs")
        options[toks[i][1]] = toks[i + 2][1]
        i += 3
    if i >= len(toks):
        raise JaasSyntaxError("it must end with ';'")
    if i + 1 < len(toks):
        raise JaasSyntaxError("it holds more than one login module; give exactly one")
    return JaasModule(module, flag, options)


def quote(value: str) -> str:
    """``value`` as a quoted JAAS option value."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
