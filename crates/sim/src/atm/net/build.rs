//! Building the network from its configuration: switches, links and their ends,
//! routes between switches, PVC cross-connects, the ATMARP servers of each LIS.

use super::*;

impl AtmNet {
    /// Builds the network from the ATM links (with their index in `SimConfig::links`)
    /// and the ATM part of the configuration.
    pub fn new(
        nodes: &[NodeConfig],
        links: &[(usize, &AtmLinkConfig)],
        config: &AtmConfig,
        capture: bool,
    ) -> Result<AtmNet, ConfigError> {
        // Found by the config fuzz target: a switch on no node indexed past the nodes.
        if let Some((i, s)) = config.switches.iter().enumerate().find(|(_, s)| s.node as usize >= nodes.len()) {
            return Err(fail(
                format!("atm.switches[{i}].node"),
                format!("node {} does not exist ({} nodes)", s.node, nodes.len()),
            ));
        }
        let switch_of: BTreeMap<u32, u32> =
            config.switches.iter().enumerate().map(|(i, s)| (s.node, i as u32)).collect();
        let mut switches = new_switches(nodes, config);
        let mut net = AtmNet {
            links: Vec::new(),
            endpoints: Vec::new(),
            switches: Vec::new(),
            frames: Vec::new(),
            free_frames: Vec::new(),
            frame_seq: 0,
            trains: Vec::new(),
            free_trains: Vec::new(),
            signals: Vec::new(),
            free_signals: Vec::new(),
            host_signalling_ns: config.host_signalling_ns,
            capture,
            lane_deferred: Vec::new(),
            lane_free: Vec::new(),
            lost: Vec::new(),
            cells_arrived: Vec::new(),
            own: Default::default(),
            stats: AtmStats::default(),
            endpoint_of: BTreeMap::new(),
            switch_nodes: config.switches.iter().map(|s| s.node).collect(),
        };
        for &(index, l) in links {
            net.add_link(nodes, index, l, &switch_of, &mut switches)?;
        }
        // Addresses: a host behind a switch takes that switch's prefix.
        for ep in &mut net.endpoints {
            let far = net.links[ep.link as usize].ends[1 - ep.end as usize];
            let sw = match far {
                Attach::Switch(s, _) => Some(s),
                Attach::Host(_) => None,
            };
            ep.atm = atm_address(sw, ep.mac.0);
        }
        route_between_switches(&net.links, &mut switches);
        cross_connect(nodes, config, &mut switches)?;
        net.place_atmarp_servers(nodes, config, &switch_of, &mut switches)?;
        net.switches = switches;
        net.classify_pvcs();
        net.lane_init(&config.lane, nodes)?;
        let sw_count = net.switches.len();
        net.stats.cells = vec![[0; 2]; net.links.len()];
        net.stats.cells_lost = vec![0; sw_count];
        net.stats.epd_cells = vec![0; sw_count];
        net.stats.ppd_cells = vec![0; sw_count];
        net.stats.unknown_vc_cells = vec![0; sw_count];
        Ok(net)
    }

