// SPDX-License-Identifier: GPL-2.0

//! Compile-time readers of the lists the module shares with other
//! languages, so that each list has one home: `kunit/flags`, the series'
//! `sched_feat` flags (which the guest, the scripts and the simulator read
//! too), and Kbuild's `SLB_HOOKS_OFF`, checked against the hook table
//! (Kbuild itself knows no hook names). `const fn`s, because their answers
//! size arrays and pick statics: a name that is not in its list fails the
//! build.

/// `kunit/flags`: the series' `sched_feat` flags, one name a line, the
/// one list of them that the guest, the scripts and the simulator read
/// too.
pub(super) const FLAG_LIST: &str = include_str!("../../kunit/flags");

/// Whether line `i` of `list` is `name` (const: no iterators).
pub(super) const fn line_is(list: &[u8], mut i: usize, name: &[u8]) -> bool {
    let mut j = 0;
    while j < name.len() {
        if i >= list.len() || list[i] != name[j] {
            return false;
        }
        i += 1;
        j += 1;
    }
    i == list.len() || list[i] == b'\n'
}

/// The line of `name` in `list`, or `None`.
pub(super) const fn line_of(list: &str, name: &str) -> Option<usize> {
    let (list, name) = (list.as_bytes(), name.as_bytes());
    let (mut i, mut line) = (0, 0);
    while i < list.len() {
        if line_is(list, i, name) {
            return Some(line);
        }
        while i < list.len() && list[i] != b'\n' {
            i += 1;
        }
        i += 1;
        line += 1;
    }
    None
}

/// Lines in `list` (a last line without `\n` counts).
pub(super) const fn lines(list: &str) -> usize {
    let list = list.as_bytes();
    let (mut i, mut n) = (0, 0);
    while i < list.len() {
        if list[i] == b'\n' || i + 1 == list.len() {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The index of a flag in `kunit/flags`; a name not listed there does not
/// compile.
macro_rules! flag {
    ($name:ident) => {
        const {
            match $crate::hooks::lists::line_of($crate::hooks::lists::FLAG_LIST, stringify!($name))
            {
                Some(i) => i,
                None => panic!(concat!(stringify!($name), " is not in kunit/flags")),
            }
        }
    };
}
pub(super) use flag;

/// The position of `name` in `names`, at compile time (a name that is not
/// there does not compile).
pub(super) const fn index_of(names: &[&str], name: &str) -> usize {
    let mut i = 0;
    while i < names.len() {
        if line_is(names[i].as_bytes(), 0, name.as_bytes()) {
            return i;
        }
        i += 1;
    }
    panic!("a counter missing from its list")
}

/// `SLB_HOOKS_OFF` as Kbuild exports it to the compiler: the hook switches
/// this build leaves out (`make bench-hooks`), separated by spaces; empty
/// for every other build.
pub(super) const HOOKS_OFF: &str = match option_env!("SLB_HOOKS_OFF") {
    Some(s) => s,
    None => "",
};

/// The next space-separated word of `list` at or after `i`: its start
/// and end (equal at the end of the list).
const fn word_from(list: &[u8], mut i: usize) -> (usize, usize) {
    while i < list.len() && list[i] == b' ' {
        i += 1;
    }
    let start = i;
    while i < list.len() && list[i] != b' ' {
        i += 1;
    }
    (start, i)
}

/// Whether `name` is `prefix` followed by `list[start..end]`.
const fn word_is(list: &[u8], start: usize, end: usize, prefix: &str, name: &str) -> bool {
    let (prefix, name) = (prefix.as_bytes(), name.as_bytes());
    if name.len() != prefix.len() + (end - start) {
        return false;
    }
    let mut j = 0;
    while j < name.len() {
        let want = if j < prefix.len() {
            prefix[j]
        } else {
            list[start + j - prefix.len()]
        };
        if name[j] != want {
            return false;
        }
        j += 1;
    }
    true
}

/// Whether `prefix` followed by each space-separated word of `list` is one
/// of `names`.
pub(super) const fn words_all_in(list: &str, prefix: &str, names: &[&str]) -> bool {
    let bytes = list.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let (start, end) = word_from(bytes, i);
        if end > start {
            let mut n = 0;
            while n < names.len() && !word_is(bytes, start, end, prefix, names[n]) {
                n += 1;
            }
            if n == names.len() {
                return false;
            }
        }
        i = end;
    }
    true
}
