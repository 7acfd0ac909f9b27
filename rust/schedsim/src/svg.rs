// SPDX-License-Identifier: GPL-2.0

//! SVG plots of a run, drawn with `plotters` (its SVG backend only): each
//! task's cumulative work over time, and each CPU's occupancy over time;
//! and the calibration's plot of effects (`schedsim calibrate --svg`).
//!
//! No kernel code is mirrored. The top panel is what Guittot's rt-app
//! measurement looks at (fair sharing shows as a bundle of parallel lines,
//! unfairness as a fan); the bottom one is the "Wasted Cores" view (a white
//! cell next to a CPU with queued tasks is a conservation violation).

use crate::stats::RunResult;
use plotters::prelude::*;

const W: u32 = 900;
const PANEL_H: u32 = 330;
/// At most this many task lines: beyond it the panel is a solid band.
const MAX_LINES: usize = 64;
/// Occupancy shades: five steps merge neighbouring cells and keep the file
/// small.
const SHADES: f64 = 4.0;
const QUEUED: RGBColor = RGBColor(0xd6, 0x27, 0x28);

/// Task `i` of `n`: evenly spaced hues.
fn colour(i: usize, n: usize) -> HSLColor {
    HSLColor(i as f64 / n.max(1) as f64, 0.7, 0.4)
}

/// A CPU's cell over one sample interval: red with 2+ runnable at the
/// sample, else blue as dark as the CPU was busy.
fn cell(busy_frac: f64, queued: bool) -> (u8, RGBColor) {
    if queued {
        return (u8::MAX, QUEUED);
    }
    let step = (busy_frac.clamp(0.0, 1.0) * SHADES).round() as u8;
    let (r, g, b) = HSLColor(215.0 / 360.0, 0.7, 1.0 - 0.15 * f64::from(step)).rgb();
    (step, RGBColor(r, g, b))
}

fn err<E: std::fmt::Display>(e: E) -> String {
    format!("cannot draw the plot: {e}")
}

/// Renders the plot, or explains why there is nothing to draw.
pub fn render(r: &RunResult) -> Result<String, String> {
    let tl = &r.timeline;
    if tl.t_ns.len() < 2 {
        return Err("no timeline samples in this run (set samples > 0)".into());
    }
    let ms = |t: u64| t as f64 / 1e6;
    let t_end = ms(*tl.t_ns.last().unwrap_or(&1)).max(1e-6);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (W, 2 * PANEL_H)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let root = root.titled(&r.title(), ("sans-serif", 14)).map_err(err)?;
        let (top, bottom) = root.split_vertically(PANEL_H - 20);

        // Top panel: cumulative work per task.
        let max_work = ms(tl
            .work_ns
            .last()
            .and_then(|w| w.iter().max().copied())
            .unwrap_or(1)
            .max(1));
        let ntasks = tl.work_ns.first().map_or(0, |w| w.len());
        let stride = ntasks.div_ceil(MAX_LINES).max(1);
        let mut caption = format!(
            "work done per task (ms), min/max {:.1}%",
            r.min_max_ratio_pct(None)
        );
        if stride > 1 {
            caption.push_str(&format!(", every {stride}th of {ntasks} tasks"));
        }
        let mut work = ChartBuilder::on(&top)
            .caption(caption, ("sans-serif", 12))
            .margin(8)
            .x_label_area_size(20)
            .y_label_area_size(50)
            .build_cartesian_2d(0f64..t_end, 0f64..max_work)
            .map_err(err)?;
        work.configure_mesh().disable_mesh().draw().map_err(err)?;
        for task in (0..ntasks).step_by(stride) {
            let points = tl
                .t_ns
                .iter()
                .zip(&tl.work_ns)
                .map(|(&t, w)| (ms(t), ms(w.get(task).copied().unwrap_or(0))));
            work.draw_series(LineSeries::new(points, &colour(task, ntasks)))
                .map_err(err)?;
        }

        // Bottom panel: CPU occupancy per sample interval, CPU 0 on top,
        // neighbouring cells of one shade merged into one rectangle.
        let n = r.nr_cpus.max(1);
        let mut occ = ChartBuilder::on(&bottom)
            .caption(
                "CPU occupancy (white idle, blue busy, red: 2+ runnable at the sample)",
                ("sans-serif", 12),
            )
            .margin(8)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(0f64..t_end, f64::from(n)..0f64)
            .map_err(err)?;
        occ.configure_mesh()
            .disable_mesh()
            .x_desc("ms simulated")
            .y_desc("CPU")
            .draw()
            .map_err(err)?;
        let cells = tl.t_ns.len() - 1;
        let mut rects = Vec::new();
        for cpu in 0..n as usize {
            let mut run: Option<(usize, (u8, RGBColor))> = None;
            for s in 0..=cells {
                let this = (s < cells).then(|| {
                    let dt = tl.t_ns[s + 1].saturating_sub(tl.t_ns[s]).max(1);
                    let busy = tl.busy_ns[s + 1][cpu].saturating_sub(tl.busy_ns[s][cpu]);
                    cell(busy as f64 / dt as f64, tl.nr_running[s + 1][cpu] >= 2)
                });
                match (run, this) {
                    (Some((_, a)), Some(b)) if a.0 == b.0 => {}
                    _ => {
                        if let Some((start, (_, c))) = run {
                            let y = cpu as f64;
                            rects.push(Rectangle::new(
                                [(ms(tl.t_ns[start]), y), (ms(tl.t_ns[s]), y + 1.0)],
                                c.filled(),
                            ));
                        }
                        run = this.map(|c| (s, c));
                    }
                }
            }
        }
        occ.draw_series(rects).map_err(err)?;
        root.present().map_err(err)?;
    }
    out.push('\n');
    Ok(out)
}

