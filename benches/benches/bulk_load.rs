//! Bulk loads of the same 10,000 rows into `MemoryStore`, side by side in
//! one run: the raw `Loader` with each field's bytes given by hand, the
//! typed `Table::loader` encoding rows of `T` through the derive's codecs,
//! and `Table::put_many` of the same rows. Run with
//! `cargo bench -p hmap-bench --bench bulk_load`.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use hmap::store::{Loader, MemoryStore};
use hmap::{HTable, Table};

const ROWS: u32 = 10_000;

#[derive(HTable, Debug, Clone)]
#[hmap(table = "order", family(name = "p"))]
struct Order {
    #[hmap(key)]
    id: u32,
    item: String,
    qty: u32,
    price: i64,
    note: String,
}

fn order(id: u32) -> Order {
    Order {
        id,
        item: format!("item-{id:06}"),
        qty: id % 9,
        price: i64::from(id) * 125,
        note: format!("deliver to door {}", id % 97),
    }
}

fn bulk_load(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let rows: Vec<Order> = (0..ROWS).map(order).collect();
    let fresh = || {
        runtime.block_on(async {
            let table = Table::<Order, _>::new(MemoryStore::new());
            table.create().await.unwrap();
            table
        })
    };
    let mut group = c.benchmark_group("bulk load 10k rows");
    group.throughput(Throughput::Elements(u64::from(ROWS)));
    group.sample_size(20);
    group.bench_function("raw Loader", |b| {
        b.iter_batched(
            fresh,
            |table| {
                runtime.block_on(async {
                    let mut loader = Loader::new(table.store(), "order");
                    for row in &rows {
                        loader
                            .row(row.id.to_be_bytes())
                            .put("p", "item", &row.item)
                            .put("p", "qty", row.qty.to_be_bytes())
                            .put("p", "price", row.price.to_be_bytes())
                            .put("p", "note", &row.note)
                            .end()
                            .await
                            .unwrap();
                    }
                    black_box(loader.finish().await.unwrap())
                })
            },
            BatchSize::PerIteration,
        );
    });
    group.bench_function("typed Table::loader", |b| {
        b.iter_batched(
            fresh,
            |table| {
                runtime.block_on(async {
                    let mut loader = table.loader();
                    for row in &rows {
                        loader.add(row).await.unwrap();
                    }
                    black_box(loader.finish().await.unwrap())
                })
            },
            BatchSize::PerIteration,
        );
    });
    group.bench_function("typed put_many", |b| {
        b.iter_batched(
            fresh,
            |table| runtime.block_on(async { table.put_many(black_box(&rows)).await.unwrap() }),
            BatchSize::PerIteration,
        );
    });
    group.finish();
}

criterion_group!(benches, bulk_load);
criterion_main!(benches);
