//! IPv4 reassembly, sans-IO.
//!
//! Standards a reader must know:
//!
//! * RFC 791 §3.2 — fragments of one datagram share (source, destination, protocol,
//!   identification); the header of the fragment with offset zero becomes the header
//!   of the datagram; a timer bounds how long partial datagrams are held ("the
//!   current recommendation for the initial timer setting is 15 seconds");
//! * RFC 815 — the hole-descriptor algorithm used here: a list of the byte ranges
//!   still missing, updated by each fragment; the datagram is complete when the list
//!   is empty;
//! * RFC 1122 §3.3.2 — on timeout, ICMP Time Exceeded code 1 is sent only if fragment
//!   zero was received (it quotes that fragment's header and first 8 data octets);
//! * RFC 5722 — IPv6 drops a datagram with overlapping fragments; for IPv4, RFC 791 and
//!   RFC 815 let later data overwrite earlier. Linux drops overlapping IPv4 fragments
//!   too since 4.19 (commit 7969e5c40dfd, after "FragmentSmack", CVE-2018-5391).
//!   [`OverlapPolicy`] chooses; the default follows RFC 791/815 (overwrite).
//!
//! The [`Reassembler`] never reads a clock: every call takes `now` in nanoseconds,
//! [`Reassembler::poll_at`] says when the next partial datagram times out and
//! [`Reassembler::expire`] drops those due and reports them.
//!
//! Timer: the deadline is set when a datagram's first fragment arrives and is not
//! extended by later fragments (as Linux). RFC 791's sample procedure instead raises
//! the timer to the fragment's TTL in seconds on every arrival; that rule is not used.

use std::collections::BTreeMap;

use core::fmt;

use crate::ipv4::{self, Address, Protocol};
use crate::Error;

/// RFC 791 §3.2: "the current recommendation for the initial timer setting is 15
/// seconds", in nanoseconds.
pub const RFC791_TIMEOUT_NS: u64 = 15_000_000_000;
/// Linux `net.ipv4.ipfrag_time` default, 30 s, in nanoseconds.
pub const LINUX_TIMEOUT_NS: u64 = 30_000_000_000;
/// Linux `net.ipv4.ipfrag_high_thresh` default, 4 MiB.
pub const LINUX_HIGH_THRESH: usize = 4 * 1024 * 1024;
/// The largest data a datagram can carry: 65,535 less a minimal header (RFC 791 §3.1).
pub const MAX_DATA_LEN: usize = ipv4::MAX_PACKET_LEN - ipv4::HEADER_LEN;

/// What identifies the fragments of one datagram (RFC 791 §3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    pub src: Address,
    pub dst: Address,
    pub protocol: Protocol,
    pub ident: u16,
}

/// What to do when a fragment overlaps data already received.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OverlapPolicy {
    /// RFC 791 / RFC 815: copy the new data over the old; the later fragment wins.
    #[default]
    Overwrite,
    /// Linux ≥ 4.19 and RFC 5722 for IPv6: drop the whole datagram. A fragment lying
    /// entirely inside data already received is a duplicate and only it is ignored.
    DropDatagram,
}

/// Limits and timer of a [`Reassembler`]; all fields public, with their defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Config {
    /// Nanoseconds from the first fragment until a partial datagram is dropped.
    /// Default [`LINUX_TIMEOUT_NS`] (30 s); RFC 791 suggests [`RFC791_TIMEOUT_NS`] (15 s).
    pub timeout: u64,
    /// Partial datagrams held at once; a fragment of a new datagram beyond it is
    /// dropped. Default 1024.
    pub max_datagrams: usize,
    /// Octets of fragment data held at once, over all datagrams; a fragment that would
    /// exceed it is dropped. Default [`LINUX_HIGH_THRESH`] (4 MiB).
    pub max_bytes: usize,
    /// Overlapping fragments. Default [`OverlapPolicy::Overwrite`] (RFC 791/815).
    pub overlap: OverlapPolicy,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            timeout: LINUX_TIMEOUT_NS,
            max_datagrams: 1024,
            max_bytes: LINUX_HIGH_THRESH,
            overlap: OverlapPolicy::Overwrite,
        }
    }
}

