// SPDX-License-Identifier: GPL-2.0

//! `schedsim experiment`: runs the experiments of
//! `Documentation/schedsim.rst` by name.

use schedsim::experiments::{run_named, Opts, NAMES};
use schedsim::report;

use super::parse_hz;

/// `schedsim experiment NAME|sensitivity|all [--plot-dir DIR] [--quick] [--hz N]`
/// (`sensitivity` is not in `all`: it takes about 15 minutes).
pub fn main(args: &[String]) -> Result<(), String> {
    use lexopt::Arg::{Long, Short, Value};
    let mut opts = Opts::default();
    let mut name = None;
    let mut p = lexopt::Parser::from_args(args.iter().cloned());
    while let Some(arg) = p.next().map_err(|e| e.to_string())? {
        match arg {
            Long("plot-dir") => {
                let v = p.value().map_err(|_| "--plot-dir needs a value")?;
                opts.plot_dir = Some(v.into_string().map_err(|_| "--plot-dir: not UTF-8")?);
            }
            Long("quick") => opts.quick = true,
            Long("hz") => {
                let v = p.value().map_err(|_| "--hz needs a value")?;
                opts.hz = parse_hz(&v.to_string_lossy())?;
            }
            Long(a) => return Err(format!("unknown argument '--{a}'")),
            Short(c) => return Err(format!("unknown argument '-{c}'")),
            Value(v) => name = Some(v.to_string_lossy().into_owned()),
        }
    }
    let name = name.ok_or_else(|| {
        format!(
            "experiment needs a name: {}, sensitivity, all",
            NAMES.join(", ")
        )
    })?;
    let list: Vec<&str> = if name == "all" {
        NAMES.to_vec()
    } else {
        vec![name.as_str()]
    };
    for n in list {
        let text = run_named(n, &opts)?;
        report::emit(&format!("{text}\n"));
    }
    Ok(())
}
