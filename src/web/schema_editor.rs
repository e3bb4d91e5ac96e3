//! The schema editor's page: every field of a schema as inputs (types, nullability, unique,
//! date formats, checks, partition order, metadata), the rules it breaks, and, for a schema
//! generated from a sample, each column's example values and null count from that sample (kept
//! server-side, named by a token in a hidden field, so they are shown again at each re-render).

use maud::{html, Markup};
use rapid_actors::auth::pass::AdminPass;
use rapid_actors::infer::ColumnSample;
use rapid_actors::schema::{Metadata, Schema};

use crate::state::AppState;
use crate::web::checks_edit::{cell, help, rows_of, CheckRow};
use crate::web::format::count;
use crate::web::layout::{csrf_field, errors, page};
use crate::web::sample_store::Kept;
use crate::web::session::Viewer;

/// The data types the service stores: the editor's type list.
const TYPES: [&str; 5] = ["int", "double", "boolean", "string", "date"];
/// The date formats of SPEC.md.
const DATE_FORMATS: [&str; 10] = [
    "%Y/%m/%d", "%d/%m/%Y", "%m/%d/%Y", "%Y-%m-%d", "%d-%m-%Y", "%m-%d-%Y", "%Y/%m", "%m/%Y",
    "%Y-%m", "%m-%Y",
];

/// What the editor shows: a schema, and per column the text typed where it could not be read
/// (shown again as typed, with the problem).
pub(super) struct Edited {
    pub schema: Schema,
    pub typed: Vec<Typed>,
    /// The rules the schema breaks as it stands (what saving it would refuse).
    pub rules: Vec<String>,
    /// Whether the viewer asked for the check (then a schema breaking none says so).
    pub asked: bool,
    /// The kept sample the schema was generated from: its token and record.
    pub sample: Option<(String, Kept)>,
    /// The columns changed: the new (empty) version a save would store, to confirm, and each
    /// change in words.
    pub new_version: Option<(i64, Vec<String>)>,
    /// What saving allows but the editor should know (a PUBLIC dataset in a protected domain).
    pub warnings: Vec<String>,
}

impl From<Schema> for Edited {
    fn from(schema: Schema) -> Edited {
        Edited {
            schema,
            typed: vec![],
            rules: vec![],
            asked: false,
            sample: None,
            new_version: None,
            warnings: vec![],
        }
    }
}

impl Edited {
    /// A draft generated from a kept sample (its token and record).
    pub(super) fn sampled(schema: Schema, sample: (String, Kept)) -> Edited {
        Edited {
            sample: Some(sample),
            ..Edited::from(schema)
        }
    }

    /// With the rules it breaks, checked now by the API's own validation.
    pub(super) fn checked(mut self, state: &AppState, pass: &AdminPass) -> Edited {
        self.rules = schema_problems(state, pass, &self.schema);
        let m = &self.schema.metadata;
        let domain = m.domain.to_ascii_lowercase();
        let protected = state.auth().protected_domains(pass).contains(&domain);
        if protected && !m.sensitivity.eq_ignore_ascii_case("PROTECTED") {
            self.warnings.push(format!(
                "The domain {domain} is protected, but its protection covers PROTECTED datasets \
                 only: this {} dataset is readable with {}, without {domain}'s permission. \
                 Choose PROTECTED to need it.",
                m.sensitivity,
                match m.sensitivity.eq_ignore_ascii_case("PUBLIC") {
                    true => "READ_PUBLIC",
                    false => "READ_PRIVATE",
                }
            ));
        }
        self.warnings.extend(self.sample_refusals());
        self
    }

    /// The sample's example values that a column's check refuses: uploading the sample would
    /// refuse those rows (a strict `greater_than 0` and a value 0, say).
    fn sample_refusals(&self) -> Vec<String> {
        let Some((_, kept)) = &self.sample else {
            return vec![];
        };
        let mut out = vec![];
        for (c, figures) in self.schema.columns.iter().zip(&kept.columns) {
            for (name, spec) in &c.checks {
                let refused = figures.examples.iter().filter(|e| {
                    rapid_actors::ingest::example_fails(spec, &c.data_type, e) == Some(true)
                });
                let refused: Vec<&String> = refused.collect();
                if !refused.is_empty() {
                    let listed: Vec<&str> = refused.iter().map(|e| e.as_str()).collect();
                    out.push(format!(
                        "Column {}: the sample has {} that its check {name} ({}) refuses: \
                         an upload of the sample would refuse those rows.",
                        c.name,
                        listed.join(", "),
                        spec.sentence()
                    ));
                }
            }
        }
        out
    }
}

/// The rules the edited schema breaks, before it is saved; or, asked, that it breaks none.
fn rules_box(edited: &Edited) -> Markup {
    html! {
        @if !edited.rules.is_empty() {
            div.alert.warn #schema-rules role="status" {
                p { strong { "Before this schema can be saved:" } }
                ul { @for r in &edited.rules { li { (r) } } }
            }
        } @else if edited.asked {
            div.alert.ok #schema-rules role="status" { p { "The schema follows every rule: it can be saved." } }
        }
    }
}

