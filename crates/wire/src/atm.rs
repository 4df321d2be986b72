//! The ATM cell: a 5-byte header and a 48-byte payload.
//!
//! Standards a reader needs:
//! * ITU-T I.361 (02/99) "B-ISDN ATM layer specification": §2.1 cell structure,
//!   §2.2 header at the UNI (Figure 2) and at the NNI (Figure 3), §2.2.4 payload
//!   type (Table 3), §2.2.3 pre-assigned header values (Table 2).
//! * ITU-T I.432.1 (02/99) "B-ISDN user-network interface – Physical layer
//!   specification: General characteristics": §7.3.2 header error control (HEC):
//!   the CRC-8 x^8+x^2+x+1 of the first four header octets XORed with the coset
//!   0101 0101, and the receiver's two modes (correction / detection, Figure 4).
//! * Link rates: ITU-T G.707 (the STM-1 frame and its C-4 container), ITU-T I.432.2
//!   (155 520 kbit/s UNI), ATM Forum af-phy-0040.000 (25.6 Mb/s over twisted pair),
//!   ITU-T G.832 / G.804 (ATM over E3 and DS3), ATM Forum UNI 3.1 §2.3 (DS3 PLCP).
//!   Caution: the section numbers given for these physical-layer documents follow
//!   their usual structure and were not checked against the texts; the arithmetic
//!   behind every rate is in its doc and in `test_rates`.
//!
//! The header is the same at the UNI and the NNI except for its first 12 bits: at the
//! UNI a 4-bit GFC then an 8-bit VPI, at the NNI a 12-bit VPI. A [`Cell`] view does not
//! know which interface it came from, so the VPI accessors take a [`Format`].

use core::fmt;

use crate::crc;
use crate::{Error, Result};

/// I.361 §2.1: a cell is 53 octets.
pub const CELL_LEN: usize = 53;
/// I.361 §2.1: the cell header is 5 octets.
pub const HEADER_LEN: usize = 5;
/// I.361 §2.1: the information field (payload) is 48 octets.
pub const PAYLOAD_LEN: usize = 48;
/// Bits on the line per cell (53 × 8).
pub const CELL_BITS: u64 = (CELL_LEN * 8) as u64;

/// Byte ranges of the cell fields (I.361 Figures 2 and 3). Fields smaller than a byte
/// are read through masks in the accessors.
pub mod field {
    use crate::Field;
    /// GFC (UNI, high nibble) or VPI bits 11..4 (NNI), plus VPI bits in the next byte.
    pub const VPI_GFC: Field = 0..2;
    /// The low 4 VPI bits, the 16 VCI bits, PTI and CLP span bytes 1..4.
    pub const VCI_PTI_CLP: Field = 1..4;
    /// The four octets the HEC covers (I.432.1 §7.3.2.1).
    pub const HEC_COVERED: Field = 0..4;
    /// I.432.1 §7.3.2: header error control octet.
    pub const HEC: usize = 4;
    /// I.361 §2.1: the 48-octet information field.
    pub const PAYLOAD: Field = 5..53;
}

/// Where a header was seen: it decides how the first 12 bits read (I.361 §2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Format {
    /// User-network interface: GFC 4 bits, VPI 8 bits (I.361 Figure 2).
    #[default]
    Uni,
    /// Network-node interface: VPI 12 bits, no GFC (I.361 Figure 3).
    Nni,
}

impl Format {
    /// The largest VPI the format can carry: 255 at the UNI, 4095 at the NNI.
    pub const fn max_vpi(self) -> u16 {
        match self {
            Format::Uni => 0xff,
            Format::Nni => 0x0fff,
        }
    }
}

crate::enum_with_unknown! {
    /// I.361 §2.2.4 Table 3: payload type indicator (3 bits).
    pub enum Pti(u8) {
        /// 000: user data cell, no congestion, ATM-user-to-ATM-user indication 0
        /// (for AAL5: not the last cell of a CPCS-PDU).
        UserData0 = 0,
        /// 001: user data cell, no congestion, AUU indication 1 (AAL5 end of SDU).
        UserData1 = 1,
        /// 010: user data cell, congestion experienced, AUU 0.
        UserData0Congestion = 2,
        /// 011: user data cell, congestion experienced, AUU 1.
        UserData1Congestion = 3,
        /// 100: OAM F5 segment-associated cell (I.610).
        OamF5Segment = 4,
        /// 101: OAM F5 end-to-end associated cell (I.610).
        OamF5EndToEnd = 5,
        /// 110: resource management cell (I.371).
        ResourceManagement = 6,
        /// 111: reserved for future VC functions.
        Reserved = 7,
    }
}

