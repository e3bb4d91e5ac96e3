//! Permission passes: proof, carried into the engine's use cases, that a subject was checked for
//! what it asks. Only this module builds them (their fields are private, their constructors
//! crate-private: the edges ask `Engine`'s methods), from a [`Subject`], which only the engine
//! builds (from a verified token or its own snapshot), and for a dataset from the catalog's own
//! [`DatasetRecord`].
//!
//! Outside the engine neither a pass nor a record can be made:
//!
//! ```compile_fail,E0603
//! use rapid_actors::auth::pass::dataset_pass;
//! ```
//!
//! ```compile_fail,E0451
//! use rapid_actors::key::{DatasetKey, DatasetRecord};
//! let invented = DatasetRecord {
//!     id: 1,
//!     key: DatasetKey::new("default", "d", "x"),
//!     name: "x".into(),
//!     sensitivity: rapid_actors::sensitivity::Sensitivity::Public,
//!     latest_version: 1,
//! };
//! ``` The engine's
//! methods take a pass instead of trusting their caller, so every front door (HTTP, web pages,
//! admin CLI) goes through the same checks. The 403 messages are the ones the API has always
//! answered (docs/API.md, Subjects and permissions).

use std::marker::PhantomData;
use std::sync::Arc;

use super::permission::{Access, Permission};
use super::Subject;
use crate::audit::Note;
use crate::error::{Error, Result};
use crate::key::{DatasetKey, DatasetRecord};

/// Which kind of dataset access a pass proves.
pub trait AccessKind {
    const ACCESS: Access;
}
/// Read access: queries, info.
pub struct Read;
/// Write access: uploads, file deletion.
pub struct Write;
impl AccessKind for Read {
    const ACCESS: Access = Access::Read;
}
impl AccessKind for Write {
    const ACCESS: Access = Access::Write;
}

/// Any authenticated subject, whatever its permissions.
#[derive(Clone)]
pub struct SubjectPass {
    subject: Arc<Subject>,
    note: Note,
}

/// A holder of DATA_ADMIN: schemas, protected domains, dataset deletion, every job.
#[derive(Clone)]
pub struct AdminPass {
    subject: Arc<Subject>,
}

/// A holder of USER_ADMIN: clients, users, subject permissions.
#[derive(Clone)]
pub struct UserAdminPass {
    subject: Arc<Subject>,
}

/// A holder of USER_ADMIN or DATA_ADMIN: reads the audit log.
#[derive(Clone)]
pub struct AuditReaderPass {
    subject: Arc<Subject>,
}

impl AuditReaderPass {
    pub fn subject(&self) -> &Arc<Subject> {
        &self.subject
    }
}

/// The audit log is read by those who administer access or data (API.md, "Audit").
pub(crate) fn audit_reader_pass(subject: Arc<Subject>) -> Result<AuditReaderPass> {
    if subject.has(&Permission::UserAdmin) || subject.has(&Permission::DataAdmin) {
        return Ok(AuditReaderPass { subject });
    }
    Err(Error::forbidden(format!(
        "Subject {} has no permission to read the audit log: it needs USER_ADMIN or DATA_ADMIN",
        subject.name
    )))
}

/// Access of kind `A` to one existing dataset, whose record it carries.
pub struct DatasetPass<A: AccessKind> {
    subject: Arc<Subject>,
    record: DatasetRecord,
    note: Note,
    _access: PhantomData<A>,
}

/// A copy for a second call of the same request (a page's several queries of one dataset).
impl<A: AccessKind> Clone for DatasetPass<A> {
    fn clone(&self) -> Self {
        DatasetPass {
            subject: self.subject.clone(),
            record: self.record.clone(),
            note: self.note.clone(),
            _access: PhantomData,
        }
    }
}

