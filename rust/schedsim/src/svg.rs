// SPDX-License-Identifier: GPL-2.0

//! SVG plots of a run, written by hand: each task's cumulative work over
//! time, and each CPU's occupancy over time.
//!
//! No kernel code is mirrored. The top panel is what Guittot's rt-app
//! measurement looks at (fair sharing shows as a bundle of parallel lines,
//! unfairness as a fan); the bottom one is the "Wasted Cores" view (a white
//! cell next to a CPU with queued tasks is a conservation violation).

use crate::stats::RunResult;
use std::fmt::Write as _;

const W: f64 = 900.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP_H: f64 = 260.0;
const BOT_H: f64 = 260.0;
const MAX_LINES: usize = 64;

fn colour(i: usize, n: usize) -> String {
    // Evenly spaced hues; fixed format so output is byte-identical.
    let h = (i as f64 * 360.0 / n.max(1) as f64) % 360.0;
    format!("hsl({h:.0},70%,40%)")
}

/// Renders the plot, or explains why there is nothing to draw.
pub fn render(r: &RunResult) -> Result<String, String> {
    let tl = &r.timeline;
    if tl.t_ns.len() < 2 {
        return Err("no timeline samples in this run (set samples > 0)".into());
    }
    let t_end = *tl.t_ns.last().unwrap_or(&1) as f64;
    let pw = W - LEFT - RIGHT;
    let x = |t: u64| LEFT + pw * t as f64 / t_end.max(1.0);
    let mut o = String::new();
    let height = 40.0 + TOP_H + 60.0 + BOT_H + 40.0;
    let _ = writeln!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W:.0}\" height=\"{height:.0}\" font-family=\"sans-serif\" font-size=\"12\">"
    );
    let _ = writeln!(o, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>");
    let title = r.title();
    let _ = writeln!(
        o,
        "<text x=\"{LEFT}\" y=\"20\" font-size=\"14\">{}</text>",
        esc(&title)
    );

    // Top panel: cumulative work per task.
    let y0 = 40.0;
    let max_work = tl
        .work_ns
        .last()
        .and_then(|w| w.iter().max().copied())
        .unwrap_or(1)
        .max(1) as f64;
    let _ = writeln!(
        o,
        "<rect x=\"{LEFT}\" y=\"{y0}\" width=\"{pw}\" height=\"{TOP_H}\" fill=\"none\" stroke=\"#888\"/>"
    );
    let _ = writeln!(
        o,
        "<text x=\"{LEFT}\" y=\"{:.0}\">work done per task (ms), min/max {:.1}%</text>",
        y0 - 4.0,
        r.min_max_ratio_pct(None)
    );
    let _ = writeln!(
        o,
        "<text x=\"4\" y=\"{:.0}\">{:.0}</text><text x=\"4\" y=\"{:.0}\">0</text>",
        y0 + 12.0,
        max_work / 1e6,
        y0 + TOP_H
    );
    let ntasks = tl.work_ns.first().map_or(0, |w| w.len());
    // At most 64 lines: beyond that the panel is a solid band anyway.
    let stride = ntasks.div_ceil(MAX_LINES).max(1);
    if stride > 1 {
        let _ = writeln!(
            o,
            "<text x=\"{:.0}\" y=\"{:.0}\" text-anchor=\"end\">every {stride}th of {ntasks} tasks</text>",
            W - RIGHT,
            y0 - 4.0
        );
    }
    for task in (0..ntasks).step_by(stride) {
        let mut pts = String::new();
        for (s, t) in tl.t_ns.iter().enumerate() {
            let w = tl.work_ns[s].get(task).copied().unwrap_or(0) as f64;
            let _ = write!(
                pts,
                "{:.1},{:.1} ",
                x(*t),
                y0 + TOP_H - TOP_H * w / max_work
            );
        }
        let _ = writeln!(
            o,
            "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1\" points=\"{}\"/>",
            colour(task, ntasks),
            pts.trim_end()
        );
    }

    // Bottom panel: CPU occupancy per sample interval.
    let y1 = y0 + TOP_H + 60.0;
    let n = r.nr_cpus.max(1) as usize;
    let row = BOT_H / n as f64;
    let _ = writeln!(
        o,
        "<text x=\"{LEFT}\" y=\"{:.0}\">CPU occupancy (white idle, blue busy, red: 2+ runnable at the sample)</text>",
        y1 - 4.0
    );
    for cpu in 0..n {
        let yy = y1 + row * cpu as f64;
        let mut run_start = 0usize;
        let mut run_fill = String::new();
        let cells = tl.t_ns.len() - 1;
        for s in 0..=cells {
            let fill = if s < cells {
                let dt = tl.t_ns[s + 1].saturating_sub(tl.t_ns[s]).max(1);
                let busy = tl.busy_ns[s + 1][cpu].saturating_sub(tl.busy_ns[s][cpu]);
                let frac = (busy as f64 / dt as f64).clamp(0.0, 1.0);
                if tl.nr_running[s + 1][cpu] >= 2 {
                    "#d62728".to_string()
                } else {
                    // Five shades: merges neighbouring cells, keeps files small.
                    let step = (frac * 4.0).round();
                    let l = 100.0 - 15.0 * step;
                    format!("hsl(215,70%,{l:.0}%)")
                }
            } else {
                String::new()
            };
            if s == 0 {
                run_fill = fill;
                continue;
            }
            if fill != run_fill {
                let xa = x(tl.t_ns[run_start]);
                let xb = x(tl.t_ns[s]);
                let _ = writeln!(
                    o,
                    "<rect x=\"{xa:.1}\" y=\"{yy:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{run_fill}\"/>",
                    (xb - xa).max(0.1),
                    row.max(0.5)
                );
                run_start = s;
                run_fill = fill;
            }
        }
    }
    let _ = writeln!(
        o,
        "<rect x=\"{LEFT}\" y=\"{y1}\" width=\"{pw}\" height=\"{BOT_H}\" fill=\"none\" stroke=\"#888\"/>"
    );
    let _ = writeln!(
        o,
        "<text x=\"4\" y=\"{:.0}\">CPU 0</text><text x=\"4\" y=\"{:.0}\">CPU {}</text>",
        y1 + 12.0,
        y1 + BOT_H,
        n - 1
    );
    let yb = y1 + BOT_H + 20.0;
    let _ = writeln!(
        o,
        "<text x=\"{LEFT}\" y=\"{yb:.0}\">0 ms</text><text x=\"{:.0}\" y=\"{yb:.0}\" text-anchor=\"end\">{:.0} ms simulated</text>",
        W - RIGHT,
        t_end / 1e6
    );
    o.push_str("</svg>\n");
    Ok(o)
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
