//! A 10-field struct encoded to a put and decoded back from a stored row,
//! with `#[derive(HTable)]` and with hand-written code that produces the same
//! mutations and reads the same cells.
//!
//! Run with `cargo bench -p hmap-bench --bench row_codec`.

use std::hint::black_box;

use bytes::Bytes;
use criterion::{Criterion, criterion_group, criterion_main};
use hmap::__private::{RowReader, RowWriter};
use hmap::HTable;
use hmap::store::{Cell, Mutation, RowMutation, RowResult};

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "profile", family(name = "p"))]
struct Profile {
    #[hmap(key)]
    id: u64,
    name: String,
    email: String,
    age: u32,
    score: f64,
    active: bool,
    city: Option<String>,
    created: i64,
    visits: i64,
    tag: String,
    bio: String,
}

fn sample() -> Profile {
    Profile {
        id: 42,
        name: "Ann Example".into(),
        email: "ann@example.com".into(),
        age: 31,
        score: 97.5,
        active: true,
        city: Some("Hangzhou".into()),
        created: 1_700_000_000_000,
        visits: 1234,
        tag: "gold".into(),
        bio: "Writes Rust and reads HBase logs.".into(),
    }
}

fn hmap_encode(p: &Profile) -> RowMutation {
    let mut key = Vec::with_capacity(8);
    p.encode_key(&mut key).unwrap();
    let mut w = RowWriter::at(Profile::TABLE, &key, TS);
    p.write_cells(&mut w).unwrap();
    let mutations = w.into_mutations();
    RowMutation::with(Bytes::from(key), mutations)
}

fn hmap_decode(row: &RowResult) -> Profile {
    let key = Profile::key_schema().decode(&row.row).unwrap();
    Profile::read_row(key, &RowReader::new(Profile::TABLE, row)).unwrap()
}

/// The timestamp both sides stamp their cells with (hmap stamps every cell
/// of a write with one timestamp; the clock is not what is measured here).
const TS: i64 = 1_700_000_000_000;

fn put(qualifier: &'static str, value: Bytes) -> Mutation {
    Mutation::Put {
        family: Bytes::from_static(b"p"),
        qualifier: Bytes::from_static(qualifier.as_bytes()),
        value,
        timestamp: Some(TS),
    }
}

/// What a careful person writes by hand for this struct.
fn hand_encode(p: &Profile) -> RowMutation {
    let mut mutations = Vec::with_capacity(10);
    mutations.push(put("name", Bytes::copy_from_slice(p.name.as_bytes())));
    mutations.push(put("email", Bytes::copy_from_slice(p.email.as_bytes())));
    mutations.push(put("age", Bytes::copy_from_slice(&p.age.to_be_bytes())));
    mutations.push(put("score", Bytes::copy_from_slice(&p.score.to_be_bytes())));
    mutations.push(put("active", Bytes::from_static(if p.active { &[0xFF] } else { &[0] })));
    match &p.city {
        Some(city) => mutations.push(put("city", Bytes::copy_from_slice(city.as_bytes()))),
        None => mutations.push(Mutation::DeleteColumn {
            family: Bytes::from_static(b"p"),
            qualifier: Bytes::from_static(b"city"),
            up_to: Some(TS),
        }),
    }
    mutations.push(put("created", Bytes::copy_from_slice(&p.created.to_be_bytes())));
    mutations.push(put("visits", Bytes::copy_from_slice(&p.visits.to_be_bytes())));
    mutations.push(put("tag", Bytes::copy_from_slice(p.tag.as_bytes())));
    mutations.push(put("bio", Bytes::copy_from_slice(p.bio.as_bytes())));
    RowMutation::with(Bytes::copy_from_slice(&p.id.to_be_bytes()), mutations)
}

fn hand_decode(row: &RowResult) -> Profile {
    let cell = |q: &str| -> Option<&Bytes> { row.cells.iter().find(|c| c.qualifier == q.as_bytes()).map(|c| &c.value) };
    let text = |q: &str| String::from_utf8(cell(q).unwrap().to_vec()).unwrap();
    let array = |q: &str| -> [u8; 8] { cell(q).unwrap()[..].try_into().unwrap() };
    Profile {
        id: u64::from_be_bytes(row.row[..].try_into().unwrap()),
        name: text("name"),
        email: text("email"),
        age: u32::from_be_bytes(cell("age").unwrap()[..].try_into().unwrap()),
        score: f64::from_be_bytes(array("score")),
        active: cell("active").unwrap()[0] != 0,
        city: cell("city").map(|c| String::from_utf8(c.to_vec()).unwrap()),
        created: i64::from_be_bytes(array("created")),
        visits: i64::from_be_bytes(array("visits")),
        tag: text("tag"),
        bio: text("bio"),
    }
}

/// The row as a store returns it: cells sorted by qualifier.
fn stored(m: &RowMutation) -> RowResult {
    let mut cells: Vec<Cell> = m
        .mutations
        .iter()
        .filter_map(|x| match x {
            Mutation::Put {
                family,
                qualifier,
                value,
                ..
            } => Some(Cell::new(family.clone(), qualifier.clone(), 1, value.clone())),
            _ => None,
        })
        .collect();
    cells.sort_by(|a, b| a.qualifier.cmp(&b.qualifier));
    RowResult::new(m.row.clone(), cells)
}

fn row_codec(c: &mut Criterion) {
    let profile = sample();
    let (ours, theirs) = (hmap_encode(&profile), hand_encode(&profile));
    assert_eq!(ours, theirs, "both sides must write the same mutations");
    let row = stored(&ours);
    assert_eq!(hmap_decode(&row), profile);
    assert_eq!(hand_decode(&row), profile);

    let mut group = c.benchmark_group("encode_10_field_struct");
    group.bench_function("hmap", |b| b.iter(|| hmap_encode(black_box(&profile))));
    group.bench_function("hand_written", |b| b.iter(|| hand_encode(black_box(&profile))));
    group.finish();

    let mut group = c.benchmark_group("decode_10_field_row");
    group.bench_function("hmap", |b| b.iter(|| hmap_decode(black_box(&row))));
    group.bench_function("hand_written", |b| b.iter(|| hand_decode(black_box(&row))));
    group.finish();
}

criterion_group!(benches, row_codec);
criterion_main!(benches);
