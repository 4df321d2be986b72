//! 802.11 glue: each BSS's medium and its members' adapters, the medium's events, frames to and
//! from the air, the AP's beacons and the air as a capture shows it.

use super::*;
use crate::link::LinkDrop;
use crate::wifi::BssEvent;
use qoslab_plan::ControlPreamble;

/// An 802.11 cell in the world: the link model, and the engine's timer of its medium.
pub(super) struct CellSlot {
    pub(super) cell: WifiCell,
    /// The medium's timer (`crate::wake`).
    pub(super) timer: WakeTimer,
    /// What the cell hands back, emptied after each use and kept for its capacity: no
    /// allocation per frame.
    pub(super) scratch: Vec<LinkEvent>,
    /// The medium's events of one wake-up, kept for its capacity as `scratch` is.
    pub(super) medium: Vec<BssEvent>,
}

impl World {
    /// The timer of the medium of `bss`: what it has to do now, then its next wake-up.
    /// Most wake-ups only move the medium on (a backoff slot, a frame's end with its Ack
    /// still to come) and hand back nothing: they are done here, with no vector taken.
    #[inline]
    pub(super) fn bss_timer(&mut self, now: u64, bss: u32) -> Result<(), RunError> {
        let slot = &mut self.bsses[bss as usize];
        if !slot.timer.fired(now) {
            return Ok(());
        }
        slot.cell.medium_events(now, &mut slot.medium);
        if !slot.medium.is_empty() {
            self.bss_medium_events(now, bss)?;
        }
        self.arm_bss_timer(bss)
    }

    /// What the medium of `bss` handed back at `now`, in order: each event to the cell,
    /// and what the cell hands back to the nodes. The events of one wake-up are few
    /// (usually a frame delivered and its sender done): reversed, then taken by `pop`,
    /// with no drain and no vector taken out of the slot (only `bss_timer` fills it, and
    /// handling an event never reaches it).
    #[inline(never)]
    fn bss_medium_events(&mut self, now: u64, bss: u32) -> Result<(), RunError> {
        self.bsses[bss as usize].medium.reverse();
        while let Some(event) = self.bsses[bss as usize].medium.pop() {
            if let Err(e) = self.bss_medium_event(now, bss, event) {
                self.bsses[bss as usize].medium.clear();
                return Err(e);
            }
        }
        Ok(())
    }

    /// One event of the medium of `bss`: to the cell, then what the cell hands back.
    #[inline(always)]
    fn bss_medium_event(&mut self, now: u64, bss: u32, event: BssEvent) -> Result<(), RunError> {
        let slot = &mut self.bsses[bss as usize];
        match slot.cell.handle(now, event, &mut slot.scratch) {
            Handled::Done => {}
            Handled::Sent(node) => self.refill_saturating(now, node)?,
            Handled::Relayed => self.arm_bss_timer(bss)?,
            Handled::InFlight(due) => {
                self.engine.schedule_at(SimTime::from_nanos(due), Event::WifiArrive { bss }).map_err(budget)?;
            }
        }
        self.cell_events(now, bss)
    }

    /// The first frame on the air of `bss` reached its receiver (the air's delay).
    pub(super) fn wifi_arrive(&mut self, now: u64, bss: u32) -> Result<(), RunError> {
        let slot = &mut self.bsses[bss as usize];
        let (to, from, mpdu) = slot.cell.take_arrival();
        if slot.cell.arrive(now, to, from, mpdu, &mut slot.scratch) {
            // The AP queued a frame to relay: its medium may want waking sooner.
            self.arm_bss_timer(bss)?;
        }
        self.cell_events(now, bss)
    }

    /// What the cell of `bss` handed back (its `scratch`, left empty with its capacity),
    /// to the nodes. Usually one event (a frame delivered, a sender done), taken without
    /// a drain; more are taken out of the slot first, so that a nested use finds it empty.
    #[inline(always)]
    fn cell_events(&mut self, now: u64, bss: u32) -> Result<(), RunError> {
        let scratch = &mut self.bsses[bss as usize].scratch;
        match scratch.len() {
            0 => Ok(()),
            1 => {
                let event = scratch.pop().expect("one event");
                self.link_event(now, event)
            }
            _ => {
                let mut out = std::mem::take(scratch);
                let done = self.link_events(now, &mut out);
                let scratch = &mut self.bsses[bss as usize].scratch;
                if scratch.capacity() == 0 {
                    *scratch = out;
                }
                done
            }
        }
    }

