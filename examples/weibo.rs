//! A small weibo, designed as the seed article designs it:
//!
//! - `wb_user`: one row per user, `i:n` the name, `follow:<uid>=name` whom
//!   the user follows, `fans:<uid>=name` who follows the user: the two lists
//!   kept in sync as one many-to-many relation (the follower's side leads);
//! - `wb_post`: one row per post, keyed `<uid>_<Long.MAX_VALUE - millis>`,
//!   so a user's posts are one prefix scan, newest first;
//! - `wb_inbox`: one row per user, one column `cf:sq` kept at
//!   `VERSIONS => 1000`, a version per post of the people followed, written
//!   by a background fan-out when a post is made: the home timeline, newest
//!   first, is one get.
//!
//! Run with `cargo run --example weibo`: in memory, or on a real HBase
//! through its Thrift2 gateway with `HMAP_THRIFT=host:port` (start one with
//! `scripts/hbase/hbase start`; `HMAP_TABLE_PREFIX` prefixes the tables).

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, SecondsFormat, Utc};
use hmap::relation::{Delivery, FanOut, FanOutConfig, ManyToMany};
use hmap::store::Store;
use hmap::{Cursor, HTable, Query, Table, Versioned};
use hmap_suite::{ExampleResult, Rng};

#[derive(HTable, Debug, Clone, PartialEq, serde::Serialize)]
#[hmap(
    table = "wb_user",
    family(name = "i"),
    family(name = "follow"),
    family(name = "fans")
)]
pub struct User {
    #[hmap(key)]
    pub uid: String,
    #[hmap(family = "i", column = "n")]
    pub name: String,
    /// How many posts the user wrote: an atomic counter.
    #[hmap(family = "i", column = "pc", counter)]
    pub posts: i64,
    /// `follow:<uid>=name`
    #[hmap(family = "follow", dynamic, relation)]
    pub follows: BTreeMap<String, String>,
    /// `fans:<uid>=name`
    #[hmap(family = "fans", dynamic, relation)]
    pub fans: BTreeMap<String, String>,
}

#[derive(HTable, Debug, Clone, PartialEq, serde::Serialize)]
#[hmap(table = "wb_post", text_key, family(name = "p"))]
pub struct Post {
    #[hmap(key)]
    pub uid: String,
    /// Milliseconds, stored as `Long.MAX_VALUE - millis`: newest first.
    #[hmap(key, reverse_ts)]
    pub at: i64,
    #[hmap(column = "c")]
    pub content: String,
}

#[derive(HTable, Debug, Clone, PartialEq, serde::Serialize)]
#[hmap(table = "wb_inbox", family(name = "cf", versions = 1000))]
pub struct Inbox {
    #[hmap(key)]
    pub uid: String,
    /// One version per post of the people followed: its rowkey.
    #[hmap(versions)]
    pub sq: Vec<Versioned<String>>,
}

/// The application: three tables, the follow relation, the fan-out worker.
pub struct Weibo {
    follows: ManyToMany<User, User, Arc<dyn Store>>,
    posts: Table<Post, Arc<dyn Store>>,
    inboxes: Table<Inbox, Arc<dyn Store>>,
    fanout: FanOut,
    inbox: FanOutConfig,
    store: Arc<dyn Store>,
}

impl Weibo {
    /// Creates the tables and starts the fan-out worker.
    pub async fn open(store: Arc<dyn Store>) -> hmap::Result<Self> {
        let follows = ManyToMany::new(Arc::clone(&store), "follow", "fans")
            .with_labels(|u: &User| u.name.clone(), |u: &User| u.name.clone());
        let posts = Table::new(Arc::clone(&store));
        let inboxes = Table::new(Arc::clone(&store));
        follows.left().create_if_missing().await?;
        posts.create_if_missing().await?;
        inboxes.create_if_missing().await?;
        let inbox = FanOutConfig::new(Inbox::TABLE, "cf", "sq");
        let fanout = FanOut::start(Arc::clone(&store), inbox.clone())?;
        Ok(Weibo {
            follows,
            posts,
            inboxes,
            fanout,
            inbox,
            store,
        })
    }

    pub fn users(&self) -> &Table<User, Arc<dyn Store>> {
        self.follows.left()
    }

    pub async fn register(&self, uid: &str, name: &str) -> hmap::Result<()> {
        self.users()
            .put(&User {
                uid: uid.into(),
                name: name.into(),
                posts: 0,
                follows: BTreeMap::new(),
                fans: BTreeMap::new(),
            })
            .await
    }

