// SPDX-License-Identifier: GPL-2.0

//! The counters in debugfs: `/sys/kernel/debug/sched_lb_rs/<hook>/...` and
//! `flags/<FLAG>`, read-only files whose read sums a [`Counter`] over the
//! CPUs. The C `DEFINE_DEBUGFS_ATTRIBUTE()` by hand: 6.12's Rust has no
//! debugfs abstraction.

use core::ffi::{c_int, c_void, CStr};
use core::ptr;

use kernel::bindings;

use super::counters::Counter;
use super::lists::FLAG_LIST;

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

    /// A read-only file `name` showing the sum of `value` over the CPUs.
    pub(super) fn counter(&self, name: &CStr, value: &'static Counter) {
        // SAFETY: `name` is a valid C string, `self.0` a dentry or ERR_PTR
        // (type invariants), `COUNTER_FOPS` a valid table that keeps this
        // module loaded while a file is open, and `value` a `'static`
        // counter that `counter_get()` receives back. The files are
        // removed in `drop()` of the root, before the counters' memory
        // goes.
        unsafe {
            bindings::debugfs_create_file(
                name.as_ptr().cast(),
                0o444,
                self.0,
                ptr::from_ref(value).cast_mut().cast(),
                &COUNTER_FOPS.0,
            )
        };
    }

    /// `flags/<name>` for line `i` of `kunit/flags`, showing `value`.
    pub(super) fn flag_counter(&self, i: usize, value: &'static Counter) {
        let Some(name) = FLAG_LIST.lines().nth(i) else {
            return;
        };
        // debugfs copies the name into its dentry: a terminated copy on
        // the stack will do. A name that does not fit goes without a file.
        let mut buf = [0u8; 48];
        let Some(dst) = buf.get_mut(..name.len()) else {
            return;
        };
        dst.copy_from_slice(name.as_bytes());
        if let Ok(c) = CStr::from_bytes_until_nul(&buf) {
            self.counter(c, value);
        }
    }
}

/// `struct file_operations` made shareable: immutable, and every pointer
/// in it is to `'static` code or to this module.
#[repr(transparent)]
struct FileOps(bindings::file_operations);

// SAFETY: never written after static initialisation.
unsafe impl Sync for FileOps {}

/// The counter files: the C `DEFINE_DEBUGFS_ATTRIBUTE()`, read-only. The
/// owner keeps the module loaded while a file is open, since these
/// operations are this module's data.
static COUNTER_FOPS: FileOps = FileOps(bindings::file_operations {
    owner: crate::THIS_MODULE.as_ptr(),
    open: Some(counter_open),
    release: Some(bindings::simple_attr_release),
    read: Some(bindings::debugfs_attr_read),
    // SAFETY: all-zero is a valid `file_operations`: every other member is
    // a NULL callback or a zero flag.
    ..unsafe { core::mem::zeroed() }
});

/// `open` of a counter file: the kernel's simple attribute, whose read
/// prints what [`counter_get()`] returns.
///
/// # Safety
///
/// Called by the VFS with a valid inode and file of a file that
/// [`DebugfsDir::counter()`] created.
unsafe extern "C" fn counter_open(inode: *mut bindings::inode, file: *mut bindings::file) -> c_int {
    // SAFETY: the VFS's arguments, passed on; the format prints one u64.
    unsafe {
        bindings::simple_attr_open(
            inode,
            file,
            Some(counter_get),
            None,
            c"%llu\n".as_ptr().cast(),
        )
    }
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
