//! A node's virtual interfaces: which OpenVPN ends (TAP ports and TUN interfaces), PPPoE
//! sessions and PPTP ends a node has, and which IP interface each one is. How the node
//! sends and receives through them is `crate::node::vifs`.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use wire::ethernet::{self, EtherType};

use crate::tunnel::openvpn::OpenVpnEnd;
use crate::tunnel::pppoe::PppoeEnd;

/// What carries an IP interface of the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vif {
    /// OpenVPN end `k` in TUN mode.
    Tun(usize),
    /// PPPoE end `k`.
    Ppp(usize),
    /// PPTP end `k` (see `pptp_vif`).
    Pptp(usize),
}

/// The virtual interfaces of one node.
#[derive(Debug, Default)]
pub struct Vifs {
    pub openvpn: Vec<OpenVpnEnd>,
    pub pppoe: Vec<PppoeEnd>,
    pub pptp: crate::tunnel::pptp_vif::PptpVifs,
    /// Port of each PPPoE end, and its IP interface.
    pub(crate) pppoe_port: Vec<u16>,
    pub(crate) pppoe_iface: Vec<usize>,
    /// Whether each PPPoE end's IPCP result was checked against its configuration.
    pub(crate) pppoe_checked: Vec<bool>,
    /// The configured local address of each PPPoE end (what IPCP must settle on).
    pub(crate) pppoe_local: Vec<Ipv4Addr>,
    /// TAP port → OpenVPN end.
    pub(crate) tap_of_port: BTreeMap<u16, usize>,
    /// TUN interface of each OpenVPN end in TUN mode.
    pub(crate) tun_iface: BTreeMap<usize, usize>,
    pub(crate) by_iface: BTreeMap<usize, Vif>,
    /// PPPoE clients start discovery at the first wake-up.
    pub(crate) started: bool,
    /// When capturing: the frames sent and received on TAP ports, (port, time, frame),
    /// as `tcpdump -i tap0` shows them.
    pub capture: Option<Vec<(u16, u64, Vec<u8>)>>,
}

impl Vifs {
    pub fn is_empty(&self) -> bool {
        self.openvpn.is_empty() && self.pppoe.is_empty() && self.pptp.ends.is_empty()
    }

    pub(crate) fn by_iface_insert(&mut self, iface: usize, vif: Vif) {
        self.by_iface.insert(iface, vif);
    }

    /// The virtual interface carrying IP interface `iface`, if one does.
    pub fn of_iface(&self, iface: usize) -> Option<Vif> {
        self.by_iface.get(&iface).copied()
    }

    pub fn tap(&self, port: u16) -> Option<usize> {
        self.tap_of_port.get(&port).copied()
    }
}

/// Whether an Ethernet frame carries PPPoE (RFC 2516 §4: 0x8863, 0x8864).
pub fn is_pppoe(frame: &[u8]) -> bool {
    ethernet::Frame::new_checked(frame)
        .is_ok_and(|f| matches!(f.ethertype(), EtherType::PppoeDiscovery | EtherType::PppoeSession))
}
