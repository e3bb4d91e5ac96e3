//! Dataset sensitivity: who may see a dataset depends on it (see `auth::permission`).

use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "UPPERCASE")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Sensitivity {
    Public,
    Private,
    Protected,
}

impl Sensitivity {
    pub const ALL: [Sensitivity; 3] = [
        Sensitivity::Public,
        Sensitivity::Private,
        Sensitivity::Protected,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Sensitivity::Public => "PUBLIC",
            Sensitivity::Private => "PRIVATE",
            Sensitivity::Protected => "PROTECTED",
        }
    }
}

impl fmt::Display for Sensitivity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Sensitivity {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, ()> {
        match s {
            "PUBLIC" => Ok(Sensitivity::Public),
            "PRIVATE" => Ok(Sensitivity::Private),
            "PROTECTED" => Ok(Sensitivity::Protected),
            _ => Err(()),
        }
    }
}
