//! The tools: five that read, offered to every subject, and one that writes (`create_schema`),
//! offered only when `RAPID_MCP_WRITE_TOOLS` is on and the subject holds DATA_ADMIN. Each is one
//! engine use case called with the pass the matching API route mints, so it sees what that route
//! sees: only datasets the subject may read, through its row filters and column masks.

use std::sync::Arc;

use rapid_actors::audit::Note;
use rapid_actors::auth::pass::{DatasetPass, Read, SubjectPass};
use rapid_actors::auth::Subject;
use rapid_actors::engine::{AsOf, DatasetFilter, Limit, QueryRequest};
use rapid_actors::key::DatasetKey;
use rapid_actors::schema::Schema;
use rapid_actors::{Error, ErrorKind};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, ErrorCode, ErrorData, JsonObject, Tool,
    ToolAnnotations,
};
use serde_json::{json, Value};

use super::answer::capped;
use super::args::Args;
use crate::auth::{AnySubject, Authorized};
use crate::error::status_of;
use crate::state::AppState;

/// Commits `describe_dataset` lists, newest first.
const HISTORY_SHOWN: i64 = 10;

/// A tool's input schema: an object of `properties`, `required` present, nothing else.
fn schema(properties: Value, required: &[&str]) -> Arc<JsonObject> {
    let mut s = JsonObject::new();
    s.insert("type".into(), "object".into());
    s.insert("properties".into(), properties);
    s.insert("required".into(), json!(required));
    s.insert("additionalProperties".into(), false.into());
    Arc::new(s)
}

/// The arguments naming a dataset, and `extra`.
fn dataset_properties(extra: Value) -> Value {
    let mut p = json!({
        "layer": {"type": "string", "description": "The dataset's layer (list_datasets gives it)"},
        "domain": {"type": "string"},
        "dataset": {"type": "string"},
        "version": {"type": "integer", "description": "Schema version; absent: the latest"}
    });
    if let (Value::Object(p), Value::Object(extra)) = (&mut p, extra) {
        p.extend(extra);
    }
    p
}

/// A tool that only reads, annotated so (`readOnlyHint`, and it changes nothing it is asked twice).
fn reading(tool: Tool, title: &str) -> Tool {
    tool.annotate(
        ToolAnnotations::with_title(title)
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(false),
    )
}

fn max_rows_property() -> Value {
    json!({"type": "integer", "minimum": 1, "description": "Rows wanted at most (the server caps it too)"})
}

/// The tools `subject` is offered.
pub(super) fn listed(state: &AppState, subject: &Arc<Subject>) -> Vec<Tool> {
    let mut tools = vec![
        reading(Tool::new(
            "list_datasets",
            "The datasets you may read: layer, domain, dataset, latest version, tags (sensitivity \
             among them), description, last update and row count (null when a row filter hides the \
             total). `filter` narrows by sensitivity and tags as POST /api/datasets does.",
            schema(json!({"filter": {"type": "object", "properties": {
                "sensitivity": {"description": "PUBLIC, PRIVATE or PROTECTED, or a list of them"},
                "key_value_tags": {"type": "object"},
                "key_only_tags": {"type": "array", "items": {"type": "string"}}
            }}}), &[]),
        ), "List datasets"),
        reading(Tool::new(
            "describe_dataset",
            "One dataset you may read: its schema (columns, types, description, owners), row count, \
             freshness (the newest commit), its last commits, and each column's profile (nulls, \
             distinct values, bounds, frequent values).",
            schema(dataset_properties(json!({})), &["layer", "domain", "dataset"]),
        ), "Describe a dataset"),
        reading(Tool::new(
            "query",
            "Rows of one dataset by rAPId's JSON query: select_columns, filter (SQL text over the \
             columns), group_by_columns, aggregation_conditions, order_by_columns, limit. Answers \
             {columns, rows, row_count, truncated}.",
            schema(dataset_properties(json!({
                "query": {"type": "object", "description": "e.g. {\"select_columns\": [\"region\", \"count(*) AS n\"], \"group_by_columns\": [\"region\"]}"},
                "max_rows": max_rows_property()
            })), &["layer", "domain", "dataset"]),
        ), "Query a dataset"),
        reading(Tool::new(
            "sql",
            "One read-only SELECT over the datasets you may read, each a table named \
             \"layer\".\"domain\".\"dataset\" (the same rules as POST /api/sql: one statement, no \
             writes, no settings, no file access). Answers {columns, rows, row_count, truncated}.",
            schema(json!({"sql": {"type": "string"}, "max_rows": max_rows_property()}), &["sql"]),
        ), "Run one SELECT"),
        reading(Tool::new(
            "job_status",
            "A job of yours (an upload's processing, a large query): its status, step, errors and, \
             for a finished large query, the link to its result.",
            schema(json!({"job_id": {"type": "string"}}), &["job_id"]),
        ), "A job's status"),
    ];
    if write_tools(state, subject) {
        tools.push(Tool::new(
            "create_schema",
            "Creates a dataset from a schema (as POST /api/schema): version 1, no rows yet. \
             Needs DATA_ADMIN.",
            schema(json!({"schema": {"type": "object", "description": "{\"metadata\": {\"layer\", \"domain\", \"dataset\", \"sensitivity\", ...}, \"columns\": [...]}"}}), &["schema"]),
        ).annotate(
            ToolAnnotations::with_title("Create a dataset")
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(false),
        ));
    }
    tools
}

