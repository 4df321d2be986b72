//! A node: ports, an optional bridge joining some of them, an IPv4 stack, and a CPU that
//! every received frame must pass through.
//!
//! Frame path: a frame arriving on a port is a CPU job. When the CPU takes it, the node
//! decides everything the frame causes (bridge lookup, IP input, forwarding, NAT, the
//! replies it triggers) and the cycles that cost by the node's profile; the outputs leave
//! when the service time is over. A port's NIC accepts only frames for its own MAC,
//! broadcasts and multicasts, unless the port is bridged (bridges listen to everything,
//! IEEE 802.1D §7.5) or promiscuous (`PortConfig::promiscuous`, a sniffing port).
//!
//! IPsec tunnels (`ipsec`) are interfaces of the stack, transport-mode SAs transform its
//! own datagrams; their cipher and HMAC work (ESP or AH) is
//! charged by `CpuCycles::per_byte_esp` and `per_esp_packet`. Work the stack did outside
//! a CPU job — the node's own packets, which the world hands straight to the ports — is
//! charged to the next job the CPU serves (see [`Node::process`]): the busy time counts
//! it and received frames wait behind it, but the node's own packet leaves undelayed.
//! Routing the node's own sends through the CPU queue is the world's to do.

pub mod adaptive_router;
pub mod cpu;
pub mod forward;
pub mod ip;
pub mod pmtu;
pub mod tunnels;

use std::net::Ipv4Addr;

use wire::ethernet::{self, Address as Mac};

use crate::config::{BridgeMode, CpuCycles, NodeConfig};
use crate::node::cpu::Cpu;
use crate::node::forward::l3f::{L3fBridge, Output as L3fOutput};
use crate::node::forward::learning::LearningBridge;
use crate::node::forward::nat::{Inbound, Nat, NatProtocol, PortForward};
use crate::node::ip::{Iface, IpStack, Out, Translator};
use crate::node::tunnels::Tunnels;

/// What a port is to its node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortUse {
    /// The port is an IP interface of its own.
    Routed { iface: usize },
    /// The port belongs to the bridge.
    Bridged,
}

/// Work waiting for, or in, the CPU.
#[derive(Debug)]
pub enum Job {
    /// A frame received on a port, to be processed.
    Receive { port: u16, frame: Vec<u8> },
    /// What the node's own applications send, already decided; the CPU spends its
    /// cycles before the frames leave.
    Send(Effects),
}

/// Everything processing one frame produced.
#[derive(Debug, Default)]
pub struct Effects {
    /// Frames to send: (port, Ethernet frame without FCS).
    pub send: Vec<(u16, Vec<u8>)>,
    /// IPv4 datagrams for the node's own sockets and applications: (buffer, offset of
    /// the datagram in it), as [`Out::Local`] hands them over.
    pub local: Vec<(Vec<u8>, usize)>,
    /// Drops with their reasons: (port, reason, the packet if any).
    pub drops: Vec<(Option<u16>, String, Option<Vec<u8>>)>,
    /// CPU cycles the processing cost. Read only for a CPU with a clock: on a free
    /// CPU (`hz` 0) the per-frame sums are skipped and it may stay 0.
    pub cycles: f64,
}

impl Effects {
    /// True when it holds nothing to carry out (its vectors may keep their capacity).
    pub fn is_clear(&self) -> bool {
        self.send.is_empty() && self.local.is_empty() && self.drops.is_empty()
    }
}

enum Bridge {
    L2(LearningBridge),
    L3f(L3fBridge),
}

/// The bridge of a node and the IP interface on top of it.
struct BridgeState {
    iface: usize,
    kind: Bridge,
}

