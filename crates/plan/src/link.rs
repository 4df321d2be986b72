//! Links between ports: Ethernet, serial lines, 802.11 cells and ATM links, and what
//! one direction of a link does to frames (loss, shaping).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

fn default_clocking() -> String {
    "async".into()
}

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
        /// Character format, e.g. "8n1".
        format: String,
        /// "slip", "cslip" or "ppp".
        framing: String,
        /// "async" (start-stop characters in `format`, the default) or "sync" (PPP in
        /// bit-synchronous HDLC framing, RFC 1662 §5: 8 bits per octet plus inserted
        /// zero bits; `format` unused; framing must be "ppp").
        #[serde(default = "default_clocking")]
        clocking: String,
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
    /// "802.11b" or "802.11g".
    pub standard: String,
    /// Data rate of every station, bit/s.
    pub rate_bps: u64,
    /// "long" or "short" PLCP preamble (802.11b).
    pub preamble: String,
    /// "open", "wep-40", "wep-104", "tkip" or "ccmp".
    pub security: String,
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
    /// What an AP does with a frame whose source MAC is not the sending station's:
    /// "drop" (what APs do) or "rewrite" (adapters that overwrite the source address).
    pub foreign_source: String,
    /// The transmit queue of each member, frames.
    pub queue_frames: usize,
    /// Per-member transmit queues, frames (same order as `hears`), overriding
    /// `queue_frames`; empty (the default): every member has `queue_frames`.
    #[serde(default)]
    pub member_queue_frames: Vec<usize>,
    /// Per-member PLCP preamble of the data frames it sends, "long" or "short" (same
    /// order as `hears`), overriding `preamble`; empty (the default): every member
    /// sends `preamble`. A station's driver may send long preambles in a cell whose AP
    /// sends short ones (IEEE 802.11-2020 §16.2.2.2: the long format is mandatory).
    #[serde(default)]
    pub member_preamble: Vec<String>,
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
    /// DCF basic access on an idle medium: "idle-difs" (IEEE 802.11-2020 §10.3.4.2, the
    /// default) or "arrival-difs" (ns-3); see `wifi::dcf::Access`.
    #[serde(default = "default_access")]
    pub access: String,
    /// Control responses' PLCP preamble: "bss" (the BSS's `preamble`, the default) or
    /// "long" (see `wifi::phy::PhyParams::control_preamble`).
    #[serde(default = "default_control_preamble")]
    pub control_preamble: String,
    /// The AP's beacons; none (the default): no beacons.
    #[serde(default)]
    pub beacon: Option<BeaconConfig>,
    /// The 2.4 GHz channel (1-14): the beacons' DS Parameter Set and the capture's
    /// radiotap Channel; none: unknown (no radiotap Channel field). Informational: no
    /// interference between cells is modelled.
    #[serde(default)]
    pub channel: Option<u8>,
}

fn default_control_preamble() -> String {
    "bss".into()
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

fn default_access() -> String {
    "idle-difs".into()
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
