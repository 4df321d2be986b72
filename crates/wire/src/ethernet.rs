//! Ethernet II and IEEE 802.3 MAC frames (IEEE 802.3 §3.1.1, §3.2).

use core::fmt;

crate::enum_with_unknown! {
    /// EtherType values (IEEE 802 numbers registry, IANA "ieee-802-numbers").
    pub enum EtherType(u16) {
        Ipv4 = 0x0800,
        Arp = 0x0806,
        /// IEEE 802.1Q customer VLAN tag.
        Vlan = 0x8100,
        Ipv6 = 0x86dd,
        /// RFC 2516 §4: PPPoE discovery stage.
        PppoeDiscovery = 0x8863,
        /// RFC 2516 §4: PPPoE session stage.
        PppoeSession = 0x8864,
        /// RFC 2637 §4.1 / RFC 1701: PPP carried in enhanced GRE.
        Ppp = 0x880b,
        /// RFC 1701: transparent Ethernet bridging, Ethernet carried in GRE.
        TransparentEthernetBridging = 0x6558,
    }
}

/// A 48-bit IEEE 802 MAC address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Address(pub [u8; 6]);

impl Address {
    pub const BROADCAST: Address = Address([0xff; 6]);

    /// Reads an address from the first six bytes of `data`; panics if shorter.
    pub fn from_bytes(data: &[u8]) -> Address {
        let mut bytes = [0u8; 6];
        bytes.copy_from_slice(&data[..6]);
        Address(bytes)
    }

    pub const fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The individual/group bit (IEEE 802 §8.2): set for multicast and broadcast.
    pub const fn is_multicast(&self) -> bool {
        self.0[0] & 0x01 != 0
    }

    pub fn is_broadcast(&self) -> bool {
        *self == Self::BROADCAST
    }

    pub const fn is_unicast(&self) -> bool {
        !self.is_multicast()
    }

    /// The universal/local bit (IEEE 802 §8.2).
    pub const fn is_local(&self) -> bool {
        self.0[0] & 0x02 != 0
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(f, "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", b[0], b[1], b[2], b[3], b[4], b[5])
    }
}
