//! What a TCP flow reports besides its totals: iperf3-style interval records and the
//! per-ACK trace of the sender's state, both as typed records in columns for Python.
//!
//! The sockets change state only when the engine hands them an event, so the state
//! at an interval's end is the state after the last event before it: the recorder is
//! advanced before each event of the flow and writes every boundary it passed, without
//! an event of its own.

use serde::Serialize;

use super::socket::{TcpSocket, TraceRecord};

/// Cumulative counters of one flow at the end of one interval (iperf3's `-i`), and the
/// sender's state then. Differences of consecutive records give the interval's bytes,
/// bits per second and retransmissions, as iperf3's JSON `intervals`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct IntervalRecord {
    /// End of the interval, ns of simulated time.
    pub end_ns: u64,
    /// Data octets the sender sent, retransmissions included (iperf3's sender bytes
    /// count writes; a bulk source writes as fast as the socket takes).
    pub bytes_sent: u64,
    /// Data octets cumulatively acknowledged.
    pub bytes_acked: u64,
    /// Data octets delivered in order at the receiver.
    pub bytes_received: u64,
    /// Segments retransmitted.
    pub retransmits: u64,
    /// Sender's congestion window, octets (iperf3 `snd_cwnd`).
    pub cwnd_bytes: u64,
    /// Sender's smoothed RTT, ns (iperf3 `rtt`, µs there).
    pub srtt_ns: Option<u64>,
}

/// Writes an [`IntervalRecord`] at every multiple of `period` after `start`.
#[derive(Debug, Clone)]
pub struct IntervalRecorder {
    period: u64,
    next: u64,
    /// The measurement window ended (see [`IntervalRecorder::close`]): no more records.
    closed: bool,
    pub records: Vec<IntervalRecord>,
}

impl IntervalRecorder {
    /// Intervals of `period` ns from `start`; `period` must be positive.
    pub fn new(start: u64, period: u64) -> IntervalRecorder {
        assert!(period > 0, "an interval of zero");
        IntervalRecorder { period, next: start + period, closed: false, records: Vec::new() }
    }

    /// The flow starts `by` ns later than planned (it waited for its link): so do its
    /// intervals, as iperf3's begin when its streams connect.
    pub fn delay(&mut self, by: u64) {
        debug_assert!(self.records.is_empty(), "a flow is delayed only before it starts");
        self.next += by;
    }

    fn record(&mut self, end_ns: u64, sender: &TcpSocket, receiver: &TcpSocket) {
        self.records.push(IntervalRecord::now(end_ns, sender, receiver));
    }

    /// Call before the flow's event at `now`: records the boundaries at or before `now`.
    pub fn advance(&mut self, now: u64, sender: &TcpSocket, receiver: &TcpSocket) {
        while !self.closed && self.next <= now {
            let end = self.next;
            self.record(end, sender, receiver);
            self.next += self.period;
        }
    }

    /// The run (or the test) ended at `end`: the boundaries before it, and the last
    /// partial interval, as iperf3 reports one (e.g. 10.00–10.04 s).
    pub fn finish(&mut self, end: u64, sender: &TcpSocket, receiver: &TcpSocket) {
        self.advance(end, sender, receiver);
        if !self.closed && self.records.last().is_none_or(|r| r.end_ns < end) && end + self.period > self.next {
            self.record(end, sender, receiver);
        }
    }

    /// The measurement window ends at `end` (a timed test's stop, a sized transfer's
    /// last byte at the receiver), with the sockets as they are then: [`finish`] there,
    /// and record nothing after, so the last record is the window's total and the
    /// intervals add up to it exactly (iperf3's intervals end at the test's end).
    ///
    /// [`finish`]: IntervalRecorder::finish
    pub fn close(&mut self, end: u64, sender: &TcpSocket, receiver: &TcpSocket) {
        self.finish(end, sender, receiver);
        self.closed = true;
    }
}

