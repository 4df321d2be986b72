//! SLIP, the Serial Line Internet Protocol, and the accounting of asynchronous serial lines.
//!
//! Standards a reader must know:
//!
//! * RFC 1055, "A Nonstandard for Transmission of IP Datagrams over Serial Lines: SLIP":
//!   the four special bytes, the escaping rule, the optional leading END, and the
//!   1006-byte packet size of the Berkeley implementation.
//! * RFC 1144 §4 (VJ compression over SLIP, see [`crate::cslip`]): the first byte of a
//!   SLIP packet carries the packet type; SLIP itself does not look at it.
//! * ITU-T V.4 / EIA-232 asynchronous start-stop character framing (one start bit, 5 to 8
//!   data bits, optional parity, 1, 1.5 or 2 stop bits), modelled in [`serial`]; the same
//!   framing carries SLIP, CSLIP and PPP in HDLC-like framing (RFC 1662 §4) over an async line.
//!
//! SLIP has no header: a frame is the datagram with END (0xC0) and ESC (0xDB) bytes
//! escaped, followed by END. This file therefore has no `Packet` view and no `Repr`;
//! the whole-frame functions are [`Framing::encapsulate`] and [`decapsulate`], and the
//! streaming receiver is [`Decoder`].
//!
//! # Bad escapes
//!
//! RFC 1055's receiver stores the byte after an ESC unchanged when it is neither ESC_END
//! nor ESC_ESC ("this is a protocol violation ... leave the byte alone"). That silently
//! corrupts a datagram, so the [`Decoder`] by default *rejects* such a frame: it returns
//! `Err(Error::Malformed)` for it when its END arrives and resynchronises on that END.
//! [`BadEscape::Keep`] gives the RFC 1055 behaviour (the byte after ESC is kept, the ESC
//! dropped). An ESC immediately followed by END is always a frame end: in `Reject` mode
//! the frame is reported malformed, in `Keep` mode the dangling ESC is dropped (as Linux
//! `slip.c` does; RFC 1055's sample code would store the END and lose frame sync).

use crate::{Error, Result};

/// RFC 1055 "SLIP DRIVERS": END, ends a packet (octal 300).
pub const END: u8 = 0xC0;
/// RFC 1055: ESC, byte stuffing escape (octal 333). Not the ASCII ESC.
pub const ESC: u8 = 0xDB;
/// RFC 1055: ESC ESC_END means a data byte END (octal 334).
pub const ESC_END: u8 = 0xDC;
/// RFC 1055: ESC ESC_ESC means a data byte ESC (octal 335).
pub const ESC_ESC: u8 = 0xDD;
/// RFC 1055 "MAXIMUM PACKET SIZE": "1006 bytes", the Berkeley SLIP driver's limit,
/// not counting the framing characters.
pub const MTU: usize = 1006;

/// How a SLIP sender frames datagrams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Framing {
    /// RFC 1055 "SLIP DRIVERS": send an END before each packet too, which flushes any
    /// line noise into an (empty or bad) packet of its own. Recommended; on by default.
    pub leading_end: bool,
}

impl Default for Framing {
    fn default() -> Self {
        Framing { leading_end: true }
    }
}

impl Framing {
    /// Framing with or without the RFC 1055 leading END.
    pub const fn new(leading_end: bool) -> Self {
        Framing { leading_end }
    }

    /// Number of END bytes this framing adds around a packet (1 or 2).
    pub const fn end_bytes(&self) -> usize {
        if self.leading_end {
            2
        } else {
            1
        }
    }

    /// Length on the line of `payload` once escaped and framed.
    pub fn encoded_len(&self, payload: &[u8]) -> usize {
        payload.len() + escape_count(payload) + self.end_bytes()
    }

    /// Appends the SLIP frame of `payload` to `out` (RFC 1055 `send_packet`).
    pub fn encapsulate(&self, payload: &[u8], out: &mut Vec<u8>) {
        out.reserve(self.encoded_len(payload));
        if self.leading_end {
            out.push(END);
        }
        for &b in payload {
            match b {
                END => out.extend_from_slice(&[ESC, ESC_END]),
                ESC => out.extend_from_slice(&[ESC, ESC_ESC]),
                other => out.push(other),
            }
        }
        out.push(END);
    }

