//! qoslab's network plan: the typed description of a network and its traffic that the
//! lowering (`qoslab.lower`, Python) writes from a scenario and every backend reads.
//!
//! Nodes with their ports, MAC and IP addresses and routes; links between ports; tunnel
//! ends; traffic and its measurement windows. Every reference is an index (a node's
//! position in `nodes`, a port's in its node's `ports`), every default is resolved by the
//! lowering, times are integer nanoseconds, rates bit/s, sizes octets. A plan the
//! simulator cannot run is refused with a message naming the field ([`SimConfig::check`]).
//!
//! The JSON Schema of these types is checked in as `schema/plan.schema.json`
//! ([`plan_schema`]; `tests/schema.rs` fails when the file and the types differ), and the
//! Python models in `python/qoslab/plan.py` are checked against it. A change of the JSON
//! a plan is written in raises [`PLAN_SCHEMA`].
//!
//! The same plan and seed always give the same results.

pub mod adaptive;
pub mod atm;
pub mod flow;
pub mod link;
pub mod node;
pub mod tunnel;

pub use adaptive::AdaptiveConfig;
pub use atm::{
    AtmConfig, AtmEncapsulation, AtmLinkConfig, AtmPhy, CategoryQueues, CrossConnect, ElanConfig, LaneConfig,
    LecConfig, LisConfig, MpoaConfig, PvcConfig, ServiceCategory, SwitchConfig, VcEnd,
};
pub use flow::{FlowConfig, TcpOptions, MAX_IPV4_PAYLOAD_AFTER_8, PROBE_HEADER_LEN};
pub use link::{
    Access, BeaconConfig, Clocking, ControlPreamble, ForeignSource, Impairment, LinkConfig, LossConfig, PortRef,
    Preamble, SerialFraming, ShaperConfig, WifiConfig, WifiSecurity, WifiStandard, DEFAULT_SHORT_RETRY_LIMIT,
};
pub use node::{
    AtmNicCost, BridgeConfig, BridgeMode, CpuConfig, CpuCycles, ForwardProtocol, FragNeeded, NatConfig, NodeConfig,
    NodeRole, PmtuConfig, PortConfig, PortForward, RouteConfig, RxLatency,
};
pub use tunnel::{
    IpsecAuth, IpsecCipher, IpsecMode, IpsecProtocol, IpsecTunnelConfig, OpenVpnAuth, OpenVpnCipher, OpenVpnConfig,
    OpenVpnDev, OpenVpnProto, PppAuth, PppoeConfig, PptpConfig, TunnelFragment,
};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The version of the plan's JSON: the `schema` field of every plan. Raised whenever
/// the JSON a plan is written in changes (a field added, renamed or retyped), so that a
/// plan written for another version is refused by name rather than misread.
pub const PLAN_SCHEMA: u32 = 2;

/// A unit variant of one of the plan's enums as the plan's JSON spells it (`"802.11b"`,
/// `"ap-router"`), for messages and reports: the spelling is written once, in the
/// type's serde attributes.
pub fn name_of<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        other => panic!("name_of is for unit enum variants, which serialise as strings, not {other:?}"),
    }
}

/// A plan (or a part of one) read from its JSON. A value the types refuse (an unknown
/// key, a missing field, a name no enum has: serde's "unknown variant `x`, expected one
/// of ...") is refused with the path of its field (`links[0].standard`), found by reading
/// the text again only when the fast read has failed.
pub fn from_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, ConfigError> {
    serde_json::from_str(text).map_err(|first| {
        let mut reader = serde_json::Deserializer::from_str(text);
        match serde_path_to_error::deserialize::<_, T>(&mut reader) {
            Err(e) if e.path().iter().next().is_some() => {
                let message = e.inner().to_string();
                let mut field = e.path().to_string();
                // Inside a tagged enum (a link's "type", a flow's "kind") serde reads a
                // buffered copy and the path stops at the enum's value; an unknown name
                // is then found below it, where the text holds it once.
                if let (Some(name), Ok(whole)) = (unknown_variant(&message), serde_json::from_str(text)) {
                    if let Some(below) = at_path(&whole, e.path()).and_then(|v| unique_path_of(v, name)) {
                        field.push_str(&below);
                    }
                }
                ConfigError { field, message }
            }
            _ => ConfigError { field: "plan".into(), message: first.to_string() },
        }
    })
}