impl Pti {
    /// Bit 3 of the PTI clear: a user data cell (I.361 §2.2.4).
    pub fn is_user_data(self) -> bool {
        u8::from(self) & 0b100 == 0
    }

    /// For a user data cell, the ATM-user-to-ATM-user indication; AAL5 sets it on the
    /// last cell of a CPCS-PDU (I.363.5 §9.1, the "SDU type" of I.361 §2.2.4).
    pub fn is_end_of_sdu(self) -> bool {
        self.is_user_data() && u8::from(self) & 0b001 != 0
    }

    /// For a user data cell, the explicit forward congestion indication (EFCI).
    pub fn congestion(self) -> bool {
        self.is_user_data() && u8::from(self) & 0b010 != 0
    }

    /// The user-data PTI for the given end-of-SDU and congestion bits.
    pub fn user_data(end_of_sdu: bool, congestion: bool) -> Pti {
        Pti::from(u8::from(congestion) << 1 | u8::from(end_of_sdu))
    }

    /// An OAM F5 cell (segment or end-to-end).
    pub fn is_oam_f5(self) -> bool {
        matches!(self, Pti::OamF5Segment | Pti::OamF5EndToEnd)
    }
}

/// Pre-assigned VCIs (I.361 §2.2.3 Table 2; ATM Forum UNI 3.1 §3 and ILMI / LANE
/// specifications). VCIs 0..=31 are reserved at every VPI for these functions.
pub mod vci {
    /// Unassigned or idle cell (with VPI 0 and PTI 0; I.361 Table 2).
    pub const UNASSIGNED: u16 = 0;
    /// Meta-signalling (I.361 Table 2).
    pub const META_SIGNALLING: u16 = 1;
    /// General broadcast signalling (I.361 Table 2).
    pub const BROADCAST_SIGNALLING: u16 = 2;
    /// Segment OAM F4 flow cell (I.361 Table 2, I.610).
    pub const OAM_F4_SEGMENT: u16 = 3;
    /// End-to-end OAM F4 flow cell (I.361 Table 2, I.610).
    pub const OAM_F4_END_TO_END: u16 = 4;
    /// Point-to-point signalling, Q.2931 over SAAL (I.361 Table 2).
    pub const SIGNALLING: u16 = 5;
    /// VP resource management cell (I.361 Table 2, I.371).
    pub const RM_VP: u16 = 6;
    /// ILMI (ATM Forum ILMI 4.0 af-ilmi-0065.000 §3, SNMP over AAL5 on VPI 0 VCI 16).
    pub const ILMI: u16 = 16;
    /// LANE configuration direct to the LECS, well-known (ATM Forum af-lane-0021.000 §3).
    pub const LECS: u16 = 17;
    /// PNNI routing control channel (ATM Forum af-pnni-0055.000 §5.5).
    pub const PNNI: u16 = 18;
    /// The first VCI free for user connections: 0..=31 are reserved (I.361 §2.2.3).
    pub const FIRST_USER: u16 = 32;

    /// A VCI in the reserved range 0..=31.
    pub const fn is_reserved(vci: u16) -> bool {
        vci < FIRST_USER
    }
}

