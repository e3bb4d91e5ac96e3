//! The shapes of request bodies and of the engine's own answer types (schemas, subjects, tokens,
//! the dataset listing and info, jobs, queries), as the OpenAPI document describes them. The
//! engine crate does not depend on utoipa, so these only describe: nothing constructs them (hence
//! `allow(dead_code)`). schemathesis (scripts/test-openapi.sh) checks every live answer against
//! them, so a shape that drifts from what the server sends fails CI. Deriving `ToSchema` on the
//! engine's types (an optional utoipa feature of rapid-actors) would remove this file.
#![allow(dead_code)]

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

#[derive(Serialize, ToSchema)]
pub struct IssuedToken {
    pub access_token: String,
    #[schema(example = "Bearer")]
    pub token_type: String,
    /// Seconds until the token expires.
    pub expires_in: i64,
}

#[derive(Serialize, ToSchema)]
pub struct NewClient {
    pub client_name: String,
    pub permissions: Vec<String>,
    pub client_id: String,
    /// Shown once, never again.
    pub client_secret: String,
}

#[derive(Serialize, ToSchema)]
pub struct NewUser {
    pub username: String,
    pub email: String,
    pub permissions: Vec<String>,
    pub user_id: String,
    /// Shown once; the user replaces it with `PUT /api/user/password`.
    pub temporary_password: String,
}

#[derive(Serialize, ToSchema)]
pub enum SubjectKind {
    #[serde(rename = "CLIENT")]
    Client,
    #[serde(rename = "USER")]
    User,
}

#[derive(Serialize, ToSchema)]
pub struct Subject {
    pub subject_id: String,
    pub subject_name: String,
    #[serde(rename = "type")]
    pub kind: SubjectKind,
    /// Users only.
    #[serde(default)]
    pub email: Option<String>,
}

/// A permission as rAPId shows it.
#[derive(Serialize, ToSchema)]
pub struct PermissionItem {
    #[schema(example = "READ_PUBLIC")]
    pub id: String,
    #[serde(rename = "type")]
    #[schema(example = "READ")]
    pub kind: String,
    pub sensitivity: Option<String>,
    pub domain: Option<String>,
    pub layer: Option<String>,
}

/// A dataset schema (docs/SPEC.md 2.1). Unknown keys are ignored; the service assigns `version`.
#[derive(Serialize, ToSchema)]
pub struct Schema {
    pub metadata: SchemaMetadata,
    pub columns: Vec<SchemaColumn>,
}

#[derive(Serialize, ToSchema)]
pub struct SchemaMetadata {
    /// Absent: `default`.
    #[serde(default)]
    pub layer: Option<String>,
    #[serde(default)]
    pub domain: String,
    #[serde(default)]
    pub dataset: String,
    /// `PUBLIC`, `PRIVATE` or `PROTECTED`.
    #[serde(default)]
    pub sensitivity: String,
    #[serde(default)]
    pub description: Option<String>,
    /// Assigned by the service; ignored in requests.
    #[serde(default)]
    pub version: Option<i64>,
    #[serde(default)]
    pub key_value_tags: BTreeMap<String, String>,
    #[serde(default)]
    pub key_only_tags: Vec<String>,
    #[serde(default)]
    pub owners: Option<Vec<Owner>>,
    /// `APPEND` (default) or `OVERWRITE`.
    #[serde(default)]
    pub update_behaviour: String,
}

#[derive(Serialize, ToSchema)]
pub struct Owner {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub email: String,
}

#[derive(Serialize, ToSchema)]
pub struct SchemaColumn {
    pub name: String,
    /// `int` (or `integer`), `double`, `string`, `date`, `boolean`.
    pub data_type: String,
    pub allow_null: bool,
    #[serde(default)]
    pub partition_index: Option<i64>,
    /// The date format of a `date` column, e.g. `%Y-%m-%d`.
    #[serde(default)]
    pub format: Option<String>,
    #[serde(default)]
    pub unique: bool,
    /// Check name to check (`in_range`, `isin`, `str_length`, `greater_than`, `less_than`,
    /// `str_matches`).
    #[serde(default)]
    pub checks: BTreeMap<String, CheckSpec>,
}

#[derive(Serialize, ToSchema)]
pub struct CheckSpec {
    pub check_type: String,
    #[serde(default)]
    pub parameters: BTreeMap<String, Value>,
}

/// A multipart form with the data file as its `file` part (CSV or Parquet).
#[derive(Serialize, ToSchema)]
pub struct FileUpload {
    #[schema(format = Binary, content_media_type = "application/octet-stream")]
    pub file: String,
}

