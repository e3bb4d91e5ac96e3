//! A subquery in a select list over datasets is answered on the wire as on `/api/sql`: the
//! PostgreSQL library's catalogue rule once answered a correlated one NULL on the wire, silently,
//! where `/api/sql` refused it. Now both refuse it with the same error (DataFusion cannot plan
//! it), and both answer an uncorrelated one.

use serde_json::json;

use crate::sql::server_with_data;
use crate::sql_wire::{pg_options, psql, psql_binary};

#[test]
fn select_list_subqueries_are_answered_or_refused_never_nulled() {
    let Some(_) = psql_binary() else {
        eprintln!("skipped: psql is not installed (scripts/pg.sh installs it)");
        return;
    };
    let s = server_with_data(pg_options());
    let (id, secret) = s.create_client("sub-reader", &["READ_PUBLIC"]);
    let token = s.token(&id, &secret);
    // HTTP names the layer; the wire's database is the layer.
    let http = |sql: &str| {
        let sql = sql.replace("travel.", "\"default\".travel.");
        s.call(
            "POST",
            "/api/sql",
            Some(&token),
            Some(&json!({ "sql": sql })),
        )
    };

    let correlated = "SELECT o.year, (SELECT max(t.year) FROM travel.trips AS t \
                      WHERE t.region = o.region) AS latest FROM travel.trips AS o \
                      ORDER BY o.region, o.year";
    let (status, body) = http(correlated);
    assert_eq!(status, reqwest::StatusCode::BAD_REQUEST, "{body}");
    let refusal = "Physical plan does not support logical expression ScalarSubquery";
    assert!(
        body["details"].as_str().unwrap().contains(refusal),
        "{body}"
    );
    let (ok, out) = psql(&s, &id, &secret, &[correlated]);
    assert!(
        !ok && out.contains(refusal),
        "an error, not a column of NULLs: {out}"
    );

    let uncorrelated = "SELECT year, (SELECT max(year) FROM travel.trips) AS m \
                        FROM travel.trips ORDER BY year";
    let (ok, out) = psql(&s, &id, &secret, &[uncorrelated]);
    assert!(ok, "{out}");
    assert_eq!(out.trim(), "2017|2021\n2018|2021\n2018|2021\n2021|2021");
    let (status, body) = http(uncorrelated);
    assert_eq!(status, reqwest::StatusCode::OK, "{body}");
    assert_eq!(body["3"]["m"], 2021, "{body}");
}
