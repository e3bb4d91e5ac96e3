//! Prometheus metrics (the `prometheus` crate writes the text format). Counted as things happen:
//! requests and their latency by route template and status, uploads stored (rows, bytes),
//! uploads refused by validation. Read at each scrape: jobs by kind and status, query pools
//! (running, waiting, refused), upload commits pending in dataset actors' mailboxes, catalog size.
//!
//! Who may read them: `/api/metrics` needs a token of a subject holding any permission; with
//! `RAPID_METRICS_BIND` they are also served without a token on that separate address.

use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use actix_web::{web, HttpResponse};
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry, TextEncoder,
};
use rapid_actors::Error;

use crate::auth::{AnySubject, Authorized};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

/// The upload route, whose 202s and 422s are counted on their own.
const UPLOAD_ROUTE: &str = "/api/datasets/{layer}/{domain}/{dataset}";

struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    upload_rows: IntCounter,
    upload_bytes: IntCounter,
    validation_failures: IntCounter,
    jobs: IntGaugeVec,
    queries_running: IntGaugeVec,
    queries_waiting: IntGaugeVec,
    queries_refused: IntCounterVec,
    query_memory: IntGauge,
    /// Refusals already added to `queries_refused`, per pool (the engine keeps the totals).
    refused_seen: Mutex<[u64; 2]>,
    commit_queue: IntGauge,
    catalog: IntGaugeVec,
    catalog_file_bytes: IntGauge,
    compaction: IntCounterVec,
    compaction_running: IntGauge,
    /// The front's per-address budgets (`connection/budget.rs`).
    front_refusals: IntCounterVec,
    front_addresses: IntGauge,
    wire: super::metrics_wire::WireMetrics,
}

fn build() -> prometheus::Result<Metrics> {
    let registry = Registry::new_custom(Some("rapid".into()), None)?;
    let by_route = ["method", "route", "status"];
    let (queries_running, queries_waiting, queries_refused, query_memory) = query_gauges()?;
    let (compaction, compaction_running, front_refusals, front_addresses) = background_gauges()?;
    let m = Metrics {
        requests: IntCounterVec::new(
            Opts::new(
                "http_requests_total",
                "HTTP requests answered, by route template and status",
            ),
            &by_route,
        )?,
        latency: HistogramVec::new(
            HistogramOpts::new(
                "http_request_duration_seconds",
                "Time from a request's arrival to its answer's head, by route template and status",
            )
            .buckets(vec![
                0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
                300.0,
            ]),
            &by_route,
        )?,
        upload_rows: IntCounter::new("upload_rows_total", "Rows of uploads stored (job SUCCESS)")?,
        upload_bytes: IntCounter::new(
            "upload_bytes_total",
            "Bytes of uploaded files stored (job SUCCESS), as uploaded",
        )?,
        validation_failures: IntCounter::new(
            "upload_validation_failures_total",
            "Uploads refused because the file breaks the schema (422)",
        )?,
        jobs: IntGaugeVec::new(
            Opts::new(
                "jobs",
                "Jobs in the catalog by kind (UPLOAD, QUERY) and status",
            ),
            &["kind", "status"],
        )?,
        queries_running,
        queries_waiting,
        queries_refused,
        query_memory,
        refused_seen: Mutex::new([0; 2]),
        commit_queue: IntGauge::new(
            "upload_commits_pending",
            "Uploads handed to dataset actors and not yet committed (their mailboxes' depth)",
        )?,
        catalog: IntGaugeVec::new(
            Opts::new(
                "catalog_objects",
                "Catalog size: datasets, schema_versions, data_files, raw_files, stored_rows, \
                 stored_bytes (Parquet), subjects, retained_files and retained_bytes (files kept \
                 only for earlier commits)",
            ),
            &["object"],
        )?,
        catalog_file_bytes: IntGauge::new(
            "catalog_file_bytes",
            "Size of catalog.sqlite and its WAL on disk",
        )?,
        compaction,
        compaction_running,
        front_refusals,
        front_addresses,
        wire: super::metrics_wire::WireMetrics::new(&registry)?,
        registry,
    };
    register(&m)?;
    Ok(m)
}

