"""Licence identification on texts built in the test (the engines, not a corpus)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from cardaudit.extract import licence_id
from cardaudit.extract.licence_id import identify_text

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src" / "cardaudit" / "data" / "model_licences"
APACHE = (ROOT / "fixtures" / "notice-dropped" / "model" / "LICENSE").read_text()
MIT = (ROOT / "fixtures" / "clean-llama" / "code" / "LICENSE").read_text()


def test_full_apache_is_apache() -> None:
    found = identify_text(APACHE)
    assert (found.licence, found.complete, found.also) == ("Apache-2.0", True, ())
    assert found.confidence >= 0.99


def test_apache_without_appendix_followed_by_mit_notice_is_apache_also_mit() -> None:
    terms = APACHE.split("END OF TERMS AND CONDITIONS")[0] + "END OF TERMS AND CONDITIONS\n"
    found = identify_text(terms + "\n" + "=" * 60 + "\nTHIRD-PARTY NOTICES\n\n" + MIT)
    assert found.licence == "Apache-2.0"
    assert found.also == ("MIT",)


def test_model_licences_come_from_the_bundled_store() -> None:
    for name in ("llama2", "llama3.1", "llama4", "gemma", "openrail++"):
        found = identify_text((DATA / f"{name}.txt").read_text())
        assert found.licence == name, name
        assert found.complete


def test_one_sentence_llama_notice_is_llama_but_not_a_full_copy() -> None:
    found = identify_text(
        "Llama 2 is licensed under the LLAMA 2 Community License, Copyright (c) Meta "
        "Platforms, Inc. All Rights Reserved.\n"
    )
    assert found.licence == "llama2"
    assert not found.complete


def test_url_only_and_empty_files() -> None:
    link = identify_text("https://www.apache.org/licenses/LICENSE-2.0\n")
    assert (link.licence, link.link) == (None, "https://www.apache.org/licenses/LICENSE-2.0")
    empty = identify_text("  \n")
    assert empty.licence is None and empty.note == "the file is empty"


def test_prose_is_not_a_licence() -> None:
    found = identify_text("This model card describes a small sentiment classifier.\n" * 3)
    assert found.licence is None


def test_odd_input_never_raises() -> None:
    for text in ("\x00\x01\x02 binary \xff" * 50, "x" * 200_000, "Copyright (c) 2024\n"):
        found = identify_text(text)
        assert found.licence is None or isinstance(found.licence, str)


def test_bundled_texts_match_their_recorded_provenance() -> None:
    import hashlib

    import yaml

    index = yaml.safe_load((DATA / "index.yaml").read_text())
    listed = {entry["file"] for entry in index["texts"]}
    assert listed == {p.name for p in DATA.glob("*.txt")}
    for entry in index["texts"]:
        digest = hashlib.sha256((DATA / entry["file"]).read_bytes()).hexdigest()
        assert digest == entry["sha256"], entry["file"]
        assert entry["source"]


def test_threads_identifying_at_once_share_one_store_and_leave_stdio_alone(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """`track run` identifies licences in several threads: the model store is built once,
    every thread gets a working answer, and stdout and stderr are left where they were."""
    licence_id._build_model_matcher.cache_clear()
    streams = (sys.stdout, sys.stderr)
    llama = (DATA / "llama2.txt").read_text()
    start = threading.Barrier(4)
    matchers, found = [], []

    def identify() -> None:
        start.wait()
        matchers.append(licence_id._model_matcher()[0])
        found.append(identify_text(llama).licence)

    threads = [threading.Thread(target=identify) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (sys.stdout, sys.stderr) == streams
    assert len({id(matcher) for matcher in matchers}) == 1
    assert found == ["llama2"] * 4
    assert capfd.readouterr() == ("", "")
