//! The Delta Lake actions of one log version, as JSON lines (the Delta transaction log protocol,
//! "Actions"): `commitInfo`, then `protocol` and `metaData` in version 0, then `add` and `remove`.
//! Everything is derived from catalog rows, so the same commit always gives the same bytes.

use serde_json::{json, Map, Value};

use crate::catalog::{CommitChanges, DataFile};
use crate::error::{Error, Result};
use crate::key::DatasetKey;
use crate::schema::{DataType, ValidSchema};
use crate::storage::decode_partition_value;

/// What the first version of a table says about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// `data/{layer}/{domain}/{dataset}/{version}`: data file paths are written relative to it.
    pub root: String,
    /// Stable per dataset, version and first commit: a UUID-shaped digest.
    pub id: String,
    pub name: String,
    /// The Delta schema (JSON text): every column of the schema, partition columns included.
    pub schema_string: String,
    pub partition_columns: Vec<String>,
    /// Each column's type, for its bounds in the `add` actions' stats.
    pub types: Vec<(String, DataType)>,
}

impl Table {
    pub fn new(
        root: String,
        key: &DatasetKey,
        dataset_id: i64,
        version: i64,
        first: i64,
        schema: &ValidSchema,
    ) -> Table {
        let seed = format!("{dataset_id}/{}/{version}/{first}", key.display());
        let digest = ring::digest::digest(&ring::digest::SHA256, seed.as_bytes());
        let b = digest.as_ref();
        let hex: String = b[..16].iter().map(|x| format!("{x:02x}")).collect();
        let id = format!(
            "{}-{}-4{}-8{}-{}",
            &hex[0..8],
            &hex[8..12],
            &hex[13..16],
            &hex[17..20],
            &hex[20..32]
        );
        Table {
            root,
            id,
            name: format!("{}_v{version}", key.dataset),
            schema_string: schema_string(schema),
            partition_columns: schema.partition_columns().map(|c| c.name.clone()).collect(),
            types: schema
                .columns()
                .iter()
                .map(|c| (c.name.clone(), c.data_type))
                .collect(),
        }
    }
}

/// Delta's primitive type for ours. Stored Parquet files hold Int64, Float64, Utf8, Date32 and
/// Boolean; no type of ours needs a table feature (no timestamps).
fn delta_type(t: DataType) -> &'static str {
    match t {
        DataType::Int => "long",
        DataType::Double => "double",
        DataType::String => "string",
        DataType::Date => "date",
        DataType::Boolean => "boolean",
    }
}

/// Every column, in schema order, nullable (a reader never refuses a file for it; our Parquet
/// files hold the data columns only, partition values are in the paths and `partitionValues`).
fn schema_string(schema: &ValidSchema) -> String {
    let fields: Vec<Value> = schema
        .columns()
        .iter()
        .map(|c| json!({"name": c.name, "type": delta_type(c.data_type), "nullable": true, "metadata": {}}))
        .collect();
    json!({"type": "struct", "fields": fields}).to_string()
}

/// Milliseconds since the epoch of a catalog time (RFC 3339).
pub(super) fn millis(time: &str) -> Result<i64> {
    chrono::DateTime::parse_from_rfc3339(time)
        .map(|t| t.timestamp_millis())
        .map_err(|e| Error::internal(format!("commit time [{time}]: {e}")))
}

/// `p0=v/p1=w` as Delta's partition values (decoded strings, as Hive readers decode them).
fn partition_values(file: &DataFile) -> Map<String, Value> {
    file.partition_path
        .split('/')
        .filter(|s| !s.is_empty())
        .filter_map(|segment| segment.split_once('='))
        .map(|(name, value)| (name.to_string(), Value::from(decode_partition_value(value))))
        .collect()
}

/// A data file's path relative to the table root, as the URI Delta expects (our segments are
/// letters, digits, `_-.=` and `%XX`: only `%` needs encoding).
fn relative_path(table: &Table, file: &DataFile) -> Result<String> {
    file.path
        .strip_prefix(&table.root)
        .and_then(|p| p.strip_prefix('/'))
        .map(|p| p.replace('%', "%25"))
        .ok_or_else(|| {
            Error::internal(format!(
                "data file {} lies outside its table {}",
                file.path, table.root
            ))
        })
}

