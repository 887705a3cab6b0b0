//! The protobuf messages of HBase's RPC protocol that hmap uses, written by
//! hand with prost's derive (no protoc, no build script).
//!
//! Each message mirrors one of the `.proto` files shipped in
//! `hbase-protocol-shaded-2.6.1.jar` (package `hbase.pb`, proto2): the same
//! field numbers, labels, types and defaults. Fields hmap never sends nor
//! reads are left out; prost skips them when they arrive. The test
//! `proto_matches_hbase` (in `tests.rs` beside this file) checks every
//! field here against the `.proto` files in that jar.
//!
//! proto2 repeated scalars are not packed unless declared so, hence the
//! `packed = "false"` on them (prost packs by default).

// The field names follow the `.proto` files; their meaning is documented there.
#![allow(missing_docs)]

use bytes::Bytes;

// ---------------------------------------------------------------- RPC.proto

/// `RPC.proto`: who the client is.
#[derive(Clone, PartialEq, prost::Message)]
pub struct UserInformation {
    #[prost(string, required, tag = "1")]
    pub effective_user: String,
    #[prost(string, optional, tag = "2")]
    pub real_user: Option<String>,
}

/// `RPC.proto`: sent once, after the preamble, before any call.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ConnectionHeader {
    #[prost(message, optional, tag = "1")]
    pub user_info: Option<UserInformation>,
    #[prost(string, optional, tag = "2")]
    pub service_name: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub cell_block_codec_class: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub cell_block_compressor_class: Option<String>,
    #[prost(message, optional, tag = "5")]
    pub version_info: Option<VersionInfo>,
}

/// `RPC.proto`: the length of the cell block after a message.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CellBlockMeta {
    #[prost(uint32, optional, tag = "1")]
    pub length: Option<u32>,
}

/// `RPC.proto`: a call that failed on the server.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ExceptionResponse {
    #[prost(string, optional, tag = "1")]
    pub exception_class_name: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub stack_trace: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub hostname: Option<String>,
    #[prost(int32, optional, tag = "4")]
    pub port: Option<i32>,
    #[prost(bool, optional, tag = "5")]
    pub do_not_retry: Option<bool>,
    #[prost(bool, optional, tag = "6")]
    pub server_overloaded: Option<bool>,
}

/// `RPC.proto`: heads every call.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RequestHeader {
    #[prost(uint32, optional, tag = "1")]
    pub call_id: Option<u32>,
    #[prost(message, optional, tag = "2")]
    pub trace_info: Option<RPCTInfo>,
    #[prost(string, optional, tag = "3")]
    pub method_name: Option<String>,
    #[prost(bool, optional, tag = "4")]
    pub request_param: Option<bool>,
    #[prost(message, optional, tag = "5")]
    pub cell_block_meta: Option<CellBlockMeta>,
    #[prost(uint32, optional, tag = "6")]
    pub priority: Option<u32>,
    #[prost(uint32, optional, tag = "7")]
    pub timeout: Option<u32>,
    #[prost(message, repeated, tag = "8")]
    pub attribute: Vec<NameBytesPair>,
}

/// `Tracing.proto`: the caller's trace context, as W3C Trace Context
/// headers (`traceparent`, `tracestate`), which HBase 2.5 and later hand
/// to OpenTelemetry's propagator (`RPCTInfoGetter` reads `headers`). The
/// deprecated HTrace ids (fields 1 and 2) are left out. A `BTreeMap`, so
/// that a header encodes the same bytes every time.
#[derive(Clone, PartialEq, prost::Message)]
// The name is HBase's: `proto_check` matches messages by name.
#[allow(clippy::upper_case_acronyms)]
pub struct RPCTInfo {
    #[prost(btree_map = "string, string", tag = "3")]
    pub headers: std::collections::BTreeMap<String, String>,
}

/// `RPC.proto`: heads every reply.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ResponseHeader {
    #[prost(uint32, optional, tag = "1")]
    pub call_id: Option<u32>,
    #[prost(message, optional, tag = "2")]
    pub exception: Option<ExceptionResponse>,
    #[prost(message, optional, tag = "3")]
    pub cell_block_meta: Option<CellBlockMeta>,
}

// -------------------------------------------------------------- HBase.proto

/// `HBase.proto`: a client's or server's version and build (the
/// connection header's `version_info`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct VersionInfo {
    #[prost(string, required, tag = "1")]
    pub version: String,
    #[prost(string, required, tag = "2")]
    pub url: String,
    #[prost(string, required, tag = "3")]
    pub revision: String,
    #[prost(string, required, tag = "4")]
    pub user: String,
    #[prost(string, required, tag = "5")]
    pub date: String,
    #[prost(string, required, tag = "6")]
    pub src_checksum: String,
    #[prost(uint32, optional, tag = "7")]
    pub version_major: Option<u32>,
    #[prost(uint32, optional, tag = "8")]
    pub version_minor: Option<u32>,
}

/// `HBase.proto`: a table's namespace and name.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TableName {
    #[prost(bytes = "bytes", required, tag = "1")]
    pub namespace: Bytes,
    #[prost(bytes = "bytes", required, tag = "2")]
    pub qualifier: Bytes,
}

/// `HBase.proto`: a region as `hbase:meta` describes it.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RegionInfo {
    #[prost(uint64, required, tag = "1")]
    pub region_id: u64,
    #[prost(message, required, tag = "2")]
    pub table_name: TableName,
    #[prost(bytes = "bytes", optional, tag = "3")]
    pub start_key: Option<Bytes>,
    #[prost(bytes = "bytes", optional, tag = "4")]
    pub end_key: Option<Bytes>,
    #[prost(bool, optional, tag = "5")]
    pub offline: Option<bool>,
    #[prost(bool, optional, tag = "6")]
    pub split: Option<bool>,
    #[prost(int32, optional, tag = "7", default = "0")]
    pub replica_id: Option<i32>,
}