/// A column's fields as typed, where they could not be read (its checks always as typed).
#[derive(Default)]
pub(super) struct Typed {
    pub partition_index: Option<String>,
    pub checks: Option<Vec<CheckRow>>,
}

/// The editor's table of columns, one row of inputs each.
fn columns_editor(edited: &Edited) -> Markup {
    let none = Typed::default();
    let figures = edited.sample.as_ref().map(|(_, k)| k.columns.as_slice());
    html! {
    div.table-wrap {
        table.editor {
            thead { tr { th scope="col" { "Name" } @if figures.is_some() { th scope="col" { "In the sample" } } th scope="col" { "Type" } th scope="col" { "Nullable" } th scope="col" { "Unique" } th scope="col" { "Date format" } th scope="col" { "Partition order" } th scope="col" { "Checks" } } }
            tbody {
                @for (i, c) in edited.schema.columns.iter().enumerate() {
                    @let f = |k: &str| format!("c{i}_{k}");
                    @let typed = edited.typed.get(i).unwrap_or(&none);
                    @let partition = typed.partition_index.clone().or(c.partition_index.map(|p| p.to_string()));
                    @let checks = typed.checks.clone().unwrap_or_else(|| rows_of(&c.checks));
                    tr {
                        td data-label="Name" { input name=(f("name")) value=(c.name) aria-label={ "Column " (i + 1) " name" }; }
                        @if let Some(figures) = figures { (sample_cell(i, figures.get(i))) }
                        td data-label="Type" {
                            select name=(f("data_type")) aria-label={ "Column " (i + 1) " type" } {
                                @if !TYPES.contains(&c.data_type.as_str()) { option value=(c.data_type) selected { (c.data_type) } }
                                @for t in TYPES { option value=(t) selected[c.data_type == t] { (t) } }
                            }
                        }
                        td data-label="Nullable" { input type="checkbox" name=(f("allow_null")) checked[c.allow_null] aria-label={ "Column " (i + 1) " nullable" }; }
                        td data-label="Unique" { input type="checkbox" name=(f("unique")) checked[c.unique] aria-label={ "Column " (i + 1) " unique" }; }
                        td data-label="Date format" { input name=(f("format")) list="date-formats" value=(c.format.as_deref().unwrap_or_default()) aria-label={ "Column " (i + 1) " date format" }; }
                        td data-label="Partition order" { input name=(f("partition_index")) type="number" min="0" value=(partition.unwrap_or_default()) aria-label={ "Column " (i + 1) " partition order" }; }
                        td.checks data-label="Checks" { (cell(i, &checks)) }
                    }
                }
            }
        }
    }
    }
}

/// Column `i`'s example values and null count in the sample.
fn sample_cell(i: usize, figures: Option<&ColumnSample>) -> Markup {
    html! {
        td.sample id=(format!("c{i}_sample")) data-label="In the sample" {
            div {
                @if let Some(s) = figures {
                    span.examples {
                        @if s.examples.is_empty() { "no values" }
                        @for (n, e) in s.examples.iter().enumerate() { @if n > 0 { ", " } code { (e) } }
                    }
                    br;
                    small.nulls { (count(s.nulls)) " null of " (count(s.rows)) " rows" }
                }
            }
        }
    }
}

/// Where the examples and null counts come from, and the token that finds them again.
fn sample_note(edited: &Edited) -> Markup {
    html! {
        @if let Some((token, kept)) = &edited.sample {
            input type="hidden" name="sample" value=(token);
            p.note #sample-note {
                "Examples and null counts come from the rows read of " strong { (kept.filename) } "."
                @if kept.whole { " After saving, you can upload this sample as the dataset's first data." }
                @else { " Only the first 50 MB of it was read: after saving, upload the whole file from the upload page." }
            }
        }
    }
}

/// The metadata's tags and owners as the editor's text fields show them.
fn metadata_text(m: &Metadata) -> [String; 3] {
    let tags = m.key_value_tags.iter().map(|(k, v)| format!("{k}={v}"));
    let owners = m.owners.iter().flatten();
    let owners = owners.map(|o| format!("{} <{}>", o.name, o.email));
    [
        tags.collect::<Vec<_>>().join("\n"),
        m.key_only_tags.join(", "),
        owners.collect::<Vec<_>>().join("\n"),
    ]
}

/// What saving an edit does: the service keeps no in-place edit of a schema (each `PUT /schema`
/// is a new version), so the new version, its data apart, starts empty.
fn new_version_warning(current: Option<i64>) -> Markup {
    html! {
        div.alert.warn #new-version-warning role="note" {
            p {
                strong { "The description, tags, owners and history retention are saved in place" }
                @if let Some(v) = current { " (version " (v) ")" }
                ": the rows stay, and every page keeps showing them. A change to the columns or the update behaviour needs a new version, which starts empty; you are asked before it is made."
            }
        }
    }
}

