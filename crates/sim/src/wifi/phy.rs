//! 802.11b/g PHY timing: how long a frame occupies the air, and the MAC's
//! interframe spaces and contention windows that follow from the PHY.
//!
//! Standards a reader must know (IEEE Std 802.11-2020 unless said otherwise):
//!
//! * Clause 15, DSSS PHY (1 and 2 Mb/s) and clause 16, HR/DSSS PHY (5.5 and 11 Mb/s
//!   CCK) — "802.11b". The PPDU is a PLCP preamble and header sent at 1 Mb/s (long
//!   format, 192 µs) or at 1 Mb/s + 2 Mb/s (short format, 96 µs, never for a
//!   1 Mb/s PSDU), followed by the PSDU at the data rate. Slot, SIFS and contention
//!   windows are in Table 16-4 "HR/DSSS PHY characteristics".
//! * Clause 17, OFDM PHY, whose modulation and TXTIME rule ERP-OFDM reuses:
//!   Table 17-4 (modulation-dependent parameters: N_DBPS), Table 17-5
//!   (timing-related parameters: T_PREAMBLE, T_SIGNAL, T_SYM) and the TXTIME
//!   equation of §17.4.3.
//! * Clause 18, ERP — "802.11g": ERP-OFDM frames in the 2.4 GHz band add a 6 µs
//!   signal extension so that SIFS stays 10 µs; the short 9 µs slot and aCWmin 15
//!   are used only when no non-ERP (802.11b) station is in the BSS; with one present
//!   OFDM frames need protection (§10.26.2, CTS-to-self or RTS/CTS at a DSSS/CCK
//!   rate). Values from the "ERP characteristics" table of clause 18 (Table 19-8 in
//!   802.11-2012).
//! * Clause 10 (MAC): DIFS = SIFS + 2 × slot (§10.3.2.3.5); EIFS (§10.3.2.3.7);
//!   rate of control response frames (§10.6.6.5).
//! * Clause 9 (frame formats): frame lengths (§9.3.1.2 RTS, §9.3.1.3 CTS,
//!   §9.3.1.4 Ack, §9.3.2.1 data) and the Duration field (§9.2.5).
//! * Clause 12 (security): per-MPDU expansion of WEP (§12.3.2), TKIP (§12.5.2)
//!   and CCMP (§12.5.3).
//!
//! Every duration is an integer number of microseconds in the standard; this
//! module returns [`Nanos`] so the engine needs no conversion.

use super::Nanos;

/// One microsecond in [`Nanos`].
pub const MICROS: Nanos = 1_000;

// ---------------------------------------------------------------------------
// MAC framing lengths (bytes). The wire crate (`wire::dot11`, `wire::llc`) owns these;
// they come from there, so that the two cannot disagree.
// ---------------------------------------------------------------------------

/// Data frame MAC header with three addresses (§9.3.2.1), from the wire crate.
pub const DATA_HEADER_LEN: usize = wire::dot11::DATA_HEADER_LEN;
/// Data frame MAC header with Address 4 (ToDS = FromDS = 1, WDS) (§9.3.2.1).
pub const DATA_HEADER_4ADDR_LEN: usize = wire::dot11::DATA_HEADER_LEN_4ADDR;
/// LLC/SNAP encapsulation of an Ethernet-type MSDU (IEEE 802.2, RFC 1042).
pub const LLC_SNAP_LEN: usize = wire::llc::LLC_SNAP_LEN;
/// Frame check sequence, CRC-32 (§9.2.4.8).
pub const FCS_LEN: usize = wire::dot11::FCS_LEN;
/// Ack frame (§9.3.1.4).
pub const ACK_LEN: usize = wire::dot11::ACK_LEN;
/// RTS frame (§9.3.1.2).
pub const RTS_LEN: usize = wire::dot11::RTS_LEN;
/// CTS frame (§9.3.1.3).
pub const CTS_LEN: usize = wire::dot11::CTS_LEN;

/// Link-layer confidentiality, for the bytes it adds to every data MPDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Security {
    /// Open system, no encryption.
    #[default]
    None,
    /// WEP-40 or WEP-104 (the key length does not change the frame): IV 4 +
    /// ICV 4 bytes (§12.3.2.2, WEP MPDU format).
    Wep,
    /// TKIP: IV/KeyID 4 + Extended IV 4 + MIC 8 + ICV 4 bytes (§12.5.2.2).
    Tkip,
    /// CCMP-128: CCMP header 8 + MIC 8 bytes (§12.5.3.2).
    Ccmp,
}

