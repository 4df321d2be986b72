//! PPP in HDLC-like framing, as on asynchronous serial lines and in PPTP's own view of
//! its PPP frames.
//!
//! Standards a reader must know:
//!
//! * RFC 1662 (PPP in HDLC-like Framing): §3 the frame (Flag 0x7e, Address 0xff,
//!   Control 0x03, protocol and information, FCS, Flag), §3.1 the fields, §4.2 octet
//!   stuffing (Control Escape 0x7d, XOR 0x20, the Async-Control-Character-Map, aborts),
//!   §7.1 the ACCM configuration option, Appendix C the 16- and 32-bit FCS.
//! * RFC 1661 §6.6: Address-and-Control-Field-Compression (ACFC) drops the 0xff 0x03,
//!   except on LCP packets, which always carry them.
//! * RFC 1570 §2.1 (LCP FCS-Alternatives) negotiates the 32-bit FCS.
//!
//! Two levels: [`Frame`] is a checked view over one frame *after* de-stuffing and without
//! its flags (address, control, PPP frame, FCS), which is also what a pcap of
//! `LINKTYPE_PPP_HDLC` holds; [`Config`] turns PPP frames into the stuffed byte stream
//! of a serial line and back ([`Config::encapsulate`], [`Config::decode_stream`]).

use crate::{Error, Result};

/// RFC 1662 §3.1: the Flag Sequence that opens and closes every frame.
pub const FLAG: u8 = 0x7e;
/// RFC 1662 §4.2: the Control Escape octet.
pub const ESCAPE: u8 = 0x7d;
/// RFC 1662 §4.2: an escaped octet is sent exclusive-or'd with 0x20.
pub const ESCAPE_XOR: u8 = 0x20;
/// RFC 1662 §3.1: the All-Stations address, the only one PPP uses.
pub const ADDRESS: u8 = 0xff;
/// RFC 1662 §3.1: the Unnumbered Information command with the P/F bit zero.
pub const CONTROL: u8 = 0x03;
/// RFC 1662 §7.1: the default Async-Control-Character-Map, every control character
/// (0x00–0x1f) escaped.
pub const DEFAULT_ACCM: u32 = 0xffff_ffff;
/// Length of the address and control fields (RFC 1662 §3.1).
pub const HEADER_LEN: usize = 2;

/// The Frame Check Sequence in use (RFC 1662 Appendix C; RFC 1570 §2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Fcs {
    /// RFC 1662 §C.2: the 16-bit FCS (the default), [`crate::crc::PPP_FCS16`].
    #[default]
    Fcs16,
    /// RFC 1662 §C.3: the 32-bit FCS, the same CRC as Ethernet's,
    /// [`crate::crc::ETHERNET_FCS`].
    Fcs32,
}

impl Fcs {
    /// The FCS field's length in octets.
    pub const fn len(self) -> usize {
        match self {
            Fcs::Fcs16 => 2,
            Fcs::Fcs32 => 4,
        }
    }

    /// Always false; present because clippy pairs `len` with `is_empty`.
    pub const fn is_empty(self) -> bool {
        false
    }

    /// RFC 1662 §3: the shortest frame a receiver accepts (4 octets with FCS-16,
    /// 6 with FCS-32); shorter ones are silently discarded.
    pub const fn min_frame_len(self) -> usize {
        2 + self.len()
    }

    /// The FCS of `data`.
    pub fn compute(self, data: &[u8]) -> u32 {
        match self {
            Fcs::Fcs16 => u32::from(crate::crc::PPP_FCS16.checksum(data)),
            Fcs::Fcs32 => crate::crc::ETHERNET_FCS.checksum(data),
        }
    }
}

/// Byte positions of the fields (RFC 1662 §3.1); the FCS is the last 2 or 4 octets.
pub mod field {
    /// RFC 1662 §3.1: Address.
    pub const ADDRESS: usize = 0;
    /// RFC 1662 §3.1: Control.
    pub const CONTROL: usize = 1;
}

/// One de-stuffed frame without flags (RFC 1662 §3): `[address control] ppp fcs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame<T: AsRef<[u8]>> {
    buffer: T,
    fcs: Fcs,
}

