//! Subject management: clients, users, permissions, protected domains.

use serde::Serialize;

use super::names;
use super::pass::{AdminPass, SubjectPass, UserAdminPass};
use super::permission::{
    all_permission_names, protected_domain_permission_names, validate_permissions, Permission,
    PermissionItem,
};
use super::secrets;
use super::snapshot::SubjectKind;
use super::Auth;
use crate::catalog::{Credential, DomainDeletion, SubjectRow};
use crate::error::{Error, Result};

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewClient {
    pub client_name: String,
    pub permissions: Vec<String>,
    pub client_id: String,
    /// Shown once, never again.
    pub client_secret: String,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewUser {
    pub username: String,
    pub email: String,
    pub permissions: Vec<String>,
    pub user_id: String,
    /// Shown once; the user sets their own password with it.
    pub temporary_password: String,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = Subject))]
pub struct SubjectView {
    pub subject_id: String,
    pub subject_name: String,
    #[serde(rename = "type")]
    pub kind: SubjectKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
}

/// Each method takes the pass its permission requires (USER_ADMIN for subjects, DATA_ADMIN for
/// protected domains), so no front door can reach them unchecked; changes are logged with the
/// name of the subject who made them.
impl Auth {
    pub async fn create_client(
        &self,
        by: &UserAdminPass,
        name: String,
        permissions: Vec<String>,
    ) -> Result<NewClient> {
        names::validate_client_name(&name)?;
        let client_id = secrets::new_client_id();
        let client_secret = secrets::new_client_secret();
        let digest = secrets::secret_digest(&client_secret);
        let id = client_id.clone();
        let client_name = name.clone();
        let permissions = self
            .apply(move |catalog, snap| {
                let perms = validate_permissions(&permissions, snap.permission_context(), false)?;
                let row = SubjectRow {
                    id,
                    name: name.clone(),
                    email: None,
                    credential: Credential::SecretDigest(digest),
                    must_change_password: false,
                };
                let names = names_of(&perms);
                if !catalog.create_subject(&row, &names)? {
                    // 400: the SDK reads it as "already exists".
                    return Err(Error::invalid(format!(
                        "Client name '{name}' already exists"
                    )));
                }
                Ok(names)
            })
            .await?;
        tracing::info!(by = %by.subject().name, client = %client_name, %client_id, "client created");
        Ok(NewClient {
            client_name,
            permissions,
            client_id,
            client_secret,
        })
    }

    pub async fn delete_client(&self, by: &UserAdminPass, client_id: String) -> Result<()> {
        let id = client_id.clone();
        self.apply(move |catalog, _| {
            if !catalog.delete_client(&id)? {
                return Err(Error::not_found(format!(
                    "The client '{id}' does not exist"
                )));
            }
            Ok(())
        })
        .await?;
        tracing::info!(by = %by.subject().name, %client_id, "client deleted");
        Ok(())
    }

    pub async fn create_user(
        &self,
        by: &UserAdminPass,
        username: String,
        email: String,
        permissions: Vec<String>,
    ) -> Result<NewUser> {
        names::validate_username(&username)?;
        let email = names::validate_email(&email, &self.settings.allowed_email_domains)?;
        let temporary_password = secrets::new_temporary_password();
        let hash = self.hash_new_password(temporary_password.clone()).await?;
        let user_id = uuid::Uuid::new_v4().to_string();
        let (id, name, mail) = (user_id.clone(), username.clone(), email.clone());
        let permissions = self
            .apply(move |catalog, snap| {
                let perms = validate_permissions(&permissions, snap.permission_context(), false)?;
                let row = SubjectRow {
                    id,
                    name: name.clone(),
                    email: Some(mail.clone()),
                    credential: Credential::PasswordHash(hash),
                    must_change_password: true,
                };
                let names = names_of(&perms);
                if !catalog.create_subject(&row, &names)? {
                    return Err(Error::invalid(format!(
                        "The user '{name}' or email '{mail}' already exist"
                    )));
                }
                Ok(names)
            })
            .await?;
        tracing::info!(by = %by.subject().name, user = %username, %user_id, "user created");
        Ok(NewUser {
            username,
            email,
            permissions,
            user_id,
            temporary_password,
        })
    }

    /// Deletes the user only when `username` and `user_id` name the same user.
    pub async fn delete_user(
        &self,
        by: &UserAdminPass,
        username: String,
        user_id: String,
    ) -> Result<()> {
        let (id, name) = (user_id.clone(), username.clone());
        self.apply(move |catalog, _| {
            if !catalog.delete_user(&id, &name)? {
                return Err(Error::not_found(format!(
                    "The user '{name}' with id '{id}' does not exist"
                )));
            }
            Ok(())
        })
        .await?;
        tracing::info!(by = %by.subject().name, user = %username, %user_id, "user deleted");
        Ok(())
    }

