//! Checks the Bigtable messages BigtableStore sends and reads against
//! Google's own `.proto` files, field by field: every field of every
//! message (and every member of a `oneof`) that the `googleapis-tonic`
//! crates generate must have the number the `.proto` gives it.
//!
//! The `.proto` files come from Google's Java artifacts on Maven Central
//! (`com.google.api.grpc:proto-google-cloud-bigtable-v2` and `-admin-v2`,
//! which carry them beside the classes), fetched by `.ci/run` into the
//! local Maven repository. The Rust side is read from the generated source
//! of the crates in cargo's registry (their `#[prost(...)]` attributes), so
//! the check sees exactly what prost encodes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Google's artifacts carrying the `.proto` files, and their version.
const PROTO_JARS: [&str; 2] = ["proto-google-cloud-bigtable-v2", "proto-google-cloud-bigtable-admin-v2"];
const PROTO_VERSION: &str = "2.50.0";

/// A message's fields: normalized name to number.
type Fields = BTreeMap<String, u32>;

/// Lower case without underscores or raw-identifier prefixes, so that a
/// proto's `bytes_type` and prost's `BytesType` or `r#type` compare equal.
fn normalized(name: &str) -> String {
    name.trim_start_matches("r#").replace('_', "").to_lowercase()
}

/// The tokens of a `.proto` file, comments and strings dropped.
fn proto_tokens(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("//") {
            rest = after.find('\n').map_or("", |i| &after[i..]);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |i| &after[i + 2..]);
        } else if let Some(after) = rest.strip_prefix('"') {
            rest = after.find('"').map_or("", |i| &after[i + 1..]);
            tokens.push("\"\"".to_string());
        } else if c.is_whitespace() {
            rest = &rest[c.len_utf8()..];
        } else if "{}[]();=<>,".contains(c) {
            tokens.push(c.to_string());
            rest = &rest[1..];
        } else {
            let end = rest
                .find(|c: char| c.is_whitespace() || "{}[]();=<>,\"/".contains(c))
                .unwrap_or(rest.len())
                .max(1);
            tokens.push(rest[..end].to_string());
            rest = &rest[end..];
        }
    }
    tokens
}

/// The messages of a `.proto` file (proto3), by normalized dotted path
/// (`readrowsresponse.cellchunk`), with their fields and oneof members.
fn proto_messages(text: &str, into: &mut BTreeMap<String, Fields>) {
    let tokens = proto_tokens(text);
    let mut at = 0;
    while at < tokens.len() {
        match tokens[at].as_str() {
            "message" => at = proto_message(&tokens, at, "", into),
            "{" => at = skip_block(&tokens, at),
            _ => at += 1,
        }
    }
}

/// Skips the block opening at `tokens[at]` (`{`); the index after it.
fn skip_block(tokens: &[String], mut at: usize) -> usize {
    let mut depth = 0;
    while at < tokens.len() {
        match tokens[at].as_str() {
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if depth == 0 {
                    return at + 1;
                }
            }
            _ => {}
        }
        at += 1;
    }
    at
}

/// Reads the message at `tokens[at]` (`message Name {`); the index after it.
fn proto_message(tokens: &[String], at: usize, scope: &str, into: &mut BTreeMap<String, Fields>) -> usize {
    let name = format!("{scope}{}", normalized(&tokens[at + 1]));
    let mut fields = Fields::new();
    let mut at = at + 3;
    // Inside a oneof's braces, fields belong to the message.
    let mut oneof_depth = 0;
    while at < tokens.len() {
        match tokens[at].as_str() {
            "}" if oneof_depth > 0 => {
                oneof_depth -= 1;
                at += 1;
            }
            "}" => break,
            "message" => at = proto_message(tokens, at, &format!("{name}."), into),
            "enum" => at = skip_block(tokens, at + 2),
            "oneof" => {
                oneof_depth += 1;
                at += 3;
            }
            "option" | "reserved" | "extensions" => {
                while tokens[at] != ";" {
                    at += 1;
                }
                at += 1;
            }
            "map" => {
                while tokens[at] != ">" {
                    at += 1;
                }
                at = proto_field(tokens, at + 1, &mut fields);
            }
            "repeated" | "optional" => at = proto_field(tokens, at + 2, &mut fields),
            _ => at = proto_field(tokens, at + 1, &mut fields),
        }
    }
    into.insert(name, fields);
    at + 1
}

