//! Who may talk to the served book. It runs code on the reader's machine, so every other web
//! page the reader has open must be kept out:
//! - the Host header must be `127.0.0.1:PORT` or `localhost:PORT` on every request, pages
//!   included (a page that renamed its own domain to 127.0.0.1, DNS rebinding, gets nothing,
//!   not even the token in a page);
//! - a request that runs something must come from the book's own origin and carry the token,
//!   a random number made at start and known only to the pages this server sent.

/// A per-start secret: 128 random bits from the operating system, in hex.
pub fn new_token() -> anyhow::Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no random numbers from the system: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The header the pages send the token in.
pub const TOKEN_HEADER: &str = "X-Gpubook-Token";

pub struct Guard {
    pub port: u16,
    pub token: String,
}

impl Guard {
    /// `None` when the Host header names this server; else why not.
    pub fn host(&self, host: Option<&str>) -> Option<String> {
        match host {
            Some(h) if self.ours(h) => None,
            Some(h) => Some(format!("Host `{h}` is not this book's (127.0.0.1:{})", self.port)),
            None => Some("no Host header".into()),
        }
    }

    /// `None` when a request may run something: the book's own Origin (browsers send one with
    /// every POST) and the right token.
    pub fn run(&self, origin: Option<&str>, token: Option<&str>) -> Option<String> {
        match origin.map(|o| o.strip_prefix("http://").filter(|h| self.ours(h))) {
            Some(Some(_)) => {}
            Some(None) => return Some(format!("Origin `{}` is not this book", origin.unwrap_or_default())),
            None => return Some("no Origin header".into()),
        }
        match token {
            Some(t) if same(t.as_bytes(), self.token.as_bytes()) => None,
            Some(_) => Some("wrong token (reload the page: the server was restarted)".into()),
            None => Some("no token".into()),
        }
    }

    fn ours(&self, host: &str) -> bool {
        host == format!("127.0.0.1:{}", self.port) || host == format!("localhost:{}", self.port)
    }
}

/// Compares in time that does not depend on where the first difference is.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard() -> Guard {
        Guard { port: 3000, token: "abc".into() }
    }

    #[test]
    fn only_this_servers_host_names() {
        let g = guard();
        assert_eq!(g.host(Some("127.0.0.1:3000")), None);
        assert_eq!(g.host(Some("localhost:3000")), None);
        assert!(g.host(Some("evil.example:3000")).is_some());
        assert!(g.host(Some("127.0.0.1:3001")).is_some());
        assert!(g.host(Some("127.0.0.1")).is_some());
        assert!(g.host(None).is_some());
    }

    #[test]
    fn runs_need_the_origin_and_the_token() {
        let g = guard();
        assert_eq!(g.run(Some("http://127.0.0.1:3000"), Some("abc")), None);
        assert_eq!(g.run(Some("http://localhost:3000"), Some("abc")), None);
        assert!(g.run(Some("http://evil.example"), Some("abc")).is_some());
        assert!(g.run(Some("https://127.0.0.1:3000"), Some("abc")).is_some());
        assert!(g.run(Some("null"), Some("abc")).is_some());
        assert!(g.run(None, Some("abc")).is_some());
        assert!(g.run(Some("http://127.0.0.1:3000"), Some("abd")).is_some());
        assert!(g.run(Some("http://127.0.0.1:3000"), None).is_some());
    }

    #[test]
    fn tokens_are_random() {
        let (a, b) = (new_token().unwrap(), new_token().unwrap());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }
}