    /// Writes the SLIP frame of `payload` at the start of `buf` and returns its length.
    ///
    /// # Panics
    /// When `buf` is shorter than [`Framing::encoded_len`].
    pub fn encode_into(&self, payload: &[u8], buf: &mut [u8]) -> usize {
        let need = self.encoded_len(payload);
        assert!(buf.len() >= need, "SLIP buffer too small: {} < {}", buf.len(), need);
        let mut n = 0;
        let mut put = |b: u8| {
            buf[n] = b;
            n += 1;
        };
        if self.leading_end {
            put(END);
        }
        for &b in payload {
            match b {
                END => {
                    put(ESC);
                    put(ESC_END)
                }
                ESC => {
                    put(ESC);
                    put(ESC_ESC)
                }
                other => put(other),
            }
        }
        put(END);
        n
    }

    /// Named overhead for a payload of `payload_len` bytes whose content is not known:
    /// the escapes are the expected count for uniformly random bytes
    /// ([`expected_escapes`], rounded to the nearest byte).
    pub fn overhead_fields(&self, payload_len: usize) -> Vec<(&'static str, usize)> {
        self.fields((payload_len * 2 + 128) / 256)
    }

    /// Named overhead for this exact payload: the escapes are counted.
    pub fn overhead_fields_exact(&self, payload: &[u8]) -> Vec<(&'static str, usize)> {
        self.fields(escape_count(payload))
    }

    /// Named overhead in the worst case (every byte is END or ESC).
    pub fn overhead_fields_worst(&self, payload_len: usize) -> Vec<(&'static str, usize)> {
        self.fields(worst_case_escapes(payload_len))
    }

    fn fields(&self, escapes: usize) -> Vec<(&'static str, usize)> {
        let mut v = Vec::with_capacity(3);
        if self.leading_end {
            v.push(("end (leading)", 1));
        }
        v.push(("end", 1));
        v.push(("escapes", escapes));
        v
    }
}

/// Exact number of extra bytes escaping adds to `payload`: one per END or ESC byte.
pub fn escape_count(payload: &[u8]) -> usize {
    payload.iter().filter(|&&b| b == END || b == ESC).count()
}

/// Expected escapes for `payload_len` uniformly random bytes: 2/256 per byte.
pub fn expected_escapes(payload_len: usize) -> f64 {
    payload_len as f64 * 2.0 / 256.0
}

/// Worst-case escapes for `payload_len` bytes: every byte doubles.
pub const fn worst_case_escapes(payload_len: usize) -> usize {
    payload_len
}

/// Decodes exactly one SLIP frame (the inverse of [`Framing::encapsulate`]): leading
/// END bytes are skipped, the frame must end with END and contain no other END, and a
/// bad escape is an error.
pub fn decapsulate(frame: &[u8]) -> Result<Vec<u8>> {
    let start = frame.iter().position(|&b| b != END).unwrap_or(frame.len());
    let body = &frame[start..];
    let (&last, body) = body.split_last().ok_or(Error::Truncated)?;
    if last != END {
        return Err(Error::Truncated);
    }
    let mut out = Vec::with_capacity(body.len());
    let mut bytes = body.iter();
    while let Some(&b) = bytes.next() {
        match b {
            END => return Err(Error::Malformed),
            ESC => match bytes.next() {
                Some(&ESC_END) => out.push(END),
                Some(&ESC_ESC) => out.push(ESC),
                _ => return Err(Error::Malformed),
            },
            other => out.push(other),
        }
    }
    Ok(out)
}

/// tcpdump.org LINKTYPE_SLIP (8): each pcap record starts with this 16-byte pseudo-header
/// (BSD `net/slip.h` SLIP_HDRLEN), then holds the *decoded* (decompressed) datagram.
pub const PCAP_HEADER_LEN: usize = 16;
/// LINKTYPE_SLIP direction byte (BSD SLIPDIR_IN): received.
pub const PCAP_DIR_IN: u8 = 0;
/// LINKTYPE_SLIP direction byte (BSD SLIPDIR_OUT): sent.
pub const PCAP_DIR_OUT: u8 = 1;

/// The LINKTYPE_SLIP pseudo-header of a packet: the direction byte (SLX_DIR), then the
/// first 15 bytes (SLX_CHDR, CHDR_LEN) of the packet as it was on the link, i.e. with its
/// RFC 1144 type bits and, for COMPRESSED_TCP, the compressed header; zero-padded.
pub fn pcap_pseudo_header(outbound: bool, link_packet: &[u8]) -> [u8; PCAP_HEADER_LEN] {
    let mut h = [0u8; PCAP_HEADER_LEN];
    h[0] = if outbound { PCAP_DIR_OUT } else { PCAP_DIR_IN };
    let n = link_packet.len().min(PCAP_HEADER_LEN - 1);
    h[1..1 + n].copy_from_slice(&link_packet[..n]);
    h
}

