"""A DocC render JSON page (what developer.apple.com serves at
`/tutorials/data/documentation/<path>.json` and every `.doccarchive` holds under
`data/documentation/`) → one document: its text as a reader sees the page, and the facts the
page states.

* Text: the abstract, the deprecation summary, declarations (tokens joined into source, in a
  fence of their language), parameters, the content sections (overview, discussion, return
  value, ...), then the topic, relationship, default-implementation and see-also sections as
  short lists of the titles they name. Tutorials and overview pages (`sections`) give their
  titles and prose. No JSON syntax reaches the text.
* Facts: the title (`metadata.title`), the page's URL (developer.apple.com for Apple's
  `doc://com.apple.*` identifiers, else the archive-relative path, or a base URL the user
  gives), availability per platform from `metadata.platforms` (`deprecatedAt` trusted over a
  `"deprecated": false` beside it), the framework from `metadata.modules`, symbol kind and
  role as metadata, the breadcrumb (`SwiftUI › View`) as the chunks' context.
* Links: every `topic` reference of the page, by the URL its target page states, so that
  inside an archive each one finds its page; one to a page not in the index stays a name.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

from chunkers.sources.published.docc_content import (
    References,
    blocks_text,
    declaration_source,
    inline_text,
    reference_title,
)
from chunkers.sources.published.model import FormatError, PageLink, Published
from chunkers.tagging.availability import platform_key

APPLE_HOST = "https://developer.apple.com"
BREADCRUMB_SEPARATOR = " › "
# The root every Apple page's hierarchy starts from: names nothing about the page.
_TECHNOLOGIES = "/documentation/technologies"
_MAX_GENERIC_DEPTH = 12


def is_docc_page(value: object) -> bool:
    """Whether parsed JSON is a render JSON page: an object with a `doc://` identifier and a
    metadata object. Key order varies with the writer and `schemaVersion` is missing from
    some served pages, so the parsed value decides, never a look at the text."""
    return (
        isinstance(value, dict)
        and _identifier(value) is not None
        and isinstance(value.get("metadata"), dict)
    )


def may_be_docc_page(text: str) -> bool:
    """Whether a JSON text that does not parse was meant to be a page (a truncated download):
    it names a `doc://` identifier and a metadata object."""
    return '"doc://' in text and '"metadata"' in text


def is_apple_identifier(identifier: str) -> bool:
    return urlsplit(identifier).netloc.lower().startswith("com.apple")


def page_url(identifier: str, path: str, base_url: str | None = None) -> str:
    """Where a person opens the page `identifier` whose web path is `path`: Apple's site for
    Apple's pages, else `base_url` + path, else the archive-relative path itself."""
    if is_apple_identifier(identifier):
        return APPLE_HOST + path
    return base_url.rstrip("/") + path if base_url else path


def read_docc_text(text: str, *, base_url: str | None = None) -> Published:
    """One render JSON page from its text; a FormatError when it is not valid JSON or not
    a page."""
    try:
        page = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(f"render JSON page is not valid JSON: {exc.msg}", exc.lineno) from exc
    except RecursionError as exc:
        raise FormatError("render JSON page is nested too deeply") from exc
    if not is_docc_page(page):
        raise FormatError(
            "not a DocC render JSON page: no doc:// identifier.url or no metadata object",
            field="identifier",
        )
    return read_docc_page(page, base_url=base_url)


def read_docc_page(page: dict[str, Any], *, base_url: str | None = None) -> Published:
    """One parsed render JSON page (`is_docc_page`)."""
    identifier = _identifier(page)
    metadata = page.get("metadata")
    if not isinstance(metadata, dict) or identifier is None:
        raise FormatError("not a DocC render JSON page", field="identifier")
    refs = page.get("references")
    references: References = refs if isinstance(refs, dict) else {}
    path = _web_path(page, identifier)
    title = _string(metadata.get("title")) or _string(_ref_field(references, identifier, "title"))
    title = title or identifier.rstrip("/").rsplit("/", 1)[-1]
    fields, meta = _facts(page, metadata, identifier, references)
    breadcrumb = _breadcrumb(page, references, base_url, title)
    meta["breadcrumb"] = breadcrumb
    return Published(
        text="\n".join(_page_lines(page, references)).strip() + "\n",
        language="markdown",
        source="apple_docs" if is_apple_identifier(identifier) else "package_docs",
        format="docc_json",
        title=title,
        url=page_url(identifier, path, base_url),
        fields=fields,
        metadata=meta,
        links=list(_links(page, references, identifier, base_url)),
    )