/// Why a fragment was not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReassemblyError {
    /// Not a valid IPv4 packet; nothing changed.
    Parse(Error),
    /// A non-last fragment whose data is empty or not a multiple of 8 octets (RFC 791
    /// §3.2); the fragment is dropped.
    Malformed,
    /// Overlap under [`OverlapPolicy::DropDatagram`]: the datagram was dropped.
    Overlap,
    /// Fragments disagree on where the datagram ends: the datagram was dropped.
    Inconsistent,
    /// Offset plus length beyond 65,535 octets ("ping of death"): the datagram was dropped.
    TooLong,
    /// [`Config::max_datagrams`] reached; the fragment is dropped.
    TooManyDatagrams,
    /// [`Config::max_bytes`] reached; the fragment is dropped.
    TooManyBytes,
}

impl From<Error> for ReassemblyError {
    fn from(e: Error) -> Self {
        ReassemblyError::Parse(e)
    }
}

impl fmt::Display for ReassemblyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            ReassemblyError::Parse(e) => return write!(f, "fragment not parsed: {e}"),
            ReassemblyError::Malformed => "non-last fragment not a multiple of 8 octets",
            ReassemblyError::Overlap => "overlapping fragment, datagram dropped",
            ReassemblyError::Inconsistent => "fragments disagree on the datagram length, datagram dropped",
            ReassemblyError::TooLong => "reassembled datagram would exceed 65,535 octets",
            ReassemblyError::TooManyDatagrams => "too many datagrams in reassembly",
            ReassemblyError::TooManyBytes => "reassembly memory limit reached",
        };
        f.write_str(text)
    }
}

impl std::error::Error for ReassemblyError {}

/// A partial datagram dropped by [`Reassembler::expire`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expired {
    pub key: Key,
    /// When fragment zero had arrived: its header and first 8 data octets, what ICMP
    /// Time Exceeded code 1 quotes (RFC 792, RFC 1122 §3.3.2); else `None`, and no
    /// ICMP message should be sent.
    pub quote: Option<Vec<u8>>,
}

/// RFC 815 §3: a missing range, `first..=last` in octets of data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Hole {
    first: usize,
    /// `usize::MAX` stands for RFC 815's "infinity" until the last fragment arrives.
    last: usize,
}

#[derive(Debug)]
struct Entry {
    deadline: u64,
    /// The header of the fragment with offset zero, once received.
    header: Option<Vec<u8>>,
    data: Vec<u8>,
    holes: Vec<Hole>,
    /// Octets of data, known once the fragment with MF clear arrives.
    end: Option<usize>,
    /// Highest data octet received + 1.
    received_end: usize,
    /// Octets charged to the memory limit.
    charged: usize,
}

/// Reassembles IPv4 datagrams from fragments (RFC 791 §3.2, RFC 815).
#[derive(Debug)]
pub struct Reassembler {
    config: Config,
    entries: BTreeMap<Key, Entry>,
    bytes: usize,
    /// Entries found past their deadline by `process`, with that deadline, reported by
    /// the next `expire`.
    overdue: Vec<(u64, Expired)>,
}

impl Default for Reassembler {
    fn default() -> Self {
        Self::new(Config::default())
    }
}

impl Reassembler {
    /// The partial datagrams whose fragment zero has arrived: its header, and the data
    /// octets held so far (holes zero), in key order.
    pub fn partial_first_fragments(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.entries.values().filter_map(|e| e.header.as_deref().map(|h| (h, e.data.as_slice())))
    }

