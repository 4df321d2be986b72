//! Data frames (§9.3.2.1): the address fields of Table 9-26 and the header as values.

use super::*;

/// The address fields of a data frame, one variant per To DS/From DS case of
/// IEEE 802.11-2020 Table 9-26 (seed 000 Table 1). Each variant holds exactly the
/// addresses its frame carries, named by role and listed in field order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Addresses {
    /// To DS 0, From DS 0: station to station in an IBSS (or a direct link).
    /// A1 = DA (= RA), A2 = SA (= TA), A3 = BSSID.
    Ibss { da: Address, sa: Address, bssid: Address },
    /// To DS 0, From DS 1: the AP to a station. A1 = DA (= RA), A2 = BSSID (= TA),
    /// A3 = SA.
    FromAp { da: Address, bssid: Address, sa: Address },
    /// To DS 1, From DS 0: a station to its AP. A1 = BSSID (= RA), A2 = SA (= TA),
    /// A3 = DA.
    ToAp { bssid: Address, sa: Address, da: Address },
    /// To DS 1, From DS 1: wireless distribution system / mesh. A1 = RA, A2 = TA,
    /// A3 = DA, A4 = SA; no BSSID.
    Wds { ra: Address, ta: Address, da: Address, sa: Address },
}

impl Addresses {
    /// (To DS, From DS).
    pub const fn ds_bits(&self) -> (bool, bool) {
        match self {
            Addresses::Ibss { .. } => (false, false),
            Addresses::FromAp { .. } => (false, true),
            Addresses::ToAp { .. } => (true, false),
            Addresses::Wds { .. } => (true, true),
        }
    }

    /// From DS × 2 + To DS: bits 9..8 of Frame Control as one number, tshark's
    /// `wlan.fc.ds` and the labels of seed 000's Table 1 read in binary.
    pub const fn ds_field(&self) -> u8 {
        let (to, from) = self.ds_bits();
        ((from as u8) << 1) | to as u8
    }

    /// Address 1 .. Address 3 in field order, and Address 4 when present.
    pub const fn fields(&self) -> ([Address; 3], Option<Address>) {
        match *self {
            Addresses::Ibss { da, sa, bssid } => ([da, sa, bssid], None),
            Addresses::FromAp { da, bssid, sa } => ([da, bssid, sa], None),
            Addresses::ToAp { bssid, sa, da } => ([bssid, sa, da], None),
            Addresses::Wds { ra, ta, da, sa } => ([ra, ta, da], Some(sa)),
        }
    }

    /// Builds the case from the DS bits and the address fields (Table 9-26).
    pub const fn from_fields(to_ds: bool, from_ds: bool, a: [Address; 3], a4: Address) -> Addresses {
        match (to_ds, from_ds) {
            (false, false) => Addresses::Ibss { da: a[0], sa: a[1], bssid: a[2] },
            (false, true) => Addresses::FromAp { da: a[0], bssid: a[1], sa: a[2] },
            (true, false) => Addresses::ToAp { bssid: a[0], sa: a[1], da: a[2] },
            (true, true) => Addresses::Wds { ra: a[0], ta: a[1], da: a[2], sa: a4 },
        }
    }

    /// The immediate receiver: always Address 1.
    pub const fn receiver(&self) -> Address {
        self.fields().0[0]
    }

    /// The immediate transmitter: always Address 2.
    pub const fn transmitter(&self) -> Address {
        self.fields().0[1]
    }

    /// The final destination of the MSDU.
    pub const fn destination(&self) -> Address {
        match *self {
            Addresses::Ibss { da, .. }
            | Addresses::FromAp { da, .. }
            | Addresses::ToAp { da, .. }
            | Addresses::Wds { da, .. } => da,
        }
    }

    /// The original source of the MSDU.
    pub const fn source(&self) -> Address {
        match *self {
            Addresses::Ibss { sa, .. }
            | Addresses::FromAp { sa, .. }
            | Addresses::ToAp { sa, .. }
            | Addresses::Wds { sa, .. } => sa,
        }
    }

    /// The BSSID; `None` in the WDS case, whose frame carries none.
    pub const fn bssid(&self) -> Option<Address> {
        match *self {
            Addresses::Ibss { bssid, .. } | Addresses::FromAp { bssid, .. } | Addresses::ToAp { bssid, .. } => {
                Some(bssid)
            }
            Addresses::Wds { .. } => None,
        }
    }
}

