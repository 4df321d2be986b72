//! Captures: a point per port and per 802.11 medium, and the frames handed on as they are seen.

use super::*;

impl World {
    /// Hands every frame a capture point sees to `sink`, as it is seen (see
    /// `crate::capture`); needs `config.capture` (which keeps the 802.11 media's and the
    /// TAP ports' frames). Opens a point per port and per 802.11 medium now.
    pub fn capture_to(&mut self, sink: Box<dyn CaptureSink>) -> Result<(), RunError> {
        let ports: Vec<Vec<String>> = self
            .config
            .nodes
            .iter()
            .zip(&self.nodes)
            .map(|(c, node)| {
                (0..c.ports.len()).map(|p| format!("{}-{}", node.name, node.port_name(p as u16))).collect()
            })
            .collect();
        let media: Vec<String> = self.bsses.iter().map(|b| b.cell.name.clone()).collect();
        self.capture = Some(Capturing::new(sink, &ports, &media).map_err(RunError::Capture)?);
        Ok(())
    }

    /// Hands on the frames the nodes' TAP ports and the 802.11 media kept during an
    /// event, in the order they were seen.
    pub(super) fn pass_captures(&mut self) -> Result<(), RunError> {
        for &node in &self.tap_nodes {
            let kept = self.nodes[node as usize].tunnels.capture.as_mut().map(std::mem::take).unwrap_or_default();
            if let Some(c) = self.capture.as_mut() {
                for (port, t, frame) in kept {
                    c.port(node, port, t, &frame).map_err(RunError::Capture)?;
                }
            }
        }
        for (i, b) in self.bsses.iter_mut().enumerate() {
            let air = b.cell.bss.take_air();
            if let Some(c) = self.capture.as_mut() {
                for f in &air {
                    // Each PPDU once, at its start, as a capture of the air shows it.
                    c.air(i, f.start, &air_record(f, &b.cell.macs, b.cell.channel)).map_err(RunError::Capture)?;
                }
            }
        }
        Ok(())
    }
}
