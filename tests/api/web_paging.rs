//! Paging through a view on the query page (issue 54): every page is a slice of one total order,
//! so the pages of a view with no sort, or sorted by a column full of ties, show each row once.

use reqwest::StatusCode;
use serde_json::json;

use crate::support::{schema_json, TestServer, ADMIN_ID, ADMIN_SECRET};
use crate::web_pages::Visitor;

const DATASET: &str = "/api/datasets/default/shop/people";
/// Rows, over several uploads (several files, read in parallel), with three cities only.
const ROWS: usize = 230;

/// The cells of the preview table, row by row, as text.
fn preview_rows(html: &str) -> Vec<Vec<String>> {
    let Some(start) = html.find("<tbody>") else {
        return vec![];
    };
    let body = &html[start..html[start..].find("</tbody>").unwrap() + start];
    let text = |cell: &str| {
        let mut out = String::new();
        let mut in_tag = false;
        for ch in cell.chars() {
            match ch {
                '<' => in_tag = true,
                '>' => in_tag = false,
                c if !in_tag => out.push(c),
                _ => {}
            }
        }
        out.trim().to_string()
    };
    body.split("<tr>")
        .skip(1)
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|c| text(&format!("<td{c}")))
                .collect()
        })
        .collect()
}

/// Every page of the view `params`, followed with the page's own "Next" links: (id, city) rows.
fn page_through(v: &mut Visitor, params: &str) -> Vec<(i64, String)> {
    let mut rows = vec![];
    for page in 1..=20 {
        let path =
            format!("/datasets/default/shop/people/query?action=preview&page={page}{params}");
        let (status, _, res) = v.get(&path);
        assert_eq!(status, StatusCode::OK, "{path}");
        let html = res.text().unwrap();
        for r in preview_rows(&html) {
            rows.push((r[0].parse().expect("an id"), r[1].clone()));
        }
        if !html.contains("rel=\"next\"") {
            return rows;
        }
    }
    panic!("more pages than rows");
}

fn assert_each_once(rows: &[(i64, String)], view: &str) {
    let mut ids: Vec<i64> = rows.iter().map(|(id, _)| *id).collect();
    ids.sort_unstable();
    let expected: Vec<i64> = (1..=ROWS as i64).collect();
    assert_eq!(ids, expected, "{view}: every id once, across the pages");
}

#[test]
fn paging_a_view_shows_each_row_once_with_no_sort_and_with_ties() {
    let s = TestServer::start();
    let t = s.admin_token();
    let mut v = Visitor::new(&s);
    v.sign_in_client(ADMIN_ID, ADMIN_SECRET);
    let (_, _, fresh) = v.get("/");
    let fresh = fresh.text().unwrap();
    assert!(
        fresh.contains("No datasets yet."),
        "a fresh catalogue says so"
    );
    s.create_schema(&schema_json(
        "shop",
        "people",
        "PUBLIC",
        "APPEND",
        json!([
            {"name": "id", "data_type": "int", "allow_null": false},
            {"name": "city", "data_type": "string", "allow_null": false},
        ]),
    ));
    let cities = ["Leeds", "Bath", "York"];
    for part in 0..4 {
        let mut csv = String::from("id,city\n");
        // Ids spread over the files out of order, so no file order is also the id order.
        for id in (1..=ROWS).rev().filter(|id| id % 4 == part) {
            csv.push_str(&format!("{id},{}\n", cities[id % 3]));
        }
        let (_, job) = s.upload_and_wait(&t, DATASET, &format!("p{part}.csv"), csv.into_bytes());
        assert_eq!(job["status"], "SUCCESS", "{job}");
    }
    let unsorted = page_through(&mut v, "");
    assert_each_once(&unsorted, "no sort");
    let mut ascending = vec![];
    for direction in ["ASC", "DESC"] {
        let rows = page_through(&mut v, &format!("&order=city&direction={direction}"));
        assert_each_once(&rows, &format!("city {direction}"));
        let cities: Vec<&String> = rows.iter().map(|(_, c)| c).collect();
        let mut sorted = cities.clone();
        sorted.sort();
        if direction == "DESC" {
            sorted.reverse();
        }
        assert_eq!(cities, sorted, "the pages follow the sort across page ends");
        if direction == "ASC" {
            ascending = rows;
        }
    }
    // A typed limit keeps the first rows of that same order, whatever the page size.
    let limited = page_through(&mut v, "&order=city&direction=ASC&limit=40");
    assert_eq!(
        limited,
        ascending[..40].to_vec(),
        "the first 40 of the order"
    );
}
