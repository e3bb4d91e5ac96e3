//! `unique` through the index, end to end below the HTTP edge: the check before the answer and
//! the commit's check agree with what the version keeps, under APPEND, OVERWRITE, deletion of a
//! raw file, schema versions, commits in between, and versions stored before the index existed.

use std::sync::Arc;

use serde_json::json;

use super::commit::{commit, delete_raw_file, erase_raw_file, StagedUpload};
use super::{check_before_answer, staged_keys};
use crate::catalog::sqlite::SqliteCatalog;
use crate::catalog::SharedCatalog;
use crate::error::{Error, ErrorKind, Result};
use crate::ingest::{ingest_csv, messages, IngestPlan};
use crate::job_state::{JobKind, NewJob};
use crate::key::{DatasetKey, DatasetRecord};
use crate::records::stored_version;
use crate::schema::{validate, Schema, SchemaContext, ValidSchema};
use crate::storage::Storage;

struct Dataset {
    dir: tempfile::TempDir,
    catalog: SharedCatalog,
    storage: Storage,
    record: DatasetRecord,
    schema: ValidSchema,
    uploads: usize,
}

fn schema(behaviour: &str, version: i64) -> ValidSchema {
    let schema: Schema = serde_json::from_value(json!({
        "metadata": {"domain": "shop", "dataset": "orders", "sensitivity": "PUBLIC",
                     "update_behaviour": behaviour,
                     "owners": [{"name": "T", "email": "t@example.com"}]},
        "columns": [
            {"name": "region", "data_type": "string", "allow_null": false, "partition_index": 0},
            {"name": "id", "data_type": "int", "allow_null": false, "unique": true},
            {"name": "code", "data_type": "string", "allow_null": true, "unique": true}
        ]
    }))
    .unwrap();
    let layers = vec!["default".to_string()];
    let domains = Default::default();
    let ctx = SchemaContext {
        layers: &layers,
        protected_domains: &domains,
    };
    let mut schema = validate(&schema, &ctx).unwrap();
    schema.set_version(version);
    schema
}

impl Dataset {
    fn new(behaviour: &str) -> Dataset {
        let dir = tempfile::tempdir().unwrap();
        let catalog: SharedCatalog = Arc::new(SqliteCatalog::open(dir.path()).unwrap());
        let storage = Storage::new(dir.path());
        let schema = schema(behaviour, 1);
        let key = DatasetKey::new("default", "shop", "orders");
        let version = stored_version(&schema).unwrap();
        let record = catalog
            .create_dataset(&key, "orders", schema.sensitivity(), &version)
            .unwrap();
        Dataset {
            dir,
            catalog,
            storage,
            record,
            schema,
            uploads: 0,
        }
    }

    /// `rows` ("region,id,code" lines) validated and staged as an upload to `version`, with its
    /// job IN PROGRESS; `indexed: false` stages it as a binary before the index would (no keys).
    fn stage(&mut self, version: i64, rows: &str, indexed: bool) -> StagedUpload {
        self.uploads += 1;
        let job_id = uuid::Uuid::new_v4().to_string();
        let raw_filename = format!("u{}.csv", self.uploads);
        let csv = format!("region,id,code\n{rows}\n");
        let staging = self.storage.staging_dir(&job_id);
        std::fs::create_dir_all(&staging).unwrap();
        let raw_staged = self.storage.staged_raw(&job_id);
        std::fs::write(&raw_staged, &csv).unwrap();
        let data = self.storage.staged_data(&job_id);
        let plan = IngestPlan {
            schema: &self.schema,
            staging: &data,
            progress: &|_| {},
            max_value_bytes: 1 << 20,
            on_error: Default::default(),
            profile: true,
        };
        let output = ingest_csv(csv.as_bytes(), &plan).unwrap();
        self.catalog
            .create_job(
                &job_id,
                "node",
                &NewJob {
                    kind: JobKind::Upload,
                    key: &self.record.key,
                    version,
                    subject_id: "s",
                    filename: Some("u.csv"),
                    raw_filename: Some(&raw_filename),
                },
            )
            .unwrap();
        let file_keys = if indexed {
            staged_keys(&output).unwrap()
        } else {
            Vec::new()
        };
        StagedUpload {
            job_id,
            dataset_id: self.record.id,
            version,
            behaviour: self.schema.update_behaviour(),
            raw_staged,
            raw_filename,
            original_filename: "u.csv".into(),
            uploaded_by: "s".into(),
            raw_bytes: csv.len() as u64,
            output,
            file_keys,
            checked_at: None,
        }
    }

