use hmap::HTable;

#[derive(HTable)]
enum State {
    On,
    Off,
}

fn main() {}
