//! Real services for tests, each on a free loopback port below 32768 with its files in a
//! temporary directory: `redis-server` and `nginx`. Each is stopped when dropped.
//!
//! When the program is missing, [`available`] says so: tests skip with a message,
//! except under `FERRY_CI` where a missing program fails the test.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Whether `program` can be run here. Without it, panics under `FERRY_CI` (CI installs
/// it) and otherwise prints why the test is skipped and returns `false`.
pub fn available(program: &str) -> bool {
    let found = find(program).is_some();
    if !found {
        if std::env::var_os("FERRY_CI").is_some() {
            panic!("{program} is required here (apt-get install redis-server nginx)");
        }
        eprintln!("skipped: {program} is not installed");
    }
    found
}

fn find(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/usr/bin".into(), "/sbin".into()])
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// A free loopback port in 20000..30000 (below the ephemeral range, so a port a test
/// frees can be bound again by a restarted service).
pub fn free_port() -> u16 {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0)
        ^ std::process::id().wrapping_mul(2_654_435_761);
    let mut x = seed | 1;
    for _ in 0..500 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let port = 20000 + (x % 10000) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free loopback port in 20000..30000");
}

/// Waits until something accepts connections on `port`.
pub fn wait_for_port(port: u16, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    while Instant::now() < deadline {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn stop_child(child: &mut Option<Child>) {
    if let Some(mut c) = child.take() {
        let _ = c.kill();
        let _ = c.wait();
    }
}

/// A `redis-server` of its own: no persistence, loopback only.
pub struct RedisServer {
    port: u16,
    dir: tempfile::TempDir,
    child: Option<Child>,
}

impl RedisServer {
    /// Starts one on a free port and waits until it accepts connections.
    pub fn start() -> RedisServer {
        let mut server = RedisServer {
            port: free_port(),
            dir: tempfile::tempdir().expect("temp dir"),
            child: None,
        };
        server.restart();
        server
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops it (its data goes with it).
    pub fn stop(&mut self) {
        stop_child(&mut self.child);
    }

    /// Starts it again on the same port (stopping it first if it runs).
    pub fn restart(&mut self) {
        self.stop();
        let child = Command::new(find("redis-server").expect("redis-server"))
            .args(["--port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(self.dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        self.child = Some(child);
        assert!(
            wait_for_port(self.port, Duration::from_secs(10)),
            "redis-server did not start on port {}",
            self.port
        );
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// An `nginx` of its own, run in the foreground with a configuration of the test's.
pub struct Nginx {
    port: u16,
    _dir: tempfile::TempDir,
    child: Option<Child>,
}

impl Nginx {
    /// Starts nginx with `http_body` inside its `http { }` block, where `{port}` is the
    /// port it listens on; logs and temporary files go to its own directory. Waits
    /// until it accepts connections.
    pub fn start(http_body: &str) -> Nginx {
        let dir = tempfile::tempdir().expect("temp dir");
        let port = free_port();
        let d = dir.path().display().to_string();
        // `user root` lets the workers use the (private) temporary directory when the
        // master runs as root; nginx ignores it otherwise.
        let conf = format!(
            "daemon off;\nuser root;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log warn;\n\
             events {{ worker_connections 512; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n\
             fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n{}\n}}\n",
            http_body.replace("{port}", &port.to_string())
        );
        let path = dir.path().join("nginx.conf");
        std::fs::write(&path, conf).expect("write nginx.conf");
        let child = Command::new(find("nginx").expect("nginx"))
            .arg("-p")
            .arg(dir.path())
            .arg("-c")
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("stderr.log")).expect("log file"))
            .spawn()
            .expect("start nginx");
        let nginx = Nginx {
            port,
            _dir: dir,
            child: Some(child),
        };
        assert!(
            wait_for_port(port, Duration::from_secs(10)),
            "nginx did not start: {}",
            nginx.error_log()
        );
        nginx
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its error log so far.
    pub fn error_log(&self) -> String {
        let read = |f: &str| std::fs::read_to_string(self.dir().join(f)).unwrap_or_default();
        format!("{}{}", read("stderr.log"), read("error.log"))
    }

    fn dir(&self) -> &Path {
        self._dir.path()
    }
}

impl Drop for Nginx {
    /// Stops the master with `nginx -s stop` (a fast shutdown, which ends its workers
    /// too) and waits for it; kills it only when that fails. Killing the master alone
    /// would leave its workers serving the port, answering 502 to whatever binds it next.
    fn drop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let stopped = find("nginx").is_some_and(|nginx| {
            Command::new(nginx)
                .arg("-p")
                .arg(self.dir())
                .arg("-c")
                .arg(self.dir().join("nginx.conf"))
                .args(["-s", "stop"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        while stopped && Instant::now() < deadline {
            if !matches!(child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}
