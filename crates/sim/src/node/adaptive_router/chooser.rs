//! The channel chooser of seed 004's router: radio or modem by the two delivery ratios,
//! with hysteresis, and probes of the radio while the modem carries the traffic. See the
//! router's overview in [`super`].

/// One millisecond in nanoseconds.
const MS: u64 = 1_000_000;

/// The two upstream channels of seed 004's router.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Channel {
    /// The WaveLAN transmitter, home to campus.
    Radio,
    /// The modem's SLIP line.
    Modem,
}

/// Configuration of a [`ChannelChooser`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChooserConfig {
    /// Leave the radio when its ratio falls strictly below this. Seed 004: "Once packet
    /// losses approach 10%, a typical TCP implementation backs off so much that it
    /// effectively shuts down" — 0.90.
    pub low: f64,
    /// Return to the radio when its ratio rises strictly above this. Seed 004 gives no
    /// number; 0.97 (3 % loss) makes the band 7 points, over twice the estimate's
    /// standard deviation at 90 % with the default window (see [`RatioConfig::window`]).
    pub high: f64,
    /// While on the modem, how often the world should send a probe frame over the radio
    /// so its ratio keeps being measured (nothing else goes over it then, and a frozen
    /// estimate would never rise above `high`). Seed 004 is silent on how the router
    /// noticed recovery; 50 ms (20 probes/s of ~48 octets, < 1 % of 2 Mb/s) refills the
    /// default window in 5 s.
    pub probe_interval_ns: u64,
    /// The channel at start: the radio, as the seed's router was first built.
    pub initial: Channel,
}

impl Default for ChooserConfig {
    fn default() -> Self {
        ChooserConfig { low: 0.90, high: 0.97, probe_interval_ns: 50 * MS, initial: Channel::Radio }
    }
}

/// A change of channel, with the estimates that caused it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Switch {
    pub at_ns: u64,
    pub from: Channel,
    pub to: Channel,
    pub radio_ratio: Option<f64>,
    pub modem_ratio: Option<f64>,
}

/// Picks the upstream channel from the two delivery ratios, with hysteresis:
///
/// * on the radio, switch to the modem when the radio's ratio < `low` and the modem's
///   ratio is unknown or higher than the radio's (no point leaving for a worse line);
/// * on the modem, switch back when the radio's ratio > `high`, or when the modem's
///   ratio is known and lower than the radio's (the line failed).
///
/// Between `low` and `high` it stays where it is. An unknown radio ratio never causes
/// a switch.
#[derive(Clone, Debug)]
pub struct ChannelChooser {
    config: ChooserConfig,
    current: Channel,
    next_probe: Option<u64>,
    switches: Vec<Switch>,
}

impl ChannelChooser {
    /// Panics unless `0 ≤ low ≤ high ≤ 1` and the probe interval is positive.
    pub fn new(config: ChooserConfig) -> ChannelChooser {
        assert!(
            (0.0..=1.0).contains(&config.low) && (0.0..=1.0).contains(&config.high) && config.low <= config.high,
            "ChooserConfig: need 0 <= low <= high <= 1"
        );
        assert!(config.probe_interval_ns > 0, "ChooserConfig: probe_interval_ns must be > 0");
        ChannelChooser { config, current: config.initial, next_probe: None, switches: Vec::new() }
    }

    /// The channel upstream frames should take now.
    pub fn channel(&self) -> Channel {
        self.current
    }
    /// Every switch so far, in time order.
    pub fn switches(&self) -> &[Switch] {
        &self.switches
    }

    /// Re-evaluates the choice from the current estimates (call after each recorded
    /// outcome). Returns the switch if the channel changed.
    pub fn update(&mut self, now: u64, radio: Option<f64>, modem: Option<f64>) -> Option<Switch> {
        let r = radio?;
        let to = match self.current {
            Channel::Radio if r < self.config.low && modem.is_none_or(|m| m > r) => Channel::Modem,
            Channel::Modem if r > self.config.high || modem.is_some_and(|m| m < r) => Channel::Radio,
            _ => return None,
        };
        let switch = Switch { at_ns: now, from: self.current, to, radio_ratio: radio, modem_ratio: modem };
        self.current = to;
        self.next_probe = (to == Channel::Modem).then(|| now.saturating_add(self.config.probe_interval_ns));
        self.switches.push(switch);
        Some(switch)
    }

    /// When the next radio probe is due (only while on the modem).
    pub fn poll_at(&self) -> Option<u64> {
        self.next_probe
    }

    /// True if a probe should go over the radio now; re-arms the probe timer.
    pub fn on_timer(&mut self, now: u64) -> bool {
        match self.next_probe {
            Some(t) if t <= now => {
                self.next_probe = Some(now.saturating_add(self.config.probe_interval_ns));
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn chooser_ignores_unknown_and_worse_modem() {
        let mut c = ChannelChooser::new(ChooserConfig::default());
        assert_eq!(c.update(0, None, Some(1.0)), None);
        assert_eq!(c.update(0, Some(0.5), Some(0.4)), None); // modem worse: stay
        assert!(c.update(1, Some(0.5), Some(0.99)).is_some());
        assert_eq!(c.poll_at(), Some(1 + 50 * MS));
        // The modem line fails: back to the radio although it is below `high`.
        assert_eq!(c.update(2, Some(0.5), Some(0.2)).map(|s| s.to), Some(Channel::Radio));
        assert_eq!(c.poll_at(), None);
    }
}
