//! Downloading a large query's result by its link. The link is the authorisation (no token),
//! so a link made for a reader is checked again at download against what that reader may see
//! now: a revoked permission, a deleted subject or a changed policy (a new filter, a changed
//! attribute) refuses it, rather than hand over rows the reader may no longer see.

use std::sync::Arc;

use super::Engine;
use crate::auth::pass::Read;
use crate::auth::permission::Permission;
use crate::auth::Subject;
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
    /// read the dataset, under the policy whose fingerprint `bound` holds (0: none); for a SQL
    /// job (`bound` from `lazy_table::link_binding`), each dataset it read. Blocking.
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
        if let Some(read) = bound.strip_prefix("sql") {
            return read
                .split('-')
                .skip(1)
                .try_for_each(|entry| self.recheck_sql_read(&subject, entry));
        }
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

    /// One entry of a SQL job's binding: the audit log (`_system`) still readable by `subject`,
    /// or `{layer}.{domain}.{dataset}.{version}.{fingerprint}` still readable under that policy.
    fn recheck_sql_read(&self, subject: &Arc<Subject>, entry: &str) -> Result<()> {
        let refused = |what: &str| {
            Error::forbidden(format!(
                "What {} may read of {what} changed after this statement ran (a permission or a \
                 policy): run the statement again",
                subject.name
            ))
        };
        if entry == "_system" {
            return match subject.has(&Permission::UserAdmin) || subject.has(&Permission::DataAdmin)
            {
                true => Ok(()),
                false => Err(refused("the audit log")),
            };
        }
        let parts: Vec<&str> = entry.split('.').collect();
        let [layer, domain, dataset, version, fingerprint] = parts[..] else {
            return Err(Error::forbidden("This download link is not valid"));
        };
        let key = DatasetKey::new(layer, domain, dataset);
        let what = format!("{layer}/{domain}/{dataset}");
        let version: i64 = version.parse().map_err(|_| refused(&what))?;
        let pass = self
            .dataset_pass::<Read>(subject.clone(), &key)
            .map_err(|_| refused(&what))?;
        let schema = self
            .registry
            .schema(&key, Some(version))
            .map_err(|_| refused(&what))?;
        let policy = self.policy_for(subject, pass.record(), version, &schema)?;
        match format!("{:x}", policy_bound(&policy)) == fingerprint {
            true => Ok(()),
            false => Err(refused(&what)),
        }
    }
}
