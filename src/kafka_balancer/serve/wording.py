"""The planner names its settings as the ``plan`` command's flags; a request to the service names them by
its JSON fields and endpoints. :func:`api_words` rewrites one into the other, so that an error or a note
the service returns speaks the API's language:

>>> api_words("--max-moves 1 is below the 6 replica moves that removing the brokers needs")
'max_moves 1 is below the 6 replica moves that removing the brokers needs'
>>> api_words("drop it from --add-brokers")
'drop it from /api/add-brokers'
"""

from __future__ import annotations

import re

_WORDS = {
    "--max-moves": "max_moves",
    "--max-bytes": "max_bytes",
    "--exclude-topics": "excluded_topics",
    "--add-brokers": "/api/add-brokers",
    "--remove-brokers": "/api/remove-brokers",
    "--demote-brokers": "/api/demote-brokers",
    "--goals": "goals",
    "--leadership-only": "leadership_only",
}
_FLAG = re.compile("(" + "|".join(re.escape(f) for f in _WORDS) + r")(?![\w-])")
_LEAD = re.compile(r"[^\s:]+")


def api_words(text: str) -> str:
    """``text`` with the ``plan`` flags that have an API equivalent replaced by it."""
    return _FLAG.sub(lambda m: _WORDS[m.group(1)], text)


def field_of(message: str, fields: frozenset[str]) -> str | None:
    """The request field a message is about: its first word when that names one of ``fields`` (every error
    of the API leads with the field it names), else None. A broker endpoint's name stands for its
    ``brokers``."""
    m = _LEAD.match(message)
    word = m.group(0) if m else ""
    if word.startswith("/api/") and word.endswith("-brokers"):
        return "brokers"
    return word if word in fields else None
