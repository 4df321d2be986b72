//! TCP over CLIP through one ATM switch on OC-3 (the configuration of `qoslab bench`'s
//! `atm_clip_tcp`, python/qoslab/bench.py): events per second, and allocations per cell.
//!
//! A counting global allocator counts every allocation of the run. Two runs, of 5 and
//! 10 simulated seconds, give the allocations per *additional* cell (the set-up's own
//! allocations cancel out), the figure the issue asks for: cells are plain values in
//! the engine and in the switches' queues, so it must be far below one; what remains is
//! per frame (the TCP segment and its IP packet, one of each per 192 cells at MTU 9180).
//!
//! Run: `cargo bench -p qoslab-benchmarks --bench atm` (target: 5 million events per
//! second on one core; about 3.5 million cells per 10 s each way).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The SimConfig JSON of `python/qoslab/bench.py::atm_clip_config` for `seconds` of
/// traffic after 0.25 s.
fn config(seconds: u64) -> String {
    let stop = 250_000_000 + seconds * 1_000_000_000;
    let cpu = r#"{"profile": "none", "hz": 0, "queue_limit": 1000, "cycles": {"per_rx_packet": 0, "per_tx_packet": 0, "per_byte_copied": 0.0, "per_bridge_lookup": 0, "per_route_lookup": 0, "per_nat_translation": 0, "per_byte_rc4": 0.0, "per_byte_aes": 0.0}}"#;
    let node = |name: &str, role: &str, ports: &str| {
        format!(
            r#"{{"name": "{name}", "role": "{role}", "ports": [{ports}], "cpu": {cpu}, "arp_timeout_ns": 120000000000, "reassembly_timeout_ns": 30000000000}}"#
        )
    };
    let port = |name: &str, mac: u8, addr: &str| {
        format!(r#"{{"name": "{name}", "mac": [2, 0, 0, 0, 0, {mac}], "mtu": 9180, "point_to_point": true {addr}}}"#)
    };
    let link = |name: &str, a: (u32, u16), b: (u32, u16)| {
        format!(
            r#"{{"type": "atm", "name": "{name}", "a": {{"node": {}, "port": {}}}, "b": {{"node": {}, "port": {}}}, "phy": "oc3", "encapsulation": "llc-snap", "pvcs": [{{"vpi": 0, "vci": 100}}]}}"#,
            a.0, a.1, b.0, b.1
        )
    };
    format!(
        r#"{{"schema": {schema}, "seed": 1, "duration_ns": {stop}, "capture": false,
        "nodes": [{}, {}, {}],
        "links": [{}, {}],
        "flows": [{{"kind": "tcp", "id": 1, "from": 0, "to": "10.3.0.2", "dst_port": 5001, "start_ns": 250000000, "stop_ns": {stop},
                   "tcp": {{"congestion": "newreno", "send_buffer": 65536, "recv_buffer": 65536, "max_window": 65536}}}}],
        "atm": {{"switches": [{{"node": 2, "cross_connects": [{{"a": {{"port": 0, "vpi": 0, "vci": 100}}, "b": {{"port": 1, "vpi": 0, "vci": 100}}}}]}}]}}}}"#,
        node("ws1", "host", &port("atm0", 1, r#", "address": ["10.3.0.1", 24]"#)),
        node("ws2", "host", &port("atm0", 2, r#", "address": ["10.3.0.2", 24]"#)),
        node("sw", "atm-switch", &format!("{}, {}", port("atm0", 3, ""), port("atm1", 4, ""))),
        link("l1", (0, 0), (2, 0)),
        link("l2", (2, 1), (1, 0)),
        schema = sim::config::PLAN_SCHEMA,
    )
}

struct Run {
    events: u64,
    cells: u64,
    frames: u64,
    allocations: u64,
    wall_s: f64,
    mbps: f64,
}

fn run(seconds: u64) -> Run {
    let config: sim::config::SimConfig = serde_json::from_str(&config(seconds)).expect("the benchmark's configuration");
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let start = Instant::now();
    let results = sim::simulate(config).expect("the run");
    let wall_s = start.elapsed().as_secs_f64();
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
    let atm = results.atm.as_ref().expect("ATM counters");
    Run {
        events: results.events,
        cells: atm.cells.iter().map(|c| c[0] + c[1]).sum(),
        frames: atm.frames_sent,
        allocations,
        wall_s,
        mbps: results.flows[0].throughput_bps / 1e6,
    }
}

fn main() {
    let short = run(5);
    let long = run(10);
    let per_cell = (long.allocations - short.allocations) as f64 / (long.cells - short.cells) as f64;
    let per_frame = (long.allocations - short.allocations) as f64 / (long.frames - short.frames) as f64;
    eprintln!(
        "atm_clip_tcp 10 s: {} events in {:.3} s = {:.2} M events/s; {} cells ({:.2} M cells/s of wall time), {:.1} Mb/s of TCP; {:.4} allocations per cell, {:.1} per AAL5 frame",
        long.events,
        long.wall_s,
        long.events as f64 / long.wall_s / 1e6,
        long.cells,
        long.cells as f64 / long.wall_s / 1e6,
        long.mbps,
        per_cell,
        per_frame
    );
    println!(
        "{{\"bench\": \"atm_clip_tcp\", \"iterations\": {}, \"wall_s\": {:.6}, \"events_per_s\": {:.0}, \"cells\": {}, \"allocations_per_cell\": {:.5}, \"allocations_per_frame\": {:.2}}}",
        long.events,
        long.wall_s,
        long.events as f64 / long.wall_s,
        long.cells,
        per_cell,
        per_frame
    );
}