    /// One ATM link: its rate and encapsulation, and each end, a switch port or a host
    /// endpoint (with its PVCs).
    fn add_link(
        &mut self,
        nodes: &[NodeConfig],
        index: usize,
        l: &AtmLinkConfig,
        switch_of: &BTreeMap<u32, u32>,
        switches: &mut [Switch],
    ) -> Result<(), ConfigError> {
        let field = |f: &str| format!("links[{index}].{f}");
        let (rate, encap) = rate_and_encapsulation(index, l)?;
        let id = self.links.len() as u32;
        let mut ends = [Attach::Host(0); 2];
        for (e, r) in [l.a, l.b].into_iter().enumerate() {
            let node = nodes
                .get(r.node as usize)
                .ok_or_else(|| fail(field(if e == 0 { "a" } else { "b" }), format!("no node {}", r.node)))?;
            let port = node.ports.get(r.port as usize).ok_or_else(|| {
                fail(field(if e == 0 { "a" } else { "b" }), format!("node {} has no port {}", node.name, r.port))
            })?;
            if let Some(&sw) = switch_of.get(&r.node) {
                switches[sw as usize].ports[r.port as usize] = (id, e as u8);
                ends[e] = Attach::Switch(sw, r.port);
                continue;
            }
            let sdu = usize::from(port.mtu) + encap.header_len();
            if sdu > MAX_SDU {
                return Err(fail(
                    format!("nodes[{}].ports[{}].mtu", r.node, r.port),
                    format!("MTU {} with {} ({} octets of header) makes an AAL5 SDU of {sdu} octets; AAL5 carries at most {MAX_SDU} (I.363.5)", port.mtu, qoslab_plan::name_of(&l.encapsulation), encap.header_len()),
                ));
            }
            let ep = self.endpoints.len() as u32;
            self.endpoint_of.insert((r.node, r.port), ep);
            ends[e] = Attach::Host(ep);
            let (vcs, by_num, contracts) = self.host_pvcs(index, l, rate, (r.node, r.port))?;
            self.endpoints.push(Endpoint {
                node: r.node,
                port: r.port,
                link: id,
                end: e as u8,
                mac: Mac(port.mac),
                ip: port.address,
                atm: AtmAddress([0; 20]),
                encap,
                vcs,
                by_num,
                calls: BTreeMap::new(),
                next_call: 1,
                sscop_seq: 0,
                nic_frames: VecDeque::new(),
                nic_limit: l.nic_queue_frames.max(1),
                clip: ClipState::default(),
                lane: None,
                servers: None,
                contracts,
                abr_queued: 0,
                sar: Sar::of(node, rate),
            });
        }
        self.links.push(Link {
            name: l.name.clone(),
            ends,
            slots: Slots::new(rate),
            delay_ns: l.delay_ns,
            tx: Default::default(),
        });
        Ok(())
    }

    /// A host end's VCs: the signalling VC 0/5, then the link's PVCs with their traffic
    /// contracts (TM 4.0 §3.4), the VC numbers each is known by, and the contracts.
    #[allow(clippy::type_complexity)]
    fn host_pvcs(
        &mut self,
        index: usize,
        l: &AtmLinkConfig,
        rate: u64,
        at: (u32, u16),
    ) -> Result<(Vec<Vc>, BTreeMap<(u16, u16), usize>, Vec<qos::Contract>), ConfigError> {
        let field = |f: &str| format!("links[{index}].{f}");
        let mut vcs = vec![Vc {
            vpi: 0,
            vci: wire::atm::vci::SIGNALLING,
            state: VcState::Active,
            peer_atm: None,
            pcr_bps: None,
            tat: 0,
            reasm: Reasm::default(),
            role: None,
            sel: 0,
        }];
        let mut by_num = BTreeMap::from([(SIGNALLING_VC, 0usize)]);
        let mut contracts = Vec::new();
        for (k, p) in l.pvcs.iter().enumerate() {
            if p.vci < wire::atm::vci::FIRST_USER || by_num.contains_key(&(p.vpi, p.vci)) {
                return Err(fail(
                    field(&format!("pvcs[{k}]")),
                    format!(
                        "VC {}/{} is reserved or listed twice (I.361 Table 2: VCIs 0-31 are reserved)",
                        p.vpi, p.vci
                    ),
                ));
            }
            let pcr = match p.service {
                ServiceCategory::Ubr => p.pcr_bps,
                _ => Some(p.pcr_bps.ok_or_else(|| {
                    fail(
                        field(&format!("pvcs[{k}].pcr_bps")),
                        "a CBR, VBR or ABR VC needs a peak cell rate (TM 4.0 §3.4)".into(),
                    )
                })?),
            };
            let contract = qos::Contract::new(p, pcr.map(|r| r.min(rate)), rate, &mut self.stats.qos, at)
                .map_err(|(f, m)| fail(field(&format!("pvcs[{k}].{f}")), m))?;
            contracts.resize_with(vcs.len() + 1, qos::Contract::default);
            contracts[vcs.len()] = contract;
            by_num.insert((p.vpi, p.vci), vcs.len());
            vcs.push(Vc {
                vpi: p.vpi,
                vci: p.vci,
                state: VcState::Active,
                peer_atm: None,
                pcr_bps: pcr.map(|r| r.min(rate)),
                tat: 0,
                reasm: Reasm::default(),
                role: None,
                sel: 0,
            });
        }
        Ok((vcs, by_num, contracts))
    }

