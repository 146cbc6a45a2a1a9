#!/bin/sh
# Usage: scripts/make_venv.sh VENV [PYTHON]
#
# Makes sure VENV is a virtual environment of Python 3.11 or newer. PYTHON, when given, is
# the interpreter to use; otherwise the first of python3.13, python3.12, python3.11 and
# python3 on PATH that is new enough. A VENV left by an older (or since removed) Python is
# replaced rather than reused: pip would only fail on requires-python inside it. With no
# suitable Python, it stops before creating anything and says, in one line, what to install.
set -u

venv=${1:?usage: scripts/make_venv.sh VENV [PYTHON]}
wanted=${2:-}

# "3.12" for an interpreter that runs, nothing for one that does not (a pyenv shim of a
# version that is not selected, a dangling link).
version_of() {
    "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null
}

new_enough() {
    version=$(version_of "$1")
    [ -n "$version" ] && [ "${version%%.*}" -eq 3 ] && [ "${version#*.}" -ge 11 ]
}

if [ -e "$venv/bin/python" ] || [ -e "$venv/pyvenv.cfg" ]; then
    if new_enough "$venv/bin/python"; then
        exit 0
    fi
    found=$(version_of "$venv/bin/python")
    echo "$venv was made by Python ${found:-that no longer runs}; replacing it" >&2
    rm -rf "$venv"
fi

if [ -n "$wanted" ]; then
    candidates=$wanted
else
    candidates="python3.13 python3.12 python3.11 python3"
fi
seen=""
for candidate in $candidates; do
    command -v "$candidate" >/dev/null 2>&1 || continue
    if new_enough "$candidate"; then
        echo "creating $venv with $(command -v "$candidate") (Python $version)" >&2
        exec "$candidate" -m venv "$venv"
    fi
    [ -n "$version" ] && seen="$seen, $candidate $version"
done

[ -n "$seen" ] && seen="only ${seen#, }" || seen="none"
echo "rag-retrieve needs Python 3.11 or newer, and found $seen." \
    "Install one: brew install python@3.12 (macOS), apt install python3.11 (Debian, Ubuntu)" \
    "or uv python install 3.12; or name one: make PYTHON=/path/to/python3.12" >&2
exit 1