/// Physical-layer rates, in bit/s.
pub mod rate {
    /// SONET OC-3c / SDH STM-1 line rate: 155.52 Mb/s (ITU-T G.707 §6.1, ANSI T1.105).
    pub const OC3_LINE: u64 = 155_520_000;
    /// Payload capacity for cells in STM-1 / OC-3c: the C-4 container, 260 columns × 9
    /// rows × 8 bits × 8000 frames/s = 149.76 Mb/s (ITU-T G.707 §10.1.1; cell mapping
    /// into the C-4 per ITU-T I.432.2 §4 and G.707 §10.2.1). 353,207 cells/s.
    pub const OC3_CELL_PAYLOAD: u64 = 149_760_000;
    /// STS-12c / STM-4 line rate: 622.08 Mb/s (ITU-T G.707 §6.1).
    pub const OC12_LINE: u64 = 622_080_000;
    /// STM-4 C-4-4c payload capacity for cells: 1040 columns × 9 × 8 × 8000 =
    /// 599.04 Mb/s (ITU-T G.707 §10.1.2).
    pub const OC12_CELL_PAYLOAD: u64 = 599_040_000;
    /// ATM Forum af-phy-0040.000: 25.6 Mb/s over twisted pair (32 Mbaud, 4B5B). Each
    /// cell is preceded by a one-octet X_X / X_4 start-of-cell command, so a cell takes
    /// 54 octet times: see [`ATM25_CELL_PAYLOAD`].
    pub const ATM25_LINE: u64 = 25_600_000;
    /// Cell payload capacity of the 25.6 Mb/s interface counted in 53-octet cells:
    /// 25.6 Mb/s × 53/54 (af-phy-0040.000, one command octet per cell).
    pub const ATM25_CELL_PAYLOAD: u64 = 25_600_000 * 53 / 54;
    /// DS3 line rate: 44.736 Mb/s (ANSI T1.107, ITU-T G.703 §8).
    pub const DS3_LINE: u64 = 44_736_000;
    /// DS3 with the PLCP of ATM Forum UNI 3.1 §2.3.1 (IEEE 802.6 style): 12 cells
    /// every 125 µs, 96,000 cells/s = 40.704 Mb/s of cells.
    pub const DS3_PLCP_CELL_PAYLOAD: u64 = 12 * 53 * 8 * 8000;
    /// DS3 with direct (HEC-delineated) cell mapping (ITU-T G.804 §6.2.1, af-phy-0054):
    /// the C-bit parity M-frame carries 4704 payload bits of every 4760, 44.736 × 4704 /
    /// 4760 = 44.2097 Mb/s.
    pub const DS3_DIRECT_CELL_PAYLOAD: u64 = 44_736_000 * 4704 / 4760;
    /// E3 line rate: 34.368 Mb/s (ITU-T G.703 §9, G.751).
    pub const E3_LINE: u64 = 34_368_000;
    /// E3 with the G.832 frame: 530 payload octets of 537 every 125 µs = 33.92 Mb/s
    /// (ITU-T G.832 §2.1; cell mapping ITU-T G.804 §6.2.2).
    pub const E3_CELL_PAYLOAD: u64 = 530 * 8 * 8000;
}

/// How many whole cells per second fit in `payload_rate_bps` of cell payload capacity
/// (the physical layer's capacity after framing, e.g. [`rate::OC3_CELL_PAYLOAD`]).
/// 149.76 Mb/s gives 353,207 cells/s.
pub const fn cells_per_second(payload_rate_bps: u64) -> u64 {
    payload_rate_bps / CELL_BITS
}

/// The ATM-layer throughput left for cell payloads: 48/53 of the cell rate.
pub const fn payload_bits_per_second(payload_rate_bps: u64) -> u64 {
    cells_per_second(payload_rate_bps) * (PAYLOAD_LEN as u64) * 8
}

/// I.432.1 §7.3.2.1: the HEC of the first four header octets (coset included, as in
/// the catalogue CRC [`crc::ATM_HEC`]).
pub fn hec(header4: &[u8; 4]) -> u8 {
    crc::ATM_HEC.checksum(header4)
}

/// The outcome of checking a header's HEC (I.432.1 §7.3.2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HecCheck {
    /// The syndrome is zero.
    Valid,
    /// A single-bit error that correction mode can repair. `bit` counts the 40 header
    /// bits in the order sent: 0 is the most significant bit of octet 1, 39 the least
    /// significant bit of the HEC.
    SingleBit { bit: u8 },
    /// A syndrome no single-bit error gives: two or more bits are wrong.
    MultiBit,
}

/// Classifies a 5-octet header by its HEC syndrome. A double-bit error is never taken
/// for a single-bit one: x^8+x^2+x+1 has the factor x+1, so every single-bit syndrome
/// has odd weight and every even-weight error pattern an even-weight syndrome.
pub fn check_hec(header: &[u8; HEADER_LEN]) -> HecCheck {
    let syndrome = hec(&[header[0], header[1], header[2], header[3]]) ^ header[4];
    if syndrome == 0 {
        return HecCheck::Valid;
    }
    // The CRC is affine in its input: the syndrome of an error pattern e is
    // crc(e) ^ crc(0). Try the 32 header bits, then the 8 HEC bits.
    let zero = hec(&[0; 4]);
    for bit in 0..32u8 {
        let mut e = [0u8; 4];
        e[usize::from(bit / 8)] = 0x80 >> (bit % 8);
        if hec(&e) ^ zero == syndrome {
            return HecCheck::SingleBit { bit };
        }
    }
    for bit in 0..8u8 {
        if syndrome == 0x80 >> bit {
            return HecCheck::SingleBit { bit: 32 + bit };
        }
    }
    HecCheck::MultiBit
}