impl<T: AsRef<[u8]>> Frame<T> {
    /// A view of a frame with the default 16-bit FCS.
    pub const fn new_unchecked(buffer: T) -> Frame<T> {
        Frame { buffer, fcs: Fcs::Fcs16 }
    }

    /// A view of a frame with the FCS `fcs` negotiated.
    pub const fn with_fcs(buffer: T, fcs: Fcs) -> Frame<T> {
        Frame { buffer, fcs }
    }

    /// A checked view with the default 16-bit FCS.
    pub fn new_checked(buffer: T) -> Result<Frame<T>> {
        let frame = Frame::new_unchecked(buffer);
        frame.check_len()?;
        Ok(frame)
    }

    /// RFC 1662 §3: at least 4 octets (6 with FCS-32), and if the first octet is the
    /// address 0xff, then the control octet must be there too.
    pub fn check_len(&self) -> Result<()> {
        let data = self.buffer.as_ref();
        if data.len() < self.fcs.min_frame_len() {
            return Err(Error::Truncated);
        }
        if data.len() < self.header_len() + self.fcs.len() {
            return Err(Error::Truncated);
        }
        Ok(())
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    pub fn fcs_kind(&self) -> Fcs {
        self.fcs
    }

    /// True when the frame begins with address 0xff (RFC 1662 §3.1); false when they
    /// were compressed away (RFC 1661 §6.6: a protocol field never starts with 0xff
    /// followed by 0x03, so the two cannot be confused).
    pub fn has_address_control(&self) -> bool {
        self.buffer.as_ref().first() == Some(&ADDRESS)
    }

    /// 2 with address and control, 0 with ACFC.
    pub fn header_len(&self) -> usize {
        if self.has_address_control() {
            HEADER_LEN
        } else {
            0
        }
    }

    /// RFC 1662 §3.1: Address (0xff).
    pub fn address(&self) -> u8 {
        self.buffer.as_ref()[field::ADDRESS]
    }

    /// RFC 1662 §3.1: Control (0x03).
    pub fn control(&self) -> u8 {
        self.buffer.as_ref()[field::CONTROL]
    }

    /// The PPP frame: protocol field and information (RFC 1661 §2).
    pub fn ppp(&self) -> &[u8] {
        let data = self.buffer.as_ref();
        &data[self.header_len()..data.len() - self.fcs.len()]
    }

    /// RFC 1662 §C: the FCS, transmitted least significant octet first.
    pub fn fcs(&self) -> u32 {
        let data = self.buffer.as_ref();
        let mut value = 0u32;
        for (i, b) in data[data.len() - self.fcs.len()..].iter().enumerate() {
            value |= u32::from(*b) << (8 * i);
        }
        value
    }

    /// True when the FCS covers address, control and PPP frame correctly.
    pub fn verify_fcs(&self) -> bool {
        let data = self.buffer.as_ref();
        self.fcs.compute(&data[..data.len() - self.fcs.len()]) == self.fcs()
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Frame<T> {
    pub fn set_address(&mut self, value: u8) {
        self.buffer.as_mut()[field::ADDRESS] = value;
    }

    pub fn set_control(&mut self, value: u8) {
        self.buffer.as_mut()[field::CONTROL] = value;
    }

    /// The PPP frame's bytes, between the header and the FCS (whose width is decided by
    /// the first octet: write the address first when the frame has one).
    pub fn ppp_mut(&mut self) -> &mut [u8] {
        let start = self.header_len();
        let end = self.buffer.as_ref().len() - self.fcs.len();
        &mut self.buffer.as_mut()[start..end]
    }

    /// Computes the FCS over everything before it and writes it, LSB first.
    pub fn fill_fcs(&mut self) {
        let n = self.fcs.len();
        let data = self.buffer.as_mut();
        let end = data.len() - n;
        let value = self.fcs.compute(&data[..end]);
        for i in 0..n {
            data[end + i] = (value >> (8 * i)) as u8;
        }
    }
}

/// One frame's header and trailer (RFC 1662 §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// Address and control omitted (ACFC, RFC 1661 §6.6).
    pub acfc: bool,
    pub fcs: Fcs,
}

impl Repr {
    /// Checks the FCS and the address and control fields.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(frame: &Frame<&T>) -> Result<Repr> {
        frame.check_len()?;
        if frame.has_address_control() && frame.control() != CONTROL {
            return Err(Error::Malformed);
        }
        if !frame.verify_fcs() {
            return Err(Error::Checksum);
        }
        Ok(Repr { acfc: !frame.has_address_control(), fcs: frame.fcs })
    }

    pub fn header_len(&self) -> usize {
        if self.acfc {
            0
        } else {
            HEADER_LEN
        }
    }

    /// Frame length (without flags and stuffing) for a PPP frame of `ppp_len` octets.
    pub fn buffer_len(&self, ppp_len: usize) -> usize {
        self.header_len() + ppp_len + self.fcs.len()
    }

    /// Writes address and control, then the FCS over the whole frame: the PPP frame
    /// must already be in place (`frame.ppp_mut()`), or call `fill_fcs` again after.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, frame: &mut Frame<&mut T>) {
        frame.fcs = self.fcs;
        if !self.acfc {
            frame.set_address(ADDRESS);
            frame.set_control(CONTROL);
        }
        frame.fill_fcs();
    }
}

