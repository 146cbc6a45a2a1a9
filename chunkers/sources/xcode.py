"""The guides Xcode ships for its coding assistant, found where Xcode is installed: the
`AdditionalDocumentation` folder of each Xcode (`xcode-select -p`'s, and every
`/Applications/Xcode*.app`), read as Apple's pages (chunkers/sources/published/apple_prose.py).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from chunkers.sources.discovery import SourceError

GUIDES = Path(
    "Contents/PlugIns/IDEIntelligenceChat.framework/Versions/A/Resources/AdditionalDocumentation"
)
APPLICATIONS = Path("/Applications")


def xcode_guide_folders(applications: Path | None = None) -> list[Path]:
    """The guide folders of the installed Xcodes, the selected one first; a SourceError (a
    usage error) saying where it looked when there is none."""
    applications = APPLICATIONS if applications is None else applications
    apps: list[Path] = []
    selected = _selected_xcode()
    if selected is not None:
        apps.append(selected)
    apps += sorted(applications.glob("Xcode*.app")) if applications.is_dir() else []
    folders = [app / GUIDES for app in dict.fromkeys(apps) if (app / GUIDES).is_dir()]
    if not folders:
        looked = ", ".join(str(a) for a in dict.fromkeys(apps)) or f"{applications}/Xcode*.app"
        raise SourceError(
            f"--xcode-docs: no Xcode with its guides was found (looked in {looked}); "
            "Xcode 26 or later ships them, on macOS"
        )
    return folders


def _selected_xcode() -> Path | None:
    """The Xcode `xcode-select -p` names (its Developer folder is inside the app)."""
    tool = shutil.which("xcode-select")
    if tool is None:
        return None
    try:
        done = subprocess.run([tool, "-p"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    developer = Path(done.stdout.strip())
    app = next((p for p in developer.parents if p.suffix == ".app"), None)
    return app if done.returncode == 0 else None
