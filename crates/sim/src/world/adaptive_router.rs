//! Seed 004's adaptive routers in the world: what they send, their timers, and each one checked
//! against the links it needs.

use super::*;

impl World {
    /// The timer of adaptive router `index`.
    pub(super) fn adaptive_router_timer(&mut self, now: u64, index: u32) -> Result<(), RunError> {
        if !self.adaptive_timers[index as usize].fired(now) {
            return Ok(());
        }
        let txs = self.adaptive_routers[index as usize].on_timer(now);
        self.adaptive_router_send(now, index, txs)?;
        Ok(())
    }

    /// Sends what an adaptive upstream asked for, and re-arms its timer.
    pub(super) fn adaptive_router_send(&mut self, now: u64, index: u32, txs: Vec<Tx>) -> Result<(), RunError> {
        for tx in txs {
            self.transmit_port(now, tx.node, tx.port, tx.frame, tx.priority)?;
        }
        // The slot's rule (`crate::wake`).
        let wanted = self.adaptive_routers[index as usize].poll_at();
        self.adaptive_timers[index as usize]
            .arm(&mut self.engine, wanted, Event::AdaptiveRouter { index })
            .map_err(budget)
    }
}

/// The adaptive routers of the configuration, each checked against the links: its
/// radio ports in one 802.11 cell, its modem port on a serial line whose other end is
/// the peer.
pub(super) fn adaptive_routers(
    config: &SimConfig,
    attachments: &[Vec<Attachment>],
    bsses: &[CellSlot],
) -> Result<Vec<AdaptiveRouter>, RunError> {
    let mut out = Vec::new();
    for (i, a) in config.adaptive.iter().enumerate() {
        let fail = |field: &str, message: String| {
            RunError::Config(ConfigError { field: format!("adaptive[{i}].{field}"), message })
        };
        a.check().map_err(|(field, message)| fail(field, message))?;
        let port = |node: u32, port: u16| attachments.get(node as usize).and_then(|p| p.get(port as usize)).copied();
        let (Some(Attachment::Wifi { bss, .. }), Some(Attachment::Wifi { bss: peer_bss, .. })) =
            (port(a.node, a.radio_port), port(a.peer, a.peer_radio_port))
        else {
            return Err(fail("radio_port", "the radio ports of both routers must be on an 802.11 link".into()));
        };
        if bss != peer_bss {
            return Err(fail(
                "peer_radio_port",
                format!(
                    "the two routers' radio ports are on different cells ({} and {})",
                    bsses[bss as usize].cell.name, bsses[peer_bss as usize].cell.name
                ),
            ));
        }
        let Some(Attachment::Ethernet { link, end }) = port(a.node, a.modem_port) else {
            return Err(fail("modem_port", "the modem port must be on a serial line".into()));
        };
        let modem = config.links.iter().filter(|l| !matches!(l, LinkConfig::Wifi(_))).nth(link as usize);
        let far = match modem {
            Some(LinkConfig::Serial { a: x, b: y, .. }) => {
                if end == 0 {
                    y
                } else {
                    x
                }
            }
            _ => return Err(fail("modem_port", "the modem port must be on a serial line".into())),
        };
        if far.node != a.peer {
            return Err(fail(
                "modem_port",
                format!("the modem line's other end is node {}, not the peer {}", far.node, a.peer),
            ));
        }
        let mac = |node: u32, port: u16| Mac(config.nodes[node as usize].ports[port as usize].mac);
        out.push(AdaptiveRouter::new(a.clone(), mac(a.node, a.radio_port), mac(a.peer, a.peer_radio_port), link, end));
    }
    Ok(out)
}
