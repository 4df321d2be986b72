//! The PPTP ends of a node, and the IP interface each one is. How the node sends and
//! receives through them is `crate::node::pptp_vifs`.

use std::net::Ipv4Addr;

use crate::tunnel::pptp::PptpEnd;

/// The PPTP ends of one node.
#[derive(Debug, Default)]
pub struct PptpVifs {
    pub ends: Vec<PptpEnd>,
    pub(crate) iface: Vec<usize>,
    /// Whether each end's IPCP result was checked against its configuration.
    pub(crate) checked: Vec<bool>,
    /// The configured PPP address of each end (what IPCP must settle on).
    pub(crate) ppp_local: Vec<Ipv4Addr>,
    /// The TCP initial sequence number of each end (seeded).
    pub(crate) iss: Vec<u32>,
}
