//! Schema drafts from a sample file: column names sanitised, types inferred (int, double,
//! boolean, string, and date with the one of the 10 formats that parses every value).

mod csv_sample;
mod parquet_sample;

use std::collections::{BTreeMap, BTreeSet};

use crate::error::Result;
use crate::file_kind::StagedFile;
use crate::ingest::csv_records::{is_null_text, looks_numeric};
use crate::schema::{
    validate_generated, Column, DataType, DateFormat, Metadata, Owner, Schema, SchemaContext,
    PLACEHOLDER_OWNER_EMAIL, PLACEHOLDER_OWNER_NAME,
};

/// Only this much of a CSV sample is read (docs/SPEC.md: the first 50 MB).
pub const CSV_SAMPLE_BYTES: usize = 50 * 1024 * 1024;

/// What the user sent to generate from.
pub enum Sample {
    /// The first bytes of a CSV file, in staging: `len` bytes to read (when `truncated`, the file
    /// went on beyond them and they end at the last complete line), and no value may be longer
    /// than `max_value` bytes.
    Csv {
        file: StagedFile,
        len: u64,
        truncated: bool,
        max_value: usize,
    },
    /// A whole Parquet file in staging (its footer, at the end, holds the schema).
    Parquet(StagedFile),
}

/// A column as inferred: sanitised name, type, the date format of a date column, and what the
/// read showed of its values.
#[derive(Debug, Clone, PartialEq)]
pub struct InferredColumn {
    pub name: String,
    pub data_type: DataType,
    pub format: Option<DateFormat>,
    pub sample: ColumnSample,
}

/// Distinct example values kept per column.
pub const EXAMPLES: usize = 3;
/// An example value longer than this many characters is cut (with an ellipsis).
pub const EXAMPLE_CHARS: usize = 40;

/// What the read that inferred a column's type showed of its values: up to [`EXAMPLES`] distinct
/// non-null values (each cut to [`EXAMPLE_CHARS`]), how many were null, and how many rows were read.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ColumnSample {
    pub examples: Vec<String>,
    pub nulls: u64,
    pub rows: u64,
}

impl ColumnSample {
    /// One more row's value; `None` is null.
    pub(crate) fn observe(&mut self, value: Option<&str>) {
        self.rows += 1;
        let Some(value) = value else {
            self.nulls += 1;
            return;
        };
        if self.examples.len() < EXAMPLES {
            let cut = cut_example(value);
            if !self.examples.contains(&cut) {
                self.examples.push(cut);
            }
        }
    }
}

/// `value` cut to [`EXAMPLE_CHARS`] characters, an ellipsis marking the cut.
fn cut_example(value: &str) -> String {
    match value.char_indices().nth(EXAMPLE_CHARS) {
        Some((end, _)) => format!("{}…", &value[..end]),
        None => value.to_string(),
    }
}

/// Where the draft is for. Checked like any schema, except that a draft has the placeholder owner.
pub struct DraftTarget {
    pub layer: String,
    pub sensitivity: String,
    pub domain: String,
    pub dataset: String,
    pub description: Option<String>,
}

pub fn infer_columns(sample: &Sample) -> Result<Vec<InferredColumn>> {
    match sample {
        Sample::Csv {
            file,
            len,
            truncated,
            max_value,
        } => {
            let input = std::io::Read::take(std::fs::File::open(file.path())?, *len);
            csv_sample::infer(input, *truncated, *max_value)
        }
        Sample::Parquet(file) => parquet_sample::infer(file.path()),
    }
}

/// The draft schema for `sample`: every column nullable, no partitions, no checks, APPEND, the
/// placeholder owner the user must replace before `POST /schema` accepts it; with what the read
/// showed of each column, in the columns' order.
pub fn draft_schema(
    sample: &Sample,
    target: DraftTarget,
    layers: &[String],
    protected_domains: &BTreeSet<String>,
) -> Result<(Schema, Vec<ColumnSample>)> {
    let inferred = infer_columns(sample)?;
    let samples = inferred.iter().map(|c| c.sample.clone()).collect();
    let columns = inferred
        .into_iter()
        .map(|c| Column {
            name: c.name,
            data_type: c.data_type.as_str().to_string(),
            allow_null: true,
            partition_index: None,
            format: c.format.map(|f| f.as_str().to_string()),
            unique: false,
            checks: BTreeMap::new(),
        })
        .collect();
    // A draft may be for a protected domain not created yet: creating the schema checks that.
    let mut domains = protected_domains.clone();
    domains.insert(target.domain.to_ascii_lowercase());
    let schema = Schema {
        metadata: Metadata {
            layer: Some(target.layer),
            domain: target.domain,
            dataset: target.dataset,
            sensitivity: target.sensitivity,
            description: Some(target.description.unwrap_or_default()),
            version: None,
            key_value_tags: BTreeMap::new(),
            key_only_tags: Vec::new(),
            owners: Some(vec![Owner {
                name: PLACEHOLDER_OWNER_NAME.to_string(),
                email: PLACEHOLDER_OWNER_EMAIL.to_string(),
            }]),
            update_behaviour: "APPEND".to_string(),
            history: None,
        },
        columns,
    };
    let ctx = SchemaContext {
        layers,
        protected_domains: &domains,
    };
    Ok((validate_generated(&schema, &ctx)?.into_schema(), samples))
}

