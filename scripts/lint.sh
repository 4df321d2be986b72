#!/usr/bin/env bash
# The project's code habits (issue 16), run by scripts/test.sh after the install: Rust
# formatted by rustfmt.toml and clippy-clean with warnings as errors; Python linted and
# formatted by ruff and type-checked by mypy --strict (settings in pyproject.toml).
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf 'lint: %s\n' "$*"; }
for tool in rustfmt clippy; do
    if ! cargo "${tool/rustfmt/fmt}" --version >/dev/null 2>&1 && command -v rustup >/dev/null; then
        say "rustup component add $tool"
        rustup component add "$tool" >/dev/null
    fi
done
say "cargo fmt --check"
cargo fmt --all --check
say "cargo clippy -D warnings"
cargo clippy --workspace --all-targets --quiet -- -D warnings
say "ruff check, ruff format --check"
.venv/bin/ruff check --quiet python tests benchmarks scripts
.venv/bin/ruff format --check --quiet python tests benchmarks scripts
say "mypy --strict (pyproject.toml: python/qoslab)"
.venv/bin/mypy
