//! # rapid-rs: the HTTP edge and the binary
//!
//! A thin layer over the engine crate `rapid-actors`: the API, the web pages, their shared
//! plumbing, and the commands of the binary.
//!
//! ## Floors
//! Each module imports only from its own floor or the floors below (`tests/module_graph.rs`
//! keeps this, with no import cycle between files), bottom first:
//! 1. Shared pieces: [`error`] (engine error kinds to HTTP statuses, JSON for every error),
//!    [`client_addr`] (trusted proxies' `X-Forwarded-For`), [`origin`] (the origin links start
//!    with), [`file_modes`] (umask 0o077, private data folder), [`answers`] (the shapes the API
//!    documents).
//! 2. Settings and what handlers share: [`config`] (every setting a flag and an environment
//!    variable), [`config_limits`] (hostile-input bounds), [`config_ops`], [`config_mcp`],
//!    [`state`].
//! 3. Plumbing: [`connection`] (the HTTP/1 server: connection front, `Expect` preflight,
//!    closing after unread bodies), [`auth`] (the authentication middleware, before any body is
//!    read, and the permission extractors), [`upload`] (multipart file parts), [`params`]
//!    (request parameters), [`ops`] (request ids and logs, metrics, readiness, graceful
//!    shutdown).
//! 4. Three fronts, siblings that never import each other: [`routes`] (the API under `/api`, one
//!    table, one thin handler per endpoint), [`web`] (the pages at `/`: sessions, CSRF,
//!    server-rendered HTML) and [`mcp`] (`/api/mcp`, the Model Context Protocol's tools).
//! 5. Assembly: [`cli`] (the command line), [`server`] (start-up, the public paths, graceful
//!    shutdown), [`side_listeners`] (the PostgreSQL and MCP listeners beside the main address),
//!    [`openapi`] (`/api/openapi.json`, `/api/docs`), [`admin`] and [`admin_client`]
//!    (`rapid-rs admin`), and the binary (`main.rs`; `rapid-rs bench` hands over to the load
//!    tool's own binary, `rapid-bench` from tools/bench).
//!
//! Which paths need no token is decided at assembly: the route table marks its public routes,
//! and `server` adds the API docs and the pages, so [`auth`] knows nothing of either front.

pub mod admin;
pub mod admin_client;
pub mod answers;
pub mod auth;
pub mod cli;
pub mod client_addr;
pub mod config;
pub mod config_limits;
pub mod config_mcp;
pub mod config_ops;
pub mod connection;
pub mod error;
pub mod file_modes;
pub mod mcp;
pub mod openapi;
pub mod ops;
pub mod origin;
pub mod params;
pub mod routes;
pub mod server;
pub mod side_listeners;
pub mod state;
pub mod upload;
pub mod web;