/// RFC 1662 §4.2: whether `byte` must be escaped under `accm`: the flag and the escape
/// always, a control character (< 0x20) when its bit is set in the ACCM.
pub fn needs_escape(byte: u8, accm: u32) -> bool {
    byte == FLAG || byte == ESCAPE || (byte < 0x20 && accm & (1u32 << byte) != 0)
}

/// Appends `data` octet-stuffed (RFC 1662 §4.2) to `out`.
pub fn stuff(data: &[u8], accm: u32, out: &mut Vec<u8>) {
    for &b in data {
        if needs_escape(b, accm) {
            out.push(ESCAPE);
            out.push(b ^ ESCAPE_XOR);
        } else {
            out.push(b);
        }
    }
}

/// The length of `data` once stuffed: one extra octet per escaped octet.
pub fn stuffed_len(data: &[u8], accm: u32) -> usize {
    data.len() + data.iter().filter(|&&b| needs_escape(b, accm)).count()
}

/// Reverses [`stuff`] for the octets between two flags (RFC 1662 §4.2): control
/// characters flagged in the receive `accm` are dropped (inserted by the line), an escape
/// removes itself and XORs the next octet with 0x20. An escape as the last octet means
/// the sender aborted the frame (escape then flag): `Err(Malformed)`.
pub fn unstuff(data: &[u8], accm: u32) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(data.len());
    let mut escaped = false;
    for &b in data {
        if b == FLAG {
            return Err(Error::Malformed);
        }
        if escaped {
            out.push(b ^ ESCAPE_XOR);
            escaped = false;
        } else if b == ESCAPE {
            escaped = true;
        } else if b < 0x20 && accm & (1u32 << b) != 0 {
            // Inserted by intervening equipment: removed before the FCS (RFC 1662 §4.2).
        } else {
            out.push(b);
        }
    }
    if escaped {
        Err(Error::Malformed)
    } else {
        Ok(out)
    }
}

/// The framing parameters of one direction of an asynchronous PPP link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Config {
    /// RFC 1662 §7.1: Async-Control-Character-Map; default all ones.
    pub accm: u32,
    /// RFC 1661 §6.6: omit address and control (never on LCP packets).
    pub acfc: bool,
    /// RFC 1662 Appendix C: FCS-16 by default, FCS-32 when negotiated (RFC 1570).
    pub fcs: Fcs,
}

impl Default for Config {
    /// What a link uses before LCP has negotiated anything (RFC 1662 §7.1, RFC 1661 §6).
    fn default() -> Config {
        Config { accm: DEFAULT_ACCM, acfc: false, fcs: Fcs::Fcs16 }
    }
}

impl Config {
    /// The frame header and trailer for `ppp_frame`: address and control are kept on LCP
    /// packets whatever ACFC says (RFC 1661 §6.6).
    pub fn repr_for(&self, ppp_frame: &[u8]) -> Repr {
        let is_lcp = ppp_frame.starts_with(&[0xc0, 0x21]);
        Repr { acfc: self.acfc && !is_lcp, fcs: self.fcs }
    }

