//! The shared medium of one 802.11 BSS (or IBSS), sans-IO: every member's DCF, its
//! transmit queue, and the frames on the air between them.
//!
//! Standards a reader must know (IEEE Std 802.11-2020):
//!
//! * §10.3.2.3 interframe spaces, §10.3.4 the DCF access and backoff procedure — in
//!   [`super::dcf`], one [`Dcf`] per member.
//! * §10.3.2.4 virtual carrier sense: a member that receives a frame addressed to
//!   another sets its NAV from the Duration field (§9.2.5): data SIFS + Ack, RTS
//!   3 × SIFS + CTS + data + Ack, CTS the RTS's minus SIFS and CTS, CTS-to-self
//!   2 × SIFS + data + Ack. Not modelled: the NAV reset of §10.3.2.4 when no frame
//!   follows an overheard RTS.
//! * §10.3.2.5–§10.3.2.9 RTS/CTS and the Ack procedure: a unicast data frame is
//!   acknowledged after SIFS at the control response rate (§10.6.6.5); a CTS answers
//!   an RTS after SIFS when the NAV is idle; the sender waits ACKTimeout (CTSTimeout) =
//!   SIFS + slot + aRxPHYStartDelay for the response to start, and a response that
//!   ends in error is a failure too. MPDUs longer than dot11RTSThreshold go after
//!   RTS/CTS (§10.3.2.5).
//! * §10.3.4.4 retries: a failure doubles CW and retries until the short (7) or long
//!   (4) retry limit, then the frame is dropped ([`DropReason::RetryLimit`]).
//! * §10.3.2.14 duplicate detection: a retransmission (Retry bit) with the sequence
//!   number last received from that transmitter is acknowledged but not delivered.
//! * §10.3.2.3.7 EIFS: a member that received a frame in error waits EIFS.
//! * §10.26.2 ERP protection: OFDM frames in an 802.11g BSS with 802.11b members go
//!   after a CTS-to-self at a DSSS/CCK rate ([`PhyParams::protection_for`]).
//! * §9.2.4.4 / §10.3.2.14.2: the MAC numbers each MSDU (Sequence Control), per
//!   transmitter here; group-addressed frames (§10.6.6.2) are sent once, unacknowledged,
//!   at the highest basic rate not above the data rate.
//! * §11.1.3.2 beacons ([`BeaconParams`]): at each TBTT the AP's Beacon becomes its next
//!   frame, sent with the DCF's rules, group-addressed, at its own rate; receivers' MACs
//!   consume it (no [`BssEvent::Delivered`]).
//! * Per-member transmit queues (`member_queue_frames`), the control responses'
//!   preamble (`PhyParams::control_preamble`) and the basic-access rule ([`Access`]) are
//!   parameters; [`Bss::capture_air`] keeps every PPDU once ([`AirFrame`]) for captures.
//!
//! # The medium model
//!
//! `hears[i][j]` says whether member i hears member j (default: all hear all). A
//! member's DCF is told busy/idle only for transmissions it hears. A receiver that
//! hears two overlapping transmissions loses both (no capture): hidden terminals
//! collide at the AP while their DCFs see an idle medium. A member cannot receive
//! while it transmits (half duplex). A data frame that survives collisions is still
//! lost with the receiver's frame error rate (a Bernoulli draw per reception from that
//! receiver's seeded stream); the short control frames (RTS, CTS, Ack; 14–20 bytes at
//! a basic rate) are taken as error-free, so the rate is the data frame error rate a
//! loss measurement sees. A frame received in error makes the receiver wait EIFS.
//!
//! # Timing and the one timer
//!
//! Nothing happens per slot: the medium keeps its own timed events (ends of
//! transmissions, responses due SIFS later, response timeouts) in one ordered map and
//! asks each contending DCF when its backoff ends ([`Dcf::poll_at`], computed
//! analytically). [`Bss::poll_at`] is the earliest of them: the owner arms one timer for
//! the whole BSS and calls [`Bss::poll`] then. Events at the same instant run in a
//! fixed order: ends of transmissions, timeouts, scheduled transmissions, then DCF
//! grants in member order — so two members whose backoffs end in the same slot both
//! transmit, and collide, as in the standard.
//!
//! MPDUs are handed in without FCS ([`super::adapter`] makes them); the air time counts
//! the 4-byte FCS. The medium writes the MAC's fields into a data MPDU's header: the
//! Sequence Control at enqueue, the Duration and, on retransmissions, the Retry bit.
//!
//! Every random draw comes from a [`RunSeed`] stream named by (BSS id, member, purpose),
//! so a run is reproducible and adding a member does not change another's draws.

use std::collections::{BTreeMap, VecDeque};

use super::adapter::DropReason;
use super::dcf::{Access, AfterFailure, Dcf, DcfParams, FailedAttempt, DEFAULT_RTS_THRESHOLD};
use super::phy::{FrameExchange, ModulationClass, PhyParams, Preamble, Protection, Rate, CTS_LEN, FCS_LEN, MICROS};
use super::Nanos;
use crate::rng::{RandomStream, RunSeed};
use qoslab_plan::WifiStandard;

