//! `rapid-rs admin`: signing key rotation, admin secret reset, client creation, and the refusal
//! of those while the service runs.

use std::path::Path;
use std::process::{Command, Output};

use reqwest::StatusCode;
use serde_json::Value;

use crate::support::{Options, TestServer};

pub(crate) fn admin(data_dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rapid-rs"))
        .arg("admin")
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .env_remove("RAPID_DATA_DIR")
        .env_remove("RAPID_ADMIN_CLIENT_ID")
        .env_remove("RAPID_ADMIN_CLIENT_SECRET")
        .output()
        .unwrap()
}

pub(crate) fn stdout_json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn rotating_the_signing_key_refuses_tokens_issued_before() {
    let s = TestServer::start();
    let old = s.admin_token();
    let (id, secret) = s.create_client("keeper", &["READ_ALL"]);
    let client_old = s.token(&id, &secret);
    // Refused while the service holds the folder: exit 4, a clear message.
    let busy = admin(&s.data_dir(), &["rotate-key"]);
    assert_eq!(busy.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&busy.stderr).contains("stop it first"));
    let key_before = std::fs::read(s.data_dir().join("token-signing.key")).unwrap();

    let dir = s.stop();
    let out = admin(&dir.path().join("data"), &["rotate-key"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let key_after = std::fs::read(dir.path().join("data/token-signing.key")).unwrap();
    assert_ne!(key_before, key_after);

    let s = TestServer::start_in(dir, Options::default());
    for token in [&old, &client_old] {
        let (status, _) = s.call("GET", "/api/subjects", Some(token), None);
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    // Credentials are untouched: new tokens work.
    let (status, _) = s.call("GET", "/api/subjects", Some(&s.admin_token()), None);
    assert_eq!(status, StatusCode::OK);
    s.token(&id, &secret);
}

#[test]
fn a_lost_admin_secret_is_reset_and_clients_are_created_offline() {
    let options = Options {
        no_admin_override: true,
        ..Options::default()
    };
    let s = TestServer::start_with(options.clone());
    let creds: Value = serde_json::from_str(
        &std::fs::read_to_string(s.data_dir().join("admin-credentials.json")).unwrap(),
    )
    .unwrap();
    let (admin_id, old_secret) = (
        creds["client_id"].as_str().unwrap().to_string(),
        creds["client_secret"].as_str().unwrap().to_string(),
    );
    s.token(&admin_id, &old_secret);
    assert_eq!(
        admin(
            &s.data_dir(),
            &["create-client", "bot", "--permission", "READ_ALL"]
        )
        .status
        .code(),
        Some(4)
    );
    let dir = s.stop();
    let data = dir.path().join("data");

    let reset = stdout_json(&admin(&data, &["reset-admin-secret"]));
    assert_eq!(reset["client_id"], admin_id.as_str());
    let new_secret = reset["client_secret"].as_str().unwrap().to_string();
    assert_ne!(new_secret, old_secret);
    let made = stdout_json(&admin(
        &data,
        &[
            "create-client",
            "robot",
            "--permission",
            "READ_ALL",
            "--permission",
            "WRITE_PUBLIC",
        ],
    ));
    assert_eq!(made["client_name"], "robot");
    let bad = admin(
        &data,
        &["create-client", "robot2", "--permission", "READ_EVERYTHING"],
    );
    assert_eq!(bad.status.code(), Some(1));
    assert!(!String::from_utf8_lossy(&bad.stderr).is_empty());
    let unknown = admin(&data, &["reset-admin-secret", "--client-id", "nobody"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no client"));

    let s = TestServer::start_in(dir, options);
    assert_eq!(
        s.try_token(&admin_id, &old_secret).0,
        StatusCode::UNAUTHORIZED
    );
    let token = s.token(&admin_id, &new_secret);
    let robot = s.token(
        made["client_id"].as_str().unwrap(),
        made["client_secret"].as_str().unwrap(),
    );
    let (status, perms) = s.call(
        "GET",
        &format!("/api/permissions/{}", made["client_id"].as_str().unwrap()),
        Some(&token),
        None,
    );
    assert_eq!(status, StatusCode::OK);
    let ids: Vec<&str> = perms
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["READ_ALL", "WRITE_PUBLIC"]);
    assert_eq!(
        s.call("GET", "/api/layers", Some(&robot), None).0,
        StatusCode::OK
    );
}

#[test]
fn a_second_service_on_the_same_data_folder_refuses_to_start() {
    let s = TestServer::start();
    let out = Command::new(env!("CARGO_BIN_EXE_rapid-rs"))
        .args(["serve", "--bind", "127.0.0.1:0", "--data-dir"])
        .arg(s.data_dir())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("another rapid-rs process"), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("listening on"));
    // The first one is unaffected.
    assert_eq!(s.call("GET", "/api/ready", None, None).0, StatusCode::OK);
}

#[test]
fn a_key_file_outside_the_data_folder_is_used_and_rotated_there() {
    let keys = tempfile::tempdir().unwrap();
    let key_file = keys.path().join("shared.key");
    let options = || Options {
        args: vec!["--key-file".into(), key_file.display().to_string()],
        ..Options::default()
    };
    let s = TestServer::start_with(options());
    let old = s.admin_token();
    assert!(key_file.is_file(), "created where configured");
    assert!(!s.data_dir().join("token-signing.key").exists());
    let key_before = std::fs::read(&key_file).unwrap();

    let dir = s.stop();
    let out = admin(
        &dir.path().join("data"),
        &["rotate-key", "--key-file", &key_file.display().to_string()],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_ne!(std::fs::read(&key_file).unwrap(), key_before);

    let s = TestServer::start_in(dir, options());
    let (status, _) = s.call("GET", "/api/subjects", Some(&old), None);
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "signed with the rotated key"
    );
    let (status, _) = s.call("GET", "/api/subjects", Some(&s.admin_token()), None);
    assert_eq!(status, StatusCode::OK);
}
