//! A tool call's arguments (a JSON object), read with the API's own error for a bad one: a
//! missing or mistyped argument is the caller's mistake, told back by name.

use rapid_actors::key::DatasetKey;
use rapid_actors::Error;
use rmcp::model::JsonObject;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub(super) struct Args<'a>(pub &'a JsonObject);

impl Args<'_> {
    fn present(&self, name: &str) -> Option<&Value> {
        self.0.get(name).filter(|v| !v.is_null())
    }

    pub(super) fn text(&self, name: &str) -> Result<String, Error> {
        match self.present(name) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
            Some(_) => Err(Error::invalid(format!(
                "`{name}` must be a non-empty string"
            ))),
            None => Err(Error::invalid(format!("`{name}` is required"))),
        }
    }

    pub(super) fn whole(&self, name: &str) -> Result<Option<i64>, Error> {
        match self.present(name) {
            None => Ok(None),
            Some(v) => v
                .as_i64()
                .map(Some)
                .ok_or_else(|| Error::invalid(format!("`{name}` must be a whole number"))),
        }
    }

    /// An argument read as `T` (a query object, a filter, a schema), absent: `None`.
    pub(super) fn object<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>, Error> {
        match self.present(name) {
            None => Ok(None),
            Some(v) if !v.is_object() => Err(Error::invalid(format!("`{name}` must be an object"))),
            Some(v) => serde_json::from_value(v.clone())
                .map(Some)
                .map_err(|e| Error::invalid(format!("Invalid `{name}`: {e}"))),
        }
    }

    /// The dataset named by `layer`, `domain` and `dataset`.
    pub(super) fn dataset(&self) -> Result<DatasetKey, Error> {
        Ok(DatasetKey::new(
            &self.text("layer")?,
            &self.text("domain")?,
            &self.text("dataset")?,
        ))
    }

    /// The rows asked for (`max_rows`), at most `cap`; absent: `cap`.
    pub(super) fn max_rows(&self, cap: u64) -> Result<u64, Error> {
        match self.whole("max_rows")? {
            None => Ok(cap),
            Some(n) if n >= 1 => Ok((n as u64).min(cap)),
            Some(_) => Err(Error::invalid("`max_rows` must be 1 or more")),
        }
    }
}
