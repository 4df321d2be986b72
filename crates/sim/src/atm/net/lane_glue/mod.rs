//! LANE and MPOA on the VCs of [`AtmNet`]: the client's join, LE_ARP, the BUS, data
//! direct VCCs, MPOA shortcuts. The protocol state and decisions are in
//! [`crate::atm::lane`]; this child of `net` calls, sends and receives.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use wire::ethernet::{self, Address as Mac, EtherType};
use wire::lane::{flags, AtmAddress, ControlFrame, ControlRepr, LanDestination, LanType, MaxFrameSize, Opcode, Status};
use wire::nhrp;

use super::{AtmEvent, AtmNet, AtmOut, Reasm, Vc, VcState};
use crate::atm::lane::{self, sel, Bus, Lec, LecPhase, LesArp, Mpc, VcRole};
use crate::config::{ConfigError, NodeConfig};

/// The RFC 2684 §5.1 LLC/SNAP header of a routed IPv4 PDU (on MPOA shortcuts).
const LLC_IPV4: [u8; 8] = [0xaa, 0xaa, 0x03, 0, 0, 0, 0x08, 0x00];

fn mac_of(d: LanDestination) -> Option<Mac> {
    match d {
        LanDestination::Mac(m) => Some(m),
        _ => None,
    }
}

fn lan_mac(m: Mac) -> LanDestination {
    LanDestination::Mac(m)
}

fn opcode_name(op: Opcode) -> &'static str {
    match op {
        Opcode::ConfigureRequest => "LE_CONFIGURE_REQUEST",
        Opcode::ConfigureResponse => "LE_CONFIGURE_RESPONSE",
        Opcode::JoinRequest => "LE_JOIN_REQUEST",
        Opcode::JoinResponse => "LE_JOIN_RESPONSE",
        Opcode::ArpRequest => "LE_ARP_REQUEST",
        Opcode::ArpResponse => "LE_ARP_RESPONSE",
        Opcode::FlushRequest => "LE_FLUSH_REQUEST",
        Opcode::FlushResponse => "LE_FLUSH_RESPONSE",
        _ => "LE control",
    }
}

fn ipv4_dst(frame: &[u8]) -> Option<Ipv4Addr> {
    if frame.len() < ethernet::HEADER_LEN + 20
        || u16::from_be_bytes([frame[12], frame[13]]) != u16::from(EtherType::Ipv4)
    {
        return None;
    }
    let d = &frame[ethernet::HEADER_LEN + 16..ethernet::HEADER_LEN + 20];
    Some(Ipv4Addr::new(d[0], d[1], d[2], d[3]))
}

/// Holds `frame` for `dst` until its data-direct VCC (or flush) is ready; counts it in
/// `counter`, or drops it when the queue is full.
fn hold(l: &mut Lec, dst: Mac, frame: Vec<u8>, counter: &mut u64, node: u32, port: u16, out: &mut AtmOut) {
    let q = l.pending.entry(dst).or_default();
    if q.len() >= lane::PENDING_LIMIT {
        out.drops.push((
            node,
            Some(port),
            format!("LE client's queue for {dst} full while its data-direct VCC is set up"),
            frame.get(14..).map(<[u8]>::to_vec),
        ));
        return;
    }
    q.push_back(frame);
    *counter += 1;
}

mod client;
mod init;
mod mpoa;
mod server;

impl AtmNet {}
