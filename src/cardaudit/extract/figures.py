"""Figures stated in prose: parameter counts, memory, GPUs, precision and context length.

The kinds are read by :mod:`.figure_sizes` (parameters, memory), :mod:`.figure_gpus` and
:mod:`.figure_settings` (context length, precision) from the text :mod:`.figure_text`
prepares. Each figure keeps the file, repo and line it was read from. Fenced code blocks
and the YAML front matter are skipped (commands and metadata are not claims).
"""

from __future__ import annotations

from dataclasses import replace

from cardaudit.extract import markdown_blocks
from cardaudit.extract.figure_gpus import gpu_figures, gpu_matches, gpu_table
from cardaudit.extract.figure_model import Figure
from cardaudit.extract.figure_settings import context_figures, dtype_figures
from cardaudit.extract.figure_sizes import count_figures, memory_figures
from cardaudit.extract.figure_text import prose
from cardaudit.model import Evidence, TextFile

__all__ = [
    "Figure",
    "figures_in",
    "gpu_matches",
    "gpu_table",
    "model_names",
    "prose",
    "stated_figures",
]

#: Folder names that say nothing about which model a line is about.
GENERIC_NAMES = frozenset({"model", "models", "base", "code", "repo", "weights", "checkpoint"})


def figures_in(file: TextFile, repo: str = "model") -> list[Figure]:
    """Every figure stated in ``file``."""
    body = prose(file.text)
    gpus = gpu_matches(body)
    found: list[Figure] = list(count_figures(file, body, repo))
    found += memory_figures(file, body, repo, gpus)
    found += gpu_figures(file, body, repo, gpus)
    found += context_figures(file, body, repo)
    found += dtype_figures(file, body, repo)
    from cardaudit.extract.figures_cjk import new_figures

    found += new_figures(file, body, repo, found)
    return sorted(found, key=lambda f: (f.repo, f.path, f.line, f.kind))


def stated_figures(evidence: Evidence) -> list[Figure]:
    """Figures in the model card and in the code repo's README, each marked with whether it
    is about the audited model: a figure of a block, clause or table column about another
    model (extract/figure_subject.py) is not, nor is a code-README figure whose line does
    not name the model (a family README describes every size with the family's name)."""
    from cardaudit.extract.figure_subject import figure_subjects
    from cardaudit.extract.reading import read_evidence

    readings = {(r.document.repo, r.document.path): r for r, _ in read_evidence(evidence)}
    found: list[Figure] = []
    if evidence.card is not None and not evidence.card.error:
        reading = readings.get(("model", evidence.card.path))
        figures = figures_in(evidence.card.file)
        if reading is not None:
            for figure, subject in zip(figures, figure_subjects(reading, figures), strict=True):
                found.append(figure if subject.charged else replace(figure, about_model=False))
        else:
            found += figures
    if evidence.code is not None:
        names = model_names(evidence)
        for path in evidence.code.find("README.md", "README.rst", "README.txt", "README"):
            text = evidence.code.text(path)
            if text is None:
                continue
            lines = text.lines
            reading = readings.get(("code", path))
            for figure in figures_in(text, "code"):
                line = lines[figure.line - 1].lower() if figure.line <= len(lines) else ""
                other = reading is not None and not reading.at(figure.line).charged
                if other or not any(name in line for name in names):
                    figure = replace(figure, about_model=False)
                found.append(figure)
    return found


def model_names(evidence: Evidence) -> set[str]:
    """Lower-case names the model goes by: repo id (without owner) and the card's title."""
    names = {evidence.target.id.rsplit("/", 1)[-1].lower()}
    if evidence.card is not None:
        title = markdown_blocks.card_title(evidence.card)
        if title:
            names.add(title.lower())
    return {name for name in names if len(name) >= 3 and name not in GENERIC_NAMES}
