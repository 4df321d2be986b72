//! A node's CPU: one server with a FIFO queue of jobs (frames to process).
//!
//! Each job's service time is its cycles over the clock rate. The queue has a limit:
//! a frame that finds it full is dropped, which is how a slow bridge or VPN client loses
//! packets under load (seeds 000 and 003). Utilisation is busy time over elapsed time.
//! A node with a clock rate of 0 forwards in hardware: no queue, no delay.
//!
//! A measurement window (`set_window`) counts the busy time inside it as well, so that a
//! test reports the CPU load while its traffic runs (what a performance monitor averages
//! over a test, seed 003 §3), not diluted by the idle learning and draining around it.

use std::collections::VecDeque;

use crate::config::CpuConfig;

/// The CPU of one node.
#[derive(Debug)]
pub struct Cpu<J> {
    pub config: CpuConfig,
    queue: VecDeque<J>,
    /// When the job in service ends, if one is.
    busy_until: Option<u64>,
    busy_ns: u64,
    /// The measurement window [from, until) and the busy time inside it.
    window: Option<(u64, u64)>,
    window_busy_ns: u64,
    pub drops: u64,
    /// Frames in the receive path before the CPU (`CpuConfig::rx_latency`): when each
    /// reaches the job queue, in arrival order.
    delayed: VecDeque<(u64, J)>,
}

impl<J> Cpu<J> {
    pub fn new(config: CpuConfig) -> Cpu<J> {
        Cpu {
            config,
            queue: VecDeque::new(),
            busy_until: None,
            busy_ns: 0,
            window: None,
            window_busy_ns: 0,
            drops: 0,
            delayed: VecDeque::new(),
        }
    }

    /// Whether received frames spend time in the receive path before the CPU.
    pub fn has_rx_latency(&self) -> bool {
        let l = self.config.rx_latency;
        l.per_frame_ns > 0 || l.per_byte_ns > 0.0
    }

    /// Puts a frame of `len` bytes that arrived at `now` into the receive path; returns
    /// when it reaches the job queue: `now` plus its latency, but never before the frame
    /// ahead of it (the path hands frames over in order).
    pub fn delay(&mut self, now: u64, len: usize, job: J) -> u64 {
        let l = self.config.rx_latency;
        let mut due = now + l.per_frame_ns + (l.per_byte_ns * len as f64).round() as u64;
        if let Some(&(last, _)) = self.delayed.back() {
            due = due.max(last);
        }
        self.delayed.push_back((due, job));
        due
    }

    /// The first frame of the receive path, if it is due at `now`.
    pub fn take_delayed(&mut self, now: u64) -> Option<J> {
        match self.delayed.front() {
            Some(&(due, _)) if due <= now => self.delayed.pop_front().map(|(_, job)| job),
            _ => None,
        }
    }

    /// Whether jobs cost nothing (hardware forwarding).
    pub fn is_free(&self) -> bool {
        self.config.hz == 0
    }

    /// Nanoseconds that `cycles` take (rounded up).
    pub fn service_ns(&self, cycles: f64) -> u64 {
        if self.config.hz == 0 || cycles <= 0.0 {
            return 0;
        }
        (cycles * 1e9 / self.config.hz as f64).ceil() as u64
    }

    /// Queues a job; `false` (and a drop counted) when the queue is full.
    pub fn offer(&mut self, job: J) -> bool {
        self.offer_or_return(job).is_ok()
    }

