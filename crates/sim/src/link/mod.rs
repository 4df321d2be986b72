//! Point-to-point links: full-duplex Ethernet, serial lines, the impairments a link
//! applies per frame, and PPP, which serial lines, PPPoE and PPTP carry.

pub mod ethernet;
pub mod impair;
pub mod ppp;
pub mod serial;
