//! The rules of request fields the OpenAPI document states, where a derive attribute cannot:
//! permission lists (names from the engine, no repeats) and the token endpoint's grant types. Name patterns are written beside their
//! fields; tests/api/openapi.rs checks them against the engine's.

use std::collections::BTreeSet;

use rapid_actors::auth::permission::{all_permission_names, PermissionContext};
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Type};
use utoipa::openapi::{Array, Object};

/// The permission names every instance accepts. Names scoped to a configured layer
/// (`READ_<LAYER>_PUBLIC`) and to a protected domain (`READ_PROTECTED_<DOMAIN>`) are accepted too;
/// `GET /api/permissions` lists this instance's.
fn permission_names() -> Vec<String> {
    all_permission_names(PermissionContext {
        layers: &[],
        protected_domains: &BTreeSet::new(),
    })
}

fn permission_array(min_items: usize) -> Array {
    let name = ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(permission_names()));
    ArrayBuilder::new()
        .items(name)
        .unique_items(true)
        .min_items(Some(min_items))
        .description(Some(
            "Permission names, each once. Also accepted: names scoped to a layer of this instance \
             or to a protected domain; `GET /api/permissions` lists them all.",
        ))
        .build()
}

/// A new subject's permissions: at least one.
pub fn new_subject_permissions() -> Array {
    permission_array(1)
}

/// A subject's new permissions: may be empty (every permission revoked).
pub fn replacement_permissions() -> Array {
    permission_array(0)
}

/// The grants `POST /api/oauth2/token` serves.
pub fn grant_type() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(["client_credentials", "password"]))
        .description(Some("Absent: `client_credentials`."))
        .build()
}
