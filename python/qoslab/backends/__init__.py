"""Backends run a plan and measure it.

- :mod:`qoslab.backends.sim`: the deterministic discrete-event simulator (crates/sim
  through ``qoslab._core.simulate``): :func:`~qoslab.backends.sim.simulate` runs a plan
  that :mod:`qoslab.lower` made from a scenario (its ``lower`` stays importable here).
"""

from qoslab.backends.sim import Network, SimulationError, lower, lower_network, simulate

__all__ = ["lower", "lower_network", "simulate", "Network", "SimulationError"]
