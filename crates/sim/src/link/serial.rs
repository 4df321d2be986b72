//! A serial line, point to point, simplex or full duplex: per direction a drop-tail
//! output queue of frames and a serializer that sends one frame at a time. Asynchronous
//! (a null-modem cable or a dial-up modem): in characters of a start-stop format.
//! Synchronous (a leased line, an ISDN B channel, an E1/T1): PPP in bit-synchronous
//! HDLC framing, 8 bits per octet plus the zero bits inserted for transparency.
//!
//! Standards a reader must know:
//!
//! * ITU-T V.4 / EIA-232 start-stop characters: 1 start bit, 5–8 data bits, optional
//!   parity, 1, 1.5 or 2 stop bits ([`SerialFormat`]; 8N1 is 10 bits per byte).
//! * RFC 1055 (SLIP): END-terminated frames, END and ESC escaped ([`wire::slip`]).
//! * RFC 1144 (VJ TCP/IP header compression, "CSLIP"): SLIP framing around compressed
//!   headers, the packet type in the first byte ([`wire::cslip`]).
//! * RFC 1661 §2 and RFC 1662 §3–4 (PPP in HDLC-like framing): protocol field, flags,
//!   address/control, FCS, and octet stuffing of flag, escape and the control characters
//!   the Async-Control-Character-Map names ([`wire::ppp`], [`wire::hdlc`]).
//! * RFC 1662 §5 (bit-synchronous HDLC framing): the same frame between 0x7e flags, a
//!   zero bit inserted after five contiguous ones, no start/stop bits
//!   ([`Framing::PppSync`], [`wire::hdlc::zero_bits_inserted`]).
//! * ITU-T V.42bis (1990) data compression in the modem, which V.34bis modems (seed 004:
//!   "typically achieve compression ratios of about 2-to-1") run over V.42 LAPM.
//!
//! # What the time on the line counts
//!
//! The frame is really encoded with the wire crate, so every escape (SLIP's END/ESC,
//! PPP's flag, escape and ACCM characters) and the PPP FCS, which itself may need escaping,
//! is counted. Each line octet then costs one character of the format; the time is
//! `ceil(octets × bits per character × 10⁹ / rate)` ns, computed exactly (1.5 stop bits
//! included). On a synchronous line the time is `ceil(bits × 10⁹ / rate)` ns with the
//! frame's bits counted from its actual octets: 8 per octet of flags, address, control,
//! PPP frame and FCS, plus each inserted zero bit (data-dependent: none to one in five). Between frames the line is idle (no inter-character gaps are modelled: a
//! UART with a FIFO sends characters back to back).
//!
//! # Modem compression is a ratio, not a compressor
//!
//! [`CompressionRatio`] divides the line time of the framed octets by a fixed ratio,
//! e.g. 2:1 for seed 004's V.34bis modems. No V.42bis dictionary is run: real gains depend
//! on the bytes (headers of a TCP ACK stream compress well, encrypted or already
//! compressed data not at all: V.42bis then switches to transparent mode, ratio 1). The
//! ratio stands for the modem's whole effective gain over the DTE rate; it never expands
//! (ratio ≥ 1).
//!
//! The API follows the Ethernet link's ([`crate::link::ethernet::EthernetLink`]): `enqueue`,
//! `start_next` (the packet and its time on the line in ns), `finish`, `backlog`, and
//! [`SerialLine::arrive`] / [`SerialLine::lost`] at the far end. Datagrams go in at one
//! end and come out at the other. SLIP and PPP framing are taken to be undone exactly
//! by the receiver (the line does not corrupt bytes). CSLIP really crosses the line
//! compressed: each direction has the sender's VJ compressor and the receiver's
//! decompressor (RFC 1144 §3.2.3, §3.2.4), so a frame the line loses leaves the two out
//! of step, the receiver tosses compressed packets until the sender re-synchronises it
//! with an UNCOMPRESSED_TCP packet (RFC 1144 §4.2: a retransmission, or a duplicate ACK
//! after the TCP sender's timeout, goes uncompressed).

use std::collections::VecDeque;
use std::fmt;

use wire::{cslip, hdlc, ppp, slip};

pub use wire::slip::serial::{Parity, SerialFormat, StopBits};

