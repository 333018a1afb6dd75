//! The served book's refusals, over real HTTP on a real socket: a server on a free port with one
//! listing and no `gpubook` to run it, so a request that gets past every guard is answered 503.

use super::*;
use crate::play::Listing;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpStream, UdpSocket};

const TOKEN: &str = "0123456789abcdef0123456789abcdef";

fn start() -> (u16, tempfile::TempDir) {
    start_with(None)
}

/// A server whose `gpubook` is `exe` (two runs at once at most).
fn start_with(exe: Option<std::path::PathBuf>) -> (u16, tempfile::TempDir) {
    let dest = tempfile::tempdir().unwrap();
    std::fs::write(dest.path().join("index.html"), "<html><body>the book</body></html>").unwrap();
    let server = bind(0).unwrap();
    let port = server.server_addr().to_ip().unwrap().port();
    let listing = Listing {
        id: "scale".into(),
        file: "kernels/demos/spmd.cu".into(),
        source: String::new(),
        kernel: "scale".into(),
        grid: "1".into(),
        block: "32".into(),
        args: vec![],
        shared: 0,
        then: vec![],
        ranks: 1,
    };
    let limits = Limits { body: 1000, runs: 2, ..Limits::default() };
    let play =
        Playground::new(Guard { port, token: TOKEN.into() }, dest.path().to_path_buf(), exe, Arc::new(Mutex::new(vec![listing])), limits);
    let state = Arc::new(State { dest: dest.path().to_path_buf(), version: AtomicU64::new(1), play });
    std::thread::spawn(move || answer_all(server, state));
    (port, dest)
}

