//! Which files a compaction merges. Files near the target size are left alone. While commits
//! keep coming (`Busy`), small files are merged by size tier, as size-tiered compaction does:
//! `min_files` files of one tier (sizes within a factor of `min_files`) make one file of the
//! next, so each row is rewritten about log(rows) / log(min_files) times however long a
//! partition is fed, and a partition holds at most `min_files - 1` files per tier. Once the
//! version is quiet (`Settled`), all of a partition's small files are merged, in commit order,
//! into groups of at most the target size.

use std::collections::BTreeMap;

use super::CompactionSettings;
use crate::manifest::DataFile;

/// Why a compaction runs, which sets how many small files make a partition worth merging.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// Commits keep coming: only partitions with `min_files` small files.
    Busy,
    /// The version has been quiet for the idle time, or someone asked: any partition with 2.
    Settled,
}

/// Files of one partition merged into one file.
#[derive(Debug, Clone)]
pub struct Group {
    pub partition_path: String,
    /// In commit (id) order: the merged file keeps their rows in this order.
    pub files: Vec<DataFile>,
}

/// The groups to merge among `files` (one version's), by `trigger`.
pub fn plan(files: &[DataFile], settings: &CompactionSettings, trigger: Trigger) -> Vec<Group> {
    let small_below = (settings.target_bytes / 2).max(1) as i64;
    let mut by_partition: BTreeMap<&str, Vec<&DataFile>> = BTreeMap::new();
    for f in files.iter().filter(|f| f.bytes < small_below) {
        by_partition.entry(&f.partition_path).or_default().push(f);
    }
    let mut groups = Vec::new();
    for (partition, small) in by_partition {
        match trigger {
            Trigger::Busy => {
                for tier in tiers(small, settings.min_files.max(2)) {
                    cut(&mut groups, partition, tier, settings.target_bytes);
                }
            }
            Trigger::Settled => cut(&mut groups, partition, small, settings.target_bytes),
        }
    }
    groups
}

/// The size tiers of `small` holding at least `factor` files (each in commit order).
fn tiers(small: Vec<&DataFile>, factor: usize) -> Vec<Vec<&DataFile>> {
    let mut by_tier: BTreeMap<u32, Vec<&DataFile>> = BTreeMap::new();
    for f in small {
        by_tier.entry(tier(f.bytes, factor)).or_default().push(f);
    }
    by_tier
        .into_values()
        .filter(|files| files.len() >= factor)
        .collect()
}

/// A file's size tier: tier 0 under `factor` KiB, each next one `factor` times as large.
fn tier(bytes: i64, factor: usize) -> u32 {
    let (mut limit, mut tier) = (1024 * factor as i64, 0);
    while bytes >= limit && tier < 32 {
        limit = limit.saturating_mul(factor as i64);
        tier += 1;
    }
    tier
}

/// `files` (2 or more) cut, in commit order, into groups of at most `target` bytes.
fn cut(groups: &mut Vec<Group>, partition: &str, mut files: Vec<&DataFile>, target: u64) {
    if files.len() < 2 {
        return;
    }
    files.sort_by_key(|f| f.id);
    let mut current: Vec<DataFile> = Vec::new();
    let mut bytes = 0i64;
    for f in files {
        if !current.is_empty() && bytes + f.bytes > target as i64 {
            push_group(groups, partition, std::mem::take(&mut current));
            bytes = 0;
        }
        bytes += f.bytes;
        current.push(f.clone());
    }
    push_group(groups, partition, current);
}

/// A group of one file would only copy it.
fn push_group(groups: &mut Vec<Group>, partition: &str, files: Vec<DataFile>) {
    if files.len() >= 2 {
        groups.push(Group {
            partition_path: partition.to_string(),
            files,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(id: i64, partition: &str, bytes: i64) -> DataFile {
        DataFile {
            id,
            raw_filename: format!("r{id}.csv"),
            partition_path: partition.into(),
            path: format!("data/{partition}/{id}.parquet"),
            rows: 10,
            bytes,
            stats: None,
        }
    }

    fn settings() -> CompactionSettings {
        CompactionSettings {
            target_bytes: 1000,
            min_files: 4,
            ..CompactionSettings::default()
        }
    }

    fn ids(groups: &[Group]) -> Vec<(String, Vec<i64>)> {
        groups
            .iter()
            .map(|g| {
                let ids = g.files.iter().map(|f| f.id).collect();
                (g.partition_path.clone(), ids)
            })
            .collect()
    }

    #[test]
    fn busy_waits_for_min_files_and_settled_merges_any_two() {
        let files = [
            file(1, "p=a", 100),
            file(2, "p=a", 100),
            file(3, "p=b", 100),
            file(4, "p=a", 100),
            file(5, "p=a", 100),
            file(6, "p=b", 100),
        ];
        assert_eq!(
            ids(&plan(&files, &settings(), Trigger::Busy)),
            [("p=a".to_string(), vec![1, 2, 4, 5])]
        );
        assert_eq!(
            ids(&plan(&files, &settings(), Trigger::Settled)),
            [
                ("p=a".to_string(), vec![1, 2, 4, 5]),
                ("p=b".to_string(), vec![3, 6])
            ]
        );
    }

    #[test]
    fn large_files_stay_and_groups_are_cut_at_the_target() {
        let files = [
            file(1, "", 600), // at least half the target: not small
            file(2, "", 400),
            file(3, "", 400),
            file(4, "", 400),
            file(5, "", 100),
            file(6, "", 100),
        ];
        let groups = plan(&files, &settings(), Trigger::Settled);
        assert_eq!(
            ids(&groups),
            [
                ("".to_string(), vec![2, 3]),
                ("".to_string(), vec![4, 5, 6])
            ]
        );
        for g in &groups {
            assert!(g.files.iter().map(|f| f.bytes).sum::<i64>() <= 1000);
        }
    }

    #[test]
    fn busy_merges_within_a_size_tier_and_leaves_larger_files_for_later() {
        let settings = CompactionSettings {
            target_bytes: 1 << 30,
            min_files: 4,
            ..CompactionSettings::default()
        };
        // 3 merged files of about 20 KB (tier 1 at factor 4: 4 KiB to 16 KiB is tier 1, 16 KiB to
        // 64 KiB tier 2), then 4 fresh ones of 1 KB.
        let mut files: Vec<DataFile> = (1..=3).map(|i| file(i, "", 20_000)).collect();
        files.extend((4..=7).map(|i| file(i, "", 1_000)));
        let busy = plan(&files, &settings, Trigger::Busy);
        assert_eq!(ids(&busy), [("".to_string(), vec![4, 5, 6, 7])]);
        files.push(file(8, "", 20_000));
        let busy = plan(&files, &settings, Trigger::Busy);
        assert_eq!(
            ids(&busy),
            [
                ("".to_string(), vec![4, 5, 6, 7]),
                ("".to_string(), vec![1, 2, 3, 8])
            ]
        );
        let settled = plan(&files, &settings, Trigger::Settled);
        assert_eq!(ids(&settled), [("".to_string(), (1..=8).collect())]);
    }

    #[test]
    fn a_lone_small_file_is_not_copied() {
        let files = [file(1, "", 600), file(2, "", 10)];
        assert!(plan(&files, &settings(), Trigger::Settled).is_empty());
    }
}