/// The slowest rate a line accepts, 300 b/s: ITU-T V.21 / Bell 103, the first modems
/// that carried async data over telephone lines.
pub const MIN_RATE_BPS: u64 = 300;

/// Frames a direction queues by default: Linux `slip.c` sets `tx_queue_len` to 10.
pub const DEFAULT_QUEUE_FRAMES: usize = 10;

/// How frames are put on the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// RFC 1055 SLIP; the packet is the IP datagram.
    Slip(slip::Framing),
    /// RFC 1144 VJ compression over SLIP: each direction runs a compressor of `slots`
    /// connection states (RFC 1144 MAX_STATES; [`cslip::DEFAULT_SLOTS`] is 16) and SLIP
    /// frames its output, type bits in the first byte.
    Cslip { slip: slip::Framing, slots: usize },
    /// PPP in HDLC-like framing (RFC 1662) with the given ACCM/ACFC/FCS, and PFC
    /// (RFC 1661 §6.5) for the protocol field. The packet is the PPP frame: protocol
    /// field, then information.
    Ppp { hdlc: hdlc::Config, pfc: bool },
    /// PPP in bit-synchronous HDLC framing (RFC 1662 §5) on a synchronous line: flags,
    /// address/control (unless ACFC), FCS-16 or -32 as in [`Framing::Ppp`], but zero-bit
    /// insertion instead of octet stuffing (`hdlc.accm` plays no part, RFC 1662 §7.1) and
    /// 8 bits per octet: the line's character format is not used.
    PppSync { hdlc: hdlc::Config, pfc: bool },
}

impl Default for Framing {
    /// SLIP with the leading END that RFC 1055 recommends.
    fn default() -> Framing {
        Framing::Slip(slip::Framing::default())
    }
}

impl Framing {
    /// PPP as a link starts before LCP negotiates anything (RFC 1662 §7.1: ACCM all ones,
    /// address/control present, FCS-16; no PFC).
    pub fn ppp_default() -> Framing {
        Framing::Ppp { hdlc: hdlc::Config::default(), pfc: false }
    }

    /// CSLIP with 16 slots and the leading END.
    pub fn cslip_default() -> Framing {
        Framing::Cslip { slip: slip::Framing::default(), slots: cslip::DEFAULT_SLOTS }
    }

    /// Appends the octets that go on the line for `packet` (see [`line_time_ns`] for what
    /// `packet` is in each framing).
    pub fn encode(&self, packet: &[u8], out: &mut Vec<u8>) {
        match self {
            Framing::Slip(f) | Framing::Cslip { slip: f, .. } => f.encapsulate(packet, out),
            Framing::Ppp { hdlc, .. } => hdlc.encapsulate(packet, out),
            // The octets between the flags are sent as they are; the inserted zero bits
            // live below the octet level.
            Framing::PppSync { hdlc, .. } => {
                out.push(hdlc::FLAG);
                out.extend_from_slice(&hdlc.frame(packet));
                out.push(hdlc::FLAG);
            }
        }
    }

    /// Whether the line is synchronous (no start/stop bits; [`Framing::PppSync`]).
    pub fn is_sync(&self) -> bool {
        matches!(self, Framing::PppSync { .. })
    }

    /// Half-bit times `packet` occupies the line: the line octets times the format's
    /// half-bits per character on an asynchronous line; twice
    /// [`hdlc::Config::sync_line_bits`] on a synchronous one (halves keep 1.5 stop bits
    /// exact).
    pub fn line_half_bits(&self, packet: &[u8], format: SerialFormat) -> u64 {
        match self {
            Framing::PppSync { hdlc, .. } => 2 * hdlc.sync_line_bits(packet),
            _ => self.line_octets(packet) as u64 * u64::from(format.half_bits_per_char()),
        }
    }

    /// Octets on the line for `packet`, escapes and FCS included.
    pub fn line_octets(&self, packet: &[u8]) -> usize {
        match self {
            Framing::Slip(f) | Framing::Cslip { slip: f, .. } => f.encoded_len(packet),
            Framing::Ppp { hdlc, .. } => hdlc.wire_len(packet),
            // Flags and frame octets; the inserted zero bits are not whole octets.
            Framing::PppSync { hdlc, .. } => 2 + hdlc.frame(packet).len(),
        }
    }
}

