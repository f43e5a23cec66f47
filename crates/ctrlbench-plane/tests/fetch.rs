//! Release downloads against a mirror served on loopback by the test: the
//! mirror is laid out as Kubernetes' and etcd's releases are (a
//! `.sha256` beside each Kubernetes binary; etcd's `.tar.gz` with
//! `SHA256SUMS`), from the etcd and kube-apiserver the other tests use
//! (found or built by `binaries::install`, downloads off). Each test
//! installs into a temporary cache of its own, never the user's.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ctrlbench_plane::binaries::{self, Lookup, Source};
use ctrlbench_plane::fetch::{self, Downloads, Fetched};
use ctrlbench_plane::{ControlPlane, DEFAULT_K8S_VERSION, PlaneOptions};
use sha2::{Digest, Sha256};

const V: &str = DEFAULT_K8S_VERSION;

/// What the mirror answers for one path.
#[derive(Clone)]
enum Body {
    File(PathBuf),
    Bytes(Arc<Vec<u8>>),
}

/// A mirror on 127.0.0.1 that counts the connections it accepts.
struct Mirror {
    url: String,
    accepts: Arc<AtomicUsize>,
}

/// Serves `files` (URL path → body) on a free loopback port, one request
/// per connection, until the test binary exits.
fn serve(files: HashMap<String, Body>) -> Mirror {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let url = format!("http://{}", listener.local_addr().unwrap());
    let accepts = Arc::new(AtomicUsize::new(0));
    let (files, counted) = (Arc::new(files), accepts.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            counted.fetch_add(1, Ordering::SeqCst);
            let files = files.clone();
            std::thread::spawn(move || {
                let _ = answer(stream, &files);
            });
        }
    });
    Mirror { url, accepts }
}

fn answer(stream: TcpStream, files: &HashMap<String, Body>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h == "\r\n" {
            break;
        }
    }
    let mut out = std::io::BufWriter::new(stream);
    let head =
        |len: u64| format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n");
    match files.get(&path) {
        Some(Body::File(p)) => {
            let mut f = std::fs::File::open(p)?;
            out.write_all(head(f.metadata()?.len()).as_bytes())?;
            std::io::copy(&mut f, &mut out)?;
        }
        Some(Body::Bytes(b)) => {
            out.write_all(head(b.len() as u64).as_bytes())?;
            out.write_all(b)?;
        }
        None => out.write_all(
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        )?,
    }
    out.flush()
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn file_sha(p: &Path) -> String {
    sha256_hex(&std::fs::read(p).unwrap())
}

/// The etcd and kube-apiserver the tests use (found, or built with
/// downloads off: the tests reach nothing but loopback).
fn originals() -> (PathBuf, PathBuf) {
    let off = Downloads {
        mirror: None,
        offline: true,
    };
    let b = binaries::install(V, &off).expect("etcd and kube-apiserver for the tests");
    (b.etcd, b.kube_apiserver)
}

/// A mirror's files, as the releases lay them out.
struct Layout {
    files: HashMap<String, Body>,
    api_path: String,
    etcd_dir: String,
    archive: String,
}

fn layout() -> Layout {
    let (etcd, api) = originals();
    let arch = fetch::arch().expect("a release architecture");
    let ev = binaries::etcd_version(V);
    let api_path = format!("/release/v{V}/bin/linux/{arch}/kube-apiserver");
    let etcd_dir = format!("/etcd/v{ev}");
    let archive = format!("etcd-v{ev}-linux-{arch}.tar.gz");
    let tgz = etcd_tgz(&etcd, &format!("etcd-v{ev}-linux-{arch}"));
    let sums = format!(
        "{}  etcd-v{ev}-linux-{arch}.zip\n{}  {archive}\n",
        "0".repeat(64),
        sha256_hex(&tgz)
    );
    let mut files = HashMap::new();
    files.insert(
        format!("{api_path}.sha256"),
        Body::Bytes(Arc::new(file_sha(&api).into_bytes())),
    );
    files.insert(api_path.clone(), Body::File(api));
    files.insert(format!("{etcd_dir}/{archive}"), Body::Bytes(Arc::new(tgz)));
    files.insert(
        format!("{etcd_dir}/SHA256SUMS"),
        Body::Bytes(Arc::new(sums.into_bytes())),
    );
    Layout {
        files,
        api_path,
        etcd_dir,
        archive,
    }
}

/// etcd's release archive: `<dir>/etcd` and a README beside it.
fn etcd_tgz(etcd: &Path, dir: &str) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    let readme = b"etcd release\n";
    let mut h = tar::Header::new_gnu();
    h.set_size(readme.len() as u64);
    h.set_mode(0o644);
    h.set_cksum();
    tar.append_data(&mut h, format!("{dir}/README.md"), &readme[..])
        .unwrap();
    tar.append_path_with_name(etcd, format!("{dir}/etcd"))
        .unwrap();
    tar.into_inner().unwrap().finish().unwrap()
}

