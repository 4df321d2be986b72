//! PPP's control protocols as sans-IO state machines (RFC 1661, RFC 1994, RFC 1334,
//! RFC 1332), for PPP links carried by PPPoE (see `pppoe`).
//!
//! - [`fsm`]: the option negotiation automaton of RFC 1661 §4 that LCP and IPCP share.
//! - [`lcp`]: LCP's options (MRU, Authentication-Protocol, Magic-Number).
//! - [`auth`]: CHAP with MD5 (RFC 1994) and PAP (RFC 1334).
//! - [`ipcp`]: IPCP's IP-Address option (RFC 1332 §3.3).
//! - [`link`]: the phases of a link (RFC 1661 §3): Establish, Authenticate, Network.
//!
//! The bytes of every packet come from `wire::ppp`; nothing here reads a clock.

pub mod auth;
pub mod fsm;
pub mod ipcp;
pub mod lcp;
pub mod link;

pub use link::{Phase, PppLink, PppOut};
