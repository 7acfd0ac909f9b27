// SPDX-License-Identifier: GPL-2.0

//! Builds the C references: `c/ref.c` once, and `c/ref_hz.c` once per HZ
//! with the `timeconst.h` that the kernel's own `kernel/time/timeconst.bc`
//! (copied to `c/`) generates for it through `bc`, as Kbuild does.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// HZ values checked: every x86 choice plus odd ones from other arches.
const HZ: [u32; 8] = [24, 48, 100, 250, 300, 1000, 1024, 1200];

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    println!("cargo:rerun-if-changed=c");

    cc::Build::new()
        .file("c/ref.c")
        .warnings(false)
        .flag("-std=gnu11")
        .compile("sched_lb_cref");

    for hz in HZ {
        let mut bc = Command::new("bc")
            .args(["-q", "c/timeconst.bc"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect(
                "bc is needed to generate timeconst.h (Debian package bc; make setup installs it)",
            );
        writeln!(bc.stdin.take().unwrap(), "{hz}").unwrap();
        let o = bc.wait_with_output().unwrap();
        assert!(o.status.success(), "bc failed for HZ={hz}");
        let dir = out.join(format!("hz{hz}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("timeconst.h"), o.stdout).unwrap();
        cc::Build::new()
            .file("c/ref_hz.c")
            .include(&dir)
            .define("HZ", hz.to_string().as_str())
            .define("REF_SUFFIX", format!("hz{hz}").as_str())
            .warnings(false)
            .flag("-std=gnu11")
            .compile(&format!("sched_lb_cref_hz{hz}"));
    }
}
