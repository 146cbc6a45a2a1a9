"""Framework tags: imports, fields and prose, with common English words held to a stricter rule."""

from __future__ import annotations

import pytest

from chunkers.tagging.tags import document_tags, framework_mentions, piece_tags


def piece_frameworks(content: str = "", *, language: str = "swift", imports=()) -> list[str]:
    return piece_tags(content, language=language, imports=list(imports), attributes=[]).frameworks


@pytest.mark.parametrize(
    "entry",
    ["SwiftUI", "import SwiftUI", "@preconcurrency import SwiftUI", "import struct SwiftUI.Text"],
)
def test_an_import_names_its_framework(entry):
    assert piece_frameworks(imports=[entry]) == ["SwiftUI"]


def test_import_lines_in_content_count():
    assert piece_frameworks("import Combine\nimport CloudKit\n") == ["CloudKit", "Combine"]


def test_modules_outside_the_lexicon_are_not_frameworks():
    assert piece_frameworks(imports=["MyApp", "Alamofire"]) == []


def test_import_os_counts_only_in_swift():
    assert piece_frameworks("import os\n") == ["os"]
    assert piece_frameworks("import os\n", language="python") == []
    assert piece_frameworks("import os\n", language="markdown") == []


def test_python_imports_are_never_apple_frameworks():
    assert piece_frameworks(language="python", imports=["Foundation", "os"]) == []


def test_the_frameworks_field_is_canonicalised_and_keeps_unknown_names():
    fields = {"frameworks": ["swiftui", "Core Data", "Swift Charts", "MyKit"]}
    tags = document_tags(fields, "", language="markdown", source="blog")
    assert tags.frameworks == ["Charts", "CoreData", "MyKit", "SwiftUI"]


def test_distinctive_names_count_anywhere_in_prose():
    text = "Sync SwiftData models with CloudKit; UIKit's views too."
    assert framework_mentions(text) == ["CloudKit", "SwiftData", "UIKit"]


def test_names_inside_longer_identifiers_do_not_count():
    assert framework_mentions("MySwiftUIHelpers and UIKitten") == []


@pytest.mark.parametrize(
    ("text", "framework"),
    [
        ("Persist with Core Data.", "CoreData"),
        ("Run a Core ML model.", "CoreML"),
        ("Plot it with Swift Charts.", "Charts"),
        ("Expose actions with App Intents.", "AppIntents"),
        ("Write tests with Swift Testing.", "Testing"),
    ],
)
def test_spelled_out_names_are_aliases(text, framework):
    assert framework_mentions(text) == [framework]


@pytest.mark.parametrize(
    "text",
    [
        "Combine the results into one array.",
        "Foundation of the design is simple.",
        "Observation shows the network is slow.",
        "Testing your app matters. The Testing framework you pick matters less.",
        "Vision and Speech improved. Charts are drawn on the Network tab.",
        "The Security.html page is a file, not a type.",
    ],
)
def test_common_words_alone_are_not_framework_mentions(text):
    assert framework_mentions(text) == []


@pytest.mark.parametrize(
    ("text", "framework"),
    [
        ("Publishers come from the Combine framework.", "Combine"),
        ("The Vision Framework finds faces.", "Vision"),
        ("Return a Foundation.Date here.", "Foundation"),
        ("Add `import Observation` to the file.", "Observation"),
        ("Classify text with the Natural Language framework.", "NaturalLanguage"),
    ],
)
def test_qualified_common_words_are_framework_mentions(text, framework):
    assert framework_mentions(text) == [framework]


def test_core_foundation_is_not_foundation():
    assert framework_mentions("Bridge to the Core Foundation framework.") == ["CoreFoundation"]


def test_document_frameworks_combine_fields_imports_and_prose():
    text = "import SwiftUI\n// Uses WidgetKit\n"
    tags = document_tags({"frameworks": ["MapKit"]}, text, language="swift", source="github")
    assert tags.frameworks == ["MapKit", "SwiftUI", "WidgetKit"]
