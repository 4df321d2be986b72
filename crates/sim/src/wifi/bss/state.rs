//! The medium's own state: MAC header bits it writes, transmissions on the air, its
//! timed events, exchange plans and each member's queue and DCF.

use super::*;

/// Frame Control octet 0 type bits (b2–b3) of a data frame (§9.2.4.1.3).
pub(super) const DATA_TYPE_BITS: u8 = 0b10 << 2;
/// Frame Control octet 1, Retry (b11, §9.2.4.1.6).
pub(super) const RETRY_BIT: u8 = 0x08;
/// The sequence number wraps at 4096 (§9.2.4.4.2).
pub(super) const SEQUENCE_MODULUS: u16 = 4096;
/// A data MAC header has at least 24 octets (§9.3.2.1).
pub(super) const MIN_DATA_HEADER: usize = 24;

pub(super) fn is_data_mpdu(mpdu: &[u8]) -> bool {
    mpdu.len() >= MIN_DATA_HEADER && mpdu[0] & 0x0c == DATA_TYPE_BITS
}

/// A transmission on the air.
#[derive(Debug)]
pub(super) struct OnAir {
    pub(super) id: u64,
    pub(super) sender: usize,
    pub(super) kind: FrameKind,
    /// The member it is addressed to; `None` for group data and CTS-to-self.
    pub(super) receiver: Option<usize>,
    /// Duration field, in ns.
    pub(super) nav: Nanos,
    /// The data MPDU (no FCS).
    pub(super) mpdu: Option<Vec<u8>>,
    /// Per member: lost there to an overlapping transmission it hears.
    pub(super) lost: Vec<bool>,
    /// Per member: it was transmitting during this frame, so never received it.
    pub(super) deaf: Vec<bool>,
}

/// Ordering of the medium's own events: time, phase at that time, insertion order.
pub(super) type EventKey = (Nanos, u8, u64);

pub(super) const PHASE_TX_END: u8 = 0;
pub(super) const PHASE_TIMEOUT: u8 = 1;
pub(super) const PHASE_SEND: u8 = 2;

#[derive(Clone, Copy, Debug)]
pub(super) enum Event {
    TxEnd(u64),
    Timeout(usize),
    Send(usize, Scheduled),
    /// A target beacon transmission time.
    Tbtt,
}

/// A transmission due SIFS after a frame.
#[derive(Clone, Copy, Debug)]
pub(super) enum Scheduled {
    Ack {
        to: usize,
    },
    Cts {
        to: usize,
        nav: Nanos,
    },
    /// Our head-of-queue data frame, after CTS or CTS-to-self.
    Data,
}

/// The exchange plan of a head-of-queue frame.
#[derive(Clone, Copy, Debug)]
pub(super) struct Plan {
    pub(super) psdu_len: usize,
    pub(super) dest: Option<usize>,
    /// The data frame's rate, and that of its RTS or CTS-to-self.
    pub(super) rate: Rate,
    pub(super) protection_rate: Rate,
    pub(super) protection: Protection,
    pub(super) timeline: FrameExchange,
    /// ACKTimeout after the data, CTSTimeout after the RTS.
    pub(super) ack_timeout: Nanos,
    pub(super) cts_timeout: Nanos,
}

impl Plan {
    pub(super) fn data_nav(&self) -> Nanos {
        match self.dest {
            Some(_) => self.timeline.duration_data_us as Nanos * MICROS,
            None => 0,
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Awaiting {
    pub(super) kind: FrameKind,
    /// The timeout's key while it is pending; `None` once it fired with the response
    /// already on the air (its end decides).
    pub(super) timeout: Option<EventKey>,
}

#[derive(Clone, Copy, Debug)]
pub(super) enum State {
    /// Nothing queued.
    Idle,
    /// A frame is queued and the DCF has been asked for the medium.
    Contending,
    /// An exchange of the head-of-queue frame is under way.
    Exchanging { plan: Plan, awaiting: Option<Awaiting> },
}

#[derive(Debug)]
pub(super) struct Queued {
    /// A beacon of the AP, not a frame handed in.
    pub(super) beacon: bool,
    pub(super) mpdu: Vec<u8>,
    pub(super) dest: Option<usize>,
    pub(super) attempts: u32,
    /// The receiver has it (an attempt whose acknowledgement was lost): conservation
    /// counts it out of the network.
    pub(super) delivered: bool,
}

#[derive(Debug)]
pub(super) struct Member {
    pub(super) dcf: Dcf,
    pub(super) backoff_stream: RandomStream,
    pub(super) error_stream: RandomStream,
    pub(super) frame_error_rate: f64,
    pub(super) queue: VecDeque<Queued>,
    pub(super) state: State,
    pub(super) next_sequence: u16,
    /// Sequence number last received from each transmitter (duplicate detection).
    pub(super) last_sequence_from: Vec<Option<u16>>,
    /// End of this member's current transmission.
    pub(super) on_air_until: Nanos,
    pub(super) stats: MemberStats,
}

impl Member {
    pub(super) fn draw(stream: &mut RandomStream) -> impl FnMut(u32) -> u32 + '_ {
        |cw| stream.uniform_inclusive(u64::from(cw)) as u32
    }

    pub(super) fn request_access(&mut self, now: Nanos) {
        self.state = State::Contending;
        self.dcf.request_access(now, Self::draw(&mut self.backoff_stream));
    }
}
