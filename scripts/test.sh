#!/usr/bin/env bash
# Installs qoslab with its test extras, checks the code habits (scripts/lint.sh), then
# runs every test: the Rust unit and integration tests (cargo test) and the Python tests
# (pytest). Fails if any fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
# The code habits (rustfmt, clippy -D warnings, ruff, mypy --strict) before the tests.
bash scripts/lint.sh
# The wire crate's dissector tests run tshark; make its absence an error, not a skip.
export QOSLAB_REQUIRE_TSHARK=1
cargo test --workspace --quiet
.venv/bin/python -m pytest -q "$@"
