//! NativeStore's retry policy, which every call shares (gets, mutations,
//! batches, scans, `hbase:meta` lookups, the master's admin calls): what a
//! failed try means, how long to pause before the next, and what to say
//! when the deadline ends the waiting.
//!
//! The model is HBase's Java client (`AsyncRpcRetryingCaller`,
//! `ClientExceptionsUtil`, `ConnectionUtils.getPauseTime`): a call to a
//! region whose server is gone, stopping, starting or no longer serving it
//! waits, pausing `pause × RETRY_BACKOFF[try]` with jitter, for the region
//! to be served again, finds its new place through `hbase:meta`, and
//! carries on. Two things differ, both on purpose:
//! - the call's deadline ends the waiting, not a count of tries (the Java
//!   client stops after 15 retries or its operation timeout, whichever
//!   comes first);
//! - a pause is at most [`RetryPolicy::max_pause`] (1 s), where HBase's
//!   table grows to 20 s: a caller waiting for a dead server's regions
//!   then notices within about a second that they are served again, where
//!   the Java client may sleep up to 10 s more.
//!
//! What a failed try means ([`Retry`]):
//! - `NotServingRegionException`, a region not found in `hbase:meta` yet:
//!   the cached location is stale; look it up again after a pause.
//! - `RegionMovedException`: the region is on the server it names; cache
//!   that and try there at once.
//! - `RegionOpeningException`: the region is opening where it is; pause.
//! - a refused connection, a broken one, `RegionServerStoppedException`,
//!   `RegionServerAbortedException`, `ServerNotRunningYetException`: the
//!   server is gone (or restarted with no regions yet): forget every
//!   region cached on it, look up again after a pause. A server that
//!   refused a connection is not dialled again for
//!   [`RetryPolicy::failed_server_expiry`] (HBase's failed-servers list).
//! - `RegionTooBusyException`, `CallQueueTooBigException`,
//!   `CallDroppedException`, `PleaseHoldException`,
//!   `RpcThrottlingException`: busy; pause (the overloaded pause for the
//!   server's own overload), and try the same place.
//! - `RetryImmediatelyException`, `MultiActionResultTooLarge`: try again
//!   at once.
//! - anything else: give up, with the server's error.
//!
//! A try whose request may have reached the server (the connection broke
//! after it was sent) is tried again only if applying it twice does no
//! harm ([`Idempotence`]): reads, puts, deletes up to a time, increments
//! (which carry nonces, so that the server applies a repeat once). A
//! check-and-mutate or a delete of the newest version is not: its error
//! says that it may have been applied.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::error::{ExceptionKind, NativeError};
use crate::store::metrics;

/// HBase's backoff table (`HConstants.RETRY_BACKOFF`): try `n`'s pause is
/// the base pause times `RETRY_BACKOFF[min(n, 12)]`.
pub const RETRY_BACKOFF: [u32; 13] = [1, 2, 3, 5, 10, 20, 40, 100, 100, 100, 100, 200, 200];

/// The share of a pause added at random, so that callers waiting on one
/// region do not all come back at the same moment. HBase adds at most 1 %;
/// hmap's pauses stop growing at a second, so it spreads them wider.
const JITTER: f64 = 0.1;

/// Tries a call makes at once when told to try again at once (or where a
/// region moved): after them, the usual pause.
const IMMEDIATE_TRIES: u32 = 3;

