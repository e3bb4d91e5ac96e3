//! The storage conformance suite: what every [`ObjectStorage`] backend must do, written once
//! against the interface. Each backend gets every check through one line,
//! `conformance!(module_name, make_fn);`, where `make_fn` returns a fresh, empty store and a local
//! staging folder its puts come from (or `None` when the backend's server is not available here,
//! having said why). The local folder runs here; an object-store backend adds its own line (and
//! its server's start-up) and nothing else.
//!
//! The S3 backend runs against the server `RAPID_TEST_S3_URL` names (`s3://bucket`, with the
//! standard `AWS_*` settings; `scripts/garage.sh` starts one), each check under a fresh prefix.
//! Unset, its checks print "skipped" and pass, unless `RAPID_REQUIRE_S3=1`.

use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;

use rapid_actors::storage::{is_missing, LocalFolder, ObjectReader, ObjectStorage, StagedObject};

/// A backend under test: an empty store, and a local folder to stage files in.
pub struct Subject {
    pub objects: Arc<dyn ObjectStorage>,
    pub staging: PathBuf,
    /// Whatever must live as long as the store (temporary folders, a server handle).
    pub _keep: Vec<Box<dyn std::any::Any>>,
}

impl Subject {
    /// Stages `bytes` in a new local file.
    fn stage(&self, bytes: &[u8]) -> PathBuf {
        let path = self.staging.join(uuid_like());
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// Puts `bytes` under `key`, alone.
    fn put(&self, key: &str, bytes: &[u8]) {
        let staged = self.stage(bytes);
        self.objects
            .put(&[StagedObject {
                staged,
                key: key.to_string(),
            }])
            .unwrap();
    }

    fn read(&self, key: &str) -> Vec<u8> {
        let mut out = Vec::new();
        self.objects
            .open(key)
            .unwrap()
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    fn keys(&self, prefix: &str) -> Vec<String> {
        let listed = self.objects.list(prefix).unwrap();
        listed.into_iter().map(|o| o.key).collect()
    }
}

fn uuid_like() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    format!(
        "staged-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

/// Every check of the suite, each a function of a fresh [`Subject`].
mod checks {
    use super::*;

    pub(crate) fn put_then_read_round_trips(s: Subject) {
        let bytes: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        let staged = s.stage(&bytes);
        let key = "raw/l/d/s/1/20260101T000000Z-ab12-file.csv".to_string();
        s.objects
            .put(&[StagedObject {
                staged: staged.clone(),
                key: key.clone(),
            }])
            .unwrap();
        assert!(!staged.exists(), "put consumes the staged file");
        assert_eq!(s.read(&key), bytes);
        assert_eq!(
            s.objects.read_range(&key, 100..356).unwrap().as_ref(),
            &bytes[100..356]
        );
        assert_eq!(s.objects.size(&key).unwrap(), 10_000);
        assert!(s.objects.exists(&key).unwrap());
        let mut opened = s.objects.open(&key).unwrap();
        std::io::Seek::seek(&mut opened, std::io::SeekFrom::Start(9_990)).unwrap();
        let mut tail = Vec::new();
        opened.read_to_end(&mut tail).unwrap();
        assert_eq!(tail, &bytes[9_990..]);
    }

    pub(crate) fn a_group_put_keeps_every_object(s: Subject) {
        let group: Vec<StagedObject> = (0..5)
            .map(|i| StagedObject {
                staged: s.stage(format!("object {i}").as_bytes()),
                key: format!("data/l/d/s/1/p={i}/f-{i}.parquet"),
            })
            .collect();
        s.objects.put(&group).unwrap();
        for (i, o) in group.iter().enumerate() {
            assert_eq!(s.read(&o.key), format!("object {i}").as_bytes());
        }
        assert_eq!(s.keys("data").len(), 5);
    }

    pub(crate) fn a_failed_group_put_leaves_none_of_its_keys(s: Subject) {
        let good = StagedObject {
            staged: s.stage(b"good"),
            key: "data/l/d/s/1/good.parquet".into(),
        };
        let gone = StagedObject {
            staged: s.staging.join("never-written"),
            key: "data/l/d/s/1/gone.parquet".into(),
        };
        assert!(s.objects.put(&[good.clone(), gone]).is_err());
        assert!(!s.objects.exists(&good.key).unwrap());
        assert_eq!(s.keys(""), Vec::<String>::new());
    }

    /// Put-if-absent (the Delta log): the first write wins, a second leaves it as it was, and
    /// no hidden leftover is listed.
    pub(crate) fn put_new_writes_once(s: Subject) {
        let key = "data/l/d/s/1/_delta_log/00000000000000000000.json";
        assert!(s.objects.put_new(key, b"first\n").unwrap());
        assert!(!s.objects.put_new(key, b"second, longer\n").unwrap());
        assert_eq!(s.objects.read_all(key).unwrap(), b"first\n");
        assert_eq!(s.keys("data"), [key]);
    }

    pub(crate) fn put_replaces_an_existing_object(s: Subject) {
        s.put("results/j.csv", b"first, longer version");
        s.put("results/j.csv", b"second");
        assert_eq!(s.read("results/j.csv"), b"second");
        assert_eq!(s.objects.size("results/j.csv").unwrap(), 6);
        assert_eq!(s.keys("results"), ["results/j.csv"]);
    }

    pub(crate) fn list_sees_its_prefix_and_nothing_outside(s: Subject) {
        for key in [
            "data/l/d/s/1/a.parquet",
            "data/l/d/s/2/p=x/b.parquet",
            "data/l/d/s_2/1/c.parquet",
            "data/l/d/sales/1/d.parquet",
            "raw/l/d/s/1/r.csv",
        ] {
            s.put(key, key.as_bytes());
        }
        assert_eq!(
            s.keys("data/l/d/s"),
            ["data/l/d/s/1/a.parquet", "data/l/d/s/2/p=x/b.parquet"]
        );
        assert_eq!(s.keys("data/l/d/s/2/p=x"), ["data/l/d/s/2/p=x/b.parquet"]);
        assert_eq!(s.keys("data").len(), 4);
        assert_eq!(s.keys("raw"), ["raw/l/d/s/1/r.csv"]);
        assert_eq!(s.keys("").len(), 5);
        assert!(s.keys("results").is_empty());
        assert!(s.keys("data/l/d/none").is_empty());
        let listed = s.objects.list("raw").unwrap();
        assert_eq!(listed[0].size, "raw/l/d/s/1/r.csv".len() as u64);
    }

    pub(crate) fn delete_removes_one_object_and_is_idempotent(s: Subject) {
        s.put("data/l/d/s/1/a.parquet", b"a");
        s.put("data/l/d/s/1/b.parquet", b"b");
        s.objects.delete("data/l/d/s/1/a.parquet").unwrap();
        assert!(!s.objects.exists("data/l/d/s/1/a.parquet").unwrap());
        s.objects.delete("data/l/d/s/1/a.parquet").unwrap();
        s.objects.delete("data/never/was.parquet").unwrap();
        assert_eq!(s.keys("data"), ["data/l/d/s/1/b.parquet"]);
        s.objects.prune_empty("data").unwrap();
        assert_eq!(s.keys("data"), ["data/l/d/s/1/b.parquet"]);
    }

    pub(crate) fn delete_prefix_removes_that_prefix_only(s: Subject) {
        for key in [
            "data/l/d/s/1/a.parquet",
            "data/l/d/s/2/p=y/b.parquet",
            "data/l/d/s_2/1/c.parquet",
            "raw/l/d/s/1/r.csv",
        ] {
            s.put(key, b"x");
        }
        s.objects.delete_prefix("data/l/d/s").unwrap();
        s.objects.delete_prefix("data/l/d/never").unwrap();
        assert_eq!(
            s.keys(""),
            ["data/l/d/s_2/1/c.parquet", "raw/l/d/s/1/r.csv"]
        );
    }

    pub(crate) fn a_missing_object_is_reported_as_missing(s: Subject) {
        s.put("raw/l/d/s/1/there.csv", b"x");
        let key = "raw/l/d/s/1/not-there.csv";
        assert!(is_missing(&s.objects.open(key).err().unwrap()));
        assert!(is_missing(&s.objects.head(key).unwrap_err()));
        assert!(is_missing(&s.objects.size(key).unwrap_err()));
        assert!(is_missing(&s.objects.read_range(key, 0..1).unwrap_err()));
        assert!(!s.objects.exists(key).unwrap());
        assert!(is_missing(
            &ObjectReader::new(s.objects.clone(), key).unwrap_err()
        ));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        assert!(is_missing(
            &rt.block_on(s.objects.stream(key)).err().unwrap()
        ));
        // A folder is not an object.
        assert!(!s.objects.exists("raw/l/d/s/1").unwrap());
    }

    pub(crate) fn sizes_are_exact(s: Subject) {
        let big = vec![7u8; (1 << 20) + 3];
        s.put("data/l/d/s/1/empty.parquet", b"");
        s.put("data/l/d/s/1/big.parquet", &big);
        assert_eq!(s.objects.size("data/l/d/s/1/empty.parquet").unwrap(), 0);
        assert_eq!(
            s.objects.size("data/l/d/s/1/big.parquet").unwrap(),
            (1 << 20) + 3
        );
        assert_eq!(s.read("data/l/d/s/1/empty.parquet"), b"");
        let sizes: Vec<u64> = s
            .objects
            .list("data")
            .unwrap()
            .iter()
            .map(|o| o.size)
            .collect();
        assert_eq!(sizes, [(1 << 20) + 3, 0]);
    }

    pub(crate) fn partition_segments_keep_their_encoding(s: Subject) {
        let keys = [
            "data/l/d/s/1/city=S%C3%A3o%20Paulo/f.parquet",
            "data/l/d/s/1/city=a%2Fb/f.parquet",
            "data/l/d/s/1/city=100%25/f.parquet",
            "data/l/d/s/1/city=/f.parquet",
            "data/l/d/s/1/city=%5F%5FHIVE%5FDEFAULT%5FPARTITION%5F%5F/d=2024-01-31/f.parquet",
        ];
        for key in keys {
            s.put(key, key.as_bytes());
        }
        let mut expected: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        expected.sort();
        assert_eq!(s.keys("data/l/d/s/1"), expected);
        for key in keys {
            assert_eq!(s.read(key), key.as_bytes());
        }
        assert_eq!(s.keys("data/l/d/s/1/city=a%2Fb"), [keys[1]]);
    }

    pub(crate) fn keys_that_leave_the_store_are_refused(s: Subject) {
        for bad in [
            "",
            "../x",
            "/etc/passwd",
            "data//x",
            "data/./x",
            "data/../x",
            "a\\b",
        ] {
            let e = s.objects.head(bad).unwrap_err();
            assert!(!is_missing(&e), "{bad:?}: refused, not merely missing");
            let staged = s.stage(b"x");
            let put = s.objects.put(&[StagedObject {
                staged,
                key: bad.to_string(),
            }]);
            assert!(put.is_err(), "{bad:?}");
        }
        assert!(s.objects.list("../").is_err());
    }

    pub(crate) fn stream_yields_the_whole_object(s: Subject) {
        let bytes: Vec<u8> = (0..700_000u32).map(|i| (i % 13) as u8).collect();
        s.put("results/big.csv", &bytes);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let streamed = rt.block_on(async {
            use futures_util::StreamExt;
            let mut stream = s.objects.stream("results/big.csv").await.unwrap();
            let mut out = Vec::new();
            while let Some(chunk) = stream.next().await {
                out.extend_from_slice(&chunk.unwrap());
            }
            out
        });
        assert_eq!(streamed, bytes);
    }

    /// The Parquet reader (unique checks) and DataFusion's store see the same object.
    pub(crate) fn parquet_and_datafusion_read_the_kept_object(s: Subject) {
        use arrow::array::{Int64Array, RecordBatch};
        use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
        let schema = Arc::new(arrow::datatypes::Schema::new(vec![
            arrow::datatypes::Field::new("n", arrow::datatypes::DataType::Int64, false),
        ]));
        let values = Int64Array::from_iter_values(0..5_000);
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(values)]).unwrap();
        let mut bytes = Vec::new();
        let mut writer = parquet::arrow::ArrowWriter::try_new(&mut bytes, schema, None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let key = "data/l/d/s/1/region=S%C3%A3o%20Paulo/x-0.parquet";
        s.put(key, &bytes);

        let reader = ObjectReader::new(s.objects.clone(), key).unwrap();
        let rows: usize = ParquetRecordBatchReaderBuilder::try_new(reader)
            .unwrap()
            .build()
            .unwrap()
            .map(|b| b.unwrap().num_rows())
            .sum();
        assert_eq!(rows, 5_000);

        let store = s.objects.datafusion_store();
        let location = s.objects.location(key).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let read = rt.block_on(async {
            use datafusion::object_store::ObjectStoreExt;
            let got = store.store.get(&location).await.unwrap();
            got.bytes().await.unwrap()
        });
        assert_eq!(read.as_ref(), bytes.as_slice());
    }
}

/// One `#[test]` per check, each on a fresh store from `$make`.
macro_rules! conformance {
    ($backend:ident, $make:expr) => {
        mod $backend {
            use super::*;
            conformance!(@each $make;
                put_then_read_round_trips,
                a_group_put_keeps_every_object,
                a_failed_group_put_leaves_none_of_its_keys,
                put_replaces_an_existing_object,
                put_new_writes_once,
                list_sees_its_prefix_and_nothing_outside,
                delete_removes_one_object_and_is_idempotent,
                delete_prefix_removes_that_prefix_only,
                a_missing_object_is_reported_as_missing,
                sizes_are_exact,
                partition_segments_keep_their_encoding,
                keys_that_leave_the_store_are_refused,
                stream_yields_the_whole_object,
                parquet_and_datafusion_read_the_kept_object,
            );
        }
    };
    (@each $make:expr; $($check:ident),* $(,)?) => {
        $(
            #[test]
            fn $check() {
                if let Some(subject) = $make() {
                    checks::$check(subject);
                }
            }
        )*
    };
}

/// A data folder, with staging beside it on the same file system (in the service it is inside,
/// but then listing everything would list staging too).
fn local_folder() -> Option<Subject> {
    let dir = tempfile::tempdir().unwrap();
    let (root, staging) = (dir.path().join("store"), dir.path().join("staging"));
    std::fs::create_dir_all(&staging).unwrap();
    Some(Subject {
        objects: Arc::new(LocalFolder::new(root)),
        staging,
        _keep: vec![Box::new(dir)],
    })
}

conformance!(local, local_folder);

/// The S3 backend, against a real server (its own file: its server's settings and extra checks).
#[path = "storage_conformance/s3_bucket.rs"]
mod s3_bucket;
