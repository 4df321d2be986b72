//! Header options (RFC 791 §3.1): kinds, a borrowed option, the iterator, and the
//! byte-exact options area a `Repr` keeps.

use super::*;

crate::enum_with_unknown! {
    /// The option-type octet (RFC 791 §3.1, Options; IANA "ip-parameters").
    /// Bit 0 is the copied flag, bits 1-2 the class, bits 3-7 the number.
    pub enum OptionKind(u8) {
        /// RFC 791: End of Option List (type 0).
        EndOfList = 0,
        /// RFC 791: No Operation (type 1).
        NoOperation = 1,
        /// RFC 791: Record Route (type 7).
        RecordRoute = 7,
        /// RFC 791: Internet Timestamp (type 68).
        Timestamp = 68,
        /// RFC 1108: Security (type 130).
        Security = 130,
        /// RFC 791: Loose Source and Record Route (type 131).
        LooseSourceRoute = 131,
        /// RFC 791: Stream Identifier (type 136), obsolete.
        StreamId = 136,
        /// RFC 791: Strict Source and Record Route (type 137).
        StrictSourceRoute = 137,
        /// RFC 2113: Router Alert (type 148).
        RouterAlert = 148,
    }
}

impl OptionKind {
    /// RFC 791 §3.1: the copied flag; when set the option is copied into all fragments.
    pub fn copied(self) -> bool {
        u8::from(self) & 0x80 != 0
    }

    /// RFC 791 §3.1: the option class (0 control, 2 debugging and measurement).
    pub fn class(self) -> u8 {
        (u8::from(self) >> 5) & 0x03
    }

    /// RFC 791 §3.1: the option number.
    pub fn number(self) -> u8 {
        u8::from(self) & 0x1f
    }
}

