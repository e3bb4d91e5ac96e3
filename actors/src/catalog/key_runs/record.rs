//! What a commit records in the index: the keys of its new files (refused when a live entry
//! already holds one, whatever the engine checked before) and a backfill's keys, one run per
//! column.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::build::{build_run, store_run};
use super::{find_sorted, settle, IndexOf, RunStore};
use crate::catalog::refusal::commit_conflict;
use crate::catalog::{ColumnKeys, KeyList, UploadCommit};
use crate::error::Result;

/// Keys of one column from one origin.
struct OriginKeys<'a> {
    raw_filename: &'a str,
    partition_path: &'a str,
    keys: &'a ColumnKeys,
}

/// The commit's backfill (keys of rows stored before the index), recorded as they are: they are
/// the stored state, checked by nothing.
pub(crate) fn record_backfill(store: &dyn RunStore, commit: &UploadCommit) -> Result<()> {
    let Some(backfill) = &commit.backfill else {
        return Ok(());
    };
    let lists = backfill.iter().map(|stored| OriginKeys {
        raw_filename: &stored.raw_filename,
        partition_path: &stored.partition_path,
        keys: &stored.keys,
    });
    record_lists(store, commit, lists.collect(), Refuse::Nothing)
}

/// The keys of the commit's new files, after the replaced files' origins were dropped (an
/// OVERWRITE may store again the values it replaces). A key a live entry holds refuses the
/// commit as a conflict: the engine checks again and names the values. Only the runs written
/// after the engine's own check are probed ([`UploadCommit::keys_checked_at`]): with several
/// uploaders, the few runs of the commits that landed meanwhile, not the whole index.
pub(crate) fn record_new_keys(store: &dyn RunStore, commit: &UploadCommit) -> Result<()> {
    let lists = commit.files.iter().flat_map(|file| {
        file.unique_keys.iter().map(|keys| OriginKeys {
            raw_filename: &commit.raw_filename,
            partition_path: &file.partition_path,
            keys,
        })
    });
    let refuse = Refuse::RepeatsAndStored {
        since: commit.keys_checked_at,
    };
    record_lists(store, commit, lists.collect(), refuse)
}

/// What refuses a list of keys as a conflict.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Refuse {
    /// Nothing: a backfill records the stored state as it is.
    Nothing,
    /// A key repeated inside the commit, or one a live entry holds in a run written after
    /// generation `since` (every run when `None`).
    RepeatsAndStored { since: Option<i64> },
}

/// An origin's id and its keys, sorted.
type OriginList<'a> = (i64, Cow<'a, KeyList>);

fn record_lists(
    store: &dyn RunStore,
    commit: &UploadCommit,
    lists: Vec<OriginKeys<'_>>,
    refuse: Refuse,
) -> Result<()> {
    let mut by_column: BTreeMap<&str, Vec<OriginList<'_>>> = BTreeMap::new();
    for list in lists {
        if list.keys.keys.is_empty() {
            continue;
        }
        let origin = store.origin_id(
            commit.dataset_id,
            commit.version,
            list.raw_filename,
            list.partition_path,
        )?;
        let keys = list.keys.keys.ascending();
        by_column
            .entry(list.keys.column.as_str())
            .or_default()
            .push((origin, keys));
    }
    for (column, lists) in by_column {
        let index = IndexOf {
            dataset_id: commit.dataset_id,
            version: commit.version,
            column,
        };
        let lists: Vec<(i64, &KeyList)> = lists.iter().map(|(o, k)| (*o, k.as_ref())).collect();
        if let Refuse::RepeatsAndStored { since } = refuse {
            let keys: Vec<&KeyList> = lists.iter().map(|(_, k)| *k).collect();
            if !find_sorted(store, index, &keys, since)?.is_empty() {
                return Err(commit_conflict(commit.dataset_id, commit.version));
            }
        }
        // Built off the catalog's rows, on several threads; a key repeated inside the commit
        // refuses it (the transaction, and so the run, is rolled back).
        let started = std::time::Instant::now();
        let run = build_run(&lists);
        if run.repeated && refuse != Refuse::Nothing {
            return Err(commit_conflict(commit.dataset_id, commit.version));
        }
        let written = std::time::Instant::now();
        store_run(store, index, &run)?;
        let settled = std::time::Instant::now();
        settle(store, index)?;
        tracing::debug!(
            build = (written - started).as_micros() as u64,
            write = (settled - written).as_micros() as u64,
            settle = settled.elapsed().as_micros() as u64,
            "unique index run written"
        );
    }
    Ok(())
}
