"""Whether a claim discloses its method: the checklists of ``rules/tables/claims.yaml``
looked for near the claim, in its section and in the document's evaluation sections.

A pointer to the method (a link to evaluation details, a named place to read them) discloses
the items the table lists under ``pointer.discloses``; the benchmark version must still be
stated. Everything shared by the claims of a document is computed once per document.
"""

from __future__ import annotations

from collections.abc import Callable

from cardaudit.extract.claims import IMAGE, Benchmark, ClaimTable, Found, Item, clean
from cardaudit.extract.literal_filter import lowered, search
from cardaudit.extract.markdown_prose import Document


class LineTexts(dict[int, str]):
    """Line number → ``transform(line text)``, computed when first asked for: a claim reads
    only the lines around it and the evaluation sections, not every line of a long card."""

    def __init__(self, document: Document, transform: Callable[[str], str]) -> None:
        super().__init__()
        self.document = document
        self.transform = transform

    def __missing__(self, number: int) -> str:
        line = self.document.line(number)
        if line is None:
            raise KeyError(number)
        value = self[number] = self.transform(line.text)
        return value


def _without_images(text: str) -> str:
    return IMAGE.sub(" ", text)


class Scope:
    """Where a document's claims may be disclosed, prepared once per document.

    The evaluation sections are shared by every claim of the document, so their text and the
    checklist items it discloses are computed once; each claim adds only its own section and
    the lines around it.
    """

    def __init__(self, document: Document, table: ClaimTable) -> None:
        self.document = document
        self.table = table
        self.cleaned = LineTexts(document, clean)
        # raw lines keep their links (pointers); images are not pointers
        self.raw = LineTexts(document, _without_images)
        in_evaluation: dict[tuple[str, ...], bool] = {}
        for line in document.lines:
            if line.section not in in_evaluation:
                in_evaluation[line.section] = any(
                    table.sections.search(name) for name in line.section
                )
        evaluation = [line for line in document.lines if in_evaluation[line.section]]
        self.eval_numbers = {line.number for line in evaluation}
        self.eval_text = "\n".join(self.cleaned[line.number] for line in evaluation)
        self.by_section: dict[int, list[int]] = {}
        for line in document.lines:
            self.by_section.setdefault(line.section_start, []).append(line.number)
        self.eval_pointer = bool(
            table.pointer.search("\n".join(self.raw[line.number] for line in evaluation))
        )
        self.locals: dict[tuple[int | None, tuple[int, ...]], Local] = {}
        self.sections: dict[int | None, frozenset[int]] = {}
        self.versioned: dict[int, bool] = {}  # benchmark → versioned in the evaluation sections
        self.eval_disclosed = {
            item.id
            for items in table.checklist.values()
            for item in items
            if item.patterns and any(regex.search(self.eval_text) for regex in item.patterns)
        }

    def local(self, start: int, end: int) -> Local:
        """The :class:`Local` text of a claim on lines ``start`` to ``end``: the lines near
        it and in its own section, outside the evaluation sections. Claims of one section
        share it, and finding it costs the claim's own lines, not its section's: a card of
        one long section with many claims is not claims x lines."""
        anchor = self.document.line(start)
        section = anchor.section_start if anchor is not None else None
        members = self._section_lines(section)
        extra = tuple(
            n
            for n in range(start - self.table.window, end + self.table.window + 1)
            if n not in members and n not in self.eval_numbers and self.document.line(n)
        )
        key = (section, extra)
        found = self.locals.get(key)
        if found is None:
            numbers = tuple(sorted(members.union(extra)))
            found = self.locals[key] = Local(self, numbers)
        return found

    def _section_lines(self, section: int | None) -> frozenset[int]:
        """The lines of a section outside the evaluation sections (once per section)."""
        found = self.sections.get(section)
        if found is None:
            lines = self.by_section.get(section, ()) if section is not None else ()
            found = frozenset(n for n in lines if n not in self.eval_numbers)
            self.sections[section] = found
        return found


class Local:
    """The lines around a claim (near it and in its section, outside the evaluation
    sections), shared by every claim with the same lines — the claims of one section
    mostly — so what they disclose is searched once, not once per claim."""

    def __init__(self, scope: Scope, numbers: tuple[int, ...]) -> None:
        self.scope = scope
        self.numbers = numbers
        self.text = "\n".join(scope.cleaned[n] for n in numbers)
        self.low = lowered(self.text)
        self._pointer: bool | None = None
        self._items: dict[int, bool] = {}

    @property
    def pointer(self) -> bool:
        """Whether the lines point to the method (links keep their targets here)."""
        if self._pointer is None:
            raw = "\n".join(self.scope.raw[n] for n in self.numbers)
            self._pointer = bool(search(self.scope.table.pointer, raw))
        return self._pointer

    def discloses(self, item: Item) -> bool:
        found = self._items.get(id(item))
        if found is None:
            found = any(search(regex, self.text, self.low) for regex in item.patterns)
            self._items[id(item)] = found
        return found


def undisclosed(found: Found, scope: Scope) -> list[str]:
    """The checklist items a claim and its surroundings do not disclose."""
    table = scope.table
    local = scope.local(found.line, found.end)
    pointer = scope.eval_pointer or local.pointer
    if found.kind == "superiority":
        return [] if pointer else ["a number or the method behind it"]
    kind = "speed" if found.kind == "speed" else "benchmark"
    agentic = any(bench.agentic for bench, _ in found.benches)
    missing = (
        ["visible numbers (shown only in an image)"] if found.kind == "benchmark_image" else []
    )
    for item in table.checklist[kind]:
        if pointer and item.id in table.pointer_discloses:
            continue
        if item.agentic_only and not agentic:
            continue
        if item.kind == "versions":
            unversioned = _unversioned(found, scope, local)
            if unversioned:
                missing.append(f"{item.label} ({', '.join(unversioned)})")
        elif item.kind == "baseline":
            if table.relative.search(found.text) and not _baseline_named(found.text, table):
                missing.append(item.label)
        elif item.id in scope.eval_disclosed:
            continue
        elif not local.discloses(item):
            missing.append(item.label)
    return missing


def _unversioned(found: Found, scope: Scope, around: Local) -> list[str]:
    names: list[str] = []
    local: list[str] | None = None
    for bench, text in found.benches:
        if bench.versions is None or _versioned(bench, text):
            continue
        if local is None:
            local = [scope.cleaned[n] for n in around.numbers]
        if any(_versioned(bench, line) for line in local if bench.name.search(line)):
            continue
        if _versioned_in_evaluation(bench, scope):
            continue
        name = clean(bench.name.search(text).group(0))
        if name not in names:
            names.append(name)
    return names


def _versioned_in_evaluation(bench: Benchmark, scope: Scope) -> bool:
    """Whether the evaluation sections name ``bench`` with its version (once per document)."""
    key = id(bench)
    if key not in scope.versioned:
        scope.versioned[key] = any(
            _versioned(bench, scope.cleaned[n])
            for n in sorted(scope.eval_numbers)
            if bench.name.search(scope.cleaned[n])
        )
    return scope.versioned[key]


def _versioned(bench: Benchmark, text: str) -> bool:
    """Whether a mention of ``bench`` in ``text`` carries its version or track
    (in the name itself, "Aider-Polyglot", or right after it, "SWE-bench Verified")."""
    assert bench.versions is not None
    for match in bench.name.finditer(text):
        if bench.versions.search(text[match.start() : match.end() + 30]):
            return True
    return False


def _baseline_named(text: str, table: ClaimTable) -> bool:
    match = table.baseline.search(text)
    return bool(match) and not table.vague_baselines.search(match.group("target"))