fn add(table: &Table, file: &DataFile, at: i64, data_change: bool) -> Result<Value> {
    Ok(json!({"add": {
        "path": relative_path(table, file)?,
        "partitionValues": partition_values(file),
        "size": file.bytes,
        "modificationTime": at,
        "dataChange": data_change,
        "stats": stats(table, file),
    }}))
}

/// A bound in Delta's JSON form: dates as `YYYY-MM-DD` (ours are days since the epoch).
fn delta_bound(t: DataType, value: &Value) -> Option<Value> {
    if value.is_null() {
        return None;
    }
    match t {
        DataType::Date => {
            let days = i32::try_from(value.as_i64()?).ok()?;
            let date = chrono::NaiveDate::from_num_days_from_ce_opt(days.checked_add(719_163)?)?;
            Some(Value::from(date.format("%Y-%m-%d").to_string()))
        }
        // Delta's readers skip no file on boolean bounds; the null count is kept.
        DataType::Boolean | DataType::Double => None,
        DataType::Int | DataType::String => Some(value.clone()),
    }
}

/// The `add` action's stats: the row count, and where the catalog keeps the file's column
/// bounds (`manifest::stats`: `{"column": [min, max, nulls]}`) Delta's `minValues`,
/// `maxValues` and `nullCount`, so readers skip files (text bounds may be cut prefixes, a
/// maximum rounded up: bounds still).
fn stats(table: &Table, file: &DataFile) -> String {
    let mut out = Map::new();
    out.insert("numRecords".into(), Value::from(file.rows));
    let kept: Option<Map<String, Value>> = file
        .stats
        .as_deref()
        .and_then(|s| serde_json::from_str(s).ok());
    if let Some(kept) = kept {
        let (mut min, mut max, mut nulls) = (Map::new(), Map::new(), Map::new());
        for (name, t) in &table.types {
            let Some([low, high, n]) = kept
                .get(name)
                .and_then(Value::as_array)
                .and_then(|a| <&[Value; 3]>::try_from(a.as_slice()).ok())
            else {
                continue;
            };
            if let Some(low) = delta_bound(*t, low) {
                min.insert(name.clone(), low);
            }
            if let Some(high) = delta_bound(*t, high) {
                max.insert(name.clone(), high);
            }
            if n.is_u64() {
                nulls.insert(name.clone(), n.clone());
            }
        }
        out.insert("minValues".into(), Value::Object(min));
        out.insert("maxValues".into(), Value::Object(max));
        out.insert("nullCount".into(), Value::Object(nulls));
    }
    Value::Object(out).to_string()
}

fn remove(table: &Table, file: &DataFile, at: i64, data_change: bool) -> Result<Value> {
    Ok(json!({"remove": {
        "path": relative_path(table, file)?,
        "deletionTimestamp": at,
        "dataChange": data_change,
        "extendedFileMetadata": true,
        "partitionValues": partition_values(file),
        "size": file.bytes,
    }}))
}

/// Delta's operation name for a catalog commit's.
fn operation(ours: &str) -> (&'static str, Value) {
    match ours {
        "APPEND" => ("WRITE", json!({"mode": "Append"})),
        "OVERWRITE" => ("WRITE", json!({"mode": "Overwrite"})),
        "DELETE" | "ERASE" => ("DELETE", json!({})),
        "COMPACT" => ("OPTIMIZE", json!({})),
        "ROLLBACK" => ("RESTORE", json!({})),
        _ => ("WRITE", json!({})),
    }
}

fn commit_info(commit: &CommitChanges, at: i64, first: bool) -> Value {
    let (name, parameters) = match first {
        true => ("CREATE TABLE", json!({})),
        false => operation(&commit.operation),
    };
    json!({"commitInfo": {
        "timestamp": at,
        "operation": name,
        "operationParameters": parameters,
        "rapidCommit": commit.commit,
        "rapidOperation": commit.operation,
    }})
}

