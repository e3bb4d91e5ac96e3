//! # rapid-rs: the HTTP edge and the binary
//!
//! A thin layer over the engine crate `rapid-actors`: configuration, routes, authentication
//! middleware, permission extractors and error rendering.
//!
//! ## Layout
//! - [`admin`]: `rapid-rs admin`, commands on a data folder ([`admin_client`]: create-client).
//! - [`bench`]: `rapid-rs bench`, the concurrent-upload load tool.
//! - [`config`]: flags and environment variables (clap).
//! - [`connection`]: the HTTP/1 server: connection front (protocol errors, limits, timeouts),
//!   `Expect` preflight, closing after unread bodies.
//! - [`config`]: flags and environment variables (clap); [`config_limits`] the hostile-input bounds.
//! - [`client_addr`]: the client address (trusted proxies' `X-Forwarded-For`).
//! - [`origin`]: the origin links start with (`RAPID_PUBLIC_URL`, or the host trusted proxies
//!   forward).
//! - [`server`]: start-up (catalog, actors, bind) and graceful shutdown.
//! - [`auth`]: the authentication middleware (before any body is read) and `Authorized<Policy>`.
//! - [`file_modes`]: umask 0o077, data folder 0700 and secret files 0600, tightened at start.
//! - [`error`]: engine error kinds to HTTP statuses, in one match; JSON for every error.
//! - [`openapi`]: the OpenAPI document (`/api/openapi.json`) and the docs page (`/api/docs`).
//! - [`routes`]: one module per resource, one thin handler per endpoint.
//! - [`state`]: what handlers share.
//! - [`ops`]: operations: request ids and request logs, `/api/metrics`, `/api/ready`, graceful
//!   shutdown; [`config_ops`] their settings.
//! - [`upload`]: reading multipart file parts (bounded samples, streamed uploads).
//! - [`web`]: the web pages at `/` (sessions, CSRF, server-rendered HTML).

pub mod admin;
pub mod admin_client;
pub mod auth;
pub mod bench;
pub mod cli;
pub mod client_addr;
pub mod config;
pub mod config_limits;
pub mod config_ops;
pub mod connection;
pub mod error;
pub mod file_modes;
pub mod openapi;
pub mod ops;
pub mod origin;
pub mod routes;
pub mod server;
pub mod state;
pub mod upload;
pub mod web;