/// `x` of serde's "unknown variant `x`, expected ...".
fn unknown_variant(message: &str) -> Option<&str> {
    message.strip_prefix("unknown variant `")?.split('`').next()
}

/// The value at `path` in `value`.
fn at_path<'v>(value: &'v serde_json::Value, path: &serde_path_to_error::Path) -> Option<&'v serde_json::Value> {
    use serde_path_to_error::Segment;
    path.iter().try_fold(value, |v, segment| match segment {
        Segment::Seq { index } => v.get(index),
        Segment::Map { key } => v.get(key),
        Segment::Enum { .. } => Some(v),
        Segment::Unknown => None,
    })
}

/// The path (`.standard`, `.member_preamble[1]`) of the one string `name` below `value`,
/// if there is exactly one.
fn unique_path_of(value: &serde_json::Value, name: &str) -> Option<String> {
    fn find(value: &serde_json::Value, name: &str, here: String, found: &mut Vec<String>) {
        match value {
            serde_json::Value::String(s) if s == name => found.push(here),
            serde_json::Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    find(item, name, format!("{here}[{i}]"), found);
                }
            }
            serde_json::Value::Object(map) => {
                for (key, item) in map {
                    find(item, name, format!("{here}.{key}"), found);
                }
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    find(value, name, String::new(), &mut found);
    (found.len() == 1).then(|| found.remove(0))
}

/// The unit variant of one of the plan's enums that the plan's JSON spells `name`; an
/// unknown name is serde's "unknown variant `x`, expected one of ..." (a plan with it is
/// refused the same way when it is read).
pub fn from_name<T: serde::de::DeserializeOwned>(name: &str) -> Result<T, String> {
    serde_json::from_value(serde_json::Value::String(name.to_owned())).map_err(|e| e.to_string())
}

/// The plan's JSON Schema (draft 2020-12), as `schema/plan.schema.json` holds it.
pub fn plan_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(SimConfig)).expect("a JSON Schema is JSON")
}

/// A whole simulation run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    /// The version of the plan's JSON: [`PLAN_SCHEMA`], which [`SimConfig::check`] demands.
    pub schema: u32,
    /// The scenario seed; every random stream derives from it (see `rng`).
    pub seed: u64,
    /// Simulated time to run, in nanoseconds.
    pub duration_ns: u64,
    pub nodes: Vec<NodeConfig>,
    pub links: Vec<LinkConfig>,
    #[serde(default)]
    pub flows: Vec<FlowConfig>,
    /// Keep every frame each port sends and receives, for pcap files.
    #[serde(default)]
    pub capture: bool,
    /// Stop with an error instead of exhausting memory or time.
    #[serde(default)]
    pub budget: BudgetConfig,
    /// [from, until) in nanoseconds: each node's CPU utilisation is reported over this
    /// window as well (a test's traffic interval, without the learning and draining
    /// around it). None = only over the whole run.
    #[serde(default)]
    pub cpu_window_ns: Option<(u64, u64)>,
    /// ATM switches, PVC cross-connects and CLIP subnets (the links are in `links`).
    #[serde(default)]
    pub atm: AtmConfig,
    /// Seed 004's adaptive upstreams: a router that sends towards a peer router over a
    /// radio (with link acks) or a modem, whichever delivers (see `upstream`).
    #[serde(default)]
    pub adaptive: Vec<AdaptiveConfig>,
    /// The measurement windows of UDP, ping and UDP echo flows, by flow id
    /// (docs/metrics.md#window). A flow without one ends its sending at its own stop and
    /// counts every arrival until the run ends.
    #[serde(default)]
    pub windows: Vec<WindowConfig>,
}

impl Default for SimConfig {
    /// An empty plan of this version: no nodes, no links, no traffic, for 0 ns.
    fn default() -> Self {
        SimConfig {
            schema: PLAN_SCHEMA,
            seed: 0,
            duration_ns: 0,
            nodes: Vec::new(),
            links: Vec::new(),
            flows: Vec::new(),
            capture: false,
            budget: BudgetConfig::default(),
            cpu_window_ns: None,
            atm: AtmConfig::default(),
            adaptive: Vec::new(),
            windows: Vec::new(),
        }
    }
}

