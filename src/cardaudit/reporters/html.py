"""One self-contained HTML file for legal review: no scripts, fonts or images from outside.

Reading order (reporters/review.py): the verdict; the licence and what adopting the model
obliges you to do; findings grouped by family, duplicates folded; checks that could not run;
lineage, parameters and memory, promises (status and first-seen in words), claims; what was
not read; the rules that ran. Rendered by Jinja2 with autoescaping (templates/), so no value
from the audited repos reaches the page unescaped; a print stylesheet keeps blocks whole so
"Print → Save as PDF" gives a clean document.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from cardaudit import __version__
from cardaudit.model import Report
from cardaudit.reporters.common import build_time
from cardaudit.reporters.review import build_review

TEMPLATES = Path(__file__).parent / "templates"


def _visible(value: Any) -> Any:
    """Every value the templates print, with control and bidi characters shown as escapes
    (a U+202E would display a finding's text in another order); autoescaping follows."""
    from markupsafe import Markup

    from cardaudit.safe_text import visible

    if value is None or isinstance(value, Markup):
        return value
    return visible(str(value))


@cache
def environment() -> Any:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    return Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(["html", "html.j2"], default=True),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        finalize=_visible,
    )


def render(
    report: Report, *, show_suppressed: bool = False, fail_on: str = "error", **_options: object
) -> str:
    from markupsafe import Markup

    target = report.target
    return (
        environment()
        .get_template("report.html.j2")
        .render(
            r=build_review(report, fail_on),
            path=target.path or target.id,
            show_suppressed=show_suppressed,
            css=Markup((TEMPLATES / "report.css").read_text(encoding="utf-8")),
            version=__version__,
            built=build_time().isoformat(),
        )
    )
