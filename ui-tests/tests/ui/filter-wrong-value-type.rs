// A typed filter takes the field's own type: `status` is a `String`, not a number.
use hmap::{HTable, Query, Where};

#[derive(HTable)]
#[hmap(table = "order", family(name = "o"))]
struct Order {
    #[hmap(key)]
    id: u64,
    status: String,
    cents: u64,
}

fn main() {
    let _paid: Where<Order> = Order::STATUS.equals(42);
    let _q = Query::all().filter(Order::CENTS.at_least("1000"));
}