/// Running evidence about one column's values: which types every non-null value so far fits.
#[derive(Debug, Clone)]
pub(crate) struct TypeGuess {
    non_null: usize,
    int: bool,
    double: bool,
    boolean: bool,
    /// Bit i set: `DateFormat::ALL[i]` parsed every value so far.
    dates: u16,
}

impl Default for TypeGuess {
    fn default() -> Self {
        TypeGuess {
            non_null: 0,
            int: true,
            double: true,
            boolean: true,
            dates: (1u16 << DateFormat::ALL.len()) - 1,
        }
    }
}

impl TypeGuess {
    pub(crate) fn observe(&mut self, value: &str) {
        if is_null_text(value) {
            return;
        }
        self.non_null += 1;
        if self.int && value.parse::<i64>().is_err() {
            self.int = false;
        }
        if self.double && !looks_numeric(value) {
            self.double = false;
        }
        if self.boolean
            && !(value.eq_ignore_ascii_case("true") || value.eq_ignore_ascii_case("false"))
        {
            self.boolean = false;
        }
        if self.dates != 0 {
            for (i, f) in DateFormat::ALL.iter().enumerate() {
                if self.dates & (1 << i) != 0 && f.parse_value(value).is_none() {
                    self.dates &= !(1 << i);
                }
            }
        }
    }

    /// The narrowest type every value fits. An all-null column is a (nullable) string; where two
    /// date formats both fit (`01/02/2024`), the first in docs/SPEC.md's list wins.
    pub(crate) fn decide(&self) -> (DataType, Option<DateFormat>) {
        if self.non_null == 0 {
            return (DataType::String, None);
        }
        if self.boolean {
            return (DataType::Boolean, None);
        }
        if self.int {
            return (DataType::Int, None);
        }
        if self.double {
            return (DataType::Double, None);
        }
        if self.dates != 0 {
            let i = self.dates.trailing_zeros() as usize;
            return (DataType::Date, Some(DateFormat::ALL[i]));
        }
        (DataType::String, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guess(values: &[&str]) -> (DataType, Option<DateFormat>) {
        let mut g = TypeGuess::default();
        values.iter().for_each(|v| g.observe(v));
        g.decide()
    }

    #[test]
    fn types_are_the_narrowest_that_fit_every_value() {
        assert_eq!(guess(&["1", "-2", ""]), (DataType::Int, None));
        assert_eq!(guess(&["1", "2.5", "NA"]), (DataType::Double, None));
        assert_eq!(guess(&["1e3", ".5"]), (DataType::Double, None));
        assert_eq!(guess(&["TRUE", "false", "null"]), (DataType::Boolean, None));
        assert_eq!(guess(&["1", "x"]), (DataType::String, None));
        assert_eq!(guess(&["nan", "inf"]), (DataType::String, None));
        assert_eq!(guess(&["", "NA", "null"]), (DataType::String, None));
        assert_eq!(guess(&["9223372036854775808"]), (DataType::Double, None));
    }

    #[test]
    fn samples_keep_a_few_distinct_values_cut_and_count_nulls() {
        let mut s = ColumnSample::default();
        for v in [Some("a"), None, Some("a"), Some("b"), Some("c"), Some("d")] {
            s.observe(v);
        }
        assert_eq!(
            (s.examples.clone(), s.nulls, s.rows),
            (vec!["a".into(), "b".into(), "c".into()], 1, 6)
        );
        let long = "é".repeat(50);
        assert_eq!(cut_example(&long).chars().count(), EXAMPLE_CHARS + 1);
    }

    #[test]
    fn dates_get_the_format_that_parses_every_value() {
        assert_eq!(
            guess(&["2024-01-31", "2023-12-01"]).1,
            Some(DateFormat::parse("%Y-%m-%d").unwrap())
        );
        assert_eq!(
            guess(&["12/31/2024", "01/02/2024"]).1,
            Some(DateFormat::parse("%m/%d/%Y").unwrap())
        );
        assert_eq!(
            guess(&["31-12-2024"]).1,
            Some(DateFormat::parse("%d-%m-%Y").unwrap())
        );
        assert_eq!(
            guess(&["2024/07"]).1,
            Some(DateFormat::parse("%Y/%m").unwrap())
        );
        assert_eq!(
            guess(&["2024-01-31", "2024-13-01"]),
            (DataType::String, None)
        );
    }
}
