"""The corpora the Prefect deployments maintain, read from a TOML file and checked on load.

Paths in the file are relative to the file's own folder, so the config means the same thing
whatever directory `python -m flows.serve` is started from.
"""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from prefect.client.schemas.schedules import CronSchedule
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from chunkers.model import Domain
from chunkers.sources.web.crawl import DEFAULT_MAX_PAGES
from chunkers.sources.web.site import DocSite, doc_site
from loaders.target import IngestTarget

# Corpus names end up in Prefect artifact keys (lowercase letters, digits and dashes).
CorpusName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]*$")]
# The index stores' own rule for names.
IndexName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")]
GLOB_CHARS = "*?["


class CorporaError(ValueError):
    """The corpora file cannot be used; the message names the file and the key at fault."""


class Corpus(BaseModel):
    """One corpus: where its files are, how they are tagged, which index they feed, and when
    it is refreshed and re-verified."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: CorpusName
    kind: Literal["files", "docc"] = Field(
        "files",
        description="files: `paths` on this machine; docc: DocC documentation `roots` on the "
        "web, fetched into the sources folder (rag-retrieve fetch) and kept fresh by "
        "conditional requests",
    )
    paths: list[str] = Field(default_factory=list, description="files, directories or globs")
    roots: list[str] = Field(
        default_factory=list,
        description="kind docc: documentation roots (https://developer.apple.com/"
        "documentation/swiftdata, https://host/path/documentation/<module>)",
    )
    max_pages: int = Field(DEFAULT_MAX_PAGES, ge=1, description="kind docc: pages per root")
    concurrency: int = Field(4, ge=1, description="kind docc: requests in flight at most")
    rate: float = Field(2.0, gt=0, description="kind docc: request starts per second at most")
    source: str | None = Field(None, description="source of records that do not name one")
    domain: Domain | None = Field(None, description="domain of records that do not name one")
    index: IndexName = "default"
    refresh_schedule: str = Field(description="cron expression of the incremental refresh")
    reverify_schedule: str | None = Field(
        None, description="cron expression of the freshness re-verification (none: on demand)"
    )
    timezone: str = Field("UTC", description="IANA time zone the cron expressions are in")
    freshness_days: int = Field(30, ge=1, description="re-verify documents older than this")

    @model_validator(mode="after")
    def _kind_has_its_sources(self) -> Self:
        if self.kind == "files" and not self.paths:
            raise ValueError("paths: a corpus of kind files names at least one path")
        if self.kind == "docc":
            if not self.roots or self.paths:
                raise ValueError("a corpus of kind docc names its roots (URLs), not paths")
            for root in self.roots:
                doc_site(root)  # SiteError is a ValueError: the root's key is named
        return self

    def sites(self) -> list[DocSite]:
        """A docc corpus's documentation roots."""
        return [doc_site(root) for root in self.roots]

    def ingests(self, sources: Path) -> list[tuple[list[str], IngestTarget]]:
        """What refreshing the corpus ingests: its paths, or for a docc corpus each site's
        folder of fetched pages, with the URL its pages open at."""
        if self.kind == "files":
            return [(list(self.paths), self.target())]
        runs = []
        for site in dict.fromkeys(self.sites()):
            base = None if site.is_apple else site.base_url
            runs.append(
                ([str(site.site_folder(sources))], replace(self.target(), docc_base_url=base))
            )
        return runs

    @field_validator("refresh_schedule", "reverify_schedule")
    @classmethod
    def _cron(cls, value: str | None) -> str | None:
        # The validator Prefect's server applies, so a config that loads also deploys.
        if value is not None:
            _prefect_check(cron=value)
        return value

    @field_validator("timezone")
    @classmethod
    def _timezone(cls, value: str) -> str:
        _prefect_check(cron="0 0 * * *", timezone=value)
        return value

    @field_validator("paths")
    @classmethod
    def _paths_exist(cls, paths: list[str], info: ValidationInfo) -> list[str]:
        base = Path((info.context or {}).get("base", "."))
        resolved, missing = [], []
        for raw in paths:
            path = Path(raw) if Path(raw).is_absolute() else base / raw
            # A glob may match nothing today and files tomorrow; its fixed folder must exist.
            fixed = _fixed_prefix(path) if any(ch in raw for ch in GLOB_CHARS) else path
            if not fixed.exists():
                missing.append(f"{raw!r} ({fixed})")
            resolved.append(str(path))
        if missing:
            raise ValueError(f"no such file or directory: {', '.join(missing)}")
        return resolved

    def target(self) -> IngestTarget:
        """Where and how this corpus is ingested."""
        return IngestTarget(self.index, domain=self.domain, source=self.source)

    def schedules(self) -> list[tuple[str, str]]:
        """(flow, cron) pairs this corpus is scheduled on."""
        pairs = [("refresh", self.refresh_schedule)]
        if self.reverify_schedule:
            pairs.append(("reverify", self.reverify_schedule))
        return pairs


class CorporaFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    corpora: dict[str, Corpus] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _name_from_key(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("corpora"), dict):
            tables = data["corpora"]
            data = {
                **data,
                "corpora": {
                    key: {"name": key, **value} if isinstance(value, dict) else value
                    for key, value in tables.items()
                },
            }
        return data


def load_corpora(path: str | Path) -> dict[str, Corpus]:
    """The corpora of a TOML file by name; CorporaError names the file and key at fault."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CorporaError(f"{path}: no such corpora file (set RAG_CORPORA_FILE)") from None
    except OSError as exc:
        raise CorporaError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise CorporaError(f"{path}: invalid TOML: {exc}") from None
    for key, value in data.get("corpora", {}).items() if isinstance(data, dict) else ():
        if isinstance(value, dict) and "name" in value:
            raise CorporaError(f"{path}: corpora.{key}.name: unknown key (the table name is it)")
    try:
        parsed = CorporaFile.model_validate(data, context={"base": path.resolve().parent})
    except ValidationError as exc:
        raise CorporaError(_describe(path, exc)) from None
    return dict(parsed.corpora)


def select(corpora: dict[str, Corpus], name: str | None, path: Path) -> list[Corpus]:
    """One corpus by name, or all of them for None."""
    if name is None:
        return list(corpora.values())
    if name not in corpora:
        known = ", ".join(sorted(corpora)) or "none"
        raise CorporaError(f"{path}: no corpus {name!r} (configured: {known})")
    return [corpora[name]]


def _describe(path: Path, exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        # The model's own name field comes from the table key, never from the file.
        loc = ".".join(str(part) for part in error["loc"] if part != "name")
        if error["type"] == "extra_forbidden":
            allowed = _allowed_keys(error["loc"])
            problems.append(f"{path}: {loc}: unknown key (allowed: {allowed})")
        elif error["type"] == "string_pattern_mismatch" and error["loc"][-1] == "name":
            problems.append(
                f"{path}: {loc}: corpus names use lowercase letters, digits and '-' "
                "(they become Prefect artifact keys)"
            )
        else:
            message = error["msg"].removeprefix("Value error, ")
            problems.append(f"{path}: {loc}: {message}")
    return "\n".join(problems)


def _allowed_keys(loc: tuple[Any, ...]) -> str:
    model = Corpus if len(loc) > 2 else CorporaFile
    return ", ".join(f for f in model.model_fields if f != "name")


def _prefect_check(**fields: Any) -> None:
    try:
        CronSchedule(**fields)
    except ValidationError as exc:
        messages = (e["msg"].removeprefix("Value error, ") for e in exc.errors())
        raise ValueError("; ".join(messages)) from None


def _fixed_prefix(path: Path) -> Path:
    parts = []
    for part in path.parts:
        if any(ch in part for ch in GLOB_CHARS):
            break
        parts.append(part)
    return Path(*parts) if parts else Path(".")
