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
# playwright from PyPI; playwright's own browser downloads are never used); graphviz
# (`dot`, `neato`) lays out the set-up drawings of the report; iperf3 is the reference the
# udp.flow records' iperf3-shaped block is checked against (tests/test_output_schema.py)
# and the emulation backend's load generator; nftables gives the emulation backend's NAT
# nodes their masquerade and conntrack rules (python/qoslab/backends/emu/roles.py),
# iputils-ping its ping tests, openvpn the real OpenVPN its tunnels run
# (python/qoslab/backends/emu/openvpn.py), pppoe (rp-pppoe) the real PPPoE peer the
# user-space PPPoE ends' discovery is checked against (tests/test_emu_tunnels.py), and
# parprouted the proxy-ARP bridging daemon qoslab's own L3F daemon is compared with
# (tests/test_emu_l3f_parprouted.py).
debian_packages=(tshark chromium graphviz iperf3 nftables iputils-ping openvpn pppoe parprouted)
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
.venv/bin/python -m pip install -q --upgrade pip

# The Rust core is built profile-guided (PGO), as pydantic-core's release wheels are: an
# instrumented build counts which branches the per-packet code takes while
# scripts/pgo_train.py runs every example scenario (never the benchmarks), and the final
# build inlines and lays out the code by those counts. The compiler changes no arithmetic:
# results are the same byte for byte; the per-packet path runs fewer instructions (see
# benchmarks/README.md). QOSLAB_PGO=0 builds a plain release core instead. llvm-profdata
# must come from the LLVM of this rustc (rustup's llvm-tools component).
so=python/qoslab/_core.abi3.so
build_stamp() {  # the sources a build of the core depends on, and the compiler
    { rustc -vV; echo "pgo=${QOSLAB_PGO:-1}"
      find Cargo.toml Cargo.lock pyproject.toml crates benchmarks scripts/pgo_train.py python/qoslab/examples \
          -path crates/wire/fuzz -prune -o -type f -print | LC_ALL=C sort | xargs sha256sum; } | sha256sum | cut -d' ' -f1
}
stamp_file=.venv/.qoslab-core-build
# The sources' stamp is taken before the build, so that an edit made while the core
# builds leaves the stamp stale and the next install builds again.
sources_stamp=$(build_stamp)
if [[ -f $stamp_file && -f $so && "$(cat "$stamp_file")" == "$sources_stamp $(sha256sum < "$so" | cut -d' ' -f1)" ]]; then
    say "qoslab's core is up to date in .venv"
    exit 0
fi
profdata=
if [[ ${QOSLAB_PGO:-1} != 0 ]]; then
    sysroot_bin="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin"
    if [[ ! -x $sysroot_bin/llvm-profdata ]] && command -v rustup >/dev/null; then
        say "rustup component add llvm-tools (llvm-profdata, for the profile-guided build)"
        rustup component add llvm-tools >/dev/null 2>&1 || true
    fi
    if [[ -x $sysroot_bin/llvm-profdata ]]; then
        profdata=$sysroot_bin/llvm-profdata
    else
        say "no llvm-profdata for this rustc (rustup component add llvm-tools): building the core without PGO"
    fi
fi
if [[ -n $profdata ]]; then
    data="$PWD/target/pgo-data"
    rm -rf "$data" && mkdir -p "$data"
    say "installing qoslab into .venv: instrumented build of the Rust core (PGO, 1 of 2)"
    RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$data" CARGO_TARGET_DIR="$PWD/target/pgo-generate" \
        .venv/bin/python -m pip install -q -e ".[test]"
    rm -f "$data"/*.profraw  # the build's own build scripts leave profiles too
    say "training run: every example scenario (scripts/pgo_train.py)"
    .venv/bin/python scripts/pgo_train.py
    "$profdata" merge -o "$data/merged.profdata" "$data"/*.profraw
    say "installing qoslab into .venv: the Rust core built by the profile (PGO, 2 of 2)"
    QOSLAB_CORE_BUILD=pgo RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$data/merged.profdata" CARGO_TARGET_DIR="$PWD/target/pgo-use" \
        .venv/bin/python -m pip install -q --no-deps -e .
else
    say "installing qoslab into .venv (builds the Rust core)"
    .venv/bin/python -m pip install -q -e ".[test]"
fi
echo "$sources_stamp $(sha256sum < "$so" | cut -d' ' -f1)" > "$stamp_file"