/// `HBase.proto`: names the region a call is for.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RegionSpecifier {
    #[prost(enumeration = "region_specifier::RegionSpecifierType", required, tag = "1")]
    pub r#type: i32,
    #[prost(bytes = "bytes", required, tag = "2")]
    pub value: Bytes,
}

/// Nested in [`RegionSpecifier`].
pub mod region_specifier {
    /// `RegionSpecifier.RegionSpecifierType`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum RegionSpecifierType {
        RegionName = 1,
        EncodedRegionName = 2,
    }
}

/// `HBase.proto`: timestamps from `from` (inclusive) to `to` (exclusive).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TimeRange {
    #[prost(uint64, optional, tag = "1")]
    pub from: Option<u64>,
    #[prost(uint64, optional, tag = "2")]
    pub to: Option<u64>,
}

/// `HBase.proto`: comparison operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum CompareType {
    Less = 0,
    LessOrEqual = 1,
    Equal = 2,
    NotEqual = 3,
    GreaterOrEqual = 4,
    Greater = 5,
    NoOp = 6,
}

/// `HBase.proto`: a server: host, port and start code.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ServerName {
    #[prost(string, required, tag = "1")]
    pub host_name: String,
    #[prost(uint32, optional, tag = "2")]
    pub port: Option<u32>,
    #[prost(uint64, optional, tag = "3")]
    pub start_code: Option<u64>,
}

/// `HBase.proto`: a name and bytes (attributes, exceptions in `Multi`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct NameBytesPair {
    #[prost(string, required, tag = "1")]
    pub name: String,
    #[prost(bytes = "bytes", optional, tag = "2")]
    pub value: Option<Bytes>,
}

/// `HBase.proto`: where a region is served.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RegionLocation {
    #[prost(message, required, tag = "1")]
    pub region_info: RegionInfo,
    #[prost(message, optional, tag = "2")]
    pub server_name: Option<ServerName>,
    #[prost(int64, required, tag = "3")]
    pub seq_num: i64,
}

// ------------------------------------------------ Comparator.proto, Filter.proto

/// `Comparator.proto`: a comparator by class name and serialized form.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Comparator {
    #[prost(string, required, tag = "1")]
    pub name: String,
    #[prost(bytes = "bytes", optional, tag = "2")]
    pub serialized_comparator: Option<Bytes>,
}

/// `Comparator.proto`: the bytes a comparator compares with.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ByteArrayComparable {
    #[prost(bytes = "bytes", optional, tag = "1")]
    pub value: Option<Bytes>,
}

/// `Comparator.proto`: compares bytes lexicographically.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BinaryComparator {
    #[prost(message, required, tag = "1")]
    pub comparable: ByteArrayComparable,
}

/// `Filter.proto`: a filter by class name and serialized form.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Filter {
    #[prost(string, required, tag = "1")]
    pub name: String,
    #[prost(bytes = "bytes", optional, tag = "2")]
    pub serialized_filter: Option<Bytes>,
}

// The comparators and filters `filter.rs` encodes, each the serialized form
// its class's `parseFrom` reads (`ProtobufUtil.toComparator`/`toFilter`
// name the class and carry these bytes).

/// `Comparator.proto`: compares with as many leading bytes of the value.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BinaryPrefixComparator {
    #[prost(message, required, tag = "1")]
    pub comparable: ByteArrayComparable,
}

/// `Comparator.proto`: a bitwise test of the value against a mask.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BitComparator {
    #[prost(message, required, tag = "1")]
    pub comparable: ByteArrayComparable,
    #[prost(enumeration = "bit_comparator::BitwiseOp", required, tag = "2")]
    pub bitwise_op: i32,
}

/// `Comparator.proto`: nested in `BitComparator`.
pub mod bit_comparator {
    /// `Comparator.proto`: the bitwise operation.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum BitwiseOp {
        And = 1,
        Or = 2,
        Xor = 3,
    }
}

/// `Comparator.proto`: equal when the value is empty.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NullComparator {}

/// `Comparator.proto`: a regular expression found in the value.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RegexStringComparator {
    #[prost(string, required, tag = "1")]
    pub pattern: String,
    #[prost(int32, required, tag = "2")]
    pub pattern_flags: i32,
    #[prost(string, required, tag = "3")]
    pub charset: String,
    #[prost(string, optional, tag = "4")]
    pub engine: Option<String>,
}

/// `Comparator.proto`: a substring of the value, without case.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SubstringComparator {
    #[prost(string, required, tag = "1")]
    pub substr: String,
}

/// `Filter.proto`: the first `limit` columns of a row.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ColumnCountGetFilter {
    #[prost(int32, required, tag = "1")]
    pub limit: i32,
}

/// `Filter.proto`: `limit` columns from an offset or a qualifier.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ColumnPaginationFilter {
    #[prost(int32, required, tag = "1")]
    pub limit: i32,
    #[prost(int32, optional, tag = "2")]
    pub offset: Option<i32>,
    #[prost(bytes = "bytes", optional, tag = "3")]
    pub column_offset: Option<Bytes>,
}

/// `Filter.proto`: qualifiers starting with a prefix.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ColumnPrefixFilter {
    #[prost(bytes = "bytes", required, tag = "1")]
    pub prefix: Bytes,
}

/// `Filter.proto`: qualifiers in a range.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ColumnRangeFilter {
    #[prost(bytes = "bytes", optional, tag = "1")]
    pub min_column: Option<Bytes>,
    #[prost(bool, optional, tag = "2")]
    pub min_column_inclusive: Option<bool>,
    #[prost(bytes = "bytes", optional, tag = "3")]
    pub max_column: Option<Bytes>,
    #[prost(bool, optional, tag = "4")]
    pub max_column_inclusive: Option<bool>,
}

