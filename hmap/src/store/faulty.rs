//! A store wrapper that fails on purpose, to test what happens when a
//! multi-row operation is cut off half-way.

use std::future::Future;
use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;
use futures_util::StreamExt;

use super::{
    CheckAndMutate, FamilyChange, Get, Increment, Result, RowMutation, RowResult, RowStream, Scan, Store, StoreError,
};
use crate::schema::TableSchema;

/// Which calls a [`FaultyStore`] fails.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FaultPlan {
    /// None.
    Never,
    /// Only the `n`-th call (counting from 1).
    Call(u64),
    /// Every `n`-th call.
    Every(u64),
    /// Each call with this probability, from a seeded generator: the same
    /// seed fails the same calls.
    Random {
        /// The generator's seed.
        seed: u64,
        /// The chance of a fault, 0 to 1.
        probability: f64,
    },
}

/// When an injected fault strikes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultPoint {
    /// Before the call reaches the store: nothing is applied.
    Before,
    /// After the store applied it: the write happened, its acknowledgement
    /// is lost (as when a connection drops after the server committed).
    After,
}

#[derive(Debug)]
struct FaultState {
    plan: FaultPlan,
    calls: u64,
    rng: u64,
    faults: u64,
}

/// Wraps a store and fails some of its calls with
/// [`StoreError::Connection`], before or after applying them.
///
/// Random faults strike before or after at random too; a plan with a call
/// number strikes `after` for writes when [`FaultyStore::after`] is set.
/// Opening a scan is a call; with [`FaultyStore::in_scanners`], so is each
/// row a scanner fetches.
#[derive(Debug)]
pub struct FaultyStore<S> {
    inner: S,
    state: Mutex<FaultState>,
    after: bool,
    in_scanners: bool,
}

impl<S: Store> FaultyStore<S> {
    /// Wraps `inner` with a fault plan; numbered faults strike before the call.
    pub fn new(inner: S, plan: FaultPlan) -> Self {
        let seed = match plan {
            FaultPlan::Random { seed, .. } => seed,
            _ => 0,
        };
        FaultyStore {
            inner,
            state: Mutex::new(FaultState {
                plan,
                calls: 0,
                rng: seed ^ 0x9E37_79B9_7F4A_7C15,
                faults: 0,
            }),
            after: false,
            in_scanners: false,
        }
    }

    /// Numbered faults strike after the call was applied.
    pub fn after(mut self) -> Self {
        self.after = true;
        self
    }

    /// Each row a scanner fetches is a call too: a fault there ends the
    /// scanner with the error, as a scanner whose server went away does.
    pub fn in_scanners(mut self) -> Self {
        self.in_scanners = true;
        self
    }

    /// The store underneath, to look at the data without faults.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Changes the plan (the call count goes on).
    pub fn set_plan(&self, plan: FaultPlan) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let FaultPlan::Random { seed, .. } = plan {
            state.rng = seed ^ 0x9E37_79B9_7F4A_7C15;
        }
        state.plan = plan;
    }

    /// How many calls were made.
    pub fn calls(&self) -> u64 {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).calls
    }

    /// How many faults were injected.
    pub fn faults(&self) -> u64 {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).faults
    }

    /// Whether this call fails, and when.
    fn roll(&self) -> Option<FaultPoint> {
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        s.calls += 1;
        let numbered = if self.after {
            FaultPoint::After
        } else {
            FaultPoint::Before
        };
        let point = match s.plan {
            FaultPlan::Never => None,
            FaultPlan::Call(n) => (s.calls == n).then_some(numbered),
            FaultPlan::Every(n) => (n > 0 && s.calls.is_multiple_of(n)).then_some(numbered),
            FaultPlan::Random { probability, .. } => {
                // xorshift64*: small, seedable, good enough to pick calls.
                let mut x = s.rng;
                x ^= x >> 12;
                x ^= x << 25;
                x ^= x >> 27;
                s.rng = x;
                let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
                let unit = (r >> 11) as f64 / (1u64 << 53) as f64;
                (unit < probability).then_some(if r & 1 == 0 {
                    FaultPoint::Before
                } else {
                    FaultPoint::After
                })
            }
        };
        if point.is_some() {
            s.faults += 1;
        }
        point
    }

    fn fault(&self, point: FaultPoint, operation: &str) -> StoreError {
        StoreError::Connection {
            endpoint: "faulty-store".into(),
            message: format!(
                "injected fault in {operation} ({})",
                match point {
                    FaultPoint::Before => "before it was applied",
                    FaultPoint::After => "after it was applied",
                }
            ),
            cause: None,
        }
    }

    /// Runs a call under the plan.
    async fn call<T>(&self, operation: &str, call: impl Future<Output = Result<T>>) -> Result<T> {
        match self.roll() {
            None => call.await,
            Some(FaultPoint::Before) => Err(self.fault(FaultPoint::Before, operation)),
            Some(FaultPoint::After) => {
                call.await?;
                Err(self.fault(FaultPoint::After, operation))
            }
        }
    }
}