/// Filters of the dataset listing; all optional.
#[derive(Serialize, ToSchema)]
pub struct DatasetFilter {
    #[serde(default)]
    pub sensitivity: Option<OneOrMany>,
    /// A null value means "the key is present, with any value".
    #[serde(default)]
    pub key_value_tags: BTreeMap<String, Option<String>>,
    #[serde(default)]
    pub key_only_tags: Vec<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

#[derive(Serialize, ToSchema)]
pub struct DatasetEntry {
    pub layer: String,
    pub domain: String,
    pub dataset: String,
    pub version: i64,
    /// Custom tags (key-only ones as `""`), `sensitivity` and `no_of_versions`.
    pub tags: BTreeMap<String, String>,
    /// With `enriched=true`.
    #[serde(default)]
    pub description: Option<String>,
    /// With `enriched=true`: `YYYY-MM-DD HH:MM:SS+00:00` or `Never updated`.
    #[serde(default)]
    pub last_updated_date: Option<String>,
}

/// The schema of the version, with figures about its data.
#[derive(Serialize, ToSchema)]
pub struct DatasetInfo {
    pub metadata: InfoMetadata,
    pub columns: Vec<InfoColumn>,
}

#[derive(Serialize, ToSchema)]
pub struct InfoMetadata {
    #[serde(flatten)]
    pub schema: SchemaMetadata,
    pub number_of_rows: i64,
    pub number_of_columns: i64,
    /// `YYYY-MM-DD HH:MM:SS+00:00`.
    pub last_updated: String,
    /// Custom tags and key-only tags (as `""`).
    pub tags: BTreeMap<String, String>,
    /// The subject name of the last successful upload.
    #[serde(default)]
    pub last_uploaded_by: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct InfoColumn {
    #[serde(flatten)]
    pub column: SchemaColumn,
    /// Date columns: their smallest and largest value.
    pub statistics: Option<DateRange>,
}

#[derive(Serialize, ToSchema)]
pub struct DateRange {
    pub min: Option<String>,
    pub max: Option<String>,
}

/// A query (docs/API.md, Queries). An empty body means every row and column.
#[derive(Serialize, ToSchema)]
#[schema(example = json!({
    "select_columns": ["city", "sum(visitors) AS total"],
    "filter": "visitors > 10",
    "group_by_columns": ["city"],
    "order_by_columns": [{"column": "total", "direction": "DESC"}],
    "limit": 10
}))]
#[serde(deny_unknown_fields)]
pub struct QueryRequest {
    #[serde(default)]
    pub select_columns: Option<Vec<String>>,
    #[serde(default)]
    pub filter: Option<Condition>,
    #[serde(default)]
    pub group_by_columns: Option<Vec<String>>,
    #[serde(default)]
    pub aggregation_conditions: Option<Condition>,
    #[serde(default)]
    pub order_by_columns: Option<Vec<OrderBy>>,
    #[serde(default)]
    pub limit: Option<Limit>,
}

/// A SQL boolean expression, or rAPId's JSON filter group.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum Condition {
    Sql(String),
    Group(FilterGroup),
}

#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FilterGroup {
    /// `AND` (default) or `OR`.
    #[serde(default)]
    pub logic_operator: Option<String>,
    #[serde(default)]
    pub conditions: Vec<FilterCondition>,
    #[serde(default)]
    #[schema(no_recursion)]
    pub groups: Vec<FilterGroup>,
}

#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FilterCondition {
    pub column: String,
    pub operator: String,
    #[serde(default)]
    pub value: Option<Value>,
}

#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderBy {
    pub column: String,
    /// `ASC` (default) or `DESC`.
    #[serde(default)]
    pub direction: Option<String>,
}

/// A number, or a string holding one.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum Limit {
    Number(i64),
    Text(String),
}

/// Rows by index (`"0"`, `"1"`, ...), each a column-to-value object; `{}` when empty.
#[derive(Serialize, ToSchema)]
pub struct QueryRows(pub BTreeMap<String, BTreeMap<String, Value>>);

#[derive(Serialize, ToSchema)]
pub struct Job {
    pub job_id: String,
    /// `UPLOAD`, `QUERY` or `COMPACT`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `IN PROGRESS`, `SUCCESS` or `FAILED`.
    pub status: String,
    pub step: String,
    pub errors: Option<Vec<String>>,
    pub filename: Option<String>,
    pub raw_filename: Option<String>,
    pub layer: String,
    pub domain: String,
    pub dataset: String,
    pub version: i64,
    /// A finished query's download link (signed, expiring).
    pub result_url: Option<String>,
    /// Rows read so far (uploads) or written (queries).
    pub rows_processed: i64,
    pub created_at: String,
    pub finished_at: Option<String>,
    /// A refused upload's whole report, every problem as CSV (signed, expiring); null otherwise.
    pub report_url: Option<String>,
    /// Rows of an upload that had problems: refused, or kept apart in quarantine mode (0 for
    /// other jobs).
    pub rows_rejected: i64,
    /// A quarantining upload's rejected rows as CSV (signed, expiring); null otherwise.
    pub quarantine_url: Option<String>,
}
