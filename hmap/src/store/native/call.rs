//! A call to the region of a row, with its retries: the region located
//! ([`regions`](super::regions)), the call sent, and each failed try
//! handled as the retry policy says ([`retry`](super::retry)): a region
//! that moved, a server gone, stopping or starting, a busy server
//! (HBase's pauses, capped at a second: [`RetryPolicy`](super::RetryPolicy)).
//! One deadline, [`NativeConfig::call_timeout`](super::NativeConfig::call_timeout),
//! covers locating the region, dialling, and every retry.

use super::client::NativeStore;
use super::connection::CallReply;
use super::error::NativeError;
use super::locate::{RegionLocation, Target};
use super::proto;
use super::retry::{Idempotence, retry_kind};

impl NativeStore {
    /// Calls `method` on the region of `target`, relocating and backing
    /// off as the retry policy says ([`super::retry`]), within one deadline.
    pub(super) async fn region_call<Req: prost::Message, Resp: super::bound::Reply + RegionReply>(
        &self,
        table: &str,
        target: Target<'_>,
        method: &'static str,
        idempotence: Idempotence,
        request: impl Fn(&RegionLocation) -> Req,
    ) -> Result<(RegionLocation, CallReply<Resp>), (NativeError, String)> {
        let mut attempts = self.attempts(crate::store::call_timeout(self.inner.config.call_timeout));
        loop {
            let region = self.locate_within(table, target, &mut attempts).await?;
            let left = attempts
                .remaining(&region.server, method)
                .map_err(|e| (e, region.server.clone()))?;
            let e = match self
                .call_server::<Resp>(&region.server, method, &request(&region), left)
                .await
            {
                Ok(reply) => match reply.message.exception() {
                    None => return Ok((region, reply)),
                    Some(e) => e,
                },
                Err(e) => e,
            };
            let retry = retry_kind(&e, idempotence);
            let waiting_for = || {
                format!(
                    "the region of {} in table `{table}` to be served (last on {})",
                    target.show(),
                    region.server
                )
            };
            let event = (method, "region call retried");
            self.retry_on(e, retry, &region, event, &mut attempts, waiting_for)
                .await?;
        }
    }
}

/// A reply that may carry its region's exception inside it, as a `Multi`'s
/// region action results do: a try that failed as much as one answered
/// with an exception.
pub(super) trait RegionReply {
    /// The exception inside the reply, if any.
    fn exception(&self) -> Option<NativeError> {
        None
    }
}

impl RegionReply for proto::GetResponse {}
impl RegionReply for proto::MutateResponse {}
impl RegionReply for proto::ScanResponse {}
impl RegionReply for proto::MultiResponse {
    fn exception(&self) -> Option<NativeError> {
        multi_error(self).err()
    }
}

/// The first exception of a `Multi` reply, if any.
fn multi_error(reply: &proto::MultiResponse) -> Result<(), NativeError> {
    for result in &reply.region_action_result {
        let exceptions = result
            .exception
            .iter()
            .chain(result.result_or_exception.iter().filter_map(|r| r.exception.as_ref()));
        if let Some(e) = exceptions.into_iter().next() {
            return Err(NativeError::Remote(super::error::RemoteError::from_pair(e)));
        }
    }
    Ok(())
}
