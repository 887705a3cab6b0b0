//! Bad input to the key codec gives a typed error that names the part and
//! shows the key; bad schemas are refused with the rule they break.

use hmap::key::{KeyError, KeyFormat, KeySchema, PartError, PartKind, PartSpec, Segment, Width};

fn part(name: &'static str, kind: PartKind) -> Segment {
    Segment::Part(PartSpec::new(name, kind))
}

fn schema_error(format: KeyFormat, segments: Vec<Segment>) -> String {
    match KeySchema::new(format, segments) {
        Err(KeyError::Schema(msg)) => msg,
        other => panic!("expected a schema error, got {other:?}"),
    }
}

#[test]
fn schema_rules() {
    let cases: Vec<(KeyFormat, Vec<Segment>, &str)> = vec![
        (KeyFormat::Binary, vec![], "at least one part"),
        (
            KeyFormat::Binary,
            vec![part("a", PartKind::U8), part("a", PartKind::U16)],
            "two parts are named `a`",
        ),
        (
            KeyFormat::Binary,
            vec![Segment::Part(PartSpec::new("name", PartKind::Str).reverse_ts())],
            "part `name`: reverse_ts needs a DateTime<Utc>, i64 or u64",
        ),
        (
            KeyFormat::Binary,
            vec![Segment::Part(PartSpec::new("id", PartKind::U64).reversed())],
            "part `id`: reversed needs a string",
        ),
        (
            KeyFormat::Binary,
            vec![Segment::Part(PartSpec::new("id", PartKind::U64).width(Width::Fixed(3)))],
            "no meaning in a binary key",
        ),
        (
            KeyFormat::Binary,
            vec![
                Segment::Salt {
                    buckets: 0,
                    by: vec![0].into(),
                },
                part("a", PartKind::U8),
            ],
            "1 to 256 buckets, not 0",
        ),
        (
            KeyFormat::Binary,
            vec![
                Segment::Salt {
                    buckets: 300,
                    by: vec![0].into(),
                },
                part("a", PartKind::U8),
            ],
            "1 to 256 buckets, not 300",
        ),
        (
            KeyFormat::Binary,
            vec![
                Segment::Salt {
                    buckets: 4,
                    by: vec![].into(),
                },
                part("a", PartKind::U8),
            ],
            "at least one `by` part",
        ),
        (
            KeyFormat::Binary,
            vec![
                Segment::Salt {
                    buckets: 4,
                    by: vec![3].into(),
                },
                part("a", PartKind::U8),
            ],
            "salt `by` names part 3, but the key has 1 parts",
        ),
        (
            KeyFormat::Binary,
            vec![
                Segment::Salt {
                    buckets: 4,
                    by: vec![0, 0].into(),
                },
                part("a", PartKind::U8),
            ],
            "names part `a` twice",
        ),
        (
            KeyFormat::Binary,
            vec![
                Segment::Salt {
                    buckets: 4,
                    by: vec![0].into(),
                },
                Segment::Salt {
                    buckets: 4,
                    by: vec![0].into(),
                },
                part("a", PartKind::U8),
            ],
            "at most one salt",
        ),
        (
            KeyFormat::Binary,
            vec![Segment::HashPrefix { len: 17, of: 0 }, part("a", PartKind::U8)],
            "1 to 16 bytes, not 17",
        ),
        (
            KeyFormat::text(),
            vec![Segment::HashPrefix { len: 0, of: 0 }, part("a", PartKind::U8)],
            "1 to 32 hex digits, not 0",
        ),
        (
            KeyFormat::Binary,
            vec![Segment::HashPrefix { len: 4, of: 1 }, part("a", PartKind::U8)],
            "hash prefix of part 1",
        ),
        (
            KeyFormat::Binary,
            vec![Segment::Literal(vec![].into()), part("a", PartKind::U8)],
            "literal segment is empty",
        ),
        (
            KeyFormat::text(),
            vec![Segment::Literal(b"a_b".to_vec().into()), part("a", PartKind::U8)],
            "contains the separator",
        ),
        (
            KeyFormat::text_with('x'),
            vec![part("a", PartKind::U8)],
            "must be ASCII punctuation",
        ),
        (
            KeyFormat::text(),
            vec![part("f", PartKind::F64)],
            "f64 parts cannot be written in a text key",
        ),
        (
            KeyFormat::text(),
            vec![Segment::Part(PartSpec::new("s", PartKind::Str).desc())],
            "desc in a text key needs a fixed-width",
        ),
        (
            KeyFormat::text(),
            vec![Segment::Part(
                PartSpec::new("n", PartKind::U32).width(Width::Variable).desc(),
            )],
            "not a variable-width u32",
        ),
        (
            KeyFormat::text(),
            vec![Segment::Part(PartSpec::new("s", PartKind::Str).width(Width::Fixed(3)))],
            "a width applies to integer and timestamp parts",
        ),
        (
            KeyFormat::text(),
            vec![Segment::Part(
                PartSpec::new("t", PartKind::I64).reverse_ts().width(Width::Fixed(13)),
            )],
            "not reverse_ts",
        ),
        (
            KeyFormat::text(),
            vec![Segment::Part(PartSpec::new("n", PartKind::U32).width(Width::Fixed(40)))],
            "1 to 39 digits, not 40",
        ),
        (
            KeyFormat::Text { separator: None },
            vec![part("a", PartKind::Str), part("b", PartKind::U8)],
            "only the last segment may have a variable width, but part `a` is not last",
        ),
    ];
    for (format, segments, expected) in cases {
        let msg = schema_error(format, segments);
        assert!(msg.contains(expected), "{msg:?} should contain {expected:?}");
    }
}