/// One node of the simulated network.
pub struct Node {
    pub name: String,
    pub role: String,
    pub port_names: Vec<String>,
    pub port_macs: Vec<Mac>,
    /// Ports whose NIC passes up every frame (`PortConfig::promiscuous`): a routed one
    /// takes frames for any MAC into the stack.
    port_promiscuous: Vec<bool>,
    /// Each port's IP MTU (a TAP port's is its tunnel's): an L2 bridge drops a frame
    /// too long for the port it leaves by (`learning::fits_port_mtu`).
    port_mtus: Vec<u16>,
    pub port_use: Vec<PortUse>,
    pub ip: IpStack,
    bridge: Option<BridgeState>,
    pub cpu: Cpu<Job>,
    pub(crate) cycles: CpuCycles,
    /// Whether `cycles` charges any routing, NAT or ESP work: set with `cycles` in
    /// [`Node::new`], and neither is written after, so it cannot go stale.
    charges_forwarding: bool,
    /// Outputs of the job in service, released when the CPU finishes it.
    pub in_service: Option<Effects>,
    /// Cycles per byte of the port's link cipher (WEP's RC4, CCMP's AES), 0 if none.
    port_cipher_cost: Vec<f64>,
    /// ATM ports: the RFC 2684 header octets in front of each IP packet, for the
    /// per-cell SAR cost (`CpuCycles::per_atm_cell`).
    port_atm_header: Vec<Option<usize>>,
    /// The stack's counters when its work was last charged to the CPU.
    billed: crate::node::ip::IpCounters,
    /// The tunnel ends the node drives (OpenVPN, PPPoE, PPTP; see `tunnels`).
    pub(crate) tunnels: Tunnels,
    /// Cycles of work done outside a CPU job (timers), charged to the next job.
    pub(crate) unbilled: f64,
    /// The IP stack's outputs for one received frame: a buffer kept between frames so
    /// that the per-packet path allocates nothing (empty between uses).
    outs_scratch: Vec<Out>,
}

/// The NAT of `forward::nat` as the IP stack's translator.
struct NatTranslator {
    nat: Nat,
    node: String,
}

impl Translator for NatTranslator {
    fn outbound(&mut self, now: u64, packet: &mut [u8]) -> Result<(), String> {
        self.nat.outbound(now, packet).map_err(|r| r.at(&self.node).to_string())
    }

    fn inbound(&mut self, now: u64, packet: &mut [u8]) -> Result<(), String> {
        match self.nat.inbound(now, packet) {
            Ok(Inbound::Translated) => Ok(()),
            // For the node itself: the stack takes it unchanged.
            Ok(Inbound::ToSelf) => Err(String::new()),
            Err(r) => Err(r.at(&self.node).to_string()),
        }
    }
}

/// The node's IP interfaces for its routed ports (a bridge's is added by
/// [`bridge_state`]), and what each port is used for.
fn ifaces_and_port_use(config: &NodeConfig) -> (Vec<Iface>, Vec<PortUse>) {
    let bridged: Vec<u16> = config.bridge.as_ref().map(|b| b.ports.clone()).unwrap_or_default();
    let mut ifaces = Vec::new();
    let mut port_use = Vec::new();
    for (i, port) in config.ports.iter().enumerate() {
        if bridged.contains(&(i as u16)) {
            port_use.push(PortUse::Bridged);
        } else {
            port_use.push(PortUse::Routed { iface: ifaces.len() });
            // A point-to-point line has no link addresses to resolve (RFC 1055, RFC 1661).
            ifaces.push(Iface {
                name: port.name.clone(),
                mac: Mac(port.mac),
                addr: port.address,
                mtu: usize::from(port.mtu),
                resolve: !port.point_to_point,
            });
        }
    }
    (ifaces, port_use)
}

