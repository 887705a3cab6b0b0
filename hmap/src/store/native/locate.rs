//! Where regions are: the connection registry (`ClientMetaService`, which
//! masters and region servers of HBase 2.5 and later answer) for
//! `hbase:meta`, and `hbase:meta` itself for every other table's regions.
//!
//! A row's region is the `hbase:meta` row at or before
//! `<table>,<row>,99999999999999`: a reversed scan from that key, one row,
//! as HBase's Java client does (`locateRegionInMeta`). Its `info:regioninfo`
//! cell holds the region's `RegionInfo` (after the magic `PBUF`), its
//! `info:server` cell the server's `host:port`.

use bytes::Bytes;
use prost::Message;

use super::codec::WireCell;
use super::error::NativeError;
use super::proto::{self, RegionInfo, RegionSpecifier, region_specifier::RegionSpecifierType};

/// The family of `hbase:meta` that describes regions.
pub const META_FAMILY: &[u8] = b"info";

/// `hbase:meta`'s name.
pub const META_TABLE: &str = "hbase:meta";

/// Where one region of a table is served.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RegionLocation {
    /// The table, as hmap names it (`ns:name`, or `name` in the default namespace).
    pub table: String,
    /// The region's name, as calls name it (`RegionSpecifier` of type REGION_NAME).
    pub name: Bytes,
    /// The first row of the region (empty: the table's start).
    pub start: Bytes,
    /// The first row past the region (empty: the table's end).
    pub end: Bytes,
    /// The region server, `host:port`.
    pub server: String,
}

impl RegionLocation {
    /// Whether `row` is in the region.
    pub fn contains(&self, row: &[u8]) -> bool {
        row >= &self.start[..] && (self.end.is_empty() || row < &self.end[..])
    }

    /// The region as calls name it.
    pub fn specifier(&self) -> RegionSpecifier {
        RegionSpecifier {
            r#type: RegionSpecifierType::RegionName as i32,
            value: self.name.clone(),
        }
    }
}

/// The region to find: the one holding a row, or the table's last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target<'a> {
    /// The region holding this row.
    Row(&'a [u8]),
    /// The last region (where a reversed scan from the table's end starts).
    Last,
}

impl<'a> Target<'a> {
    /// The row, if the target is one.
    pub fn row(self) -> Option<&'a [u8]> {
        match self {
            Target::Row(row) => Some(row),
            Target::Last => None,
        }
    }

    /// Whether `region` is the target's.
    pub fn is_in(self, region: &RegionLocation) -> bool {
        match self {
            Target::Row(row) => region.contains(row),
            Target::Last => region.end.is_empty(),
        }
    }

    /// The `hbase:meta` key a reversed lookup starts from: for a row,
    /// `<table>,<row>,99999999999999`; for the last region, the table's
    /// name and a zero byte, which `hbase:meta` sorts after every region of
    /// the table and before any other table's (`MetaCellComparator` compares
    /// the part before the first comma first). A row key of the longest
    /// length would not do: the key would be longer than a row key may be.
    pub fn meta_key(self, table: &str) -> Vec<u8> {
        match self {
            Target::Row(row) => meta_key(table, row),
            Target::Last => {
                let mut key = meta_table_name(table).as_bytes().to_vec();
                key.push(0);
                key
            }
        }
    }

    /// The target for messages.
    pub fn show(self) -> String {
        match self {
            Target::Row(row) => format!("row {}", crate::store::show_row(row)),
            Target::Last => "the table's end".to_string(),
        }
    }
}

/// A table name as hmap writes it, split into namespace and qualifier.
pub fn split_table(table: &str) -> (&str, &str) {
    table.split_once(':').unwrap_or(("default", table))
}

/// The table's name as `hbase:meta` rows spell it: no `default:` prefix.
fn meta_table_name(table: &str) -> &str {
    table.strip_prefix("default:").unwrap_or(table)
}

/// The `hbase:meta` key a lookup of `row` in `table` starts from:
/// `<table>,<row>,99999999999999`.
pub fn meta_key(table: &str, row: &[u8]) -> Vec<u8> {
    let table = meta_table_name(table);
    let mut key = Vec::with_capacity(table.len() + row.len() + 16);
    key.extend_from_slice(table.as_bytes());
    key.push(b',');
    key.extend_from_slice(row);
    key.extend_from_slice(b",99999999999999");
    key
}

