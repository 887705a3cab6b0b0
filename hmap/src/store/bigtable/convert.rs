//! HBase's cells and mutations as Bigtable's, the way Google's Java HBase
//! adapter for Bigtable maps them (so that data is shared with Java's
//! Bigtable HBase client): timestamps in milliseconds become microseconds
//! (× 1000), deletes become `DeleteFromColumn` / `DeleteFromFamily` /
//! `DeleteFromRow`, and what Bigtable cannot express is refused.

use bytes::Bytes;
use googleapis_tonic_google_bigtable_v2::google::bigtable::v2;
use v2::mutation::{DeleteFromColumn, DeleteFromFamily, DeleteFromRow, Mutation as M, SetCell};

use super::error::{refuse, unsupported};
use crate::store::{Mutation, Result, StoreError};

/// The largest timestamp in microseconds the adapter writes, and the one
/// from which it reads HBase's `LATEST_TIMESTAMP` (`i64::MAX`): the
/// largest multiple of 1000 in an `i64`.
pub(crate) const MAX_MICROS: i64 = 9_223_372_036_854_775_000;

/// HBase's timestamp `ms` as Bigtable's: × 1000, capped at [`MAX_MICROS`]
/// (the adapter's `TimestampConverter.hbase2bigtable`).
pub(crate) fn to_micros(ms: i64) -> i64 {
    ms.saturating_mul(1000).min(MAX_MICROS)
}

/// Bigtable's timestamp as HBase's: ÷ 1000, and [`MAX_MICROS`] or above as
/// `i64::MAX` (HBase's `LATEST_TIMESTAMP`).
pub(crate) fn from_micros(micros: i64) -> i64 {
    if micros >= MAX_MICROS { i64::MAX } else { micros / 1000 }
}

/// `[min, max)` in milliseconds as a Bigtable range in microseconds; `max`
/// of `i64::MAX` (no end) is 0, Bigtable's "no end".
pub(crate) fn time_range(min: i64, max: i64) -> v2::TimestampRange {
    v2::TimestampRange {
        start_timestamp_micros: to_micros(min.max(0)),
        end_timestamp_micros: if max == i64::MAX { 0 } else { to_micros(max) },
    }
}

/// A family name as Bigtable's (a string): families were checked against
/// the table's, whose names are strings, so this fails only on a request
/// that skipped the check.
pub(crate) fn family_name(table: &str, family: &[u8]) -> Result<String> {
    String::from_utf8(family.to_vec()).map_err(|_| StoreError::NoSuchFamily {
        table: table.into(),
        family: crate::key::Printable(family).to_string(),
    })
}

/// A row's mutations as Bigtable's; puts without a timestamp at `now_ms`
/// (the client's clock, as the adapter does, one time for the row). Fails
/// with [`StoreError::Unsupported`] on what Bigtable cannot express.
pub(crate) fn mutations(table: &str, list: &[Mutation], now_ms: i64) -> Result<Vec<v2::Mutation>> {
    list.iter().map(|m| mutation(table, m, now_ms)).collect()
}