    /// An empty reassembler.
    pub fn new(config: Config) -> Reassembler {
        Reassembler { config, entries: BTreeMap::new(), bytes: 0, overdue: Vec::new() }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Partial datagrams held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no partial datagram is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Octets of fragment data held, as charged to [`Config::max_bytes`].
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// When the next partial datagram times out (nanoseconds), `None` when none is held.
    /// If a datagram was found overdue by [`process`](Self::process), it is now.
    /// Asked after every packet a node handles, and usually nothing is held: that
    /// answer is taken inline, the search over held datagrams out of line.
    #[inline(always)]
    pub fn poll_at(&self) -> Option<u64> {
        if self.entries.is_empty() && self.overdue.is_empty() {
            return None;
        }
        self.held_poll_at()
    }

    /// [`poll_at`](Self::poll_at) when a datagram is held or overdue.
    #[inline(never)]
    fn held_poll_at(&self) -> Option<u64> {
        let held = self.entries.values().map(|e| e.deadline);
        held.chain(self.overdue.iter().map(|(d, _)| *d)).min()
    }

    /// Drops every partial datagram whose deadline is at or before `now`, reporting
    /// them in (deadline, key) order, after any found overdue by `process`.
    pub fn expire(&mut self, now: u64) -> Vec<Expired> {
        let mut due: Vec<(u64, Key)> =
            self.entries.iter().filter(|(_, e)| e.deadline <= now).map(|(k, e)| (e.deadline, *k)).collect();
        due.sort();
        let mut out: Vec<Expired> = self.overdue.drain(..).map(|(_, e)| e).collect();
        for (_, key) in due {
            if let Some(entry) = self.remove(&key) {
                out.push(Expired { key, quote: quote_of(&entry) });
            }
        }
        out
    }

    fn remove(&mut self, key: &Key) -> Option<Entry> {
        let entry = self.entries.remove(key)?;
        self.bytes -= entry.charged;
        Some(entry)
    }

    /// Takes one IPv4 packet received at `now`. Returns `Ok(Some(datagram))` with the
    /// whole datagram (header of fragment zero, MF clear, offset 0, Total Length and
    /// checksum recomputed) when this fragment completes it, `Ok(None)` when more are
    /// needed. A packet that is not a fragment is returned as is (a copy).
    pub fn process(&mut self, now: u64, packet: &[u8]) -> Result<Option<Vec<u8>>, ReassemblyError> {
        let view = ipv4::Packet::new_checked(packet)?;
        let repr = ipv4::Repr::parse(&view)?;
        let payload = view.payload();
        if !view.is_fragment() {
            return Ok(Some(packet[..repr.buffer_len()].to_vec()));
        }
        let first = repr.frag_offset_bytes();
        let len = payload.len();
        if repr.more_frags && (len == 0 || len % ipv4::FRAG_UNIT != 0) {
            return Err(ReassemblyError::Malformed);
        }
        let key = Key { src: repr.src_addr, dst: repr.dst_addr, protocol: repr.next_header, ident: repr.ident };

        if let Some(entry) = self.entries.get(&key) {
            if entry.deadline <= now {
                if let Some(entry) = self.remove(&key) {
                    self.overdue.push((entry.deadline, Expired { key, quote: quote_of(&entry) }));
                }
            }
        }
        if first + len > MAX_DATA_LEN {
            self.remove(&key);
            return Err(ReassemblyError::TooLong);
        }
        let created = !self.entries.contains_key(&key);
        if created {
            if self.entries.len() >= self.config.max_datagrams {
                return Err(ReassemblyError::TooManyDatagrams);
            }
            self.entries.insert(
                key,
                Entry {
                    deadline: now.saturating_add(self.config.timeout),
                    header: None,
                    data: Vec::new(),
                    holes: vec![Hole { first: 0, last: usize::MAX }],
                    end: None,
                    received_end: 0,
                    charged: 0,
                },
            );
        }
        match self.insert(&key, &view, first, payload, repr.more_frags) {
            Ok(true) => {}
            Ok(false) => {
                // Nothing stored for a new datagram (e.g. a refused first fragment).
                return Ok(None);
            }
            Err(e) => {
                // Overlap and Inconsistent drop the datagram; any refusal drops an
                // entry this fragment had just created.
                if created || matches!(e, ReassemblyError::Overlap | ReassemblyError::Inconsistent) {
                    self.remove(&key);
                }
                return Err(e);
            }
        }
        let complete = self.entries.get(&key).is_some_and(|e| e.holes.is_empty() && e.header.is_some());
        if !complete {
            return Ok(None);
        }
        let Some(entry) = self.remove(&key) else { return Ok(None) };
        let Some(header) = entry.header else { return Ok(None) };
        // Fragment zero's options may leave less than MAX_DATA_LEN of room.
        let Ok(total_len) = u16::try_from(header.len() + entry.data.len()) else {
            return Err(ReassemblyError::TooLong);
        };
        let mut out = Vec::with_capacity(header.len() + entry.data.len());
        out.extend_from_slice(&header);
        out.extend_from_slice(&entry.data);
        let mut p = ipv4::Packet::new_unchecked(&mut out[..]);
        p.set_total_len(total_len);
        p.set_more_frags(false);
        p.set_frag_offset(0);
        p.fill_checksum();
        Ok(Some(out))
    }

    /// Adds one fragment's data to its entry (RFC 815 §3). Returns whether it was stored.
    fn insert(
        &mut self,
        key: &Key,
        view: &ipv4::Packet<&[u8]>,
        first: usize,
        payload: &[u8],
        more: bool,
    ) -> Result<bool, ReassemblyError> {
        let policy = self.config.overlap;
        let max_bytes = self.config.max_bytes;
        let used = self.bytes;
        let Some(entry) = self.entries.get_mut(key) else { return Ok(false) };
        let len = payload.len();
        let end = first + len;

        // Where the datagram ends must be consistent across fragments.
        if !more {
            if entry.end.is_some_and(|e| e != end) || entry.received_end > end {
                return Err(ReassemblyError::Inconsistent);
            }
        } else if entry.end.is_some_and(|e| end > e) {
            return Err(ReassemblyError::Inconsistent);
        }

        let fresh = entry.fresh_octets(first, end);
        if policy == OverlapPolicy::DropDatagram && fresh < len {
            if fresh == 0 && len > 0 {
                return Ok(true); // a duplicate: ignore it, keep the datagram
            }
            return Err(ReassemblyError::Overlap);
        }

        // Memory: charge data growth and a first header.
        let growth = end.saturating_sub(entry.data.len());
        let header_len = view.header_len();
        let header_charge = if first == 0 && entry.header.is_none() { header_len } else { 0 };
        if used + growth + header_charge > max_bytes {
            return Err(ReassemblyError::TooManyBytes);
        }
        if entry.data.len() < end {
            entry.data.resize(end, 0);
        }
        entry.data[first..end].copy_from_slice(payload);
        if first == 0 {
            entry.header = Some(view.header().to_vec());
        }
        entry.charged += growth + header_charge;
        self.bytes += growth + header_charge;
        entry.received_end = entry.received_end.max(end);
        if !more {
            entry.end = Some(end);
            entry.data.truncate(end);
        }

        entry.fill_holes(first, end, more);
        Ok(true)
    }
}

impl Entry {
    /// Octets of the fragment `first..end` that fall into holes; the rest was received
    /// before.
    fn fresh_octets(&self, first: usize, end: usize) -> usize {
        let len = end - first;
        self.holes
            .iter()
            .map(|h| {
                let lo = h.first.max(first);
                let hi = h.last.min(end.saturating_sub(1));
                if len > 0 && lo <= hi {
                    hi - lo + 1
                } else {
                    0
                }
            })
            .sum()
    }

