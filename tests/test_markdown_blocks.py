"""The shared Markdown structure: what is code, a heading, a table, a comment — and where."""

from __future__ import annotations

from cardaudit.extract import markdown_blocks as mb
from cardaudit.extract.figures import prose as figure_prose
from cardaudit.extract.lineage import _prose_lines, _yaml_blocks
from cardaudit.extract.markdown_prose import paragraphs, parse_document, tables
from cardaudit.sources.card import parse_card


def kinds(text: str, first_line: int = 1) -> dict[int, str]:
    shape = mb.text_structure(text, first_line)
    return {first_line + i: kind for i, kind in enumerate(shape.kinds)}


def test_backtick_and_tilde_fences_are_code_up_to_a_closing_fence_as_long() -> None:
    text = (
        "Intro.\n"  # 1
        "````markdown\n"  # 2
        "```python\n"  # 3 inside the 4-backtick fence, not a close
        "# not a heading\n"  # 4
        "```\n"  # 5
        "````\n"  # 6
        "~~~yaml\n"  # 7
        "merge_method: slerp\n"  # 8
        "~~~\n"  # 9
        "After.\n"  # 10
    )
    found = kinds(text)
    assert [found[n] for n in range(1, 11)] == (["paragraph"] + ["code"] * 8 + ["paragraph"])
    code = mb.text_structure(text).of_kind(mb.CODE)
    assert [(b.start, b.end, b.info, b.fenced) for b in code] == [
        (2, 6, "markdown", True),
        (7, 9, "yaml", True),
    ]
    assert code[1].content == "merge_method: slerp\n"
    assert mb.text_structure(text).headings == {}


def test_indented_code_but_not_indented_list_continuation() -> None:
    text = (
        "Text.\n"  # 1
        "\n"  # 2
        "    pip install thing\n"  # 3 indented code
        "\n"  # 4
        "- item\n"  # 5
        "  1. nested item\n"  # 6
        "\n"  # 7
        "     continued paragraph of the nested item\n"  # 8 list content, not code
    )
    found = kinds(text)
    assert found[3] == "code"
    assert found[5] == found[6] == found[8] == "paragraph"
    document = parse_document("README.md", text)
    assert [p.text for p in paragraphs(document)] == [
        "Text.",
        "- item",
        "1. nested item",
        "continued paragraph of the nested item",
    ]


def test_html_comments_are_not_prose_other_html_is() -> None:
    text = (
        "<!-- header start\n"  # 1
        "Coming soon: the 70B weights.\n"  # 2
        "-->\n"  # 3
        '<div align="center">\n'  # 4
        "<!-- inner -->\n"  # 5
        '<h2 id="x">Model <b>Summary</b></h2>\n'  # 6
        "</div>\n"  # 7 an HTML block runs to the next blank line
        "\n"  # 8
        "Prose <!-- inline comment --> stays.\n"  # 9
    )
    found = kinds(text)
    assert [found[n] for n in (1, 2, 3)] == ["comment"] * 3
    assert found[4] == "html" and found[5] == "comment" and found[7] == "html"
    assert found[6] == "heading"
    assert found[9] == "paragraph"
    heading = mb.text_structure(text).headings[6]
    assert (heading.level, heading.title) == (2, "Model Summary")
    document = parse_document("README.md", text)
    assert [line.number for line in document.lines if not line.prose] == [1, 2, 3, 5]
    assert document.line(7).section == ("Model Summary",)


def test_atx_and_setext_headings_give_levels_and_sections() -> None:
    text = (
        "Model Card\n"  # 1
        "==========\n"  # 2
        "\n"  # 3
        "Training\n"  # 4
        "--------\n"  # 5
        "Data.\n"  # 6
        "### Hardware ###\n"  # 7
        "GPUs.\n"  # 8
        "# Licence\n"  # 9
    )
    shape = mb.text_structure(text)
    assert {n: (b.level, b.title) for n, b in shape.headings.items()} == {
        1: (1, "Model Card"),
        4: (2, "Training"),
        7: (3, "Hardware"),
        9: (1, "Licence"),
    }
    document = parse_document("README.md", text)
    assert document.line(6).section == ("Model Card", "Training")
    assert document.line(6).section_start == 4
    assert document.line(8).section == ("Model Card", "Training", "Hardware")
    assert document.line(9).section == ("Licence",)
    assert [p.text for p in paragraphs(document)] == ["Data.", "GPUs."]


