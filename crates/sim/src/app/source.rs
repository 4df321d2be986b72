//! The sources of test traffic: each flow's sending side, its rate and its window.

use crate::config::FlowConfig;

/// The sending side of one flow.
#[derive(Debug, Clone)]
pub struct Source {
    pub config: FlowConfig,
    /// Next sequence number.
    pub seq: u32,
    /// Interval between datagrams; `None` for a saturating source.
    pub interval_ns: Option<u64>,
}

impl Source {
    pub fn new(config: FlowConfig) -> Source {
        let interval_ns = match &config {
            FlowConfig::Udp { rate_pps, .. } if *rate_pps > 0.0 => Some((1e9 / rate_pps).round().max(1.0) as u64),
            FlowConfig::Udp { .. } => None,
            FlowConfig::Ping { interval_ns, .. } | FlowConfig::UdpEcho { interval_ns, .. } => {
                Some((*interval_ns).max(1))
            }
            // TCP sends when its window lets it, a replay when its schedule says: no
            // interval of their own.
            FlowConfig::Tcp { .. } | FlowConfig::UdpReplay { .. } => None,
        };
        Source { config, seq: 0, interval_ns }
    }

    pub fn start_ns(&self) -> u64 {
        match &self.config {
            FlowConfig::Udp { start_ns, .. }
            | FlowConfig::Ping { start_ns, .. }
            | FlowConfig::Tcp { start_ns, .. }
            | FlowConfig::UdpEcho { start_ns, .. }
            | FlowConfig::UdpReplay { start_ns, .. } => *start_ns,
        }
    }

    /// Whether the source may send another datagram at `now`.
    pub fn active(&self, now: u64) -> bool {
        match &self.config {
            FlowConfig::Udp { start_ns, stop_ns, .. } => now >= *start_ns && now < *stop_ns,
            FlowConfig::Ping { count, start_ns, .. } | FlowConfig::UdpEcho { count, start_ns, .. } => {
                now >= *start_ns && self.seq < *count
            }
            FlowConfig::Tcp { start_ns, stop_ns, .. } => now >= *start_ns && now < *stop_ns,
            FlowConfig::UdpReplay { start_ns, .. } => {
                now >= *start_ns && self.config.replay_offset_ns(u64::from(self.seq)).is_some()
            }
        }
    }

    /// A replay's next datagram: its send time (ns) and UDP payload octets; `None` once
    /// the schedule is sent, and for every other kind of flow.
    pub fn next_replay(&self) -> Option<(u64, u32)> {
        let FlowConfig::UdpReplay { start_ns, payloads, .. } = &self.config else { return None };
        let offset = self.config.replay_offset_ns(u64::from(self.seq))?;
        Some((start_ns.saturating_add(offset), payloads[self.seq as usize % payloads.len()]))
    }

    pub fn is_saturating(&self) -> bool {
        self.interval_ns.is_none() && !matches!(self.config, FlowConfig::Tcp { .. } | FlowConfig::UdpReplay { .. })
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn constant_rate_interval() {
        let source = Source::new(FlowConfig::Udp {
            id: 1,
            from: 0,
            to: std::net::Ipv4Addr::LOCALHOST,
            dst_port: 9,
            payload: 100,
            rate_pps: 1000.0,
            start_ns: 0,
            stop_ns: 1,
            dont_fragment: false,
            dst_mac: None,
            src_mac: None,
        });
        assert_eq!(source.interval_ns, Some(1_000_000));
    }

    /// A schedule of three datagrams 0, 5 and 5 ns after the pass's start, sent twice
    /// 20 ns apart from 100 ns: times and sizes written out by hand.
    #[test]
    fn replay_schedule_over_two_passes() {
        let mut source = Source::new(FlowConfig::UdpReplay {
            id: 1,
            from: 0,
            to: std::net::Ipv4Addr::LOCALHOST,
            dst_port: 9,
            payloads: vec![16, 100, 1472],
            offsets_ns: vec![0, 5, 5],
            passes: 2,
            period_ns: 20,
            start_ns: 100,
            stop_ns: 200,
            dont_fragment: false,
        });
        assert!(!source.is_saturating());
        let mut sent = Vec::new();
        while let Some(next) = source.next_replay() {
            assert!(source.active(next.0));
            sent.push(next);
            source.seq += 1;
        }
        assert_eq!(sent, [(100, 16), (105, 100), (105, 1472), (120, 16), (125, 100), (125, 1472)]);
        assert!(!source.active(1_000));
    }
}
