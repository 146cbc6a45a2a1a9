"""Finding the guides of the installed Xcodes for `ingest --xcode-docs`."""

from __future__ import annotations

import pytest

from chunkers.sources.discovery import SourceError
from chunkers.sources.published.apple_prose import is_xcode_guide
from chunkers.sources.xcode import GUIDES, xcode_guide_folders
from flows.ingest import main


def test_every_installed_xcodes_guides_are_found(tmp_path):
    for name in ("Xcode.app", "Xcode-beta.app"):
        (tmp_path / name / GUIDES).mkdir(parents=True)
    found = xcode_guide_folders(tmp_path)
    assert [p.relative_to(tmp_path).parts[0] for p in found] == ["Xcode-beta.app", "Xcode.app"]


def test_a_guide_in_an_installed_xcode_is_read_as_apples(tmp_path):
    guide = tmp_path / "Xcode.app" / GUIDES / "SwiftUI-New-Toolbar-Features.md"
    assert is_xcode_guide(guide, guide.parent)


def test_an_xcode_without_guides_is_no_source(tmp_path):
    (tmp_path / "Xcode.app" / "Contents").mkdir(parents=True)
    with pytest.raises(SourceError, match="no Xcode with its guides was found"):
        xcode_guide_folders(tmp_path)


def test_ingest_xcode_docs_without_an_xcode_exits_2_saying_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("chunkers.sources.xcode.APPLICATIONS", tmp_path)
    monkeypatch.setattr("chunkers.sources.xcode._selected_xcode", lambda: None)
    assert main(["--xcode-docs", "--store", str(tmp_path / "store")]) == 2
    assert "no Xcode with its guides was found" in capsys.readouterr().err
