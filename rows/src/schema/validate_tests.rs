use std::collections::BTreeSet;

use serde_json::json;

use super::*;
use crate::error::Details;
use crate::schema::{Check, DataType, DateFormat, UpdateBehaviour};
use crate::sensitivity::Sensitivity;

/// rAPId's e2e `test_e2e-dataset.json.tpl`, `{{ name }}` filled in (it sends `tags`, ignored).
const E2E_DATASET: &str = r#"{
  "metadata": {
    "layer": "default",
    "domain": "test_e2e",
    "dataset": "query_2024_06_01",
    "sensitivity": "PUBLIC",
    "description": "A test dataset",
    "tags": {"test_e2e": "query", "test": "e2e"},
    "owners": [{"name": "query", "email": "query@test.com"}],
    "update_behaviour": "OVERWRITE"
  },
  "columns": [
    {"name": "year", "partition_index": null, "data_type": "int", "allow_null": true, "format": null},
    {"name": "month", "partition_index": null, "data_type": "int", "allow_null": true, "format": null},
    {"name": "destination", "partition_index": null, "data_type": "string", "allow_null": true, "format": null},
    {"name": "arrival", "partition_index": null, "data_type": "string", "allow_null": true, "format": null},
    {"name": "type", "partition_index": null, "data_type": "string", "allow_null": true, "format": null},
    {"name": "status", "partition_index": null, "data_type": "string", "allow_null": true, "format": null}
  ]
}"#;

/// rAPId's e2e `test_e2e-custom_checks.json.tpl`, filled in, with the checks it carries.
const E2E_CUSTOM_CHECKS: &str = r#"{
  "metadata": {
    "layer": "default", "domain": "test_e2e", "dataset": "custom_checks_1",
    "sensitivity": "PUBLIC", "description": "A test dataset with custom pandera checks",
    "tags": {"test_e2e": "custom_checks", "test": "validation"},
    "owners": [{"name": "test", "email": "test@example.com"}],
    "update_behaviour": "APPEND"
  },
  "columns": [
    {"name": "year", "partition_index": null, "data_type": "int", "allow_null": false, "format": null,
     "checks": {"year_range_check": {"check_type": "in_range",
       "parameters": {"min_value": 2000, "max_value": 2030}, "error": "Year must be between 2000 and 2030"}}},
    {"name": "month", "partition_index": null, "data_type": "int", "allow_null": false, "format": null,
     "checks": {"month_range_check": {"check_type": "isin",
       "parameters": {"allowed_values": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]}, "error": "Month"}}},
    {"name": "destination", "partition_index": null, "data_type": "string", "allow_null": false, "format": null},
    {"name": "type", "partition_index": null, "data_type": "string", "allow_null": false, "format": null,
     "checks": {"type_check": {"check_type": "isin",
       "parameters": {"allowed_values": ["regular", "express", "priority"]}}}}
  ]
}"#;

struct Instance {
    layers: Vec<String>,
    protected: BTreeSet<String>,
}

impl Instance {
    fn new() -> Self {
        Instance {
            layers: vec!["default".to_owned(), "raw".to_owned()],
            protected: ["test_e2e_protected".to_owned()].into(),
        }
    }

    fn ctx(&self) -> SchemaContext<'_> {
        SchemaContext {
            layers: &self.layers,
            protected_domains: &self.protected,
        }
    }

    fn validate(&self, json: &str) -> Result<ValidSchema> {
        validate(&serde_json::from_str(json).unwrap(), &self.ctx())
    }
}

fn messages(e: Error) -> Vec<String> {
    assert_eq!(e.kind, ErrorKind::Invalid);
    match e.details {
        Details::One(m) => vec![m],
        Details::Many(ms) => ms,
    }
}

#[test]
fn the_e2e_dataset_schema_parses_and_validates() {
    let v = Instance::new().validate(E2E_DATASET).unwrap();
    assert_eq!(
        (v.layer(), v.domain(), v.dataset()),
        ("default", "test_e2e", "query_2024_06_01")
    );
    assert_eq!(v.sensitivity(), Sensitivity::Public);
    assert_eq!(v.update_behaviour(), UpdateBehaviour::Overwrite);
    assert_eq!(v.description(), "A test dataset");
    assert_eq!(v.owners()[0].email, "query@test.com");
    assert!(v.key_value_tags().is_empty());
    assert_eq!(v.columns().len(), 6);
    assert_eq!(v.partition_columns().len(), 0);
    assert_eq!(v.data_columns().count(), 6);
    assert_eq!(v.column("year").map(|c| c.data_type), Some(DataType::Int));
    assert_eq!(v.version(), None);
}

