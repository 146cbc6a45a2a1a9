"""The Swift documentation as a user's JSONL corpus: one record per file, `id` (the file's
path relative to the corpus directory, the id the qrels name), `title` and `text`, and no
`path`, as Apple documentation and WWDC transcripts come (docs/ingestion.md). It is read
from the same files, with the same titles, as the directory the evaluation ingests.

usage: python bench/swift-docs-eval/to_jsonl.py CORPUS_DIR OUT.jsonl
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chunkers.sources.discovery import discover  # noqa: E402
from chunkers.sources.reading import Defaults, read_all  # noqa: E402


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    corpus, out = Path(argv[0]), Path(argv[1])
    read = read_all(discover([corpus]), Defaults())
    with out.open("w", encoding="utf-8") as handle:
        for doc in read.documents:
            record = {"id": doc.path, "title": doc.title, "text": doc.text}
            handle.write(json.dumps({k: v for k, v in record.items() if v}, ensure_ascii=False))
            handle.write("\n")
    print(f"{len(read.documents)} records to {out} ({len(read.rejects)} files rejected)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
