"""The review reports (HTML for legal review, Markdown for PR comments): reading order,
folded findings, readable facts, not_checked rows, obligations, and escaping of card text."""

from __future__ import annotations

import dataclasses
import re
from html.parser import HTMLParser

import pytest
from markdown_it import MarkdownIt

from cardaudit.model import CheckRun, Finding, Location, Report, Target
from cardaudit.reporters import render
from scenarios import scenario_report
from test_reporters import full_facts, with_findings

HOSTILE = (
    "![pixel](https://evil.example/p.png) <img src=x onerror=alert(1)> "
    "[click](https://evil.example) @octocat #12 <details><summary>x</summary>hidden</details> "
    "www.evil.example https://evil.example/a `code` | cell *em* $math$ 🚀\n## heading"
)


class Outline(HTMLParser):
    """Section ids and headings of the page, in document order."""

    def __init__(self) -> None:
        super().__init__()
        self.items: list[str] = []
        self._heading: str | None = None

    def handle_starttag(self, tag: str, attrs) -> None:  # type: ignore[no-untyped-def]
        attributes = dict(attrs)
        if tag in ("section", "header") and attributes.get("id"):
            self.items.append(f"#{attributes['id']}")
        if tag in ("h2", "h3"):
            self._heading = ""

    def handle_data(self, data: str) -> None:
        if self._heading is not None:
            self._heading += data

    def handle_endtag(self, tag: str) -> None:
        if tag in ("h2", "h3") and self._heading is not None:
            self.items.append(self._heading.strip())
            self._heading = None


def outline(page: str) -> list[str]:
    parser = Outline()
    parser.feed(page)
    return parser.items


def duplicated(report: Report) -> Report:
    """Two findings that differ only by place, plus one of another family."""
    findings = (
        Finding("PRM001", "warning", "SFT code not delivered", Location("README.md", 3)),
        Finding("PRM001", "warning", "SFT code not delivered", Location("README.md", 9)),
        Finding("LIC002", "error", "licence key is not SPDX", Location("README.md", 2)),
    )
    return dataclasses.replace(report, findings=findings)


def hub_report(report: Report) -> Report:
    target = Target(kind="hub", id="org/model", path=None, revision="a" * 40)
    return dataclasses.replace(report, target=target)


@pytest.fixture(scope="module")
def clean() -> Report:
    return scenario_report("clean-card")


def test_html_opens_with_the_verdict_then_licence_then_findings_by_family(clean: Report):
    page = render(duplicated(full_facts(clean)), "html")
    order = outline(page)
    assert order[:4] == [
        "#verdict",
        "#licence",
        "Licence and what adopting this model obliges you to do",
        "#findings",
    ]
    findings = order[order.index("#findings") :]
    assert findings[1:3] == ["Findings", "Licence (1 error)"]
    assert findings[3] == "Promises (1 warning)"  # LIC before PRM, whatever the severity
    facts = order[order.index("#facts") :]
    assert facts[1:5] == ["Lineage", "Parameters and memory", "Promises", "Claims"]
    assert order[-2:] == ["#rules", "Rules run"]
    # duplicates folded into one item listing both places
    assert page.count("SFT code not delivered") == 1
    assert "Found in 2 places" in page and "README.md:3" in page and "README.md:9" in page
    verdict = page.index('class="verdict')
    assert verdict < page.index('id="licence"') < page.index('id="findings"')


def test_html_facts_are_readable_rows_not_dumps(clean: Report):
    page = render(full_facts(clean), "html")
    assert "7,241,732,096" in page and "GiB" in page
    assert "{" not in re.sub(r"<style>.*?</style>", "", page, flags=re.S)  # no dict dumps
    # promises say status and first-seen in words, oldest first
    assert "not delivered" in page and "first promised 1 February 2025" in page
    assert "delivered" in page and "first promised 20 November 2024" in page
    assert page.index("20 November 2024") < page.index("1 February 2025")


def test_html_is_self_contained_and_prints(clean: Report):
    page = render(full_facts(with_findings(clean, "error")), "html")
    assert not re.search(r"<(script|link|img|iframe)\b", page, re.IGNORECASE)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page, re.IGNORECASE)
    assert "url(http" not in page and "@import" not in page
    assert "@media print" in page and "@page" in page and "break-inside: avoid" in page


def test_obligations_come_first_when_the_audit_lists_them(clean: Report):
    obligations = [
        {
            "duty": "Keep the NOTICE file",
            "detail": "ship NOTICE with every copy",
            "source": "Apache-2.0 §4(d)",
            "binds": "redistributor",
        },
        {
            "duty": "Follow the acceptable-use policy",
            "detail": "no <b>illegal</b> use",
            "source": "AUP",
            "binds": "user",
        },
    ]
    licence = dataclasses.replace(clean.facts.license, obligations=tuple(obligations))
    report = dataclasses.replace(clean, facts=dataclasses.replace(clean.facts, license=licence))
    page = render(report, "html")
    licence = page[page.index('id="licence"') : page.index('id="findings"')]
    assert licence.index("Keep the NOTICE file") < licence.index("model card (license)")
    assert "anyone who shares the model or a derivative" in licence
    assert "anyone who uses the model" in licence and "&lt;b&gt;illegal" in licence
    markdown = render(report, "markdown")
    assert markdown.index("Keep the NOTICE file") < markdown.index("### Findings")
    assert "did not list the duties" not in markdown
    unlisted = dataclasses.replace(clean.facts.license, obligations=())
    bare = dataclasses.replace(clean, facts=dataclasses.replace(clean.facts, license=unlisted))
    assert "did not list the duties" in render(bare, "markdown")


