"""qoslab: a lab for layered network paths.

Describe a path (hosts, Ethernet and 802.11 links, serial lines, ATM, bridges, NAT,
tunnels and VPNs) in a scenario file; qoslab analyses its per-layer overhead and MTUs,
and measures its QoS by standard methods.

The Python API (:mod:`qoslab.api`, docs/api.md): :func:`load`, :func:`loads`,
:class:`Scenario`, :func:`run` returning :class:`Results`, and :func:`mtu`. They are
imported on first use, so that the command line starts fast.

>>> import qoslab
>>> qoslab.__version__ == qoslab._core.core_version()
True
"""

from qoslab import _core

# The package's version is the core crate's (pyproject.toml: version is dynamic, taken by
# maturin from crates/py/Cargo.toml), so the extension says it without importlib.metadata,
# whose import costs about 0.1 s of every command's start.
__version__: str = _core.core_version()

_API = {"load", "loads", "run", "mtu", "Results", "BACKENDS"}


def __getattr__(name: str) -> object:
    # PEP 562: the API is imported when first used (pydantic's models take a tenth of a
    # second to build; `qoslab mtu` never needs them).
    if name in _API:
        from qoslab import api

        return getattr(api, name)
    if name == "Scenario":
        from qoslab.scenario import Scenario

        return Scenario
    if name == "InputError":
        from qoslab.errors import InputError

        return InputError
    raise AttributeError(f"module 'qoslab' has no attribute {name!r}")


__all__ = ["__version__", "load", "loads", "Scenario", "run", "Results", "mtu", "InputError", "BACKENDS"]
