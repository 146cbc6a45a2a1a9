"""What the embedding model is given for a chunk."""

from __future__ import annotations

from chunkers.embedding_text import embedding_text


def test_code_identifiers_are_embedded_as_their_words() -> None:
    text = embedding_text(
        "@implementation AuthSession",
        "- (void)refreshAuthTokenWithCompletion:(id)completion {",
        "objc",
    )
    assert text == (
        "@implementation Auth Session\n- (void)refresh Auth Token With Completion:(id)completion {"
    )


def test_acronyms_and_digits_stay_with_their_word() -> None:
    assert embedding_text(None, "let s = NSURLSession(); HTTP2Client()", "swift") == (
        "let s = NSURL Session(); HTTP2 Client()"
    )


def test_snake_case_and_lowercase_code_is_unchanged() -> None:
    assert embedding_text("", "fn read_refresh_token() -> String", "rust") == (
        "fn read_refresh_token() -> String"
    )


def test_prose_is_embedded_as_written() -> None:
    text = "Use `NavigationStack` with a `navigationDestination(for:)` modifier."
    assert embedding_text("# Navigation", text, "markdown") == f"# Navigation\n{text}"