def test_table_rows_cells_header_and_alignment_row() -> None:
    text = (
        "| Benchmark | Score \\| σ |\n"  # 1
        "|:--|--:|\n"  # 2
        "| MMLU | 64.3 |\n"  # 3
        "| GSM8K |\n"  # 4 short row: padded as rendered
        "\n"  # 5
        "| not | a table |\n"  # 6 no alignment row: a paragraph
    )
    found = kinds(text)
    assert [found[n] for n in range(1, 7)] == [
        "table_row",
        "table_rule",
        "table_row",
        "table_row",
        "blank",
        "paragraph",
    ]
    (table,) = mb.text_structure(text).of_kind(mb.TABLE)
    assert (table.start, table.end) == (1, 4)
    assert table.header == ("Benchmark", "Score | σ")
    assert table.rows == (
        (1, ("Benchmark", "Score | σ")),
        (3, ("MMLU", "64.3")),
        (4, ("GSM8K", "")),
    )
    document = parse_document("README.md", text)
    assert [(t.start, t.end, t.rows[1]) for t in tables(document)] == [
        (1, 4, (3, ("MMLU", "64.3")))
    ]
    assert document.table_at(3) is tables(document)[0]


def test_line_numbers_after_front_matter() -> None:
    text = (
        "---\n"  # 1
        "license: mit\n"  # 2
        "base_model: org/base\n"  # 3
        "---\n"  # 4
        "# Model\n"  # 5
        "<!-- Fine-tuned from org/hidden -->\n"  # 6
        "Fine-tuned from org/base-7b on chat data.\n"  # 7
        "```yaml\n"  # 8
        "merge_method: slerp\n"  # 9
        "```\n"  # 10
        "| a | b |\n"  # 11
        "|---|---|\n"  # 12
        "| 1 | 2 |\n"  # 13
    )
    card = parse_card("README.md", text)
    assert card.body_start_line == 5
    document = parse_document("README.md", card.body, first_line=card.body_start_line)
    assert document.line(5).heading == "Model"
    assert [line.number for line in document.lines if not line.prose] == [6, 8, 9, 10]
    assert [(t.start, t.end, [n for n, _ in t.rows]) for t in tables(document)] == [
        (11, 13, [11, 13])
    ]
    assert [n for n, _ in _prose_lines(card)] == [5, 7, 11, 12, 13]
    assert list(_yaml_blocks(card)) == [(9, "merge_method: slerp\n")]
    blanked = figure_prose(text).split("\n")
    assert [i + 1 for i, line in enumerate(blanked) if line.strip()] == [5, 7, 11, 12, 13]


def test_card_title_is_the_first_level_one_heading_outside_code() -> None:
    text = (
        "---\nlicense: mit\n---\n"
        "```bash\n# download the weights\n```\n"
        "## Overview\n"
        "Falcon-Mini 7B\n"
        "==============\n"
        "# Later title\n"
    )
    card = parse_card("README.md", text)
    assert mb.card_title(card) == "Falcon-Mini 7B"
    assert mb.card_title(parse_card("README.md", "```\n# comment\n```\nNo heading.\n")) is None


def test_cjk_full_stops_end_sentences() -> None:
    from cardaudit.extract.markdown_prose import sentences

    assert sentences("得分74.2。本模型得分75.0！好吗？ Yes. Next one") == [
        (0, "得分74.2。"),
        (7, "本模型得分75.0！"),
        (17, "好吗？"),
        (21, "Yes."),
        (26, "Next one"),
    ]