impl Security {
    /// Bytes this cipher adds to each MPDU's frame body.
    pub const fn overhead(self) -> usize {
        match self {
            Security::None => 0,
            Security::Wep => 8,
            Security::Tkip => 20,
            Security::Ccmp => 16,
        }
    }
}

/// Length in bytes of the data MPDU (= PSDU) that carries an `msdu_len`-byte
/// Ethernet payload: MAC header + LLC/SNAP + MSDU + cipher expansion + FCS.
pub const fn data_mpdu_len(msdu_len: usize, security: Security, four_address: bool) -> usize {
    let header = if four_address { DATA_HEADER_4ADDR_LEN } else { DATA_HEADER_LEN };
    header + LLC_SNAP_LEN + msdu_len + security.overhead() + FCS_LEN
}

// ---------------------------------------------------------------------------
// Rates
// ---------------------------------------------------------------------------

/// The modulation class of a rate, as far as control response rates care
/// (§10.6.6.5: the response uses the same modulation class as the frame it
/// answers; DSSS and HR/DSSS answer each other in 802.11b practice and in ns-3,
/// and are one class here).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ModulationClass {
    /// DSSS (clause 15) and HR/DSSS CCK (clause 16), including ERP-DSSS/CCK.
    DsssCck,
    /// ERP-OFDM (clause 18, OFDM modulation of clause 17).
    ErpOfdm,
}

/// A PHY data rate of 802.11b or 802.11g. (No `Ord`: the variants' order is not
/// the rates' order; compare [`Rate::kbps`].)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rate {
    /// 1 Mb/s DBPSK (clause 15).
    Dsss1,
    /// 2 Mb/s DQPSK (clause 15).
    Dsss2,
    /// 5.5 Mb/s CCK (clause 16).
    Cck5_5,
    /// 11 Mb/s CCK (clause 16).
    Cck11,
    /// 6 Mb/s BPSK 1/2 (ERP-OFDM).
    Ofdm6,
    /// 9 Mb/s BPSK 3/4.
    Ofdm9,
    /// 12 Mb/s QPSK 1/2.
    Ofdm12,
    /// 18 Mb/s QPSK 3/4.
    Ofdm18,
    /// 24 Mb/s 16-QAM 1/2.
    Ofdm24,
    /// 36 Mb/s 16-QAM 3/4.
    Ofdm36,
    /// 48 Mb/s 64-QAM 2/3.
    Ofdm48,
    /// 54 Mb/s 64-QAM 3/4.
    Ofdm54,
}

impl Rate {
    /// The 802.11b rates.
    pub const DSSS_CCK: [Rate; 4] = [Rate::Dsss1, Rate::Dsss2, Rate::Cck5_5, Rate::Cck11];
    /// The ERP-OFDM rates.
    pub const ERP_OFDM: [Rate; 8] =
        [Rate::Ofdm6, Rate::Ofdm9, Rate::Ofdm12, Rate::Ofdm18, Rate::Ofdm24, Rate::Ofdm36, Rate::Ofdm48, Rate::Ofdm54];

    /// The rate in kb/s (exact: 5.5 Mb/s is 5500).
    pub const fn kbps(self) -> u64 {
        match self {
            Rate::Dsss1 => 1_000,
            Rate::Dsss2 => 2_000,
            Rate::Cck5_5 => 5_500,
            Rate::Cck11 => 11_000,
            Rate::Ofdm6 => 6_000,
            Rate::Ofdm9 => 9_000,
            Rate::Ofdm12 => 12_000,
            Rate::Ofdm18 => 18_000,
            Rate::Ofdm24 => 24_000,
            Rate::Ofdm36 => 36_000,
            Rate::Ofdm48 => 48_000,
            Rate::Ofdm54 => 54_000,
        }
    }

    /// The rate in Mb/s, for reports.
    pub fn mbps(self) -> f64 {
        self.kbps() as f64 / 1000.0
    }

    /// The rate whose value in kb/s is `kbps`, if 802.11b/g has one.
    pub fn from_kbps(kbps: u64) -> Option<Rate> {
        Rate::DSSS_CCK.into_iter().chain(Rate::ERP_OFDM).find(|r| r.kbps() == kbps)
    }

    /// DSSS/CCK or ERP-OFDM.
    pub const fn class(self) -> ModulationClass {
        match self {
            Rate::Dsss1 | Rate::Dsss2 | Rate::Cck5_5 | Rate::Cck11 => ModulationClass::DsssCck,
            _ => ModulationClass::ErpOfdm,
        }
    }