/// `Filter.proto`: an operator and a comparator, the part every
/// `CompareFilter` shares.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CompareFilter {
    #[prost(enumeration = "CompareType", required, tag = "1")]
    pub compare_op: i32,
    #[prost(message, optional, tag = "2")]
    pub comparator: Option<Comparator>,
}

/// `Filter.proto`: cells with a timestamp of a reference column's.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DependentColumnFilter {
    #[prost(message, required, tag = "1")]
    pub compare_filter: CompareFilter,
    #[prost(bytes = "bytes", optional, tag = "2")]
    pub column_family: Option<Bytes>,
    #[prost(bytes = "bytes", optional, tag = "3")]
    pub column_qualifier: Option<Bytes>,
    #[prost(bool, optional, tag = "4")]
    pub drop_dependent_column: Option<bool>,
}

/// `Filter.proto`: a comparison of the family.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FamilyFilter {
    #[prost(message, required, tag = "1")]
    pub compare_filter: CompareFilter,
}

/// `Filter.proto`: filters combined with AND or OR.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FilterList {
    #[prost(enumeration = "filter_list::Operator", required, tag = "1")]
    pub operator: i32,
    #[prost(message, repeated, tag = "2")]
    pub filters: Vec<Filter>,
}

/// `Filter.proto`: nested in `FilterList`.
pub mod filter_list {
    /// `Filter.proto`: how a list combines its filters.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum Operator {
        MustPassAll = 1,
        MustPassOne = 2,
    }
}

/// `Filter.proto`: the first cell of each row.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FirstKeyOnlyFilter {}

/// `Filter.proto`: rows matching a fixed-and-any pattern.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FuzzyRowFilter {
    #[prost(message, repeated, tag = "1")]
    pub fuzzy_keys_data: Vec<BytesBytesPair>,
    #[prost(bool, optional, tag = "2")]
    pub is_mask_v2: Option<bool>,
}

/// `Filter.proto`: rows up to and including one.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InclusiveStopFilter {
    #[prost(bytes = "bytes", optional, tag = "1")]
    pub stop_row_key: Option<Bytes>,
}

/// `Filter.proto`: cells without their values (or their lengths instead).
#[derive(Clone, PartialEq, prost::Message)]
pub struct KeyOnlyFilter {
    #[prost(bool, required, tag = "1")]
    pub len_as_val: bool,
}

/// `Filter.proto`: qualifiers starting with any of the prefixes.
#[derive(Clone, PartialEq, prost::Message)]
pub struct MultipleColumnPrefixFilter {
    #[prost(bytes = "bytes", repeated, tag = "1")]
    pub sorted_prefixes: Vec<Bytes>,
}

/// `Filter.proto`: at most `page_size` rows per region.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PageFilter {
    #[prost(int64, required, tag = "1")]
    pub page_size: i64,
}

/// `Filter.proto`: rows starting with a prefix.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PrefixFilter {
    #[prost(bytes = "bytes", optional, tag = "1")]
    pub prefix: Option<Bytes>,
}

/// `Filter.proto`: a comparison of the qualifier.
#[derive(Clone, PartialEq, prost::Message)]
pub struct QualifierFilter {
    #[prost(message, required, tag = "1")]
    pub compare_filter: CompareFilter,
}

/// `Filter.proto`: a comparison of the row.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RowFilter {
    #[prost(message, required, tag = "1")]
    pub compare_filter: CompareFilter,
}

/// `Filter.proto`: a `SingleColumnValueFilter` that leaves its column out.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SingleColumnValueExcludeFilter {
    #[prost(message, required, tag = "1")]
    pub single_column_value_filter: SingleColumnValueFilter,
}

/// `Filter.proto`: rows whose column's value passes a comparison.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SingleColumnValueFilter {
    #[prost(bytes = "bytes", optional, tag = "1")]
    pub column_family: Option<Bytes>,
    #[prost(bytes = "bytes", optional, tag = "2")]
    pub column_qualifier: Option<Bytes>,
    #[prost(enumeration = "CompareType", required, tag = "3")]
    pub compare_op: i32,
    #[prost(message, required, tag = "4")]
    pub comparator: Comparator,
    #[prost(bool, optional, tag = "5")]
    pub filter_if_missing: Option<bool>,
    #[prost(bool, optional, tag = "6")]
    pub latest_version_only: Option<bool>,
}

/// `Filter.proto`: rows none of whose cells the inner filter drops.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SkipFilter {
    #[prost(message, required, tag = "1")]
    pub filter: Filter,
}

/// `Filter.proto`: cells with one of these timestamps.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TimestampsFilter {
    #[prost(int64, repeated, packed = "true", tag = "1")]
    pub timestamps: Vec<i64>,
    #[prost(bool, optional, tag = "2")]
    pub can_hint: Option<bool>,
}

/// `Filter.proto`: a comparison of the value.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ValueFilter {
    #[prost(message, required, tag = "1")]
    pub compare_filter: CompareFilter,
}

/// `Filter.proto`: rows until the inner filter first drops one.
#[derive(Clone, PartialEq, prost::Message)]
pub struct WhileMatchFilter {
    #[prost(message, required, tag = "1")]
    pub filter: Filter,
}

/// `Filter.proto`: one range of `MultiRowRangeFilter`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RowRange {
    #[prost(bytes = "bytes", optional, tag = "1")]
    pub start_row: Option<Bytes>,
    #[prost(bool, optional, tag = "2")]
    pub start_row_inclusive: Option<bool>,
    #[prost(bytes = "bytes", optional, tag = "3")]
    pub stop_row: Option<Bytes>,
    #[prost(bool, optional, tag = "4")]
    pub stop_row_inclusive: Option<bool>,
}

