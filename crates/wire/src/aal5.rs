//! ATM adaptation layer type 5: the CPCS-PDU, its trailer, and the segmentation of a
//! PDU into cells and back.
//!
//! Standards a reader needs:
//! * ITU-T I.363.5 (08/96) "B-ISDN ATM Adaptation Layer type 5 specification":
//!   §9.2.2 CPCS-PDU format (Figure 6): the CPCS-SDU, 0..47 octets of PAD, then an
//!   8-octet trailer (CPCS-UU 1, CPI 1, Length 2, CRC-32 4) so that the whole is a
//!   multiple of 48; §9.2.2.2 the Length field (0 means abort) and the CRC-32 over the
//!   whole PDU up to the CRC field; §9.1 / §8 the SAR sublayer, which marks the last
//!   cell of a PDU with the ATM-user-to-ATM-user indication (PTI bit 1 = 1).
//! * ITU-T I.361 §2.2.4 for that PTI bit (see [`crate::atm`]).
//!
//! The CRC is [`crate::crc::AAL5`]: the IEEE 802.3 polynomial, not reflected,
//! initial value all ones, complemented, sent most significant octet first.

use crate::atm::{self, Cell, Pti, CELL_LEN, PAYLOAD_LEN};
use crate::crc;
use crate::{Error, Result};

/// I.363.5 §9.2.2: the CPCS-PDU trailer is 8 octets.
pub const TRAILER_LEN: usize = 8;
/// I.363.5 §9.2.2.2: the Length field is 16 bits, so a CPCS-SDU holds at most 65,535
/// octets.
pub const MAX_SDU_LEN: usize = 65_535;
/// The longest CPCS-PDU: 65,535 + 25 PAD + 8 = 65,568 octets, 1,366 cells.
pub const MAX_PDU_LEN: usize = pdu_len(MAX_SDU_LEN);

/// Trailer fields, as offsets from the start of the trailer (I.363.5 Figure 6).
pub mod field {
    use crate::Field;
    /// CPCS user-to-user indication, passed transparently (§9.2.2.1).
    pub const CPCS_UU: usize = 0;
    /// Common part indicator; 0 aligns the trailer to 64 bits (§9.2.2.1).
    pub const CPI: usize = 1;
    /// Length of the CPCS-SDU in octets (§9.2.2.2).
    pub const LENGTH: Field = 2..4;
    /// CRC-32 over the PDU up to this field (§9.2.2.2).
    pub const CRC: Field = 4..8;
}

/// I.363.5 §9.2.2.1: the PAD that makes SDU + PAD + trailer a multiple of 48 (0..=47).
pub const fn pad_len(sdu_len: usize) -> usize {
    (PAYLOAD_LEN - (sdu_len + TRAILER_LEN) % PAYLOAD_LEN) % PAYLOAD_LEN
}

/// The length of the CPCS-PDU that carries `sdu_len` octets.
pub const fn pdu_len(sdu_len: usize) -> usize {
    sdu_len + pad_len(sdu_len) + TRAILER_LEN
}

/// How many cells carry an SDU of `sdu_len` octets.
pub const fn cell_count(sdu_len: usize) -> usize {
    pdu_len(sdu_len) / PAYLOAD_LEN
}

/// Octets on the line (53 per cell) for an SDU of `sdu_len` octets.
pub const fn wire_len(sdu_len: usize) -> usize {
    cell_count(sdu_len) * CELL_LEN
}

