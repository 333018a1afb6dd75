//! `gpubook book --serve`: the built pages on http://127.0.0.1:PORT, rebuilt when the book, the
//! catalog, a kernel or an exercise changes. Open pages reload themselves after a rebuild: the
//! server adds a few lines of script to each HTML page it sends that poll a version number.

use super::{Options, build, links::decode};
use anyhow::{Context, anyhow};
use notify::{EventKind, RecursiveMode, Watcher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::Duration;

const VERSION_URL: &str = "/__gpubook/version";

/// Polls the version once a second and reloads the page when it changes.
const RELOAD_SCRIPT: &str = "<script>(function(){let seen=null;setInterval(async()=>{try{const v=await (await fetch('/__gpubook/version',{cache:'no-store'})).text();if(seen!==null&&v!==seen)location.reload();seen=v;}catch(e){}},1000);})();</script>";

/// Builds, serves, and rebuilds on every change until the process is stopped.
pub fn serve(opts: &Options, port: u16) -> anyhow::Result<()> {
    report(build(opts));
    let server = tiny_http::Server::http(("127.0.0.1", port)).map_err(|e| anyhow!("cannot listen on 127.0.0.1:{port}: {e}"))?;
    println!("serving the book on http://127.0.0.1:{port}/ (Ctrl-C stops)");
    let version = Arc::new(AtomicU64::new(1));
    let (dest, v) = (opts.dest.clone(), version.clone());
    std::thread::spawn(move || {
        for request in server.incoming_requests() {
            respond(request, &dest, &v);
        }
    });
    watch(opts, &version)
}

fn report(result: anyhow::Result<super::Report>) {
    match result {
        Ok(r) => println!("{r}"),
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

fn watch(opts: &Options, version: &AtomicU64) -> anyhow::Result<()> {
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
            report(build(opts));
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

fn respond(request: tiny_http::Request, dest: &Path, version: &AtomicU64) {
    let url = request.url().split(['?', '#']).next().unwrap_or("/").to_string();
    let response = if url == VERSION_URL {
        page(200, version.load(Ordering::SeqCst).to_string().into_bytes(), "text/plain")
    } else {
        match file_for(dest, &url) {
            Some(path) => match std::fs::read(&path) {
                Ok(bytes) => page(200, with_reload(&path, bytes), content_type(&path)),
                Err(_) => not_found(dest),
            },
            None => not_found(dest),
        }
    };
    let _ = request.respond(response);
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

fn with_reload(path: &Path, bytes: Vec<u8>) -> Vec<u8> {
    if path.extension().is_none_or(|e| e != "html") {
        return bytes;
    }
    let html = String::from_utf8_lossy(&bytes);
    match html.rfind("</body>") {
        Some(at) => format!("{}{RELOAD_SCRIPT}{}", &html[..at], &html[at..]).into_bytes(),
        None => bytes,
    }
}

fn not_found(dest: &Path) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    let body = std::fs::read(dest.join("404.html")).unwrap_or_else(|_| b"not found".to_vec());
    page(404, body, "text/html; charset=utf-8")
}

fn page(status: u16, body: Vec<u8>, content_type: &str) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    let header = tiny_http::Header::from_bytes("Content-Type", content_type).expect("a valid header");
    let no_cache = tiny_http::Header::from_bytes("Cache-Control", "no-store").expect("a valid header");
    tiny_http::Response::from_data(body).with_status_code(status).with_header(header).with_header(no_cache)
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
    fn html_pages_get_the_reload_script() {
        let out = with_reload(Path::new("a.html"), b"<html><body>hi</body></html>".to_vec());
        assert!(String::from_utf8(out).unwrap().contains("/__gpubook/version"));
        assert_eq!(with_reload(Path::new("a.css"), b"body{}".to_vec()), b"body{}");
    }
}
