//! The probe every test datagram carries: what IXIA and iperf put in their test frames, a
//! flow identifier, a sequence number and the send time, so the receiver measures loss,
//! one-way latency and jitter from the bytes alone, as a real analyser does.

/// Bytes of the probe header at the start of every test payload.
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
}
