//! The classic libpcap file format, nanosecond variant, so that a capture written by a
//! simulation opens in Wireshark and tshark with the simulator's exact timestamps.
//!
//! Format: the pcap file format draft (draft-ietf-opsawg-pcap) §4 (file header) and §5
//! (record header); link types from the tcpdump.org LINKTYPE registry.

use std::io::{self, Write};

/// Magic number for nanosecond-resolution captures (draft-ietf-opsawg-pcap §4).
pub const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// Default snapshot length: large enough for any frame qoslab builds (AAL5 allows 65,535
/// bytes plus trailer and cells).
pub const SNAPLEN: u32 = 262_144;

crate::enum_with_unknown! {
    /// LINKTYPE_* values of the tcpdump.org registry.
    pub enum LinkType(u32) {
        /// IEEE 802.3 Ethernet, without preamble and FCS.
        Ethernet = 1,
        /// SLIP with a 16-byte pseudo-header: direction, then the CSLIP header state.
        Slip = 8,
        /// PPP, starting with the protocol field (RFC 1661 §2).
        Ppp = 9,
        /// PPP in HDLC-like framing with address and control fields (RFC 1662).
        PppHdlc = 50,
        /// RFC 2684 (was RFC 1483) LLC/SNAP-encapsulated ATM PDUs, without cells.
        AtmRfc1483 = 100,
        /// Raw IPv4 or IPv6 packets, no link header.
        Raw = 101,
        /// IEEE 802.11 MAC frames, without FCS unless the radiotap says so.
        Ieee80211 = 105,
        /// SunATM: a 4-byte pseudo-header (flags, VPI, VCI) then the AAL5 SDU.
        SunAtm = 123,
        /// A radiotap header (radiotap.org: rate, flags, channel, ...) then the IEEE
        /// 802.11 MAC frame.
        Ieee80211Radiotap = 127,
        /// Raw IPv4, no link header.
        Ipv4 = 228,
    }
}

/// The 24-byte file header (draft-ietf-opsawg-pcap §4) of a capture of `link_type`
/// whose records keep at most `snaplen` bytes of each frame.
pub fn file_header(link_type: LinkType, snaplen: u32) -> [u8; 24] {
    let mut header = [0u8; 24];
    header[0..4].copy_from_slice(&MAGIC_NANOS.to_le_bytes());
    header[4..6].copy_from_slice(&2u16.to_le_bytes()); // version 2.4
    header[6..8].copy_from_slice(&4u16.to_le_bytes());
    // 8..16: reserved (were thiszone and sigfigs), zero.
    header[16..20].copy_from_slice(&snaplen.to_le_bytes());
    header[20..24].copy_from_slice(&u32::from(link_type).to_le_bytes());
    header
}

/// The 16-byte record header (draft-ietf-opsawg-pcap §5) of a frame of `frame_len`
/// bytes seen at `time_ns` nanoseconds since the epoch of the run, and how many of its
/// bytes the record keeps: Captured Packet Length = min(Original Packet Length, snaplen).
pub fn record_header(time_ns: u64, frame_len: usize, snaplen: u32) -> ([u8; 16], usize) {
    let captured = frame_len.min(snaplen as usize);
    let mut record = [0u8; 16];
    record[0..4].copy_from_slice(&((time_ns / 1_000_000_000) as u32).to_le_bytes());
    record[4..8].copy_from_slice(&((time_ns % 1_000_000_000) as u32).to_le_bytes());
    record[8..12].copy_from_slice(&(captured as u32).to_le_bytes());
    record[12..16].copy_from_slice(&(frame_len as u32).to_le_bytes());
    (record, captured)
}

/// Writes a pcap stream: one file header, then one record per frame.
pub struct Writer<W: Write> {
    sink: W,
    snaplen: u32,
}

impl<W: Write> Writer<W> {
    /// Writes the file header for `link_type` and returns a writer for its records.
    pub fn new(sink: W, link_type: LinkType) -> io::Result<Self> {
        Self::with_snaplen(sink, link_type, SNAPLEN)
    }

    /// As [`new`](Self::new), keeping at most `snaplen` bytes of each frame.
    pub fn with_snaplen(mut sink: W, link_type: LinkType, snaplen: u32) -> io::Result<Self> {
        sink.write_all(&file_header(link_type, snaplen))?;
        Ok(Writer { sink, snaplen })
    }

    /// Appends one frame captured at `time_ns` nanoseconds since the epoch of the run.
    pub fn write_frame(&mut self, time_ns: u64, frame: &[u8]) -> io::Result<()> {
        let (record, captured) = record_header(time_ns, frame.len(), self.snaplen);
        self.sink.write_all(&record)?;
        self.sink.write_all(&frame[..captured])
    }

    /// Flushes and returns the underlying sink.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.sink.flush()?;
        Ok(self.sink)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn header_and_record_layout() {
        let mut w = Writer::new(Vec::new(), LinkType::Ethernet).unwrap();
        w.write_frame(1_500_000_123, &[0xaa; 3]).unwrap();
        let bytes = w.into_inner().unwrap();
        assert_eq!(&bytes[0..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        assert_eq!(&bytes[20..24], &[1, 0, 0, 0]);
        assert_eq!(&bytes[24..28], &1u32.to_le_bytes()); // seconds
        assert_eq!(&bytes[28..32], &500_000_123u32.to_le_bytes()); // nanoseconds
        assert_eq!(&bytes[32..36], &3u32.to_le_bytes());
        assert_eq!(&bytes[40..], &[0xaa; 3]);
    }

    #[test]
    fn snaplen_cuts_the_record_not_the_original_length() {
        // draft-ietf-opsawg-pcap §5: Captured Packet Length is at most SnapLen, Original
        // Packet Length is the frame's length on the wire.
        let mut w = Writer::with_snaplen(Vec::new(), LinkType::Ethernet, 4).unwrap();
        w.write_frame(0, &[1, 2, 3, 4, 5, 6]).unwrap();
        w.write_frame(0, &[7, 8]).unwrap();
        let bytes = w.into_inner().unwrap();
        assert_eq!(&bytes[16..20], &4u32.to_le_bytes()); // the header's SnapLen
        assert_eq!(&bytes[32..36], &4u32.to_le_bytes());
        assert_eq!(&bytes[36..40], &6u32.to_le_bytes());
        assert_eq!(&bytes[40..44], &[1, 2, 3, 4]);
        assert_eq!(&bytes[52..56], &2u32.to_le_bytes());
        assert_eq!(&bytes[56..60], &2u32.to_le_bytes());
        assert_eq!(&bytes[60..], &[7, 8]);
    }
}
