"""A local stand-in for the Hugging Face Hub's file protocol, which huggingface_hub speaks
(its file_download.py): `HEAD|GET /{repo}/resolve/{revision}/{path}` answers with
`X-Repo-Commit` and an `ETag`; a large (LFS) file answers 302 with `Location` on another host
(the CDN, here `localhost` against `127.0.0.1`) and `X-Linked-Etag` / `X-Linked-Size`, and
the CDN serves the bytes with `Content-Length`. Unknown revisions and files get the Hub's
404s with `X-Error-Code`. It serves one repository's files at one revision.
"""

from __future__ import annotations

import hashlib
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

LFS_FILES = {"model.safetensors"}


def _git_blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def hub_app(repo_id: str, revision: str, files: dict[str, bytes], cdn: str) -> Starlette:
    """The Hub's resolve endpoint for `files` of `repo_id` at `revision`; LFS bytes at `cdn`."""
    by_sha = {hashlib.sha256(data).hexdigest(): data for data in files.values()}

    def body(request: Request, data: bytes) -> bytes:
        return b"" if request.method == "HEAD" else data

    async def resolve(request: Request) -> Response:
        repo = f"{request.path_params['org']}/{request.path_params['name']}"
        path = request.path_params["path"]
        if repo != repo_id:
            return Response(status_code=404, headers={"X-Error-Code": "RepoNotFound"})
        if request.path_params["revision"] != revision:
            return Response(status_code=404, headers={"X-Error-Code": "RevisionNotFound"})
        data = files.get(path)
        commit = {"X-Repo-Commit": revision}
        if data is None:
            return Response(status_code=404, headers={**commit, "X-Error-Code": "EntryNotFound"})
        if path in LFS_FILES:
            sha = hashlib.sha256(data).hexdigest()
            return Response(
                status_code=302,
                headers={
                    **commit,
                    "Location": f"{cdn}/cdn/{sha}",
                    "ETag": f'"{_git_blob_oid(data)}"',
                    "X-Linked-Etag": f'"{sha}"',
                    "X-Linked-Size": str(len(data)),
                },
            )
        headers = {**commit, "ETag": f'"{_git_blob_oid(data)}"', "Content-Length": str(len(data))}
        return Response(body(request, data), headers=headers)

    async def cdn_file(request: Request) -> Response:
        data = by_sha.get(request.path_params["sha"])
        if data is None:
            return Response(status_code=404)
        headers = {"ETag": f'"{request.path_params["sha"]}"', "Content-Length": str(len(data))}
        return Response(body(request, data), headers=headers)

    return Starlette(
        routes=[
            Route("/{org}/{name}/resolve/{revision}/{path:path}", resolve, methods=["GET", "HEAD"]),
            Route("/cdn/{sha}", cdn_file, methods=["GET", "HEAD"]),
        ]
    )


@contextmanager
def serve_hub(repo_id: str, revision: str, files: dict[str, bytes]) -> Iterator[str]:
    """Serve `files` (path -> bytes) as the Hub would, in a thread; yields the endpoint URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = hub_app(repo_id, revision, files, cdn=f"http://localhost:{port}")
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
