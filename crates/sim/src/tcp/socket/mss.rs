//! The segment size: options' length, the MSS from the path MTU, and path MTU discovery
//! (RFC 1191, RFC 8899's packetization-layer probing as Linux's tcp_mtu_probing does it).

use super::*;

impl TcpSocket {
    /// Octets of TCP options on every data segment.
    pub(super) fn options_len(&self) -> u32 {
        if self.ts_ok {
            TIMESTAMP_OPTION_LEN
        } else {
            0
        }
    }

    /// Octets of SACK option the next segment carries: the blocks [`header`](Self::header)
    /// puts in (RFC 2018 §3: at most three beside timestamps), 8 each, after two NOPs,
    /// kind and length (Linux `tcp_established_options`).
    pub(super) fn sack_option_len(&self) -> u32 {
        if !self.sack_ok || self.ooo.is_empty() {
            return 0;
        }
        let room = MAX_OPTIONS_LEN as u32 - self.options_len();
        let blocks = (self.ooo.len() as u32).min(3).min((room - 4) / 8);
        4 + 8 * blocks
    }

    /// Linux `tcp_current_mss`: the data octets of a segment sent now. `smss` leaves room
    /// only for the options every data segment carries (timestamps); the SACK blocks of
    /// a receiver with data out of order come out of the data, so that the packet still
    /// fits the path MTU (RFC 9293 §3.7.1 and RFC 6691 §2: the MSS counts data only,
    /// and options the sender adds shorten the segment).
    pub(super) fn current_mss(&self) -> u32 {
        self.smss.saturating_sub(self.sack_option_len()).max(1)
    }

    /// A data segment covering at most [`current_mss`](Self::current_mss) octets from
    /// `start` towards `end` (a retransmission: the rest goes in the next one).
    pub(super) fn plan_data(&self, start: SeqNumber, end: SeqNumber) -> Plan {
        self.plan_range(start, end.min(start + self.current_mss() as usize))
    }

    /// Linux `tcp_mtu_to_mss`: the data octets of a segment in an `mtu`-octet packet.
    pub(super) fn mtu_to_mss(&self, mtu: u32) -> u32 {
        let mss = mtu.saturating_sub(HEADERS_LEN).min(self.mss_clamp).max(MIN_SND_MSS);
        mss.saturating_sub(self.options_len()).max(1)
    }

    /// Linux `tcp_mss_to_mtu`.
    pub(super) fn mss_to_mtu(&self, mss: u32) -> u32 {
        mss + HEADERS_LEN + self.options_len()
    }

    /// Linux `tcp_sync_mss`: the MSS for path MTU `pmtu`, and no more than MTU probing
    /// has found to work.
    pub(super) fn sync_mss(&mut self, pmtu: u32) {
        if self.mtup.search_high > pmtu {
            self.mtup.search_high = pmtu;
        }
        self.pmtu = pmtu;
        let mut mss = self.mtu_to_mss(pmtu);
        if self.mtup.enabled {
            mss = mss.min(self.mtu_to_mss(self.mtup.search_low));
        }
        if mss < self.smss {
            self.stats.mss_reductions += 1;
        }
        self.smss = mss;
    }

    /// Linux `tcp_mtup_init`, once the options are known.
    pub(super) fn mtup_init(&mut self) {
        self.mtup = MtuProbing {
            enabled: self.cfg.mtu_probing > 1,
            search_high: self.mss_clamp + HEADERS_LEN,
            search_low: self.mss_to_mtu(u32::from(self.cfg.base_mss)),
            probe: None,
        };
    }

    /// The path MTU to the peer is `mtu` as the IP layer knows it now (its first hop,
    /// lowered by "fragmentation needed", raised again when that aged out, RFC 1191
    /// §6.3): the MSS follows (RFC 1191 §6.4). Sends nothing again.
    pub fn set_path_mtu(&mut self, mtu: u32) {
        self.send_idle = false;
        if mtu != self.pmtu && self.cfg.pmtu_discovery {
            self.sync_mss(mtu);
        }
    }