fn users() -> KeySchema {
    KeySchema::new(
        KeyFormat::Binary,
        vec![
            part("user", PartKind::Str),
            part("score", PartKind::F64),
            part("seq", PartKind::U32),
        ],
    )
    .unwrap()
}

#[test]
fn nan_is_refused_by_name() {
    let err = users().encode(&("u1", f64::NAN, 1u32)).unwrap_err();
    assert_eq!(
        err,
        KeyError::Encode {
            part: "score".into(),
            cause: PartError::NaN
        }
    );
    assert_eq!(err.to_string(), "key part `score`: NaN cannot be stored in a rowkey");
}

#[test]
fn wrong_kind_is_refused() {
    let err = users().encode(&("u1", 1.0f64, 1u64)).unwrap_err();
    assert_eq!(
        err,
        KeyError::KindMismatch {
            part: "seq".into(),
            expected: PartKind::U32,
            given: PartKind::U64
        }
    );
    assert_eq!(err.to_string(), "key part `seq` is declared as u32 but a u64 was given");
}

#[test]
fn wrong_arity_is_refused() {
    assert_eq!(
        users().encode(&("u1", 1.0f64)).unwrap_err(),
        KeyError::Arity { expected: 3, given: 2 }
    );
    assert_eq!(
        users().encode_prefix(&("u1", 1.0f64, 1u32, 2u8)).unwrap_err(),
        KeyError::Arity { expected: 3, given: 4 }
    );
    let key = users().encode(&("u1", 1.0f64, 1u32)).unwrap();
    assert_eq!(
        users().decode::<(String, f64)>(&key).unwrap_err(),
        KeyError::Arity { expected: 3, given: 2 }
    );
}

#[test]
fn text_values_that_do_not_fit() {
    let s = KeySchema::new(
        KeyFormat::text(),
        vec![
            Segment::Part(PartSpec::new("pid", PartKind::U32).width(Width::Fixed(3))),
            part("delta", PartKind::I32),
        ],
    )
    .unwrap();
    assert_eq!(
        s.encode(&(1000u32, 1i32)).unwrap_err(),
        KeyError::Encode {
            part: "pid".into(),
            cause: PartError::TooWide {
                value: "1000".into(),
                width: 3
            }
        }
    );
    assert_eq!(
        s.encode(&(1u32, -5i32)).unwrap_err(),
        KeyError::Encode {
            part: "delta".into(),
            cause: PartError::Negative { value: "-5".into() }
        }
    );
}