/// A data frame header (§9.3.2.1): Data, Null, QoS Data or QoS Null.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DataRepr {
    /// The four address cases; sets To DS and From DS.
    pub addresses: Addresses,
    /// Duration in µs, 0..=32767 (§9.2.4.2).
    pub duration: u16,
    /// 0..=4095 (§9.2.4.4.2).
    pub sequence_number: u16,
    /// 0..=15 (§9.2.4.4.3).
    pub fragment_number: u8,
    pub more_fragments: bool,
    pub retry: bool,
    pub power_management: bool,
    pub more_data: bool,
    /// The body is encrypted ([`crate::dot11_crypto`] handles it).
    pub protected: bool,
    /// A Null or QoS Null frame: no frame body (subtype bit 2).
    pub null: bool,
    /// QoS Control when this is a QoS subtype (subtype bit 3).
    pub qos: Option<QosControl>,
}

impl DataRepr {
    fn with_addresses(addresses: Addresses) -> DataRepr {
        DataRepr {
            addresses,
            duration: 0,
            sequence_number: 0,
            fragment_number: 0,
            more_fragments: false,
            retry: false,
            power_management: false,
            more_data: false,
            protected: false,
            null: false,
            qos: None,
        }
    }

    /// To DS 0, From DS 0; arguments in field order: A1 = DA, A2 = SA, A3 = BSSID.
    pub fn ibss(da: Address, sa: Address, bssid: Address) -> DataRepr {
        Self::with_addresses(Addresses::Ibss { da, sa, bssid })
    }

    /// To DS 0, From DS 1; arguments in field order: A1 = DA, A2 = BSSID, A3 = SA.
    pub fn from_ap(da: Address, bssid: Address, sa: Address) -> DataRepr {
        Self::with_addresses(Addresses::FromAp { da, bssid, sa })
    }

    /// To DS 1, From DS 0; arguments in field order: A1 = BSSID, A2 = SA, A3 = DA.
    pub fn to_ap(bssid: Address, sa: Address, da: Address) -> DataRepr {
        Self::with_addresses(Addresses::ToAp { bssid, sa, da })
    }

    /// To DS 1, From DS 1; arguments in field order: A1 = RA, A2 = TA, A3 = DA, A4 = SA.
    pub fn wds(ra: Address, ta: Address, da: Address, sa: Address) -> DataRepr {
        Self::with_addresses(Addresses::Wds { ra, ta, da, sa })
    }

    /// Makes this a QoS data frame for `tid` (normal ack policy).
    pub fn with_qos(mut self, tid: u8) -> DataRepr {
        self.qos = Some(QosControl::with_tid(tid));
        self
    }

    pub fn with_sequence(mut self, sequence_number: u16, fragment_number: u8) -> DataRepr {
        self.sequence_number = sequence_number;
        self.fragment_number = fragment_number;
        self
    }

    pub fn with_duration(mut self, duration: u16) -> DataRepr {
        self.duration = duration;
        self
    }

    pub const fn receiver(&self) -> Address {
        self.addresses.receiver()
    }

    pub const fn transmitter(&self) -> Address {
        self.addresses.transmitter()
    }

    pub const fn destination(&self) -> Address {
        self.addresses.destination()
    }

    pub const fn source(&self) -> Address {
        self.addresses.source()
    }

    pub const fn bssid(&self) -> Option<Address> {
        self.addresses.bssid()
    }

    /// The data subtype (Table 9-1): 0, 4, 8 or 12.
    pub fn subtype(&self) -> u8 {
        let mut s = subtype::data::DATA;
        if self.null {
            s |= subtype::data::NULL_BIT;
        }
        if self.qos.is_some() {
            s |= subtype::data::QOS_BIT;
        }
        s
    }

    pub fn frame_control(&self) -> FrameControl {
        let (to_ds, from_ds) = self.addresses.ds_bits();
        FrameControl {
            protocol_version: 0,
            frame_type: FrameType::Data,
            subtype: self.subtype(),
            to_ds,
            from_ds,
            more_fragments: self.more_fragments,
            retry: self.retry,
            power_management: self.power_management,
            more_data: self.more_data,
            protected: self.protected,
            order: false,
        }
    }

    /// 24, 26, 30 or 32.
    pub fn header_len(&self) -> usize {
        self.frame_control().header_len()
    }

    pub fn buffer_len(&self) -> usize {
        self.header_len()
    }

