//! Where the wall time of one `simulate` call goes: configuration JSON parsed, world
//! built, event loop run, results serialised — the four steps of
//! `qoslab._core.simulate` (crates/py/src/sim.rs), timed apart on a SimConfig JSON
//! file (e.g. one written from `qoslab.bench.CONFIG_BUILDERS[name](60.0)`).
//!
//! Run: `cargo bench -p qoslab-benchmarks --bench simulate -- CONFIG.json [REPEATS] [OUT.json]`.
//! It prints one JSON line per repeat and, with OUT.json, writes the results JSON of
//! the last run (to diff a change's results against the code before it). Under
//! `valgrind --tool=callgrind` the same binary gives the instruction count of a run.

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let path = args.next().expect("usage: simulate CONFIG.json [REPEATS] [OUT.json]");
    let repeats: usize = args.next().map_or(1, |r| r.parse().expect("REPEATS is a count"));
    let out = args.next();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut last = String::new();
    for _ in 0..repeats {
        let t0 = Instant::now();
        let config: sim::config::SimConfig = serde_json::from_str(&text).expect("a SimConfig");
        let t1 = Instant::now();
        let world = sim::world::World::new(config).expect("a valid configuration");
        let t2 = Instant::now();
        let results = world.run().expect("the run");
        let t3 = Instant::now();
        last = serde_json::to_string(&results).expect("results serialise");
        let t4 = Instant::now();
        println!(
            "{{\"bench\": \"simulate\", \"config\": \"{path}\", \"events\": {}, \"parse_s\": {:.6}, \"build_s\": {:.6}, \"run_s\": {:.6}, \"serialise_s\": {:.6}, \"wall_s\": {:.6}, \"results_bytes\": {}}}",
            results.events,
            (t1 - t0).as_secs_f64(),
            (t2 - t1).as_secs_f64(),
            (t3 - t2).as_secs_f64(),
            (t4 - t3).as_secs_f64(),
            (t4 - t0).as_secs_f64(),
            last.len()
        );
    }
    if let Some(out) = out {
        std::fs::write(&out, &last).unwrap_or_else(|e| panic!("{out}: {e}"));
    }
}
