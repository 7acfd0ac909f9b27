// SPDX-License-Identifier: GPL-2.0

//! Steve Sistare's sparsemask layout for the per-LLC overloaded mask.
//!
//! From his reply to "[RFC 00/11] select_idle_sibling rework" (2018).
//! CPUs that update a plain cpumask share its cache lines: with one bit per
//! CPU, 512 CPUs write the same 64-byte line. The sparsemask "only uses 8
//! bits in the first word of every 64 bytes": a set of 128 elements is
//! 128 / 8 * 64 = 1024 bytes, and at most 8 CPUs share a line, while a
//! search still reads one word per 8 elements. The number of bits per line
//! is a creation-time parameter.
//!
//! Each LLC has its own mask (the series' `struct sched_lb_llc` `steal_mask`): element `e`
//! is CPU `base + e`, `base` the lowest CPU of the LLC's span, so no line
//! holds CPUs of two LLCs and a stealer reads only its own LLC's lines.
//! The CPU <-> element mapping is the caller's; this file knows elements.
//!
//! Only the index arithmetic and the walks are here; the kernel shim does
//! the atomic bit operations on its memory. The walks read a line's word
//! through [`Words`] once, when they reach the line, and take that line's
//! elements from that one read: other CPUs set and clear bits meanwhile,
//! and a bit cleared in a line the walk has not reached yet is not seen.

use super::words::Words;

/// Bytes per cache line.
pub const LINE_BYTES: u32 = 64;
/// `u64` words per cache line.
pub const WORDS_PER_LINE: u32 = LINE_BYTES / 8;

/// Where element `elem` lives: `(word index, bit in that word)`, with
/// `bits_per_line` elements (1 to 64) in the first word of each line.
pub fn locate(elem: u32, bits_per_line: u32) -> (u32, u32) {
    let per = bits_per_line.clamp(1, 64);
    let line = elem / per;
    (line.saturating_mul(WORDS_PER_LINE), elem % per)
}

/// Words needed for `nelems` elements (whole lines). The kernel sizes
/// its masks in C (`sched_lb_attach_llcs()`); the simulator and the tests use this.
#[cfg(not(MODULE))]
pub fn words_for(nelems: u32, bits_per_line: u32) -> u32 {
    let per = bits_per_line.clamp(1, 64);
    nelems.div_ceil(per).saturating_mul(WORDS_PER_LINE)
}

/// Elements per line: `bits_per_line` clamped to 1 to 64.
fn per_line(bits_per_line: u32) -> u32 {
    bits_per_line.clamp(1, 64)
}

/// The bits of a line's word that hold elements.
fn line_mask(per: u32) -> u64 {
    // per is 1 to 64: 1 << 64 is None, the whole word.
    1u64.checked_shl(per)
        .map_or(u64::MAX, |b| b.wrapping_sub(1))
}

/// Elements a mask of these words can hold: whole lines, and a last line
/// cut short still counts, since its first word, the one that holds bits,
/// is there.
pub fn capacity<W: Words + ?Sized>(words: &W, bits_per_line: u32) -> u32 {
    let lines = words.nwords().div_ceil(WORDS_PER_LINE as usize);
    u32::try_from(lines)
        .unwrap_or(u32::MAX)
        .saturating_mul(per_line(bits_per_line))
}

/// Whether element `elem` is set: one word read, `test_bit()` on the word
/// [`locate`] names. Elements past the end are not set.
pub fn contains<W: Words + ?Sized>(words: &W, bits_per_line: u32, elem: u32) -> bool {
    if elem >= capacity(words, bits_per_line) {
        return false;
    }
    let (w, b) = locate(elem, bits_per_line);
    (words.word(w as usize) >> b) & 1 != 0
}

/// The set elements of `[from, to)` in increasing order, see [`elements`]
/// and [`wrapped`].
pub struct Elements<'a, W: Words + ?Sized> {
    words: &'a W,
    per: u32,
    /// Next line to read.
    line: u32,
    /// One past the last line to read.
    end_line: u32,
    from: u32,
    to: u32,
    /// Bits of the line read last that are still to be yielded.
    bits: u64,
    /// Element of bit 0 of that line.
    base: u32,
}

