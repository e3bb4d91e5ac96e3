//! The query language: the query object parsed from its body, bounded in size and depth, and
//! checked part by part against an allow-list.

pub(super) mod check;
pub(super) mod filter_group;
pub mod limits;
pub(super) mod limits_json;
pub(crate) mod naming;
pub mod policy_filter;
pub mod request;