impl IntervalRecord {
    /// The flow's cumulative counters now, as the record of an interval ending at `end_ns`.
    pub fn now(end_ns: u64, sender: &TcpSocket, receiver: &TcpSocket) -> IntervalRecord {
        let s = sender.stats();
        IntervalRecord {
            end_ns,
            bytes_sent: s.bytes_sent,
            bytes_acked: s.bytes_acked,
            bytes_received: receiver.stats().bytes_received,
            retransmits: s.retransmits,
            cwnd_bytes: sender.cwnd(),
            srtt_ns: sender.srtt(),
        }
    }
}

/// The per-ACK trace of a sender in columns (one entry per ACK it processed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TraceColumns {
    pub time_ns: Vec<u64>,
    pub cwnd_bytes: Vec<u64>,
    /// None before the first loss (ssthresh "arbitrarily high", RFC 5681 §3.1).
    pub ssthresh_bytes: Vec<Option<u64>>,
    pub srtt_ns: Vec<Option<u64>>,
    /// The RTT sample this ACK gave.
    pub rtt_sample_ns: Vec<Option<u64>>,
    pub rto_ns: Vec<u64>,
    pub bytes_in_flight: Vec<u64>,
    /// Segments retransmitted so far.
    pub retransmits: Vec<u64>,
    pub in_recovery: Vec<bool>,
}

impl TraceColumns {
    pub fn from_records(records: &[TraceRecord]) -> TraceColumns {
        let mut c = TraceColumns::default();
        for r in records {
            c.time_ns.push(r.now);
            c.cwnd_bytes.push(r.cwnd);
            c.ssthresh_bytes.push((r.ssthresh != u64::MAX).then_some(r.ssthresh));
            c.srtt_ns.push(r.srtt);
            c.rtt_sample_ns.push(r.rtt_sample);
            c.rto_ns.push(r.rto);
            c.bytes_in_flight.push(r.bytes_in_flight);
            c.retransmits.push(r.retransmits);
            c.in_recovery.push(r.in_recovery);
        }
        c
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::tcp::TcpConfig;

    #[test]
    fn boundaries_and_the_last_partial_interval() {
        let (a, b) = (TcpSocket::new(TcpConfig::default()), TcpSocket::new(TcpConfig::default()));
        let mut r = IntervalRecorder::new(100, 1000);
        r.advance(500, &a, &b);
        assert!(r.records.is_empty());
        r.advance(1100, &a, &b);
        assert_eq!(r.records.iter().map(|x| x.end_ns).collect::<Vec<_>>(), vec![1100]);
        r.advance(3500, &a, &b);
        assert_eq!(r.records.iter().map(|x| x.end_ns).collect::<Vec<_>>(), vec![1100, 2100, 3100]);
        r.finish(3600, &a, &b);
        assert_eq!(r.records.iter().map(|x| x.end_ns).collect::<Vec<_>>(), vec![1100, 2100, 3100, 3600]);
        // A run that ends on a boundary has no partial interval.
        let mut r = IntervalRecorder::new(0, 1000);
        r.finish(2000, &a, &b);
        assert_eq!(r.records.iter().map(|x| x.end_ns).collect::<Vec<_>>(), vec![1000, 2000]);
    }

    #[test]
    fn nothing_is_recorded_after_the_window_closes() {
        let (a, b) = (TcpSocket::new(TcpConfig::default()), TcpSocket::new(TcpConfig::default()));
        let mut r = IntervalRecorder::new(0, 1000);
        r.close(2500, &a, &b);
        assert_eq!(r.records.iter().map(|x| x.end_ns).collect::<Vec<_>>(), vec![1000, 2000, 2500]);
        // The drain after the window: later boundaries and a later finish add nothing.
        r.advance(9000, &a, &b);
        r.finish(9500, &a, &b);
        assert_eq!(r.records.iter().map(|x| x.end_ns).collect::<Vec<_>>(), vec![1000, 2000, 2500]);
    }
}
