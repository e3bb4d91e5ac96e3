//! Shared by the targets: a schema exercising every column type, check and `unique`, with a
//! partition column, so the CSV and stream targets reach every validation branch.

use rapid_actors::schema::{validate, Schema, SchemaContext, ValidSchema};
use serde_json::json;

pub(crate) fn upload_schema() -> ValidSchema {
    let schema: Schema = serde_json::from_value(json!({
        "metadata": {"domain": "fuzz", "dataset": "upload", "sensitivity": "PUBLIC",
                     "owners": [{"name": "Fuzz", "email": "fuzz@example.com"}]},
        "columns": [
            {"name": "region", "partition_index": 0, "data_type": "string", "allow_null": false},
            {"name": "id", "data_type": "int", "allow_null": false, "unique": true, "checks": {
                "range": {"check_type": "in_range", "parameters": {"min_value": -5, "max_value": 1000000}}}},
            {"name": "score", "data_type": "double", "allow_null": true, "checks": {
                "cap": {"check_type": "less_than", "parameters": {"max_value": 10.5}},
                "floor": {"check_type": "greater_than", "parameters": {"min_value": -1e9}}}},
            {"name": "name", "data_type": "string", "allow_null": true, "checks": {
                "len": {"check_type": "str_length", "parameters": {"min_value": 1, "max_value": 12}},
                "shape": {"check_type": "str_matches", "parameters": {"pattern": "[a-z]+\\d?"}}}},
            {"name": "team", "data_type": "string", "allow_null": true, "checks": {
                "known": {"check_type": "isin", "parameters": {"allowed_values": ["red", "blue"]}}}},
            {"name": "day", "data_type": "date", "format": "%d/%m/%Y", "allow_null": true},
            {"name": "month", "data_type": "date", "format": "%Y-%m", "allow_null": true},
            {"name": "ok", "data_type": "boolean", "allow_null": true}
        ]
    }))
    .expect("the fuzz schema parses");
    let layers = vec!["default".to_string()];
    let domains = Default::default();
    validate(
        &schema,
        &SchemaContext {
            layers: &layers,
            protected_domains: &domains,
        },
    )
    .expect("the fuzz schema is valid")
}
