//! Links between ports: Ethernet, serial lines, 802.11 cells and ATM links, and what
//! one direction of a link does to frames (loss, shaping).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

fn default_fcs_bits() -> u32 {
    16
}

/// A link between ports.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum LinkConfig {
    /// A full-duplex point-to-point Ethernet link.
    #[schemars(title = "EthernetLink")]
    Ethernet {
        name: String,
        a: PortRef,
        b: PortRef,
        rate_bps: u64,
        delay_ns: u64,
        /// Jitter, ns (default 0): each frame's propagation delay is `delay_ns + U`, U
        /// drawn uniformly from [0, jitter_ns] (integer ns) from the direction's own
        /// random stream; a frame never arrives before the one sent before it on the
        /// same direction (a line does not reorder). 0 draws nothing.
        #[serde(default)]
        jitter_ns: u64,
        /// Each end's output queue: frames and bytes at most (drop-tail).
        queue_frames: usize,
        queue_bytes: usize,
        /// Loss and rate limits of each direction: `[a → b, b → a]`.
        #[serde(default)]
        impair: [Impairment; 2],
    },
    /// An asynchronous serial line (a modem or a null-modem cable) carrying SLIP, CSLIP
    /// or PPP between two point-to-point ports.
    #[schemars(title = "SerialLink")]
    Serial {
        name: String,
        a: PortRef,
        b: PortRef,
        rate_bps: u64,
        /// Character format, e.g. "8n1" (data bits, parity, stop bits: a pattern, not a
        /// closed set, parsed by the simulator's serial line).
        format: String,
        /// What carries IP packets on the line.
        framing: SerialFraming,
        /// Start-stop characters (the default) or bit-synchronous HDLC (PPP only).
        #[serde(default)]
        clocking: Clocking,
        /// PPP only: the link options LCP negotiated. Address-and-Control-Field-
        /// Compression (RFC 1661 §6.6), Protocol-Field-Compression (§6.5), and the FCS
        /// in bits, 16 (RFC 1662 §C.2, the default) or 32 (RFC 1570 §2.1, §C.3).
        #[serde(default)]
        acfc: bool,
        #[serde(default)]
        pfc: bool,
        #[serde(default = "default_fcs_bits")]
        fcs_bits: u32,
        /// Modem compression as a ratio (2.0 for 2:1); 1.0 for none.
        compression: f64,
        delay_ns: u64,
        /// Jitter, ns (default 0): each frame's propagation delay is `delay_ns + U`, U
        /// drawn uniformly from [0, jitter_ns] (integer ns) from the direction's own
        /// random stream; a frame never arrives before the one sent before it on the
        /// same direction (a line does not reorder). 0 draws nothing.
        #[serde(default)]
        jitter_ns: u64,
        queue_frames: usize,
        #[serde(default)]
        impair: [Impairment; 2],
    },
    /// An 802.11 infrastructure BSS (or an ad hoc cell when `ap` is `None`).
    #[schemars(title = "WifiLink")]
    Wifi(Box<WifiConfig>),
    /// An ATM link of cells (see `atm`).
    #[schemars(title = "AtmLink")]
    Atm(Box<crate::atm::AtmLinkConfig>),
}

/// How a serial line frames IP packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SerialFraming {
    /// SLIP (RFC 1055).
    Slip,
    /// SLIP with Van Jacobson TCP/IP header compression (RFC 1144).
    Cslip,
    /// PPP in HDLC-like framing (RFC 1661, RFC 1662).
    Ppp,
}

/// How a serial line clocks its octets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Clocking {
    /// Start-stop characters in the line's `format` (a modem, a null-modem cable).
    #[default]
    Async,
    /// PPP in bit-synchronous HDLC framing (RFC 1662 §5): 8 bits per octet plus the
    /// inserted zero bits; `format` unused; the framing must be PPP.
    Sync,
}

/// What one direction of a link does to frames besides carrying them.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Impairment {
    #[serde(default)]
    pub loss: Option<LossConfig>,
    /// A token-bucket shaper (frames wait for tokens before they go on the line) or,
    /// with `police`, a policer (frames without tokens are dropped).
    #[serde(default)]
    pub shaper: Option<ShaperConfig>,
}

/// A loss model (see `impair`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "model", rename_all = "kebab-case", deny_unknown_fields)]
pub enum LossConfig {
    /// Each frame lost with probability `p`.
    #[schemars(title = "BernoulliLoss")]
    Bernoulli { p: f64 },
    /// Gilbert-Elliott: p good→bad, r bad→good, k and h the delivery probabilities in the
    /// good and bad states.
    #[schemars(title = "GilbertElliottLoss")]
    GilbertElliott { p: f64, r: f64, k: f64, h: f64 },
}

