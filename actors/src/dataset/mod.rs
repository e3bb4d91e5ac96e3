//! The DatasetActor: one per dataset, the only writer of that dataset's catalog rows and files.
//! Messages are handled one at a time in arrival order; heavy work (moving files, reading stored
//! values for `unique`) runs on the blocking pool while the actor waits (`AtomicResponse`), so
//! the actor's thread stays free for other datasets and no two changes of one dataset overlap.

mod commit;
mod stored_unique;
mod swap;
use rapid_rows::unique_index;
#[cfg(test)]
mod unique_tests;

use actix::{Actor, AtomicResponse, Context, Handler, Message, WrapFuture};

pub(crate) use commit::StagedUpload;
pub(crate) use stored_unique::check_before_answer;
pub(crate) use swap::{commit_merges, StagedMerge};
pub(crate) use unique_index::staged_keys;

use crate::catalog::SharedCatalog;
use crate::error::{Error, Result};
use crate::history::HistorySettings;
use crate::key::DatasetRecord;
use crate::records::stored_version;
use crate::schema::ValidSchema;
use crate::storage::Storage;

pub(crate) struct DatasetActor {
    catalog: SharedCatalog,
    storage: Storage,
    record: DatasetRecord,
    deleted: bool,
    history: HistorySettings,
}

impl DatasetActor {
    pub(crate) fn new(
        catalog: SharedCatalog,
        storage: Storage,
        record: DatasetRecord,
        history: HistorySettings,
    ) -> DatasetActor {
        DatasetActor {
            catalog,
            storage,
            record,
            deleted: false,
            history,
        }
    }

    /// After a commit to `version`: its Delta log version written (`crate::delta_log`), then
    /// retention applied (the files only expired commits listed are deleted once no query
    /// reads them). A failure here loses nothing (the commit stands; the next commit, the
    /// periodic sweep or the next start writes the log and expires), so it is logged, not
    /// returned. Retention waits while the log lags: expiring first would drop the retired
    /// rows the log's missing versions are derived from.
    fn expire_after(
        catalog: &SharedCatalog,
        storage: &Storage,
        record: &DatasetRecord,
        version: i64,
        history: &HistorySettings,
    ) {
        let started = std::time::Instant::now();
        match crate::delta_log::sync(catalog.as_ref(), storage, record, version) {
            Ok(written) => {
                let micros = started.elapsed().as_micros() as u64;
                tracing::debug!(version, written, micros, "Delta log written");
            }
            Err(e) => {
                tracing::warn!(version, error = %e.report(), "writing the Delta log");
                return;
            }
        }
        if let Err(e) =
            crate::history::expire(catalog.as_ref(), storage, record.id, version, history)
        {
            tracing::warn!(version, error = %e.report(), "expiring old commits");
        }
    }

    fn gone(&self) -> Error {
        self.record.key.not_found()
    }

    /// On a catalog shared by several nodes, the dataset as the catalog has it now: another
    /// node's actor for the same dataset may have stored a schema version, deleted it or deleted
    /// and created it again since this actor last looked. (Alone on its catalog, this actor is
    /// the dataset's only writer and its record is always current.) Commits stay correct either
    /// way: the catalog checks `based_on` and serialises them per dataset.
    /// Then refuses (404) when the dataset is gone.
    fn present(&mut self) -> Result<()> {
        if self.catalog.is_shared() {
            match self.catalog.find_dataset(&self.record.key)? {
                Some(record) => {
                    self.record = record;
                    self.deleted = false;
                }
                None => self.deleted = true,
            }
        }
        if self.deleted {
            return Err(self.gone());
        }
        Ok(())
    }

    /// A span for one message to this actor: the dataset, the message, the job if any.
    fn span(&self, message: &'static str, job_id: &str) -> tracing::Span {
        tracing::info_span!("dataset_actor", dataset = %self.record.key.display(), message, job_id)
    }