/// `Filter.proto`: rows in any of these ranges.
#[derive(Clone, PartialEq, prost::Message)]
pub struct MultiRowRangeFilter {
    #[prost(message, repeated, tag = "1")]
    pub row_range_list: Vec<RowRange>,
}

// --------------------------------------------------------------- Cell.proto

/// `Cell.proto`: the type of a cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum CellType {
    Minimum = 0,
    Put = 4,
    Delete = 8,
    DeleteFamilyVersion = 10,
    DeleteColumn = 12,
    DeleteFamily = 14,
    Maximum = 255,
}

/// `Cell.proto`: a cell carried inside a message (when no cell block is used).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Cell {
    #[prost(bytes = "bytes", optional, tag = "1")]
    pub row: Option<Bytes>,
    #[prost(bytes = "bytes", optional, tag = "2")]
    pub family: Option<Bytes>,
    #[prost(bytes = "bytes", optional, tag = "3")]
    pub qualifier: Option<Bytes>,
    #[prost(uint64, optional, tag = "4")]
    pub timestamp: Option<u64>,
    #[prost(enumeration = "CellType", optional, tag = "5")]
    pub cell_type: Option<i32>,
    #[prost(bytes = "bytes", optional, tag = "6")]
    pub value: Option<Bytes>,
    #[prost(bytes = "bytes", optional, tag = "7")]
    pub tags: Option<Bytes>,
}

// ------------------------------------------------------------- Client.proto

/// `Client.proto`: a family and some of its qualifiers (none: all).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Column {
    #[prost(bytes = "bytes", required, tag = "1")]
    pub family: Bytes,
    #[prost(bytes = "bytes", repeated, tag = "2")]
    pub qualifier: Vec<Bytes>,
}

/// `Client.proto`: read consistency.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum Consistency {
    Strong = 0,
    Timeline = 1,
}

/// `Client.proto`: reads one row.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Get {
    #[prost(bytes = "bytes", required, tag = "1")]
    pub row: Bytes,
    #[prost(message, repeated, tag = "2")]
    pub column: Vec<Column>,
    #[prost(message, repeated, tag = "3")]
    pub attribute: Vec<NameBytesPair>,
    #[prost(message, optional, tag = "4")]
    pub filter: Option<Filter>,
    #[prost(message, optional, tag = "5")]
    pub time_range: Option<TimeRange>,
    #[prost(uint32, optional, tag = "6", default = "1")]
    pub max_versions: Option<u32>,
    #[prost(bool, optional, tag = "7", default = "true")]
    pub cache_blocks: Option<bool>,
    #[prost(uint32, optional, tag = "8")]
    pub store_limit: Option<u32>,
    #[prost(uint32, optional, tag = "9")]
    pub store_offset: Option<u32>,
    #[prost(bool, optional, tag = "10", default = "false")]
    pub existence_only: Option<bool>,
    #[prost(bool, optional, tag = "11", default = "false")]
    pub closest_row_before: Option<bool>,
    #[prost(enumeration = "Consistency", optional, tag = "12", default = "Strong")]
    pub consistency: Option<i32>,
}

/// `Client.proto`: the cells of one row. With a cell block, the cells follow
/// the message and `associated_cell_count` says how many are this row's.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Result {
    #[prost(message, repeated, tag = "1")]
    pub cell: Vec<Cell>,
    #[prost(int32, optional, tag = "2")]
    pub associated_cell_count: Option<i32>,
    #[prost(bool, optional, tag = "3")]
    pub exists: Option<bool>,
    #[prost(bool, optional, tag = "4", default = "false")]
    pub stale: Option<bool>,
    #[prost(bool, optional, tag = "5", default = "false")]
    pub partial: Option<bool>,
}

/// `Client.proto`: `ClientService.Get`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetRequest {
    #[prost(message, required, tag = "1")]
    pub region: RegionSpecifier,
    #[prost(message, required, tag = "2")]
    pub get: Get,
}

/// `Client.proto`: the reply to `ClientService.Get`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetResponse {
    #[prost(message, optional, tag = "1")]
    pub result: Option<Result>,
}

/// `Client.proto`: the check of a check-and-mutate.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Condition {
    #[prost(bytes = "bytes", required, tag = "1")]
    pub row: Bytes,
    #[prost(bytes = "bytes", optional, tag = "2")]
    pub family: Option<Bytes>,
    #[prost(bytes = "bytes", optional, tag = "3")]
    pub qualifier: Option<Bytes>,
    #[prost(enumeration = "CompareType", optional, tag = "4")]
    pub compare_type: Option<i32>,
    #[prost(message, optional, tag = "5")]
    pub comparator: Option<Comparator>,
    #[prost(message, optional, tag = "6")]
    pub time_range: Option<TimeRange>,
    #[prost(message, optional, tag = "7")]
    pub filter: Option<Filter>,
}

/// `Client.proto`: a put, delete, increment or append of one row.
#[derive(Clone, PartialEq, prost::Message)]
pub struct MutationProto {
    #[prost(bytes = "bytes", optional, tag = "1")]
    pub row: Option<Bytes>,
    #[prost(enumeration = "mutation_proto::MutationType", optional, tag = "2")]
    pub mutate_type: Option<i32>,
    #[prost(message, repeated, tag = "3")]
    pub column_value: Vec<mutation_proto::ColumnValue>,
    #[prost(uint64, optional, tag = "4")]
    pub timestamp: Option<u64>,
    #[prost(message, repeated, tag = "5")]
    pub attribute: Vec<NameBytesPair>,
    #[prost(
        enumeration = "mutation_proto::Durability",
        optional,
        tag = "6",
        default = "UseDefault"
    )]
    pub durability: Option<i32>,
    #[prost(message, optional, tag = "7")]
    pub time_range: Option<TimeRange>,
    #[prost(int32, optional, tag = "8")]
    pub associated_cell_count: Option<i32>,
    #[prost(uint64, optional, tag = "9")]
    pub nonce: Option<u64>,
}