/// What the [`Decoder`] does with a byte after ESC that is neither ESC_END nor ESC_ESC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BadEscape {
    /// Report the frame as `Err(Error::Malformed)` when its END arrives.
    #[default]
    Reject,
    /// RFC 1055 sample code: keep the byte, drop the ESC.
    Keep,
}

/// A streaming SLIP receiver (RFC 1055 `recv_packet`, made resumable).
///
/// Bytes go in with [`Decoder::push`] or [`Decoder::decode`]; each END that closes a
/// non-empty frame yields it. Empty frames (END END, the leading END) yield nothing.
#[derive(Debug, Clone)]
pub struct Decoder {
    buf: Vec<u8>,
    escaped: bool,
    bad: bool,
    overflow: bool,
    max_len: usize,
    policy: BadEscape,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder::new(MTU)
    }
}

impl Decoder {
    /// A receiver accepting packets of up to `max_len` decoded bytes ([`MTU`] is RFC
    /// 1055's). A longer frame yields `Err(Error::Malformed)` at its END; its bytes past
    /// `max_len` are not stored.
    pub fn new(max_len: usize) -> Self {
        Decoder { buf: Vec::new(), escaped: false, bad: false, overflow: false, max_len, policy: BadEscape::Reject }
    }

    /// The same receiver with another bad-escape policy.
    pub fn with_policy(mut self, policy: BadEscape) -> Self {
        self.policy = policy;
        self
    }

    /// Bytes of the frame in progress so far.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    fn store(&mut self, b: u8) {
        if self.buf.len() < self.max_len {
            self.buf.push(b);
        } else {
            self.overflow = true;
        }
    }

    /// Takes one byte off the line; returns a frame when this byte ended one.
    pub fn push(&mut self, byte: u8) -> Option<Result<Vec<u8>>> {
        if byte == END {
            let dangling = core::mem::replace(&mut self.escaped, false);
            let bad = core::mem::replace(&mut self.bad, false) || (dangling && self.policy == BadEscape::Reject);
            let overflow = core::mem::replace(&mut self.overflow, false);
            let frame = core::mem::take(&mut self.buf);
            if bad || overflow {
                return Some(Err(Error::Malformed));
            }
            if frame.is_empty() {
                return None;
            }
            return Some(Ok(frame));
        }
        if self.escaped {
            self.escaped = false;
            match byte {
                ESC_END => self.store(END),
                ESC_ESC => self.store(ESC),
                other => match self.policy {
                    BadEscape::Reject => self.bad = true,
                    BadEscape::Keep => self.store(other),
                },
            }
        } else if byte == ESC {
            self.escaped = true;
        } else {
            self.store(byte);
        }
        None
    }

    /// Takes a run of bytes off the line and returns every frame they completed, in order.
    pub fn decode(&mut self, bytes: &[u8]) -> Vec<Result<Vec<u8>>> {
        bytes.iter().filter_map(|&b| self.push(b)).collect()
    }
}

/// Asynchronous (start-stop) serial character framing and line-time accounting.
///
/// Each character on an async line is one start bit, `data_bits` data bits (least
/// significant first), an optional parity bit and 1, 1.5 or 2 stop bits (ITU-T V.4,
/// EIA-232). SLIP, CSLIP and PPP over an async line (RFC 1662 §4) all pay this per byte.
pub mod serial {
    use core::fmt;
    use core::str::FromStr;

    use crate::Error;