/// A modem's compression as a fixed ratio `num : den` (≥ 1) of the line time; see the
/// module doc: a ratio, not a compressor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CompressionRatio {
    num: u32,
    den: u32,
}

impl Default for CompressionRatio {
    fn default() -> CompressionRatio {
        CompressionRatio::NONE
    }
}

impl CompressionRatio {
    /// No compression (1:1).
    pub const NONE: CompressionRatio = CompressionRatio { num: 1, den: 1 };
    /// Seed 004's "about 2-to-1" of a V.34bis modem with V.42bis.
    pub const V42BIS_TYPICAL: CompressionRatio = CompressionRatio { num: 2, den: 1 };

    /// The ratio `num : den`, e.g. `(2, 1)` or `(3, 2)`. Refused: a zero term, or a ratio
    /// below 1 (V.42bis never expands: it falls back to transparent mode).
    pub fn new(num: u32, den: u32) -> Result<CompressionRatio, SerialError> {
        if num == 0 || den == 0 || num < den {
            return Err(SerialError::Compression { num, den });
        }
        Ok(CompressionRatio { num, den })
    }

    pub fn num(&self) -> u32 {
        self.num
    }
    pub fn den(&self) -> u32 {
        self.den
    }
}

/// Nanoseconds `octets` line octets occupy a `rate_bps` line in `format`, divided by the
/// modem's compression ratio, rounded up once at the end:
/// `ceil(octets × half-bits per character × den × 10⁹ / (2 × rate × num))`.
///
/// # Panics
/// If `rate_bps` is zero.
pub fn octets_time_ns(octets: u64, format: SerialFormat, rate_bps: u64, compression: CompressionRatio) -> u64 {
    half_bits_time_ns(u128::from(octets) * u128::from(format.half_bits_per_char()), rate_bps, compression)
}

/// Nanoseconds `half_bits` half-bit times occupy a `rate_bps` line, divided by the
/// modem's compression ratio, rounded up once:
/// `ceil(half_bits × den × 10⁹ / (2 × rate × num))`.
///
/// # Panics
/// If `rate_bps` is zero.
pub fn half_bits_time_ns(half_bits: u128, rate_bps: u64, compression: CompressionRatio) -> u64 {
    assert!(rate_bps > 0, "serial line: a rate of 0 b/s never sends a character");
    let numerator = half_bits * u128::from(compression.den) * 1_000_000_000;
    let denominator = 2 * u128::from(rate_bps) * u128::from(compression.num);
    u64::try_from(numerator.div_ceil(denominator)).expect("serial line: time overflows u64 ns")
}

/// Nanoseconds `frame` occupies the line: encoded with `framing` (escapes counted),
/// sent in `format` characters at `rate_bps`, the time divided by `compression`.
///
/// `frame` is what the framing's sender is handed: for [`Framing::Slip`] the IP
/// datagram; for [`Framing::Cslip`] the packet the VJ compressor produced, with its type
/// bits in the first byte (a TYPE_IP packet is the datagram itself); for [`Framing::Ppp`]
/// the PPP frame of RFC 1661 §2 (protocol field, then information). [`SerialLine`] does
/// that step itself from datagrams.
///
/// This counts characters whatever the format; a 7-bit format cannot carry SLIP or PPP,
/// which [`SerialLine::new`] refuses.
///
/// # Panics
/// If `rate_bps` is zero.
pub fn line_time_ns(
    frame: &[u8],
    framing: &Framing,
    format: SerialFormat,
    rate_bps: u64,
    compression: CompressionRatio,
) -> u64 {
    half_bits_time_ns(u128::from(framing.line_half_bits(frame, format)), rate_bps, compression)
}

/// Whether a line carries frames both ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Duplex {
    /// Only from end 0 to end 1 (seed 004's ACK return path is one such line, paired
    /// with a radio the other way).
    Simplex,
    /// Both ways at once, each direction at the full rate (a null-modem cable, a V.34
    /// modem pair).
    #[default]
    Full,
}