fn mutation(table: &str, m: &Mutation, now_ms: i64) -> Result<v2::Mutation> {
    let column = |family: &Bytes, qualifier: &Bytes, range: Option<v2::TimestampRange>| -> Result<M> {
        Ok(M::DeleteFromColumn(DeleteFromColumn {
            family_name: family_name(table, family)?,
            column_qualifier: qualifier.clone(),
            time_range: range,
        }))
    };
    let m = match m {
        Mutation::Put {
            family,
            qualifier,
            value,
            timestamp,
        } => M::SetCell(SetCell {
            family_name: family_name(table, family)?,
            column_qualifier: qualifier.clone(),
            timestamp_micros: to_micros(timestamp.unwrap_or(now_ms)),
            value: value.clone(),
        }),
        // One exact version: [T, T+1) ms.
        Mutation::DeleteCell {
            family,
            qualifier,
            timestamp: Some(t),
        } => column(
            family,
            qualifier,
            Some(v2::TimestampRange {
                start_timestamp_micros: to_micros(*t),
                end_timestamp_micros: to_micros(t.saturating_add(1)),
            }),
        )?,
        Mutation::DeleteCell { timestamp: None, .. } => return Err(refuse(table, unsupported::DELETE_LATEST)),
        // Every version; HBase's "up to now" keeps versions stamped in the
        // future, Bigtable (and the adapter) deletes them too.
        Mutation::DeleteColumn {
            family,
            qualifier,
            up_to: None,
        } => column(family, qualifier, None)?,
        Mutation::DeleteColumn {
            family,
            qualifier,
            up_to: Some(t),
        } => column(
            family,
            qualifier,
            Some(v2::TimestampRange {
                start_timestamp_micros: 0,
                end_timestamp_micros: to_micros(t.saturating_add(1)),
            }),
        )?,
        Mutation::DeleteFamily { family, up_to: None } => M::DeleteFromFamily(DeleteFromFamily {
            family_name: family_name(table, family)?,
        }),
        // The store replaces these by column deletes first (it reads the
        // row's columns): one that reaches here was not.
        Mutation::DeleteFamily { up_to: Some(_), .. } | Mutation::DeleteRow { up_to: Some(_) } => {
            return Err(StoreError::InvalidRequest {
                table: table.into(),
                reason: "a delete of a family's or a row's cells up to a timestamp must be sent as column deletes"
                    .into(),
            });
        }
        Mutation::DeleteRow { up_to: None } => M::DeleteFromRow(DeleteFromRow {}),
    };
    Ok(v2::Mutation { mutation: Some(m) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_milliseconds_times_1000_capped_as_the_adapter_does() {
        assert_eq!(to_micros(0), 0);
        assert_eq!(to_micros(1_700_000_000_123), 1_700_000_000_123_000);
        assert_eq!(to_micros(i64::MAX), MAX_MICROS);
        assert_eq!(to_micros(MAX_MICROS / 1000), MAX_MICROS);
        assert_eq!(from_micros(1_700_000_000_123_000), 1_700_000_000_123);
        assert_eq!(from_micros(1_999), 1);
        assert_eq!(from_micros(MAX_MICROS), i64::MAX);
        assert_eq!(from_micros(i64::MAX), i64::MAX);
        // Every timestamp sent is a multiple of 1000: the emulator refuses others.
        for ms in [0, 1, 999, 1_234_567, i64::MAX / 1000, i64::MAX] {
            assert_eq!(to_micros(ms) % 1000, 0, "{ms}");
        }
        let all = time_range(0, i64::MAX);
        assert_eq!((all.start_timestamp_micros, all.end_timestamp_micros), (0, 0));
        let some = time_range(5, 10);
        assert_eq!((some.start_timestamp_micros, some.end_timestamp_micros), (5000, 10_000));
    }

    fn one(m: Mutation) -> Result<M> {
        mutation("t", &m, 42).map(|m| m.mutation.expect("set"))
    }

    #[test]
    fn puts_carry_their_timestamp_or_the_rows_time() {
        let put = |ts| Mutation::Put {
            family: "f".into(),
            qualifier: "q".into(),
            value: "v".into(),
            timestamp: ts,
        };
        match one(put(Some(7))).unwrap() {
            M::SetCell(c) => {
                assert_eq!((c.family_name.as_str(), &c.column_qualifier[..]), ("f", &b"q"[..]));
                assert_eq!((c.timestamp_micros, &c.value[..]), (7000, &b"v"[..]));
            }
            other => panic!("{other:?}"),
        }
        match one(put(None)).unwrap() {
            M::SetCell(c) => assert_eq!(c.timestamp_micros, 42_000),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn deletes_map_as_the_adapter_maps_them() {
        let range = |m| match one(m).unwrap() {
            M::DeleteFromColumn(d) => d.time_range.map(|r| (r.start_timestamp_micros, r.end_timestamp_micros)),
            other => panic!("{other:?}"),
        };
        let (f, q) = (Bytes::from("f"), Bytes::from("q"));
        assert_eq!(
            range(Mutation::DeleteCell {
                family: f.clone(),
                qualifier: q.clone(),
                timestamp: Some(5)
            }),
            Some((5000, 6000))
        );
        assert_eq!(
            range(Mutation::DeleteColumn {
                family: f.clone(),
                qualifier: q.clone(),
                up_to: None
            }),
            None
        );
        assert_eq!(
            range(Mutation::DeleteColumn {
                family: f.clone(),
                qualifier: q.clone(),
                up_to: Some(5)
            }),
            Some((0, 6000))
        );
        assert!(matches!(
            one(Mutation::DeleteFamily {
                family: f.clone(),
                up_to: None
            }),
            Ok(M::DeleteFromFamily(d)) if d.family_name == "f"
        ));
        assert!(matches!(
            one(Mutation::DeleteRow { up_to: None }),
            Ok(M::DeleteFromRow(_))
        ));
    }

    #[test]
    fn what_bigtable_cannot_delete_is_refused_by_name() {
        let refused = |m| match one(m) {
            Err(StoreError::Unsupported {
                feature,
                backend: "BigtableStore",
                table,
            }) if table == "t" => feature,
            other => panic!("{other:?}"),
        };
        let (f, q) = (Bytes::from("f"), Bytes::from("q"));
        assert_eq!(
            refused(Mutation::DeleteCell {
                family: f.clone(),
                qualifier: q,
                timestamp: None
            }),
            unsupported::DELETE_LATEST
        );
        // The store sends these as column deletes (it reads the row's
        // columns first), never as such.
        assert!(matches!(
            one(Mutation::DeleteFamily {
                family: f,
                up_to: Some(3)
            }),
            Err(StoreError::InvalidRequest { .. })
        ));
        assert!(matches!(
            one(Mutation::DeleteRow { up_to: Some(3) }),
            Err(StoreError::InvalidRequest { .. })
        ));
    }
}