    /// The check before the answer, noting on `upload` the state it checked (as the engine does).
    fn precheck(&self, upload: &mut StagedUpload) -> Result<()> {
        upload.checked_at = check_before_answer(
            self.catalog.as_ref(),
            &self.storage,
            self.record.id,
            upload.version,
            upload.behaviour,
            (&upload.output, &upload.file_keys),
        )?;
        Ok(())
    }

    fn commit(&self, upload: StagedUpload) -> Result<()> {
        commit(self.catalog.as_ref(), &self.storage, &self.record, upload)
    }

    /// Stages, checks and commits `rows` to version 1; the refusal's messages, if any.
    fn upload(&mut self, rows: &str) -> Vec<String> {
        let mut upload = self.stage(1, rows, true);
        let pre = self.precheck(&mut upload).err();
        let at_commit = self.commit(upload).err();
        assert_eq!(
            pre.as_ref().map(messages),
            at_commit.as_ref().map(messages),
            "the check before the answer and the commit's agree"
        );
        pre.map(|e| refused(&e)).unwrap_or_default()
    }
}

fn refused(e: &Error) -> Vec<String> {
    assert_eq!(e.kind, ErrorKind::Unprocessable, "{e:?}");
    messages(e)
}

fn clash(column: &str, value: &str) -> String {
    format!(
        "Column [{column}] must be unique: value {value} is already stored in this dataset version"
    )
}

#[test]
fn a_value_of_an_early_append_is_refused_after_many_appends() {
    let mut d = Dataset::new("APPEND");
    let long = "k".repeat(100);
    assert!(d
        .upload(&format!("north,1,{long}\nsouth,2,short"))
        .is_empty());
    for i in 0..30 {
        let region = ["north", "south", "east"][i % 3];
        assert!(d.upload(&format!("{region},{},", 100 + i)).is_empty());
    }
    assert_eq!(
        d.upload(&format!(
            "east,1,\nwest,500,{long}\nwest,501,short\nwest,502,other"
        )),
        [
            clash("id", "1"),
            clash("code", "\"short\""),
            clash("code", &format!("\"{long}\""))
        ]
    );
    assert!(d.upload("west,500,other").is_empty());
}

#[test]
fn overwrite_frees_the_values_of_the_partitions_it_replaces_only() {
    let mut d = Dataset::new("OVERWRITE");
    assert!(d.upload("north,1,a\nsouth,2,b").is_empty());
    assert!(d.upload("north,1,a\nnorth,3,c").is_empty());
    assert_eq!(d.upload("east,2,"), [clash("id", "2")]);
    assert_eq!(d.upload("east,4,c"), [clash("code", "\"c\"")]);
    // Replacing south frees 2 and b; north's 1 stays taken.
    assert!(d.upload("south,2,b").is_empty());
    assert_eq!(d.upload("south,1,"), [clash("id", "1")]);
}

#[test]
fn deleting_a_raw_file_frees_exactly_its_values() {
    let mut d = Dataset::new("APPEND");
    assert!(d.upload("north,1,a\nsouth,2,b").is_empty());
    assert!(d.upload("north,3,c").is_empty());
    delete_raw_file(
        d.catalog.as_ref(),
        &d.storage,
        &d.record,
        1,
        "u1.csv",
        "tester",
    )
    .unwrap();
    assert_eq!(d.upload("east,3,"), [clash("id", "3")]);
    assert!(d.upload("east,1,a\nwest,2,b").is_empty());
}

