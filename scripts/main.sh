#!/usr/bin/env bash
# Installs qoslab, then runs its main job: every seed's experiment re-run in the simulator
# and set beside the paper's numbers, into results/ (report.html, summary.json, figures/,
# data/). Running it again reuses the finished points in results/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
.venv/bin/qoslab reproduce --out results/
