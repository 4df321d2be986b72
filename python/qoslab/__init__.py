"""qoslab: a lab for layered network paths.

Describe a path (hosts, Ethernet and 802.11 links, serial lines, ATM, bridges, NAT,
tunnels and VPNs) in a scenario file; qoslab analyses its per-layer overhead and MTUs,
and measures its QoS by standard methods.

>>> import qoslab
>>> qoslab.__version__ == qoslab._core.core_version()
True
"""

from importlib.metadata import PackageNotFoundError, version as _version

from qoslab import _core

try:
    __version__ = _version("qoslab")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = _core.core_version()

__all__ = ["__version__"]
