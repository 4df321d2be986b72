"""Data files shipped with qoslab, and their loaders.

- ``cpu_profiles.toml``: the CPU profiles a scenario's ``cpu = "…"`` names (per-packet
  and per-byte costs in cycles, the clock, the job queue), each number with where it
  comes from in the profile's ``calibration`` table.
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib.resources import files
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

DEFAULT_PROFILE = "ideal"
"""What a node without ``cpu`` gets: the scenario language says 'none = an infinitely fast CPU'."""

HARDWARE_PROFILE = "asic"
"""What switches, APs and AP routers get without ``cpu``: forwarding in hardware."""


class CpuCycles(BaseModel):
    """Cycles per operation (crates/sim/src/config.rs, ``CpuCycles``)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    per_rx_packet: int = Field(ge=0)
    per_tx_packet: int = Field(ge=0)
    per_byte_copied: float = Field(ge=0)
    per_bridge_lookup: int = Field(ge=0)
    per_route_lookup: int = Field(ge=0)
    per_nat_translation: int = Field(ge=0)
    per_byte_rc4: float = Field(ge=0, description="RC4 (WEP, TKIP) per byte on the host CPU.")
    per_byte_aes: float = Field(ge=0, description="AES (CCMP) per byte on the host CPU.")
    per_byte_esp: float = Field(0.0, ge=0, description="IPsec ESP: cipher and HMAC per byte sealed or opened.")
    per_esp_packet: int = Field(0, ge=0, description="IPsec ESP: fixed cost of each encapsulation or decapsulation.")
    per_atm_cell: float = Field(
        0.0, ge=0, description="ATM: segmentation or reassembly of one cell by the host CPU; 0 when the NIC does SAR."
    )
    per_openvpn_packet: int = Field(0, ge=0, description="OpenVPN: fixed cost of sealing or opening one data packet.")
    per_byte_openvpn: float = Field(
        0.0, ge=0, description="OpenVPN: HMAC and cipher per byte of each data packet sealed or opened."
    )
    per_pppoe_packet: int = Field(0, ge=0, description="PPPoE: encapsulating or decapsulating one session frame.")
    per_pptp_packet: int = Field(
        0,
        ge=0,
        description="PPTP: encapsulating or decapsulating one enhanced-GRE packet (PPP channel, GRE header, sequence/ack bookkeeping).",
    )
    per_byte_pptp: float = Field(0.0, ge=0, description="PPTP: per octet of every GRE packet sent or taken.")


class AtmNic(BaseModel):
    """An ATM adapter whose segmentation is slower than its line (crates/sim/src/config.rs,
    ``AtmNicCost``): its own engine, not the host CPU, so it costs the host no cycles."""

    model_config = ConfigDict(extra="forbid", strict=True)

    sar_pdu_ns: int = Field(
        0,
        ge=0,
        description="Set-up time per AAL5 PDU sent (descriptor, DMA), ns; the next PDU waits for the last cell of this one.",
    )
    sar_cell_rate: int = Field(
        0, ge=0, description="Cells per second the adapter segments at most; 0 = the line's cell rate."
    )


class CpuProfile(BaseModel):
    """One CPU profile: clock, job queue, cycles, and where each number comes from."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str
    description: str
    hz: int = Field(ge=0, description="Clock rate; 0 = forwarding in hardware at no CPU cost.")
    queue_limit: int = Field(ge=1, description="Frames waiting for the CPU at most.")
    cycles: CpuCycles
    atm_nic: AtmNic | None = Field(
        None, description="The machine's ATM adapter, where its segmentation is slower than the line; none = line rate."
    )
    rx_latency_ns: int = Field(
        0,
        ge=0,
        description="Receive-path latency of every frame before the CPU takes it, ns: the adapter's transfer to host memory, its "
        "interrupt and the driver's deferred call. The CPU is not busy meanwhile and frames overlap in it (a pipeline, "
        "in order), so it delays without limiting the rate.",
    )
    rx_latency_ns_per_byte: float = Field(
        0.0,
        ge=0,
        description="The part of the receive-path latency that grows with the frame: ns per byte of the Ethernet frame (header and payload, no FCS).",
    )
    calibration: dict[str, str] = Field(
        description="Field name -> where its value comes from ('cycles' covers every cycle count)."
    )

    @model_validator(mode="after")
    def _every_number_has_a_source(self) -> CpuProfile:
        needed = ["hz", "queue_limit"]
        if "cycles" not in self.calibration:
            needed += list(CpuCycles.model_fields)
        if self.atm_nic is not None:
            needed += [f"atm_nic.{k}" for k in AtmNic.model_fields]
        needed += [k for k in ("rx_latency_ns", "rx_latency_ns_per_byte") if getattr(self, k)]
        missing = [k for k in needed if not self.calibration.get(k, "").strip()]
        if missing:
            raise ValueError(f"profile {self.name!r}: no calibration note for {', '.join(missing)}")
        return self

    def sim_config(self) -> dict[str, Any]:
        """The simulator's ``CpuConfig`` for this profile."""
        nic = self.atm_nic if self.atm_nic is not None else AtmNic()
        return {
            "profile": self.name,
            "hz": self.hz,
            "queue_limit": self.queue_limit,
            "cycles": self.cycles.model_dump(),
            "atm_nic": nic.model_dump(),
            "rx_latency": {"per_frame_ns": self.rx_latency_ns, "per_byte_ns": float(self.rx_latency_ns_per_byte)},
        }


@cache
def cpu_profiles() -> dict[str, CpuProfile]:
    """Every CPU profile of ``cpu_profiles.toml``, by name.

    Examples
    --------
    >>> profiles = cpu_profiles()
    >>> profiles["pentium-m-1.6ghz"].hz
    1600000000
    >>> profiles["asic"].hz
    0
    """
    text = files(__name__).joinpath("cpu_profiles.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    return {name: CpuProfile.model_validate({"name": name, **table}) for name, table in data.items()}


__all__ = ["AtmNic", "CpuProfile", "CpuCycles", "cpu_profiles", "DEFAULT_PROFILE", "HARDWARE_PROFILE"]