    /// An ICMP "fragmentation needed" quoting our segment with sequence number `seq`,
    /// the path MTU now `mtu` (Linux `tcp_v4_err`, `tcp_v4_mtu_reduced`). A quoted
    /// sequence outside what is in flight is ignored (RFC 5927 §4.1, as Linux does). When
    /// the MTU went down, the MSS follows and every segment in flight, too big now, is
    /// sent again at once: a go-back-N without a congestion response, as Linux's
    /// `tcp_simple_retransmit` ("we do not increase amount of data in network, but units
    /// changed"; its cwnd counts segments, so ours keeps their number). Returns whether
    /// the message was accepted.
    pub fn on_frag_needed(&mut self, now: u64, seq: SeqNumber, mtu: u32) -> bool {
        self.send_idle = false;
        self.now = now;
        if matches!(self.state, State::Listen | State::Closed) || seq < self.snd_una || seq > self.snd_max {
            return false;
        }
        self.stats.frag_needed += 1;
        if !self.cfg.pmtu_discovery || mtu >= self.pmtu {
            return true;
        }
        let old = u64::from(self.smss);
        self.sync_mss(mtu);
        let new = u64::from(self.smss);
        if new < old {
            self.cc.cwnd = (self.cc.cwnd * new / old).max(new);
            if self.cc.ssthresh != u64::MAX {
                self.cc.ssthresh = (self.cc.ssthresh * new / old).max(2 * new);
            }
        }
        self.simple_retransmit();
        true
    }

    /// Every segment in flight again from `snd_una`, as after a timeout but with the
    /// windows left alone; duplicate ACKs for what was in flight start no fast
    /// retransmit (RFC 6582 `recover`, Linux's Loss state).
    pub(super) fn simple_retransmit(&mut self) {
        if self.snd_max == self.snd_una {
            return;
        }
        self.snd_nxt = self.snd_una;
        self.high_rxt = self.snd_una;
        self.recover = self.snd_max;
        self.recovery = Recovery::None;
        self.prr = None;
        self.board.clear();
        self.dup_acks = 0;
        self.retransmit_first = false;
        self.hold_timer = false;
        self.rtt_timing = None;
        self.forget_rack_marks();
        if let Some((mtu, _, _)) = self.mtup.probe.take() {
            self.mtup.search_high = self.mtup.search_high.min(mtu - 1);
        }
    }

    /// Linux `tcp_mtu_probing`, called when the head segment has gone unacknowledged
    /// through `tcp_retries1` backed-off timeouts (RFC 4821 §7.7 black hole): the
    /// first time probing starts from `base_mss`; after that the floor halves.
    pub(super) fn black_hole_detected(&mut self) {
        if self.cfg.mtu_probing == 0 {
            return;
        }
        self.stats.black_holes += 1;
        if !self.mtup.enabled {
            self.mtup.enabled = true;
        } else {
            let mss = (self.mtu_to_mss(self.mtup.search_low) >> 1).min(u32::from(self.cfg.base_mss)).max(MIN_SND_MSS);
            self.mtup.search_low = self.mss_to_mtu(mss);
        }
        self.sync_mss(self.pmtu);
    }

    /// The MTU probe to send now, if probing may (Linux `tcp_mtu_probe`): a segment of
    /// the middle of the search range, new data, with room behind it for the segments
    /// whose duplicate ACKs would tell its loss.
    pub(super) fn probe_plan(&self) -> Option<Plan> {
        let m = &self.mtup;
        if !m.enabled
            || m.probe.is_some()
            || self.recovery != Recovery::None
            || self.snd_nxt != self.snd_max
            || self.fin_seq.is_some()
        {
            return None;
        }
        let smss = u64::from(self.smss);
        if self.cc.cwnd < PROBE_MIN_CWND * smss || (self.sack_ok && !self.board.blocks().is_empty()) {
            return None;
        }
        if self.sack_option_len() > 0 {
            // Linux `tcp_mtu_probe` (`rx_opt.num_sacks`): the probe's SACK blocks would
            // take octets from the size being probed.
            return None;
        }
        if m.search_high < m.search_low + PROBE_THRESHOLD {
            return None;
        }
        let probe = self.mtu_to_mss((m.search_high + m.search_low) / 2);
        if probe > self.mtu_to_mss(m.search_high) || probe <= self.smss {
            return None;
        }
        let needed = u64::from(probe) + u64::from(self.cfg.dup_ack_threshold + 1) * smss;
        let base = self.tx_base();
        if self.snd_nxt < base {
            return None;
        }
        let unsent = self.tx_len.saturating_sub((self.snd_nxt - base) as u64);
        let flight = (self.snd_nxt - self.snd_una) as u64;
        if unsent < needed || self.snd_wnd < needed || flight + needed > self.snd_wnd {
            return None;
        }
        if flight / smss + 2 > self.cc.cwnd / smss {
            return None;
        }
        Some(Plan { seq: self.snd_nxt, len: probe as usize, syn: false, fin: false })
    }
}