/// The lowest `hbase:meta` key of `table`, where a reversed lookup stops
/// (inclusive): `<table>,,`, the name of a first region with an empty
/// region id. `hbase:meta` compares its keys part by part (table, start
/// key, region id: `MetaCellComparator`), so a key of another shape, such
/// as `<table>,`, does not sort where bytes would.
pub fn meta_stop_key(table: &str) -> Vec<u8> {
    let mut key = meta_table_name(table).as_bytes().to_vec();
    key.extend_from_slice(b",,");
    key
}

/// The location of `hbase:meta` from the registry's answer (its first,
/// default replica).
pub fn meta_location(reply: &proto::GetMetaRegionLocationsResponse) -> Result<RegionLocation, NativeError> {
    let location = reply
        .meta_locations
        .iter()
        .find(|l| l.region_info.replica_id.unwrap_or(0) == 0)
        .ok_or_else(|| NativeError::InvalidReply {
            reason: "the registry knows no location of hbase:meta".to_string(),
        })?;
    let server = location.server_name.as_ref().ok_or_else(|| NativeError::InvalidReply {
        reason: "hbase:meta is not assigned to a server".to_string(),
    })?;
    let info = &location.region_info;
    Ok(RegionLocation {
        table: META_TABLE.to_string(),
        // hbase:meta's regions keep the old name format: no encoded suffix
        // (`RegionInfo.createRegionName`, `newFormat` false for meta).
        name: Bytes::from(format!("{META_TABLE},,{}", info.region_id)),
        start: info.start_key.clone().unwrap_or_default(),
        end: info.end_key.clone().unwrap_or_default(),
        server: format!("{}:{}", server.host_name, server.port.unwrap_or(16020)),
    })
}

fn meta_cell<'c>(cells: &'c [WireCell], qualifier: &[u8]) -> Option<&'c WireCell> {
    cells
        .iter()
        .find(|c| &c.family[..] == META_FAMILY && &c.qualifier[..] == qualifier)
}

/// The `RegionInfo` of an `hbase:meta` row a lookup found (its cells),
/// checked to be one of `table`'s regions.
pub fn region_info_from_meta(table: &str, cells: &[WireCell]) -> Result<RegionInfo, NativeError> {
    let Some(info) = meta_cell(cells, b"regioninfo") else {
        return Err(NativeError::TableNotFound {
            table: table.to_string(),
        });
    };
    let bytes = info
        .value
        .strip_prefix(b"PBUF")
        .ok_or_else(|| NativeError::InvalidReply {
            reason: "an info:regioninfo cell without the PBUF magic".to_string(),
        })?;
    let region = RegionInfo::decode(bytes).map_err(|source| NativeError::Decode {
        what: "info:regioninfo",
        cause: source,
    })?;
    let (namespace, qualifier) = split_table(table);
    if region.table_name.namespace != namespace.as_bytes() || region.table_name.qualifier != qualifier.as_bytes() {
        return Err(NativeError::TableNotFound {
            table: table.to_string(),
        });
    }
    Ok(region)
}