/// How NativeStore paces its retries ([`NativeConfig::retry`](super::NativeConfig::retry)).
/// The defaults are HBase's client defaults, with pauses capped at 1 s.
///
/// ```
/// use std::time::Duration;
/// use hmap::store::native::{NativeConfig, RetryPolicy};
///
/// let policy = RetryPolicy::default().pause(Duration::from_millis(50)).max_pause(Duration::from_millis(500));
/// let config = NativeConfig::new(["127.0.0.1:16000"]).retry(policy);
/// assert_eq!(config.retry.max_pause, Duration::from_millis(500));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// The base pause (`hbase.client.pause`, 100 ms).
    pub pause: Duration,
    /// The base pause after a server said it is overloaded
    /// (`CallQueueTooBigException`, `CallDroppedException`, or its
    /// overloaded flag; `hbase.client.pause.server.overloaded`, 100 ms).
    pub pause_overloaded: Duration,
    /// The longest pause (1 s).
    pub max_pause: Duration,
    /// How long a server that refused a connection is not dialled again:
    /// calls to it fail at once, as to a dead server, and look for its
    /// regions elsewhere (`hbase.ipc.client.failed.servers.expiry`, 2 s).
    pub failed_server_expiry: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            pause: Duration::from_millis(100),
            pause_overloaded: Duration::from_millis(100),
            max_pause: Duration::from_secs(1),
            failed_server_expiry: Duration::from_secs(2),
        }
    }
}

impl RetryPolicy {
    /// Sets the base pause.
    pub fn pause(mut self, pause: Duration) -> Self {
        self.pause = pause;
        self
    }

    /// Sets the base pause after a server said it is overloaded.
    pub fn pause_overloaded(mut self, pause: Duration) -> Self {
        self.pause_overloaded = pause;
        self
    }

    /// Sets the longest pause.
    pub fn max_pause(mut self, pause: Duration) -> Self {
        self.max_pause = pause;
        self
    }

    /// Sets how long a server that refused a connection is not dialled.
    pub fn failed_server_expiry(mut self, expiry: Duration) -> Self {
        self.failed_server_expiry = expiry;
        self
    }

    /// The pause before try `tries + 1`, without jitter.
    pub fn pause_after(&self, tries: u32, overloaded: bool) -> Duration {
        let base = if overloaded { self.pause_overloaded } else { self.pause };
        let step = RETRY_BACKOFF[(tries as usize).min(RETRY_BACKOFF.len() - 1)];
        base.saturating_mul(step).min(self.max_pause)
    }
}

/// Whether a call may be sent again after a try that may have reached the
/// server (its connection broke once the request was sent).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Idempotence {
    /// Applying it twice does no harm, or the server recognises the repeat
    /// by its nonce: reads, puts, deletes up to a time, increments.
    Safe,
    /// Applying it twice may differ from once: a check-and-mutate (a
    /// repeat after success answers "not applied"), a delete of a column's
    /// newest version (a repeat deletes the one below).
    Unsafe,
}

/// Whether a row's changes may be applied twice: all but a delete of a
/// column's newest version (`DeleteCell` without a timestamp), which a
/// repeat would apply to the version below.
pub(super) fn row_idempotence(row: &crate::store::RowMutation) -> Idempotence {
    let newest_deleted = row
        .mutations
        .iter()
        .any(|m| matches!(m, crate::store::Mutation::DeleteCell { timestamp: None, .. }));
    if newest_deleted {
        Idempotence::Unsafe
    } else {
        Idempotence::Safe
    }
}

/// What to do after a failed try.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Retry {
    /// The region's cached location is stale: forget it, look it up again
    /// after a pause.
    Relocate,
    /// The server is gone, stopping or starting: forget every region cached
    /// on it, look up again after a pause.
    ServerGone,
    /// The region moved to this server (`host:port`): try there at once.
    MovedTo(String),
    /// The server is busy: pause (longer when it says it is overloaded),
    /// then try the same place.
    Wait {
        /// The server said it is overloaded.
        overloaded: bool,
    },
    /// Try again at once.
    Now,
    /// Give up.
    No,
}

impl Retry {
    /// Whether the next try waits a pause first (not after an answer
    /// that says to try again at once, or where the region moved to).
    pub(super) fn pauses(&self) -> bool {
        !matches!(self, Retry::Now | Retry::MovedTo(_))
    }
}

