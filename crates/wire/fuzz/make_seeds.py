"""Writes the seed corpus, seeds/<target>/: the byte vectors the wire crate's own tests
use (every `static`/`const NAME: [u8; N] = [...]` literal in crates/wire/src/<module>.rs
goes to that module's target), and for the config target the lowered JSON of a few
example scenarios (made by qoslab itself, `.venv/bin/python make_seeds.py --configs`).

Run from crates/wire/fuzz: python3 make_seeds.py [--handmade | --configs EXAMPLE.toml...]
"""
import hashlib
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
SRC = HERE.parent / "src"
# Modules whose vectors also seed a target named otherwise.
ALSO = {"esp": "ipsec", "ah": "ipsec", "ipsec": "ipsec"}
LITERAL = re.compile(r"(?:static|const)\s+[A-Z0-9_]+\s*:\s*\[u8;\s*[0-9A-Z_]+\]\s*=\s*\[(.*?)\];", re.S)


def numbers(body: str) -> bytes | None:
    out = []
    for item in body.replace("\n", " ").split(","):
        item = re.sub(r"//.*", "", item).strip().removesuffix("u8")
        if not item:
            continue
        try:
            out.append(int(item, 0))
        except ValueError:
            return None
    return bytes(out) if all(0 <= b < 256 for b in out) else None


def write(target: str, data: bytes) -> None:
    d = HERE / "seeds" / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)


def vectors() -> None:
    targets = {p.stem for p in (HERE / "fuzz_targets").glob("*.rs")}
    for src in sorted(SRC.glob("*.rs")):
        target = ALSO.get(src.stem, src.stem)
        if target not in targets:
            continue
        for m in LITERAL.finditer(src.read_text()):
            data = numbers(m.group(1))
            if data:
                write(target, data)


def configs() -> None:
    sys.path.insert(0, str(HERE.parents[2] / "python"))
    import json

    from qoslab.backends.sim import lower  # noqa: E402
    from qoslab.scenario import load_scenario  # noqa: E402

    for name in sys.argv[2:]:
        scenario = load_scenario(HERE.parents[2] / "examples" / name)
        test = 0 if scenario.test else None
        write("config", json.dumps(lower(scenario, test_index=test), separators=(",", ":")).encode())




def crc32_bzip2(data: bytes) -> int:
    """CRC-32 as AAL5 uses it (ITU-T I.363.5 §9.2.2.2: not reflected, init and final XOR all ones)."""
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) & 0xFFFFFFFF if crc & 0x80000000 else (crc << 1) & 0xFFFFFFFF
    return crc ^ 0xFFFFFFFF


def handmade() -> None:
    """Frames written field by field for the targets whose module has no test literal."""
    import struct
    import zlib

    ip = bytes.fromhex("450000181c46400040119b3bc0a80101c0a80102deadbeef")  # seeds/ipv4's vector
    mac_a, mac_b = bytes.fromhex("020000000001"), bytes.fromhex("020000000002")
    eth = mac_b + mac_a + b"\x08\x00" + ip + bytes(46 - len(ip))
    write("ethernet", eth + struct.pack("<I", zlib.crc32(eth)))  # IEEE 802.3 §3.2.9 FCS
    write("ethernet", mac_b + mac_a + struct.pack(">H", 3) + b"\x42\x42\x03")  # 802.3 length + LLC
    write("ethernet", mac_b + mac_a + b"\x81\x00\x20\x05\x08\x00" + ip)  # 802.1Q, VID 5, PCP 1
    arp = struct.pack(">HHBBH", 1, 0x0800, 6, 4, 1) + mac_a + bytes([192, 0, 2, 1]) + bytes(6) + bytes([192, 0, 2, 2])
    write("arp", arp)  # RFC 826 request
    write("openvpn", bytes([9 << 3 | 0, 0, 0, 1]) + bytes(range(40)))  # P_DATA_V2, peer id 1
    write("openvpn", bytes([7 << 3]) + bytes(range(20)))  # P_CONTROL_HARD_RESET_CLIENT_V2
    write("openvpn", struct.pack(">H", 21) + bytes([6 << 3]) + bytes(20))  # TCP length prefix
    sdu = ip
    pad = (-(len(sdu) + 8)) % 48
    body = sdu + bytes(pad) + bytes([0, 0]) + struct.pack(">H", len(sdu))
    write("aal5", body + struct.pack(">I", crc32_bzip2(body)))
    atm_addr = bytes([0x47]) + bytes(19)
    atmarp = struct.pack(">HHBBHBBBB", 0x0013, 0x0800, 20, 0, 1, 4, 0, 0, 4) + atm_addr + bytes([192, 0, 2, 1]) + bytes([192, 0, 2, 2])
    write("atmarp", atmarp)  # RFC 2225 §8.7 ATMARP_Request
    # Reassembly records: [seconds, length, fragment]: two fragments of one datagram.
    first = bytes.fromhex("45000024abcd2000401100000a0000010a000002") + bytes(range(16))
    last = bytes.fromhex("4500001cabcd0002401100000a0000010a000002") + bytes(range(8))
    write("reassembly", b"\x00" + struct.pack(">H", len(first)) + first + b"\x00" + struct.pack(">H", len(last)) + last)
    write("reassembly", ip)


if __name__ == "__main__":
    {"--configs": configs, "--handmade": handmade}.get(sys.argv[1] if len(sys.argv) > 1 else "", vectors)()
