use std::collections::BTreeSet;

use serde_json::json;

use super::*;

fn metadata(v: serde_json::Value) -> Metadata {
    serde_json::from_value(v).unwrap()
}

/// A valid metadata object with `changes` merged in.
fn with(changes: serde_json::Value) -> Metadata {
    let mut base = json!({
        "domain": "Transport", "dataset": "journeys", "sensitivity": "PUBLIC",
        "owners": [{"name": "Ada", "email": "ada@example.com"}],
    });
    for (k, v) in changes.as_object().unwrap() {
        base[k] = v.clone();
    }
    metadata(base)
}

fn problems_in(m: &Metadata) -> Vec<String> {
    let layers = ["default".to_owned(), "raw".to_owned()];
    let protected: BTreeSet<String> = ["health".to_owned()].into();
    let ctx = SchemaContext {
        layers: &layers,
        protected_domains: &protected,
    };
    let rules = Rules {
        ctx: Some(&ctx),
        owners: true,
    };
    let mut problems = Vec::new();
    check_metadata(m, &rules, &mut problems);
    problems
}

fn problems(changes: serde_json::Value) -> Vec<String> {
    problems_in(&with(changes))
}

#[test]
fn valid_metadata_is_normalised() {
    let m = with(json!({"key_value_tags": {"a": "1"}, "key_only_tags": ["b", "a", "b"]}));
    let layers = ["default".to_owned()];
    let protected = BTreeSet::new();
    let ctx = SchemaContext {
        layers: &layers,
        protected_domains: &protected,
    };
    let rules = Rules {
        ctx: Some(&ctx),
        owners: true,
    };
    let mut found = Vec::new();
    let checked = check_metadata(&m, &rules, &mut found);
    assert!(found.is_empty(), "{found:?}");
    let n = checked.metadata;
    assert_eq!(n.layer.as_deref(), Some("default"));
    assert_eq!(n.domain, "transport");
    assert_eq!(n.dataset, "journeys");
    assert_eq!(n.description.as_deref(), Some(""));
    assert_eq!(n.key_only_tags, ["b"]);
    assert_eq!(checked.sensitivity, Some(Sensitivity::Public));
    assert_eq!(checked.update_behaviour, Some(UpdateBehaviour::Append));
}

#[test]
fn an_unknown_layer_is_rejected_with_the_list_of_layers() {
    assert_eq!(
        problems(json!({"layer": "gold"})),
        ["The layer [gold] does not exist. Accepted layers: default, raw"]
    );
    assert!(problems(json!({"layer": "raw"})).is_empty());
}

#[test]
fn domain_and_dataset_must_be_names() {
    assert_eq!(
        problems(json!({"domain": "1abc", "dataset": "a/../b"})),
        [
            "The value set for domain [1abc] can only contain alphanumeric and underscore `_` \
             characters and must start with an alphabetic character",
            "The value set for dataset [a/../b] can only contain alphanumeric and underscore `_` \
             characters and must start with an alphabetic character",
        ]
    );
}

#[test]
fn empty_domain_and_dataset_are_rejected() {
    assert_eq!(
        problems_in(&metadata(json!({
            "sensitivity": "PUBLIC", "owners": [{"name": "a", "email": "a@example.com"}]
        }))),
        [
            "The domain must not be empty",
            "The dataset must not be empty"
        ]
    );
}

#[test]
fn too_long_names_are_rejected() {
    let long = "a".repeat(MAX_NAME_LEN + 1);
    assert_eq!(
        problems(json!({"dataset": long})),
        [format!(
            "The value set for dataset [{long}] must be at most 128 characters"
        )]
    );
}

#[test]
fn an_invalid_sensitivity_is_rejected() {
    for bad in ["public", "SECRET", ""] {
        assert_eq!(
            problems(json!({"sensitivity": bad})),
            ["You must specify a valid sensitivity level. Accepted values: ['PUBLIC', 'PRIVATE', 'PROTECTED']"]
        );
    }
}

#[test]
fn protected_needs_an_existing_protected_domain() {
    assert_eq!(
        problems(json!({"sensitivity": "PROTECTED"})),
        ["The protected domain 'transport' does not exist."]
    );
    assert!(problems(json!({"sensitivity": "PROTECTED", "domain": "Health"})).is_empty());
}

#[test]
fn an_invalid_update_behaviour_is_rejected() {
    assert_eq!(
        problems(json!({"update_behaviour": "MERGE"})),
        ["You must specify a valid update behaviour. Accepted values: ['APPEND', 'OVERWRITE']"]
    );
    assert!(problems(json!({"update_behaviour": "OVERWRITE"})).is_empty());
}

#[test]
fn a_too_long_description_is_rejected() {
    assert!(problems(json!({"description": "é".repeat(MAX_DESCRIPTION_LEN)})).is_empty());
    assert_eq!(
        problems(json!({"description": "x".repeat(MAX_DESCRIPTION_LEN + 1)})),
        ["The description must be at most 2000 characters; it has 2001"]
    );
}

#[test]
fn more_than_thirty_tags_are_rejected() {
    let kv: serde_json::Map<String, serde_json::Value> =
        (0..20).map(|i| (format!("k{i}"), json!("v"))).collect();
    let ko: Vec<String> = (0..11).map(|i| format!("o{i}")).collect();
    assert_eq!(
        problems(json!({"key_value_tags": kv, "key_only_tags": ko})),
        ["You cannot specify more than 30 tags; this schema has 31"]
    );
    let ko: Vec<String> = (0..10).map(|i| format!("o{i}")).collect();
    assert!(problems(json!({"key_value_tags": kv, "key_only_tags": ko})).is_empty());
}