    /// The parity bit of a character.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum Parity {
        /// No parity bit.
        None,
        /// Parity bit makes the count of ones even.
        Even,
        /// Parity bit makes the count of ones odd.
        Odd,
        /// Parity bit always 1.
        Mark,
        /// Parity bit always 0.
        Space,
    }

    impl Parity {
        /// Bits the parity adds to a character (0 or 1).
        pub const fn bits(self) -> u32 {
            match self {
                Parity::None => 0,
                _ => 1,
            }
        }

        const fn letter(self) -> char {
            match self {
                Parity::None => 'n',
                Parity::Even => 'e',
                Parity::Odd => 'o',
                Parity::Mark => 'm',
                Parity::Space => 's',
            }
        }
    }

    /// Stop bits after each character.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum StopBits {
        /// One stop bit.
        One,
        /// One and a half stop bits (used with 5 data bits).
        OneAndHalf,
        /// Two stop bits.
        Two,
    }

    impl StopBits {
        /// Duration in half bit times.
        pub const fn half_bits(self) -> u32 {
            match self {
                StopBits::One => 2,
                StopBits::OneAndHalf => 3,
                StopBits::Two => 4,
            }
        }
    }

    /// A character format such as 8N1: start bit (always 1), data bits, parity, stop bits.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct SerialFormat {
        /// 5 to 8 data bits. SLIP and PPP need 8 (8-bit transparency).
        pub data_bits: u8,
        /// The parity bit, if any.
        pub parity: Parity,
        /// The stop bits.
        pub stop_bits: StopBits,
    }

    impl Default for SerialFormat {
        /// 8N1, the format of every modem SLIP/PPP link.
        fn default() -> Self {
            SerialFormat::N81
        }
    }

    impl SerialFormat {
        /// 8 data bits, no parity, 1 stop bit: 10 bits per byte.
        pub const N81: SerialFormat = SerialFormat { data_bits: 8, parity: Parity::None, stop_bits: StopBits::One };

        /// Line time of one character in half bit times (exact even with 1.5 stop bits).
        pub const fn half_bits_per_char(&self) -> u32 {
            2 * (1 + self.data_bits as u32 + self.parity.bits()) + self.stop_bits.half_bits()
        }

        /// Bits on the line per character: start + data + parity + stop (10 for 8N1).
        pub fn bits_per_char(&self) -> f64 {
            f64::from(self.half_bits_per_char()) / 2.0
        }

        /// Bits on the line for `bytes` characters, rounded up to a whole bit.
        pub const fn line_bits(&self, bytes: u64) -> u64 {
            (bytes * self.half_bits_per_char() as u64).div_ceil(2)
        }

        /// Nanoseconds `bytes` characters occupy a line of `rate_bps` bits per second,
        /// rounded up.
        ///
        /// # Panics
        /// When `rate_bps` is zero.
        pub const fn line_time_ns(&self, bytes: u64, rate_bps: u64) -> u64 {
            assert!(rate_bps > 0, "line rate must be positive");
            let half_bits = bytes as u128 * self.half_bits_per_char() as u128;
            let ns = (half_bits * 1_000_000_000).div_ceil(2 * rate_bps as u128);
            ns as u64
        }

        /// Fraction of the line rate left for data bytes (0.8 for 8N1).
        pub fn efficiency(&self) -> f64 {
            8.0 / self.bits_per_char()
        }
    }

    impl FromStr for SerialFormat {
        type Err = Error;

        /// Parses "8n1", "7E1", "8n2", "5n1.5", "7o1", "7m1", "7s1".
        fn from_str(s: &str) -> Result<Self, Error> {
            let s = s.trim();
            let mut chars = s.chars();
            let data_bits = match chars.next() {
                Some(c @ '5'..='8') => c as u8 - b'0',
                _ => return Err(Error::Malformed),
            };
            let parity = match chars.next().map(|c| c.to_ascii_lowercase()) {
                Some('n') => Parity::None,
                Some('e') => Parity::Even,
                Some('o') => Parity::Odd,
                Some('m') => Parity::Mark,
                Some('s') => Parity::Space,
                _ => return Err(Error::Malformed),
            };
            let stop_bits = match chars.as_str() {
                "1" => StopBits::One,
                "1.5" => StopBits::OneAndHalf,
                "2" => StopBits::Two,
                _ => return Err(Error::Malformed),
            };
            Ok(SerialFormat { data_bits, parity, stop_bits })
        }
    }

    impl fmt::Display for SerialFormat {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            let stop = match self.stop_bits {
                StopBits::One => "1",
                StopBits::OneAndHalf => "1.5",
                StopBits::Two => "2",
            };
            write!(f, "{}{}{}", self.data_bits, self.parity.letter().to_ascii_uppercase(), stop)
        }
    }
}

#[cfg(test)]
mod test {
    use super::serial::*;
    use super::*;
    use proptest::prelude::*;

