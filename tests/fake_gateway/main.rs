//! The tests against fake Thrift gateways (no HBase), in one test binary so
//! that `cargo test` links hmap once for them all rather than once a file:
//! each module is what was a test file of its own.

#[path = "../support/fake_gateway.rs"]
mod fake;

mod blocking_in_runtime;
mod cancellation;
mod thrift_fake_gateway;
mod thrift_framed;
mod thrift_http;
