"""The layers' import direction (docs/architecture.md): sources/ does all I/O on audited
repos and may import extract/; extract/ is pure and never imports sources/ — neither at
module level nor inside a function (a lazy import is still a dependency)."""

from __future__ import annotations

import ast
from pathlib import Path

import cardaudit

PACKAGE = Path(cardaudit.__file__).parent


def _imported_modules(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import statement in ``path`` (a module of the
    ``cardaudit`` package whose folder is ``root``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = ".".join(("cardaudit", *path.relative_to(root).parent.parts))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def _imports_of(module: str, folder: Path, root: Path = PACKAGE) -> list[str]:
    """Every import of ``module`` (or a submodule) by a file under ``folder``."""
    return sorted(
        f"{path.relative_to(root)}:{line} imports {name}"
        for path in sorted(folder.rglob("*.py"))
        for line, name in _imported_modules(path, root)
        if name == module or name.startswith(module + ".")
    )


def test_extract_never_imports_sources() -> None:
    assert _imports_of("cardaudit.sources", PACKAGE / "extract") == []


def test_the_scan_sees_lazy_and_relative_imports(tmp_path: Path) -> None:
    """The test above can fail: an import inside a function and a relative one count."""
    root = tmp_path / "cardaudit"
    (root / "extract").mkdir(parents=True)
    (root / "extract" / "probe.py").write_text(
        "import json\n"
        "def f():\n    from cardaudit.sources.local import decode_text\n"
        "from ..sources import hub\n"
        "from . import figures\n",
        encoding="utf-8",
    )
    assert _imports_of("cardaudit.sources", root / "extract", root) == [
        "extract/probe.py:3 imports cardaudit.sources.local",
        "extract/probe.py:3 imports cardaudit.sources.local.decode_text",
        "extract/probe.py:4 imports cardaudit.sources",
        "extract/probe.py:4 imports cardaudit.sources.hub",
    ]
