//! Classical IP over ATM (RFC 2225): the state of one host's ATM interface in its
//! logical IP subnet, and the ATMARP server's table.
//!
//! * §8.2: on a PVC the far end's IP address is learnt with InATMARP (or configured:
//!   a VC-multiplexed PVC cannot carry ATMARP, so its far end is configured).
//! * §8.3/§8.5: on SVCs a client resolves a next hop by an ATMARP_Request to its LIS's
//!   ATMARP server, then calls the ATM number the reply names (SVC set-up on the first
//!   packet). The called side learns the caller's IP address with InATMARP.
//! * §8.4: the server learns the source addresses of every ATMARP_Request it receives;
//!   a request for the client's own address is its registration. It answers with an
//!   ATMARP_Reply, or an ATMARP_NAK when the target is unknown.
//! * There is no broadcast in a LIS (§4: no broadcast/multicast without MARS).
//!
//! Packets waiting for a resolution are held per next hop, at most
//! [`crate::node::ip::ARP_PENDING_LIMIT`] of them (RFC 1122 §2.3.2.2, as for ARP).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::Ipv4Addr;

use wire::atmarp::{Operation, Repr};
use wire::lane::AtmAddress;

/// The CLIP state of one ATM interface.
#[derive(Debug, Default)]
pub struct ClipState {
    /// The LIS's ATMARP server, unless this interface is the server or the LIS has none.
    pub server: Option<AtmAddress>,
    /// This interface serves ATMARP for its LIS.
    pub is_server: bool,
    /// The server's table (RFC 2225 §8.4), when `is_server`.
    pub table: BTreeMap<Ipv4Addr, AtmAddress>,
    /// Next hop → the local VC that reaches it.
    pub vc_of: BTreeMap<Ipv4Addr, usize>,
    /// ATMARP answers: next hop → its ATM number.
    pub atm_of: BTreeMap<Ipv4Addr, AtmAddress>,
    /// Packets (Ethernet-headed frames from the IP stack) waiting for a next hop.
    pub pending: BTreeMap<Ipv4Addr, VecDeque<Vec<u8>>>,
    /// Next hops with an ATMARP_Request outstanding or queued for the server VC.
    pub resolving: BTreeSet<Ipv4Addr>,
    /// Requests waiting for the VC to the server to come up.
    pub queued_requests: Vec<Ipv4Addr>,
    /// The VC to the server, once called.
    pub server_vc: Option<usize>,
}

/// What the server answers to a request from a client (RFC 2225 §8.4), learning the
/// request's source addresses first.
pub fn server_answer(table: &mut BTreeMap<Ipv4Addr, AtmAddress>, request: &Repr) -> Option<Repr> {
    if request.operation != Operation::Request {
        return None;
    }
    if let (Some(ip), Some(atm)) = (request.source_ip, request.source_atm) {
        table.insert(ip, atm);
    }
    let target = request.target_ip?;
    match table.get(&target) {
        Some(&atm) => Some(Repr {
            operation: Operation::Reply,
            source_atm: Some(atm),
            source_ip: Some(target),
            target_atm: request.source_atm,
            target_ip: request.source_ip,
        }),
        // §8.7.2: a NAK is the request with the opcode changed.
        None => Some(Repr { operation: Operation::Nak, ..*request }),
    }
}

#[cfg(test)]
mod test {
    use super::*;

    fn a(n: u8) -> AtmAddress {
        AtmAddress([n; 20])
    }

    #[test]
    fn server_registers_answers_and_naks() {
        let mut table = BTreeMap::new();
        let ip1 = Ipv4Addr::new(192, 0, 2, 1);
        let ip2 = Ipv4Addr::new(192, 0, 2, 2);
        let register = Repr {
            operation: Operation::Request,
            source_atm: Some(a(1)),
            source_ip: Some(ip1),
            target_atm: None,
            target_ip: Some(ip1),
        };
        let r = server_answer(&mut table, &register).unwrap();
        assert_eq!((r.operation, r.source_atm, r.target_ip), (Operation::Reply, Some(a(1)), Some(ip1)));
        let ask = Repr {
            operation: Operation::Request,
            source_atm: Some(a(3)),
            source_ip: Some(Ipv4Addr::new(192, 0, 2, 3)),
            target_atm: None,
            target_ip: Some(ip2),
        };
        assert_eq!(server_answer(&mut table, &ask).unwrap().operation, Operation::Nak);
        table.insert(ip2, a(2));
        let r = server_answer(&mut table, &ask).unwrap();
        assert_eq!(
            (r.operation, r.source_atm, r.source_ip, r.target_atm),
            (Operation::Reply, Some(a(2)), Some(ip2), Some(a(3)))
        );
        assert_eq!(table.len(), 3, "the asker was learnt too");
    }
}