/// Why a line configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SerialError {
    /// A rate of 0 b/s.
    ZeroRate,
    /// A rate below [`MIN_RATE_BPS`].
    RateTooLow(u64),
    /// SLIP and PPP need 8-bit characters; the format has fewer data bits.
    NotEightBit(SerialFormat),
    /// A queue of 0 frames drops everything.
    ZeroQueue,
    /// A compression ratio with a zero term or below 1.
    Compression { num: u32, den: u32 },
    /// A VJ compressor needs 1 to 256 slots (RFC 1144 §3.2.2: one-byte connection numbers).
    VjSlots(usize),
    /// Modem compression on a synchronous line: V.42bis belongs to the modems of an
    /// asynchronous dial-up line; a leased line or ISDN channel has none.
    SyncCompression,
}

impl fmt::Display for SerialError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SerialError::ZeroRate => write!(f, "serial line rate is 0 b/s; give a rate of at least {MIN_RATE_BPS} b/s"),
            SerialError::RateTooLow(r) => {
                write!(f, "serial line rate {r} b/s is below the {MIN_RATE_BPS} b/s of the slowest modem (V.21)")
            }
            SerialError::NotEightBit(fmt) => write!(
                f,
                "serial format {fmt} has {} data bits, but SLIP and PPP send 8-bit bytes; use 8N1",
                fmt.data_bits
            ),
            SerialError::ZeroQueue => write!(f, "a serial line queue of 0 frames drops every frame"),
            SerialError::Compression { num, den } => {
                write!(f, "compression ratio {num}:{den} must be at least 1:1 with no zero term")
            }
            SerialError::VjSlots(n) => write!(f, "VJ compression needs 1 to 256 slots, not {n}"),
            SerialError::SyncCompression => {
                write!(f, "modem compression (V.42bis) is for asynchronous modem lines; a synchronous line has none")
            }
        }
    }
}

impl std::error::Error for SerialError {}

/// A serial line's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SerialConfig {
    /// Bits per second on the line, each direction. At least [`MIN_RATE_BPS`].
    pub rate_bps: u64,
    /// Character format; 8N1 by default. Must have 8 data bits.
    pub format: SerialFormat,
    /// SLIP by default.
    pub framing: Framing,
    /// Modem compression; none by default.
    pub compression: CompressionRatio,
    /// Full duplex by default.
    pub duplex: Duplex,
    /// Drop-tail limit per direction, in frames (the one being sent not counted);
    /// [`DEFAULT_QUEUE_FRAMES`] by default.
    pub queue_frames: usize,
    /// One-way propagation delay in ns (0 for a cable; a modem pair adds tens of ms of
    /// its own, which belongs here).
    pub delay_ns: u64,
}

impl SerialConfig {
    /// A line at `rate_bps` with every other field at its default.
    pub fn new(rate_bps: u64) -> SerialConfig {
        SerialConfig {
            rate_bps,
            format: SerialFormat::N81,
            framing: Framing::default(),
            compression: CompressionRatio::NONE,
            duplex: Duplex::Full,
            queue_frames: DEFAULT_QUEUE_FRAMES,
            delay_ns: 0,
        }
    }

    /// Checks every field; [`SerialLine::new`] calls it.
    pub fn validate(&self) -> Result<(), SerialError> {
        if self.rate_bps == 0 {
            return Err(SerialError::ZeroRate);
        }
        if self.rate_bps < MIN_RATE_BPS {
            return Err(SerialError::RateTooLow(self.rate_bps));
        }
        if self.format.data_bits != 8 {
            return Err(SerialError::NotEightBit(self.format));
        }
        if self.queue_frames == 0 {
            return Err(SerialError::ZeroQueue);
        }
        if let Framing::Cslip { slots, .. } = self.framing {
            if !(1..=cslip::MAX_SLOTS).contains(&slots) {
                return Err(SerialError::VjSlots(slots));
            }
        }
        CompressionRatio::new(self.compression.num, self.compression.den)?;
        if self.framing.is_sync() && self.compression.num != self.compression.den {
            return Err(SerialError::SyncCompression);
        }
        Ok(())
    }
}

/// Why [`SerialLine::enqueue`] gave a frame back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RejectReason {
    /// The queue holds `queue_frames` frames: drop-tail.
    QueueFull,
    /// A simplex line has no sender at end 1.
    Simplex,
}

/// A frame [`SerialLine::enqueue`] did not take, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    pub frame: Vec<u8>,
    pub reason: RejectReason,
}

