//! Checks the hand-written messages of `proto.rs` against HBase's own
//! `.proto` files, read from `hbase-protocol-shaded-2.6.1.jar` in the local
//! Maven repository: every message, field number, label, type, default and
//! enum value. A small parser reads the proto2 subset those files use; the
//! Rust side is read from the source of `proto.rs` (its `#[prost(...)]`
//! attributes), so nothing here can drift from what prost derives.

use std::collections::BTreeMap;

/// The files whose messages `proto.rs` mirrors.
const FILES: [&str; 13] = [
    "RPC.proto",
    // `RPCTInfo`, the trace context of `RequestHeader.trace_info`.
    "Tracing.proto",
    "HBase.proto",
    "Client.proto",
    "Cell.proto",
    "Comparator.proto",
    "Filter.proto",
    "Registry.proto",
    "ErrorHandling.proto",
    "Master.proto",
    // The znodes the ZooKeeper registry reads (`zookeeper.rs`), and
    // `RegionState.State`, the type of `MetaRegionServer.state`.
    "ZooKeeper.proto",
    "ClusterId.proto",
    "ClusterStatus.proto",
];

#[derive(Debug, Clone, PartialEq)]
struct Field {
    name: String,
    label: String,
    ty: String,
    tag: u32,
    default: Option<String>,
    packed: Option<String>,
}

#[derive(Debug, Default)]
struct Schema {
    /// Full dotted name (`MutationProto.ColumnValue`) to fields by tag.
    messages: BTreeMap<String, BTreeMap<u32, Field>>,
    /// Full dotted name to values (name, number).
    enums: BTreeMap<String, Vec<(String, i32)>>,
}

fn strip_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("//") {
            rest = after.find('\n').map_or("", |i| &after[i..]);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |i| &after[i + 2..]);
        } else if let Some(after) = rest.strip_prefix('"') {
            let end = after.find('"').expect("closed string");
            out.push('"');
            out.push_str(&after[..=end]);
            rest = &after[end + 1..];
        } else {
            let c = rest.chars().next().expect("non-empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

fn tokens(text: &str) -> Vec<String> {
    let text = strip_comments(text);
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_alphanumeric() || c == '_' || c == '.' || c == '-' {
            let mut word = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_alphanumeric() || c == '_' || c == '.' || c == '-' {
                    word.push(c);
                    chars.next();
                } else {
                    break;
                }
            }
            out.push(word);
        } else if c == '"' {
            chars.next();
            let mut word = String::from('"');
            for c in chars.by_ref() {
                if c == '"' {
                    break;
                }
                word.push(c);
            }
            out.push(word);
        } else {
            out.push(c.to_string());
            chars.next();
        }
    }
    out
}

struct Parser {
    tokens: Vec<String>,
    at: usize,
}

impl Parser {
    fn next(&mut self) -> String {
        let t = self.tokens.get(self.at).cloned().expect("unexpected end of .proto");
        self.at += 1;
        t
    }
    fn peek(&self) -> Option<&str> {
        self.tokens.get(self.at).map(String::as_str)
    }
    fn expect(&mut self, want: &str) {
        let got = self.next();
        assert_eq!(got, want, "in .proto at token {}", self.at);
    }
    fn skip_statement(&mut self) {
        while self.next() != ";" {}
    }
    fn skip_block(&mut self) {
        while self.next() != "{" {}
        let mut depth = 1;
        while depth > 0 {
            match self.next().as_str() {
                "{" => depth += 1,
                "}" => depth -= 1,
                _ => {}
            }
        }
    }

    fn file(&mut self, schema: &mut Schema) {
        while let Some(t) = self.peek() {
            match t {
                "message" => self.message("", schema),
                "enum" => self.enumeration("", schema),
                "service" => self.skip_block(),
                _ => self.skip_statement(),
            }
        }
    }