    /// Data bits per OFDM symbol, N_DBPS (Table 17-4, 20 MHz channel spacing);
    /// `None` for DSSS/CCK rates.
    pub const fn ofdm_data_bits_per_symbol(self) -> Option<u64> {
        match self {
            Rate::Ofdm6 => Some(24),
            Rate::Ofdm9 => Some(36),
            Rate::Ofdm12 => Some(48),
            Rate::Ofdm18 => Some(72),
            Rate::Ofdm24 => Some(96),
            Rate::Ofdm36 => Some(144),
            Rate::Ofdm48 => Some(192),
            Rate::Ofdm54 => Some(216),
            _ => None,
        }
    }

    /// Rates every station of the PHY supports, which a control response may
    /// fall back to when no basic rate fits (§10.6.6.5): 1, 2, 5.5 and 11 Mb/s
    /// for HR/DSSS (§16.1.1), 6, 12 and 24 Mb/s for ERP-OFDM (§18.1.1).
    pub const fn is_mandatory(self) -> bool {
        matches!(
            self,
            Rate::Dsss1 | Rate::Dsss2 | Rate::Cck5_5 | Rate::Cck11 | Rate::Ofdm6 | Rate::Ofdm12 | Rate::Ofdm24
        )
    }
}

/// PLCP preamble and header format for DSSS/CCK PPDUs (§16.2.2): the plan's type,
/// which names it once for the plan's JSON and the PHY.
pub use qoslab_plan::Preamble;

// ---------------------------------------------------------------------------
// PPDU durations
// ---------------------------------------------------------------------------

/// Long PLCP preamble, 144 bits at 1 Mb/s (§16.2.2.2, Figure 16-1).
pub const LONG_PREAMBLE: Nanos = 144 * MICROS;
/// Long PLCP header, 48 bits at 1 Mb/s (§16.2.2.2).
pub const LONG_PLCP_HEADER: Nanos = 48 * MICROS;
/// Short PLCP preamble, 72 bits at 1 Mb/s (§16.2.2.3, Figure 16-2).
pub const SHORT_PREAMBLE: Nanos = 72 * MICROS;
/// Short PLCP header, 48 bits at 2 Mb/s (§16.2.2.3).
pub const SHORT_PLCP_HEADER: Nanos = 24 * MICROS;
/// OFDM PLCP preamble (training), T_PREAMBLE (Table 17-5).
pub const OFDM_PREAMBLE: Nanos = 16 * MICROS;
/// OFDM SIGNAL field, one BPSK 1/2 symbol, T_SIGNAL (Table 17-5).
pub const OFDM_SIGNAL: Nanos = 4 * MICROS;
/// OFDM symbol interval with 0.8 µs guard interval, T_SYM (Table 17-5).
pub const OFDM_SYMBOL: Nanos = 4 * MICROS;
/// SERVICE field bits before the PSDU (§17.3.5.2).
pub const OFDM_SERVICE_BITS: u64 = 16;
/// Tail bits after the PSDU (§17.3.5.3).
pub const OFDM_TAIL_BITS: u64 = 6;
/// aSignalExtension of ERP-OFDM PPDUs, idle time after the last symbol
/// (ERP characteristics table of clause 18; §18.3.2.4).
pub const ERP_SIGNAL_EXTENSION: Nanos = 6 * MICROS;

/// Duration of the PLCP preamble and header of a DSSS/CCK PPDU sent at `rate`.
/// A 1 Mb/s PPDU always uses the long format (§16.2.2.3).
pub const fn dsss_plcp_time(rate: Rate, preamble: Preamble) -> Nanos {
    match (preamble, rate) {
        (Preamble::Short, r) if !matches!(r, Rate::Dsss1) => SHORT_PREAMBLE + SHORT_PLCP_HEADER,
        _ => LONG_PREAMBLE + LONG_PLCP_HEADER,
    }
}

/// Air time of a PPDU carrying `psdu_len` bytes at `rate`: TXTIME.
///
/// * DSSS/CCK: PLCP + ⌈8 × bytes / rate⌉ µs. At 5.5 and 11 Mb/s this is the value
///   of the PLCP LENGTH field, which counts whole microseconds rounded up
///   (§16.2.3.5; the length extension bit lets the receiver recover the byte
///   count).
/// * ERP-OFDM: T_PREAMBLE + T_SIGNAL + T_SYM × ⌈(16 + 8 × bytes + 6) / N_DBPS⌉
///   (§17.4.3, Equation 17-29) + signal extension 6 µs (clause 18).
pub const fn ppdu_time(psdu_len: usize, rate: Rate, preamble: Preamble) -> Nanos {
    let bits = 8 * psdu_len as u64;
    match rate.ofdm_data_bits_per_symbol() {
        None => {
            let micros = (bits * 1000).div_ceil(rate.kbps());
            dsss_plcp_time(rate, preamble) + micros * MICROS
        }
        Some(n_dbps) => {
            let symbols = (OFDM_SERVICE_BITS + bits + OFDM_TAIL_BITS).div_ceil(n_dbps);
            OFDM_PREAMBLE + OFDM_SIGNAL + symbols * OFDM_SYMBOL + ERP_SIGNAL_EXTENSION
        }
    }
}

