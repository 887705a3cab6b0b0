//! Dynamic columns with a codec for the map's keys (the qualifiers) and one
//! for its values: `#[hmap(dynamic(key = "...", value = "..."))]`.

use std::collections::BTreeMap;

use hmap::store::{Get, MemoryStore, Store};
use hmap::{HTable, Table};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Sighting {
    place: String,
    count: u32,
}

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(
    table = "animal",
    family(name = "child"),
    family(name = "bin"),
    family(name = "seen")
)]
struct Animal {
    #[hmap(key)]
    id: u32,
    /// child:7=reddog, the id as text.
    #[hmap(family = "child", dynamic(key = "text"))]
    children: BTreeMap<u32, String>,
    /// bin:\x00\x00\x00\x07=reddog, the default: the id as a Java int.
    #[hmap(family = "bin", dynamic)]
    children_binary: BTreeMap<u32, String>,
    /// seen:2024=<json>, text keys and JSON values.
    #[hmap(family = "seen", dynamic(key = "text", value = "json"))]
    seen: BTreeMap<u16, Sighting>,
}

fn dog() -> Animal {
    Animal {
        id: 4,
        children: BTreeMap::from([(7, "reddog".into()), (10, "blackdog".into())]),
        children_binary: BTreeMap::from([(7, "reddog".into())]),
        seen: BTreeMap::from([(
            2024,
            Sighting {
                place: "north".into(),
                count: 3,
            },
        )]),
    }
}

/// A store holding the table with `dog()` in it.
async fn store_with_dog() -> MemoryStore {
    let store = MemoryStore::new();
    let animals = Table::<Animal, _>::new(&store);
    animals.create().await.unwrap();
    animals.put(&dog()).await.unwrap();
    store
}

#[tokio::test]
async fn keys_and_values_have_their_own_codecs() {
    let store = store_with_dog().await;
    let animals = Table::<Animal, _>::new(&store);

    let raw = store
        .get("animal", &Get::new(animals.row_key(4u32).unwrap()))
        .await
        .unwrap()
        .unwrap();
    let cells: Vec<(&[u8], &[u8], &[u8])> = raw
        .cells
        .iter()
        .map(|c| (&c.family[..], &c.qualifier[..], &c.value[..]))
        .collect();
    assert_eq!(
        cells,
        [
            (&b"bin"[..], &b"\x00\x00\x00\x07"[..], &b"reddog"[..]),
            // Text qualifiers sort as text: "10" before "7".
            (b"child", b"10", b"blackdog"),
            (b"child", b"7", b"reddog"),
            (b"seen", b"2024", br#"{"place":"north","count":3}"#),
        ]
    );
    // Read back into the maps, keys parsed from the text.
    assert_eq!(animals.get(4u32).await.unwrap(), Some(dog()));
}

#[tokio::test]
async fn a_text_qualifier_that_does_not_parse_names_the_column() {
    let store = store_with_dog().await;
    let animals = Table::<Animal, _>::new(&store);
    let row = animals.row_key(4u32).unwrap();
    store
        .mutate(
            "animal",
            &[hmap::store::RowMutation::new(row).put("child", "seven", "reddog")],
        )
        .await
        .unwrap();
    let err = animals.get(4u32).await.unwrap_err().to_string();
    assert!(err.contains("child:seven"), "{err}");
    assert!(err.contains("cannot parse \"seven\""), "{err}");
}