    fn message(&mut self, scope: &str, schema: &mut Schema) {
        self.expect("message");
        let name = format!("{scope}{}", self.next());
        self.expect("{");
        let mut fields = BTreeMap::new();
        loop {
            match self.peek().expect("unclosed message") {
                "}" => {
                    self.next();
                    break;
                }
                "message" => self.message(&format!("{name}."), schema),
                "enum" => self.enumeration(&format!("{name}."), schema),
                "option" | "reserved" | "extensions" => self.skip_statement(),
                "oneof" => panic!("oneof in {name}: not in the subset this parser reads"),
                "map" => {
                    // `map<K, V> name = N;` (ClusterStatus.proto): kept as
                    // a field of type `map`, labelled `repeated`.
                    self.next();
                    while self.next() != ">" {}
                    let field = self.next();
                    self.expect("=");
                    let tag: u32 = self.next().parse().expect("field number");
                    self.expect(";");
                    let f = Field {
                        name: field,
                        label: "repeated".to_string(),
                        ty: "map".to_string(),
                        tag,
                        default: None,
                        packed: None,
                    };
                    fields.insert(tag, f);
                }
                _ => {
                    let label = self.next();
                    let ty = self.next();
                    let field = self.next();
                    self.expect("=");
                    let tag: u32 = self.next().parse().expect("field number");
                    let (mut default, mut packed) = (None, None);
                    if self.peek() == Some("[") {
                        self.next();
                        loop {
                            let key = self.next();
                            self.expect("=");
                            let value = self.next();
                            match key.as_str() {
                                "default" => default = Some(value.trim_start_matches('"').to_string()),
                                "packed" => packed = Some(value),
                                _ => {}
                            }
                            if self.next() == "]" {
                                break;
                            }
                        }
                    }
                    self.expect(";");
                    let f = Field {
                        name: field,
                        label,
                        ty,
                        tag,
                        default,
                        packed,
                    };
                    fields.insert(tag, f);
                }
            }
        }
        schema.messages.insert(name, fields);
    }

    fn enumeration(&mut self, scope: &str, schema: &mut Schema) {
        self.expect("enum");
        let name = format!("{scope}{}", self.next());
        self.expect("{");
        let mut values = Vec::new();
        loop {
            let t = self.next();
            match t.as_str() {
                "}" => break,
                "option" => self.skip_statement(),
                _ => {
                    self.expect("=");
                    let n: i32 = self.next().parse().expect("enum number");
                    if self.peek() == Some("[") {
                        while self.next() != "]" {}
                    }
                    self.expect(";");
                    values.push((t, n));
                }
            }
        }
        schema.enums.insert(name, values);
    }
}

/// `DELETE_ONE_VERSION` or `mutation_proto` to `DeleteOneVersion`, `MutationProto`.
fn camel(name: &str) -> String {
    name.split('_')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let lower = p.to_ascii_lowercase();
            let mut c = lower.chars();
            c.next()
                .map_or(String::new(), |f| f.to_ascii_uppercase().to_string() + c.as_str())
        })
        .collect()
}

/// Field names compared without case and underscores (`regionAction` is
/// `region_action`).
fn normal(name: &str) -> String {
    name.trim_start_matches("r#").replace('_', "").to_ascii_lowercase()
}

/// The messages and enums of `proto.rs`, read from its source.
fn rust_schema() -> Schema {
    let source = include_str!("proto.rs");
    let mut schema = Schema::default();
    // (module or item name, brace depth at which it opened)
    let mut scopes: Vec<(String, usize, &str)> = Vec::new();
    let mut depth = 0usize;
    let mut pending_attr: Option<String> = None;
    // rustfmt may spread a long `#[prost(...)]` over lines: join them.
    let mut lines: Vec<String> = Vec::new();
    let mut open_attr: Option<String> = None;
    for line in source.lines().map(str::trim) {
        match open_attr.take() {
            Some(mut attr) => {
                attr.push_str(line);
                if attr.ends_with(")]") {
                    lines.push(attr.replace(",)]", ")]").replace(',', ", ").replace(",  ", ", "));
                } else {
                    open_attr = Some(attr);
                }
            }
            None if line == "#[prost(" => open_attr = Some(line.to_string()),
            None => lines.push(line.to_string()),
        }
    }
    for line in &lines {
        let line = line.as_str();
        let opens = line.matches('{').count();
        let closes = line.matches('}').count();
        let path = |scopes: &[(String, usize, &str)], last: &str| {
            let mut parts: Vec<String> = scopes.iter().map(|(n, _, _)| n.clone()).collect();
            parts.push(last.to_string());
            parts.join(".")
        };
        if let Some(rest) = line.strip_prefix("pub mod ") {
            let name = rest.trim_end_matches(" {");
            scopes.push((camel(name), depth + 1, "mod"));
        } else if let Some(rest) = line.strip_prefix("pub struct ") {
            let name = rest.split([' ', '{']).next().expect("struct name");
            schema.messages.insert(path(&scopes, name), BTreeMap::new());
            scopes.push((name.to_string(), depth + 1, "struct"));
        } else if let Some(rest) = line.strip_prefix("pub enum ") {
            let name = rest.split([' ', '{']).next().expect("enum name");
            schema.enums.insert(path(&scopes, name), Vec::new());
            scopes.push((name.to_string(), depth + 1, "enum"));
        } else if let Some(attr) = line.strip_prefix("#[prost(") {
            pending_attr = Some(attr.trim_end_matches(")]").to_string());
        } else if let Some((_, _, kind)) = scopes.last() {
            let full = scopes.iter().map(|(n, _, _)| n.as_str()).collect::<Vec<_>>().join(".");
            if *kind == "struct"
                && let Some(attr) = pending_attr.take()
            {
                let decl = line.strip_prefix("pub ").expect("a pub field after #[prost]");
                let (name, ty) = decl.split_once(": ").expect("field: type");
                let field = rust_field(name, ty.trim_end_matches(','), &attr);
                let fields = schema.messages.get_mut(&full).expect("struct registered");
                assert!(fields.insert(field.tag, field).is_none(), "{full}: a tag twice");
            } else if *kind == "enum"
                && let Some((variant, number)) = line.trim_end_matches(',').split_once(" = ")
            {
                let values = schema.enums.get_mut(&full).expect("enum registered");
                values.push((variant.to_string(), number.parse().expect("enum number")));
            }
        }
        depth = depth + opens - closes;
        while scopes.last().is_some_and(|(_, d, _)| *d > depth) {
            scopes.pop();
        }
    }
    schema
}

