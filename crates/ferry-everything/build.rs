//! Link settings for a lean resident footprint on GNU/Linux. The benchmark's other Rust
//! servers (`bench/`) build with this same script, so they are linked alike.
//!
//! - Packed relative relocations (`DT_RELR`): the table the loader walks at start-up shrinks
//!   from about 450 KiB to a few KiB, and that much less stays resident while the server
//!   idles. A linker that predates the option, or a C library without `DT_RELR`, leaves the
//!   usual table in place.
//! - A function layout, when the package has a `link-order.txt` (one symbol a line, written
//!   by `bench/link-order.sh` from a traced run): the functions a server runs are placed
//!   side by side at the start of its code instead of scattered across all of it, so far
//!   fewer pages of code are read in and kept resident, and the instruction cache and TLB
//!   hold more of the request path. Symbols the file names that a build does not have are
//!   skipped, so a file a few commits old still helps; but a symbol's name carries a hash
//!   of its crate's dependencies, so a dependency added to a crate on the request path
//!   renames most of them, and the file must be written again (`bench/link-order.sh`,
//!   which the idle RSS figure of `bench/run.sh` shows the need of). It needs LLD, the toolchain's default
//!   linker on x86_64 GNU/Linux; a build that names another linker, or sets
//!   `FERRY_LINK_ORDER=off`, links in the usual order.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=FERRY_LINK_ORDER");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os != "linux" || env != "gnu" {
        return;
    }
    println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    if let Some(order) = link_order() {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// The package's `link-order.txt`, when this build links with LLD and optimises.
fn link_order() -> Option<PathBuf> {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let file = PathBuf::from(var("CARGO_MANIFEST_DIR")).join("link-order.txt");
    println!("cargo:rerun-if-changed={}", file.display());
    if var("FERRY_LINK_ORDER") == "off" || var("PROFILE") != "release" || !file.is_file() {
        return None;
    }
    // LLD is the default linker of x86_64-unknown-linux-gnu; a build that chose its own
    // linker may not understand the option.
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    let own_linker = std::env::var_os("RUSTC_LINKER").is_some()
        || flags.contains("linker")
        || flags.contains("link-self-contained")
        || flags.contains("fuse-ld");
    (var("CARGO_CFG_TARGET_ARCH") == "x86_64" && !own_linker).then_some(file)
}
