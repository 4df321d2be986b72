//! The checked view over a COMPRESSED_TCP packet (RFC 1144 §3.2.2).

use super::*;

/// A checked view over a COMPRESSED_TCP packet: the compressed header then the TCP data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    /// The whole packet; `Repr` reads and writes the header in place.
    pub(super) buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps bytes without checking them.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wraps bytes after checking that the whole compressed header is present.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Checks that the header, whose length depends on the mask and the deltas, fits.
    pub fn check_len(&self) -> Result<()> {
        self.walk().map(|_| ())
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Walks the variable fields: offset of the checksum and the header length.
    fn walk(&self) -> Result<(usize, usize)> {
        let b = self.buffer.as_ref();
        let changes = *b.first().ok_or(Error::Truncated)?;
        let mut at = 1 + usize::from(changes & change::C != 0);
        let ck = at;
        at += 2;
        if at > b.len() {
            return Err(Error::Truncated);
        }
        let mut n = 0;
        match changes & change::SPECIALS_MASK {
            change::SPECIAL_I | change::SPECIAL_D => {}
            bits => {
                for bit in [change::U, change::W, change::A, change::S] {
                    if bits & bit != 0 {
                        n += 1;
                    }
                }
            }
        }
        if changes & change::I != 0 {
            n += 1;
        }
        for _ in 0..n {
            read_delta(b, &mut at)?;
        }
        Ok((ck, at))
    }

    /// RFC 1144 §3.2.2: the change mask, without the SLIP type bit 0x80.
    pub fn change_mask(&self) -> u8 {
        self.buffer.as_ref()[field::CHANGES] & 0x7f
    }

    /// RFC 1144 §3.2.2: the connection number, present when the C bit is set.
    pub fn connection(&self) -> Option<u8> {
        if self.change_mask() & change::C != 0 {
            Some(self.buffer.as_ref()[1])
        } else {
            None
        }
    }

    pub(super) fn checksum_at(&self) -> usize {
        1 + usize::from(self.change_mask() & change::C != 0)
    }

    /// RFC 1144 §3.2.2: the TCP checksum of the original segment, carried unchanged.
    pub fn tcp_checksum(&self) -> u16 {
        let at = self.checksum_at();
        let b = self.buffer.as_ref();
        u16::from_be_bytes([b[at], b[at + 1]])
    }

    /// Length of the compressed header (mask to last delta).
    pub fn header_len(&self) -> usize {
        self.walk().map(|(_, len)| len).unwrap_or(self.buffer.as_ref().len())
    }

    /// The TCP data after the compressed header.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the change mask, keeping the SLIP type bit. Moving the C bit moves the fields
    /// after it: set the mask first, then the rest.
    pub fn set_change_mask(&mut self, mask: u8) {
        let b = &mut self.buffer.as_mut()[field::CHANGES];
        *b = (*b & 0x80) | (mask & 0x7f);
    }

    /// Sets the connection number (the C bit must be set).
    pub fn set_connection(&mut self, slot: u8) {
        self.buffer.as_mut()[1] = slot;
    }

    /// Sets the carried TCP checksum.
    pub fn set_tcp_checksum(&mut self, value: u16) {
        let at = self.checksum_at();
        self.buffer.as_mut()[at..at + 2].copy_from_slice(&value.to_be_bytes());
    }
}
