//! IPCP's IP-Address option (RFC 1332 §3.3): how a PPPoE server gives its client an
//! address.
//!
//! Standards: RFC 1332 §2 (IPCP reuses the LCP automaton and codes 1-7), §3.3 (option
//! 3, IP-Address, 6 octets; a request of 0.0.0.0 asks the peer to supply one, which it
//! does with a Configure-Nak carrying the address). The deprecated IP-Addresses (1)
//! and VJ compression (2) options, and the DNS options of RFC 1877, are rejected.

use std::net::Ipv4Addr;

use wire::ppp::Code;

use super::fsm::Options;

/// RFC 1332 §3.3: the IP-Address option's type.
pub const IP_ADDRESS: u8 = 3;

/// One end's IPCP options.
#[derive(Debug, Clone)]
pub struct IpcpOptions {
    /// Our address; 0.0.0.0 asks the peer for one.
    pub local: Ipv4Addr,
    /// The address we give a peer that asks (a server's pool of one).
    pub assign: Option<Ipv4Addr>,
    /// The peer's address, once its request was acknowledged.
    pub peer: Option<Ipv4Addr>,
}

fn ip_address(addr: Ipv4Addr) -> Vec<u8> {
    let mut option = vec![IP_ADDRESS, 6];
    option.extend_from_slice(&addr.octets());
    option
}

impl Options for IpcpOptions {
    fn request(&self) -> Vec<u8> {
        ip_address(self.local)
    }

    fn check(&mut self, data: &[u8], reject_naks: bool) -> Result<(), (Code, Vec<u8>)> {
        let (mut nak, mut reject) = (Vec::new(), Vec::new());
        let mut peer = None;
        let mut rest = data;
        while rest.len() >= 2 {
            let len = usize::from(rest[1]).clamp(2, rest.len());
            let (option, tail) = rest.split_at(len);
            rest = tail;
            if option[0] != IP_ADDRESS || option.len() != 6 {
                reject.extend_from_slice(option);
                continue;
            }
            let addr = Ipv4Addr::new(option[2], option[3], option[4], option[5]);
            match self.assign {
                Some(a) if a != addr => nak.extend_from_slice(&ip_address(a)),
                // Nothing to give: a peer without an address is refused.
                None if addr.is_unspecified() => reject.extend_from_slice(option),
                _ => peer = Some(addr),
            }
        }
        if !reject.is_empty() {
            return Err((Code::ConfigureReject, reject));
        }
        if !nak.is_empty() {
            return Err(if reject_naks { (Code::ConfigureReject, data.to_vec()) } else { (Code::ConfigureNak, nak) });
        }
        self.peer = peer;
        Ok(())
    }

    fn acked(&mut self, _data: &[u8]) {}

    fn refused(&mut self, nak: bool, data: &[u8]) {
        // RFC 1332 §3.3: a Nak's IP-Address is the address the peer wants us to use.
        if nak && data.len() >= 6 && data[0] == IP_ADDRESS && data[1] == 6 {
            self.local = Ipv4Addr::new(data[2], data[3], data[4], data[5]);
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn server_naks_zero_with_the_assigned_address() {
        let mut server =
            IpcpOptions { local: Ipv4Addr::new(192, 0, 2, 1), assign: Some(Ipv4Addr::new(192, 0, 2, 2)), peer: None };
        let zero = [3, 6, 0, 0, 0, 0];
        assert_eq!(server.check(&zero, false), Err((Code::ConfigureNak, vec![3, 6, 192, 0, 2, 2])));
        let mut client = IpcpOptions { local: Ipv4Addr::UNSPECIFIED, assign: None, peer: None };
        client.refused(true, &[3, 6, 192, 0, 2, 2]);
        assert_eq!(client.request(), [3, 6, 192, 0, 2, 2]);
        assert_eq!(server.check(&client.request(), false), Ok(()));
        assert_eq!(server.peer, Some(Ipv4Addr::new(192, 0, 2, 2)));
        // The client acknowledges the server's own address and rejects VJ compression.
        assert_eq!(client.check(&server.request(), false), Ok(()));
        let vj = [2, 6, 0x00, 0x2d, 15, 1];
        assert_eq!(client.check(&vj, false), Err((Code::ConfigureReject, vj.to_vec())));
    }
}
