//! The folder `confirm_delete` acts in: the server owns it, and nothing outside it is ever
//! touched.
//!
//! A path is taken relative to the sandbox. Absolute paths and `..` are refused as
//! written; directories on the way are canonicalized and must stay inside; a symbolic link
//! is never followed out (one that leads outside is refused, one inside is deleted as a
//! link, its target kept). Only files are deleted, never directories.

use std::borrow::Cow;
use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// The demo files a fresh sandbox starts with: (relative path, contents).
pub const DEMO_FILES: [(&str, &str); 3] = [
    (
        "notes.txt",
        "Shopping: bread, milk, coffee.\nCall the plumber on Tuesday.\nReturn the library books.\n",
    ),
    (
        "draft.md",
        "# Draft\n\nA first paragraph that nobody will read before it is rewritten.\n",
    ),
    (
        "old/report.csv",
        "quarter,revenue\nQ1,1200\nQ2,1350\nQ3,990\nQ4,1410\n",
    ),
];

/// The start of the name of a temporary sandbox folder.
pub const TEMPORARY_PREFIX: &str = "ferry-everything-sandbox-";

/// The folder `confirm_delete` deletes files in.
pub struct Sandbox {
    root: PathBuf,
    /// `root` as shown in questions and outcomes, made once.
    shown_root: Arc<str>,
    /// A folder made for this process, removed when the sandbox is dropped.
    _owned: Option<tempfile::TempDir>,
}

impl fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sandbox")
            .field("root", &self.root)
            .field("temporary", &self._owned.is_some())
            .finish()
    }
}

