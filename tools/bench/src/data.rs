//! Deterministic benchmark data: the same seed, shape and file index always give the same bytes.

/// The shape of the generated files.
#[derive(Debug, Clone)]
pub struct Shape {
    pub rows: u64,
    /// Extra value columns after `part` and `id` (cycling int, double, string, date, boolean).
    pub columns: usize,
    /// Distinct values of the partition column `part`.
    pub partitions: u64,
    /// Share of rows (0..1) given a bad int; any file holding one is refused whole (422).
    pub invalid_rows: f64,
    pub seed: u64,
    /// Whether the schema declares `id` unique (its values are unique across files either way).
    pub unique_id: bool,
}

const KINDS: [(&str, &str); 5] = [
    ("int", ""),
    ("double", ""),
    ("string", ""),
    ("date", "%Y-%m-%d"),
    ("boolean", ""),
];

impl Shape {
    /// The schema's columns: `part` (partition), `id` (distinct across every file; declared
    /// `unique` with [`Shape::unique_id`]), then values.
    pub fn columns_json(&self) -> serde_json::Value {
        let mut cols = vec![
            serde_json::json!({"name": "part", "data_type": "string", "allow_null": false, "partition_index": 0}),
            serde_json::json!({"name": "id", "data_type": "int", "allow_null": false, "unique": self.unique_id}),
        ];
        for i in 0..self.columns {
            let (kind, format) = KINDS[i % KINDS.len()];
            let mut c =
                serde_json::json!({"name": format!("c{i}"), "data_type": kind, "allow_null": true});
            if !format.is_empty() {
                c["format"] = serde_json::json!(format);
            }
            cols.push(c);
        }
        serde_json::Value::Array(cols)
    }

    /// File number `index` as CSV, and how many of its rows are invalid.
    pub fn file(&self, index: u64) -> (Vec<u8>, u64) {
        let mut rng = SplitMix(self.seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut out = Vec::with_capacity((self.rows as usize) * (12 + 10 * self.columns));
        out.extend_from_slice(b"part,id");
        for i in 0..self.columns {
            out.extend_from_slice(format!(",c{i}").as_bytes());
        }
        out.push(b'\n');
        let threshold = (self.invalid_rows.clamp(0.0, 1.0) * u64::MAX as f64) as u64;
        let mut invalid = 0;
        for r in 0..self.rows {
            let x = rng.next();
            let id = index * self.rows + r;
            if threshold > 0 && rng.next() < threshold {
                invalid += 1;
                out.extend_from_slice(
                    format!("p{},not-a-number", x % self.partitions.max(1)).as_bytes(),
                );
            } else {
                out.extend_from_slice(format!("p{},{id}", x % self.partitions.max(1)).as_bytes());
            }
            for i in 0..self.columns {
                let v = x.rotate_left(i as u32 * 7);
                out.push(b',');
                match KINDS[i % KINDS.len()].0 {
                    "int" => out.extend_from_slice((v % 100_000).to_string().as_bytes()),
                    "double" => {
                        out.extend_from_slice(format!("{}.{:02}", v % 10_000, v % 100).as_bytes())
                    }
                    "string" => {
                        out.extend_from_slice(format!("\"text {}, {}\"", v % 1000, r).as_bytes())
                    }
                    "date" => out.extend_from_slice(
                        format!("20{:02}-{:02}-{:02}", 10 + v % 15, 1 + v % 12, 1 + v % 28)
                            .as_bytes(),
                    ),
                    _ => out.extend_from_slice(if v.is_multiple_of(3) {
                        b""
                    } else if v.is_multiple_of(2) {
                        b"true"
                    } else {
                        b"false"
                    }),
                }
            }
            out.push(b'\n');
        }
        (out, invalid)
    }
}

/// A small, fast, seedable generator (SplitMix64): benchmark data needs repeatability, not secrecy.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(invalid_rows: f64) -> Shape {
        Shape {
            rows: 100,
            columns: 6,
            partitions: 4,
            invalid_rows,
            seed: 7,
            unique_id: false,
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_bytes_and_files_differ() {
        assert_eq!(shape(0.0).file(3), shape(0.0).file(3));
        assert_ne!(shape(0.0).file(3).0, shape(0.0).file(4).0);
        let (csv, invalid) = shape(0.0).file(0);
        assert_eq!(invalid, 0);
        assert_eq!(csv.iter().filter(|b| **b == b'\n').count(), 101);
    }

    #[test]
    fn the_id_is_declared_unique_on_request() {
        let id = |unique_id| {
            Shape {
                unique_id,
                ..shape(0.0)
            }
            .columns_json()[1]["unique"]
                .clone()
        };
        assert_eq!(id(true), serde_json::json!(true));
        assert_eq!(id(false), serde_json::json!(false));
    }

    #[test]
    fn invalid_rows_follow_the_share() {
        let (_, invalid) = Shape {
            rows: 10_000,
            ..shape(0.1)
        }
        .file(0);
        assert!((800..1200).contains(&invalid), "{invalid}");
    }
}
