// SPDX-License-Identifier: GPL-2.0

//! The command line's subcommands beyond `run`, and the option parsing
//! they share: the binary's, not the library's, which takes typed
//! options (`experiments::Opts`, `calibrate::Opts`) and returns text or
//! errors.

pub mod calibrate;
pub mod experiment;
pub mod replay;
pub mod ticks;

/// The next value of option `name`, as a string.
pub fn value(p: &mut lexopt::Parser, name: &str) -> Result<String, String> {
    p.value()
        .map_err(|_| format!("{name} needs a value"))?
        .into_string()
        .map_err(|_| format!("{name}: the value is not UTF-8"))
}

/// `--lb-clock N`: `Config::lb_clock_factor`, 1 (hardware) to 100000.
pub fn parse_lb_clock(v: &str) -> Result<u32, String> {
    v.parse::<u32>()
        .ok()
        .filter(|n| (1..=100_000).contains(n))
        .ok_or_else(|| format!("bad --lb-clock '{v}': 1..=100000"))
}

/// `--hz N`: `CONFIG_HZ`, within the range of the kernel's choices
/// (`HZ_100` to `HZ_1000`); any value there works, 250 is the guest's.
pub fn parse_hz(v: &str) -> Result<u32, String> {
    v.parse::<u32>()
        .ok()
        .filter(|hz| (100..=1000).contains(hz))
        .ok_or_else(|| {
            format!("bad --hz '{v}': expected 100..=1000 (the kernel offers 100, 250, 300, 1000)")
        })
}
