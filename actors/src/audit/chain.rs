//! The hash chain over the log's rows: row `n`'s hash is SHA-256 of the previous row's hash, its
//! id and its entry's canonical JSON. Retention removes the oldest rows; the first row left keeps
//! the hash of the one before it, so what remains still verifies from there.

use ring::digest::{digest, SHA256};

use super::{AuditEntry, AuditStore};
use crate::error::{Error, Result};

/// The previous hash of the very first row.
pub(crate) const GENESIS: &str = "";

/// The hash of row `id` holding `entry` after a row hashed `prev`.
pub(super) fn hash(prev: &str, id: i64, entry: &AuditEntry) -> Result<String> {
    let json = serde_json::to_string(entry)
        .map_err(|e| Error::internal(format!("an audit row as JSON: {e}")))?;
    let text = format!("{prev}\n{id}\n{json}");
    let sum = digest(&SHA256, text.as_bytes());
    Ok(sum.as_ref().iter().map(|b| format!("{b:02x}")).collect())
}

/// What a verification found.
#[derive(Debug, Clone, PartialEq)]
pub struct Verified {
    /// Rows checked.
    pub rows: u64,
    /// The first and last ids checked (none when the log is empty).
    pub first: Option<i64>,
    pub last: Option<i64>,
}

/// Reads the whole log in id order and checks every link: each row's stored hash is its own,
/// each row names the hash of the row before it, and ids have no gap. The first row's error,
/// naming its id, when any fails.
pub fn verify(store: &dyn AuditStore) -> Result<Verified> {
    const PAGE: usize = 5_000;
    let mut found = Verified {
        rows: 0,
        first: None,
        last: None,
    };
    let mut previous: Option<(i64, String)> = None;
    loop {
        let after = previous.as_ref().map_or(0, |(id, _)| *id);
        let page = store.chain_from(after, PAGE)?;
        if page.is_empty() {
            return Ok(found);
        }
        for row in &page {
            if let Some((id, prev_hash)) = &previous {
                if row.id != id + 1 {
                    return Err(broken(row.id, &format!("the row after {id} is {}", row.id)));
                }
                if &row.prev_hash != prev_hash {
                    return Err(broken(
                        row.id,
                        "it does not name the hash of the row before it",
                    ));
                }
            }
            if hash(&row.prev_hash, row.id, &row.entry)? != row.hash {
                return Err(broken(row.id, "its content does not match its hash"));
            }
            found.first.get_or_insert(row.id);
            found.last = Some(row.id);
            found.rows += 1;
            previous = Some((row.id, row.hash.clone()));
        }
    }
}

fn broken(id: i64, why: &str) -> Error {
    Error::conflict(format!(
        "The audit log's hash chain is broken at row {id}: {why}"
    ))
}
