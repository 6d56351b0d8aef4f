use super::*;

fn entry(s: &str) -> AllowEntry {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn error(s: &str) -> String {
    s.parse::<AllowEntry>().unwrap_err()
}

#[test]
fn every_entry_form_parses_and_displays_as_written() {
    let cases = [
        ("pypi.example.com:443", "pypi.example.com:443"),
        ("API.Anthropic.com.:443", "api.anthropic.com:443"),
        ("*.pkg-files.example.net:443", "*.pkg-files.example.net:443"),
        ("10.1.2.3:8080", "10.1.2.3:8080"),
        ("[fd00::1]:443", "[fd00::1]:443"),
        ("[::ffff:10.0.0.1]:80", "10.0.0.1:80"),
        ("10.0.0.0/8:443", "10.0.0.0/8:443"),
        ("[fd00::]/8:443", "[fd00::]/8:443"),
        ("0.0.0.0/0:443", "0.0.0.0/0:443"),
        ("localhost:65535", "localhost:65535"),
        ("under_score.internal:1", "under_score.internal:1"),
    ];
    for (text, shown) in cases {
        assert_eq!(entry(text).to_string(), shown, "{text}");
        assert_eq!(entry(shown), entry(text), "{shown} reads back");
    }
    assert_eq!(entry("10.0.0.0/8:443").port(), 443);
    assert_eq!(
        entry("*.a.com:1").host(),
        &HostPattern::Below("a.com".to_owned())
    );
}

#[test]
fn bad_entries_say_how_to_write_them() {
    let cases = [
        (
            "pypi.example.com",
            r#"allow entry "pypi.example.com" has no port: write it as pypi.example.com:443"#,
        ),
        (
            "[fd00::1]",
            r#"allow entry "[fd00::1]" has no port: write it as [fd00::1]:443"#,
        ),
        (
            "10.0.0.0/8",
            r#"allow entry "10.0.0.0/8" has no port: write it as 10.0.0.0/8:443"#,
        ),
        ("pypi.example.com:*", "has a wildcard port"),
        ("pypi.example.com:0", r#"has an invalid port "0" (1-65535)"#),
        ("pypi.example.com:65536", "invalid port"),
        ("pypi.example.com:+1", "invalid port"),
        ("pypi.example.com:", "has an empty port"),
        ("bücher.de:443", "xn-- form"),
        ("fd00::1:443", "write it in brackets"),
        ("a.*.com:443", "a '*' other than one leading"),
        ("*:443", "a '*' other than one leading"),
        ("*.*.com:443", "a '*' other than one leading"),
        ("10.1.2.3/8:443", "write the network as 10.0.0.0/8"),
        ("10.0.0.0/33:443", "invalid prefix length /33 (0-32)"),
        ("[fd00::1]/8:443", "write the network as [fd00::]/8"),
        ("fd00::/8:443", "bare IPv6"),
        ("[fd00::1:443", "'[' without its ']'"),
        ("[zz::1]:443", "invalid IPv6 address"),
        ("-bad-.com:443", "invalid host name"),
        ("a..com:443", "invalid host name"),
        ("127.1:443", "neither an IP address nor a host name"),
        ("2130706433:443", "neither an IP address nor a host name"),
        ("", "is empty"),
        ("[fd00::1]x:443", "after the address"),
    ];
    for (text, want) in cases {
        let err = error(text);
        assert!(err.contains(want), "{text:?}: {err}");
    }
}

#[test]
fn a_bad_entry_in_a_file_names_its_line_and_column() {
    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Sandbox {
        allow: Vec<AllowEntry>,
    }
    let text = "allow = [\n  \"pypi.example.com:443\",\n  \"files.pkg-files.example.net\",\n]\n";
    let err = toml::from_str::<Sandbox>(text).unwrap_err();
    let shown = err.to_string();
    assert!(shown.contains("line 3, column 3"), "{shown}");
    assert!(
        shown.contains(
            "allow entry \"files.pkg-files.example.net\" has no port: write it as \
             files.pkg-files.example.net:443"
        ),
        "{shown}"
    );
    let ok: Sandbox = toml::from_str("allow = [\"pypi.example.com:443\", \"*.x.org:80\"]").unwrap();
    assert_eq!(ok.allow.len(), 2);
}

fn policy(list: &[&str]) -> Policy {
    Policy::new(list.iter().map(|s| entry(s)).collect())
}

#[test]
fn names_match_exactly_or_strictly_below_a_suffix() {
    let p = policy(&["pypi.example.com:443", "*.pkg-files.example.net:443"]);
    assert!(p.allows_name("pypi.example.com", 443));
    assert!(p.allows_name("PyPI.example.com.", 443));
    assert!(!p.allows_name("pypi.example.com", 80));
    assert!(!p.allows_name("evilpypi.example.com", 443));
    assert!(!p.allows_name("www.pypi.example.com", 443));
    assert!(p.allows_name("files.pkg-files.example.net", 443));
    assert!(p.allows_name("a.b.pkg-files.example.net", 443));
    assert!(!p.allows_name("pkg-files.example.net", 443));
    assert!(!p.allows_name("xpkg-files.example.net", 443));
    // IP entries never match a name, name entries never match an address.
    let p = policy(&["127.0.0.1:80", "localhost:80"]);
    assert!(!p.allows_name("127.0.0.1", 80));
    assert!(p.allows_ip("127.0.0.1".parse().unwrap(), 80));
    assert!(!p.allows_ip("127.0.0.2".parse().unwrap(), 80));
    assert!(!p.allows_ip("127.0.0.1".parse().unwrap(), 81));
}

#[test]
fn resolved_addresses_in_special_ranges_need_an_ip_entry() {
    let ip = |s: &str| -> IpAddr { s.parse().unwrap() };
    let p = policy(&["svc.example:443", "10.0.0.0/8:443", "[fd00::7]:443"]);
    // Public: allowed by the name.
    assert_eq!(
        p.filter_resolved("svc.example", 443, &[ip("93.184.216.34")])
            .unwrap(),
        vec!["93.184.216.34:443".parse().unwrap()]
    );
    // Private but covered.
    assert!(
        p.filter_resolved("svc.example", 443, &[ip("10.9.9.9")])
            .is_ok()
    );
    assert!(
        p.filter_resolved("svc.example", 443, &[ip("fd00::7")])
            .is_ok()
    );
    // Refused ones are dropped, allowed ones kept in order.
    let got = p
        .filter_resolved(
            "svc.example",
            443,
            &[
                ip("127.0.0.1"),
                ip("10.0.0.1"),
                ip("::ffff:10.0.0.1"),
                ip("93.184.216.34"),
            ],
        )
        .unwrap();
    assert_eq!(
        got,
        vec![
            "10.0.0.1:443".parse::<SocketAddr>().unwrap(),
            "93.184.216.34:443".parse().unwrap()
        ]
    );
    let err = p
        .filter_resolved("svc.example", 443, &[ip("169.254.169.254")])
        .unwrap_err();
    assert_eq!(
        err.reason,
        "svc.example resolves only to 169.254.169.254, the cloud metadata address not listed"
    );
    let err = p
        .filter_resolved(
            "svc.example",
            443,
            &[ip("127.0.0.1"), ip("::1"), ip("192.168.1.1")],
        )
        .unwrap_err();
    assert_eq!(err.status, 403);
    assert_eq!(
        err.reason,
        "svc.example resolves only to addresses not listed: 127.0.0.1 (a loopback address), \
         ::1 (a loopback address), 192.168.1.1 (a private address (192.168.0.0/16))"
    );
}

#[test]
fn special_ranges_are_named_in_every_spelling() {
    let cases = [
        ("127.0.0.1", Some("a loopback address")),
        ("127.255.0.9", Some("a loopback address")),
        ("169.254.169.254", Some("the cloud metadata address")),
        ("169.254.1.1", Some("a link-local address")),
        ("10.0.0.1", Some("a private address (10.0.0.0/8)")),
        ("172.16.0.1", Some("a private address (172.16.0.0/12)")),
        ("172.31.255.255", Some("a private address (172.16.0.0/12)")),
        ("172.32.0.1", None),
        ("192.168.0.1", Some("a private address (192.168.0.0/16)")),
        (
            "100.64.0.1",
            Some("a shared address (100.64.0.0/10, CGNAT)"),
        ),
        ("100.128.0.1", None),
        ("0.0.0.0", Some("the unspecified address")),
        ("0.1.2.3", Some("a \"this network\" address (0.0.0.0/8)")),
        ("255.255.255.255", Some("the broadcast address")),
        ("224.0.0.1", Some("a multicast address")),
        ("240.0.0.1", Some("a reserved address (240.0.0.0/4)")),
        ("8.8.8.8", None),
        ("::1", Some("a loopback address")),
        ("::", Some("the unspecified address")),
        ("fe80::1", Some("a link-local address")),
        ("fc00::1", Some("a unique local address (fc00::/7)")),
        ("fd12:3456::1", Some("a unique local address (fc00::/7)")),
        ("fd00:ec2::254", Some("the cloud metadata address")),
        ("ff02::1", Some("a multicast address")),
        ("::ffff:127.0.0.1", Some("a loopback address")),
        ("::ffff:169.254.169.254", Some("the cloud metadata address")),
        ("::10.0.0.1", Some("a private address (10.0.0.0/8)")),
        ("64:ff9b::a9fe:a9fe", Some("the cloud metadata address")),
        ("2002:0a00:0001::1", Some("a private address (10.0.0.0/8)")),
        ("2001:db8::1", Some("a documentation address")),
        ("2606:4700::1111", None),
    ];
    for (text, want) in cases {
        let ip: IpAddr = text.parse().unwrap();
        assert_eq!(special_range(ip), want, "{text}");
    }
}

#[test]
fn targets_are_names_or_addresses() {
    assert_eq!(
        Target::parse("Example.COM.").unwrap(),
        Target::Name("example.com".into())
    );
    assert_eq!(
        Target::parse("[::ffff:1.2.3.4]").unwrap(),
        Target::Ip("1.2.3.4".parse().unwrap())
    );
    assert_eq!(Target::parse("[::1]").unwrap().to_string(), "[::1]");
    for bad in ["127.1", "0x7f000001", "a b", "", "[::1", "é.com"] {
        assert!(Target::parse(bad).is_err(), "{bad}");
    }
}

#[tokio::test]
async fn a_decision_resolves_names_itself() {
    let p = policy(&["localhost:8443", "127.0.0.1:8443"]);
    let addrs = p
        .decide(&Target::Name("localhost".into()), 8443)
        .await
        .unwrap();
    assert!(
        addrs.contains(&"127.0.0.1:8443".parse().unwrap()),
        "{addrs:?}"
    );
    assert!(
        addrs
            .iter()
            .all(|a| a.ip().is_loopback() && a.port() == 8443)
    );
    let refused = p
        .decide(&Target::Name("localhost".into()), 9)
        .await
        .unwrap_err();
    assert_eq!(refused.status, 403);
    let missing = policy(&["no-such-host.invalid:443"])
        .decide(&Target::Name("no-such-host.invalid".into()), 443)
        .await
        .unwrap_err();
    assert_eq!(missing.status, 502);
    // "does not resolve", or "took longer than" where a resolver is configured but unreachable.
    assert!(
        missing
            .reason
            .starts_with("no-such-host.invalid does not resolve")
            || missing
                .reason
                .starts_with("resolving no-such-host.invalid took longer"),
        "{missing:?}"
    );
}
