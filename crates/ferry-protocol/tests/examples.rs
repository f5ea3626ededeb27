//! Every example message of the 2026-07-28 spec reads into the Ferry type its folder
//! names and writes back as the same JSON.

mod support;

use std::path::Path;

use support::{examples, expected, round_trip, spec_dir};

#[test]
fn every_example_round_trips() {
    let all = examples();
    assert!(all.len() > 100, "only {} examples found", all.len());
    let mut failures = Vec::new();
    for ex in &all {
        let name = format!("{}/{}", ex.folder, ex.file);
        match round_trip(&ex.folder, &ex.text) {
            None => failures.push(format!("{name}: folder is not mapped to a Ferry type")),
            Some(Err(e)) => failures.push(format!("{name}: {e}")),
            Some(Ok(back)) => {
                let want = expected(&ex.folder, &ex.value);
                if back != want {
                    failures.push(format!(
                        "{name}: round trip changed the JSON\n    want: {want}\n    got:  {back}"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_folder_is_mapped() {
    let folders: std::collections::BTreeSet<_> = examples().into_iter().map(|e| e.folder).collect();
    assert!(folders.len() >= 88, "only {} folders", folders.len());
    let unmapped: Vec<_> = folders
        .iter()
        .filter(|f| round_trip(f, "{}").is_none())
        .collect();
    assert!(
        unmapped.is_empty(),
        "folders without a Ferry type: {unmapped:?}"
    );
}

/// The stray `id` in the spec's `ListRootsRequest` example is read past, not kept.
#[test]
fn list_roots_example_keeps_everything_but_id() {
    let ex = examples()
        .into_iter()
        .find(|e| e.folder == "ListRootsRequest")
        .expect("ListRootsRequest example");
    assert!(ex.value.get("id").is_some());
    let back = round_trip(&ex.folder, &ex.text).unwrap().unwrap();
    assert_eq!(back, serde_json::json!({ "method": "roots/list" }));
}

fn collect(dir: &Path, base: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(&path, base, out);
        } else {
            out.push(
                path.strip_prefix(base)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
            );
        }
    }
}

/// When a checkout of the spec sits next to the workspace (`../shared/spec`), the copy in
/// `tests/spec` must match it byte for byte.
#[test]
fn spec_copy_matches_shared() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/spec");
    if !shared.join("2026-07-28/schema.json").is_file() {
        eprintln!("no shared spec checkout at {}; skipped", shared.display());
        return;
    }
    let ours = spec_dir();
    let mut files = Vec::new();
    collect(&ours, &ours, &mut files);
    files.retain(|f| f != "README.md");
    files.sort();
    assert!(files.len() > 100);
    for f in &files {
        let a = std::fs::read(ours.join(f)).unwrap();
        let b = std::fs::read(shared.join(f))
            .unwrap_or_else(|e| panic!("{f} is not in the shared spec: {e}"));
        assert!(a == b, "{f} differs from the shared spec");
    }
    let mut upstream = Vec::new();
    let shared_examples = shared.join("2026-07-28/examples");
    collect(&shared_examples, &shared, &mut upstream);
    for f in upstream {
        assert!(files.contains(&f), "{f} is missing from tests/spec");
    }
}
