//! Internet Protocol version 4 (RFC 791).

/// An IPv4 address; the standard library's type, so that callers need no conversion.
pub type Address = std::net::Ipv4Addr;

crate::enum_with_unknown! {
    /// IANA "protocol-numbers" (RFC 791 §3.1, the Protocol field).
    pub enum Protocol(u8) {
        Icmp = 1,
        Tcp = 6,
        Udp = 17,
        /// RFC 2003: IP in IP.
        IpIp = 4,
        /// RFC 2784 / RFC 2637: GRE and enhanced GRE.
        Gre = 47,
        /// RFC 4303: IPsec Encapsulating Security Payload.
        Esp = 50,
        /// RFC 4302: IPsec Authentication Header.
        Ah = 51,
    }
}