/// Write tools exist for `subject` only when the setting is on and it holds DATA_ADMIN.
fn write_tools(state: &AppState, subject: &Arc<Subject>) -> bool {
    state.mcp.write_tools && state.engine.admin_pass(subject.clone()).is_ok()
}

/// Runs a tool. An unknown tool is a protocol error; a refusal by the engine is the tool's
/// answer (`isError`, the message the API would give), and the audit row gets its status.
pub(super) async fn call(
    state: &AppState,
    caller: &Authorized<AnySubject>,
    note: &Note,
    params: &CallToolRequestParams,
) -> Result<CallToolResult, ErrorData> {
    let empty = JsonObject::new();
    let args = Args(params.arguments.as_ref().unwrap_or(&empty));
    let call = Call {
        state,
        subject: &caller.subject,
        pass: &caller.pass,
        note,
    };
    let answer = match params.name.as_ref() {
        "list_datasets" => call.list_datasets(&args),
        "describe_dataset" => call.describe_dataset(&args),
        "query" => call.query(&args).await,
        "sql" => call.sql(&args).await,
        "job_status" => call.job_status(&args),
        "create_schema" if write_tools(state, &caller.subject) => call.create_schema(&args).await,
        other => {
            return Err(ErrorData::new(
                ErrorCode::INVALID_PARAMS,
                format!("Unknown tool: {other}"),
                None,
            ))
        }
    };
    Ok(match answer {
        Ok(value) => {
            let mut result = CallToolResult::success(vec![ContentBlock::text(value.to_string())]);
            result.structured_content = Some(value);
            result
        }
        Err(e) => {
            note.status(status_of(e.kind).as_u16());
            let message = match e.kind {
                // The cause is logged; the caller gets no internals.
                ErrorKind::Internal => {
                    tracing::error!(error = %e.report(), "an MCP tool failed");
                    "Something went wrong. Please contact your system administrator.".to_string()
                }
                _ => e.to_string(),
            };
            CallToolResult::error(vec![ContentBlock::text(message)])
        }
    })
}

struct Call<'a> {
    state: &'a AppState,
    subject: &'a Arc<Subject>,
    pass: &'a SubjectPass,
    note: &'a Note,
}

