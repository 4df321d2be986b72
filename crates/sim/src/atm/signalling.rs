//! UNI signalling messages (ATM Forum UNI 3.1 §5.3 / ITU-T Q.2931 §4) as the bytes that
//! cross the signalling VC 0/5.
//!
//! A message is the Q.2931 header — protocol discriminator 0x09 (§4.2), a 3-octet call
//! reference with its flag bit (§4.3: set by the side that did not originate the call),
//! the message type (§4.4.1) and a 2-octet message length — then information elements,
//! each with a 4-octet header (identifier, coding/flags 0x80, length, §4.5.1). On the
//! VC it rides in an SSCOP sequenced-data PDU (ITU-T Q.2110 §7.1: the message, padding
//! to a multiple of 4, then a 4-octet trailer with the pad length, PDU type SD = 0x8
//! and the 24-bit sequence number N(S)), which AAL5 carries.
//!
//! The elements modelled are those a point-to-point call needs: called and calling
//! party number (§4.5.11/§4.5.13; NSAP format, 20 octets after the plan octet 0x82),
//! connection identifier (§4.5.16: VPI and VCI), ATM traffic descriptor (§4.5.6: the
//! forward/backward PCR in cells/s, subfield 0x82/0x83) and broadband bearer capability
//! (§4.5.5: class X, octet 0x10, with the traffic type). SSCOP's own connection set-up
//! and acknowledgement (BGN, POLL, STAT) are not modelled: the signalling link is taken
//! as established and lossless.

use wire::lane::AtmAddress;
use wire::{Error, Result};

/// Q.2931 §4.2.
pub const PROTOCOL_DISCRIMINATOR: u8 = 0x09;

/// Q.2931 §4.4.1 Table 4-2 message types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageType {
    CallProceeding = 0x02,
    Connect = 0x07,
    ConnectAck = 0x0f,
    Setup = 0x05,
    Release = 0x4d,
}

impl MessageType {
    fn from_u8(b: u8) -> Option<MessageType> {
        Some(match b {
            0x02 => MessageType::CallProceeding,
            0x07 => MessageType::Connect,
            0x0f => MessageType::ConnectAck,
            0x05 => MessageType::Setup,
            0x4d => MessageType::Release,
            _ => return None,
        })
    }
}

mod ie {
    pub const CALLED_PARTY: u8 = 0x70;
    pub const CALLING_PARTY: u8 = 0x6c;
    pub const CONNECTION_ID: u8 = 0x5a;
    pub const TRAFFIC_DESCRIPTOR: u8 = 0x59;
    pub const BEARER_CAPABILITY: u8 = 0x5e;
}

/// A signalling message as the simulator uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message {
    pub kind: MessageType,
    /// The call reference value (23 bits).
    pub call_ref: u32,
    /// Q.2931 §4.3: false from the side that originated the call reference.
    pub from_destination: bool,
    pub called: Option<AtmAddress>,
    pub calling: Option<AtmAddress>,
    /// (VPI, VCI) of the connection on the interface the message crosses.
    pub connection: Option<(u16, u16)>,
    /// Peak cell rate, cells per second, both directions; `None`: best effort (UBR).
    pub pcr_cells: Option<u32>,
}

fn put_ie(out: &mut Vec<u8>, id: u8, body: &[u8]) {
    out.push(id);
    out.push(0x80);
    out.extend_from_slice(&(body.len() as u16).to_be_bytes());
    out.extend_from_slice(body);
}

