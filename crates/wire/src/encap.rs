//! Encapsulation by layer: wrap a payload in any one layer of a stack, with real bytes.
//!
//! The MTU analysis (`qoslab mtu`) and the whole-stack dissector tests describe a path
//! as a list of layers ("ethernet/ipv4/udp/openvpn/ethernet/pppoe/ipv4/tcp") and need,
//! for each, the bytes that layer adds around what it carries. This module is the one
//! place that knows how to build every layer of this crate with sensible field values
//! (documentation addresses, fixed keys and IVs, sequence number 1), so that overheads,
//! padding, escapes and cells come out of real encodings, never out of constants.
//!
//! Field values are deterministic: the same stack and payload always give the same bytes.
//! Keys and IVs are fixed test values: the bytes have the lengths and structure the
//! standards give, and are really encrypted and authenticated, but they protect nothing.

use core::fmt;
use core::str::FromStr;

use crate::ethernet::{self, Address as Mac, EtherType};
use crate::ipsec::{self, SecurityAssociation};
use crate::ipv4::{self, Address};
use crate::slip::serial::SerialFormat;
use crate::{
    aal5, ah, atm, cslip, dot11, dot11_crypto, esp, gre, hdlc, icmpv4, lane, llc, openvpn, ppp, pppoe, rfc2684, slip,
    tcp, udp, IpProtocol,
};

/// Named byte counts a layer adds, header fields first, then trailer fields.
pub type Fields = Vec<(&'static str, usize)>;

/// Why a layer could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncapError(pub String);

impl fmt::Display for EncapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EncapError {}

fn err<T>(message: impl Into<String>) -> Result<T, EncapError> {
    Err(EncapError(message.into()))
}

/// The layers of the STACK language, by canonical name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Ethernet,
    Wifi,
    Serial,
    /// A synchronous serial line (leased line, ISDN B channel, E1): PPP in
    /// bit-synchronous HDLC framing, RFC 1662 §5.
    Sync,
    Slip,
    Cslip,
    Ppp,
    Atm,
    Aal5,
    LlcSnap,
    VcMux,
    Lane,
    Pppoe,
    Ipv4,
    Udp,
    Tcp,
    Icmp,
    OpenVpn,
    Gre,
    Esp,
    Ah,
}

impl FromStr for Kind {
    type Err = EncapError;

    fn from_str(s: &str) -> Result<Kind, EncapError> {
        Ok(match s {
            "ethernet" => Kind::Ethernet,
            "wifi" => Kind::Wifi,
            "serial" => Kind::Serial,
            "sync" => Kind::Sync,
            "slip" => Kind::Slip,
            "cslip" => Kind::Cslip,
            "ppp" => Kind::Ppp,
            "atm" => Kind::Atm,
            "aal5" => Kind::Aal5,
            "llc-snap" => Kind::LlcSnap,
            "vc-mux" => Kind::VcMux,
            "lane" => Kind::Lane,
            "pppoe" => Kind::Pppoe,
            "ipv4" => Kind::Ipv4,
            "udp" => Kind::Udp,
            "tcp" => Kind::Tcp,
            "icmp" => Kind::Icmp,
            "openvpn" => Kind::OpenVpn,
            "gre" => Kind::Gre,
            "esp" => Kind::Esp,
            "ah" => Kind::Ah,
            other => return err(format!("unknown layer {other:?}")),
        })
    }
}

/// One layer's options and what it needs from its neighbours in the stack.
#[derive(Debug, Clone, Default)]
pub struct Spec {
    /// The layer's options as the STACK language writes them (`cipher=none`).
    pub options: Vec<(String, String)>,
    /// The layer it carries, if any (`None` for application data).
    pub inner: Option<Kind>,
    /// The carried layer's options (AH needs its SA at the IPv4 layer below it).
    pub inner_options: Vec<(String, String)>,
    /// The layer that carries it, if any.
    pub outer: Option<Kind>,
    /// Addresses of the nearest IPv4 layer at or outside this one (IPv4 itself, the
    /// transports' pseudo-header, IPsec).
    pub src: Option<Address>,
    pub dst: Option<Address>,
    /// Ethernet: append the FCS; pad to the 64-byte minimum (only on a real link).
    pub fcs: bool,
    pub pad: bool,
    /// PPP: HDLC-like framing (on a serial line), protocol-field and
    /// address-and-control-field compression.
    pub hdlc: bool,
    pub pfc: bool,
    pub acfc: bool,
    /// PPP in HDLC-like framing: the Async-Control-Character-Map (RFC 1662 §7.1).
    pub accm: u32,
}