impl Call<'_> {
    /// The read pass for `key`, as the API's dataset routes mint it. A dataset the subject may
    /// not read and one that does not exist get the same answer: it learns nothing of it.
    fn read_pass(&self, key: &DatasetKey) -> Result<DatasetPass<Read>, Error> {
        match self
            .state
            .engine
            .dataset_pass::<Read>(self.subject.clone(), key)
        {
            Ok(pass) => Ok(pass.with_note(self.note.clone())),
            Err(e) if matches!(e.kind, ErrorKind::Forbidden | ErrorKind::NotFound) => {
                Err(Error::not_found(format!(
                    "No dataset layer [{}], domain [{}], dataset [{}] that you may read \
                     (list_datasets names those you may)",
                    key.layer, key.domain, key.dataset
                )))
            }
            Err(e) => Err(e),
        }
    }

    /// Rows of the version's current commit; `None` when a row filter hides the total.
    fn rows(&self, pass: &DatasetPass<Read>, version: i64) -> Result<Option<i64>, Error> {
        self.state.engine.rows_of_version(pass, version)
    }

    fn list_datasets(&self, args: &Args<'_>) -> Result<Value, Error> {
        let filter: DatasetFilter = args.object("filter")?.unwrap_or_default();
        let entries = self.state.engine.list(self.pass, &filter, true)?;
        let mut out = Vec::with_capacity(entries.len());
        for entry in entries {
            let key = DatasetKey::new(&entry.layer, &entry.domain, &entry.dataset);
            // The listing also shows PROTECTED datasets to their writers: only readers see here.
            let Ok(pass) = self
                .state
                .engine
                .dataset_pass::<Read>(self.subject.clone(), &key)
            else {
                continue;
            };
            let rows = self.rows(&pass, entry.version)?;
            let mut item =
                serde_json::to_value(&entry).map_err(|e| Error::internal(e.to_string()))?;
            item["rows"] = json!(rows);
            out.push(item);
        }
        self.note.rows(out.len() as u64);
        Ok(json!({"datasets": out}))
    }

    fn describe_dataset(&self, args: &Args<'_>) -> Result<Value, Error> {
        let key = args.dataset()?;
        let asked = args.whole("version")?;
        let pass = self.read_pass(&key)?;
        let engine = &self.state.engine;
        let schema = engine.schema(&pass, asked)?;
        let version = schema.version().unwrap_or(pass.record().latest_version());
        self.note.read(&key, version, None, [], &[]);
        // Its row counts count hidden rows: refused under a policy, as GET .../history is.
        let history = match engine.history(&pass, Some(version), 1, HISTORY_SHOWN) {
            Ok(commits) => Some(commits),
            Err(e) if e.kind == ErrorKind::Forbidden => None,
            Err(e) => return Err(e),
        };
        let freshness = history.as_ref().and_then(|h| h.first()).map(|c| {
            json!({"last_commit": c.commit, "committed_at": c.committed_at, "operation": c.operation})
        });
        // Counted over every row: hidden under a policy, as GET .../profile hides it.
        let profile = match engine.profile(&pass, Some(version)) {
            Ok(p) => serde_json::to_value(p).map_err(|e| Error::internal(e.to_string()))?,
            Err(e) if e.kind == ErrorKind::Forbidden => json!({"hidden": e.to_string()}),
            Err(e) => return Err(e),
        };
        Ok(json!({
            "layer": key.layer, "domain": key.domain, "dataset": key.dataset,
            "version": version,
            "rows": self.rows(&pass, version)?,
            "freshness": freshness,
            "schema": schema.into_schema(),
            "history": history,
            "profile": profile,
        }))
    }

    async fn query(&self, args: &Args<'_>) -> Result<Value, Error> {
        let key = args.dataset()?;
        let version = args.whole("version")?;
        let max_rows = args.max_rows(self.state.mcp.max_rows)?;
        let mut request: QueryRequest = args.object("query")?.unwrap_or_default();
        // One row past the cap tells whether there were more, without reading them all.
        let asked = match &request.limit {
            Some(Limit::Number(n)) => u64::try_from(*n).ok(),
            Some(Limit::Text(t)) => t.trim().parse::<u64>().ok(),
            None => None,
        };
        let limit = asked.map_or(max_rows + 1, |n| n.min(max_rows + 1));
        request.limit = Some(Limit::Number(limit as i64));
        let pass = self.read_pass(&key)?;
        let (table, commit) = self
            .state
            .engine
            .query_table(pass, version, AsOf::Latest, request)
            .await?;
        let mut answer = capped(table, max_rows, self.state.mcp.max_bytes, false);
        self.note.rows(answer["row_count"].as_u64().unwrap_or(0));
        answer["commit"] = json!(commit);
        Ok(answer)
    }

    async fn sql(&self, args: &Args<'_>) -> Result<Value, Error> {
        let statement = args.text("sql")?;
        let max_rows = args.max_rows(self.state.mcp.max_rows)?;
        let table = self.state.engine.sql_table(self.pass, statement).await?;
        let answer = capped(table, max_rows, self.state.mcp.max_bytes, false);
        self.note.rows(answer["row_count"].as_u64().unwrap_or(0));
        Ok(answer)
    }

    fn job_status(&self, args: &Args<'_>) -> Result<Value, Error> {
        let job = self.state.engine.job(self.pass, &args.text("job_id")?)?;
        serde_json::to_value(job).map_err(|e| Error::internal(e.to_string()))
    }

    async fn create_schema(&self, args: &Args<'_>) -> Result<Value, Error> {
        let admin = self.state.engine.admin_pass(self.subject.clone())?;
        let Some(schema) = args.object::<Schema>("schema")? else {
            return Err(Error::invalid("`schema` is required"));
        };
        let stored = self.state.engine.create_schema(&admin, &schema).await?;
        Ok(json!({
            "created": format!("{}/{}/{}", stored.layer(), stored.domain(), stored.dataset()),
            "version": 1,
        }))
    }
}