    /// What a link handed back: frames to the nodes' stacks, drops, senders done.
    pub(super) fn link_events(&mut self, now: u64, events: &mut Vec<LinkEvent>) -> Result<(), RunError> {
        for event in events.drain(..) {
            self.link_event(now, event)?;
        }
        Ok(())
    }

    /// One thing a link handed back.
    #[inline(always)]
    fn link_event(&mut self, now: u64, event: LinkEvent) -> Result<(), RunError> {
        match event {
            LinkEvent::Delivered { to: (node, port), frame } => self.receive(now, node, port, frame),
            LinkEvent::Dropped(drop) => {
                let LinkDrop { at: (node, port), reason, logged, carried } = *drop;
                self.record_drop_of(now, node, port, reason, logged.as_deref(), carried.as_deref());
                Ok(())
            }
            LinkEvent::Sent { node } => self.refill_saturating(now, node),
        }
    }

    /// Arms the medium's timer for its next deadline, by the slot's rule (`crate::wake`).
    pub(super) fn arm_bss_timer(&mut self, bss: u32) -> Result<(), RunError> {
        let slot = &mut self.bsses[bss as usize];
        // The medium's own timer; frames on the air have their events (`WifiArrive`).
        slot.timer.arm(&mut self.engine, slot.cell.bss.poll_at(), Event::BssTimer { bss }).map_err(budget)
    }
}

/// Builds a BSS from its configuration, and tells each member node the cipher cost of
/// its 802.11 port.
pub(super) fn bss_state(
    config: &SimConfig,
    w: &crate::config::WifiConfig,
    id: u32,
    index: usize,
    nodes: &mut [Node],
) -> Result<CellSlot, RunError> {
    let cell = wifi_cell(config, w, id, index)?;
    for (i, &(node, port)) in cell.members.iter().enumerate() {
        let cycles = &config.nodes[node as usize].cpu.cycles;
        let per_byte = match cell.adapters[i].cipher.cost() {
            CipherCost::None => 0.0,
            CipherCost::Rc4 => cycles.per_byte_rc4,
            CipherCost::Aes => cycles.per_byte_aes,
        };
        nodes[node as usize].set_port_cipher_cost(port, per_byte);
    }
    Ok(CellSlot { cell, timer: WakeTimer::IDLE, scratch: Vec::new(), medium: Vec::new() })
}

/// The 802.11 cell of the plan's link number `index` in a run of `config` (its medium,
/// with the random streams of BSS number `id`, and each member's adapter with its
/// address rules and cipher); `None` if that link is not a cell. The one constructor of
/// a cell from the plan: the world builds its BSSs with it (through `bss_state`), and
/// the real-time emulator (crates/emu) the cell it drives through the `Link` trait, so
/// that both draw the same backoffs and frame errors.
pub fn cell_of_plan(config: &SimConfig, index: usize) -> Result<Option<WifiCell>, RunError> {
    let Some(LinkConfig::Wifi(w)) = config.links.get(index) else { return Ok(None) };
    // The BSS's number: the cells before it in the plan (as `build_links` counts them).
    let id = config.links[..index].iter().filter(|l| matches!(l, LinkConfig::Wifi(_))).count() as u32;
    wifi_cell(config, w, id, index).map(Some)
}