    /// The de-stuffed frame (address, control, PPP frame, FCS) without flags: what a
    /// `LINKTYPE_PPP_HDLC` capture holds.
    pub fn frame(&self, ppp_frame: &[u8]) -> Vec<u8> {
        let repr = self.repr_for(ppp_frame);
        let mut buf = vec![0u8; repr.buffer_len(ppp_frame.len())];
        let header = repr.header_len();
        buf[header..header + ppp_frame.len()].copy_from_slice(ppp_frame);
        if !repr.acfc {
            buf[0] = ADDRESS;
        }
        repr.emit(&mut Frame::with_fcs(&mut buf[..], self.fcs));
        buf
    }

    /// Appends the line bytes for `ppp_frame` (a protocol field and information, see
    /// [`crate::ppp`]): opening flag, stuffed frame, closing flag (RFC 1662 §3, §4.2).
    pub fn encapsulate(&self, ppp_frame: &[u8], out: &mut Vec<u8>) {
        out.push(FLAG);
        stuff(&self.frame(ppp_frame), self.accm, out);
        out.push(FLAG);
    }

    /// The exact number of line octets [`Config::encapsulate`] produces for `ppp_frame`,
    /// escapes included (they depend on the bytes, FCS too).
    pub fn wire_len(&self, ppp_frame: &[u8]) -> usize {
        2 + stuffed_len(&self.frame(ppp_frame), self.accm)
    }

    /// Splits a received byte stream at flags and returns, for each non-empty frame, the
    /// PPP frame inside or why it was dropped: `Malformed` for an aborted frame or a bad
    /// address/control, `Truncated` for a runt, `Checksum` for a bad FCS. Bytes before the
    /// first flag (the receiver is hunting for a flag) and after the last one (a frame not
    /// yet closed) are ignored. Frames with and without address/control are both accepted,
    /// as RFC 1661 §6.6 requires of a receiver.
    pub fn decode_stream(&self, stream: &[u8]) -> Vec<Result<Vec<u8>>> {
        let mut frames = Vec::new();
        let mut chunks = stream.split(|&b| b == FLAG);
        // Everything before the first flag, and after the last, is not a frame.
        let _ = chunks.next();
        let chunks: Vec<&[u8]> = chunks.collect();
        let closed = chunks.len().saturating_sub(1);
        for chunk in &chunks[..closed] {
            if chunk.is_empty() {
                continue; // Back-to-back flags (RFC 1662 §3.1: one flag may close and open).
            }
            frames.push(self.decode_frame(chunk));
        }
        frames
    }

    fn decode_frame(&self, stuffed: &[u8]) -> Result<Vec<u8>> {
        let raw = unstuff(stuffed, self.accm)?;
        let frame = Frame::with_fcs(&raw[..], self.fcs);
        Repr::parse(&frame)?;
        Ok(frame.ppp().to_vec())
    }

    /// The named octets HDLC-like framing adds around a PPP frame of `payload_len`
    /// octets, escapes not counted (they depend on the bytes: see [`Config::wire_len`]).
    /// A line that shares one flag between frames saves the opening flag.
    pub fn overhead_fields(&self, _payload_len: usize) -> Vec<(&'static str, usize)> {
        let mut fields = vec![("opening flag", 1)];
        if !self.acfc {
            fields.push(("address", 1));
            fields.push(("control", 1));
        }
        fields.push(("fcs", self.fcs.len()));
        fields.push(("closing flag", 1));
        fields
    }
}

// Bit-synchronous framing (RFC 1662 §5), as on leased lines, ISDN B channels and E1/T1
// timeslots: the same frame (address, control, PPP frame, FCS) between the same 0x7e
// flags, but transparency by zero-bit insertion instead of octet stuffing, and no start
// or stop bits. The octets are sent least significant bit first (ISO/IEC 13239 §4.2 bit
// order, which RFC 1662 §5 inherits from ISO 3309), so a run of ones may cross an octet
// boundary.

/// RFC 1662 §5.2: the longest run of contiguous ones a transmitter lets through; a zero
/// is inserted after it, so that only a flag (0x7e: six ones) holds six.
pub const MAX_ONES: u32 = 5;

