//! The change feed (`GET .../changes`, docs/API.md "Pull feed"): the rows commits changed, read
//! from what each commit added and removed (its Delta log's add and remove actions), as a Delta
//! reader derives a change data feed when no change files were written: every row of a removed
//! file is a `delete`, every row of an added file an `insert`. Applied in order (within a
//! commit, its deletes first) they turn the version at `from_commit - 1` into the version at
//! `to_commit`. Compaction commits change no row and are left out. The subject sees the rows
//! through its policy, as on every front.

use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use datafusion::prelude::SessionContext;

use super::query::{render, OutputFormat};
use super::{pick_version, Engine};
use crate::auth::pass::{DatasetPass, Read};
use crate::error::{Error, Result};
use crate::query::reading::policy_table::subject_table;
use crate::query::{QueryKind, SYNC_ROW_LIMIT};

/// The most commits one call reads (page with `from_commit` and `to_commit`).
pub const MAX_CHANGE_COMMITS: i64 = 100;

/// The commits a call asks for, as given (absent: the whole retained history).
#[derive(Debug, Clone, Copy, Default)]
pub struct CommitRange {
    pub from: Option<i64>,
    pub to: Option<i64>,
}

impl Engine {
    /// The rows commits `range` of `version` (the latest when absent) changed, with
    /// `_change_type` (`delete` or `insert`) and `_commit`, in commit order, in `format`.
    /// 400 for a range outside the retained history or wider than [`MAX_CHANGE_COMMITS`], or
    /// past the synchronous row cap.
    pub async fn changes(
        &self,
        pass: DatasetPass<Read>,
        version: Option<i64>,
        range: CommitRange,
        format: OutputFormat,
    ) -> Result<(&'static str, Vec<u8>)> {
        let record = pass.record().clone();
        let version = pick_version(version, record.latest_version);
        let schema = self.registry.schema(&record.key, Some(version))?;
        let (floor, latest) = self.catalog.history_bounds(record.id, version)?;
        // A commit at the floor may have lost the files it removed to retention: exact from the
        // one after it (or from the first, when nothing has expired).
        let first = if floor <= 1 { 1 } else { floor + 1 };
        let from = range.from.unwrap_or(first);
        let to = range.to.unwrap_or(latest);
        if latest > 0 {
            check_range(first, latest, from, to)?;
        }
        let commits = match latest {
            0 => Vec::new(),
            _ => self.catalog.commit_changes(record.id, version, from, to)?,
        };
        let subject = pass.subject().clone();
        let policy = crate::query::policy::for_subject(
            self.catalog.as_ref(),
            (record.id, version),
            &schema,
            &subject,
            &self.mask_key,
        )?;
        let note = pass.note().clone();
        let columns = schema.columns().iter().map(|c| c.name.clone());
        note.read(&record.key, version, Some(to), columns, &policy.names);
        let pools = self.pools.clone();
        let slot = pools.admit(QueryKind::Sync).await?;
        let limit = pools.settings().timeout;
        let ctx = pools.session();
        let storage = self.storage.clone();
        let work = async move {
            let (arrow_schema, batches) =
                changed_rows(&ctx, &storage, &schema, &policy, &commits).await?;
            let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
            note.rows(rows as u64);
            if rows as u64 > SYNC_ROW_LIMIT {
                return Err(Error::invalid(format!(
                    "These commits changed more than {SYNC_ROW_LIMIT} rows: ask fewer commits \
                     (from_commit, to_commit)"
                )));
            }
            render(format, arrow_schema, &batches)
        };
        let timed_out = Error::invalid(format!(
            "Reading the changes ran longer than the limit of {} seconds for synchronous queries \
             (RAPID_QUERY_TIMEOUT_SECONDS) and was stopped: ask fewer commits",
            limit.as_secs()
        ));
        pools.run(Some(slot), limit, work, timed_out).await
    }
}

/// The rows `commits` removed and added, as the subject under `policy` sees them, with
/// `_change_type` and `_commit`, a commit's deletes first; at most one row past the cap.
async fn changed_rows(
    ctx: &SessionContext,
    storage: &crate::storage::Storage,
    schema: &crate::schema::ValidSchema,
    policy: &crate::query::policy::EffectivePolicy,
    commits: &[crate::catalog::CommitChanges],
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let mut parts = Vec::new();
    for c in commits.iter().filter(|c| c.operation != "COMPACT") {
        for (kind, files) in [("delete", &c.removed), ("insert", &c.added)] {
            if files.is_empty() {
                continue;
            }
            let name = format!("{kind}_{}", c.commit);
            register(ctx, &name, subject_table(storage, schema, files, policy)?)?;
            parts.push(format!(
                "SELECT *, '{kind}' AS _change_type, CAST({} AS BIGINT) AS _commit FROM {name}",
                c.commit
            ));
        }
    }
    if parts.is_empty() {
        // No row changed: the answer's columns still.
        register(ctx, "nothing", subject_table(storage, schema, &[], policy)?)?;
        parts.push(
            "SELECT *, 'insert' AS _change_type, CAST(0 AS BIGINT) AS _commit FROM nothing \
             WHERE false"
                .to_string(),
        );
    }
    // 'delete' sorts before 'insert': a commit's deletes come first.
    let sql = format!(
        "SELECT * FROM ({}) ORDER BY _commit, _change_type",
        parts.join(" UNION ALL ")
    );
    let frame = ctx.sql(&sql).await.map_err(df)?;
    let frame = frame
        .limit(0, Some(SYNC_ROW_LIMIT as usize + 1))
        .map_err(df)?;
    let arrow_schema = Arc::new(frame.schema().as_arrow().clone());
    Ok((arrow_schema, frame.collect().await.map_err(df)?))
}

/// `from..=to` must lie in `first..=latest`, in order, at most [`MAX_CHANGE_COMMITS`] wide.
fn check_range(first: i64, latest: i64, from: i64, to: i64) -> Result<()> {
    if from < first {
        return Err(Error::invalid(format!(
            "Changes are kept from commit {first} of this version on (history retention): \
             ask from_commit={first} or later"
        )));
    }
    if to > latest {
        return Err(Error::invalid(format!(
            "This version's newest commit is {latest}: ask to_commit={latest} or earlier"
        )));
    }
    if from > to {
        return Err(Error::invalid(format!(
            "from_commit ({from}) is after to_commit ({to})"
        )));
    }
    if to - from + 1 > MAX_CHANGE_COMMITS {
        return Err(Error::invalid(format!(
            "At most {MAX_CHANGE_COMMITS} commits a call: page with from_commit and to_commit"
        )));
    }
    Ok(())
}

fn register(
    ctx: &SessionContext,
    name: &str,
    table: Arc<dyn datafusion::catalog::TableProvider>,
) -> Result<()> {
    ctx.register_table(name, table).map_err(df)?;
    Ok(())
}

fn df(e: datafusion::error::DataFusionError) -> Error {
    crate::query::reading::run::engine_error(e)
}
