#!/usr/bin/env bash
# Runs the cargo-fuzz targets of crates/wire/fuzz (one per wire parser, and the
# simulator's configuration decoder) for a set time each, and prints per target the
# executions, the seconds run and the crashes found. Not part of the test suite: it
# needs a nightly compiler and takes as long as you give it.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET [TARGET...]]     (default 60 s, every target)
#
# Environment: QOSLAB_FUZZ_DIR, where the growing corpora, crash inputs and logs go
# (default /tmp/qoslab-fuzz; the checked-in seeds, crates/wire/fuzz/seeds/<target>,
# are read, never written); QOSLAB_FUZZ_JOBS, targets run at once (default 1);
# QOSLAB_FUZZ_SANITIZER (default none: the crate forbids unsafe code, so address
# sanitizing finds little and halves the speed).
#
# Builds with debug assertions (cargo fuzz -a), so an arithmetic overflow is a crash
# too: a release build would wrap silently.
set -euo pipefail
cd "$(dirname "$0")/../crates/wire/fuzz"

seconds=${1:-60}
shift || true
work=${QOSLAB_FUZZ_DIR:-/tmp/qoslab-fuzz}
jobs=${QOSLAB_FUZZ_JOBS:-1}
sanitizer=${QOSLAB_FUZZ_SANITIZER:-none}

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

rustup run nightly rustc --version >/dev/null 2>&1 || { say "needs a nightly Rust: rustup toolchain install nightly"; exit 1; }
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    say "cargo install cargo-fuzz (from crates.io)"
    cargo install cargo-fuzz --locked
fi

targets=("$@")
if ((${#targets[@]} == 0)); then
    mapfile -t targets < <(cargo +nightly fuzz list)
fi
say "building the targets (release, debug assertions, sanitizer $sanitizer)"
cargo +nightly fuzz build -a -s "$sanitizer" >&2
# Run the built binaries themselves (not `cargo fuzz run`, which rebuilds first): the
# sources may change while the fuzzers run.
bin="target/$(rustc +nightly -vV | sed -n 's/^host: //p')/release"

run_one() {
    local t=$1
    mkdir -p "$work/corpus/$t" "$work/artifacts/$t"
    # The config target's inputs are whole lowered scenarios (several kB of JSON).
    local max_len=4096
    [[ $t == config ]] && max_len=262144
    local start=$SECONDS rc=0
    "$bin/$t" "$work/corpus/$t" "seeds/$t" \
        -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$work/artifacts/$t/" -print_final_stats=1 >"$work/$t.log" 2>&1 || rc=$?
    echo "$((SECONDS - start)) $rc" >"$work/$t.status"
}

mkdir -p "$work"
running=0
for t in "${targets[@]}"; do
    say "fuzzing $t for ${seconds} s (log $work/$t.log)"
    run_one "$t" &
    running=$((running + 1))
    if ((running >= jobs)); then
        wait -n || true
        running=$((running - 1))
    fi
done
wait || true

printf '%-14s %14s %8s %8s  %s\n' target executions seconds crashes "first crash input"
total_execs=0 total_secs=0 total_crashes=0
for t in "${targets[@]}"; do
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log" | tail -1)
    read -r secs rc <"$work/$t.status"
    crashes=$(find "$work/artifacts/$t" -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | wc -l)
    first=$(find "$work/artifacts/$t" -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' \) | head -1)
    printf '%-14s %14s %8s %8s  %s\n' "$t" "${execs:-?}" "$secs" "$crashes" "$first"
    total_execs=$((total_execs + ${execs:-0})) total_secs=$((total_secs + secs)) total_crashes=$((total_crashes + crashes))
done
printf '%-14s %14s %8s %8s\n' total "$total_execs" "$total_secs" "$total_crashes"
((total_crashes == 0))