#[test]
fn the_e2e_custom_checks_schema_parses_and_validates() {
    let v = Instance::new().validate(E2E_CUSTOM_CHECKS).unwrap();
    let year = v.column("year").unwrap();
    assert_eq!(year.checks[0].name, "year_range_check");
    assert!(
        matches!(year.checks[0].check, Check::InRange { min, max } if min == 2000.0 && max == 2030.0)
    );
    let month = &v.column("month").unwrap().checks[0].check;
    assert!(matches!(month, Check::IsIn { allowed_values } if allowed_values.len() == 12));
}

#[test]
fn a_partitioned_dated_schema_is_typed_for_later_stages() {
    let mut v = Instance::new()
        .validate(
            r#"{"metadata": {"domain": "Health", "dataset": "Visits", "sensitivity": "PRIVATE",
                 "version": 7, "owners": [{"name": "a", "email": "a@example.com"}]},
                "columns": [
                  {"name": "day", "data_type": "date", "allow_null": false, "format": "%Y-%m-%d",
                   "partition_index": 1},
                  {"name": "region", "data_type": "string", "allow_null": false, "partition_index": 0},
                  {"name": "count", "data_type": "integer", "allow_null": true, "unique": true}
                ]}"#,
        )
        .unwrap();
    let order: Vec<&str> = v.partition_columns().map(|c| c.name.as_str()).collect();
    assert_eq!(order, ["region", "day"]);
    assert_eq!(v.column("day").unwrap().format, Some(DateFormat::YmdDash));
    assert!(v.column("count").unwrap().unique);
    assert_eq!(
        (v.domain(), v.dataset(), v.layer()),
        ("health", "Visits", "default")
    );
    assert_eq!(v.version(), None, "a client's version is ignored");
    v.set_version(1);
    let wire = serde_json::to_value(&v).unwrap();
    assert_eq!(wire["metadata"]["version"], json!(1));
    assert_eq!(wire["metadata"]["layer"], json!("default"));
    assert_eq!(wire["columns"][2]["data_type"], json!("int"));
}

#[test]
fn every_problem_is_reported_at_once() {
    let e = Instance::new()
        .validate(
            r#"{"metadata": {"domain": "", "dataset": "x", "sensitivity": "SECRET",
                 "owners": [{"name": "change_me", "email": "change_me@email.com"}]},
                "columns": [{"name": "Bad Name", "data_type": "array", "allow_null": true}]}"#,
        )
        .unwrap_err();
    assert_eq!(
        messages(e),
        [
            "Column name [Bad Name] must be lower case letters, digits and underscores, not only \
             digits or underscores",
            "Column [Bad Name] has an unaccepted data type [array]. Accepted: int, double, string, \
             date, boolean",
            "The domain must not be empty",
            "You must specify a valid sensitivity level. Accepted values: ['PUBLIC', 'PRIVATE', \
             'PROTECTED']",
            "You must change the default owner",
        ]
    );
}

#[test]
fn a_single_problem_is_a_single_message() {
    let e = Instance::new()
        .validate(&E2E_DATASET.replace("\"PUBLIC\"", "\"PROTECTED\""))
        .unwrap_err();
    assert_eq!(
        e.details,
        Details::One("The protected domain 'test_e2e' does not exist.".to_owned())
    );
}

#[test]
fn a_generated_schema_may_keep_the_placeholder_owner() {
    let i = Instance::new();
    let json = E2E_DATASET.replace(
        "\"query\", \"email\": \"query@test.com\"",
        "\"change_me\", \"email\": \"change_me@email.com\"",
    );
    let schema: Schema = serde_json::from_str(&json).unwrap();
    assert!(validate(&schema, &i.ctx()).is_err());
    assert!(validate_generated(&schema, &i.ctx()).is_ok());
}

#[test]
fn a_stored_schema_keeps_its_version_and_needs_no_instance() {
    let json = E2E_DATASET.replace(
        "\"layer\": \"default\"",
        "\"layer\": \"retired\", \"version\": 3",
    );
    let schema: Schema = serde_json::from_str(&json).unwrap();
    assert!(validate(&schema, &Instance::new().ctx()).is_err());
    let v = validate_stored(&schema).unwrap();
    assert_eq!((v.layer(), v.version()), ("retired", Some(3)));
}

#[test]
fn a_valid_schema_round_trips_through_its_wire_form() {
    let i = Instance::new();
    let v = i.validate(E2E_CUSTOM_CHECKS).unwrap();
    let again = i
        .validate(&serde_json::to_string(v.schema()).unwrap())
        .unwrap();
    assert_eq!(v.schema(), again.schema());
}