/// One IPv4 option, borrowed from the options bytes (RFC 791 §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ipv4Option<'a> {
    /// End of Option List: the remaining bytes are padding.
    EndOfList,
    /// No Operation, used to align the next option.
    NoOperation,
    /// Record Route: `pointer` (1-based, minimum 4) and the route data (4 bytes per address).
    RecordRoute { pointer: u8, route: &'a [u8] },
    /// Loose Source and Record Route, same layout as Record Route.
    LooseSourceRoute { pointer: u8, route: &'a [u8] },
    /// Strict Source and Record Route, same layout as Record Route.
    StrictSourceRoute { pointer: u8, route: &'a [u8] },
    /// Internet Timestamp: pointer (minimum 5), overflow (4 bits), flag (4 bits) and data.
    Timestamp { pointer: u8, overflow: u8, flags: u8, data: &'a [u8] },
    /// RFC 2113 Router Alert, value 0 = "router shall examine packet".
    RouterAlert { value: u16 },
    /// Any other option, kept as its type and the bytes after the length octet.
    Unknown { kind: u8, data: &'a [u8] },
}

impl<'a> Ipv4Option<'a> {
    /// The option-type octet.
    pub fn kind(&self) -> OptionKind {
        match *self {
            Ipv4Option::EndOfList => OptionKind::EndOfList,
            Ipv4Option::NoOperation => OptionKind::NoOperation,
            Ipv4Option::RecordRoute { .. } => OptionKind::RecordRoute,
            Ipv4Option::LooseSourceRoute { .. } => OptionKind::LooseSourceRoute,
            Ipv4Option::StrictSourceRoute { .. } => OptionKind::StrictSourceRoute,
            Ipv4Option::Timestamp { .. } => OptionKind::Timestamp,
            Ipv4Option::RouterAlert { .. } => OptionKind::RouterAlert,
            Ipv4Option::Unknown { kind, .. } => OptionKind::from(kind),
        }
    }

    /// RFC 791 §3.1: whether the option is copied into every fragment.
    pub fn copied(&self) -> bool {
        self.kind().copied()
    }

    /// Octets this option takes, type and length included.
    pub fn buffer_len(&self) -> usize {
        match *self {
            Ipv4Option::EndOfList | Ipv4Option::NoOperation => 1,
            Ipv4Option::RecordRoute { route, .. }
            | Ipv4Option::LooseSourceRoute { route, .. }
            | Ipv4Option::StrictSourceRoute { route, .. } => 3 + route.len(),
            Ipv4Option::Timestamp { data, .. } => 4 + data.len(),
            Ipv4Option::RouterAlert { .. } => 4,
            Ipv4Option::Unknown { data, .. } => 2 + data.len(),
        }
    }

    /// Parses the option at the start of `buffer`, returning it and the bytes after it.
    pub fn parse(buffer: &'a [u8]) -> Result<(Ipv4Option<'a>, &'a [u8])> {
        let (&kind, _) = buffer.split_first().ok_or(Error::Truncated)?;
        match OptionKind::from(kind) {
            OptionKind::EndOfList => return Ok((Ipv4Option::EndOfList, &buffer[1..])),
            OptionKind::NoOperation => return Ok((Ipv4Option::NoOperation, &buffer[1..])),
            _ => {}
        }
        let len = usize::from(*buffer.get(1).ok_or(Error::Truncated)?);
        if len < 2 {
            return Err(Error::Malformed);
        }
        if buffer.len() < len {
            return Err(Error::Truncated);
        }
        let (body, rest) = (&buffer[2..len], &buffer[len..]);
        let option = match OptionKind::from(kind) {
            k @ (OptionKind::RecordRoute | OptionKind::LooseSourceRoute | OptionKind::StrictSourceRoute) => {
                let (&pointer, route) = body.split_first().ok_or(Error::Malformed)?;
                match k {
                    OptionKind::RecordRoute => Ipv4Option::RecordRoute { pointer, route },
                    OptionKind::LooseSourceRoute => Ipv4Option::LooseSourceRoute { pointer, route },
                    _ => Ipv4Option::StrictSourceRoute { pointer, route },
                }
            }
            OptionKind::Timestamp => {
                if body.len() < 2 {
                    return Err(Error::Malformed);
                }
                Ipv4Option::Timestamp {
                    pointer: body[0],
                    overflow: body[1] >> 4,
                    flags: body[1] & 0x0f,
                    data: &body[2..],
                }
            }
            OptionKind::RouterAlert => {
                if body.len() != 2 {
                    return Err(Error::Malformed);
                }
                Ipv4Option::RouterAlert { value: u16::from_be_bytes([body[0], body[1]]) }
            }
            _ => Ipv4Option::Unknown { kind, data: body },
        };
        Ok((option, rest))
    }

    /// Writes the option at the start of `buffer` and returns the bytes after it.
    /// Panics if `buffer` is shorter than [`buffer_len`](Self::buffer_len) or the option
    /// is longer than 255 octets.
    pub fn emit<'b>(&self, buffer: &'b mut [u8]) -> &'b mut [u8] {
        let len = self.buffer_len();
        let (out, rest) = buffer.split_at_mut(len);
        out[0] = self.kind().into();
        match *self {
            Ipv4Option::EndOfList | Ipv4Option::NoOperation => {}
            Ipv4Option::RecordRoute { pointer, route }
            | Ipv4Option::LooseSourceRoute { pointer, route }
            | Ipv4Option::StrictSourceRoute { pointer, route } => {
                out[1] = len as u8;
                out[2] = pointer;
                out[3..].copy_from_slice(route);
            }
            Ipv4Option::Timestamp { pointer, overflow, flags, data } => {
                out[1] = len as u8;
                out[2] = pointer;
                out[3] = (overflow << 4) | (flags & 0x0f);
                out[4..].copy_from_slice(data);
            }
            Ipv4Option::RouterAlert { value } => {
                out[1] = 4;
                out[2..4].copy_from_slice(&value.to_be_bytes());
            }
            Ipv4Option::Unknown { kind, data } => {
                out[0] = kind;
                out[1] = len as u8;
                out[2..].copy_from_slice(data);
            }
        }
        rest
    }
}

/// Iterates the options of an options area; stops after End of Option List (the rest is
/// padding) and yields one `Err` then stops on a malformed option.
#[derive(Debug, Clone)]
pub struct OptionIter<'a> {
    rest: &'a [u8],
}

impl<'a> OptionIter<'a> {
    /// Iterates raw options bytes, e.g. [`Packet::options`].
    pub fn new(bytes: &'a [u8]) -> Self {
        OptionIter { rest: bytes }
    }
}

impl<'a> Iterator for OptionIter<'a> {
    type Item = Result<Ipv4Option<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        match Ipv4Option::parse(self.rest) {
            Ok((Ipv4Option::EndOfList, _)) => {
                self.rest = &[];
                Some(Ok(Ipv4Option::EndOfList))
            }
            Ok((option, rest)) => {
                self.rest = rest;
                Some(Ok(option))
            }
            Err(e) => {
                self.rest = &[];
                Some(Err(e))
            }
        }
    }
}

