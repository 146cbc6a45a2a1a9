"""Which files of a repository are read, as what, and which are skipped and counted."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from chunkers.sources.discovery import discover
from chunkers.sources.file_types import CONFIG_MAX_BYTES, file_kind, header_language
from tests.support import paths

REPO = paths.FIXTURES / "polyglot" / "repo"


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("AuthSession.m", "objc"),
        ("Filters.mm", "objc"),
        ("Blur.metal", "metal"),
        ("refresh.ts", "typescript"),
        ("LoginForm.tsx", "tsx"),
        ("client.mjs", "javascript"),
        ("Avatar.jsx", "jsx"),
        ("build.gradle.kts", "kotlin"),
        ("lib.rs", "rust"),
        ("deploy.sh", "bash"),
        ("Podfile", "podfile"),
        ("Cartfile", "cartfile"),
        ("Fastfile", "ruby"),
        ("Release.xcconfig", "xcconfig"),
        ("Info.plist", "plist"),
        ("ci.yml", "yaml"),
        ("guide.rst", "markdown"),
        ("Package.swift", "swift"),
    ],
)
def test_files_are_read_as_their_extension_or_name_says(name, kind):
    assert file_kind(Path(name)) == kind


@pytest.mark.parametrize(
    "name",
    ["project.pbxproj", "package-lock.json", "Podfile.lock", "Cargo.lock", "app.min.js", "x.png"],
)
def test_lock_generated_and_unknown_files_are_not_read(name):
    assert file_kind(Path(name)) is None


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("#import <UIKit/UIKit.h>\n@interface A : NSObject\n@end\n", "objc"),
        ("typedef NS_ENUM(NSInteger, Mode) { ModeA };\n", "objc"),
        ("#pragma once\nnamespace app {\nclass A {};\n}\n", "cpp"),
        ("template <typename T>\nT twice(T x);\n", "cpp"),
        ("#ifndef A_H\n#define A_H\nint add(int a, int b);\n#endif\n", "c"),
    ],
)
def test_a_header_is_objective_c_cpp_or_c_by_its_content(text, language):
    assert header_language(text) == language


def test_a_directory_walk_counts_the_files_it_skips_by_type():
    skipped: Counter[str] = Counter()
    found = {s.path.relative_to(REPO).as_posix(): s.kind for s in discover([REPO], skipped)}
    assert skipped == {".pbxproj": 1, ".png": 1, "Podfile.lock": 1, "package-lock.json": 1}
    assert found["ios/AuthSession.h"] == "c"  # refined to objc when read
    assert found["Podfile"] == "podfile" and found["web/package.json"] == "json"


def test_a_data_file_over_the_size_cap_is_skipped_and_counted(tmp_path):
    (tmp_path / "settings.json").write_text('{"a": 1}\n', encoding="utf-8")
    (tmp_path / "dump.json").write_text("[" + "1," * CONFIG_MAX_BYTES + "1]", encoding="utf-8")
    skipped: Counter[str] = Counter()
    found = [s.path.name for s in discover([tmp_path], skipped)]
    assert found == ["settings.json"]
    assert skipped == {".json over the size cap": 1}