mod exchange;
mod receive;
mod state;

use state::*;

/// Parameters of one BSS, lowered from `WifiConfig`.
#[derive(Clone, Debug, PartialEq)]
pub struct BssParams {
    /// PHY timing, slot, contention windows, basic rates and ERP protection.
    pub phy: PhyParams,
    /// The data rate every member sends unicast data at.
    pub rate: Rate,
    /// dot11RTSThreshold in bytes: MPDUs (FCS included) longer than this go after
    /// RTS/CTS. 2347 (the default) never.
    pub rts_threshold: usize,
    /// Number of members: index 0 the AP if there is one, then the stations.
    pub members: usize,
    /// `hears[i][j]`: member i hears member j. `None`: everyone hears everyone.
    pub hears: Option<Vec<Vec<bool>>>,
    /// Data frame error rate of frames received by each member; empty means none.
    pub frame_error_rate: Vec<f64>,
    /// Transmit queue of each member, in frames (drop-tail); ≥ 1.
    pub queue_frames: usize,
    /// Per-member transmit queues, in frames (drop-tail, each ≥ 1), overriding
    /// `queue_frames`; empty: every member has `queue_frames`. An AP of 2004 held far
    /// fewer frames than a host (Linux 2.4's `ether_setup` gave its wireless interface
    /// `tx_queue_len` 100), which is what bounds the latency past the knee in seed 000.
    pub member_queue_frames: Vec<usize>,
    /// Per-member PLCP preamble of the frames each sends (its data, RTS and CTS-to-self,
    /// and, unless `control_preamble_long`, the Acks and CTSs answering them), overriding
    /// `phy.preamble`; empty: every member sends `phy.preamble`. A station's driver may
    /// send the long format in a cell whose AP sends short ones (the long format is
    /// mandatory, IEEE 802.11-2020 §16.2.2.2).
    pub member_preamble: Vec<Preamble>,
    /// Control responses always go with the long preamble (`phy.control_preamble` is
    /// `Long` by configuration, not by following the BSS's preamble).
    pub control_preamble_long: bool,
    /// dot11ShortRetryLimit: transmission attempts of a frame, the first included,
    /// before it is dropped (Annex C default 7). dot11LongRetryLimit is the smaller of
    /// this and its default 4. 1 sends each frame once, as seed 004's WaveLAN, which
    /// had no link-layer acknowledgements to retry on.
    pub short_retry_limit: u32,
    /// Unicast data frames are acknowledged (IEEE 802.11-2020 §10.3.2.11: an Ack after
    /// SIFS, retried without it). False: every data frame is sent once and counts as
    /// done when its transmission ends, with Duration 0 (nothing reserved for an Ack),
    /// as seed 004's WaveLAN: "the wireless protocol does not provide any
    /// acknowledgements mechanism". Default true.
    pub link_acks: bool,
    /// DCF basic access of a frame that finds the medium idle ([`Access`]).
    pub access: Access,
    /// The AP's (member 0's) beacons; `None`: no beacons.
    pub beacon: Option<BeaconParams>,
}

/// Beacons of the AP (IEEE 802.11-2020 §11.1.3.2): at each TBTT, every `interval`
/// from time 0 (TSF 0 is a TBTT), the AP queues a Beacon frame as its next frame and
/// sends it with the DCF's rules, group-addressed and unacknowledged, at `rate`. A
/// beacon still waiting at the next TBTT is not doubled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BeaconParams {
    /// dot11BeaconPeriod, ns: 100 TU = 102.4 ms by default (1 TU = 1024 µs, §3.1).
    pub interval: Nanos,
    /// The rate the beacon goes at (a basic rate).
    pub rate: Rate,
    /// The Beacon MPDU, no FCS (§9.3.3.2); the medium writes its Sequence Control and,
    /// at transmission, its Timestamp (the TSF, µs).
    pub mpdu: Vec<u8>,
}

/// dot11BeaconPeriod's usual value, 100 TU (1 TU = 1024 µs, IEEE 802.11-2020 §3.1).
pub const DEFAULT_BEACON_INTERVAL: Nanos = 100 * 1024 * MICROS;

impl BssParams {
    /// `members` members on `phy` at `rate`, everyone hearing everyone, no frame
    /// errors, RTS/CTS off, `queue_frames` per member.
    pub fn new(phy: PhyParams, rate: Rate, members: usize, queue_frames: usize) -> Self {
        BssParams {
            phy,
            rate,
            rts_threshold: DEFAULT_RTS_THRESHOLD,
            members,
            hears: None,
            frame_error_rate: Vec::new(),
            queue_frames,
            member_queue_frames: Vec::new(),
            member_preamble: Vec::new(),
            control_preamble_long: false,
            short_retry_limit: super::dcf::DEFAULT_SHORT_RETRY_LIMIT,
            link_acks: true,
            access: Access::IdleDifs,
            beacon: None,
        }
    }

