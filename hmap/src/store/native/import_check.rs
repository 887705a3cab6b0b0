//! The files of `store::native` stand in layers: none imports a file that
//! imports it back, directly or around a circle. Checked on the sources
//! themselves, so that it stays that way.
//!
//! A file's imports are the native files its code (tests and comments
//! left out) names through `super::x` or `crate::store::native::x`, a name
//! re-exported by `mod.rs` counting as the file it comes from; and the
//! files whose `NativeStore` methods it calls (`self.locate_within(..)`:
//! inherent methods need no `use`, yet they tie two files as much as an
//! import does). The check relies on rustfmt's layout, which CI enforces:
//! an item under `#[cfg(test)]` ends at the first line, at the attribute's
//! indentation, that is `}` or ends with `;`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The native files, by name (a file in a folder counts as the folder's
/// module: `kerberos/keytab.rs` is `kerberos`), with their code.
fn sources() -> BTreeMap<String, Vec<(usize, String)>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store/native");
    let mut files = BTreeMap::<String, Vec<(usize, String)>>::new();
    let mut dirs = vec![(root, 0, None::<String>)];
    while let Some((dir, depth, module)) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("the native sources") {
            let path = entry.expect("a native source").path();
            let name = path
                .file_stem()
                .and_then(|s| s.to_str())
                .expect("a file name")
                .to_string();
            let module = module.clone().unwrap_or_else(|| name.clone());
            if path.is_dir() {
                dirs.push((path, depth + 1, Some(module)));
            } else if path.extension().is_some_and(|e| e == "rs") {
                let source = std::fs::read_to_string(&path).expect("a readable source");
                let key = if depth == 0 && name == "mod" {
                    "mod".to_string()
                } else {
                    module
                };
                files.entry(key).or_default().push((depth, source));
            }
        }
    }
    files
}

/// `source` without its comments and without the items under `#[cfg(test)]`;
/// inside an inline module (`pub mod scan { .. }`), paths as seen from the
/// file itself.
fn non_test_code(source: &str) -> String {
    let mut code = String::new();
    // The indentation of the `#[cfg(test)]` item being skipped.
    let mut skipping: Option<usize> = None;
    // The indentation of each inline module the line is in.
    let mut inline: Vec<usize> = Vec::new();
    for line in source.lines() {
        let text = line.trim_start();
        let indent = line.len() - text.len();
        if let Some(at) = skipping {
            let attribute = text.starts_with("#[");
            if indent == at && !attribute && (text == "}" || text.ends_with(';')) {
                skipping = None;
            }
            continue;
        }
        if text == "#[cfg(test)]" {
            skipping = Some(indent);
            continue;
        }
        if inline.last() == Some(&indent) && text == "}" {
            inline.pop();
        }
        let words: Vec<&str> = text.split_whitespace().collect();
        if let [.., "mod", _, "{"] = &words[..] {
            inline.push(indent);
        }
        let text = text.split_once("//").map_or(text, |(code, _)| code);
        code.push_str(&line[..indent]);
        code.push_str(&from_file(text, inline.len()));
        code.push('\n');
    }
    code
}

/// `text`, from inside `depth` inline modules, with its paths as the
/// file sees them: `super::` as many times as the depth names the file
/// itself (`self::`), one more time the file's parent.
fn from_file(text: &str, depth: usize) -> String {
    if depth == 0 {
        return text.to_string();
    }
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("super::") {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let mut times = 0;
        while let Some(after) = rest.strip_prefix("super::") {
            rest = after;
            times += 1;
        }
        out.push_str(&if times > depth {
            "super::".repeat(times - depth)
        } else {
            "self::".to_string()
        });
    }
    out.push_str(rest);
    out
}

/// The first name of each path that starts with `prefix` (`super::` ...),
/// every name of a group (`super::{a, b::C}`: `a` and `b`).
fn names_after(code: &str, prefix: &str) -> Vec<String> {
    let ident = |s: &str| -> String { s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
    let mut names = Vec::new();
    for (at, _) in code.match_indices(prefix) {
        // `super::super::x` is not this prefix's `super`.
        let before = &code[..at];
        if before.ends_with("::") || before.ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            names.extend(group.split(',').map(|n| ident(n.trim())).filter(|n| !n.is_empty()));
        } else {
            names.push(ident(rest));
        }
    }
    // `super::super::x`: outside the native module.
    names.retain(|n| n != "super");
    names
}

/// What `mod.rs` re-exports: item name -> the file it comes from.
fn re_exports(mod_rs: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for statement in non_test_code(mod_rs).split(';') {
        let Some((_, path)) = statement.split_once("pub use ") else {
            continue;
        };
        let Some((module, items)) = path.split_once("::") else {
            continue;
        };
        let items = items.trim_start_matches('{').trim_end_matches('}');
        for item in items.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            out.insert(item.to_string(), module.to_string());
        }
    }
    out
}