/// The JSON lines of one log version: commit `commit`'s adds and removes, or (`first`: the
/// version that starts the log) protocol, metadata and `first`'s files as adds (the state at
/// that commit; the log starts at the oldest commit the catalog can still derive).
pub fn version_json(
    table: &Table,
    commit: &CommitChanges,
    first: Option<&[DataFile]>,
) -> Result<String> {
    let at = millis(&commit.committed_at)?;
    let mut lines = vec![commit_info(commit, at, first.is_some())];
    if let Some(files) = first {
        lines.push(json!({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}));
        lines.push(json!({"metaData": {
            "id": table.id,
            "name": table.name,
            "format": {"provider": "parquet", "options": {}},
            "schemaString": table.schema_string,
            "partitionColumns": table.partition_columns,
            "configuration": {},
            "createdTime": at,
        }}));
        for file in files {
            lines.push(add(table, file, at, true)?);
        }
    } else {
        // A compaction moves rows between files: no data change (Delta's OPTIMIZE).
        let data_change = commit.operation != "COMPACT";
        for file in &commit.removed {
            lines.push(remove(table, file, at, data_change)?);
        }
        for file in &commit.added {
            lines.push(add(table, file, at, data_change)?);
        }
    }
    let mut out = String::new();
    for line in lines {
        out.push_str(&line.to_string());
        out.push('\n');
    }
    Ok(out)
}

/// The catalog commit a log version was derived from (its `commitInfo.rapidCommit`).
pub fn rapid_commit(version_json: &[u8]) -> Option<i64> {
    let first_line = version_json.split(|b| *b == b'\n').next()?;
    let value: Value = serde_json::from_slice(first_line).ok()?;
    value["commitInfo"]["rapidCommit"].as_i64()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(partition_path: &str, name: &str) -> DataFile {
        let root = "data/l/d/s/1";
        DataFile {
            id: 1,
            raw_filename: "r.csv".into(),
            partition_path: partition_path.into(),
            path: format!("{root}/{partition_path}/{name}"),
            rows: 3,
            bytes: 100,
            stats: None,
        }
    }

    fn table() -> Table {
        Table {
            root: "data/l/d/s/1".into(),
            id: "id".into(),
            name: "s_v1".into(),
            schema_string: "{}".into(),
            partition_columns: vec!["region".into(), "day".into()],
            types: vec![
                ("id".into(), DataType::Int),
                ("day".into(), DataType::Date),
                ("note".into(), DataType::String),
                ("paid".into(), DataType::Boolean),
            ],
        }
    }

    #[test]
    fn adds_name_files_from_the_table_root_with_decoded_partition_values() {
        let f = file("region=S%C3%A3o%20Paulo/day=2024-01-31", "a.parquet");
        let v = add(&table(), &f, 5, true).unwrap();
        assert_eq!(
            v["add"]["path"],
            "region=S%25C3%25A3o%2520Paulo/day=2024-01-31/a.parquet"
        );
        assert_eq!(v["add"]["partitionValues"]["region"], "São Paulo");
        assert_eq!(v["add"]["partitionValues"]["day"], "2024-01-31");
        assert_eq!(v["add"]["stats"], r#"{"numRecords":3}"#);
        let outside = DataFile {
            path: "data/l/d/s/2/x.parquet".into(),
            ..f
        };
        assert!(add(&table(), &outside, 5, true).is_err());
    }

    #[test]
    fn stats_carry_the_kept_bounds_in_delta_s_form() {
        let f = DataFile {
            stats: Some(
                r#"{"id":[1,9,0],"day":[19723,null,2],"note":["a","b",1],"paid":[false,true,0]}"#
                    .into(),
            ),
            ..file("region=n", "a.parquet")
        };
        let v: Value = serde_json::from_str(&stats(&table(), &f)).unwrap();
        assert_eq!(
            v,
            json!({"numRecords": 3,
                "minValues": {"id": 1, "day": "2024-01-01", "note": "a"},
                "maxValues": {"id": 9, "note": "b"},
                "nullCount": {"id": 0, "day": 2, "note": 1, "paid": 0}})
        );
    }

    #[test]
    fn the_first_version_carries_protocol_metadata_and_the_commit() {
        let commit = CommitChanges {
            commit: 4,
            committed_at: "2026-01-31T12:00:00.123Z".into(),
            operation: "APPEND".into(),
            added: Vec::new(),
            removed: Vec::new(),
        };
        let files = [file("region=n/day=2024-01-01", "a.parquet")];
        let text = version_json(&table(), &commit, Some(&files)).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0]["commitInfo"]["timestamp"], 1769860800123i64);
        assert_eq!(lines[1]["protocol"]["minReaderVersion"], 1);
        assert_eq!(lines[2]["metaData"]["partitionColumns"][1], "day");
        assert_eq!(rapid_commit(text.as_bytes()), Some(4));
        // Derived: the same rows give the same bytes.
        assert_eq!(text, version_json(&table(), &commit, Some(&files)).unwrap());
    }
}