    /// From the plan's `WifiConfig`: `standard` 802.11 or 802.11b (HR/DSSS timing),
    /// 802.11g (an ERP-only BSS: short slot, CWmin 15, no protection) or 802.11g-mixed
    /// (802.11b members present: long slot, CWmin 31, CTS-to-self before OFDM frames);
    /// `preamble` one the standard has ([`WifiStandard::preamble_problem`], the plan's
    /// rule); `rate_bps` one of the PHY's rates.
    pub fn from_plan(
        standard: WifiStandard,
        preamble: Preamble,
        rate_bps: u64,
        members: usize,
        queue_frames: usize,
    ) -> Result<Self, String> {
        if let Some(problem) = standard.preamble_problem(preamble) {
            return Err(problem.into());
        }
        let phy = match standard {
            // IEEE 802.11-2020 clause 15 (DSSS, 1 and 2 Mb/s) has the timing of clause 16
            // (HR/DSSS): slot 20 µs, SIFS 10 µs, CWmin 31; its rates are HR/DSSS's lowest.
            WifiStandard::Dot11 | WifiStandard::Dot11b => PhyParams::dot11b(preamble),
            WifiStandard::Dot11g => PhyParams::dot11g(false, preamble),
            WifiStandard::Dot11gMixed => PhyParams::dot11g(true, preamble),
        };
        let rate = rate_bps
            .is_multiple_of(1000)
            .then(|| Rate::from_kbps(rate_bps / 1000))
            .flatten()
            .filter(|r| phy.supports(*r))
            .ok_or_else(|| format!("{rate_bps} bit/s is not a rate of {}", qoslab_plan::name_of(&standard)))?;
        let params = BssParams::new(phy, rate, members, queue_frames);
        params.check()?;
        Ok(params)
    }

    /// Refuses parameters the medium cannot run, naming the field.
    pub fn check(&self) -> Result<(), String> {
        if self.members == 0 {
            return Err("members: a BSS needs at least one member".into());
        }
        if !self.phy.supports(self.rate) {
            return Err(format!("rate: {:?} is not a rate of {:?}", self.rate, self.phy.standard));
        }
        if self.queue_frames == 0 || self.member_queue_frames.contains(&0) {
            return Err("queue_frames: a transmit queue holds at least one frame".into());
        }
        if !self.member_queue_frames.is_empty() && self.member_queue_frames.len() != self.members {
            return Err(format!(
                "queue_frames: {} per-member queues for {} members",
                self.member_queue_frames.len(),
                self.members
            ));
        }
        if self.short_retry_limit == 0 {
            return Err("short_retry_limit: a frame is sent at least once".into());
        }
        if let Some(b) = &self.beacon {
            if b.interval == 0 {
                return Err("beacon: the beacon interval must be positive".into());
            }
            if !self.phy.supports(b.rate) {
                return Err(format!("beacon: {:?} is not a rate of {:?}", b.rate, self.phy.standard));
            }
            if b.mpdu.len() < MIN_DATA_HEADER + 8 {
                return Err("beacon: a Beacon MPDU has a 24-byte header and an 8-byte timestamp at least".into());
            }
        }
        if let Some(hears) = &self.hears {
            if hears.len() != self.members || hears.iter().any(|row| row.len() != self.members) {
                return Err(format!("hears: must be {n} × {n} (one row and column per member)", n = self.members));
            }
        }
        if !self.frame_error_rate.is_empty() && self.frame_error_rate.len() != self.members {
            return Err(format!(
                "frame_error_rate: {} values for {} members",
                self.frame_error_rate.len(),
                self.members
            ));
        }
        if let Some(p) = self.frame_error_rate.iter().find(|p| !(0.0..=1.0).contains(*p)) {
            return Err(format!("frame_error_rate: {p} is not a probability"));
        }
        Ok(())
    }

    /// The PHY timing of the frame exchanges `member` starts: the BSS's, with the
    /// member's own preamble (and its responders answering in it) if it has one.
    pub fn member_phy(&self, member: usize) -> std::borrow::Cow<'_, PhyParams> {
        match self.member_preamble.get(member) {
            Some(&p) if p != self.phy.preamble => {
                let mut phy = self.phy.clone();
                phy.preamble = p;
                if !self.control_preamble_long {
                    phy.control_preamble = p;
                }
                std::borrow::Cow::Owned(phy)
            }
            _ => std::borrow::Cow::Borrowed(&self.phy),
        }
    }

    /// The transmit queue of `member`, in frames.
    pub fn queue_capacity(&self, member: usize) -> usize {
        self.member_queue_frames.get(member).copied().unwrap_or(self.queue_frames)
    }

    /// Rate of group-addressed data frames: the highest basic rate of the data rate's
    /// modulation class not above it (§10.6.6.2 asks for a basic rate).
    pub fn group_rate(&self) -> Rate {
        self.phy.control_response_rate(self.rate)
    }
}