    /// Runs `work` on the blocking pool inside `span`; the actor takes no other message until it
    /// is done. A failure names the dataset in its context (for the log).
    fn atomically<R: Send + 'static>(
        &self,
        span: tracing::Span,
        work: impl FnOnce(SharedCatalog, Storage, DatasetRecord) -> Result<R> + Send + 'static,
    ) -> AtomicResponse<Self, Result<R>> {
        let (catalog, storage, record) = (
            self.catalog.clone(),
            self.storage.clone(),
            self.record.clone(),
        );
        let dataset = record.key.display();
        let fut = async move {
            tokio::task::spawn_blocking(move || span.in_scope(|| work(catalog, storage, record)))
                .await
                .map_err(|e| Error::internal(format!("dataset task: {e}")))?
                .map_err(|e| e.context(format!("changing dataset {dataset}")))
        };
        AtomicResponse::new(Box::pin(fut.into_actor(self)))
    }
}

impl Actor for DatasetActor {
    type Context = Context<Self>;
}

crate::traced::handle_traced!(DatasetActor: BumpSchema, CommitUpload, CommitMerges, DeleteRawFile, Rollback, DeleteDataset);

/// Store a schema as the next version. The sensitivity of a dataset never changes.
pub(crate) struct BumpSchema(pub ValidSchema);

impl Message for BumpSchema {
    type Result = Result<ValidSchema>;
}

impl Handler<BumpSchema> for DatasetActor {
    type Result = Result<ValidSchema>;

    fn handle(&mut self, msg: BumpSchema, _: &mut Context<Self>) -> Self::Result {
        let _span = self.span("bump_schema", "").entered();
        self.present()?;
        let mut schema = msg.0;
        let key = self.record.key.clone();
        let record = self.catalog.add_schema_version(&key, &mut |current| {
            if schema.sensitivity() != current.sensitivity {
                return Err(Error::invalid(format!(
                    "The sensitivity of this updated schema [{}] does not match the original [{}]. \
                     You cannot change the sensitivity when updating a schema",
                    schema.sensitivity(),
                    current.sensitivity
                )));
            }
            schema.set_version(current.latest_version + 1);
            stored_version(&schema)
        })?;
        self.record = record;
        tracing::info!(version = ?schema.version(), "schema version stored");
        Ok(schema)
    }
}

/// Commit a validated upload; the job ends SUCCESS or FAILED either way.
pub(crate) struct CommitUpload(pub StagedUpload);

impl Message for CommitUpload {
    type Result = Result<()>;
}

impl Handler<CommitUpload> for DatasetActor {
    type Result = AtomicResponse<Self, Result<()>>;

    fn handle(&mut self, msg: CommitUpload, _: &mut Context<Self>) -> Self::Result {
        let deleted = match self.present() {
            Ok(()) if self.record.id != msg.0.dataset_id => Some(Error::not_found(format!(
                "The dataset {} was deleted while this upload was being processed",
                self.record.key.display()
            ))),
            outcome => outcome.err(),
        };
        let span = self.span("commit_upload", &msg.0.job_id);
        let history = self.history;
        self.atomically(span, move |catalog, storage, record| {
            let job_id = msg.0.job_id.clone();
            let version = msg.0.version;
            let result = match deleted {
                Some(e) => Err(e),
                None => commit::commit(catalog.as_ref(), &storage, &record, msg.0),
            };
            if result.is_ok() {
                Self::expire_after(&catalog, &storage, &record, version, &history);
            }
            if let Err(e) = &result {
                let messages = crate::ingest::messages(e);
                if let Err(fail) = catalog.fail_job(&job_id, &messages) {
                    tracing::error!(job_id, error = %fail.report(), "could not record a failed job");
                }
            }
            result
        })
    }
}

/// Swap merged files (compaction, [`crate::compaction`]) for the files they replace; answers how
/// many files were replaced. A conflict leaves the dataset as it was.
pub(crate) struct CommitMerges {
    /// The dataset the files were merged for (one deleted and created again is another).
    pub dataset_id: i64,
    pub version: i64,
    pub merges: Vec<StagedMerge>,
}

impl Message for CommitMerges {
    type Result = Result<usize>;
}

impl Handler<CommitMerges> for DatasetActor {
    type Result = AtomicResponse<Self, Result<usize>>;

    fn handle(&mut self, msg: CommitMerges, _: &mut Context<Self>) -> Self::Result {
        let gone = match self.present() {
            Ok(()) if self.record.id != msg.dataset_id => Some(self.gone()),
            outcome => outcome.err(),
        };
        let span = self.span("commit_merges", "");
        let history = self.history;
        self.atomically(span, move |catalog, storage, record| match gone {
            Some(e) => Err(e),
            None => {
                let replaced = swap::commit_merges(
                    catalog.as_ref(),
                    &storage,
                    &record,
                    msg.version,
                    msg.merges,
                )?;
                Self::expire_after(&catalog, &storage, &record, msg.version, &history);
                Ok(replaced)
            }
        })
    }
}

