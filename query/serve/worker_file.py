"""How a client finds the worker serving a store, and knows it is ours: `<store>/worker.json`.

A fixed port is no address: on a shared machine another user may hold 127.0.0.1:8765 and
collect the bearer token a client sends there. So a worker serving a store directory
writes, once bound, a file only its user may read (mode 0600, in a folder that user owns):
its URL, its pid, the store it serves and a secret drawn for this run. A client reads it,
refusing a file or folder another user owns or a file others may read or write, and before
it sends a token or a question asks the worker to prove that it holds the secret: it sends
a random challenge to `GET /live?challenge=...` (the route the guard leaves open) and the
answer must be HMAC-SHA256(secret, challenge + store). A process of another user cannot read
the file, so it cannot answer; a relayed challenge is no help either, since every worker
draws its own secret. The file goes with a clean shutdown; one a dead worker left behind
fails the proof and the next worker replaces it.

Light to import (the standard library and the guard's path names): `python -m query` reads
this before every call a worker answers.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
import urllib.parse
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from query.serve.guard import LIVENESS_PATH

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

FILE_NAME = "worker.json"
CHALLENGE = "challenge"  # the query parameter of GET /live that asks for the proof
_CHALLENGE_BYTES = 16
_MAX_CHALLENGE = 128
_MAX_FILE_BYTES = 4096
_OTHERS = stat.S_IRWXG | stat.S_IRWXO


class WorkerFileRefused(Exception):
    """A worker file that must not be trusted: another user's, or one others may read or
    write. The message names it and says why."""


@dataclass(frozen=True)
class WorkerFile:
    """What a worker tells its clients: where it listens, its pid, the absolute store
    directory it serves, and its secret for this run."""

    url: str
    pid: int
    store: str
    secret: str

    @classmethod
    def drawn(cls, url: str, store: str) -> WorkerFile:
        """This process's file for a worker on `url` serving `store`, with a fresh secret."""
        return cls(url=url, pid=os.getpid(), store=store, secret=secrets.token_hex(32))

    def proof(self, challenge: str) -> str:
        """The answer to `challenge` that only a holder of the secret can give."""
        message = f"{challenge}\n{self.store}".encode()
        return hmac.new(self.secret.encode(), message, hashlib.sha256).hexdigest()

    def proves(self, challenge: str, answer: object) -> bool:
        """Whether `answer` is the proof for `challenge` (compared in constant time)."""
        return isinstance(answer, str) and hmac.compare_digest(
            answer.encode(), self.proof(challenge).encode()
        )


def new_challenge() -> str:
    return secrets.token_hex(_CHALLENGE_BYTES)


def acceptable_challenge(challenge: str) -> bool:
    """A challenge a worker answers: short hex, so the proof is never computed on junk."""
    return 0 < len(challenge) <= _MAX_CHALLENGE and all(c in "0123456789abcdef" for c in challenge)


def path_in(directory: str | Path) -> Path:
    return Path(directory) / FILE_NAME


def write(worker: WorkerFile) -> Path:
    """Write `worker`'s file in its store directory, replacing any other (atomically, mode
    0600 from the start, never through a link); WorkerFileRefused when the directory is
    another user's."""
    directory = Path(worker.store)
    _check_owner(directory, os.stat(directory), "folder")
    target = path_in(directory)
    temporary = directory / f".{FILE_NAME}.{os.getpid()}.{secrets.token_hex(4)}"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            json.dump(asdict(worker), out)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return target


def remove(worker: WorkerFile) -> None:
    """Remove `worker`'s file, unless another worker has replaced it since."""
    try:
        current = read(worker.store)
    except WorkerFileRefused:
        return
    if current is not None and hmac.compare_digest(current.secret, worker.secret):
        path_in(worker.store).unlink(missing_ok=True)


def read(directory: str | Path) -> WorkerFile | None:
    """The worker file in the store `directory`; None when there is none (or it is not one
    of ours); WorkerFileRefused when it must not be trusted."""
    path = path_in(directory)
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:  # a symbolic link (ELOOP), or no permission
        raise WorkerFileRefused(f"{path}: {exc.strerror or exc}") from None
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise WorkerFileRefused(f"{path}: not a regular file")
        _check_owner(path, info, "file")
        if info.st_mode & _OTHERS:
            raise WorkerFileRefused(
                f"{path}: others may read or write it (mode {stat.S_IMODE(info.st_mode):04o}); "
                "a worker writes it 0600"
            )
        # The folder's owner is not checked here: whoever may write in it can replace this
        # file only with one of their own (refused above) or delete it, never forge ours.
        raw = handle.read(_MAX_FILE_BYTES)
    try:
        fields = json.loads(raw)
        worker = WorkerFile(
            url=str(fields["url"]),
            pid=int(fields["pid"]),
            store=str(fields["store"]),
            secret=str(fields["secret"]),
        )
    except (ValueError, TypeError, KeyError):
        return None
    return worker if worker.url and worker.secret else None


def _check_owner(path: Path, info: os.stat_result, what: str) -> None:
    if info.st_uid != os.getuid():
        raise WorkerFileRefused(f"{path}: the {what} belongs to another user (uid {info.st_uid})")


class Proving:
    """ASGI middleware: answers `GET /live?challenge=HEX` with the worker file's proof, in
    front of whatever is served (the worker's routes, or /mcp beside them), as the guard is."""

    def __init__(self, app: ASGIApp, advert: WorkerFile) -> None:
        self.app = app
        self.advert = advert

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        challenge = _challenge(scope)
        if challenge is None:
            await self.app(scope, receive, send)
            return
        # No store path: the route is open to anyone on loopback, token or not.
        body = json.dumps({"status": "ok", "proof": self.advert.proof(challenge)}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _challenge(scope: Scope) -> str | None:
    """The challenge of a `GET /live?challenge=HEX`; None for any other request."""
    if scope["type"] != "http" or scope["method"] != "GET" or scope["path"] != LIVENESS_PATH:
        return None
    query = urllib.parse.parse_qs(scope.get("query_string", b"").decode("latin-1"))
    given = query.get(CHALLENGE, [""])[-1]
    return given if acceptable_challenge(given) else None