/// Nested in [`MutationProto`].
pub mod mutation_proto {
    use bytes::Bytes;

    /// `MutationProto.Durability`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum Durability {
        UseDefault = 0,
        SkipWal = 1,
        AsyncWal = 2,
        SyncWal = 3,
        FsyncWal = 4,
    }

    /// `MutationProto.MutationType`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum MutationType {
        Append = 0,
        Increment = 1,
        Put = 2,
        Delete = 3,
    }

    /// `MutationProto.DeleteType`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum DeleteType {
        DeleteOneVersion = 0,
        DeleteMultipleVersions = 1,
        DeleteFamily = 2,
        DeleteFamilyVersion = 3,
    }

    /// `MutationProto.ColumnValue`: the changes to one family.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ColumnValue {
        #[prost(bytes = "bytes", required, tag = "1")]
        pub family: Bytes,
        #[prost(message, repeated, tag = "2")]
        pub qualifier_value: Vec<column_value::QualifierValue>,
    }

    /// Nested in [`ColumnValue`].
    pub mod column_value {
        use bytes::Bytes;

        /// `MutationProto.ColumnValue.QualifierValue`: one cell's change.
        #[derive(Clone, PartialEq, prost::Message)]
        pub struct QualifierValue {
            #[prost(bytes = "bytes", optional, tag = "1")]
            pub qualifier: Option<Bytes>,
            #[prost(bytes = "bytes", optional, tag = "2")]
            pub value: Option<Bytes>,
            #[prost(uint64, optional, tag = "3")]
            pub timestamp: Option<u64>,
            #[prost(enumeration = "super::DeleteType", optional, tag = "4")]
            pub delete_type: Option<i32>,
            #[prost(bytes = "bytes", optional, tag = "5")]
            pub tags: Option<Bytes>,
        }
    }
}

/// `Client.proto`: `ClientService.Mutate`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct MutateRequest {
    #[prost(message, required, tag = "1")]
    pub region: RegionSpecifier,
    #[prost(message, required, tag = "2")]
    pub mutation: MutationProto,
    #[prost(message, optional, tag = "3")]
    pub condition: Option<Condition>,
    #[prost(uint64, optional, tag = "4")]
    pub nonce_group: Option<u64>,
}

/// `Client.proto`: the reply to `ClientService.Mutate`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct MutateResponse {
    #[prost(message, optional, tag = "1")]
    pub result: Option<Result>,
    #[prost(bool, optional, tag = "2")]
    pub processed: Option<bool>,
}

/// `Client.proto`: what a scanner reads.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Scan {
    #[prost(message, repeated, tag = "1")]
    pub column: Vec<Column>,
    #[prost(message, repeated, tag = "2")]
    pub attribute: Vec<NameBytesPair>,
    #[prost(bytes = "bytes", optional, tag = "3")]
    pub start_row: Option<Bytes>,
    #[prost(bytes = "bytes", optional, tag = "4")]
    pub stop_row: Option<Bytes>,
    #[prost(message, optional, tag = "5")]
    pub filter: Option<Filter>,
    #[prost(message, optional, tag = "6")]
    pub time_range: Option<TimeRange>,
    #[prost(uint32, optional, tag = "7", default = "1")]
    pub max_versions: Option<u32>,
    #[prost(bool, optional, tag = "8", default = "true")]
    pub cache_blocks: Option<bool>,
    #[prost(uint32, optional, tag = "9")]
    pub batch_size: Option<u32>,
    #[prost(uint64, optional, tag = "10")]
    pub max_result_size: Option<u64>,
    #[prost(uint32, optional, tag = "11")]
    pub store_limit: Option<u32>,
    #[prost(uint32, optional, tag = "12")]
    pub store_offset: Option<u32>,
    #[prost(bool, optional, tag = "15", default = "false")]
    pub reversed: Option<bool>,
    #[prost(enumeration = "Consistency", optional, tag = "16", default = "Strong")]
    pub consistency: Option<i32>,
    #[prost(uint32, optional, tag = "17")]
    pub caching: Option<u32>,
    #[prost(bool, optional, tag = "18")]
    pub allow_partial_results: Option<bool>,
    #[prost(uint64, optional, tag = "20", default = "0")]
    pub mvcc_read_point: Option<u64>,
    #[prost(bool, optional, tag = "21", default = "true")]
    pub include_start_row: Option<bool>,
    #[prost(bool, optional, tag = "22", default = "false")]
    pub include_stop_row: Option<bool>,
    #[prost(enumeration = "scan::ReadType", optional, tag = "23", default = "Default")]
    pub read_type: Option<i32>,
    #[prost(bool, optional, tag = "24", default = "false")]
    pub need_cursor_result: Option<bool>,
}

/// Nested in [`Scan`].
pub mod scan {
    /// `Scan.ReadType`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum ReadType {
        Default = 0,
        Stream = 1,
        Pread = 2,
    }
}

/// `Client.proto`: `ClientService.Scan`: opens, continues or closes a scanner.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ScanRequest {
    #[prost(message, optional, tag = "1")]
    pub region: Option<RegionSpecifier>,
    #[prost(message, optional, tag = "2")]
    pub scan: Option<Scan>,
    #[prost(uint64, optional, tag = "3")]
    pub scanner_id: Option<u64>,
    #[prost(uint32, optional, tag = "4")]
    pub number_of_rows: Option<u32>,
    #[prost(bool, optional, tag = "5")]
    pub close_scanner: Option<bool>,
    #[prost(uint64, optional, tag = "6")]
    pub next_call_seq: Option<u64>,
    #[prost(bool, optional, tag = "7")]
    pub client_handles_partials: Option<bool>,
    #[prost(bool, optional, tag = "8")]
    pub client_handles_heartbeats: Option<bool>,
    #[prost(bool, optional, tag = "9")]
    pub track_scan_metrics: Option<bool>,
    #[prost(bool, optional, tag = "10", default = "false")]
    pub renew: Option<bool>,
    #[prost(uint32, optional, tag = "11", default = "0")]
    pub limit_of_rows: Option<u32>,
}