/// The cell of `w`, the plan's link `index` and BSS number `id`.
fn wifi_cell(config: &SimConfig, w: &crate::config::WifiConfig, id: u32, index: usize) -> Result<WifiCell, RunError> {
    let field = |f: &str| format!("links[{index}].{f}");
    let members: Vec<(u32, u16)> = w.ap.iter().chain(w.stations.iter()).map(|r| (r.node, r.port)).collect();
    let mut params = bss_params(w, members.len(), index)?;
    let foreign: ForeignSource = w.foreign_source;
    let cipher = LinkCipher::from_security(w.security);
    let macs: Vec<Mac> = members.iter().map(|&(n, p)| Mac(config.nodes[n as usize].ports[p as usize].mac)).collect();
    let has_ap = w.ap.is_some();
    if let Some(channel) = w.channel.filter(|c| !(1..=14).contains(c)) {
        return Err(RunError::Config(ConfigError {
            field: field("channel"),
            message: format!("a 2.4 GHz channel is 1 to 14, not {channel}"),
        }));
    }
    if let Some(b) = &w.beacon {
        params.beacon = Some(beacon_params(config, w, b, &params.phy, index)?);
    }
    let adapters = adapters(w, &macs, has_ap, foreign, &cipher);
    let mut bss = Bss::new(params, RunSeed(config.seed), u64::from(id));
    if config.capture {
        bss.capture_air();
    }
    Ok(WifiCell::new(w.name.clone(), w.channel, bss, members, adapters, macs, has_ap, w.wds, w.relay, w.delay_ns))
}

/// The medium's parameters from the cell's configuration (standard, preambles, access,
/// RTS threshold, retries, who hears whom), each refusal at its field.
fn bss_params(w: &crate::config::WifiConfig, members: usize, index: usize) -> Result<BssParams, RunError> {
    let field = |f: &str| format!("links[{index}].{f}");
    let mut params = BssParams::from_plan(w.standard, w.preamble, w.rate_bps, members, w.queue_frames)
        .map_err(|message| RunError::Config(ConfigError { field: field("standard"), message }))?;
    params.member_queue_frames = w.member_queue_frames.clone();
    params.phy.control_preamble = match w.control_preamble {
        ControlPreamble::Bss => params.phy.preamble,
        ControlPreamble::Long => crate::wifi::Preamble::Long,
    };
    params.control_preamble_long = w.control_preamble == ControlPreamble::Long;
    if !w.member_preamble.is_empty() && w.member_preamble.len() != members {
        return Err(RunError::Config(ConfigError {
            field: field("member_preamble"),
            message: format!("{} preambles for {} members", w.member_preamble.len(), members),
        }));
    }
    // A short preamble where the standard has none is refused by the plan's check
    // (`WifiStandard::preamble_problem`).
    params.member_preamble = w.member_preamble.clone();
    params.access = w.access;
    params.rts_threshold = w.rts_threshold as usize;
    params.short_retry_limit = w.retry_limit;
    params.link_acks = w.link_acks;
    params.hears = w.hears.clone();
    params.frame_error_rate = w.frame_error_rate.clone();
    params.check().map_err(|message| {
        let key = message.split(':').next().filter(|k| !k.contains(' ')).unwrap_or("hears").to_string();
        RunError::Config(ConfigError { field: field(&key), message })
    })?;
    Ok(params)
}

/// The AP's beacons: rate, interval and the Beacon frame, refused where the standard
/// does not allow them.
fn beacon_params(
    config: &SimConfig,
    w: &crate::config::WifiConfig,
    b: &crate::config::BeaconConfig,
    phy: &crate::wifi::phy::PhyParams,
    index: usize,
) -> Result<BeaconParams, RunError> {
    let field = |f: &str| format!("links[{index}].{f}");
    let has_ap = w.ap.is_some();
    if !has_ap {
        return Err(RunError::Config(ConfigError {
            field: field("beacon"),
            message: "beacons need an access point".into(),
        }));
    }
    let rate = b
        .rate_bps
        .is_multiple_of(1000)
        .then(|| crate::wifi::Rate::from_kbps(b.rate_bps / 1000))
        .flatten()
        .filter(|r| phy.supports(*r))
        .ok_or_else(|| {
            RunError::Config(ConfigError {
                field: field("beacon.rate_bps"),
                message: format!("{} bit/s is not a rate of {}", b.rate_bps, qoslab_plan::name_of(&w.standard)),
            })
        })?;
    if b.interval_ns == 0 || !b.interval_ns.is_multiple_of(TU_NS) || b.interval_ns / TU_NS > u64::from(u16::MAX) {
        return Err(RunError::Config(ConfigError {
            field: field("beacon.interval_ns"),
            message: format!(
                "the beacon interval is a whole number of TU (1024 us) from 1 to 65535, not {} ns",
                b.interval_ns
            ),
        }));
    }
    if b.ssid.len() > 32 {
        return Err(RunError::Config(ConfigError {
            field: field("beacon.ssid"),
            message: "an SSID has at most 32 bytes (IEEE 802.11-2020 §9.4.2.2)".into(),
        }));
    }
    let ap_mac =
        Mac(config.nodes[w.ap.expect("has an AP").node as usize].ports[w.ap.expect("has an AP").port as usize].mac);
    let mpdu = beacon_mpdu(w, b, ap_mac, phy);
    Ok(BeaconParams { interval: b.interval_ns, rate, mpdu })
}

