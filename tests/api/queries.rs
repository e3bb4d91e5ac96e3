//! Queries against uploaded fixtures with known answers.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::{into_parts, schema_json, TestServer};

const PATH: &str = "/api/datasets/default/travel/trips";
const QUERY: &str = "/api/datasets/default/travel/trips/query";

fn server_with_trips() -> (TestServer, String) {
    let s = TestServer::start();
    s.create_schema(&schema_json(
        "travel",
        "trips",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "region", "data_type": "string", "allow_null": false, "partition_index": 0},
            {"name": "year", "data_type": "int", "allow_null": false},
            {"name": "destination", "data_type": "string", "allow_null": true},
            {"name": "price", "data_type": "double", "allow_null": true},
            {"name": "paid", "data_type": "boolean", "allow_null": true},
            {"name": "day", "data_type": "date", "format": "%d/%m/%Y", "allow_null": true}
        ]),
    ));
    let csv = "region,year,destination,price,paid,day\n\
               north,2017,Leeds,10.5,true,01/02/2017\n\
               north,2018,York,20,false,15/06/2018\n\
               north,2019,Hull,30,,31/12/2019\n\
               south,2018,Bath,5,true,01/01/2018\n\
               south,2020,Dover,,true,\n\
               west,2021,Bristol,40,false,02/03/2021\n";
    let t = s.admin_token();
    let (_, job) = s.upload_and_wait(&t, PATH, "trips.csv", csv.into());
    assert_eq!(job["status"], "SUCCESS", "{job}");
    (s, t)
}

fn query(s: &TestServer, t: &str, body: Value) -> (StatusCode, Value) {
    s.call("POST", QUERY, Some(t), Some(&body))
}

fn rows(answer: &Value) -> Vec<Value> {
    let map = answer.as_object().unwrap();
    (0..map.len())
        .map(|i| map[&i.to_string()].clone())
        .collect()
}

#[test]
fn an_empty_query_returns_every_row_typed_and_keyed_by_index() {
    let (s, t) = server_with_trips();
    let res = s.request("POST", QUERY).bearer_auth(&t).send().unwrap();
    let (status, answer) = into_parts(res);
    assert_eq!(status, StatusCode::OK, "{answer}");
    let all = rows(&answer);
    assert_eq!(all.len(), 6);
    let hull = all.iter().find(|r| r["destination"] == "Hull").unwrap();
    assert_eq!(
        hull,
        &json!({"region": "north", "year": 2019, "destination": "Hull", "price": 30.0, "paid": {}, "day": "2019-12-31"})
    );
    let dover = all.iter().find(|r| r["destination"] == "Dover").unwrap();
    assert_eq!(dover["price"], Value::Null);
    assert_eq!(dover["day"], Value::Null);
    // Columns come in schema order.
    let keys: Vec<&String> = all[0].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["region", "year", "destination", "price", "paid", "day"]
    );
}

#[test]
fn select_filter_group_having_order_and_limit_work_together() {
    let (s, t) = server_with_trips();
    let (status, answer) = query(
        &s,
        &t,
        json!({
            "select_columns": ["region", "avg(price) AS mean", "count(*) AS trips"],
            "filter": "year >= 2018",
            "group_by_columns": ["region"],
            "aggregation_conditions": "count(*) >= 1",
            "order_by_columns": [{"column": "mean", "direction": "DESC"}],
            "limit": "2"
        }),
    );
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        rows(&answer),
        [
            json!({"region": "west", "mean": 40.0, "trips": 1}),
            json!({"region": "north", "mean": 25.0, "trips": 2})
        ]
    );
    let (_, answer) = query(
        &s,
        &t,
        json!({"select_columns": ["region", "count(*) AS n"], "group_by_columns": ["region"],
               "aggregation_conditions": "count(*) > 1", "order_by_columns": [{"column": "region"}]}),
    );
    assert_eq!(
        rows(&answer),
        [
            json!({"region": "north", "n": 3}),
            json!({"region": "south", "n": 2})
        ]
    );
}

