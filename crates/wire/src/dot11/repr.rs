//! Every frame this crate models (data, RTS, CTS, Ack) as plain values.

use super::*;

/// A frame this crate models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Repr {
    Data(DataRepr),
    /// Request to send (§9.3.1.2): RA, TA.
    Rts {
        duration: u16,
        receiver: Address,
        transmitter: Address,
    },
    /// Clear to send (§9.3.1.3): RA.
    Cts {
        duration: u16,
        receiver: Address,
    },
    /// Acknowledgment (§9.3.1.4): RA.
    Ack {
        duration: u16,
        receiver: Address,
    },
}

impl Repr {
    /// Parses a data, RTS, CTS or Ack frame. Control frames must have To DS, From DS,
    /// More Fragments, Retry and Protected clear (`Err(Malformed)` otherwise; §9.3.1);
    /// their Power Management and More Data bits are ignored. Other frames give
    /// `Err(Unsupported)`.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(frame: &Frame<&T>) -> Result<Repr> {
        frame.check_len()?;
        let fc = frame.frame_control();
        if fc.protocol_version != 0 {
            return Err(Error::Unsupported);
        }
        match fc.frame_type {
            FrameType::Data => Ok(Repr::Data(DataRepr::parse(frame)?)),
            FrameType::Control => {
                if fc.to_ds || fc.from_ds || fc.more_fragments || fc.retry || fc.protected {
                    return Err(Error::Malformed);
                }
                let duration = frame.duration_id();
                let receiver = frame.addr1();
                match fc.subtype {
                    subtype::control::RTS => Ok(Repr::Rts { duration, receiver, transmitter: frame.addr2() }),
                    subtype::control::CTS => Ok(Repr::Cts { duration, receiver }),
                    subtype::control::ACK => Ok(Repr::Ack { duration, receiver }),
                    _ => Err(Error::Unsupported),
                }
            }
            _ => Err(Error::Unsupported),
        }
    }

    pub fn frame_control(&self) -> FrameControl {
        match self {
            Repr::Data(d) => d.frame_control(),
            Repr::Rts { .. } => FrameControl::new(FrameType::Control, subtype::control::RTS),
            Repr::Cts { .. } => FrameControl::new(FrameType::Control, subtype::control::CTS),
            Repr::Ack { .. } => FrameControl::new(FrameType::Control, subtype::control::ACK),
        }
    }

    /// MAC header length (the whole frame, FCS excluded, for control frames).
    pub fn header_len(&self) -> usize {
        self.frame_control().header_len()
    }

    pub fn buffer_len(&self) -> usize {
        self.header_len()
    }

    /// Writes the header; panics if the buffer is shorter than [`Self::header_len`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, frame: &mut Frame<&mut T>) {
        match *self {
            Repr::Data(ref d) => d.emit(frame),
            Repr::Rts { duration, receiver, transmitter } => {
                frame.set_frame_control(self.frame_control());
                frame.set_duration_id(duration);
                frame.set_addr1(receiver);
                frame.set_addr2(transmitter);
            }
            Repr::Cts { duration, receiver } | Repr::Ack { duration, receiver } => {
                frame.set_frame_control(self.frame_control());
                frame.set_duration_id(duration);
                frame.set_addr1(receiver);
            }
        }
    }

    /// Address 1, the receiver, for every frame.
    pub fn receiver(&self) -> Address {
        match *self {
            Repr::Data(ref d) => d.receiver(),
            Repr::Rts { receiver, .. } | Repr::Cts { receiver, .. } | Repr::Ack { receiver, .. } => receiver,
        }
    }

    /// Address 2, the transmitter; CTS and Ack carry none.
    pub fn transmitter(&self) -> Option<Address> {
        match *self {
            Repr::Data(ref d) => Some(d.transmitter()),
            Repr::Rts { transmitter, .. } => Some(transmitter),
            Repr::Cts { .. } | Repr::Ack { .. } => None,
        }
    }

    pub fn duration(&self) -> u16 {
        match *self {
            Repr::Data(ref d) => d.duration,
            Repr::Rts { duration, .. } | Repr::Cts { duration, .. } | Repr::Ack { duration, .. } => duration,
        }
    }

    /// Appends a whole MPDU: header, `body` (empty for control frames) and FCS.
    pub fn encapsulate(&self, body: &[u8], out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + self.header_len(), 0);
        self.emit(&mut Frame::new_unchecked(&mut out[start..]));
        out.extend_from_slice(body);
        let fcs = ETHERNET_FCS.checksum(&out[start..]);
        out.extend_from_slice(&fcs.to_le_bytes());
    }

    /// Named byte counts of the frame: for data frames as
    /// [`DataRepr::overhead_fields`], for control frames their fields.
    pub fn overhead_fields(&self, payload_len: usize) -> Vec<(&'static str, usize)> {
        let head = [("frame control", FRAME_CONTROL_LEN), ("duration", DURATION_LEN), ("receiver address", ADDR_LEN)];
        match self {
            Repr::Data(d) => d.overhead_fields(payload_len),
            Repr::Rts { .. } => {
                let mut v = head.to_vec();
                v.extend([("transmitter address", ADDR_LEN), ("fcs", FCS_LEN)]);
                v
            }
            Repr::Cts { .. } | Repr::Ack { .. } => {
                let mut v = head.to_vec();
                v.push(("fcs", FCS_LEN));
                v
            }
        }
    }
}
