//! Tunnels: IPsec (ESP and AH), OpenVPN over UDP and TCP, PPPoE and PPTP, each a sans-IO
//! model, and the virtual interfaces ([`vif`], [`pptp_vif`]) that make them interfaces of
//! a node.

pub mod ipsec;
pub mod openvpn;
pub mod openvpn_tcp;
pub mod pppoe;
pub mod pptp;
pub mod pptp_vif;
pub mod vif;