/// Flips the bit `check_hec` named, repairing a single-bit header error in place.
/// Returns the check made before the repair.
pub fn correct_header(header: &mut [u8; HEADER_LEN]) -> HecCheck {
    let check = check_hec(header);
    if let HecCheck::SingleBit { bit } = check {
        header[usize::from(bit / 8)] ^= 0x80 >> (bit % 8);
    }
    check
}

/// What the receiver does with a cell (I.432.1 §7.3.2.2, Figure 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HecVerdict {
    /// No error: the cell goes on unchanged.
    Pass,
    /// A single-bit error was corrected (correction mode only); the cell goes on.
    Corrected { bit: u8 },
    /// The cell is discarded.
    Discard,
}

/// The receiver's HEC mode (I.432.1 §7.3.2.2, Figure 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum HecMode {
    /// The default: single-bit errors are corrected.
    #[default]
    Correction,
    /// Entered after any error: every errored header is discarded.
    Detection,
}

/// The two-mode HEC receiver of I.432.1 Figure 4. In correction mode a single-bit
/// error is corrected and a multi-bit error discards the cell; either moves it to
/// detection mode. In detection mode every errored cell is discarded, and the first
/// error-free header moves it back to correction mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct HecReceiver {
    pub mode: HecMode,
}

impl HecReceiver {
    pub const fn new() -> Self {
        HecReceiver { mode: HecMode::Correction }
    }

    /// Checks (and in correction mode repairs) one header, updating the mode.
    pub fn receive(&mut self, header: &mut [u8; HEADER_LEN]) -> HecVerdict {
        match (self.mode, check_hec(header)) {
            (_, HecCheck::Valid) => {
                self.mode = HecMode::Correction;
                HecVerdict::Pass
            }
            (HecMode::Correction, HecCheck::SingleBit { bit }) => {
                header[usize::from(bit / 8)] ^= 0x80 >> (bit % 8);
                self.mode = HecMode::Detection;
                HecVerdict::Corrected { bit }
            }
            (_, _) => {
                self.mode = HecMode::Detection;
                HecVerdict::Discard
            }
        }
    }
}

