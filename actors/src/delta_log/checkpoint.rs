//! Delta checkpoints (the Delta transaction log protocol, "Checkpoints"): every `interval`
//! log versions, `{n:020}.checkpoint.parquet` holds the table's state at version `n` (protocol,
//! metadata and an `add` for each live file; no tombstones), and `_last_checkpoint` names the
//! newest, so a reader replays at most `interval - 1` JSON versions instead of the whole log.
//!
//! A checkpoint is derived from the log it summarises (the newest checkpoint before it and the
//! JSON versions after that, replayed as a reader replays them), so its adds are the log's
//! adds, byte for byte once decoded. Written after the JSON version, put-if-absent and durable
//! as the JSON is; `_last_checkpoint` after it (a hint: a reader that finds it stale or absent
//! lists the folder).

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef};
use arrow::record_batch::RecordBatch;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::storage::ObjectStorage;

// Log versions between checkpoints: `Storage::checkpoint_interval`
// (`RAPID_DELTA_CHECKPOINT_INTERVAL`, default `storage::DEFAULT_CHECKPOINT_INTERVAL`; 0: none).

const LAST: &str = "_last_checkpoint";
const SUFFIX: &str = ".checkpoint.parquet";

/// The key of checkpoint `version` in the log folder `folder`.
pub fn key(folder: &str, version: i64) -> String {
    format!("{folder}/{version:020}{SUFFIX}")
}

pub fn last_key(folder: &str) -> String {
    format!("{folder}/{LAST}")
}

fn json_key(folder: &str, version: i64) -> String {
    format!("{folder}/{version:020}.json")
}

/// The version of a checkpoint file's key (single-part checkpoints only: the only ones we
/// write).
fn version_of(key: &str) -> Option<i64> {
    let name = key.rsplit('/').next()?;
    let digits = name.strip_suffix(SUFFIX)?;
    (digits.len() == 20).then(|| digits.parse().ok()).flatten()
}

fn map() -> DataType {
    let entries = Field::new(
        "key_value",
        DataType::Struct(Fields::from(vec![
            Field::new("key", DataType::Utf8, false),
            Field::new("value", DataType::Utf8, true),
        ])),
        false,
    );
    DataType::Map(Arc::new(entries), false)
}

fn action(name: &str, fields: Vec<Field>) -> Field {
    Field::new(name, DataType::Struct(Fields::from(fields)), true)
}

fn utf8(name: &str) -> Field {
    Field::new(name, DataType::Utf8, true)
}

fn long(name: &str) -> Field {
    Field::new(name, DataType::Int64, true)
}

/// The checkpoint's columns: one struct per action type, every field optional (as Spark writes
/// them); each row holds one action.
static SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    let flag = |name: &str| Field::new(name, DataType::Boolean, true);
    let values = |name: &str| Field::new(name, map(), true);
    Arc::new(Schema::new(vec![
        action(
            "txn",
            vec![utf8("appId"), long("version"), long("lastUpdated")],
        ),
        action(
            "add",
            vec![
                utf8("path"),
                values("partitionValues"),
                long("size"),
                long("modificationTime"),
                flag("dataChange"),
                utf8("stats"),
            ],
        ),
        action(
            "remove",
            vec![
                utf8("path"),
                long("deletionTimestamp"),
                flag("dataChange"),
                flag("extendedFileMetadata"),
                values("partitionValues"),
                long("size"),
            ],
        ),
        action(
            "metaData",
            vec![
                utf8("id"),
                utf8("name"),
                utf8("description"),
                action("format", vec![utf8("provider"), values("options")]),
                utf8("schemaString"),
                Field::new(
                    "partitionColumns",
                    DataType::List(Arc::new(Field::new("element", DataType::Utf8, true))),
                    true,
                ),
                values("configuration"),
                long("createdTime"),
            ],
        ),
        action(
            "protocol",
            vec![
                Field::new("minReaderVersion", DataType::Int32, true),
                Field::new("minWriterVersion", DataType::Int32, true),
            ],
        ),
    ]))
});

/// A table's state as a reader replays its log: the newest protocol and metadata, and the
/// live files' adds by path.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct State {
    protocol: Option<Value>,
    metadata: Option<Value>,
    adds: BTreeMap<String, Value>,
}

impl State {
    /// Applies one action (a JSON line's object, or a checkpoint row's).
    fn apply_action(&mut self, action: Value) {
        let Value::Object(mut fields) = action else {
            return;
        };
        if let Some(add) = fields.remove("add") {
            if let Some(path) = add["path"].as_str() {
                self.adds.insert(path.to_string(), add);
            }
        } else if let Some(remove) = fields.remove("remove") {
            if let Some(path) = remove["path"].as_str() {
                self.adds.remove(path);
            }
        } else if let Some(protocol) = fields.remove("protocol") {
            self.protocol = Some(protocol);
        } else if let Some(metadata) = fields.remove("metaData") {
            self.metadata = Some(metadata);
        }
    }

    /// Applies one log version's JSON lines.
    pub fn apply(&mut self, version_json: &[u8]) -> Result<()> {
        for line in version_json.split(|b| *b == b'\n') {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let action = serde_json::from_slice(line)
                .map_err(|e| Error::internal(format!("a Delta log line: {e}")))?;
            self.apply_action(action);
        }
        Ok(())
    }

    /// The state as checkpoint actions: protocol, metadata, then the adds in path order.
    pub fn actions(&self) -> Vec<Value> {
        let mut out = Vec::new();
        out.extend(self.protocol.iter().map(|p| json!({"protocol": p})));
        out.extend(self.metadata.iter().map(|m| json!({"metaData": m})));
        out.extend(self.adds.values().map(|a| json!({"add": a})));
        out
    }

