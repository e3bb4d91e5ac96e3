//! `pg_roles` as a session sees it: one role, its own subject (psql's `\du`), never the other
//! subjects of the service.

use async_trait::async_trait;
use datafusion_postgres::datafusion_pg_catalog::pg_catalog::context::{
    PgCatalogContextProvider, Role,
};

/// The signed-in subject as a role, by the user name it signed in with.
#[derive(Debug, Clone)]
pub(crate) struct SubjectRole(pub(crate) String);

#[async_trait]
impl PgCatalogContextProvider for SubjectRole {
    async fn roles(&self) -> Vec<String> {
        vec![self.0.clone()]
    }

    async fn role(&self, name: &str) -> Option<Role> {
        (name == self.0).then(|| Role {
            name: self.0.clone(),
            is_superuser: false,
            can_login: true,
            can_create_db: false,
            can_create_role: false,
            can_create_user: false,
            can_replication: false,
            grants: Vec::new(),
            inherited_roles: Vec::new(),
        })
    }
}