/// A read/write view of a 53-octet ATM cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Cell<T> {
    /// Wraps a buffer without checking its length.
    pub const fn new_unchecked(buffer: T) -> Cell<T> {
        Cell { buffer }
    }

    /// Wraps a buffer, checking that it holds a whole cell.
    pub fn new_checked(buffer: T) -> Result<Cell<T>> {
        let cell = Cell::new_unchecked(buffer);
        cell.check_len()?;
        Ok(cell)
    }

    /// `Err(Truncated)` when the buffer is shorter than 53 octets. Longer buffers are
    /// accepted; the cell is their first 53 octets.
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < CELL_LEN {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The five header octets.
    pub fn header(&self) -> [u8; HEADER_LEN] {
        let d = self.buffer.as_ref();
        [d[0], d[1], d[2], d[3], d[4]]
    }

    /// I.361 §2.2.1: generic flow control, UNI only (the top 4 bits of octet 1).
    pub fn gfc(&self) -> u8 {
        self.buffer.as_ref()[0] >> 4
    }

    /// I.361 §2.2.2: virtual path identifier, 8 bits at the UNI, 12 at the NNI.
    pub fn vpi(&self, format: Format) -> u16 {
        let d = self.buffer.as_ref();
        let v = u16::from(d[0]) << 4 | u16::from(d[1] >> 4);
        match format {
            Format::Uni => v & 0xff,
            Format::Nni => v,
        }
    }

    /// I.361 §2.2.2: virtual channel identifier, 16 bits.
    pub fn vci(&self) -> u16 {
        let d = self.buffer.as_ref();
        u16::from(d[1] & 0x0f) << 12 | u16::from(d[2]) << 4 | u16::from(d[3] >> 4)
    }

    /// I.361 §2.2.4: payload type indicator, 3 bits.
    pub fn pti(&self) -> Pti {
        Pti::from((self.buffer.as_ref()[3] >> 1) & 0x07)
    }

    /// I.361 §2.2.5: cell loss priority; set marks the cell as discardable first.
    pub fn clp(&self) -> bool {
        self.buffer.as_ref()[3] & 0x01 != 0
    }

    /// I.432.1 §7.3.2: the header error control octet.
    pub fn hec(&self) -> u8 {
        self.buffer.as_ref()[field::HEC]
    }

    /// The HEC computed over the first four octets.
    pub fn compute_hec(&self) -> u8 {
        let d = self.buffer.as_ref();
        hec(&[d[0], d[1], d[2], d[3]])
    }

    /// Whether the HEC octet matches the header.
    pub fn verify_hec(&self) -> bool {
        self.compute_hec() == self.hec()
    }

    /// I.361 §2.1: the 48-octet information field.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Cell<T> {
    /// Sets the GFC (UNI); only the low 4 bits of `value` are used.
    pub fn set_gfc(&mut self, value: u8) {
        let d = self.buffer.as_mut();
        d[0] = (d[0] & 0x0f) | (value << 4);
    }

    /// Sets the VPI; at the UNI only its low 8 bits are used and the GFC is kept, at
    /// the NNI its low 12 bits.
    pub fn set_vpi(&mut self, format: Format, value: u16) {
        let d = self.buffer.as_mut();
        match format {
            Format::Uni => {
                let v = value & 0xff;
                d[0] = (d[0] & 0xf0) | (v >> 4) as u8;
                d[1] = (d[1] & 0x0f) | ((v & 0x0f) as u8) << 4;
            }
            Format::Nni => {
                let v = value & 0x0fff;
                d[0] = (v >> 4) as u8;
                d[1] = (d[1] & 0x0f) | ((v & 0x0f) as u8) << 4;
            }
        }
    }

    pub fn set_vci(&mut self, value: u16) {
        let d = self.buffer.as_mut();
        d[1] = (d[1] & 0xf0) | (value >> 12) as u8;
        d[2] = (value >> 4) as u8;
        d[3] = (d[3] & 0x0f) | ((value & 0x0f) as u8) << 4;
    }

    pub fn set_pti(&mut self, value: Pti) {
        let d = self.buffer.as_mut();
        d[3] = (d[3] & 0xf1) | (u8::from(value) & 0x07) << 1;
    }

    pub fn set_clp(&mut self, value: bool) {
        let d = self.buffer.as_mut();
        d[3] = (d[3] & 0xfe) | u8::from(value);
    }

    pub fn set_hec(&mut self, value: u8) {
        self.buffer.as_mut()[field::HEC] = value;
    }

    /// Recomputes the HEC over the first four octets.
    pub fn fill_hec(&mut self) {
        let h = self.compute_hec();
        self.set_hec(h);
    }

    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::PAYLOAD]
    }
}

/// A parsed cell header.
///
/// Invariants for `emit`: `gfc` < 16 and is 0 at the NNI, `vpi` ≤ `format.max_vpi()`;
/// larger values are truncated to the field width.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    pub format: Format,
    /// I.361 §2.2.1, UNI only (0 at the NNI).
    pub gfc: u8,
    /// I.361 §2.2.2.
    pub vpi: u16,
    /// I.361 §2.2.2.
    pub vci: u16,
    /// I.361 §2.2.4.
    pub pti: Pti,
    /// I.361 §2.2.5.
    pub clp: bool,
}

impl Repr {
    /// A UNI user-data header with GFC 0, CLP 0, PTI 0 or 1 (end of SDU).
    pub const fn user_data(vpi: u8, vci: u16, end_of_sdu: bool) -> Repr {
        Repr {
            format: Format::Uni,
            gfc: 0,
            vpi: vpi as u16,
            vci,
            pti: if end_of_sdu { Pti::UserData1 } else { Pti::UserData0 },
            clp: false,
        }
    }

    /// The idle cell header (I.361 Table 2 pre-assigned values; idle cells are a physical
    /// layer matter, I.432.1): 00 00 00 01, i.e. VPI 0, VCI 0, PTI 0, CLP 1.
    pub const IDLE: Repr = Repr { format: Format::Uni, gfc: 0, vpi: 0, vci: 0, pti: Pti::UserData0, clp: true };

    /// Parses the header of `cell` as seen at `format`, verifying the HEC.
    /// `Err(Checksum)` when the HEC does not match (use [`correct_header`] or a
    /// [`HecReceiver`] first to apply single-bit correction).
    pub fn parse<T: AsRef<[u8]> + ?Sized>(cell: &Cell<&T>, format: Format) -> Result<Repr> {
        cell.check_len()?;
        if !cell.verify_hec() {
            return Err(Error::Checksum);
        }
        Ok(Repr {
            format,
            gfc: match format {
                Format::Uni => cell.gfc(),
                Format::Nni => 0,
            },
            vpi: cell.vpi(format),
            vci: cell.vci(),
            pti: cell.pti(),
            clp: cell.clp(),
        })
    }

    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    pub const fn buffer_len(&self) -> usize {
        CELL_LEN
    }

