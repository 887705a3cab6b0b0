use hmap::HTable;

#[derive(HTable)]
#[hmap(salt(buckets = 16, by = [user]), family(name = "f"))]
struct Reading {
    #[hmap(key)]
    sensor: u32,
    value: f64,
}

fn main() {}
