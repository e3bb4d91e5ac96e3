//! Dataset policies and subject attributes (docs/API.md, "Policies, audit, events, MCP"):
//! set, read and removed by DATA_ADMIN per schema version; attributes set by USER_ADMIN.
//! They are applied in the table the engine gives a reading subject (`query::policy`,
//! `query::reading::policy_table`).

use std::collections::HashMap;

use super::{pick_version, Engine};
use crate::auth::pass::{AdminPass, UserAdminPass};
use crate::auth::permission::Permission;
use crate::error::{Error, Result};
use crate::key::{DatasetKey, DatasetRecord};
use crate::query::policy::Policy;

impl Engine {
    /// Checks and stores the policy `body` of `key`'s schema `version` (absent: the latest),
    /// replacing any; answers it as stored. 400 naming what is wrong, 404 for no such dataset.
    pub fn put_policy(
        &self,
        _: &AdminPass,
        key: &DatasetKey,
        version: Option<i64>,
        body: &[u8],
    ) -> Result<Policy> {
        let (record, version) = self.policy_target(key, version)?;
        let schema = self.registry.schema(key, Some(version))?;
        let policy = Policy::parse(body)?;
        self.check_policy(&policy, &schema)?;
        let json = serde_json::to_string(&policy)
            .map_err(|e| Error::internal(format!("policy to JSON: {e}")))?;
        if !self.catalog.put_policy(record.id, version, &json)? {
            return Err(no_version(key, version));
        }
        Ok(policy)
    }

    /// `policy` against `schema`'s columns, its entries against the subjects and permissions.
    fn check_policy(&self, policy: &Policy, schema: &crate::schema::ValidSchema) -> Result<()> {
        let snapshot = self.auth.snapshot();
        let is_known = |entry: &str| {
            snapshot
                .subjects
                .values()
                .any(|s| s.id == entry || s.name.eq_ignore_ascii_case(entry))
                || Permission::parse(entry, snapshot.permission_context()).is_some()
        };
        policy.check(schema, &is_known)
    }

    /// For `PUT /schema`: the latest version's policy, if any, checked against the next
    /// version's columns. The catalog copies it to the new version in the version's own
    /// transaction (a policy is per version: a new version without it would be read under
    /// none); 400 when it does not fit the new columns (the DATA_ADMIN changes or removes it
    /// first).
    pub(super) fn check_policy_carries(
        &self,
        schema: &crate::schema::Schema,
        protected: &std::collections::BTreeSet<String>,
    ) -> Result<()> {
        let next = self.registry.validate(schema, protected)?;
        let key = DatasetKey::new(next.layer(), next.domain(), next.dataset());
        // No such dataset: the update answers its own 404.
        let Ok(record) = self.registry.find(&key) else {
            return Ok(());
        };
        let latest = record.latest_version;
        let Some(json) = self.catalog.policy(record.id, latest)? else {
            return Ok(());
        };
        let policy: Policy = serde_json::from_str(&json)
            .map_err(|e| Error::internal(format!("stored policy: {e}")))?;
        self.check_policy(&policy, &next).map_err(|e| {
            Error::invalid(format!(
                "The policy of version {latest} would carry to the new version and does not fit \
                 its columns ({e}): change or remove it first (PUT or DELETE .../policy)"
            ))
        })
    }

    /// The policy of `key`'s schema `version` (absent: the latest); 404 when it has none.
    pub fn policy(&self, _: &AdminPass, key: &DatasetKey, version: Option<i64>) -> Result<Policy> {
        let (record, version) = self.policy_target(key, version)?;
        let json = self
            .catalog
            .policy(record.id, version)?
            .ok_or_else(|| no_policy(key, version))?;
        serde_json::from_str(&json).map_err(|e| Error::internal(format!("stored policy: {e}")))
    }

    /// Removes the policy of `key`'s schema `version` (absent: the latest); 404 when it has none.
    pub fn delete_policy(
        &self,
        _: &AdminPass,
        key: &DatasetKey,
        version: Option<i64>,
    ) -> Result<()> {
        let (record, version) = self.policy_target(key, version)?;
        match self.catalog.delete_policy(record.id, version)? {
            true => Ok(()),
            false => Err(no_policy(key, version)),
        }
    }

    /// Replaces a subject's attributes (`{"k": "v"}`, text values) read by `subject_attr`;
    /// answers them. 404 for no such subject, 400 for anything but an object of texts.
    pub fn set_subject_attributes(
        &self,
        _: &UserAdminPass,
        subject_id: &str,
        body: &serde_json::Value,
    ) -> Result<HashMap<String, String>> {
        let attributes: HashMap<String, String> =
            serde_json::from_value(body.clone()).map_err(|_| {
                Error::invalid(
                    "Attributes are a JSON object of text values, as {\"region\": \"north\"}",
                )
            })?;
        let json = serde_json::to_string(&attributes)
            .map_err(|e| Error::internal(format!("attributes to JSON: {e}")))?;
        if !self.catalog.put_subject_attributes(subject_id, &json)? {
            return Err(Error::not_found(format!("No subject [{subject_id}]")));
        }
        Ok(attributes)
    }

    /// Whether a policy applies to the pass's subject in `version`, so figures counted over every
    /// row of it (rows, files, profiles) must not be shown to them.
    pub(super) fn counts_hidden<A: crate::auth::pass::AccessKind>(
        &self,
        pass: &crate::auth::pass::DatasetPass<A>,
        version: i64,
    ) -> Result<bool> {
        let record = pass.record();
        let schema = self.registry.schema(&record.key, Some(version))?;
        Ok(!self
            .policy_for(pass.subject(), record, version, &schema)?
            .is_none())
    }

    /// Refuses (403) what is computed over every row of a version (`what`: its profile, its
    /// figures) when a policy applies to `subject` there: it would count or show hidden rows.
    pub(super) fn refuse_under_policy(
        &self,
        subject: &crate::auth::Subject,
        record: &DatasetRecord,
        version: i64,
        schema: &crate::schema::ValidSchema,
        what: &str,
    ) -> Result<()> {
        match self.policy_for(subject, record, version, schema)?.is_none() {
            true => Ok(()),
            false => Err(Error::forbidden(format!(
                "Subject {} may not see the {what} of this dataset version: a policy applies to \
                 it there, and the {what} would count hidden rows (query the dataset instead)",
                subject.name
            ))),
        }
    }

    fn policy_target(
        &self,
        key: &DatasetKey,
        version: Option<i64>,
    ) -> Result<(DatasetRecord, i64)> {
        let record = self.registry.find(key)?;
        let version = pick_version(version, record.latest_version);
        if version > record.latest_version {
            return Err(no_version(key, version));
        }
        Ok((record, version))
    }
}

fn no_version(key: &DatasetKey, version: i64) -> Error {
    Error::not_found(format!(
        "The dataset [{}/{}/{}] has no schema version [{version}]",
        key.layer, key.domain, key.dataset
    ))
}

fn no_policy(key: &DatasetKey, version: i64) -> Error {
    Error::not_found(format!(
        "The dataset [{}/{}/{}] has no policy at schema version [{version}]",
        key.layer, key.domain, key.dataset
    ))
}