// By hand: a derive would ask `W: Clone`, which a slice is not.
impl<W: Words + ?Sized> Clone for Elements<'_, W> {
    fn clone(&self) -> Self {
        Elements {
            words: self.words,
            ..*self
        }
    }
}

// By hand, for the same reason; the words are whatever memory holds now.
impl<W: Words + ?Sized> core::fmt::Debug for Elements<'_, W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Elements")
            .field("line", &self.line)
            .field("end_line", &self.end_line)
            .field("from", &self.from)
            .field("to", &self.to)
            .field("bits", &self.bits)
            .finish()
    }
}

impl<W: Words + ?Sized> Iterator for Elements<'_, W> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        loop {
            if self.bits != 0 {
                // find_next_bit()'s trailing_zeros(), not a test per bit.
                let b = self.bits.trailing_zeros();
                // Clears the lowest set bit; cannot underflow, bits is not 0.
                self.bits &= self.bits.wrapping_sub(1);
                return Some(self.base.saturating_add(b));
            }
            if self.line >= self.end_line {
                return None;
            }
            let base = self.line.saturating_mul(self.per);
            let word = (self.line as usize).saturating_mul(WORDS_PER_LINE as usize);
            let mut bits = self.words.word(word) & line_mask(self.per);
            // Only the range's part of its first and last line: `from` and
            // `to` are at most `per` (64) elements into the line here.
            if self.from > base {
                bits &= u64::MAX
                    .checked_shl(self.from.saturating_sub(base))
                    .unwrap_or(0);
            }
            bits &= 1u64
                .checked_shl(self.to.saturating_sub(base))
                .map_or(u64::MAX, |b| b.wrapping_sub(1));
            self.bits = bits;
            self.base = base;
            self.line = self.line.saturating_add(1);
        }
    }
}

/// The set elements of `[from, to)` (clamped to the mask), ascending.
fn range<W: Words + ?Sized>(words: &W, bits_per_line: u32, from: u32, to: u32) -> Elements<'_, W> {
    let per = per_line(bits_per_line);
    let to = to.min(capacity(words, bits_per_line));
    let from = from.min(to);
    Elements {
        words,
        per,
        line: from / per,
        end_line: to.div_ceil(per),
        from,
        to,
        bits: 0,
        base: 0,
    }
}

/// The elements set in a sparsemask, in increasing order. Lazy: a line's
/// word is read once, when the walk reaches the line. The kernel only
/// walks [`wrapped`]; the tests and the simulator's use this.
#[cfg(not(MODULE))]
pub fn elements<W: Words + ?Sized>(words: &W, bits_per_line: u32) -> Elements<'_, W> {
    range(words, bits_per_line, 0, u32::MAX)
}

