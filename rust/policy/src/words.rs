// SPDX-License-Identifier: GPL-2.0

//! How the rules read bitmap words that other CPUs write.
//!
//! Mirrors no single C function: it is the Rust side of the kernel's
//! `find_next_bit()` and `test_bit()` reading `unsigned long` words of a
//! cpumask (`include/linux/find.h`, `include/linux/bitops.h`) and of
//! STEAL's sparsemask (Steve Sistare's reply to "[RFC 00/11]
//! select_idle_sibling rework", 2018). Those words change under the
//! reader: other CPUs set and clear their bits in the overloaded mask
//! whenever their runnable count crosses 1 <-> 2, and a steal walk moves a
//! task, which clears the victim's bit, while the walk is still in flight.
//! A `&[u64]` over such memory would promise Rust that nothing writes it,
//! so the kernel module reads it as `[AtomicU64]`; the simulator, which
//! mutates a mask in the middle of a walk on one thread, as `[Cell<u64>]`;
//! tests and fixed masks as plain `[u64]`.
//!
//! Every mask reader of the crate is generic over [`Words`] and reads a
//! word only when its walk reaches it, one [`Words::word`] call per read:
//! no reader copies a mask, so what a walk sees is what the kernel's
//! `find_next_bit()` would see at the same moment.

use core::cell::Cell;
use core::sync::atomic::{AtomicU64, Ordering};

/// A read-only array of 64-bit bitmap words (cpumask / sparsemask words).
pub trait Words {
    /// Number of words.
    fn nwords(&self) -> usize;
    /// Word `i`, or 0 past the end. Each call reads the word anew.
    fn word(&self, i: usize) -> u64;
}

impl Words for [u64] {
    fn nwords(&self) -> usize {
        self.len()
    }

    fn word(&self, i: usize) -> u64 {
        self.get(i).copied().unwrap_or(0)
    }
}

impl Words for [AtomicU64] {
    fn nwords(&self) -> usize {
        self.len()
    }

    fn word(&self, i: usize) -> u64 {
        // Relaxed, as the kernel's plain `find_next_bit()` / `test_bit()`
        // reads are: a bit is a hint that is checked again under the
        // runqueue lock, so no ordering with other memory is needed.
        self.get(i).map_or(0, |w| w.load(Ordering::Relaxed))
    }
}

impl Words for [Cell<u64>] {
    fn nwords(&self) -> usize {
        self.len()
    }

    fn word(&self, i: usize) -> u64 {
        self.get(i).map_or(0, Cell::get)
    }
}

/// Fixed-size arrays read as their slices, so that `&[w0, w1]` can be
/// passed where a mask is expected (the tests' fixed masks). Shared masks
/// are slices of the length the kernel or the simulator allocated, so
/// `[AtomicU64]` and `[Cell<u64>]` need no array form.
impl<const N: usize> Words for [u64; N] {
    fn nwords(&self) -> usize {
        N
    }

    fn word(&self, i: usize) -> u64 {
        self[..].word(i)
    }
}

/// A reference reads what it refers to, so `&&[u64]` works where `&W` is
/// asked for.
impl<W: Words + ?Sized> Words for &W {
    fn nwords(&self) -> usize {
        (**self).nwords()
    }

    fn word(&self, i: usize) -> u64 {
        (**self).word(i)
    }
}

/// Words that count how often each of them is read, for the tests that
/// check how many lines a walk reads.
#[cfg(test)]
pub(crate) mod counting {
    extern crate std;
    use super::Words;
    use core::cell::Cell;
    use std::vec::Vec;

    /// Plain words, and the reads of each.
    pub(crate) struct Counting {
        pub(crate) words: Vec<u64>,
        pub(crate) reads: Vec<Cell<u32>>,
    }

    impl Counting {
        pub(crate) fn new(words: Vec<u64>) -> Self {
            let reads = words.iter().map(|_| Cell::new(0)).collect();
            Counting { words, reads }
        }
    }

    impl Words for Counting {
        fn nwords(&self) -> usize {
            self.words.len()
        }

        fn word(&self, i: usize) -> u64 {
            if let Some(r) = self.reads.get(i) {
                r.set(r.get() + 1);
            }
            self.words[..].word(i)
        }
    }

    /// A mask too large to allocate, word `i` computed by `f`: the tests
    /// at the top of the `u32` and `usize` ranges, where the rules'
    /// saturating index arithmetic must keep a walk from wrapping to the
    /// low words.
    pub(crate) struct Virtual<F: Fn(usize) -> u64> {
        pub(crate) nwords: usize,
        pub(crate) f: F,
    }

    impl<F: Fn(usize) -> u64> Words for Virtual<F> {
        fn nwords(&self) -> usize {
            self.nwords
        }

        fn word(&self, i: usize) -> u64 {
            if i < self.nwords {
                (self.f)(i)
            } else {
                0
            }
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use proptest::prelude::*;
    use std::vec::Vec;

    fn all<W: Words + ?Sized>(w: &W) -> Vec<u64> {
        (0..w.nwords()).map(|i| w.word(i)).collect()
    }

    #[test]
    fn past_the_end_is_zero() {
        let plain = [1u64, 2];
        assert_eq!(plain[..].word(2), 0);
        assert_eq!(plain.word(usize::MAX), 0);
        let empty: [u64; 0] = [];
        assert_eq!(empty.nwords(), 0);
        assert_eq!(empty.word(0), 0);
        let atomics = [AtomicU64::new(1)];
        assert_eq!(atomics[..].word(1), 0);
        let cells = [Cell::new(1u64)];
        assert_eq!(cells[..].word(7), 0);
    }

    // Each call reads the word anew: a write between two calls is seen.
    #[test]
    fn reads_are_fresh() {
        let cells = [Cell::new(1u64), Cell::new(0)];
        let r: &[Cell<u64>] = &cells;
        assert_eq!(r.word(1), 0);
        cells[1].set(5);
        assert_eq!(r.word(1), 5);
        let atomics = [AtomicU64::new(0)];
        let a: &[AtomicU64] = &atomics;
        atomics[0].fetch_or(8, Ordering::Relaxed);
        assert_eq!(a.word(0), 8);
    }

    proptest! {
        // The three storages and a reference to each read the same words.
        #[test]
        fn storages_agree(v in proptest::collection::vec(any::<u64>(), 0..20)) {
            let atomics: Vec<AtomicU64> = v.iter().map(|&w| AtomicU64::new(w)).collect();
            let cells: Vec<Cell<u64>> = v.iter().map(|&w| Cell::new(w)).collect();
            let plain: &[u64] = &v;
            prop_assert_eq!(all(plain), v.clone());
            prop_assert_eq!(all(&atomics[..]), v.clone());
            prop_assert_eq!(all(&cells[..]), v.clone());
            prop_assert_eq!(all(&plain), v.clone());
            prop_assert_eq!(plain.word(v.len()), 0);
        }
    }
}