impl Spec {
    fn option(&self, name: &str) -> Option<&str> {
        self.options.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    fn flag(&self, name: &str) -> bool {
        self.option(name) == Some("yes")
    }

    fn number(&self, name: &str) -> Result<Option<usize>, EncapError> {
        match self.option(name) {
            None => Ok(None),
            Some(v) => v.parse().map(Some).map_err(|_| EncapError(format!("option {name}: not a number: {v:?}"))),
        }
    }

    fn addresses(&self) -> (Address, Address) {
        // RFC 5737 documentation addresses (not 192.0.2.x: 0xC0 is SLIP's END).
        (self.src.unwrap_or(Address::new(198, 51, 100, 1)), self.dst.unwrap_or(Address::new(198, 51, 100, 2)))
    }
}

/// Locally administered MAC addresses (IEEE 802 §8.2: U/L bit set) for built frames.
const MAC_A: Mac = Mac([0x02, 0x00, 0x00, 0x00, 0x00, 0x01]);
const MAC_B: Mac = Mac([0x02, 0x00, 0x00, 0x00, 0x00, 0x02]);
const BSSID: Mac = Mac([0x02, 0x00, 0x00, 0x00, 0x00, 0xaa]);

/// RFC 2516 §4: any session id but 0x0000 and 0xffff.
const PPPOE_SESSION: u16 = 0x0001;
/// IANA: OpenVPN's registered port.
const OPENVPN_PORT: u16 = 1194;
/// The client side of every built flow: the start of the IANA dynamic range.
const EPHEMERAL_PORT: u16 = 49152;
/// RFC 863: the discard port, for application data with nowhere particular to go.
const DISCARD_PORT: u16 = 9;
const PPTP_CALL_ID: u16 = 1;
const SPI: u32 = 0x0000_1001;

/// Wraps `payload` (the encoding of the carried layer, or application data) in one
/// `kind` layer; returns the bytes and the named byte counts the layer added.
pub fn wrap(kind: Kind, spec: &Spec, payload: &[u8]) -> Result<(Vec<u8>, Fields), EncapError> {
    check_length(kind, spec, payload.len())?;
    let mut out = Vec::with_capacity(payload.len() + 64);
    let fields = match kind {
        Kind::Ethernet => wrap_ethernet(spec, payload, &mut out)?,
        Kind::Wifi => wrap_wifi(spec, payload, &mut out)?,
        Kind::Serial | Kind::Sync => {
            // The characters themselves; their start, parity and stop bits (async) or
            // inserted zero bits (sync) are counted by `serial_line_bits` and
            // `sync_line_bits`, not as bytes.
            out.extend_from_slice(payload);
            Vec::new()
        }
        Kind::Slip => {
            let framing = slip::Framing { leading_end: true };
            framing.encapsulate(payload, &mut out);
            framing.overhead_fields_exact(payload)
        }
        Kind::Cslip => wrap_cslip(payload, &mut out)?,
        Kind::Ppp => wrap_ppp(spec, payload, &mut out),
        Kind::Atm => wrap_atm(spec, payload, &mut out)?,
        Kind::Aal5 => {
            aal5::encode(payload, 0, 0, &mut out)
                .map_err(|e| EncapError(format!("aal5: {e} (SDU of {} bytes)", payload.len())))?;
            aal5::Repr { cpcs_uu: 0, cpi: 0, length: payload.len() as u16 }.overhead_fields(payload.len())
        }
        Kind::LlcSnap | Kind::VcMux => wrap_rfc2684(kind, spec, payload, &mut out),
        Kind::Lane => {
            let repr = lane::DataRepr { lecid: 1 };
            repr.encapsulate(payload, &mut out);
            repr.overhead_fields(payload.len())
        }
        Kind::Pppoe => {
            let repr = pppoe::SessionRepr {
                session_id: PPPOE_SESSION,
                protocol: ppp::Protocol::Ipv4,
                payload_len: payload.len(),
            };
            repr.encapsulate(payload, &mut out);
            repr.overhead_fields(payload.len())
        }
        Kind::Ipv4 => wrap_ipv4(spec, payload, &mut out)?,
        Kind::Udp => wrap_udp(spec, payload, &mut out)?,
        Kind::Tcp => wrap_tcp(spec, payload, &mut out)?,
        Kind::Icmp => {
            let repr = icmpv4::Repr::EchoRequest { ident: 1, seq_no: 1, data: payload };
            repr.encapsulate(&mut out);
            repr.overhead_fields(payload.len())
        }
        Kind::OpenVpn => wrap_openvpn(spec, payload, &mut out)?,
        Kind::Gre => wrap_gre(spec, payload, &mut out),
        Kind::Esp => wrap_esp(spec, payload, &mut out)?,
        Kind::Ah => wrap_ah(spec, payload, &mut out)?,
    };
    Ok((out, fields))
}

/// RFC 2684 §5 (LLC/SNAP) or §6 (VC multiplexing), routed or, over Ethernet, bridged.
fn wrap_rfc2684(kind: Kind, spec: &Spec, payload: &[u8], out: &mut Vec<u8>) -> Fields {
    let bridged = spec.inner == Some(Kind::Ethernet);
    let encapsulation = match (kind, bridged) {
        (Kind::LlcSnap, false) => rfc2684::Encapsulation::LlcSnapRouted,
        (Kind::LlcSnap, true) => rfc2684::Encapsulation::LlcSnapBridged,
        (_, false) => rfc2684::Encapsulation::VcMuxRouted,
        (_, true) => rfc2684::Encapsulation::VcMuxBridged,
    };
    let repr = encapsulation.repr(EtherType::Ipv4);
    repr.encapsulate(payload, out);
    repr.overhead_fields(payload.len())
}

fn wrap_udp(spec: &Spec, payload: &[u8], out: &mut Vec<u8>) -> Result<Fields, EncapError> {
    let (src, dst) = spec.addresses();
    let dst_port = match spec.inner {
        Some(Kind::OpenVpn) => OPENVPN_PORT,
        _ => spec.number("port")?.map_or(DISCARD_PORT, |p| p as u16),
    };
    let src_port = if spec.inner == Some(Kind::OpenVpn) { OPENVPN_PORT } else { EPHEMERAL_PORT };
    let repr = udp::Repr { src_port, dst_port };
    repr.encapsulate(&src, &dst, payload, out);
    Ok(repr.overhead_fields(payload.len()))
}

fn wrap_openvpn(spec: &Spec, payload: &[u8], out: &mut Vec<u8>) -> Result<Fields, EncapError> {
    let channel = openvpn_channel(spec)?;
    let iv = vec![0u8; channel.iv_len()];
    let mut packet = Vec::with_capacity(payload.len() + 64);
    channel.encapsulate(1, &iv, payload, &mut packet);
    let mut fields = channel.overhead_fields(payload.len());
    if spec.outer == Some(Kind::Tcp) {
        // proto.h: a stream transport's 16-bit packet length.
        if packet.len() > usize::from(u16::MAX) {
            return err(format!(
                "openvpn: a {}-byte packet is longer than the 65,535 bytes TCP framing's length can say",
                packet.len()
            ));
        }
        openvpn::encapsulate_tcp(&packet, out);
        fields.insert(0, ("packet length (TCP)", 2));
    } else {
        *out = packet;
    }
    Ok(fields)
}

fn wrap_esp(spec: &Spec, payload: &[u8], out: &mut Vec<u8>) -> Result<Fields, EncapError> {
    let sa = security_association(spec, "esp")?;
    let iv = vec![0u8; sa.iv_len()];
    let next = carried_protocol(spec.inner);
    esp::seal(&sa, next, payload, &iv, out).map_err(|e| EncapError(format!("esp: {e}")))?;
    Ok(esp::overhead_fields(&sa, payload.len()))
}

/// The AH header with a zero ICV: the IPv4 layer outside computes the ICV over its own
/// header (RFC 4302 §3.3.3), so only it can finish this layer.
fn wrap_ah(spec: &Spec, payload: &[u8], out: &mut Vec<u8>) -> Result<Fields, EncapError> {
    let sa = security_association(spec, "ah")?;
    let repr = ah::Repr { next_header: carried_protocol(spec.inner), spi: sa.spi, seq: 1, icv: vec![0; sa.icv_len()] };
    out.resize(repr.buffer_len(), 0);
    repr.emit(&mut ah::Packet::new_unchecked(&mut out[..]));
    out.extend_from_slice(payload);
    Ok(ah::overhead_fields(&sa, payload.len()))
}

/// The IPv4 Protocol (or ESP/AH Next Header) value for the carried layer.
fn carried_protocol(inner: Option<Kind>) -> IpProtocol {
    match inner {
        Some(Kind::Udp) => IpProtocol::Udp,
        Some(Kind::Tcp) => IpProtocol::Tcp,
        Some(Kind::Icmp) => IpProtocol::Icmp,
        Some(Kind::Gre) => IpProtocol::Gre,
        Some(Kind::Esp) => IpProtocol::Esp,
        Some(Kind::Ah) => IpProtocol::Ah,
        Some(Kind::Ipv4) => IpProtocol::IpIp,
        // RFC 8200 §4.7 / IANA: 59 "No Next Header" for data with no protocol.
        _ => IpProtocol::Unknown(59),
    }
}

fn carried_ethertype(inner: Option<Kind>) -> EtherType {
    match inner {
        Some(Kind::Pppoe) => EtherType::PppoeSession,
        _ => EtherType::Ipv4,
    }
}

fn wrap_ethernet(spec: &Spec, payload: &[u8], out: &mut Vec<u8>) -> Result<Fields, EncapError> {
    let repr = ethernet::Repr { src_addr: MAC_A, dst_addr: MAC_B, ethertype: carried_ethertype(spec.inner) };
    let mut fields = repr.overhead_fields(payload.len(), spec.fcs);
    if spec.pad {
        repr.encapsulate(payload, spec.fcs, out);
    } else {
        // A frame inside a tunnel (a TAP device's) is not padded to the 64-byte minimum:
        // padding is the physical layer's business (IEEE 802.3 §3.2.8).
        out.resize(ethernet::HEADER_LEN, 0);
        repr.emit(&mut ethernet::Frame::new_unchecked(&mut out[..]));
        out.extend_from_slice(payload);
        if spec.fcs {
            ethernet::append_fcs(out);
        }
        fields.retain(|(name, _)| *name != "padding");
    }
    fields.retain(|(_, n)| *n > 0);
    Ok(fields)
}

fn wrap_wifi(spec: &Spec, payload: &[u8], out: &mut Vec<u8>) -> Result<Fields, EncapError> {
    let security: dot11_crypto::Security = spec
        .option("security")
        .unwrap_or("open")
        .parse()
        .map_err(|_| EncapError(format!("wifi: unknown security {:?}", spec.option("security"))))?;
    let four_addresses = spec.option("addresses") == Some("4");
    let mut repr = if four_addresses {
        dot11::DataRepr::wds(BSSID, MAC_A, MAC_B, MAC_A)
    } else {
        dot11::DataRepr::to_ap(BSSID, MAC_A, MAC_B)
    };
    repr.sequence_number = 1;
    let ethertype = carried_ethertype(spec.inner);
    let mut fields = repr.overhead_fields(payload.len());
    if security == dot11_crypto::Security::Open {
        repr.encapsulate_ethertype(ethertype, payload, out);
        return Ok(fields);
    }
    repr.protected = true;
    let mut plain = Vec::with_capacity(payload.len() + llc::LLC_SNAP_LEN);
    llc::Repr::ethertype(ethertype).encapsulate(payload, &mut plain);
    let mut body = Vec::with_capacity(plain.len() + 24);
    match security {
        dot11_crypto::Security::Wep40 | dot11_crypto::Security::Wep104 => {
            let key: &[u8] = if security == dot11_crypto::Security::Wep40 { &[0x01; 5] } else { &[0x01; 13] };
            dot11_crypto::wep_encapsulate(key, [0, 0, 1], 0, &plain, &mut body)
                .map_err(|e| EncapError(format!("wep: {e}")))?;
        }
        dot11_crypto::Security::Ccmp => {
            let mut header = vec![0u8; repr.header_len()];
            repr.emit(&mut dot11::Frame::new_unchecked(&mut header[..]));
            dot11_crypto::ccmp_encapsulate(&[0x01; 16], &header, 1, 0, &plain, &mut body)
                .map_err(|e| EncapError(format!("ccmp: {e}")))?;
        }
        dot11_crypto::Security::Tkip => {
            // TKIP's header, Michael MIC and ICV with their real layout (§12.5.2.2); the
            // body is not RC4-encrypted, which changes no length.
            let tkip = dot11_crypto::TkipRepr { tsc: 1, key_id: 0 };
            body.resize(dot11_crypto::TKIP_HEADER_LEN, 0);
            tkip.emit(&mut dot11_crypto::TkipHeader::new_unchecked(&mut body[..]));
            body.extend_from_slice(&plain);
            body.resize(body.len() + dot11_crypto::TKIP_MIC_LEN + dot11_crypto::TKIP_ICV_LEN, 0);
        }
        dot11_crypto::Security::Open => unreachable!("handled above"),
    }
    repr.encapsulate(&body, out);
    // Security fields sit between the MAC header (and LLC/SNAP) and the FCS.
    let fcs = fields.pop();
    fields.extend(security.overhead_fields(payload.len()));
    fields.extend(fcs);
    Ok(fields)
}

fn wrap_cslip(payload: &[u8], out: &mut Vec<u8>) -> Result<Fields, EncapError> {
    // Van Jacobson compression in its steady state: the compressor has already seen the
    // connection's previous segment, so this one goes out as COMPRESSED_TCP when it can
    // (RFC 1144 §3.2). Non-TCP packets go out unchanged as TYPE_IP.
    let mut compressor = cslip::Compressor::new(16);
    if let Some(previous) = previous_segment(payload) {
        let mut scratch = Vec::new();
        compressor.compress(&previous, &mut scratch);
    }
    let mut packet = Vec::with_capacity(payload.len());
    let kind = compressor.compress(payload, &mut packet);
    if packet.is_empty() {
        return err("cslip: the compressor produced nothing");
    }
    cslip::slip_mark(kind, &mut packet);
    let framing = slip::Framing { leading_end: true };
    framing.encapsulate(&packet, out);
    let mut fields: Fields = Vec::new();
    let saved = payload.len().saturating_sub(packet.len());
    if saved > 0 {
        // Negative overhead has no field of its own; the compressed header is listed
        // and the saving shows as the layer's total being smaller than SLIP's.
        fields.push(("compressed TCP/IP header", packet.len() - (payload.len() - tcp_ip_header_len(payload))));
    }
    fields.extend(framing.overhead_fields_exact(&packet));
    Ok(fields)
}

/// The IPv4 + TCP header length of a TCP/IPv4 datagram (0 when it is not one).
fn tcp_ip_header_len(packet: &[u8]) -> usize {
    let Ok(ip) = ipv4::Packet::new_checked(packet) else { return 0 };
    if ip.next_header() != IpProtocol::Tcp {
        return 0;
    }
    match tcp::Packet::new_checked(ip.payload()) {
        Ok(segment) => ip.header_len() + segment.header_len(),
        Err(_) => 0,
    }
}

/// The segment before `packet` on the same connection (sequence number one segment
/// back, IP identification one less), for priming the VJ compressor.
fn previous_segment(packet: &[u8]) -> Option<Vec<u8>> {
    let ip = ipv4::Packet::new_checked(packet).ok()?;
    if ip.next_header() != IpProtocol::Tcp || ip.is_fragment() {
        return None;
    }
    let (src, dst, header_len) = (ip.src_addr(), ip.dst_addr(), ip.header_len());
    let data_len = tcp::Packet::new_checked(ip.payload()).ok()?.payload().len();
    let mut previous = packet.to_vec();
    let mut ip = ipv4::Packet::new_unchecked(&mut previous[..]);
    ip.set_ident(ip.ident().wrapping_sub(1));
    ip.fill_checksum();
    let mut segment = tcp::Packet::new_unchecked(&mut previous[header_len..]);
    segment.set_seq_number(segment.seq_number() - data_len.max(1));
    segment.fill_checksum(&src, &dst);
    Some(previous)
}

fn wrap_ppp(spec: &Spec, payload: &[u8], out: &mut Vec<u8>) -> Fields {
    let repr = ppp::Repr { protocol: ppp::Protocol::Ipv4, pfc: spec.pfc };
    let mut frame = Vec::with_capacity(payload.len() + 4);
    repr.encapsulate(payload, &mut frame);
    let mut fields = Vec::new();
    // RFC 1662 Appendix C: FCS-16 unless FCS-32 was negotiated (RFC 1570 §2.1).
    let fcs = if spec.option("fcs") == Some("32") { hdlc::Fcs::Fcs32 } else { hdlc::Fcs::Fcs16 };
    if spec.outer == Some(Kind::Sync) {
        // RFC 1662 §5: flags, address and control (unless ACFC), the FCS, and no octet
        // stuffing: transparency is by zero bits inserted below the octet level, which
        // `sync_line_bits` counts.
        let config = hdlc::Config { accm: 0, acfc: spec.acfc, fcs };
        out.push(hdlc::FLAG);
        out.extend_from_slice(&config.frame(&frame));
        out.push(hdlc::FLAG);
        let mut hdlc_fields = config.overhead_fields(frame.len());
        let trailer_at = hdlc_fields.iter().position(|(name, _)| name.contains("fcs")).unwrap_or(hdlc_fields.len());
        let trailer = hdlc_fields.split_off(trailer_at);
        fields.extend(hdlc_fields);
        fields.extend(repr.overhead_fields(payload.len()));
        fields.extend(trailer);
    } else if spec.hdlc {
        // RFC 1662: flags, address and control (unless ACFC), the FCS and octet
        // stuffing of flag, escape and the control characters the ACCM names.
        let config = hdlc::Config { accm: spec.accm, acfc: spec.acfc, fcs };
        config.encapsulate(&frame, out);
        let stuffing =
            out.len() - frame.len() - config.overhead_fields(frame.len()).iter().map(|(_, n)| n).sum::<usize>();
        let mut hdlc_fields = config.overhead_fields(frame.len());
        let trailer_at = hdlc_fields.iter().position(|(name, _)| name.contains("fcs")).unwrap_or(hdlc_fields.len());
        let trailer = hdlc_fields.split_off(trailer_at);
        fields.extend(hdlc_fields);
        fields.extend(repr.overhead_fields(payload.len()));
        if stuffing > 0 {
            fields.push(("octet stuffing", stuffing));
        }
        fields.extend(trailer);
    } else {
        // Bare PPP inside PPTP's GRE (RFC 2637 §4.1): address and control unless ACFC.
        if !spec.acfc {
            out.extend_from_slice(&[0xff, 0x03]);
            fields.push(("address", 1));
            fields.push(("control", 1));
        }
        out.extend_from_slice(&frame);
        fields.extend(repr.overhead_fields(payload.len()));
    }
    fields
}

fn wrap_atm(spec: &Spec, pdu: &[u8], out: &mut Vec<u8>) -> Result<Fields, EncapError> {
    if !pdu.len().is_multiple_of(atm::PAYLOAD_LEN) {
        return err(format!("atm carries whole 48-byte cell payloads (an AAL5 PDU), got {} bytes", pdu.len()));
    }
    let format = if spec.option("header") == Some("nni") { atm::Format::Nni } else { atm::Format::Uni };
    let vpi = spec.number("vpi")?.unwrap_or(0) as u16;
    if vpi > format.max_vpi() {
        return err(format!("atm: vpi {vpi} exceeds the {:?} header's {}", format, format.max_vpi()));
    }
    let vci = spec.number("vci")?.unwrap_or(usize::from(atm::vci::FIRST_USER)) as u16;
    let cells = pdu.len() / atm::PAYLOAD_LEN;
    out.reserve(cells * atm::CELL_LEN);
    for (i, payload) in pdu.chunks_exact(atm::PAYLOAD_LEN).enumerate() {
        let mut repr = atm::Repr::user_data(0, vci, i + 1 == cells);
        repr.format = format;
        repr.vpi = vpi; // NNI VPIs run to 4095, past user_data's UNI range
        let mut cell = [0u8; atm::CELL_LEN];
        let payload: &[u8; atm::PAYLOAD_LEN] = payload.try_into().expect("chunks of 48");
        repr.emit_cell(payload, &mut cell);
        out.extend_from_slice(&cell);
    }
    Ok(vec![("cell headers", cells * atm::HEADER_LEN)])
}

/// Refuses a payload longer than the layer's 16-bit length field can describe, where
/// encoding would otherwise wrap the field (or panic in the layer's emitter).
fn check_length(kind: Kind, spec: &Spec, payload_len: usize) -> Result<(), EncapError> {
    let max = usize::from(u16::MAX);
    let (total, what) = match kind {
        // RFC 791 §3.1: Total Length, header and data, 16 bits.
        Kind::Ipv4 => {
            let options = spec.number("options")?.unwrap_or(0);
            (
                ipv4::HEADER_LEN.saturating_add(options).saturating_add(payload_len),
                "ipv4: a datagram's Total Length (RFC 791 §3.1)",
            )
        }
        // RFC 768: Length, header and data, 16 bits.
        Kind::Udp => (udp::HEADER_LEN.saturating_add(payload_len), "udp: a datagram's Length (RFC 768)"),
        // RFC 2516 §4: LENGTH of the PPPoE payload, which holds the PPP protocol field.
        Kind::Pppoe => (payload_len.saturating_add(2), "pppoe: a session packet's LENGTH (RFC 2516 §4)"),
        _ => return Ok(()),
    };
    if total > max {
        return err(format!("{what} is at most {max} bytes; this one would be {total}"));
    }
    Ok(())
}

fn wrap_ipv4(spec: &Spec, payload: &[u8], out: &mut Vec<u8>) -> Result<Fields, EncapError> {
    let (src, dst) = spec.addresses();
    let mut repr = ipv4::Repr::new(src, dst, carried_protocol(spec.inner), payload.len(), 64);
    repr.ident = 1;
    if let Some(len) = spec.number("options")?.filter(|&n| n > 0) {
        if len % 4 != 0 || len > ipv4::MAX_OPTIONS_LEN {
            return err(format!("ipv4: options must be a multiple of 4 up to 40 bytes, got {len}"));
        }
        // No-operation options (RFC 791 §3.1, type 1) fill the space exactly.
        repr.options = ipv4::Options::new(&vec![1u8; len]).map_err(|e| EncapError(format!("ipv4 options: {e}")))?;
    }
    let fields = repr.overhead_fields(payload.len());
    if spec.inner != Some(Kind::Ah) {
        repr.encapsulate(payload, out);
        return Ok(fields);
    }
    // AH: build the datagram without it, then let ah.rs insert it and compute the ICV
    // over the immutable fields (RFC 4302 §3.3.3.1).
    let inner_spec = Spec { options: spec.inner_options.clone(), src: spec.src, dst: spec.dst, ..Spec::default() };
    let sa = security_association(&inner_spec, "ah")?;
    let ah_len = ah::overhead(&sa);
    let header = ah::Packet::new_checked(payload).map_err(|e| EncapError(format!("ah: {e}")))?;
    repr.next_header = header.next_header();
    repr.payload_len = payload.len() - ah_len;
    let mut plain = Vec::with_capacity(payload.len());
    repr.encapsulate(&payload[ah_len..], &mut plain);
    ah::insert_transport(&sa, &plain, out).map_err(|e| EncapError(format!("ah: {e}")))?;
    Ok(fields)
}

fn wrap_tcp(spec: &Spec, payload: &[u8], out: &mut Vec<u8>) -> Result<Fields, EncapError> {
    let (src, dst) = spec.addresses();
    let dst_port = match spec.inner {
        Some(Kind::OpenVpn) => OPENVPN_PORT,
        _ => spec.number("port")?.map_or(DISCARD_PORT, |p| p as u16),
    };
    // A segment of an established connection: ACK set, PSH when it carries data.
    let repr = tcp::Repr {
        src_port: EPHEMERAL_PORT,
        dst_port,
        control: if payload.is_empty() { tcp::Control::None } else { tcp::Control::Psh },
        seq_number: tcp::SeqNumber(1),
        ack_number: Some(tcp::SeqNumber(1)),
        window_len: 65535,
        window_scale: None,
        max_seg_size: None,
        sack_permitted: false,
        sack_ranges: [None; 3],
        timestamp: spec.flag("timestamps").then_some((1, 1)),
        ece: false,
        cwr: false,
        other_options: tcp::OtherOptions::default(),
        payload_len: payload.len(),
    };
    repr.encapsulate(&src, &dst, payload, out);
    Ok(repr.overhead_fields(payload.len()))
}

fn wrap_gre(spec: &Spec, payload: &[u8], out: &mut Vec<u8>) -> Fields {
    let repr = if spec.option("variant") == Some("pptp") {
        // RFC 2637 §4.1: version 1, protocol 0x880B, key = payload length and call id,
        // a sequence number on every data packet, an acknowledgement when piggybacked.
        gre::Repr {
            version: gre::Version::Enhanced,
            protocol: EtherType::Ppp,
            checksum: false,
            key: Some(((payload.len() as u32) << 16) | u32::from(PPTP_CALL_ID)),
            sequence: Some(1),
            ack: spec.flag("ack").then_some(1),
        }
    } else {
        let protocol = match spec.inner {
            Some(Kind::Ethernet) => EtherType::TransparentEthernetBridging,
            Some(Kind::Ppp) => EtherType::Ppp,
            _ => EtherType::Ipv4,
        };
        gre::Repr {
            version: gre::Version::Gre,
            protocol,
            checksum: false,
            key: spec.flag("key").then_some(1),
            sequence: spec.flag("seq").then_some(1),
            ack: None,
        }
    };
    repr.encapsulate(payload, out);
    repr.overhead_fields(payload.len())
}

/// The OpenVPN data channel the options describe, with fixed keys.
pub fn openvpn_channel(spec: &Spec) -> Result<openvpn::DataChannel, EncapError> {
    let cipher = match spec.option("cipher").unwrap_or("none") {
        "none" => openvpn::Cipher::None,
        "bf-cbc" => openvpn::Cipher::BfCbc,
        "aes-128-cbc" => openvpn::Cipher::Aes128Cbc,
        "aes-256-cbc" => openvpn::Cipher::Aes256Cbc,
        "aes-128-gcm" => openvpn::Cipher::Aes128Gcm,
        "aes-256-gcm" => openvpn::Cipher::Aes256Gcm,
        other => return err(format!("openvpn: unknown cipher {other:?}")),
    };
    let auth = match spec.option("auth").unwrap_or("sha1") {
        "none" => openvpn::Auth::None,
        "sha1" => openvpn::Auth::Sha1,
        "sha256" => openvpn::Auth::Sha256,
        "sha512" => openvpn::Auth::Sha512,
        other => return err(format!("openvpn: unknown auth {other:?}")),
    };
    let mut channel = openvpn::DataChannel::new(cipher, auth);
    channel.replay = spec.flag("replay");
    if spec.option("opcode") == Some("v1") {
        channel.opcode = openvpn::DataOpcode::V1;
    }
    match spec.option("key").unwrap_or("tls") {
        "tls" => {}
        "static" => {
            if spec.option("opcode").is_some() {
                return err("openvpn: key=static sends no opcode; drop opcode=");
            }
            if cipher.is_aead() {
                return err(
                    "openvpn: key=static with a GCM cipher is not modelled (static keys: none or a CBC cipher)",
                );
            }
            channel.opcode = openvpn::DataOpcode::StaticKey;
        }
        other => return err(format!("openvpn: unknown key {other:?} (tls or static)")),
    }
    channel.fragment = spec.option("fragment").is_some();
    Ok(channel)
}

/// OpenVPN's `--fragment`: `payload` as whole data packets, each with its fragment
/// header, none with a UDP payload larger than the `fragment` option.
pub fn openvpn_fragment(spec: &Spec, payload: &[u8]) -> Result<Vec<Vec<u8>>, EncapError> {
    let channel = openvpn_channel(spec)?;
    let limit = spec.number("fragment")?.ok_or_else(|| EncapError("openvpn: no fragment option".into()))?;
    // The room for fragment data: the limit less everything the data channel adds to a
    // piece (opcode, HMAC, IV, packet id, fragment header, padding at its worst).
    let overhead = channel.overhead(limit);
    let room = limit.checked_sub(overhead).filter(|&r| r >= 4).ok_or_else(|| {
        EncapError(format!("openvpn: fragment={limit} leaves no room after {overhead} bytes of overhead"))
    })?;
    let pieces =
        openvpn::split_fragments(0, room, payload.len()).map_err(|e| EncapError(format!("openvpn fragment: {e}")))?;
    let iv = vec![0u8; channel.iv_len()];
    let mut packets = Vec::with_capacity(pieces.len());
    for (i, (header, range)) in pieces.into_iter().enumerate() {
        let mut packet = Vec::with_capacity(limit);
        if header == openvpn::FragmentHeader::WHOLE {
            channel.encapsulate(i as u32 + 1, &iv, payload, &mut packet);
        } else {
            channel.encapsulate_fragment(i as u32 + 1, &iv, header, &payload[range], &mut packet);
        }
        packets.push(packet);
    }
    Ok(packets)
}

/// The security association the ESP or AH options describe, with fixed keys.
fn security_association(spec: &Spec, protocol: &str) -> Result<SecurityAssociation, EncapError> {
    let mode: ipsec::Mode =
        spec.option("mode").unwrap_or("tunnel").parse().map_err(|e| EncapError(format!("{protocol}: {e}")))?;
    let cipher: ipsec::Cipher = if protocol == "ah" {
        ipsec::Cipher::Null
    } else {
        spec.option("cipher").unwrap_or("aes-128-cbc").parse().map_err(|e| EncapError(format!("{protocol}: {e}")))?
    };
    let mut auth: ipsec::Auth =
        spec.option("auth").unwrap_or("hmac-sha1-96").parse().map_err(|e| EncapError(format!("{protocol}: {e}")))?;
    if cipher.is_aead() {
        // RFC 4106 §8: AES-GCM authenticates by itself; an HMAC would be redundant.
        auth = ipsec::Auth::None;
    }
    let enc_key = vec![0x01; cipher.key_len()];
    let auth_key = vec![0x02; auth.key_len()];
    SecurityAssociation::new(SPI, cipher, auth, &enc_key, &auth_key, mode)
        .map_err(|e| EncapError(format!("{protocol}: {e}")))
}

/// Bits on a synchronous line for one frame as [`wrap`] gives it over `sync`: opening
/// flag, frame octets, closing flag. Returns the bits for these octets (8 each, plus the
/// zero bits inserted in the octets between the flags, RFC 1662 §5.2) and the most any
/// frame of that length could need (a zero after every five bits: all ones).
pub fn sync_line_bits(line: &[u8]) -> Result<(u64, u64), EncapError> {
    if line.len() < 2 || line[0] != hdlc::FLAG || line[line.len() - 1] != hdlc::FLAG {
        return err("sync: a frame between two flags (0x7e) is expected");
    }
    let inner = &line[1..line.len() - 1];
    let base = 8 * line.len() as u64;
    Ok((base + hdlc::zero_bits_inserted(inner), base + hdlc::max_zero_bits_inserted(inner.len())))
}

/// Bits on an asynchronous serial line for `bytes` characters in `format` ("8n1").
pub fn serial_line_bits(format: &str, bytes: u64) -> Result<u64, EncapError> {
    let format: SerialFormat =
        format.parse().map_err(|_| EncapError(format!("serial: bad character format {format:?}")))?;
    Ok(format.line_bits(bytes))
}

#[cfg(test)]
mod test {
    use super::*;