/// A read/write view of the 8-octet CPCS-PDU trailer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trailer<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Trailer<T> {
    pub const fn new_unchecked(buffer: T) -> Trailer<T> {
        Trailer { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Trailer<T>> {
        let t = Trailer::new_unchecked(buffer);
        t.check_len()?;
        Ok(t)
    }

    /// `Err(Truncated)` when shorter than 8 octets.
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < TRAILER_LEN {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    pub fn cpcs_uu(&self) -> u8 {
        self.buffer.as_ref()[field::CPCS_UU]
    }

    pub fn cpi(&self) -> u8 {
        self.buffer.as_ref()[field::CPI]
    }

    pub fn length(&self) -> u16 {
        let d = &self.buffer.as_ref()[field::LENGTH];
        u16::from_be_bytes([d[0], d[1]])
    }

    pub fn crc(&self) -> u32 {
        let d = &self.buffer.as_ref()[field::CRC];
        u32::from_be_bytes([d[0], d[1], d[2], d[3]])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Trailer<T> {
    pub fn set_cpcs_uu(&mut self, value: u8) {
        self.buffer.as_mut()[field::CPCS_UU] = value;
    }

    pub fn set_cpi(&mut self, value: u8) {
        self.buffer.as_mut()[field::CPI] = value;
    }

    pub fn set_length(&mut self, value: u16) {
        self.buffer.as_mut()[field::LENGTH].copy_from_slice(&value.to_be_bytes());
    }

    pub fn set_crc(&mut self, value: u32) {
        self.buffer.as_mut()[field::CRC].copy_from_slice(&value.to_be_bytes());
    }
}

/// A read/write view of a whole CPCS-PDU: the buffer is the PDU, its last 8 octets the
/// trailer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pdu<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Pdu<T> {
    pub const fn new_unchecked(buffer: T) -> Pdu<T> {
        Pdu { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Pdu<T>> {
        let p = Pdu::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// `Err(Truncated)` when shorter than one cell payload, `Err(Malformed)` when not
    /// a multiple of 48 octets or longer than [`MAX_PDU_LEN`].
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < PAYLOAD_LEN {
            Err(Error::Truncated)
        } else if len % PAYLOAD_LEN != 0 || len > MAX_PDU_LEN {
            Err(Error::Malformed)
        } else {
            Ok(())
        }
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn trailer_start(&self) -> usize {
        self.buffer.as_ref().len() - TRAILER_LEN
    }

    /// The trailer (the last 8 octets).
    pub fn trailer(&self) -> Trailer<&[u8]> {
        Trailer::new_unchecked(&self.buffer.as_ref()[self.trailer_start()..])
    }

    pub fn cpcs_uu(&self) -> u8 {
        self.trailer().cpcs_uu()
    }

    pub fn cpi(&self) -> u8 {
        self.trailer().cpi()
    }

    /// The Length field: the SDU length the sender claims.
    pub fn length(&self) -> u16 {
        self.trailer().length()
    }

    pub fn crc(&self) -> u32 {
        self.trailer().crc()
    }

    /// The CRC-32 of everything before the CRC field.
    pub fn compute_crc(&self) -> u32 {
        let d = self.buffer.as_ref();
        crc::AAL5.checksum(&d[..d.len() - 4])
    }

    pub fn verify_crc(&self) -> bool {
        self.compute_crc() == self.crc()
    }

    /// The CPCS-SDU: the first `length` octets, clamped to the space before the
    /// trailer (`Repr::parse` rejects a Length that does not fit).
    pub fn payload(&self) -> &[u8] {
        let end = usize::from(self.length()).min(self.trailer_start());
        &self.buffer.as_ref()[..end]
    }

    /// The PAD octets between the SDU and the trailer.
    pub fn pad(&self) -> &[u8] {
        let start = usize::from(self.length()).min(self.trailer_start());
        &self.buffer.as_ref()[start..self.trailer_start()]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Pdu<T> {
    fn trailer_mut(&mut self) -> Trailer<&mut [u8]> {
        let start = self.trailer_start();
        Trailer::new_unchecked(&mut self.buffer.as_mut()[start..])
    }

    pub fn set_cpcs_uu(&mut self, value: u8) {
        self.trailer_mut().set_cpcs_uu(value)
    }

    pub fn set_cpi(&mut self, value: u8) {
        self.trailer_mut().set_cpi(value)
    }

    pub fn set_length(&mut self, value: u16) {
        self.trailer_mut().set_length(value)
    }

    pub fn set_crc(&mut self, value: u32) {
        self.trailer_mut().set_crc(value)
    }

    /// Recomputes the CRC-32 over the PDU.
    pub fn fill_crc(&mut self) {
        let c = self.compute_crc();
        self.set_crc(c);
    }

    /// Everything before the trailer (SDU then PAD), to write the SDU into.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = self.trailer_start();
        &mut self.buffer.as_mut()[..end]
    }
}

/// The trailer of a CPCS-PDU (the CRC is not kept: `parse` verifies it, `emit`
/// computes it).
///
/// Invariant: `1 <= length <= 65,535` (0 is the abort indication, I.363.5 §9.2.2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// I.363.5 §9.2.2.1: CPCS user-to-user indication.
    pub cpcs_uu: u8,
    /// I.363.5 §9.2.2.1: common part indicator (0).
    pub cpi: u8,
    /// I.363.5 §9.2.2.2: SDU length in octets.
    pub length: u16,
}

impl Repr {
    /// Parses and checks a whole CPCS-PDU: CRC (`Err(Checksum)`), then Length: zero
    /// (abort), longer than the space before the trailer, or leaving more than 47 PAD
    /// octets is `Err(Malformed)`.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(pdu: &Pdu<&T>) -> Result<Repr> {
        pdu.check_len()?;
        if !pdu.verify_crc() {
            return Err(Error::Checksum);
        }
        let length = pdu.length();
        let room = pdu.trailer_start();
        if length == 0 || usize::from(length) > room || room - usize::from(length) > PAYLOAD_LEN - 1 {
            return Err(Error::Malformed);
        }
        Ok(Repr { cpcs_uu: pdu.cpcs_uu(), cpi: pdu.cpi(), length })
    }

    /// No header: AAL5 only adds PAD and a trailer.
    pub const fn header_len(&self) -> usize {
        0
    }

    /// The PDU length for this SDU length.
    pub const fn buffer_len(&self) -> usize {
        pdu_len(self.length as usize)
    }

    /// Finishes a PDU whose first `length` octets already hold the SDU: zeroes the PAD,
    /// writes the trailer and the CRC into the first `buffer_len()` octets. Panics if
    /// the buffer is shorter.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, pdu: &mut Pdu<&mut T>) {
        let n = self.buffer_len();
        let data = &mut pdu.buffer.as_mut()[..n];
        let len = usize::from(self.length);
        data[len..n - TRAILER_LEN].fill(0);
        let mut pdu = Pdu::new_unchecked(data);
        pdu.set_cpcs_uu(self.cpcs_uu);
        pdu.set_cpi(self.cpi);
        pdu.set_length(self.length);
        pdu.fill_crc();
    }

    /// Named overheads for an SDU of `payload_len` octets: PAD, then the trailer fields.
    /// (The cell headers are [`atm::Repr::overhead_fields`] of the PDU length.)
    pub fn overhead_fields(&self, payload_len: usize) -> Vec<(&'static str, usize)> {
        vec![("pad", pad_len(payload_len)), ("cpcs-uu", 1), ("cpi", 1), ("length", 2), ("crc-32", 4)]
    }
}

/// Every overhead of carrying an SDU of `sdu_len` octets in cells: the AAL5 fields,
/// then the cell headers (5 × cells).
pub fn overhead_fields_with_cells(sdu_len: usize) -> Vec<(&'static str, usize)> {
    let mut f = Repr { cpcs_uu: 0, cpi: 0, length: 1 }.overhead_fields(sdu_len);
    f.push(("cell headers", atm::HEADER_LEN * cell_count(sdu_len)));
    f
}

fn check_sdu_len(len: usize) -> Result<u16> {
    if len == 0 || len > MAX_SDU_LEN {
        Err(Error::Malformed)
    } else {
        Ok(len as u16)
    }
}

/// Appends the CPCS-PDU carrying `sdu` to `out`. `Err(Malformed)` for an empty SDU
/// (Length 0 would mean abort) or one longer than 65,535 octets.
pub fn encode(sdu: &[u8], cpcs_uu: u8, cpi: u8, out: &mut Vec<u8>) -> Result<()> {
    let length = check_sdu_len(sdu.len())?;
    let repr = Repr { cpcs_uu, cpi, length };
    let start = out.len();
    out.extend_from_slice(sdu);
    out.resize(start + repr.buffer_len(), 0);
    repr.emit(&mut Pdu::new_unchecked(&mut out[start..]));
    Ok(())
}

/// Checks a CPCS-PDU (length, CRC) and returns its trailer and SDU.
pub fn decode_with_trailer(pdu: &[u8]) -> Result<(Repr, &[u8])> {
    let view = Pdu::new_checked(pdu)?;
    let repr = Repr::parse(&view)?;
    Ok((repr, &pdu[..usize::from(repr.length)]))
}

/// Checks a CPCS-PDU (length, CRC) and returns its SDU.
pub fn decode(pdu: &[u8]) -> Result<&[u8]> {
    decode_with_trailer(pdu).map(|(_, sdu)| sdu)
}

/// Segments `sdu` into cells on UNI `vpi`/`vci` (GFC 0, CLP 0, CPCS-UU 0, CPI 0),
/// calling `emit_cell` once per cell in order; the last cell has PTI 1 (end of SDU).
/// Returns the number of cells.
pub fn segment<F: FnMut(&[u8; CELL_LEN])>(vpi: u8, vci: u16, sdu: &[u8], emit_cell: F) -> Result<usize> {
    segment_with(&atm::Repr::user_data(vpi, vci, false), 0, 0, sdu, emit_cell)
}

/// Segments `sdu` with every header field taken from `header` except the PTI's
/// end-of-SDU bit, which this sets on the last cell only (its congestion bit is kept).
/// One 53-octet buffer on the stack is reused for every cell; the CRC is computed as
/// the cells go.
pub fn segment_with<F: FnMut(&[u8; CELL_LEN])>(
    header: &atm::Repr,
    cpcs_uu: u8,
    cpi: u8,
    sdu: &[u8],
    mut emit_cell: F,
) -> Result<usize> {
    let length = check_sdu_len(sdu.len())?;
    let cells = cell_count(sdu.len());
    let congestion = header.pti.congestion();
    let mut digest = crc::AAL5.digest();
    let mut cell = [0u8; CELL_LEN];
    for i in 0..cells {
        let last = i + 1 == cells;
        let hdr = atm::Repr { pti: Pti::user_data(last, congestion), ..*header };
        cell[..atm::HEADER_LEN].copy_from_slice(&hdr.to_bytes());
        let payload = &mut cell[atm::HEADER_LEN..];
        let from = (i * PAYLOAD_LEN).min(sdu.len());
        let to = ((i + 1) * PAYLOAD_LEN).min(sdu.len());
        payload[..to - from].copy_from_slice(&sdu[from..to]);
        payload[to - from..].fill(0);
        if last {
            let mut t = Trailer::new_unchecked(&mut payload[PAYLOAD_LEN - TRAILER_LEN..]);
            t.set_cpcs_uu(cpcs_uu);
            t.set_cpi(cpi);
            t.set_length(length);
            digest.update(&payload[..PAYLOAD_LEN - 4]);
            let crc = digest.clone().finalize();
            Trailer::new_unchecked(&mut payload[PAYLOAD_LEN - TRAILER_LEN..]).set_crc(crc);
        } else {
            digest.update(payload);
        }
        emit_cell(&cell);
    }
    Ok(cells)
}

/// An SDU put back together by a [`Reassembler`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reassembled {
    pub sdu: Vec<u8>,
    pub cpcs_uu: u8,
    pub cpi: u8,
    /// How many cells carried it.
    pub cells: usize,
}

/// Reassembly for one virtual channel (I.363.5 §9.3 CPCS receiver, non-streaming
/// mode): cell payloads are collected until the one marked end-of-SDU, then the PDU is
/// checked and its SDU returned.
///
/// Errors are reported once, on the cell that reveals them, and the partial PDU is
/// dropped: `Checksum` for a CRC error, `Malformed` for a bad Length or a PDU that
/// grows past the maximum (the rest of that PDU, up to its last cell, is then
/// discarded silently), `Truncated` for a payload that is not 48 octets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reassembler {
    buffer: Vec<u8>,
    max_sdu_len: usize,
    discarding: bool,
}

impl Default for Reassembler {
    fn default() -> Self {
        Reassembler::new()
    }
}

impl Reassembler {
    /// A reassembler accepting SDUs up to 65,535 octets.
    pub fn new() -> Reassembler {
        Reassembler::with_max_sdu_len(MAX_SDU_LEN)
    }

    /// A reassembler accepting SDUs up to `max_sdu_len` octets (e.g. the 9,188 of a
    /// CLIP VC, RFC 2225 §5), capped at 65,535.
    pub fn with_max_sdu_len(max_sdu_len: usize) -> Reassembler {
        Reassembler { buffer: Vec::new(), max_sdu_len: max_sdu_len.min(MAX_SDU_LEN), discarding: false }
    }

    /// Octets collected for the PDU in progress.
    pub fn pending_len(&self) -> usize {
        self.buffer.len()
    }

    /// Drops the PDU in progress.
    pub fn reset(&mut self) {
        self.buffer.clear();
        self.discarding = false;
    }

    /// Takes one cell payload; `end_of_sdu` is the PTI's ATM-user-to-ATM-user bit.
    pub fn push(&mut self, payload: &[u8], end_of_sdu: bool) -> Result<Option<Reassembled>> {
        if payload.len() != PAYLOAD_LEN {
            return Err(Error::Truncated);
        }
        if self.discarding {
            if end_of_sdu {
                self.discarding = false;
            }
            return Ok(None);
        }
        self.buffer.extend_from_slice(payload);
        if self.buffer.len() > pdu_len(self.max_sdu_len) {
            self.buffer.clear();
            self.discarding = !end_of_sdu;
            return Err(Error::Malformed);
        }
        if !end_of_sdu {
            return Ok(None);
        }
        let result = decode_with_trailer(&self.buffer).and_then(|(repr, sdu)| {
            if usize::from(repr.length) > self.max_sdu_len {
                return Err(Error::Malformed);
            }
            Ok(Reassembled {
                sdu: sdu.to_vec(),
                cpcs_uu: repr.cpcs_uu,
                cpi: repr.cpi,
                cells: self.buffer.len() / PAYLOAD_LEN,
            })
        });
        self.buffer.clear();
        result.map(Some)
    }

    /// Takes one cell (its HEC is the physical layer's business and is not checked
    /// here). OAM and RM cells (PTI 4..7) are not AAL5 data and are ignored.
    pub fn push_cell<T: AsRef<[u8]> + ?Sized>(&mut self, cell: &Cell<&T>) -> Result<Option<Reassembled>> {
        cell.check_len()?;
        let pti = cell.pti();
        if !pti.is_user_data() {
            return Ok(None);
        }
        self.push(cell.payload(), pti.is_end_of_sdu())
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use proptest::prelude::*;

    /// An independent CRC: the I.363.5 §9.2.2.2 division done bit by bit, MSB first,
    /// register preset to all ones, result complemented (no table, no crate).
    fn crc32_by_hand(data: &[u8]) -> u32 {
        let mut reg: u32 = 0xffff_ffff;
        for &b in data {
            reg ^= u32::from(b) << 24;
            for _ in 0..8 {
                reg = if reg & 0x8000_0000 != 0 { (reg << 1) ^ 0x04c1_1db7 } else { reg << 1 };
            }
        }
        !reg
    }

    // A 36-octet SDU (an RFC 2684 LLC/SNAP-routed IPv4/UDP header, 192.0.2.1 ->
    // 192.0.2.2) in one cell: 36 + 4 PAD + 8 trailer = 48. The CRC 0xA7097C48 was
    // computed by a Python bitwise CRC-32/MPEG-2 (output complemented), and tshark
    // 4.0's ATM dissector called it "(correct)" in an ERF AAL5 record when this vector
    // was made (tests/tshark_atm.rs repeats that check on freshly encoded PDUs).
    static PDU_BYTES: [u8; 48] = [
        0xaa, 0xaa, 0x03, 0x00, 0x00, 0x00, 0x08, 0x00, // LLC/SNAP, IPv4
        0x45, 0x00, 0x00, 0x1c, 0x00, 0x00, 0x00, 0x00, 0x40, 0x11, 0x00, 0x00, // IPv4
        0xc0, 0x00, 0x02, 0x01, 0xc0, 0x00, 0x02, 0x02, //
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // UDP (zeros)
        0x00, 0x00, 0x00, 0x00, // PAD
        0x00, 0x00, 0x00, 0x24, // UU, CPI, Length 36
        0xa7, 0x09, 0x7c, 0x48, // CRC-32
    ];

    #[test]
    fn test_crc_catalogue_matches_hand_division() {
        assert_eq!(crc32_by_hand(b"123456789"), 0xfc89_1918);
        assert_eq!(crc32_by_hand(&PDU_BYTES[..44]), 0xa709_7c48);
        // The AAL5 test cells widely quoted with I.363.5 (40-octet SDU, UU 0, CPI 0,
        // Length 0x0028): all zeros -> 0x864D7F99, all ones -> 0xC55E457A,
        // 0x01..=0x28 -> 0xBF671ED0.
        for (fill, expect) in [(Some(0x00u8), 0x864d_7f99u32), (Some(0xff), 0xc55e_457a), (None, 0xbf67_1ed0)] {
            let mut cell = [0u8; 48];
            for (i, b) in cell[..40].iter_mut().enumerate() {
                *b = fill.unwrap_or(i as u8 + 1);
            }
            cell[43] = 0x28;
            assert_eq!(crc32_by_hand(&cell[..44]), expect);
            let mut out = Vec::new();
            encode(&cell[..40], 0, 0, &mut out).unwrap();
            assert_eq!(&out[44..], &expect.to_be_bytes());
        }
    }

    #[test]
    fn test_parse() {
        let pdu = Pdu::new_checked(&PDU_BYTES[..]).unwrap();
        let repr = Repr::parse(&pdu).unwrap();
        assert_eq!(repr, Repr { cpcs_uu: 0, cpi: 0, length: 36 });
        assert_eq!(pdu.payload(), &PDU_BYTES[..36]);
        assert_eq!(pdu.pad(), &[0; 4]);
        assert_eq!(decode(&PDU_BYTES).unwrap(), &PDU_BYTES[..36]);
    }

    #[test]
    fn test_emit() {
        let mut out = Vec::new();
        encode(&PDU_BYTES[..36], 0, 0, &mut out).unwrap();
        assert_eq!(&out[..], &PDU_BYTES[..]);
    }

    #[test]
    fn test_lengths() {
        assert_eq!(pad_len(40), 0);
        assert_eq!(pad_len(41), 47);
        assert_eq!(pad_len(36), 4);
        assert_eq!(cell_count(40), 1);
        assert_eq!(cell_count(41), 2);
        // A 1500-octet IP packet with 8 octets of LLC/SNAP: 1508 + 8 = 1516 -> 32 cells.
        assert_eq!(cell_count(1508), 32);
        assert_eq!(pad_len(1508), 20);
        assert_eq!(MAX_PDU_LEN, 65_568);
        assert_eq!(cell_count(MAX_SDU_LEN), 1366);
        assert_eq!(wire_len(40), 53);
    }

    #[test]
    fn test_errors() {
        let mut bad = PDU_BYTES;
        bad[10] ^= 0x01;
        assert_eq!(decode(&bad), Err(Error::Checksum));
        assert_eq!(decode(&PDU_BYTES[..40]), Err(Error::Truncated));
        let mut long = PDU_BYTES.to_vec();
        long.push(0);
        assert_eq!(decode(&long), Err(Error::Malformed));

        // Length longer than the PDU, with a valid CRC.
        let mut l = PDU_BYTES;
        l[42..44].copy_from_slice(&41u16.to_be_bytes());
        Pdu::new_unchecked(&mut l[..]).fill_crc();
        assert_eq!(decode(&l), Err(Error::Malformed));
        // Length 0: abort.
        l[42..44].copy_from_slice(&0u16.to_be_bytes());
        Pdu::new_unchecked(&mut l[..]).fill_crc();
        assert_eq!(decode(&l), Err(Error::Malformed));
        // Two cells whose Length fits in one: more than 47 octets of PAD.
        let mut two = vec![0u8; 96];
        two[90..92].copy_from_slice(&10u16.to_be_bytes());
        Pdu::new_unchecked(&mut two[..]).fill_crc();
        assert_eq!(decode(&two), Err(Error::Malformed));

        assert_eq!(encode(&[], 0, 0, &mut Vec::new()), Err(Error::Malformed));
        assert_eq!(encode(&vec![0; 65_536], 0, 0, &mut Vec::new()), Err(Error::Malformed));
    }

    #[test]
    fn test_segment_and_reassemble() {
        let sdu: Vec<u8> = (0..1508u32).map(|i| (i * 7) as u8).collect();
        let mut cells = Vec::new();
        let n = segment(1, 100, &sdu, |c| cells.push(*c)).unwrap();
        assert_eq!(n, 32);
        assert_eq!(cells.len(), 32);
        // The payloads concatenated are exactly `encode`'s PDU.
        let mut pdu = Vec::new();
        encode(&sdu, 0, 0, &mut pdu).unwrap();
        let joined: Vec<u8> = cells.iter().flat_map(|c| c[5..].iter().copied()).collect();
        assert_eq!(joined, pdu);
        let crc_field =
            u32::from_be_bytes([pdu[pdu.len() - 4], pdu[pdu.len() - 3], pdu[pdu.len() - 2], pdu[pdu.len() - 1]]);
        assert_eq!(crc_field, crc32_by_hand(&pdu[..pdu.len() - 4]));
        let mut r = Reassembler::new();
        for (i, c) in cells.iter().enumerate() {
            let cell = Cell::new_checked(&c[..]).unwrap();
            let h = atm::Repr::parse(&cell, atm::Format::Uni).unwrap();
            assert_eq!((h.vpi, h.vci, h.pti.is_end_of_sdu()), (1, 100, i == 31));
            let out = r.push_cell(&cell).unwrap();
            if i < 31 {
                assert!(out.is_none());
            } else {
                let out = out.unwrap();
                assert_eq!(out.sdu, sdu);
                assert_eq!(out.cells, 32);
            }
        }
        assert_eq!(r.pending_len(), 0);
    }

    #[test]
    fn test_reassembler_errors() {
        let sdu = [0x5au8; 100];
        let mut cells = Vec::new();
        segment(0, 40, &sdu, |c| cells.push(*c)).unwrap();
        assert_eq!(cells.len(), 3);

        // A lost middle cell: the CRC (or length) check catches it.
        let mut r = Reassembler::new();
        assert_eq!(r.push(&cells[0][5..], false), Ok(None));
        assert!(r.push(&cells[2][5..], true).is_err());
        // The next PDU is fine.
        for (i, c) in cells.iter().enumerate() {
            let out = r.push(&c[5..], i == 2).unwrap();
            assert_eq!(out.is_some(), i == 2);
        }

        // A corrupted payload octet.
        let mut bad = cells.clone();
        bad[1][20] ^= 0xff;
        let mut r = Reassembler::new();
        r.push(&bad[0][5..], false).unwrap();
        r.push(&bad[1][5..], false).unwrap();
        assert_eq!(r.push(&bad[2][5..], true), Err(Error::Checksum));

        // Too long for a reassembler limited to 40 octets: reported once, then the
        // rest of that PDU is dropped silently, and the next one-cell PDU comes out.
        let mut r = Reassembler::with_max_sdu_len(40);
        assert_eq!(r.push(&cells[0][5..], false), Ok(None));
        assert_eq!(r.push(&cells[1][5..], false), Err(Error::Malformed));
        assert_eq!(r.push(&cells[2][5..], true), Ok(None));
        let mut one = Vec::new();
        segment(0, 40, &[1u8; 40], |c| one.push(*c)).unwrap();
        assert_eq!(r.push(&one[0][5..], true).unwrap().unwrap().sdu, vec![1u8; 40]);

        assert_eq!(r.push(&[0u8; 47], true), Err(Error::Truncated));
    }

    #[test]
    fn test_overhead_fields() {
        let repr = Repr { cpcs_uu: 0, cpi: 0, length: 1508 };
        assert_eq!(
            repr.overhead_fields(1508),
            vec![("pad", 20), ("cpcs-uu", 1), ("cpi", 1), ("length", 2), ("crc-32", 4)]
        );
        assert_eq!(overhead_fields_with_cells(1508).last(), Some(&("cell headers", 160)));
    }

    proptest! {
        #[test]
        fn prop_emit_parse_emit(sdu in proptest::collection::vec(any::<u8>(), 1..300), uu in any::<u8>(), cpi in any::<u8>()) {
            let repr = Repr { cpcs_uu: uu, cpi, length: sdu.len() as u16 };
            let mut a = vec![0xeeu8; repr.buffer_len()];
            a[..sdu.len()].copy_from_slice(&sdu);
            repr.emit(&mut Pdu::new_unchecked(&mut a[..]));
            let parsed = Repr::parse(&Pdu::new_checked(&a[..]).unwrap()).unwrap();
            prop_assert_eq!(parsed, repr);
            let mut b = vec![0x11u8; parsed.buffer_len()];
            b[..sdu.len()].copy_from_slice(&sdu);
            parsed.emit(&mut Pdu::new_unchecked(&mut b[..]));
            prop_assert_eq!(&a, &b);
            // Segmenting gives the same bytes, and reassembly gives the SDU back.
            let mut r = Reassembler::new();
            let mut got = None;
            let mut joined = Vec::new();
            segment_with(&atm::Repr::user_data(0, 32, false), uu, cpi, &sdu, |c| {
                joined.extend_from_slice(&c[5..]);
                let cell = Cell::new_unchecked(&c[..]);
                if let Some(s) = r.push_cell(&cell).unwrap() { got = Some(s.sdu) }
            }).unwrap();
            prop_assert_eq!(&joined, &a);
            prop_assert_eq!(got, Some(sdu));
        }

        #[test]
        fn prop_parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode(&bytes);
            let mut r = Reassembler::with_max_sdu_len(60);
            for chunk in bytes.chunks(48) {
                let _ = r.push(chunk, chunk[0] & 1 == 1);
            }
        }
    }
}