    /// Writes the header, HEC included, into the first five octets of `cell`; the
    /// payload is left as it is.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, cell: &mut Cell<&mut T>) {
        let header = self.to_bytes();
        cell.buffer.as_mut()[..HEADER_LEN].copy_from_slice(&header);
    }

    /// The five header octets, HEC included.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        {
            let mut c = Cell::new_unchecked(&mut h[..]);
            if self.format == Format::Uni {
                c.set_gfc(self.gfc & 0x0f);
            }
            c.set_vpi(self.format, self.vpi);
            c.set_vci(self.vci);
            c.set_pti(self.pti);
            c.set_clp(self.clp);
        }
        h[4] = hec(&[h[0], h[1], h[2], h[3]]);
        h
    }

    /// Builds a whole cell from this header and a payload of at most 48 octets
    /// (zero-filled to 48).
    pub fn emit_cell(&self, payload: &[u8], out: &mut [u8; CELL_LEN]) {
        assert!(payload.len() <= PAYLOAD_LEN, "cell payload longer than 48 octets");
        out[..HEADER_LEN].copy_from_slice(&self.to_bytes());
        out[HEADER_LEN..HEADER_LEN + payload.len()].copy_from_slice(payload);
        out[HEADER_LEN + payload.len()..].fill(0);
    }

    /// The cell tax for carrying `payload_len` octets (normally an AAL5 CPCS-PDU, a
    /// multiple of 48): a 5-octet header per cell, and any fill of a partial last cell.
    pub fn overhead_fields(&self, payload_len: usize) -> Vec<(&'static str, usize)> {
        let cells = payload_len.div_ceil(PAYLOAD_LEN);
        let mut fields = vec![("cell headers", HEADER_LEN * cells)];
        let fill = cells * PAYLOAD_LEN - payload_len;
        if fill != 0 {
            fields.push(("cell fill", fill));
        }
        fields
    }
}