    fn spec(inner: Option<Kind>) -> Spec {
        Spec { inner, ..Spec::default() }
    }

    #[test]
    fn ipv4_udp_round_trip_through_the_parsers() {
        let (udp_bytes, udp_fields) = wrap(Kind::Udp, &spec(None), b"hello").unwrap();
        assert_eq!(udp_fields.iter().map(|f| f.1).sum::<usize>(), 8);
        let (packet, _) = wrap(Kind::Ipv4, &spec(Some(Kind::Udp)), &udp_bytes).unwrap();
        let ip = ipv4::Packet::new_checked(&packet[..]).unwrap();
        let repr = ipv4::Repr::parse(&ip).unwrap();
        assert_eq!(repr.next_header, IpProtocol::Udp);
        let datagram = udp::Packet::new_checked(ip.payload()).unwrap();
        udp::Repr::parse(&datagram, &repr.src_addr, &repr.dst_addr).unwrap();
        assert_eq!(datagram.payload(), b"hello");
    }

    #[test]
    fn lengths_past_16_bits_are_refused_not_wrapped() {
        // RFC 791 §3.1: Total Length is 16 bits, header included: 65,515 bytes of data
        // after a 20-byte header, and no more (a 70,000-byte datagram used to come out
        // with Total Length 70,000 mod 65,536 = 4,464).
        let (ok, _) = wrap(Kind::Ipv4, &spec(Some(Kind::Udp)), &vec![0; 65_515]).unwrap();
        assert_eq!(ipv4::Packet::new_checked(&ok[..]).unwrap().total_len(), 65_535);
        let e = wrap(Kind::Ipv4, &spec(Some(Kind::Udp)), &vec![0; 65_516]).unwrap_err();
        assert!(e.to_string().contains("65536"), "{e}");
        // With 8 bytes of options the header is 28: 65,507 bytes of data at most.
        let with_options = Spec { options: vec![("options".into(), "8".into())], ..spec(Some(Kind::Udp)) };
        assert!(wrap(Kind::Ipv4, &with_options, &vec![0; 65_507]).is_ok());
        assert!(wrap(Kind::Ipv4, &with_options, &vec![0; 65_508]).is_err());
        // RFC 768: Length is 16 bits, the 8-byte header included (this panicked).
        assert!(wrap(Kind::Udp, &spec(None), &vec![0; 65_527]).is_ok());
        assert!(wrap(Kind::Udp, &spec(None), &vec![0; 65_528]).is_err());
        // RFC 2516 §4: LENGTH covers the 2-byte PPP protocol field and the data.
        assert!(wrap(Kind::Pppoe, &spec(Some(Kind::Ipv4)), &vec![0; 65_533]).is_ok());
        assert!(wrap(Kind::Pppoe, &spec(Some(Kind::Ipv4)), &vec![0; 65_534]).is_err());
    }