/// What a failed try means for the call (see the module's docs).
pub(super) fn retry_kind(error: &NativeError, idempotence: Idempotence) -> Retry {
    match error {
        NativeError::Remote(e) => match e.kind {
            ExceptionKind::RegionMoved => match moved_to(&e.message) {
                Some(server) => Retry::MovedTo(server),
                None => Retry::Relocate,
            },
            ExceptionKind::NotServingRegion => Retry::Relocate,
            ExceptionKind::RegionOpening => Retry::Wait { overloaded: false },
            kind if kind.is_server_gone() => Retry::ServerGone,
            kind if kind.is_retry_now() => Retry::Now,
            kind if kind.is_busy() => Retry::Wait {
                overloaded: e.server_overloaded
                    || matches!(kind, ExceptionKind::CallQueueTooBig | ExceptionKind::CallDropped),
            },
            _ => Retry::No,
        },
        NativeError::NoRegion { .. } => Retry::Relocate,
        // A dial that found nobody (`connect_timeout` passed: a host that
        // is down answers nothing at all) sent nothing either.
        NativeError::Connect { .. }
        | NativeError::Closed { sent: false, .. }
        | NativeError::Timeout { method: "connect", .. } => Retry::ServerGone,
        NativeError::Closed { sent: true, .. } if idempotence == Idempotence::Safe => Retry::ServerGone,
        _ => Retry::No,
    }
}

/// Whether a failed try may have been applied: its request may have
/// reached the server and no answer said what became of it.
pub(super) fn maybe_applied(error: &NativeError) -> bool {
    match error {
        NativeError::Timeout { method, .. } => *method != "connect",
        NativeError::Closed { sent, .. } => *sent,
        NativeError::Decode { .. } => true,
        _ => false,
    }
}

/// Whether `server` failed to be dialled (refused, or no answer within
/// `connect_timeout`): it goes on the failed-servers list.
pub(super) fn dial_failed(error: &NativeError) -> bool {
    matches!(
        error,
        NativeError::Connect { .. } | NativeError::Timeout { method: "connect", .. }
    )
}

/// The server a `RegionMovedException` names, `host:port`: its message is
/// `Region moved to: hostname=H port=P startCode=S. As of locationSeqNum=N.`
/// (`RegionMovedException.getMessage`).
pub(super) fn moved_to(message: &str) -> Option<String> {
    let rest = message.split_once("hostname=")?.1;
    let (host, rest) = rest.split_once(' ')?;
    let port = rest.strip_prefix("port=")?;
    let port: u16 = port.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()?;
    (!host.is_empty()).then(|| format!("{host}:{port}"))
}

/// The reason label of a retry after `error` (see [`crate::store::metrics`]).
fn retry_reason(error: &NativeError) -> &'static str {
    match error {
        NativeError::Remote(e) if e.kind.is_region_moved() => "region_moved",
        NativeError::Remote(e) if e.kind.is_server_gone() => "server_gone",
        NativeError::Remote(e) if e.kind.is_busy() => "server_busy",
        NativeError::Remote(e) if e.kind.is_scanner_lost() => "scanner_lost",
        NativeError::Remote(_) => "server",
        NativeError::NoRegion { .. } => "no_region",
        NativeError::Connect { .. } => "connect",
        NativeError::Closed { .. } => "connection_closed",
        NativeError::Timeout { .. } => "timeout",
        _ => "other",
    }
}

/// A call's deadline and the tries within it.
#[derive(Debug)]
pub(super) struct Attempts {
    started: Instant,
    deadline: Instant,
    policy: RetryPolicy,
    /// Tries that failed so far.
    tries: u32,
    /// A failed try may have been applied.
    maybe_applied: bool,
    /// What the call waits for, and what its last failed try met, for the
    /// deadline's error.
    waiting_for: String,
    last: Option<(String, String)>,
}

impl Attempts {
    pub(super) fn new(timeout: Duration, policy: RetryPolicy) -> Self {
        let started = Instant::now();
        Attempts {
            started,
            deadline: started + timeout,
            policy,
            tries: 0,
            maybe_applied: false,
            waiting_for: String::new(),
            last: None,
        }
    }

