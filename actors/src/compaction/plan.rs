//! Which files a compaction merges: per partition, the small files in commit order, cut into
//! groups of at most the target size. Files already near the target are left alone, so a
//! partition's rows are rewritten a bounded number of times however long it is fed.

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
    let wanted = match trigger {
        Trigger::Busy => settings.min_files.max(2),
        Trigger::Settled => 2,
    };
    let mut groups = Vec::new();
    for (partition, mut small) in by_partition {
        if small.len() < wanted {
            continue;
        }
        small.sort_by_key(|f| f.id);
        let mut current: Vec<DataFile> = Vec::new();
        let mut bytes = 0i64;
        for f in small {
            if !current.is_empty() && bytes + f.bytes > settings.target_bytes as i64 {
                push_group(&mut groups, partition, std::mem::take(&mut current));
                bytes = 0;
            }
            bytes += f.bytes;
            current.push(f.clone());
        }
        push_group(&mut groups, partition, current);
    }
    groups
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
    fn a_lone_small_file_is_not_copied() {
        let files = [file(1, "", 600), file(2, "", 10)];
        assert!(plan(&files, &settings(), Trigger::Settled).is_empty());
    }
}
