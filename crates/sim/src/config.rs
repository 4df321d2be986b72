//! The simulator's input: the typed network plan of the `qoslab-plan` crate.
//!
//! The plan's types moved to `crates/plan` (issue 16) so that every backend reads one
//! definition; this module re-exports them under their old paths, so `crate::config::X`
//! keeps working while the rest of the crate moves to `qoslab_plan::X`.

pub use qoslab_plan::node::*;
pub use qoslab_plan::tunnel::*;
pub use qoslab_plan::{
    flow::*, from_json, from_name, link::*, name_of, plan_schema, BudgetConfig, ConfigError, SimConfig, WindowConfig,
    PLAN_SCHEMA,
};
