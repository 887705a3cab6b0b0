use hmap::HTable;

// Names HBase refuses: each fails at compile time, at the name.
#[derive(HTable)]
#[hmap(table = "my table!", family(name = "f"))]
struct Spaced {
    #[hmap(key)]
    id: String,
}

#[derive(HTable)]
#[hmap(table = "zookeeper", family(name = "f"))]
struct Reserved {
    #[hmap(key)]
    id: String,
}

#[derive(HTable)]
#[hmap(table = "ns-1:users", family(name = "f"))]
struct DashedNamespace {
    #[hmap(key)]
    id: String,
}

#[derive(HTable)]
#[hmap(table = ".hidden", family(name = "f"))]
struct LeadingDot {
    #[hmap(key)]
    id: String,
}

// Legal: a namespace, and `-` and `.` after the first character.
#[derive(HTable)]
#[hmap(table = "app:user-events.v2", family(name = "f"))]
struct Legal {
    #[hmap(key)]
    id: String,
}

fn main() {}