/// The measurement window of one flow (docs/metrics.md#window): it opens at the flow's
/// first send. Arrivals up to `end_ns` are received; later ones are late, counted apart
/// and never as received, in the latency or in the goodput (RFC 2544 §23 waits "about
/// 2 seconds" for frames still in the device, §26.3 counts what did not arrive as lost).
/// Received arrivals after `stop_ns`, the end of the sending as the method counts it (an
/// RFC 2544 trial's stop, shared by the trial's flows), are also counted as drained.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WindowConfig {
    pub flow: u32,
    pub stop_ns: u64,
    pub end_ns: u64,
}

/// Limits that stop a run cleanly, naming what grew.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct BudgetConfig {
    /// Events processed at most.
    pub max_events: u64,
    /// Events pending in the scheduler at most.
    pub max_pending: usize,
    /// Frames held in all queues together at most.
    pub max_queued_frames: usize,
}

impl Default for BudgetConfig {
    fn default() -> Self {
        BudgetConfig { max_events: 2_000_000_000, max_pending: 4_000_000, max_queued_frames: 4_000_000 }
    }
}

impl SimConfig {
    /// The window of flow `id`: (stop of the sending, end of the wait); without a
    /// configured one, the flow's own stop and no end.
    pub fn window(&self, flow: &FlowConfig) -> (u64, u64) {
        match self.windows.iter().find(|w| w.flow == flow.id()) {
            Some(w) => (w.stop_ns, w.end_ns),
            None => (flow.sending_ns().1, u64::MAX),
        }
    }
}

/// A configuration the simulator cannot run, with the field that says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for ConfigError {}

impl SimConfig {
    /// Refuses what cannot run: dangling port references, a port on two links, zero
    /// rates, a bridge with fewer than two ports, a wifi cell without members.
    pub fn check(&self) -> Result<(), ConfigError> {
        let fail = |field: String, message: String| Err(ConfigError { field, message });
        if self.schema != PLAN_SCHEMA {
            return fail(
                "schema".into(),
                format!("a plan of schema {}: this core reads schema {PLAN_SCHEMA}", self.schema),
            );
        }
        self.check_links()?;
        self.check_bridges()?;
        self.check_flows()?;
        self.check_windows()
    }

