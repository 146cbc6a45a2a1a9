"""The JSONL record contract (docs/ingestion.md, "Documents in"): what a record may hold, and how a
record that breaks it is rejected, naming its file, line and field, without costing the
good records around it. The fixture holds one case per line."""

from __future__ import annotations

import pytest

from chunkers.model import KNOWN_FIELDS, Document, Reject
from chunkers.sources.discovery import discover
from chunkers.sources.reading import Defaults, ReadResult, read_all
from chunkers.sources.records import JsonlRecord
from tests.support import paths

FIXTURE = paths.FIXTURES / "sources" / "records.jsonl"


@pytest.fixture(scope="module")
def read() -> ReadResult:
    return read_all(discover([FIXTURE]), Defaults())


def document(read: ReadResult, doc_id: str) -> Document:
    return next(d for d in read.documents if d.doc_id == doc_id)


def reject_at(read: ReadResult, line: int) -> Reject:
    return next(r for r in read.rejects if r.line == line)


def test_a_wrong_typed_field_is_rejected_naming_file_line_and_field(read):
    reject = reject_at(read, 2)
    assert reject.field == "ios_version"
    assert str(reject) == (
        f"{FIXTURE}:2: field 'ios_version': must be a version string such as \"17.0\", got true"
    )


def test_a_record_without_text_content_or_messages_is_rejected(read):
    reject = reject_at(read, 3)
    assert reject.field == "text"
    assert reject.reason == "missing or empty text (needs 'text', 'content' or 'messages')"


def test_good_records_before_and_after_bad_ones_survive(read):
    assert [d.doc_id for d in read.documents] == [
        "good-1",
        "good-4",
        "docs:guides/null-id.md",
        "chat-10",
    ]
    assert sorted(r.line for r in read.rejects) == [2, 3, 5, 6, 7, 9]


def test_versions_are_kept_as_written_never_read_as_numbers(read):
    fields = document(read, "good-1").fields
    assert fields["ios_version_min"] == "17.10"
    assert fields["swift_version"] == "5.10"


def test_unknown_fields_are_kept_as_metadata_and_known_ones_as_fields(read):
    doc = document(read, "good-4")
    assert doc.metadata == {"reviewer": "ana", "rating": 4}
    assert doc.fields == {"id": "good-4", "source": "blog"}


def test_a_bad_item_of_a_list_is_named_by_its_position(read):
    reject = reject_at(read, 5)
    assert reject.field == "frameworks"
    assert reject.reason == "must be a list of strings; frameworks[1] is number 7"


def test_a_bad_message_is_named_by_its_position_and_key(read):
    reject = reject_at(read, 9)
    assert reject.field == "messages"
    assert reject.reason.endswith("; messages[1].role is null")


def test_a_boolean_is_no_integer_id(read):
    reject = reject_at(read, 6)
    assert (reject.field, reject.reason) == ("id", "must be a string or an integer, got true")


def test_a_date_must_be_written_as_a_string(read):
    reject = reject_at(read, 7)
    assert reject.field == "last_verified"
    assert reject.reason == "must be an ISO date (YYYY-MM-DD), got number 20240501"


def test_a_null_field_counts_as_absent(read):
    doc = document(read, "docs:guides/null-id.md")
    assert doc.fields["id"] is None


def test_a_message_keeps_its_other_keys(read):
    doc = document(read, "chat-10")
    assert doc.messages == [{"role": "user", "content": "Is this kept?", "at": "10:02"}]
    assert doc.text == "user: Is this kept?"


def test_the_model_declares_the_fields_the_pipeline_knows():
    # Front matter is sorted into fields and metadata by KNOWN_FIELDS; a field declared in
    # one place only would be validated but dropped into metadata, or the other way round.
    assert frozenset(JsonlRecord.model_fields) == KNOWN_FIELDS
