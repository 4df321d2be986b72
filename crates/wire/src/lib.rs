//! Byte-accurate packet formats.
//!
//! Every protocol lives in a file of its own and has two levels, as in smoltcp's
//! `wire` module:
//!
//! * a checked view over bytes, `Packet<T: AsRef<[u8]>>` (or `Frame`, `Cell`, ...), with
//!   `new_unchecked`, `new_checked`, paired getters and setters, and the byte ranges
//!   of its fields in a `mod field`;
//! * a plain `Repr` struct with `parse`, `buffer_len` (or `header_len`) and `emit`.
//!
//! The contract every file keeps:
//!
//! * **Parsing never panics.** `new_checked` and `Repr::parse` return [`Error`] on
//!   anything short, malformed or unsupported; getters on a checked view only read
//!   ranges that `check_len` has proved present.
//! * **Emitting panics only when the buffer is too small**, i.e. shorter than
//!   `buffer_len()`; that is a caller bug, not bad input.
//! * **No I/O and no time.** The simulator and the emulator both build and parse real
//!   bytes with this crate, so nothing here may read a clock or a socket.
//!
//! Protocol numbers are lossless enums (an `Unknown` arm, so `From<u8>` never fails),
//! declared with [`enum_with_unknown!`].

#![deny(unsafe_code)]

use core::fmt;

/// A byte range of a header field.
pub type Field = core::ops::Range<usize>;
/// A field that runs from an offset to the end of the buffer.
pub type Rest = core::ops::RangeFrom<usize>;

/// Why bytes could not be parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Error {
    /// The buffer is shorter than the header or than a length field says.
    Truncated,
    /// A field holds a value the standard forbids (bad version, bad length, bad escape).
    Malformed,
    /// A checksum, CRC, HEC or ICV does not verify.
    Checksum,
    /// Well formed, but a variant this crate does not model.
    Unsupported,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Truncated => write!(f, "truncated packet"),
            Error::Malformed => write!(f, "malformed packet"),
            Error::Checksum => write!(f, "checksum mismatch"),
            Error::Unsupported => write!(f, "unsupported packet variant"),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = core::result::Result<T, Error>;

/// Declares a protocol-number enum that converts losslessly from and to its integer.
///
/// ```
/// wire::enum_with_unknown! {
///     /// A toy protocol field.
///     pub enum Colour(u8) {
///         Red = 1,
///         Blue = 2,
///     }
/// }
/// assert_eq!(Colour::from(2), Colour::Blue);
/// assert_eq!(u8::from(Colour::Unknown(7)), 7);
/// ```
#[macro_export]
macro_rules! enum_with_unknown {
    (
        $( #[$enum_attr:meta] )*
        pub enum $name:ident($ty:ty) {
            $(
              $( #[$variant_attr:meta] )*
              $variant:ident = $value:expr
            ),+ $(,)?
        }
    ) => {
        #[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Clone, Copy)]
        $( #[$enum_attr] )*
        pub enum $name {
            $(
              $( #[$variant_attr] )*
              $variant
            ),*,
            /// A value this crate has no name for, kept as it was.
            Unknown($ty)
        }

        impl ::core::convert::From<$ty> for $name {
            fn from(value: $ty) -> Self {
                match value {
                    $( value if value == $value => $name::$variant ),*,
                    other => $name::Unknown(other)
                }
            }
        }

        impl ::core::convert::From<$name> for $ty {
            fn from(value: $name) -> Self {
                match value {
                    $( $name::$variant => $value ),*,
                    $name::Unknown(other) => other
                }
            }
        }
    }
}

pub mod checksum;
pub mod crc;
pub mod pcap;

// Link layers.
pub mod dot11;
pub mod dot11_crypto;
pub mod ethernet;
pub mod llc;

// Network and transport.
pub mod arp;
pub mod icmpv4;
pub mod ipv4;
pub mod reassembly;
pub mod tcp;
pub mod udp;

// Point-to-point, tunnels and VPNs.
pub mod gre;
pub mod hdlc;
pub mod mschapv2;
pub mod openvpn;
pub mod ppp;
pub mod pppoe;
pub mod pptp;

// IPsec.
pub mod ah;
pub mod esp;
pub mod ipsec;

// Serial lines.
pub mod cslip;
pub mod slip;

// Seed 004's router-to-router link acknowledgements.
pub mod linkarq;

// ATM.
pub mod aal5;
pub mod atm;
pub mod atmarp;
pub mod lane;
pub mod nhrp;
pub mod rfc2684;

// Every layer by name, for the MTU analysis and whole-stack tests.
pub mod encap;

pub use ethernet::EtherType;
pub use ipv4::Protocol as IpProtocol;
