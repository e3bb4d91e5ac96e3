use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use super::*;

fn settings() -> ThrottleSettings {
    ThrottleSettings {
        free_failures: 3,
        account_free_failures: 5,
        address_free_failures: 4,
        base_delay: Duration::from_millis(200),
        max_delay: Duration::from_millis(800),
        forget_after: Duration::from_secs(3600),
        max_entries: 1000,
    }
}

fn ip(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 0, last))
}

fn fail(t: &Arc<SignInThrottle>, account: &str, addr: IpAddr) {
    t.begin(AccountKind::User, account, addr).unwrap().failed();
}

#[test]
fn free_failures_then_a_doubling_capped_delay_and_success_resets() {
    let t = SignInThrottle::new(settings());
    for _ in 0..3 {
        fail(&t, "alice", ip(1));
    }
    let refused = t.begin(AccountKind::User, "alice", ip(1)).err().unwrap();
    assert_eq!(refused.scope, Scope::Pair);
    assert!(refused.retry_after <= Duration::from_millis(200));
    assert!(refused.retry_after > Duration::from_millis(100));

    std::thread::sleep(Duration::from_millis(210));
    fail(&t, "alice", ip(1)); // 4th failure: 400 ms
    let r = t.begin(AccountKind::User, "alice", ip(1)).err().unwrap();
    assert!(r.retry_after > Duration::from_millis(300), "{r:?}");

    std::thread::sleep(Duration::from_millis(410));
    fail(&t, "alice", ip(1)); // 5th: 800 ms (cap)
    std::thread::sleep(Duration::from_millis(810));
    fail(&t, "alice", ip(1)); // 6th: would be 1600 ms, capped at 800
    let r = t.begin(AccountKind::User, "alice", ip(1)).err().unwrap();
    assert!(r.retry_after <= Duration::from_millis(800), "{r:?}");

    std::thread::sleep(Duration::from_millis(810));
    t.begin(AccountKind::User, "alice", ip(1))
        .unwrap()
        .succeeded();
    // Reset: three free failures again.
    for _ in 0..3 {
        fail(&t, "alice", ip(1));
    }
    assert!(t.begin(AccountKind::User, "alice", ip(1)).is_err());
}

#[test]
fn other_accounts_addresses_and_kinds_are_not_affected() {
    let t = SignInThrottle::new(settings());
    for _ in 0..3 {
        fail(&t, "alice", ip(1));
    }
    assert!(t.begin(AccountKind::User, "alice", ip(1)).is_err());
    assert!(t.begin(AccountKind::User, "bob", ip(1)).is_ok());
    assert!(t.begin(AccountKind::User, "alice", ip(2)).is_ok());
    assert!(t.begin(AccountKind::Client, "alice", ip(1)).is_ok());
}

#[test]
fn attempts_in_flight_count_so_a_burst_gets_only_the_free_failures() {
    let t = SignInThrottle::new(settings());
    let held: Vec<Attempt> = (0..3)
        .map(|_| t.begin(AccountKind::User, "alice", ip(1)).unwrap())
        .collect();
    let r = t.begin(AccountKind::User, "alice", ip(1)).err().unwrap();
    assert_eq!(r.retry_after, Duration::from_secs(1));
    // Client secret checks are instant: parallel ones are not limited while nothing failed.
    let clients: Vec<Attempt> = (0..10)
        .map(|_| t.begin(AccountKind::Client, "app", ip(1)).unwrap())
        .collect();
    clients.into_iter().for_each(Attempt::succeeded);
    // An attempt dropped unreported (the pool was busy) frees its place without counting.
    drop(held);
    for _ in 0..3 {
        fail(&t, "alice", ip(1));
    }
    assert!(t.begin(AccountKind::User, "alice", ip(1)).is_err());
}

#[test]
fn the_account_bound_stops_many_addresses_but_not_one_that_signed_in_before() {
    let t = SignInThrottle::new(settings());
    t.begin(AccountKind::User, "alice", ip(200))
        .unwrap()
        .succeeded();
    for i in 0..5 {
        fail(&t, "alice", ip(i));
    }
    let r = t.begin(AccountKind::User, "alice", ip(50)).err().unwrap();
    assert_eq!(r.scope, Scope::Account);
    // The real user's usual address still gets its own attempts.
    t.begin(AccountKind::User, "alice", ip(200))
        .unwrap()
        .succeeded();
    // Which reset the account counter for everyone.
    assert!(t.begin(AccountKind::User, "alice", ip(50)).is_ok());
}

#[test]
fn ipv6_addresses_of_one_network_share_a_counter() {
    let t = SignInThrottle::new(settings());
    for i in 0..3u16 {
        let a = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 1, 1, 0, 0, 0, i + 1));
        fail(&t, "alice", a);
    }
    let other_host = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 1, 1, 9, 9, 9, 9));
    assert!(t.begin(AccountKind::User, "alice", other_host).is_err());
    let other_net = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 1, 2, 0, 0, 0, 1));
    assert!(t.begin(AccountKind::User, "alice", other_net).is_ok());
}