/// The options area of a header, byte-exact, without allocation (RFC 791 §3.1).
///
/// Invariant: `len <= MAX_OPTIONS_LEN`. A parsed header's options are a multiple of 4
/// long (padding included); options built with [`push`](Self::push) may not be, and
/// [`Repr::emit`] pads them with zero octets (End of Option List), as RFC 791 asks.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Options {
    bytes: [u8; MAX_OPTIONS_LEN],
    len: u8,
}

impl Default for Options {
    fn default() -> Self {
        Self::empty()
    }
}

impl Options {
    /// No options.
    pub const fn empty() -> Options {
        Options { bytes: [0; MAX_OPTIONS_LEN], len: 0 }
    }

    /// Options from raw bytes; `Err(Malformed)` when longer than 40 octets. The bytes are
    /// kept as given, not validated; [`iter`](Self::iter) reports malformed options.
    pub fn new(raw: &[u8]) -> Result<Options> {
        if raw.len() > MAX_OPTIONS_LEN {
            return Err(Error::Malformed);
        }
        let mut options = Options::empty();
        options.bytes[..raw.len()].copy_from_slice(raw);
        options.len = raw.len() as u8;
        Ok(options)
    }

    /// An empty Record Route option with room for `slots` addresses (RFC 791 §3.1,
    /// Record Route: pointer starts at 4), padded with End of Option List.
    pub fn record_route(slots: usize) -> Result<Options> {
        let zeros = [0u8; MAX_OPTIONS_LEN];
        let route = zeros.get(..slots * 4).ok_or(Error::Malformed)?;
        let mut options = Options::empty();
        options.push(&Ipv4Option::RecordRoute { pointer: 4, route })?;
        Ok(options)
    }

    /// The bytes, as they will be written (before padding to a word).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    /// Length in octets before padding.
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// True when there are no options.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Length once padded to a whole number of 32-bit words.
    pub fn padded_len(&self) -> usize {
        round4(self.len())
    }

    /// Iterates the typed options.
    pub fn iter(&self) -> OptionIter<'_> {
        OptionIter::new(self.as_bytes())
    }

    /// Appends one option; `Err(Truncated)` when it does not fit in 40 octets.
    pub fn push(&mut self, option: &Ipv4Option) -> Result<()> {
        let at = self.len();
        let need = option.buffer_len();
        if at + need > MAX_OPTIONS_LEN || need > 255 {
            return Err(Error::Truncated);
        }
        option.emit(&mut self.bytes[at..at + need]);
        self.len += need as u8;
        Ok(())
    }

    /// The options with the copied flag, for fragments after the first (RFC 791 §3.2,
    /// fragmentation procedure, step "copy options with the copy flag"). NOP and EOL are
    /// not copied; the result is padded by [`Repr::emit`].
    pub fn copied(&self) -> Result<Options> {
        let mut out = Options::empty();
        let mut rest = self.as_bytes();
        while !rest.is_empty() {
            let (option, after) = Ipv4Option::parse(rest)?;
            if option == Ipv4Option::EndOfList {
                break;
            }
            if option.copied() {
                let len = rest.len() - after.len();
                let at = out.len();
                out.bytes[at..at + len].copy_from_slice(&rest[..len]);
                out.len += len as u8;
            }
            rest = after;
        }
        Ok(out)
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}
