//! `gpubook book --serve`: the built pages on http://127.0.0.1:PORT, rebuilt when the book, the
//! catalog, a kernel or an exercise changes. Open pages reload themselves after a rebuild: the
//! server adds a few lines of script to each HTML page it sends that poll a version number.
//! The pages it sends also carry the playground (runnable listings, Check in exercise boxes:
//! [`super::playground`]) and this start's token; who may ask for what is [`super::guard`]'s.

use super::guard::{Guard, new_token};
use super::playground::{CHECK_URL, Limits, Playground, RUN_URL};
use super::{Options, build, links::decode};
use anyhow::{Context, anyhow};
use gpubook::sync::lock;
use notify::{EventKind, RecursiveMode, Watcher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const VERSION_URL: &str = "/__gpubook/version";

/// Polls the version once a second and reloads the page when it changes.
const RELOAD_SCRIPT: &str = "<script>(function(){let seen=null;setInterval(async()=>{try{const v=await (await fetch('/__gpubook/version',{cache:'no-store'})).text();if(seen!==null&&v!==seen)location.reload();seen=v;}catch(e){}},1000);})();</script>";

const PLAY_JS_URL: &str = "/__gpubook/play.js";
const PLAY_CSS_URL: &str = "/__gpubook/play.css";
const PLAY_JS: &str = include_str!("../assets/play.js");
const PLAY_CSS: &str = include_str!("../assets/play.css");

/// Builds, serves, and rebuilds on every change until the process is stopped.
pub fn serve(opts: &Options, port: u16) -> anyhow::Result<()> {
    let listings = Arc::new(Mutex::new(Vec::new()));
    report(build(opts), &listings);
    let server = bind(port)?;
    let port = server.server_addr().to_ip().map_or(port, |a| a.port());
    println!("serving the book on http://127.0.0.1:{port}/ (Ctrl-C stops)");
    let state = Arc::new(State {
        dest: opts.dest.clone(),
        version: AtomicU64::new(1),
        play: Playground::new(
            Guard { port, token: new_token()? },
            opts.root.clone(),
            opts.gpubook_exe.clone(),
            listings.clone(),
            Limits::default(),
        ),
    });
    let s = state.clone();
    std::thread::spawn(move || answer_all(server, s));
    watch(opts, &state.version, &listings)
}

/// The server, listening on the loopback address only: nothing else on the network can reach
/// it. Port 0 takes a free one.
pub fn bind(port: u16) -> anyhow::Result<tiny_http::Server> {
    tiny_http::Server::http(("127.0.0.1", port)).map_err(|e| anyhow!("cannot listen on 127.0.0.1:{port}: {e}"))
}

/// What the request threads share.
pub struct State {
    pub dest: PathBuf,
    pub version: AtomicU64,
    pub play: Playground,
}

/// Answers every request, each on its own thread (a run or a check takes seconds).
pub fn answer_all(server: tiny_http::Server, state: Arc<State>) {
    for request in server.incoming_requests() {
        let s = state.clone();
        std::thread::spawn(move || respond(request, &s));
    }
}

fn report(result: anyhow::Result<super::Report>, listings: &Mutex<Vec<super::play::Listing>>) {
    match result {
        Ok(r) => {
            println!("{r}");
            *lock(listings) = r.listings;
        }
        Err(e) => eprintln!("ERROR {e:#}"),
    }
}

/// What a rebuild depends on, relative to the workspace root.
const WATCHED: &[&str] = &[
    "book/src",
    "book/book.toml",
    "book/css",
    "exercises.toml",
    "kernels",
    "solutions/src",
    "solutions/kernels",
    "exercises/src",
    "exercises/kernels",
];

fn watch(opts: &Options, version: &AtomicU64, listings: &Mutex<Vec<super::play::Listing>>) -> anyhow::Result<()> {
    let (tx, rx) = mpsc::channel();
    let mut watcher = notify::recommended_watcher(move |event| {
        let _ = tx.send(event);
    })?;
    for rel in WATCHED {
        let path = opts.root.join(rel);
        if path.exists() {
            watcher.watch(&path, RecursiveMode::Recursive).with_context(|| format!("watching {}", path.display()))?;
        }
    }
    loop {
        let mut changed = matters(rx.recv()?, opts);
        // One save is often several events: wait for a quiet quarter second, then build once.
        while let Ok(event) = rx.recv_timeout(Duration::from_millis(250)) {
            changed |= matters(event, opts);
        }
        if changed {
            report(build(opts), listings);
            version.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// A change to a source, not to the build's own output or an editor's swap file.
fn matters(event: notify::Result<notify::Event>, opts: &Options) -> bool {
    let Ok(event) = event else { return false };
    let edits = matches!(event.kind, EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_));
    edits
        && event.paths.iter().any(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            !p.starts_with(&opts.dest)
                && !p.starts_with(&opts.cache_dir)
                && !name.ends_with('~')
                && !name.ends_with(".swp")
                && !name.starts_with(".#")
        })
}

fn respond(mut request: tiny_http::Request, state: &State) {
    let host = request.headers().iter().find(|h| h.field.equiv("Host")).map(|h| h.value.as_str().to_string());
    let url = request.url().split(['?', '#']).next().unwrap_or("/").to_string();
    let response = if let Some(why) = state.play.guard.host(host.as_deref()) {
        page(403, format!("refused: {why}").into_bytes(), "text/plain; charset=utf-8")
    } else if url == RUN_URL || url == CHECK_URL {
        let (status, body) = state.play.answer(&mut request);
        page(status, body.to_string().into_bytes(), "application/json")
    } else if url == VERSION_URL {
        page(200, state.version.load(Ordering::SeqCst).to_string().into_bytes(), "text/plain")
    } else if url == PLAY_JS_URL {
        page(200, PLAY_JS.as_bytes().to_vec(), content_type(Path::new("a.js")))
    } else if url == PLAY_CSS_URL {
        page(200, PLAY_CSS.as_bytes().to_vec(), content_type(Path::new("a.css")))
    } else {
        match file_for(&state.dest, &url) {
            Some(path) => match std::fs::read(&path) {
                Ok(bytes) => page(200, served(&path, bytes, &state.play.guard.token), content_type(&path)),
                Err(_) => not_found(&state.dest),
            },
            None => not_found(&state.dest),
        }
    };
    send(request, response);
}

/// Writes `page` with `Connection: close`. tiny_http 0.12 keeps each keep-alive connection on a
/// pool thread until the browser closes it, and its pool can queue a connection that arrives
/// in a burst (a browser opens several at once) behind them: that connection's requests then
/// wait until another closes, and a page's CSS took minutes (the playground check's first page
/// load timed out 3 times in 7 here). One request per connection keeps every pool thread free.
fn send(request: tiny_http::Request, page: Page) {
    use std::io::Write;
    let head = *request.method() == tiny_http::Method::Head;
    let reason = tiny_http::StatusCode(page.status).default_reason_phrase();
    let mut w = request.into_writer();
    let _ = write!(
        w,
        "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nCache-Control: no-store\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        page.status,
        page.content_type,
        page.body.len()
    );
    if !head {
        let _ = w.write_all(&page.body);
    }
    let _ = w.flush();
}

/// The file a URL names under `dest`; `None` for anything that climbs out of it.
fn file_for(dest: &Path, url: &str) -> Option<PathBuf> {
    let rel = decode(url.trim_start_matches('/'));
    if rel.split('/').any(|part| part == ".." || part.contains('\\')) {
        return None;
    }
    let path = dest.join(rel);
    Some(if path.is_dir() { path.join("index.html") } else { path })
}

/// An HTML page as served: with the reload script, the playground and this start's token.
fn served(path: &Path, bytes: Vec<u8>, token: &str) -> Vec<u8> {
    if path.extension().is_none_or(|e| e != "html") {
        return bytes;
    }
    let html = String::from_utf8_lossy(&bytes);
    let play = format!(
        "<link rel=\"stylesheet\" href=\"{PLAY_CSS_URL}\"><script>window.gpubookToken=\"{token}\";</script>\
         <script src=\"{PLAY_JS_URL}\"></script>"
    );
    match html.rfind("</body>") {
        Some(at) => format!("{}{RELOAD_SCRIPT}{play}{}", &html[..at], &html[at..]).into_bytes(),
        None => bytes,
    }
}

fn not_found(dest: &Path) -> Page {
    let body = std::fs::read(dest.join("404.html")).unwrap_or_else(|_| b"not found".to_vec());
    page(404, body, "text/html; charset=utf-8")
}

/// A response: written by [`send`].
struct Page {
    status: u16,
    body: Vec<u8>,
    content_type: &'static str,
}

fn page(status: u16, body: Vec<u8>, content_type: &'static str) -> Page {
    Page { status, body, content_type }
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff" => "font/woff",
        "woff2" => "font/woff2",
        "ttf" => "font/ttf",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_stay_inside_the_book() {
        let dest = Path::new("/srv/book");
        assert_eq!(file_for(dest, "/ch01/index.html"), Some(dest.join("ch01/index.html")));
        assert_eq!(file_for(dest, "/../etc/passwd"), None);
        assert_eq!(file_for(dest, "/a/%2e%2e/%2e%2e/x"), None);
    }

    #[test]
    fn html_pages_get_the_reload_script_and_the_playground() {
        let out = String::from_utf8(served(Path::new("a.html"), b"<html><body>hi</body></html>".to_vec(), "t0k")).unwrap();
        assert!(out.contains("/__gpubook/version"));
        assert!(out.contains("window.gpubookToken=\"t0k\""));
        assert!(out.contains(PLAY_JS_URL));
        assert_eq!(served(Path::new("a.css"), b"body{}".to_vec(), "t0k"), b"body{}");
    }
}

#[cfg(test)]
#[path = "serve_tests.rs"]
mod http_tests;
