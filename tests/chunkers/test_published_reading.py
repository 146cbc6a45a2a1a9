"""Published formats read through discovery, reading and chunking, as an ingest reads them:
which files are documents, the document each one makes, its chunks' facts and links, and the
named reject a broken file becomes while the rest of its folder is read."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from chunkers.config import ChunkConfig
from chunkers.model import Document
from chunkers.pipeline import chunk_document
from chunkers.published_links import LINK_ROLE
from chunkers.sources.discovery import discover
from chunkers.sources.reading import Defaults, ReadResult, is_plain_doc_id, read_all
from core.store.filters import SearchFilter
from core.versions import version_int
from tests.support.paths import FIXTURES

PUBLISHED = FIXTURES / "published"
ARCHIVE = PUBLISHED / "Demo.doccarchive"
SESSION = FIXTURES / "wwdc" / "asciiwwdc"


def read(*paths: Path) -> tuple[ReadResult, Counter[str]]:
    skipped: Counter[str] = Counter()
    result = read_all(discover(list(paths), skipped), Defaults())
    return result, skipped + result.skipped


def by_path(result: ReadResult, suffix: str) -> Document:
    return next(d for d in result.documents if d.path and d.path.endswith(suffix))


def test_an_archive_is_read_as_its_pages_alone():
    result, _ = read(ARCHIVE)
    assert sorted(d.title for d in result.documents) == [
        "Demo", "Getting Started with Widgets", "Widget", "spin(times:)",
    ]  # fmt: skip


def test_the_web_app_index_and_settings_of_an_archive_are_counted_as_skipped():
    _, skipped = read(ARCHIVE)
    assert skipped["DocC archive web app and index (not pages)"] == 4


def test_a_page_is_a_document_of_the_source_its_reader_names():
    result, _ = read(ARCHIVE)
    doc = by_path(result, "widget.json")
    assert (doc.doc_id, doc.source) == (
        "package_docs:data/documentation/demo/widget.json", "package_docs",
    )  # fmt: skip


def test_a_page_over_the_configuration_size_cap_is_still_read(tmp_path):
    page = json.loads((ARCHIVE / "data/documentation/demo/widget.json").read_text())
    page["abstract"] = [{"type": "text", "text": "spin " * 70_000}]
    (tmp_path / "big.json").write_text(json.dumps(page))
    result, _ = read(tmp_path)
    assert [d.title for d in result.documents] == ["Widget"]


def test_a_truncated_page_is_a_named_reject_and_the_folder_is_still_read(tmp_path):
    shutil.copy(PUBLISHED / "apple" / "truncated.json", tmp_path / "truncated.json")
    shutil.copy(PUBLISHED / "apple" / "getbytes.json", tmp_path / "getbytes.json")
    result, _ = read(tmp_path)
    assert [d.title for d in result.documents] == ["getBytes(_:)"]
    (reject,) = result.rejects
    assert reject.file.endswith("truncated.json") and "not valid JSON" in reject.reason


def test_a_metadata_comment_that_is_not_json_is_a_named_reject():
    result, _ = read(PUBLISHED / "apple-md")
    assert [d.title for d in result.documents] == ["stop(id:)"]
    assert "metadata comment is not JSON" in result.rejects[0].reason


def test_a_vtt_file_with_a_broken_cue_is_a_named_reject(tmp_path):
    (tmp_path / "2019").mkdir()
    (tmp_path / "2019" / "1.vtt").write_text("WEBVTT\n\n00:01.000 --> nonsense\nHello.\n")
    shutil.copy(SESSION / "en" / "2019" / "204.vtt", tmp_path / "2019" / "204.vtt")
    result, _ = read(tmp_path)
    assert len(result.documents) == 1
    assert result.rejects[0].file.endswith("1.vtt") and result.rejects[0].line == 3


def test_a_users_markdown_stays_the_users():
    result, _ = read(PUBLISHED / "notes.md")
    assert result.documents[0].source == "user_codebase"


def test_a_published_files_id_is_known_before_it_is_read():
    (source,) = discover([ARCHIVE / "data/documentation/demo/widget.json"])
    (doc,) = read_all([source], Defaults()).documents
    assert is_plain_doc_id(doc.doc_id, source, Defaults())


@pytest.fixture(scope="module")
def cfg(counter):
    return ChunkConfig(counter)


def chunks_of(doc: Document, cfg: ChunkConfig):
    return chunk_document(doc, cfg).chunks


def test_a_pages_chunks_carry_its_breadcrumb_as_context(cfg):
    result, _ = read(ARCHIVE)
    chunk = chunks_of(by_path(result, "spin(times:).json"), cfg)[0]
    assert chunk.context.startswith("Demo › Widget › spin(times:)")


def test_a_pages_links_become_link_references_of_its_chunks(cfg):
    result, _ = read(ARCHIVE)
    chunks = chunks_of(by_path(result, "widget.json"), cfg)
    links = {r.name for c in chunks for r in c.references if r.role == LINK_ROLE}
    assert "/documentation/demo/widget/spin(times:)" in links


def test_a_link_sits_on_the_chunk_that_names_its_target(cfg):
    result, _ = read(ARCHIVE)
    for chunk in chunks_of(by_path(result, "widget.json"), cfg):
        for ref in chunk.references:
            if ref.role == LINK_ROLE and ref.qualifier in chunk.content:
                break
        else:
            continue
        return
    pytest.fail("no link was placed on a chunk naming its target")


def test_availability_the_page_states_is_what_the_chunks_carry(cfg):
    result, _ = read(PUBLISHED / "apple")
    chunk = chunks_of(by_path(result, "getbytes.json"), cfg)[0]
    assert (chunk.ios_version_min, chunk.deprecated, chunk.deprecated_in) == ("2.0", True, "8.0")
    assert chunk.platforms["macos"]["deprecated_in"] == "10.10"
    assert chunk.platforms["ipados"]["unavailable"] == "true"


def target(version: str) -> SearchFilter:
    return SearchFilter(ios_version_int=version_int(version))


def test_a_page_introduced_in_16_1_is_left_out_for_an_ios_15_target(cfg):
    result, _ = read(PUBLISHED / "saved")
    chunk = chunks_of(result.documents[0], cfg)[0].to_dict()
    assert chunk["ios_version_min"] == "16.1"
    assert not target("15.0").admits(chunk)


def test_a_page_deprecated_in_17_is_flagged_at_17_and_not_before(cfg):
    result, _ = read(PUBLISHED / "saved")
    chunk = chunks_of(result.documents[0], cfg)[0].to_dict()
    assert chunk["deprecated_in"] == "17.0"
    assert target("16.4").admits(chunk)
    assert not target("17.0").admits(chunk)


def test_the_breadcrumb_of_a_saved_page_is_no_chunk_of_its_own(cfg):
    result, _ = read(PUBLISHED / "saved")
    assert chunks_of(result.documents[0], cfg)[0].content.startswith("Identifies mutations")


def test_a_talks_chunk_opens_its_session_at_its_start_time(cfg):
    result, _ = read(SESSION / "en" / "2019" / "204.vtt")
    chunk = chunks_of(result.documents[0], cfg)[0]
    start = int(chunk.metadata["start_time"])
    assert chunk.url == f"https://developer.apple.com/videos/play/wwdc2019/204/?time={start}"


def test_a_talks_chunks_are_transcripts_of_source_wwdc(cfg):
    result, _ = read(SESSION / "en" / "2019" / "204.vtt")
    chunk = chunks_of(result.documents[0], cfg)[0]
    assert (chunk.source, chunk.chunk_type) == ("wwdc", "transcript")


def test_subtitles_that_name_no_session_are_the_users_not_wwdcs(tmp_path):
    (tmp_path / "standup.vtt").write_text("WEBVTT\n\n00:01.000 --> 00:03.000\nHello team.\n")
    result, _ = read(tmp_path)
    assert result.documents[0].source == "user_codebase"