/// A token bucket (RFC 2697 §3) on one direction of a link.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShaperConfig {
    pub rate_bps: u64,
    pub burst_bytes: u64,
    /// Police instead of shape: a frame that finds too few tokens is dropped at once
    /// (colour-blind srTCM with red dropped, RFC 2697 §3.3; Linux `tc police … drop`,
    /// a firewall's rate limit) rather than held until its tokens are there. Default false.
    #[serde(default)]
    pub police: bool,
    /// Shaping only: most bytes that may wait for tokens; a frame that would make the
    /// backlog exceed it is dropped (Linux `tc tbf limit`). Default none: frames wait in
    /// the link's own queue, limited only by it.
    #[serde(default)]
    pub queue_bytes: Option<u64>,
}

/// An 802.11 BSS.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WifiConfig {
    pub name: String,
    /// The PHY the cell runs.
    pub standard: WifiStandard,
    /// Data rate of every station, bit/s.
    pub rate_bps: u64,
    /// The PLCP preamble of DSSS/CCK frames; short only where the standard has it
    /// ([`WifiStandard::preamble_problem`]).
    pub preamble: Preamble,
    /// The link cipher.
    pub security: WifiSecurity,
    pub ap: Option<PortRef>,
    pub stations: Vec<PortRef>,
    /// RTS/CTS for MPDUs longer than this many bytes (2347: never).
    pub rts_threshold: u32,
    /// `hears[i][j]`: member i hears member j (members: the AP first, then stations).
    #[serde(default)]
    pub hears: Option<Vec<Vec<bool>>>,
    /// Frame error rate of frames received by each member (same order as `hears`).
    #[serde(default)]
    pub frame_error_rate: Vec<f64>,
    /// Four-address (WDS) frames between these members; station adapters send three.
    #[serde(default)]
    pub wds: bool,
    /// What an adapter does with a frame whose source MAC is not the station's own.
    pub foreign_source: ForeignSource,
    /// The transmit queue of each member, frames.
    pub queue_frames: usize,
    /// Per-member transmit queues, frames (same order as `hears`), overriding
    /// `queue_frames`; empty (the default): every member has `queue_frames`.
    #[serde(default)]
    pub member_queue_frames: Vec<usize>,
    /// Per-member PLCP preamble of the data frames it sends (same order as `hears`),
    /// overriding `preamble`; empty (the default): every member sends `preamble`. A
    /// station's driver may send long preambles in a cell whose AP sends short ones
    /// (IEEE 802.11-2020 §16.2.2.2: the long format is mandatory).
    #[serde(default)]
    pub member_preamble: Vec<Preamble>,
    /// dot11ShortRetryLimit: attempts of a frame, the first included (default 7,
    /// IEEE 802.11-2020 Annex C; 1 for seed 004's WaveLAN, which never retried).
    #[serde(default = "default_retry_limit")]
    pub retry_limit: u32,
    /// Unicast data frames are acknowledged (an Ack after SIFS, retries on its
    /// absence). Default true (IEEE 802.11-2020 §10.3.2.11); false for seed 004's
    /// WaveLAN, which "does not provide any acknowledgements mechanism".
    #[serde(default = "default_true")]
    pub link_acks: bool,
    /// The AP relays frames from one of its stations to another (and group frames back
    /// into the BSS), as the distribution function does (IEEE 802.11-2020 §4.5.4.2,
    /// §11.3). Default true; false is client isolation (hostapd `ap_isolate=1`).
    #[serde(default = "default_true")]
    pub relay: bool,
    /// Per member (same order as `hears`): whether it exchanges 4-address frames with
    /// the AP (both ends must be WDS-capable, IEEE 802.11-2020 Table 9-26); empty (the
    /// default): every member as `wds`.
    #[serde(default)]
    pub wds_members: Vec<bool>,
    /// One-way propagation delay of the air, ns (default 0): a frame reaches the
    /// receiving node this long after its reception ended on the medium. The MAC's own
    /// timing does not shift (its ACKTimeout budgets up to a slot of round trip), so the
    /// lowering accepts at most half a slot.
    #[serde(default)]
    pub delay_ns: u64,
    /// DCF basic access on an idle medium.
    #[serde(default)]
    pub access: Access,
    /// Control responses' PLCP preamble (see `wifi::phy::PhyParams::control_preamble`).
    #[serde(default)]
    pub control_preamble: ControlPreamble,
    /// The AP's beacons; none (the default): no beacons.
    #[serde(default)]
    pub beacon: Option<BeaconConfig>,
    /// The 2.4 GHz channel (1-14): the beacons' DS Parameter Set and the capture's
    /// radiotap Channel; none: unknown (no radiotap Channel field). Informational: no
    /// interference between cells is modelled.
    #[serde(default)]
    pub channel: Option<u8>,
}

/// The PHY an 802.11 cell runs, as the scenario's `standard` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum WifiStandard {
    /// IEEE 802.11-2020 clause 15, DSSS at 1 and 2 Mb/s, with the MAC timing of clause
    /// 16 (slot 20 µs, SIFS 10 µs, CWmin 31).
    #[serde(rename = "802.11")]
    Dot11,
    /// Clause 16, HR/DSSS (802.11b): 1, 2, 5.5 and 11 Mb/s.
    #[serde(rename = "802.11b")]
    Dot11b,
    /// Clause 18, ERP (802.11g), every member ERP: short slot, CWmin 15, no protection.
    #[serde(rename = "802.11g")]
    Dot11g,
    /// ERP with 802.11b members present: long slot, CWmin 31, CTS-to-self before OFDM
    /// frames (§10.26.2).
    #[serde(rename = "802.11g-mixed")]
    Dot11gMixed,
}

