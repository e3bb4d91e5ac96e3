//! HTTP integration tests: each starts the real `rapid-rs` binary on a free port.

mod stored;
mod support;

mod auth_tokens;
mod bench_tool;
mod decode_bombs;
mod errors;
mod generate;
mod large_queries;
mod listing_info;
mod permissions_matrix;
mod protected_domains;
mod pyarrow_readback;
mod queries;
mod restart;
mod schemas;
mod secrets;
mod signin_throttle;
mod subjects;
mod uploads;
mod uploads_concurrency;
mod uploads_recovery;
mod uploads_validation;