/// What happened on the medium, in time order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BssEvent {
    /// `to` received `mpdu` (no FCS) from `from`; the reception ended `at`.
    Delivered {
        /// The receiving member.
        to: usize,
        /// The sending member.
        from: usize,
        /// The MPDU as sent (Sequence Control, Duration and Retry as on the air).
        mpdu: Vec<u8>,
        /// End of the reception.
        at: Nanos,
    },
    /// A frame left `member`'s queue undelivered.
    Dropped {
        /// The sending member.
        member: usize,
        /// The MPDU.
        mpdu: Vec<u8>,
        /// Why: the retry limit, or (without link acks) not received by its addressee.
        reason: DropReason,
        /// Whether the receiver had it all the same (its acknowledgements were lost):
        /// what it carried is not lost (conservation).
        delivered: bool,
    },
    /// `member`'s frame exchange ended: `ok` when acknowledged (or a group frame sent),
    /// false when dropped at the retry limit. Retries are not reported here.
    TxDone {
        /// The sending member.
        member: usize,
        /// Whether the frame made it.
        ok: bool,
    },
}

/// Counters of one member.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemberStats {
    /// Frames accepted into the transmit queue.
    pub enqueued: u64,
    /// Frames refused because the queue was full.
    pub queue_drops: u64,
    /// Frame exchanges started (the first frame: RTS, CTS-to-self or data).
    pub attempts: u64,
    /// Of those, retransmissions of a frame already tried.
    pub retries: u64,
    /// Frames acknowledged (unicast) or sent (group-addressed).
    pub frames_sent: u64,
    /// Frames dropped at the retry limit.
    pub dropped: u64,
    /// Time this member's transmitter was on the air (data, RTS, CTS, Ack), ns.
    pub airtime_ns: u64,
    /// Frames delivered to this member.
    pub received: u64,
    /// Data frames for this member (or group frames) lost to overlapping transmissions.
    pub rx_collisions: u64,
    /// Data frames for this member (or group frames) lost to the frame error rate.
    pub rx_errors: u64,
    /// Retransmitted frames received again and not delivered (§10.3.2.14).
    pub duplicates: u64,
    /// Beacons sent (the AP); not in `enqueued` or `frames_sent`, in `airtime_ns`.
    pub beacons: u64,
}

/// One PPDU on the air, as a capture shows it (kept only when capturing).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AirFrame {
    /// Start of the transmission.
    pub start: Nanos,
    /// The transmitting member.
    pub sender: usize,
    /// The member it is addressed to (RA); `None` for group frames and CTS-to-self.
    pub receiver: Option<usize>,
    /// What it is.
    pub kind: FrameKind,
    /// Its Duration field, µs.
    pub duration_us: u16,
    /// Its rate.
    pub rate: Rate,
    /// Whether its PLCP preamble and header were the short ones (§16.2.2.3).
    pub short_preamble: bool,
    /// The MPDU (no FCS) of data and management frames; control frames carry none
    /// (their bytes follow from the fields above).
    pub mpdu: Option<Vec<u8>>,
}

/// The kinds of frames on the air.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// A data MPDU, or a management one (a beacon).
    Data,
    /// Request to Send.
    Rts,
    /// CTS answering an RTS.
    Cts,
    /// CTS-to-self (ERP protection).
    CtsToSelf,
    /// Ack.
    Ack,
}

/// The medium of one BSS; see the module doc.
#[derive(Debug)]
pub struct Bss {
    params: BssParams,
    hears: Vec<Vec<bool>>,
    members: Vec<Member>,
    events: BTreeMap<EventKey, Event>,
    on_air: Vec<OnAir>,
    next_seq: u64,
    next_tx_id: u64,
    /// Latest instant processed.
    now: Nanos,
    /// Events produced outside `poll` (by `enqueue` catching up), handed out by the
    /// next `poll`.
    outbox: Vec<BssEvent>,
    busy_ns: u64,
    busy_until: Nanos,
    /// Frames on the air, kept when `capture` is on.
    capture: bool,
    air: Vec<AirFrame>,
}