    // A payload holding both special bytes, and its frame worked out by hand from the
    // RFC 1055 rules: C0 -> DB DC, DB -> DB DD, leading and trailing END.
    static PAYLOAD: [u8; 6] = [0x45, 0xc0, 0x01, 0xdb, 0xdc, 0xdd];
    static FRAME_BYTES: [u8; 10] = [0xc0, 0x45, 0xdb, 0xdc, 0x01, 0xdb, 0xdd, 0xdc, 0xdd, 0xc0];

    #[test]
    fn test_emit() {
        let mut out = Vec::new();
        Framing::default().encapsulate(&PAYLOAD, &mut out);
        assert_eq!(out, FRAME_BYTES);
        assert_eq!(Framing::default().encoded_len(&PAYLOAD), FRAME_BYTES.len());
        let mut buf = [0u8; 16];
        let n = Framing::new(false).encode_into(&PAYLOAD, &mut buf);
        assert_eq!(&buf[..n], &FRAME_BYTES[1..]);
    }

    #[test]
    fn test_parse() {
        assert_eq!(decapsulate(&FRAME_BYTES).unwrap(), PAYLOAD);
        assert_eq!(decapsulate(&FRAME_BYTES[1..]).unwrap(), PAYLOAD);
        let mut d = Decoder::default();
        let got = d.decode(&FRAME_BYTES);
        assert_eq!(got, vec![Ok(PAYLOAD.to_vec())]);
    }

    #[test]
    #[should_panic]
    fn encode_into_small_buffer_panics() {
        Framing::default().encode_into(&PAYLOAD, &mut [0u8; 9]);
    }

    #[test]
    fn decapsulate_errors() {
        assert_eq!(decapsulate(&[]), Err(Error::Truncated));
        assert_eq!(decapsulate(&[END, END]), Err(Error::Truncated));
        assert_eq!(decapsulate(&[0x45, 0x00]), Err(Error::Truncated)); // no END
        assert_eq!(decapsulate(&[0x45, ESC, 0x00, END]), Err(Error::Malformed));
        assert_eq!(decapsulate(&[0x45, ESC, END]), Err(Error::Malformed));
        assert_eq!(decapsulate(&[0x45, END, 0x46, END]), Err(Error::Malformed));
        assert_eq!(decapsulate(&[0x45, END]), Ok(vec![0x45]));
    }

    #[test]
    fn decoder_streams_and_resyncs() {
        let mut d = Decoder::default();
        // Noise, END, two packets split across calls, an empty frame.
        assert!(d.decode(&[0x11, 0x22]).is_empty());
        assert_eq!(d.decode(&[END]), vec![Ok(vec![0x11, 0x22])]);
        assert!(d.decode(&[END, 1, 2, ESC]).is_empty());
        assert_eq!(d.pending(), 2);
        assert_eq!(d.decode(&[ESC_ESC, END, 3, END, END]), vec![Ok(vec![1, 2, ESC]), Ok(vec![3])]);
    }

    #[test]
    fn decoder_bad_escape_policies() {
        let line = [END, 1, ESC, 0x41, 2, END, 9, END];
        let mut reject = Decoder::default();
        assert_eq!(reject.decode(&line), vec![Err(Error::Malformed), Ok(vec![9])]);
        let mut keep = Decoder::default().with_policy(BadEscape::Keep);
        assert_eq!(keep.decode(&line), vec![Ok(vec![1, 0x41, 2]), Ok(vec![9])]);
        // ESC END: malformed when rejecting, ESC dropped when keeping.
        assert_eq!(Decoder::default().decode(&[5, ESC, END]), vec![Err(Error::Malformed)]);
        let mut keep = Decoder::default().with_policy(BadEscape::Keep);
        assert_eq!(keep.decode(&[5, ESC, END]), vec![Ok(vec![5])]);
    }

    #[test]
    fn decoder_rejects_oversize() {
        let mut d = Decoder::new(4);
        assert_eq!(d.decode(&[1, 2, 3, 4, 5, END, 6, END]), vec![Err(Error::Malformed), Ok(vec![6])]);
        let mut d = Decoder::default();
        let mut line = vec![0x55; MTU];
        line.push(END);
        assert_eq!(d.decode(&line), vec![Ok(vec![0x55; MTU])]);
        line.insert(0, 0x55);
        assert_eq!(d.decode(&line), vec![Err(Error::Malformed)]);
    }

