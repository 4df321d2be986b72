//! Shared by the dissector tests: write frames to a pcap and read them back with tshark,
//! an implementation of every protocol here that owes nothing to this crate.
//!
//! When `QOSLAB_REQUIRE_TSHARK` is set (the README's test command sets it) a missing
//! tshark fails the test; otherwise the test says it skipped and returns.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use wire::pcap::{LinkType, Writer};

static COUNTER: AtomicUsize = AtomicUsize::new(0);

fn tshark_available() -> bool {
    let found = Command::new("tshark").arg("--version").output().is_ok();
    if !found && std::env::var_os("QOSLAB_REQUIRE_TSHARK").is_some() {
        panic!("tshark is required (QOSLAB_REQUIRE_TSHARK is set) but was not found on PATH");
    }
    if !found {
        eprintln!("tshark not found: dissector check skipped");
    }
    found
}

/// Writes `frames` to a fresh pcap file of `link` type and returns its path.
pub fn write_pcap(link: LinkType, frames: &[Vec<u8>]) -> PathBuf {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("qoslab-wire-{}-{}.pcap", std::process::id(), n));
    let file = std::fs::File::create(&path).expect("create pcap");
    let mut writer = Writer::new(std::io::BufWriter::new(file), link).expect("pcap header");
    for (i, frame) in frames.iter().enumerate() {
        writer.write_frame(i as u64 * 1_000, frame).expect("pcap record");
    }
    writer.into_inner().expect("flush pcap");
    path
}

fn run_tshark(path: &PathBuf, extra: &[&str]) -> String {
    let out = Command::new("tshark").arg("-n").arg("-r").arg(path).args(extra).output().expect("run tshark");
    assert!(out.status.success(), "tshark failed on {}: {}", path.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("tshark output is UTF-8")
}

/// Dissects `frames` and returns, per frame, the values of `fields` (tshark `-T fields`
/// names such as `ip.ttl`). A field that occurs several times in a frame comes back as
/// its occurrences joined by `,`. `options` are extra tshark arguments, e.g.
/// `["-d", "udp.port==1194,openvpn"]` or `["-o", "esp.enable_null_encryption_decode_heuristic:TRUE"]`.
/// Returns `None` when tshark is absent and not required.
pub fn fields(link: LinkType, frames: &[Vec<u8>], fields: &[&str], options: &[&str]) -> Option<Vec<Vec<String>>> {
    if !tshark_available() {
        return None;
    }
    let path = write_pcap(link, frames);
    let mut args: Vec<&str> = options.to_vec();
    args.extend(["-T", "fields", "-E", "separator=|", "-E", "occurrence=a", "-E", "aggregator=,"]);
    for f in fields {
        args.push("-e");
        args.push(f);
    }
    let text = run_tshark(&path, &args);
    let _ = std::fs::remove_file(&path);
    Some(text.lines().map(|line| line.split('|').map(str::to_owned).collect()).collect())
}

/// The full verbose dissection (`tshark -V`) of `frames`, for asserting that no layer
/// is flagged malformed or has a bad checksum. `None` when tshark is absent and not
/// required.
pub fn verbose(link: LinkType, frames: &[Vec<u8>], options: &[&str]) -> Option<String> {
    if !tshark_available() {
        return None;
    }
    let path = write_pcap(link, frames);
    let mut args: Vec<&str> = options.to_vec();
    args.push("-V");
    let text = run_tshark(&path, &args);
    let _ = std::fs::remove_file(&path);
    Some(text)
}

/// Asserts that a verbose dissection has no expert error: no malformed packet, no
/// bad checksum, no exception.
pub fn assert_clean(dissection: &str) {
    for bad in ["Malformed Packet", "[Checksum: Bad]", "Bad checksum", "Exception occurred", "[Expert Info (Error"] {
        assert!(!dissection.contains(bad), "tshark reports {bad:?}:\n{dissection}");
    }
}
