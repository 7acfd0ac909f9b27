// SPDX-License-Identifier: GPL-2.0

//! CPU sets as `u64` words, bit `i` of word `i / 64` for CPU `i`.
//!
//! The layout of the kernel's `struct cpumask` on 64-bit, which is also the
//! layout the policy crate's scans take (`sis_select::wrap_bits`,
//! `steal::victims`), so masks are handed to the rules without conversion.

/// A set of CPUs of a machine with `nbits` CPUs.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CpuMask {
    words: Vec<u64>,
    nbits: u32,
}

impl CpuMask {
    /// The empty set.
    pub fn new(nbits: u32) -> Self {
        Self {
            words: vec![0; nbits.div_ceil(64) as usize],
            nbits,
        }
    }

    /// The set of the given CPUs.
    pub fn from_cpus(nbits: u32, cpus: impl IntoIterator<Item = u32>) -> Self {
        let mut m = Self::new(nbits);
        for c in cpus {
            m.set(c);
        }
        m
    }

    /// Adds `cpu`; CPUs out of range are ignored.
    pub fn set(&mut self, cpu: u32) {
        if cpu < self.nbits {
            self.words[(cpu / 64) as usize] |= 1u64 << (cpu % 64);
        }
    }

    /// Removes `cpu`.
    pub fn clear(&mut self, cpu: u32) {
        if cpu < self.nbits {
            self.words[(cpu / 64) as usize] &= !(1u64 << (cpu % 64));
        }
    }

    /// Whether `cpu` is in the set.
    pub fn test(&self, cpu: u32) -> bool {
        cpu < self.nbits && (self.words[(cpu / 64) as usize] >> (cpu % 64)) & 1 != 0
    }

    /// Number of CPUs in the set (`cpumask_weight()`).
    pub fn weight(&self) -> u32 {
        self.words.iter().map(|w| w.count_ones()).sum()
    }

    /// The lowest CPU in the set (`cpumask_first()`).
    pub fn first(&self) -> Option<u32> {
        self.iter().next()
    }

    /// The CPUs in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let base = (i as u32) * 64;
            let mut w = w;
            core::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros();
                w &= w - 1;
                Some(base + b)
            })
        })
    }

    /// Whether every CPU of `self` is in `other`.
    pub fn is_subset(&self, other: &CpuMask) -> bool {
        self.words
            .iter()
            .zip(other.words.iter())
            .all(|(a, b)| a & !b == 0)
    }

    /// The words, for the policy crate.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Number of bits (`nr_cpumask_bits`).
    pub fn nbits(&self) -> u32 {
        self.nbits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_test_iter() {
        let m = CpuMask::from_cpus(130, [0, 5, 64, 129, 200]);
        assert_eq!(m.iter().collect::<Vec<_>>(), vec![0, 5, 64, 129]);
        assert_eq!(m.weight(), 4);
        assert!(m.test(64) && !m.test(63));
        assert!(CpuMask::from_cpus(130, [5, 64]).is_subset(&m));
        assert!(!m.is_subset(&CpuMask::from_cpus(130, [5])));
    }
}
