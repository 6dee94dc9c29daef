"""An SVG status badge ("model audit | passing"), drawn offline in the shields.io flat style."""

from __future__ import annotations

from xml.sax.saxutils import escape

from cardaudit.model import Report
from cardaudit.reporters.common import verdict

LABEL = "model audit"
#: shields.io's named colours, so the SVG and the endpoint JSON look the same.
HEX = {
    "brightgreen": "#4c1",
    "green": "#97ca00",
    "yellow": "#dfb317",
    "orange": "#fe7d37",
    "red": "#e05d44",
    "lightgrey": "#9f9f9f",
}
#: Approximate advance widths of Verdana 11px (the shields.io font), in px per character.
_NARROW, _WIDE, _DEFAULT = 4.0, 9.5, 7.0


def text_width(text: str) -> int:
    """Width of ``text`` in Verdana 11px, estimated per character class."""
    width = 0.0
    for ch in text:
        if ch in "iljtf.,:;|!' ()[]1":
            width += _NARROW
        elif ch in "mwMW@%":
            width += _WIDE
        else:
            width += _DEFAULT
    return round(width)


def badge_svg(label: str, message: str, colour: str) -> str:
    """A flat two-part badge with an accessible title."""
    fill = HEX.get(colour, colour)
    left, right = text_width(label) + 10, text_width(message) + 10
    total = left + right
    title = escape(f"{label}: {message}")
    label_x, message_x = left * 5, (left + right / 2) * 10
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="20" '
        f'role="img" aria-label="{title}">'
        f"<title>{title}</title>"
        '<linearGradient id="s" x2="0" y2="100%">'
        '<stop offset="0" stop-color="#bbb" stop-opacity=".1"/>'
        '<stop offset="1" stop-opacity=".1"/></linearGradient>'
        f'<clipPath id="r"><rect width="{total}" height="20" rx="3" fill="#fff"/></clipPath>'
        '<g clip-path="url(#r)">'
        f'<rect width="{left}" height="20" fill="#555"/>'
        f'<rect x="{left}" width="{right}" height="20" fill="{fill}"/>'
        f'<rect width="{total}" height="20" fill="url(#s)"/></g>'
        '<g fill="#fff" text-anchor="middle" '
        'font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="110" '
        'text-rendering="geometricPrecision">'
        f'<text x="{label_x:.0f}" y="150" fill="#010101" fill-opacity=".3" '
        f'transform="scale(.1)">{escape(label)}</text>'
        f'<text x="{label_x:.0f}" y="140" transform="scale(.1)">{escape(label)}</text>'
        f'<text x="{message_x:.0f}" y="150" fill="#010101" fill-opacity=".3" '
        f'transform="scale(.1)">{escape(message)}</text>'
        f'<text x="{message_x:.0f}" y="140" transform="scale(.1)">{escape(message)}</text>'
        "</g></svg>\n"
    )


def render(report: Report, *, fail_on: str = "error", **_options: object) -> str:
    outcome = verdict(report, fail_on)
    return badge_svg(LABEL, outcome.message, outcome.colour)