    /// RFC 815 §3, steps 1-7: the hole list after the fragment `first..end` (`more`: its
    /// MF flag) is stored.
    fn fill_holes(&mut self, first: usize, end: usize, more: bool) {
        let len = end - first;
        if len > 0 || !more {
            let last = end.wrapping_sub(1); // end = 0 only for an empty last fragment at 0
            let mut holes = Vec::with_capacity(self.holes.len() + 1);
            for hole in self.holes.drain(..) {
                let disjoint = len == 0 || first > hole.last || last < hole.first;
                if disjoint {
                    holes.push(hole);
                    continue;
                }
                if first > hole.first {
                    holes.push(Hole { first: hole.first, last: first - 1 });
                }
                if last < hole.last && more {
                    holes.push(Hole { first: last + 1, last: hole.last });
                }
            }
            if !more {
                // The last fragment bounds every hole: nothing exists at or after `end`.
                holes.retain_mut(|h| {
                    if h.first >= end {
                        return false;
                    }
                    h.last = h.last.min(end.saturating_sub(1));
                    true
                });
            }
            self.holes = holes;
        }
    }
}

/// The header of fragment zero and 8 data octets, for ICMP Time Exceeded code 1.
fn quote_of(entry: &Entry) -> Option<Vec<u8>> {
    let header = entry.header.as_ref()?;
    // The quoted header is fragment zero's as received: lengths and checksum unchanged.
    let mut quote = header.clone();
    quote.extend_from_slice(&entry.data[..entry.data.len().min(ipv4::FRAG_UNIT)]);
    Some(quote)
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::ipv4::{fragment, Options, Repr};
    use proptest::prelude::*;

    const SEC: u64 = 1_000_000_000;

    fn datagram(ident: u16, payload_len: usize) -> Vec<u8> {
        let repr = Repr {
            ident,
            ..Repr::new(Address::new(10, 0, 0, 1), Address::new(10, 0, 0, 2), Protocol::Udp, payload_len, 64)
        };
        let payload: Vec<u8> = (0..payload_len).map(|i| (i % 251) as u8).collect();
        let mut v = Vec::new();
        repr.encapsulate(&payload, &mut v);
        v
    }

    fn fragments(dgram: &[u8], mtu: usize) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        fragment(dgram, mtu, |f| out.push(f.to_vec())).unwrap();
        out
    }