/// One row of the calibration plot: an effect of one experiment.
#[derive(Clone, Debug, PartialEq)]
pub struct EffectPoint {
    /// Experiment and metric.
    pub label: String,
    /// The guest's paired 95% interval of the on/off ratio.
    pub ci: (f64, f64),
    /// The model's on/off ratio (None: it counted 0 in both states).
    pub model: Option<f64>,
    /// The row's verdict.
    pub verdict: crate::calibrate::effects::Verdict,
}

/// The calibration plot of one guest topology (`schedsim calibrate
/// --svg`): one row per experiment and metric compared; the guest's
/// paired 95% interval of the on/off ratio as a bar and the model's
/// ratio as a dot, on a log axis (1: the rule changed nothing). Green dot:
/// inside the interval; amber: outside it, on the guest's side of 1.0;
/// red: opposite or outside; no dot where the model counted 0 in both
/// states. A ratio beyond the axis is drawn at its edge.
pub fn calibration(topology: &str, rows: &[EffectPoint]) -> Result<String, String> {
    use crate::calibrate::effects::Verdict;
    // Ratios kept on the plot: a model 10x off still shows, at the edge.
    const LO: f64 = 0.1;
    const HI: f64 = 10.0;
    if rows.is_empty() {
        return Err(format!("{topology}: no compared effect to plot"));
    }
    let clamp = |x: f64| x.clamp(LO, HI);
    let row_h = 16u32;
    let h = 90u32.saturating_add(row_h.saturating_mul(rows.len() as u32));
    let n = rows.len() as f64;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (W, h)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!(
                    "{topology}: schedsim's on/off ratio (dot) against the guest's paired 95% interval (bar)"
                ),
                ("sans-serif", 13),
            )
            .margin(8)
            .x_label_area_size(30)
            .y_label_area_size(330)
            // Rows at 1..=n, so that the mesh's integer ticks carry them.
            .build_cartesian_2d((LO..HI).log_scale(), (n + 1.0)..0f64)
            .map_err(err)?;
        let labels: Vec<String> = rows.iter().map(|p| p.label.clone()).collect();
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(rows.len().saturating_add(2))
            .y_label_formatter(&|y| {
                let i = y.round();
                if (*y - i).abs() < 1e-6 && i >= 1.0 {
                    labels.get(i as usize - 1).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .x_desc("on/off ratio (log)")
            .draw()
            .map_err(err)?;
        chart
            .draw_series(LineSeries::new(
                [(1.0, 0.0), (1.0, n + 1.0)],
                &BLACK.mix(0.4),
            ))
            .map_err(err)?;
        for (i, p) in rows.iter().enumerate() {
            let y = i as f64 + 1.0;
            chart
                .draw_series(std::iter::once(PathElement::new(
                    [(clamp(p.ci.0), y), (clamp(p.ci.1), y)],
                    BLACK.stroke_width(3),
                )))
                .map_err(err)?;
            let Some(m) = p.model else { continue };
            let c = match p.verdict {
                Verdict::Inside => RGBColor(0x2c, 0xa0, 0x2c),
                Verdict::SameDirection => RGBColor(0xe0, 0x9a, 0x10),
                _ => QUEUED,
            };
            chart
                .draw_series(std::iter::once(Circle::new((clamp(m), y), 4, c.filled())))
                .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    out.push('\n');
    Ok(out)
}