    pub fn files(&self) -> usize {
        self.adds.len()
    }
}

/// The Parquet checkpoint of `state`.
pub fn encode(state: &State) -> Result<Vec<u8>> {
    let fail = |e: &dyn std::fmt::Display| Error::internal(format!("a Delta checkpoint: {e}"));
    let actions = state.actions();
    let mut decoder = arrow::json::ReaderBuilder::new(SCHEMA.clone())
        .with_batch_size(actions.len().max(1))
        .build_decoder()
        .map_err(|e| fail(&e))?;
    decoder.serialize(&actions).map_err(|e| fail(&e))?;
    let batch = decoder
        .flush()
        .map_err(|e| fail(&e))?
        .unwrap_or_else(|| RecordBatch::new_empty(SCHEMA.clone()));
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .build();
    let mut out = Vec::new();
    let mut writer =
        ArrowWriter::try_new(&mut out, SCHEMA.clone(), Some(props)).map_err(|e| fail(&e))?;
    writer.write(&batch).map_err(|e| fail(&e))?;
    writer.close().map_err(|e| fail(&e))?;
    Ok(out)
}

/// The state a Parquet checkpoint holds.
pub fn decode(bytes: Vec<u8>) -> Result<State> {
    let fail = |e: &dyn std::fmt::Display| Error::internal(format!("a Delta checkpoint: {e}"));
    let reader = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes))
        .map_err(|e| fail(&e))?
        .build()
        .map_err(|e| fail(&e))?;
    let mut state = State::default();
    for batch in reader {
        let batch = batch.map_err(|e| fail(&e))?;
        let mut writer = arrow::json::LineDelimitedWriter::new(Vec::new());
        writer.write(&batch).map_err(|e| fail(&e))?;
        writer.finish().map_err(|e| fail(&e))?;
        state.apply(&writer.into_inner())?;
    }
    Ok(state)
}

/// Makes sure the newest checkpoint due at or below log version `last` exists, checkpointing
/// every `every` versions (0: never), derived from the log in `folder`; answers whether it
/// wrote one.
pub fn ensure(objects: &dyn ObjectStorage, folder: &str, last: i64, every: u64) -> Result<bool> {
    let every = i64::try_from(every).unwrap_or(i64::MAX);
    if every <= 0 || last < every {
        return Ok(false);
    }
    let due = last - last % every;
    if objects.exists(&key(folder, due))? {
        return Ok(false);
    }
    let base = objects
        .list(folder)?
        .iter()
        .filter_map(|o| version_of(&o.key))
        .filter(|v| *v < due)
        .max();
    let mut state = match base {
        Some(b) => decode(objects.read_all(&key(folder, b))?)?,
        None => State::default(),
    };
    for v in base.map_or(0, |b| b + 1)..=due {
        state.apply(&objects.read_all(&json_key(folder, v))?)?;
    }
    let bytes = encode(&state)?;
    objects.put_new(&key(folder, due), &bytes)?;
    let last_json = json!({
        "version": due,
        "size": state.actions().len(),
        "sizeInBytes": bytes.len(),
        "numOfAddFiles": state.files(),
    })
    .to_string();
    point_last(objects, folder, due, last_json.as_bytes())?;
    Ok(true)
}

/// The version `_last_checkpoint` names, `None` when it is absent or unreadable.
fn named_last(objects: &dyn ObjectStorage, folder: &str) -> Result<Option<i64>> {
    match objects.read_all(&last_key(folder)) {
        Ok(bytes) => Ok(serde_json::from_slice::<Value>(&bytes)
            .ok()
            .and_then(|v| v["version"].as_i64())),
        Err(e) if crate::storage::is_missing(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

/// `_last_checkpoint` moved up to `version` (never down: another writer may be ahead). It is
/// replaced by a removal and a put-if-absent; a reader between the two lists the folder.
fn point_last(objects: &dyn ObjectStorage, folder: &str, version: i64, text: &[u8]) -> Result<()> {
    for _ in 0..3 {
        if objects.put_new(&last_key(folder), text)? {
            return Ok(());
        }
        match named_last(objects, folder)? {
            Some(named) if named >= version => return Ok(()),
            _ => objects.delete(&last_key(folder))?,
        }
    }
    Ok(())
}

/// Where the checkpoints in `folder` disagree with the JSON versions they summarise, and
/// whether `_last_checkpoint` names one that is missing: `"{file}: {what}"` each.
pub fn check(objects: &dyn ObjectStorage, folder: &str, found: &mut Vec<String>) -> Result<()> {
    let listed = objects.list(folder)?;
    let mut versions: Vec<i64> = listed.iter().filter_map(|o| version_of(&o.key)).collect();
    versions.sort_unstable();
    if let Some(named) = named_last(objects, folder)? {
        if !versions.contains(&named) {
            found.push(format!(
                "{}: names checkpoint {named}, which is missing",
                last_key(folder)
            ));
        }
    }
    let mut state = State::default();
    let mut next = 0;
    for v in versions {
        while next <= v {
            match objects.read_all(&json_key(folder, next)) {
                Ok(bytes) => state.apply(&bytes)?,
                // A missing JSON version is reported as such (`super::check`).
                Err(e) if crate::storage::is_missing(&e) => return Ok(()),
                Err(e) => return Err(e),
            }
            next += 1;
        }
        let written = decode(objects.read_all(&key(folder, v))?);
        if written.as_ref().ok() != Some(&state) {
            found.push(format!(
                "{}: differs from the log versions it summarises",
                key(folder, v)
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "checkpoint_tests.rs"]
mod tests;
