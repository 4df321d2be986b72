//! Shared by the benchmarks: a timing loop and the JSON line each benchmark prints.

use std::time::{Duration, Instant};

/// One measured figure: `iterations` runs of a body took `wall`.
pub struct Measurement {
    pub name: &'static str,
    pub iterations: u64,
    pub wall: Duration,
}

impl Measurement {
    pub fn per_second(&self) -> f64 {
        self.iterations as f64 / self.wall.as_secs_f64()
    }

    /// A JSON line, so that `qoslab bench` and CI logs can read the figure.
    pub fn json(&self, unit: &str) -> String {
        format!(
            "{{\"bench\": \"{}\", \"iterations\": {}, \"wall_s\": {:.6}, \"{}_per_s\": {:.0}}}",
            self.name,
            self.iterations,
            self.wall.as_secs_f64(),
            unit,
            self.per_second()
        )
    }
}

/// Runs `body` in batches of `BATCH` for `budget` of wall time (after a warm-up of a
/// tenth of it) and returns the fastest batch: on a shared machine the fastest batch is
/// the one least disturbed by other processes, so it is the repeatable figure.
pub fn measure(name: &'static str, budget: Duration, mut body: impl FnMut()) -> Measurement {
    const BATCH: u64 = 10_000;
    let warm_until = Instant::now() + budget / 10;
    while Instant::now() < warm_until {
        for _ in 0..BATCH {
            body();
        }
    }
    let start = Instant::now();
    let mut best = Duration::MAX;
    while start.elapsed() < budget {
        let t = Instant::now();
        for _ in 0..BATCH {
            body();
        }
        best = best.min(t.elapsed());
    }
    Measurement { name, iterations: BATCH, wall: best }
}
