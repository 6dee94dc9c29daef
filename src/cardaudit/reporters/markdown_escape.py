"""Escaping untrusted text for GitHub-flavoured Markdown (PR comments, job summaries, Hub
discussions), where text from a model card must stay text.

Hand-written because no library escapes *for* GitHub's renderer: besides CommonMark
(backslash before every punctuation character that can start markup) and HTML (entities for
``& < >``, so no ``<img>``, ``<details>`` or ``<a>``), GitHub turns ``@name`` into a
mention (a notification), ``#123`` into a cross-reference, and bare URLs and ``www.`` into
links. A word joiner (U+2060, invisible, not a space) after ``@`` / ``#`` and inside ``://``
and ``www.`` stops those without changing what the reader sees.
"""

from __future__ import annotations

import re
import unicodedata

#: Characters that start inline markup (emphasis, code, links and images, tables,
#: strikethrough, GitHub math). Values never begin a line in our templates, so block markers
#: (``-``, ``+``, ``1.``, ``>``) cannot take effect and are left alone to keep the source
#: readable.
_MARKDOWN = set("\\`*_[]!|~$")
_JOINER = "\u2060"
_AUTOLINK = re.compile(r"(?i)(://|www\.)")


def escape_text(text: object) -> str:
    """``text`` as inert Markdown inline text on one line (table-cell safe); control and
    bidi characters become visible escapes first (``safe_text.visible``)."""
    from cardaudit.safe_text import visible

    value = visible(str(text))
    value = _AUTOLINK.sub(lambda m: m.group(1)[0] + _JOINER + m.group(1)[1:], value)
    out = []
    for ch in value:
        if ch == "&":
            out.append("&amp;")
        elif ch == "<":
            out.append("&lt;")
        elif ch == ">":
            out.append("&gt;")
        elif ch in "\r\n":
            out.append(" ")
        elif ch in "@#":
            out.append(("\\" if ch == "#" else "") + ch + _JOINER)
        elif ch in _MARKDOWN:
            out.append("\\" + ch)
        elif unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") and ch != _JOINER:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)