    /// Each link's ends exist and are on no other link; rates are positive; a cell has stations.
    fn check_links(&self) -> Result<(), ConfigError> {
        let fail = |field: String, message: String| Err(ConfigError { field, message });
        let mut attached = std::collections::BTreeSet::new();
        let mut attach = |r: &PortRef, field: String| -> Result<(), ConfigError> {
            let node = self
                .nodes
                .get(r.node as usize)
                .ok_or_else(|| ConfigError { field: field.clone(), message: format!("no node {}", r.node) })?;
            if node.ports.get(r.port as usize).is_none() {
                return Err(ConfigError { field, message: format!("node {} has no port {}", node.name, r.port) });
            }
            if !attached.insert((r.node, r.port)) {
                return Err(ConfigError { field, message: format!("port {}:{} is on two links", node.name, r.port) });
            }
            Ok(())
        };
        for (i, link) in self.links.iter().enumerate() {
            match link {
                LinkConfig::Ethernet { a, b, rate_bps, .. } | LinkConfig::Serial { a, b, rate_bps, .. } => {
                    attach(a, format!("links[{i}].a"))?;
                    attach(b, format!("links[{i}].b"))?;
                    if *rate_bps == 0 {
                        return fail(format!("links[{i}].rate_bps"), "a link's rate must be positive".into());
                    }
                }
                LinkConfig::Atm(l) => {
                    attach(&l.a, format!("links[{i}].a"))?;
                    attach(&l.b, format!("links[{i}].b"))?;
                }
                LinkConfig::Wifi(w) => {
                    if let Some(ap) = &w.ap {
                        attach(ap, format!("links[{i}].ap"))?;
                    }
                    for (j, s) in w.stations.iter().enumerate() {
                        attach(s, format!("links[{i}].stations[{j}]"))?;
                    }
                    if w.stations.is_empty() {
                        return fail(format!("links[{i}].stations"), "a wifi cell needs at least one station".into());
                    }
                    if w.rate_bps == 0 {
                        return fail(format!("links[{i}].rate_bps"), "a link's rate must be positive".into());
                    }
                    if let Some(problem) = w.standard.preamble_problem(w.preamble) {
                        return fail(format!("links[{i}].preamble"), problem.into());
                    }
                    for (j, &p) in w.member_preamble.iter().enumerate() {
                        if let Some(problem) = w.standard.preamble_problem(p) {
                            return fail(format!("links[{i}].member_preamble[{j}]"), problem.into());
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// A bridge has two ports or more, each of its node.
    fn check_bridges(&self) -> Result<(), ConfigError> {
        let fail = |field: String, message: String| Err(ConfigError { field, message });
        for (i, node) in self.nodes.iter().enumerate() {
            if let Some(bridge) = &node.bridge {
                if bridge.ports.len() < 2 {
                    return fail(
                        format!("nodes[{i}].bridge.ports"),
                        format!("bridge {} needs two ports or more", node.name),
                    );
                }
                for &p in &bridge.ports {
                    if node.ports.get(p as usize).is_none() {
                        return fail(format!("nodes[{i}].bridge.ports"), format!("node {} has no port {p}", node.name));
                    }
                }
            }
        }
        Ok(())
    }

    /// Each flow's sender exists and its payload fits its probe and an IPv4 datagram.
    fn check_flows(&self) -> Result<(), ConfigError> {
        let fail = |field: String, message: String| Err(ConfigError { field, message });
        for (i, flow) in self.flows.iter().enumerate() {
            let from = match flow {
                FlowConfig::Udp { from, payload, .. } | FlowConfig::UdpEcho { from, payload, .. } => {
                    if *payload < PROBE_HEADER_LEN as u32 {
                        return fail(
                            format!("flows[{i}].payload"),
                            format!("a UDP test payload carries a {}-byte probe header", PROBE_HEADER_LEN),
                        );
                    }
                    if *payload > MAX_IPV4_PAYLOAD_AFTER_8 {
                        return fail(format!("flows[{i}].payload"), format!("a UDP payload of {payload} bytes: an IPv4 datagram carries at most {MAX_IPV4_PAYLOAD_AFTER_8} after the UDP header (RFC 791 §3.1, RFC 768)"));
                    }
                    *from
                }
                FlowConfig::Ping { from, payload, .. } => {
                    if *payload > MAX_IPV4_PAYLOAD_AFTER_8 {
                        return fail(format!("flows[{i}].payload"), format!("an ICMP echo of {payload} data bytes: an IPv4 datagram carries at most {MAX_IPV4_PAYLOAD_AFTER_8} after the echo header (RFC 791 §3.1, RFC 792)"));
                    }
                    *from
                }
                FlowConfig::Tcp { from, .. } => *from,
                FlowConfig::UdpReplay { from, .. } => {
                    flow.check_replay()
                        .map_err(|(key, message)| ConfigError { field: format!("flows[{i}].{key}"), message })?;
                    *from
                }
            };
            if self.nodes.get(from as usize).is_none() {
                return fail(format!("flows[{i}].from"), format!("no node {from}"));
            }
        }
        Ok(())
    }

    /// Each measurement window names a UDP, ping or echo flow and ends after its sending stops.
    fn check_windows(&self) -> Result<(), ConfigError> {
        let fail = |field: String, message: String| Err(ConfigError { field, message });
        for (i, w) in self.windows.iter().enumerate() {
            match self.flows.iter().find(|f| f.id() == w.flow) {
                None => return fail(format!("windows[{i}].flow"), format!("no flow {}", w.flow)),
                Some(FlowConfig::Tcp { .. }) => {
                    return fail(
                        format!("windows[{i}].flow"),
                        format!("flow {} is TCP, measured by its own rules", w.flow),
                    )
                }
                Some(_) => {}
            }
            if w.end_ns < w.stop_ns {
                return fail(
                    format!("windows[{i}].end_ns"),
                    format!("the window ends ({} ns) before the sending stops ({} ns)", w.end_ns, w.stop_ns),
                );
            }
        }
        Ok(())
    }
}
