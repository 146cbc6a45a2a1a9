from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.store.analyzer import STOPWORDS, analyze, analyze_query, analyzed_text


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("NavigationStack", ["navigationstack", "navigation", "stack"]),
        ("snake_case_name", ["snake_case_name", "snake", "case", "name"]),
        ("URLSession", ["urlsession", "url", "session"]),
        ("HTTP2Client", ["http2client", "http2", "client"]),
        ("Base64Encoder", ["base64encoder", "base64", "encoder"]),
        ("__init__", ["__init__", "init"]),
        ("my_URLSession", ["my_urlsession", "my", "url", "session"]),
        ("iPhone", ["iphone", "phone"]),
        ("view", ["view"]),
        ("HTML", ["html"]),
        ("x_y", ["x_y"]),
    ],
)
def test_identifier_is_kept_whole_and_split_into_parts(text, tokens):
    assert analyze(text) == tokens


def test_words_are_lowercased_and_punctuation_dropped():
    assert analyze("Hello, World! foo.bar(baz)") == ["hello", "world", "foo", "bar", "baz"]


def test_digits_and_versions_are_tokens():
    assert analyze("macOS 17.0") == ["macos", "mac", "os", "17", "0"]


def test_unicode_letters_are_word_characters():
    assert analyze("Café Ünïcode straße") == ["café", "ünïcode", "straße"]


def test_repeats_are_kept_for_term_frequency():
    assert analyze("view view") == ["view", "view"]


def test_document_side_keeps_stopwords():
    assert analyze("the view") == ["the", "view"]


def test_query_drops_stopwords_and_repeats():
    assert analyze_query("How do I use the NavigationStack with a navigation bar?") == [
        "use",
        "navigationstack",
        "navigation",
        "stack",
        "bar",
    ]


def test_query_of_only_stopwords_keeps_them():
    assert analyze_query("What is this") == ["what", "is", "this"]


def test_query_keeps_code_keywords():
    assert {"not", "for", "if", "in", "new", "get", "set"}.isdisjoint(STOPWORDS)


def test_empty_and_symbol_only_text_has_no_tokens():
    assert analyze("") == []
    assert analyze_query('"*()-^:') == []


def test_analyzed_text_joins_fields_and_skips_missing_ones():
    assert analyzed_text("UIKit > List", None, "ForEach") == "uikit ui kit list foreach for each"


def test_analysis_is_deterministic():
    text = "struct ContentView: View { @State var isOn_flag = false }" * 50
    assert analyze(text) == analyze(text)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.none(),
            st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=60),
            st.text(max_size=60),
            st.sampled_from(
                ["NavigationStack", "snake_case_name", "HTTP2Client", "İstanbul ΟΔΟΣ."]
            ),
        ),
        max_size=3,
    )
)
def test_load_path_analysis_equals_the_analyzer(parts):
    # analyzed_text takes shortcuts (bytes for ASCII, a per-token cache); the stored FTS
    # text must still be exactly the analyzer's tokens, or index and query sides disagree.
    assert analyzed_text(*parts) == " ".join(analyze(" ".join(p for p in parts if p)))