    /// A fragment built by hand: `data` at byte `offset`, MF as given.
    fn frag(ident: u16, offset: usize, data: &[u8], more: bool) -> Vec<u8> {
        let repr = Repr {
            ident,
            more_frags: more,
            frag_offset: (offset / 8) as u16,
            ..Repr::new(Address::new(10, 0, 0, 1), Address::new(10, 0, 0, 2), Protocol::Udp, data.len(), 64)
        };
        let mut v = Vec::new();
        repr.encapsulate(data, &mut v);
        v
    }

    #[test]
    fn in_order_and_reverse() {
        let dgram = datagram(7, 4000);
        let frags = fragments(&dgram, 1500);
        assert_eq!(frags.len(), 3);
        let mut r = Reassembler::default();
        assert_eq!(r.process(0, &frags[0]), Ok(None));
        assert_eq!(r.process(1, &frags[1]), Ok(None));
        assert_eq!(r.len(), 1);
        assert_eq!(r.process(2, &frags[2]), Ok(Some(dgram.clone())));
        assert!(r.is_empty());
        assert_eq!(r.bytes(), 0);

        for f in frags.iter().rev().take(2) {
            assert_eq!(r.process(0, f), Ok(None));
        }
        assert_eq!(r.process(0, &frags[0]), Ok(Some(dgram)));
    }

    #[test]
    fn unfragmented_passes_through() {
        let dgram = datagram(1, 100);
        let mut r = Reassembler::default();
        assert_eq!(r.process(0, &dgram), Ok(Some(dgram.clone())));
        assert_eq!(r.process(0, &dgram[..10]), Err(ReassemblyError::Parse(Error::Truncated)));
    }

    #[test]
    fn interleaved_datagrams() {
        let (a, b) = (datagram(1, 3000), datagram(2, 3000));
        let (fa, fb) = (fragments(&a, 576), fragments(&b, 576));
        let mut r = Reassembler::default();
        let mut done = Vec::new();
        for (x, y) in fa.iter().zip(fb.iter()) {
            done.extend(r.process(0, y).unwrap());
            done.extend(r.process(0, x).unwrap());
        }
        assert_eq!(done, vec![b, a]);
    }

