// SPDX-License-Identifier: GPL-2.0

//! The counters in debugfs: `/sys/kernel/debug/sched_lb_rs/<hook>/...`,
//! `flags/<FLAG>` and `differs/<FLAG>`, read-only files whose read sums a
//! [`Counter`] over the CPUs, and the shadow switches `shadow/<FLAG>`. The
//! C `DEFINE_DEBUGFS_ATTRIBUTE()` by hand: 6.12's Rust has no debugfs
//! abstraction.

use core::ffi::{c_int, c_void, CStr};
use core::ptr;
use core::sync::atomic::{AtomicU32, Ordering};

use kernel::bindings;

use kernel::error::code::EINVAL;

use super::counters::Counter;
use super::lists::{lines, FLAG_LIST};
use super::shadow::{in_shadow, set_shadow};

/// A debugfs directory this module created.
///
/// # Invariants
///
/// `0` came from `debugfs_create_dir()`: a dentry, or an `ERR_PTR`, which
/// every debugfs function accepts and ignores, so a missing debugfs costs
/// the counters, never the policies.
pub(super) struct DebugfsDir(*mut bindings::dentry);

// SAFETY: the dentry pointer is only handed back to debugfs, which does its
// own locking; nothing here dereferences it.
unsafe impl Send for DebugfsDir {}
// SAFETY: as above; `&DebugfsDir` gives no access to the dentry.
unsafe impl Sync for DebugfsDir {}

impl DebugfsDir {
    /// `name` in the debugfs root, or in `parent`.
    pub(super) fn create(name: &CStr, parent: Option<&DebugfsDir>) -> Self {
        let parent = parent.map_or(ptr::null_mut(), |p| p.0);
        // SAFETY: `name` is a valid C string; `parent` is NULL (the debugfs
        // root) or a dentry from an earlier call, by the type invariants.
        // INVARIANT: the result comes from debugfs_create_dir().
        DebugfsDir(unsafe { bindings::debugfs_create_dir(name.as_ptr().cast(), parent) })
    }

    /// A file `name` of mode `mode` in this directory, served by `fops`
    /// with `data` as its `i_private`.
    ///
    /// # Safety
    ///
    /// `data` is what the callbacks of `fops` expect as their data, and
    /// stays valid until the root directory is removed.
    unsafe fn file<T>(
        &self,
        name: &CStr,
        mode: bindings::umode_t,
        data: &'static T,
        fops: &'static FileOps,
    ) {
        // SAFETY: `name` is a valid C string, `self.0` a dentry or ERR_PTR
        // (type invariants), `fops` a valid table that keeps this module
        // loaded while a file is open, and `data` what its callbacks
        // receive back (the caller's contract). The files are removed in
        // `drop()` of the root, before the counters' memory goes.
        unsafe {
            bindings::debugfs_create_file(
                name.as_ptr().cast(),
                mode,
                self.0,
                ptr::from_ref(data).cast_mut().cast(),
                &fops.0,
            )
        };
    }

    /// A read-only file `name` showing the sum of `value` over the CPUs.
    pub(super) fn counter(&self, name: &CStr, value: &'static Counter) {
        // SAFETY: `counter_get()` takes its data as a `&'static Counter`.
        unsafe { self.file(name, 0o444, value, &COUNTER_FOPS) };
    }

    /// A read-only file `name` showing the reading task's own
    /// `wakee_flips`: what the shell that runs `cat` had when it forked
    /// it, and what every other task that shell forks starts with
    /// (`dup_task_struct()` copies it and nothing resets it). `make
    /// replay` records it before each traced run, since `wake_wide()`
    /// weighs a wakee's flips, and a task that never wakes another keeps
    /// its parent's for good.
    pub(super) fn reader_wakee_flips(&self, name: &CStr) {
        // SAFETY: `wakee_flips_get()` ignores its data.
        unsafe { self.file(name, 0o444, &(), &WAKEE_FLIPS_FOPS) };
    }

    /// `<dir>/<name>` for line `i` of `kunit/flags`, showing `value`.
    pub(super) fn flag_counter(&self, i: usize, value: &'static Counter) {
        with_flag_name(i, |name| self.counter(name, value));
    }

