//! Where credentials live between requests and between runs: one record per
//! authorization server (issuer), holding the client registration and the tokens for
//! each resource (client-registration.mdx, Authorization Server Binding;
//! security-considerations.mdx, Token Theft).

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::AuthError;
use crate::registration::RegisteredClient;
use crate::token::Tokens;

/// Everything the client holds for one authorization server.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssuerRecord {
    /// The issuer identifier: the key of the record.
    pub issuer: String,
    /// The client registered with this issuer, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<RegisteredClient>,
    /// Tokens by resource (the canonical URI of the MCP server).
    #[serde(default)]
    pub tokens: BTreeMap<String, Tokens>,
}

impl IssuerRecord {
    /// An empty record for `issuer`.
    pub fn new(issuer: impl Into<String>) -> Self {
        IssuerRecord {
            issuer: issuer.into(),
            ..Default::default()
        }
    }
}

/// Storage for [`IssuerRecord`]s, keyed by issuer. Implementations must fail (not
/// pretend) when the backing store is unavailable: the client then fails closed.
pub trait TokenStore: Send + Sync + 'static {
    /// The record of `issuer`, if there is one.
    fn load(&self, issuer: &str) -> Result<Option<IssuerRecord>, AuthError>;
    /// Stores `record` under its issuer, replacing what was there.
    fn save(&self, record: &IssuerRecord) -> Result<(), AuthError>;
    /// Forgets `issuer`.
    fn remove(&self, issuer: &str) -> Result<(), AuthError>;
}

/// A store in memory, for the life of the process.
#[derive(Debug, Default)]
pub struct MemoryTokenStore {
    records: Mutex<HashMap<String, IssuerRecord>>,
}

impl MemoryTokenStore {
    /// An empty store.
    pub fn new() -> Self {
        MemoryTokenStore::default()
    }
}

impl TokenStore for MemoryTokenStore {
    fn load(&self, issuer: &str) -> Result<Option<IssuerRecord>, AuthError> {
        Ok(self.records.lock().get(issuer).cloned())
    }

    fn save(&self, record: &IssuerRecord) -> Result<(), AuthError> {
        self.records
            .lock()
            .insert(record.issuer.clone(), record.clone());
        Ok(())
    }

    fn remove(&self, issuer: &str) -> Result<(), AuthError> {
        self.records.lock().remove(issuer);
        Ok(())
    }
}

/// A store on disk: one JSON file per issuer in a directory, named by the SHA-256 of
/// the issuer, readable by the owner only (mode 0600 in a 0700 directory on Unix), and
/// written atomically (a temporary file in the same directory, synced, then renamed).
#[derive(Debug)]
pub struct FileTokenStore {
    dir: PathBuf,
}

/// The largest record file read.
const MAX_RECORD: u64 = 1024 * 1024;

impl FileTokenStore {
    /// A store in `dir`, created (owner-only) if missing.
    pub fn new(dir: impl Into<PathBuf>) -> Result<Self, AuthError> {
        let dir = dir.into();
        fs::create_dir_all(&dir).map_err(|e| store_err("creating", &dir, e))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&dir, fs::Permissions::from_mode(0o700))
                .map_err(|e| store_err("protecting", &dir, e))?;
        }
        Ok(FileTokenStore { dir })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file that holds `issuer`'s record.
    pub fn path_for(&self, issuer: &str) -> PathBuf {
        let digest = Sha256::digest(issuer.as_bytes());
        let name: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("{name}.json"))
    }
}

fn store_err(what: &str, path: &Path, e: impl std::fmt::Display) -> AuthError {
    AuthError::Store(format!("{what} {}: {e}", path.display()))
}

impl TokenStore for FileTokenStore {
    fn load(&self, issuer: &str) -> Result<Option<IssuerRecord>, AuthError> {
        let path = self.path_for(issuer);
        let meta = match fs::metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(store_err("reading", &path, e)),
        };
        if meta.len() > MAX_RECORD {
            return Err(store_err("reading", &path, "the file is too large"));
        }
        let bytes = fs::read(&path).map_err(|e| store_err("reading", &path, e))?;
        let record: IssuerRecord =
            serde_json::from_slice(&bytes).map_err(|e| store_err("parsing", &path, e))?;
        if record.issuer != issuer {
            return Err(store_err(
                "reading",
                &path,
                "the record is for another issuer",
            ));
        }
        Ok(Some(record))
    }

    fn save(&self, record: &IssuerRecord) -> Result<(), AuthError> {
        let path = self.path_for(&record.issuer);
        let json =
            serde_json::to_vec_pretty(record).map_err(|e| store_err("encoding", &path, e))?;
        // tempfile creates the file with mode 0600 on Unix.
        let mut tmp = tempfile::NamedTempFile::new_in(&self.dir)
            .map_err(|e| store_err("writing", &self.dir, e))?;
        tmp.write_all(&json)
            .and_then(|()| tmp.as_file().sync_all())
            .map_err(|e| store_err("writing", tmp.path(), e))?;
        tmp.persist(&path)
            .map_err(|e| store_err("replacing", &path, e.error))?;
        if let Ok(d) = fs::File::open(&self.dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }

    fn remove(&self, issuer: &str) -> Result<(), AuthError> {
        let path = self.path_for(issuer);
        match fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(store_err("removing", &path, e)),
        }
    }
}
