// SPDX-License-Identifier: GPL-2.0

//! The command line: clear errors and non-zero exits for bad input, and
//! the outputs it promises.

use std::process::Command;

fn schedsim(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_schedsim"))
        .args(args)
        .output()
        .expect("run schedsim");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn bad_input_is_refused_with_a_message() {
    for (args, needle) in [
        (
            &["--topology", "vax", "--workload", "fairness:1"][..],
            "unknown topology 'vax'",
        ),
        (
            &[
                "--topology",
                "2x4",
                "--workload",
                "fairness:1",
                "--flags",
                "+TURBO",
            ][..],
            "unknown flag '+TURBO'",
        ),
        (
            &["--topology", "2x4", "--workload", "bogus:1"][..],
            "bad workload 'bogus'",
        ),
        (
            &["--topology", "2x4", "--workload", "fairness:x"][..],
            "'x' is not a number",
        ),
        (&["--topology", "2x4"][..], "--workload is required"),
        (
            &[
                "--topology",
                "2x4",
                "--workload",
                "fairness:1",
                "--format",
                "xml",
            ][..],
            "bad --format",
        ),
        (
            &["--topology", "2x4", "--workload", "fairness:1", "--seed"][..],
            "--seed needs a value",
        ),
        (&["experiment", "nope"][..], "unknown experiment 'nope'"),
        (
            &[
                "--topology",
                "2x4",
                "--workload",
                "fairness:1",
                "--hz",
                "64",
            ][..],
            "bad --hz '64'",
        ),
        (&["experiment", "steal", "--hz", "x"][..], "bad --hz 'x'"),
        (&["frobnicate"][..], "unknown command"),
    ] {
        let (code, _, err) = schedsim(args);
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn json_table_and_plot() {
    let dir = std::env::temp_dir().join(format!("schedsim-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("out.svg");
    let (code, out, _) = schedsim(&[
        "--topology",
        "qemu8",
        "--workload",
        "fairness:9",
        "--flags",
        "+STEAL,-SIS_UTIL",
        "--seed",
        "3",
        "--duration-ms",
        "200",
        "--format",
        "json",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    assert!(out.starts_with('{') && out.contains("\"flags\": \"-SIS_UTIL,+STEAL\""));
    assert!(out.contains("\"hz\": 250"), "HZ 250 is the default");
    assert!(out.contains("\"conservation\": {"));
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.contains("<polyline"));
    let (code, out, _) = schedsim(&[
        "run",
        "--topology",
        "2x4",
        "--workload",
        "fairness:9",
        "--duration-ms",
        "100",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("min/max work %") && out.contains("work conservation"));
    let (code, out, _) = schedsim(&[
        "--topology",
        "2x4",
        "--workload",
        "fairness:9",
        "--duration-ms",
        "100",
        "--hz",
        "1000",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("seed 1, HZ 1000"), "{out}");
    let (code, out, _) = schedsim(&["topology", "qemu8"]);
    assert_eq!(code, 0);
    assert!(out.contains("domain-2: span=0-7 level=PKG"));
    let _ = std::fs::remove_dir_all(&dir);
}