    /// `shadow/<name>` for line `i` of `kunit/flags`: reads 1 while the
    /// flag is in shadow, 0 while it is live; takes 0 or 1, and refuses
    /// anything else with `-EINVAL`, changing nothing.
    pub(super) fn shadow_switch(&self, i: usize) {
        let Some(index) = FLAG_INDEX.get(i) else {
            return;
        };
        with_flag_name(i, |name| {
            // SAFETY: `shadow_get()` and `shadow_set()` take their data as
            // a `&'static usize`, a line of `kunit/flags`.
            unsafe { self.file(name, 0o644, index, &SHADOW_FOPS) };
        });
    }
}

/// Calls `f` with the name of line `i` of `kunit/flags` as a C string.
/// debugfs copies a name into its dentry: a terminated copy on the stack
/// will do. A name that does not fit goes without a file.
fn with_flag_name(i: usize, f: impl FnOnce(&CStr)) {
    let Some(name) = FLAG_LIST.lines().nth(i) else {
        return;
    };
    let mut buf = [0u8; 48];
    let Some(dst) = buf.get_mut(..name.len()) else {
        return;
    };
    dst.copy_from_slice(name.as_bytes());
    if let Ok(c) = CStr::from_bytes_until_nul(&buf) {
        f(c);
    }
}

/// Each line's number of `kunit/flags`, for a shadow file to point at.
static FLAG_INDEX: [usize; lines(FLAG_LIST)] = {
    let mut index = [0; lines(FLAG_LIST)];
    let mut i = 0;
    while i < index.len() {
        index[i] = i;
        i += 1;
    }
    index
};

/// `struct file_operations` made shareable: immutable, and every pointer
/// in it is to `'static` code or to this module.
#[repr(transparent)]
struct FileOps(bindings::file_operations);

// SAFETY: never written after static initialisation.
unsafe impl Sync for FileOps {}

impl FileOps {
    /// The C `DEFINE_DEBUGFS_ATTRIBUTE()`, read-only, opened by `open`.
    /// The owner keeps the module loaded while a file is open, since
    /// these operations are this module's data.
    const fn read_only(
        open: unsafe extern "C" fn(*mut bindings::inode, *mut bindings::file) -> c_int,
    ) -> Self {
        FileOps(bindings::file_operations {
            owner: crate::THIS_MODULE.as_ptr(),
            open: Some(open),
            release: Some(bindings::simple_attr_release),
            read: Some(bindings::debugfs_attr_read),
            // SAFETY: all-zero is a valid `file_operations`: every other
            // member is a NULL callback or a zero flag.
            ..unsafe { core::mem::zeroed() }
        })
    }
}

/// The counter files.
static COUNTER_FOPS: FileOps = FileOps::read_only(counter_open);

/// The reader's `wakee_flips`.
static WAKEE_FLIPS_FOPS: FileOps = FileOps::read_only(wakee_flips_open);

/// The shadow switches: the kernel's simple attribute, read and write.
static SHADOW_FOPS: FileOps = FileOps(bindings::file_operations {
    owner: crate::THIS_MODULE.as_ptr(),
    open: Some(shadow_open),
    release: Some(bindings::simple_attr_release),
    read: Some(bindings::debugfs_attr_read),
    write: Some(bindings::debugfs_attr_write),
    // SAFETY: all-zero is a valid `file_operations`: every other member is
    // a NULL callback or a zero flag.
    ..unsafe { core::mem::zeroed() }
});

/// `open` of a shadow switch: the kernel's simple attribute, which parses
/// a write as a number (anything else: `-EINVAL`) and hands it to
/// [`shadow_set()`].
///
/// # Safety
///
/// Called by the VFS with a valid inode and file of a file that
/// [`DebugfsDir::shadow_switch()`] created.
unsafe extern "C" fn shadow_open(inode: *mut bindings::inode, file: *mut bindings::file) -> c_int {
    // SAFETY: the VFS's arguments, passed on; the format prints one u64.
    unsafe {
        bindings::simple_attr_open(
            inode,
            file,
            Some(shadow_get),
            Some(shadow_set),
            c"%llu\n".as_ptr().cast(),
        )
    }
}

