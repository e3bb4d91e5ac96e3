use super::*;

fn refused(sql: &str) -> Refused {
    check_sql(sql, &QueryLimits::default()).expect_err(sql)
}

#[test]
fn reading_statements_pass() {
    for sql in [
        "SELECT a, count(*) FROM \"default\".\"sales\".\"orders\" GROUP BY a",
        "EXPLAIN SELECT 1",
        "SHOW search_path",
        "SET extra_float_digits = 3",
        "BEGIN; SELECT 1; COMMIT",
        "SELECT * FROM generate_series(1, 3)",
        "SELECT * FROM \"default\".\"sales\".\"orders@v1\"",
    ] {
        check_sql(sql, &QueryLimits::default()).expect(sql);
    }
}

#[test]
fn a_write_statement_is_refused_as_read_only() {
    for sql in [
        "INSERT INTO t VALUES (1)",
        "UPDATE t SET a = 1",
        "DELETE FROM t",
        "CREATE TABLE t (a int)",
        "DROP TABLE t",
        "CREATE EXTERNAL TABLE t STORED AS PARQUET LOCATION '/etc'",
        "COPY (SELECT 1) TO '/tmp/x.csv'",
        "SELECT 1; DELETE FROM t",
    ] {
        let r = refused(sql);
        assert_eq!(r.sqlstate, "25006", "{sql}: {}", r.message);
    }
}

#[test]
fn the_engines_settings_and_file_functions_are_out_of_reach() {
    assert_eq!(
        refused("SET datafusion.runtime.memory_limit = '1T'").sqlstate,
        "42501"
    );
    assert_eq!(
        refused("SELECT * FROM read_parquet('/etc/passwd')").sqlstate,
        "42501"
    );
    assert_eq!(
        refused("SELECT * FROM read_csv('http://x/y.csv')").sqlstate,
        "42501"
    );
}

#[test]
fn huge_or_deep_statements_are_refused_before_planning() {
    let long = format!("SELECT '{}'", "x".repeat(MAX_SQL_BYTES));
    assert_eq!(refused(&long).sqlstate, "54000");
    let deep = format!("SELECT {}1{}", "(".repeat(55), ")".repeat(55));
    assert_eq!(refused(&deep).sqlstate, "54000");
    assert_eq!(refused("SELEC 1").sqlstate, "42601");
}

#[test]
fn statements_of_exponential_parse_work_are_refused_within_the_budget() {
    // Function calls nested 40 deep: 2^41 expressions unbounded, about a year of parsing.
    let deep = format!("SELECT {}1{}", "upper(".repeat(40), ")".repeat(40));
    let r = refused(&deep);
    assert_eq!(r.sqlstate, "54001", "{}", r.message);
    assert_eq!(check_parse_cost(&deep).unwrap_err().sqlstate, "54001");
    // Unclosed brackets of mixed kinds, as the fuzz target found them (its input is a mode byte,
    // the Query tag, a 2-byte length, then the statement): 15 million expressions unbounded.
    let input = include_bytes!("../../../../fuzz/regressions/sql_wire-slow-nested-brackets-open");
    let unclosed = String::from_utf8_lossy(&input[4..]);
    assert_eq!(check_parse_cost(&unclosed).unwrap_err().sqlstate, "54001");
    // What fits runs on: the gate decides nothing else.
    let fits = format!("SELECT {}1{}", "upper(".repeat(16), ")".repeat(16));
    check_sql(&fits, &QueryLimits::default()).expect("16 levels fit");
    check_parse_cost("SELEC 1").expect("a syntax error is the parser's to report");
}