/// Delete one raw file of a version and every row it contributed.
pub(crate) struct DeleteRawFile {
    pub version: i64,
    pub raw_filename: String,
    /// The id of the subject deleting it (its commit's `subject`).
    pub subject: String,
    /// Also remove its rows from every retained commit (`?erase=true`; an ERASE commit).
    pub erase: bool,
}

impl Message for DeleteRawFile {
    type Result = Result<()>;
}

impl Handler<DeleteRawFile> for DatasetActor {
    type Result = AtomicResponse<Self, Result<()>>;

    fn handle(&mut self, msg: DeleteRawFile, _: &mut Context<Self>) -> Self::Result {
        let deleted = self.present().err();
        let span = self.span("delete_raw_file", "");
        let history = self.history;
        self.atomically(span, move |catalog, storage, record| match deleted {
            Some(e) => Err(e),
            None => {
                if msg.erase {
                    let changed = commit::erase_raw_file(
                        catalog.as_ref(),
                        &storage,
                        &record,
                        msg.version,
                        &msg.raw_filename,
                        &msg.subject,
                    )?;
                    tracing::info!(version = msg.version, raw_file = %msg.raw_filename, changed, "raw file erased from history");
                    // The retained Delta versions named the files just rewritten or dropped:
                    // the log is written again from the floor (docs/DESIGN.md, History).
                    if let Err(e) =
                        crate::delta_log::rewrite(catalog.as_ref(), &storage, &record, msg.version)
                    {
                        tracing::warn!(version = msg.version, error = %e.report(), "writing the Delta log again after an erasure");
                    }
                } else {
                    commit::delete_raw_file(
                        catalog.as_ref(),
                        &storage,
                        &record,
                        msg.version,
                        &msg.raw_filename,
                        &msg.subject,
                    )?;
                }
                Self::expire_after(&catalog, &storage, &record, msg.version, &history);
                tracing::info!(version = msg.version, raw_file = %msg.raw_filename, "raw file deleted");
                Ok(())
            }
        })
    }
}

/// A new commit of a version whose files are those of an earlier commit (docs/guide.md,
/// History); answers its number.
pub(crate) struct Rollback {
    pub version: i64,
    pub to_commit: i64,
    /// The id of the subject rolling back (its commit's `subject`).
    pub subject: String,
}

impl Message for Rollback {
    type Result = Result<i64>;
}

impl Handler<Rollback> for DatasetActor {
    type Result = AtomicResponse<Self, Result<i64>>;

    fn handle(&mut self, msg: Rollback, _: &mut Context<Self>) -> Self::Result {
        let deleted = self.present().err();
        let span = self.span("rollback", "");
        let history = self.history;
        self.atomically(span, move |catalog, storage, record| match deleted {
            Some(e) => Err(e),
            None => {
                let commit =
                    catalog.rollback(record.id, msg.version, msg.to_commit, Some(&msg.subject))?;
                tracing::info!(
                    version = msg.version,
                    to = msg.to_commit,
                    commit,
                    "rolled back"
                );
                Self::expire_after(&catalog, &storage, &record, msg.version, &history);
                Ok(commit)
            }
        })
    }
}

/// Delete the whole dataset. Later messages to this actor answer 404.
pub(crate) struct DeleteDataset;

impl Message for DeleteDataset {
    type Result = Result<()>;
}

impl Handler<DeleteDataset> for DatasetActor {
    type Result = AtomicResponse<Self, Result<()>>;

    fn handle(&mut self, _: DeleteDataset, _: &mut Context<Self>) -> Self::Result {
        let already = self.present().err();
        self.deleted = true;
        let span = self.span("delete_dataset", "");
        self.atomically(span, move |catalog, storage, record| match already {
            Some(e) => Err(e),
            None => {
                commit::delete_dataset(catalog.as_ref(), &storage, &record)?;
                tracing::info!("dataset deleted");
                Ok(())
            }
        })
    }
}
