//! The fingerprint value type.

use std::fmt;
use std::str::FromStr;

/// A 64-bit simhash fingerprint.
///
/// Displays as 16 lowercase hex digits and parses from 1 to 16 hex digits
/// (an optional `0x` prefix is accepted), so it round-trips through text
/// outputs such as JSONL.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fingerprint(pub u64);

impl Fingerprint {
    /// The Hamming distance: how many of the 64 bits differ.
    #[inline]
    pub fn distance(self, other: Fingerprint) -> u32 {
        (self.0 ^ other.0).count_ones()
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl fmt::LowerHex for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::LowerHex::fmt(&self.0, f)
    }
}

impl From<u64> for Fingerprint {
    fn from(v: u64) -> Self {
        Fingerprint(v)
    }
}

impl From<Fingerprint> for u64 {
    fn from(f: Fingerprint) -> Self {
        f.0
    }
}

/// The text was not a fingerprint: 1 to 16 hex digits, optionally after `0x`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a fingerprint (want 1 to 16 hex digits): {input:?}")]
pub struct ParseFingerprintError {
    input: String,
}

impl FromStr for Fingerprint {
    type Err = ParseFingerprintError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseFingerprintError {
            input: s.to_string(),
        };
        let t = s.trim();
        let digits = t
            .strip_prefix("0x")
            .or_else(|| t.strip_prefix("0X"))
            .unwrap_or(t);
        // from_str_radix accepts a leading '+', which is no hex digit.
        if digits.is_empty() || digits.len() > 16 || !digits.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return Err(err());
        }
        u64::from_str_radix(digits, 16)
            .map(Fingerprint)
            .map_err(|_| err())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_16_hex_digits_and_round_trips() {
        for v in [0u64, 1, 0xdead_beef, u64::MAX, 0x0123_4567_89ab_cdef] {
            let s = Fingerprint(v).to_string();
            assert_eq!(s.len(), 16);
            assert_eq!(s.parse::<Fingerprint>().unwrap(), Fingerprint(v));
        }
        assert_eq!(Fingerprint(0xab).to_string(), "00000000000000ab");
    }

    #[test]
    fn parses_prefix_and_short_forms() {
        assert_eq!("0xff".parse::<Fingerprint>().unwrap(), Fingerprint(255));
        assert_eq!(" FF ".parse::<Fingerprint>().unwrap(), Fingerprint(255));
    }

    #[test]
    fn rejects_garbage() {
        for bad in [
            "",
            "0x",
            "+ff",
            "-1",
            "g",
            "00000000000000000",
            "12 34",
            "ü",
        ] {
            assert!(bad.parse::<Fingerprint>().is_err(), "{bad:?} parsed");
        }
        let msg = "zz".parse::<Fingerprint>().unwrap_err().to_string();
        assert!(msg.contains("zz"), "{msg}");
    }

    #[test]
    fn distance_counts_differing_bits() {
        let a = Fingerprint(0b1011);
        let b = Fingerprint(0b0110);
        assert_eq!(a.distance(b), 3);
        assert_eq!(b.distance(a), 3);
        assert_eq!(a.distance(a), 0);
        assert_eq!(Fingerprint(0).distance(Fingerprint(u64::MAX)), 64);
    }
}
