//! The printable form of raw bytes that HBase's shell and logs show.

use std::fmt;

/// Shows bytes the way HBase's `Bytes.toStringBinary` does: printable ASCII
/// as it is, every other byte (and the backslash) as `\xHH`.
///
/// ```
/// use hmap::key::Printable;
/// assert_eq!(Printable(b"u1\x00\xff").to_string(), r"u1\x00\xFF");
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Printable<'a>(pub &'a [u8]);

impl fmt::Display for Printable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for &b in self.0 {
            if (b' '..=b'~').contains(&b) && b != b'\\' {
                fmt::Write::write_char(f, char::from(b))?;
            } else {
                write!(f, "\\x{b:02X}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for Printable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{self}\"")
    }
}

/// Parses the printable form back into bytes, like HBase's
/// `Bytes.toBytesBinary`: `\xHH` (either case) is a byte, anything else
/// stands for itself (a non-ASCII character for its UTF-8 bytes).
///
/// ```
/// use hmap::key::parse_printable;
/// assert_eq!(parse_printable(r"u1\x00\xFF"), b"u1\x00\xff");
/// ```
pub fn parse_printable(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && bytes.get(i + 1) == Some(&b'x') {
            let hex = bytes.get(i + 2..i + 4).and_then(|h| std::str::from_utf8(h).ok());
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}