/// The status code of one HTTP/1.1 request; `headers` are added to Host, Content-Length and
/// Connection.
fn status(port: u16, request: &str, headers: &[(&str, String)], body: &str) -> u16 {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut text = format!("{request} HTTP/1.1\r\nContent-Length: {}\r\nConnection: close\r\n", body.len());
    if !headers.iter().any(|(k, _)| *k == "Host") {
        text += &format!("Host: 127.0.0.1:{port}\r\n");
    }
    for (k, v) in headers {
        text += &format!("{k}: {v}\r\n");
    }
    s.write_all(format!("{text}\r\n{body}").as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    answer.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or_else(|| panic!("no status in {answer:?}"))
}

fn ours(port: u16) -> Vec<(&'static str, String)> {
    vec![("Origin", format!("http://127.0.0.1:{port}")), ("X-Gpubook-Token", TOKEN.into())]
}

const RUN: &str = "POST /__gpubook/run";
const SCALE: &str = r#"{"id":"scale","source":"__global__ void scale() {}"}"#;

#[test]
fn a_request_with_everything_right_gets_past_the_guards() {
    let (port, _dest) = start();
    // 503: no gpubook binary to run it with, in this test.
    assert_eq!(status(port, RUN, &ours(port), SCALE), 503);
    let mut local = ours(port);
    local[0].1 = format!("http://localhost:{port}");
    local.push(("Host", format!("localhost:{port}")));
    assert_eq!(status(port, RUN, &local, SCALE), 503);
    assert_eq!(status(port, "GET /index.html", &[], ""), 200);
}

#[test]
fn a_run_without_the_token_or_with_another_is_refused() {
    let (port, _dest) = start();
    let mut h = ours(port);
    h.pop();
    assert_eq!(status(port, RUN, &h, SCALE), 403);
    h.push(("X-Gpubook-Token", "f".repeat(32)));
    assert_eq!(status(port, RUN, &h, SCALE), 403);
    assert_eq!(status(port, "POST /__gpubook/check", &h, r#"{"id":"ch03-vector-add"}"#), 403);
}

#[test]
fn a_run_from_another_origin_is_refused() {
    let (port, _dest) = start();
    for origin in ["http://evil.example", "null", "https://127.0.0.1:1", &format!("http://127.0.0.1:{}", port + 1)] {
        let mut h = ours(port);
        h[0].1 = origin.to_string();
        assert_eq!(status(port, RUN, &h, SCALE), 403, "{origin}");
    }
    let mut h = ours(port);
    h.remove(0);
    assert_eq!(status(port, RUN, &h, SCALE), 403, "no Origin");
}

#[test]
fn another_host_gets_neither_pages_nor_runs() {
    let (port, _dest) = start();
    let evil = vec![("Host", format!("evil.example:{port}"))];
    assert_eq!(status(port, "GET /index.html", &evil, ""), 403);
    let mut h = ours(port);
    h.extend(evil);
    assert_eq!(status(port, RUN, &h, SCALE), 403);
}

#[test]
fn a_request_names_an_id_never_a_path() {
    let (port, _dest) = start();
    let h = ours(port);
    assert_eq!(status(port, RUN, &h, r#"{"id":"scale","source":"x","path":"/etc/passwd"}"#), 403);
    assert_eq!(status(port, RUN, &h, r#"{"id":"../../kernels/demos/spmd.cu","source":"x"}"#), 403);
    assert_eq!(status(port, RUN, &h, r#"{"id":"scale","source":"x","grid":"100000"}"#), 403);
    assert_eq!(status(port, "POST /__gpubook/check", &h, r#"{"id":"/etc/passwd"}"#), 403);
}

#[test]
fn big_requests_and_other_methods_are_refused() {
    let (port, _dest) = start();
    let big = format!(r#"{{"id":"scale","source":"{}"}}"#, "x".repeat(2000));
    assert_eq!(status(port, RUN, &ours(port), &big), 413);
    assert_eq!(status(port, "GET /__gpubook/run", &ours(port), ""), 405);
}

/// An address of this machine other than loopback, when it has one.
fn outside_address() -> Option<IpAddr> {
    let s = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)).ok()?;
    // Connecting a UDP socket sends nothing: it only picks the interface a packet would leave by.
    s.connect(("192.0.2.1", 9)).ok()?;
    Some(s.local_addr().ok()?.ip()).filter(|ip| !ip.is_loopback() && !ip.is_unspecified())
}

#[test]
fn the_server_listens_on_loopback_only() {
    let (port, _dest) = start();
    let server = bind(0).unwrap();
    assert_eq!(server.server_addr().to_ip().unwrap().ip(), IpAddr::V4(Ipv4Addr::LOCALHOST));
    match outside_address() {
        Some(ip) => {
            let reached = TcpStream::connect_timeout(&(ip, port).into(), std::time::Duration::from_secs(2));
            assert!(reached.is_err(), "the book answered on {ip}:{port}");
        }
        None => println!("skipped the outside address: this machine has no interface but loopback"),
    }
}

#[cfg(unix)]
#[test]
fn a_third_run_at_once_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let bin = tempfile::tempdir().unwrap();
    // A `gpubook` whose every run takes 3 s; the third request comes 1 s after the first two.
    let exe = bin.path().join("slow-gpubook");
    std::fs::write(&exe, "#!/bin/sh\nsleep 3\n").unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (port, _dest) = start_with(Some(exe));
    let runs: Vec<_> = (0..3)
        .map(|i| {
            std::thread::sleep(std::time::Duration::from_millis(if i == 2 { 1000 } else { 0 }));
            std::thread::spawn(move || status(port, RUN, &ours(port), SCALE))
        })
        .collect();
    let mut codes: Vec<u16> = runs.into_iter().map(|r| r.join().unwrap()).collect();
    codes.sort();
    assert_eq!(codes, [200, 200, 429]);
}

/// Every answer asks the browser to close the connection, and a burst of connections that
/// keep theirs open until told otherwise (as browsers do) is answered at once: tiny_http's pool
/// once left such a connection queued behind idle keep-alive ones (see `send`).
#[test]
fn a_burst_of_keep_alive_connections_is_answered_and_each_is_closed() {
    let (port, _dest) = start();
    let started = std::time::Instant::now();
    let clients: Vec<_> = (0..16)
        .map(|_| {
            std::thread::spawn(move || {
                let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
                s.set_read_timeout(Some(std::time::Duration::from_secs(20))).unwrap();
                let get = format!("GET /index.html HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: keep-alive\r\n\r\n");
                s.write_all(get.as_bytes()).unwrap();
                // The server closes its side after the answer only because of Connection: close
                // and our closing: read up to the end of the body, then close as a browser would.
                let mut answer = Vec::new();
                let mut buf = [0u8; 4096];
                while !answer.ends_with(b"</html>") {
                    let n = s.read(&mut buf).expect("an answer within 20 s");
                    assert!(n > 0, "the connection closed before the answer: {:?}", String::from_utf8_lossy(&answer));
                    answer.extend_from_slice(&buf[..n]);
                }
                String::from_utf8_lossy(&answer).into_owned()
            })
        })
        .collect();
    for c in clients {
        let answer = c.join().unwrap();
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
        assert!(answer.contains("\r\nConnection: close\r\n"), "{answer}");
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "{:?}", started.elapsed());
}