#[test]
fn repeated_key_only_tags_count_once() {
    let ko: Vec<&str> = ["a"; 40].to_vec();
    assert!(problems(json!({"key_only_tags": ko})).is_empty());
}

#[test]
fn bad_tag_keys_and_values_are_rejected() {
    let long_key = "k".repeat(129);
    let p = problems(json!({
        "key_value_tags": {"bad key": "v", "k": "bad value", long_key.clone(): "v"},
        "key_only_tags": ["", "ok-tag_1"],
    }));
    let key_rule = "can only include alphanumeric characters, underscores and hyphens, \
                    between 1 and 128 characters";
    assert_eq!(
        p,
        [
            format!("Tag key [bad key] {key_rule}"),
            format!("Tag key [{long_key}] {key_rule}"),
            format!("Tag key [] {key_rule}"),
            "Tag value [bad value] of tag [k] can only include alphanumeric characters, \
             underscores and hyphens, up to 256 characters"
                .to_owned(),
        ]
    );
}

#[test]
fn empty_tag_values_are_accepted() {
    assert!(problems(json!({"key_value_tags": {"k": ""}})).is_empty());
}

#[test]
fn reserved_tag_keys_are_rejected() {
    assert_eq!(
        problems(
            json!({"key_value_tags": {"Sensitivity": "PUBLIC"}, "key_only_tags": ["no_of_versions"]})
        ),
        [
            "Tag key [Sensitivity] is reserved: the service sets it in dataset listings",
            "Tag key [no_of_versions] is reserved: the service sets it in dataset listings",
        ]
    );
}

#[test]
fn at_least_one_owner_is_required() {
    for owners in [json!(null), json!([])] {
        assert_eq!(
            problems(json!({"owners": owners})),
            ["You must specify at least one owner"]
        );
    }
}

#[test]
fn placeholder_owner_is_rejected() {
    for owner in [
        json!({"name": "change_me", "email": "change_me@email.com"}),
        json!({"name": "Ada", "email": "CHANGE_ME@email.com"}),
        json!({"name": "change_me", "email": "ada@example.com"}),
    ] {
        assert_eq!(
            problems(json!({"owners": [owner]})),
            ["You must change the default owner"]
        );
    }
}

#[test]
fn owners_need_a_name_and_a_plausible_email() {
    assert_eq!(
        problems(
            json!({"owners": [{"name": " ", "email": "a@example.com"}, {"name": "Bob", "email": "bob"}, {}]})
        ),
        [
            "Owner number 1 must have a name",
            "Owner [Bob] has an invalid email [bob]",
            "Owner number 3 must have a name",
            "Owner [] has an invalid email []",
        ]
    );
}

#[test]
fn owners_are_not_checked_when_the_rules_say_so() {
    let m = with(json!({"owners": [{"name": "change_me", "email": "change_me@email.com"}]}));
    let rules = Rules {
        ctx: None,
        owners: false,
    };
    let mut found = Vec::new();
    check_metadata(&m, &rules, &mut found);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn history_retention_is_optional_and_bounded() {
    assert!(problems(json!({"history": {"keep_commits": 1, "keep_seconds": 0}})).is_empty());
    assert!(problems(json!({"history": {"keep_seconds": MAX_KEEP_SECONDS}})).is_empty());
    assert!(problems(json!({"history": {}})).is_empty());
    let found = problems(json!({"history": {"keep_commits": 0, "keep_seconds": -1}}));
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].contains("keep_commits [0] must be from 1"),
        "{found:?}"
    );
    assert!(
        found[1].contains("keep_seconds [-1] must be from 0"),
        "{found:?}"
    );
    let found = problems(json!({"history": {"keep_commits": MAX_KEEP_COMMITS + 1}}));
    assert!(found[0].contains("to 1000000"), "{found:?}");
}

#[test]
fn history_retention_of_a_wrong_type_or_unknown_key_does_not_parse() {
    for bad in [
        json!({"keep_commits": "2"}),
        json!({"keep_commits": 2.5}),
        json!({"keep_commit": 2}),
        json!(7),
        json!([2, 0]),
    ] {
        let mut m = json!({"domain": "d", "dataset": "s", "sensitivity": "PUBLIC"});
        m["history"] = bad.clone();
        assert!(serde_json::from_value::<Metadata>(m).is_err(), "{bad}");
    }
}

#[test]
fn history_retention_is_kept_when_set_and_left_out_when_empty() {
    let checked = |m: &Metadata| {
        let rules = Rules {
            ctx: None,
            owners: true,
        };
        check_metadata(m, &rules, &mut Vec::new()).metadata
    };
    let kept = checked(&with(json!({"history": {"keep_commits": 2}})));
    let text = serde_json::to_value(&kept).unwrap();
    assert_eq!(text["history"], json!({"keep_commits": 2}));
    let empty = checked(&with(json!({"history": {}})));
    assert!(serde_json::to_value(&empty)
        .unwrap()
        .get("history")
        .is_none());
    let none = checked(&with(json!({})));
    assert!(serde_json::to_value(&none)
        .unwrap()
        .get("history")
        .is_none());
}
