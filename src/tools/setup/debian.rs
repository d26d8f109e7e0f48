//! Debian packages without installing them: Debian bookworm's non-free archive through a
//! private apt configuration in the tool home (`<home>/apt/`: its own sources list, package
//! lists and cache; the system's apt configuration is neither read nor changed, and no root is
//! needed), `apt-get download`, and a `.deb`'s files unpacked into a folder (its `data.tar.*`
//! member, read here, then `tar`).

use std::ffi::OsString;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::{need, run, Request, SetupError};
use crate::tools::process::Cmd;

/// The key Debian signs its archive with (package `debian-archive-keyring`).
pub(super) const KEYRING: &str = "/usr/share/keyrings/debian-archive-keyring.gpg";

/// Debian bookworm's archive; `{}` is the component: non-free, where `nsight-compute-target`
/// and the CUDA 11.8 toolkit are, or main, where the toolkit's C++ libraries (libcu++, CUB,
/// Thrust) are.
const SOURCES: &str = "Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: {}
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
";

/// A component of Debian's archive, each with its own private lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Component {
    /// `non-free`: ncu, the CUDA 11.8 toolkit.
    NonFree,
    /// `main`: libcu++, CUB, Thrust.
    Main,
}

impl Component {
    fn name(self) -> &'static str {
        match self {
            Component::NonFree => "non-free",
            Component::Main => "main",
        }
    }
}

/// apt-get with the private configuration under `<home>/apt/` (non-free) or `<home>/apt/main/`.
pub(super) struct Apt {
    apt_get: PathBuf,
    dir: PathBuf,
    component: Component,
}

impl Apt {
    /// apt-get and Debian's archive key, or why packages cannot be fetched here (`for_what`
    /// names what needs them, `otherwise` the way around it).
    pub(super) fn new(req: &Request, for_what: &str, otherwise: &str) -> Result<Apt, SetupError> {
        Apt::of(req, Component::NonFree, for_what, otherwise)
    }

    /// The same for a `component` of the archive.
    pub(super) fn of(req: &Request, component: Component, for_what: &str, otherwise: &str) -> Result<Apt, SetupError> {
        let apt_get = super::program(req.path.as_deref(), "apt-get").ok_or_else(|| {
            SetupError::cannot(
                format!("{for_what} comes from Debian's archive, and this system has no apt-get"),
                otherwise.to_string(),
            )
        })?;
        if !Path::new(KEYRING).is_file() {
            return Err(SetupError::cannot(
                format!("{for_what} comes from Debian's archive, and its signing key `{KEYRING}` is missing"),
                format!("run `{}`, or {otherwise}", super::apt_install(req.root, &["debian-archive-keyring"])),
            ));
        }
        let dir = match component {
            Component::NonFree => req.home.root.join("apt"),
            Component::Main => req.home.root.join("apt/main"),
        };
        Ok(Apt { apt_get, dir, component })
    }

    /// What the plan says before anything is fetched.
    pub(super) fn describe() -> &'static str {
        "Debian bookworm non-free (a private apt configuration)"
    }

    fn cmd(&self) -> Cmd {
        let opt = |k: &str, v: &Path| [OsString::from("-o"), OsString::from(format!("{k}={}", v.display()))];
        Cmd::new(&self.apt_get)
            .args(opt("Dir::Etc::sourcelist", &self.dir.join("nonfree.sources")))
            .args(["-o", "Dir::Etc::sourceparts=-"])
            .args(opt("Dir::State::Lists", &self.dir.join("lists")))
            .args(opt("Dir::Cache", &self.dir.join("cache")))
            // Private lists need no lock; as root, apt would otherwise download as `_apt`, who
            // cannot write into a home under /root.
            .args(["-o", "Debug::NoLocking=1", "-o", "APT::Sandbox::User=root", "-qq"])
    }

    /// Fetch the package lists of the non-free archive (about 100 KB).
    pub(super) fn update(&self) -> Result<(), SetupError> {
        for d in [self.dir.join("lists/partial"), self.dir.join("cache/archives/partial")] {
            std::fs::create_dir_all(&d).map_err(|e| SetupError::io(&d, e))?;
        }
        let sources = self.dir.join("nonfree.sources");
        let text = SOURCES.replace("{}", self.component.name());
        std::fs::write(&sources, text).map_err(|e| SetupError::io(&sources, e))?;
        let what = format!("cannot read Debian's {} package lists (apt-get update)", self.component.name());
        run(&self.cmd().arg("update"), &what)?;
        Ok(())
    }

    /// Download `packages` into `into`; the `.deb` of each, in the same order.
    pub(super) fn download(&self, packages: &[&str], into: &Path) -> Result<Vec<PathBuf>, SetupError> {
        std::fs::create_dir_all(into).map_err(|e| SetupError::io(into, e))?;
        let mut cmd = self.cmd().arg("download").args(packages.iter().copied());
        cmd.cwd = Some(into.to_path_buf());
        let what = format!("cannot download {} from Debian's {} archive", packages.join(" "), self.component.name());
        run(&cmd, &what)?;
        packages
            .iter()
            .map(|p| {
                let prefix = format!("{p}_");
                std::fs::read_dir(into)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path())
                    .find(|f| f.file_name().is_some_and(|n| n.to_string_lossy().starts_with(&prefix)))
                    .ok_or_else(|| {
                        SetupError::cannot(format!("apt-get downloaded no `{p}`"), "run `coalprof setup` again")
                    })
            })
            .collect()
    }
}

