//! Physical plans kept for reuse: a dashboard asks the same query of the same data again and
//! again, and turning its SQL into an optimised physical plan costs a millisecond or two each
//! time (parse, analyse, optimise, plan, physical rules): a sixth of a group-by over 1M rows.
//!
//! A plan is reused only for the same dataset version and statement over exactly the same
//! manifest files and table schema, so a commit (or a delete, on any node) makes the next query
//! plan afresh. Each reuse runs a copy with every node's run state reset
//! (`reset_plan_states`), so queries running at once never share streams or hash tables.
//!
//! Two things bound what is kept:
//! - plans whose dynamic filters reach another node (a TopK's bound pushed into the scan, say)
//!   are never kept: a reset gives the sort a fresh filter but leaves the scan reading the old
//!   one;
//! - the scan node keeps its metrics across resets (its Parquet source is shared), about 17
//!   entries per file opened, so a plan is reused only until it has opened [`FILE_OPENS`]
//!   files in all, then planned afresh; a plan over more files than that is not kept.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::error::Result as DfResult;
use datafusion::physical_expr::expressions::DynamicFilterPhysicalExpr;
use datafusion::physical_plan::execution_plan::reset_plan_states;
use datafusion::physical_plan::sorts::sort::SortExec;
use datafusion::physical_plan::ExecutionPlan;

use crate::manifest::DataFile;

/// Plans kept at most; the least recently used goes first.
const MAX_PLANS: usize = 32;
/// Files a kept plan may open, over all its runs, before it is planned afresh.
pub(crate) const FILE_OPENS: usize = 256;
/// Longer statements are planned every time (keys stay small).
const MAX_SQL_BYTES: usize = 16 * 1024;

/// What a plan is kept under: the statement over one version of one dataset, as one subject
/// policy shows it (`EffectivePolicy::plan_text`, empty without a policy).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PlanKey {
    pub dataset: i64,
    pub version: i64,
    pub sql: String,
    pub policy: String,
}

struct Kept {
    files: Vec<DataFile>,
    schema: SchemaRef,
    plan: Arc<dyn ExecutionPlan>,
    runs_left: usize,
    last_used: u64,
}

pub struct PlanCache {
    max_plans: usize,
    file_opens: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    kept: HashMap<PlanKey, Kept>,
    clock: u64,
}

impl Default for PlanCache {
    fn default() -> Self {
        PlanCache::new(MAX_PLANS, FILE_OPENS)
    }
}

impl PlanCache {
    pub fn new(max_plans: usize, file_opens: usize) -> PlanCache {
        PlanCache {
            max_plans,
            file_opens,
            state: Mutex::new(State::default()),
        }
    }

    /// A fresh copy of the plan kept for `key`, if it was planned over exactly `files` and
    /// `schema` and has runs left.
    pub fn reuse(
        &self,
        key: &PlanKey,
        files: &[DataFile],
        schema: &SchemaRef,
    ) -> DfResult<Option<Arc<dyn ExecutionPlan>>> {
        let plan = {
            let mut state = self.lock();
            state.clock += 1;
            let now = state.clock;
            let Some(kept) = state.kept.get_mut(key) else {
                return Ok(None);
            };
            if kept.runs_left == 0 || kept.files != files || kept.schema != *schema {
                state.kept.remove(key);
                return Ok(None);
            }
            kept.runs_left -= 1;
            kept.last_used = now;
            kept.plan.clone()
        };
        reset_plan_states(plan).map(Some)
    }

    /// Keeps `plan` (just made for `key` over `files` and `schema`) when it may be reused.
    pub fn keep(
        &self,
        key: &PlanKey,
        files: &[DataFile],
        schema: &SchemaRef,
        plan: &Arc<dyn ExecutionPlan>,
    ) -> DfResult<()> {
        let runs = self.file_opens / files.len().max(1);
        if runs == 0
            || key.sql.len() + key.policy.len() > MAX_SQL_BYTES
            || has_shared_dynamic_filter(plan)?
        {
            return Ok(());
        }
        let mut state = self.lock();
        state.clock += 1;
        let now = state.clock;
        if !state.kept.contains_key(key) && state.kept.len() >= self.max_plans {
            let oldest = state
                .kept
                .iter()
                .min_by_key(|(_, k)| k.last_used)
                .map(|(key, _)| key.clone());
            if let Some(oldest) = oldest {
                state.kept.remove(&oldest);
            }
        }
        state.kept.insert(
            key.clone(),
            Kept {
                files: files.to_vec(),
                schema: schema.clone(),
                plan: plan.clone(),
                // This run is the first.
                runs_left: runs - 1,
                last_used: now,
            },
        );
        Ok(())
    }

    /// Plans kept now.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lock().kept.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock leaves whole entries only: the state stays usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Whether a dynamic filter reaches beyond the node that owns it: a scan (or any node but a
/// sort) reading one. A sort's own TopK filter is made anew when its node is reset.
fn has_shared_dynamic_filter(plan: &Arc<dyn ExecutionPlan>) -> DfResult<bool> {
    let mut found = false;
    plan.apply(|node| {
        if node.is::<SortExec>() {
            return Ok(TreeNodeRecursion::Continue);
        }
        node.apply_expressions(&mut |expr| {
            expr.apply(|e| {
                if e.is::<DynamicFilterPhysicalExpr>() {
                    found = true;
                    return Ok(TreeNodeRecursion::Stop);
                }
                Ok(TreeNodeRecursion::Continue)
            })
        })?;
        Ok(if found {
            TreeNodeRecursion::Stop
        } else {
            TreeNodeRecursion::Continue
        })
    })?;
    Ok(found)
}

#[cfg(test)]
#[path = "plan_cache_tests.rs"]
mod tests;
