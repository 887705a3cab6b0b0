//! What goes with every call to Cloud Bigtable beside the message: an
//! OAuth2 access token (`authorization: Bearer`, from the `gcp_auth` crate,
//! which caches a token and fetches a new one 20 s before it expires), and
//! the routing header `x-goog-request-params` naming the table and app
//! profile, as Google's clients send it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;

use super::config::{BigtableConfig, BigtableCredentials};
use crate::store::{Result, StoreError};

/// The OAuth2 scope of the Data API.
pub(crate) const DATA_SCOPE: &str = "https://www.googleapis.com/auth/bigtable.data";
/// The OAuth2 scope of the Table Admin API.
pub(crate) const ADMIN_SCOPE: &str = "https://www.googleapis.com/auth/bigtable.admin.table";

/// The source of access tokens, if the store has credentials.
#[derive(Clone)]
pub(crate) struct Authorizer {
    provider: Option<Arc<dyn gcp_auth::TokenProvider>>,
    /// Named in errors.
    endpoint: String,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("credentials", &self.provider.is_some())
            .finish()
    }
}

impl Authorizer {
    /// The token source `config` names. Application-default credentials
    /// are looked for here, once, within `timeout` (the metadata server is
    /// asked only when nothing else is found); a key file is read and its
    /// key parsed.
    pub(crate) async fn new(config: &BigtableConfig, timeout: Duration) -> Result<Self> {
        let fail = |message: String, source: gcp_auth::Error| StoreError::Connection {
            endpoint: config.address.clone(),
            message,
            cause: Some(Box::new(source)),
        };
        let provider: Option<Arc<dyn gcp_auth::TokenProvider>> = match &config.credentials {
            BigtableCredentials::None => None,
            BigtableCredentials::ServiceAccountKeyFile(path) => Some(Arc::new(
                gcp_auth::CustomServiceAccount::from_file(path).map_err(|e| {
                    fail(
                        format!("the service account key file {} cannot be used: {e}", path.display()),
                        e,
                    )
                })?,
            )),
            BigtableCredentials::ApplicationDefault => {
                let found = tokio::time::timeout(timeout, gcp_auth::provider()).await;
                match found {
                    Ok(Ok(provider)) => Some(provider),
                    Ok(Err(e)) => {
                        return Err(fail(
                            format!(
                                "no application-default credentials: {e}; set GOOGLE_APPLICATION_CREDENTIALS \
                                 to a service account's key file, run `gcloud auth application-default login`, \
                                 or use BigtableCredentials::ServiceAccountKeyFile"
                            ),
                            e,
                        ));
                    }
                    Err(_) => {
                        return Err(StoreError::Connection {
                            endpoint: config.address.clone(),
                            message: format!(
                                "no application-default credentials found within {timeout:?} (the metadata \
                                 server did not answer); set GOOGLE_APPLICATION_CREDENTIALS"
                            ),
                            cause: None,
                        });
                    }
                }
            }
        };
        Ok(Authorizer {
            provider,
            endpoint: config.address.clone(),
        })
    }

    /// The `authorization` value for `scope`, within `timeout` (part of
    /// the call's deadline); `None` without credentials.
    pub(crate) async fn bearer(
        &self,
        scope: &'static str,
        table: &str,
        operation: &'static str,
        timeout: Duration,
    ) -> Result<Option<MetadataValue<Ascii>>> {
        let Some(provider) = &self.provider else {
            return Ok(None);
        };
        let started = Instant::now();
        let token = match tokio::time::timeout(timeout, provider.token(&[scope])).await {
            Ok(Ok(token)) => token,
            Ok(Err(e)) => {
                return Err(StoreError::Connection {
                    endpoint: self.endpoint.clone(),
                    message: format!(
                        "{operation}: no access token for scope {scope}: {e} (the credentials were refused, or \
                         their token endpoint could not be reached; gcp_auth logs its answer at WARN level)"
                    ),
                    cause: Some(Box::new(e)),
                });
            }
            Err(_) => {
                return Err(StoreError::Timeout {
                    table: table.into(),
                    operation,
                    elapsed: started.elapsed(),
                    detail: "waiting for an access token".into(),
                });
            }
        };
        MetadataValue::try_from(format!("Bearer {}", token.as_str()))
            .map(Some)
            .map_err(|_| StoreError::Connection {
                endpoint: self.endpoint.clone(),
                message: format!("{operation}: the access token holds bytes an HTTP header cannot carry"),
                cause: None,
            })
    }
}

/// The headers of one operation's calls, put on each by tonic.
#[derive(Clone, Debug, Default)]
pub(crate) struct Headers {
    authorization: Option<MetadataValue<Ascii>>,
    routing: Option<MetadataValue<Ascii>>,
}

impl Headers {
    /// `authorization` (if any) and the routing parameters `params`
    /// (`key`, value) as `x-goog-request-params`, each value
    /// percent-encoded.
    pub(crate) fn new(authorization: Option<MetadataValue<Ascii>>, params: &[(&str, &str)]) -> Self {
        let routing = params
            .iter()
            .filter(|(_, value)| !value.is_empty())
            .map(|(key, value)| format!("{key}={}", percent_encode(value)))
            .collect::<Vec<_>>()
            .join("&");
        Headers {
            authorization,
            // Only unreserved characters, `=` and `&`: always a valid value.
            routing: MetadataValue::try_from(routing).ok(),
        }
    }
}

impl Interceptor for Headers {
    fn call(&mut self, mut request: tonic::Request<()>) -> std::result::Result<tonic::Request<()>, tonic::Status> {
        let metadata = request.metadata_mut();
        if let Some(value) = &self.authorization {
            metadata.insert("authorization", value.clone());
        }
        if let Some(value) = &self.routing {
            metadata.insert("x-goog-request-params", value.clone());
        }
        Ok(request)
    }
}

/// `value` with every byte but RFC 3986's unreserved ones as `%XX`.
fn percent_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routing_parameters_are_percent_encoded() {
        let headers = Headers::new(
            None,
            &[
                ("table_name", "projects/p/instances/i/tables/ns:t"),
                ("app_profile_id", ""),
            ],
        );
        assert_eq!(
            headers.routing.expect("routing").to_str().expect("ascii"),
            "table_name=projects%2Fp%2Finstances%2Fi%2Ftables%2Fns%3At"
        );
        let both = Headers::new(None, &[("table_name", "a b"), ("app_profile_id", "batch")]);
        assert_eq!(
            both.routing.expect("routing").to_str().expect("ascii"),
            "table_name=a%20b&app_profile_id=batch"
        );
    }
}
