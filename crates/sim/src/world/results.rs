//! What a run returns: drops as they happen (counted, and the first ones described) and the
//! results at the end.

use super::*;

impl World {
    pub(super) fn record_drop(
        &mut self,
        now: u64,
        node: u32,
        port: Option<u16>,
        reason: String,
        packet: Option<&[u8]>,
    ) {
        self.record_drop_of(now, node, port, reason, packet, packet);
    }

    /// [`record_drop`](Self::record_drop) of `carried` (what was dropped, for the flows'
    /// conservation), logged with `packet` (what the log has always described).
    pub(super) fn record_drop_of(
        &mut self,
        now: u64,
        node: u32,
        port: Option<u16>,
        reason: String,
        packet: Option<&[u8]>,
        carried: Option<&[u8]>,
    ) {
        if let Some(carried) = carried {
            self.ledger_drop(&reason, carried);
        }
        let (flow, summary) = packet.map(describe).unwrap_or((None, String::new()));
        // A tunnel's datagram may look like a probe by chance: only a known flow counts.
        let flow = flow.filter(|f| self.stats.contains_key(f));
        *self.drop_counts[node as usize].entry(reason.clone()).or_insert(0) += 1;
        if self.drop_log.len() < DROP_LOG_LIMIT {
            self.drop_log.push(DropRecord { time_ns: now, node, port, reason, flow, summary });
        }
    }

    pub(super) fn results(mut self) -> Results {
        let now = self.end_ns;
        self.ledger_silent_drops();
        let census = self.census();
        let flow_conservation = self.flow_conservation(&census);
        let line_conservation = self.line_conservation();
        let wifi_conservation = self.wifi_conservation();
        let (atm_links, atm_stats) = self.atm_results();
        let wifi = self
            .bsses
            .iter_mut()
            .map(|b| crate::results::WifiLinkInputs {
                name: b.cell.name().to_string(),
                airtime_busy_ns: b.cell.bss.airtime_busy_ns(),
                members: (0..b.cell.members.len()).map(|m| b.cell.bss.member_stats(m)).collect(),
            })
            .collect();
        let tcp = self.tcp.iter_mut().map(|f| f.result_inputs(now)).collect();
        let adaptive = self
            .adaptive_routers
            .iter()
            .map(|u| {
                u.result(
                    self.nodes[u.config.node as usize].name.clone(),
                    self.nodes[u.config.peer as usize].name.clone(),
                )
            })
            .collect();
        let mut results = crate::results::collect(crate::results::Inputs {
            tcp,
            config: &self.config,
            nodes: &self.nodes,
            links: self.links.iter().map(line_result).chain(atm_links).collect(),
            wifi,
            stats: &self.stats,
            echo: self.echo.iter().map(|(&id, e)| (id, (&e.forward, &e.rtt))).collect(),
            drop_counts: &self.drop_counts,
            drop_log: &self.drop_log,
            events: self.engine.events_processed(),
            now,
        });
        results.atm = atm_stats;
        for (flow, c) in results.flows.iter_mut().zip(flow_conservation) {
            flow.conservation = Some(c);
        }
        // Links come as lines, then ATM links, then 802.11 cells (see `collect`).
        let (lines, wifi) = (line_conservation.len(), wifi_conservation.len());
        let atm = results.links.len() - lines - wifi;
        for (link, c) in results.links.iter_mut().take(lines).zip(line_conservation) {
            link.conservation = c;
        }
        for (link, c) in results.links.iter_mut().skip(lines + atm).zip(wifi_conservation) {
            link.conservation = c;
        }
        census::check(&results);
        results.adaptive = adaptive;
        results
    }
}

/// At most this many drops are kept with their details; all are counted.
pub(super) const DROP_LOG_LIMIT: usize = 10_000;

/// A one-line description of a dropped IPv4 or ARP packet, and its flow if it carries a
/// probe.
pub(super) fn describe(packet: &[u8]) -> (Option<u32>, String) {
    if let Ok(arp::Repr::EthernetIpv4 {
        operation,
        source_hardware_addr,
        source_protocol_addr,
        target_protocol_addr,
        ..
    }) = arp::Packet::new_checked(packet).and_then(|p| arp::Repr::parse(&p))
    {
        let text = match operation {
            arp::Operation::Request => format!(
                "ARP request who-has {target_protocol_addr} tell {source_protocol_addr} ({source_hardware_addr})"
            ),
            arp::Operation::Reply => {
                format!("ARP reply {source_protocol_addr} is-at {source_hardware_addr}, to {target_protocol_addr}")
            }
            _ => "ARP".to_string(),
        };
        return (None, text);
    }
    let Ok(ip) = ipv4::Packet::new_checked(packet) else { return (None, format!("{} bytes", packet.len())) };
    let (src, dst): (Ipv4Addr, Ipv4Addr) = (ip.src_addr(), ip.dst_addr());
    match ip.next_header() {
        IpProtocol::Udp => {
            let flow =
                udp::Packet::new_checked(ip.payload()).ok().and_then(|d| Probe::parse(d.payload())).map(|p| p.flow);
            (flow, format!("UDP {src} -> {dst}, {} bytes", packet.len()))
        }
        IpProtocol::Icmp => {
            let flow = icmpv4::Packet::new_checked(ip.payload()).ok().and_then(|p| match icmpv4::Repr::parse(&p) {
                Ok(icmpv4::Repr::EchoRequest { data, .. } | icmpv4::Repr::EchoReply { data, .. }) => {
                    Probe::parse(data).map(|p| p.flow)
                }
                _ => None,
            });
            (flow, format!("ICMP {src} -> {dst}, {} bytes", packet.len()))
        }
        IpProtocol::Tcp => {
            (None, format!("TCP {src} -> {dst}, {} bytes{}", packet.len(), if ip.dont_frag() { ", DF" } else { "" }))
        }
        other => (None, format!("IPv4 protocol {} {src} -> {dst}", u8::from(other))),
    }
}
