//! A permission in words, for the pages that list permissions to tick.

use super::permission::{Access, LayerScope, Level, Permission};

impl Permission {
    /// What the permission lets its holder do, in one phrase (the permissions page says it
    /// beside each name).
    pub fn meaning(&self) -> String {
        let verb = |a: &Access| match a {
            Access::Read => "read",
            Access::Write => "upload to",
        };
        match self {
            Permission::DataAdmin => {
                "schemas, protected domains, deleting datasets and every job".into()
            }
            Permission::UserAdmin => "users, clients and their permissions".into(),
            Permission::All(a) => format!("{} every dataset, whatever its sensitivity", verb(a)),
            Permission::Data {
                access,
                layer,
                level,
            } => {
                let what = match level {
                    Level::Public => "PUBLIC datasets".to_string(),
                    Level::Private => "PRIVATE and PUBLIC datasets".to_string(),
                    Level::Protected(d) => format!("PROTECTED datasets of domain {d}"),
                };
                let place = match layer {
                    LayerScope::Named(l) => format!(" in layer {l}"),
                    _ => " in every layer".to_string(),
                };
                format!("{} {what}{place}", verb(access))
            }
        }
    }
}