fn mirror(url: &str) -> Downloads {
    Downloads {
        mirror: Some(url.to_string()),
        offline: false,
    }
}

/// What a cache directory holds (nothing when it does not exist).
fn listing(dir: &Path) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return vec![];
    };
    rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn a_mirror_is_fetched_verified_cached_and_a_plane_starts_from_it() {
    let l = layout();
    let (etcd, api) = originals();
    let m = serve(l.files.clone());
    let root = tempfile::tempdir().unwrap();
    let at = Lookup::new(root.path(), &[]);

    let b = binaries::install_in(&at, &mirror(&m.url), V).expect("install from the mirror");
    assert_eq!(b.source, Source::Downloaded);
    let dir = at.k8s_dir(V);
    assert_eq!(b.etcd, dir.join("etcd"));
    assert_eq!(b.kube_apiserver, dir.join("kube-apiserver"));
    for (got, want) in [(&b.etcd, &etcd), (&b.kube_apiserver, &api)] {
        assert_eq!(file_sha(got), file_sha(want), "{}", got.display());
        let mode = std::fs::metadata(got).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755, "{}", got.display());
    }
    let mut files = listing(&dir);
    files.sort();
    assert_eq!(
        files,
        [
            "etcd",
            "etcd.origin.json",
            "kube-apiserver",
            "kube-apiserver.origin.json"
        ],
        "no temporary file is left"
    );
    // Each keeps where it came from and its own hash, for the manifest.
    let etcd_url = format!("{}{}/{}", m.url, l.etcd_dir, l.archive);
    let api_url = format!("{}{}", m.url, l.api_path);
    for (bin, url, original) in [
        (&b.etcd, etcd_url, &etcd),
        (&b.kube_apiserver, api_url, &api),
    ] {
        let o = ctrlbench_plane::origin::of_cached(bin).unwrap();
        assert_eq!(o.how, "downloaded", "{}", bin.display());
        assert_eq!(o.from, url);
        assert_eq!(o.sha256, file_sha(original), "the binary's own SHA-256");
    }

    // A later run finds them in the cache, asking nothing.
    let asked = m.accepts.load(Ordering::SeqCst);
    let again = binaries::install_in(&at, &mirror(&m.url), V).unwrap();
    assert_eq!(again.source, Source::Cache);
    assert_eq!(m.accepts.load(Ordering::SeqCst), asked);

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let plane_dir = tempfile::tempdir().unwrap();
    let opts = PlaneOptions {
        etcd_fsync: false,
        install_crd: false,
        ..PlaneOptions::default()
    };
    let plane = rt
        .block_on(ControlPlane::start_in(
            &opts,
            &b,
            plane_dir.path().join("plane"),
            false,
        ))
        .expect("a plane from the downloaded binaries");
    assert_eq!(plane.version, format!("v{V}"));
    let names: Vec<&str> = plane.binaries.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["etcd", "kube-apiserver"]);
    plane.stop_within(Duration::from_secs(5));
}

/// Installs kube-apiserver alone (or etcd alone) and expects one refusal
/// line naming `what`, with nothing cached.
fn refused(files: HashMap<String, Body>, name: &str, what: &str) {
    let m = serve(files);
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("k8s").join(V);
    let e = fetch::fetch_all(&dir, &mirror(&m.url), V, &[name])
        .expect_err("a checksum mismatch is an error");
    let msg = format!("{e:#}");
    assert!(!msg.contains('\n'), "one line: {msg}");
    assert!(msg.contains(what), "{msg}");
    assert!(msg.contains("does not match"), "{msg}");
    assert_eq!(listing(&dir), Vec::<String>::new(), "nothing is cached");
}

#[test]
fn a_tampered_binary_is_refused_and_nothing_is_cached() {
    let mut l = layout();
    let Some(Body::File(api)) = l.files.get(&l.api_path).cloned() else {
        unreachable!()
    };
    let mut bytes = std::fs::read(api).unwrap();
    *bytes.last_mut().unwrap() ^= 0xff;
    l.files
        .insert(l.api_path.clone(), Body::Bytes(Arc::new(bytes)));
    refused(l.files, "kube-apiserver", &l.api_path);

    let mut l = layout();
    let key = format!("{}/{}", l.etcd_dir, l.archive);
    let Some(Body::Bytes(tgz)) = l.files.get(&key).cloned() else {
        unreachable!()
    };
    let mut tgz = tgz.to_vec();
    tgz[100] ^= 0xff;
    l.files.insert(key.clone(), Body::Bytes(Arc::new(tgz)));
    refused(l.files, "etcd", &key);
}

