"""A package from a registry, pinned by hash (stdlib and the `npm` client only): the bench's
corpora of sources and documentation nobody here wrote are fetched through here, so that each
is the exact tarball its pin names."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import tarfile
from pathlib import Path


def npm_fetch(work: Path, package: str, version: str, integrity: str) -> Path:
    """The npm package's contents under `work`/package, from `npm pack package@version`
    once the tarball's sha512 matches `integrity` (the registry's `dist.integrity`)."""
    root = work / "package"
    if root.is_dir():
        return root
    subprocess.run(
        ["npm", "pack", f"{package}@{version}", "--pack-destination", str(work), "--silent"],
        check=True,
        capture_output=True,
    )
    tarball = work / f"{package.lstrip('@').replace('/', '-')}-{version}.tgz"
    return unpack_checked(tarball, integrity, work)


def unpack_checked(tarball: Path, integrity: str, work: Path) -> Path:
    """`tarball` extracted into `work` (npm's tarballs hold one top folder, `package`), only
    when its sha512 is `integrity`; otherwise nothing is extracted and the run stops."""
    digest = base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
    if f"sha512-{digest}" != integrity:
        raise SystemExit(f"{tarball}: sha512-{digest} is not the pinned {integrity}")
    with tarfile.open(tarball) as archive:
        archive.extractall(work, filter="data")
    return work / "package"