#[async_trait]
impl<S: Store> Store for FaultyStore<S> {
    async fn create_table(&self, schema: &TableSchema) -> Result<()> {
        self.call("create_table", self.inner.create_table(schema)).await
    }
    async fn delete_table(&self, table: &str) -> Result<()> {
        self.call("delete_table", self.inner.delete_table(table)).await
    }
    async fn truncate_table(&self, table: &str) -> Result<()> {
        self.call("truncate_table", self.inner.truncate_table(table)).await
    }
    async fn alter_table(&self, table: &str, change: &FamilyChange) -> Result<()> {
        self.call("alter_table", self.inner.alter_table(table, change)).await
    }
    async fn table_exists(&self, table: &str) -> Result<bool> {
        self.call("table_exists", self.inner.table_exists(table)).await
    }
    async fn list_tables(&self) -> Result<Vec<String>> {
        self.call("list_tables", self.inner.list_tables()).await
    }
    async fn describe_table(&self, table: &str) -> Result<TableSchema> {
        self.call("describe_table", self.inner.describe_table(table)).await
    }
    async fn get(&self, table: &str, get: &Get) -> Result<Option<RowResult>> {
        self.call("get", self.inner.get(table, get)).await
    }
    async fn get_many(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<RowResult>>> {
        self.call("get_many", self.inner.get_many(table, gets)).await
    }
    async fn get_each(&self, table: &str, gets: &[Get]) -> Result<Vec<Result<Option<RowResult>>>> {
        self.call("get_each", self.inner.get_each(table, gets)).await
    }
    async fn mutate(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        self.call("mutate", self.inner.mutate(table, rows)).await
    }
    /// A fault before fails the call; a fault after leaves every row
    /// unknown (the rows were written, their answer lost).
    async fn mutate_each(&self, table: &str, rows: &[RowMutation]) -> Result<super::BatchOutcome> {
        match self.roll() {
            None => self.inner.mutate_each(table, rows).await,
            Some(FaultPoint::Before) => Err(self.fault(FaultPoint::Before, "mutate_each")),
            Some(FaultPoint::After) => {
                self.inner.mutate_each(table, rows).await?;
                Ok(rows
                    .iter()
                    .map(|_| super::RowOutcome::Unknown(self.fault(FaultPoint::After, "mutate_each")))
                    .collect())
            }
        }
    }
    async fn scan<'a>(&'a self, table: &str, scan: &Scan) -> Result<RowStream<'a>> {
        let inner = match self.roll() {
            Some(point) => return Err(self.fault(point, "scan")),
            None => self.inner.scan(table, scan).await?,
        };
        if !self.in_scanners {
            return Ok(inner);
        }
        // Each row the scanner hands out rolls the dice; a fault ends the scan.
        let rows = futures_util::stream::unfold(Some(inner), move |scanner| async move {
            let mut scanner = scanner?;
            if let Some(point) = self.roll() {
                return Some((Err(self.fault(point, "a scanner's next rows")), None));
            }
            let row = scanner.next().await?;
            Some((row, Some(scanner)))
        });
        Ok(Box::pin(rows.fuse()))
    }
    async fn check_and_mutate(&self, table: &str, op: &CheckAndMutate) -> Result<bool> {
        self.call("check_and_mutate", self.inner.check_and_mutate(table, op))
            .await
    }
    async fn increment(&self, table: &str, op: &Increment) -> Result<Vec<i64>> {
        self.call("increment", self.inner.increment(table, op)).await
    }
    async fn append(&self, table: &str, op: &crate::store::Append) -> Result<RowResult> {
        self.call("append", self.inner.append(table, op)).await
    }

    fn forget_schema(&self, table: &str) {
        self.inner.forget_schema(table);
    }
    fn kept_family_options(&self) -> &'static [crate::schema::FamilyOption] {
        self.inner.kept_family_options()
    }
}