    #[test]
    fn overhead() {
        let f = Framing::default();
        assert_eq!(f.overhead_fields(40), vec![("end (leading)", 1), ("end", 1), ("escapes", 0)]);
        // 1006 random bytes expect 1006 * 2 / 256 = 7.86 escapes.
        assert_eq!(f.overhead_fields(1006)[2], ("escapes", 8));
        assert_eq!(f.overhead_fields_exact(&PAYLOAD)[2], ("escapes", 2));
        assert_eq!(f.overhead_fields_worst(10)[2], ("escapes", 10));
        assert_eq!(Framing::new(false).overhead_fields(0), vec![("end", 1), ("escapes", 0)]);
        assert!((expected_escapes(128) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn pcap_header() {
        let h = pcap_pseudo_header(true, &[0x80 | 0x44, 0x00, 0x12, 0x34, 5]);
        assert_eq!(h, [1, 0xc4, 0, 0x12, 0x34, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        let long = [0x45u8; 40];
        let h = pcap_pseudo_header(false, &long);
        assert_eq!((h[0], &h[1..]), (0, &long[..15]));
    }

    #[test]
    fn serial_formats() {
        let f: SerialFormat = "8n1".parse().unwrap();
        assert_eq!(f, SerialFormat::N81);
        assert_eq!(f.bits_per_char(), 10.0);
        assert_eq!(f.to_string(), "8N1");
        let f: SerialFormat = "7E1".parse().unwrap();
        assert_eq!((f.data_bits, f.parity, f.stop_bits), (7, Parity::Even, StopBits::One));
        assert_eq!(f.bits_per_char(), 10.0);
        assert_eq!("8n2".parse::<SerialFormat>().unwrap().bits_per_char(), 11.0);
        assert_eq!("8o2".parse::<SerialFormat>().unwrap().bits_per_char(), 12.0);
        let f: SerialFormat = "5n1.5".parse().unwrap();
        assert_eq!(f.bits_per_char(), 7.5);
        assert_eq!(f.line_bits(3), 23); // 22.5 rounded up
        assert_eq!(f.to_string(), "5N1.5");
        for bad in ["", "9n1", "4n1", "8x1", "8n3", "8n", "8n1.0", "8n11"] {
            assert_eq!(bad.parse::<SerialFormat>(), Err(Error::Malformed), "{bad}");
        }
    }

    #[test]
    fn line_time() {
        // 8N1 at 9600 bit/s: one byte is 10 bits, 1/960 s = 1,041,666.67 ns, rounded up.
        let f = SerialFormat::N81;
        assert_eq!(f.line_bits(1), 10);
        assert_eq!(f.line_time_ns(1, 9600), 1_041_667);
        // A 40-byte ACK in a leading-END SLIP frame: 42 bytes = 420 bits = 43.75 ms at 9600.
        assert_eq!(f.line_time_ns(42, 9600), 43_750_000);
        // 1006 bytes at 14.4 kbit/s: 10060 bits = 698.611.. ms.
        assert_eq!(f.line_time_ns(1006, 14_400), 698_611_112);
        assert!((f.efficiency() - 0.8).abs() < 1e-12);
    }

    proptest! {
        #[test]
        fn encode_decode_round_trip(payload in proptest::collection::vec(
            prop_oneof![Just(END), Just(ESC), Just(ESC_END), Just(ESC_ESC), any::<u8>()], 1..300),
            leading in any::<bool>()) {
            let f = Framing::new(leading);
            let mut out = Vec::new();
            f.encapsulate(&payload, &mut out);
            prop_assert_eq!(out.len(), f.encoded_len(&payload));
            // Only the framing ENDs appear raw.
            prop_assert_eq!(out.iter().filter(|&&b| b == END).count(), f.end_bytes());
            prop_assert_eq!(decapsulate(&out).unwrap(), payload.clone());
            let mut d = Decoder::new(usize::MAX);
            prop_assert_eq!(d.decode(&out), vec![Ok(payload.clone())]);
            // Emit again from the parsed payload: same bytes.
            let mut again = Vec::new();
            f.encapsulate(&decapsulate(&out).unwrap(), &mut again);
            prop_assert_eq!(again, out);
        }

        #[test]
        fn decoder_never_panics(line in proptest::collection::vec(any::<u8>(), 0..500)) {
            let _ = Decoder::new(64).decode(&line);
            let _ = Decoder::new(64).with_policy(BadEscape::Keep).decode(&line);
            let _ = decapsulate(&line);
        }
    }
}