#[test]
fn the_table_stays_bounded_and_keeps_locks_over_rotating_names() {
    let t = SignInThrottle::new(ThrottleSettings {
        max_entries: 100,
        // The names rotate over addresses that would otherwise be locked themselves.
        address_free_failures: 1000,
        base_delay: Duration::from_secs(60),
        max_delay: Duration::from_secs(60),
        ..settings()
    });
    for _ in 0..3 {
        fail(&t, "victim", ip(1));
    }
    for i in 0..5000 {
        fail(&t, &format!("name{i}"), ip((i % 250) as u8));
        assert!(t.len() <= 100);
    }
    assert!(t.begin(AccountKind::User, "victim", ip(1)).is_err());
}

#[test]
fn quiet_entries_are_forgotten() {
    let t = SignInThrottle::new(ThrottleSettings {
        forget_after: Duration::from_millis(100),
        base_delay: Duration::from_millis(50),
        max_delay: Duration::from_millis(50),
        ..settings()
    });
    for _ in 0..3 {
        fail(&t, "alice", ip(1));
    }
    std::thread::sleep(Duration::from_millis(120));
    for _ in 0..2 {
        fail(&t, "alice", ip(1));
    }
    assert!(t.begin(AccountKind::User, "alice", ip(1)).is_ok());
}

#[test]
fn an_address_failing_under_many_names_is_refused_whatever_name_it_tries_next() {
    let t = SignInThrottle::new(settings());
    for i in 0..4 {
        fail(&t, &format!("nobody{i}"), ip(1));
    }
    let r = t
        .begin(AccountKind::User, "someone-else", ip(1))
        .err()
        .unwrap();
    assert_eq!(r.scope, Scope::Address);
    assert!(r.retry_after > Duration::ZERO);
    // Other addresses, and client secrets from this one, are not affected.
    assert!(t.begin(AccountKind::User, "someone-else", ip(2)).is_ok());
    assert!(t.begin(AccountKind::Client, "app", ip(1)).is_ok());
}

#[test]
fn a_burst_of_names_from_one_address_gets_only_its_free_failures_in_flight() {
    let t = SignInThrottle::new(settings());
    let held: Vec<Attempt> = (0..20)
        .filter_map(|i| t.begin(AccountKind::User, &format!("n{i}"), ip(1)).ok())
        .collect();
    assert_eq!(held.len(), 4);
}

#[test]
fn an_addresses_own_user_is_exempt_and_a_success_does_not_clear_the_address() {
    let t = SignInThrottle::new(settings());
    t.begin(AccountKind::User, "alice", ip(1))
        .unwrap()
        .succeeded();
    for i in 0..3 {
        fail(&t, &format!("guess{i}"), ip(1));
    }
    // Alice signing in again does not reset what the other names failed.
    t.begin(AccountKind::User, "alice", ip(1))
        .unwrap()
        .succeeded();
    fail(&t, "guess3", ip(1));
    let r = t.begin(AccountKind::User, "bob", ip(1)).err().unwrap();
    assert_eq!(r.scope, Scope::Address);
    // Alice, who signed in from here before, still gets her attempts.
    t.begin(AccountKind::User, "alice", ip(1))
        .unwrap()
        .succeeded();
}

#[test]
fn the_account_bound_holds_whatever_the_number_of_addresses() {
    let t = SignInThrottle::new(settings());
    // One after another from 50 addresses: 5 checks, then refusals.
    let mut checked = 0;
    for i in 0..50 {
        match t.begin(AccountKind::User, "alice", ip(i)) {
            Ok(a) => {
                checked += 1;
                a.failed();
            }
            Err(r) => assert_eq!(r.scope, Scope::Account),
        }
    }
    assert_eq!(checked, 5);
    // All at once from 50 addresses: still 5 in flight.
    let t = SignInThrottle::new(settings());
    let held: Vec<Attempt> = (0..50)
        .filter_map(|i| t.begin(AccountKind::User, "bob", ip(i)).ok())
        .collect();
    assert_eq!(held.len(), 5);
}

#[test]
fn a_client_forgiven_by_its_true_secret_starts_afresh() {
    let t = SignInThrottle::new(settings());
    for _ in 0..3 {
        t.begin(AccountKind::Client, "app", ip(1)).unwrap().failed();
    }
    assert!(t.begin(AccountKind::Client, "app", ip(1)).is_err());
    t.forgive(AccountKind::Client, "app", ip(1));
    assert!(t.begin(AccountKind::Client, "app", ip(1)).is_ok());
}