impl Message {
    /// The Q.2931 message octets.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![PROTOCOL_DISCRIMINATOR, 3];
        let flag = if self.from_destination { 0x80 } else { 0 };
        let cr = self.call_ref & 0x7f_ffff;
        out.extend_from_slice(&[flag | (cr >> 16) as u8, (cr >> 8) as u8, cr as u8]);
        out.push(self.kind as u8);
        // Message type octet 2: flag 0, action indicator 0 (§4.4.2).
        out.push(0x80);
        let len_at = out.len();
        out.extend_from_slice(&[0, 0]);
        if self.kind == MessageType::Setup {
            // Class X, traffic type: CBR (001) when a PCR is given, else unspecified.
            let traffic = if self.pcr_cells.is_some() { 0x04 } else { 0x00 };
            put_ie(&mut out, ie::BEARER_CAPABILITY, &[0x10, 0x80 | traffic, 0x80]);
        }
        if let Some(pcr) = self.pcr_cells {
            let mut body = vec![0x82];
            body.extend_from_slice(&pcr.to_be_bytes()[1..]);
            body.push(0x83);
            body.extend_from_slice(&pcr.to_be_bytes()[1..]);
            put_ie(&mut out, ie::TRAFFIC_DESCRIPTOR, &body);
        }
        for (id, addr) in [(ie::CALLED_PARTY, self.called), (ie::CALLING_PARTY, self.calling)] {
            if let Some(a) = addr {
                let mut body = vec![0x82];
                body.extend_from_slice(&a.0);
                put_ie(&mut out, id, &body);
            }
        }
        if let Some((vpi, vci)) = self.connection {
            // Octet 5: VP-associated signalling, explicit VPCI; then VPCI and VCI.
            let mut body = vec![0x88];
            body.extend_from_slice(&vpi.to_be_bytes());
            body.extend_from_slice(&vci.to_be_bytes());
            put_ie(&mut out, ie::CONNECTION_ID, &body);
        }
        let len = (out.len() - len_at - 2) as u16;
        out[len_at..len_at + 2].copy_from_slice(&len.to_be_bytes());
        out
    }

    /// Parses Q.2931 octets; unknown elements are skipped (§5.6.8.1 allows it for
    /// non-mandatory ones).
    pub fn decode(b: &[u8]) -> Result<Message> {
        if b.len() < 9 {
            return Err(Error::Truncated);
        }
        if b[0] != PROTOCOL_DISCRIMINATOR || b[1] != 3 {
            return Err(Error::Malformed);
        }
        let call_ref = u32::from(b[2] & 0x7f) << 16 | u32::from(b[3]) << 8 | u32::from(b[4]);
        let kind = MessageType::from_u8(b[5]).ok_or(Error::Unsupported)?;
        let len = usize::from(u16::from_be_bytes([b[7], b[8]]));
        let body = b.get(9..9 + len).ok_or(Error::Truncated)?;
        let mut m = Message {
            kind,
            call_ref,
            from_destination: b[2] & 0x80 != 0,
            called: None,
            calling: None,
            connection: None,
            pcr_cells: None,
        };
        let mut at = 0;
        while at + 4 <= body.len() {
            let id = body[at];
            let l = usize::from(u16::from_be_bytes([body[at + 2], body[at + 3]]));
            let v = body.get(at + 4..at + 4 + l).ok_or(Error::Truncated)?;
            match id {
                ie::CALLED_PARTY | ie::CALLING_PARTY if l == 21 => {
                    let a = Some(AtmAddress::from_bytes(&v[1..]));
                    if id == ie::CALLED_PARTY {
                        m.called = a;
                    } else {
                        m.calling = a;
                    }
                }
                ie::CONNECTION_ID if l == 5 => {
                    m.connection = Some((u16::from_be_bytes([v[1], v[2]]), u16::from_be_bytes([v[3], v[4]])));
                }
                ie::TRAFFIC_DESCRIPTOR if l >= 4 && v[0] == 0x82 => {
                    m.pcr_cells = Some(u32::from_be_bytes([0, v[1], v[2], v[3]]));
                }
                _ => {}
            }
            at += 4 + l;
        }
        Ok(m)
    }
}

/// Q.2110 §7.1: the SSCOP SD PDU around `message`: pad to 4 octets, then PL (2 bits),
/// PDU type SD (0x8) and N(S).
pub fn sscop_sd(message: &[u8], seq: u32, out: &mut Vec<u8>) {
    let pad = (4 - message.len() % 4) % 4;
    out.extend_from_slice(message);
    out.extend(std::iter::repeat_n(0, pad));
    out.push(((pad as u8) << 6) | 0x08);
    out.extend_from_slice(&seq.to_be_bytes()[1..]);
}

/// The Q.2931 message inside an SSCOP SD PDU.
pub fn sscop_payload(pdu: &[u8]) -> Result<&[u8]> {
    if pdu.len() < 4 || !pdu.len().is_multiple_of(4) {
        return Err(Error::Malformed);
    }
    let trailer = pdu[pdu.len() - 4];
    if trailer & 0x0f != 0x08 {
        return Err(Error::Unsupported);
    }
    let pad = usize::from(trailer >> 6);
    Ok(&pdu[..pdu.len() - 4 - pad])
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn setup_bytes_follow_q2931_and_round_trip() {
        let called = AtmAddress([0x47; 20]);
        let m = Message {
            kind: MessageType::Setup,
            call_ref: 0x12345,
            from_destination: false,
            called: Some(called),
            calling: None,
            connection: Some((0, 40)),
            pcr_cells: Some(100_000),
        };
        let b = m.encode();
        // Header: discriminator, call-reference length 3, flag + value, type SETUP.
        assert_eq!(&b[..7], &[0x09, 0x03, 0x01, 0x23, 0x45, 0x05, 0x80]);
        assert_eq!(usize::from(u16::from_be_bytes([b[7], b[8]])), b.len() - 9);
        // Bearer capability first: identifier 0x5E, coding 0x80, length 3, class X.
        assert_eq!(&b[9..13], &[0x5e, 0x80, 0x00, 0x03]);
        assert_eq!(Message::decode(&b).unwrap(), m);
        let mut pdu = Vec::new();
        sscop_sd(&b, 7, &mut pdu);
        assert_eq!(pdu.len() % 4, 0);
        assert_eq!(&pdu[pdu.len() - 3..], &[0, 0, 7]);
        assert_eq!(sscop_payload(&pdu).unwrap(), &b[..]);
    }

    #[test]
    fn truncated_messages_are_refused() {
        let b = Message {
            kind: MessageType::Connect,
            call_ref: 1,
            from_destination: true,
            called: None,
            calling: None,
            connection: Some((0, 33)),
            pcr_cells: None,
        }
        .encode();
        for n in 0..b.len() {
            assert!(
                Message::decode(&b[..n]).is_err() || n >= 9 && Message::decode(&b[..n]).unwrap().connection.is_none()
            );
        }
    }
}
