//! The DataFusion session queries run in, with the plan rewrites and functions that keep answers
//! to the query semantics, and the faster group-by over one text column.

pub(super) mod checked;
pub(super) mod checked_udf;
pub(super) mod session;
pub(super) mod signed_zero;
pub(super) mod small_groups;
pub(super) mod text_groups;
pub(super) mod three_valued;