/// The node's bridge, if it has one, and its IP interface (`br0`).
fn bridge_state(config: &NodeConfig, ifaces: &mut Vec<Iface>) -> Option<BridgeState> {
    match &config.bridge {
        Some(b) => {
            let iface = ifaces.len();
            let mtu = b.ports.iter().map(|&p| usize::from(config.ports[p as usize].mtu)).min().unwrap_or(1500);
            // An L3F bridge resolves addresses itself (proxy ARP, its table): the stack
            // hands it IP packets, not ARP requests.
            let resolve = b.mode == BridgeMode::L2;
            ifaces.push(Iface { name: "br0".into(), mac: Mac(b.mac), addr: b.address, mtu, resolve });
            let kind = match b.mode {
                BridgeMode::L2 => {
                    let promiscuous: Vec<u16> =
                        b.ports.iter().copied().filter(|&p| config.ports[p as usize].promiscuous).collect();
                    Bridge::L2(LearningBridge::new(&b.ports, b.aging_ns, b.mac).with_promiscuous(&promiscuous))
                }
                BridgeMode::L3f => {
                    let ports: Vec<(u16, [u8; 6])> =
                        b.ports.iter().map(|&p| (p, config.ports[p as usize].mac)).collect();
                    let (own_ip, prefix) = b.address.map_or((None, 0), |(a, l)| (Some(a), l));
                    let mut bridge = L3fBridge::new(&ports, own_ip, prefix).with_aging(b.aging_ns);
                    let gateway = config.routes.iter().find(|r| r.prefix_len == 0).map(|r| r.via);
                    bridge.set_gateway(gateway);
                    Bridge::L3f(bridge)
                }
            };
            Some(BridgeState { iface, kind })
        }
        None => None,
    }
}

/// NAPT on the outside interface (a routed port, or the bridge), with its port forwards.
fn attach_nat(
    config: &NodeConfig,
    nat: &crate::config::NatConfig,
    ip: &mut IpStack,
    port_use: &[PortUse],
    bridge: Option<&BridgeState>,
) -> Result<(), String> {
    let outside = match nat.outside_port {
        Some(p) => match port_use.get(p as usize) {
            Some(PortUse::Routed { iface }) => *iface,
            _ => return Err(format!("node {}: NAT outside port {p} is not a routed port", config.name)),
        },
        None => {
            bridge.map(|b| b.iface).ok_or_else(|| format!("node {}: NAT on a bridge it does not have", config.name))?
        }
    };
    let outside_ip = ip.ifaces[outside]
        .addr
        .map(|(a, _)| a)
        .ok_or_else(|| format!("node {}: the NAT outside interface has no address", config.name))?;
    let mut forwards = Vec::new();
    for f in &nat.port_forwards {
        let protocol = match f.protocol {
            qoslab_plan::ForwardProtocol::Tcp => NatProtocol::Tcp,
            qoslab_plan::ForwardProtocol::Udp => NatProtocol::Udp,
        };
        forwards.push(PortForward { protocol, port: f.port, to: f.to, to_port: f.to_port });
    }
    let translator =
        NatTranslator { nat: Nat::new(outside_ip, nat.udp_timeout_ns, &forwards), node: config.name.clone() };
    ip.set_nat(outside, Box::new(translator));
    Ok(())
}

/// LLC/SNAP header and ICV/MIC: the bytes a link cipher processes besides the IP packet.
const CIPHER_EXTRA_BYTES: usize = 8 + 4;

