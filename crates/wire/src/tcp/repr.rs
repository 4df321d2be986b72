//! The header as plain values: parse, layout and emit (options in Linux's order).

use super::*;

/// The SYN/FIN/RST/PSH control bits a segment carries, as smoltcp models them: at most
/// one of SYN, FIN, RST; PSH is kept only on a segment with none of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Control {
    #[default]
    None,
    Psh,
    Syn,
    Fin,
    Rst,
}

impl Control {
    /// Sequence space the control bit occupies (RFC 9293 §3.4: SYN and FIN count one).
    pub const fn len(self) -> usize {
        match self {
            Control::Syn | Control::Fin => 1,
            _ => 0,
        }
    }

    /// True when [`len`](Self::len) is zero.
    pub const fn is_empty(self) -> bool {
        self.len() == 0
    }
}

/// The data after a header, for [`Repr::emit_append`]: octets, or a run of zero
/// octets (a bulk sender's payload, which needs no buffer of its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload<'a> {
    Bytes(&'a [u8]),
    Zeros(usize),
}

impl Payload<'_> {
    /// Octets of data.
    pub fn len(&self) -> usize {
        match *self {
            Payload::Bytes(b) => b.len(),
            Payload::Zeros(n) => n,
        }
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A TCP header as plain values (RFC 9293 §3.1), with the options a stack uses.
///
/// Not kept: URG and the urgent pointer (emitted as zero), PSH together with
/// SYN/FIN/RST, the NS bit, and the exact placement of NOP padding (emit uses
/// Linux's layout). Unknown options are kept raw in `other_options`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    pub src_port: u16,
    pub dst_port: u16,
    pub control: Control,
    pub seq_number: SeqNumber,
    /// Present exactly when the ACK bit is set.
    pub ack_number: Option<SeqNumber>,
    /// The Window field, unscaled.
    pub window_len: u16,
    /// RFC 7323 §2: the shift count of a Window Scale option.
    pub window_scale: Option<u8>,
    /// RFC 9293 §3.2: a Maximum Segment Size option.
    pub max_seg_size: Option<u16>,
    /// RFC 2018 §2: a SACK-Permitted option.
    pub sack_permitted: bool,
    /// RFC 2018 §3: up to three SACK blocks (a parsed fourth is dropped); emit writes
    /// as many as fit in the 40 option octets.
    pub sack_ranges: [Option<(u32, u32)>; 3],
    /// RFC 7323 §3: (TSval, TSecr).
    pub timestamp: Option<(u32, u32)>,
    /// RFC 3168 §6.1: ECN-Echo.
    pub ece: bool,
    /// RFC 3168 §6.1: Congestion Window Reduced.
    pub cwr: bool,
    /// Options not modelled above, raw; emitted after the others when they fit.
    pub other_options: OtherOptions,
    /// Data octets after the header.
    pub payload_len: usize,
}

impl Repr {
    /// A bare segment: no options, no flags but `control`, no ACK.
    pub fn new(src_port: u16, dst_port: u16, control: Control, seq_number: SeqNumber, window_len: u16) -> Repr {
        Repr {
            src_port,
            dst_port,
            control,
            seq_number,
            ack_number: None,
            window_len,
            window_scale: None,
            max_seg_size: None,
            sack_permitted: false,
            sack_ranges: [None; 3],
            timestamp: None,
            ece: false,
            cwr: false,
            other_options: OtherOptions::empty(),
            payload_len: 0,
        }
    }

