//! Long checks in batches: where one stands ([`Checkpoint`]), how it goes
//! ([`Progress`]) and how to run it ([`CheckOptions`]). A check reads its
//! tables a batch of rows at a time and, when it repairs, writes each
//! batch's fixes before it reads the next; so a check cut off (a crash,
//! Ctrl-C) resumes from the last checkpoint it reported, without redoing
//! what it did.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;

/// Where a batched check stands: the pass it is in (a relation checks one
/// table, then the other) and the last row it finished. Its text form
/// (`2:75303032` — the pass, then the row in hex) is what the operator CLI
/// prints and takes back with `--from`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    pass: u8,
    after: Bytes,
}

impl Checkpoint {
    pub(crate) fn new(pass: u8, after: Bytes) -> Self {
        Checkpoint { pass, after }
    }

    /// The pass, from 1.
    pub fn pass(&self) -> u8 {
        self.pass
    }

    /// The last row finished in that pass.
    pub fn after(&self) -> &[u8] {
        &self.after
    }

    /// Where pass `pass` starts when resuming from `from`: after its row if
    /// it is this pass, at the start if `from` is an earlier pass (or none),
    /// and `None` (skip the pass) if `from` is a later one.
    pub(crate) fn start_of(from: Option<&Checkpoint>, pass: u8) -> Option<Bytes> {
        match from {
            None => Some(Bytes::new()),
            Some(c) if c.pass < pass => Some(Bytes::new()),
            Some(c) if c.pass == pass => {
                // The first key after `after`: `after` followed by a zero byte.
                let mut next = c.after.to_vec();
                next.push(0);
                Some(Bytes::from(next))
            }
            Some(_) => None,
        }
    }
}

impl fmt::Display for Checkpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.pass)?;
        self.after.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl std::str::FromStr for Checkpoint {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("{s:?} is not a checkpoint (pass:hex, as a check prints it)");
        let (pass, hex) = s.split_once(':').ok_or_else(bad)?;
        let pass: u8 = pass.parse().map_err(|_| bad())?;
        if pass == 0 || !hex.len().is_multiple_of(2) || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
            return Err(bad());
        }
        let after = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(hex.get(i..i + 2).unwrap_or_default(), 16).map_err(|_| bad()))
            .collect::<Result<Vec<u8>, String>>()?;
        Ok(Checkpoint {
            pass,
            after: Bytes::from(after),
        })
    }
}

/// How a batched check is going, after each batch.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Progress {
    /// What the current pass reads (`"left rows"`, `"index entries"`...).
    pub pass: &'static str,
    /// Rows read so far in this run, all passes.
    pub rows: u64,
    /// Findings so far in this run.
    pub found: usize,
    /// Where to resume if the run stops now.
    pub checkpoint: Checkpoint,
}

/// What [`CheckOptions::progress`] calls.
type ProgressFn = Arc<dyn Fn(&Progress) + Send + Sync>;

/// Options of a batched check: [`CheckOptions::new`], then the builders.
#[derive(Clone)]
#[non_exhaustive]
pub struct CheckOptions {
    pub(crate) batch: usize,
    pub(crate) from: Option<Checkpoint>,
    pub(crate) progress: Option<ProgressFn>,
}

impl fmt::Debug for CheckOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckOptions")
            .field("batch", &self.batch)
            .field("from", &self.from)
            .finish_non_exhaustive()
    }
}

impl Default for CheckOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl CheckOptions {
    /// Batches of 1000 rows, from the start, reporting to no one.
    pub fn new() -> Self {
        CheckOptions {
            batch: 1000,
            from: None,
            progress: None,
        }
    }

    /// Rows read per batch (at least 1).
    pub fn batch(mut self, rows: usize) -> Self {
        self.batch = rows.max(1);
        self
    }

    /// Resume after this checkpoint.
    pub fn from(mut self, checkpoint: Checkpoint) -> Self {
        self.from = Some(checkpoint);
        self
    }

    /// Called after each batch.
    pub fn progress(mut self, report: impl Fn(&Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(report));
        self
    }

    pub(crate) fn report(&self, progress: &Progress) {
        if let Some(report) = &self.progress {
            report(progress);
        }
    }
}

/// The next batch of at most `size` rows of a stream; empty at its end.
pub(crate) async fn next_batch<S, T, E>(rows: &mut S, size: usize) -> Result<Vec<T>, E>
where
    S: futures_core::Stream<Item = Result<T, E>> + Unpin,
{
    use futures_util::StreamExt;
    let mut batch = Vec::new();
    while batch.len() < size {
        match rows.next().await {
            Some(row) => batch.push(row?),
            None => break,
        }
    }
    Ok(batch)
}