/// The region of `target` in `table` from the `hbase:meta` row a lookup
/// found (its cells), or why there is none.
pub fn region_from_meta(table: &str, target: Target<'_>, cells: &[WireCell]) -> Result<RegionLocation, NativeError> {
    let no_region = |reason: String| NativeError::NoRegion {
        table: table.to_string(),
        at: target.show(),
        reason,
    };
    let region = region_info_from_meta(table, cells)?;
    let info = meta_cell(cells, b"regioninfo").ok_or_else(|| no_region("no info:regioninfo".to_string()))?;
    let location = RegionLocation {
        table: table.to_string(),
        name: info.row.clone(),
        start: region.start_key.clone().unwrap_or_default(),
        end: region.end_key.clone().unwrap_or_default(),
        server: String::new(),
    };
    if !target.is_in(&location) {
        return Err(no_region(format!(
            "the nearest region ends at {} (a hole in hbase:meta, or a split under way)",
            crate::store::show_row(&location.end)
        )));
    }
    if region.offline.unwrap_or(false) || region.split.unwrap_or(false) {
        return Err(no_region("the region is offline (split or being split)".to_string()));
    }
    let server =
        meta_cell(cells, b"server").ok_or_else(|| no_region("the region is not assigned to a server".to_string()))?;
    let server = std::str::from_utf8(&server.value)
        .map_err(|_| no_region("info:server is not text".to_string()))?
        .to_string();
    Ok(RegionLocation { server, ..location })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::native::proto::{RegionLocation as ProtoLocation, ServerName, TableName};

    fn info_cell(row: &[u8], region: &RegionInfo) -> WireCell {
        let mut value = b"PBUF".to_vec();
        value.extend(region.encode_to_vec());
        cell(row, b"regioninfo", value)
    }

    fn cell(row: &[u8], qualifier: &[u8], value: Vec<u8>) -> WireCell {
        WireCell {
            row: Bytes::copy_from_slice(row),
            family: Bytes::from_static(META_FAMILY),
            qualifier: Bytes::copy_from_slice(qualifier),
            timestamp: 1,
            cell_type: 4,
            value: value.into(),
        }
    }

    fn region(ns: &str, table: &str, start: &str, end: &str) -> RegionInfo {
        RegionInfo {
            region_id: 17,
            table_name: TableName {
                namespace: Bytes::copy_from_slice(ns.as_bytes()),
                qualifier: Bytes::copy_from_slice(table.as_bytes()),
            },
            start_key: Some(Bytes::copy_from_slice(start.as_bytes())),
            end_key: Some(Bytes::copy_from_slice(end.as_bytes())),
            ..Default::default()
        }
    }

    #[test]
    fn meta_keys() {
        assert_eq!(meta_key("t", b"r\x00"), b"t,r\x00,99999999999999");
        assert_eq!(meta_key("default:t", b""), b"t,,99999999999999");
        assert_eq!(meta_key("ns:t", b"r"), b"ns:t,r,99999999999999");
        assert_eq!(meta_stop_key("t"), b"t,,");
        assert_eq!(Target::Last.meta_key("default:t"), b"t\x00");
        assert_eq!(Target::Row(b"r").meta_key("t"), b"t,r,99999999999999");
        assert_eq!(split_table("ns:t"), ("ns", "t"));
        assert_eq!(split_table("t"), ("default", "t"));
    }

    #[test]
    fn a_meta_row_locates_its_region() {
        let name = b"t,m,17.abcdef.";
        let cells = [
            info_cell(name, &region("default", "t", "m", "x")),
            cell(name, b"server", b"127.0.0.1:36821".to_vec()),
        ];
        let location = region_from_meta("t", Target::Row(b"p"), &cells).expect("found");
        assert_eq!(location.name, &name[..]);
        assert_eq!((&location.start[..], &location.end[..]), (&b"m"[..], &b"x"[..]));
        assert_eq!(location.server, "127.0.0.1:36821");
        assert_eq!(location.specifier().value, &name[..]);
        assert!(
            region_from_meta("t", Target::Last, &cells).is_err(),
            "not the last region"
        );
        // A row past the region: a hole.
        let err = region_from_meta("t", Target::Row(b"y"), &cells).expect_err("hole");
        assert!(matches!(err, NativeError::NoRegion { .. }), "{err}");
        // Another table's row (the lookup ran past this table's rows): not found.
        let err = region_from_meta("s", Target::Row(b"p"), &cells).expect_err("other table");
        assert!(
            matches!(err, NativeError::TableNotFound { ref table } if table == "s"),
            "{err}"
        );
        // No row at all.
        let err = region_from_meta("t", Target::Row(b"p"), &[]).expect_err("no row");
        assert!(matches!(err, NativeError::TableNotFound { .. }), "{err}");
        // Unassigned.
        let err = region_from_meta("t", Target::Row(b"p"), &cells[..1]).expect_err("no server");
        assert!(err.to_string().contains("not assigned"), "{err}");
        // Garbage instead of a RegionInfo.
        let err = region_from_meta(
            "t",
            Target::Row(b"p"),
            &[cell(name, b"regioninfo", b"PBUF\xff".to_vec())],
        )
        .expect_err("bad");
        assert!(matches!(err, NativeError::Decode { .. }), "{err}");
    }

    #[test]
    fn meta_is_found_through_the_registry() {
        let reply = proto::GetMetaRegionLocationsResponse {
            meta_locations: vec![ProtoLocation {
                region_info: region("hbase", "meta", "", ""),
                server_name: Some(ServerName {
                    host_name: "h".into(),
                    port: Some(1),
                    start_code: Some(2),
                }),
                seq_num: 0,
            }],
        };
        let meta = meta_location(&reply).expect("located");
        assert_eq!(meta.name, "hbase:meta,,17");
        assert_eq!(meta.server, "h:1");
        let err = meta_location(&proto::GetMetaRegionLocationsResponse::default()).expect_err("none");
        assert!(matches!(err, NativeError::InvalidReply { .. }));
    }
}