#[test]
fn a_tampered_checksum_is_refused_and_nothing_is_cached() {
    let mut l = layout();
    let sum = format!("{}.sha256", l.api_path);
    l.files
        .insert(sum, Body::Bytes(Arc::new("ab".repeat(32).into_bytes())));
    refused(l.files, "kube-apiserver", &l.api_path);

    let mut l = layout();
    let sums = format!("{}/SHA256SUMS", l.etcd_dir);
    let text = format!("{}  {}\n", "cd".repeat(32), l.archive);
    l.files
        .insert(sums, Body::Bytes(Arc::new(text.into_bytes())));
    refused(l.files, "etcd", &l.archive);
}

#[test]
fn an_unreachable_mirror_falls_back_to_the_build() {
    // A port nothing listens on: bound, then closed.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("k8s").join(V);
    let d = mirror(&format!("http://127.0.0.1:{port}/"));
    let out = fetch::fetch_all(&dir, &d, V, &["etcd", "kube-apiserver"]).unwrap();
    assert_eq!(out.len(), 2);
    for (name, f) in out {
        let Fetched::Build(why) = f else {
            panic!("{name}: {f:?}")
        };
        assert!(why.contains("cannot connect"), "{name}: {why}");
        assert!(why.contains(&format!("127.0.0.1:{port}")), "{why}");
        assert!(!why.contains('\n'), "{why}");
    }
    assert!(!dir.exists(), "nothing is cached");
}

#[test]
fn offline_makes_no_connection() {
    let m = serve(HashMap::new());
    let env = |k: &str| match k {
        "CTRLBENCH_OFFLINE" => Some("1".to_string()),
        "CTRLBENCH_MIRROR" => Some(m.url.clone()),
        _ => None,
    };
    let d = Downloads::from_vars(env).unwrap();
    assert!(d.offline);
    let root = tempfile::tempdir().unwrap();
    let at = Lookup::new(root.path(), &[]);
    let names = ["etcd", "kube-apiserver", "kube-scheduler"];
    let out = fetch::fetch_missing(&at.k8s_dir(V), &d, V, &names).unwrap();
    assert_eq!(out.len(), 3);
    for (name, f) in &out {
        assert!(
            matches!(f, Fetched::Build(why) if why.contains("CTRLBENCH_OFFLINE")),
            "{name}: {f:?}"
        );
    }
    assert_eq!(m.accepts.load(Ordering::SeqCst), 0, "no connection");
    assert!(!at.k8s_dir(V).exists());
}

#[test]
fn a_mirror_that_is_not_http_is_one_line() {
    for bad in ["ftp://mirror.example/k8s", "file:///srv/mirror", "mirror"] {
        let e = Downloads::from_vars(|k| (k == "CTRLBENCH_MIRROR").then(|| bad.to_string()))
            .expect_err(bad);
        let msg = format!("{e:#}");
        assert!(msg.starts_with("CTRLBENCH_MIRROR: "), "{msg}");
        assert!(msg.contains("http://") && !msg.contains('\n'), "{msg}");

        let root = tempfile::tempdir().unwrap();
        let e = fetch::fetch_all(root.path(), &mirror(bad), V, &["etcd"]).expect_err(bad);
        assert!(!format!("{e:#}").contains('\n'));
    }
    let e = Downloads::from_vars(|k| (k == "CTRLBENCH_OFFLINE").then(|| "maybe".to_string()))
        .expect_err("offline is 1 or 0");
    assert!(format!("{e:#}").contains("CTRLBENCH_OFFLINE"));
}

#[test]
fn a_version_the_mirror_lacks_falls_back_and_says_so() {
    // Kubernetes 1.99.0 is paired with the etcd the layout has: a mirror
    // without etcd's directory lacks that too.
    let l = layout();
    let files = l
        .files
        .into_iter()
        .filter(|(p, _)| !p.starts_with(&l.etcd_dir))
        .collect();
    let m = serve(files);
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("k8s").join("1.99.0");
    let d = mirror(&m.url);
    let out = fetch::fetch_all(&dir, &d, "1.99.0", &["etcd", "kube-apiserver"]).unwrap();
    assert_eq!(out.len(), 2);
    for (name, f) in out {
        let Fetched::Build(why) = f else {
            panic!("{name}: {f:?}")
        };
        assert!(why.contains("HTTP 404"), "{name}: {why}");
        assert!(why.contains(&m.url), "{why}");
        if name == "kube-apiserver" {
            assert!(why.contains("/release/v1.99.0/"), "{why}");
        }
    }
    assert!(!dir.exists(), "nothing is cached");
}
