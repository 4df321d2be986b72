"""qoslab: a lab for layered network paths.

Describe a path (hosts, Ethernet and 802.11 links, serial lines, ATM, bridges, NAT,
tunnels and VPNs) in a scenario file; qoslab analyses its per-layer overhead and MTUs,
and measures its QoS by standard methods.

>>> import qoslab
>>> qoslab.__version__ == qoslab._core.core_version()
True
"""

from qoslab import _core

# The package's version is the core crate's (pyproject.toml: version is dynamic, taken by
# maturin from crates/py/Cargo.toml), so the extension says it without importlib.metadata,
# whose import costs about 0.1 s of every command's start.
__version__: str = _core.core_version()

__all__ = ["__version__"]
