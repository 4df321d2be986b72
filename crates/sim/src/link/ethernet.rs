//! A full-duplex point-to-point Ethernet link: per direction an output queue (drop-tail,
//! limits in frames and bytes), a serializer at the link rate, and a propagation delay.
//!
//! Time on the wire counts what IEEE 802.3 puts there besides the frame (§3.1.1, §4.4.2):
//! 7 bytes of preamble and 1 of SFD, padding to the 64-byte minimum frame (§3.2.8), the
//! 4-byte FCS (§3.2.9) and the 96-bit inter-frame gap. Frames are held without FCS and
//! padding, as a capture shows them.

use std::collections::VecDeque;

use crate::time::tx_time;

/// Bytes on the wire besides the MAC frame without FCS: preamble + SFD, FCS, and the
/// inter-frame gap (IEEE 802.3 §3.1.1, §3.2.9, §4.4.2).
pub const ETHERNET_OVERHEAD_BYTES: usize = 7 + 1 + 4 + 12;
/// IEEE 802.3 §3.2.8: frames are padded to 64 bytes with FCS, 60 without.
pub const ETHERNET_MIN_FRAME_NO_FCS: usize = 60;

/// The inter-frame gap in bytes: 96 bit times of idle after every frame (IEEE 802.3 §4.4.2).
pub const ETHERNET_IFG_BYTES: usize = 12;

/// Nanoseconds a frame (without FCS) occupies an Ethernet link of `rate_bps`: from the
/// first preamble bit to the end of the inter-frame gap after it.
#[inline]
pub fn ethernet_wire_ns(frame_len: usize, rate_bps: u64) -> u64 {
    let bytes = frame_len.max(ETHERNET_MIN_FRAME_NO_FCS) + ETHERNET_OVERHEAD_BYTES;
    tx_time(bytes as u64 * 8, rate_bps).as_nanos()
}

/// Nanoseconds from a frame's first preamble bit to its last FCS bit: when the receiver
/// has the whole frame. The gap that follows keeps the sender idle but delays no one.
#[inline]
pub fn ethernet_last_bit_ns(frame_len: usize, rate_bps: u64) -> u64 {
    let bytes = frame_len.max(ETHERNET_MIN_FRAME_NO_FCS) + ETHERNET_OVERHEAD_BYTES - ETHERNET_IFG_BYTES;
    tx_time(bytes as u64 * 8, rate_bps).as_nanos()
}

/// One direction of a link: the sending end's queue and serializer.
#[derive(Debug, Default)]
pub struct Direction {
    queue: VecDeque<Vec<u8>>,
    queued_bytes: usize,
    /// Whether a frame is being serialized.
    pub busy: bool,
    pub busy_ns: u64,
    pub frames_sent: u64,
    pub bytes_sent: u64,
    pub drops: u64,
}

/// A point-to-point Ethernet link between two ports.
#[derive(Debug)]
pub struct EthernetLink {
    pub name: String,
    /// `ends[0]` is `a`, `ends[1]` is `b`: (node, port).
    pub ends: [(u32, u16); 2],
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub queue_frames: usize,
    pub queue_bytes: usize,
    /// `dirs[i]` sends from `ends[i]` to the other end.
    pub dirs: [Direction; 2],
}

impl EthernetLink {
    /// Queues `frame` at end `from`; gives it back (a drop) when the queue is full.
    #[inline]
    pub fn enqueue(&mut self, from: usize, frame: Vec<u8>) -> Result<(), Vec<u8>> {
        let dir = &mut self.dirs[from];
        if dir.queue.len() >= self.queue_frames || dir.queued_bytes + frame.len() > self.queue_bytes {
            dir.drops += 1;
            return Err(frame);
        }
        dir.queued_bytes += frame.len();
        dir.queue.push_back(frame);
        Ok(())
    }

    /// Takes the next frame to serialize at end `from` if the serializer is idle; returns
    /// it with its time on the wire, and marks the serializer busy.
    #[inline]
    pub fn start_next(&mut self, from: usize) -> Option<(Vec<u8>, u64)> {
        let rate = self.rate_bps;
        let dir = &mut self.dirs[from];
        if dir.busy {
            return None;
        }
        let frame = dir.queue.pop_front()?;
        dir.queued_bytes -= frame.len();
        let ns = ethernet_wire_ns(frame.len(), rate);
        dir.busy = true;
        dir.busy_ns += ns;
        dir.frames_sent += 1;
        dir.bytes_sent += frame.len() as u64;
        Some((frame, ns))
    }

    #[inline]
    pub fn finish(&mut self, from: usize) {
        self.dirs[from].busy = false;
    }

    /// Bytes waiting (not yet on the wire) at end `from`.
    #[inline]
    pub fn queued_bytes(&self, from: usize) -> usize {
        self.dirs[from].queued_bytes
    }

    /// The length of the next frame waiting at end `from`, if any.
    #[inline]
    pub fn peek_len(&self, from: usize) -> Option<usize> {
        self.dirs[from].queue.front().map(Vec::len)
    }

    /// The frames waiting at end `from` (for the end-of-run census of `conservation`).
    pub fn queued(&self, from: usize) -> impl Iterator<Item = &[u8]> {
        self.dirs[from].queue.iter().map(Vec::as_slice)
    }

    #[inline]
    pub fn backlog(&self, from: usize) -> usize {
        self.dirs[from].queue.len() + usize::from(self.dirs[from].busy)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn wire_time_counts_preamble_padding_fcs_and_gap() {
        // A 1514-byte frame (1500 + header) at 100 Mb/s: (1514 + 24) × 8 bits = 123.04 µs.
        assert_eq!(ethernet_wire_ns(1514, 100_000_000), 123_040);
        // A 42-byte ARP frame is padded to 60 (+24): 84 × 8 = 672 bits = 6.72 µs.
        assert_eq!(ethernet_wire_ns(42, 100_000_000), 6_720);
        // The receiver has the frame 96 bit times (0.96 µs at 100 Mb/s) before the gap ends.
        assert_eq!(ethernet_last_bit_ns(1514, 100_000_000), 123_040 - 960);
    }

    #[test]
    fn drop_tail_by_frames_and_bytes() {
        let mut link = EthernetLink {
            name: "l".into(),
            ends: [(0, 0), (1, 0)],
            rate_bps: 1_000_000,
            delay_ns: 0,
            queue_frames: 2,
            queue_bytes: 150,
            dirs: Default::default(),
        };
        assert!(link.enqueue(0, vec![0; 100]).is_ok());
        assert!(link.enqueue(0, vec![0; 100]).is_err(), "bytes limit");
        assert!(link.enqueue(0, vec![0; 50]).is_ok());
        assert!(link.enqueue(0, vec![0; 1]).is_err(), "frames limit");
        assert_eq!(link.dirs[0].drops, 2);
        let (frame, _) = link.start_next(0).unwrap();
        assert_eq!(frame.len(), 100);
        assert!(link.start_next(0).is_none(), "one frame on the wire at a time");
        link.finish(0);
        assert_eq!(link.start_next(0).unwrap().0.len(), 50);
    }
}