/// The columns changed: what saving them means, and the button that does it.
fn confirm_new_version(next: i64, changes: &[String]) -> Markup {
    html! {
        div.alert.warn #confirm-new-version role="alert" {
            p {
                strong { "These changes to the columns need a new version: version " (next) ", which starts with no rows." }
                " Version " (next - 1) " keeps its rows; pages show them until version " (next) " has rows of its own. Upload the data again into version " (next) " after saving."
            }
            ul #column-changes { @for c in changes { li { (c) } } }
            button type="submit" name="confirm" value="new_version" form="schema-form" { "Save as version " (next) " (starts empty)" }
        }
    }
}

/// The editor of every field of the schema; `update` edits an existing dataset's (in place, or
/// a new version when its columns change).
pub(super) fn editor(
    viewer: &Viewer,
    edited: &Edited,
    update: bool,
    messages: &[String],
) -> Markup {
    let m = &edited.schema.metadata;
    let [tags, key_only, owners] = metadata_text(m);
    let or_empty = |v: &Option<String>| v.clone().unwrap_or_default();
    let h = m.history.unwrap_or_default();
    let keep = |v: Option<i64>| v.map(|n| n.to_string()).unwrap_or_default();
    let title = if update {
        "Edit the schema"
    } else {
        "Edit and save the schema"
    };
    page(
        viewer,
        title,
        html! {
            (errors(messages))
            @if update { (new_version_warning(m.version)) }
            @if let Some((next, changes)) = &edited.new_version { (confirm_new_version(*next, changes)) }
            @for w in &edited.warnings { div.alert.warn.protection-warning role="note" { p { (w) } } }
            (rules_box(edited))
            form.schema #schema-form method="post" action="/schema/save" {
                (csrf_field(viewer))
                @if let Some(v) = m.version { input type="hidden" name="m_version" value=(v); }
                input type="hidden" name="mode" value=(if update { "update" } else { "create" });
                input type="hidden" name="columns" value=(edited.schema.columns.len());
                div.row {
                    div { label for="m_layer" { "Layer" } input id="m_layer" name="m_layer" value=(or_empty(&m.layer)) readonly[update]; }
                    div { label for="m_domain" { "Domain" } input id="m_domain" name="m_domain" value=(m.domain) readonly[update]; }
                    div { label for="m_dataset" { "Dataset" } input id="m_dataset" name="m_dataset" value=(m.dataset) readonly[update]; }
                    div {
                        label for="m_sensitivity" { "Sensitivity" }
                        select id="m_sensitivity" name="m_sensitivity" {
                            @for s in ["PUBLIC", "PRIVATE", "PROTECTED"] { option value=(s) selected[m.sensitivity == s] { (s) } }
                        }
                    }
                    div {
                        label for="m_update_behaviour" { "Update behaviour" }
                        select id="m_update_behaviour" name="m_update_behaviour" {
                            @for b in ["APPEND", "OVERWRITE"] { option value=(b) selected[m.update_behaviour == b] { (b) } }
                        }
                    }
                }
                label for="m_description" { "Description" }
                textarea id="m_description" name="m_description" rows="2" { (or_empty(&m.description)) }
                div.row {
                    div { label for="m_tags" { "Key-value tags (one key=value a line)" } textarea id="m_tags" name="m_tags" rows="3" { (tags) } }
                    div { label for="m_key_only_tags" { "Key-only tags (comma separated)" } input id="m_key_only_tags" name="m_key_only_tags" value=(key_only); }
                    div { label for="m_owners" { "Owners (one Name <email> a line)" } textarea id="m_owners" name="m_owners" rows="3" { (owners) } }
                }
                div.row {
                    div { label for="m_keep_commits" { "History: commits kept per version (blank: the service's setting)" } input id="m_keep_commits" name="m_keep_commits" type="number" min="1" value=(keep(h.keep_commits)); }
                    div { label for="m_keep_seconds" { "History: or seconds an older commit is kept (blank: the service's setting)" } input id="m_keep_seconds" name="m_keep_seconds" type="number" min="0" value=(keep(h.keep_seconds)); }
                }
                h2 { "Columns" }
                (sample_note(edited))
                datalist id="date-formats" { @for f in DATE_FORMATS { option value=(f) {} } }
                (columns_editor(edited))
                (help())
                div.buttons {
                    button type="submit" { @if update { "Save" } @else { "Save the schema" } }
                    button.secondary type="submit" name="action" value="check" { "Check the rules (without saving)" }
                    button.secondary #add-column type="submit" name="action" value="add_column" { "Add a column" }
                }
            }
        },
    )
}

/// Every rule the schema breaks, as storing it would say, without storing it (the API's own
/// validation, with this instance's layers and protected domains).
pub(super) fn schema_problems(state: &AppState, pass: &AdminPass, schema: &Schema) -> Vec<String> {
    let layers = state.engine.layers().to_vec();
    let domains: std::collections::BTreeSet<String> =
        state.auth().protected_domains(pass).into_iter().collect();
    let ctx = rapid_actors::schema::SchemaContext {
        layers: &layers,
        protected_domains: &domains,
    };
    match rapid_actors::schema::validate::validate(schema, &ctx) {
        Ok(_) => vec![],
        Err(e) => rapid_actors::ingest::messages(&e),
    }
}