def test_not_checked_outcomes_are_shown(clean: Report):
    checks = (*clean.checks, CheckRun("LIC004", "not_checked", "the LICENSE file is binary"))  # type: ignore[arg-type]
    report = dataclasses.replace(clean, checks=checks)
    page = render(report, "html")
    assert 'id="not-checked"' in page and "the LICENSE file is binary" in page
    markdown = render(report, "markdown")
    assert "### Not checked" in markdown and "the LICENSE file is binary" in markdown


def test_markdown_has_the_same_order_and_no_dumps(clean: Report):
    markdown = render(duplicated(full_facts(clean)), "markdown")
    headings = [line for line in markdown.splitlines() if line.startswith("#")]
    assert headings[:5] == [
        "## cardaudit: failing",
        "### Licence and what adopting this model obliges you to do",
        "### Findings",
        "#### Licence (1 error)",
        "#### Promises (1 warning)",
    ]
    assert headings[5:] == [
        "### Facts",
        "#### Lineage",
        "#### Parameters and memory",
        "#### Promises",
        "#### Claims",
    ]
    assert markdown.count("SFT code not delivered") == 1 and "found in 2 places" in markdown
    assert "{" not in markdown and "first promised 1 February 2025" in markdown


def _rendered(markdown: str) -> str:
    return MarkdownIt("commonmark").enable("table").enable("strikethrough").render(markdown)


@pytest.mark.parametrize("field", ["message", "evidence", "remediation", "path", "target"])
def test_markdown_neutralises_card_text_in_every_field(clean: Report, field: str):
    finding = Finding("LIC001", "error", "m", Location("README.md", 4), evidence="e")
    if field == "path":
        finding = dataclasses.replace(finding, location=Location(HOSTILE, 4))
    elif field != "target":
        finding = dataclasses.replace(finding, **{field: HOSTILE})
    report = dataclasses.replace(clean, findings=(finding,))
    if field == "target":
        report = dataclasses.replace(report, target=dataclasses.replace(report.target, id=HOSTILE))
    markdown = render(report, "markdown")
    html = _rendered(markdown)
    assert "<img" not in html and "<details><summary>x" not in html
    assert not re.search(r'<a href="https?://evil', html)
    assert "evil.example" in html  # the text is still there, as text
    assert "@octocat" not in markdown and "@\u2060octocat" in markdown  # no mention
    assert "#12" not in markdown  # no cross-reference
    assert "https://evil" not in markdown and "www.evil" not in markdown  # no autolink
    assert "$math$" not in markdown  # no GitHub math
    assert "<h2>heading" not in html


def test_markdown_links_only_to_the_audited_repos_own_files(clean: Report):
    report = hub_report(duplicated(full_facts(clean)))
    markdown = render(report, "markdown")
    links = re.findall(r"\]\((\S+?)\)", markdown)
    assert links and all(
        link.startswith(f"https://huggingface.co/org/model/blob/{'a' * 40}/README.md#L")
        for link in links
    )
    page = render(report, "html")
    hrefs = re.findall(r'href="([^"]+)"', page)
    assert hrefs and all(h.startswith("https://huggingface.co/org/model/blob/") for h in hrefs)
    local = render(duplicated(full_facts(clean)), "markdown")
    assert "](" not in local  # a local folder: no links at all


@pytest.mark.parametrize("field", ["message", "evidence", "remediation", "path", "target"])
def test_html_escapes_card_text_in_every_field(clean: Report, field: str):
    finding = Finding("LIC001", "error", "m", Location("README.md", 4), evidence="e")
    if field == "path":
        finding = dataclasses.replace(finding, location=Location(HOSTILE, 4))
    elif field != "target":
        finding = dataclasses.replace(finding, **{field: HOSTILE})
    report = dataclasses.replace(clean, findings=(finding,))
    if field == "target":
        report = dataclasses.replace(report, target=dataclasses.replace(report.target, id=HOSTILE))
    page = render(report, "html")
    assert "<img" not in page and "<details>" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page


def test_obligations_as_dataclasses_render_too(clean: Report):
    @dataclasses.dataclass(frozen=True, slots=True)
    class Obligation:
        duty: str
        detail: str
        source: str
        binds: str

    licence = dataclasses.replace(
        clean.facts.license, obligations=(Obligation("Give credit", "d", "s", "user"),)
    )
    report = dataclasses.replace(clean, facts=dataclasses.replace(clean.facts, license=licence))
    page = render(report, "html")
    assert "Give credit" in page and "anyone who uses the model" in page


def test_card_text_in_facts_is_escaped_in_both_reports(clean: Report):
    from cardaudit.model import BaseModelRef, Claim, Promise

    facts = dataclasses.replace(
        clean.facts,
        license=dataclasses.replace(clean.facts.license, declared=HOSTILE, declared_name=HOSTILE),
        base_models=(BaseModelRef(HOSTILE, HOSTILE, "card"),),
        promises=(Promise(HOSTILE, "other", HOSTILE, 3, "missing", item=HOSTILE),),
        claims=(Claim("benchmark", HOSTILE, "README.md", 5, missing=(HOSTILE,)),),
    )
    report = dataclasses.replace(clean, facts=facts)
    page = render(report, "html")
    assert "<img" not in page and "<details>" not in page and "onerror=alert(1)>" not in page
    html = _rendered(render(report, "markdown"))
    assert "<img" not in html and "<details><summary>x" not in html
    assert not re.search(r'<a href="https?://evil', html)
