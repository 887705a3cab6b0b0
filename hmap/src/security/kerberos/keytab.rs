//! A keytab checked before GSSAPI reads it: whether the file is a keytab at
//! all, and whether it holds a key of the principal. MIT Kerberos answers
//! both mistakes, and a missing principal, with the same "No credentials
//! cache found" at the first handshake; reading the file here gives each
//! its own [`KerberosFailure`](super::KerberosFailure) and a message that
//! says what the file holds.
//!
//! The format is MIT's (`keytab.txt` in MIT Kerberos' sources), which
//! Heimdal, Java's `ktab`, Apache Kerby and Active Directory's `ktpass`
//! write too: the bytes `0x05 0x02` (version 2; version 1, `0x05 0x01`,
//! differs in byte order and in counting the realm among the components),
//! then entries, each `[i32 length][entry]` (a negative length is a hole
//! of that many bytes, left by a deleted entry):
//!
//! ```text
//! u16 components, counted realm, counted components..., u32 name type (v2 only),
//! u32 timestamp, u8 key version, u16 enctype, counted key, [u32 key version]
//! ```
//!
//! a counted string being `[u16 length][bytes]`. Only what a check needs
//! is read: the principal of each entry.

/// Why a keytab cannot serve `principal`.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Problem {
    /// The file is no keytab (empty, another format, or cut short): what
    /// is wrong.
    Invalid(String),
    /// The keytab holds no key of the principal: the principals it holds.
    NoKeyFor(Vec<String>),
}

/// Checks that `bytes` are a keytab holding a key of `principal`
/// (`name/instance@REALM`; without a realm, any realm matches, as the
/// default realm is krb5.conf's to say).
pub(super) fn check(bytes: &[u8], principal: &str) -> Result<(), Problem> {
    let entries = principals(bytes)?;
    let wanted = Principal::parse(principal);
    if entries.iter().any(|held| wanted.matches(held)) {
        return Ok(());
    }
    let mut held: Vec<String> = entries.iter().map(Principal::to_string).collect();
    held.dedup();
    Err(Problem::NoKeyFor(held))
}

/// A principal: its components and realm, unescaped.
#[derive(Debug, PartialEq, Eq)]
struct Principal {
    components: Vec<Vec<u8>>,
    realm: Option<Vec<u8>>,
}

impl Principal {
    /// `a/b@R` as Kerberos writes principals, `\` escaping the next
    /// character (`\/`, `\@`, `\\`).
    fn parse(text: &str) -> Principal {
        let mut components = vec![Vec::new()];
        let mut realm: Option<Vec<u8>> = None;
        let mut bytes = text.bytes();
        while let Some(b) = bytes.next() {
            let b = match b {
                b'\\' => match bytes.next() {
                    Some(b'n') => b'\n',
                    Some(b't') => b'\t',
                    Some(b'0') => 0,
                    Some(other) => other,
                    None => b'\\',
                },
                b'/' if realm.is_none() => {
                    components.push(Vec::new());
                    continue;
                }
                b'@' if realm.is_none() => {
                    realm = Some(Vec::new());
                    continue;
                }
                b => b,
            };
            match &mut realm {
                Some(realm) => realm.push(b),
                None => components.last_mut().expect("one component at least").push(b),
            }
        }
        Principal { components, realm }
    }

    /// Whether `held` (a keytab's, realm included) is this principal.
    fn matches(&self, held: &Principal) -> bool {
        self.components == held.components
            && match (&self.realm, &held.realm) {
                (Some(wanted), Some(held)) => wanted == held,
                _ => true,
            }
    }
}

impl std::fmt::Display for Principal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self
            .components
            .iter()
            .map(|c| String::from_utf8_lossy(c).into_owned())
            .collect();
        f.write_str(&names.join("/"))?;
        if let Some(realm) = &self.realm {
            write!(f, "@{}", String::from_utf8_lossy(realm))?;
        }
        Ok(())
    }
}