/// The elements set in a sparsemask in `for_each_cpu_wrap()` order: from
/// `start` up, then from 0 up to `start - 1`; a `start` past the last
/// element wraps to 0. One walk, each line read at most once per leg, when
/// the walk reaches it: only `start`'s line is read twice, its high part
/// first and its low part at the very end. The legs cover disjoint
/// elements, so none is yielded twice, whatever the mask does meanwhile.
pub fn wrapped<W: Words + ?Sized>(
    words: &W,
    bits_per_line: u32,
    start: u32,
) -> core::iter::Chain<Elements<'_, W>, Elements<'_, W>> {
    let start = if start >= capacity(words, bits_per_line) {
        0
    } else {
        start
    };
    range(words, bits_per_line, start, u32::MAX).chain(range(words, bits_per_line, 0, start))
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use core::cell::Cell;
    use core::sync::atomic::AtomicU64;
    use proptest::prelude::*;
    use std::vec;
    use std::vec::Vec;

    use crate::words::counting::Virtual;

    // Index arithmetic past u32 saturates: a line beyond the u32 word
    // range must not alias word 0, and a mask that big holds u32::MAX
    // elements, not a wrapped count (hand mutants survived before).
    #[test]
    fn index_arithmetic_saturates() {
        assert_eq!(locate(1 << 30, 1), (u32::MAX, 0));
        assert_eq!(words_for(u32::MAX, 1), u32::MAX);
        let v = Virtual {
            nwords: 1 << 30,
            f: |_| 1,
        };
        assert_eq!(capacity(&v, 64), u32::MAX);
        assert!(!contains(&v, 1, 1 << 30));
    }

    /// A mask of `nelems` elements with `set` set.
    fn mask(nelems: u32, per: u32, set: &[u32]) -> Vec<u64> {
        let mut words = vec![0u64; words_for(nelems, per) as usize];
        for &e in set {
            let (w, b) = locate(e, per);
            words[w as usize] |= 1 << b;
        }
        words
    }

    use crate::words::counting::Counting;

    #[test]
    fn capacity_and_contains() {
        assert_eq!(capacity(&[0u64; 0], 8), 0);
        assert_eq!(capacity(&[0u64; 8], 8), 8);
        assert_eq!(
            capacity(&[0u64; 9], 8),
            16,
            "a cut-short line still has its word"
        );
        assert_eq!(capacity(&[0u64; 16], 64), 128);
        let m = mask(24, 8, &[0, 9, 23]);
        assert!(contains(&m[..], 8, 9));
        assert!(!contains(&m[..], 8, 10));
        assert!(contains(&m[..], 8, 23));
        assert!(!contains(&m[..], 8, 24), "past the end");
        assert!(!contains(&m[..], 8, u32::MAX));
    }

    #[test]
    fn wrapped_order() {
        let m = mask(24, 8, &[1, 3, 9, 12, 20]);
        let w = |start| wrapped(&m[..], 8, start).collect::<Vec<u32>>();
        assert_eq!(w(0), [1, 3, 9, 12, 20]);
        assert_eq!(w(3), [3, 9, 12, 20, 1]);
        assert_eq!(w(10), [12, 20, 1, 3, 9]);
        assert_eq!(w(21), [1, 3, 9, 12, 20]);
        assert_eq!(w(24), [1, 3, 9, 12, 20], "past the end wraps to 0");
        assert_eq!(w(u32::MAX), [1, 3, 9, 12, 20]);
        assert_eq!(wrapped(&[0u64; 0], 8, 5).count(), 0);
    }

    // One walk reads each line once per leg: every line once, the start
    // line twice (high part first, low part last), nothing else.
    #[test]
    fn wrapped_reads_each_line_once() {
        let c = Counting::new(mask(40, 8, &[2, 11, 30, 39]));
        let v: Vec<u32> = wrapped(&c, 8, 13).collect();
        assert_eq!(v, [30, 39, 2, 11]);
        let reads: Vec<u32> = c.reads.iter().map(Cell::get).collect();
        for (i, &r) in reads.iter().enumerate() {
            let want = match i {
                8 => 2,               // line 1, the start's
                _ if i % 8 == 0 => 1, // the other lines' bit words
                _ => 0,               // the rest of each line
            };
            assert_eq!(r, want, "word {i}");
        }
        // From a line boundary, no line is read twice.
        let c = Counting::new(mask(40, 8, &[2]));
        assert_eq!(wrapped(&c, 8, 16).count(), 1);
        assert!(c.reads.iter().all(|r| r.get() <= 1));
        // Lazily: a walk that stops early reads only the lines it reached.
        let c = Counting::new(mask(40, 8, &[2, 11, 30, 39]));
        assert_eq!(elements(&c, 8).next(), Some(2));
        let read: u32 = c.reads.iter().map(Cell::get).sum();
        assert_eq!(read, 1);
    }

    // A walk over a mask other CPUs write: a line is read when the walk
    // reaches it, so what changes in lines ahead is seen, and the walk
    // never goes back.
    #[test]
    fn cell_mask_changed_mid_walk() {
        let m: Vec<Cell<u64>> = mask(32, 8, &[1, 9, 17, 25])
            .into_iter()
            .map(Cell::new)
            .collect();
        let set = |e: u32, on: bool| {
            let (w, b) = locate(e, 8);
            let c = &m[w as usize];
            c.set(if on {
                c.get() | 1 << b
            } else {
                c.get() & !(1 << b)
            });
        };
        let mut walk = wrapped(&m[..], 8, 8);
        let mut seen = Vec::new();
        seen.extend(walk.next()); // 9, line 1 read
                                  // Ahead: 17 cleared and 18 set in line 2, 26 set in line 3.
                                  // Behind: 10 set in line 1 (already read), 15 set: not revisited.
                                  // Below the start: 0 set, seen by the second leg.
        set(17, false);
        set(18, true);
        set(26, true);
        set(10, true);
        set(15, true);
        set(0, true);
        seen.extend(walk.by_ref());
        assert_eq!(seen, [9, 18, 25, 26, 0, 1]);
        let mut sorted = seen.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), seen.len(), "nothing visited twice");
    }

    #[test]
    fn sistare_numbers() {
        // "a set that can hold 128 items is 128/8*64 = 1024 bytes".
        assert_eq!(words_for(128, 8) * 8, 1024);
        assert_eq!(locate(0, 8), (0, 0));
        assert_eq!(locate(7, 8), (0, 7));
        assert_eq!(locate(8, 8), (8, 0), "the next element starts a new line");
        assert_eq!(locate(127, 8), (15 * 8, 7));
    }

    proptest! {
        // Setting any set of elements and reading them back round-trips,
        // and no two elements of different lines share a cache line.
        #[test]
        fn round_trip(elems in proptest::collection::btree_set(0u32..512, 0..64), per in 1u32..=64) {
            let mut words = vec![0u64; words_for(512, per) as usize];
            for &e in &elems {
                let (w, b) = locate(e, per);
                words[w as usize] |= 1 << b;
            }
            let back: Vec<u32> = elements(&words[..], per).collect();
            let want: Vec<u32> = elems.iter().copied().collect();
            prop_assert_eq!(back, want);
        }

        #[test]
        fn at_most_per_elements_per_line(e in 0u32..100_000, per in 1u32..=64) {
            let (w, b) = locate(e, per);
            prop_assert_eq!(w % WORDS_PER_LINE, 0);
            prop_assert!(b < per);
        }
    }

    proptest! {
        // The wrapped walk is for_each_cpu_wrap() over the elements, the
        // same over plain words, atomics and cells.
        #[test]
        fn wrapped_equals_naive(elems in proptest::collection::btree_set(0u32..200, 0..40),
                                per in 1u32..=64, nelems in 0u32..200, start in any::<u32>()) {
            let m = mask(200, per, &elems.iter().copied().collect::<Vec<u32>>());
            let m = &m[..words_for(nelems, per) as usize];
            let cap = capacity(m, per);
            let st = if start >= cap { 0 } else { start };
            let naive: Vec<u32> = (st..cap).chain(0..st).filter(|e| elems.contains(e)).collect();
            let plain: Vec<u32> = wrapped(m, per, start).collect();
            prop_assert_eq!(&plain, &naive);
            let a: Vec<AtomicU64> = m.iter().map(|&w| AtomicU64::new(w)).collect();
            let c: Vec<Cell<u64>> = m.iter().map(|&w| Cell::new(w)).collect();
            prop_assert_eq!(&wrapped(&a[..], per, start).collect::<Vec<u32>>(), &naive);
            prop_assert_eq!(&wrapped(&c[..], per, start).collect::<Vec<u32>>(), &naive);
            for e in 0..cap {
                prop_assert_eq!(contains(m, per, e), elems.contains(&e));
            }
        }

        // Bits outside an element's place (the other words of a line, the
        // high bits of the first word) are never read as elements.
        #[test]
        fn junk_outside_the_layout_ignored(junk in any::<u64>(), per in 1u32..=63) {
            let mut m = [junk; 16];
            m[0] &= !line_mask(per);
            m[8] &= !line_mask(per);
            prop_assert_eq!(elements(&m[..], per).count(), 0);
        }
    }
}
