"""Type stubs for qoslab._core, the Rust core (crates/py). Thin bindings: every function
here converts its arguments and calls crates/wire or crates/sim."""

def core_version() -> str:
    """The version of the Rust core."""

def core_build() -> str:
    """How the core was compiled: ``"pgo"`` (profile-guided, by scripts/install.sh) or
    ``"release"``."""

def wrap(
    layer: str, options: dict[str, str], context: dict[str, object], payload: bytes
) -> tuple[bytes, list[tuple[str, int]]]:
    """Encodes one layer around ``payload`` with real headers and trailers.

    ``layer`` is a canonical layer name of the STACK language (``ethernet``, ``ipv4``,
    ``openvpn`` ...), ``options`` its options as strings, ``context`` what the layer
    needs from its neighbours (``inner``: the carried layer's name; ``outer``; ``src``
    and ``dst`` for IPv4 and the transports' pseudo-header; ``fcs``/``pad`` for Ethernet;
    ``hdlc``/``pfc``/``acfc`` for PPP). Returns the encoded bytes and the named byte
    counts the layer added (header fields first, then trailer fields).
    """

def ipv4_fragment(packet: bytes, mtu: int) -> list[bytes]:
    """Splits an IPv4 datagram into fragments of at most ``mtu`` bytes (RFC 791 §3.2)."""

def openvpn_fragment(options: dict[str, str], context: dict[str, object], payload: bytes) -> list[bytes]:
    """OpenVPN's internal fragmentation: ``payload`` as whole OpenVPN data packets, each
    with its fragment header, none larger than the ``fragment`` option."""

def serial_line_bits(format: str, nbytes: int) -> int:
    """Bits on an asynchronous serial line for ``nbytes`` characters in ``format`` ("8n1")."""

def sync_line_bits(line: bytes) -> tuple[int, int]:
    """Bits on a synchronous (RFC 1662 §5) line for one frame between two flags: for these
    octets (8 each plus the zero bits inserted), and the most a frame of this length needs."""

def write_pcap(path: str, physical: str, frames: list[bytes]) -> None:
    """Writes ``frames`` of the outermost layer ``physical`` to a pcap file with the
    matching link type."""

def toml_key_spans(
    text: str,
) -> dict[tuple[str | int, ...], tuple[tuple[int, int] | None, tuple[int, int] | None]]:
    """Positions of every key and value of a TOML document: each path (str keys, int
    indices) maps to (key position, value position), each a 1-based (line, column) or
    None. Raises ValueError on a TOML syntax error."""

def emulate_link(
    fd_a: int,
    fd_b: int,
    link_json: str,
    seed: int,
    stop_fd: int,
    link_index: int = 0,
    spin_us: int | None = None,
    busy_poll: bool = False,
    fifo_priority: int | None = None,
    kernel_arrivals: bool = True,
) -> str:
    """Forwards frames between the TUN/TAP devices open on ``fd_a`` (the plan link's
    ``a`` end) and ``fd_b`` (``b``) through the link ``link_json`` (Ethernet or serial,
    as in the plan) in real time (crates/emu), until ``stop_fd`` is readable or closed
    or the process gets SIGTERM or SIGINT; releases the GIL. The loss streams are those
    of link ``link_index`` of a run of ``seed``. ``spin_us``: poll without sleeping this
    long before each deadline (default 50); ``busy_poll``: never sleep (a core at 100 %);
    ``fifo_priority``: run under SCHED_FIFO at this priority (needs root);
    ``kernel_arrivals``: offer each frame at its kernel timestamp on the sending TAP
    (default), or, False, at the instant it is read. Returns the counters and lateness as
    JSON (docs/metrics.md, "The link emulator"). Raises ValueError for a link the
    emulator refuses, OSError for a descriptor it cannot use."""

def emulated_link_ends(plan_json: str, link_index: int) -> list[tuple[int, int]]:
    """The plan ports ``(node, port)`` of link ``link_index``'s ends, in the order
    :func:`emulate_plan_link` takes their descriptors: a line's ``a`` and ``b``, an
    802.11 cell's members with the AP first. Raises ValueError for a link the emulator
    does not run."""

def emulate_plan_link(
    fds: list[int],
    plan_json: str,
    link_index: int,
    stop_fd: int,
    seed: int | None = None,
    spin_us: int | None = None,
    busy_poll: bool = False,
    fifo_priority: int | None = None,
) -> str:
    """As :func:`emulate_link`, for link ``link_index`` of the lowered plan ``plan_json``
    (a line, or an 802.11 cell with one TAP per member, crates/sim's own ``WifiCell``),
    one descriptor per end in ``fds`` in the order of :func:`emulated_link_ends`; the
    link's random streams are those of the simulator's run of ``seed`` (default: the
    plan's)."""

def run_tunnel(node_json: str, name: str, stop_fd: int, notify_fd: int | None = None) -> str:
    """Runs the end of tunnel ``name`` of the plan node ``node_json`` (PPPoE, or IPsec in
    tunnel mode) in this process's network namespace: a TUN device named after the
    tunnel, raw sockets on the outer side (crates/emu ``tunnel``), until ``stop_fd`` is
    readable or closed, or SIGTERM or SIGINT; releases the GIL. Writes ``ready`` and
    ``up`` lines to ``notify_fd``. Returns its counters as JSON (docs/metrics.md,
    "User-space tunnels"). Raises ValueError for a tunnel it does not run, OSError for a
    device or socket it cannot open."""

def wifi_preamble_problem(standard: str, preamble: str) -> str | None:
    """Why an 802.11 cell of ``standard`` ("802.11", "802.11b", ...) cannot send the PLCP
    ``preamble`` ("long" or "short"), or None if it can: the plan's one statement of the
    rule (``qoslab_plan::WifiStandard::preamble_problem``), which the plan's check applies
    too. Raises ValueError on a name the plan does not know."""
