//! Building a world from its configuration: nodes, lines, 802.11 cells, flows; every refusal
//! names the configuration's field.

use super::*;

impl World {
    pub fn new(config: SimConfig) -> Result<World, RunError> {
        config.check().map_err(RunError::Config)?;
        let mut nodes = build_nodes(&config)?;
        let mut attachments: Vec<Vec<Attachment>> =
            config.nodes.iter().map(|n| vec![Attachment::Unattached; n.ports.len()]).collect();
        let (mut links, bsses) = build_links(&config, &mut nodes, &mut attachments)?;
        let atm = World::build_atm(&config, &mut nodes, &mut attachments)?;
        let (tcp, tcp_of_source) = tcp_flows(&config, &nodes)?;
        let echo = echo_flows(&config);
        let engine = Engine::with_budget(config.budget.max_events, config.budget.max_pending);
        let sources: Vec<Source> = config.flows.iter().cloned().map(Source::new).collect();
        for line in links.iter_mut() {
            for from in 0..2 {
                let node = line.line.ends()[from].0;
                let saturating = sources.iter().any(|s| s.is_saturating() && source_node(&s.config) == node);
                line.lazy_tx_done[from] = line.line.impair[from].shaper.is_none() && !saturating;
            }
        }
        let stats = config
            .flows
            .iter()
            .map(|f| {
                let (stop, end) = config.window(f);
                (f.id(), FlowStats::with_window(stop, end))
            })
            .collect();
        let n = nodes.len();
        if config.capture {
            for node in nodes.iter_mut() {
                node.tunnels.capture = Some(Vec::new());
            }
        }
        let tap_nodes = if config.capture {
            (0..n)
                .filter(|&i| (0..config.nodes[i].ports.len()).any(|p| nodes[i].tunnels.tap(p as u16).is_some()))
                .map(|i| i as u32)
                .collect()
        } else {
            Vec::new()
        };
        let adaptive_routers = adaptive_routers(&config, &attachments, &bsses)?;
        Ok(World {
            deferred_ns: vec![0; sources.len()],
            end_ns: config.duration_ns,
            config,
            engine,
            nodes,
            links,
            bsses,
            attachments,
            spare_frames: Vec::new(),
            spare_fx: Vec::new(),
            scratch_outs: Vec::new(),
            scratch_segments: Vec::new(),
            ip_timers: vec![WakeTimer::IDLE; n],
            sources,
            tcp,
            tcp_of_source,
            echo,
            stats,
            drop_counts: vec![BTreeMap::new(); n],
            drop_log: Vec::new(),
            ledger: BTreeMap::new(),
            capture: None,
            tap_nodes,
            queued_frames: 0,
            atm,
            atm_out: AtmOut::default(),
            adaptive_timers: vec![WakeTimer::IDLE; adaptive_routers.len()],
            adaptive_routers,
        })
    }
}

/// The nodes of the configuration, each with the CPU's measurement window.
fn build_nodes(config: &SimConfig) -> Result<Vec<Node>, RunError> {
    let mut nodes = Vec::with_capacity(config.nodes.len());
    for (i, n) in config.nodes.iter().enumerate() {
        nodes.push(
            Node::new(n).map_err(|message| RunError::Config(ConfigError { field: format!("nodes[{i}]"), message }))?,
        );
        if let (Some((from, until)), Some(node)) = (config.cpu_window_ns, nodes.last_mut()) {
            node.cpu.set_window(from, until);
        }
    }
    Ok(nodes)
}

/// The point-to-point lines and the 802.11 cells of the configuration, each port told
/// where it is attached (ATM links are the ATM network's, see `build_atm`).
fn build_links(
    config: &SimConfig,
    nodes: &mut [Node],
    attachments: &mut [Vec<Attachment>],
) -> Result<(Vec<LineSlot>, Vec<CellSlot>), RunError> {
    let mut links = Vec::new();
    let mut bsses = Vec::new();
    for (index, link) in config.links.iter().enumerate() {
        if let Some(line) = line_of_plan(link, config.seed, index)? {
            let id = links.len() as u32;
            for (end, (node, port)) in line.ends().into_iter().enumerate() {
                attachments[node as usize][port as usize] = Attachment::Ethernet { link: id, end: end as u8 };
            }
            links.push(LineSlot::new(line));
            continue;
        }
        // An ATM link is the ATM network's (`build_atm`).
        if let LinkConfig::Wifi(w) = link {
            let id = bsses.len() as u32;
            let state = bss_state(config, w, id, index, nodes)?;
            for (member, &(node, port)) in state.cell.members.iter().enumerate() {
                attachments[node as usize][port as usize] = Attachment::Wifi { bss: id, member: member as u16 };
            }
            bsses.push(state);
        }
    }
    Ok((links, bsses))
}

/// The UDP echo flows by flow id.
fn echo_flows(config: &SimConfig) -> BTreeMap<u32, EchoFlow> {
    let mut echo = BTreeMap::new();
    for (i, flow) in config.flows.iter().enumerate() {
        if let FlowConfig::UdpEcho { id, from, dst_port, .. } = flow {
            // Each echo flow its own client port, as each echo client has its socket.
            let src_port = ECHO_CLIENT_PORT + i as u16;
            let (stop, end) = config.window(flow);
            echo.insert(
                *id,
                EchoFlow {
                    from: *from,
                    src_port,
                    dst_port: *dst_port,
                    forward: FlowStats::with_window(stop, end),
                    rtt: Histogram::default(),
                },
            );
        }
    }
    echo
}
