"""Analysis without simulation: per-layer overhead, MTUs, MSS, wire cost."""
