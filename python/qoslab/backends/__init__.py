"""Backends run a scenario and measure it.

- :mod:`qoslab.backends.sim`: the deterministic discrete-event simulator (crates/sim
  through ``qoslab._core.simulate``): :func:`~qoslab.backends.sim.lower` turns a
  scenario into the simulator's input, :func:`~qoslab.backends.sim.simulate` runs it.
"""

from qoslab.backends.sim import Network, SimulationError, lower, lower_network, simulate

__all__ = ["lower", "lower_network", "simulate", "Network", "SimulationError"]