impl Node {
    pub fn new(config: &NodeConfig) -> Result<Node, String> {
        let (mut ifaces, port_use) = ifaces_and_port_use(config);
        let bridge = bridge_state(config, &mut ifaces);
        let mut ip = IpStack::new(
            ifaces,
            &config.routes,
            config.ip_forward,
            config.arp_timeout_ns,
            config.reassembly_timeout_ns,
        )
        .map_err(|e| format!("node {}: {e}", config.name))?;
        ip.set_pmtu(config.pmtu);
        if let Some(nat) = &config.nat {
            attach_nat(config, nat, &mut ip, &port_use, bridge.as_ref())?;
        }
        let mut node = Node {
            name: config.name.clone(),
            role: qoslab_plan::name_of(&config.role),
            port_names: config.ports.iter().map(|p| p.name.clone()).collect(),
            port_macs: config.ports.iter().map(|p| Mac(p.mac)).collect(),
            port_promiscuous: config.ports.iter().map(|p| p.promiscuous).collect(),
            port_mtus: config.ports.iter().map(|p| p.mtu).collect(),
            port_use,
            ip,
            bridge,
            cpu: Cpu::new(config.cpu.clone()),
            cycles: config.cpu.cycles,
            charges_forwarding: {
                let c = &config.cpu.cycles;
                !(c.per_route_lookup == 0
                    && c.per_nat_translation == 0
                    && c.per_esp_packet == 0
                    && c.per_byte_esp == 0.0)
            },
            in_service: None,
            port_cipher_cost: vec![0.0; config.ports.len()],
            port_atm_header: vec![None; config.ports.len()],
            billed: crate::node::ip::IpCounters::default(),
            tunnels: Tunnels::default(),
            unbilled: 0.0,
            outs_scratch: Vec::new(),
        };
        crate::tunnel::attach_all(config, &mut node)?;
        Ok(node)
    }

    /// Charges `cycles_per_byte` for every frame the port encrypts or decrypts.
    pub fn set_port_cipher_cost(&mut self, port: u16, cycles_per_byte: f64) {
        self.port_cipher_cost[port as usize] = cycles_per_byte;
    }

    /// Cycles of the routing, NAT and ESP work the stack did since it was last charged,
    /// and marks it charged.
    pub(crate) fn forwarding_cycles(&mut self) -> f64 {
        if !self.charges_forwarding {
            // Nothing to charge, ever (the costs are fixed at construction): skip copying
            // the counters on every packet; `billed` is read only here.
            return 0.0;
        }
        let (before, after) = (self.billed, self.ip.counters);
        self.billed = after;
        let esp_packets = (after.esp_sealed - before.esp_sealed) + (after.esp_opened - before.esp_opened);
        (after.forwarded - before.forwarded) as f64 * self.cycles.per_route_lookup as f64
            + (after.translated - before.translated) as f64 * self.cycles.per_nat_translation as f64
            + esp_packets as f64 * self.cycles.per_esp_packet as f64
            + (after.esp_bytes - before.esp_bytes) as f64 * self.cycles.per_byte_esp
    }

    /// Marks `port` as an ATM port whose frames carry `header` octets of RFC 2684
    /// encapsulation: each of its frames costs `per_atm_cell` per AAL5 cell.
    pub fn set_port_atm(&mut self, port: u16, header: usize) {
        self.port_atm_header[port as usize] = Some(header);
    }

    pub(crate) fn cipher_cycles(&self, port: u16, frame_len: usize) -> f64 {
        let sar = match self.port_atm_header[port as usize] {
            Some(h) if self.cycles.per_atm_cell > 0.0 => {
                let sdu = frame_len.saturating_sub(ethernet::HEADER_LEN) + h;
                self.cycles.per_atm_cell * wire::aal5::cell_count(sdu) as f64
            }
            _ => 0.0,
        };
        sar + self.link_cipher_cycles(port, frame_len)
    }

    fn link_cipher_cycles(&self, port: u16, frame_len: usize) -> f64 {
        let per_byte = self.port_cipher_cost[port as usize];
        if per_byte == 0.0 {
            return 0.0;
        }
        per_byte * (frame_len.saturating_sub(ethernet::HEADER_LEN) + CIPHER_EXTRA_BYTES) as f64
    }

    /// The IP interface index of the bridge, if the node has one.
    pub fn bridge_iface(&self) -> Option<usize> {
        self.bridge.as_ref().map(|b| b.iface)
    }

    /// Bridge learning table (L2) as (mac, port), or the L3F table as (ip, mac, port).
    pub fn bridge_table(&self, now: u64) -> Vec<(Mac, u16)> {
        match &self.bridge {
            Some(BridgeState { kind: Bridge::L2(b), .. }) => {
                b.table(now).into_iter().map(|e| (Mac(e.0), e.1)).collect()
            }
            _ => Vec::new(),
        }
    }