/// One field from its `#[prost(...)]` attribute and its Rust type.
fn rust_field(name: &str, ty: &str, attr: &str) -> Field {
    let mut parts = attr.split(", ");
    let kind = parts.next().expect("a prost type");
    let mut field = Field {
        name: name.to_string(),
        label: String::new(),
        ty: String::new(),
        tag: 0,
        default: None,
        packed: None,
    };
    let unquote = |v: &str| v.trim_matches('"').to_string();
    // `btree_map = "string, string", tag = "3"`: a map, which the `.proto`
    // side reads as a `repeated` field of type `map`; its key and value
    // types hold the ", " the other attributes are split on.
    if let Some(rest) = attr.strip_prefix("btree_map = \"") {
        let (_, rest) = rest.split_once("\", ").expect("a map's attributes after its types");
        field.ty = "map".to_string();
        field.label = "repeated".to_string();
        for part in rest.split(", ") {
            match part.split_once(" = ") {
                Some(("tag", v)) => field.tag = unquote(v).parse().expect("tag"),
                _ => panic!("unknown prost attribute {part} on map {name}"),
            }
        }
        return field;
    }
    field.ty = if let Some(e) = kind.strip_prefix("enumeration = ") {
        unquote(e).rsplit("::").next().expect("enum name").to_string()
    } else if kind == "message" {
        // `Option<X>`, `Vec<a::X>` or `X`: the last path segment of the inner type.
        let inner = ty
            .trim_start_matches("Option<")
            .trim_start_matches("Vec<")
            .trim_end_matches('>');
        inner.rsplit("::").next().expect("type").to_string()
    } else {
        kind.split(' ').next().expect("scalar").to_string()
    };
    for part in parts {
        match part.split_once(" = ") {
            Some(("tag", v)) => field.tag = unquote(v).parse().expect("tag"),
            Some(("default", v)) => field.default = Some(unquote(v)),
            Some(("packed", v)) => field.packed = Some(unquote(v)),
            None => field.label = part.to_string(),
            Some((k, _)) => panic!("unknown prost attribute {k} on {name}"),
        }
    }
    field
}

/// Reads one `.proto` file from the jar.
fn read_from_jar(jar: &std::path::Path, file: &str) -> String {
    let out = std::process::Command::new("unzip")
        .arg("-p")
        .arg(jar)
        .arg(file)
        .output()
        .expect("run unzip (needed to read the jar)");
    assert!(out.status.success(), "unzip -p {} {file}: {:?}", jar.display(), out);
    String::from_utf8(out.stdout).expect("utf-8 .proto")
}