// ---------------------------------------------------------------------------
// PHY and BSS parameters
// ---------------------------------------------------------------------------

/// aSlotTime of DSSS/HR-DSSS, and of ERP with long slots (Table 16-4).
pub const LONG_SLOT: Nanos = 20 * MICROS;
/// ERP short slot time, allowed when every station in the BSS is ERP (clause 18
/// ERP characteristics table).
pub const SHORT_SLOT: Nanos = 9 * MICROS;
/// aSIFSTime of HR/DSSS (Table 16-4) and of ERP in 2.4 GHz (clause 18).
pub const SIFS_2_4_GHZ: Nanos = 10 * MICROS;
/// aCWmin of DSSS/HR-DSSS (Table 16-4), and of ERP when non-ERP stations are
/// present.
pub const CW_MIN_DSSS: u32 = 31;
/// aCWmin of an ERP-only BSS (clause 18 ERP characteristics table).
pub const CW_MIN_ERP_OFDM: u32 = 15;
/// aCWmax of DSSS/HR-DSSS (Table 16-4) and ERP.
pub const CW_MAX: u32 = 1023;
/// aRxPHYStartDelay, long preamble (Table 16-4): the ACK timeout waits this long
/// for a DSSS/CCK response to start.
pub const RX_PHY_START_DELAY_LONG: Nanos = 192 * MICROS;
/// aRxPHYStartDelay, short preamble (Table 16-4).
pub const RX_PHY_START_DELAY_SHORT: Nanos = 96 * MICROS;
/// aRxPHYStartDelay of ERP-OFDM PPDUs (clause 18 ERP characteristics table).
pub const RX_PHY_START_DELAY_ERP_OFDM: Nanos = 24 * MICROS;

/// Which PHY the BSS runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Standard {
    /// HR/DSSS, clauses 15 and 16.
    Dot11b,
    /// ERP, clause 18.
    Dot11g,
}

/// How OFDM frames are protected from 802.11b stations that cannot decode
/// them (§10.26.2, ERP protection).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Protection {
    /// No protection frame.
    None,
    /// The sender transmits a CTS addressed to itself at a DSSS/CCK rate, whose
    /// Duration sets every station's NAV over the data and Ack.
    CtsToSelf,
    /// RTS/CTS handshake (also what dot11RTSThreshold asks for).
    RtsCts,
}

/// PHY timing and BSS rate configuration of one 802.11b or 802.11g link.
///
/// Invariants: `basic_rates` is sorted ascending and non-empty; `cw_min` and
/// `cw_max` are of the form 2^k − 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhyParams {
    /// 802.11b or 802.11g.
    pub standard: Standard,
    /// Format of DSSS/CCK PLCP headers (short needs every station's support).
    pub preamble: Preamble,
    /// Format of the PLCP headers of control responses (Ack, and CTS answering an RTS).
    /// §10.6.6.5 fixes their rate, not their preamble: `preamble` (the default, ns-3's
    /// choice: a short-preamble BSS answers short) or `Long`, which every HR/DSSS
    /// receiver decodes (the long format is mandatory, §16.2.2.2; short is optional).
    pub control_preamble: Preamble,
    /// aSlotTime.
    pub slot: Nanos,
    /// aSIFSTime.
    pub sifs: Nanos,
    /// aCWmin.
    pub cw_min: u32,
    /// aCWmax.
    pub cw_max: u32,
    /// BSSBasicRateSet: every station can receive these; control responses use
    /// them (§10.6.6.5). Ascending by rate, non-empty.
    pub basic_rates: Vec<Rate>,
    /// ERP protection of OFDM data frames (802.11g with 802.11b stations).
    pub protection: Protection,
}

impl PhyParams {
    /// An 802.11b BSS: slot 20 µs, SIFS 10 µs, CW 31..1023 (Table 16-4); basic
    /// rates 1 and 2 Mb/s, the usual access point default.
    pub fn dot11b(preamble: Preamble) -> Self {
        PhyParams {
            standard: Standard::Dot11b,
            preamble,
            control_preamble: preamble,
            slot: LONG_SLOT,
            sifs: SIFS_2_4_GHZ,
            cw_min: CW_MIN_DSSS,
            cw_max: CW_MAX,
            basic_rates: vec![Rate::Dsss1, Rate::Dsss2],
            protection: Protection::None,
        }
    }