#[test]
fn reverse_ts_before_1970_is_refused() {
    let s = KeySchema::new(
        KeyFormat::Binary,
        vec![Segment::Part(PartSpec::new("at", PartKind::I64).reverse_ts())],
    )
    .unwrap();
    assert_eq!(
        s.encode(&-1i64).unwrap_err(),
        KeyError::Encode {
            part: "at".into(),
            cause: PartError::NegativeTimestamp { millis: -1 }
        }
    );
}

#[test]
fn salted_prefix_without_its_parts() {
    let s = KeySchema::new(
        KeyFormat::Binary,
        vec![
            Segment::Salt {
                buckets: 4,
                by: vec![1].into(),
            },
            part("a", PartKind::U8),
            part("b", PartKind::U8),
        ],
    )
    .unwrap();
    assert_eq!(
        s.encode_prefix(&(1u8,)).unwrap_err(),
        KeyError::SaltNotCovered { part: "b".into() }
    );
    assert_eq!(s.encode_prefix_in_bucket(&(1u8,), 3).unwrap(), vec![3, 1]);
    assert_eq!(
        s.encode_prefix_in_bucket(&(1u8,), 4).unwrap_err(),
        KeyError::BucketOutOfRange { bucket: 4, buckets: 4 }
    );
    assert_eq!(s.encode_prefix_in_bucket(&(), 2).unwrap(), vec![2]);
}

#[test]
fn malformed_binary_keys() {
    let s = users();
    let cases: Vec<(&[u8], KeyError)> = vec![
        (
            b"u1",
            KeyError::Decode {
                key: "u1".into(),
                part: "user".into(),
                offset: 0,
                cause: PartError::Truncated,
            },
        ),
        (
            b"u\x00\x05",
            KeyError::Decode {
                key: r"u\x00\x05".into(),
                part: "user".into(),
                offset: 0,
                cause: PartError::Invalid("bad escape after a 0x00 byte"),
            },
        ),
        (
            b"\xff\x00\x00\x80\x00",
            KeyError::Decode {
                key: r"\xFF\x00\x00\x80\x00".into(),
                part: "user".into(),
                offset: 0,
                cause: PartError::Invalid("a string part is not valid UTF-8"),
            },
        ),
        (
            b"u\x00\x00\xff\xf8\x00\x00\x00\x00\x00\x01",
            KeyError::Decode {
                key: r"u\x00\x00\xFF\xF8\x00\x00\x00\x00\x00\x01".into(),
                part: "score".into(),
                offset: 3,
                cause: PartError::NaN,
            },
        ),
        (
            b"u\x00\x00\xbf\xf0\x00\x00\x00\x00\x00\x00\x00\x00\x00",
            KeyError::Decode {
                key: r"u\x00\x00\xBF\xF0\x00\x00\x00\x00\x00\x00\x00\x00\x00".into(),
                part: "seq".into(),
                offset: 11,
                cause: PartError::Truncated,
            },
        ),
        (
            b"u\x00\x00\xbf\xf0\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01!!",
            KeyError::Trailing {
                key: r"u\x00\x00\xBF\xF0\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01!!".into(),
                offset: 15,
                count: 2,
            },
        ),
    ];
    for (bytes, expected) in cases {
        assert_eq!(s.decode::<(String, f64, u32)>(bytes).unwrap_err(), expected);
        // The inspector reads the same way.
        assert_eq!(s.inspect(bytes).unwrap_err(), expected);
    }
}