    /// The time left, or the deadline's error.
    pub(super) fn remaining(&self, endpoint: &str, method: &'static str) -> Result<Duration, NativeError> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(self.expired(endpoint, method));
        }
        Ok(left)
    }

    /// When the call must be done by.
    pub(super) fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Notes what the call waits for while it retries (the region of a
    /// row, a server), for the deadline's error.
    pub(super) fn waiting_for(&mut self, what: impl FnOnce() -> String) {
        if self.waiting_for.is_empty() {
            self.waiting_for = what();
        }
    }

    /// The error of a call whose deadline passed: [`NativeError::Unavailable`]
    /// when no try can have been applied, else a [`NativeError::Timeout`]
    /// that says an earlier try may have been.
    pub(super) fn expired(&self, endpoint: &str, method: &'static str) -> NativeError {
        let elapsed = self.started.elapsed();
        let waiting_for = match self.waiting_for.as_str() {
            "" => "the cluster to serve it".to_string(),
            what => what.to_string(),
        };
        let Some((last_server, last)) = &self.last else {
            return NativeError::Timeout {
                endpoint: endpoint.to_string(),
                method,
                elapsed,
                waiting_for: "no time left to call it".to_string(),
            };
        };
        let endpoint = if endpoint.is_empty() { last_server } else { endpoint };
        if self.maybe_applied {
            return NativeError::Timeout {
                endpoint: endpoint.to_string(),
                method,
                elapsed,
                waiting_for: format!(
                    "waiting for {waiting_for} after {} tries, one of which may have been applied; the last: {last}",
                    self.tries
                ),
            };
        }
        NativeError::Unavailable {
            endpoint: endpoint.to_string(),
            method,
            elapsed,
            tries: self.tries,
            waiting_for,
            last: last.clone(),
        }
    }

    /// Notes a failed try on `server`, then pauses as `retry` asks, if
    /// the deadline leaves room; otherwise returns the deadline's error
    /// ([`expired`](Self::expired)).
    pub(super) async fn back_off(
        &mut self,
        error: NativeError,
        retry: &Retry,
        server: &str,
        method: &'static str,
    ) -> Result<(), NativeError> {
        metrics::retry("native", retry_reason(&error));
        self.maybe_applied |= maybe_applied(&error);
        // At once, the first few times a server says so: one that keeps
        // saying so is not called in a tight loop.
        let pause = match retry {
            _ if !retry.pauses() && self.tries < IMMEDIATE_TRIES => Duration::ZERO,
            Retry::Wait { overloaded } => self.policy.pause_after(self.tries, *overloaded),
            _ => self.policy.pause_after(self.tries, false),
        };
        let pause = pause + pause.mul_f64(JITTER * unit_random());
        self.tries += 1;
        self.last = Some((server.to_string(), error.to_string()));
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left <= pause {
            // Sleep out the deadline's rest: a caller told "not served
            // within 30 s" expects the 30 s to have been tried.
            tokio::time::sleep(left).await;
            return Err(self.expired(server, method));
        }
        tokio::time::sleep(pause).await;
        Ok(())
    }
}

