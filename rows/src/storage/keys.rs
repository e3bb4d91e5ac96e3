//! Object keys: where each kept object lives, as the relative `/`-separated strings the manifest
//! records, and the checked or encoded segments they are built from.
//!
//! ```text
//! raw/{layer}/{domain}/{dataset}/{version}/{raw_filename}
//! data/{layer}/{domain}/{dataset}/{version}/{p0}={v}/{p1}={v}/{raw_id}-{n}.parquet
//! data/{layer}/{domain}/{dataset}/{version}/_delta_log/{delta version:020}.json
//! results/{job_id}.csv
//! ```

use crate::key::DatasetKey;

/// The folders whose objects the manifest lists.
pub const LISTED_PREFIXES: [&str; 2] = ["data", "raw"];

/// The folder of large-query results.
pub const RESULTS: &str = "results";

fn dataset_prefix(kind: &str, key: &DatasetKey) -> String {
    format!("{kind}/{}/{}/{}", key.layer, key.domain, key.dataset)
}

/// `raw/{layer}/{domain}/{dataset}`: every raw file of every version of the dataset.
pub fn raw_dataset_prefix(key: &DatasetKey) -> String {
    dataset_prefix("raw", key)
}

/// `data/{layer}/{domain}/{dataset}`: every Parquet file of every version of the dataset.
pub fn data_dataset_prefix(key: &DatasetKey) -> String {
    dataset_prefix("data", key)
}

/// The key of an upload's raw file.
pub fn raw_key(key: &DatasetKey, version: i64, raw_filename: &str) -> String {
    format!("{}/{version}/{raw_filename}", raw_dataset_prefix(key))
}

/// The key of a data file, as the manifest records it (`partition_path` may be empty).
pub fn data_key(key: &DatasetKey, version: i64, partition_path: &str, file_name: &str) -> String {
    let mut rel = format!("{}/{version}/", data_dataset_prefix(key));
    if !partition_path.is_empty() {
        rel.push_str(partition_path);
        rel.push('/');
    }
    rel.push_str(file_name);
    rel
}

/// `data/{layer}/{domain}/{dataset}/{version}`: the folder of a stored version, the root of its
/// Delta Lake table.
pub fn table_prefix(key: &DatasetKey, version: i64) -> String {
    format!("{}/{version}", data_dataset_prefix(key))
}

/// The folder of a Delta Lake table's log, inside its root.
pub const DELTA_LOG: &str = "_delta_log";

/// The key of Delta version `delta_version`'s commit file of a stored version's table.
pub fn delta_log_key(key: &DatasetKey, version: i64, delta_version: i64) -> String {
    format!(
        "{}/{DELTA_LOG}/{delta_version:020}.json",
        table_prefix(key, version)
    )
}

/// Whether `key` is a file of a Delta log (kept though no catalog row lists it: the log is
/// derived from the catalog, rapid-actors' `delta_log`). A hidden name there is an unfinished write.
pub fn is_delta_log(key: &str) -> bool {
    let mut segments = key.rsplit('/');
    let name = segments.next().unwrap_or("");
    segments.next() == Some(DELTA_LOG) && !name.starts_with('.')
}

/// The key of a large query's result `name` (`{job_id}.csv`).
pub fn result_key(name: &str) -> String {
    format!("{RESULTS}/{name}")
}