impl Bss {
    /// A BSS whose random streams are `seed`'s streams for component `id` (the link's
    /// index), purposes "member {i} backoff" and "member {i} frame errors".
    ///
    /// # Panics
    /// If `params.check()` fails.
    pub fn new(params: BssParams, seed: RunSeed, id: u64) -> Bss {
        if let Err(e) = params.check() {
            panic!("invalid BSS parameters: {e}");
        }
        let n = params.members;
        let hears = params.hears.clone().unwrap_or_else(|| vec![vec![true; n]; n]);
        let mut dcf_params = DcfParams::from_phy(&params.phy);
        dcf_params.rts_threshold = params.rts_threshold;
        dcf_params.short_retry_limit = params.short_retry_limit;
        dcf_params.access = params.access;
        dcf_params.long_retry_limit = dcf_params.long_retry_limit.min(params.short_retry_limit);
        let members = (0..n)
            .map(|i| Member {
                dcf: Dcf::new(dcf_params),
                backoff_stream: seed.stream(id, &format!("member {i} backoff")),
                error_stream: seed.stream(id, &format!("member {i} frame errors")),
                frame_error_rate: params.frame_error_rate.get(i).copied().unwrap_or(0.0),
                queue: VecDeque::new(),
                state: State::Idle,
                next_sequence: 0,
                last_sequence_from: vec![None; n],
                on_air_until: 0,
                stats: MemberStats::default(),
            })
            .collect();
        let mut bss = Bss {
            params,
            hears,
            members,
            events: BTreeMap::new(),
            on_air: Vec::new(),
            next_seq: 0,
            next_tx_id: 0,
            now: 0,
            outbox: Vec::new(),
            busy_ns: 0,
            busy_until: 0,
            capture: false,
            air: Vec::new(),
        };
        if bss.params.beacon.is_some() {
            bss.schedule(0, PHASE_SEND, Event::Tbtt);
        }
        bss
    }

    /// Keeps every PPDU put on the air from now on, for [`take_air`](Self::take_air).
    pub fn capture_air(&mut self) {
        self.capture = true;
    }

    /// The PPDUs on the air kept since the last call, in the order they started.
    pub fn take_air(&mut self) -> Vec<AirFrame> {
        std::mem::take(&mut self.air)
    }

    /// The parameters.
    pub fn params(&self) -> &BssParams {
        &self.params
    }

    /// Number of members.
    pub fn member_count(&self) -> usize {
        self.members.len()
    }

    /// Frames in `member`'s transmit queue, including the one being sent.
    pub fn queue_len(&self, member: usize) -> usize {
        self.members[member].queue.len()
    }

    /// Frames handed in to `member` that are still in its transmit queue: the queue less
    /// a pending beacon (for the links' conservation, whose frames in count what was handed in).
    pub fn queued_handed_in(&self, member: usize) -> usize {
        self.members[member].queue.iter().filter(|q| !q.beacon).count()
    }

    /// The MPDUs in `member`'s transmit queue that no receiver has yet, the one being
    /// sent first (for the end-of-run census of `conservation`).
    pub fn queued(&self, member: usize) -> impl Iterator<Item = &[u8]> {
        // A beacon is the AP's own management frame: never handed in, never a flow's.
        self.members[member].queue.iter().filter(|q| !q.delivered && !q.beacon).map(|q| q.mpdu.as_slice())
    }

    /// Whether `member`'s queue can take another frame.
    pub fn has_room(&self, member: usize) -> bool {
        self.queue_len(member) < self.params.queue_capacity(member)
    }

    /// `member`'s MAC hands an MPDU (no FCS) to the medium for member `dest`, or for
    /// every member that hears it when `dest` is `None` (group-addressed). The medium
    /// writes the Sequence Control of a data MPDU. `Err(QueueFull)` when the queue
    /// holds `queue_frames` already (drop-tail). Events due before `now` are processed
    /// first; any they produce come out of the next [`poll`](Self::poll).
    ///
    /// # Panics
    /// If `member` or `dest` is not a member, or `dest` is `member`.
    pub fn enqueue(&mut self, now: Nanos, member: usize, mpdu: Vec<u8>, dest: Option<usize>) -> Result<(), DropReason> {
        self.enqueue_at(now, member, mpdu, dest, false)
    }

    /// As [`enqueue`](Self::enqueue), but the MPDU goes right behind the frame at the
    /// head of the queue (which may be under way and keeps its place), ahead of every
    /// other waiting frame: a station's own short control traffic (seed 004's link
    /// acknowledgements) sent before the data it forwards, as a strict-priority queue.
    pub fn enqueue_priority(
        &mut self,
        now: Nanos,
        member: usize,
        mpdu: Vec<u8>,
        dest: Option<usize>,
    ) -> Result<(), DropReason> {
        self.enqueue_at(now, member, mpdu, dest, true)
    }

    fn enqueue_at(
        &mut self,
        now: Nanos,
        member: usize,
        mut mpdu: Vec<u8>,
        dest: Option<usize>,
        priority: bool,
    ) -> Result<(), DropReason> {
        let n = self.members.len();
        assert!(member < n, "no member {member}");
        assert!(dest.is_none_or(|d| d < n && d != member), "member {member} cannot send to {dest:?}");
        self.advance_to(now);
        let capacity = self.params.queue_capacity(member);
        let m = &mut self.members[member];
        if m.queue.len() >= capacity {
            m.stats.queue_drops += 1;
            return Err(DropReason::QueueFull { capacity });
        }
        if is_data_mpdu(&mpdu) {
            let sequence_control = m.next_sequence << 4;
            mpdu[22..24].copy_from_slice(&sequence_control.to_le_bytes());
            mpdu[1] &= !RETRY_BIT;
            m.next_sequence = (m.next_sequence + 1) % SEQUENCE_MODULUS;
        }
        let queued = Queued { beacon: false, mpdu, dest, attempts: 0, delivered: false };
        if priority && !m.queue.is_empty() {
            m.queue.insert(1, queued);
        } else {
            m.queue.push_back(queued);
        }
        m.stats.enqueued += 1;
        if matches!(m.state, State::Idle) {
            m.request_access(now.max(self.now));
        }
        Ok(())
    }

