//! Dataset listing with filters, and dataset info with statistics.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::TestServer;

fn schema(domain: &str, dataset: &str, sensitivity: &str, kv: Value, ko: Value) -> Value {
    json!({
        "metadata": {
            "domain": domain, "dataset": dataset, "sensitivity": sensitivity,
            "description": format!("About {dataset}"),
            "key_value_tags": kv, "key_only_tags": ko,
            "owners": [{"name": "Owner", "email": "owner@example.com"}]
        },
        "columns": [
            {"name": "day", "data_type": "date", "format": "%Y-%m-%d", "allow_null": true},
            {"name": "n", "data_type": "int", "allow_null": false}
        ]
    })
}

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|e| e["dataset"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn listing_filters_by_sensitivity_and_tags_and_hides_protected_data() {
    let s = TestServer::start();
    let admin = s.admin_token();
    assert_eq!(
        s.call("POST", "/api/protected_domains/vault", Some(&admin), None)
            .0,
        StatusCode::CREATED
    );
    s.create_schema(&schema(
        "shop",
        "alpha",
        "PUBLIC",
        json!({"team": "red", "stage": "raw"}),
        json!(["pii"]),
    ));
    s.create_schema(&schema(
        "shop",
        "beta",
        "PRIVATE",
        json!({"team": "blue"}),
        json!([]),
    ));
    s.create_schema(&schema(
        "vault",
        "gold",
        "PROTECTED",
        json!({}),
        json!(["pii"]),
    ));
    assert_eq!(
        s.call(
            "PUT",
            "/api/schema",
            Some(&admin),
            Some(&schema(
                "shop",
                "alpha",
                "PUBLIC",
                json!({"team": "red", "stage": "raw"}),
                json!(["pii"])
            ))
        )
        .0,
        StatusCode::OK
    );

    let (status, all) = s.call("POST", "/api/datasets", Some(&admin), None);
    assert_eq!(status, StatusCode::OK);
    assert_eq!(names(&all), ["alpha", "beta", "gold"]);
    assert_eq!(
        all[0],
        json!({"layer": "default", "domain": "shop", "dataset": "alpha", "version": 2,
               "tags": {"stage": "raw", "team": "red", "pii": "", "sensitivity": "PUBLIC", "no_of_versions": "2"}})
    );
    let list = |body: Value| {
        names(
            &s.call("POST", "/api/datasets/", Some(&admin), Some(&body))
                .1,
        )
    };
    assert_eq!(list(json!({"sensitivity": "PRIVATE"})), ["beta"]);
    assert_eq!(
        list(json!({"sensitivity": ["PUBLIC", "PROTECTED"]})),
        ["alpha", "gold"]
    );
    assert_eq!(
        list(json!({"key_value_tags": {"team": null}})),
        ["alpha", "beta"]
    );
    assert_eq!(list(json!({"key_value_tags": {"team": "blue"}})), ["beta"]);
    assert_eq!(list(json!({"key_only_tags": ["pii"]})), ["alpha", "gold"]);
    assert_eq!(
        list(json!({"key_value_tags": {"team": "red"}, "key_only_tags": ["pii"]})),
        ["alpha"]
    );
    assert_eq!(
        list(json!({"key_value_tags": {"nothing": null}})),
        Vec::<String>::new()
    );

    // A subject without access to the protected domain does not see it.
    let reader = s.token_with("reader", &["READ_PUBLIC"]);
    assert_eq!(
        names(&s.call("POST", "/api/datasets", Some(&reader), None).1),
        ["alpha", "beta"]
    );
    let vault = s.token_with("vaulter", &["READ_PROTECTED_VAULT"]);
    assert_eq!(
        names(&s.call("POST", "/api/datasets", Some(&vault), None).1),
        ["alpha", "beta", "gold"]
    );

    let (status, enriched) = s.call("POST", "/api/datasets?enriched=true", Some(&admin), None);
    assert_eq!(status, StatusCode::OK);
    assert_eq!(enriched[0]["description"], "About alpha");
    assert_eq!(enriched[0]["last_updated_date"], "Never updated");
    let (status, body) = s.call(
        "POST",
        "/api/datasets",
        Some(&admin),
        Some(&json!({"sensitivity": "SECRET"})),
    );
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

#[test]
fn info_gives_counts_last_update_and_date_ranges() {
    let s = TestServer::start();
    let t = s.admin_token();
    s.create_schema(&schema("shop", "dated", "PUBLIC", json!({}), json!([])));
    let path = "/api/datasets/default/shop/dated";
    let (status, _) = s.call("GET", &format!("{path}/info"), Some(&t), None);
    assert_eq!(status, StatusCode::NOT_FOUND, "no data yet");
    s.upload_and_wait(
        &t,
        path,
        "a.csv",
        b"day,n\n2024-01-31,1\n2023-05-01,2\n,3\n".to_vec(),
    );
    s.upload_and_wait(&t, path, "b.csv", b"day,n\n2024-12-25,4\n".to_vec());
    let (status, info) = s.call("GET", &format!("{path}/info"), Some(&t), None);
    assert_eq!(status, StatusCode::OK, "{info}");
    let meta = &info["metadata"];
    assert_eq!(meta["number_of_rows"], 4);
    assert_eq!(meta["number_of_columns"], 2);
    assert_eq!(meta["version"], 1);
    assert_eq!(meta["domain"], "shop");
    let updated = meta["last_updated"].as_str().unwrap();
    assert!(
        updated.len() == 25 && updated.ends_with("+00:00") && &updated[10..11] == " ",
        "{updated}"
    );
    assert_eq!(
        info["columns"][0]["statistics"],
        json!({"min": "2023-05-01", "max": "2024-12-25"})
    );
    assert_eq!(info["columns"][1]["statistics"], Value::Null);
    let writer = s.token_with("writer", &["WRITE_ALL"]);
    assert_eq!(
        s.call("GET", &format!("{path}/info"), Some(&writer), None)
            .0,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        s.call("GET", &format!("{path}/info?version=2"), Some(&t), None)
            .0,
        StatusCode::NOT_FOUND
    );
}