/// Each member's adapter: the AP, stations, or ad hoc members, with the cell's address
/// rules and link cipher.
fn adapters(
    w: &crate::config::WifiConfig,
    macs: &[Mac],
    has_ap: bool,
    foreign: ForeignSource,
    cipher: &LinkCipher,
) -> Vec<Adapter> {
    // An IBSS's BSSID is locally administered and random in the standard (§11.1.4);
    // the first station's MAC with the U/L bit set stands in, deterministically.
    let bssid = if has_ap {
        macs[0]
    } else {
        Mac([0x02, macs[0].0[1], macs[0].0[2], macs[0].0[3], macs[0].0[4], macs[0].0[5]])
    };
    macs.iter()
        .enumerate()
        .map(|(i, _)| {
            let role = if has_ap && i == 0 {
                WifiRole::AccessPoint { bssid }
            } else if has_ap {
                WifiRole::Station { mac: macs[i], bssid }
            } else {
                WifiRole::AdHoc { mac: macs[i], bssid }
            };
            Adapter::new(role, foreign, w.wds_members.get(i).copied().unwrap_or(w.wds), cipher.clone())
        })
        .collect()
}

/// 1 TU = 1024 µs (IEEE 802.11-2020 §3.1), in ns.
pub(super) const TU_NS: u64 = 1_024_000;

/// The AP's Beacon frame (IEEE 802.11-2020 §9.3.3.2, Table 9-27), no FCS: the header to
/// the broadcast address from the BSSID, Timestamp (written at transmission), Beacon
/// Interval (TU), Capability (ESS; Privacy with a cipher; Short Preamble; Short Slot
/// Time in an ERP-only cell), SSID, Supported Rates (basic ones flagged, §9.4.2.3), the
/// DS Parameter Set when the channel is known, a TIM with DTIM period 1 and no buffered
/// frames, and for 802.11g the ERP element and Extended Supported Rates.
pub(super) fn beacon_mpdu(
    w: &crate::config::WifiConfig,
    b: &crate::config::BeaconConfig,
    bssid: Mac,
    phy: &crate::wifi::PhyParams,
) -> Vec<u8> {
    use crate::wifi::{Preamble, Rate, Standard};
    let mut f = vec![0x80, 0x00, 0, 0];
    f.extend_from_slice(&[0xff; 6]);
    f.extend_from_slice(&bssid.0);
    f.extend_from_slice(&bssid.0);
    f.extend_from_slice(&[0, 0]); // Sequence Control, written at the TBTT
    f.extend_from_slice(&[0; 8]); // Timestamp, written at transmission
    f.extend_from_slice(&((b.interval_ns / TU_NS) as u16).to_le_bytes());
    let mut capability: u16 = 0x0001; // ESS (§9.4.1.4)
    if w.security != qoslab_plan::WifiSecurity::Open {
        capability |= 0x0010; // Privacy
    }
    if phy.preamble == Preamble::Short {
        capability |= 0x0020; // Short Preamble
    }
    if phy.standard == Standard::Dot11g && phy.slot == crate::wifi::phy::SHORT_SLOT {
        capability |= 0x0400; // Short Slot Time
    }
    f.extend_from_slice(&capability.to_le_bytes());
    f.push(0); // SSID
    f.push(b.ssid.len() as u8);
    f.extend_from_slice(b.ssid.as_bytes());
    let mut rates: Vec<Rate> = match (phy.standard, w.standard) {
        (Standard::Dot11g, _) => Rate::DSSS_CCK.into_iter().chain(Rate::ERP_OFDM).collect(),
        (_, qoslab_plan::WifiStandard::Dot11) => vec![Rate::Dsss1, Rate::Dsss2],
        _ => Rate::DSSS_CCK.to_vec(),
    };
    rates.sort_by_key(|r| r.kbps());
    let octets: Vec<u8> =
        rates.iter().map(|r| (r.kbps() / 500) as u8 | if phy.basic_rates.contains(r) { 0x80 } else { 0 }).collect();
    let (supported, extended) = octets.split_at(octets.len().min(8));
    f.push(1); // Supported Rates
    f.push(supported.len() as u8);
    f.extend_from_slice(supported);
    if let Some(channel) = w.channel {
        f.extend_from_slice(&[3, 1, channel]); // DS Parameter Set
    }
    f.extend_from_slice(&[5, 4, 0, 1, 0, 0]); // TIM: DTIM count 0, period 1, no traffic buffered
    if phy.standard == Standard::Dot11g {
        let non_erp = phy.protection != crate::wifi::Protection::None;
        f.extend_from_slice(&[42, 1, if non_erp { 0x03 } else { 0x00 }]); // ERP: NonERP_Present, Use_Protection
        if !extended.is_empty() {
            f.push(50); // Extended Supported Rates
            f.push(extended.len() as u8);
            f.extend_from_slice(extended);
        }
    }
    f
}