    /// An 802.11g BSS. With `non_erp_present` (an 802.11b station associated)
    /// it uses the long slot, aCWmin 31 and CTS-to-self protection of OFDM
    /// frames; without, the short slot and aCWmin 15 (clause 18). Basic rates
    /// 1, 2, 5.5, 11, 6, 12, 24 Mb/s, the usual mixed-mode default.
    pub fn dot11g(non_erp_present: bool, preamble: Preamble) -> Self {
        let mut basic_rates =
            vec![Rate::Dsss1, Rate::Dsss2, Rate::Cck5_5, Rate::Cck11, Rate::Ofdm6, Rate::Ofdm12, Rate::Ofdm24];
        basic_rates.sort_by_key(|r| r.kbps());
        PhyParams {
            standard: Standard::Dot11g,
            preamble,
            control_preamble: preamble,
            slot: if non_erp_present { LONG_SLOT } else { SHORT_SLOT },
            sifs: SIFS_2_4_GHZ,
            cw_min: if non_erp_present { CW_MIN_DSSS } else { CW_MIN_ERP_OFDM },
            cw_max: CW_MAX,
            basic_rates,
            protection: if non_erp_present { Protection::CtsToSelf } else { Protection::None },
        }
    }

    /// Replaces the BSSBasicRateSet (sorted and deduplicated here).
    ///
    /// # Panics
    /// If `rates` is empty.
    pub fn with_basic_rates(mut self, rates: &[Rate]) -> Self {
        assert!(!rates.is_empty(), "the BSSBasicRateSet cannot be empty");
        let mut rates = rates.to_vec();
        rates.sort_by_key(|r| r.kbps());
        rates.dedup();
        self.basic_rates = rates;
        self
    }

    /// Whether stations of this PHY can send at `rate`.
    pub fn supports(&self, rate: Rate) -> bool {
        self.standard == Standard::Dot11g || rate.class() == ModulationClass::DsssCck
    }

    /// DIFS = SIFS + 2 × slot (§10.3.2.3.5).
    pub fn difs(&self) -> Nanos {
        self.sifs + 2 * self.slot
    }

    /// EIFS = SIFS + AckTxTime + DIFS, with the Ack sent at the lowest basic rate
    /// (§10.3.2.3.7; the standard says the lowest mandatory rate, which is 1 Mb/s
    /// for both 802.11b and 802.11g, as the default basic sets' lowest rate is).
    pub fn eifs(&self) -> Nanos {
        self.sifs + self.ppdu_time(ACK_LEN, self.basic_rates[0]) + self.difs()
    }

    /// ACKTimeout: how long after the end of a data frame the sender waits for
    /// its Ack to start, aSIFSTime + aSlotTime + aRxPHYStartDelay (Ack procedure,
    /// §10.3.2),
    /// the delay being that of the Ack's PHY.
    pub fn ack_timeout(&self, data_rate: Rate) -> Nanos {
        let rx_start = match (self.control_response_rate(data_rate).class(), self.control_preamble) {
            (ModulationClass::ErpOfdm, _) => RX_PHY_START_DELAY_ERP_OFDM,
            (ModulationClass::DsssCck, Preamble::Long) => RX_PHY_START_DELAY_LONG,
            (ModulationClass::DsssCck, Preamble::Short) => RX_PHY_START_DELAY_SHORT,
        };
        self.sifs + self.slot + rx_start
    }

    /// Mean backoff of a first attempt, CWmin / 2 slots.
    pub fn mean_first_backoff(&self) -> Nanos {
        self.cw_min as Nanos * self.slot / 2
    }

    /// Air time of a `psdu_len`-byte PPDU at `rate` with this BSS's preamble.
    pub fn ppdu_time(&self, psdu_len: usize, rate: Rate) -> Nanos {
        ppdu_time(psdu_len, rate, self.preamble)
    }

    /// Air time of a `len`-byte control response (Ack, CTS) at `rate`, with the
    /// control responses' preamble.
    pub fn response_time(&self, len: usize, rate: Rate) -> Nanos {
        ppdu_time(len, rate, self.control_preamble)
    }