    #[test]
    fn options_of_first_fragment_kept() {
        let mut opts = Options::empty();
        opts.push(&ipv4::Ipv4Option::RecordRoute { pointer: 4, route: &[0; 8] }).unwrap();
        let repr = Repr {
            ident: 9,
            options: opts,
            ..Repr::new(Address::new(10, 0, 0, 1), Address::new(10, 0, 0, 2), Protocol::Udp, 1000, 64)
        };
        let mut dgram = Vec::new();
        repr.encapsulate(&[0x33; 1000], &mut dgram);
        let frags = fragments(&dgram, 300);
        let mut r = Reassembler::default();
        let mut out = None;
        for f in frags.iter().rev() {
            out = r.process(0, f).unwrap();
        }
        assert_eq!(out, Some(dgram));
    }

    #[test]
    fn overlap_overwrite_and_drop() {
        // 0..16 "a", then 8..24 "b" overlapping, then the last 24..32 "c".
        let f1 = frag(5, 0, &[b'a'; 16], true);
        let f2 = frag(5, 8, &[b'b'; 16], true);
        let f3 = frag(5, 24, &[b'c'; 8], false);
        let mut r = Reassembler::default();
        r.process(0, &f1).unwrap();
        r.process(0, &f2).unwrap();
        let out = r.process(0, &f3).unwrap().unwrap();
        let mut expect = vec![b'a'; 8];
        expect.extend([b'b'; 16]);
        expect.extend([b'c'; 8]);
        assert_eq!(&out[20..], &expect[..]);

        let mut r = Reassembler::new(Config { overlap: OverlapPolicy::DropDatagram, ..Config::default() });
        r.process(0, &f1).unwrap();
        assert_eq!(r.process(0, &f1), Ok(None)); // exact duplicate: ignored
        assert_eq!(r.len(), 1);
        assert_eq!(r.process(0, &f2), Err(ReassemblyError::Overlap));
        assert!(r.is_empty());
        assert_eq!(r.bytes(), 0);
    }

    #[test]
    fn inconsistent_and_malformed() {
        let mut r = Reassembler::default();
        r.process(0, &frag(3, 0, &[1; 16], true)).unwrap();
        r.process(0, &frag(3, 32, &[1; 8], false)).unwrap();
        // A second end that disagrees drops the datagram.
        assert_eq!(r.process(0, &frag(3, 16, &[1; 8], false)), Err(ReassemblyError::Inconsistent));
        assert!(r.is_empty());
        // Data beyond a known end.
        assert_eq!(r.process(0, &frag(4, 8, &[1; 8], false)), Ok(None));
        assert_eq!(r.process(0, &frag(4, 16, &[1; 8], true)), Err(ReassemblyError::Inconsistent));
        // Non-last fragment not a multiple of 8.
        assert_eq!(r.process(0, &frag(6, 0, &[1; 12], true)), Err(ReassemblyError::Malformed));
        // Beyond 65,535 octets.
        assert_eq!(r.process(0, &frag(8, 65_528, &[1; 16], false)), Err(ReassemblyError::TooLong));
        // Within 65,515 data octets, but fragment zero has a 60-octet header.
        let big = Repr {
            ident: 10,
            more_frags: true,
            options: Options::new(&[1; 40]).unwrap(),
            ..Repr::new(Address::new(10, 0, 0, 1), Address::new(10, 0, 0, 2), Protocol::Udp, 65_472, 64)
        };
        let mut first = Vec::new();
        big.encapsulate(&vec![0; 65_472], &mut first);
        assert_eq!(r.process(0, &first), Ok(None));
        assert_eq!(r.process(0, &frag(10, 65_472, &[1; 40], false)), Err(ReassemblyError::TooLong));
        assert!(r.is_empty());
    }