    /// The next instant the medium needs [`poll`](Self::poll)ing: one timer for the
    /// whole BSS. `None` when nothing is under way.
    pub fn poll_at(&self) -> Option<Nanos> {
        if !self.outbox.is_empty() {
            return Some(self.now);
        }
        self.next_instant()
    }

    /// Advances the medium to `now` and appends what happened, in time order.
    pub fn poll(&mut self, now: Nanos, out: &mut Vec<BssEvent>) {
        self.advance_to(now);
        out.append(&mut self.outbox);
    }

    /// `member`'s counters.
    pub fn member_stats(&self, member: usize) -> MemberStats {
        self.members[member].stats
    }

    /// Time during which at least one member was transmitting, ns (up to the end of
    /// the transmissions started so far).
    pub fn airtime_busy_ns(&self) -> u64 {
        self.busy_ns
    }
}

#[cfg(test)]
mod test {
    use super::*;

    const US: Nanos = MICROS;

    /// A data MPDU (no FCS) of `len` bytes: a To DS header and a zero body.
    fn mpdu(len: usize) -> Vec<u8> {
        let mut m = vec![0u8; len];
        m[0] = DATA_TYPE_BITS;
        m[1] = 0x01;
        m
    }

    fn bss_b(members: usize) -> Bss {
        let params = BssParams::new(PhyParams::dot11b(Preamble::Long), Rate::Cck11, members, 10);
        Bss::new(params, RunSeed(1), 0)
    }

    /// Polls until nothing is under way; returns the events with the poll times.
    fn run(bss: &mut Bss) -> Vec<(Nanos, BssEvent)> {
        let mut all = Vec::new();
        while let Some(t) = bss.poll_at() {
            let mut out = Vec::new();
            bss.poll(t, &mut out);
            all.extend(out.into_iter().map(|e| (t, e)));
        }
        all
    }

    #[test]
    fn one_frame_on_an_idle_medium_follows_the_timeline() {
        let mut bss = bss_b(2);
        // 1532 + FCS = 1536 bytes: 192 + 1118 µs at 11 Mb/s; Ack 192 + 56 µs at 2 Mb/s.
        bss.enqueue(0, 1, mpdu(1532), Some(0)).unwrap();
        let events = run(&mut bss);
        let delivered_at = (50 + 1310) * US;
        let ack_end = delivered_at + (10 + 248) * US;
        assert!(matches!(
            &events[0],
            (t, BssEvent::Delivered { to: 0, from: 1, at, mpdu }) if *t == delivered_at && *at == delivered_at
                && u16::from_le_bytes([mpdu[2], mpdu[3]]) == 10 + 248
        ));
        assert_eq!(events[1], (ack_end, BssEvent::TxDone { member: 1, ok: true }));
        assert_eq!(events.len(), 2);
        let s = bss.member_stats(1);
        assert_eq!((s.attempts, s.retries, s.frames_sent), (1, 0, 1));
        assert_eq!(s.airtime_ns, 1310 * US);
        assert_eq!(bss.member_stats(0).airtime_ns, 248 * US);
        assert_eq!(bss.airtime_busy_ns(), (1310 + 248) * US);
    }

    #[test]
    fn rts_cts_exchange_timeline() {
        let mut params = BssParams::new(PhyParams::dot11b(Preamble::Long), Rate::Cck11, 3, 10);
        params.rts_threshold = 1000;
        let mut bss = Bss::new(params, RunSeed(1), 0);
        bss.enqueue(0, 1, mpdu(1532), Some(0)).unwrap();
        let events = run(&mut bss);
        // DIFS 50, RTS 272, SIFS, CTS 248, SIFS, data 1310, SIFS, Ack 248.
        let data_end = (50 + 272 + 10 + 248 + 10 + 1310) * US;
        assert!(matches!(&events[0], (_, BssEvent::Delivered { at, .. }) if *at == data_end));
        assert_eq!(events[1], (data_end + 258 * US, BssEvent::TxDone { member: 1, ok: true }));
        // The third member heard the RTS and set its NAV; its own frame waits.
        assert_eq!(bss.member_stats(2).airtime_ns, 0);
    }

