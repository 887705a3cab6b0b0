use hmap::HTable;

#[derive(HTable)]
#[hmap(table = "note")]
struct Note {
    #[hmap(key)]
    id: u64,
    title: String,
    body: String,
}

fn main() {}