    pub fn is_busy(&self) -> bool {
        self.busy_until.is_some()
    }

    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }

    /// The jobs waiting (for the end-of-run census of `conservation`).
    pub fn queued(&self) -> impl Iterator<Item = &J> {
        self.delayed.iter().map(|(_, job)| job).chain(self.queue.iter())
    }

    /// Queues a job, or gives it back (a drop counted) when the queue is full.
    pub fn offer_or_return(&mut self, job: J) -> Result<(), J> {
        if self.queue.len() >= self.config.queue_limit {
            self.drops += 1;
            return Err(job);
        }
        self.queue.push_back(job);
        Ok(())
    }

    /// Takes the next job to serve, if the CPU is idle.
    pub fn next_job(&mut self) -> Option<J> {
        if self.busy_until.is_some() {
            return None;
        }
        self.queue.pop_front()
    }

    /// Marks the CPU busy from `now` for `service_ns`; returns when it finishes.
    pub fn start(&mut self, now: u64, service_ns: u64) -> u64 {
        let end = now + service_ns;
        self.busy_until = Some(end);
        self.busy_ns += service_ns;
        if let Some((from, until)) = self.window {
            self.window_busy_ns += end.min(until).saturating_sub(now.max(from));
        }
        end
    }

    /// Counts busy time inside [`from_ns`, `until_ns`) too (set before the run starts).
    pub fn set_window(&mut self, from_ns: u64, until_ns: u64) {
        self.window = Some((from_ns, until_ns.max(from_ns)));
    }

    /// Busy fraction of the measurement window, if one is set and not empty.
    pub fn window_utilization(&self) -> Option<f64> {
        let (from, until) = self.window?;
        (until > from).then(|| self.window_busy_ns as f64 / (until - from) as f64)
    }

    /// The job in service finished.
    pub fn finish(&mut self) {
        self.busy_until = None;
    }

    /// Busy fraction of `elapsed_ns` (service already granted past the end counts only up
    /// to it).
    pub fn utilization(&self, elapsed_ns: u64) -> f64 {
        if elapsed_ns == 0 {
            return 0.0;
        }
        let overrun = self.busy_until.map_or(0, |end| end.saturating_sub(elapsed_ns));
        (self.busy_ns.saturating_sub(overrun)) as f64 / elapsed_ns as f64
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::config::CpuCycles;

    fn cpu(hz: u64, limit: usize) -> Cpu<u32> {
        Cpu::new(CpuConfig {
            profile: "t".into(),
            hz,
            queue_limit: limit,
            cycles: CpuCycles::default(),
            atm_nic: Default::default(),
            rx_latency: Default::default(),
        })
    }

    #[test]
    fn service_time_and_utilization() {
        let mut c = cpu(1_000_000_000, 2);
        assert_eq!(c.service_ns(1500.0), 1500);
        assert!(c.offer(1) && c.offer(2) && !c.offer(3));
        assert_eq!(c.drops, 1);
        let job = c.next_job().unwrap();
        assert_eq!(job, 1);
        let end = c.start(0, 400);
        assert!(c.next_job().is_none(), "a busy CPU serves one job at a time");
        c.finish();
        assert_eq!(end, 400);
        assert_eq!(c.next_job(), Some(2));
        assert!((c.utilization(1000) - 0.4).abs() < 1e-12);
    }

    #[test]
    fn the_receive_path_delays_in_order_without_busying_the_cpu() {
        let mut c = cpu(1_000_000_000, 4);
        c.config.rx_latency = crate::config::RxLatency { per_frame_ns: 1000, per_byte_ns: 2.0 };
        assert!(c.has_rx_latency());
        // 1000 + 2 × 500 = 2000 ns for the long frame; the short one (1000 + 2 × 10)
        // would be due at 1120 but waits for the long one ahead of it.
        assert_eq!(c.delay(0, 500, 1), 2000);
        assert_eq!(c.delay(100, 10, 2), 2000);
        assert_eq!(c.queued().count(), 2, "frames in the receive path are held by the node");
        assert!(c.take_delayed(1999).is_none());
        assert_eq!(c.take_delayed(2000), Some(1));
        assert_eq!(c.take_delayed(2000), Some(2));
        assert!(!c.is_busy() && c.utilization(2000) == 0.0, "the path costs no CPU time");
    }

    #[test]
    fn the_window_counts_only_the_busy_time_inside_it() {
        let mut c = cpu(1_000_000_000, 4);
        c.set_window(1000, 2000);
        c.start(500, 600); // 100 ns of it inside
        c.finish();
        c.start(1500, 200); // all inside
        c.finish();
        c.start(1900, 300); // 100 ns inside
        c.finish();
        c.start(2500, 100); // after
        assert!((c.window_utilization().unwrap() - 0.4).abs() < 1e-12);
        assert_eq!(cpu(1, 1).window_utilization(), None);
    }

    #[test]
    fn hardware_costs_nothing() {
        let c = cpu(0, 10);
        assert!(c.is_free());
        assert_eq!(c.service_ns(1e9), 0);
    }
}