impl WifiStandard {
    /// Whether the PHY defines the short PLCP preamble. The DSSS PHY of clause 15 has
    /// one PPDU format, the long preamble and header at 1 Mb/s (IEEE 802.11-2020
    /// clause 15, its PLCP frame format); the short format is HR/DSSS's option (§16.2.2.3), which ERP keeps.
    pub const fn allows_short_preamble(self) -> bool {
        !matches!(self, WifiStandard::Dot11)
    }

    /// Why `preamble` cannot be sent in a cell of this standard, or `None` if it can:
    /// the one statement of the rule, for the plan's check ([`crate::SimConfig::check`])
    /// and for the scenario's refusal (`qoslab._core.wifi_preamble_problem`).
    pub const fn preamble_problem(self, preamble: Preamble) -> Option<&'static str> {
        match preamble {
            Preamble::Short if !self.allows_short_preamble() => Some("802.11 DSSS has only the long preamble"),
            _ => None,
        }
    }
}

/// The PLCP preamble and header format of DSSS/CCK PPDUs (IEEE 802.11-2020 §16.2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Preamble {
    /// Long PPDU format: 144 µs SYNC+SFD and 48 µs PLCP header, both at 1 Mb/s.
    #[default]
    Long,
    /// Short PPDU format: 72 µs preamble at 1 Mb/s and 24 µs header at 2 Mb/s. Not
    /// defined for a 1 Mb/s PSDU, which always uses the long format.
    Short,
}

/// The PLCP preamble of control responses (Ack, and CTS answering an RTS).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ControlPreamble {
    /// The BSS's `preamble` (ns-3's choice: a short-preamble BSS answers short).
    #[default]
    Bss,
    /// Always long, which every HR/DSSS receiver decodes (§16.2.2.2: mandatory).
    Long,
}

/// The link cipher of an 802.11 cell (IEEE 802.11-2020 clause 12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum WifiSecurity {
    /// Open system, no encryption.
    #[serde(rename = "open")]
    Open,
    /// WEP with a 40-bit key (§12.3.2).
    #[serde(rename = "wep-40")]
    Wep40,
    /// WEP with a 104-bit key (§12.3.2).
    #[serde(rename = "wep-104")]
    Wep104,
    /// TKIP (§12.5.2).
    #[serde(rename = "tkip")]
    Tkip,
    /// CCMP-128 (§12.5.3).
    #[serde(rename = "ccmp")]
    Ccmp,
}

/// Basic access of a frame that arrives while the medium is idle and no backoff is
/// pending (the only case where the readings differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    /// IEEE 802.11-2020 §10.3.4.2: "a STA may transmit a pending MPDU ... when the STA
    /// determines that the medium is idle for greater than or equal to a DIFS period"
    /// (EIFS after an error), with §10.3.4.3's backoff only when it finds the medium
    /// busy; Figure 10-14's "immediate access when medium is free ≥ DIFS". DIFS counts
    /// from the medium going idle, so on a long-idle medium the frame goes at once.
    #[default]
    IdleDifs,
    /// ns-3's `ChannelAccessManager` (src/wifi/model/channel-access-manager.cc): the
    /// wait of DIFS (AIFS) counts from the later of the medium going idle and the
    /// request, so a frame waits at least DIFS after it arrives.
    ArrivalDifs,
}

/// What a station does with an Ethernet frame whose source is not its own MAC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ForeignSource {
    /// Refuse it (Windows XP's adapters in seed 000 §2.1; what 802.11 implies).
    #[default]
    Drop,
    /// Overwrite the source with the station's MAC (some drivers; the reply then
    /// comes back to the station, not to the original sender).
    Rewrite,
}

/// Beacons of an AP (IEEE 802.11-2020 §11.1.3.2).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BeaconConfig {
    /// dot11BeaconPeriod, ns (102 400 000 = 100 TU is the usual value); a whole number of
    /// TU (1024 µs) for the Beacon Interval field.
    pub interval_ns: u64,
    /// Rate of the beacons, bit/s (a basic rate: 1 Mb/s on most APs).
    pub rate_bps: u64,
    /// The SSID the beacons carry (0-32 bytes).
    pub ssid: String,
}

fn default_true() -> bool {
    true
}

/// dot11ShortRetryLimit's default: 7 (IEEE 802.11-2020 Annex C, the MIB's DEFVAL).
pub const DEFAULT_SHORT_RETRY_LIMIT: u32 = 7;

fn default_retry_limit() -> u32 {
    DEFAULT_SHORT_RETRY_LIMIT
}

/// A node's port by index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PortRef {
    pub node: u32,
    pub port: u16,
}