    /// Rate of a control response (Ack, CTS) to a frame received at `rate`: the
    /// highest rate of the BSSBasicRateSet that is ≤ `rate` and of the same
    /// modulation class; if none, the highest mandatory rate of that class that
    /// is ≤ `rate` (§10.6.6.5).
    pub fn control_response_rate(&self, rate: Rate) -> Rate {
        let same_class_at_most = |r: &Rate| r.class() == rate.class() && r.kbps() <= rate.kbps();
        let best_basic = self.basic_rates.iter().copied().filter(same_class_at_most).max_by_key(|r| r.kbps());
        best_basic.unwrap_or_else(|| {
            Rate::DSSS_CCK
                .into_iter()
                .chain(Rate::ERP_OFDM)
                .filter(|r| r.is_mandatory() && same_class_at_most(r))
                .max_by_key(|r| r.kbps())
                .expect("the lowest rate of each class is mandatory")
        })
    }

    /// Rate of ERP protection frames (RTS/CTS or CTS-to-self before an OFDM
    /// frame): the highest DSSS/CCK basic rate, so that 802.11b stations decode
    /// it (§10.26.2); 1 Mb/s if the basic set has no DSSS/CCK rate.
    pub fn protection_rate(&self) -> Rate {
        self.basic_rates
            .iter()
            .copied()
            .filter(|r| r.class() == ModulationClass::DsssCck)
            .max_by_key(|r| r.kbps())
            .unwrap_or(Rate::Dsss1)
    }

    /// Protection an OFDM data frame needs in this BSS; DSSS/CCK frames need
    /// none (every station decodes them).
    pub fn protection_for(&self, data_rate: Rate) -> Protection {
        match data_rate.class() {
            ModulationClass::ErpOfdm => self.protection,
            ModulationClass::DsssCck => Protection::None,
        }
    }

    /// Air time of the Ack to a data frame sent at `data_rate`.
    pub fn ack_time(&self, data_rate: Rate) -> Nanos {
        self.response_time(ACK_LEN, self.control_response_rate(data_rate))
    }

    /// Timeline of one data frame exchange: DIFS, `backoff`, the optional
    /// protection (RTS + SIFS + CTS + SIFS, or CTS-to-self + SIFS), the data
    /// PPDU, SIFS and the Ack; and the Duration field values the standard puts
    /// in each frame (§9.2.5).
    ///
    /// RTS and CTS-to-self go at [`protection_rate`](Self::protection_rate) when
    /// they protect an OFDM frame, otherwise at the control response rate of the
    /// data rate; the CTS answering an RTS goes at the control response rate of
    /// the RTS rate.
    ///
    /// # Panics
    /// If this PHY cannot send at `data_rate`.
    pub fn data_exchange(
        &self,
        mpdu_len: usize,
        data_rate: Rate,
        protection: Protection,
        backoff: Nanos,
    ) -> FrameExchange {
        assert!(self.supports(data_rate), "{data_rate:?} is not a rate of {:?}", self.standard);
        let sifs = self.sifs;
        let data = self.ppdu_time(mpdu_len, data_rate);
        let ack = self.ack_time(data_rate);
        let protect_rate = match data_rate.class() {
            ModulationClass::ErpOfdm if protection != Protection::None => self.protection_rate(),
            _ => self.control_response_rate(data_rate),
        };
        let (rts, cts) = match protection {
            Protection::None => (None, None),
            Protection::CtsToSelf => (None, Some(self.ppdu_time(CTS_LEN, protect_rate))),
            Protection::RtsCts => (
                Some(self.ppdu_time(RTS_LEN, protect_rate)),
                Some(self.response_time(CTS_LEN, self.control_response_rate(protect_rate))),
            ),
        };
        // Duration fields (µs, rounded up; §9.2.5): each frame covers the rest
        // of the exchange after itself.
        let data_duration = sifs + ack; // unicast, no more fragments: SIFS + Ack
        let cts_duration = cts.map(|_| sifs + data + data_duration);
        let rts_duration = rts.zip(cts).map(|(_, c)| sifs + c + sifs + data + data_duration);
        let protection_time = rts.map_or(0, |r| r + sifs) + cts.map_or(0, |c| c + sifs);
        FrameExchange {
            difs: self.difs(),
            backoff,
            rts,
            cts,
            data,
            sifs,
            ack,
            total: self.difs() + backoff + protection_time + data + sifs + ack,
            duration_rts_us: rts_duration.map(to_duration_field),
            duration_cts_us: cts_duration.map(to_duration_field),
            duration_data_us: to_duration_field(data_duration),
        }
    }

    /// Total time of [`data_exchange`](Self::data_exchange): DIFS + backoff +
    /// [RTS + SIFS + CTS + SIFS | CTS-to-self + SIFS] + data + SIFS + Ack.
    pub fn data_exchange_duration(
        &self,
        mpdu_len: usize,
        data_rate: Rate,
        protection: Protection,
        backoff: Nanos,
    ) -> Nanos {
        self.data_exchange(mpdu_len, data_rate, protection, backoff).total
    }
}