/// A PPDU on the air as a LINKTYPE_IEEE802_11_RADIOTAP record: a radiotap header
/// (radiotap.org: version 0; Flags with short preamble, Rate in 500 kb/s, and Channel
/// when known) and the MPDU without FCS; control frames are built from their fields
/// (IEEE 802.11-2020 §9.3.1: RTS FC+Duration+RA+TA, CTS and Ack FC+Duration+RA).
pub(super) fn air_record(frame: &AirFrame, macs: &[Mac], channel: Option<u8>) -> Vec<u8> {
    use crate::wifi::phy::ModulationClass;
    let mut present: u32 = (1 << 1) | (1 << 2); // Flags, Rate
    if channel.is_some() {
        present |= 1 << 3;
    }
    let mut out = vec![0u8, 0, 0, 0];
    out.extend_from_slice(&present.to_le_bytes());
    out.push(if frame.short_preamble { 0x02 } else { 0x00 }); // Flags
    out.push((frame.rate.kbps() / 500) as u8); // Rate
    if let Some(ch) = channel {
        // Offset 10 is 2-aligned, as the Channel field needs.
        let mhz: u16 = if ch == 14 { 2484 } else { 2407 + 5 * u16::from(ch) };
        let modulation: u16 = match frame.rate.class() {
            ModulationClass::DsssCck => 0x0020, // CCK
            ModulationClass::ErpOfdm => 0x0040, // OFDM
        };
        out.extend_from_slice(&mhz.to_le_bytes());
        out.extend_from_slice(&(0x0080 | modulation).to_le_bytes()); // 2 GHz spectrum
    }
    let len = out.len() as u16;
    out[2..4].copy_from_slice(&len.to_le_bytes());
    let duration = frame.duration_us.to_le_bytes();
    let ra = |m: Option<usize>| macs[m.unwrap_or(frame.sender)].0;
    match frame.kind {
        FrameKind::Data => out.extend_from_slice(frame.mpdu.as_deref().unwrap_or_default()),
        FrameKind::Rts => {
            out.extend_from_slice(&[0xb4, 0x00, duration[0], duration[1]]);
            out.extend_from_slice(&ra(frame.receiver));
            out.extend_from_slice(&macs[frame.sender].0);
        }
        FrameKind::Cts | FrameKind::CtsToSelf => {
            out.extend_from_slice(&[0xc4, 0x00, duration[0], duration[1]]);
            out.extend_from_slice(&ra(frame.receiver));
        }
        FrameKind::Ack => {
            out.extend_from_slice(&[0xd4, 0x00, duration[0], duration[1]]);
            out.extend_from_slice(&ra(frame.receiver));
        }
    }
    out
}