/// `Client.proto`: where a scan has got to.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Cursor {
    #[prost(bytes = "bytes", optional, tag = "1")]
    pub row: Option<Bytes>,
}

/// `Client.proto`: the reply to `ClientService.Scan`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ScanResponse {
    #[prost(uint32, repeated, packed = "false", tag = "1")]
    pub cells_per_result: Vec<u32>,
    #[prost(uint64, optional, tag = "2")]
    pub scanner_id: Option<u64>,
    #[prost(bool, optional, tag = "3")]
    pub more_results: Option<bool>,
    #[prost(uint32, optional, tag = "4")]
    pub ttl: Option<u32>,
    #[prost(message, repeated, tag = "5")]
    pub results: Vec<Result>,
    #[prost(bool, optional, tag = "6")]
    pub stale: Option<bool>,
    #[prost(bool, repeated, packed = "false", tag = "7")]
    pub partial_flag_per_result: Vec<bool>,
    #[prost(bool, optional, tag = "8")]
    pub more_results_in_region: Option<bool>,
    #[prost(bool, optional, tag = "9")]
    pub heartbeat_message: Option<bool>,
    #[prost(uint64, optional, tag = "11", default = "0")]
    pub mvcc_read_point: Option<u64>,
    #[prost(message, optional, tag = "12")]
    pub cursor: Option<Cursor>,
}

/// `Client.proto`: one action of a `Multi`: a mutation or a get.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Action {
    #[prost(uint32, optional, tag = "1")]
    pub index: Option<u32>,
    #[prost(message, optional, tag = "2")]
    pub mutation: Option<MutationProto>,
    #[prost(message, optional, tag = "3")]
    pub get: Option<Get>,
}

/// `Client.proto`: the actions of a `Multi` on one region.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RegionAction {
    #[prost(message, required, tag = "1")]
    pub region: RegionSpecifier,
    #[prost(bool, optional, tag = "2")]
    pub atomic: Option<bool>,
    #[prost(message, repeated, tag = "3")]
    pub action: Vec<Action>,
    #[prost(message, optional, tag = "4")]
    pub condition: Option<Condition>,
}

/// `Client.proto`: an action's result, or its exception.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ResultOrException {
    #[prost(uint32, optional, tag = "1")]
    pub index: Option<u32>,
    #[prost(message, optional, tag = "2")]
    pub result: Option<Result>,
    #[prost(message, optional, tag = "3")]
    pub exception: Option<NameBytesPair>,
}

/// `Client.proto`: the results of one [`RegionAction`], or the exception
/// that failed it whole.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RegionActionResult {
    #[prost(message, repeated, tag = "1")]
    pub result_or_exception: Vec<ResultOrException>,
    #[prost(message, optional, tag = "2")]
    pub exception: Option<NameBytesPair>,
    #[prost(bool, optional, tag = "3")]
    pub processed: Option<bool>,
}

/// `Client.proto`: `ClientService.Multi`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct MultiRequest {
    #[prost(message, repeated, tag = "1")]
    pub region_action: Vec<RegionAction>,
    #[prost(uint64, optional, tag = "2")]
    pub nonce_group: Option<u64>,
}

/// `Client.proto`: the reply to `ClientService.Multi`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct MultiResponse {
    #[prost(message, repeated, tag = "1")]
    pub region_action_result: Vec<RegionActionResult>,
}

// ----------------------------------------------------------- Registry.proto

/// `Registry.proto`: `ClientMetaService.GetClusterId`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetClusterIdRequest {}

/// `Registry.proto`: the reply to `GetClusterId`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetClusterIdResponse {
    #[prost(string, optional, tag = "1")]
    pub cluster_id: Option<String>,
}

/// `Registry.proto`: `ClientMetaService.GetActiveMaster`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetActiveMasterRequest {}

/// `Registry.proto`: the reply to `GetActiveMaster`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetActiveMasterResponse {
    #[prost(message, optional, tag = "1")]
    pub server_name: Option<ServerName>,
}

/// `Registry.proto`: `ClientMetaService.GetMetaRegionLocations`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetMetaRegionLocationsRequest {}

/// `Registry.proto`: the reply to `GetMetaRegionLocations`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetMetaRegionLocationsResponse {
    #[prost(message, repeated, tag = "1")]
    pub meta_locations: Vec<RegionLocation>,
}

/// `Registry.proto`: `ClientMetaService.GetBootstrapNodes`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetBootstrapNodesRequest {}

/// `Registry.proto`: the reply to `GetBootstrapNodes`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetBootstrapNodesResponse {
    #[prost(message, repeated, tag = "1")]
    pub server_name: Vec<ServerName>,
}

// ------------------------------------------------ HBase.proto: descriptors

/// `HBase.proto`: a pair of byte strings (a descriptor's attributes).
#[derive(Clone, PartialEq, prost::Message)]
pub struct BytesBytesPair {
    #[prost(bytes = "bytes", required, tag = "1")]
    pub first: Bytes,
    #[prost(bytes = "bytes", required, tag = "2")]
    pub second: Bytes,
}

/// `HBase.proto`: a pair of strings (a descriptor's configuration).
#[derive(Clone, PartialEq, prost::Message)]
pub struct NameStringPair {
    #[prost(string, required, tag = "1")]
    pub name: String,
    #[prost(string, required, tag = "2")]
    pub value: String,
}