    /// Parses a data frame header. `Err(Unsupported)` for another type, protocol
    /// version ≠ 0, a CF-Poll/CF-Ack subtype, or +HTC/Order set.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(frame: &Frame<&T>) -> Result<DataRepr> {
        frame.check_len()?;
        let fc = frame.frame_control();
        if fc.protocol_version != 0 || fc.frame_type != FrameType::Data || fc.order {
            return Err(Error::Unsupported);
        }
        let qos_bit = fc.subtype & subtype::data::QOS_BIT != 0;
        let null = fc.subtype & subtype::data::NULL_BIT != 0;
        if fc.subtype & 0x3 != 0 {
            return Err(Error::Unsupported);
        }
        let addr4 = if fc.to_ds && fc.from_ds { frame.addr4() } else { Address::default() };
        Ok(DataRepr {
            addresses: Addresses::from_fields(
                fc.to_ds,
                fc.from_ds,
                [frame.addr1(), frame.addr2(), frame.addr3()],
                addr4,
            ),
            duration: frame.duration_id(),
            sequence_number: frame.sequence_number(),
            fragment_number: frame.fragment_number(),
            more_fragments: fc.more_fragments,
            retry: fc.retry,
            power_management: fc.power_management,
            more_data: fc.more_data,
            protected: fc.protected,
            null,
            qos: if qos_bit { Some(QosControl::from_raw(frame.qos_control())) } else { None },
        })
    }

    /// Writes the MAC header; panics if the buffer is shorter than [`Self::header_len`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, frame: &mut Frame<&mut T>) {
        frame.set_frame_control(self.frame_control());
        frame.set_duration_id(self.duration);
        let (a, a4) = self.addresses.fields();
        frame.set_addr1(a[0]);
        frame.set_addr2(a[1]);
        frame.set_addr3(a[2]);
        frame.set_sequence(self.sequence_number, self.fragment_number);
        if let Some(a4) = a4 {
            frame.set_addr4(a4);
        }
        if let Some(qos) = self.qos {
            frame.set_qos_control(qos.raw());
        }
    }

    /// Appends a whole MPDU: MAC header, `body` (the frame body as is) and FCS.
    pub fn encapsulate(&self, body: &[u8], out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + self.header_len(), 0);
        self.emit(&mut Frame::new_unchecked(&mut out[start..]));
        out.extend_from_slice(body);
        let fcs = ETHERNET_FCS.checksum(&out[start..]);
        out.extend_from_slice(&fcs.to_le_bytes());
    }

    /// Appends a whole MPDU whose MSDU is an EtherType-identified `payload` (an IP
    /// packet, ARP...): MAC header, LLC/SNAP per RFC 1042, payload, FCS. What an AP or
    /// station does to an Ethernet frame's payload when it bridges it onto the air.
    pub fn encapsulate_ethertype(&self, ethertype: EtherType, payload: &[u8], out: &mut Vec<u8>) {
        let mut body = Vec::with_capacity(llc::LLC_SNAP_LEN + payload.len());
        llc::Repr::ethertype(ethertype).encapsulate(payload, &mut body);
        self.encapsulate(&body, out);
    }

    /// Inverse of [`Self::encapsulate_ethertype`]: checks the FCS, parses the header and
    /// the LLC/SNAP header and returns the EtherType and payload. `Err(Unsupported)`
    /// for a protected frame, an A-MSDU, a Null frame or a body that is not LLC/SNAP
    /// with OUI 00-00-00 or 00-00-F8.
    pub fn decapsulate_ethertype(mpdu: &[u8]) -> Result<(DataRepr, EtherType, &[u8])> {
        let body = check_fcs(mpdu)?;
        let frame = Frame::new_checked(body)?;
        let repr = DataRepr::parse(&frame)?;
        if repr.protected || repr.null || repr.qos.is_some_and(|q| q.amsdu_present) {
            return Err(Error::Unsupported);
        }
        let (llc, payload) = llc::Repr::decapsulate(&body[repr.header_len()..])?;
        let ethertype = llc.as_ethertype().ok_or(Error::Unsupported)?;
        Ok((repr, ethertype, payload))
    }

    /// Named byte counts the MAC adds to a `payload_len`-octet EtherType payload
    /// carried with LLC/SNAP (for `qoslab mtu`), header fields in order, then FCS.
    /// A Null frame has no body, so no LLC/SNAP.
    pub fn overhead_fields(&self, _payload_len: usize) -> Vec<(&'static str, usize)> {
        let mut v = vec![
            ("frame control", FRAME_CONTROL_LEN),
            ("duration", DURATION_LEN),
            ("address 1", ADDR_LEN),
            ("address 2", ADDR_LEN),
            ("address 3", ADDR_LEN),
            ("sequence control", SEQUENCE_CONTROL_LEN),
        ];
        if let Addresses::Wds { .. } = self.addresses {
            v.push(("address 4", ADDR_LEN));
        }
        if self.qos.is_some() {
            v.push(("qos control", QOS_CONTROL_LEN));
        }
        if !self.null {
            v.push(("llc/snap", llc::LLC_SNAP_LEN));
        }
        v.push(("fcs", FCS_LEN));
        v
    }
}
