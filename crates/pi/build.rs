//! Links the `pi` binary with packed relative relocations (DT_RELR) where the toolchain and the
//! C library support them.
//!
//! Why: `pi` is a position-independent executable with about 43,000 relative relocations. In
//! the classic format they fill a megabyte of `.rela.dyn` that the loader reads on every start,
//! so every `pi` process pays a megabyte of resident memory and its page faults before `main`.
//! Packed, the same relocations take a few kilobytes. The flag needs GNU ld 2.38 or lld, and
//! glibc 2.36 to load the result, so a tiny program is linked with it and run first; anything
//! that fails there (another linker, an older glibc, cross compilation, no C compiler) builds
//! `pi` exactly as before.

use std::env;
use std::path::PathBuf;
use std::process::Command;

const FLAG: &str = "-Wl,-z,pack-relative-relocs";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let target_is_linux_gnu = env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
        && env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu");
    let native = env::var("TARGET").ok() == env::var("HOST").ok();
    if target_is_linux_gnu && native && probe() {
        println!("cargo:rustc-link-arg-bin=pi={FLAG}");
    }
}

/// Links a C program that needs a relative relocation with the flag, and runs it: true only
/// when the program was linked with a RELR table and the system's loader ran it.
fn probe() -> bool {
    let Some(out_dir) = env::var_os("OUT_DIR").map(PathBuf::from) else {
        return false;
    };
    let source = out_dir.join("relr_probe.c");
    let binary = out_dir.join("relr_probe");
    // A pointer stored in initialised data is a relative relocation in a PIE.
    let program = "static const char *greeting = \"ok\";\nint main(void) { return greeting[0] == 'o' ? 0 : 1; }\n";
    if std::fs::write(&source, program).is_err() {
        return false;
    }
    let compiler = env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let linked = Command::new(compiler)
        .args(["-pie", "-fPIE", FLAG, "-o"])
        .arg(&binary)
        .arg(&source)
        .output()
        .is_ok_and(|out| out.status.success() && out.stderr.is_empty());
    linked && Command::new(&binary).status().is_ok_and(|status| status.success())
}