impl fmt::Display for Repr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ATM {}/{} pti={} clp={}", self.vpi, self.vci, u8::from(self.pti), u8::from(self.clp))
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use proptest::prelude::*;

    // The idle cell (I.432.1, I.361 Table 2): header 00 00 00 01, HEC 0x52 (the value
    // I.432.1 tabulates), information field 0x6A repeated (the I.432.1 idle pattern).
    static IDLE_CELL: [u8; 53] = {
        let mut c = [0x6a; 53];
        c[0] = 0;
        c[1] = 0;
        c[2] = 0;
        c[3] = 1;
        c[4] = 0x52;
        c
    };

    // UNI header GFC 0, VPI 1, VCI 32, PTI 1 (end of SDU), CLP 0:
    //   0000 0000 | 0001 0000 | 0000 0010 | 0000 0010
    // HEC 0xD3, worked out by a separate bitwise division (a Python one-liner of the
    // same shift register as `hec_by_hand`) when this test was written.
    static USER_HEADER: [u8; 4] = [0x00, 0x10, 0x02, 0x02];
    const USER_HEC: u8 = 0xd3;

    /// An independent HEC: the polynomial division of I.432.1 §7.3.2.1 done bit by bit
    /// (x^8 + x^2 + x + 1, register starting at 0), then the coset 0x55.
    fn hec_by_hand(header: &[u8]) -> u8 {
        let mut reg: u8 = 0;
        for &byte in header {
            for i in (0..8).rev() {
                let bit = (byte >> i) & 1;
                let top = reg >> 7;
                reg <<= 1;
                if top ^ bit != 0 {
                    reg ^= 0x07;
                }
            }
        }
        reg ^ 0x55
    }

    #[test]
    fn test_idle_cell_hec() {
        assert_eq!(hec(&[0, 0, 0, 1]), 0x52);
        assert_eq!(hec_by_hand(&[0, 0, 0, 1]), 0x52);
        assert_eq!(Repr::IDLE.to_bytes(), [0, 0, 0, 1, 0x52]);
    }

    #[test]
    fn test_hec_matches_bitwise_division() {
        for h in [[0u8, 0, 0, 0], USER_HEADER, [0xff, 0xff, 0xff, 0xff], [0x12, 0x34, 0x56, 0x78]] {
            assert_eq!(hec(&h), hec_by_hand(&h), "{h:02x?}");
        }
        // An all-zero header: the CRC remainder is 0, so the HEC is the coset.
        assert_eq!(hec(&[0; 4]), 0x55);
    }

    #[test]
    fn test_parse() {
        let cell = Cell::new_checked(&IDLE_CELL[..]).unwrap();
        let repr = Repr::parse(&cell, Format::Uni).unwrap();
        assert_eq!(repr, Repr::IDLE);
        assert_eq!(cell.payload(), &[0x6a; 48][..]);

        let mut bytes = [0u8; 53];
        bytes[..4].copy_from_slice(&USER_HEADER);
        bytes[4] = USER_HEC;
        let cell = Cell::new_checked(&bytes[..]).unwrap();
        let repr = Repr::parse(&cell, Format::Uni).unwrap();
        assert_eq!((repr.gfc, repr.vpi, repr.vci, repr.pti, repr.clp), (0, 1, 32, Pti::UserData1, false));
        assert!(repr.pti.is_end_of_sdu());
    }

    #[test]
    fn test_emit() {
        let mut bytes = [0u8; 53];
        Repr::user_data(1, 32, true).emit(&mut Cell::new_unchecked(&mut bytes[..]));
        assert_eq!(&bytes[..4], &USER_HEADER);
        assert_eq!(bytes[4], USER_HEC);
        assert_eq!(hec_by_hand(&USER_HEADER), USER_HEC);
    }

    #[test]
    fn test_nni_fields() {
        // NNI: VPI 0xABC, VCI 0x1234, PTI 5, CLP 1.
        // 1010 1011 | 1100 0001 | 0010 0011 | 0100 1011
        let repr = Repr { format: Format::Nni, gfc: 0, vpi: 0xabc, vci: 0x1234, pti: Pti::OamF5EndToEnd, clp: true };
        let h = repr.to_bytes();
        assert_eq!(&h[..4], &[0xab, 0xc1, 0x23, 0x4b]);
        let mut cell = [0u8; 53];
        cell[..5].copy_from_slice(&h);
        let c = Cell::new_unchecked(&cell[..]);
        assert_eq!(c.vpi(Format::Nni), 0xabc);
        // Read as UNI the same bits give GFC 0xA and VPI 0xBC.
        assert_eq!((c.gfc(), c.vpi(Format::Uni)), (0xa, 0xbc));
        assert_eq!(Repr::parse(&c, Format::Nni).unwrap(), repr);
    }

    #[test]
    fn test_truncated_and_bad_hec() {
        assert_eq!(Cell::new_checked(&IDLE_CELL[..52]).unwrap_err(), Error::Truncated);
        let mut bad = IDLE_CELL;
        bad[4] ^= 0x01;
        assert_eq!(Repr::parse(&Cell::new_unchecked(&bad[..]), Format::Uni), Err(Error::Checksum));
    }

    #[test]
    fn test_single_bit_correction_every_position() {
        let good: [u8; 5] = [0x00, 0x10, 0x02, 0x02, hec_by_hand(&USER_HEADER)];
        for bit in 0..40u8 {
            let mut h = good;
            h[usize::from(bit / 8)] ^= 0x80 >> (bit % 8);
            assert_eq!(correct_header(&mut h), HecCheck::SingleBit { bit });
            assert_eq!(h, good);
        }
    }

    #[test]
    fn test_double_bit_errors_are_detected() {
        let good: [u8; 5] = [0x12, 0x34, 0x56, 0x78, hec(&[0x12, 0x34, 0x56, 0x78])];
        for a in 0..40u8 {
            for b in a + 1..40 {
                let mut h = good;
                h[usize::from(a / 8)] ^= 0x80 >> (a % 8);
                h[usize::from(b / 8)] ^= 0x80 >> (b % 8);
                assert_eq!(check_hec(&h), HecCheck::MultiBit, "bits {a} {b}");
            }
        }
    }

    #[test]
    fn test_receiver_modes() {
        let good: [u8; 5] = [0, 0, 0, 1, 0x52];
        let one_bit = |bit: u8| {
            let mut h = good;
            h[usize::from(bit / 8)] ^= 0x80 >> (bit % 8);
            h
        };
        let mut rx = HecReceiver::new();
        let mut h = good;
        assert_eq!(rx.receive(&mut h), HecVerdict::Pass);
        let mut h = one_bit(9);
        assert_eq!(rx.receive(&mut h), HecVerdict::Corrected { bit: 9 });
        assert_eq!(h, good);
        assert_eq!(rx.mode, HecMode::Detection);
        // In detection mode even a single-bit error discards.
        let mut h = one_bit(3);
        assert_eq!(rx.receive(&mut h), HecVerdict::Discard);
        assert_eq!(rx.mode, HecMode::Detection);
        let mut h = good;
        assert_eq!(rx.receive(&mut h), HecVerdict::Pass);
        assert_eq!(rx.mode, HecMode::Correction);
        // A multi-bit error in correction mode discards and switches mode.
        let mut h = good;
        h[0] ^= 0x81;
        assert_eq!(rx.receive(&mut h), HecVerdict::Discard);
        assert_eq!(rx.mode, HecMode::Detection);
    }

    #[test]
    fn test_pti() {
        assert_eq!(Pti::user_data(true, false), Pti::UserData1);
        assert_eq!(Pti::user_data(false, true), Pti::UserData0Congestion);
        assert!(Pti::UserData1Congestion.is_end_of_sdu());
        assert!(Pti::UserData1Congestion.congestion());
        assert!(!Pti::OamF5EndToEnd.is_user_data());
        assert!(!Pti::OamF5EndToEnd.is_end_of_sdu());
        assert!(Pti::OamF5Segment.is_oam_f5());
        assert!(vci::is_reserved(vci::ILMI) && vci::is_reserved(vci::SIGNALLING) && !vci::is_reserved(32));
    }

    #[test]
    fn test_rates() {
        // 260 × 9 × 8 × 8000 = 149.76 Mb/s; / 424 bits = 353,207.5 cells/s.
        assert_eq!(rate::OC3_CELL_PAYLOAD, 260 * 9 * 8 * 8000);
        assert_eq!(cells_per_second(rate::OC3_CELL_PAYLOAD), 353_207);
        assert_eq!(cells_per_second(rate::DS3_PLCP_CELL_PAYLOAD), 96_000);
        assert_eq!(rate::DS3_PLCP_CELL_PAYLOAD, 40_704_000);
        assert_eq!(rate::E3_CELL_PAYLOAD, 33_920_000);
        assert_eq!(rate::DS3_DIRECT_CELL_PAYLOAD, 44_209_694);
        assert_eq!(cells_per_second(rate::ATM25_CELL_PAYLOAD), 25_600_000 / (54 * 8));
        assert_eq!(payload_bits_per_second(rate::OC3_CELL_PAYLOAD), 353_207 * 384);
    }

    #[test]
    fn test_overhead_fields() {
        assert_eq!(Repr::IDLE.overhead_fields(96), vec![("cell headers", 10)]);
        assert_eq!(Repr::IDLE.overhead_fields(50), vec![("cell headers", 10), ("cell fill", 46)]);
    }

    fn arb_repr() -> impl Strategy<Value = Repr> {
        (any::<bool>(), 0u8..16, 0u16..4096, any::<u16>(), 0u8..8, any::<bool>()).prop_map(
            |(nni, gfc, vpi, vci, pti, clp)| {
                if nni {
                    Repr { format: Format::Nni, gfc: 0, vpi, vci, pti: Pti::from(pti), clp }
                } else {
                    Repr { format: Format::Uni, gfc, vpi: vpi & 0xff, vci, pti: Pti::from(pti), clp }
                }
            },
        )
    }

    proptest! {
        #[test]
        fn prop_emit_parse_emit(repr in arb_repr(), payload in proptest::collection::vec(any::<u8>(), 48)) {
            let mut a = [0u8; 53];
            repr.emit_cell(&payload, &mut a);
            let parsed = Repr::parse(&Cell::new_checked(&a[..]).unwrap(), repr.format).unwrap();
            prop_assert_eq!(parsed, repr);
            let mut b = a;
            b[..5].fill(0);
            parsed.emit(&mut Cell::new_unchecked(&mut b[..]));
            prop_assert_eq!(a, b);
        }

        #[test]
        fn prop_parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..60)) {
            let _ = Cell::new_checked(&bytes[..]).and_then(|c| Repr::parse(&c, Format::Uni));
            let _ = Cell::new_checked(&bytes[..]).and_then(|c| Repr::parse(&c, Format::Nni));
            if bytes.len() >= 5 {
                let h = [bytes[0], bytes[1], bytes[2], bytes[3], bytes[4]];
                let _ = check_hec(&h);
            }
        }
    }
}