/// Unpack the files of `deb` into `dest` (as `dpkg -x` does), or only the `members` given
/// (`./usr/include/*`: tar's wildcards).
pub(super) fn unpack(req: &Request, deb: &Path, dest: &Path, members: &[&str]) -> Result<(), SetupError> {
    let tar = need(req, "tar", "tar", "setup unpacks archives with it")?;
    let data = data_member(deb, deb.parent().unwrap_or(Path::new("."))).map_err(|e| {
        SetupError::cannot(format!("`{}` is no Debian package: {e}", deb.display()), "run `coalprof setup` again")
    })?;
    std::fs::create_dir_all(dest).map_err(|e| SetupError::io(dest, e))?;
    let mut cmd = Cmd::new(tar).arg("-x");
    // Debian's xz members are written in blocks, which xz 5.4 decompresses on every core (an
    // older one reads them one by one, as tar's own choice of xz does): the 2.7 GB of
    // nvidia-cuda-dev's files in 25 s instead of 47 on two cores.
    if data.extension().is_some_and(|e| e == "xz") {
        cmd = cmd.arg("--use-compress-program=xz -T0");
    }
    cmd = cmd.arg("-f").arg(&data).arg("-C").arg(dest);
    if !members.is_empty() {
        cmd = cmd.arg("--wildcards").args(members.iter().copied());
    }
    let unpacked = run(&cmd, &format!("cannot unpack `{}`", deb.display()));
    let _ = std::fs::remove_file(&data);
    unpacked.map(|_| ())
}

/// Write the `data.tar.*` member of the `ar` archive `deb` (a `.deb`'s files) into `dir`;
/// its path. Read here rather than with `dpkg-deb --fsys-tarfile | tar`: no shell pipeline.
fn data_member(deb: &Path, dir: &Path) -> std::io::Result<PathBuf> {
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
    let mut f = std::fs::File::open(deb)?;
    let mut magic = [0u8; 8];
    f.read_exact(&mut magic)?;
    if &magic != b"!<arch>\n" {
        return Err(bad("no ar archive"));
    }
    loop {
        // Each member: a 60-byte header (name 0..16, size in decimal 48..58), then its data,
        // padded to an even length.
        let mut h = [0u8; 60];
        if f.read_exact(&mut h).is_err() {
            return Err(bad("no data.tar member"));
        }
        let name = String::from_utf8_lossy(&h[..16]).trim_end().trim_end_matches('/').to_string();
        let size: u64 = String::from_utf8_lossy(&h[48..58]).trim().parse().map_err(|_| bad("a bad member size"))?;
        if name.starts_with("data.tar") && !name.contains('/') {
            let out = dir.join(&name);
            let mut w = std::fs::File::create(&out)?;
            let copied = std::io::copy(&mut (&mut f).take(size), &mut w)?;
            if copied != size {
                return Err(bad("a truncated data.tar member"));
            }
            return Ok(out);
        }
        f.seek(SeekFrom::Current(i64::try_from(size + size % 2).map_err(|_| bad("a bad member size"))?))?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An `ar` archive as the format defines it: `!<arch>\n`, then per member a 60-byte header
    /// (name, mtime, uid, gid, mode, size, "`\n"), the data, and a pad byte after odd sizes.
    fn ar(members: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = b"!<arch>\n".to_vec();
        for (name, data) in members {
            let header = format!("{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n", name, 0, 0, 0, 100644, data.len());
            assert_eq!(header.len(), 60);
            out.extend_from_slice(header.as_bytes());
            out.extend_from_slice(data);
            if data.len() % 2 == 1 {
                out.push(b'\n');
            }
        }
        out
    }

    #[test]
    fn the_data_member_is_found_after_odd_sized_members() {
        let d = tempfile::tempdir().unwrap();
        let deb = d.path().join("x_1.0_amd64.deb");
        std::fs::write(&deb, ar(&[("debian-binary", b"2.0\n"), ("control.tar.xz", b"odd"), ("data.tar.xz", b"DATA!")]))
            .unwrap();
        let out = data_member(&deb, d.path()).unwrap();
        assert_eq!(out, d.path().join("data.tar.xz"));
        assert_eq!(std::fs::read(out).unwrap(), b"DATA!");
    }

    #[test]
    fn a_file_that_is_no_package_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        let deb = d.path().join("bad.deb");
        std::fs::write(&deb, b"<html>proxy error</html>").unwrap();
        assert!(data_member(&deb, d.path()).is_err());
        std::fs::write(&deb, ar(&[("debian-binary", b"2.0\n")])).unwrap();
        assert!(data_member(&deb, d.path()).unwrap_err().to_string().contains("no data.tar"));
        let mut truncated = ar(&[("data.tar.xz", b"0123456789")]);
        truncated.truncate(truncated.len() - 4);
        std::fs::write(&deb, truncated).unwrap();
        assert!(data_member(&deb, d.path()).is_err());
    }
}
