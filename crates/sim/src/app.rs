//! Test traffic: the probe every test datagram carries, and the sources that send them.
//!
//! A probe is what IXIA and iperf put in their test frames: a flow identifier, a
//! sequence number and the send time, so the receiver measures loss, one-way latency and
//! jitter from the bytes alone, as a real analyser does.

use crate::config::FlowConfig;

/// Bytes of the probe header at the start of every test payload (the plan checks it).
pub use qoslab_plan::PROBE_HEADER_LEN;

/// The probe: flow id, sequence number, send time in nanoseconds; big-endian.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    pub flow: u32,
    pub seq: u32,
    pub sent_ns: u64,
}

impl Probe {
    /// Writes the probe at the start of `payload` (at least [`PROBE_HEADER_LEN`] bytes).
    pub fn emit(&self, payload: &mut [u8]) {
        payload[0..4].copy_from_slice(&self.flow.to_be_bytes());
        payload[4..8].copy_from_slice(&self.seq.to_be_bytes());
        payload[8..16].copy_from_slice(&self.sent_ns.to_be_bytes());
    }

    pub fn parse(payload: &[u8]) -> Option<Probe> {
        if payload.len() < PROBE_HEADER_LEN {
            return None;
        }
        Some(Probe {
            flow: u32::from_be_bytes(payload[0..4].try_into().ok()?),
            seq: u32::from_be_bytes(payload[4..8].try_into().ok()?),
            sent_ns: u64::from_be_bytes(payload[8..16].try_into().ok()?),
        })
    }

    /// A payload of `len` bytes carrying this probe, the rest zero.
    pub fn payload(&self, len: usize) -> Vec<u8> {
        let mut payload = vec![0u8; len.max(PROBE_HEADER_LEN)];
        self.emit(&mut payload);
        payload
    }
}

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
    fn probe_round_trip() {
        let probe = Probe { flow: 7, seq: 123_456, sent_ns: 9_876_543_210 };
        let payload = probe.payload(64);
        assert_eq!(payload.len(), 64);
        assert_eq!(Probe::parse(&payload), Some(probe));
        assert_eq!(Probe::parse(&payload[..15]), None);
    }

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
