//! Answers pinned for rAPId parity (issue 12): what the rAPId SDK and rAPId's own clients read.
//! Dataset info's tags and last uploader, rAPId's permission objects, the two 400-not-404 deletes,
//! and schema generation refusing headers without usable, distinct names.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, RecordBatch};
use parquet::arrow::ArrowWriter;
use reqwest::blocking::multipart::{Form, Part};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::{into_parts, schema_json, TestServer, ADMIN_ID};

fn tagged_schema() -> Value {
    let mut schema = schema_json(
        "shop",
        "sales",
        "PUBLIC",
        "APPEND",
        json!([{"name": "n", "data_type": "int", "allow_null": false}]),
    );
    schema["metadata"]["key_value_tags"] = json!({"team": "red"});
    schema["metadata"]["key_only_tags"] = json!(["pii"]);
    schema["metadata"]["description"] = json!("Sales");
    schema
}

#[test]
fn info_metadata_has_the_schema_tags_and_the_last_uploader() {
    let s = TestServer::start();
    let admin = s.admin_token();
    s.create_schema(&tagged_schema());
    let path = "/api/datasets/default/shop/sales";
    let (first_id, first_secret) = s.create_client("first_uploader", &["READ_ALL", "WRITE_ALL"]);
    let first = s.token(&first_id, &first_secret);
    let second = s.token_with("second_uploader", &["READ_ALL", "WRITE_ALL"]);

    s.upload_and_wait(&first, path, "a.csv", b"n\n1\n2\n".to_vec());
    let (status, info) = s.call("GET", &format!("{path}/info"), Some(&admin), None);
    assert_eq!(status, StatusCode::OK, "{info}");
    let meta = &info["metadata"];
    assert_eq!(meta["tags"], json!({"team": "red", "pii": ""}));
    assert_eq!(meta["key_value_tags"], json!({"team": "red"}));
    assert_eq!(meta["key_only_tags"], json!(["pii"]));
    assert_eq!(meta["description"], "Sales");
    assert_eq!(meta["owners"][0]["email"], "owner@example.com");
    assert_eq!(meta["update_behaviour"], "APPEND");
    assert_eq!(meta["last_uploaded_by"], "first_uploader");

    let (details, _) = s.upload_and_wait(&second, path, "b.csv", b"n\n3\n".to_vec());
    let info = s.call("GET", &format!("{path}/info"), Some(&admin), None).1;
    assert_eq!(info["metadata"]["last_uploaded_by"], "second_uploader");
    assert_eq!(info["metadata"]["number_of_rows"], 3);

    // The name is the one recorded at upload: it outlives the subject.
    let (status, _) = s.call(
        "DELETE",
        &format!("/api/client/{first_id}"),
        Some(&admin),
        None,
    );
    assert_eq!(status, StatusCode::OK);
    // With the newest upload's file deleted, the upload before it is the last one again.
    let raw = details["raw_filename"].as_str().unwrap();
    let (status, body) = s.call("DELETE", &format!("{path}/1/{raw}"), Some(&admin), None);
    assert_eq!(status, StatusCode::OK, "{body}");
    let info = s.call("GET", &format!("{path}/info"), Some(&admin), None).1;
    assert_eq!(info["metadata"]["last_uploaded_by"], "first_uploader");
    assert_eq!(info["metadata"]["number_of_rows"], 2);
}

#[test]
fn subject_permissions_are_rapid_permission_objects() {
    let s = TestServer::start();
    let admin = s.admin_token();
    let (status, perms) = s.call(
        "GET",
        &format!("/api/permissions/{ADMIN_ID}"),
        Some(&admin),
        None,
    );
    assert_eq!(status, StatusCode::OK, "{perms}");
    assert_eq!(
        perms,
        json!([
            {"id": "DATA_ADMIN", "type": "DATA_ADMIN", "sensitivity": null, "domain": null, "layer": null},
            {"id": "USER_ADMIN", "type": "USER_ADMIN", "sensitivity": null, "domain": null, "layer": null},
            {"id": "READ_ALL", "type": "READ", "sensitivity": "ALL", "domain": null, "layer": "ALL"},
            {"id": "WRITE_ALL", "type": "WRITE", "sensitivity": "ALL", "domain": null, "layer": "ALL"},
        ])
    );
    s.call("POST", "/api/protected_domains/vault", Some(&admin), None);
    let (id, _) = s.create_client("holder", &["READ_PROTECTED_VAULT", "WRITE_PRIVATE"]);
    let perms = s
        .call("GET", &format!("/api/permissions/{id}"), Some(&admin), None)
        .1;
    assert_eq!(
        perms,
        json!([
            {"id": "READ_PROTECTED_VAULT", "type": "READ", "sensitivity": "PROTECTED", "domain": "VAULT", "layer": "ALL"},
            {"id": "WRITE_PRIVATE", "type": "WRITE", "sensitivity": "PRIVATE", "domain": null, "layer": "ALL"},
        ])
    );
    let (status, body) = s.call("GET", "/api/permissions/ghost", Some(&admin), None);
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    // The subject listing keeps its own shape.
    let subjects = s.call("GET", "/api/subjects", Some(&admin), None).1;
    let holder = subjects
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["subject_id"] == id.as_str())
        .unwrap();
    assert_eq!(
        holder,
        &json!({"subject_id": id, "subject_name": "holder", "type": "CLIENT"})
    );
}