    /// Many follows at once: one batched get per side checks that the
    /// users exist and reads their names, one call per side writes the
    /// lists.
    pub async fn follow_many(&self, pairs: &[(String, String)]) -> hmap::Result<()> {
        self.follows.link_many(pairs).await
    }

    /// Unfollows, and removes the unfollowed user's posts from the
    /// follower's inbox (after the queued deliveries are written). Returns
    /// how many posts it removed.
    pub async fn unfollow(&self, who: &str, whom: &str) -> hmap::Result<usize> {
        self.follows.unlink(who, whom).await?;
        self.fanout.flush().await?;
        let theirs = Post::key_schema()
            .encode_prefix(&(whom,))
            .map_err(|source| hmap::Error::Key {
                table: Post::TABLE,
                cause: source,
            })?;
        let inbox = self.inboxes.row_key(who)?;
        FanOut::remove_from_inbox(&*self.store, &self.inbox, inbox, |post| post.starts_with(&theirs)).await
    }

    /// Writes a post and queues it for the inboxes of the author's fans.
    pub async fn post(&self, uid: &str, at: i64, content: &str) -> hmap::Result<()> {
        let post = Post {
            uid: uid.into(),
            at,
            content: content.into(),
        };
        self.posts.put(&post).await?;
        self.users().increment(uid, User::POSTS, 1).await?;
        let key = self.posts.row_key_of(&post)?;
        let recipients = self
            .follows
            .lefts_of(uid)
            .await?
            .into_iter()
            .map(|(fan, _)| self.inboxes.row_key(fan))
            .collect::<hmap::Result<Vec<_>>>()?;
        self.fanout.deliver(Delivery::new(recipients, key, at)).await
    }

    /// Waits until every queued post is in its inboxes; returns how many
    /// were set aside as failed.
    pub async fn flush(&self) -> hmap::Result<usize> {
        self.fanout.flush().await
    }

    /// A page of a user's own posts, newest first.
    pub async fn own_posts(&self, uid: &str, limit: usize, cursor: Option<&Cursor>) -> hmap::Result<hmap::Page<Post>> {
        self.posts.page(Query::prefix(uid), limit, cursor).await
    }

    /// A page of a user's home timeline, newest first: posts older than
    /// `before` (the last page's last post time).
    pub async fn home(&self, uid: &str, limit: u32, before: Option<i64>) -> hmap::Result<Vec<Post>> {
        let inbox = self.inboxes.row_key(uid)?;
        let page = FanOut::read_timeline(&self.posts, &self.inbox, inbox, limit, before).await?;
        Ok(page.into_iter().map(|(_, post)| post).collect())
    }
}

/// The data set: users, who follows whom, and posts, the same on every run.
pub struct Dataset {
    pub users: Vec<(String, String)>,
    pub follows: Vec<(String, String)>,
    pub posts: Vec<(String, i64, String)>,
}

pub const START: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

pub fn dataset(seed: u64, users: usize, posts: usize) -> Dataset {
    let mut rng = Rng::new(seed);
    let first = ["Xiao", "Da", "Lao", "A", "Mei", "Jing", "Tian", "Yun"];
    let last = ["hong", "hei", "bai", "lan", "ming", "yu", "feng", "lin", "xue", "qing"];
    let users: Vec<(String, String)> = (1..=users)
        .map(|i| {
            let name = format!(
                "{}{}",
                first[rng.below(first.len() as u64) as usize],
                last[rng.below(last.len() as u64) as usize]
            );
            (format!("u{i:03}"), name)
        })
        .collect();
    let mut follows = Vec::new();
    for (uid, _) in &users {
        let count = 5 + rng.below(20);
        let mut picked = std::collections::BTreeSet::new();
        while picked.len() < count as usize {
            let other = &users[rng.below(users.len() as u64) as usize].0;
            if other != uid {
                picked.insert(other.clone());
            }
        }
        follows.extend(picked.into_iter().map(|o| (uid.clone(), o)));
    }
    let topics = [
        "the weather",
        "HBase rowkeys",
        "lunch",
        "a new phone",
        "the match",
        "a book",
        "the metro",
        "tea",
    ];
    let posts = (0..posts)
        .map(|n| {
            let author = users[rng.below(users.len() as u64) as usize].0.clone();
            let topic = topics[rng.below(topics.len() as u64) as usize];
            // One post every 37 seconds: distinct times, so distinct inbox versions.
            (author, START + n as i64 * 37_000, format!("post #{n} about {topic}"))
        })
        .collect();
    Dataset { users, follows, posts }
}