/// The query engine's figures: slots by pool and the memory its queries hold.
fn query_gauges() -> prometheus::Result<(IntGaugeVec, IntGaugeVec, IntCounterVec, IntGauge)> {
    Ok((
        IntGaugeVec::new(
            Opts::new(
                "queries_running",
                "Queries holding a slot, by pool (sync, large)",
            ),
            &["pool"],
        )?,
        IntGaugeVec::new(
            Opts::new("queries_waiting", "Queries waiting for a slot, by pool"),
            &["pool"],
        )?,
        IntCounterVec::new(
            Opts::new(
                "queries_refused_total",
                "Queries refused (503) for want of a slot, by pool",
            ),
            &["pool"],
        )?,
        IntGauge::new(
            "query_memory_reserved_bytes",
            "Bytes of the query memory pool (RAPID_QUERY_MEMORY_BYTES) reserved by running queries",
        )?,
    ))
}

/// The compactor's figures, and the connection front's per-address budgets.
fn background_gauges() -> prometheus::Result<(IntCounterVec, IntGauge, IntCounterVec, IntGauge)> {
    Ok((
        IntCounterVec::new(
            Opts::new(
                "compaction_total",
                "Compaction since start, by figure: merges, files_replaced, rows_written, bytes_written, conflicts, failures",
            ),
            &["figure"],
        )?,
        IntGauge::new("compaction_running", "1 while the compactor merges files")?,
        IntCounterVec::new(
            Opts::new(
                "front_refusals_total",
                "Answers of 429 given by the connection front for a client address's budget, by kind (connections, requests)",
            ),
            &["kind"],
        )?,
        IntGauge::new(
            "front_addresses_tracked",
            "Client addresses the per-address budgets track (at most RAPID_ADDRESS_TABLE_ENTRIES)",
        )?,
    ))
}

fn register(m: &Metrics) -> prometheus::Result<()> {
    let collectors: [Box<dyn prometheus::core::Collector>; 17] = [
        Box::new(m.front_refusals.clone()),
        Box::new(m.front_addresses.clone()),
        Box::new(m.requests.clone()),
        Box::new(m.latency.clone()),
        Box::new(m.upload_rows.clone()),
        Box::new(m.upload_bytes.clone()),
        Box::new(m.validation_failures.clone()),
        Box::new(m.jobs.clone()),
        Box::new(m.queries_running.clone()),
        Box::new(m.queries_waiting.clone()),
        Box::new(m.queries_refused.clone()),
        Box::new(m.query_memory.clone()),
        Box::new(m.commit_queue.clone()),
        Box::new(m.catalog.clone()),
        Box::new(m.catalog_file_bytes.clone()),
        Box::new(m.compaction.clone()),
        Box::new(m.compaction_running.clone()),
    ];
    for c in collectors {
        m.registry.register(c)?;
    }
    Ok(())
}

// expect: the names and labels above are fixed and valid; a mistake fails every test at once.
static METRICS: LazyLock<Metrics> = LazyLock::new(|| build().expect("metric definitions"));

/// Counts one answered request (called by the request log middleware).
pub fn observe_request(method: &str, route: &str, status: u16, took: Duration) {
    let status_text = status.to_string();
    let labels = [method, route, status_text.as_str()];
    METRICS.requests.with_label_values(&labels).inc();
    METRICS
        .latency
        .with_label_values(&labels)
        .observe(took.as_secs_f64());
    if route == UPLOAD_ROUTE && method == "POST" && status == 422 {
        METRICS.validation_failures.inc();
    }
}