    /// The datagrams its L3F bridge holds for an unresolved address, if it is one.
    pub fn l3f_held_packets(&self, note: &mut dyn FnMut(&[u8])) {
        if let Some(BridgeState { kind: Bridge::L3f(b), .. }) = &self.bridge {
            b.held_packets(note);
        }
    }

    pub fn l3f_table(&self, now: u64) -> Vec<(Ipv4Addr, Mac, u16)> {
        match &self.bridge {
            Some(BridgeState { kind: Bridge::L3f(b), .. }) => {
                b.table(now).into_iter().map(|e| (e.ip, Mac(e.mac), e.port)).collect()
            }
            _ => Vec::new(),
        }
    }

    /// The interface a frame for port `port` is shown as (port name or the bridge's).
    pub fn port_name(&self, port: u16) -> &str {
        &self.port_names[port as usize]
    }

    /// Adds what locally made traffic costs besides its per-packet sending cost: copying
    /// its frames out to the NIC, and the stack's work for it not yet charged (ESP seals).
    pub fn charge_send(&mut self, fx: &mut Effects) {
        let bytes: usize = fx.send.iter().map(|(_, f)| f.len()).sum();
        fx.cycles +=
            self.cycles.per_byte_copied * bytes as f64 + self.forwarding_cycles() + std::mem::take(&mut self.unbilled);
    }

    /// Processes one received frame: decides every effect and what it costs. The cost
    /// includes the stack's work not yet charged (the node's own ESP sends since the
    /// last job). A node whose CPU is free (`hz` 0) does not sum it (see
    /// [`Effects::cycles`]).
    pub fn process(&mut self, now: u64, port: u16, frame: Vec<u8>) -> Effects {
        let mut fx = Effects::default();
        self.process_into(now, port, frame, &mut fx);
        fx
    }

    /// As [`process`](Self::process), filling `fx` (empty, as [`Effects::is_clear`]
    /// says; its vectors' capacity is reused, and it is not moved on the per-packet path).
    pub fn process_into(&mut self, now: u64, port: u16, frame: Vec<u8>, fx: &mut Effects) {
        debug_assert!(fx.is_clear() && fx.cycles == 0.0);
        // A free CPU (hardware forwarding) never reads a job's cost (`World::serve` reads
        // it only for a CPU with a clock): the sum is skipped, `fx.cycles` stays 0.
        if !self.cpu.is_free() {
            fx.cycles = self.cycles.per_rx_packet as f64
                + self.cycles.per_byte_copied * frame.len() as f64
                + self.cipher_cycles(port, frame.len())
                + self.forwarding_cycles()
                + std::mem::take(&mut self.unbilled);
        }
        self.port_input(now, port, frame, fx);
    }

    /// A frame received on port `port` (from its link, or opened from its TAP tunnel):
    /// the NIC's address filter, then the bridge, a PPPoE end or the IP stack.
    pub(crate) fn port_input(&mut self, now: u64, port: u16, frame: Vec<u8>, fx: &mut Effects) {
        match self.port_use[port as usize] {
            PortUse::Routed { iface } => {
                let dst = ethernet::Frame::new_checked(&frame[..]).map(|f| f.dst_addr());
                match dst {
                    Ok(dst)
                        if dst == self.port_macs[port as usize]
                            || dst.is_multicast()
                            || self.port_promiscuous[port as usize] =>
                    {
                        if crate::tunnel::is_tunnel_frame(&frame) {
                            self.tunnel_frame_input(now, port, frame, fx);
                            return;
                        }
                        // A datagram for the node itself comes back directly rather than
                        // as the last of the outputs; it is applied last, as it would have
                        // been. The stack's other outputs (usually none) go to the scratch
                        // vector, which is taken out only to apply them: a tunnel end may
                        // bring a frame back here, and then finds it taken and uses a new one.
                        let local = self.ip.input_for_self(now, iface, frame, &mut self.outs_scratch);
                        fx.cycles += self.forwarding_cycles();
                        if !self.outs_scratch.is_empty() {
                            let mut outs = std::mem::take(&mut self.outs_scratch);
                            self.apply_drain(now, &mut outs, fx);
                            self.outs_scratch = outs;
                        }
                        if let Some((packet, at)) = local {
                            self.apply_local(now, packet, at, fx);
                        }
                    }
                    Ok(dst) => fx.drops.push((
                        Some(port),
                        format!("frame for {dst} ignored by {} (not its MAC)", self.port_names[port as usize]),
                        None,
                    )),
                    Err(_) => fx.drops.push((Some(port), "malformed Ethernet frame".into(), None)),
                }
            }
            PortUse::Bridged => self.bridge_input(now, port, frame, fx),
        }
    }

