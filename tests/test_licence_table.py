"""The licence table: every Hub id, valid SPDX ids, complete structure."""

from __future__ import annotations

from license_expression import get_spdx_licensing

from cardaudit.extract.licence_table import licence_table, lookup

FAMILIES = {
    "permissive",
    "weak-copyleft",
    "strong-copyleft",
    "non-commercial",
    "use-restricted",
    "custom",
    "unknown",
}
DUTIES = {
    "ship_text",
    "carry_notice",
    "state_changes",
    "attribution_phrase",
    "name_prefix",
    "pass_use_restrictions",
    "keep_attribution",
    "link_licence",
    "use_policy",
    "notice_text",
    "no_adaptations",
}
HUB_IDS = [
    "apache-2.0",
    "mit",
    "openrail",
    "bigscience-openrail-m",
    "creativeml-openrail-m",
    "bigscience-bloom-rail-1.0",
    "bigcode-openrail-m",
    "afl-3.0",
    "artistic-2.0",
    "bsl-1.0",
    "bsd",
    "bsd-2-clause",
    "bsd-3-clause",
    "bsd-3-clause-clear",
    "c-uda",
    "cc",
    "cc0-1.0",
    "cc-by-2.0",
    "cc-by-2.5",
    "cc-by-3.0",
    "cc-by-4.0",
    "cc-by-sa-3.0",
    "cc-by-sa-4.0",
    "cc-by-nc-2.0",
    "cc-by-nc-3.0",
    "cc-by-nc-4.0",
    "cc-by-nd-4.0",
    "cc-by-nc-nd-3.0",
    "cc-by-nc-nd-4.0",
    "cc-by-nc-sa-2.0",
    "cc-by-nc-sa-3.0",
    "cc-by-nc-sa-4.0",
    "cdla-sharing-1.0",
    "cdla-permissive-1.0",
    "cdla-permissive-2.0",
    "wtfpl",
    "ecl-2.0",
    "epl-1.0",
    "epl-2.0",
    "etalab-2.0",
    "eupl-1.1",
    "eupl-1.2",
    "agpl-3.0",
    "gfdl",
    "gpl",
    "gpl-2.0",
    "gpl-3.0",
    "lgpl",
    "lgpl-2.1",
    "lgpl-3.0",
    "isc",
    "h-research",
    "intel-research",
    "lppl-1.3c",
    "ms-pl",
    "apple-ascl",
    "apple-amlr",
    "mpl-2.0",
    "odc-by",
    "odbl",
    "openrail++",
    "osl-3.0",
    "postgresql",
    "ofl-1.1",
    "ncsa",
    "unlicense",
    "zlib",
    "pddl",
    "lgpl-lr",
    "deepfloyd-if-license",
    "fair-noncommercial-research-license",
    "llama2",
    "llama3",
    "llama3.1",
    "llama3.2",
    "llama3.3",
    "llama4",
    "gemma",
    "other",
    "unknown",
]


def test_every_hub_id_is_in_the_table() -> None:
    table = licence_table()
    assert sorted(set(HUB_IDS) - set(table)) == []
    assert {k for k, v in table.items() if v.hub} == set(HUB_IDS)


def test_spdx_ids_are_valid() -> None:
    licensing = get_spdx_licensing()
    for hub_id, info in licence_table().items():
        if info.spdx is None:
            assert hub_id in ("other", "unknown")
            continue
        if info.spdx.startswith("LicenseRef-"):
            assert licensing.parse(info.spdx, validate=False) is not None
            assert all(c.isalnum() or c in ".-" for c in info.spdx), info.spdx
            continue
        licensing.parse(info.spdx, validate=True, strict=True)


def test_structure_is_complete() -> None:
    table = licence_table()
    for hub_id, info in table.items():
        assert info.family in FAMILIES, hub_id
        assert set(info.duties) <= DUTIES, hub_id
        for target in info.derivatives:
            assert target == "*" or target in table, (hub_id, target)
        assert info.name, hub_id
    assert table["llama3.1"].duty("name_prefix") == "Llama"
    assert table["llama3.1"].duty("attribution_phrase") == "Built with Llama"
    assert not table["llama3.1"].allows_derivative("mit")
    assert not table["cc-by-nc-4.0"].allows_derivative("apache-2.0")
    assert not table["creativeml-openrail-m"].allows_derivative("apache-2.0")
    assert table["apache-2.0"].allows_derivative("mit")


def test_lookup_by_hub_or_spdx_id() -> None:
    assert lookup("Apache-2.0").hub_id == "apache-2.0"
    assert lookup("GPL-3.0-only").hub_id == "gpl-3.0"
    assert lookup("LicenseRef-llama3.1").hub_id == "llama3.1"
