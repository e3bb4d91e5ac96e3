use super::*;

fn settings(connections: u32, rate: f64, burst: f64, entries: usize) -> BudgetSettings {
    BudgetSettings {
        max_connections: connections,
        requests_per_second: rate,
        burst,
        max_wait: Duration::ZERO,
        max_entries: entries,
        exempt: Networks::parse("127.0.0.1", "x").unwrap(),
        proxies: TrustedProxies::parse("10.0.0.1").unwrap(),
    }
}

fn ip(s: &str) -> Option<IpAddr> {
    Some(s.parse().unwrap())
}

const HEAD: &[u8] = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";

#[test]
fn connections_are_capped_per_address_and_given_back() {
    let b = Arc::new(AddressBudgets::new(settings(2, 10.0, 10.0, 100)));
    let one = b.open(ip("192.0.2.1")).unwrap().expect("counted");
    let two = b.open(ip("192.0.2.1")).unwrap().expect("counted");
    let refused = b.open(ip("192.0.2.1")).unwrap_err();
    assert!(refused.message.contains("at most 2"), "{}", refused.message);
    // Another address is not affected; the exempt one and a trusted proxy are not counted.
    assert!(b.open(ip("192.0.2.2")).unwrap().is_some());
    for _ in 0..5 {
        assert!(b.open(ip("127.0.0.1")).unwrap().is_none());
        assert!(b.open(ip("10.0.0.1")).unwrap().is_none());
    }
    drop(one);
    let three = b.open(ip("192.0.2.1")).unwrap();
    assert!(three.is_some());
    drop((two, three));
}

#[test]
fn requests_past_the_burst_are_refused_until_the_rate_refills() {
    let b = AddressBudgets::new(settings(10, 1000.0, 5.0, 100));
    for _ in 0..5 {
        b.request(ip("192.0.2.1"), HEAD).unwrap();
    }
    let refused = b.request(ip("192.0.2.1"), HEAD).unwrap_err();
    assert_eq!(refused.retry_after, 1);
    assert_eq!(refused.hold, RATE_REFUSAL_HOLD);
    // Another address has its own budget; the exempt one has none.
    b.request(ip("192.0.2.2"), HEAD).unwrap();
    for _ in 0..50 {
        b.request(ip("127.0.0.1"), HEAD).unwrap();
    }
    // At 1,000 a second a token is back within a few milliseconds.
    std::thread::sleep(Duration::from_millis(20));
    b.request(ip("192.0.2.1"), HEAD).unwrap();
}

#[test]
fn behind_a_trusted_proxy_the_forwarded_client_counts() {
    let b = AddressBudgets::new(settings(10, 0.01, 2.0, 100));
    let from = |client: &str| {
        format!("GET / HTTP/1.1\r\nHost: a\r\nX-Forwarded-For: {client}\r\n\r\n").into_bytes()
    };
    for _ in 0..2 {
        b.request(ip("10.0.0.1"), &from("198.51.100.7")).unwrap();
    }
    assert!(b.request(ip("10.0.0.1"), &from("198.51.100.7")).is_err());
    // Another client through the same proxy, and the proxy's own requests, go on.
    b.request(ip("10.0.0.1"), &from("198.51.100.8")).unwrap();
    for _ in 0..5 {
        b.request(ip("10.0.0.1"), HEAD).unwrap();
    }
    // From an untrusted peer the header is the client's own words: the peer counts.
    for _ in 0..2 {
        b.request(ip("192.0.2.9"), &from("198.51.100.1")).unwrap();
    }
    assert!(b.request(ip("192.0.2.9"), &from("198.51.100.2")).is_err());
    // A very slow rate: the wait is in whole seconds.
    assert_eq!(
        b.request(ip("192.0.2.9"), HEAD).unwrap_err().retry_after,
        100
    );
}

#[test]
fn ipv6_counts_by_its_64() {
    let b = AddressBudgets::new(settings(10, 0.01, 1.0, 100));
    b.request(ip("2001:db8:1:2::1"), HEAD).unwrap();
    assert!(b.request(ip("2001:db8:1:2:ffff::9"), HEAD).is_err());
    b.request(ip("2001:db8:1:3::1"), HEAD).unwrap();
    // An IPv4-mapped address is its IPv4 address.
    b.request(ip("192.0.2.1"), HEAD).unwrap();
    assert!(b.request(ip("::ffff:192.0.2.1"), HEAD).is_err());
    assert_eq!(b.tracked(), 3);
}

#[test]
fn the_table_is_bounded_and_newcomers_share_the_overflow_budget() {
    let b = AddressBudgets::new(settings(10, 0.01, 3.0, 16));
    for i in 0..200u32 {
        let addr = IpAddr::V4((0xC000_0000 + i).into());
        let _ = b.request(Some(addr), HEAD);
    }
    assert_eq!(b.tracked(), 16);
    // The first 16 addresses have their own budgets (3 each), the other 184 shared one: three
    // of them were let through, and the next newcomer is refused.
    assert!(b.request(ip("203.0.113.200"), HEAD).is_err());
    assert!(b.request(ip("192.0.0.0"), HEAD).is_ok());
}

#[test]
fn idle_addresses_are_forgotten() {
    let b = Arc::new(AddressBudgets::new(settings(10, 1000.0, 2.0, 4)));
    let held = b.open(ip("192.0.2.100")).unwrap();
    for i in 0..3u32 {
        b.request(Some(IpAddr::V4((0xC000_0200 + i).into())), HEAD)
            .unwrap();
    }
    assert_eq!(b.tracked(), 4);
    // A moment later the three buckets are full again: the next newcomer finds them forgotten
    // (a sweep when full runs at most once a second), but the address with a connection open
    // is kept.
    b.lock().swept -= Duration::from_secs(2);
    std::thread::sleep(Duration::from_millis(10));
    b.request(ip("198.51.100.1"), HEAD).unwrap();
    assert_eq!(b.tracked(), 2);
    let table = b.lock();
    assert!(table
        .entries
        .contains_key(&Key::of("192.0.2.100".parse().unwrap())));
    drop(table);
    drop(held);
}

#[test]
fn past_the_burst_requests_wait_for_the_rate_up_to_the_longest_wait() {
    let mut s = settings(10, 10.0, 2.0, 100);
    s.max_wait = Duration::from_millis(500);
    let b = AddressBudgets::new(s);
    for _ in 0..2 {
        assert_eq!(b.request(ip("192.0.2.1"), HEAD).unwrap(), Duration::ZERO);
    }
    // Then one every 100 ms: waits of 100, 200, ... 500 ms, and the next would wait too long.
    for k in 1..=5u64 {
        let wait = b.request(ip("192.0.2.1"), HEAD).unwrap();
        let ms = Duration::from_millis;
        assert!(
            wait > ms(100 * k - 20) && wait <= ms(100 * k),
            "{k}: {wait:?}"
        );
    }
    let refused = b.request(ip("192.0.2.1"), HEAD).unwrap_err();
    assert_eq!(refused.retry_after, 1);
    // Another address is not held.
    assert_eq!(b.request(ip("192.0.2.2"), HEAD).unwrap(), Duration::ZERO);
}
