//! The library's hints in the CLI's words: hmap's errors name the setting
//! to change as its API names it (`Kerberos::server_principal`), and
//! an operator needs the flag that sets it (`--server-principal`). Each
//! message the CLI prints goes through [`in_flags`].

/// Phrases first (a setting with the value it should take), then single
/// names; each replaced wherever it appears.
const FLAGS: &[(&str, &str)] = &[
    (
        "set `ThriftConfig::protocol` to `ThriftProtocol::Compact`",
        "pass `--compact`",
    ),
    (
        "set `ThriftConfig::protocol` to `ThriftProtocol::Binary`",
        "drop `--compact`",
    ),
    ("unset `ThriftConfig::framed`", "drop `--framed`"),
    ("set `ThriftConfig::framed`", "pass `--framed`"),
    ("unset `ThriftConfig::http`", "drop `--http`"),
    ("set `ThriftConfig::http` to `ThriftHttp::https`", "pass `--https`"),
    ("use `ThriftHttp::plain`", "pass `--http` rather than `--https`"),
    ("use `ThriftHttp::https`", "pass `--https`"),
    ("set `ThriftConfig::http`", "pass `--http`"),
    (
        "set `ThriftConfig::kerberos`",
        "pass `--principal` and `--keytab` (or `--kerberos`)",
    ),
    (
        "connect without `ThriftConfig::kerberos`",
        "drop `--principal`, `--keytab` and `--kerberos`",
    ),
    (
        "connect without `NativeConfig::kerberos`",
        "drop `--principal`, `--keytab` and `--kerberos`",
    ),
    ("`NativeConfig::new`", "`--native`"),
    ("`NativeConfig::zookeeper`", "`--zookeeper`"),
    (
        "`NativeConfig::kerberos`",
        "`--principal` and `--keytab` (or `--kerberos`)",
    ),
    (
        "`ThriftConfig::kerberos`",
        "`--principal` and `--keytab` (or `--kerberos`)",
    ),
    ("`NativeConfig::tls`", "`--tls` (or `--ca`)"),
    ("`NativeConfig::call_timeout`", "`--timeout`"),
    ("`ThriftConfig::call_timeout`", "`--timeout`"),
    ("`BigtableConfig::call_timeout`", "`--timeout`"),
    ("`NativeConfig::admin_timeout`", "`--timeout`"),
    ("`BigtableConfig::admin_timeout`", "`--timeout`"),
    ("`ThriftConfig::framed`", "`--framed`"),
    ("`ThriftConfig::protocol`", "`--compact`"),
    ("`ThriftConfig::http`", "`--http`"),
    ("`ThriftHttp::https_with_ca`", "`--https` with `--ca`"),
    ("`ThriftHttp::https_with`", "`--https` with `--ca`"),
    ("`ThriftHttp::https`", "`--https`"),
    ("`Kerberos::server_principal`", "`--server-principal`"),
    ("`Kerberos::zookeeper_principal`", "`--zookeeper-principal`"),
    ("`Kerberos::protection`", "`--protection`"),
    ("`Kerberos::keytab`", "`--principal` and `--keytab`"),
    ("`Kerberos::ticket_cache`", "`--kerberos`"),
    ("`Kerberos::ticket_cache()`", "`--kerberos`"),
    ("`Tls::with_ca_file`", "`--ca`"),
    ("`Tls::client_auth_files`", "`--tls-cert` and `--tls-key`"),
    ("`Tls::client_auth_pem`", "`--tls-cert` and `--tls-key`"),
    (
        "`BigtableConfig::tls`",
        "`--bigtable` (an emulator's host:port is plaintext, a projects/P/instances/I name TLS)",
    ),
    ("`BigtableConfig::cloud`", "`--bigtable projects/P/instances/I`"),
    ("`BigtableConfig::emulator`", "`--bigtable host:port`"),
    ("`BigtableConfig::from_address`", "`--bigtable`"),
    ("`ThriftConfig::address`", "`--thrift`"),
    ("`ThriftStore`", "`--thrift`"),
    ("`Thrift1Store`", "`--thrift1`"),
    ("hmap's feature `kerberos`", "hmap-cli's feature `kerberos`"),
    ("hmap's feature `tls`", "hmap-cli's feature `tls`"),
    ("hmap's `kerberos` feature", "hmap-cli's `kerberos` feature"),
    ("hmap's `tls` feature", "hmap-cli's `tls` feature"),
];

/// `message` with each setting the library names replaced by its flag.
pub(crate) fn in_flags(message: &str) -> String {
    FLAGS
        .iter()
        .fold(message.to_string(), |text, (api, flag)| text.replace(api, flag))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_become_flags() {
        assert_eq!(
            in_flags(
                "is hbase/x@R the servers' principal? Set it with `Kerberos::server_principal`, \
                 or connect with TLS: `NativeConfig::tls` (hmap's feature `tls`)"
            ),
            "is hbase/x@R the servers' principal? Set it with `--server-principal`, \
             or connect with TLS: `--tls` (or `--ca`) (hmap-cli's feature `tls`)"
        );
        assert_eq!(
            in_flags("the gateway may run framed transport (`-f`; set `ThriftConfig::framed`)"),
            "the gateway may run framed transport (`-f`; pass `--framed`)"
        );
        assert_eq!(
            in_flags("set `ThriftConfig::protocol` to `ThriftProtocol::Compact`"),
            "pass `--compact`"
        );
    }

    /// Every connection setting hmap's sources name in backticks (its
    /// messages among them) has a flag here, but for the few the CLI has
    /// no flag for: a message that names a new one fails this test until
    /// it is given its flag.
    #[test]
    fn every_connection_setting_the_library_names_has_a_flag() {
        const TYPES: [&str; 6] = [
            "NativeConfig::",
            "ThriftConfig::",
            "Kerberos::",
            "Tls::",
            "ThriftHttp::",
            "BigtableConfig::",
        ];
        const WITHOUT_FLAG: [&str; 15] = [
            "Tls::server_name",
            "ThriftHttp::server_name",
            "BigtableConfig::channels",
            "Kerberos::hostname",
            "Kerberos::principal",
            "NativeConfig::trace_context",
            "NativeConfig::retry",
            "NativeConfig::connect_timeout",
            "ThriftConfig::max_request_bytes",
            "ThriftConfig::pool_size",
            "ThriftConfig::table_prefix",
            "ThriftConfig::new",
            "ThriftHttp::do_as",
            "ThriftHttp::plain",
            "BigtableConfig::ignore_storage_options",
        ];
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../hmap/src");
        let mut missing = std::collections::BTreeSet::new();
        let mut files = vec![src.join("store"), src.join("security")];
        while let Some(path) = files.pop() {
            if path.is_dir() {
                files.extend(
                    std::fs::read_dir(&path)
                        .expect("a directory")
                        .map(|e| e.expect("an entry").path()),
                );
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("a source file");
            for quoted in text.split('`').skip(1).step_by(2) {
                let setting = quoted.trim_end_matches("()");
                let named = TYPES.iter().any(|t| setting.starts_with(t))
                    && setting
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':');
                if named && !WITHOUT_FLAG.contains(&setting) && in_flags(&format!("`{quoted}`")).contains("::") {
                    missing.insert(setting.to_string());
                }
            }
        }
        assert!(
            missing.is_empty(),
            "settings hmap names that have no flag here: {missing:?}"
        );
    }
}
