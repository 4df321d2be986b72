//! The configuration of one adaptive router: the plan's type (crates/plan), and the
//! link ARQ it configures.

use wire::linkarq;

use super::link_arq::ArqConfig;

/// One adaptive upstream between two routers (the plan's type).
pub use qoslab_plan::AdaptiveConfig;

/// The link ARQ of an adaptive upstream, from its plan.
pub(super) fn arq_config(config: &AdaptiveConfig) -> ArqConfig {
    ArqConfig {
        initial_timeout_ns: config.initial_timeout_ns,
        max_timeout_ns: config.max_timeout_ns,
        max_attempts: config.max_attempts,
        ack_len: linkarq::HEADER_LEN as u32,
        ..ArqConfig::default()
    }
}
