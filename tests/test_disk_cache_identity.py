"""Cache keys name an installed package's build without importing it."""

from __future__ import annotations

import os
import sys

from cardaudit.disk_cache import installed_identity


def test_the_identity_follows_the_installed_files(tmp_path, monkeypatch):
    package = tmp_path / "fake_engine_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("raise RuntimeError('must not be imported')\n")
    (package / "engine.so").write_bytes(b"v1")
    monkeypatch.syspath_prepend(str(tmp_path))
    first = installed_identity("fake_engine_pkg")
    assert "fake_engine_pkg" not in sys.modules
    assert first == installed_identity("fake_engine_pkg")
    (package / "engine.so").write_bytes(b"version 2")  # an upgrade: another size
    second = installed_identity("fake_engine_pkg")
    assert second != first
    os.utime(package / "engine.so", ns=(1, 1))  # a reinstall: another time
    assert installed_identity("fake_engine_pkg") not in (first, second)


def test_a_missing_package_is_none():
    assert installed_identity("no_such_package_for_cardaudit") == "none"
    assert installed_identity("askalono") != "none"