#[test]
fn malformed_text_keys() {
    let s = KeySchema::new(
        KeyFormat::text(),
        vec![
            Segment::Salt {
                buckets: 16,
                by: vec![0].into(),
            },
            part("uid", PartKind::Str),
            Segment::Part(PartSpec::new("at", PartKind::I64).reverse_ts()),
        ],
    )
    .unwrap();
    let good = s.encode(&("u42", 1_700_000_000_000i64)).unwrap();
    assert_eq!(good, b"14_u42_9223370336854775807");
    let decode = |bytes: &[u8]| s.decode::<(String, i64)>(bytes).unwrap_err().to_string();
    assert_eq!(
        decode(b"14-u42_9223370336854775807"),
        "rowkey 14-u42_9223370336854775807 does not decode: `uid` at byte 2: expected the separator"
    );
    assert_eq!(
        decode(b"99_u42_9223370336854775807"),
        "rowkey 99_u42_9223370336854775807 does not decode: `salt` at byte 0: bucket 99 of 16 is out of range"
    );
    assert_eq!(
        decode(b"03_u42_9223370336854775807"),
        "rowkey 03_u42_9223370336854775807: `salt` is 03 but the key's parts give 14"
    );
    assert_eq!(
        decode(b"14_u42_92233703368547758"),
        "rowkey 14_u42_92233703368547758 does not decode: `at` at byte 7: the key ends inside the part"
    );
    assert_eq!(
        decode(b"14_u42_922337033685477580x"),
        "rowkey 14_u42_922337033685477580x does not decode: `at` at byte 7: not a decimal digit"
    );
    assert_eq!(
        decode(b"14_u42"),
        "rowkey 14_u42 does not decode: `at` at byte 6: the key ends inside the part"
    );
}

#[test]
fn invalid_values_in_fixed_parts() {
    let s = KeySchema::new(KeyFormat::Binary, vec![part("flag", PartKind::Bool)]).unwrap();
    assert_eq!(
        s.decode::<bool>(b"\x02").unwrap_err(),
        KeyError::Decode {
            key: r"\x02".into(),
            part: "flag".into(),
            offset: 0,
            cause: PartError::Invalid("a bool part is 0x00 or 0x01"),
        }
    );
    let s = KeySchema::new(KeyFormat::text(), vec![part("day", PartKind::Date)]).unwrap();
    assert_eq!(
        s.decode::<chrono::NaiveDate>(b"20240230").unwrap_err().to_string(),
        "rowkey 20240230 does not decode: `day` at byte 0: date 20240230 is out of range"
    );
    let s = KeySchema::new(KeyFormat::text(), vec![part("id", PartKind::Uuid)]).unwrap();
    assert!(matches!(
        s.decode::<uuid::Uuid>(b"00112233-4455-6677-8899-aabbccddeefg")
            .unwrap_err(),
        KeyError::Decode {
            cause: PartError::Invalid("not a hyphenated uuid"),
            ..
        }
    ));
}

#[test]
fn inspector_reads_printable_keys() {
    let s = KeySchema::new(
        KeyFormat::Binary,
        vec![
            Segment::Salt {
                buckets: 16,
                by: vec![0].into(),
            },
            part("user", PartKind::Str),
            Segment::Part(PartSpec::new("at", PartKind::I64).reverse_ts()),
            Segment::Literal(b"!".to_vec().into()),
        ],
    )
    .unwrap();
    let key = s.encode(&("u42", 1_700_000_000_000i64)).unwrap();
    let printable = hmap::key::Printable(&key).to_string();
    assert_eq!(printable, r"\x0Eu42\x00\x00\x7F\xFF\xFEt0\x1A\x97\xFF!");
    let shown = s.inspect_printable(&printable).unwrap();
    assert_eq!(shown.to_string(), r#"salt=14 user="u42" at=1700000000000 literal="!""#);
    assert_eq!(
        format!("{shown:#}"),
        "salt=14\nuser=\"u42\"\nat=1700000000000\nliteral=\"!\""
    );
    assert_eq!(
        s.to_string(),
        "binary: salt(16 by user) + user: string + at: i64 reverse_ts + \"!\""
    );
}