/// `HBase.proto`: a table's descriptor: name, attributes, families.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TableSchema {
    #[prost(message, optional, tag = "1")]
    pub table_name: Option<TableName>,
    #[prost(message, repeated, tag = "2")]
    pub attributes: Vec<BytesBytesPair>,
    #[prost(message, repeated, tag = "3")]
    pub column_families: Vec<ColumnFamilySchema>,
    #[prost(message, repeated, tag = "4")]
    pub configuration: Vec<NameStringPair>,
}

/// `HBase.proto`: a column family's descriptor; its options are attributes
/// (`VERSIONS`, `TTL`, ...).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ColumnFamilySchema {
    #[prost(bytes = "bytes", required, tag = "1")]
    pub name: Bytes,
    #[prost(message, repeated, tag = "2")]
    pub attributes: Vec<BytesBytesPair>,
    #[prost(message, repeated, tag = "3")]
    pub configuration: Vec<NameStringPair>,
}

// ----------------------------------------------------- ErrorHandling.proto

/// `ErrorHandling.proto`: a Java exception, as a procedure's failure.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GenericExceptionMessage {
    #[prost(string, optional, tag = "1")]
    pub class_name: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub message: Option<String>,
    #[prost(bytes = "bytes", optional, tag = "3")]
    pub error_info: Option<Bytes>,
}

/// `ErrorHandling.proto`: an exception and where it came from.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ForeignExceptionMessage {
    #[prost(string, optional, tag = "1")]
    pub source: Option<String>,
    #[prost(message, optional, tag = "2")]
    pub generic_exception: Option<GenericExceptionMessage>,
}

// ------------------------------------------------------------ Master.proto
//
// The nonces let the master recognise a request sent twice (a retry after
// a broken connection) and answer with the first one's procedure.

/// `Master.proto`: `MasterService.CreateTable`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CreateTableRequest {
    #[prost(message, required, tag = "1")]
    pub table_schema: TableSchema,
    #[prost(bytes = "bytes", repeated, tag = "2")]
    pub split_keys: Vec<Bytes>,
    #[prost(uint64, optional, tag = "3", default = "0")]
    pub nonce_group: Option<u64>,
    #[prost(uint64, optional, tag = "4", default = "0")]
    pub nonce: Option<u64>,
}

/// `Master.proto`: the reply to `CreateTable`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CreateTableResponse {
    #[prost(uint64, optional, tag = "1")]
    pub proc_id: Option<u64>,
}

/// `Master.proto`: `MasterService.DeleteTable`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DeleteTableRequest {
    #[prost(message, required, tag = "1")]
    pub table_name: TableName,
    #[prost(uint64, optional, tag = "2", default = "0")]
    pub nonce_group: Option<u64>,
    #[prost(uint64, optional, tag = "3", default = "0")]
    pub nonce: Option<u64>,
}

/// `Master.proto`: the reply to `DeleteTable`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DeleteTableResponse {
    #[prost(uint64, optional, tag = "1")]
    pub proc_id: Option<u64>,
}

/// `Master.proto`: `MasterService.DisableTable`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DisableTableRequest {
    #[prost(message, required, tag = "1")]
    pub table_name: TableName,
    #[prost(uint64, optional, tag = "2", default = "0")]
    pub nonce_group: Option<u64>,
    #[prost(uint64, optional, tag = "3", default = "0")]
    pub nonce: Option<u64>,
}

/// `Master.proto`: the reply to `DisableTable`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DisableTableResponse {
    #[prost(uint64, optional, tag = "1")]
    pub proc_id: Option<u64>,
}

/// `Master.proto`: `MasterService.truncateTable` (the method's name starts
/// in lower case).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TruncateTableRequest {
    #[prost(message, required, tag = "1")]
    pub table_name: TableName,
    #[prost(bool, optional, tag = "2", default = "false")]
    pub preserve_splits: Option<bool>,
    #[prost(uint64, optional, tag = "3", default = "0")]
    pub nonce_group: Option<u64>,
    #[prost(uint64, optional, tag = "4", default = "0")]
    pub nonce: Option<u64>,
}

/// `Master.proto`: the reply to `truncateTable`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TruncateTableResponse {
    #[prost(uint64, optional, tag = "1")]
    pub proc_id: Option<u64>,
}

/// `Master.proto`: `MasterService.AddColumn`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AddColumnRequest {
    #[prost(message, required, tag = "1")]
    pub table_name: TableName,
    #[prost(message, required, tag = "2")]
    pub column_families: ColumnFamilySchema,
    #[prost(uint64, optional, tag = "3", default = "0")]
    pub nonce_group: Option<u64>,
    #[prost(uint64, optional, tag = "4", default = "0")]
    pub nonce: Option<u64>,
}

/// `Master.proto`: the reply to `AddColumn`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AddColumnResponse {
    #[prost(uint64, optional, tag = "1")]
    pub proc_id: Option<u64>,
}

/// `Master.proto`: `MasterService.ModifyColumn`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ModifyColumnRequest {
    #[prost(message, required, tag = "1")]
    pub table_name: TableName,
    #[prost(message, required, tag = "2")]
    pub column_families: ColumnFamilySchema,
    #[prost(uint64, optional, tag = "3", default = "0")]
    pub nonce_group: Option<u64>,
    #[prost(uint64, optional, tag = "4", default = "0")]
    pub nonce: Option<u64>,
}

/// `Master.proto`: the reply to `ModifyColumn`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ModifyColumnResponse {
    #[prost(uint64, optional, tag = "1")]
    pub proc_id: Option<u64>,
}

/// `Master.proto`: `MasterService.DeleteColumn`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DeleteColumnRequest {
    #[prost(message, required, tag = "1")]
    pub table_name: TableName,
    #[prost(bytes = "bytes", required, tag = "2")]
    pub column_name: Bytes,
    #[prost(uint64, optional, tag = "3", default = "0")]
    pub nonce_group: Option<u64>,
    #[prost(uint64, optional, tag = "4", default = "0")]
    pub nonce: Option<u64>,
}

