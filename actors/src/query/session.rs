//! The DataFusion session every query runs in, set up so answers follow API.md's query
//! semantics rather than the engine's defaults:
//! - DataFusion 55's expression simplifier is left out: it folds some predicates without regard
//!   to NULL (`x IN (a) AND x IN (b)` with disjoint lists becomes FALSE, so `NOT (...)` keeps the
//!   rows where `x` is NULL; `x NOT IN (a) OR x NOT IN (b)` becomes TRUE). Upstream has fixed
//!   this after 55; until a release carries the fix, a filter is evaluated as written, which
//!   costs only the constant folding of literals.
//! - integer arithmetic and sums are checked ([`super::checked`]).
//! - NULLs sort last for ASC and DESC (as rAPId on Athena) unless a query says otherwise.

use std::sync::Arc;

use datafusion::prelude::{SessionConfig, SessionContext};

use super::checked::CheckedIntegers;

pub fn new_context(mut config: SessionConfig) -> SessionContext {
    config.options_mut().sql_parser.default_null_ordering = "nulls_last".to_string();
    let ctx = SessionContext::new_with_config(config);
    ctx.remove_optimizer_rule("simplify_expressions");
    ctx.add_analyzer_rule(Arc::new(CheckedIntegers));
    ctx
}
