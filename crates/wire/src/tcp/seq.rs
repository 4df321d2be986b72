//! Sequence numbers (RFC 9293 §3.4).

use super::*;

/// A TCP sequence number: 32-bit modular arithmetic, ordered by the sign of the
/// wrapping difference (RFC 9293 §3.4; RFC 1982 serial-number style, as smoltcp).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SeqNumber(pub i32);

impl SeqNumber {
    /// From the 32-bit wire value.
    pub const fn from_u32(value: u32) -> SeqNumber {
        SeqNumber(value as i32)
    }

    /// The 32-bit wire value.
    pub const fn as_u32(self) -> u32 {
        self.0 as u32
    }

    /// The later of two sequence numbers.
    pub fn max(self, rhs: SeqNumber) -> SeqNumber {
        if self > rhs {
            self
        } else {
            rhs
        }
    }

    /// The earlier of two sequence numbers.
    pub fn min(self, rhs: SeqNumber) -> SeqNumber {
        if self < rhs {
            self
        } else {
            rhs
        }
    }
}

impl fmt::Display for SeqNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.as_u32())
    }
}

impl ops::Add<usize> for SeqNumber {
    type Output = SeqNumber;

    /// Panics when `rhs` exceeds 2^31 - 1, which no window can reach.
    fn add(self, rhs: usize) -> SeqNumber {
        let rhs = i32::try_from(rhs).expect("attempt to add to sequence number with overflow");
        SeqNumber(self.0.wrapping_add(rhs))
    }
}

impl ops::Sub<usize> for SeqNumber {
    type Output = SeqNumber;

    /// Panics when `rhs` exceeds 2^31 - 1.
    fn sub(self, rhs: usize) -> SeqNumber {
        let rhs = i32::try_from(rhs).expect("attempt to subtract from sequence number with overflow");
        SeqNumber(self.0.wrapping_sub(rhs))
    }
}

impl ops::AddAssign<usize> for SeqNumber {
    fn add_assign(&mut self, rhs: usize) {
        *self = *self + rhs;
    }
}

impl ops::Sub for SeqNumber {
    type Output = usize;

    /// The distance from `rhs` up to `self`; panics when `rhs` is after `self`.
    fn sub(self, rhs: SeqNumber) -> usize {
        let result = self.0.wrapping_sub(rhs.0);
        usize::try_from(result).expect("attempt to subtract sequence numbers with underflow")
    }
}

impl PartialOrd for SeqNumber {
    fn partial_cmp(&self, other: &SeqNumber) -> Option<cmp::Ordering> {
        self.0.wrapping_sub(other.0).partial_cmp(&0)
    }
}
