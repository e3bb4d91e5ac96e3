use super::*;

fn log() -> Vec<String> {
    let v0 = [
        json!({"commitInfo": {"timestamp": 1, "operation": "CREATE TABLE"}}),
        json!({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}),
        json!({"metaData": {"id": "i", "name": "s_v1", "format": {"provider": "parquet", "options": {}},
            "schemaString": "{}", "partitionColumns": ["region"], "configuration": {}, "createdTime": 1}}),
        json!({"add": {"path": "region=n/a.parquet", "partitionValues": {"region": "n"}, "size": 10,
            "modificationTime": 1, "dataChange": true, "stats": "{\"numRecords\":3}"}}),
    ];
    let v1 = [
        json!({"remove": {"path": "region=n/a.parquet", "deletionTimestamp": 2, "dataChange": true}}),
        json!({"add": {"path": "region=s/b.parquet", "partitionValues": {"region": "s"}, "size": 20,
            "modificationTime": 2, "dataChange": false, "stats": "{\"numRecords\":4}"}}),
    ];
    [&v0[..], &v1[..]]
        .iter()
        .map(|lines| lines.iter().map(|l| format!("{l}\n")).collect())
        .collect()
}

#[test]
fn a_checkpoint_holds_the_replayed_state_and_reads_back_as_it() {
    let mut state = State::default();
    for version in log() {
        state.apply(version.as_bytes()).unwrap();
    }
    let actions = state.actions();
    assert_eq!(actions.len(), 3, "{actions:?}");
    assert_eq!(actions[2]["add"]["path"], "region=s/b.parquet");
    let bytes = encode(&state).unwrap();
    assert_eq!(&bytes[..4], b"PAR1");
    let back = decode(bytes).unwrap();
    assert_eq!(back.actions(), actions);
    assert_eq!(back, state);
    // Derived: the same state gives the same bytes.
    assert_eq!(encode(&state).unwrap(), encode(&back).unwrap());
}

#[test]
fn checkpoint_names() {
    assert_eq!(
        key("t/_delta_log", 10),
        "t/_delta_log/00000000000000000010.checkpoint.parquet"
    );
    assert_eq!(version_of(&key("t/_delta_log", 10)), Some(10));
    assert_eq!(version_of("t/_delta_log/00000000000000000010.json"), None);
    assert_eq!(last_key("t/_delta_log"), "t/_delta_log/_last_checkpoint");
}