    #[test]
    fn tunnel_ethernet_has_no_padding_and_physical_has() {
        let tap = Spec { inner: Some(Kind::Ipv4), fcs: false, pad: false, ..Spec::default() };
        assert_eq!(wrap(Kind::Ethernet, &tap, &[0; 10]).unwrap().0.len(), 14 + 10);
        let phy = Spec { inner: Some(Kind::Ipv4), fcs: true, pad: true, ..Spec::default() };
        let (frame, fields) = wrap(Kind::Ethernet, &phy, &[0; 10]).unwrap();
        assert_eq!(frame.len(), 64);
        assert_eq!(fields.iter().map(|f| f.1).sum::<usize>(), 64 - 10);
        ethernet::check_fcs(&frame).unwrap();
    }

    #[test]
    fn ah_transport_verifies() {
        let options = vec![("mode".to_string(), "transport".to_string())];
        let ah_spec = Spec { options: options.clone(), inner: Some(Kind::Udp), ..Spec::default() };
        let (udp_bytes, _) = wrap(Kind::Udp, &spec(None), b"data").unwrap();
        let (with_ah, _) = wrap(Kind::Ah, &ah_spec, &udp_bytes).unwrap();
        let ip_spec = Spec { inner: Some(Kind::Ah), inner_options: options, ..Spec::default() };
        let (packet, _) = wrap(Kind::Ipv4, &ip_spec, &with_ah).unwrap();
        let sa = security_association(&ah_spec, "ah").unwrap();
        ah::verify(&sa, &packet).unwrap();
    }

    #[test]
    fn aal5_fills_whole_cells_and_atm_cuts_them() {
        let (pdu, _) = wrap(Kind::Aal5, &spec(Some(Kind::LlcSnap)), &[0; 100]).unwrap();
        assert_eq!(pdu.len(), 144); // 100 + 8 trailer -> 3 cells of 48
        let (cells, fields) = wrap(Kind::Atm, &spec(Some(Kind::Aal5)), &pdu).unwrap();
        assert_eq!(cells.len(), 3 * 53);
        assert_eq!(fields, vec![("cell headers", 15)]);
        let last = atm::Cell::new_checked(&cells[106..]).unwrap();
        assert!(last.pti().is_end_of_sdu() && last.verify_hec());
    }
}