/// Reads `name = N [options];` at `tokens[at]`; the index after it.
fn proto_field(tokens: &[String], mut at: usize, fields: &mut Fields) -> usize {
    let name = normalized(&tokens[at]);
    assert_eq!(tokens[at + 1], "=", "a field `{name}` without its number");
    let number = tokens[at + 2]
        .parse()
        .unwrap_or_else(|_| panic!("field `{name}`: number {}", tokens[at + 2]));
    fields.insert(name, number);
    at += 3;
    while tokens[at] != ";" {
        at += 1;
    }
    at + 1
}

/// Every field prost generated in `source` (a `google.*.rs` file of the
/// googleapis-tonic crates): (normalized message path, normalized field
/// name, number). A struct's fields belong to the struct; a oneof enum's
/// variants, to the message whose module holds the enum.
fn rust_fields(source: &str) -> Vec<(String, String, u32)> {
    // Open scopes: (kind, normalized name, the brace depth inside it).
    let mut scopes: Vec<(&str, String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut attribute = String::new();
    let mut tag: Option<u32> = None;
    let mut out = Vec::new();
    for line in source.lines() {
        let line = line.trim();
        if line.starts_with("//") {
            continue;
        }
        if !attribute.is_empty() || line.starts_with("#[prost(") {
            attribute.push_str(line);
            if attribute.ends_with(")]") {
                tag = attribute
                    .split("tag = \"")
                    .nth(1)
                    .and_then(|rest| rest.split('"').next())
                    .and_then(|n| n.parse().ok());
                attribute.clear();
            }
            continue;
        }
        if let Some(number) = tag.take() {
            let path = |skip_last: bool| {
                let end = scopes.len() - usize::from(skip_last);
                scopes[..end]
                    .iter()
                    .map(|(_, n, _)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(".")
            };
            match scopes.last() {
                Some(("struct", _, _)) => {
                    let name = line
                        .trim_start_matches("pub ")
                        .split(':')
                        .next()
                        .expect("a field's name");
                    out.push((path(false), normalized(name), number));
                }
                Some(("enum", _, _)) => {
                    let name = line.split('(').next().expect("a variant's name");
                    out.push((path(true), normalized(name), number));
                }
                other => panic!("a prost attribute outside a struct or enum: {other:?}, before {line}"),
            }
        }
        for (kind, prefix) in [("mod", "pub mod "), ("struct", "pub struct "), ("enum", "pub enum ")] {
            if let Some(rest) = line.strip_prefix(prefix)
                && line.ends_with('{')
            {
                let name = rest.trim_end_matches('{').trim();
                scopes.push((kind, normalized(name), depth + 1));
            }
        }
        depth += line.matches('{').count();
        depth -= line.matches('}').count().min(depth);
        while scopes.last().is_some_and(|(_, _, inside)| depth < *inside) {
            scopes.pop();
        }
    }
    out
}

/// The `.proto` files of `artifact`'s jar in the local Maven repository.
fn protos_of(artifact: &str) -> Vec<String> {
    let home = std::env::var("HOME").expect("HOME");
    let jar = Path::new(&home).join(format!(
        ".m2/repository/com/google/api/grpc/{artifact}/{PROTO_VERSION}/{artifact}-{PROTO_VERSION}.jar"
    ));
    assert!(
        jar.exists(),
        "{} is missing: mvn -q dependency:get -Dartifact=com.google.api.grpc:{artifact}:{PROTO_VERSION} fetches it",
        jar.display()
    );
    let run = |args: &[&str]| {
        let out = std::process::Command::new("unzip")
            .args(args)
            .arg(&jar)
            .output()
            .expect("run unzip (needed to read the jar)");
        assert!(out.status.success(), "unzip {args:?} {}: {out:?}", jar.display());
        String::from_utf8(out.stdout).expect("UTF-8")
    };
    let listing = run(&["-Z1"]);
    listing
        .lines()
        .filter(|f| f.ends_with(".proto"))
        .map(|file| {
            let out = std::process::Command::new("unzip")
                .arg("-p")
                .arg(&jar)
                .arg(file)
                .output()
                .expect("unzip -p");
            String::from_utf8(out.stdout).expect("UTF-8 .proto")
        })
        .collect()
}

/// The generated source `file` of the registry's copy of `krate` at the
/// version Cargo.lock locks.
fn generated(krate: &str, file: &str) -> String {
    let lock =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock")).expect("Cargo.lock");
    let version = lock
        .split("[[package]]")
        .find(|p| p.contains(&format!("name = \"{krate}\"\n")))
        .and_then(|p| p.split("version = \"").nth(1))
        .and_then(|v| v.split('"').next())
        .unwrap_or_else(|| panic!("{krate} is not in Cargo.lock"));
    let cargo_home = std::env::var("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(&std::env::var("HOME").expect("HOME")).join(".cargo"));
    let registry = cargo_home.join("registry/src");
    for index in std::fs::read_dir(&registry).expect("cargo's registry") {
        let path = index
            .expect("a registry index")
            .path()
            .join(format!("{krate}-{version}/src/bytes_hash_map/{file}"));
        if let Ok(source) = std::fs::read_to_string(&path) {
            return source;
        }
    }
    panic!("{krate} {version} is not unpacked under {}", registry.display());
}

/// Compares the generated `file` of `krate` with the `.proto` files of
/// `artifact`; returns how many fields were compared.
fn check(krate: &str, file: &str, artifact: &str) -> usize {
    let mut messages = BTreeMap::new();
    for proto in protos_of(artifact) {
        proto_messages(&proto, &mut messages);
    }
    let fields = rust_fields(&generated(krate, file));
    let mut wrong = Vec::new();
    let mut compared = 0;
    for (message, field, number) in &fields {
        match messages.get(message).and_then(|m| m.get(field)) {
            Some(expected) if expected == number => compared += 1,
            Some(expected) => wrong.push(format!(
                "{message}.{field}: {number} in {krate}, {expected} in the .proto"
            )),
            // A field newer than these .proto files: nothing to compare.
            None => {}
        }
    }
    assert!(
        wrong.is_empty(),
        "{krate} disagrees with Google's .proto files:\n{}",
        wrong.join("\n")
    );
    compared
}

#[test]
fn the_proto_reader_reads_messages_oneofs_and_maps() {
    let mut messages = BTreeMap::new();
    proto_messages(
        r#"syntax = "proto3";
        // A comment { with braces }
        message Outer {
          option (google.api.resource) = { type: "x" };
          message Inner { repeated bytes row_keys = 1; }
          enum Kind { KIND_UNSPECIFIED = 0; }
          string table_name = 1 [(google.api.field_behavior) = REQUIRED];
          oneof start_key { bytes start_key_closed = 2; bytes start_key_open = 3; }
          map<string, Inner> families = 4;
          optional int64 limit = 5;
        }
        service S { rpc Read(Outer) returns (Outer) { option (google.api.http) = { post: "/v2" }; } }"#,
        &mut messages,
    );
    let fields = |m: &str| messages[m].iter().map(|(k, v)| (k.as_str(), *v)).collect::<Vec<_>>();
    assert_eq!(
        fields("outer"),
        [
            ("families", 4),
            ("limit", 5),
            ("startkeyclosed", 2),
            ("startkeyopen", 3),
            ("tablename", 1)
        ]
    );
    assert_eq!(fields("outer.inner"), [("rowkeys", 1)]);
}

#[test]
fn the_rust_reader_reads_structs_and_oneof_variants() {
    let source = r#"
pub struct RowRange {
    #[prost(oneof = "row_range::StartKey", tags = "1, 2")]
    pub start_key: ::core::option::Option<row_range::StartKey>,
    #[prost(
        string,
        tag = "7"
    )]
    pub r#type: String,
}
/// Nested message and enum types in `RowRange`.
pub mod row_range {
    #[derive(Clone, PartialEq, ::prost::Oneof)]
    pub enum StartKey {
        #[prost(bytes, tag = "1")]
        StartKeyClosed(::prost::bytes::Bytes),
    }
    impl StartKey {
        pub fn f(&self) -> u8 { match self { _ => 0 } }
    }
}
pub struct After {
    #[prost(int64, tag = "3")]
    pub limit: i64,
}
"#;
    assert_eq!(
        rust_fields(source),
        [
            ("rowrange".to_string(), "type".to_string(), 7),
            ("rowrange".to_string(), "startkeyclosed".to_string(), 1),
            ("after".to_string(), "limit".to_string(), 3),
        ]
    );
}

#[test]
#[ignore = "needs Google's .proto files: mvn -q dependency:get -Dartifact=com.google.api.grpc:proto-google-cloud-bigtable-v2:2.50.0 (and -admin-v2), as .ci/run does"]
fn the_generated_messages_match_googles_proto_files() {
    let data = check(
        "googleapis-tonic-google-bigtable-v2",
        "google.bigtable.v2.rs",
        PROTO_JARS[0],
    );
    let admin = check(
        "googleapis-tonic-google-bigtable-admin-v2",
        "google.bigtable.admin.v2.rs",
        PROTO_JARS[1],
    );
    // Most fields are compared (a field newer than the .proto files is not).
    assert!(
        data > 150 && admin > 150,
        "compared {data} data fields and {admin} admin fields"
    );
}
