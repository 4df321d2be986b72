//! Test traffic: the probe every test datagram carries ([`probe`]), the sources that send
//! them ([`source`]), and what the receivers count ([`stats`]).

pub mod probe;
pub mod source;
pub mod stats;
