//! ATM in the simulator: cells through switches, AAL5 at the end systems, Classical IP
//! over ATM (CLIP) with ATMARP, PVCs and SVCs set up by UNI signalling.
//!
//! Standards a reader must know:
//!
//! * ITU-T I.361 §2.1–2.2 (the 53-octet cell, VPI/VCI, PTI), I.432.1 §7.3.2 (HEC):
//!   [`wire::atm`]. ITU-T I.363.5 (AAL5 CPCS: pad, 8-octet trailer, CRC-32):
//!   [`wire::aal5`]. RFC 2684 (LLC/SNAP and VC-multiplexed encapsulation):
//!   [`wire::rfc2684`]. RFC 2225 (CLIP: LIS, ATMARP server, InATMARP on PVCs, MTU 9180):
//!   [`clip`] and [`wire::atmarp`].
//! * Line rates: SONET OC-3c / SDH STM-1 carries 149.76 Mb/s of cells in its C-4
//!   container (ITU-T G.707 §10.1.1; ATM Forum af-phy-0015.000, 155.52 Mb/s line), i.e.
//!   353,207.5 cells/s; the 25.6 Mb/s interface of af-phy-0040.000 puts a one-octet
//!   start-of-cell command before every cell (4B5B at 32 Mbaud: 25.6 Mb/s of octets,
//!   53/54 of it cells). Both from [`wire::atm::rate`].
//! * ATM Forum UNI 3.1 §5 / ITU-T Q.2931: SETUP, CALL PROCEEDING, CONNECT, CONNECT
//!   ACKNOWLEDGE on the signalling VC 0/5 ([`signalling`]).
//! * ATM Forum TM 4.0 §5 (service categories CBR, rt/nrt-VBR, ABR, UBR; PCR, the dual
//!   GCRA of VBR, ABR's RM-cell loop: [`qos`]) and
//!   Romanow & Floyd, "Dynamics of TCP traffic over ATM networks", IEEE JSAC 13(4), 1995
//!   (early and partial packet discard, EPD/PPD).
//!
//! # Time: cell slots
//!
//! A link sends a cell, an idle cell or an unassigned cell in every slot (I.432.1 §7.2,
//! cell rate decoupling), so a cell can start only on a slot boundary. Slot `k` of a
//! link of cell rate `R` b/s starts at `floor(k × 424 × 10⁹ / R)` ns from the start of
//! the run, computed in integers: there is no drift over a run, and a cell's time is
//! exact to the nanosecond.
//!
//! # Speed: cells as small values, one event per cell at a switch
//!
//! A frame's bytes live once in a slab ([`net`]); a cell is (frame, index), and a run of
//! cells of one frame that leave one port on evenly spaced slots is a *train*. The
//! 53 real octets of any cell (header, HEC, payload, the AAL5 trailer and CRC in the
//! last) are produced only where they are observed ([`net::AtmNet::cell_bytes`], the
//! captures). A switch handles each cell at its own arrival time (one engine event per
//! cell), which keeps the FIFO order of cells from different inputs exact. At an end
//! system nothing observes a cell before the end of its frame, so the receiving NIC
//! takes a whole train in one event at the arrival of its last cell: the outcome is the
//! same as cell by cell.

pub mod clip;
pub mod config;
pub mod lane;
pub mod net;
pub mod signalling;

pub use config::{AtmConfig, AtmLinkConfig};
pub use net::{qos, AtmEvent, AtmNet, AtmOut, AtmStats};

/// Bits of one cell on the line: 53 × 8 (I.361 §2.1).
pub const CELL_BITS: u128 = wire::atm::CELL_BITS as u128;

/// The cell payload rate of a physical layer, b/s of 53-octet cells.
pub fn phy_cell_rate(phy: qoslab_plan::AtmPhy) -> u64 {
    use qoslab_plan::AtmPhy;
    use wire::atm::rate;
    match phy {
        // G.707 §10.1.1: the C-4 of STM-1 / OC-3c, 260 × 9 × 8 × 8000 = 149.76 Mb/s.
        AtmPhy::Oc3 => rate::OC3_CELL_PAYLOAD,
        // G.707 §10.1.2: C-4-4c of STM-4 / OC-12c.
        AtmPhy::Oc12 => rate::OC12_CELL_PAYLOAD,
        // af-phy-0040.000: 25.6 Mb/s of octets, 53 of every 54 octet times are cells.
        AtmPhy::Atm25 => rate::ATM25_CELL_PAYLOAD,
    }
}

/// Slot arithmetic of one link: slot `k` starts at `floor(k × 424e9 / rate)` ns.
///
/// The ratio is kept reduced (`num / den` ns per slot; OC-3: 331,250 / 117), so that the
/// products fit in 64 bits for any run shorter than years and a slot costs one 64-bit
/// division (128-bit arithmetic only if they would not fit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slots {
    pub rate_bps: u64,
    num: u64,
    den: u64,
}

const fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Slots {
    /// # Panics
    /// If `rate_bps` is zero.
    pub const fn new(rate_bps: u64) -> Slots {
        assert!(rate_bps > 0, "a link of 0 b/s has no cell slots");
        let bits = CELL_BITS as u64 * 1_000_000_000;
        let g = gcd(bits, rate_bps);
        Slots { rate_bps, num: bits / g, den: rate_bps / g }
    }

    /// When slot `k` starts, ns.
    #[inline]
    pub fn start(self, k: u64) -> u64 {
        match k.checked_mul(self.num) {
            Some(p) => p / self.den,
            None => (u128::from(k) * u128::from(self.num) / u128::from(self.den)) as u64,
        }
    }

    /// The first slot that starts at or after `t`: `ceil(t × rate / 424e9)`.
    #[inline]
    pub fn ceil(self, t: u64) -> u64 {
        match t.checked_mul(self.den) {
            Some(p) => p.div_ceil(self.num),
            None => (u128::from(t) * u128::from(self.den)).div_ceil(u128::from(self.num)) as u64,
        }
    }

    /// Cells per second (fractional).
    pub fn cells_per_second(self) -> f64 {
        self.rate_bps as f64 / CELL_BITS as f64
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn oc3_slots_are_exact_and_do_not_drift() {
        let s = Slots::new(phy_cell_rate(qoslab_plan::AtmPhy::Oc3));
        assert_eq!((s.num, s.den), (331_250, 117));
        // 424 bits at 149.76 Mb/s: 2831.196… ns.
        assert_eq!(s.start(1), 2831);
        // 353,207.55 cells per second: slot 353,207 starts just before 1 s, 353,208 after.
        assert!(s.start(353_207) < 1_000_000_000 && s.start(353_208) >= 1_000_000_000);
        // No drift: slot 706,415 starts at 706,415 × 424 / 149.76 µs = 1,999,999,732.9 ns.
        assert_eq!(s.start(706_415), 1_999_999_732);
        for t in [0u64, 1, 2831, 2832, 999_999_999, 1_000_000_000] {
            let k = s.ceil(t);
            assert!(s.start(k) >= t && (k == 0 || s.start(k - 1) < t), "t = {t}");
        }
        // Far beyond 64-bit products: the 128-bit path agrees with the exact value.
        let k = 100_000_000_000_000;
        assert_eq!(u128::from(s.start(k)), u128::from(k) * 424_000_000_000 / 149_760_000);
    }

    #[test]
    fn atm25_carries_53_of_54_octets() {
        let s = Slots::new(phy_cell_rate(qoslab_plan::AtmPhy::Atm25));
        // 54 octet times of 25.6 Mb/s per cell: 16.875 µs.
        assert_eq!(s.start(8), 135_000);
    }
}
