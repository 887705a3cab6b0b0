//! Each error's text appears once in its chain: an error whose message
//! already holds the text of the error it wraps does not also return it as
//! its `source()`, so that a chain printer (anyhow's `{:#}`, `eyre`, a
//! logger that walks `source()`) shows every text once.

use std::error::Error as StdError;
use std::net::TcpListener;
use std::time::Duration;

use hmap::store::native::{NativeConfig, NativeStore};
use hmap::store::{Get, Store, ThriftConfig, ThriftStore};

/// Fails when a link's text contains the text of the link below it.
fn assert_each_text_once(error: &(dyn StdError + 'static)) {
    let mut link: &(dyn StdError + 'static) = error;
    while let Some(source) = link.source() {
        let (outer, inner) = (link.to_string(), source.to_string());
        assert!(
            !outer.contains(&inner),
            "the text of the source is printed twice:\n  link:   {outer}\n  source: {inner}"
        );
        link = source;
    }
}

/// The chain as anyhow's `{:#}` prints it: each link's text, joined by ": ".
fn chain(error: &(dyn StdError + 'static)) -> String {
    let mut texts = vec![error.to_string()];
    let mut link = error;
    while let Some(source) = link.source() {
        texts.push(source.to_string());
        link = source;
    }
    texts.join(": ")
}

/// A port where nothing listens (bound, then let go).
fn closed_port() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address").to_string();
    drop(listener);
    address
}

#[tokio::test]
async fn a_native_connection_error_prints_each_text_once() {
    let address = closed_port();
    let config = NativeConfig::new([address.as_str()]).call_timeout(Duration::from_secs(2));
    let error = NativeStore::connect(config).await.expect_err("nothing listens there");
    assert!(error.to_string().contains(&address), "{error}");
    assert_each_text_once(&error);
    let whole = chain(&error);
    assert_eq!(whole.matches("refused").count(), 1, "{whole}");
}

#[tokio::test]
async fn a_thrift_connection_error_prints_each_text_once() {
    let address = closed_port();
    let mut config = ThriftConfig::new(address.clone());
    config.call_timeout = Duration::from_secs(2);
    config.connect_timeout = Duration::from_secs(2);
    let store = ThriftStore::with_config(config);
    let error = store.get("t", &Get::new("r")).await.expect_err("nothing listens there");
    assert!(error.to_string().contains(&address), "{error}");
    assert_each_text_once(&error);
}

#[test]
fn a_key_error_prints_each_text_once() {
    use hmap::key::{KeyFormat, KeySchema, PartKind, PartSpec, Segment, Width};
    let schema = KeySchema::new(
        KeyFormat::text(),
        vec![
            Segment::Part(PartSpec::new("pid", PartKind::U32).width(Width::Fixed(3))),
            Segment::Part(PartSpec::new("name", PartKind::Str)),
        ],
    )
    .expect("a valid schema");
    let error = schema.encode(&(1000u32, "a")).expect_err("1000 in 3 digits");
    assert_eq!(error.to_string(), "key part `pid`: 1000 does not fit in 3 digits");
    assert_each_text_once(&error);
}