#[test]
fn filters_on_partitions_dates_like_in_and_nulls() {
    let (s, t) = server_with_trips();
    let destinations = |filter: Value| {
        let (status, answer) = query(
            &s,
            &t,
            json!({"select_columns": ["destination"], "filter": filter, "order_by_columns": [{"column": "destination"}]}),
        );
        assert_eq!(status, StatusCode::OK, "{answer}");
        rows(&answer)
            .iter()
            .map(|r| r["destination"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(destinations(json!("region = 'south'")), ["Bath", "Dover"]);
    assert_eq!(
        destinations(json!("day >= '2018-06-15' AND day < '2021-01-01'")),
        ["Hull", "York"]
    );
    assert_eq!(
        destinations(json!("destination LIKE 'B%'")),
        ["Bath", "Bristol"]
    );
    assert_eq!(
        destinations(json!("year IN (2017, 2021)")),
        ["Bristol", "Leeds"]
    );
    assert_eq!(
        destinations(json!("price IS NULL OR paid IS NULL")),
        ["Dover", "Hull"]
    );
    assert_eq!(
        destinations(json!("NOT paid AND region <> 'west'")),
        ["York"]
    );
    assert_eq!(
        destinations(json!({"logic_operator": "AND", "conditions": [
            {"column": "region", "operator": "=", "value": "north"},
            {"column": "year", "operator": "IN", "value": [2017, 2019]}
        ], "groups": [{"logic_operator": "OR", "conditions": [
            {"column": "price", "operator": ">", "value": 20},
            {"column": "destination", "operator": "LIKE", "value": "L%"}
        ]}]})),
        ["Hull", "Leeds"]
    );
}

#[test]
fn csv_arrow_and_parquet_answers_parse_back() {
    let (s, t) = server_with_trips();
    let body = json!({"select_columns": ["destination", "year"], "filter": "region = 'north'", "order_by_columns": [{"column": "year"}]});
    let fetch = |accept: &str| {
        let res = s
            .request("POST", QUERY)
            .bearer_auth(&t)
            .header("Accept", accept)
            .json(&body)
            .send()
            .unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        (
            res.headers()["content-type"].to_str().unwrap().to_string(),
            res.bytes().unwrap().to_vec(),
        )
    };
    let (kind, csv) = fetch("text/csv");
    assert!(kind.starts_with("text/csv"));
    assert_eq!(
        String::from_utf8(csv).unwrap(),
        ",destination,year\n0,Leeds,2017\n1,York,2018\n2,Hull,2019\n"
    );

    let (_, arrow) = fetch("application/vnd.apache.arrow.stream");
    let reader =
        arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(arrow), None).unwrap();
    let batches: Vec<_> = reader.map(|b| b.unwrap()).collect();
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 3);
    assert_eq!(
        batches[0].schema().field(1).data_type(),
        &arrow::datatypes::DataType::Int64
    );

    let (_, parquet) = fetch("application/vnd.apache.parquet");
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        bytes::Bytes::from(parquet),
    )
    .unwrap()
    .build()
    .unwrap();
    assert_eq!(reader.map(|b| b.unwrap().num_rows()).sum::<usize>(), 3);

    for accept in [
        "*/*",
        "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        "application/json",
    ] {
        let (kind, _) = fetch(accept);
        assert_eq!(kind, "application/json", "{accept}");
    }
    let res = s
        .request("POST", QUERY)
        .bearer_auth(&t)
        .header("Accept", "image/png")
        .send()
        .unwrap();
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
}

#[test]
fn injection_and_unknown_parts_are_refused_naming_the_part() {
    let (s, t) = server_with_trips();
    let cases = [
        (json!({"filter": "1=1; DROP TABLE x"}), "Invalid filter"),
        (
            json!({"filter": "year IN (SELECT year FROM dataset)"}),
            "subqueries are not allowed",
        ),
        (
            json!({"filter": "(SELECT 1) = 1"}),
            "subqueries are not allowed",
        ),
        (
            json!({"filter": "sleep(5) = 0"}),
            "unknown or disallowed function [sleep]",
        ),
        (
            json!({"filter": "password = 'x'"}),
            "unknown column [password]",
        ),
        (
            json!({"select_columns": ["destination; DROP TABLE x"]}),
            "Invalid select_columns",
        ),
        (
            json!({"group_by_columns": ["region, year"]}),
            "unknown column",
        ),
        (
            json!({"order_by_columns": [{"column": "year", "direction": "SIDEWAYS"}]}),
            "must be ASC or DESC",
        ),
        (json!({"limit": "ten"}), "Invalid limit"),
        (json!({"limit": -1}), "Invalid limit"),
        (json!({"surprise": 1}), "unknown field `surprise`"),
        (json!({"filter": "destination = 1 +"}), "Invalid filter"),
    ];
    for (body, fragment) in cases {
        let (status, answer) = query(&s, &t, body.clone());
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
        assert!(
            answer["details"].as_str().unwrap().contains(fragment),
            "{body}: {answer}"
        );
    }
    // A type mistake the planner finds is a 400 too, and the server stays up.
    let (status, answer) = query(
        &s,
        &t,
        json!({"select_columns": ["region", "year"], "group_by_columns": ["region"]}),
    );
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(s.call("GET", "/api/status", None, None).0, StatusCode::OK);
}

#[test]
fn an_empty_result_is_200_with_an_empty_object() {
    let (s, t) = server_with_trips();
    let (status, answer) = query(&s, &t, json!({"filter": "year > 3000"}));
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer, json!({}));
}

#[test]
fn queries_need_read_permission_for_the_sensitivity() {
    let (s, _) = server_with_trips();
    let writer = s.token_with("writer", &["WRITE_ALL"]);
    assert_eq!(query(&s, &writer, json!({})).0, StatusCode::FORBIDDEN);
    let reader = s.token_with("reader", &["READ_PUBLIC"]);
    assert_eq!(query(&s, &reader, json!({})).0, StatusCode::OK);
    assert_eq!(
        s.call(
            "POST",
            "/api/datasets/default/travel/nothing/query",
            Some(&reader),
            None
        )
        .0,
        StatusCode::NOT_FOUND
    );
}

#[test]
fn more_than_100k_rows_is_refused_towards_the_large_endpoint() {
    let s = TestServer::start();
    s.create_schema(&schema_json(
        "big",
        "numbers",
        "PUBLIC",
        "APPEND",
        json!([{"name": "n", "data_type": "int", "allow_null": false}]),
    ));
    let mut csv = String::from("n\n");
    for i in 0..100_001 {
        csv.push_str(&format!("{i}\n"));
    }
    let t = s.admin_token();
    s.upload_and_wait(&t, "/api/datasets/default/big/numbers", "n.csv", csv.into());
    let path = "/api/datasets/default/big/numbers/query";
    let (status, answer) = s.call("POST", path, Some(&t), Some(&json!({})));
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        answer["details"]
            .as_str()
            .unwrap()
            .contains("/api/datasets/default/big/numbers/query/large"),
        "{answer}"
    );
    let (status, answer) = s.call("POST", path, Some(&t), Some(&json!({"limit": 100000})));
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer.as_object().unwrap().len(), 100_000);
    let (status, answer) = s.call(
        "POST",
        path,
        Some(&t),
        Some(&json!({"select_columns": ["count(*) AS n"]})),
    );
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer["0"]["n"], 100_001);
}
