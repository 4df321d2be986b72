//! The discrete-event engine and the network models (to be written).

pub mod wifi;