/// The value of a shadow switch.
///
/// # Safety
///
/// `data` is the `&'static usize` that [`DebugfsDir::shadow_switch()`]
/// gave the file, and `val` is valid for a write.
unsafe extern "C" fn shadow_get(data: *mut c_void, val: *mut u64) -> c_int {
    // SAFETY: the caller's contract.
    let flag = unsafe { *data.cast::<usize>() };
    // SAFETY: as above.
    unsafe { val.write(u64::from(in_shadow(flag))) };
    0
}

/// A write to a shadow switch: 0 or 1, else `-EINVAL` and no change.
///
/// # Safety
///
/// `data` is the `&'static usize` that [`DebugfsDir::shadow_switch()`]
/// gave the file.
unsafe extern "C" fn shadow_set(data: *mut c_void, val: u64) -> c_int {
    // SAFETY: the caller's contract.
    let flag = unsafe { *data.cast::<usize>() };
    match val {
        0 | 1 => {
            set_shadow(flag, val == 1);
            0
        }
        _ => EINVAL.to_errno(),
    }
}

/// `open` of a counter file: the kernel's simple attribute, whose read
/// prints what [`counter_get()`] returns.
///
/// # Safety
///
/// Called by the VFS with a valid inode and file of a file that
/// [`DebugfsDir::counter()`] created.
unsafe extern "C" fn counter_open(inode: *mut bindings::inode, file: *mut bindings::file) -> c_int {
    // SAFETY: the caller's contract; `counter_get()` serves those files.
    unsafe { read_only_open(inode, file, counter_get) }
}

/// A read-only simple attribute whose read prints what `get` returns.
///
/// # Safety
///
/// `inode` and `file` are what the VFS gave an `open`, of a file whose
/// data is what `get` expects.
unsafe fn read_only_open(
    inode: *mut bindings::inode,
    file: *mut bindings::file,
    get: unsafe extern "C" fn(*mut c_void, *mut u64) -> c_int,
) -> c_int {
    // SAFETY: the caller's contract; the format prints one u64.
    unsafe { bindings::simple_attr_open(inode, file, Some(get), None, c"%llu\n".as_ptr().cast()) }
}

/// The value of a counter file.
///
/// # Safety
///
/// `data` is the `&'static Counter` that [`DebugfsDir::counter()`] gave
/// the file, and `val` is valid for a write.
unsafe extern "C" fn counter_get(data: *mut c_void, val: *mut u64) -> c_int {
    // SAFETY: the caller's contract.
    let counter = unsafe { &*data.cast::<Counter>() };
    // SAFETY: as above.
    unsafe { val.write(counter.sum()) };
    0
}

/// `open` of the `wakee_flips` file, as [`counter_open()`].
///
/// # Safety
///
/// Called by the VFS with a valid inode and file of the file that
/// [`DebugfsDir::reader_wakee_flips()`] created.
unsafe extern "C" fn wakee_flips_open(
    inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: the caller's contract; `wakee_flips_get()` ignores the data.
    unsafe { read_only_open(inode, file, wakee_flips_get) }
}

/// The calling task's `wakee_flips`, read in its `read()`.
///
/// # Safety
///
/// `val` is valid for a write; called in process context, by
/// `debugfs_attr_read()`.
unsafe extern "C" fn wakee_flips_get(_data: *mut c_void, val: *mut u64) -> c_int {
    // SAFETY: in process context `current` is a valid task, which cannot
    // go away while it runs this.
    let task = unsafe { bindings::get_current() };
    // SAFETY: `task` is valid (above) and `wakee_flips` an aligned `u32`
    // of it. `record_wakee()` writes it when this task wakes another,
    // also from an interrupt taken on this CPU, so it is read atomically.
    let flips = unsafe { AtomicU32::from_ptr(&raw mut (*task).wakee_flips) };
    // SAFETY: the caller's contract.
    unsafe { val.write(u64::from(flips.load(Ordering::Relaxed))) };
    0
}

/// Owns the root directory of the counters; removing it removes them all.
pub(super) struct DebugfsRoot(pub(super) DebugfsDir);

impl Drop for DebugfsRoot {
    fn drop(&mut self) {
        // SAFETY: by the type invariants of `DebugfsDir` the pointer came
        // from debugfs_create_dir() (or is an ERR_PTR, which
        // debugfs_remove() ignores); removal is recursive and waits for
        // readers of the files to finish.
        unsafe { bindings::debugfs_remove(self.0 .0) };
    }
}