    /// Parses a segment carried from `src` to `dst` (the buffer is the whole segment),
    /// verifying the checksum. Port 0 and SYN/FIN/RST combinations are malformed.
    #[inline(always)]
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>, src: &Address, dst: &Address) -> Result<Repr> {
        packet.check_len()?;
        let data = packet.buffer.as_ref();
        // The fixed header read once from a 20-octet array (check_len saw it is there).
        let h: &[u8; HEADER_LEN] = data[..HEADER_LEN].try_into().map_err(|_| Error::Truncated)?;
        let word16 = |at: usize| u16::from_be_bytes([h[at], h[at + 1]]);
        let word32 = |at: usize| u32::from_be_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]]);
        let (src_port, dst_port) = (word16(field::SRC_PORT.start), word16(field::DST_PORT.start));
        if src_port == 0 || dst_port == 0 {
            return Err(Error::Malformed);
        }
        if !packet.verify_checksum(src, dst) {
            return Err(Error::Checksum);
        }
        let raw = word16(field::FLAGS.start);
        let bit = |f: u16| raw & f != 0;
        // The four low flag bits (FIN, SYN, RST, PSH) index the control they make: PSH
        // alone, or at most one of SYN, FIN, RST, with or without PSH.
        const CONTROLS: [Option<Control>; 16] = {
            let mut t = [None; 16];
            t[0] = Some(Control::None);
            t[flags::PSH as usize] = Some(Control::Psh);
            let mut psh = 0;
            while psh <= flags::PSH as usize {
                t[flags::SYN as usize | psh] = Some(Control::Syn);
                t[flags::FIN as usize | psh] = Some(Control::Fin);
                t[flags::RST as usize | psh] = Some(Control::Rst);
                psh += flags::PSH as usize;
            }
            t
        };
        let Some(control) = CONTROLS[usize::from(raw & 0xf)] else { return Err(Error::Malformed) };
        let header_len = usize::from(raw >> 12) * 4;
        let seq = SeqNumber::from_u32(word32(field::SEQ_NUM.start));
        let mut repr = Repr::new(src_port, dst_port, control, seq, word16(field::WIN_SIZE.start));
        repr.ack_number = bit(flags::ACK).then(|| SeqNumber::from_u32(word32(field::ACK_NUM.start)));
        repr.ece = bit(flags::ECE);
        repr.cwr = bit(flags::CWR);
        repr.payload_len = data.len() - header_len;

        let mut options = &data[HEADER_LEN..header_len];
        // Fast path for the options of nearly every segment of a connection with
        // timestamps (RFC 7323 Appendix A's layout: NOP, NOP, Timestamps), alone or
        // followed by NOP, NOP, SACK (RFC 2018 §3) as Linux sends them; the loop below
        // gives the same result, option by option.
        if let [1, 1, 8, 10, t0, t1, t2, t3, e0, e1, e2, e3, rest @ ..] = options {
            let sack = match rest {
                [] => Some(&[][..]),
                [1, 1, 5, len, blocks @ ..] if usize::from(*len) == blocks.len() + 2 && matches!(len, 10 | 18 | 26) => {
                    Some(blocks)
                }
                _ => None,
            };
            if let Some(blocks) = sack {
                repr.timestamp =
                    Some((u32::from_be_bytes([*t0, *t1, *t2, *t3]), u32::from_be_bytes([*e0, *e1, *e2, *e3])));
                for (slot, b) in repr.sack_ranges.iter_mut().zip(blocks.chunks_exact(8)) {
                    *slot = Some((be32(b, 0..4), be32(b, 4..8)));
                }
                options = &[];
            }
        }
        while !options.is_empty() {
            let (rest, option) = TcpOption::parse(options)?;
            match option {
                TcpOption::EndOfList => break,
                TcpOption::NoOperation => {}
                TcpOption::MaxSegmentSize(v) => repr.max_seg_size = Some(v),
                TcpOption::WindowScale(v) => repr.window_scale = Some(v),
                TcpOption::SackPermitted => repr.sack_permitted = true,
                TcpOption::SackRange(blocks) => repr.sack_ranges = [blocks[0], blocks[1], blocks[2]],
                TcpOption::TimeStamp { tsval, tsecr } => repr.timestamp = Some((tsval, tsecr)),
                other @ TcpOption::Unknown { .. } => repr.other_options.push(&other)?,
            }
            options = rest;
        }
        Ok(repr)
    }

    /// (octets of the options before SACK, SACK blocks that fit, raw octets of
    /// other_options that fit) under Linux's layout.
    pub(super) fn layout(&self) -> (usize, usize, usize) {
        // Nearly every segment of a connection with timestamps: those alone, the
        // answer the general computation below gives for them.
        if let (None, false, Some(_), None, true, [None, None, None]) = (
            self.max_seg_size,
            self.sack_permitted,
            self.timestamp,
            self.window_scale,
            self.other_options.is_empty(),
            self.sack_ranges,
        ) {
            return (12, 0, 0);
        }
        let mut base = 0;
        if self.max_seg_size.is_some() {
            base += 4;
        }
        if self.sack_permitted || self.timestamp.is_some() {
            base += if self.timestamp.is_some() { 12 } else { 4 };
        }
        if self.window_scale.is_some() {
            base += 4;
        }
        let other = self.other_options.len();
        let other = if base + round4(other) <= MAX_OPTIONS_LEN { other } else { 0 };
        let room = MAX_OPTIONS_LEN - base - round4(other);
        let wanted = self.sack_ranges.iter().flatten().count();
        let blocks = if room >= 12 { wanted.min((room - 4) / 8) } else { 0 };
        (base, blocks, other)
    }

    /// Header length in octets, options padded to a word (at most 60).
    pub fn header_len(&self) -> usize {
        Self::header_len_of(self.layout())
    }

    /// [`header_len`](Self::header_len) for a [`layout`](Self::layout) already made.
    #[inline]
    fn header_len_of((base, blocks, other): (usize, usize, usize)) -> usize {
        let sack = if blocks > 0 { 4 + 8 * blocks } else { 0 };
        HEADER_LEN + base + sack + round4(other)
    }

    /// Header plus data.
    pub fn buffer_len(&self) -> usize {
        self.header_len() + self.payload_len
    }

    /// Sequence space: data plus one each for SYN and FIN.
    pub fn segment_len(&self) -> usize {
        self.payload_len + self.control.len()
    }

    /// True for a segment with no data and no SYN/FIN (a pure ACK or RST).
    pub fn is_empty(&self) -> bool {
        self.segment_len() == 0
    }

    /// Writes the header, lets `emit_payload` fill the `payload_len` data octets (pass
    /// `|_| ()` when they are already in place), then computes the checksum over the
    /// first `buffer_len()` octets. Panics if the buffer is shorter than `buffer_len()`.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(
        &self,
        packet: &mut Packet<T>,
        src: &Address,
        dst: &Address,
        emit_payload: impl FnOnce(&mut [u8]),
    ) {
        let layout = self.layout();
        let header_len = Self::header_len_of(layout);
        let total = header_len + self.payload_len;
        let buf = &mut packet.buffer.as_mut()[..total];
        self.emit_header(&mut buf[..header_len], layout);
        emit_payload(&mut buf[header_len..]);
        Packet::new_unchecked(buf).fill_checksum(src, dst);
    }

    /// Appends the segment to `frame`: this header, then `payload` (its length, not
    /// `payload_len`, counts), checksum filled. The same octets as [`emit`](Self::emit)
    /// over a buffer holding the payload; the payload is read once, to copy it, and
    /// its checksum is summed once. [`Payload::Zeros`] is written without a source
    /// buffer and adds nothing to the sum (RFC 1071 §2: a one's-complement sum of
    /// zero words is zero), so only the header is summed for it.
    #[inline(always)]
    pub fn emit_append(&self, frame: &mut Vec<u8>, src: &Address, dst: &Address, payload: Payload<'_>) {
        self.emit_at(frame, frame.len(), src, dst, payload);
    }

    /// As [`emit_append`](Self::emit_append), with the segment at octet `start` of
    /// `frame` (cut there if it is longer); octets the frame grows by before `start`
    /// are zeros, filled together with the header's room (a frame cleared for its
    /// lower layers' headers is extended once).
    #[inline(always)]
    pub fn emit_at(&self, frame: &mut Vec<u8>, start: usize, src: &Address, dst: &Address, payload: Payload<'_>) {
        let layout = self.layout();
        let header_len = Self::header_len_of(layout);
        let total = header_len + payload.len();
        frame.truncate(start);
        match payload {
            Payload::Bytes(bytes @ [_, ..]) => {
                frame.reserve(start + total - frame.len());
                frame.resize(start + header_len, 0);
                frame.extend_from_slice(bytes);
            }
            // Header and zeros (or nothing: a pure ACK) in one fill; the header is
            // written over below.
            Payload::Bytes([]) => frame.resize(start + header_len, 0),
            Payload::Zeros(n) => frame.resize(start + header_len + n, 0),
        }
        let segment = &mut frame[start..];
        let (header, data) = segment.split_at_mut(header_len);
        self.emit_header(header, layout);
        // The header is whole 32-bit words (Data Offset counts them, RFC 9293 §3.1),
        // and the data starts on a 16-bit boundary: the two sums add (RFC 1071 §2(A)).
        let mut acc = checksum::pseudo_header(src.octets(), dst.octets(), Protocol::Tcp.into(), total as u16);
        // A header with timestamps alone (nearly every segment) is 32 octets: summed
        // at that fixed length, the loop unrolls to eight words.
        acc += u32::from(match <&[u8; HEADER_LEN + 12]>::try_from(&*header) {
            Ok(fixed) => checksum::sum_words32(fixed),
            Err(_) => checksum::sum_words32(header),
        });
        if let Payload::Bytes([_, ..]) = payload {
            acc = checksum::accumulate(acc, data);
        }
        header[field::CHECKSUM].copy_from_slice(&(!checksum::fold(acc)).to_be_bytes());
    }

    /// Writes the fixed header (checksum zero) and the options of `layout` into
    /// `buf`, which is exactly the header's length.
    fn emit_header(&self, buf: &mut [u8], layout: (usize, usize, usize)) {
        let header_len = buf.len();
        let mut raw = ((header_len / 4) as u16) << 12;
        raw |= match self.control {
            Control::None => 0,
            Control::Psh => flags::PSH,
            Control::Syn => flags::SYN,
            Control::Fin => flags::FIN,
            Control::Rst => flags::RST,
        };
        if self.ack_number.is_some() {
            raw |= flags::ACK;
        }
        if self.ece {
            raw |= flags::ECE;
        }
        if self.cwr {
            raw |= flags::CWR;
        }
        // The fixed 20 octets built in a local array (checksum and urgent pointer
        // zero) and copied once.
        let mut h = [0u8; HEADER_LEN];
        h[field::SRC_PORT].copy_from_slice(&self.src_port.to_be_bytes());
        h[field::DST_PORT].copy_from_slice(&self.dst_port.to_be_bytes());
        h[field::SEQ_NUM].copy_from_slice(&self.seq_number.0.to_be_bytes());
        h[field::ACK_NUM].copy_from_slice(&self.ack_number.unwrap_or_default().0.to_be_bytes());
        h[field::FLAGS].copy_from_slice(&raw.to_be_bytes());
        h[field::WIN_SIZE].copy_from_slice(&self.window_len.to_be_bytes());
        let (fixed, options) = buf.split_at_mut(HEADER_LEN);
        fixed.copy_from_slice(&h);
        if !options.is_empty() {
            self.emit_options(options, layout);
        }
    }

    fn emit_options(&self, out: &mut [u8], (base, blocks, other): (usize, usize, usize)) {
        // Written octet by octet in Linux's order (`tcp_options_write`); the same bytes
        // as emitting each `TcpOption` in turn, without its generic length and kind work
        // (this runs once per segment sent).
        const NOP: u8 = 1;
        // With timestamps, `layout` counts 12 octets before SACK only when there is no
        // MSS or window scale option (4 more each): timestamps alone, unless
        // SACK-Permitted takes the NOPs' place.
        if let (12, false, Some((tsval, tsecr)), 0) = (base, self.sack_permitted, self.timestamp, other) {
            // Nearly every segment of a connection with timestamps: NOP, NOP,
            // Timestamps (RFC 7323 Appendix A), then SACK blocks if any; the octets the
            // general writer below would put.
            let ts = [NOP, NOP, OptionKind::Timestamp.into(), 10];
            if let (0, Ok(o)) = (blocks, <&mut [u8; 12]>::try_from(&mut *out)) {
                // Timestamps alone: twelve octets written in place.
                o[..4].copy_from_slice(&ts);
                o[4..8].copy_from_slice(&tsval.to_be_bytes());
                o[8..].copy_from_slice(&tsecr.to_be_bytes());
                return;
            }
            let mut o = [0u8; MAX_OPTIONS_LEN];
            o[..4].copy_from_slice(&ts);
            o[4..8].copy_from_slice(&tsval.to_be_bytes());
            o[8..12].copy_from_slice(&tsecr.to_be_bytes());
            if blocks > 0 {
                o[12..16].copy_from_slice(&[NOP, NOP, OptionKind::Sack.into(), (2 + 8 * blocks) as u8]);
                for (b, &(left, right)) in
                    o[16..].chunks_exact_mut(8).zip(self.sack_ranges.iter().flatten().take(blocks))
                {
                    b[..4].copy_from_slice(&left.to_be_bytes());
                    b[4..].copy_from_slice(&right.to_be_bytes());
                }
            }
            out.copy_from_slice(&o[..out.len()]);
            return;
        }
        let mut w = OptionWriter { out, at: 0 };
        if let Some(mss) = self.max_seg_size {
            w.put(&[OptionKind::MaxSegmentSize.into(), 4]);
            w.put(&mss.to_be_bytes());
        }
        match (self.sack_permitted, self.timestamp) {
            (sack_permitted, Some((tsval, tsecr))) => {
                w.put(&if sack_permitted { [OptionKind::SackPermitted.into(), 2] } else { [NOP, NOP] });
                w.put(&[OptionKind::Timestamp.into(), 10]);
                w.put(&tsval.to_be_bytes());
                w.put(&tsecr.to_be_bytes());
            }
            (true, None) => w.put(&[NOP, NOP, OptionKind::SackPermitted.into(), 2]),
            (false, None) => {}
        }
        if let Some(shift) = self.window_scale {
            w.put(&[NOP, OptionKind::WindowScale.into(), 3, shift]);
        }
        if blocks > 0 {
            w.put(&[NOP, NOP, OptionKind::Sack.into(), (2 + 8 * blocks) as u8]);
            for &(left, right) in self.sack_ranges.iter().flatten().take(blocks) {
                w.put(&left.to_be_bytes());
                w.put(&right.to_be_bytes());
            }
        }
        w.put(&self.other_options.as_bytes()[..other]);
        w.out[w.at..].fill(0); // RFC 9293 §3.2: pad with End of Option List
    }

    /// Appends header and `payload` to `out`, checksum filled; `payload_len` is taken
    /// from `payload`.
    pub fn encapsulate(&self, src: &Address, dst: &Address, payload: &[u8], out: &mut Vec<u8>) {
        let repr = Repr { payload_len: payload.len(), ..*self };
        let start = out.len();
        out.resize(start + repr.buffer_len(), 0);
        repr.emit(&mut Packet::new_unchecked(&mut out[start..]), src, dst, |p| p.copy_from_slice(payload));
    }

    /// The octets this header adds, field by field (RFC 9293 §3.1), for `qoslab mtu`.
    pub fn overhead_fields(&self, _payload_len: usize) -> Vec<(&'static str, usize)> {
        let mut fields = vec![
            ("source port", 2),
            ("destination port", 2),
            ("sequence number", 4),
            ("acknowledgment number", 4),
            ("data offset/flags", 2),
            ("window", 2),
            ("checksum", 2),
            ("urgent pointer", 2),
        ];
        let options = self.header_len() - HEADER_LEN;
        if options > 0 {
            fields.push(("options", options));
        }
        fields
    }
}

impl fmt::Display for Repr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TCP src={} dst={}", self.src_port, self.dst_port)?;
        match self.control {
            Control::Syn => write!(f, " syn")?,
            Control::Fin => write!(f, " fin")?,
            Control::Rst => write!(f, " rst")?,
            Control::Psh => write!(f, " psh")?,
            Control::None => {}
        }
        write!(f, " seq={}", self.seq_number)?;
        if let Some(ack) = self.ack_number {
            write!(f, " ack={ack}")?;
        }
        write!(f, " win={} len={}", self.window_len, self.payload_len)?;
        if let Some(mss) = self.max_seg_size {
            write!(f, " mss={mss}")?;
        }
        Ok(())
    }
}