    /// A user replaces their own password (the pass's subject), proving the current one. The
    /// proof goes through the sign-in throttle like any sign-in, from the caller's address `addr`.
    pub async fn change_password(
        &self,
        caller: &SubjectPass,
        current: &str,
        new: &str,
        addr: std::net::IpAddr,
    ) -> Result<()> {
        let user_id = caller.subject().id.as_str();
        // As it is now: the pass may predate a deletion.
        let subject = self
            .snapshot()
            .subjects
            .get(user_id)
            .cloned()
            .ok_or_else(|| Error::unauthenticated("The subject of this token no longer exists"))?;
        if subject.kind != SubjectKind::User {
            return Err(Error::invalid(
                "Only users have passwords; clients use their secret",
            ));
        }
        names::validate_new_password(new)?;
        match self.check_password(&subject.name, current, addr).await {
            Ok(_) => {}
            Err(e) if e.kind == crate::error::ErrorKind::Unauthenticated => {
                return Err(Error::invalid("The current password is not correct"))
            }
            Err(e) => return Err(e),
        }
        if current == new {
            return Err(Error::invalid(
                "The new password must differ from the current one",
            ));
        }
        let hash = self.hash_new_password(new.to_string()).await?;
        let id = user_id.to_string();
        self.apply(move |catalog, _| catalog.set_password(&id, &hash))
            .await
    }

    /// An argon2 hash of a new password, computed on the bounded hash pool.
    async fn hash_new_password(&self, password: String) -> Result<String> {
        self.pool
            .run(move |memory| secrets::hash_password_in(&password, memory))
            .await?
    }

    pub fn list_subjects(&self, _: &UserAdminPass) -> Vec<SubjectView> {
        let snap = self.snapshot();
        let mut out: Vec<SubjectView> = snap
            .subjects
            .values()
            .map(|s| SubjectView {
                subject_id: s.id.clone(),
                subject_name: s.name.clone(),
                kind: s.kind,
                email: s.email.clone(),
            })
            .collect();
        // Clients first, then users, each by name: a stable order for people and tests.
        out.sort_by(|a, b| {
            (a.kind == SubjectKind::User, &a.subject_name)
                .cmp(&(b.kind == SubjectKind::User, &b.subject_name))
        });
        out
    }

    /// Replaces a subject's whole permission set.
    pub async fn set_permissions(
        &self,
        by: &UserAdminPass,
        subject_id: String,
        permissions: Vec<String>,
    ) -> Result<Vec<String>> {
        let id = subject_id.clone();
        let names = self
            .apply(move |catalog, snap| {
                let perms = validate_permissions(&permissions, snap.permission_context(), true)?;
                let names = names_of(&perms);
                if !catalog.replace_permissions(&id, &names)? {
                    return Err(Error::not_found(format!(
                        "Subject with ID {id} does not exist"
                    )));
                }
                Ok(names)
            })
            .await?;
        tracing::info!(by = %by.subject().name, %subject_id, permissions = ?names, "permissions replaced");
        Ok(names)
    }

    /// A subject's permissions as rAPId's objects (`GET /permissions/{subject_id}`); 404 if unknown.
    pub fn subject_permissions(
        &self,
        _: &UserAdminPass,
        subject_id: &str,
    ) -> Result<Vec<PermissionItem>> {
        self.snapshot()
            .subjects
            .get(subject_id)
            .map(|s| s.permission_items())
            .ok_or_else(|| Error::not_found(format!("Subject with ID {subject_id} does not exist")))
    }

    pub fn permission_names(&self, _: &UserAdminPass) -> Vec<String> {
        all_permission_names(self.snapshot().permission_context())
    }

    pub fn protected_domains(&self, _: &AdminPass) -> Vec<String> {
        self.snapshot().protected_domains.iter().cloned().collect()
    }

    /// Creates a protected domain, which makes its READ/WRITE permissions valid. Returns it lower-case.
    pub async fn create_protected_domain(&self, by: &AdminPass, domain: &str) -> Result<String> {
        let domain = names::validate_protected_domain(domain)?;
        let d = domain.clone();
        self.apply(move |catalog, _| {
            if !catalog.create_protected_domain(&d)? {
                return Err(Error::conflict(format!(
                    "The protected domain, [{}] already exists",
                    d.to_ascii_uppercase()
                )));
            }
            Ok(())
        })
        .await?;
        tracing::info!(by = %by.subject().name, %domain, "protected domain created");
        Ok(domain)
    }

    /// Deletes a protected domain no dataset uses, and strips its permissions from every subject.
    pub async fn delete_protected_domain(&self, by: &AdminPass, domain: &str) -> Result<String> {
        let domain = names::validate_protected_domain(domain)?;
        let d = domain.clone();
        self.apply(move |catalog, snap| {
            // Its permissions in every layer scope: docs/SPEC.md's names and rAPId's layered ones.
            let revoke = protected_domain_permission_names(&d, &snap.layers);
            match catalog.delete_protected_domain(&d, &revoke)? {
                DomainDeletion::Deleted => Ok(()),
                DomainDeletion::NotFound => Err(Error::not_found(format!(
                    "The protected domain, [{d}] does not exist."
                ))),
                DomainDeletion::InUse(in_use) => Err(Error::invalid(format!(
                    "Cannot delete protected domain [{d}] as it is not empty. Please delete the datasets [{}]",
                    in_use.join(", ")
                ))),
            }
        })
        .await?;
        tracing::info!(by = %by.subject().name, %domain, "protected domain deleted");
        Ok(domain)
    }
}

fn names_of(perms: &[Permission]) -> Vec<String> {
    perms.iter().map(|p| p.to_string()).collect()
}
