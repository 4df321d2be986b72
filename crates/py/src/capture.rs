//! Writes a run's captures as pcap files while it runs: one file per capture point,
//! its records appended as the simulator sees the frames, so that memory holds only a
//! small buffer per file whatever the capture's size.
//!
//! The user sets the snapshot length (each record keeps at most that many bytes of its
//! frame, libpcap's incl_len = min(orig_len, snaplen)) and a limit on the files' total
//! size: the record that would pass it, and every one after it, is left out, so the
//! files stay valid and end at the same instant; the results say where the cut was.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use sim::capture::{CaptureKind, CaptureSink};
use sim::results::Results;
use sim::results::{CaptureCut, CaptureSummary};
use wire::pcap::{self, LinkType};

/// Bytes a file's records wait in memory before they are written.
const BUFFER_BYTES: usize = 64 * 1024;
/// Bytes all files' records may wait in memory together: past it, every buffer is
/// written (a network of thousands of ports keeps at most this much).
const BUFFERED_TOTAL: usize = 16 * 1024 * 1024;
/// Files kept open between writes; the others are opened to append each time (the
/// usual limit of open files per process is 1,024, and a network may have more ports).
const OPEN_FILES: usize = 256;

struct Point {
    name: String,
    path: PathBuf,
    pending: Vec<u8>,
    file: Option<File>,
}

/// The pcap files of one run, under one directory.
pub struct PcapDir {
    dir: PathBuf,
    points: Vec<Point>,
    buffered: usize,
    /// Frames seen, over all points (written or not).
    seen: u64,
    summary: CaptureSummary,
}

impl PcapDir {
    /// Files go under `dir` (which exists), each with snapshot length `snaplen` (> 0);
    /// with `max_bytes`, their total size stays at or below it, file headers included
    /// (every file gets its 24-byte header, so the limit holds once it is above 24 bytes
    /// per file).
    pub fn new(dir: &Path, snaplen: u32, max_bytes: Option<u64>) -> PcapDir {
        PcapDir {
            dir: dir.to_path_buf(),
            points: Vec::new(),
            buffered: 0,
            seen: 0,
            summary: CaptureSummary { snaplen, max_bytes, ..CaptureSummary::default() },
        }
    }

    fn flush_point(&mut self, index: usize) -> Result<(), String> {
        let keep_open = index < OPEN_FILES;
        let point = &mut self.points[index];
        if point.pending.is_empty() {
            return Ok(());
        }
        let failed = |e: std::io::Error| format!("{}: {e}", point.path.display());
        let mut file = match point.file.take() {
            Some(f) => f,
            None => OpenOptions::new().append(true).open(&point.path).map_err(failed)?,
        };
        file.write_all(&point.pending).map_err(failed)?;
        self.buffered -= point.pending.len();
        point.pending.clear();
        if point.pending.capacity() > BUFFER_BYTES * 2 {
            point.pending.shrink_to(BUFFER_BYTES);
        }
        if keep_open {
            point.file = Some(file);
        }
        Ok(())
    }

    fn flush_all(&mut self) -> Result<(), String> {
        (0..self.points.len()).try_for_each(|i| self.flush_point(i))
    }
}

impl CaptureSink for PcapDir {
    fn open(&mut self, name: &str, kind: CaptureKind) -> Result<(), String> {
        let link = match kind {
            CaptureKind::Ethernet => LinkType::Ethernet,
            CaptureKind::Dot11Radiotap => LinkType::Ieee80211Radiotap,
            CaptureKind::ErfAal5 => LinkType::Unknown(197), // LINKTYPE_ERF
        };
        let path = self.dir.join(format!("{name}.pcap"));
        let file = File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let header = pcap::file_header(link, self.summary.snaplen);
        let keep_open = self.points.len() < OPEN_FILES;
        self.points.push(Point {
            name: name.to_string(),
            path,
            pending: header.to_vec(),
            file: keep_open.then_some(file),
        });
        self.buffered += header.len();
        self.summary.files += 1;
        self.summary.bytes += header.len() as u64;
        Ok(())
    }

    fn frame(&mut self, point: usize, time_ns: u64, frame: &[u8]) -> Result<(), String> {
        self.seen += 1;
        if self.summary.cut.is_some() {
            return Ok(());
        }
        let (header, captured) = pcap::record_header(time_ns, frame.len(), self.summary.snaplen);
        let size = (header.len() + captured) as u64;
        if self.summary.max_bytes.is_some_and(|max| self.summary.bytes + size > max) {
            self.summary.cut = Some(CaptureCut { time_ns, frame: self.seen, point: self.points[point].name.clone() });
            return Ok(());
        }
        let pending = &mut self.points[point].pending;
        pending.extend_from_slice(&header);
        pending.extend_from_slice(&frame[..captured]);
        let waiting = pending.len();
        self.buffered += header.len() + captured;
        self.summary.frames += 1;
        self.summary.bytes += size;
        self.summary.truncated += u64::from(captured < frame.len());
        if waiting >= BUFFER_BYTES {
            self.flush_point(point)?;
        }
        if self.buffered >= BUFFERED_TOTAL {
            self.flush_all()?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>, results: &mut Results) -> Result<(), String> {
        self.flush_all()?;
        results.capture = Some(std::mem::take(&mut self.summary));
        Ok(())
    }
}

impl Drop for PcapDir {
    /// A run stopped early (a budget) keeps what it captured so far.
    fn drop(&mut self) {
        let _ = self.flush_all();
    }
}
