//! Sign-in floods from many addresses (forwarded by a trusted proxy, so one test client can speak
//! for many): one address trying many names is refused before any hash, the per-account bound
//! holds whatever the number of addresses, and a client's true secret always gets its token.

use reqwest::StatusCode;

use crate::support::{Options, TestServer, ADMIN_ID, ADMIN_SECRET};

fn flood_server() -> TestServer {
    TestServer::start_with(Options {
        args: [
            "--trusted-proxies",
            "127.0.0.1",
            "--signin-address-free-failures",
            "4",
            "--signin-account-free-failures",
            "6",
            "--signin-base-delay-ms",
            "60000",
            "--log-level",
            "info,rapid_actors::auth::signin=debug",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        ..Options::default()
    })
}

fn signin(s: &TestServer, form: &str, from: &str) -> StatusCode {
    s.request("POST", "/api/oauth2/token")
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("X-Forwarded-For", from)
        .body(form.to_string())
        .send()
        .unwrap()
        .status()
}

fn password(s: &TestServer, user: &str, password: &str, from: &str) -> StatusCode {
    signin(
        s,
        &format!("grant_type=password&username={user}&password={password}"),
        from,
    )
}

fn client(s: &TestServer, id: &str, secret: &str, from: &str) -> StatusCode {
    signin(
        s,
        &format!("grant_type=client_credentials&client_id={id}&client_secret={secret}"),
        from,
    )
}

/// Sign-in outcomes the debug log shows for `outcome`.
fn logged(s: &TestServer, outcome: &str) -> usize {
    let needle = format!("outcome=\"{outcome}\"");
    s.logs().lines().filter(|l| l.contains(&needle)).count()
}

#[test]
fn an_address_trying_many_names_is_refused_before_any_hash_but_its_own_user_is_not() {
    let s = flood_server();
    let dave = s.create_user("dave");
    assert_eq!(password(&s, "dave", &dave, "198.51.100.1"), StatusCode::OK);
    let statuses: Vec<StatusCode> = (0..12)
        .map(|i| password(&s, &format!("nobody{i}"), "x", "198.51.100.1"))
        .collect();
    assert!(
        statuses[..4]
            .iter()
            .all(|st| *st == StatusCode::UNAUTHORIZED),
        "{statuses:?}"
    );
    assert!(
        statuses[4..]
            .iter()
            .all(|st| *st == StatusCode::TOO_MANY_REQUESTS),
        "{statuses:?}"
    );
    // Four decoy hashes, then none: the other eight were refused before hashing.
    assert_eq!(logged(&s, "unknown_user"), 4);
    assert_eq!(logged(&s, "throttled_address"), 8);
    // Dave signed in from there before: still let in. Another address is not affected.
    assert_eq!(password(&s, "dave", &dave, "198.51.100.1"), StatusCode::OK);
    assert_eq!(
        password(&s, "nobody99", "x", "198.51.100.2"),
        StatusCode::UNAUTHORIZED
    );
}

#[test]
fn the_per_account_bound_holds_over_fifty_addresses() {
    let s = flood_server();
    let erin = s.create_user("erin");
    let statuses: Vec<StatusCode> = (1..=50)
        .map(|i| password(&s, "erin", "guess", &format!("203.0.113.{i}")))
        .collect();
    let checked = statuses
        .iter()
        .filter(|st| **st == StatusCode::UNAUTHORIZED)
        .count();
    assert_eq!(checked, 6, "{statuses:?}");
    assert_eq!(logged(&s, "wrong_password"), 6);
    assert_eq!(logged(&s, "throttled_account"), 44);
    // A locked user is refused even with the right password (from an address never used before).
    assert_eq!(
        password(&s, "erin", &erin, "203.0.113.99"),
        StatusCode::TOO_MANY_REQUESTS
    );
}

#[test]
fn a_clients_true_secret_gets_its_token_during_and_after_a_flood_against_it() {
    let s = flood_server();
    let base = s.base.clone();
    let guessers: Vec<_> = (1..=10)
        .map(|i| {
            let base = base.clone();
            std::thread::spawn(move || {
                let http = reqwest::blocking::Client::new();
                (0..10)
                    .map(|_| {
                        http.post(format!("{base}/api/oauth2/token"))
                            .basic_auth(ADMIN_ID, Some("a wrong guess"))
                            .header("X-Forwarded-For", format!("192.0.2.{i}"))
                            .send()
                            .unwrap()
                            .status()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let during: Vec<StatusCode> = (0..10)
        .map(|_| client(&s, ADMIN_ID, ADMIN_SECRET, "192.0.2.1"))
        .collect();
    let guessed: Vec<StatusCode> = guessers
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    assert!(during.iter().all(|st| *st == StatusCode::OK), "{during:?}");
    assert!(
        guessed.contains(&StatusCode::TOO_MANY_REQUESTS),
        "{guessed:?}"
    );
    assert!(!guessed.contains(&StatusCode::OK));
    // After it, from a guesser's address and from a new one.
    assert_eq!(
        client(&s, ADMIN_ID, ADMIN_SECRET, "192.0.2.5"),
        StatusCode::OK
    );
    assert_eq!(
        client(&s, ADMIN_ID, ADMIN_SECRET, "192.0.2.200"),
        StatusCode::OK
    );
}