    #[test]
    fn a_third_member_defers_by_the_nav_and_difs() {
        let mut bss = bss_b(3);
        bss.enqueue(0, 1, mpdu(1532), Some(0)).unwrap();
        let mut out = Vec::new();
        bss.poll(100 * US, &mut out);
        // Member 2 queues while member 1's frame is on the air: it backs off after
        // the Ack (NAV) and DIFS.
        bss.enqueue(100 * US, 2, mpdu(100), Some(0)).unwrap();
        let events = run(&mut bss);
        let ack_end = (50 + 1310 + 10 + 248) * US;
        let second = events
            .iter()
            .find_map(|(_, e)| match e {
                BssEvent::Delivered { from: 2, at, .. } => Some(*at),
                _ => None,
            })
            .unwrap();
        let data2 = (192 + (104 * 8_u64).div_ceil(11)) * US; // 100 + FCS bytes
        let slots = (second - ack_end - 50 * US - data2) / (20 * US);
        assert_eq!(second, ack_end + 50 * US + slots * 20 * US + data2);
        assert!(slots <= 31);
    }

    #[test]
    fn group_frames_reach_every_member_once_without_ack() {
        let mut bss = bss_b(4);
        bss.enqueue(0, 0, mpdu(100), None).unwrap();
        let events = run(&mut bss);
        let to: Vec<usize> = events
            .iter()
            .filter_map(|(_, e)| match e {
                BssEvent::Delivered { to, .. } => Some(*to),
                _ => None,
            })
            .collect();
        assert_eq!(to, [1, 2, 3]);
        // At 2 Mb/s (the highest basic rate ≤ 11): 192 + 104 × 8 / 2 µs, no Ack.
        assert_eq!(bss.member_stats(0).airtime_ns, (192 + 416) * US);
        assert_eq!(bss.airtime_busy_ns(), (192 + 416) * US);
    }

    #[test]
    fn lost_acks_give_duplicates_that_are_not_delivered_twice() {
        let mut params = BssParams::new(PhyParams::dot11b(Preamble::Long), Rate::Cck11, 2, 10);
        // The AP hears the station; the station never hears the AP.
        params.hears = Some(vec![vec![true, true], vec![false, true]]);
        let mut bss = Bss::new(params, RunSeed(3), 0);
        let frame = mpdu(200);
        bss.enqueue(0, 1, frame, Some(0)).unwrap();
        let events = run(&mut bss);
        let delivered = events.iter().filter(|(_, e)| matches!(e, BssEvent::Delivered { .. })).count();
        assert_eq!(delivered, 1);
        assert_eq!(bss.member_stats(0).duplicates, 6);
        assert!(events.iter().any(|(_, e)| matches!(
            e,
            BssEvent::Dropped { member: 1, reason: DropReason::RetryLimit { attempts: 7 }, .. }
        )));
        let s = bss.member_stats(1);
        assert_eq!((s.attempts, s.retries, s.dropped), (7, 6, 1));
    }

    #[test]
    fn a_full_queue_drops_the_tail() {
        let params = BssParams::new(PhyParams::dot11b(Preamble::Long), Rate::Cck11, 2, 2);
        let mut bss = Bss::new(params, RunSeed(1), 0);
        bss.enqueue(0, 1, mpdu(100), Some(0)).unwrap();
        bss.enqueue(0, 1, mpdu(100), Some(0)).unwrap();
        assert_eq!(bss.enqueue(0, 1, mpdu(100), Some(0)), Err(DropReason::QueueFull { capacity: 2 }));
        assert_eq!(bss.member_stats(1).queue_drops, 1);
        // Sequence numbers 0 and 1 on the air.
        let seqs: Vec<u16> = run(&mut bss)
            .into_iter()
            .filter_map(|(_, e)| match e {
                BssEvent::Delivered { mpdu, .. } => Some(u16::from_le_bytes([mpdu[22], mpdu[23]]) >> 4),
                _ => None,
            })
            .collect();
        assert_eq!(seqs, [0, 1]);
    }

    #[test]
    fn erp_protection_sends_cts_to_self_before_ofdm_data() {
        let phy = PhyParams::dot11g(true, Preamble::Long);
        let params = BssParams::new(phy, Rate::Ofdm54, 2, 10);
        let mut bss = Bss::new(params, RunSeed(1), 0);
        bss.enqueue(0, 1, mpdu(1532), Some(0)).unwrap();
        let events = run(&mut bss);
        // DIFS 50, CTS-to-self at 11 Mb/s 203, SIFS, data 254, then SIFS and Ack 34.
        let data_end = (50 + 203 + 10 + 254) * US;
        assert!(matches!(&events[0], (_, BssEvent::Delivered { at, .. }) if *at == data_end));
        assert_eq!(bss.member_stats(1).airtime_ns, (203 + 254) * US);
    }

