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
            // TCP sends when its window lets it: no interval of its own.
            FlowConfig::Tcp { .. } => None,
        };
        Source { config, seq: 0, interval_ns }
    }

    pub fn start_ns(&self) -> u64 {
        match &self.config {
            FlowConfig::Udp { start_ns, .. }
            | FlowConfig::Ping { start_ns, .. }
            | FlowConfig::Tcp { start_ns, .. }
            | FlowConfig::UdpEcho { start_ns, .. } => *start_ns,
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
        }
    }

    pub fn is_saturating(&self) -> bool {
        self.interval_ns.is_none() && !matches!(self.config, FlowConfig::Tcp { .. })
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
        });
        assert_eq!(source.interval_ns, Some(1_000_000));
    }
}
