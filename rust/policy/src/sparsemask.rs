// SPDX-License-Identifier: GPL-2.0

//! Steve Sistare's sparsemask layout for the per-LLC overloaded mask.
//!
//! CPUs that update a plain cpumask share its cache lines: with one bit per
//! CPU, 512 CPUs write the same 64-byte line. The sparsemask "only uses 8
//! bits in the first word of every 64 bytes": a set of 128 elements is
//! 128 / 8 * 64 = 1024 bytes, and at most 8 CPUs share a line, while a
//! search still reads one word per 8 elements. The number of bits per line
//! is a creation-time parameter.
//!
//! Only the index arithmetic is here; the kernel shim does the atomic bit
//! operations on its memory.

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

/// Words needed for `nelems` elements (whole lines).
pub fn words_for(nelems: u32, bits_per_line: u32) -> u32 {
    let per = bits_per_line.clamp(1, 64);
    nelems.div_ceil(per).saturating_mul(WORDS_PER_LINE)
}

/// The set bits of one word, lowest first, a `trailing_zeros()` at a time
/// as `find_next_bit()` does, not a test per bit.
#[derive(Clone, Copy, Debug)]
struct WordBits(u64);

impl Iterator for WordBits {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        if self.0 == 0 {
            return None;
        }
        let b = self.0.trailing_zeros();
        // Clears the lowest set bit; cannot underflow, the word is not 0.
        self.0 &= self.0.wrapping_sub(1);
        Some(b)
    }
}

/// The elements set in a sparsemask, in increasing order.
pub fn elements(words: &[u64], bits_per_line: u32) -> impl Iterator<Item = u32> + Clone + '_ {
    let per = bits_per_line.clamp(1, 64);
    let mask = if per == 64 {
        u64::MAX
    } else {
        (1u64 << per) - 1
    };
    words
        .chunks(WORDS_PER_LINE as usize)
        .enumerate()
        .flat_map(move |(line, w)| {
            let bits = w.first().copied().unwrap_or(0) & mask;
            let base = (line as u32).saturating_mul(per);
            WordBits(bits).map(move |b| base.saturating_add(b))
        })
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use proptest::prelude::*;
    use std::vec;
    use std::vec::Vec;

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
            let back: Vec<u32> = elements(&words, per).collect();
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
}
