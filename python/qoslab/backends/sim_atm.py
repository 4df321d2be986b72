"""The ATM lowering moved to :mod:`qoslab.lower.atm`; its names stay importable here."""

from __future__ import annotations

from qoslab.lower.atm import NIC_QUEUE_FRAMES, atm_config, atm_link, is_lane_port, pvc

__all__ = ["NIC_QUEUE_FRAMES", "atm_config", "atm_link", "is_lane_port", "pvc"]
