//! Downloading a large query's result by its link. The link is the authorisation (no token),
//! so a link made for a reader is checked again at download against what that reader may see
//! now: a revoked permission, a deleted subject or a changed policy (a new filter, a changed
//! attribute) refuses it, rather than hand over rows the reader may no longer see.

use super::Engine;
use crate::auth::pass::Read;
use crate::error::{Error, Result};
use crate::key::DatasetKey;
use crate::query::reading::run::policy_bound;
use crate::storage::safe_segment;

impl Engine {
    /// The bytes of a large query's result, when the link's signature and expiry hold and, for
    /// a link bound to what its reader was allowed (`bound`, see [`Engine::recheck_result`]),
    /// that still holds. 404 for a name that is not a result or one no longer kept, 403 for a
    /// bad link or a reader who may no longer see it.
    pub async fn result(
        &self,
        name: &str,
        expires: i64,
        signature: &str,
        bound: Option<&str>,
    ) -> Result<crate::storage::ByteStream> {
        if !safe_segment(name) || !(name.ends_with(".csv") || name.ends_with(".parquet")) {
            return Err(Error::not_found(format!("No result [{name}]")));
        }
        match bound {
            None => self.auth.verify_link(name, expires, signature)?,
            Some(bound) => {
                self.auth
                    .verify_link(&format!("{name}#{bound}"), expires, signature)?;
                let (this, name, bound) = (self.clone(), name.to_string(), bound.to_string());
                tokio::task::spawn_blocking(move || this.recheck_result(&name, &bound))
                    .await
                    .map_err(|e| Error::internal(format!("checking a result link: {e}")))??;
            }
        }
        let key = crate::storage::keys::result_key(name);
        self.storage.objects().stream(&key).await.map_err(|e| {
            Error::not_found(format!(
                "The result [{name}] is no longer available: run the query again"
            ))
            .context(e.report())
        })
    }

    /// The query job that made `name` (`{job id}.csv`): its subject still exists and may still
    /// read the dataset, under the policy whose fingerprint `bound` holds (0: none). Blocking.
    fn recheck_result(&self, name: &str, bound: &str) -> Result<()> {
        let gone = || Error::not_found(format!("No result [{name}]"));
        let job_id = name.strip_suffix(".csv").ok_or_else(gone)?;
        let job = self.jobs.get(job_id).map_err(|_| gone())?;
        let subject = self
            .auth
            .snapshot()
            .subjects
            .get(&job.subject_id)
            .cloned()
            .ok_or_else(|| Error::forbidden("The subject who ran this query no longer exists"))?;
        let key = DatasetKey::new(&job.layer, &job.domain, &job.dataset);
        let refused = || {
            Error::forbidden(format!(
                "What {} may read of {}/{}/{} changed after this query ran (a permission or a \
                 policy): run the query again",
                subject.name, key.layer, key.domain, key.dataset
            ))
        };
        let pass = self
            .dataset_pass::<Read>(subject.clone(), &key)
            .map_err(|_| refused())?;
        let schema = self.registry.schema(&key, Some(job.version))?;
        let policy = self.policy_for(&subject, pass.record(), job.version, &schema)?;
        match format!("{:x}", policy_bound(&policy)) == bound {
            true => Ok(()),
            false => Err(refused()),
        }
    }
}