/// A number in `[0, 1)`, different from call to call.
fn unit_random() -> f64 {
    (super::random::random_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Servers that refused a connection lately: not dialled again until
/// their entry expires (HBase's `FailedServers`).
#[derive(Debug, Default)]
pub(super) struct FailedServers(Mutex<HashMap<String, Instant>>);

impl FailedServers {
    /// An error if `server` refused a connection less than `expiry` ago.
    pub(super) fn check(&self, server: &str, expiry: Duration) -> Result<(), NativeError> {
        let mut failed = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let Some(since) = failed.get(server) else {
            return Ok(());
        };
        let ago = since.elapsed();
        if ago >= expiry {
            failed.remove(server);
            return Ok(());
        }
        Err(NativeError::Connect {
            endpoint: server.to_string(),
            cause: std::io::Error::new(
                std::io::ErrorKind::ConnectionRefused,
                format!(
                    "not dialled: it refused a connection {:?} ago (servers that refuse are left alone for {:?})",
                    super::error::whole_ms(ago),
                    expiry
                ),
            ),
        })
    }

    /// Notes that `server` refused a connection.
    pub(super) fn note(&self, server: &str) {
        let mut failed = self.0.lock().unwrap_or_else(|e| e.into_inner());
        failed.insert(server.to_string(), Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::native::error::RemoteError;

    fn remote(class: &str, message: &str) -> NativeError {
        NativeError::Remote(RemoteError::new(class, format!("{class}: {message}")))
    }

    #[test]
    fn pauses_follow_hbases_table_up_to_the_cap() {
        let policy = RetryPolicy::default().max_pause(Duration::from_secs(60));
        let pauses: Vec<u64> = (0..14)
            .map(|n| policy.pause_after(n, false).as_millis() as u64)
            .collect();
        assert_eq!(
            pauses,
            [
                100, 200, 300, 500, 1000, 2000, 4000, 10000, 10000, 10000, 10000, 20000, 20000, 20000
            ]
        );
        let capped = RetryPolicy::default();
        assert_eq!(capped.pause_after(3, false), Duration::from_millis(500));
        assert_eq!(capped.pause_after(9, false), Duration::from_secs(1));
        let overloaded = RetryPolicy::default().pause_overloaded(Duration::from_millis(300));
        assert_eq!(overloaded.pause_after(1, true), Duration::from_millis(600));
    }

    #[test]
    fn every_not_here_not_yet_exception_is_retried_for_what_it_means() {
        use Idempotence::*;
        let cases = [
            ("org.apache.hadoop.hbase.NotServingRegionException", Retry::Relocate),
            (
                "org.apache.hadoop.hbase.exceptions.RegionOpeningException",
                Retry::Wait { overloaded: false },
            ),
            (
                "org.apache.hadoop.hbase.regionserver.RegionServerStoppedException",
                Retry::ServerGone,
            ),
            (
                "org.apache.hadoop.hbase.regionserver.RegionServerAbortedException",
                Retry::ServerGone,
            ),
            (
                "org.apache.hadoop.hbase.ipc.ServerNotRunningYetException",
                Retry::ServerGone,
            ),
            (
                "org.apache.hadoop.hbase.RegionTooBusyException",
                Retry::Wait { overloaded: false },
            ),
            (
                "org.apache.hadoop.hbase.CallQueueTooBigException",
                Retry::Wait { overloaded: true },
            ),
            (
                "org.apache.hadoop.hbase.CallDroppedException",
                Retry::Wait { overloaded: true },
            ),
            (
                "org.apache.hadoop.hbase.PleaseHoldException",
                Retry::Wait { overloaded: false },
            ),
            (
                "org.apache.hadoop.hbase.quotas.RpcThrottlingException",
                Retry::Wait { overloaded: false },
            ),
            ("org.apache.hadoop.hbase.RetryImmediatelyException", Retry::Now),
            ("org.apache.hadoop.hbase.MultiActionResultTooLarge", Retry::Now),
            ("org.apache.hadoop.hbase.DoNotRetryIOException", Retry::No),
            ("org.apache.hadoop.hbase.TableNotFoundException", Retry::No),
        ];
        for (class, retry) in cases {
            assert_eq!(retry_kind(&remote(class, "x"), Unsafe), retry, "{class}");
        }
        // RegionMovedException names the new server.
        let moved = remote(
            "org.apache.hadoop.hbase.exceptions.RegionMovedException",
            "Region moved to: hostname=rs2.example.com port=16020 startCode=1700000000000. As of locationSeqNum=42.",
        );
        assert_eq!(retry_kind(&moved, Safe), Retry::MovedTo("rs2.example.com:16020".into()));
        let garbled = remote("org.apache.hadoop.hbase.exceptions.RegionMovedException", "moved");
        assert_eq!(retry_kind(&garbled, Safe), Retry::Relocate);
    }

    #[test]
    fn a_broken_connection_is_retried_only_when_a_repeat_does_no_harm() {
        let sent = NativeError::Closed {
            endpoint: "h:1".into(),
            reason: "reset".into(),
            sent: true,
        };
        let unsent = NativeError::Closed {
            endpoint: "h:1".into(),
            reason: "reset".into(),
            sent: false,
        };
        let refused = NativeError::Connect {
            endpoint: "h:1".into(),
            cause: std::io::ErrorKind::ConnectionRefused.into(),
        };
        assert_eq!(retry_kind(&sent, Idempotence::Safe), Retry::ServerGone);
        assert_eq!(retry_kind(&sent, Idempotence::Unsafe), Retry::No);
        assert_eq!(retry_kind(&unsent, Idempotence::Unsafe), Retry::ServerGone);
        assert_eq!(retry_kind(&refused, Idempotence::Unsafe), Retry::ServerGone);
        let silent = NativeError::Timeout {
            endpoint: "h:1".into(),
            method: "connect",
            elapsed: Duration::from_secs(10),
            waiting_for: "connecting: the TCP connection".into(),
        };
        assert_eq!(retry_kind(&silent, Idempotence::Unsafe), Retry::ServerGone);
        assert!(dial_failed(&silent) && dial_failed(&refused) && !dial_failed(&sent));
        assert!(!maybe_applied(&silent));
        assert!(maybe_applied(&sent) && !maybe_applied(&unsent) && !maybe_applied(&refused));
    }

    #[tokio::test]
    async fn the_deadline_says_what_was_waited_for_and_whether_a_try_may_have_applied() {
        let policy = RetryPolicy::default().pause(Duration::from_millis(5));
        let mut attempts = Attempts::new(Duration::from_millis(60), policy);
        attempts.waiting_for(|| "the region of row r in table t".to_string());
        let refused = || NativeError::Connect {
            endpoint: "h:1".into(),
            cause: std::io::ErrorKind::ConnectionRefused.into(),
        };
        let e = loop {
            if let Err(e) = attempts.back_off(refused(), &Retry::ServerGone, "h:1", "Mutate").await {
                break e;
            }
        };
        match &e {
            NativeError::Unavailable {
                endpoint,
                tries,
                waiting_for,
                last,
                elapsed,
                ..
            } => {
                assert_eq!(endpoint, "h:1");
                assert!(*tries >= 3, "{tries}");
                assert_eq!(waiting_for, "the region of row r in table t");
                assert!(last.contains("cannot connect to h:1"), "{last}");
                assert!(*elapsed >= Duration::from_millis(60), "{elapsed:?}");
            }
            other => panic!("{other}"),
        }
        let store = e.into_store("t", Some(b"r"), "mutate", "");
        assert!(!store.maybe_applied() && store.is_transient(), "{store}");

        let mut attempts = Attempts::new(Duration::from_millis(30), policy);
        let broken = || NativeError::Closed {
            endpoint: "h:1".into(),
            reason: "reset".into(),
            sent: true,
        };
        let e = loop {
            if let Err(e) = attempts.back_off(broken(), &Retry::ServerGone, "h:1", "Mutate").await {
                break e;
            }
        };
        assert!(matches!(e, NativeError::Timeout { .. }), "{e}");
        let store = e.into_store("t", Some(b"r"), "mutate", "");
        assert!(store.maybe_applied(), "{store}");
        assert!(store.to_string().contains("may have been applied"), "{store}");
    }

    #[test]
    fn a_failed_server_is_left_alone_until_its_entry_expires() {
        let failed = FailedServers::default();
        assert!(failed.check("h:1", Duration::from_secs(2)).is_ok());
        failed.note("h:1");
        let e = failed.check("h:1", Duration::from_secs(2)).expect_err("left alone");
        assert!(matches!(e, NativeError::Connect { .. }), "{e}");
        assert!(failed.check("h:2", Duration::from_secs(2)).is_ok());
        assert!(failed.check("h:1", Duration::ZERO).is_ok(), "expired");
        assert!(
            failed.check("h:1", Duration::from_secs(2)).is_ok(),
            "forgotten once expired"
        );
    }
}