/// One direction of a line: the sending end's queue, serializer and counters.
#[derive(Debug, Default)]
pub struct SerialDirection {
    queue: VecDeque<Vec<u8>>,
    /// The sender's VJ state (CSLIP only), fed in transmission order.
    vj: Option<Box<cslip::Compressor>>,
    /// The far end's VJ state for this direction (CSLIP only), fed in arrival order.
    unvj: Option<Box<cslip::Decompressor>>,
    /// Received CSLIP packets tossed after a loss (RFC 1144 §4.2).
    pub tossed: u64,
    /// Whether a frame is being sent.
    pub busy: bool,
    /// Total time on the line, ns.
    pub busy_ns: u64,
    pub frames_sent: u64,
    /// Datagram bytes sent (as handed to `enqueue`).
    pub bytes_sent: u64,
    /// Octets on the line, after header compression and framing, before the modem's
    /// compression ratio; on a synchronous line the flags and frame octets, the inserted
    /// zero bits not counted (they are not whole octets).
    pub line_octets_sent: u64,
    /// Frames refused by drop-tail.
    pub drops: u64,
}

/// A point-to-point asynchronous serial line.
#[derive(Debug)]
pub struct SerialLine {
    config: SerialConfig,
    /// `dirs[i]` sends from end `i` to the other end.
    pub dirs: [SerialDirection; 2],
}

impl SerialLine {
    /// A line with empty queues, or why the configuration is refused.
    pub fn new(config: SerialConfig) -> Result<SerialLine, SerialError> {
        config.validate()?;
        let mut dirs: [SerialDirection; 2] = Default::default();
        if let Framing::Cslip { slots, .. } = config.framing {
            for dir in &mut dirs {
                dir.vj = Some(Box::new(cslip::Compressor::new(slots)));
                dir.unvj = Some(Box::new(cslip::Decompressor::new(slots)));
            }
        }
        Ok(SerialLine { config, dirs })
    }

    pub fn config(&self) -> &SerialConfig {
        &self.config
    }

    /// The datagrams waiting at end `from` (for the end-of-run census of `conservation`).
    pub fn queued(&self, from: usize) -> impl Iterator<Item = &[u8]> {
        self.dirs[from].queue.iter().map(Vec::as_slice)
    }

    /// Queues the datagram `frame` at end `from` (0 or 1); gives it back when the queue
    /// is full (counted in `drops`) or when a simplex line has no sender there.
    pub fn enqueue(&mut self, from: usize, frame: Vec<u8>) -> Result<(), Rejected> {
        if from == 1 && self.config.duplex == Duplex::Simplex {
            return Err(Rejected { frame, reason: RejectReason::Simplex });
        }
        let dir = &mut self.dirs[from];
        if dir.queue.len() >= self.config.queue_frames {
            dir.drops += 1;
            return Err(Rejected { frame, reason: RejectReason::QueueFull });
        }
        dir.queue.push_back(frame);
        Ok(())
    }

    /// Takes the next datagram at end `from` if the serializer is idle; returns what
    /// crosses the line (the datagram, or for CSLIP the VJ packet with its type bits)
    /// with its time on the line in ns, and marks the serializer busy. CSLIP compresses
    /// here, in the order frames go on the line, as Linux `sl_encaps` does; give what
    /// arrives to [`Self::arrive`].
    pub fn start_next(&mut self, from: usize) -> Option<(Vec<u8>, u64)> {
        let config = self.config;
        let dir = &mut self.dirs[from];
        if dir.busy {
            return None;
        }
        let frame = dir.queue.pop_front()?;
        let mut packet = Vec::with_capacity(frame.len() + 4);
        match config.framing {
            Framing::Slip(_) => packet.extend_from_slice(&frame),
            Framing::Cslip { .. } => {
                let vj = dir.vj.as_mut().expect("CSLIP direction has a compressor");
                let kind = vj.compress(&frame, &mut packet);
                if !packet.is_empty() {
                    cslip::slip_mark(kind, &mut packet);
                }
            }
            Framing::Ppp { pfc, .. } | Framing::PppSync { pfc, .. } => {
                let protocol = match frame.first().map(|b| b >> 4) {
                    Some(6) => ppp::Protocol::Ipv6,
                    _ => ppp::Protocol::Ipv4,
                };
                ppp::Repr { protocol, pfc }.encapsulate(&frame, &mut packet);
            }
        }
        let octets = config.framing.line_octets(&packet) as u64;
        let ns = line_time_ns(&packet, &config.framing, config.format, config.rate_bps, config.compression);
        dir.busy = true;
        dir.busy_ns += ns;
        dir.frames_sent += 1;
        dir.bytes_sent += frame.len() as u64;
        dir.line_octets_sent += octets;
        match config.framing {
            Framing::Cslip { .. } => Some((packet, ns)),
            _ => Some((frame, ns)),
        }
    }