/// For each run of ones already sent (0..=4) and each octet: the zero bits inserted while
/// sending the octet (low nibble) and the run of ones after it (high nibble).
const ZERO_INSERTION: [[u8; 256]; MAX_ONES as usize] = {
    let mut table = [[0u8; 256]; MAX_ONES as usize];
    let mut run = 0;
    while run < MAX_ONES as usize {
        let mut octet = 0;
        while octet < 256 {
            let (mut ones, mut inserted, mut bit) = (run, 0, 0);
            while bit < 8 {
                if (octet >> bit) & 1 == 1 {
                    ones += 1;
                    if ones == MAX_ONES as usize {
                        inserted += 1;
                        ones = 0;
                    }
                } else {
                    ones = 0;
                }
                bit += 1;
            }
            table[run][octet] = (inserted | (ones << 4)) as u8;
            octet += 1;
        }
        run += 1;
    }
    table
};

/// RFC 1662 §5.2: the zero bits a bit-synchronous transmitter inserts into `frame` (the
/// octets between the flags: address through FCS), one after every five contiguous ones,
/// "including the last 5 bits of the FCS"; the run counts across octets, sent least
/// significant bit first, and an inserted zero ends it. Data-dependent: 0 for octets with
/// no five ones in a row, at most `8 × len / 5` (all ones).
pub fn zero_bits_inserted(frame: &[u8]) -> u64 {
    let mut run = 0usize;
    let mut inserted = 0u64;
    for &octet in frame {
        let entry = ZERO_INSERTION[run][usize::from(octet)];
        inserted += u64::from(entry & 0x0f);
        run = usize::from(entry >> 4);
    }
    inserted
}

/// The most zero bits [`zero_bits_inserted`] can give for a frame of `len` octets: one
/// per five bits, when every bit is a one.
pub const fn max_zero_bits_inserted(len: usize) -> u64 {
    (8 * len as u64) / MAX_ONES as u64
}

