//! The code of a line and its repository-relative path: from the sources embedded in the report
//! (`--import-source yes`), else from disk when the path resolves under the source root, else
//! nothing (the caller says so in a note).
//!
//! The cubin names files as they were when it was built (`/home/ci/build/kernels/gemm.cu`); a
//! review and GitHub code scanning need them relative to the checkout. A path under the root is
//! cut to the rest; any other absolute path resolves when its longest tail exists under the root
//! (`kernels/gemm.cu`), which is what makes a report from a GPU runner point into the checkout
//! of the CPU job that reads it.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

/// A resolved file: its lines and, when it is inside the root, its repository-relative path.
#[derive(Debug, Clone, Default)]
pub struct Resolved {
    /// The path relative to the source root, when the file is inside it.
    pub relative: Option<String>,
    /// The file's lines, when it was found (on disk or embedded in the report).
    pub lines: Option<Vec<String>>,
}

/// Looks files up once each.
#[derive(Debug, Default)]
pub struct Sources {
    root: PathBuf,
    embedded: HashMap<String, String>,
    cache: HashMap<String, Resolved>,
}

impl Sources {
    /// Look files up under `root` (and among the sources a report embeds).
    pub fn new(root: PathBuf) -> Sources {
        let root = root.canonicalize().unwrap_or(root);
        Sources { root, embedded: HashMap::new(), cache: HashMap::new() }
    }

    /// Add the sources a report embeds (path → text).
    pub fn embed(&mut self, files: &[(String, String)]) {
        for (p, t) in files {
            self.embedded.entry(p.clone()).or_insert_with(|| t.clone());
            self.cache.remove(p);
        }
    }

    /// Find `file` (once; later calls answer from the cache).
    pub fn resolve(&mut self, file: &str) -> &Resolved {
        if !self.cache.contains_key(file) {
            let r = self.lookup(file);
            self.cache.insert(file.to_string(), r);
        }
        &self.cache[file]
    }

    /// The text of `file:line`, trimmed, if known.
    pub fn line(&mut self, file: &str, line: u32) -> Option<String> {
        let lines = self.resolve(file).lines.as_ref()?;
        let text = lines.get((line as usize).checked_sub(1)?)?;
        Some(text.trim().to_string())
    }

    fn lookup(&self, file: &str) -> Resolved {
        let relative = self.relative(file);
        let text = self.embedded.get(file).cloned().or_else(|| {
            let on_disk = relative.as_ref().map(|r| self.root.join(r)).unwrap_or_else(|| PathBuf::from(file));
            std::fs::read(on_disk).ok().map(|b| String::from_utf8_lossy(&b).into_owned())
        });
        Resolved { relative, lines: text.map(|t| t.lines().map(str::to_string).collect()) }
    }

    fn relative(&self, file: &str) -> Option<String> {
        let p = Path::new(file);
        let clean = |p: &Path| -> Option<String> {
            let parts: Vec<String> = p
                .components()
                .filter(|c| !matches!(c, Component::CurDir))
                .map(|c| match c {
                    Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
                    _ => None,
                })
                .collect::<Option<_>>()?;
            (!parts.is_empty()).then(|| parts.join("/"))
        };
        if p.is_relative() {
            return clean(p).filter(|r| self.root.join(r).is_file());
        }
        let canonical = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        if let Ok(rest) = canonical.strip_prefix(&self.root) {
            return clean(rest);
        }
        // The longest tail of the path that exists under the root.
        let parts: Vec<&std::ffi::OsStr> =
            p.components().filter_map(|c| if let Component::Normal(s) = c { Some(s) } else { None }).collect();
        (0..parts.len()).find_map(|i| {
            let tail: PathBuf = parts[i..].iter().collect();
            self.root.join(&tail).is_file().then(|| clean(&tail)).flatten()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_under_the_root_by_prefix_or_by_tail() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("kernels")).unwrap();
        std::fs::write(dir.path().join("kernels/k.cu"), "a\n  b[i] = 1;\n").unwrap();
        let mut s = Sources::new(dir.path().to_path_buf());
        let inside = dir.path().join("kernels/k.cu").display().to_string();
        assert_eq!(s.resolve(&inside).relative.as_deref(), Some("kernels/k.cu"));
        assert_eq!(s.line(&inside, 2).as_deref(), Some("b[i] = 1;"));
        assert_eq!(s.resolve("/elsewhere/build/kernels/k.cu").relative.as_deref(), Some("kernels/k.cu"));
        assert_eq!(s.resolve("kernels/k.cu").relative.as_deref(), Some("kernels/k.cu"));
        let gone = s.resolve("/nowhere/x.cu");
        assert!(gone.relative.is_none() && gone.lines.is_none());
        assert_eq!(s.line(&inside, 0), None);
        assert_eq!(s.line(&inside, 9), None);
        s.embed(&[("/nowhere/x.cu".into(), "one\ntwo".into())]);
        assert_eq!(s.line("/nowhere/x.cu", 2).as_deref(), Some("two"));
    }
}
