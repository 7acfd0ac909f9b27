// SPDX-License-Identifier: GPL-2.0

//! Benchmark: Steve Sistare's sparsemask against a plain cpumask, for
//! STEAL's overloaded-CPU mask (Sistare's reply to "[RFC 00/11] select_idle_sibling
//! rework", 2018; the kernel's `struct sched_lb_llc` `steal_mask`).
//!
//! Writers: every CPU sets and clears its own bit whenever its runnable
//! count crosses 1 <-> 2, with a locked read-modify-write (`set_bit()`,
//! `clear_bit()`; here `fetch_or`/`fetch_and`, the same `lock or`/`lock
//! and` on x86). Two threads toggle two CPUs' bits, in three layouts:
//!
//! - dense: CPUs 0 and 1 of a plain cpumask, the same word;
//! - sparse, same line: CPUs 0 and 1 of the sparsemask (8 per line, so a
//!   sparsemask still shares a line between neighbours);
//! - sparse, other line: CPUs 0 and 8, each in its own 64-byte line, which
//!   is what the layout buys for CPUs 8 or more apart.
//!
//! Readers: a stealer walks the mask for set bits, with the iterators the
//! module uses (`sparsemask::elements()`, and `sis_select::wrap_bits()`
//! for a plain mask), over atomic words as the module reads them; the
//! sparsemask reads 8 times more cache lines for the same CPUs. Timed over
//! an empty mask of 64 and 512 CPUs.
//!
//! Timing is wall time on a noisy shared machine, so each layout runs
//! `ROUNDS` times, interleaved, and the report is the median and the
//! ratio to the dense layout within this run. Run with
//! `cargo run --release -p sched-lb-policy --example sparsemask_contention`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::Instant;

use sched_lb_policy::sis_select::wrap_bits;
use sched_lb_policy::sparsemask::{elements, locate, words_for};

const TOGGLES: u32 = 2_000_000;
const ROUNDS: usize = 11;
const BITS_PER_LINE: u32 = 8;

/// 64-byte aligned words, so word 0 starts a cache line as the kernel's
/// allocation does.
#[repr(C, align(64))]
struct Lines([AtomicU64; 64]);

impl Lines {
    fn new() -> Self {
        Lines(std::array::from_fn(|_| AtomicU64::new(0)))
    }
}

/// Nanoseconds per set+clear pair while two threads toggle `(word, bit)`
/// each.
fn toggle_ns(a: (u32, u32), b: (u32, u32)) -> f64 {
    let mask = Lines::new();
    let barrier = Barrier::new(2);
    let run = |(word, bit): (u32, u32)| {
        let w = &mask.0[word as usize];
        let m = 1u64 << bit;
        barrier.wait();
        let t0 = Instant::now();
        for _ in 0..TOGGLES {
            w.fetch_or(m, Ordering::Relaxed);
            w.fetch_and(!m, Ordering::Relaxed);
        }
        t0.elapsed().as_nanos() as f64 / f64::from(TOGGLES)
    };
    std::thread::scope(|s| {
        let h = s.spawn(|| run(b));
        let mine = run(a);
        let theirs = h.join().unwrap_or(mine);
        (mine + theirs) / 2.0
    })
}

/// Nanoseconds to walk an empty mask of `ncpus` CPUs for set bits.
fn walk_ns(ncpus: u32, sparse: bool) -> f64 {
    let words = if sparse {
        words_for(ncpus, BITS_PER_LINE)
    } else {
        ncpus.div_ceil(64)
    } as usize;
    let mask: Vec<AtomicU64> = (0..words).map(|_| AtomicU64::new(0)).collect();
    let iters = 200_000u32;
    let t0 = Instant::now();
    let mut found = 0usize;
    for _ in 0..iters {
        let m = std::hint::black_box(&mask[..]);
        found += if sparse {
            elements(m, BITS_PER_LINE).count()
        } else {
            wrap_bits(m, ncpus, 0).count()
        };
    }
    std::hint::black_box(found);
    t0.elapsed().as_nanos() as f64 / f64::from(iters)
}

fn median(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

fn main() {
    let dense = ((0, 0), (0, 1));
    let same_line = (locate(0, BITS_PER_LINE), locate(1, BITS_PER_LINE));
    let other_line = (locate(0, BITS_PER_LINE), locate(8, BITS_PER_LINE));
    let layouts = [
        ("dense cpumask, CPUs 0 and 1", dense),
        ("sparsemask, CPUs 0 and 1 (same line)", same_line),
        ("sparsemask, CPUs 0 and 8 (own lines)", other_line),
    ];
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); layouts.len()];
    for _ in 0..ROUNDS {
        for (i, (_, (a, b))) in layouts.iter().enumerate() {
            samples[i].push(toggle_ns(*a, *b));
        }
    }
    println!("writers: 2 threads, {TOGGLES} set+clear pairs each, {ROUNDS} interleaved rounds");
    println!("| layout | ns per set+clear (median) | min | max | vs dense |");
    println!("|---|---|---|---|---|");
    let base = median(samples[0].clone()).0;
    for (i, (name, _)) in layouts.iter().enumerate() {
        let (m, lo, hi) = median(samples[i].clone());
        println!("| {name} | {m:.1} | {lo:.1} | {hi:.1} | {:.2} |", m / base);
    }
    println!();
    println!("readers: walk an empty mask for set bits");
    println!("| CPUs | dense ns | sparse ns | sparse / dense |");
    println!("|---|---|---|---|");
    for ncpus in [64u32, 512] {
        let d = median((0..ROUNDS).map(|_| walk_ns(ncpus, false)).collect()).0;
        let s = median((0..ROUNDS).map(|_| walk_ns(ncpus, true)).collect()).0;
        println!("| {ncpus} | {d:.1} | {s:.1} | {:.1} |", s / d);
    }
}