    /// What [`Self::start_next`] returned at end `from` reached the other end: the
    /// datagram, or why there is none (a CSLIP packet tossed or refused by the
    /// decompressor).
    pub fn arrive(&mut self, from: usize, mut packet: Vec<u8>) -> Result<Vec<u8>, &'static str> {
        let dir = &mut self.dirs[from];
        let Some(unvj) = dir.unvj.as_mut() else { return Ok(packet) };
        if packet.is_empty() {
            return Ok(packet);
        }
        let kind = cslip::slip_unmark(&mut packet).map_err(|_| "CSLIP packet of no known type")?;
        let mut datagram = Vec::with_capacity(packet.len() + 40);
        match unvj.decompress(kind, &packet, &mut datagram) {
            Ok(cslip::Received::Delivered) => Ok(datagram),
            Ok(cslip::Received::Tossed) => {
                dir.tossed += 1;
                Err("CSLIP: compressed packet tossed after a lost frame, until an uncompressed one (RFC 1144 §4.2)")
            }
            Err(_) => {
                dir.tossed += 1;
                Err("CSLIP: the decompressor refused the packet (RFC 1144 §3.2.4)")
            }
        }
    }

    /// The line lost (or damaged) what end `from` sent: a CSLIP receiver is told, and
    /// tosses until re-synchronised (RFC 1144 §4.2, A.3's TYPE_ERROR).
    pub fn lost(&mut self, from: usize) {
        if let Some(unvj) = self.dirs[from].unvj.as_mut() {
            unvj.frame_error();
        }
    }

    /// The frame being sent at end `from` has left the line.
    pub fn finish(&mut self, from: usize) {
        self.dirs[from].busy = false;
    }

    /// The length of the next datagram waiting at end `from`, if any.
    pub fn peek_len(&self, from: usize) -> Option<usize> {
        self.dirs[from].queue.front().map(Vec::len)
    }

    /// Frames waiting or being sent at end `from`.
    /// Datagram bytes waiting (not yet on the line) at end `from`.
    pub fn queued_bytes(&self, from: usize) -> usize {
        self.dirs[from].queue.iter().map(Vec::len).sum()
    }

    pub fn backlog(&self, from: usize) -> usize {
        self.dirs[from].queue.len() + usize::from(self.dirs[from].busy)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn octets_time_is_exact_with_half_stop_bits() {
        // 5N1.5: 7.5 bits per character; 3 characters = 22.5 bits at 300 b/s = 75 ms.
        let f: SerialFormat = "5n1.5".parse().unwrap();
        assert_eq!(octets_time_ns(3, f, 300, CompressionRatio::NONE), 75_000_000);
        // 1 byte 8N1 at 115200: 10/115200 s = 86 805.55… ns, rounded up.
        assert_eq!(octets_time_ns(1, SerialFormat::N81, 115_200, CompressionRatio::NONE), 86_806);
        // 3:2 compression: two thirds of 1 s.
        let r = CompressionRatio::new(3, 2).unwrap();
        assert_eq!(octets_time_ns(30, SerialFormat::N81, 300, r), 666_666_667);
    }

    #[test]
    fn sync_line_time_of_known_bytes() {
        // The LCP Echo-Request of crates/wire/src/hdlc.rs's tests, id 1, magic 0, framed
        // ff 03 c0 21 09 01 00 08 00 00 00 00 6e f1 (FCS-16 by RFC 1662 §C.2). Sent least
        // significant bit first, runs of ones: ff = 8 ones (a zero after the fifth, 3
        // left), 03 = two more ones: five, a zero; c0 ends with 2, 21 starts with 1 (3);
        // 6e: runs of 3 and 2; f1: 1, then 4 at the end. Two inserted zeros; 14 octets and
        // 2 flags: 16 × 8 + 2 = 130 bits.
        let lcp = [0xc0, 0x21, 0x09, 0x01, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00];
        let sync = Framing::PppSync { hdlc: hdlc::Config::default(), pfc: false };
        let none = CompressionRatio::NONE;
        assert_eq!(sync.line_half_bits(&lcp, SerialFormat::N81), 2 * 130);
        // An ISDN B channel, 64 kb/s (ITU-T I.430): 130 / 64 000 s = 2 031 250 ns exactly.
        assert_eq!(line_time_ns(&lcp, &sync, SerialFormat::N81, 64_000, none), 2_031_250);
        // E1, 2.048 Mb/s (ITU-T G.704): 130 / 2 048 000 s = 63 476.5625 ns, rounded up.
        assert_eq!(line_time_ns(&lcp, &sync, SerialFormat::N81, 2_048_000, none), 63_477);
        // The same frame on an asynchronous line, 8N1 and the default ACCM: the nine octets
        // below 0x20 (03 09 01 00 08 00 00 00 00) are escaped, 14 + 9 + 2 flags = 25
        // characters of 10 bits: 250 bits, 3 906 250 ns at 64 kb/s.
        let async_ppp = Framing::ppp_default();
        assert_eq!(line_time_ns(&lcp, &async_ppp, SerialFormat::N81, 64_000, none), 3_906_250);
        // The character format plays no part on a synchronous line.
        assert_eq!(line_time_ns(&lcp, &sync, "7e2".parse().unwrap(), 64_000, none), 2_031_250);
    }

    #[test]
    fn sync_ppp_header_options() {
        // RFC 1661 §6.5/§6.6, RFC 1662 §C.3: an IPv4 PPP frame (protocol 0x0021, then 20
        // octets) with address/control, FCS-16: 2 + 22 + 2 = 26 frame octets, 28 with the
        // flags; ACFC and PFC save 2 + 1; FCS-32 adds 2.
        let ppp_frame_2 = [&[0x00, 0x21][..], &[0x45; 20][..]].concat();
        let ppp_frame_1 = [&[0x21][..], &[0x45; 20][..]].concat();
        let sync = |acfc: bool, fcs: hdlc::Fcs| Framing::PppSync {
            hdlc: hdlc::Config { acfc, fcs, ..Default::default() },
            pfc: false,
        };
        assert_eq!(sync(false, hdlc::Fcs::Fcs16).line_octets(&ppp_frame_2), 28);
        assert_eq!(sync(true, hdlc::Fcs::Fcs16).line_octets(&ppp_frame_1), 25);
        assert_eq!(sync(false, hdlc::Fcs::Fcs32).line_octets(&ppp_frame_2), 30);
    }

    #[test]
    fn sync_line_refuses_modem_compression() {
        let mut config = SerialConfig::new(64_000);
        config.framing = Framing::PppSync { hdlc: hdlc::Config::default(), pfc: false };
        assert!(config.validate().is_ok());
        // 1:1 however written (the configuration's 1.0 arrives as 1000:1000) is none.
        config.compression = CompressionRatio::new(1000, 1000).unwrap();
        assert!(config.validate().is_ok());
        config.compression = CompressionRatio::V42BIS_TYPICAL;
        assert_eq!(config.validate(), Err(SerialError::SyncCompression));
    }

    #[test]
    fn compression_ratio_refuses_expansion_and_zero() {
        assert!(CompressionRatio::new(1, 2).is_err());
        assert!(CompressionRatio::new(0, 0).is_err());
        assert_eq!(CompressionRatio::new(4, 2).unwrap().num(), 4);
    }

    #[test]
    fn cslip_empty_datagram_does_not_panic() {
        let mut line =
            SerialLine::new(SerialConfig { framing: Framing::cslip_default(), ..SerialConfig::new(9600) }).unwrap();
        line.enqueue(0, Vec::new()).unwrap();
        let (frame, ns) = line.start_next(0).unwrap();
        assert!(frame.is_empty());
        // Just the two ENDs.
        assert_eq!(ns, octets_time_ns(2, SerialFormat::N81, 9600, CompressionRatio::NONE));
    }
}