/// Reads the catalog and the query pools, then writes every metric in the text format.
pub fn render(state: &AppState) -> Result<String, Error> {
    let m = &*METRICS;
    let figures = state.engine.catalog_figures()?;
    m.jobs.reset();
    for kind in ["UPLOAD", "QUERY", "COMPACT"] {
        for status in ["IN PROGRESS", "SUCCESS", "FAILED"] {
            m.jobs.with_label_values(&[kind, status]).set(0);
        }
    }
    for (kind, status, n) in &figures.jobs {
        m.jobs.with_label_values(&[kind, status]).set(*n);
    }
    for (name, n) in &figures.counts {
        m.catalog.with_label_values(&[name]).set(*n);
    }
    m.catalog_file_bytes.set(figures.file_bytes as i64);
    let commits = state.engine.commit_figures();
    m.commit_queue.set(commits.pending);
    // The engine keeps running totals; the counters catch up to them.
    m.upload_rows
        .inc_by(commits.stored_rows.saturating_sub(m.upload_rows.get()));
    m.upload_bytes
        .inc_by(commits.stored_bytes.saturating_sub(m.upload_bytes.get()));

    compaction(m, state.engine.compaction_figures());
    m.wire.update();
    let front = crate::connection::budget::figures();
    m.front_addresses.set(front.tracked as i64);
    for (kind, n) in [
        ("connections", front.refused_connections),
        ("requests", front.refused_requests),
    ] {
        let c = m.front_refusals.with_label_values(&[kind]);
        c.inc_by(n.saturating_sub(c.get()));
    }

    let load = state.engine.query_pools().load();
    m.query_memory.set(load.memory_bytes as i64);
    {
        // A poisoned lock still holds valid totals.
        let mut seen = m.refused_seen.lock().unwrap_or_else(|p| p.into_inner());
        for (i, (pool, l)) in [("sync", load.sync), ("large", load.large)]
            .into_iter()
            .enumerate()
        {
            m.queries_running
                .with_label_values(&[pool])
                .set(l.running as i64);
            m.queries_waiting
                .with_label_values(&[pool])
                .set(l.waiting as i64);
            let refused = m.queries_refused.with_label_values(&[pool]);
            refused.inc_by(l.refused.saturating_sub(seen[i]));
            seen[i] = seen[i].max(l.refused);
        }
    }

    let mut out = Vec::new();
    TextEncoder::new()
        .encode(&m.registry.gather(), &mut out)
        .map_err(|e| Error::internal(format!("writing metrics: {e}")))?;
    String::from_utf8(out).map_err(|e| Error::internal(format!("writing metrics: {e}")))
}

/// The compactor's running totals; the counters catch up to them.
fn compaction(m: &Metrics, figures: &rapid_actors::engine::CompactionFigures) {
    use std::sync::atomic::Ordering::Relaxed;
    let totals = [
        ("merges", &figures.merges),
        ("files_replaced", &figures.files_replaced),
        ("rows_written", &figures.rows_written),
        ("bytes_written", &figures.bytes_written),
        ("conflicts", &figures.conflicts),
        ("failures", &figures.failures),
    ];
    for (name, total) in totals {
        let counter = m.compaction.with_label_values(&[name]);
        counter.inc_by(total.load(Relaxed).saturating_sub(counter.get()));
    }
    m.compaction_running
        .set(figures.running.load(Relaxed) as i64);
}

async fn respond(state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    let text = web::block(move || render(&state))
        .await
        .map_err(|e| Error::internal(format!("metrics task: {e}")))??;
    Ok(HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(text))
}

/// `GET /api/metrics`: any subject holding at least one permission.
#[utoipa::path(get, path = "/api/metrics", tag = "service",
    responses(
        (status = 200, description = "Prometheus text format (docs/install.md lists the metrics)", content_type = "text/plain", body = String),
    ))]
pub async fn get_metrics(
    auth: Authorized<AnySubject>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    if auth.subject.permissions.is_empty() {
        return Err(ApiError(Error::forbidden(
            "Reading metrics needs a token of a subject holding at least one permission",
        )));
    }
    respond(state).await
}

/// `GET /metrics` on `RAPID_METRICS_BIND`: no token (that address is the operator's choice).
pub async fn get_open_metrics(state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    respond(state).await
}
