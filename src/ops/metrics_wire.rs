//! The PostgreSQL listener's metrics (`rapid_sqlwire::figures`), caught up at each scrape.

use std::sync::atomic::Ordering::Relaxed;

use prometheus::{IntCounterVec, IntGauge, Opts, Registry};

pub(super) struct WireMetrics {
    open: IntGauge,
    refused: IntCounterVec,
    statements: IntCounterVec,
}

impl WireMetrics {
    pub(super) fn new(registry: &Registry) -> prometheus::Result<WireMetrics> {
        let m = WireMetrics {
            open: IntGauge::new(
                "pg_connections_open",
                "Connections open on the PostgreSQL listener (RAPID_PG_LISTEN)",
            )?,
            refused: IntCounterVec::new(
                Opts::new(
                    "pg_connections_refused_total",
                    "PostgreSQL connections refused or closed, by reason: full (256 open), \
                     per_address (RAPID_PG_CONNECTIONS_PER_ADDRESS), no_sign_in \
                     (RAPID_PG_STARTUP_SECONDS)",
                ),
                &["reason"],
            )?,
            statements: IntCounterVec::new(
                Opts::new(
                    "pg_statements_total",
                    "Statements answered over the PostgreSQL protocol, by outcome (ok, error)",
                ),
                &["outcome"],
            )?,
        };
        registry.register(Box::new(m.open.clone()))?;
        registry.register(Box::new(m.refused.clone()))?;
        registry.register(Box::new(m.statements.clone()))?;
        Ok(m)
    }

    pub(super) fn update(&self) {
        let f = &rapid_sqlwire::figures::FIGURES;
        self.open.set(f.open.load(Relaxed) as i64);
        let statements = f.statements.load(Relaxed);
        let errors = f.statement_errors.load(Relaxed);
        let totals = [
            (&self.refused, "full", f.refused_full.load(Relaxed)),
            (
                &self.refused,
                "per_address",
                f.refused_per_address.load(Relaxed),
            ),
            (&self.refused, "no_sign_in", f.no_sign_in.load(Relaxed)),
            (&self.statements, "ok", statements.saturating_sub(errors)),
            (&self.statements, "error", errors),
        ];
        for (vec, label, total) in totals {
            let counter = vec.with_label_values(&[label]);
            counter.inc_by(total.saturating_sub(counter.get()));
        }
    }
}