/// The native files the code of `module` imports (see the module's docs).
fn imports(
    module: &str,
    code: &[(usize, String)],
    modules: &BTreeSet<String>,
    re_exported: &BTreeMap<String, String>,
    methods: &BTreeMap<String, String>,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (depth, code) in code {
        let parent = if *depth == 0 { "super::" } else { "super::super::" };
        let names = names_after(code, parent)
            .into_iter()
            .chain(names_after(code, "crate::store::native::"));
        for name in names {
            let file = match re_exported.get(&name) {
                _ if modules.contains(&name) => name.clone(),
                Some(file) => file.clone(),
                None => {
                    panic!("`{name}`, named in {module}'s code, is neither a native file nor re-exported by mod.rs")
                }
            };
            out.insert(file);
        }
        for (method, file) in methods {
            for call in [format!(".{method}("), format!(".{method}::<")] {
                for (at, _) in code.match_indices(&call) {
                    let receiver = code[..at].trim_end();
                    let on_store = ["self", "store"].iter().any(|r| {
                        receiver
                            .strip_suffix(r)
                            .is_some_and(|before| !before.ends_with(|c: char| c.is_alphanumeric() || c == '_'))
                    });
                    if on_store {
                        out.insert(file.clone());
                    }
                }
            }
        }
    }
    out.remove(module);
    out
}

/// `NativeStore`'s inherent methods (outside tests), each with its file.
fn store_methods(files: &BTreeMap<String, Vec<(usize, String)>>) -> BTreeMap<String, String> {
    let mut methods = BTreeMap::new();
    for (module, code) in files {
        for (_, code) in code {
            let mut inside = false;
            for line in code.lines() {
                if line.starts_with("impl NativeStore {") {
                    inside = true;
                } else if line == "}" {
                    inside = false;
                } else if inside && line.starts_with("    ") && !line.starts_with("     ") {
                    let words: Vec<&str> = line.split(|c: char| !(c.is_alphanumeric() || c == '_')).collect();
                    if let Some(at) = words.iter().position(|w| *w == "fn") {
                        methods.insert(words[at + 1].to_string(), module.clone());
                    }
                }
            }
        }
    }
    methods
}

/// A circle in `graph`, if there is one: its files, the first again at the end.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        file: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|f| f == file) {
            let mut circle = path[at..].to_vec();
            circle.push(file.to_string());
            return Some(circle);
        }
        if done.contains(file) {
            return None;
        }
        path.push(file.to_string());
        for next in graph.get(file).into_iter().flatten() {
            if let Some(circle) = visit(next, graph, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        done.insert(file.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|file| visit(file, graph, &mut Vec::new(), &mut done))
}

/// Each native file (test-only ones and `mod.rs` left out), with the
/// native files it imports.
fn import_graph() -> BTreeMap<String, BTreeSet<String>> {
    let sources = sources();
    let mod_rs = &sources["mod"][0].1;
    // `#[cfg(test)]` then `mod x;`: a file compiled only for tests.
    let test_only: BTreeSet<String> = mod_rs
        .split("#[cfg(test)]")
        .skip(1)
        .filter_map(|after| after.trim_start().strip_prefix("mod "))
        .map(|m| m[..m.find(';').unwrap_or(0)].to_string())
        .collect();
    let code: BTreeMap<String, Vec<(usize, String)>> = sources
        .iter()
        .filter(|(module, _)| *module != "mod" && !test_only.contains(*module))
        .map(|(module, files)| {
            let code = files.iter().map(|(depth, s)| (*depth, non_test_code(s))).collect();
            (module.clone(), code)
        })
        .collect();
    let modules: BTreeSet<String> = sources.keys().filter(|m| *m != "mod").cloned().collect();
    let re_exported = re_exports(mod_rs);
    let methods = store_methods(&code);
    code.iter()
        .map(|(module, code)| {
            let imports = imports(module, code, &modules, &re_exported, &methods);
            (module.clone(), imports)
        })
        .collect()
}

#[test]
fn no_native_file_imports_one_that_imports_it_back() {
    let graph = import_graph();
    let shown: Vec<String> = graph
        .iter()
        .map(|(file, imports)| format!("{file} -> {}", imports.iter().cloned().collect::<Vec<_>>().join(", ")))
        .collect();
    if let Some(circle) = circle(&graph) {
        panic!(
            "store::native's files import one another in a circle: {}\nthe imports:\n{}",
            circle.join(" -> "),
            shown.join("\n")
        );
    }
    println!("{}", shown.join("\n"));
}

#[test]
fn the_check_sees_imports_calls_and_tests() {
    let code = non_test_code(
        "use super::retry::{Attempts, Retry};\nuse super::{codec, error::NativeError};\n\
         fn f() { // super::admin::random_u64()\n    let x = super::super::probe::y();\n    self.store\n        \
         .region_call::<_, R>(x);\n}\n\n#[cfg(test)]\nmod tests {\n    use super::batch::Op;\n}\n\n\
         #[cfg(test)]\nuse super::scan;\n",
    );
    assert_eq!(names_after(&code, "super::"), ["retry", "codec", "error"]);
    let modules = ["retry", "codec", "error", "call"].map(String::from).into();
    let methods = [("region_call".to_string(), "call".to_string())].into();
    let found = imports("rows", &[(0, code)], &modules, &BTreeMap::new(), &methods);
    assert_eq!(found, ["call", "codec", "error", "retry"].map(String::from).into());
    // Inside `pub mod mutation_proto { .. }`, `super::` is the file itself.
    assert_eq!(
        from_file("enumeration = \"super::DeleteType\"", 1),
        "enumeration = \"self::DeleteType\""
    );
    assert_eq!(
        from_file("super::super::error::NativeError", 1),
        "super::error::NativeError"
    );
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a".to_string(), ["b".to_string()].into()),
        ("b".to_string(), ["c".to_string()].into()),
        ("c".to_string(), ["a".to_string()].into()),
    ]
    .into();
    assert_eq!(circle(&graph).expect("a circle"), ["a", "b", "c", "a"]);
}