    /// LIS: who serves ATMARP (RFC 2225 §8), a switch or a host's port, and every other
    /// port of the LIS learns the server's ATM address.
    fn place_atmarp_servers(
        &mut self,
        nodes: &[NodeConfig],
        config: &AtmConfig,
        switch_of: &BTreeMap<u32, u32>,
        switches: &mut [Switch],
    ) -> Result<(), ConfigError> {
        for (k, lis) in config.lis.iter().enumerate() {
            let field = format!("atm.lis[{k}].server");
            let in_lis = |ip: Option<(Ipv4Addr, u8)>| {
                ip.is_some_and(|(a, _)| crate::node::ip::same_subnet(a, lis.network, lis.prefix_len))
            };
            let server_atm = if let Some(&sw) = switch_of.get(&lis.server) {
                switches[sw as usize].server = Some(BTreeMap::new());
                switches[sw as usize].atm
            } else {
                let ep = self.endpoints.iter_mut().find(|e| e.node == lis.server && in_lis(e.ip)).ok_or_else(|| {
                    fail(
                        field.clone(),
                        format!(
                            "node {} has no ATM port in {}/{}",
                            nodes.get(lis.server as usize).map_or("?", |n| &n.name),
                            lis.network,
                            lis.prefix_len
                        ),
                    )
                })?;
                ep.clip.is_server = true;
                ep.atm
            };
            for ep in &mut self.endpoints {
                if in_lis(ep.ip) && !ep.clip.is_server {
                    ep.clip.server = Some(server_atm);
                }
            }
        }
        Ok(())
    }
}

impl Sar {
    /// The adapter's segmentation engine (`CpuConfig::atm_nic`), if it is slower than
    /// the line of `rate` b/s.
    fn of(node: &NodeConfig, rate: u64) -> Option<Sar> {
        let nic = node.cpu.atm_nic;
        let cell_bps = if nic.sar_cell_rate == 0 {
            rate
        } else {
            nic.sar_cell_rate.saturating_mul(crate::atm::CELL_BITS as u64).min(rate)
        };
        (nic.sar_pdu_ns > 0 || cell_bps < rate).then_some(Sar { pdu_ns: nic.sar_pdu_ns, cell_bps, free_ns: 0 })
    }
}

/// A link's cell rate (given, or its PHY's) and its RFC 2684 encapsulation.
fn rate_and_encapsulation(index: usize, l: &AtmLinkConfig) -> Result<(u64, Encapsulation), ConfigError> {
    let field = |f: &str| format!("links[{index}].{f}");
    let rate = match l.cell_rate_bps {
        Some(r) if r > 0 => r,
        Some(_) => return Err(fail(field("cell_rate_bps"), "an ATM link's cell rate must be positive".into())),
        None => crate::atm::phy_cell_rate(l.phy),
    };
    let encap: Encapsulation = match l.encapsulation {
        qoslab_plan::AtmEncapsulation::LlcSnap => Encapsulation::LlcSnapRouted,
        qoslab_plan::AtmEncapsulation::VcMux => Encapsulation::VcMuxRouted,
    };
    Ok((rate, encap))
}

