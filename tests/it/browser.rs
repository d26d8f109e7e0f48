//! Headless Chromium for the HTML tests: open a page, read the DOM it renders (`--dump-dom`)
//! or take a screenshot, and count what it fetched. Every request of the browser goes to a
//! local proxy that records it, so a page that fetches anything (a font, a script, an image)
//! is seen; Chromium's own calls home (its Google services, which no flag turns off
//! entirely) are told apart by host.

use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Hosts Chromium itself calls (time, sign-in, component updates) with background networking off.
const BROWSER_OWN: &[&str] = &["google.com", "googleapis.com", "gvt1.com", "gstatic.com"];

pub struct Browser {
    chromium: PathBuf,
    profile: tempfile::TempDir,
}

/// What a page did: its DOM after scripts ran, and the requests it made.
pub struct Visit {
    pub dom: String,
    pub fetched: Vec<String>,
}

impl Browser {
    pub fn new(chromium: PathBuf) -> Browser {
        Browser { chromium, profile: tempfile::tempdir().unwrap() }
    }

    fn command(&self, proxy: u16) -> Command {
        let mut c = Command::new(&self.chromium);
        c.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--disable-default-apps",
            "--no-pings",
            "--disable-domain-reliability",
            "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,Translate,MediaRouter",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", self.profile.path().display()))
        .arg(format!("--proxy-server=http://127.0.0.1:{proxy}"));
        c
    }

    /// Open `page` and return its rendered DOM and every request it made.
    pub fn visit(&self, page: &Path) -> Visit {
        let proxy = Proxy::start();
        let out = self.command(proxy.port).arg("--dump-dom").arg(url(page)).output().unwrap();
        assert!(out.status.success(), "chromium failed: {}", String::from_utf8_lossy(&out.stderr));
        let fetched = proxy.stop();
        Visit { dom: String::from_utf8_lossy(&out.stdout).into_owned(), fetched }
    }

    /// A screenshot of `page` (`width`×`height`), as RGBA pixels.
    pub fn screenshot(&self, page: &Path, png: &Path, size: (u32, u32)) -> Vec<[u8; 4]> {
        let proxy = Proxy::start();
        let out = (self.command(proxy.port))
            .arg(format!("--window-size={},{}", size.0, size.1))
            .arg(format!("--screenshot={}", png.display()))
            .arg(url(page))
            .output()
            .unwrap();
        proxy.stop();
        assert!(out.status.success() && png.is_file(), "no screenshot: {}", String::from_utf8_lossy(&out.stderr));
        pixels(png)
    }
}

fn url(page: &Path) -> String {
    format!("file://{}", page.canonicalize().unwrap().display())
}

/// The requests among `fetched` that are not the browser's own.
pub fn page_requests(fetched: &[String]) -> Vec<&String> {
    let own = |r: &str| {
        let host = r.split_whitespace().nth(1).unwrap_or("");
        let host = host.trim_start_matches("http://").trim_start_matches("https://");
        let host = host.split(['/', ':']).next().unwrap_or("");
        BROWSER_OWN.iter().any(|h| host == *h || host.ends_with(&format!(".{h}")))
    };
    fetched.iter().filter(|r| !own(r)).collect()
}

/// The decoded pixels of a PNG.
fn pixels(png: &Path) -> Vec<[u8; 4]> {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let bytes = &buf[..info.buffer_size()];
    let channels = info.color_type.samples();
    bytes.chunks(channels).map(|c| [c[0], c[1 % channels], c[2 % channels], *c.get(3).unwrap_or(&255)]).collect()
}

/// A proxy that answers nothing and writes down each request's first line.
struct Proxy {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
    done: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl Proxy {
    fn start() -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let (seen, done) = (Arc::new(Mutex::new(Vec::new())), Arc::new(AtomicBool::new(false)));
        let (s, d) = (seen.clone(), done.clone());
        let thread = std::thread::spawn(move || {
            while !d.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((mut conn, _)) => {
                        conn.set_nonblocking(false).unwrap();
                        conn.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
                        let mut buf = [0u8; 512];
                        let n = conn.read(&mut buf).unwrap_or(0);
                        let text = String::from_utf8_lossy(&buf[..n]);
                        s.lock().unwrap().push(text.lines().next().unwrap_or("?").to_string());
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        });
        Proxy { port, seen, done, thread }
    }

    fn stop(self) -> Vec<String> {
        std::thread::sleep(Duration::from_millis(200));
        self.done.store(true, Ordering::SeqCst);
        self.thread.join().unwrap();
        let seen = self.seen.lock().unwrap().clone();
        seen
    }
}

/// `&amp;` and friends back to text (Chromium's DOM serialisation escapes attribute values).
pub fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

/// The value of attribute `name` in the tag `tag` (`<tr a="1" b="2">`).
pub fn attr(tag: &str, name: &str) -> Option<String> {
    let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    let end = tag[at..].find('"')? + at;
    Some(unescape(&tag[at..end]))
}

/// Every element `<{name} …>` of `html` whose start tag contains `needle`, with its content up
/// to the matching close tag (elements of this kind do not nest in the pages tested).
pub fn elements<'a>(html: &'a str, name: &str, needle: &str) -> Vec<(&'a str, &'a str)> {
    let (open, close) = (format!("<{name}"), format!("</{name}>"));
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find(&open) {
        let after = &rest[i..];
        let Some(tag_end) = after.find('>') else { break };
        let tag = &after[..=tag_end];
        let body_end = after.find(&close).unwrap_or(after.len());
        if tag.contains(needle) && (tag.ends_with('>') && after[open.len()..].starts_with([' ', '>'])) {
            out.push((tag, &after[tag_end + 1..body_end]));
        }
        rest = &after[tag_end + 1..];
    }
    out
}

/// The text of an element's content: tags removed, entities unescaped, whitespace collapsed.
pub fn text(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    unescape(&out).split_whitespace().collect::<Vec<_>>().join(" ")
}