    #[inline(never)]
    fn bridge_input(&mut self, now: u64, port: u16, frame: Vec<u8>, fx: &mut Effects) {
        let Some(bridge) = self.bridge.as_mut() else { return };
        fx.cycles += self.cycles.per_bridge_lookup as f64;
        let iface = bridge.iface;
        let mut local = Vec::new();
        let mut sends = Vec::new();
        match &mut bridge.kind {
            Bridge::L2(b) => {
                let decision = b.forward(now, port, &frame);
                if let Some(reason) = decision.dropped {
                    fx.drops.push((Some(port), reason.at(&self.name).to_string(), None));
                }
                for p in decision.to_ports.iter() {
                    sends.push((p, frame.clone()));
                }
                if decision.local {
                    local.push(frame);
                }
            }
            Bridge::L3f(b) => {
                let mut out = Vec::new();
                if let Err(reason) = b.process(now, port, &frame, &mut out) {
                    fx.drops.push((
                        Some(port),
                        reason.at(&self.name).to_string(),
                        frame.get(ethernet::HEADER_LEN..).map(<[u8]>::to_vec),
                    ));
                }
                for (reason, packet) in b.take_dropped() {
                    fx.drops.push((None, reason.at(&self.name).to_string(), Some(packet)));
                }
                for (to, f) in out {
                    match to {
                        L3fOutput::Port(p) => sends.push((p, f)),
                        L3fOutput::Local => local.push(f),
                    }
                }
            }
        }
        for (p, f) in sends {
            self.bridge_send(now, p, f, fx);
        }
        for f in local {
            if crate::tunnel::is_tunnel_frame(&f) {
                // PPPoE on a bridge passes through; the bridge's own interface has no
                // PPPoE end (the lowering puts none there) and ignores it, as Linux's
                // stack does with an EtherType no socket listens to.
                continue;
            }
            let mut outs = Vec::new();
            self.ip.input(now, iface, f, &mut outs);
            fx.cycles += self.forwarding_cycles();
            self.apply(now, outs, fx);
        }
    }

    /// Turns the IP stack's outputs into effects: frames on the bridge interface go
    /// through the bridge, the others to their port.
    pub fn apply(&mut self, now: u64, mut outs: Vec<Out>, fx: &mut Effects) {
        self.apply_drain(now, &mut outs, fx);
    }

    /// As [`apply`](Self::apply), leaving `outs` empty with its capacity.
    pub fn apply_drain(&mut self, now: u64, outs: &mut Vec<Out>, fx: &mut Effects) {
        // Usually one output (a segment out) or none (a datagram in, see `port_input`):
        // taken without a drain.
        match outs.len() {
            0 => {}
            1 => {
                let out = outs.pop().expect("one output");
                self.apply_one(now, out, fx);
            }
            _ => {
                for out in outs.drain(..) {
                    self.apply_one(now, out, fx);
                }
            }
        }
    }

