//! HTTP integration tests: each starts the real `rapid-rs` binary on a free port.

mod stored;
mod support;

mod auth_tokens;
mod bench_tool;
mod decode_bombs;
mod durability;
mod errors;
mod file_modes;
mod generate;
mod hostile_http;
mod large_queries;
mod layered_permissions;
mod listing_info;
mod openapi;
mod parity;
mod permissions_matrix;
mod protected_domains;
mod pyarrow_readback;
mod queries;
mod query_functions;
mod query_isolation;
mod query_limits;
mod query_semantics;
mod restart;
mod schemas;
mod secrets;
mod signin_throttle;
mod subjects;
mod uploads;
mod uploads_concurrency;
mod uploads_recovery;
mod uploads_unique;
mod uploads_validation;
mod web_pages;
