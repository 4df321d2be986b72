//! Captures: the frames each capture point sees (a port, an 802.11 medium, an ATM
//! port's AAL5 PDUs), handed to a [`CaptureSink`] the moment they are seen.
//!
//! The world stays sans-IO: it never opens a file; the sink decides where frames go
//! (crates/py writes pcap files as the run goes, [`Memory`] keeps them for tests). A
//! run's memory thus does not grow with its capture: before, every frame was held until
//! the end (a 120-s run at 90 Mb/s kept 2.7 GB).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::results::{Capture, Frames, Results};

/// What a capture point's records are: its pcap link type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptureKind {
    /// Ethernet II frames without FCS (LINKTYPE_ETHERNET, 1): a port.
    Ethernet,
    /// A radiotap header and the 802.11 MAC frame without FCS, each PPDU once at its
    /// start (LINKTYPE_IEEE802_11_RADIOTAP, 127): an 802.11 medium.
    Dot11Radiotap,
    /// ERF records of type AAL5 (LINKTYPE_ERF, 197): an ATM port's CPCS-PDUs.
    ErfAal5,
}

/// Where captured frames go. Points are numbered from 0 in the order they are opened:
/// every port of every node (node order, then port order) and every 802.11 medium
/// before the first event, an ATM port's AAL5 point at its first PDU.
pub trait CaptureSink {
    /// A new capture point; `name` is its file name without extension
    /// (`<node>-<port>`, `<wifi link>-air`, `<node>-<port>-aal5`).
    fn open(&mut self, name: &str, kind: CaptureKind) -> Result<(), String>;
    /// A frame seen at `point` at `time_ns`, in the order the point saw them. An error
    /// (the sink cannot write) stops the run.
    fn frame(&mut self, point: usize, time_ns: u64, frame: &[u8]) -> Result<(), String>;
    /// The run ended: write what is pending and say in `results` what was captured.
    fn finish(self: Box<Self>, results: &mut Results) -> Result<(), String>;
}

/// What a run's capture files hold (`capture` in the results JSON, docs/metrics.md
/// "Capture"): written by a sink that writes files.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct CaptureSummary {
    /// Files written (one per capture point).
    pub files: u64,
    /// Records written, over all files.
    pub frames: u64,
    /// Records whose frame was longer than `snaplen` and is cut to it.
    pub truncated: u64,
    /// Bytes of all files: a 24-byte file header each, a 16-byte record header and the
    /// captured bytes per record.
    pub bytes: u64,
    /// The snapshot length of every file (its header's snaplen field).
    pub snaplen: u32,
    /// The limit on `bytes` (`--pcap-max-size`), if one was set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
    /// Where the capture stopped because the next record would have passed `max_bytes`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut: Option<CaptureCut>,
}

/// The first record a size limit kept out; nothing after it was written either.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CaptureCut {
    /// When its frame was seen, ns since the start of the run.
    pub time_ns: u64,
    /// Its number among all the frames seen, over all points, from 1 (so
    /// `frame - 1` were written before the cut).
    pub frame: u64,
    /// The capture point (file name without extension) that saw it.
    pub point: String,
}

/// A sink that keeps every frame in memory, for `Results::captures` (tests; files
/// are written by a streaming sink).
#[derive(Debug, Default)]
pub struct Memory {
    captures: Vec<Capture>,
}

impl CaptureSink for Memory {
    fn open(&mut self, name: &str, kind: CaptureKind) -> Result<(), String> {
        self.captures.push(Capture {
            name: name.to_string(),
            dot11: kind == CaptureKind::Dot11Radiotap,
            erf: kind == CaptureKind::ErfAal5,
            frames: Frames::new(),
        });
        Ok(())
    }

    fn frame(&mut self, point: usize, time_ns: u64, frame: &[u8]) -> Result<(), String> {
        self.captures[point].frames.push((time_ns, frame.to_vec()));
        Ok(())
    }

    fn finish(self: Box<Self>, results: &mut Results) -> Result<(), String> {
        results.captures = self.captures;
        Ok(())
    }
}

/// The world's side of a capture: the sink, and which point each source of frames is.
pub(crate) struct Capturing {
    sink: Box<dyn CaptureSink>,
    /// Point of each node's first port: port `p` of node `n` is `port_base[n] + p`.
    port_base: Vec<usize>,
    /// Point of the first 802.11 medium: medium `b` is `air_base + b`.
    air_base: usize,
    /// ATM ports' AAL5 points, opened at each one's first PDU: (node, port) → point.
    atm: BTreeMap<(u32, u16), usize>,
    opened: usize,
}

impl Capturing {
    /// Opens a point per port (`ports`: each node's port names, in order) and per
    /// 802.11 medium (`media`: their names).
    pub(crate) fn new(
        mut sink: Box<dyn CaptureSink>,
        ports: &[Vec<String>],
        media: &[String],
    ) -> Result<Capturing, String> {
        let mut port_base = Vec::with_capacity(ports.len());
        let mut opened = 0;
        for names in ports {
            port_base.push(opened);
            for name in names {
                sink.open(name, CaptureKind::Ethernet)?;
                opened += 1;
            }
        }
        let air_base = opened;
        for name in media {
            sink.open(&format!("{name}-air"), CaptureKind::Dot11Radiotap)?;
            opened += 1;
        }
        Ok(Capturing { sink, port_base, air_base, atm: BTreeMap::new(), opened })
    }

    /// A frame sent or received on port `port` of node `node`.
    #[inline]
    pub(crate) fn port(&mut self, node: u32, port: u16, time_ns: u64, frame: &[u8]) -> Result<(), String> {
        self.sink.frame(self.port_base[node as usize] + usize::from(port), time_ns, frame)
    }

    /// A PPDU put on 802.11 medium `bss`.
    pub(crate) fn air(&mut self, bss: usize, time_ns: u64, record: &[u8]) -> Result<(), String> {
        self.sink.frame(self.air_base + bss, time_ns, record)
    }

    /// An ERF AAL5 record of ATM port `port` of node `node`; `name` names its point the
    /// first time.
    pub(crate) fn atm(
        &mut self,
        node: u32,
        port: u16,
        name: impl FnOnce() -> String,
        time_ns: u64,
        record: &[u8],
    ) -> Result<(), String> {
        let point = match self.atm.get(&(node, port)) {
            Some(&p) => p,
            None => {
                self.sink.open(&name(), CaptureKind::ErfAal5)?;
                self.atm.insert((node, port), self.opened);
                self.opened += 1;
                self.opened - 1
            }
        };
        self.sink.frame(point, time_ns, record)
    }

    /// The run ended: the sink writes what is pending and fills in `results`.
    pub(crate) fn finish(self, results: &mut Results) -> Result<(), String> {
        self.sink.finish(results)
    }
}
