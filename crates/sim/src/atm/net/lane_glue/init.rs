//! LANE and MPOA entities from the configuration: LES, BUS, LECS, MPS and the clients.

use super::*;

impl AtmNet {
    /// Servers and clients from the configuration.
    pub(in crate::atm::net) fn lane_init(
        &mut self,
        config: &lane::LaneConfig,
        nodes: &[NodeConfig],
    ) -> Result<(), ConfigError> {
        let les_atm = self.lane_servers_init(config, nodes)?;
        let lecs_atm = match config.lecs {
            Some(r) => {
                let ep = ep_at(self, nodes, r, "atm.lane.lecs".into())?;
                let s = self.endpoints[ep as usize].servers.get_or_insert_with(Box::default);
                s.lecs = Some(config.elans.iter().zip(&les_atm).map(|(e, a)| (e.name.clone(), *a)).collect());
                Some(lane::with_selector(self.endpoints[ep as usize].atm, sel::LECS))
            }
            None => None,
        };
        let mps_of_elan = self.mps_init(config, nodes)?;
        for (k, c) in config.clients.iter().enumerate() {
            let ep = ep_at(self, nodes, c.port, format!("atm.lane.clients[{k}].port"))?;
            let elan = config.elans.get(c.elan).ok_or_else(|| ConfigError {
                field: format!("atm.lane.clients[{k}].elan"),
                message: format!("no ELAN {}", c.elan),
            })?;
            let e = &mut self.endpoints[ep as usize];
            let mut l = Lec::new(elan.name.clone(), c.proxy, e.mac);
            l.lecs = lecs_atm;
            l.flush = config.flush;
            l.aging_ns = config.aging_time_ns;
            if lecs_atm.is_none() {
                l.les = Some(les_atm[c.elan]);
            }
            let is_mps = e.servers.as_ref().is_some_and(|s| s.mps.is_some());
            if let (Some(m), Some(&(mac, atm)), false) = (&config.mpoa, mps_of_elan.get(&c.elan), is_mps) {
                let mut mpc = Mpc::new(m.shortcut_frames, m.shortcut_time_ns);
                // MPS discovery (af-mpoa-0087.000 §4.1, device-type TLVs in LE_ARP
                // responses) is replaced by configuration.
                mpc.mps_mac = Some(mac);
                mpc.mps_atm = Some(atm);
                l.mpc = Some(mpc);
            }
            e.lane = Some(Box::new(l));
        }
        Ok(())
    }

    /// Each ELAN's LES and BUS; returns the LES's ATM address per ELAN.
    fn lane_servers_init(
        &mut self,
        config: &lane::LaneConfig,
        nodes: &[NodeConfig],
    ) -> Result<Vec<AtmAddress>, ConfigError> {
        let mut les_atm = Vec::new();
        for (i, e) in config.elans.iter().enumerate() {
            let les = ep_at(self, nodes, e.les, format!("atm.lane.elans[{i}].les"))?;
            let bus = ep_at(self, nodes, e.bus, format!("atm.lane.elans[{i}].bus"))?;
            let bus_atm = lane::with_selector(self.endpoints[bus as usize].atm, sel::bus(i));
            let s = self.endpoints[les as usize].servers.get_or_insert_with(Box::default);
            s.les.insert(sel::les(i), lane::Les::new(e.name.clone(), bus_atm));
            let s = self.endpoints[bus as usize].servers.get_or_insert_with(Box::default);
            s.bus.insert(
                sel::bus(i),
                Bus {
                    elan: e.name.clone(),
                    leaves: BTreeMap::new(),
                    cells_per_second: e.bus_cells_per_second,
                    frames_per_second: e.bus_frames_per_second,
                    queue_frames: e.bus_queue_frames,
                    departures: Default::default(),
                },
            );
            les_atm.push(lane::with_selector(self.endpoints[les as usize].atm, sel::les(i)));
        }
        Ok(les_atm)
    }

    /// The MPSs (af-mpoa-0087.000), each on a router's LANE port; returns the MPS of each
    /// ELAN (by index) with its MAC and ATM address.
    fn mps_init(
        &mut self,
        config: &lane::LaneConfig,
        nodes: &[NodeConfig],
    ) -> Result<BTreeMap<usize, (Mac, AtmAddress)>, ConfigError> {
        let mut mps_of_elan: BTreeMap<usize, (Mac, AtmAddress)> = BTreeMap::new();
        if let Some(m) = &config.mpoa {
            for (k, r) in m.servers.iter().enumerate() {
                let ep = ep_at(self, nodes, *r, format!("atm.lane.mpoa.servers[{k}]"))?;
                let elan = config.clients.iter().find(|c| c.port == *r).map(|c| c.elan).ok_or_else(|| ConfigError {
                    field: format!("atm.lane.mpoa.servers[{k}]"),
                    message: "an MPS runs on a router's LANE port: this port joins no ELAN".into(),
                })?;
                let e = &mut self.endpoints[ep as usize];
                e.servers.get_or_insert_with(Box::default).mps = Some(BTreeMap::new());
                mps_of_elan.insert(elan, (e.mac, lane::with_selector(e.atm, sel::MPS)));
            }
            // Every MPS knows which LE clients belong to MPSs (its NHS peers).
            let lecs: std::collections::BTreeSet<AtmAddress> = m
                .servers
                .iter()
                .filter_map(|r| self.endpoint_of.get(&(r.node, r.port)))
                .map(|&ep| self.endpoints[ep as usize].atm)
                .collect();
            for r in &m.servers {
                let ep = self.endpoint_of[&(r.node, r.port)];
                if let Some(s) = self.endpoints[ep as usize].servers.as_mut() {
                    s.nhs_lecs = lecs.clone();
                }
            }
        }
        Ok(mps_of_elan)
    }

    /// Whether endpoint `ep` is an LE client (its node sends Ethernet frames to it).
    pub fn is_lec(&self, ep: u32) -> bool {
        self.endpoints[ep as usize].lane.is_some()
    }
}

/// The endpoint of LANE port `r`, which must be an ATM port of an end system.
fn ep_at(net: &AtmNet, nodes: &[NodeConfig], r: crate::config::PortRef, field: String) -> Result<u32, ConfigError> {
    net.endpoint_of.get(&(r.node, r.port)).copied().ok_or_else(|| ConfigError {
        field,
        message: format!(
            "port {} of node {} is not an ATM port of an end system",
            r.port,
            nodes.get(r.node as usize).map_or("?", |n| n.name.as_str())
        ),
    })
}
