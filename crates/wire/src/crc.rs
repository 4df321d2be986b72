//! The CRCs of the link layers, all from the `crc` crate's catalogue so that the
//! polynomials, reflections and final XORs are the published ones, not retyped here.

use crc::{Crc, CRC_16_IBM_SDLC, CRC_32_BZIP2, CRC_32_ISO_HDLC, CRC_8_I_432_1};

/// IEEE 802.3 §3.2.9 frame check sequence; also the 802.11 FCS (IEEE 802.11 §9.2.4.8)
/// and the WEP ICV (IEEE 802.11 §12.3.2.2). Transmitted least significant byte first.
pub const ETHERNET_FCS: Crc<u32> = Crc::<u32>::new(&CRC_32_ISO_HDLC);

/// ITU-T I.363.5 AAL5 CPCS-PDU CRC-32: the same polynomial, not reflected, sent most
/// significant byte first.
pub const AAL5: Crc<u32> = Crc::<u32>::new(&CRC_32_BZIP2);

/// RFC 1662 §C.2 16-bit FCS of PPP in HDLC-like framing (the X.25 CRC), sent least
/// significant byte first.
pub const PPP_FCS16: Crc<u16> = Crc::<u16>::new(&CRC_16_IBM_SDLC);

/// ITU-T I.432.1 §7.3.2 ATM header error control: CRC-8 x^8+x^2+x+1 of the first four
/// header octets, XORed with the coset 0x55.
pub const ATM_HEC: Crc<u8> = Crc::<u8>::new(&CRC_8_I_432_1);

#[cfg(test)]
mod test {
    use super::*;

    // The catalogue's check values (CRC of ASCII "123456789").
    #[test]
    fn check_values() {
        assert_eq!(ETHERNET_FCS.checksum(b"123456789"), 0xcbf43926);
        assert_eq!(AAL5.checksum(b"123456789"), 0xfc891918);
        assert_eq!(PPP_FCS16.checksum(b"123456789"), 0x906e);
        assert_eq!(ATM_HEC.checksum(b"123456789"), 0xa1);
    }

    #[test]
    fn idle_cell_hec() {
        // ITU-T I.432.1 Table 4: the idle cell header 00 00 00 01 has HEC 0x52.
        assert_eq!(ATM_HEC.checksum(&[0, 0, 0, 1]), 0x52);
    }
}