impl Config {
    /// The bits a bit-synchronous line sends for `ppp_frame` (RFC 1662 §5): opening flag,
    /// the frame of [`Config::frame`] (address and control unless ACFC, FCS-16 or -32)
    /// with its inserted zero bits, closing flag; 8 bits per octet, no start or stop bits.
    /// The ACCM plays no part (RFC 1662 §7.1: it applies to octet-stuffed links only).
    /// Two flags per frame, as [`Config::wire_len`] counts them; a line sending frames
    /// back to back may share one flag between two frames (RFC 1662 §5.1).
    pub fn sync_line_bits(&self, ppp_frame: &[u8]) -> u64 {
        let frame = self.frame(ppp_frame);
        8 * (frame.len() as u64 + 2) + zero_bits_inserted(&frame)
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use proptest::prelude::*;

    /// Zero-bit insertion done bit by bit as RFC 1662 §5.2 words it, to check the table.
    fn stuffed_bits(frame: &[u8]) -> Vec<u8> {
        let mut bits = Vec::new();
        let mut ones = 0;
        for &octet in frame {
            for bit in 0..8 {
                let b = (octet >> bit) & 1;
                bits.push(b);
                ones = if b == 1 { ones + 1 } else { 0 };
                if ones == 5 {
                    bits.push(0);
                    ones = 0;
                }
            }
        }
        bits
    }

    #[test]
    fn acfc_receiver_reads_a_leading_ff_03_as_address_and_control() {
        // Found by crates/wire/fuzz (hdlc): under ACFC the sender omits ff 03, and RFC
        // 1661 §6.6 has the receiver take a leading ff 03 for them; a PPP frame that
        // itself began ff 03 (no valid protocol field does, §2) comes back without them.
        let config = Config { accm: 0, acfc: true, fcs: Fcs::Fcs16 };
        let mut line = Vec::new();
        config.encapsulate(&FRAME_BYTES[..12], &mut line);
        assert_eq!(config.decode_stream(&line), vec![Ok(PPP_LCP_ECHO.to_vec())]);
        // A PPP frame with a valid protocol field comes back whole.
        let ip = [0x00, 0x21, 0x45, 0x00];
        line.clear();
        config.encapsulate(&ip, &mut line);
        assert_eq!(line[1], 0x00, "ACFC: no address and control on a non-LCP frame");
        assert_eq!(config.decode_stream(&line), vec![Ok(ip.to_vec())]);
    }

    #[test]
    fn zero_bits_counted_by_hand() {
        // No octet with five ones in a row, and none across octets: nothing inserted.
        assert_eq!(zero_bits_inserted(&[0x00, 0x55, 0xaa, 0x03]), 0);
        // 0xff: eight ones, one zero after the fifth; the run left is 3.
        assert_eq!(zero_bits_inserted(&[0xff]), 1);
        // 0xff 0xff: 3 + 8 = 11 more ones after the first insertion: two more (at 5, 10).
        assert_eq!(zero_bits_inserted(&[0xff, 0xff]), 3);
        // 0x7e as data (not a flag): bits 0,1,1,1,1,1,1,0 sent LSB first: six ones, one zero.
        assert_eq!(zero_bits_inserted(&[0x7e]), 1);
        // 0xf8 0x07 LSB first: 0,0,0,1,1,1,1,1 | 1,1,1,0,0,0,0,0: a run of 8 crossing the
        // boundary, one zero.
        assert_eq!(zero_bits_inserted(&[0xf8, 0x07]), 1);
        // 0x1f 0x00: 1,1,1,1,1,0,0,0: exactly five ones: one zero (inserted after five).
        assert_eq!(zero_bits_inserted(&[0x1f, 0x00]), 1);
        // 0x0f 0x01: four ones, then 0,0,0,0 and a one: runs of 4 and 1, nothing.
        assert_eq!(zero_bits_inserted(&[0x0f, 0x01]), 0);
        assert_eq!(max_zero_bits_inserted(10), 16);
        assert_eq!(zero_bits_inserted(&[0xff; 10]), 16);
    }

    #[test]
    fn sync_line_bits_of_the_lcp_echo() {
        // FRAME_BYTES: ff 03 c0 21 09 01 00 08 00 00 00 00 6e f1 (14 octets). Runs of ones,
        // LSB first: ff = 8 ones (one zero, run 3 left), 03 = 1,1 → run 5: a zero, then
        // six zeros; c0 = 0×6,1,1; 21 = 1 → run 3 ends at 0; 09, 01, 08: short runs;
        // 6e = 0,1,1,1,0,1,1,0; f1 = 1,0,0,0,1,1,1,1 → 4 ones at the end. Two zeros in all.
        let config = Config { fcs: Fcs::Fcs16, acfc: false, accm: DEFAULT_ACCM };
        assert_eq!(config.frame(&PPP_LCP_ECHO), FRAME_BYTES);
        assert_eq!(zero_bits_inserted(&FRAME_BYTES), 2);
        assert_eq!(config.sync_line_bits(&PPP_LCP_ECHO), 8 * (14 + 2) + 2);
        // The ACCM does not matter on a synchronous line.
        assert_eq!(Config { accm: 0, ..config }.sync_line_bits(&PPP_LCP_ECHO), 8 * 16 + 2);
    }

    proptest! {
        #[test]
        fn zero_insertion_table_matches_bit_by_bit(frame in proptest::collection::vec(any::<u8>(), 0..64)) {
            let bits = stuffed_bits(&frame);
            prop_assert_eq!(zero_bits_inserted(&frame), (bits.len() - 8 * frame.len()) as u64);
            // Never six ones in a row after insertion (RFC 1662 §5.2).
            prop_assert!(!bits.windows(6).any(|w| w.iter().all(|&b| b == 1)));
            prop_assert!(zero_bits_inserted(&frame) <= max_zero_bits_inserted(frame.len()));
        }
    }

    // LCP Echo-Request (RFC 1661 §5.8), id 1, magic number 0, in HDLC-like framing.
    // FCS-16 computed by hand with RFC 1662 §C.2's bitwise algorithm (0xf16e, sent
    // 6e f1); stuffing with the default ACCM escapes every octet below 0x20.
    static PPP_LCP_ECHO: [u8; 10] = [0xc0, 0x21, 0x09, 0x01, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00];
    static FRAME_BYTES: [u8; 14] = [0xff, 0x03, 0xc0, 0x21, 0x09, 0x01, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x6e, 0xf1];
    static LINE_BYTES: [u8; 25] = [
        0x7e, 0xff, 0x7d, 0x23, 0xc0, 0x21, 0x7d, 0x29, 0x7d, 0x21, 0x7d, 0x20, 0x7d, 0x28, 0x7d, 0x20, 0x7d, 0x20,
        0x7d, 0x20, 0x7d, 0x20, 0x6e, 0xf1, 0x7e,
    ];

    #[test]
    fn test_parse() {
        let frame = Frame::new_checked(&FRAME_BYTES[..]).unwrap();
        assert!(frame.has_address_control());
        assert_eq!(frame.address(), 0xff);
        assert_eq!(frame.control(), 0x03);
        assert_eq!(frame.ppp(), &PPP_LCP_ECHO);
        assert_eq!(frame.fcs(), 0xf16e);
        assert_eq!(Repr::parse(&frame).unwrap(), Repr { acfc: false, fcs: Fcs::Fcs16 });
    }

    #[test]
    fn fcs_good_residue() {
        // RFC 1662 §C.2: running the FCS over data and FCS leaves the "good" value
        // 0xf0b8 before the final complement, i.e. 0x0f47 after it: this checks the
        // FCS octet order independently of our own encoder.
        assert_eq!(crate::crc::PPP_FCS16.checksum(&FRAME_BYTES), !0xf0b8u16);
    }

    #[test]
    fn test_emit() {
        let config = Config::default();
        assert_eq!(config.frame(&PPP_LCP_ECHO), FRAME_BYTES);
        let mut line = Vec::new();
        config.encapsulate(&PPP_LCP_ECHO, &mut line);
        assert_eq!(line, LINE_BYTES);
        assert_eq!(config.wire_len(&PPP_LCP_ECHO), LINE_BYTES.len());
        assert_eq!(config.decode_stream(&LINE_BYTES), vec![Ok(PPP_LCP_ECHO.to_vec())]);
    }

    #[test]
    fn rfc1662_stuffing_examples() {
        // RFC 1662 §4.2: 0x7e -> 7d 5e, 0x7d -> 7d 5d, and with the default ACCM
        // 0x01 -> 7d 21; with ACCM 0 control characters pass unescaped.
        let mut out = Vec::new();
        stuff(&[0x7e, 0x7d, 0x01, 0x41], DEFAULT_ACCM, &mut out);
        assert_eq!(out, [0x7d, 0x5e, 0x7d, 0x5d, 0x7d, 0x21, 0x41]);
        assert_eq!(stuffed_len(&[0x7e, 0x7d, 0x01, 0x41], 0), 6);
        assert_eq!(unstuff(&out, DEFAULT_ACCM).unwrap(), [0x7e, 0x7d, 0x01, 0x41]);
        // A flagged control character arriving unescaped was inserted by the line.
        assert_eq!(unstuff(&[0x41, 0x11, 0x42], 1 << 0x11).unwrap(), [0x41, 0x42]);
    }

    #[test]
    fn acfc_pfc_and_lcp_exception() {
        let config = Config { accm: 0, acfc: true, fcs: Fcs::Fcs16 };
        // IPv4 with PFC: protocol 0x21, then the datagram.
        let ppp = [0x21, 0x45, 0x00];
        let frame = config.frame(&ppp);
        assert_eq!(frame.len(), 3 + 2);
        let view = Frame::new_checked(&frame[..]).unwrap();
        assert!(!view.has_address_control());
        assert_eq!(view.ppp(), &ppp);
        assert_eq!(Repr::parse(&view).unwrap(), Repr { acfc: true, fcs: Fcs::Fcs16 });
        // LCP keeps address and control (RFC 1661 §6.6).
        assert_eq!(&config.frame(&PPP_LCP_ECHO)[..2], &[0xff, 0x03]);
        assert_eq!(config.overhead_fields(1500), vec![("opening flag", 1), ("fcs", 2), ("closing flag", 1)]);
        assert_eq!(
            Config::default().overhead_fields(1500),
            vec![("opening flag", 1), ("address", 1), ("control", 1), ("fcs", 2), ("closing flag", 1)]
        );
    }

    #[test]
    fn fcs32() {
        let config = Config { fcs: Fcs::Fcs32, ..Config::default() };
        let frame = config.frame(&PPP_LCP_ECHO);
        // CRC-32 of ff 03 c0 21 09 01 00 08 00 00 00 00 is 0xb0531214 (zlib), LSB first.
        assert_eq!(&frame[12..], &[0x14, 0x12, 0x53, 0xb0]);
        let mut line = Vec::new();
        config.encapsulate(&PPP_LCP_ECHO, &mut line);
        assert_eq!(config.decode_stream(&line), vec![Ok(PPP_LCP_ECHO.to_vec())]);
    }

    #[test]
    fn stream_errors() {
        let config = Config::default();
        let mut stream = vec![0x00, 0x13]; // line noise before the first flag
        stream.extend_from_slice(&LINE_BYTES);
        // Bad FCS.
        let mut bad = LINE_BYTES.to_vec();
        bad[22] ^= 1;
        stream.extend_from_slice(&bad[1..]); // shares the previous closing flag
                                             // Aborted frame: escape then flag.
        stream.extend_from_slice(&[0xff, 0x7d, 0x23, 0xc0, 0x7d, 0x7e]);
        // Runt.
        stream.extend_from_slice(&[0x21, 0x45, 0x7e]);
        // Bad control field.
        let mut ctl = vec![0xff, 0x13];
        ctl.extend_from_slice(&PPP_LCP_ECHO);
        let fcs = crate::crc::PPP_FCS16.checksum(&ctl).to_le_bytes();
        ctl.extend_from_slice(&fcs);
        stuff(&ctl, 0, &mut stream);
        stream.push(0x7e);
        // An unfinished frame at the end is not reported.
        stream.extend_from_slice(&[0xff, 0x03]);
        assert_eq!(
            config.decode_stream(&stream),
            vec![
                Ok(PPP_LCP_ECHO.to_vec()),
                Err(Error::Checksum),
                Err(Error::Malformed),
                Err(Error::Truncated),
                Err(Error::Malformed),
            ]
        );
        assert_eq!(Frame::new_checked(&[0xff, 0x03, 0x00][..]).unwrap_err(), Error::Truncated);
    }

    proptest! {
        #[test]
        fn line_roundtrip(ppp in proptest::collection::vec(any::<u8>(), 2..64), accm in any::<u32>(), acfc in any::<bool>(), fcs32 in any::<bool>()) {
            // A PPP frame never starts with 0xff (no protocol value does).
            prop_assume!(ppp[0] != 0xff);
            let config = Config { accm, acfc, fcs: if fcs32 { Fcs::Fcs32 } else { Fcs::Fcs16 } };
            let mut line = Vec::new();
            config.encapsulate(&ppp, &mut line);
            prop_assert_eq!(line.len(), config.wire_len(&ppp));
            // Only the two flags are 0x7e; no flagged control character is left bare.
            prop_assert_eq!(line.iter().filter(|&&b| b == FLAG).count(), 2);
            prop_assert!(line.iter().all(|&b| b >= 0x20 || accm & (1 << b) == 0));
            prop_assert_eq!(config.decode_stream(&line), vec![Ok(ppp.clone())]);
        }

        #[test]
        fn repr_roundtrip(ppp in proptest::collection::vec(any::<u8>(), 2..64), acfc in any::<bool>(), fcs32 in any::<bool>()) {
            prop_assume!(ppp[0] != 0xff);
            let repr = Repr { acfc, fcs: if fcs32 { Fcs::Fcs32 } else { Fcs::Fcs16 } };
            let mut buf = vec![0u8; repr.buffer_len(ppp.len())];
            let h = repr.header_len();
            buf[h..h + ppp.len()].copy_from_slice(&ppp);
            if !acfc { buf[0] = ADDRESS; }
            repr.emit(&mut Frame::with_fcs(&mut buf[..], repr.fcs));
            let frame = Frame::with_fcs(&buf[..], repr.fcs);
            let parsed = Repr::parse(&frame).unwrap();
            prop_assert_eq!(parsed, repr);
            let mut again = buf.clone();
            parsed.emit(&mut Frame::with_fcs(&mut again[..], repr.fcs));
            prop_assert_eq!(again, buf);
        }

        #[test]
        fn decode_never_panics(stream in proptest::collection::vec(any::<u8>(), 0..128), accm in any::<u32>()) {
            let _ = Config { accm, ..Config::default() }.decode_stream(&stream);
            let _ = Frame::new_checked(&stream[..]).map(|f| Repr::parse(&f));
        }
    }
}
