// `<` on a signed number: its big-endian two's complement puts negatives
// after positives, so HBase's byte comparison would order it wrongly.
use hmap::{HTable, Where};

#[derive(HTable)]
#[hmap(table = "account", family(name = "a"))]
struct Account {
    #[hmap(key)]
    id: u64,
    balance: i64,
    #[hmap(text)]
    rank: u32,
}

fn main() {
    let _overdrawn: Where<Account> = Account::BALANCE.less_than(0);
    let _top: Where<Account> = Account::RANK.at_most(10u32);
    let _zero: Where<Account> = Account::BALANCE.equals(0);
}