#[test]
fn deleting_an_unknown_user_or_dataset_is_400_other_unknowns_404() {
    let s = TestServer::start();
    let admin = s.admin_token();
    let (status, user) = s.call(
        "POST",
        "/api/user",
        Some(&admin),
        Some(&json!({"username": "ada", "email": "ada@example.com", "permissions": ["READ_ALL"]})),
    );
    assert_eq!(status, StatusCode::CREATED, "{user}");
    let id = user["user_id"].as_str().unwrap();
    for body in [
        json!({"username": "nobody", "user_id": "nobody"}),
        json!({"username": "someoneelse", "user_id": id}),
        json!({"username": "ada", "user_id": "not-her-id"}),
    ] {
        let (status, answer) = s.call("DELETE", "/api/user", Some(&admin), Some(&body));
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
        assert!(
            answer["details"]
                .as_str()
                .unwrap()
                .contains("does not exist"),
            "{answer}"
        );
    }
    let (status, answer) = s.call(
        "DELETE",
        "/api/datasets/default/shop/nothing",
        Some(&admin),
        None,
    );
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(
        answer["details"],
        "Could not find the schema for dataset layer [default], domain [shop] and dataset [nothing]"
    );
    // Every other unknown thing stays 404.
    for (method, path) in [
        ("DELETE", "/api/client/nobody"),
        ("GET", "/api/permissions/nobody"),
        ("GET", "/api/jobs/nojob"),
        ("GET", "/api/datasets/default/shop/nothing/info"),
        ("POST", "/api/datasets/default/shop/nothing/query"),
        ("GET", "/api/datasets/default/shop/nothing/1/files"),
        ("DELETE", "/api/datasets/default/shop/nothing/1/file.csv"),
    ] {
        let (status, body) = s.call(method, path, Some(&admin), None);
        assert_eq!(status, StatusCode::NOT_FOUND, "{method} {path}: {body}");
    }
    // The user is still there, and goes with matching name and id.
    let (status, _) = s.call(
        "DELETE",
        "/api/user",
        Some(&admin),
        Some(&json!({"username": "ada", "user_id": id})),
    );
    assert_eq!(status, StatusCode::OK);
}

fn generate(s: &TestServer, filename: &str, bytes: Vec<u8>) -> (StatusCode, Value) {
    let form = Form::new().part("file", Part::bytes(bytes).file_name(filename.to_string()));
    let res = s
        .request("POST", "/api/schema/default/PUBLIC/shop/draft/generate")
        .bearer_auth(s.admin_token())
        .multipart(form)
        .send()
        .unwrap();
    into_parts(res)
}

fn message(body: &Value) -> String {
    match &body["details"] {
        Value::String(m) => m.clone(),
        Value::Array(ms) => ms
            .iter()
            .map(|m| m.as_str().unwrap())
            .collect::<Vec<_>>()
            .join(" | "),
        other => panic!("no details: {other}"),
    }
}

#[test]
fn generation_refuses_empty_or_duplicated_column_names() {
    let s = TestServer::start();
    for (csv, fragment) in [
        (&b"a,,c\n1,2,3\n"[..], "Column 2 has an empty name"),
        (b"a,b,\n1,2,3\n", "Column 3 has an empty name"),
        (b"a, -- ,c\n1,2,3\n", "Column 2 has an empty name"),
        (b"id,Unnamed: 1\n1,2\n", "Column 2 has an empty name"),
        (
            b"Name,x,name\n1,2,3\n",
            "Columns 1 and 3 of the header both give the column name [name]",
        ),
        (
            b"Order Date,order_date\n1,2\n",
            "Columns 1 and 2 of the header both give the column name [order_date]",
        ),
    ] {
        let (status, body) = generate(&s, "sample.csv", csv.to_vec());
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let m = message(&body);
        assert!(m.contains(fragment), "{fragment:?} not in {m:?}");
    }
    // Both problems of one header at once.
    let (status, body) = generate(&s, "sample.csv", b",a,A\n1,2,3\n".to_vec());
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["details"].as_array().is_some_and(|m| m.len() == 2),
        "{body}"
    );

    let column = || Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef;
    let batch = RecordBatch::try_from_iter([("Total", column()), ("total", column())]).unwrap();
    let mut parquet = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut parquet, batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    let (status, body) = generate(&s, "sample.parquet", parquet);
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(message(&body).contains("Columns 1 and 2"), "{body}");

    // Distinct, usable headers are still cleaned into names.
    let (status, draft) = generate(&s, "sample.csv", b"Order Date,Qty\n2024-01-02,3\n".to_vec());
    assert_eq!(status, StatusCode::OK, "{draft}");
    assert_eq!(draft["columns"][0]["name"], "order_date");
    assert_eq!(draft["columns"][1]["name"], "qty");
}
