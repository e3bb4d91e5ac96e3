use super::*;
use crate::error::Details;
use Sensitivity::*;

fn layers() -> Vec<String> {
    vec!["default".to_string(), "raw".to_string()]
}

fn domains() -> BTreeSet<String> {
    BTreeSet::from(["land".to_string()])
}

fn parse(name: &str) -> Option<Permission> {
    let (layers, domains) = (layers(), domains());
    let ctx = PermissionContext {
        layers: &layers,
        protected_domains: &domains,
    };
    Permission::parse(name, ctx)
}

fn p(name: &str) -> Permission {
    parse(name).unwrap_or_else(|| panic!("{name} does not parse"))
}

fn validate(names: &[&str]) -> Result<Vec<Permission>> {
    let (layers, domains) = (layers(), domains());
    let ctx = PermissionContext {
        layers: &layers,
        protected_domains: &domains,
    };
    let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    validate_permissions(&names, ctx, false)
}

#[test]
fn names_round_trip() {
    let (layers, domains) = (layers(), domains());
    let ctx = PermissionContext {
        layers: &layers,
        protected_domains: &domains,
    };
    let names = all_permission_names(ctx);
    // 2 x (ALL + 4 layer scopes x (PUBLIC, PRIVATE, PROTECTED_LAND)) + 2 admin.
    assert_eq!(names.len(), 2 * (1 + 4 * 3) + 2);
    for name in names {
        assert_eq!(p(&name).to_string(), name);
    }
}

#[test]
fn private_covers_public_but_not_protected() {
    let perm = p("READ_PRIVATE");
    assert!(perm.grants(Access::Read, Public, "default", "x"));
    assert!(perm.grants(Access::Read, Private, "raw", "x"));
    assert!(!perm.grants(Access::Read, Protected, "default", "x"));
    assert!(!perm.grants(Access::Write, Public, "default", "x"));
}

#[test]
fn public_covers_only_public() {
    let perm = p("WRITE_PUBLIC");
    assert!(perm.grants(Access::Write, Public, "default", "x"));
    assert!(!perm.grants(Access::Write, Private, "default", "x"));
}

#[test]
fn protected_covers_only_its_domain() {
    let perm = p("READ_PROTECTED_LAND");
    assert!(perm.grants(Access::Read, Protected, "raw", "land"));
    assert!(!perm.grants(Access::Read, Protected, "raw", "sea"));
    assert!(!perm.grants(Access::Read, Public, "raw", "land"));
}

#[test]
fn all_covers_every_protected_domain_and_layer() {
    assert!(p("WRITE_ALL").grants(Access::Write, Protected, "raw", "anything"));
    assert!(!p("WRITE_ALL").grants(Access::Read, Public, "raw", "x"));
}

#[test]
fn layered_names_cover_their_layer_only() {
    let perm = p("READ_RAW_PRIVATE");
    assert!(perm.grants(Access::Read, Public, "raw", "x"));
    assert!(perm.grants(Access::Read, Private, "raw", "x"));
    assert!(!perm.grants(Access::Read, Private, "default", "x"));
    assert!(!perm.grants(Access::Read, Protected, "raw", "land"));

    let perm = p("WRITE_DEFAULT_PROTECTED_LAND");
    assert!(perm.grants(Access::Write, Protected, "default", "land"));
    assert!(!perm.grants(Access::Write, Protected, "raw", "land"));
    assert!(!perm.grants(Access::Write, Public, "default", "land"));
}

#[test]
fn the_all_layer_covers_every_layer() {
    let perm = p("READ_ALL_PUBLIC");
    assert!(perm.grants(Access::Read, Public, "default", "x"));
    assert!(perm.grants(Access::Read, Public, "raw", "x"));
    assert!(!perm.grants(Access::Read, Private, "raw", "x"));
    assert_ne!(perm, p("READ_PUBLIC"), "distinct names, same meaning");
}

