//! Reading: tables over exactly the manifest's files, file pruning, local reads, kept plans,
//! running a checked query over one version of a dataset, and dataset info.

pub(super) mod file_pruning;
pub mod info;
pub(super) mod local_reader;
pub(super) mod plan_cache;
pub mod policy_table;
pub mod run;
pub mod table;