impl Sandbox {
    /// The folder `dir` (made if missing), kept when the sandbox is dropped.
    pub fn open(dir: impl AsRef<Path>) -> io::Result<Sandbox> {
        std::fs::create_dir_all(dir.as_ref())?;
        let root = dir.as_ref().canonicalize()?;
        if !root.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a directory", root.display()),
            ));
        }
        Ok(Sandbox {
            shown_root: shown(&root),
            root,
            _owned: None,
        })
    }

    /// A fresh folder under the system's temporary directory
    /// (`ferry-everything-sandbox-XXXXXX`), removed when the sandbox is dropped.
    pub fn temporary() -> io::Result<Sandbox> {
        let dir = tempfile::Builder::new()
            .prefix(TEMPORARY_PREFIX)
            .tempdir()?;
        let root = dir.path().canonicalize()?;
        Ok(Sandbox {
            shown_root: shown(&root),
            root,
            _owned: Some(dir),
        })
    }

    /// The sandbox's folder, canonical.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The sandbox's folder as text (lossy where it is not UTF-8), as questions and
    /// outcomes show it.
    pub fn shown_root(&self) -> &str {
        &self.shown_root
    }

    /// Writes the [`DEMO_FILES`] that are not there yet (an existing file is left as it is).
    pub fn seed_demo_files(&self) -> io::Result<()> {
        for (relative, contents) in DEMO_FILES {
            let path = self.root.join(relative);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut file) => io::Write::write_all(&mut file, contents.as_bytes())?,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Checks `path` and looks at what it names, following no link out of the sandbox.
    ///
    /// Costs one `symlink_metadata` for a file directly in the sandbox, plus one
    /// canonicalization of the folders on the way for a nested path.
    pub fn inspect(&self, path: &str) -> Result<Target, Refusal> {
        let mut parts = Vec::new();
        for component in Path::new(path).components() {
            match component {
                Component::Prefix(_) | Component::RootDir => {
                    return Err(Refusal::Absolute(path.to_owned()));
                }
                Component::ParentDir => return Err(Refusal::ParentDir(path.to_owned())),
                Component::CurDir => {}
                Component::Normal(part) => parts.push(part),
            }
        }
        let Some((name, folders)) = parts.split_last() else {
            return Err(Refusal::Empty);
        };
        let shown = match parts.as_slice() {
            [only] => only.to_string_lossy().into_owned(),
            _ => parts
                .iter()
                .map(|p| p.to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
        };
        let missing = |shown: String| Target {
            shown,
            full: PathBuf::new(),
            kind: TargetKind::Missing,
        };
        let parent = if folders.is_empty() {
            Cow::Borrowed(self.root.as_path())
        } else {
            let written: PathBuf = folders.iter().collect();
            match self.root.join(&written).canonicalize() {
                Ok(parent) if parent.starts_with(&self.root) => Cow::Owned(parent),
                Ok(_) => return Err(Refusal::LeadsOutside(shown)),
                Err(e) if is_missing(&e) => return Ok(missing(shown)),
                Err(e) => return Err(Refusal::Unreadable(shown, e)),
            }
        };
        let full = parent.join(name);
        let meta = match std::fs::symlink_metadata(&full) {
            Ok(meta) => meta,
            Err(e) if is_missing(&e) => return Ok(missing(shown)),
            Err(e) => return Err(Refusal::Unreadable(shown, e)),
        };
        let kind = if meta.is_symlink() {
            match full.canonicalize() {
                Ok(target) => match target.strip_prefix(&self.root) {
                    Ok(inside) => TargetKind::Link(inside.to_path_buf()),
                    Err(_) => return Err(Refusal::LeadsOutside(shown)),
                },
                Err(_) => return Err(Refusal::DanglingLink(shown)),
            }
        } else if meta.is_dir() {
            return Err(Refusal::Directory(shown));
        } else {
            TargetKind::File(meta.len())
        };
        Ok(Target { shown, full, kind })
    }

    /// Deletes what [`inspect`](Sandbox::inspect) found: a file, or a link (never its
    /// target). A file gone since is reported as missing.
    pub fn delete(&self, target: Target) -> Deletion {
        let kind = match target.kind {
            TargetKind::Missing => DeletionKind::Missing,
            TargetKind::File(bytes) => match std::fs::remove_file(&target.full) {
                Ok(()) => DeletionKind::File(bytes),
                Err(e) if is_missing(&e) => DeletionKind::Missing,
                Err(e) => DeletionKind::Failed(e),
            },
            TargetKind::Link(to) => match std::fs::remove_file(&target.full) {
                Ok(()) => DeletionKind::Link(to),
                Err(e) if is_missing(&e) => DeletionKind::Missing,
                Err(e) => DeletionKind::Failed(e),
            },
        };
        Deletion {
            shown: target.shown,
            root: self.shown_root.clone(),
            kind,
        }
    }
}

/// A folder as text, lossy where it is not UTF-8.
fn shown(root: &Path) -> Arc<str> {
    Arc::from(root.to_string_lossy())
}

fn is_missing(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// What a checked path names.
#[derive(Debug)]
pub struct Target {
    shown: String,
    full: PathBuf,
    kind: TargetKind,
}

impl Target {
    /// The path as the sandbox reads it (relative, `/`-separated, no `.`).
    pub fn path(&self) -> &str {
        &self.shown
    }

    /// Whether there is something to delete.
    pub fn exists(&self) -> bool {
        !matches!(self.kind, TargetKind::Missing)
    }
}

#[derive(Debug)]
enum TargetKind {
    Missing,
    File(u64),
    /// A link to this path (relative to the sandbox), inside it.
    Link(PathBuf),
}

/// Why a path was refused before anything was asked or touched.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// No file named.
    #[error("give the path of a file in the sandbox to delete")]
    Empty,
    /// An absolute path.
    #[error(
        "refused: {0} is an absolute path; give a path relative to the sandbox (e.g. notes.txt)"
    )]
    Absolute(String),
    /// A path with `..`.
    #[error("refused: {0} contains `..`; paths stay inside the sandbox")]
    ParentDir(String),
    /// A symbolic link (of the file or of a folder on the way) leads outside.
    #[error("refused: {0} is a symbolic link that leads outside the sandbox")]
    LeadsOutside(String),
    /// A symbolic link whose target does not exist.
    #[error("refused: {0} is a symbolic link to nothing that exists; it is left alone")]
    DanglingLink(String),
    /// A directory.
    #[error("refused: {0} is a directory; confirm_delete deletes files only")]
    Directory(String),
    /// The path could not be read.
    #[error("refused: {0} cannot be checked: {1}")]
    Unreadable(String, #[source] io::Error),
}

/// What [`Sandbox::delete`] really did; its `Display` says so.
#[derive(Debug)]
pub struct Deletion {
    shown: String,
    root: Arc<str>,
    kind: DeletionKind,
}

#[derive(Debug)]
enum DeletionKind {
    File(u64),
    Link(PathBuf),
    Missing,
    Failed(io::Error),
}

impl Deletion {
    /// Whether a file or link was really deleted.
    pub fn deleted(&self) -> bool {
        matches!(self.kind, DeletionKind::File(_) | DeletionKind::Link(_))
    }

    /// Whether the deletion failed (permissions, a busy file...): a tool error.
    pub fn failed(&self) -> bool {
        matches!(self.kind, DeletionKind::Failed(_))
    }
}