fn time(millis: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(millis)
        .map_or_else(String::new, |t| t.to_rfc3339_opts(SecondsFormat::Secs, true))
}

pub async fn run(store: Arc<dyn Store>, out: &mut dyn Write) -> ExampleResult {
    let weibo = Weibo::open(store).await?;
    let data = dataset(42, 300, 3000);
    // A run against tables an earlier run filled starts afresh: the data
    // set's posts keep their times, and the earlier run's removal of
    // u042's unfollowed posts left HBase delete markers at those times,
    // which would hide the same posts delivered again.
    if weibo.users().get(data.users[0].0.as_str()).await?.is_some() {
        weibo.users().truncate().await?;
        weibo.posts.truncate().await?;
        weibo.inboxes.truncate().await?;
        writeln!(out, "tables from an earlier run: truncated, to start afresh")?;
    }

    let clock = Instant::now();
    for (uid, name) in &data.users {
        weibo.register(uid, name).await?;
    }
    let registered = clock.elapsed();
    weibo.follow_many(&data.follows).await?;
    writeln!(
        out,
        "registered {} users with {} follows ({} ms: {} ms for the follows)",
        data.users.len(),
        data.follows.len(),
        clock.elapsed().as_millis(),
        (clock.elapsed() - registered).as_millis()
    )?;

    let clock = Instant::now();
    for (uid, at, content) in &data.posts {
        weibo.post(uid, *at, content).await?;
    }
    let posted = clock.elapsed();
    let failed = weibo.flush().await?;
    let mut delivered = 0;
    for (u, _) in &data.users {
        delivered += weibo.inboxes.get(u.as_str()).await?.map_or(0, |i| i.sq.len());
    }
    writeln!(
        out,
        "posted {} posts in {} ms, fanned out to {delivered} inbox entries in {} ms in all ({failed} failed)",
        data.posts.len(),
        posted.as_millis(),
        clock.elapsed().as_millis()
    )?;

    let me = "u042";
    let user = weibo.users().get(me).await?.ok_or("u042 is missing")?;
    writeln!(out)?;
    writeln!(
        out,
        "{me} ({}) follows {} users, has {} fans, wrote {} posts",
        user.name,
        user.follows.len(),
        user.fans.len(),
        user.posts
    )?;

    writeln!(out, "{me}'s own posts, newest first:")?;
    let first = weibo.own_posts(me, 3, None).await?;
    for p in &first.rows {
        writeln!(out, "  {} {}", time(p.at), p.content)?;
    }
    if let Some(cursor) = &first.next {
        writeln!(out, "  next page (cursor {cursor}):")?;
        for p in weibo.own_posts(me, 3, Some(cursor)).await?.rows {
            writeln!(out, "  {} {}", time(p.at), p.content)?;
        }
    }

    writeln!(out, "{me}'s home timeline, newest first:")?;
    let page = weibo.home(me, 5, None).await?;
    for p in &page {
        writeln!(out, "  {} {}: {}", time(p.at), p.uid, p.content)?;
    }
    if let Some(last) = page.last() {
        writeln!(out, "  next page:")?;
        for p in weibo.home(me, 5, Some(last.at)).await? {
            writeln!(out, "  {} {}: {}", time(p.at), p.uid, p.content)?;
        }
    }

    let whom = user.follows.keys().next().cloned().ok_or("u042 follows nobody")?;
    let removed = weibo.unfollow(me, &whom).await?;
    let after = weibo.users().get(me).await?.ok_or("u042 is missing")?;
    let them = weibo.users().get(whom.as_str()).await?.ok_or("followee is missing")?;
    writeln!(out)?;
    writeln!(
        out,
        "{me} unfollowed {whom}: now follows {}; {whom} no longer lists {me} as a fan: {}",
        after.follows.len(),
        !them.fans.contains_key(me)
    )?;
    let timeline = weibo.home(me, 1000, None).await?;
    writeln!(
        out,
        "removed {removed} of {whom}'s posts from {me}'s inbox; the timeline still shows {whom}: {}",
        timeline.iter().any(|p| p.uid == whom)
    )?;
    writeln!(out, "follow lists: {}", weibo.follows.verify().await?)?;
    Ok(())
}

#[allow(dead_code)] // the tests include this file and call `run`
fn main() {
    hmap_suite::run_async_example(run);
}