#[test]
fn admin_permissions_grant_no_data_access() {
    for name in ["DATA_ADMIN", "USER_ADMIN"] {
        for s in Sensitivity::ALL {
            assert!(!p(name).grants(Access::Read, s, "default", "d"));
            assert!(!p(name).grants(Access::Write, s, "default", "d"));
        }
    }
}

#[test]
fn unknown_layers_domains_duplicates_or_lowercase_names_are_invalid() {
    for bad in [
        vec!["READ_SOME"],
        vec!["read_all"],
        vec!["READ_ALL", "READ_ALL"],
        vec!["READ_PROTECTED_SEA"],
        vec!["READ_PROTECTED_land"],
        vec!["READ_CURATED_PUBLIC"],
        vec!["READ_DEFAULT_PROTECTED_SEA"],
        vec!["READ_default_PUBLIC"],
        vec!["READ_DEFAULT_ALL"],
        vec!["READ_DEFAULT_PUBLIC", "READ_DEFAULT_PUBLIC"],
        vec![""],
    ] {
        let err = validate(&bad).unwrap_err();
        assert_eq!(
            err.details,
            Details::One(INVALID_PERMISSIONS.into()),
            "{bad:?}"
        );
    }
    let ok = validate(&[
        "READ_PROTECTED_LAND",
        "READ_RAW_PROTECTED_LAND",
        "READ_ALL_PUBLIC",
        "DATA_ADMIN",
    ]);
    assert_eq!(ok.unwrap().len(), 4);
}

#[test]
fn a_name_read_two_ways_takes_the_valid_reading() {
    // A layer called `protected`: READ_PROTECTED_PUBLIC is that layer's PUBLIC data unless a
    // protected domain `public` exists.
    let layers = vec!["protected".to_string()];
    let none = BTreeSet::new();
    let ctx = PermissionContext {
        layers: &layers,
        protected_domains: &none,
    };
    assert_eq!(
        Permission::parse("READ_PROTECTED_PUBLIC", ctx),
        Some(Permission::Data {
            access: Access::Read,
            layer: LayerScope::Named("protected".into()),
            level: Level::Public
        })
    );
}

#[test]
fn items_carry_type_sensitivity_domain_and_layer() {
    let item = |n: &str| serde_json::to_value(p(n).item()).unwrap();
    assert_eq!(
        item("USER_ADMIN"),
        serde_json::json!({"id": "USER_ADMIN", "type": "USER_ADMIN", "sensitivity": null, "domain": null, "layer": null})
    );
    assert_eq!(
        item("READ_ALL"),
        serde_json::json!({"id": "READ_ALL", "type": "READ", "sensitivity": "ALL", "domain": null, "layer": "ALL"})
    );
    assert_eq!(
        item("WRITE_RAW_PROTECTED_LAND"),
        serde_json::json!({"id": "WRITE_RAW_PROTECTED_LAND", "type": "WRITE", "sensitivity": "PROTECTED", "domain": "LAND", "layer": "RAW"})
    );
    assert_eq!(item("READ_PRIVATE")["layer"], "ALL");
}

#[test]
fn protected_domain_names_cover_every_layer_scope() {
    let names = protected_domain_permission_names("land", &layers());
    assert_eq!(names.len(), 8);
    assert!(names.contains(&"READ_PROTECTED_LAND".to_string()));
    assert!(names.contains(&"WRITE_ALL_PROTECTED_LAND".to_string()));
    assert!(names.contains(&"READ_RAW_PROTECTED_LAND".to_string()));
}

#[test]
fn empty_list_refused_on_create_allowed_on_update() {
    let (layers, domains) = (layers(), BTreeSet::new());
    let ctx = PermissionContext {
        layers: &layers,
        protected_domains: &domains,
    };
    assert!(validate_permissions(&[], ctx, false).is_err());
    assert!(validate_permissions(&[], ctx, true).unwrap().is_empty());
}
