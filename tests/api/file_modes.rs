//! Files and secrets: the data folder is private from creation (0700 folders, 0600 files), a
//! loosened install is tightened at start, the signing key lives in its own 0600 file (not in
//! the catalog) and tokens survive a restart.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use base64::Engine;
use serde_json::json;

use crate::support::{catalog_bytes, schema_json, Options, TestServer};

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// Every folder under `dir` (itself included) and every file, with its mode.
fn tree(dir: &Path, out: &mut Vec<(std::path::PathBuf, u32, bool)>) {
    out.push((dir.to_path_buf(), mode(dir), true));
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            tree(&path, out);
        } else {
            out.push((path.clone(), mode(&path), false));
        }
    }
}

fn assert_private(data: &Path) {
    let mut all = Vec::new();
    tree(data, &mut all);
    for (path, m, is_dir) in &all {
        assert_eq!(m & 0o077, 0, "{} is {m:04o}", path.display());
        if *is_dir {
            assert_eq!(*m, 0o700, "{}", path.display());
        }
    }
    for name in ["catalog.sqlite", "token-signing.key"] {
        assert_eq!(mode(&data.join(name)), 0o600, "{name}");
    }
}

fn upload_something(s: &TestServer) {
    s.create_schema(&schema_json(
        "shop",
        "orders",
        "PUBLIC",
        "APPEND",
        json!([{"name": "id", "data_type": "int", "allow_null": true}]),
    ));
    let (_, job) = s.upload_and_wait(
        &s.admin_token(),
        "/api/datasets/default/shop/orders",
        "a.csv",
        b"id\n1\n2\n".to_vec(),
    );
    assert_eq!(job["status"], "SUCCESS", "{job}");
}

#[test]
fn a_fresh_install_is_private_and_the_key_is_not_in_the_catalog() {
    let s = TestServer::start_with(Options {
        no_admin_override: true,
        ..Default::default()
    });
    let data = s.data_dir();
    assert_eq!(mode(&data.join("admin-credentials.json")), 0o600);
    let creds: serde_json::Value =
        serde_json::from_slice(&std::fs::read(data.join("admin-credentials.json")).unwrap())
            .unwrap();
    let t = s.token(
        creds["client_id"].as_str().unwrap(),
        creds["client_secret"].as_str().unwrap(),
    );
    let (status, _) = s.call("GET", "/api/subjects", Some(&t), None);
    assert_eq!(status, 200);
    let schema = schema_json(
        "shop",
        "orders",
        "PUBLIC",
        "APPEND",
        json!([{"name": "id", "data_type": "int", "allow_null": true}]),
    );
    let (status, body) = s.call("POST", "/api/schema", Some(&t), Some(&schema));
    assert_eq!(status, 201, "{body}");
    let (_, job) = s.upload_and_wait(
        &t,
        "/api/datasets/default/shop/orders",
        "a.csv",
        b"id\n1\n".to_vec(),
    );
    assert_eq!(job["status"], "SUCCESS", "{job}");
    // Data, raw files, WAL/SHM and staging folders included.
    assert_private(&data);

    let text = std::fs::read_to_string(data.join("token-signing.key")).unwrap();
    let key = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text.trim())
        .unwrap();
    assert_eq!(key.len(), 32);
    let catalog = catalog_bytes(&data);
    assert!(
        !catalog.windows(key.len()).any(|w| w == key.as_slice()),
        "the signing key must not be in the catalog"
    );
}

#[test]
fn a_loosened_install_is_tightened_at_start_and_tokens_survive_the_restart() {
    let s = TestServer::start();
    upload_something(&s);
    let token = s.admin_token();
    let data = s.data_dir();
    let dir = s.stop();
    let mut all = Vec::new();
    tree(&data, &mut all);
    for (path, _, is_dir) in &all {
        let loose = if *is_dir { 0o755 } else { 0o644 };
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(loose)).unwrap();
    }
    let s = TestServer::start_in(dir, Options::default());
    assert_eq!(mode(&data), 0o700);
    for name in ["catalog.sqlite", "token-signing.key"] {
        assert_eq!(mode(&data.join(name)), 0o600, "{name}");
    }
    assert!(s.logs().contains("tightened a file mode"), "{}", s.logs());
    // The same key: a token issued before the restart still works.
    let (status, body) = s.call("GET", "/api/subjects", Some(&token), None);
    assert_eq!(status, 200, "{body}");
}

#[test]
fn a_data_folder_of_another_account_refuses_to_start_with_a_reason() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    std::fs::create_dir(&data).unwrap();
    // Only possible as root (CI containers); elsewhere the case cannot be set up.
    if std::os::unix::fs::chown(&data, Some(65534), Some(65534)).is_err() {
        return;
    }
    assert_ne!(std::fs::metadata(&data).unwrap().uid(), 0);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rapid-rs"))
        .args(["serve", "--bind", "127.0.0.1:0", "--data-dir"])
        .arg(&data)
        .env("RAPID_ADMIN_CLIENT_ID", "x")
        .env(
            "RAPID_ADMIN_CLIENT_SECRET",
            "y-secret-long-enough-0123456789",
        )
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("belongs to user id 65534") && stderr.contains("chown"),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("listening on"));
}