/// Accepts a name usable as one path segment: letters, digits, `.`, `_`, `-`, not starting with a
/// dot (so never `.` or `..`), at most 255 bytes.
pub fn safe_segment(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// A partition value as a path segment, the way Hive readers (pyarrow, DuckDB, Spark) decode it:
/// kept when made of letters, digits, `_`, `-`, `.` (and not a dot-only name), otherwise
/// percent-encoded byte by byte, once. The empty string is the empty segment (`region=`), which
/// those readers give back as `''`; `__HIVE_DEFAULT_PARTITION__`, their name for NULL, is encoded
/// so that the literal string is not read as NULL. Partition columns never hold NULL.
pub fn encode_partition_value(value: &str) -> String {
    let plain = !value.bytes().all(|b| b == b'.')
        && value != HIVE_NULL
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if plain || value.is_empty() {
        return value.to_string();
    }
    if value == HIVE_NULL {
        return value.replace('_', "%5F");
    }
    let mut out = String::with_capacity(value.len() * 3);
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Hive's folder name for a NULL partition value. Stores written before the empty string had its
/// own encoding used it for `''`, so [`decode_partition_value`] reads it back as `''`.
const HIVE_NULL: &str = "__HIVE_DEFAULT_PARTITION__";

/// The value a segment written by [`encode_partition_value`] stands for (percent-decoded once).
pub fn decode_partition_value(segment: &str) -> String {
    if segment == HIVE_NULL {
        return String::new();
    }
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = (bytes[i] == b'%')
            .then(|| segment.get(i + 1..i + 3))
            .flatten()
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match hex {
            Some(b) => {
                out.push(b);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_segments_are_refused() {
        for bad in [
            "", ".", "..", "../x", "a/b", "a\\b", ".hidden", "a b", "x%2F",
        ] {
            assert!(!safe_segment(bad), "{bad}");
        }
        assert!(safe_segment("20261121T160000Z-ab12-file.csv"));
    }

    #[test]
    fn partition_values_never_escape_their_folder() {
        assert_eq!(encode_partition_value("north"), "north");
        assert_eq!(encode_partition_value("2024-01-31"), "2024-01-31");
        assert_eq!(encode_partition_value("1.5"), "1.5");
        assert_eq!(encode_partition_value("a/b"), "a%2Fb");
        assert_eq!(encode_partition_value(".."), "%2E%2E");
        assert_eq!(encode_partition_value("São Paulo"), "S%C3%A3o%20Paulo");
        for v in ["../../etc", "a/../b", "x=y"] {
            let e = encode_partition_value(v);
            assert!(!e.contains('/') && !e.contains('=') && e != "..", "{e}");
        }
    }

    #[test]
    fn partition_values_round_trip_once_encoded() {
        for v in [
            "",
            "north",
            "São Paulo",
            "a/b",
            "x y",
            "100%",
            "O'Brien",
            "%41",
            "..",
            "a.b",
            "__HIVE_DEFAULT_PARTITION__",
            "tab\tnew\nline",
            "ünï😀",
            "-5",
            "1e+20",
        ] {
            let encoded = encode_partition_value(v);
            assert_eq!(decode_partition_value(&encoded), v, "{v} -> {encoded}");
        }
        assert_eq!(encode_partition_value(""), "");
        assert_eq!(encode_partition_value("100%"), "100%25");
        assert_eq!(
            encode_partition_value("__HIVE_DEFAULT_PARTITION__"),
            "%5F%5FHIVE%5FDEFAULT%5FPARTITION%5F%5F"
        );
        // Stores from before the empty string had its own segment.
        assert_eq!(decode_partition_value("__HIVE_DEFAULT_PARTITION__"), "");
    }

    #[test]
    fn similar_dataset_names_get_disjoint_prefixes() {
        let a = data_dataset_prefix(&DatasetKey::new("default", "dom", "sales"));
        let b = data_dataset_prefix(&DatasetKey::new("default", "dom", "sales_2"));
        assert!(!b.starts_with(&format!("{a}/")));
        let key = DatasetKey::new("l", "d", "s");
        assert_eq!(
            data_key(&key, 1, "p=x", "f.parquet"),
            "data/l/d/s/1/p=x/f.parquet"
        );
        assert_eq!(data_key(&key, 2, "", "f.parquet"), "data/l/d/s/2/f.parquet");
        assert_eq!(raw_key(&key, 3, "r.csv"), "raw/l/d/s/3/r.csv");
        assert_eq!(result_key("j.csv"), "results/j.csv");
        assert_eq!(
            delta_log_key(&key, 2, 3),
            "data/l/d/s/2/_delta_log/00000000000000000003.json"
        );
        assert!(is_delta_log(&delta_log_key(&key, 2, 3)));
        assert!(!is_delta_log("data/l/d/s/2/_delta_log/.x.tmp"));
        assert!(!is_delta_log("data/l/d/s/2/p=_delta_log/f.parquet"));
    }
}