    #[test]
    fn timeout_and_icmp_quote() {
        let dgram = datagram(11, 3000);
        let frags = fragments(&dgram, 1500);
        let mut r = Reassembler::new(Config { timeout: RFC791_TIMEOUT_NS, ..Config::default() });
        assert_eq!(r.poll_at(), None);
        r.process(SEC, &frags[0]).unwrap();
        r.process(3 * SEC, &fragments(&datagram(12, 3000), 1500)[1]).unwrap();
        assert_eq!(r.poll_at(), Some(16 * SEC));
        assert!(r.expire(16 * SEC - 1).is_empty());
        let gone = r.expire(16 * SEC);
        assert_eq!(gone.len(), 1);
        assert_eq!(gone[0].key.ident, 11);
        // Fragment zero arrived: the quote is its header + 8 octets.
        assert_eq!(gone[0].quote.as_deref(), Some(&frags[0][..28]));
        assert_eq!(r.poll_at(), Some(18 * SEC));
        let gone = r.expire(100 * SEC);
        assert_eq!(gone, vec![Expired { key: gone[0].key, quote: None }]);
        assert!(r.is_empty() && r.bytes() == 0);
    }

    #[test]
    fn late_fragment_after_deadline_starts_over() {
        let dgram = datagram(13, 3000);
        let frags = fragments(&dgram, 1500);
        let mut r = Reassembler::new(Config { timeout: 10, ..Config::default() });
        r.process(0, &frags[0]).unwrap();
        assert_eq!(r.process(10, &frags[1]), Ok(None));
        assert_eq!(r.poll_at(), Some(10));
        let gone = r.expire(10);
        assert_eq!(gone.len(), 1);
        assert!(gone[0].quote.is_some());
        assert_eq!(r.len(), 1); // frags[1] started a new datagram
    }

    #[test]
    fn limits() {
        let mut r = Reassembler::new(Config { max_datagrams: 1, max_bytes: 2000, ..Config::default() });
        let a = fragments(&datagram(1, 3000), 1500);
        let b = fragments(&datagram(2, 3000), 1500);
        r.process(0, &a[0]).unwrap();
        assert_eq!(r.process(0, &b[0]), Err(ReassemblyError::TooManyDatagrams));
        assert_eq!(r.process(0, &a[1]), Err(ReassemblyError::TooManyBytes));
        assert_eq!(r.len(), 1);
        assert_eq!(r.bytes(), 1480 + 20);
    }

    proptest! {
        #[test]
        fn any_order_reassembles(len in 1usize..6000, mtu in 68usize..1500, seed in any::<u64>(), dup in any::<bool>()) {
            let dgram = datagram(77, len);
            let mut frags = fragments(&dgram, mtu);
            // A deterministic shuffle from the seed.
            let mut s = seed | 1;
            for i in (1..frags.len()).rev() {
                s ^= s << 13; s ^= s >> 7; s ^= s << 17;
                frags.swap(i, (s % (i as u64 + 1)) as usize);
            }
            if dup && frags.len() > 1 { let f = frags[0].clone(); frags.insert(frags.len() / 2, f); }
            let mut r = Reassembler::new(Config { overlap: OverlapPolicy::DropDatagram, ..Config::default() });
            let mut out = None;
            for f in &frags {
                if let Some(d) = r.process(0, f).unwrap() { prop_assert!(out.is_none()); out = Some(d); }
            }
            prop_assert_eq!(out, Some(dgram));
            prop_assert!(r.is_empty());
            prop_assert_eq!(r.bytes(), 0);
        }

        #[test]
        fn never_panics(packets in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 0..8)) {
            let mut r = Reassembler::default();
            for (i, p) in packets.iter().enumerate() {
                let mut p = p.clone();
                if p.len() >= 20 { p[0] = 0x45; ipv4::Packet::new_unchecked(&mut p[..]).fill_checksum(); }
                let _ = r.process(i as u64, &p);
            }
            let _ = r.expire(u64::MAX);
        }
    }
}
