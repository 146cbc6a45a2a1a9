"""The corpora bench/first_answer.py times, and the questions it asks of them: the shared
datasets as a user would hand them to `rag-retrieve ingest` (SciFact's BEIR records as a
user's JSONL, a subset of the Swift docs, the first WWDC19 sessions with their sidecar) and
the sample folders of this repository."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = Path("/work/shared/data")
WWDC19 = DATA / "apple-docs" / "wwdc" / "asciiwwdc-transcripts"
CORPORA = {
    "swift": DATA / "swift-docs",
    "scifact": DATA / "scifact" / "corpus.jsonl",
    "guides": ROOT / "data" / "sample" / "guides",
    "sample": ROOT / "data" / "sample",
    "wwdc20": WWDC19,
}
QUESTIONS = {
    "swift": "async await concurrency",
    "scifact": "cancer cells",
    "guides": "migration",
    "sample": "SwiftData",
    "wwdc20": "SwiftUI",
}
WWDC_SESSIONS = 20


def scifact_jsonl(source: Path, out: Path, limit: int) -> int:
    """SciFact's BEIR records (`_id`, `title`, `text`) as a user's JSONL (docs/ingestion.md:
    `id`, `text`, `title`), the way query/eval/index.py's corpus_line writes them."""
    count = 0
    with source.open(encoding="utf-8") as src, out.open("w", encoding="utf-8") as dst:
        for raw in src:
            if limit and count >= limit:
                break
            record = json.loads(raw)
            title, text = record.get("title") or "", record.get("text") or ""
            line: dict[str, str] = {
                "id": str(record["_id"]),
                "text": text if text.strip() else title,
            }
            if title:
                line["title"] = title
            dst.write(json.dumps(line, ensure_ascii=False) + "\n")
            count += 1
    return count


def swift_subset(source: Path, out: Path, limit: int) -> Path:
    """The Swift docs directory, or its first `limit` markdown files (sorted paths)."""
    if not limit:
        return source
    for path in sorted(source.rglob("*.md"))[:limit]:
        target = out / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return out


def wwdc_sessions(out: Path, count: int) -> Path:
    """The first `count` WWDC19 transcripts (by file name) with the archive's sidecar, laid
    out as the archive lays them out, so that sessions are titled as in the whole corpus."""
    source = WWDC19 / "en" / "2019"
    target = out / "en" / "2019"
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.glob("*.vtt"))[:count]:
        shutil.copyfile(path, target / path.name)
    shutil.copyfile(WWDC19 / "sessions.json", out / "sessions.json")
    return out


def prepare(corpus: str, work: Path, limit: int) -> Path:
    work.mkdir(parents=True, exist_ok=True)
    if corpus in ("guides", "sample"):
        return CORPORA[corpus]
    if corpus == "wwdc20":
        return wwdc_sessions(work / "wwdc", limit or WWDC_SESSIONS)
    if corpus == "scifact":
        out = work / "scifact.jsonl"
        scifact_jsonl(CORPORA["scifact"], out, limit)
        return out
    return swift_subset(CORPORA["swift"], work / "swift-docs", limit)