    #[inline]
    fn apply_one(&mut self, now: u64, out: Out, fx: &mut Effects) {
        match out {
            Out::Frame { iface, frame } => {
                if !self.cpu.is_free() {
                    fx.cycles += self.cycles.per_tx_packet as f64; // read only then (see `process_into`)
                }
                if Some(iface) == self.bridge_iface() {
                    self.bridge_output(now, frame, fx);
                } else if let Some(k) = self.end_of_iface(iface) {
                    self.iface_send(now, k, frame, fx);
                } else if let Some(port) = self.port_use.iter().position(|u| *u == PortUse::Routed { iface }) {
                    self.port_send(now, port as u16, frame, fx);
                }
            }
            Out::Local { packet, at, .. } => self.apply_local(now, packet, at, fx),
            Out::Drop { reason, packet } => fx.drops.push((None, reason, packet)),
        }
    }

    /// A datagram for the node itself, `packet[at..]`: to a tunnel end that claims it,
    /// else to the node's sockets and applications.
    #[inline]
    fn apply_local(&mut self, now: u64, packet: Vec<u8>, at: usize, fx: &mut Effects) {
        if !self.tunnel_local(now, &packet[at..], fx) {
            fx.local.push((packet, at));
        }
    }

    /// A frame the node itself sends on its bridge interface.
    #[inline(never)]
    fn bridge_output(&mut self, now: u64, frame: Vec<u8>, fx: &mut Effects) {
        let Some(bridge) = self.bridge.as_mut() else { return };
        let mut sends = Vec::new();
        match &mut bridge.kind {
            Bridge::L2(b) => {
                for p in b.transmit(now, &frame).iter() {
                    sends.push((p, frame.clone()));
                }
            }
            Bridge::L3f(b) => {
                // The L3F bridge answers ARP itself (seed 000 §2.2); the stack's own ARP
                // frames have nothing to add. Its IP packets go by the L3F table.
                let is_ipv4 =
                    ethernet::Frame::new_checked(&frame[..]).is_ok_and(|f| f.ethertype() == ethernet::EtherType::Ipv4);
                if is_ipv4 {
                    let mut out = Vec::new();
                    if let Err(reason) = b.send_local(now, &frame[ethernet::HEADER_LEN..], &mut out) {
                        fx.drops.push((
                            None,
                            reason.at(&self.name).to_string(),
                            Some(frame[ethernet::HEADER_LEN..].to_vec()),
                        ));
                    }
                    // Held datagrams given up (replaced by a later one, or never resolved).
                    for (reason, packet) in b.take_dropped() {
                        fx.drops.push((None, reason.at(&self.name).to_string(), Some(packet)));
                    }
                    for (to, f) in out {
                        if let L3fOutput::Port(p) = to {
                            sends.push((p, f));
                        }
                    }
                }
            }
        }
        for (p, f) in sends {
            self.bridge_send(now, p, f, fx);
        }
    }

    /// A frame the bridge sends on port `port`, unless it is too long for the port's MTU
    /// (Linux's bridge frees it silently, `learning::fits_port_mtu`): then a drop with
    /// its reason, the frame's packet with it so that conservation finds its flow.
    fn bridge_send(&mut self, now: u64, port: u16, frame: Vec<u8>, fx: &mut Effects) {
        let l2 = matches!(self.bridge.as_ref().map(|b| &b.kind), Some(Bridge::L2(_)));
        if l2 {
            if let Err(length) = crate::node::forward::learning::fits_port_mtu(&frame, self.port_mtus[port as usize]) {
                let reason =
                    crate::node::forward::DropReason::OverPortMtu { port, length, mtu: self.port_mtus[port as usize] };
                let packet = frame.get(ethernet::HEADER_LEN..).map(<[u8]>::to_vec);
                fx.drops.push((Some(port), reason.at(&self.name).to_string(), packet));
                return;
            }
        }
        self.port_send(now, port, frame, fx);
    }
}