/// A Duration field value in µs, rounded up (§9.2.5.1), saturating at 32767
/// (bit 15 clear marks a duration).
fn to_duration_field(time: Nanos) -> u16 {
    time.div_ceil(MICROS).min(32_767) as u16
}

/// Timeline of one successful data frame exchange, from the end of the previous
/// busy period to the end of the Ack, and the Duration (NAV) values it carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameExchange {
    /// DIFS before the backoff.
    pub difs: Nanos,
    /// Backoff slots' time, as given.
    pub backoff: Nanos,
    /// RTS air time, when RTS/CTS protects the frame.
    pub rts: Option<Nanos>,
    /// CTS (answering the RTS, or CTS-to-self) air time.
    pub cts: Option<Nanos>,
    /// Data PPDU air time.
    pub data: Nanos,
    /// SIFS between the frames of the exchange.
    pub sifs: Nanos,
    /// Ack air time.
    pub ack: Nanos,
    /// DIFS + backoff + [RTS + SIFS] + [CTS + SIFS] + data + SIFS + Ack.
    pub total: Nanos,
    /// Duration field of the RTS: 3 × SIFS + CTS + data + Ack (§9.3.1.2).
    pub duration_rts_us: Option<u16>,
    /// Duration field of the CTS: the RTS's minus SIFS and CTS (§9.3.1.3); of a
    /// CTS-to-self, 2 × SIFS + data + Ack.
    pub duration_cts_us: Option<u16>,
    /// Duration field of the data frame: SIFS + Ack (§9.2.5, unicast frame, no
    /// more fragments).
    pub duration_data_us: u16,
}

impl FrameExchange {
    /// Time the medium is busy or reserved by the exchange: everything but DIFS
    /// and backoff.
    pub fn busy_time(&self) -> Nanos {
        self.total - self.difs - self.backoff
    }
}

#[cfg(test)]
mod test {
    use super::*;

    const US: Nanos = 1_000;

    #[test]
    fn dsss_11_mbps_1500_byte_msdu_long_preamble() {
        // 192 µs PLCP + ⌈8 × (1500 + 24 + 8 + 4) / 11⌉ µs = 192 + ⌈1117.09⌉.
        let mpdu = data_mpdu_len(1500, Security::None, false);
        assert_eq!(mpdu, 1536);
        assert_eq!(ppdu_time(mpdu, Rate::Cck11, Preamble::Long), (192 + 1118) * US);
        assert_eq!(ppdu_time(mpdu, Rate::Cck11, Preamble::Short), (96 + 1118) * US);
    }

    #[test]
    fn dsss_lengths_at_each_rate() {
        // 8 × 1536 = 12288 bits.
        assert_eq!(ppdu_time(1536, Rate::Dsss1, Preamble::Long), (192 + 12288) * US);
        assert_eq!(ppdu_time(1536, Rate::Dsss2, Preamble::Long), (192 + 6144) * US);
        // 12288 / 5.5 = 2234.18 → 2235.
        assert_eq!(ppdu_time(1536, Rate::Cck5_5, Preamble::Short), (96 + 2235) * US);
        // 1 Mb/s never uses the short format.
        assert_eq!(ppdu_time(14, Rate::Dsss1, Preamble::Short), (192 + 112) * US);
    }

    #[test]
    fn ack_at_2_mbps_long_preamble_is_248_us() {
        let b = PhyParams::dot11b(Preamble::Long);
        assert_eq!(b.control_response_rate(Rate::Cck11), Rate::Dsss2);
        assert_eq!(b.ack_time(Rate::Cck11), (192 + 56) * US);
        assert_eq!(b.control_response_rate(Rate::Dsss1), Rate::Dsss1);
    }

    #[test]
    fn ofdm_54_mbps_from_n_dbps_216() {
        // ⌈(16 + 8 × 1536 + 6) / 216⌉ = ⌈12310 / 216⌉ = 57 symbols.
        assert_eq!(ppdu_time(1536, Rate::Ofdm54, Preamble::Long), (16 + 4 + 57 * 4 + 6) * US);
        // Ack at 24 Mb/s: ⌈(22 + 112) / 96⌉ = 2 symbols.
        assert_eq!(ppdu_time(ACK_LEN, Rate::Ofdm24, Preamble::Long), (20 + 8 + 6) * US);
        // Ack at 6 Mb/s: ⌈134 / 24⌉ = 6 symbols.
        assert_eq!(ppdu_time(ACK_LEN, Rate::Ofdm6, Preamble::Long), (20 + 24 + 6) * US);
    }