    #[test]
    fn a_frame_on_a_long_idle_medium_goes_at_once_unless_access_counts_difs_from_arrival() {
        // 1532 + FCS bytes at 11 Mb/s, long preamble: 192 + 1118 µs (clause 16).
        let data = 1310 * US;
        let arrival = 10_000 * US;
        for (access, wait) in [(Access::IdleDifs, 0), (Access::ArrivalDifs, 50 * US)] {
            let mut params = BssParams::new(PhyParams::dot11b(Preamble::Long), Rate::Cck11, 2, 10);
            params.access = access;
            let mut bss = Bss::new(params, RunSeed(1), 0);
            bss.enqueue(arrival, 1, mpdu(1532), Some(0)).unwrap();
            let events = run(&mut bss);
            // §10.3.4.2: idle ≥ DIFS at the arrival → at once; ns-3: DIFS after the arrival.
            assert!(
                matches!(&events[0], (_, BssEvent::Delivered { at, .. }) if *at == arrival + wait + data),
                "{access:?}: {events:?}"
            );
        }
    }

    #[test]
    fn beacons_go_every_interval_at_their_rate_and_are_captured_once_with_the_acks() {
        // 64-byte beacon (60 + FCS) at 1 Mb/s, long preamble: 192 + 512 = 704 µs every
        // 100 TU = 102.4 ms: 0.6875 % of the air (IEEE 802.11-2020 §3.1, §16.2.2.2).
        let mut params = BssParams::new(PhyParams::dot11b(Preamble::Short), Rate::Cck11, 2, 10);
        let mut beacon = vec![0u8; 60];
        beacon[0] = 0x80;
        params.beacon = Some(BeaconParams { interval: DEFAULT_BEACON_INTERVAL, rate: Rate::Dsss1, mpdu: beacon });
        params.phy.control_preamble = Preamble::Long;
        let mut bss = Bss::new(params, RunSeed(1), 0);
        bss.capture_air();
        let mut out = Vec::new();
        bss.poll(5 * DEFAULT_BEACON_INTERVAL - 1, &mut out);
        assert!(
            !out.iter().any(|e| matches!(e, BssEvent::Delivered { .. })),
            "beacons are not delivered as frames: {out:?}"
        );
        out.clear();
        let ap = bss.member_stats(0);
        assert_eq!((ap.beacons, ap.frames_sent, ap.enqueued), (5, 0, 0));
        assert_eq!(ap.airtime_ns, 5 * 704 * US);
        let air = bss.take_air();
        // At each TBTT on the idle medium (§10.3.4.2), the first DIFS after time 0 (Dcf::new).
        let tbtt = |k: u64| if k == 0 { 50 * US } else { k * DEFAULT_BEACON_INTERVAL };
        assert_eq!(air.iter().map(|f| f.start).collect::<Vec<_>>(), (0..5).map(tbtt).collect::<Vec<_>>());
        // The TSF in the Timestamp field, µs.
        let tsf = u64::from_le_bytes(air[2].mpdu.as_ref().unwrap()[24..32].try_into().unwrap());
        assert_eq!(tsf, 2 * DEFAULT_BEACON_INTERVAL / US);
        assert!(air.iter().all(|f| f.rate == Rate::Dsss1 && !f.short_preamble));
        // A data frame in a short-preamble cell whose control responses are long: 96 + 1118 µs
        // of data, then an Ack at 2 Mb/s with the long format: 192 + 56 µs.
        let t0 = 5 * DEFAULT_BEACON_INTERVAL + 1000 * US;
        bss.enqueue(t0, 1, mpdu(1532), Some(0)).unwrap();
        bss.poll(t0 + 2000 * US, &mut out);
        let air = bss.take_air();
        // The beacon of the TBTT at 5 × 102.4 ms, then the data frame and its Ack.
        assert_eq!(air.len(), 3);
        assert_eq!(air[0].start, 5 * DEFAULT_BEACON_INTERVAL);
        let air = &air[1..];
        assert_eq!((air[0].kind, air[0].rate, air[0].short_preamble), (FrameKind::Data, Rate::Cck11, true));
        assert_eq!(
            (air[1].kind, air[1].rate, air[1].short_preamble, air[1].receiver),
            (FrameKind::Ack, Rate::Dsss2, false, Some(1))
        );
        assert_eq!(air[1].start, air[0].start + (96 + 1118 + 10) * US);
        assert_eq!(bss.member_stats(0).airtime_ns, 6 * 704 * US + 248 * US);
    }

    #[test]
    fn parameters_from_config_names() {
        let p = BssParams::from_plan(WifiStandard::Dot11b, Preamble::Short, 11_000_000, 3, 50).unwrap();
        assert_eq!((p.rate, p.phy.preamble), (Rate::Cck11, Preamble::Short));
        assert!(BssParams::from_plan(WifiStandard::Dot11b, Preamble::Long, 54_000_000, 3, 50).is_err());
        // Clause 15 DSSS has the long PLCP format only.
        assert!(BssParams::from_plan(WifiStandard::Dot11, Preamble::Short, 2_000_000, 3, 50).is_err());
        let mut bad = p.clone();
        bad.hears = Some(vec![vec![true; 2]; 3]);
        assert!(bad.check().unwrap_err().starts_with("hears"));
    }
}