/// Reads big-endian (version 2) or native-endian (version 1) numbers.
struct Reader<'a> {
    bytes: &'a [u8],
    big_endian: bool,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.bytes.len() < n {
            return None;
        }
        let (taken, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Some(taken)
    }

    fn u16(&mut self) -> Option<u16> {
        let b: [u8; 2] = self.take(2)?.try_into().ok()?;
        Some(if self.big_endian {
            u16::from_be_bytes(b)
        } else {
            u16::from_ne_bytes(b)
        })
    }

    fn i32(&mut self) -> Option<i32> {
        let b: [u8; 4] = self.take(4)?.try_into().ok()?;
        Some(if self.big_endian {
            i32::from_be_bytes(b)
        } else {
            i32::from_ne_bytes(b)
        })
    }

    fn counted(&mut self) -> Option<&'a [u8]> {
        let len = self.u16()?;
        self.take(usize::from(len))
    }
}

/// The principal of every entry of the keytab `bytes`.
fn principals(bytes: &[u8]) -> Result<Vec<Principal>, Problem> {
    let invalid = |why: &str| Problem::Invalid(why.to_string());
    let version = match bytes {
        [] => return Err(invalid("the file is empty")),
        [0x05, version @ (0x01 | 0x02), ..] => *version,
        [0x05] => return Err(invalid("the file ends after its first byte")),
        _ => {
            return Err(Problem::Invalid(format!(
                "it does not start as a keytab does (0x05 0x02; it starts {})",
                bytes
                    .iter()
                    .take(4)
                    .map(|b| format!("{b:#04x}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            )));
        }
    };
    let mut file = Reader {
        bytes: &bytes[2..],
        big_endian: version == 2,
    };
    let mut entries = Vec::new();
    while !file.bytes.is_empty() {
        let Some(length) = file.i32() else {
            return Err(invalid("it is cut short inside an entry's length"));
        };
        // A zero length ends the entries (MIT writes none; it stops there).
        if length == 0 {
            break;
        }
        let Some(entry) = file.take(length.unsigned_abs() as usize) else {
            return Err(Problem::Invalid(format!(
                "it is cut short: an entry of {} bytes, {} left",
                length.unsigned_abs(),
                file.bytes.len()
            )));
        };
        if length < 0 {
            continue; // a hole
        }
        let mut entry = Reader {
            bytes: entry,
            big_endian: file.big_endian,
        };
        let principal = (|| {
            let mut count = entry.u16()?;
            if version == 1 {
                count = count.checked_sub(1)?; // the realm was counted
            }
            let realm = entry.counted()?.to_vec();
            let components = (0..count)
                .map(|_| entry.counted().map(<[u8]>::to_vec))
                .collect::<Option<Vec<_>>>()?;
            // Name type (v2), timestamp, key version, then the key block:
            // present, or the entry is no entry.
            entry.take(if version == 2 { 4 } else { 0 } + 4 + 1)?;
            entry.u16()?;
            entry.counted()?;
            Some(Principal {
                components,
                realm: Some(realm),
            })
        })();
        match principal {
            Some(principal) => entries.push(principal),
            None => return Err(invalid("an entry is cut short or malformed")),
        }
    }
    if entries.is_empty() {
        return Err(invalid("it holds no keys"));
    }
    Ok(entries)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A version 2 keytab of one entry per `(principal components, realm)`,
    /// each with a key of 16 bytes (aes128-cts-hmac-sha1-96, 17).
    pub(crate) fn keytab(entries: &[(&[&str], &str)]) -> Vec<u8> {
        let mut out = vec![0x05, 0x02];
        for (components, realm) in entries {
            let mut entry = Vec::new();
            let counted = |s: &[u8], entry: &mut Vec<u8>| {
                entry.extend_from_slice(&(s.len() as u16).to_be_bytes());
                entry.extend_from_slice(s);
            };
            entry.extend_from_slice(&(components.len() as u16).to_be_bytes());
            counted(realm.as_bytes(), &mut entry);
            for c in *components {
                counted(c.as_bytes(), &mut entry);
            }
            entry.extend_from_slice(&1u32.to_be_bytes()); // KRB5_NT_PRINCIPAL
            entry.extend_from_slice(&0x6000_0000u32.to_be_bytes()); // timestamp
            entry.push(2); // key version
            entry.extend_from_slice(&17u16.to_be_bytes());
            counted(&[7; 16], &mut entry);
            entry.extend_from_slice(&2u32.to_be_bytes()); // key version, 32 bits
            out.extend_from_slice(&(entry.len() as i32).to_be_bytes());
            out.extend_from_slice(&entry);
        }
        out
    }

    #[test]
    fn a_keytab_holding_the_principal_passes() {
        let file = keytab(&[(&["hbase", "localhost"], "R"), (&["app"], "R")]);
        assert_eq!(check(&file, "app@R"), Ok(()));
        assert_eq!(check(&file, "hbase/localhost@R"), Ok(()));
        // Without a realm, the default realm is krb5.conf's: any matches.
        assert_eq!(check(&file, "app"), Ok(()));
    }

    #[test]
    fn a_principal_the_keytab_does_not_hold_is_told_with_what_it_holds() {
        let file = keytab(&[(&["hbase", "localhost"], "R"), (&["app"], "R")]);
        let held = vec!["hbase/localhost@R".to_string(), "app@R".to_string()];
        assert_eq!(check(&file, "other@R"), Err(Problem::NoKeyFor(held.clone())));
        assert_eq!(check(&file, "app@OTHER.REALM"), Err(Problem::NoKeyFor(held.clone())));
        assert_eq!(check(&file, "app/host@R"), Err(Problem::NoKeyFor(held)));
    }

    #[test]
    fn garbage_empty_and_truncated_files_are_no_keytabs() {
        let invalid = |bytes: &[u8]| match check(bytes, "app@R") {
            Err(Problem::Invalid(why)) => why,
            other => panic!("{other:?}"),
        };
        assert!(invalid(b"").contains("empty"));
        assert!(invalid(b"[libdefaults]\n").contains("does not start as a keytab"));
        assert!(invalid(b"\x05").contains("first byte"));
        assert!(invalid(b"\x05\x02").contains("no keys"));
        let whole = keytab(&[(&["app"], "R")]);
        for cut in 3..whole.len() {
            let why = invalid(&whole[..cut]);
            assert!(why.contains("cut short"), "cut at {cut}: {why}");
        }
        // An entry whose length covers too little of it.
        let mut short = whole.clone();
        short[2..6].copy_from_slice(&5i32.to_be_bytes());
        assert!(invalid(&short).contains("cut short or malformed") || invalid(&short).contains("cut short"));
    }

    #[test]
    fn holes_are_skipped_and_version_one_counts_the_realm() {
        let mut file = vec![0x05, 0x02];
        file.extend_from_slice(&(-3i32).to_be_bytes());
        file.extend_from_slice(&[0; 3]);
        file.extend_from_slice(&keytab(&[(&["app"], "R")])[2..]);
        assert_eq!(check(&file, "app@R"), Ok(()));
        // Version 1: native byte order, the realm among the components.
        let mut entry = Vec::new();
        entry.extend_from_slice(&2u16.to_ne_bytes());
        for s in ["R", "app"] {
            entry.extend_from_slice(&(s.len() as u16).to_ne_bytes());
            entry.extend_from_slice(s.as_bytes());
        }
        entry.extend_from_slice(&[0; 5]); // timestamp, key version
        entry.extend_from_slice(&17u16.to_ne_bytes());
        entry.extend_from_slice(&16u16.to_ne_bytes());
        entry.extend_from_slice(&[7; 16]);
        let mut v1 = vec![0x05, 0x01];
        v1.extend_from_slice(&(entry.len() as i32).to_ne_bytes());
        v1.extend_from_slice(&entry);
        assert_eq!(check(&v1, "app@R"), Ok(()));
    }

    #[test]
    fn principals_are_parsed_with_escapes() {
        let p = Principal::parse(r"a\/b/c@R\@S");
        assert_eq!(p.components, vec![b"a/b".to_vec(), b"c".to_vec()]);
        assert_eq!(p.realm.as_deref(), Some(&b"R@S"[..]));
        assert_eq!(Principal::parse("app").realm, None);
    }
}