/// The switches, with no port attached yet.
fn new_switches(nodes: &[NodeConfig], config: &AtmConfig) -> Vec<Switch> {
    config
        .switches
        .iter()
        .enumerate()
        .map(|(i, s)| Switch {
            node: s.node,
            ports: vec![(u32::MAX, 0); nodes.get(s.node as usize).map_or(0, |n| n.ports.len())],
            table: vec![BTreeMap::new(); nodes.get(s.node as usize).map_or(0, |n| n.ports.len())],
            epd: s.epd_threshold_cells.map(|c| c as u64),
            ppd: s.ppd,
            signalling_ns: s.signalling_ns,
            atm: atm_address(Some(i as u32), [0; 6]),
            calls: BTreeMap::new(),
            next_ref: 1,
            sscop_seq: 0,
            toward: BTreeMap::new(),
            server: None,
            portq: (0..nodes.get(s.node as usize).map_or(0, |n| n.ports.len()))
                .map(|_| qos::PortQueues::default())
                .collect(),
            limits: qos::limits(s),
            abr_ci: s.abr_ci_threshold_cells as u64,
        })
        .collect()
}

/// Next hops between switches (BFS from each switch over switch-switch links).
fn route_between_switches(links: &[Link], switches: &mut [Switch]) {
    let n = switches.len();
    for from in 0..n {
        let mut seen = vec![false; n];
        seen[from] = true;
        let mut todo = VecDeque::new();
        for (p, &(link, end)) in switches[from].ports.iter().enumerate() {
            if link == u32::MAX {
                continue;
            }
            if let Attach::Switch(s, _) = links[link as usize].ends[1 - end as usize] {
                if !seen[s as usize] {
                    seen[s as usize] = true;
                    todo.push_back((s, p as u16));
                }
            }
        }
        while let Some((s, first)) = todo.pop_front() {
            switches[from].toward.insert(s, first);
            for &(link, end) in &switches[s as usize].ports {
                if link == u32::MAX {
                    continue;
                }
                if let Attach::Switch(t, _) = links[link as usize].ends[1 - end as usize] {
                    if !seen[t as usize] {
                        seen[t as usize] = true;
                        todo.push_back((t, first));
                    }
                }
            }
        }
    }
}

/// PVC cross-connects and the signalling VC on every switch port.
fn cross_connect(nodes: &[NodeConfig], config: &AtmConfig, switches: &mut [Switch]) -> Result<(), ConfigError> {
    for (i, s) in config.switches.iter().enumerate() {
        let sw = &mut switches[i];
        for (p, &(link, _)) in sw.ports.iter().enumerate() {
            if link != u32::MAX {
                sw.table[p].insert(
                    SIGNALLING_VC,
                    Route {
                        out_port: p as u16,
                        vpi: 0,
                        vci: 5,
                        local: true,
                        discard: 0,
                        reasm: Reasm::default(),
                        class: UBR_QUEUE,
                    },
                );
            }
        }
        for (k, c) in s.cross_connects.iter().enumerate() {
            let field = format!("atm.switches[{i}].cross_connects[{k}]");
            for end in [c.a, c.b] {
                if sw.ports.get(end.port as usize).is_none_or(|&(l, _)| l == u32::MAX) {
                    let name = &nodes[s.node as usize].name;
                    return Err(fail(
                        field,
                        format!(
                            "switch {name} has no ATM port {} (it has {} ATM port(s))",
                            end.port,
                            sw.ports.iter().filter(|p| p.0 != u32::MAX).count()
                        ),
                    ));
                }
                if end.vci < wire::atm::vci::FIRST_USER || sw.table[end.port as usize].contains_key(&(end.vpi, end.vci))
                {
                    return Err(fail(
                        field,
                        format!(
                            "VC {}/{} on port {} is reserved or already cross-connected",
                            end.vpi, end.vci, end.port
                        ),
                    ));
                }
            }
            for (x, y) in [(c.a, c.b), (c.b, c.a)] {
                sw.table[x.port as usize].insert(
                    (x.vpi, x.vci),
                    Route {
                        out_port: y.port,
                        vpi: y.vpi,
                        vci: y.vci,
                        local: false,
                        discard: 0,
                        reasm: Reasm::default(),
                        class: UBR_QUEUE,
                    },
                );
            }
        }
    }
    Ok(())
}