#[test]
#[ignore = "needs a real HBase: reads the .proto files from the hbase-protocol-shaded jar that scripts/hbase fetches"]
fn proto_matches_hbase() {
    let home = std::env::var("HOME").expect("HOME");
    let jar = std::path::Path::new(&home)
        .join(".m2/repository/org/apache/hbase/hbase-protocol-shaded/2.6.1/hbase-protocol-shaded-2.6.1.jar");
    assert!(
        jar.is_file(),
        "{} is missing: run scripts/hbase/hbase start once",
        jar.display()
    );
    let mut hbase = Schema::default();
    for file in FILES {
        let mut parser = Parser {
            tokens: tokens(&read_from_jar(&jar, file)),
            at: 0,
        };
        parser.file(&mut hbase);
    }
    let rust = rust_schema();
    assert!(
        rust.messages.len() >= 40,
        "read {} messages from proto.rs",
        rust.messages.len()
    );
    let mut checked = 0;
    for (message, fields) in &rust.messages {
        let theirs = hbase
            .messages
            .get(message)
            .unwrap_or_else(|| panic!("{message} is not a message of {FILES:?}"));
        for (tag, ours) in fields {
            let theirs = theirs
                .get(tag)
                .unwrap_or_else(|| panic!("{message}: HBase has no field {tag} ({})", ours.name));
            let at = format!("{message}.{} = {tag}", theirs.name);
            assert_eq!(normal(&ours.name), normal(&theirs.name), "{at}: name");
            assert_eq!(ours.label, theirs.label, "{at}: label");
            let their_type = theirs.ty.rsplit('.').next().expect("type");
            assert_eq!(ours.ty, their_type, "{at}: type");
            let is_enum = hbase.enums.keys().any(|e| e.rsplit('.').next() == Some(their_type));
            let their_default = theirs
                .default
                .as_deref()
                .map(|d| if is_enum { camel(d) } else { d.to_string() });
            assert_eq!(ours.default, their_default, "{at}: default");
            let scalar = !is_enum && !hbase.messages.keys().any(|m| m.rsplit('.').next() == Some(their_type));
            // (A map is a repeated message of entries: never packed.)
            if theirs.label == "repeated"
                && scalar
                && their_type != "bytes"
                && their_type != "string"
                && their_type != "map"
            {
                // proto2: packed only when declared.
                let want = theirs.packed.clone().unwrap_or_else(|| "false".to_string());
                assert_eq!(ours.packed.as_deref(), Some(want.as_str()), "{at}: packed");
            }
            checked += 1;
        }
    }
    for (name, values) in &rust.enums {
        let theirs = hbase
            .enums
            .get(name)
            .unwrap_or_else(|| panic!("{name} is not an enum of {FILES:?}"));
        let theirs: Vec<(String, i32)> = theirs.iter().map(|(n, v)| (camel(n), *v)).collect();
        assert_eq!(values, &theirs, "enum {name}");
        checked += values.len();
    }
    assert!(checked > 150, "checked only {checked} fields and values");
}

#[test]
fn parser_reads_the_subset() {
    let mut schema = Schema::default();
    let text = r#"syntax = "proto2"; // x
        /* block */ message A { optional uint32 x = 1 [default = 7, deprecated = true];
          enum E { ONE_TWO = 1; } message B { repeated bytes y = 2; map<string, uint32> m = 3; } }
        service S { rpc Get(A) returns (A); }"#;
    Parser {
        tokens: tokens(text),
        at: 0,
    }
    .file(&mut schema);
    assert_eq!(schema.messages["A"][&1].default.as_deref(), Some("7"));
    assert_eq!(schema.messages["A.B"][&2].label, "repeated");
    assert_eq!(schema.enums["A.E"], vec![("ONE_TWO".to_string(), 1)]);
    assert_eq!(
        (
            schema.messages["A.B"][&3].name.as_str(),
            schema.messages["A.B"][&3].ty.as_str()
        ),
        ("m", "map")
    );
    let rust = rust_schema();
    let qv = &rust.messages["MutationProto.ColumnValue.QualifierValue"];
    assert_eq!(qv[&4].ty, "DeleteType");
    assert_eq!(rust.messages["RegionSpecifier"][&1].name, "r#type");
    assert_eq!(rust.messages["ScanResponse"][&1].packed.as_deref(), Some("false"));
    // The znodes' messages, and an enum in a module of its own.
    assert_eq!(rust.messages["MetaRegionServer"][&3].ty, "State");
    assert_eq!(rust.messages["Master"][&1].ty, "ServerName");
    assert_eq!(rust.enums["RegionState.State"].len(), 16);
    // A map, whose attribute holds the ", " the others are split on.
    let headers = &rust.messages["RPCTInfo"][&3];
    assert_eq!(
        (headers.name.as_str(), headers.label.as_str(), headers.ty.as_str()),
        ("headers", "repeated", "map")
    );
    assert_eq!(rust.messages["RequestHeader"][&2].ty, "RPCTInfo");
    // An attribute rustfmt spread over lines.
    assert_eq!(
        rust.messages["MutationProto"][&6].default.as_deref(),
        Some("UseDefault")
    );
}