#[test]
fn a_commit_in_between_is_caught_at_commit() {
    let mut d = Dataset::new("APPEND");
    let mut first = d.stage(1, "north,1,a", true);
    let mut second = d.stage(1, "south,1,b", true);
    d.precheck(&mut first).unwrap();
    d.precheck(&mut second).unwrap();
    d.commit(first).unwrap();
    let e = d.commit(second).unwrap_err();
    assert_eq!(refused(&e), [clash("id", "1")]);
}

#[test]
fn each_schema_version_has_its_own_values() {
    let mut d = Dataset::new("APPEND");
    assert!(d.upload("north,1,a").is_empty());
    let next = schema("APPEND", 2);
    d.record = d
        .catalog
        .add_schema_version(&d.record.key, &mut |_| stored_version(&next))
        .unwrap();
    d.schema = next;
    let mut upload = d.stage(2, "north,1,a", true);
    d.precheck(&mut upload).unwrap();
    d.commit(upload).unwrap();
    assert_eq!(d.upload("south,1,"), [clash("id", "1")], "version 1 still");
}

/// Files stored before the index existed (no keys recorded, the version pending as the
/// migration leaves it) are read instead; the first commit records their keys.
#[test]
fn a_version_stored_before_the_index_is_indexed_by_its_next_commit() {
    let mut d = Dataset::new("APPEND");
    for rows in ["north,1,a", "south,2,b"] {
        let upload = d.stage(1, rows, false);
        d.commit(upload).unwrap();
    }
    let conn = rusqlite::Connection::open(d.dir.path().join(crate::storage::CATALOG_FILE)).unwrap();
    conn.execute(
        "INSERT INTO unique_keys_pending (dataset_id, version) VALUES (?1, 1)",
        [d.record.id],
    )
    .unwrap();
    let probe: crate::catalog::KeyList = [super::unique_index::index_key(
        &crate::ingest::UniqueValue::Int(1),
    )]
    .into_iter()
    .collect();
    assert!(d
        .catalog
        .stored_keys(d.record.id, 1, "id", &[&probe])
        .unwrap()
        .is_none());

    assert_eq!(d.upload("east,1,c"), [clash("id", "1")]);
    assert!(d.upload("east,3,c").is_empty());
    let hits = d
        .catalog
        .stored_keys(d.record.id, 1, "id", &[&probe])
        .unwrap();
    assert_eq!(hits.map(|h| h.len()), Some(1), "indexed now");
    assert_eq!(d.upload("west,2,"), [clash("id", "2")]);
    assert_eq!(d.upload("west,4,c"), [clash("code", "\"c\"")]);
}

/// Erasure cut after its DELETE commit (a stop between the two steps): the history says
/// DELETE and a retired file still holds the rows; asking again finishes it (ERASE, the file
/// gone from disk), then answers 404.
#[test]
fn an_erasure_cut_after_its_deletion_is_finished_by_asking_again() {
    let mut d = Dataset::new("APPEND");
    assert!(d.upload("north,1,a\nsouth,2,b").is_empty());
    assert!(d.upload("north,3,c").is_empty());
    let (catalog, id) = (d.catalog.as_ref(), d.record.id);
    delete_raw_file(catalog, &d.storage, &d.record, 1, "u1.csv", "tester").unwrap();
    let newest = |c: &dyn crate::catalog::Catalog| c.commits(id, 1, 0, 1).unwrap()[0].clone();
    assert_eq!(newest(catalog).operation, "DELETE");
    let held = catalog.retired_holding(id, 1, "u1.csv").unwrap();
    assert_eq!(held.len(), 2, "its two partitions' files");
    for h in &held {
        assert!(d.dir.path().join(&h.file.path).exists(), "{}", h.file.path);
    }
    let erase = || erase_raw_file(catalog, &d.storage, &d.record, 1, "u1.csv", "tester");
    assert_eq!(erase().unwrap(), 2);
    assert_eq!(newest(catalog).operation, "ERASE");
    assert!(catalog.retired_holding(id, 1, "u1.csv").unwrap().is_empty());
    for h in &held {
        assert!(!d.dir.path().join(&h.file.path).exists(), "{}", h.file.path);
    }
    assert_eq!(erase().unwrap_err().kind, ErrorKind::NotFound);
}