impl fmt::Display for Deletion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (path, root) = (&self.shown, &self.root);
        match &self.kind {
            DeletionKind::File(1) => write!(f, "Deleted {path} (1 byte) from {root}"),
            DeletionKind::File(bytes) => write!(f, "Deleted {path} ({bytes} bytes) from {root}"),
            DeletionKind::Link(to) => write!(
                f,
                "Deleted the symbolic link {path} from {root} (its target {} is kept)",
                to.display()
            ),
            DeletionKind::Missing => {
                write!(f, "Nothing deleted: {path} does not exist in {root}")
            }
            DeletionKind::Failed(e) => write!(f, "Could not delete {path} from {root}: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seeded() -> Sandbox {
        let sandbox = Sandbox::temporary().unwrap();
        sandbox.seed_demo_files().unwrap();
        sandbox
    }

    #[test]
    fn deletes_a_file_and_says_how_big_it_was() {
        let sandbox = seeded();
        let target = sandbox.inspect("./notes.txt").unwrap();
        assert_eq!(target.path(), "notes.txt");
        let done = sandbox.delete(target).to_string();
        let bytes = DEMO_FILES[0].1.len();
        assert_eq!(
            done,
            format!(
                "Deleted notes.txt ({bytes} bytes) from {}",
                sandbox.root().display()
            )
        );
        assert!(!sandbox.root().join("notes.txt").exists());
        let again = sandbox.inspect("notes.txt").unwrap();
        assert!(!again.exists());
        assert!(
            sandbox
                .delete(again)
                .to_string()
                .starts_with("Nothing deleted: notes.txt does not exist in ")
        );
    }

    #[test]
    fn nested_files_and_missing_folders() {
        let sandbox = seeded();
        assert!(sandbox.inspect("old/report.csv").unwrap().exists());
        assert!(!sandbox.inspect("no/such/file").unwrap().exists());
        assert!(!sandbox.inspect("notes.txt/under-a-file").unwrap().exists());
    }

    #[test]
    fn refuses_escapes_and_directories() {
        let sandbox = seeded();
        assert!(matches!(
            sandbox.inspect("/etc/passwd"),
            Err(Refusal::Absolute(_))
        ));
        assert!(matches!(
            sandbox.inspect("../x"),
            Err(Refusal::ParentDir(_))
        ));
        assert!(matches!(
            sandbox.inspect("old/../notes.txt"),
            Err(Refusal::ParentDir(_))
        ));
        assert!(matches!(sandbox.inspect("old"), Err(Refusal::Directory(_))));
        assert!(matches!(sandbox.inspect(""), Err(Refusal::Empty)));
        assert!(matches!(sandbox.inspect("."), Err(Refusal::Empty)));
    }

    #[cfg(unix)]
    #[test]
    fn never_follows_a_link_out() {
        let sandbox = seeded();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("precious"), "keep me").unwrap();
        let root = sandbox.root();
        std::os::unix::fs::symlink(outside.path().join("precious"), root.join("file-link"))
            .unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("dir-link")).unwrap();
        std::os::unix::fs::symlink(root.join("gone"), root.join("dangling")).unwrap();
        std::os::unix::fs::symlink(root.join("draft.md"), root.join("inside-link")).unwrap();
        assert!(matches!(
            sandbox.inspect("file-link"),
            Err(Refusal::LeadsOutside(_))
        ));
        assert!(matches!(
            sandbox.inspect("dir-link/precious"),
            Err(Refusal::LeadsOutside(_))
        ));
        assert!(matches!(
            sandbox.inspect("dangling"),
            Err(Refusal::DanglingLink(_))
        ));
        assert!(outside.path().join("precious").exists());
        let link = sandbox.inspect("inside-link").unwrap();
        let done = sandbox.delete(link).to_string();
        assert!(
            done.starts_with("Deleted the symbolic link inside-link"),
            "{done}"
        );
        assert!(root.join("draft.md").exists());
        assert!(!root.join("inside-link").exists());
    }

    #[test]
    fn an_opened_folder_is_kept_and_seeding_keeps_existing_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
        {
            let sandbox = Sandbox::open(dir.path().join(".")).unwrap();
            sandbox.seed_demo_files().unwrap();
        }
        assert_eq!(
            std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
            "mine"
        );
        assert!(dir.path().join("old/report.csv").exists());
    }

    #[test]
    fn a_temporary_sandbox_is_removed_when_dropped() {
        let sandbox = seeded();
        let root = sandbox.root().to_path_buf();
        assert!(
            root.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("ferry-everything-sandbox-")
        );
        drop(sandbox);
        assert!(!root.exists());
    }
}
