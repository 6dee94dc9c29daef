"""The CycloneDX reporter writes, for every fixture, the document cyclonedx-python-lib
builds and serialises for the same BOM (``tests/cyclonedx_reference.py``)."""

from __future__ import annotations

import dataclasses

import pytest

import cyclonedx_reference
from cardaudit.reporters import render
from scenarios import scenario_names
from test_formats_golden import relative_report


@pytest.fixture
def reproducible(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")


@pytest.mark.parametrize("name", scenario_names())
def test_the_bom_is_the_librarys(name: str, reproducible: None) -> None:
    report = relative_report(name)
    assert render(report, "cyclonedx") == cyclonedx_reference.render(report)


def test_a_hub_model_with_a_revision_and_hostile_names(reproducible: None) -> None:
    """Hub purl and page, a commit revision, and names the library escapes or sorts."""
    report = relative_report("clover")
    target = dataclasses.replace(report.target, kind="hub", id="Org/Model-7B.v2", revision="ABC123")
    hub = dataclasses.replace(report, target=target)
    text = render(hub, "cyclonedx")
    assert text == cyclonedx_reference.render(hub)
    assert "pkg:huggingface/Org/Model-7B.v2@abc123" in text


def test_an_invalid_licence_link_fails_like_the_library(reproducible: None) -> None:
    report = relative_report("clean-llama")
    licence = dataclasses.replace(report.facts.license, declared_link="https://x.test/%zz")
    broken = dataclasses.replace(report, facts=dataclasses.replace(report.facts, license=licence))
    with pytest.raises(Exception, match="does not appear to be a valid URI") as ours:
        render(broken, "cyclonedx")
    with pytest.raises(Exception, match="does not appear to be a valid URI"):
        cyclonedx_reference.render(broken)
    assert isinstance(ours.value, ValueError)