    #[test]
    fn control_response_rates_in_a_g_bss() {
        let g = PhyParams::dot11g(false, Preamble::Short);
        let kbps: Vec<u64> = g.basic_rates.iter().map(|r| r.kbps()).collect();
        assert_eq!(kbps, [1_000, 2_000, 5_500, 6_000, 11_000, 12_000, 24_000]);
        assert_eq!(g.control_response_rate(Rate::Ofdm54), Rate::Ofdm24);
        assert_eq!(g.control_response_rate(Rate::Ofdm18), Rate::Ofdm12);
        assert_eq!(g.control_response_rate(Rate::Ofdm9), Rate::Ofdm6);
        assert_eq!(g.control_response_rate(Rate::Cck11), Rate::Cck11);
        // A basic set without OFDM rates falls back to the mandatory ones.
        let g = g.with_basic_rates(&[Rate::Dsss1, Rate::Dsss2]);
        assert_eq!(g.control_response_rate(Rate::Ofdm54), Rate::Ofdm24);
        assert_eq!(g.control_response_rate(Rate::Ofdm9), Rate::Ofdm6);
    }

    #[test]
    fn interframe_spaces() {
        let b = PhyParams::dot11b(Preamble::Long);
        assert_eq!(b.difs(), 50 * US);
        // EIFS = SIFS + Ack at 1 Mb/s long preamble + DIFS = 10 + 304 + 50.
        assert_eq!(b.eifs(), 364 * US);
        let g = PhyParams::dot11g(false, Preamble::Short);
        assert_eq!(g.slot, 9 * US);
        assert_eq!(g.difs(), 28 * US);
        assert_eq!(g.cw_min, 15);
        let mixed = PhyParams::dot11g(true, Preamble::Long);
        assert_eq!((mixed.slot, mixed.cw_min, mixed.difs()), (20 * US, 31, 50 * US));
    }

    #[test]
    fn security_expands_the_mpdu() {
        assert_eq!(data_mpdu_len(1500, Security::Wep, false), 1544);
        assert_eq!(data_mpdu_len(1500, Security::Tkip, false), 1556);
        assert_eq!(data_mpdu_len(1500, Security::Ccmp, true), 30 + 8 + 1500 + 16 + 4);
    }

    #[test]
    fn exchange_without_protection() {
        let b = PhyParams::dot11b(Preamble::Long);
        let ex = b.data_exchange(1536, Rate::Cck11, Protection::None, 310 * US);
        assert_eq!(ex.total, (50 + 310 + 1310 + 10 + 248) * US);
        assert_eq!(ex.duration_data_us, 10 + 248);
        assert_eq!((ex.rts, ex.cts, ex.duration_rts_us), (None, None, None));
    }

    #[test]
    fn exchange_with_rts_cts_and_its_nav_values() {
        let b = PhyParams::dot11b(Preamble::Long);
        let ex = b.data_exchange(1536, Rate::Cck11, Protection::RtsCts, 0);
        // RTS at 2 Mb/s: 192 + 80; CTS at 2 Mb/s: 192 + 56.
        assert_eq!(ex.rts, Some(272 * US));
        assert_eq!(ex.cts, Some(248 * US));
        assert_eq!(ex.duration_rts_us, Some(3 * 10 + 248 + 1310 + 248));
        assert_eq!(ex.duration_cts_us, Some(2 * 10 + 1310 + 248));
        assert_eq!(ex.total, (50 + 272 + 10 + 248 + 10 + 1310 + 10 + 248) * US);
    }

    #[test]
    fn erp_protection_uses_cts_to_self_at_a_dsss_rate() {
        let mixed = PhyParams::dot11g(true, Preamble::Long);
        assert_eq!(mixed.protection_for(Rate::Ofdm54), Protection::CtsToSelf);
        assert_eq!(mixed.protection_for(Rate::Cck11), Protection::None);
        assert_eq!(mixed.protection_rate(), Rate::Cck11);
        let ex = mixed.data_exchange(1536, Rate::Ofdm54, Protection::CtsToSelf, 0);
        // CTS-to-self at 11 Mb/s long: 192 + ⌈112 / 11⌉ = 203 µs.
        assert_eq!(ex.cts, Some(203 * US));
        // Data 254 µs, Ack at 24 Mb/s 34 µs.
        assert_eq!(ex.total, (50 + 203 + 10 + 254 + 10 + 34) * US);
        assert_eq!(ex.duration_cts_us, Some(10 + 254 + 10 + 34));
    }
}
