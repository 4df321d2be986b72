//! Building a world from its configuration: nodes, lines, 802.11 cells, flows; every refusal
//! names the configuration's field.

use super::*;

impl World {
    pub fn new(config: SimConfig) -> Result<World, RunError> {
        config.check().map_err(RunError::Config)?;
        let mut nodes = Vec::with_capacity(config.nodes.len());
        for (i, n) in config.nodes.iter().enumerate() {
            nodes.push(
                Node::new(n)
                    .map_err(|message| RunError::Config(ConfigError { field: format!("nodes[{i}]"), message }))?,
            );
            if let (Some((from, until)), Some(node)) = (config.cpu_window_ns, nodes.last_mut()) {
                node.cpu.set_window(from, until);
            }
        }
        let mut attachments: Vec<Vec<Attachment>> =
            config.nodes.iter().map(|n| vec![Attachment::Unattached; n.ports.len()]).collect();
        let mut links = Vec::new();
        let mut bsses = Vec::new();
        for (index, link) in config.links.iter().enumerate() {
            match link {
                LinkConfig::Ethernet { name, a, b, rate_bps, delay_ns, queue_frames, queue_bytes, impair } => {
                    let id = links.len() as u32;
                    attachments[a.node as usize][a.port as usize] = Attachment::Ethernet { link: id, end: 0 };
                    attachments[b.node as usize][b.port as usize] = Attachment::Ethernet { link: id, end: 1 };
                    let ethernet = EthernetLink {
                        name: name.clone(),
                        ends: [(a.node, a.port), (b.node, b.port)],
                        rate_bps: *rate_bps,
                        delay_ns: *delay_ns,
                        queue_frames: *queue_frames,
                        queue_bytes: *queue_bytes,
                        dirs: Default::default(),
                    };
                    let impair = [
                        direction_impairment(&impair[0], config.seed, index, 0, &format!("links[{index}].impair[0]"))?,
                        direction_impairment(&impair[1], config.seed, index, 1, &format!("links[{index}].impair[1]"))?,
                    ];
                    links.push(Line {
                        kind: LineKind::Ethernet(ethernet),
                        impair,
                        in_flight: Default::default(),
                        lazy_tx_done: [false; 2],
                        tx_done: [None; 2],
                        tally: Default::default(),
                    });
                }
                LinkConfig::Serial {
                    name,
                    a,
                    b,
                    rate_bps,
                    format,
                    framing,
                    clocking,
                    acfc,
                    pfc,
                    fcs_bits,
                    compression,
                    delay_ns,
                    queue_frames,
                    impair,
                } => {
                    let id = links.len() as u32;
                    attachments[a.node as usize][a.port as usize] = Attachment::Ethernet { link: id, end: 0 };
                    attachments[b.node as usize][b.port as usize] = Attachment::Ethernet { link: id, end: 1 };
                    let ppp = SerialPpp { clocking, acfc: *acfc, pfc: *pfc, fcs_bits: *fcs_bits };
                    let line =
                        serial_line(index, *rate_bps, format, framing, ppp, *compression, *delay_ns, *queue_frames)?;
                    let impair = [
                        direction_impairment(&impair[0], config.seed, index, 0, &format!("links[{index}].impair[0]"))?,
                        direction_impairment(&impair[1], config.seed, index, 1, &format!("links[{index}].impair[1]"))?,
                    ];
                    links.push(Line {
                        kind: LineKind::Serial { name: name.clone(), ends: [(a.node, a.port), (b.node, b.port)], line },
                        impair,
                        in_flight: Default::default(),
                        lazy_tx_done: [false; 2],
                        tx_done: [None; 2],
                        tally: Default::default(),
                    });
                }
                LinkConfig::Wifi(w) => {
                    let id = bsses.len() as u32;
                    let state = bss_state(&config, w, id, index, &mut nodes)?;
                    for (member, &(node, port)) in state.members.iter().enumerate() {
                        attachments[node as usize][port as usize] = Attachment::Wifi { bss: id, member: member as u16 };
                    }
                    bsses.push(state);
                }
                LinkConfig::Atm(_) => {}
            }
        }
        let atm = World::build_atm(&config, &mut nodes, &mut attachments)?;
        let mut tcp = Vec::new();
        let mut tcp_of_source = BTreeMap::new();
        for (i, flow) in config.flows.iter().enumerate() {
            if let FlowConfig::Tcp {
                id,
                from,
                to,
                dst_port,
                bytes,
                start_ns,
                stop_ns,
                tcp: options,
                interval_ns,
                trace,
            } = flow
            {
                let field = |f: &str| format!("flows[{i}].{f}");
                let server_node = nodes
                    .iter()
                    .position(|n| n.ip.ifaces.iter().any(|f| f.addr.is_some_and(|(a, _)| a == *to)))
                    .ok_or_else(|| {
                        RunError::Config(ConfigError {
                            field: field("to"),
                            message: format!("no node has the address {to}"),
                        })
                    })? as u32;
                let client_stack = &nodes[*from as usize].ip;
                let (iface, _) = client_stack.route(*to).ok_or_else(|| {
                    RunError::Config(ConfigError {
                        field: field("to"),
                        message: format!("node {} has no route to {to}", nodes[*from as usize].name),
                    })
                })?;
                let src = client_stack.source_address(iface).ok_or_else(|| {
                    RunError::Config(ConfigError {
                        field: field("from"),
                        message: "the sending node has no IPv4 address".into(),
                    })
                })?;
                let mtu = client_stack.ifaces[iface].mtu as u32;
                let tcp_config = tcp_config(options, mtu)
                    .map_err(|message| RunError::Config(ConfigError { field: field("tcp"), message }))?;
                if *interval_ns == Some(0) {
                    return Err(RunError::Config(ConfigError {
                        field: field("interval_ns"),
                        message: "an interval of zero".into(),
                    }));
                }
                let mut client = TcpSocket::new(tcp_config.clone());
                if *trace {
                    client.enable_trace();
                }
                let mut server = TcpSocket::new(tcp_config);
                // RFC 1191 §3: each end starts from the MTU of its first hop.
                client.set_path_mtu(mtu);
                if let Some(back) = nodes[server_node as usize].ip.path_mtu(0, src) {
                    server.set_path_mtu(back as u32);
                }
                // The receiver's initial sequence number: any value works (RFC 9293 §3.4.1
                // wants it unpredictable; a simulation wants it reproducible).
                server.listen(*dst_port, wire::tcp::SeqNumber(0x4000_0000));
                server.set_sink(true);
                tcp_of_source.insert(i, tcp.len());
                tcp.push(TcpFlow {
                    id: *id,
                    nodes: [*from, server_node],
                    addrs: [src, *to],
                    ports: [EPHEMERAL_PORT + tcp.len() as u16, *dst_port],
                    peers: [(*to, *dst_port), (src, EPHEMERAL_PORT + tcp.len() as u16)],
                    sockets: [client, server],
                    timers: [None, None],
                    path_mtu: Default::default(),
                    bytes: *bytes,
                    start_ns: *start_ns,
                    stop_ns: *stop_ns,
                    first_rx_ns: None,
                    first_rx_bytes: 0,
                    acked_ns: None,
                    first_tx_ns: None,
                    intervals: interval_ns.map(|p| IntervalRecorder::new(*start_ns, p)),
                    last_rx_ns: None,
                    completed_ns: None,
                    last_progress_ns: *start_ns,
                    longest_stall_ns: 0,
                    segments_sent: 0,
                    segments_arrived: 0,
                    stall_at_end_ns: 0,
                    window: None,
                });
            }
        }
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
        let engine = Engine::with_budget(config.budget.max_events, config.budget.max_pending);
        let sources: Vec<Source> = config.flows.iter().cloned().map(Source::new).collect();
        for line in links.iter_mut() {
            for from in 0..2 {
                let node = line.ends()[from].0;
                let saturating = sources.iter().any(|s| s.is_saturating() && source_node(&s.config) == node);
                line.lazy_tx_done[from] = line.impair[from].shaper.is_none() && !saturating;
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
                node.vifs.capture = Some(Vec::new());
            }
        }
        let tap_nodes = if config.capture {
            (0..n)
                .filter(|&i| (0..config.nodes[i].ports.len()).any(|p| nodes[i].vifs.tap(p as u16).is_some()))
                .map(|i| i as u32)
                .collect()
        } else {
            Vec::new()
        };
        let upstreams = upstreams(&config, &attachments, &bsses)?;
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
            ip_timers: vec![None; n],
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
            upstreams,
        })
    }
}
