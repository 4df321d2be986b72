//! Changes of the connection's state (RFC 9293 §3.3.2): a reset, CLOSED, TIME-WAIT, and
//! which states may send.

use super::*;

impl TcpSocket {
    pub(super) fn reset_connection(&mut self, iss: SeqNumber) {
        self.iss = iss;
        self.snd_una = iss;
        self.snd_nxt = iss;
        self.snd_max = iss;
        self.recover = iss;
        self.high_rxt = iss;
        self.snd_wl2 = iss;
        self.fin_seq = None;
        self.rx_fin = None;
        self.ooo.clear();
        self.board.clear();
        self.recovery = Recovery::None;
        self.prr = None;
        self.rto_at = None;
        self.delack_at = None;
        self.segs_unacked = 0;
        self.timewait_at = None;
        self.rtt_timing = None;
        self.rack = None;
        self.loss_at = None;
        self.tlp_pending = false;
    }

    pub(super) fn enter_closed(&mut self) {
        self.state = State::Closed;
        self.rto_at = None;
        self.loss_at = None;
        self.delack_at = None;
        self.timewait_at = None;
        self.ack_now = false;
    }

    pub(super) fn enter_time_wait(&mut self, now: u64) {
        self.state = State::TimeWait;
        self.rto_at = None;
        self.loss_at = None;
        self.timewait_at = Some(now + 2 * self.cfg.msl.as_nanos());
    }

    /// RFC 9293 §3.10.7.1: the RST answering a segment that has no connection.
    pub(super) fn reset_for(&self, repr: &Repr) -> Option<Repr> {
        if repr.control == Control::Rst {
            return None;
        }
        Some(match repr.ack_number {
            Some(ack) => Repr::new(repr.dst_port, repr.src_port, Control::Rst, ack, 0),
            None => {
                let mut rst = Repr::new(repr.dst_port, repr.src_port, Control::Rst, SeqNumber::default(), 0);
                rst.ack_number = Some(repr.seq_number + repr.segment_len());
                rst
            }
        })
    }

    pub(super) fn may_send_state(&self) -> bool {
        matches!(
            self.state,
            State::Closed | State::Listen | State::SynSent | State::SynReceived | State::Established | State::CloseWait
        )
    }

    pub(super) fn is_synchronized(&self) -> bool {
        matches!(
            self.state,
            State::Established
                | State::FinWait1
                | State::FinWait2
                | State::CloseWait
                | State::Closing
                | State::LastAck
                | State::TimeWait
        )
    }
}