impl SubjectPass {
    pub fn subject(&self) -> &Arc<Subject> {
        &self.subject
    }
    /// Whether this subject also holds DATA_ADMIN (sees every job).
    pub fn is_data_admin(&self) -> bool {
        self.subject.has(&Permission::DataAdmin)
    }
    /// The same pass, writing what its use cases read into the request's audit `note`.
    pub fn with_note(mut self, note: Note) -> Self {
        note.by(&self.subject.id, &self.subject.name);
        self.note = note;
        self
    }
    pub fn note(&self) -> &Note {
        &self.note
    }
}

impl AdminPass {
    pub fn subject(&self) -> &Arc<Subject> {
        &self.subject
    }
}

impl UserAdminPass {
    pub fn subject(&self) -> &Arc<Subject> {
        &self.subject
    }
}

impl<A: AccessKind> DatasetPass<A> {
    pub fn subject(&self) -> &Arc<Subject> {
        &self.subject
    }
    pub fn record(&self) -> &DatasetRecord {
        &self.record
    }
    /// The same pass, writing what its use cases read into the request's audit `note`.
    pub fn with_note(mut self, note: Note) -> Self {
        note.by(&self.subject.id, &self.subject.name);
        self.note = note;
        self
    }
    pub fn note(&self) -> &Note {
        &self.note
    }
}

/// Every authenticated subject gets one.
pub(crate) fn subject_pass(subject: Arc<Subject>) -> SubjectPass {
    SubjectPass {
        subject,
        note: Note::default(),
    }
}

fn require(subject: &Subject, permission: Permission) -> Result<()> {
    if subject.has(&permission) {
        Ok(())
    } else {
        Err(Error::forbidden(format!(
            "Subject {} does not have the {permission} permission this action requires",
            subject.name
        )))
    }
}

pub(crate) fn admin_pass(subject: Arc<Subject>) -> Result<AdminPass> {
    require(&subject, Permission::DataAdmin)?;
    Ok(AdminPass { subject })
}

pub(crate) fn user_admin_pass(subject: Arc<Subject>) -> Result<UserAdminPass> {
    require(&subject, Permission::UserAdmin)?;
    Ok(UserAdminPass { subject })
}

/// Access of kind `A` to the dataset `key`, looked up with `find`. A subject with no permission
/// of the kind at all is refused (403) before the lookup, so it learns nothing about which
/// datasets exist; an unknown dataset is then 404, and a known one out of reach 403.
pub(crate) fn dataset_pass<A: AccessKind>(
    subject: Arc<Subject>,
    key: &DatasetKey,
    find: impl FnOnce(&DatasetKey) -> Result<DatasetRecord>,
) -> Result<DatasetPass<A>> {
    let verb = match A::ACCESS {
        Access::Read => "read",
        Access::Write => "write",
    };
    if !subject.permissions.iter().any(|p| p.is_access(A::ACCESS)) {
        return Err(Error::forbidden(format!(
            "Subject {} has no permission to {verb} any dataset",
            subject.name
        )));
    }
    let record = find(key)?;
    let allowed = subject.permissions.iter().any(|p| {
        p.grants(
            A::ACCESS,
            record.sensitivity,
            &record.key.layer,
            &record.key.domain,
        )
    });
    if !allowed {
        return Err(Error::forbidden(format!(
            "Subject {} does not have enough permissions to {verb} the dataset layer [{}], domain [{}] and dataset [{}]",
            subject.name, key.layer, key.domain, key.dataset
        )));
    }
    Ok(DatasetPass {
        subject,
        record,
        note: Note::default(),
        _access: PhantomData,
    })
}

/// The operator of `rapid-rs admin`, who holds the data folder itself and so needs no token:
/// USER_ADMIN for the offline commands (client creation). Crate-private: no front door can mint it.
pub(crate) fn operator_user_admin_pass() -> UserAdminPass {
    UserAdminPass {
        subject: Arc::new(Subject {
            id: "rapid-rs-admin".to_string(),
            kind: super::SubjectKind::Client,
            name: "rapid-rs admin (local operator)".to_string(),
            email: None,
            permissions: vec![Permission::UserAdmin],
            must_change_password: false,
            credential: crate::catalog::Credential::SecretDigest(Vec::new()),
        }),
    }
}
