#!/usr/bin/env bash
# Installs everything qoslab needs on a fresh Debian machine with Python 3.11+ and Rust:
# the Debian tools the tests cross-check against, a virtualenv in .venv, and qoslab
# itself (Rust core built by maturin) with its test extras. Safe to run again: each step
# is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

# Debian packages: tshark is the independent dissector the wire tests compare with;
# chromium is the real headless browser the report tests load report.html in (driven by
# playwright from PyPI; playwright's own browser downloads are never used).
debian_packages=(tshark chromium)
missing=()
for pkg in "${debian_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
    if [[ $(id -u) -ne 0 ]]; then
        say "need root to install: ${missing[*]} (or install them yourself)"; exit 1
    fi
    say "apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

command -v cargo >/dev/null || { say "Rust (cargo) is required: https://rustup.rs"; exit 1; }

python=${PYTHON:-python3}
if [[ ! -x .venv/bin/python ]]; then
    say "creating .venv with $($python --version)"
    "$python" -m venv .venv
fi
say "installing qoslab into .venv (builds the Rust core)"
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[test]"
