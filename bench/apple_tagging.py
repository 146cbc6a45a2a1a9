"""What we tag against what Apple's pages state, per published form, on the real pages in
../shared/data/apple-docs (docs/ingestion.md's table; tests/bench/test_apple_tagging.py holds
the figures to at least 98 %).

    python bench/apple_tagging.py [--root ../shared/data/apple-docs] [--json]

The statement is read here from each file on its own terms, with none of the readers' code:
render JSON's `metadata` (title, modules, platforms' introducedAt/deprecatedAt), the Markdown
export's metadata comment, a saved page's `# ` title, breadcrumb and first badge line, an
Xcode guide's `# ` title, a session sidecar's title. The tags are what the ingest pipeline
(reading, chunking, tagging) puts on the document's first chunk. A fact counts only where the
page states it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from chunkers.config import ChunkConfig  # noqa: E402
from chunkers.pipeline import chunk_document  # noqa: E402
from chunkers.sources.discovery import discover  # noqa: E402
from chunkers.sources.reading import Defaults, read_all  # noqa: E402
from core.embedding.model_files import model_dir  # noqa: E402
from core.frameworks import canonical_framework  # noqa: E402
from core.settings import Settings  # noqa: E402
from core.tokens import counter_for_model  # noqa: E402

DEFAULT_ROOT = ROOT.parent / "shared" / "data" / "apple-docs"
# Render JSON syntax that must never reach a chunk's text.
JSON_SYNTAX = re.compile(r'"(?:type|inlineContent|identifier|kind|references)"\s*:|doc://')
COPYRIGHT = re.compile(r"Copyright\b.*Apple Inc\.")
_MD_META = re.compile(r"\A<!--\s*(\{.*?\})\s*-->", re.DOTALL)
_TITLE = re.compile(r"^# +(.+?)\s*$", re.MULTILINE)
_PLATFORM_KEYS = {"iOS": "ios", "iPadOS": "ipados", "macOS": "macos", "Mac Catalyst": "maccatalyst",
                  "tvOS": "tvos", "watchOS": "watchos", "visionOS": "visionos"}  # fmt: skip
_IOS_BADGE_GLUED = re.compile(r"iOS (\d+(?:\.\d+)*)(?:\+|[–-](\d+(?:\.\d+)*)(Deprecated)?)")


def _norm(version: str | None) -> str | None:
    if not version:
        return None
    parts = version.split(".")
    while len(parts) > 2 and parts[-1] == "0":
        parts.pop()
    return ".".join(parts if len(parts) > 1 else [*parts, "0"])


def stated(form: str, path: Path) -> dict[str, Any]:
    """What the file says of itself: title, framework, iOS min, iOS deprecation."""
    text = path.read_text(encoding="utf-8")
    if form == "render_json":
        page = json.loads(text)
        meta = page["metadata"]
        ios = next((p for p in meta.get("platforms") or [] if p.get("name") == "iOS"), {})
        modules = [m["name"] for m in meta.get("modules") or []]
        return {
            "title": meta.get("title"),
            "framework": modules[0] if modules else None,
            "ios_min": ios.get("introducedAt"),
            "ios_deprecated": ios.get("deprecatedAt"),
            "platforms": {
                _PLATFORM_KEYS[p["name"]]: (p.get("introducedAt"), p.get("deprecatedAt"))
                for p in meta.get("platforms") or []
                if p.get("name") in _PLATFORM_KEYS
            },
        }
    if form == "apple_md":
        meta = json.loads(_MD_META.match(text).group(1))  # type: ignore[union-attr]
        ios = next((a for a in meta.get("availability", []) if a.startswith("iOS:")), None)
        parts = [p.strip() for p in ios.split(":", 1)[1].split("-") if p.strip()] if ios else []
        return {
            "title": meta.get("title"),
            "framework": meta.get("framework"),
            "ios_min": parts[0] if parts else None,
            "ios_deprecated": parts[1] if len(parts) > 1 else None,
        }
    if form == "wwdc":
        return {"title": _session_title(path)}
    if form == "scraped":
        title = _TITLE.search(text)
        head = text[: title.start()] if title else ""
        crumbs = [line.strip()[1:].strip() for line in head.splitlines() if line.strip()[:1] == "-"]
        badge = _IOS_BADGE_GLUED.search(text[title.end() :] if title else text)
        framework = canonical_framework(crumbs[0]) or crumbs[0] if crumbs else None
        return {
            "title": title.group(1) if title else None,
            "framework": framework,
            "ios_min": badge.group(1) if badge else None,
            "ios_deprecated": badge.group(2) if badge and badge.group(3) else None,
        }
    title = _TITLE.search(text)
    return {"title": title.group(1) if title else None}


FOLDERS = {
    "render_json": "render-json",
    "apple_md": "apple-md/bagbutik-appstoreconnectapi",
    "scraped": "scraped-md",
    "xcode_guide": "xcode-additional-docs",
    "wwdc": "wwdc",
}


def forms(root: Path) -> dict[str, list[Path]]:
    json_pages = [
        p
        for p in sorted((root / "render-json").rglob("*.json"))
        if "/index/" not in str(p) and p.name not in ("metadata.json", "theme-settings.json")
    ]
    return {
        "render_json": json_pages,
        "apple_md": sorted((root / "apple-md" / "bagbutik-appstoreconnectapi").glob("*.md")),
        "scraped": sorted((root / "scraped-md").rglob("*.md")),
        "xcode_guide": sorted((root / "xcode-additional-docs").glob("*.md")),
        "wwdc": [
            *sorted((root / "wwdc").rglob("*.vtt")),
            *sorted((root / "wwdc").rglob("prog_index.m3u8")),
            *sorted((root / "wwdc").rglob("transcript.json")),
        ],
    }


def _session_title(path: Path) -> str | None:
    """The title the session's sidecar gives it, read here by each sidecar's own shape."""
    for folder in path.parents:
        if (folder / "sessions.json").is_file():
            by_year = json.loads((folder / "sessions.json").read_text())
            return by_year.get(path.parent.name, {}).get(path.stem, {}).get("title")
        if (path.parent / "metadata.json").is_file():
            return json.loads((path.parent / "metadata.json").read_text()).get("title")
        for sidecar in folder.glob("wwdc20*.json"):
            session = path.parts[path.parts.index(folder.name) + 1]
            for entry in json.loads(sidecar.read_text()):
                if entry.get("url", "").rstrip("/").endswith(f"/{session}"):
                    return entry.get("title")
    return None


def measure(root: Path = DEFAULT_ROOT) -> dict[str, dict[str, Any]]:
    settings = Settings()
    cfg = ChunkConfig(counter=counter_for_model(str(model_dir(settings))))
    out: dict[str, dict[str, Any]] = {}
    for form, paths in forms(root).items():
        counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        # Read as a folder is ingested: ids relative to the folder, archives as archives.
        read = read_all(discover([root / FOLDERS[form]]), Defaults())
        docs = {d.source_file: d for d in read.documents}
        for path in paths:
            doc = docs.get(str(path.resolve()))
            facts = stated(form, path)
            chunks = chunk_document(doc, cfg).chunks if doc else []
            first = chunks[0] if chunks else None
            honest = {"render_json": ("apple_docs", "package_docs"), "wwdc": ("wwdc",)}
            _count(counts, "source", doc is not None
                   and doc.source in honest.get(form, ("apple_docs",)))  # fmt: skip
            if facts.get("title"):
                _count(counts, "title", doc is not None and doc.title == facts["title"])
            if facts.get("framework"):
                got = set(first.framework_tags) if first else set()
                want = facts["framework"]
                _count(counts, "framework", want in got or canonical_framework(want) in got)
            if facts.get("ios_min"):
                got_min = first.ios_version_min if first else None
                _count(counts, "ios_min", _norm(got_min) == _norm(facts["ios_min"]))
            for platform, (lo, dep) in (facts.get("platforms") or {}).items():
                bounds = first.platforms.get(platform, {}) if first else {}
                ok = (_norm(bounds.get("min")), _norm(bounds.get("deprecated_in"))) == (
                    _norm(lo), _norm(dep))  # fmt: skip
                _count(counts, "platform_bounds", ok)
            if form in ("render_json", "apple_md", "scraped"):
                dep = facts.get("ios_deprecated")
                got_dep = first.deprecated_in if first and first.deprecated else None
                if dep or (first and first.platforms.get("ios", {}).get("min")):
                    _count(counts, "ios_deprecation", _norm(got_dep) == _norm(dep))
            texts = " ".join(c.content for c in chunks)
            if form == "render_json":
                code_free = JSON_SYNTAX.sub("", _outside_code(texts)) == _outside_code(texts)
                _count(counts, "no_json_syntax", code_free)
            _count(counts, "no_copyright", not COPYRIGHT.search(texts))
        out[form] = {
            key: {"agree": a, "of": n, "share": round(a / n, 4) if n else None}
            for key, (a, n) in counts.items()
        }
        read_files = sum(1 for p in paths if str(p.resolve()) in docs)
        out[form]["documents"] = {"agree": read_files, "of": len(paths), "share": None}
    return out


def _outside_code(text: str) -> str:
    """Prose only: a code listing may quote JSON on purpose (a tool's example input)."""
    return re.sub(r"```.*?```", "", text, flags=re.DOTALL)


def _count(counts: dict[str, list[int]], key: str, ok: bool) -> None:
    counts[key][0] += int(bool(ok))
    counts[key][1] += 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not args.root.is_dir():
        print(f"error: {args.root} is not a directory", file=sys.stderr)
        return 2
    result = measure(args.root)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    for form, facts in result.items():
        cells = [f"{k} {v['agree']}/{v['of']}" for k, v in facts.items()]
        print(f"{form}: " + ", ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
