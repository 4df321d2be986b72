//! The ATM part of a simulation's configuration: the plan's types (`qoslab_plan::atm`),
//! re-exported under their old paths.

pub use qoslab_plan::atm::{
    AtmConfig, AtmLinkConfig, CategoryQueues, CrossConnect, LisConfig, PvcConfig, ServiceCategory, SwitchConfig, VcEnd,
    DEFAULT_RDF, DEFAULT_RIF,
};