def _identifier(page: Mapping[str, Any]) -> str | None:
    ident = page.get("identifier")
    url = ident.get("url") if isinstance(ident, Mapping) else None
    return url if isinstance(url, str) and url.startswith("doc://") else None


def _web_path(page: Mapping[str, Any], identifier: str) -> str:
    """The page's path on the web: its first variant's path, as DocC's web app routes it;
    else the identifier's path, lowercased as DocC writes URLs."""
    variants = page.get("variants")
    if isinstance(variants, list):
        for variant in variants:
            paths = variant.get("paths") if isinstance(variant, Mapping) else None
            if isinstance(paths, list) and paths and isinstance(paths[0], str):
                return paths[0]
    return urlsplit(identifier).path.lower()


def _string(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _ref_field(references: References, identifier: str, key: str) -> object:
    ref = references.get(identifier)
    return ref.get(key) if isinstance(ref, Mapping) else None


def _facts(
    page: Mapping[str, Any], metadata: Mapping[str, Any], identifier: str, refs: References
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(fields, metadata): availability and frameworks as tagging reads fields; the rest."""
    platforms: dict[str, dict[str, str]] = {}
    deprecated = bool(page.get("deprecationSummary"))
    beta: list[str] = []
    for entry in metadata.get("platforms") or []:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            continue
        key = platform_key(entry["name"])
        if key is None:
            continue  # "Xcode", "App Store Connect API": no OS version to filter by
        bounds: dict[str, str] = {}
        for bound, name in (("min", "introducedAt"), ("deprecated_in", "deprecatedAt"),
                            ("obsoleted", "obsoletedAt")):  # fmt: skip
            if isinstance(entry.get(name), str) and entry[name].strip():
                bounds[bound] = entry[name].strip()
        # `deprecatedAt` is the statement; `"deprecated": false` beside it is not.
        deprecated = deprecated or "deprecated_in" in bounds or entry.get("deprecated") is True
        if entry.get("unavailable") is True:
            bounds["unavailable"] = "true"
        if entry.get("beta") is True:
            beta.append(entry["name"])
        platforms.setdefault(key, bounds)
    modules = [
        m["name"]
        for m in metadata.get("modules") or []
        if isinstance(m, Mapping) and isinstance(m.get("name"), str)
    ]
    fields: dict[str, Any] = {"frameworks": modules} if modules else {}
    if platforms:
        fields["platforms"] = platforms
    if deprecated:
        fields["deprecated"] = True
    meta: dict[str, Any] = {"docc_identifier": identifier}
    for key, name in (("symbol_kind", "symbolKind"), ("role", "role"),
                      ("role_heading", "roleHeading")):  # fmt: skip
        if isinstance(metadata.get(name), str):
            meta[key] = metadata[name]
    if isinstance(page.get("kind"), str):
        meta["page_kind"] = page["kind"]
    if beta:
        meta["beta"] = beta
    return fields, meta


def _breadcrumb(page: Mapping[str, Any], refs: References, base_url: str | None, title: str) -> str:
    parts = []
    hierarchy = page.get("hierarchy")
    paths = hierarchy.get("paths") if isinstance(hierarchy, Mapping) else None
    if isinstance(paths, list) and paths and isinstance(paths[0], list):
        for ident in paths[0]:
            if isinstance(ident, str) and _ref_field(refs, ident, "url") != _TECHNOLOGIES:
                parts.append(reference_title(ident, refs))
    return BREADCRUMB_SEPARATOR.join([*parts, title])


def _page_lines(page: Mapping[str, Any], refs: References) -> Iterator[str]:
    abstract = inline_text(page.get("abstract"), refs).strip()
    if abstract:
        yield abstract
        yield ""
    summary = blocks_text(page.get("deprecationSummary"), refs)
    if summary:
        yield f"> Deprecated: {summary[0]}"
        yield from (f"> {line}" if line else ">" for line in summary[1:])
        yield ""
    for section in page.get("primaryContentSections") or []:
        if isinstance(section, Mapping):
            yield from _primary(section, refs)
    for key, heading in (("topicSections", "Topics"),
                         ("relationshipsSections", "Relationships"),
                         ("defaultImplementationsSections", "Default Implementations"),
                         ("seeAlsoSections", "See Also")):  # fmt: skip
        yield from _title_lists(page.get(key), heading, refs)
    for section in page.get("sections") or []:
        lines = list(_generic(section, refs, 0))
        if lines:
            yield from lines
            yield ""


def _primary(section: Mapping[str, Any], refs: References) -> Iterator[str]:
    kind = section.get("kind")
    if kind == "declarations":
        for declaration in section.get("declarations") or []:
            if not isinstance(declaration, Mapping):
                continue
            source = declaration_source(declaration.get("tokens"))
            languages = declaration.get("languages")
            language = languages[0] if isinstance(languages, list) and languages else ""
            if source:
                yield from (f"```{language}", source, "```", "")
    elif kind == "parameters":
        yield "## Parameters"
        yield ""
        for parameter in section.get("parameters") or []:
            if isinstance(parameter, Mapping):
                text = " ".join(blocks_text(parameter.get("content"), refs)).strip()
                yield f"- `{parameter.get('name', '')}`: {text}"
        yield ""
    elif kind == "mentions":
        yield from _title_lists([{"title": "Mentioned in",
                                  "identifiers": section.get("mentions")}], "", refs)  # fmt: skip
    elif "content" in section:
        lines = blocks_text(section.get("content"), refs)
        if lines:
            yield from lines
            yield ""
    else:
        # properties, possibleValues, restParameters, attributes, ...: named items
        title = _string(section.get("title"))
        lines = list(_generic({k: v for k, v in section.items() if k != "title"}, refs, 0))
        if lines:
            yield from ([f"## {title}", ""] if title else [])
            yield from lines
            yield ""


def _title_lists(sections: object, heading: str, refs: References) -> Iterator[str]:
    if not isinstance(sections, list) or not sections:
        return
    body: list[str] = []
    for section in sections:
        if not isinstance(section, Mapping):
            continue
        names = [reference_title(i, refs) for i in section.get("identifiers") or []
                 if isinstance(i, str)]  # fmt: skip
        if not names:
            continue
        title = _string(section.get("title"))
        level = "###" if heading else "##"
        body += ([f"{level} {title}", ""] if title else []) + [f"- {n}" for n in names] + [""]
    if body:
        yield from ([f"## {heading}", ""] if heading else [])
        yield from body


def _generic(node: object, refs: References, depth: int) -> Iterator[str]:
    """The words of a node of a shape not read above (tutorial sections, overview pages):
    titles as headings, abstracts and content as prose, referenced pages by title."""
    if depth > _MAX_GENERIC_DEPTH:
        return
    if isinstance(node, list):
        for item in node:
            if isinstance(item, str) and item.startswith("doc://"):
                yield f"- {reference_title(item, refs)}"
            else:
                yield from _generic(item, refs, depth + 1)
        return
    if not isinstance(node, Mapping):
        return
    for key in ("title", "name"):
        if _string(node.get(key)):
            yield f"### {node[key].strip()}"
    for key, value in node.items():
        if key in ("title", "name", "image", "video", "backgroundImage", "media", "kind",
                   "anchor", "type", "identifier", "url"):  # fmt: skip
            continue
        if key in ("abstract", "inlineContent"):
            text = inline_text(value, refs).strip()
            if text:
                yield text
        elif key == "content" and isinstance(value, list):
            yield from blocks_text(value, refs)
        elif isinstance(value, (list, Mapping)):
            yield from _generic(value, refs, depth + 1)


def _links(
    page: Mapping[str, Any], refs: References, identifier: str, base_url: str | None
) -> Iterator[PageLink]:
    relations: dict[str, str] = {}
    hierarchy = page.get("hierarchy")
    for path in (hierarchy.get("paths") or []) if isinstance(hierarchy, Mapping) else []:
        for ident in path if isinstance(path, list) else []:
            relations.setdefault(str(ident), "parent")
    for key, relation in (("topicSections", "topic"), ("relationshipsSections", "relationship"),
                          ("defaultImplementationsSections", "topic"),
                          ("seeAlsoSections", "see_also")):  # fmt: skip
        for section in page.get(key) or []:
            if isinstance(section, Mapping):
                for ident in section.get("identifiers") or []:
                    relations.setdefault(str(ident), relation)
    seen: set[str] = set()
    for ident, ref in refs.items():
        if ident == identifier or not isinstance(ref, Mapping) or ref.get("type") != "topic":
            continue
        url = ref.get("url")
        if not isinstance(url, str) or not url.startswith("/"):
            continue
        target = page_url(ident, url, base_url)
        if target in seen:
            continue
        seen.add(target)
        yield PageLink(target, reference_title(ident, refs), relations.get(ident, "mention"))
