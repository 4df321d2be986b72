//! The header as plain values: parse and emit.

use super::*;

/// The IPv4 header as plain values (RFC 791 §3.1).
///
/// Not kept: the reserved flag (parsed as ignored, emitted as zero) and the checksum
/// (verified by [`parse`](Self::parse), computed by [`emit`](Self::emit)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    pub src_addr: Address,
    pub dst_addr: Address,
    /// The Protocol field.
    pub next_header: Protocol,
    /// Octets after the header; header_len() + payload_len ≤ 65,535.
    pub payload_len: usize,
    /// Time to Live.
    pub hop_limit: u8,
    /// The whole TOS octet: DSCP << 2 | ECN.
    pub tos: u8,
    /// Identification.
    pub ident: u16,
    pub dont_frag: bool,
    pub more_frags: bool,
    /// Fragment Offset in 8-octet units, as on the wire (≤ 0x1fff); see
    /// [`frag_offset_bytes`](Self::frag_offset_bytes).
    pub frag_offset: u16,
    pub options: Options,
}

impl Repr {
    /// A plain unfragmented header with no options, TOS 0 and ident 0.
    pub fn new(src_addr: Address, dst_addr: Address, next_header: Protocol, payload_len: usize, hop_limit: u8) -> Repr {
        Repr {
            src_addr,
            dst_addr,
            next_header,
            payload_len,
            hop_limit,
            tos: 0,
            ident: 0,
            dont_frag: false,
            more_frags: false,
            frag_offset: 0,
            options: Options::empty(),
        }
    }

    /// Parses a whole packet: version 4, lengths consistent, checksum good.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        Self::parse_header(packet)
    }

    /// Parses a header whose data may be cut short, as quoted in an ICMP error (RFC 792):
    /// only the header must be present; `payload_len` comes from Total Length.
    pub fn parse_truncated<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_header_len()?;
        if usize::from(packet.total_len()) < packet.header_len() {
            return Err(Error::Malformed);
        }
        Self::parse_header(packet)
    }

    fn parse_header<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        if packet.version() != 4 {
            return Err(Error::Malformed);
        }
        if !packet.verify_checksum() {
            return Err(Error::Checksum);
        }
        Ok(Repr {
            src_addr: packet.src_addr(),
            dst_addr: packet.dst_addr(),
            next_header: packet.next_header(),
            payload_len: usize::from(packet.total_len()) - packet.header_len(),
            hop_limit: packet.ttl(),
            tos: packet.tos(),
            ident: packet.ident(),
            dont_frag: packet.dont_frag(),
            more_frags: packet.more_frags(),
            frag_offset: packet.frag_offset(),
            options: Options::new(packet.options())?,
        })
    }

    /// Header length in octets, options padded to a word.
    pub fn header_len(&self) -> usize {
        HEADER_LEN + self.options.padded_len()
    }

    /// Header plus payload: what Total Length will say.
    pub fn buffer_len(&self) -> usize {
        self.header_len() + self.payload_len
    }

    /// The DSCP (RFC 2474).
    pub fn dscp(&self) -> u8 {
        self.tos >> 2
    }

    /// The ECN codepoint (RFC 3168).
    pub fn ecn(&self) -> u8 {
        self.tos & 0x03
    }

    /// The Fragment Offset in octets.
    pub fn frag_offset_bytes(&self) -> usize {
        usize::from(self.frag_offset) * FRAG_UNIT
    }

    /// Writes the header (not the payload) and its checksum. Panics if the buffer is
    /// shorter than [`header_len`](Self::header_len).
    #[inline(always)]
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        let header_len = self.header_len();
        // The fixed 20 octets are built in a local array: with no options (nearly
        // every packet) they are summed there and copied once.
        let mut h = [0u8; HEADER_LEN];
        h[field::VER_IHL] = 0x40 | (header_len / 4) as u8;
        h[field::TOS] = self.tos;
        h[field::LENGTH].copy_from_slice(&(self.buffer_len() as u16).to_be_bytes());
        h[field::IDENT].copy_from_slice(&self.ident.to_be_bytes());
        let mut flg_off = self.frag_offset & OFFSET_MASK;
        if self.dont_frag {
            flg_off |= FLAG_DF;
        }
        if self.more_frags {
            flg_off |= FLAG_MF;
        }
        h[field::FLG_OFF].copy_from_slice(&flg_off.to_be_bytes());
        h[field::TTL] = self.hop_limit;
        h[field::PROTOCOL] = self.next_header.into();
        h[field::SRC_ADDR].copy_from_slice(&self.src_addr.octets());
        h[field::DST_ADDR].copy_from_slice(&self.dst_addr.octets());
        let d = &mut packet.buffer.as_mut()[..header_len];
        if header_len == HEADER_LEN {
            let sum = !checksum::sum_words32(&h);
            h[field::CHECKSUM].copy_from_slice(&sum.to_be_bytes());
            d.copy_from_slice(&h);
            return;
        }
        d[..HEADER_LEN].copy_from_slice(&h);
        let options = self.options.as_bytes();
        let opts = &mut d[field::OPTIONS_START..];
        opts[..options.len()].copy_from_slice(options);
        opts[options.len()..].fill(0); // RFC 791: pad with End of Option List
        packet.fill_checksum();
    }

    /// Appends header and `payload` to `out`; `payload_len` is taken from `payload`.
    pub fn encapsulate(&self, payload: &[u8], out: &mut Vec<u8>) {
        let repr = Repr { payload_len: payload.len(), ..*self };
        let start = out.len();
        out.resize(start + repr.header_len(), 0);
        repr.emit(&mut Packet::new_unchecked(&mut out[start..]));
        out.extend_from_slice(payload);
    }

    /// The octets this header adds, field by field (RFC 791 §3.1), for `qoslab mtu`.
    pub fn overhead_fields(&self, _payload_len: usize) -> Vec<(&'static str, usize)> {
        let mut fields = vec![
            ("version/IHL", 1),
            ("TOS", 1),
            ("total length", 2),
            ("identification", 2),
            ("flags/fragment offset", 2),
            ("TTL", 1),
            ("protocol", 1),
            ("header checksum", 2),
            ("source", 4),
            ("destination", 4),
        ];
        if !self.options.is_empty() {
            fields.push(("options", self.options.padded_len()));
        }
        fields
    }
}

impl fmt::Display for Repr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "IPv4 src={} dst={} proto={:?} len={} ttl={} id={:#06x}",
            self.src_addr, self.dst_addr, self.next_header, self.payload_len, self.hop_limit, self.ident
        )?;
        if self.dont_frag {
            write!(f, " DF")?;
        }
        if self.more_frags {
            write!(f, " MF")?;
        }
        if self.frag_offset != 0 {
            write!(f, " off={}", self.frag_offset_bytes())?;
        }
        Ok(())
    }
}