/// `Master.proto`: the reply to `DeleteColumn`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DeleteColumnResponse {
    #[prost(uint64, optional, tag = "1")]
    pub proc_id: Option<u64>,
}

/// `Master.proto`: `MasterService.GetTableDescriptors`; only the tables
/// named, or (none named) those matching the pattern.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetTableDescriptorsRequest {
    #[prost(message, repeated, tag = "1")]
    pub table_names: Vec<TableName>,
    #[prost(string, optional, tag = "2")]
    pub regex: Option<String>,
    #[prost(bool, optional, tag = "3", default = "false")]
    pub include_sys_tables: Option<bool>,
    #[prost(string, optional, tag = "4")]
    pub namespace: Option<String>,
}

/// `Master.proto`: the reply to `GetTableDescriptors`: the tables that
/// exist.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetTableDescriptorsResponse {
    #[prost(message, repeated, tag = "1")]
    pub table_schema: Vec<TableSchema>,
}

/// `Master.proto`: `MasterService.GetTableNames`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetTableNamesRequest {
    #[prost(string, optional, tag = "1")]
    pub regex: Option<String>,
    #[prost(bool, optional, tag = "2", default = "false")]
    pub include_sys_tables: Option<bool>,
    #[prost(string, optional, tag = "3")]
    pub namespace: Option<String>,
}

/// `Master.proto`: the reply to `GetTableNames`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetTableNamesResponse {
    #[prost(message, repeated, tag = "1")]
    pub table_names: Vec<TableName>,
}

/// `Master.proto`: `MasterService.getProcedureResult` (lower case, as
/// declared).
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetProcedureResultRequest {
    #[prost(uint64, required, tag = "1")]
    pub proc_id: u64,
}

/// `Master.proto`: how a procedure stands.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetProcedureResultResponse {
    #[prost(enumeration = "get_procedure_result_response::State", required, tag = "1")]
    pub state: i32,
    #[prost(uint64, optional, tag = "2")]
    pub submitted_time: Option<u64>,
    #[prost(uint64, optional, tag = "3")]
    pub last_update: Option<u64>,
    #[prost(bytes = "bytes", optional, tag = "4")]
    pub result: Option<Bytes>,
    #[prost(message, optional, tag = "5")]
    pub exception: Option<ForeignExceptionMessage>,
}

/// Nested in [`GetProcedureResultResponse`].
pub mod get_procedure_result_response {
    /// `GetProcedureResultResponse.State`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum State {
        NotFound = 0,
        Running = 1,
        Finished = 2,
    }
}

/// `Master.proto`: `MasterService.MoveRegion`. The master reads `region`
/// as an encoded region name; without `dest_server_name` it picks another
/// server itself.
#[derive(Clone, PartialEq, prost::Message)]
pub struct MoveRegionRequest {
    #[prost(message, required, tag = "1")]
    pub region: RegionSpecifier,
    #[prost(message, optional, tag = "2")]
    pub dest_server_name: Option<ServerName>,
}

/// `Master.proto`: the reply to `MoveRegion` (empty: the master answers
/// once the region is open on its new server).
#[derive(Clone, PartialEq, prost::Message)]
pub struct MoveRegionResponse {}

/// `Master.proto`: `MasterService.SplitRegion`. Without `split_row` the
/// region server picks the split point (the midpoint of its largest store).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SplitTableRegionRequest {
    #[prost(message, required, tag = "1")]
    pub region_info: RegionInfo,
    #[prost(bytes = "bytes", optional, tag = "2")]
    pub split_row: Option<Bytes>,
    #[prost(uint64, optional, tag = "3", default = "0")]
    pub nonce_group: Option<u64>,
    #[prost(uint64, optional, tag = "4", default = "0")]
    pub nonce: Option<u64>,
}

/// `Master.proto`: the reply to `SplitRegion`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SplitTableRegionResponse {
    #[prost(uint64, optional, tag = "1")]
    pub proc_id: Option<u64>,
}

// ------------------------------------- ZooKeeper.proto, ClusterId.proto
// What HBase writes in its znodes, after the `ZKMetadata` prefix and the
// `PBUF` magic (see `zookeeper.rs`).

/// `ZooKeeper.proto`: the content of the `meta-region-server` znode.
#[derive(Clone, PartialEq, prost::Message)]
pub struct MetaRegionServer {
    #[prost(message, required, tag = "1")]
    pub server: ServerName,
    #[prost(uint32, optional, tag = "2")]
    pub rpc_version: Option<u32>,
    #[prost(enumeration = "region_state::State", optional, tag = "3")]
    pub state: Option<i32>,
}

/// `ZooKeeper.proto`: the content of the `master` znode.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Master {
    #[prost(message, required, tag = "1")]
    pub master: ServerName,
    #[prost(uint32, optional, tag = "2")]
    pub rpc_version: Option<u32>,
    #[prost(uint32, optional, tag = "3")]
    pub info_port: Option<u32>,
}

/// `ClusterId.proto`: the content of the `hbaseid` znode.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ClusterId {
    #[prost(string, required, tag = "1")]
    pub cluster_id: String,
}

/// `ClusterStatus.proto`: `RegionState`'s nested enum (the message itself
/// is not mirrored).
pub mod region_state {
    /// `RegionState.State`: where a region is in its life (`MetaRegionServer.state`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum State {
        Offline = 0,
        PendingOpen = 1,
        Opening = 2,
        Open = 3,
        PendingClose = 4,
        Closing = 5,
        Closed = 6,
        Splitting = 7,
        Split = 8,
        FailedOpen = 9,
        FailedClose = 10,
        Merging = 11,
        Merged = 12,
        SplittingNew = 13,
        MergingNew = 14,
        AbnormallyClosed = 15,
    }
}
