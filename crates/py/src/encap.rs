//! Bindings for `wire::encap` (one layer of a stack at a time), IPv4 fragmentation,
//! serial line bits and the pcap writer: what `qoslab mtu` needs.

use std::net::Ipv4Addr;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use wire::encap::{self, Kind, Spec};
use wire::pcap::{LinkType, Writer};

fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

fn kind(name: &str) -> PyResult<Kind> {
    name.parse().map_err(value_error)
}

fn options(dict: &Bound<'_, PyDict>) -> PyResult<Vec<(String, String)>> {
    dict.iter().map(|(k, v)| Ok((k.extract()?, v.str()?.to_string()))).collect()
}

/// Builds a `Spec` from the options dict and the context dict of qoslab.analysis.mtu.
fn spec(opts: &Bound<'_, PyDict>, context: &Bound<'_, PyDict>) -> PyResult<Spec> {
    let text = |key: &str| -> PyResult<Option<String>> {
        match context.get_item(key)? {
            Some(v) if !v.is_none() => Ok(Some(v.extract()?)),
            _ => Ok(None),
        }
    };
    let flag = |key: &str| -> PyResult<bool> {
        match context.get_item(key)? {
            Some(v) => v.extract(),
            None => Ok(false),
        }
    };
    let layer = |key: &str| -> PyResult<Option<Kind>> {
        match text(key)? {
            Some(name) if !name.is_empty() => Ok(Some(kind(&name)?)),
            _ => Ok(None),
        }
    };
    let address = |key: &str| -> PyResult<Option<Ipv4Addr>> {
        text(key)?.map(|a| a.parse::<Ipv4Addr>().map_err(value_error)).transpose()
    };
    let inner_options = match context.get_item("inner_options")? {
        Some(d) if !d.is_none() => options(d.cast::<PyDict>()?)?,
        _ => Vec::new(),
    };
    Ok(Spec {
        options: options(opts)?,
        inner: layer("inner")?,
        inner_options,
        outer: layer("outer")?,
        src: address("src")?,
        dst: address("dst")?,
        fcs: flag("fcs")?,
        pad: flag("pad")?,
        hdlc: flag("hdlc")?,
        pfc: flag("pfc")?,
        acfc: flag("acfc")?,
        accm: match context.get_item("accm")? {
            Some(v) => v.extract()?,
            None => 0,
        },
    })
}

/// Encodes one layer around `payload`; returns (bytes, [(field, bytes), ...]).
#[pyfunction]
pub fn wrap<'py>(
    py: Python<'py>,
    layer: &str,
    options: &Bound<'py, PyDict>,
    context: &Bound<'py, PyDict>,
    payload: &[u8],
) -> PyResult<(Bound<'py, PyBytes>, encap::Fields)> {
    let (bytes, fields) = encap::wrap(kind(layer)?, &spec(options, context)?, payload).map_err(value_error)?;
    Ok((PyBytes::new(py, &bytes), fields))
}

/// Splits an IPv4 datagram into fragments of at most `mtu` bytes (RFC 791 §3.2).
#[pyfunction]
pub fn ipv4_fragment<'py>(py: Python<'py>, packet: &[u8], mtu: usize) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let mut fragments = Vec::new();
    wire::ipv4::fragment(packet, mtu, |f| fragments.push(PyBytes::new(py, f)))
        .map_err(|e| value_error(format!("cannot fragment to MTU {mtu}: {e:?}")))?;
    Ok(fragments)
}

/// OpenVPN's `--fragment`: the payload as whole data packets with fragment headers.
#[pyfunction]
pub fn openvpn_fragment<'py>(
    py: Python<'py>,
    options: &Bound<'py, PyDict>,
    context: &Bound<'py, PyDict>,
    payload: &[u8],
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let spec = spec(options, context)?;
    let packets = encap::openvpn_fragment(&spec, payload).map_err(value_error)?;
    let mut out = Vec::with_capacity(packets.len());
    for packet in packets {
        if spec.outer == Some(Kind::Tcp) {
            let mut framed = Vec::with_capacity(packet.len() + 2);
            wire::openvpn::encapsulate_tcp(&packet, &mut framed);
            out.push(PyBytes::new(py, &framed));
        } else {
            out.push(PyBytes::new(py, &packet));
        }
    }
    Ok(out)
}

/// Bits on an asynchronous serial line for `nbytes` characters in `format` ("8n1").
#[pyfunction]
pub fn serial_line_bits(format: &str, nbytes: u64) -> PyResult<u64> {
    encap::serial_line_bits(format, nbytes).map_err(value_error)
}

/// Bits on a synchronous (RFC 1662 §5) line for one flag-delimited frame: (for these
/// octets, the most a frame of this length could need).
#[pyfunction]
pub fn sync_line_bits(line: &[u8]) -> PyResult<(u64, u64)> {
    encap::sync_line_bits(line).map_err(value_error)
}

/// Writes `frames` of the outermost layer `physical` to a pcap file.
#[pyfunction]
pub fn write_pcap(path: &str, physical: &str, frames: Vec<Vec<u8>>) -> PyResult<()> {
    // Captures hold MAC frames without the FCS, as NICs hand them to libpcap.
    let (link, strip_fcs) = match physical {
        "ethernet" => (LinkType::Ethernet, wire::ethernet::FCS_LEN),
        "wifi" => (LinkType::Ieee80211, wire::dot11::FCS_LEN),
        // LINKTYPE_PPP_HDLC: the octets between the flags, FCS kept (tshark -o
        // ppp.fcs_type:16-Bit checks it), no stuffing of either kind.
        "sync" => (LinkType::PppHdlc, 0),
        other => return Err(value_error(format!("no pcap link type for a stack over {other}"))),
    };
    let file = std::fs::File::create(path).map_err(|e| PyOSError::new_err(format!("{path}: {e}")))?;
    let mut writer = Writer::new(std::io::BufWriter::new(file), link).map_err(|e| PyOSError::new_err(e.to_string()))?;
    for (i, frame) in frames.iter().enumerate() {
        let end = frame.len().saturating_sub(strip_fcs);
        let start = usize::from(link == LinkType::PppHdlc && end > 1);
        let end = if start == 1 { end - 1 } else { end };
        writer.write_frame(i as u64 * 1_000, &frame[start..end]).map_err(|e| PyOSError::new_err(e.to_string()))?;
    }
    writer.into_inner().map_err(|e| PyOSError::new_err(e.to_string()))?;
    Ok(())
}
